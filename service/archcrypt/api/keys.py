"""Named keys over HTTP: administration (/v1/keys) and the operations that use a key by name
(seal, open, rewrap, datakey, mac, verify, and their batches).

Every route names the scope it needs in one place, for the authentication layer to check:
statically as the route's OpenAPI extension `x-archcrypt-scope` (a template such as
`key:{name}:seal`), and per request in `request.scope["archcrypt.required_scope"]`
(`key:payments:seal`, `keys:admin`, `keys:read`), set by the route's first dependency; the
key's name and, once known, the version used are left in the scope for the audit log.

Status codes beyond the common ones:
- 404: no key of that name (a name outside the name pattern names no key either);
- 409 key-type-mismatch: an operation the key's type does not have (seal on an HMAC key, mac
  on an AEAD key). 409 rather than 422 because nothing in the request is wrong in itself: the
  same body succeeds against a key of the other kind; it conflicts with the state of the
  resource the path names, which is what 409 is for;
- 409 key-version-retired: a ciphertext or tag of a version below min_decryption_version
  (nothing is decrypted or verified); 409 key-exists, deletion-not-allowed and
  nonce-budget-exhausted likewise name a state of the key;
- 400 authentication-failed: a ciphertext given to open or rewrap (JSON, batch item or
  binary) that is malformed (an edited prefix, a truncation, another format or algorithm),
  names a version the key never had, or does not authenticate (tampered, wrong AAD, another
  key's): one answer and one detail for all, so a forger learns nothing about which part
  was wrong. Only a version below min_decryption_version is told apart (409 above): that is
  the key's policy, not a secret. A `ciphertext` that is no string at all is a 422 like
  any other field's;
- 400 invalid-ciphertext: an HMAC tag given to verify that is not of this format (a tag of
  a version the key never had verifies as false);
- 503 keystore-unavailable: the store cannot be reached (a cached key still works), with
  Retry-After; 503 key-unavailable: this key's material cannot be unwrapped here (a damaged
  row, or a KEK this instance lacks), without Retry-After.
"""

from __future__ import annotations

import functools
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, TypeVar

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .. import crypto
from ..audit import set_outcome
from ..errors import (
    AUTHENTICATION_FAILED,
    CONTENT_TOO_LARGE,
    NOT_FOUND,
    PROBLEM_TYPE_BASE,
    VALIDATION_FAILED,
    ProblemError,
    ProblemType,
    problem_response,
)
from ..keys import NAME_PATTERN, KeyService, LoadedKey, open_key_service
from ..keys import errors as key_errors
from ..keys import format as ctfmt
from ..keys.metrics import KeyLevelCollector, KeyMetrics
from ..keys.store import KeyRecord
from ..keys.types import DEFAULT_KEY_TYPE, KeyOperation, KeyTypeName
from .common import Base64In, Base64Out, RequestModel, ResponseModel
from .deps import CryptoRunner, JsonBodyRoute, OperationRoute, ServiceState, runner_of
from .docs import json_body_docs, operation_docs
from .wire import (
    BatchLimits,
    body_kind,
    header_bytes,
    item_problem,
    json_response,
    octet_response,
    parse_batch,
    parse_json,
    problem_value,
    read_body,
)

logger = logging.getLogger("archcrypt")
M = TypeVar("M", bound=BaseModel)

REQUIRED_SCOPE_KEY: Final = "archcrypt.required_scope"
KEY_NAME_KEY: Final = "archcrypt.key_name"
KEY_VERSION_KEY: Final = "archcrypt.key_version"
SCOPE_EXTENSION: Final = "x-archcrypt-scope"
OCTET_STREAM: Final = "application/octet-stream"
AAD_HEADER: Final = "archcrypt-aad"
KEY_VERSION_HEADER: Final = "Archcrypt-Key-Version"


def _problem(slug: str, title: str, status: int) -> ProblemType:
    return ProblemType(PROBLEM_TYPE_BASE + slug, title, status)


KEY_EXISTS: Final = _problem("key-exists", "A key of that name exists", 409)
KEY_TYPE_MISMATCH: Final = _problem("key-type-mismatch", "Not an operation of this key type", 409)
KEY_VERSION_RETIRED: Final = _problem(
    "key-version-retired", "Key version below min_decryption_version", 409
)
DELETION_NOT_ALLOWED: Final = _problem("deletion-not-allowed", "Deletion not allowed", 409)
NONCE_BUDGET_EXHAUSTED: Final = _problem(
    "nonce-budget-exhausted", "Nonce budget of the key version used up", 409
)
INVALID_CIPHERTEXT: Final = _problem("invalid-ciphertext", "Malformed ciphertext or tag", 400)
KEYSTORE_UNAVAILABLE: Final = _problem("keystore-unavailable", "Key store unavailable", 503)
KEY_UNAVAILABLE: Final = _problem("key-unavailable", "Key material unavailable here", 503)


