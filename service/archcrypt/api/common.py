"""Pieces every router shares: strict models, the base64 field types, a length check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi.exceptions import RequestValidationError
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from .wire import BASE64_FIELD, b64decode, b64encode, base64_error

_BASE64_SCHEMA = WithJsonSchema({"type": "string", "contentEncoding": "base64"})


class RequestModel(BaseModel):
    """A JSON request body: unknown fields are an error, not something to ignore."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def decode_base64(value: object) -> bytes:
    """Strict standard base64: alphabet and padding checked, only the canonical spelling."""
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a base64 string")
    try:
        return b64decode(value)
    except ValueError:  # binascii.Error included
        raise base64_error() from None


def encode_base64(value: bytes) -> str:
    return b64encode(value).decode("ascii")


# Bytes in a request body, sent as standard base64.
# PlainValidator: the decoder's bytes are the value, with no second pass through pydantic's
# bytes validator (half the validation time of a small item).
Base64In = Annotated[bytes, PlainValidator(decode_base64), _BASE64_SCHEMA, BASE64_FIELD]
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


Loc = tuple[str | int, ...]


def require_length(loc: Loc, value: bytes, size: int, context: str) -> None:
    """A 422 like a model's, for lengths that depend on the algorithm in the path; `loc` as
    pydantic would say it (("body", "nonce"), ("header", "Archcrypt-Nonce"), ("nonce",))."""
    if len(value) != size:
        error: dict[str, Any] = {
            "type": "bytes_length",
            "loc": loc,
            "msg": f"must be exactly {size} bytes for {context}, got {len(value)}",
        }
        raise RequestValidationError([error])
