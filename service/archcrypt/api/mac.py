"""MACs: Poly1305 (RFC 8439, one-time key) and HMAC-SHA-2 (RFC 2104, FIPS 198-1)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from .. import crypto
from .common import Base64In, Base64Out, RequestModel, ResponseModel, require_length
from .deps import JsonBodyRoute, Runner

MacAlgorithm = Literal["poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"]
AlgorithmPath = Annotated[MacAlgorithm, Path()]

Key = Annotated[
    Base64In,
    Field(description="poly1305: a 32-byte one-time key, never used twice. HMAC: any length."),
]

router = APIRouter(prefix="/v1/mac", tags=["mac"], route_class=JsonBodyRoute)

POLY1305_KEY_SIZE = 32
POLY1305_TAG_SIZE = 16


class MacRequest(RequestModel):
    key: Key
    data: Base64In


class MacResponse(ResponseModel):
    tag: Base64Out


class VerifyRequest(RequestModel):
    key: Key
    data: Base64In
    tag: Annotated[
        Base64In,
        Field(description="The full tag: 16 bytes for poly1305, the digest size for HMAC."),
    ]


class VerifyResponse(ResponseModel):
    valid: bool


def _tag_size(algorithm: MacAlgorithm) -> int:
    if algorithm == "poly1305":
        return POLY1305_TAG_SIZE
    return crypto.DIGEST_SIZES[algorithm.removeprefix("hmac-")]


def _check_key(algorithm: MacAlgorithm, key: bytes) -> None:
    if algorithm == "poly1305":
        require_length("key", key, POLY1305_KEY_SIZE, algorithm)


@router.post("/{algorithm}")
async def mac(algorithm: AlgorithmPath, body: MacRequest, runner: Runner) -> MacResponse:
    """Compute the tag of `data`."""
    _check_key(algorithm, body.key)
    tag = await runner("mac", algorithm, len(body.data), crypto.mac, algorithm, body.key, body.data)
    return MacResponse(tag=tag)


@router.post("/{algorithm}/verify")
async def verify(algorithm: AlgorithmPath, body: VerifyRequest, runner: Runner) -> VerifyResponse:
    """Check a tag in constant time. Truncated tags are refused (422), not compared."""
    _check_key(algorithm, body.key)
    require_length("tag", body.tag, _tag_size(algorithm), algorithm)
    valid = await runner(
        "verify",
        algorithm,
        len(body.data),
        crypto.mac_verify,
        algorithm,
        body.key,
        body.data,
        body.tag,
    )
    return VerifyResponse(valid=valid)
