"""Camellia (RFC 3713) in ECB mode: for compatibility with existing data and for benchmarking.

JSON (bytes as base64) or a raw application/octet-stream body with the key in
Archcrypt-Key, answered in kind; each has a batch form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import Field

from .. import crypto
from .common import Base64In, Base64Out, RequestModel, ResponseModel, checked
from .deps import OperationRoute, runner_of
from .docs import ItemError, json_body_docs, operation_docs
from .wire import (
    b64encode,
    body_kind,
    header_bytes,
    json_response,
    octet_response,
    parse_json,
    read_body,
    run_batch,
)

ECB_WARNING = (
    "ECB encrypts equal 16-byte blocks to equal ciphertext blocks, so it leaks patterns in "
    "the data and offers no integrity. It exists for compatibility with existing data and "
    "for benchmarking; for anything new use /v1/aead."
)

router = APIRouter(prefix="/v1/ecb", tags=["ecb"], route_class=OperationRoute)

_KEY_MESSAGE = "must be 16, 24 or 32 bytes"
_BLOCKS_MESSAGE = "must be a multiple of 16 bytes"

Key = Annotated[
    Base64In,
    checked(lambda key: len(key) in crypto.CAMELLIA_KEY_SIZES, _KEY_MESSAGE),
    Field(description="16, 24 or 32 bytes: selects Camellia-128, -192 or -256."),
]
Blocks = Annotated[
    Base64In,
    checked(lambda data: len(data) % crypto.CAMELLIA_BLOCK_SIZE == 0, _BLOCKS_MESSAGE),
    Field(description="Whole 16-byte blocks; there is no padding."),
]


class EcbRequest(RequestModel):
    key: Key
    data: Blocks


class EcbResponse(ResponseModel):
    data: Base64Out


class EcbBatchRequest(RequestModel):
    items: Annotated[list[EcbRequest], Field(description="At most ARCHCRYPT_MAX_BATCH_MESSAGES.")]


class EcbBatchResponse(ResponseModel):
    items: Annotated[list[EcbResponse | ItemError], Field(description="One per item, in order.")]


Cipher = Callable[[bytes, bytes], bytes]
_HEADERS = {"Archcrypt-Key": ("16, 24 or 32 bytes, base64.", True)}


def _algorithm(key: bytes) -> str:
    return f"camellia-{8 * len(key)}"


def _invalid(loc: tuple[str, ...], message: str) -> RequestValidationError:
    return RequestValidationError([{"type": "bytes_length", "loc": loc, "msg": message}])


async def _single(operation: str, cipher: Cipher, request: Request) -> Response:
    runner = runner_of(request)
    kind = body_kind(request)
    raw = await read_body(request)
    if kind == "json":
        body = parse_json(EcbRequest, raw)
        data = await runner(
            operation, _algorithm(body.key), len(body.data), lambda: cipher(body.key, body.data)
        )
        return json_response(b'{"data":"%s"}' % b64encode(data))
    key = header_bytes(request, "Archcrypt-Key", required=True)
    if len(key) not in crypto.CAMELLIA_KEY_SIZES:
        raise _invalid(("header", "Archcrypt-Key"), _KEY_MESSAGE)
    if len(raw) % crypto.CAMELLIA_BLOCK_SIZE:
        raise _invalid(("body",), _BLOCKS_MESSAGE)
    return octet_response(
        await runner(operation, _algorithm(key), len(raw), lambda: cipher(key, raw))
    )


async def _batch(operation: str, cipher: Cipher, request: Request) -> Response:
    def item(value: EcbRequest) -> bytes:
        return b'{"data":"%s"}' % b64encode(cipher(value.key, value.data))

    # Items may mix key sizes: the batch is counted under the algorithm family.
    return await run_batch(
        request,
        runner_of(request),
        operation,
        "camellia",
        EcbRequest,
        fields=2,
        size=lambda i: len(i.data),
        handle=item,
    )


_SINGLE_DOCS = operation_docs(
    EcbRequest, body="Whole 16-byte blocks.", headers=_HEADERS, result="the blocks, raw."
)


@router.post(
    "/camellia/encrypt", description=ECB_WARNING, response_model=EcbResponse, **_SINGLE_DOCS
)
async def encrypt(request: Request) -> Response:
    return await _single("encrypt", crypto.camellia_ecb_encrypt, request)


@router.post(
    "/camellia/decrypt", description=ECB_WARNING, response_model=EcbResponse, **_SINGLE_DOCS
)
async def decrypt(request: Request) -> Response:
    return await _single("decrypt", crypto.camellia_ecb_decrypt, request)


@router.post(
    "/camellia/encrypt/batch",
    description=ECB_WARNING,
    response_model=EcbBatchResponse,
    **json_body_docs(EcbBatchRequest),
)
async def encrypt_batch(request: Request) -> Response:
    return await _batch("encrypt_batch", crypto.camellia_ecb_encrypt, request)


@router.post(
    "/camellia/decrypt/batch",
    description=ECB_WARNING,
    response_model=EcbBatchResponse,
    **json_body_docs(EcbBatchRequest),
)
async def decrypt_batch(request: Request) -> Response:
    return await _batch("decrypt_batch", crypto.camellia_ecb_decrypt, request)