def problem_of(exc: BaseException) -> tuple[ProblemType, str, str] | None:
    """(problem, detail, metrics outcome) of an exception a key operation may raise."""
    match exc:
        case key_errors.KeyNotFoundError():
            return NOT_FOUND, f"There is no key named {exc.args[0]!r}.", "invalid_input"
        case key_errors.KeyExistsError():
            return KEY_EXISTS, f"A key named {exc.args[0]!r} exists already.", "refused"
        case key_errors.KeyTypeMismatchError():
            return KEY_TYPE_MISMATCH, str(exc) + ".", "refused"
        case key_errors.VersionRetiredError():
            return KEY_VERSION_RETIRED, str(exc) + ".", "refused"
        case key_errors.DeletionNotAllowedError():
            return (
                DELETION_NOT_ALLOWED,
                f"Key {exc.args[0]!r} has deletion_allowed false; PATCH it first.",
                "refused",
            )
        case key_errors.NonceBudgetExhaustedError():
            return NONCE_BUDGET_EXHAUSTED, str(exc) + ".", "refused"
        case key_errors.UnknownVersionError() | ctfmt.MalformedError():
            return INVALID_CIPHERTEXT, str(exc) + ".", "invalid_input"
        case key_errors.InvalidUpdateError():
            return VALIDATION_FAILED, str(exc) + ".", "invalid_input"
        case crypto.AuthenticationError():
            return (
                AUTHENTICATION_FAILED,
                "The ciphertext does not authenticate under this key with this associated "
                "data; no plaintext is released.",
                "auth_failed",
            )
        case crypto.InvalidInputError():
            return VALIDATION_FAILED, str(exc), "invalid_input"
        case key_errors.KeyUnavailableError(name=str() as name):
            # One key, not the store: say which (the client named it) and that the cause is
            # logged. Not the store's transient 503: a damaged row stays damaged, so no
            # Retry-After invites retries that cannot succeed (an instance holding the KEK
            # may still serve it: hence 503, not 500).
            logger.error("key store: %s", exc)
            return (
                KEY_UNAVAILABLE,
                f"The stored material of key {name!r} cannot be unwrapped on this instance "
                "(its row was altered or damaged, or it is wrapped under a KEK this instance "
                "does not hold); the cause is in the server log. Other keys are unaffected.",
                "error",
            )
        case key_errors.StoreError() | key_errors.KeyUnavailableError():
            # The cause goes to the log; the client learns only that it may retry.
            logger.error("key store: %s", exc)
            return KEYSTORE_UNAVAILABLE, "The key store is unavailable; retry later.", "error"
    return None


async def _key_problem(request: Request, exc: Exception) -> Response:
    found = problem_of(exc)
    assert found is not None
    problem, detail, _ = found
    headers = {"Retry-After": "1"} if problem is KEYSTORE_UNAVAILABLE else None
    return problem_response(request, problem, detail, headers=headers)


_HANDLED: Final = (
    key_errors.KeyNotFoundError,
    key_errors.KeyExistsError,
    key_errors.KeyTypeMismatchError,
    key_errors.VersionRetiredError,
    key_errors.DeletionNotAllowedError,
    key_errors.NonceBudgetExhaustedError,
    key_errors.UnknownVersionError,
    key_errors.InvalidUpdateError,
    key_errors.StoreError,
    key_errors.KeyUnavailableError,
    ctfmt.MalformedError,
)


# ---- the service in the app ---------------------------------------------------------------


@dataclass
class NamedKeys:
    service: KeyService
    metrics: KeyMetrics


@asynccontextmanager
async def named_keys(app: FastAPI, state: ServiceState) -> Any:
    """Open the key store for the app's lifetime (from app.py's lifespan): a store that
    cannot be opened stops startup, as a bad kernel choice does."""
    settings = state.settings
    service = await anyio.to_thread.run_sync(open_key_service, settings)
    metrics = KeyMetrics(state.metrics.registry, settings.metrics_key_labels)
    state.metrics.register_collector(
        KeyLevelCollector(lambda: service.levels, metrics.labels, settings.chacha20_nonce_budget)
    )
    logger.info(
        "named keys in %s, KEK %s from %s",
        service.store.description,
        service.ring.current.id,
        service.ring.source,
    )
    app.state.archcrypt_keys = NamedKeys(service, metrics)
    service.start()
    try:
        yield
    finally:
        await anyio.to_thread.run_sync(service.close)


def install_key_problem_handlers(app: FastAPI) -> None:
    for exc_class in _HANDLED:
        app.add_exception_handler(exc_class, _key_problem)


