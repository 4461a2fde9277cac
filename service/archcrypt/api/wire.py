"""The wire formats every operation route shares, written once so routes stay small.

- JSON bodies are parsed once, from the raw bytes, by pydantic-core (`model_validate_json`);
  base64 fields are decoded by pybase64 (SIMD) straight into the bytes the kernel reads.
- `application/octet-stream` bodies are the data itself; small parameters come in
  `Archcrypt-*` request headers (standard base64) and raw results go back as the body.
- Responses are serialized once: the JSON of a result is assembled from the base64 of the
  kernel's output, with no model, no dict and no second pass.
- Batches: `{"items": [...]}` counted before anything is decoded, each item validated and
  run on its own, each answered with its result or `{"error": <problem>}`.

Other routers (named keys) reuse them: `parse_json` (a request model from the raw body),
`header_bytes`, `octet_response` / `json_response` (bytes already serialized), and
`run_batch` (a whole batch route: limits, counting, per-item problems).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import (
    Annotated,
    Any,
    Final,
    Generic,
    Literal,
    Protocol,
    TypeVar,
    Union,
    get_args,
    get_origin,
    overload,
)

import pybase64
from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import PydanticCustomError

from .. import crypto
from ..config import Settings
from ..errors import (
    AUTHENTICATION_FAILED,
    BASE64_ERROR_TYPE,
    CONTENT_TOO_LARGE,
    INVALID_ENCODING,
    UNSUPPORTED_MEDIA_TYPE,
    VALIDATION_FAILED,
    ProblemError,
    ProblemType,
)
from ..middleware import set_body_limit

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

JSON: Final = "application/json"
OCTET_STREAM: Final = "application/octet-stream"
BodyKind = Literal["json", "binary"]

BASE64_MESSAGE: Final = (
    "Value is not canonical standard base64 (RFC 4648 section 4: padded, no whitespace)"
)


# ---- base64 ------------------------------------------------------------------------------


# The base64 digits whose value has zero low bits: the only ones that may precede "==" (4
# low bits unused) or "=" (2 low bits unused) in the canonical spelling; as str and as bytes
# (JSON fields are str, headers bytes).
_BEFORE_TWO_PADS: Final = frozenset("AQgw")
_BEFORE_ONE_PAD: Final = frozenset("AEIMQUYcgkosw048")
_BEFORE_TWO_PADS_B: Final = frozenset(b"AQgw")
_BEFORE_ONE_PAD_B: Final = frozenset(b"AEIMQUYcgkosw048")
_decode: Final = pybase64.b64decode


def b64decode(value: str | bytes) -> bytes:
    """Strict standard base64 (alphabet and padding checked, only the canonical spelling);
    ValueError (binascii.Error) otherwise. pybase64 decodes with SIMD where the CPU has it."""
    decoded: bytes = _decode(value, validate=True)
    # The decoder ignores set bits after the last byte ("QR==" decodes like "QQ=="); only a
    # padded final quantum can carry them, so one look at the digit before the padding is
    # the whole canonicity check (the decoder has already vetted alphabet and padding).
    tail = len(decoded) % 3
    if tail:
        if isinstance(value, str):
            canonical = value[-3] in _BEFORE_TWO_PADS if tail == 1 else value[-2] in _BEFORE_ONE_PAD
        elif tail == 1:
            canonical = value[-3] in _BEFORE_TWO_PADS_B
        else:
            canonical = value[-2] in _BEFORE_ONE_PAD_B
        if not canonical:
            raise ValueError("non-canonical base64")
    return decoded


b64encode: Final[Callable[[bytes], bytes]] = pybase64.b64encode


def base64_error() -> PydanticCustomError:
    # The message never quotes the input: it may be a key.
    return PydanticCustomError(BASE64_ERROR_TYPE, BASE64_MESSAGE)


# ---- request bodies ----------------------------------------------------------------------


def media_type(request: Request) -> str:
    for name, value in request.scope["headers"]:
        if name == b"content-type":
            media: str = value.decode("latin-1")
            return media.partition(";")[0].strip().lower()
    return ""


def is_json(media: str) -> bool:
    return media == JSON or (media.startswith("application/") and media.endswith("+json"))


def body_kind(request: Request, *, binary: bool = True) -> BodyKind:
    """JSON or raw bytes, from Content-Type, before the body is read; 415 for anything else
    (a missing Content-Type included: a body is never guessed at)."""
    media = media_type(request)
    if is_json(media):
        return "json"
    if binary and media == OCTET_STREAM:
        return "binary"
    accepted = "application/json or application/octet-stream" if binary else "application/json"
    raise ProblemError(UNSUPPORTED_MEDIA_TYPE, f"This route takes Content-Type {accepted}.")


def validation_error(loc: Sequence[str | int], error_type: str, msg: str) -> RequestValidationError:
    return RequestValidationError([{"type": error_type, "loc": tuple(loc), "msg": msg}])


def parse_json(model: type[M], raw: bytes) -> M:
    """The request model, parsed once from the raw body; errors located under "body"."""
    if not raw:
        raise validation_error(("body",), "missing", "Field required")
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        ) from None


@overload
def header_bytes(
    request: Request, name: str, *, required: Literal[True], size: int | None = None
) -> bytes: ...
@overload
def header_bytes(
    request: Request, name: str, *, required: bool, size: int | None = None
) -> bytes | None: ...
def header_bytes(
    request: Request, name: str, *, required: bool, size: int | None = None
) -> bytes | None:
    """A base64 `Archcrypt-*` request header, decoded: 400 when it is not canonical base64,
    422 when it is required and absent or not `size` bytes long. `name` is the header's
    canonical spelling (errors are located as ("header", name))."""
    key = name.lower().encode("latin-1")
    for header, value in request.scope["headers"]:
        if header == key:
            try:
                decoded = b64decode(value)
            except ValueError:
                raise RequestValidationError(
                    [{"type": BASE64_ERROR_TYPE, "loc": ("header", name), "msg": BASE64_MESSAGE}]
                ) from None
            if size is not None and len(decoded) != size:
                raise validation_error(
                    ("header", name),
                    "bytes_length",
                    f"must be exactly {size} bytes, got {len(decoded)}",
                )
            return decoded
    if required:
        raise validation_error(("header", name), "missing", "Header required")
    return None


async def read_body(request: Request, limit: int | None = None) -> bytes:
    """The whole body (one join of the chunks uvicorn delivered; none for a body that came
    in one chunk). `limit` replaces the app's body limit for this request first; the
    limit middleware refuses an oversized body before any of it is read."""
    if limit is not None:
        set_body_limit(request.scope, limit)
    return await request.body()


# ---- responses ---------------------------------------------------------------------------


class RawResponse(Response):
    """A body already serialized: Starlette's Response, minus the re-encoding checks."""

    def __init__(
        self, body: bytes, media_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        raw_headers = [
            (b"content-length", str(len(body)).encode("ascii")),
            (b"content-type", media_type.encode("ascii")),
        ]
        if headers:
            raw_headers.extend(
                (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
            )
        self.raw_headers = raw_headers


def json_response(body: bytes) -> Response:
    return RawResponse(body, JSON)


def octet_response(data: bytes, headers: Mapping[str, str] | None = None) -> Response:
    return RawResponse(data, OCTET_STREAM, headers)


# ---- problems as values (batch items) ----------------------------------------------------


def problem_value(problem: ProblemType, detail: str, **extensions: Any) -> dict[str, Any]:
    return {
        "type": problem.type,
        "title": problem.title,
        "status": problem.status,
        "detail": detail,
        **extensions,
    }


def _validation_problem(errors: list[dict[str, Any]]) -> dict[str, Any]:
    # Only where and what: pydantic's "input" and "ctx" may hold a key or a plaintext.
    cleaned: list[dict[str, Any]] = [
        {"loc": list(error.get("loc", ())), "type": error.get("type"), "msg": error.get("msg")}
        for error in errors
    ]
    encoding = any(error["type"] in ("json_invalid", BASE64_ERROR_TYPE) for error in cleaned)
    detail = "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in cleaned
    )
    return problem_value(
        INVALID_ENCODING if encoding else VALIDATION_FAILED, detail, errors=cleaned
    )


def item_problem(exc: Exception) -> dict[str, Any] | None:
    """The problem object for an exception an item may raise; None for a bug (re-raised)."""
    if isinstance(exc, ValidationError):
        return _validation_problem(_errors(exc))
    if isinstance(exc, RequestValidationError):
        return _validation_problem(list(exc.errors()))
    if isinstance(exc, crypto.AuthenticationError):
        return problem_value(
            AUTHENTICATION_FAILED,
            "The tag does not match the key, nonce, ciphertext and associated data; "
            "no plaintext is released.",
        )
    if isinstance(exc, crypto.InvalidInputError):
        return problem_value(VALIDATION_FAILED, str(exc))
    return None


# ---- batches -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchLimits:
    """Most items in one batch, most decoded bytes over all of them, and the most members
    an item of the route has (which bounds the body a valid batch can be)."""

    max_items: int
    max_bytes: int
    fields_per_item: int

    @classmethod
    def of(cls, settings: Settings, fields_per_item: int) -> BatchLimits:
        return cls(settings.max_batch_messages, settings.max_batch_bytes, fields_per_item)

    def body_limit(self) -> int:
        """The largest body a batch within these limits can be: every byte as base64
        (4 characters per 3 bytes, rounded up per field), each member's name, quotes, colon
        and comma, and room for the envelope and whitespace."""
        n, fields = self.max_items, self.fields_per_item
        return 4 * (self.max_bytes // 3 + n * fields) + 40 * n * fields + 1024


def count_items(raw: bytes, limits: BatchLimits) -> None:
    """Refuse a batch with too many items before any of it is parsed.

    Every JSON value in an array or object after the first follows a comma, and base64
    (the only string content a valid item has) has none, so `count(",")` bounds from above,
    at C speed, the number of items and members: a body of a million tiny items is refused
    here in microseconds instead of becoming a million Python objects first.
    """
    if raw.count(b",") >= limits.max_items * (limits.fields_per_item + 1):
        raise validation_error(
            ("body", "items"),
            "too_long",
            f"at most {limits.max_items} items of at most {limits.fields_per_item} members",
        )


class BatchEnvelope(BaseModel):
    """`{"items": [...]}`: the items stay JSON values here and are validated one by one."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    items: list[Any]


def parse_batch(raw: bytes, limits: BatchLimits) -> list[Any]:
    """The items of a batch body, counted before they are parsed."""
    count_items(raw, limits)
    items = parse_json(BatchEnvelope, raw).items
    if len(items) > limits.max_items:
        raise validation_error(
            ("body", "items"), "too_long", f"at most {limits.max_items} items, got {len(items)}"
        )
    return items


@dataclass(frozen=True)
class Batch(Generic[M]):
    """Validated items (a failed item is its serialized error) and their decoded size."""

    items: list[M | bytes]
    nbytes: int


class Base64Field:
    """Marks a model field as standard base64 text decoded to bytes (api/common.Base64In),
    so that a batch can validate its items as strings in pydantic-core and decode them here."""


BASE64_FIELD: Final = Base64Field()
_NONE: Final = type(None)


@dataclass(frozen=True)
class _ItemPlan(Generic[M]):
    """How to validate the items of a batch of `model` fast: `envelope` takes the body with
    every base64 field as a plain str (validated by pydantic-core alone); then per field its
    name, whether it is base64, and the checks its model runs on the decoded bytes."""

    model: type[M]
    envelope: type[BaseModel]
    fields: tuple[tuple[str, bool, tuple[Callable[[bytes], bytes], ...]], ...]


_PLANS: Final[dict[type[BaseModel], _ItemPlan[Any]]] = {}


def _plan(model: type[M]) -> _ItemPlan[M]:
    plan = _PLANS.get(model)
    if plan is not None:
        return plan
    raw_fields: dict[str, Any] = {}
    fields: list[tuple[str, bool, tuple[Callable[[bytes], bytes], ...]]] = []
    for name, info in model.model_fields.items():
        annotation, metadata = info.annotation, list(info.metadata)
        optional = False
        if get_origin(annotation) in (Union, UnionType):
            members = [a for a in get_args(annotation) if a is not _NONE]
            optional = len(members) < len(get_args(annotation))
            if len(members) == 1 and get_origin(members[0]) is Annotated:
                metadata = [*get_args(members[0])[1:], *metadata]
        base64 = BASE64_FIELD in metadata
        # the after-validators of common.py take the value alone
        checks: tuple[Any, ...] = tuple(m.func for m in metadata if isinstance(m, AfterValidator))
        if base64:
            default = info.default
            if isinstance(default, bytes):
                default = pybase64.b64encode(default).decode("ascii")
            text: Any = str | None if optional else str
            raw_fields[name] = (text, ... if info.is_required() else default)
        else:
            raw_fields[name] = (info.annotation, ... if info.is_required() else info.default)
            checks = ()
        fields.append((name, base64, checks))
    raw = create_model(f"{model.__name__}Text", __config__=ConfigDict(extra="forbid"), **raw_fields)
    envelope = create_model(
        f"{model.__name__}TextItems",
        __config__=ConfigDict(extra="forbid"),
        items=(list[raw], ...),
    )
    plan = _PLANS[model] = _ItemPlan(model, envelope, tuple(fields))
    return plan


def _decoded(plan: _ItemPlan[M], text: BaseModel) -> M | bytes:
    """One item validated as strings, decoded and checked as its model would (the same
    error types, locations and messages); its serialized problem when that fails."""
    values: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for name, base64, checks in plan.fields:
        value = getattr(text, name)
        if base64 and value is not None:
            try:
                value = b64decode(value)
            except ValueError:
                errors.append({"type": BASE64_ERROR_TYPE, "loc": (name,), "msg": BASE64_MESSAGE})
                continue
            try:
                for check in checks:
                    value = check(value)
            except PydanticCustomError as exc:
                errors.append({"type": exc.type, "loc": (name,), "msg": exc.message()})
                continue
        values[name] = value
    if errors:
        return _error_json(_validation_problem(errors))
    return plan.model.model_construct(**values)


def validate_batch(
    raw: bytes, model: type[M], size: Callable[[M], int], limits: BatchLimits
) -> Batch[M]:
    """The items of a batch body as `model`s, counted before anything is parsed; an item
    that fails validation becomes its problem (located within the item: its place in the
    answer says which one it is); 413 when the decoded bytes add up to more than the batch
    limit.

    The common case is one pydantic-core pass over the raw JSON with the base64 fields as
    strings (a call into Python per field costs more than the rest of an item's validation),
    then one loop that decodes and checks them. Only a body whose items are not all objects
    of strings of the right members is parsed again, as JSON values validated one by one,
    for exact per-item errors."""
    count_items(raw, limits)
    plan = _plan(model)
    items: list[M | bytes]
    try:
        texts = plan.envelope.model_validate_json(raw).items  # type: ignore[attr-defined]
    except ValidationError:
        items = [_validated(item, model) for item in parse_batch(raw, limits)]
    else:
        items = [_decoded(plan, text) for text in texts]
    if len(items) > limits.max_items:
        raise validation_error(
            ("body", "items"), "too_long", f"at most {limits.max_items} items, got {len(items)}"
        )
    total = sum(size(item) for item in items if not isinstance(item, bytes))
    if total > limits.max_bytes:
        raise ProblemError(
            CONTENT_TOO_LARGE,
            f"the items add up to {total} bytes; the batch limit is {limits.max_bytes}",
        )
    return Batch(items, total)


def _validated(item: Any, model: type[M]) -> M | bytes:
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        return _error_json(_validation_problem(_errors(exc)))


def answer_items(batch: Batch[M], handle: Callable[[M], bytes]) -> bytes:
    """`{"items": [...]}`: `handle(item)` (one item's serialized JSON object) for each valid
    item, in order; an exception item_problem() knows becomes that item's {"error": ...},
    anything else is a bug and propagates."""
    out: list[bytes] = []
    for value in batch.items:
        if isinstance(value, bytes):
            out.append(value)
            continue
        try:
            out.append(handle(value))
        except Exception as exc:
            problem = item_problem(exc)
            if problem is None:
                raise
            out.append(_error_json(problem))
    return b'{"items":[' + b",".join(out) + b"]}"


class Runner(Protocol):
    async def __call__(
        self, operation: str, algorithm: str, nbytes: int, call: Callable[[], T]
    ) -> T: ...


async def run_batch(
    request: Request,
    runner: Runner,
    operation: str,
    algorithm: str,
    model: type[M],
    *,
    fields: int,
    size: Callable[[M], int],
    handle: Callable[[M], bytes],
) -> Response:
    """A whole batch route: JSON only, under the body limit the batch limits allow, counted,
    every item validated, the decoded total checked, then `handle` on each valid item as
    one operation of the runner (one metrics sample, one offload decision for the batch)."""
    body_kind(request, binary=False)
    limits = BatchLimits.of(request.app.state.archcrypt.settings, fields_per_item=fields)
    batch = validate_batch(await read_body(request, limits.body_limit()), model, size, limits)
    answer = await runner(operation, algorithm, batch.nbytes, lambda: answer_items(batch, handle))
    return json_response(answer)


def _errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [dict(error) for error in exc.errors(include_input=False, include_context=False)]


def _error_json(problem: Mapping[str, Any]) -> bytes:
    return b'{"error":' + json.dumps(problem, separators=(",", ":")).encode("utf-8") + b"}"
