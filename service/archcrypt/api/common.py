"""Pieces every router shares: strict models, the base64 field types, a length check."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Annotated, Any

from fastapi.exceptions import RequestValidationError
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from ..errors import BASE64_ERROR_TYPE

_BASE64_SCHEMA = WithJsonSchema({"type": "string", "contentEncoding": "base64"})


class RequestModel(BaseModel):
    """A JSON request body: unknown fields are an error, not something to ignore."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _base64_error() -> PydanticCustomError:
    # The message never quotes the input: it may be a key.
    return PydanticCustomError(
        BASE64_ERROR_TYPE,
        "Value is not canonical standard base64 (RFC 4648 section 4: padded, no whitespace)",
    )


def decode_base64(value: object) -> bytes:
    """Strict standard base64: alphabet and padding checked, only the canonical spelling."""
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a base64 string")
    try:
        raw = value.encode("ascii")
        decoded = base64.b64decode(raw, validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise _base64_error() from None
    # b64decode ignores set bits after the last byte ("QR==" decodes like "QQ=="); only the
    # final quantum can carry them, so re-encoding it is the whole canonicity check.
    tail = raw[-4:]
    if base64.b64encode(base64.b64decode(tail)) != tail:
        raise _base64_error()
    return decoded


def encode_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


# Bytes in a request body, sent as standard base64.
Base64In = Annotated[bytes, BeforeValidator(decode_base64), _BASE64_SCHEMA]
# Bytes in a response body, sent as standard base64.
Base64Out = Annotated[bytes, PlainSerializer(encode_base64, return_type=str), _BASE64_SCHEMA]


def exact_length(size: int) -> AfterValidator:
    def check(value: bytes) -> bytes:
        if len(value) != size:
            raise PydanticCustomError(
                "bytes_length",
                "must be exactly {expected} bytes, got {actual}",
                {"expected": size, "actual": len(value)},
            )
        return value

    return AfterValidator(check)


def checked(predicate: Callable[[bytes], bool], message: str) -> AfterValidator:
    def check(value: bytes) -> bytes:
        if not predicate(value):
            raise PydanticCustomError("bytes_length", message)
        return value

    return AfterValidator(check)


def require_length(field: str, value: bytes, size: int, context: str) -> None:
    """A 422 like a model's, for lengths that depend on the algorithm in the path."""
    if len(value) != size:
        error: dict[str, Any] = {
            "type": "bytes_length",
            "loc": ("body", field),
            "msg": f"must be exactly {size} bytes for {context}, got {len(value)}",
        }
        raise RequestValidationError([error])