async def get_named_keys(request: Request) -> NamedKeys:
    keys: NamedKeys = request.app.state.archcrypt_keys
    return keys


Keys = Annotated[NamedKeys, Depends(get_named_keys)]


# ---- the scope each route needs -------------------------------------------------------------

Name = Annotated[
    str,
    Path(pattern=NAME_PATTERN, description="The key's name: [a-z0-9][a-z0-9._-]{0,63}."),
]


@dataclass(frozen=True)
class KeyCall:
    """What a key route is about to do: the key, the operation, the scope that allows it,
    and the operations to do it with."""

    name: str
    operation: KeyOperation
    scope: str
    ops: Operations


def _call(request: Request, name: str, operation: KeyOperation) -> KeyCall:
    """The first thing each key operation does: name its scope, check readiness, get its
    operations. (A plain call, not a dependency: OperationRoute solves none.)"""
    scope = f"key:{name}:{operation}"
    request.scope[REQUIRED_SCOPE_KEY] = scope
    request.scope[KEY_NAME_KEY] = name
    ops = Operations(request.app.state.archcrypt_keys, runner_of(request))
    return KeyCall(name, operation, scope, ops)


def _admin_scope(scope: Literal["keys:admin", "keys:read"]) -> Callable[..., Awaitable[None]]:
    async def dependency(request: Request) -> None:
        request.scope[REQUIRED_SCOPE_KEY] = scope
        runner_of(request)  # 503 until the startup self-test has passed

    return dependency


_PROBLEM_CONTENT: Final = {"application/problem+json": {"schema": {"type": "object"}}}
_PROBLEMS: Final[dict[int | str, dict[str, Any]]] = {
    status: {"description": description, "content": _PROBLEM_CONTENT}
    for status, description in {
        400: "Malformed JSON, base64 or ciphertext; authentication failed",
        404: "No key of that name",
        409: "Key type mismatch, retired version, name taken, deletion not allowed, "
        "nonce budget used up",
        413: "Body or batch over its limit",
        415: "Content-Type the route does not take",
        422: "Invalid fields",
        503: "Not ready, or the key store is unavailable",
    }.items()
}


def _scoped(template: str) -> dict[str, Any]:
    """The route's scope (for the auth layer) and the problems it may answer with."""
    return {"openapi_extra": {SCOPE_EXTENSION: template}, "responses": _PROBLEMS}


AdminScope = Depends(_admin_scope("keys:admin"))
ReadScope = Depends(_admin_scope("keys:read"))

# ---- models ---------------------------------------------------------------------------------

Ciphertext = Annotated[
    str,
    Field(
        description="archcrypt:v<version>:<base64 of nonce || ciphertext || tag>",
        examples=["archcrypt:v1:..."],
    ),
]


class CreateKeyRequest(RequestModel):
    name: Annotated[str, Field(pattern=NAME_PATTERN, description="[a-z0-9][a-z0-9._-]{0,63}")]
    type: KeyTypeName = DEFAULT_KEY_TYPE


class PatchKeyRequest(RequestModel):
    min_decryption_version: Annotated[
        int | None,
        Field(ge=1, description="Ciphertexts and tags of older versions are refused (409)."),
    ] = None
    deletion_allowed: bool | None = None


class VersionInfo(ResponseModel):
    version: int
    created_at: str
    usage: Annotated[int, Field(description="Seals (AEAD) or MACs (HMAC) done with it.")]
    nonces_reserved: Annotated[
        int | None,
        Field(description="chacha20-poly1305: random nonces claimed from its budget."),
    ] = None


class KeyInfo(ResponseModel):
    name: str
    type: KeyTypeName
    created_at: str
    versions: list[VersionInfo]
    primary_version: int
    min_decryption_version: int
    deletion_allowed: bool
    nonce_budget: Annotated[
        int | None, Field(description="chacha20-poly1305: random nonces per version.")
    ] = None


class KeyList(ResponseModel):
    keys: list[KeyInfo]


class KeySealRequest(RequestModel):
    plaintext: Base64In
    aad: Annotated[Base64In, Field(description="Authenticated, not encrypted; needed to open.")] = (
        b""
    )


class KeySealResponse(ResponseModel):
    ciphertext: Ciphertext
    key_version: int


class KeyOpenRequest(RequestModel):
    ciphertext: Ciphertext
    aad: Base64In = b""


class KeyOpenResponse(ResponseModel):
    plaintext: Base64Out
    key_version: int


class KeyRewrapRequest(RequestModel):
    ciphertext: Ciphertext
    aad: Annotated[
        Base64In, Field(description="The AAD it was sealed with; it is sealed again with it.")
    ] = b""


class KeyDatakeyRequest(RequestModel):
    bits: Literal[128, 256, 512] = 256


