"""Camellia (RFC 3713) in ECB mode: for compatibility with existing data and for benchmarking."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import Field

from .. import crypto
from .common import Base64In, Base64Out, RequestModel, ResponseModel, checked
from .deps import JsonBodyRoute, Runner

ECB_WARNING = (
    "ECB encrypts equal 16-byte blocks to equal ciphertext blocks, so it leaks patterns in "
    "the data and offers no integrity. It exists for compatibility with existing data and "
    "for benchmarking; for anything new use /v1/aead."
)

router = APIRouter(prefix="/v1/ecb", tags=["ecb"], route_class=JsonBodyRoute)

Key = Annotated[
    Base64In,
    checked(lambda key: len(key) in crypto.CAMELLIA_KEY_SIZES, "must be 16, 24 or 32 bytes"),
    Field(description="16, 24 or 32 bytes: selects Camellia-128, -192 or -256."),
]
Blocks = Annotated[
    Base64In,
    checked(
        lambda data: len(data) % crypto.CAMELLIA_BLOCK_SIZE == 0, "must be a multiple of 16 bytes"
    ),
    Field(description="Whole 16-byte blocks; there is no padding."),
]


class EcbRequest(RequestModel):
    key: Key
    data: Blocks


class EcbResponse(ResponseModel):
    data: Base64Out


def _algorithm(key: bytes) -> str:
    return f"camellia-{8 * len(key)}"


@router.post("/camellia/encrypt", description=ECB_WARNING)
async def encrypt(body: EcbRequest, runner: Runner) -> EcbResponse:
    data = await runner(
        "encrypt",
        _algorithm(body.key),
        len(body.data),
        crypto.camellia_ecb_encrypt,
        body.key,
        body.data,
    )
    return EcbResponse(data=data)


@router.post("/camellia/decrypt", description=ECB_WARNING)
async def decrypt(body: EcbRequest, runner: Runner) -> EcbResponse:
    data = await runner(
        "decrypt",
        _algorithm(body.key),
        len(body.data),
        crypto.camellia_ecb_decrypt,
        body.key,
        body.data,
    )
    return EcbResponse(data=data)