class KeyDatakeyResponse(ResponseModel):
    plaintext: Annotated[Base64Out, Field(description="The data key: use it, then forget it.")]
    ciphertext: Annotated[Ciphertext, Field(description="The data key sealed under this key.")]
    key_version: int


class KeyWrappedDatakeyResponse(ResponseModel):
    ciphertext: Ciphertext
    key_version: int


class KeyMacRequest(RequestModel):
    data: Base64In


class KeyMacResponse(ResponseModel):
    tag: Annotated[str, Field(description="archcrypt:v<version>:<base64 tag>")]
    key_version: int


class KeyVerifyRequest(RequestModel):
    data: Base64In
    tag: str


class KeyVerifyResponse(ResponseModel):
    valid: bool


class KeyBatchRequest(RequestModel):
    items: Annotated[
        list[Any],
        Field(description="Single-request bodies; at most ARCHCRYPT_MAX_BATCH_MESSAGES."),
    ]


class KeyBatchResponse(ResponseModel):
    items: Annotated[
        list[dict[str, Any]],
        Field(description='In order: each the single response or {"error": <problem>}.'),
    ]


def key_info(record: KeyRecord, pending: Mapping[int, int], budget: int) -> KeyInfo:
    chacha = record.type == "chacha20-poly1305"
    return KeyInfo(
        name=record.name,
        type=record.type,
        created_at=record.created_at,
        versions=[
            VersionInfo(
                version=v.version,
                created_at=v.created_at,
                usage=v.usage + pending.get(v.version, 0),
                nonces_reserved=v.nonces_reserved if chacha else None,
            )
            for v in record.versions
        ],
        primary_version=record.primary_version,
        min_decryption_version=record.min_decryption_version,
        deletion_allowed=record.deletion_allowed,
        nonce_budget=budget if chacha else None,
    )


# ---- the operations -------------------------------------------------------------------------


class Operations:
    """One key operation at a time, shared by the single routes and the batches.

    The runner gets each facade call as one argument-free callable (a partial), so that it
    is the call the runner times and counts, whether it takes fn(*args) or a thunk."""

    def __init__(self, keys: NamedKeys, runner: CryptoRunner) -> None:
        self.service = keys.service
        self.metrics = keys.metrics
        self.runner = runner

    async def seal(
        self, key: LoadedKey, plaintext: bytes, aad: bytes, operation: str = "seal"
    ) -> tuple[int, bytes, bytes]:
        """(version, nonce, ciphertext || tag) under the primary version."""
        key, version = await self.service.sealing_version(key)
        nonce = secrets.token_bytes(key.type.nonce_size)
        body = await self.runner(
            operation,
            key.type.name,
            len(plaintext) + len(aad),
            functools.partial(
                crypto.aead_seal,
                key.type.name,
                key.materials[version],
                nonce,
                plaintext,
                ctfmt.associated_data(key.type, version, aad),
            ),
        )
        self.service.count_use(key.name, version)
        return version, nonce, body

    async def open(
        self, key: LoadedKey, sealed: ctfmt.Sealed, aad: bytes, operation: str = "open"
    ) -> bytes:
        try:
            key, material = await self.service.material(key, sealed.version)
        except key_errors.UnknownVersionError:
            # no version of this key made it: as unauthentic as a flipped bit (see parse)
            raise crypto.AuthenticationError() from None
        return await self.runner(
            operation,
            key.type.name,
            len(sealed.body) + len(aad),
            functools.partial(
                crypto.aead_open,
                key.type.name,
                material,
                sealed.nonce,
                sealed.body,
                ctfmt.associated_data(key.type, sealed.version, aad),
            ),
        )

    async def seal_text(self, key: LoadedKey, item: KeySealRequest) -> KeySealResponse:
        version, nonce, body = await self.seal(key, item.plaintext, item.aad)
        return KeySealResponse(
            ciphertext=ctfmt.aead_text(version, nonce, body), key_version=version
        )

    def parse(self, key: LoadedKey, text: str) -> ctfmt.Sealed:
        # Malformed is answered as unauthentic (the module docstring says why).
        try:
            version, payload = ctfmt.parse_text(text)
            return ctfmt.split_aead(key.type, version, payload)
        except ctfmt.MalformedError:
            raise crypto.AuthenticationError() from None

    def parse_binary(self, key: LoadedKey, data: bytes) -> ctfmt.Sealed:
        try:
            return ctfmt.parse_binary(data, key.type)
        except ctfmt.MalformedError:
            raise crypto.AuthenticationError() from None

    async def open_text(self, key: LoadedKey, item: KeyOpenRequest) -> KeyOpenResponse:
        sealed = self.parse(key, item.ciphertext)
        plaintext = await self.open(key, sealed, item.aad)
        return KeyOpenResponse(plaintext=plaintext, key_version=sealed.version)

    async def rewrap(self, key: LoadedKey, item: KeyRewrapRequest) -> KeySealResponse:
        sealed = self.parse(key, item.ciphertext)
        plaintext = await self.open(key, sealed, item.aad, operation="rewrap")
        version, nonce, body = await self.seal(key, plaintext, item.aad, operation="rewrap")
        return KeySealResponse(
            ciphertext=ctfmt.aead_text(version, nonce, body), key_version=version
        )

    async def datakey(self, key: LoadedKey, bits: int) -> KeyDatakeyResponse:
        data_key = secrets.token_bytes(bits // 8)
        version, nonce, body = await self.seal(key, data_key, b"", operation="datakey")
        return KeyDatakeyResponse(
            plaintext=data_key,
            ciphertext=ctfmt.aead_text(version, nonce, body),
            key_version=version,
        )

    async def mac(self, key: LoadedKey, item: KeyMacRequest) -> KeyMacResponse:
        key, version = await self.service.sealing_version(key)
        tag = await self.runner(
            "mac",
            key.type.name,
            len(item.data),
            functools.partial(
                crypto.mac,
                key.type.name,
                key.materials[version],
                item.data,
            ),
        )
        self.service.count_use(key.name, version)
        return KeyMacResponse(tag=ctfmt.to_text(version, tag), key_version=version)

    async def verify(self, key: LoadedKey, item: KeyVerifyRequest) -> KeyVerifyResponse:
        return (await self.verify_with_version(key, item))[0]

    async def verify_with_version(
        self, key: LoadedKey, item: KeyVerifyRequest
    ) -> tuple[KeyVerifyResponse, int | None]:
        """The answer and the version whose material checked the tag (None when the key
        never had the tag's version): the response has no key_version, the audit line does."""
        version, tag = ctfmt.parse_text(item.tag)
        size = crypto.DIGEST_SIZES[key.type.name.removeprefix("hmac-")]
        if len(tag) != size:
            raise ctfmt.MalformedError(f"a {key.type.name} tag is {size} bytes, got {len(tag)}")
        try:
            key, material = await self.service.material(key, version)
        except key_errors.UnknownVersionError:
            # no version made it: not a tag of this key
            return KeyVerifyResponse(valid=False), None
        valid = await self.runner(
            "verify",
            key.type.name,
            len(item.data),
            functools.partial(
                crypto.mac_verify,
                key.type.name,
                material,
                item.data,
                tag,
            ),
        )
        return KeyVerifyResponse(valid=valid), version

    def observe(self, name: str, operation: str, exc: BaseException | None, count: int = 1) -> None:
        if exc is None:
            outcome = "ok"
        else:
            found = problem_of(exc)
            outcome = found[2] if found is not None else "error"
        self.metrics.observe(name, operation, outcome, count)


async def _key(ops: Operations, call: KeyCall, request: Request) -> LoadedKey:
    # Only a key that exists is counted under its name: a client asking for names that do
    # not exist (or while the store is down) must not take label values (see KeyMetrics).
    key = await ops.service.key(call.name)
    try:
        key.require(call.operation)
    except key_errors.KeyTypeMismatchError as exc:
        ops.observe(call.name, call.operation, exc)
        raise
    return key


async def _single(
    ops: Operations, call: KeyCall, request: Request, work: Callable[[], Awaitable[Any]]
) -> Any:
    try:
        result = await work()
    except Exception as exc:
        ops.observe(call.name, call.operation, exc)
        raise
    if isinstance(result, KeyVerifyResponse) and not result.valid:
        # a 200, but the tag is not this data's under any version of the key
        ops.metrics.observe(call.name, call.operation, "auth_failed")
        set_outcome(request.scope, "auth_failed")
    else:
        ops.observe(call.name, call.operation, None)
    version = getattr(result, "key_version", None)
    if version is not None:
        request.scope[KEY_VERSION_KEY] = version
    return result


# ---- request parsing for the routes that take JSON or binary --------------------------------


# ---- administration -------------------------------------------------------------------------

admin = APIRouter(prefix="/v1/keys", tags=["keys"], route_class=JsonBodyRoute)
# GET, DELETE and rotate take no body, so no Content-Type is asked of them
plain = APIRouter(prefix="/v1/keys", tags=["keys"])
operations = APIRouter(prefix="/v1/keys", tags=["keys"], route_class=OperationRoute)
dual = APIRouter(prefix="/v1/keys", tags=["keys"], route_class=OperationRoute)


batches = APIRouter(prefix="/v1/keys", tags=["keys"], route_class=OperationRoute)


async def _admin(keys: NamedKeys, request: Request, work: Callable[[], Any]) -> Any:
    """work() (blocking: a worker thread) and the metadata of the record(s) it returns, with
    this instance's counts not yet in the store."""
    state: ServiceState = request.app.state.archcrypt
    budget = state.settings.chacha20_nonce_budget
    result, usage = await anyio.to_thread.run_sync(keys.service.with_usage, work)
    if isinstance(result, list):
        return KeyList(keys=[key_info(r, usage.of(r.name), budget) for r in result])
    return key_info(result, usage.of(result.name), budget)


@admin.post("", status_code=201, dependencies=[AdminScope], **_scoped("keys:admin"))
async def create_key(body: CreateKeyRequest, keys: Keys, request: Request) -> KeyInfo:
    """Create a key with one version; 409 when the name is taken."""
    request.scope[KEY_NAME_KEY] = body.name
    info: KeyInfo = await _admin(
        keys, request, functools.partial(keys.service.create, body.name, body.type)
    )
    return info


@plain.get("", dependencies=[ReadScope], **_scoped("keys:read"))
async def list_keys(keys: Keys, request: Request) -> KeyList:
    """Every key's metadata; never material."""
    listed: KeyList = await _admin(keys, request, keys.service.store.list_keys)
    return listed


@plain.get("/{name}", dependencies=[ReadScope], **_scoped("keys:read"))
async def show_key(name: Name, keys: Keys, request: Request) -> KeyInfo:
    """One key's metadata: versions with their usage, primary and minimum versions."""
    request.scope[KEY_NAME_KEY] = name
    info: KeyInfo = await _admin(keys, request, functools.partial(keys.service.record, name))
    return info


@plain.post("/{name}/rotate", dependencies=[AdminScope], **_scoped("keys:admin"))
async def rotate_key(name: Name, keys: Keys, request: Request) -> KeyInfo:
    """A new version becomes primary; older ones still open and verify."""
    request.scope[KEY_NAME_KEY] = name
    info: KeyInfo = await _admin(keys, request, functools.partial(keys.service.rotate, name))
    return info


@admin.patch("/{name}", dependencies=[AdminScope], **_scoped("keys:admin"))
async def patch_key(name: Name, body: PatchKeyRequest, keys: Keys, request: Request) -> KeyInfo:
    """Set min_decryption_version (1 to the primary version) and/or deletion_allowed."""
    request.scope[KEY_NAME_KEY] = name
    update = functools.partial(
        keys.service.update, name, body.min_decryption_version, body.deletion_allowed
    )
    info: KeyInfo = await _admin(keys, request, update)
    return info


@plain.delete("/{name}", status_code=204, dependencies=[AdminScope], **_scoped("keys:admin"))
async def delete_key(name: Name, keys: Keys, request: Request) -> Response:
    """Delete the key and all its versions: what they sealed can never be opened again.
    409 unless deletion_allowed was set."""
    request.scope[KEY_NAME_KEY] = name
    await anyio.to_thread.run_sync(keys.service.delete, name)
    return Response(status_code=204)


# ---- seal and open: JSON or binary ----------------------------------------------------------

_BINARY_SEAL = (
    "The plaintext; the AAD (if any) in the Archcrypt-AAD header, base64. The answer is the "
    "binary self-describing ciphertext (see the README) with an Archcrypt-Key-Version header."
)
_BINARY_OPEN = (
    "A binary self-describing ciphertext; the AAD (if any) in the Archcrypt-AAD header. The "
    "answer is the raw plaintext with an Archcrypt-Key-Version header."
)


def _binary_response(request: Request, content: bytes, version: int) -> Response:
    request.scope[KEY_VERSION_KEY] = version
    return octet_response(content, {KEY_VERSION_HEADER: str(version)})


def _json(model: BaseModel) -> Response:
    return json_response(model.model_dump_json().encode("utf-8"))


def _docs(template: str, docs: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """A route's documentation (service's docs helpers) with its scope and problems."""
    return {
        **docs,
        "response_model": model,
        "openapi_extra": {**docs.get("openapi_extra", {}), SCOPE_EXTENSION: template},
        "responses": {**_PROBLEMS, **docs.get("responses", {})},
    }


_AAD_HEADERS: Final = {"Archcrypt-AAD": ("Associated data, base64.", False)}
_VERSION_HEADERS: Final = {KEY_VERSION_HEADER: "The key version that sealed (or made) it."}


@dual.post(
    "/{name}/seal",
    **_docs(
        "key:{name}:seal",
        operation_docs(
            KeySealRequest,
            body="The plaintext.",
            headers=_AAD_HEADERS,
            result="the binary self-describing ciphertext (see the README).",
            result_headers=_VERSION_HEADERS,
        ),
        KeySealResponse,
    ),
)
async def seal(name: Name, request: Request) -> Response:
    """Seal under the primary version with a nonce drawn by the service."""
    call = _call(request, name, "seal")
    ops = call.ops
    kind = body_kind(request)
    raw = await read_body(request)
    key = await _key(ops, call, request)
    if kind == "binary":
        aad = header_bytes(request, "Archcrypt-AAD", required=False) or b""

        async def work_binary() -> Response:
            version, nonce, body = await ops.seal(key, raw, aad)
            return _binary_response(
                request, ctfmt.aead_binary(key.type, version, nonce, body), version
            )

        response: Response = await _single(ops, call, request, work_binary)
        return response
    item = parse_json(KeySealRequest, raw)
    return _json(await _single(ops, call, request, lambda: ops.seal_text(key, item)))


@dual.post(
    "/{name}/open",
    **_docs(
        "key:{name}:open",
        operation_docs(
            KeyOpenRequest,
            body="A binary self-describing ciphertext.",
            headers=_AAD_HEADERS,
            result="the plaintext.",
            result_headers=_VERSION_HEADERS,
        ),
        KeyOpenResponse,
    ),
)
async def open_(name: Name, request: Request) -> Response:
    """Open a ciphertext of any version at or above min_decryption_version."""
    call = _call(request, name, "open")
    ops = call.ops
    kind = body_kind(request)
    raw = await read_body(request)
    key = await _key(ops, call, request)
    if kind == "binary":
        aad = header_bytes(request, "Archcrypt-AAD", required=False) or b""

        async def work_binary() -> Response:
            sealed = ops.parse_binary(key, raw)
            plaintext = await ops.open(key, sealed, aad)
            return _binary_response(request, plaintext, sealed.version)

        response: Response = await _single(ops, call, request, work_binary)
        return response
    item = parse_json(KeyOpenRequest, raw)
    return _json(await _single(ops, call, request, lambda: ops.open_text(key, item)))


# ---- JSON-only operations -------------------------------------------------------------------


async def _json_body(request: Request, model: type[M], *, optional: bool = False) -> M:
    body_kind(request, binary=False)
    raw = await read_body(request)
    if optional and not raw:
        return model()
    return parse_json(model, raw)


@operations.post(
    "/{name}/rewrap",
    **_docs("key:{name}:rewrap", json_body_docs(KeyRewrapRequest), KeySealResponse),
)
async def rewrap(name: Name, request: Request) -> Response:
    """Open and seal again under the primary version; the plaintext is not returned."""
    call = _call(request, name, "rewrap")
    body = await _json_body(request, KeyRewrapRequest)
    key = await _key(call.ops, call, request)
    return _json(await _single(call.ops, call, request, lambda: call.ops.rewrap(key, body)))


@operations.post(
    "/{name}/datakey",
    **_docs("key:{name}:datakey", json_body_docs(KeyDatakeyRequest), KeyDatakeyResponse),
)
async def datakey(name: Name, request: Request) -> Response:
    """A fresh random data key, in the clear and sealed under this key (envelope encryption:
    encrypt locally with the plaintext, keep only the ciphertext, open it here when needed).
    The body may be empty: 256 bits."""
    call = _call(request, name, "datakey")
    bits = (await _json_body(request, KeyDatakeyRequest, optional=True)).bits
    key = await _key(call.ops, call, request)
    return _json(await _single(call.ops, call, request, lambda: call.ops.datakey(key, bits)))


@operations.post(
    "/{name}/datakey/wrapped",
    **_docs("key:{name}:datakey", json_body_docs(KeyDatakeyRequest), KeyWrappedDatakeyResponse),
)
async def datakey_wrapped(name: Name, request: Request) -> Response:
    """A fresh data key, sealed only: for a caller that stores it now and opens it later."""
    call = _call(request, name, "datakey")
    bits = (await _json_body(request, KeyDatakeyRequest, optional=True)).bits
    key = await _key(call.ops, call, request)
    result: KeyDatakeyResponse = await _single(
        call.ops, call, request, lambda: call.ops.datakey(key, bits)
    )
    return _json(
        KeyWrappedDatakeyResponse(ciphertext=result.ciphertext, key_version=result.key_version)
    )


@operations.post(
    "/{name}/mac", **_docs("key:{name}:mac", json_body_docs(KeyMacRequest), KeyMacResponse)
)
async def mac(name: Name, request: Request) -> Response:
    """HMAC of `data` under the primary version."""
    call = _call(request, name, "mac")
    body = await _json_body(request, KeyMacRequest)
    key = await _key(call.ops, call, request)
    return _json(await _single(call.ops, call, request, lambda: call.ops.mac(key, body)))


@operations.post(
    "/{name}/verify",
    **_docs("key:{name}:verify", json_body_docs(KeyVerifyRequest), KeyVerifyResponse),
)
async def verify(name: Name, request: Request) -> Response:
    """Check a tag of any version at or above min_decryption_version, in constant time."""
    call = _call(request, name, "verify")
    body = await _json_body(request, KeyVerifyRequest)
    key = await _key(call.ops, call, request)

    async def work() -> KeyVerifyResponse:
        result, version = await call.ops.verify_with_version(key, body)
        if version is not None:
            request.scope[KEY_VERSION_KEY] = version  # for the audit line
        return result

    return _json(await _single(call.ops, call, request, work))


# ---- batches --------------------------------------------------------------------------------


def _item_problem(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, Exception):
        found = item_problem(exc)  # validation, encoding, authentication (service's wire)
        if found is not None:
            return found
    named = problem_of(exc)
    if named is None:
        raise exc
    return problem_value(named[0], named[1])


async def _batch(
    ops: Operations,
    call: KeyCall,
    request: Request,
    model: type[RequestModel],
    size: Callable[[Any], int],
    work: Callable[[LoadedKey, Any], Awaitable[BaseModel]],
) -> Response:
    """Counted before it is parsed (service's wire), each item validated and run on its own;
    an item's failure is its problem object."""
    body_kind(request, binary=False)
    state: ServiceState = request.app.state.archcrypt
    limits = BatchLimits.of(state.settings, fields_per_item=2)
    items = parse_batch(await read_body(request, limits.body_limit()), limits)
    key = await _key(ops, call, request)
    parsed: list[Any] = []
    total = 0
    for raw in items:
        try:
            item = model.model_validate(raw)
        except ValidationError as exc:
            parsed.append(exc)
            continue
        total += size(item)
        parsed.append(item)
    if total > limits.max_bytes:
        raise ProblemError(
            CONTENT_TOO_LARGE,
            f"the items add up to {total} bytes; the batch limit is {limits.max_bytes}",
        )
    out: list[bytes] = []
    ok = 0
    for item in parsed:
        if isinstance(item, ValidationError):
            ops.observe(call.name, call.operation, crypto.InvalidInputError())
            out.append(_error_item(_item_problem(item)))
            continue
        try:
            result = await work(key, item)
        except Exception as exc:
            ops.observe(call.name, call.operation, exc)
            out.append(_error_item(_item_problem(exc)))
            continue
        ok += 1
        out.append(result.model_dump_json().encode("utf-8"))
    if ok:
        ops.observe(call.name, call.operation, None, ok)
    return json_response(b'{"items":[' + b",".join(out) + b"]}")


def _error_item(problem: Mapping[str, Any]) -> bytes:
    return b'{"error":' + json.dumps(problem, separators=(",", ":")).encode("utf-8") + b"}"


# item model, its size in bytes (for ARCHCRYPT_MAX_BATCH_BYTES), the operation per item
_BATCHES: Final[dict[KeyOperation, tuple[type[RequestModel], Callable[[Any], int], Any]]] = {
    "seal": (KeySealRequest, lambda i: len(i.plaintext) + len(i.aad), Operations.seal_text),
    "open": (KeyOpenRequest, lambda i: len(i.ciphertext) + len(i.aad), Operations.open_text),
    "rewrap": (KeyRewrapRequest, lambda i: len(i.ciphertext) + len(i.aad), Operations.rewrap),
    "mac": (KeyMacRequest, lambda i: len(i.data), Operations.mac),
    "verify": (KeyVerifyRequest, lambda i: len(i.data) + len(i.tag), Operations.verify),
}


def _add_batch_route(operation: KeyOperation) -> None:
    model, size, work = _BATCHES[operation]
    envelope = create_model(
        f"Key{operation.capitalize()}KeyBatchRequest",
        __config__=ConfigDict(extra="forbid", frozen=True),
        items=(list[model], ...),  # type: ignore[valid-type]
    )

    async def endpoint(name: Name, request: Request) -> Response:
        call = _call(request, name, operation)
        ops = call.ops
        return await _batch(ops, call, request, model, size, lambda key, item: work(ops, key, item))

    batches.add_api_route(
        f"/{{name}}/{operation}/batch",
        endpoint,
        methods=["POST"],
        name=f"{operation}_batch",
        summary=f"{operation.capitalize()} batch",
        description=f"Items of the single {operation} request's shape, answered in order; a "
        'failed item is {"error": <problem>}.',
        **_docs(f"key:{{name}}:{operation}", json_body_docs(envelope), KeyBatchResponse),
    )


for _operation in _BATCHES:
    _add_batch_route(_operation)


ROUTERS: Final = (admin, plain, dual, operations, batches)
