"""AEAD: ChaCha20-Poly1305 (RFC 8439) and XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha)."""

from __future__ import annotations

import secrets
from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from .. import crypto
from ..errors import PROBLEM_TYPE_BASE
from .common import (
    Base64In,
    Base64Out,
    RequestModel,
    ResponseModel,
    checked,
    exact_length,
    require_length,
)
from .deps import JsonBodyRoute, Runner

AeadAlgorithm = Literal["chacha20-poly1305", "xchacha20-poly1305"]
AlgorithmPath = Annotated[
    AeadAlgorithm, Path(description="12-byte nonce, or 24-byte for xchacha20-poly1305.")
]

Key = Annotated[Base64In, exact_length(crypto.AEAD_KEY_SIZE), Field(description="32-byte key.")]
Aad = Annotated[Base64In, Field(description="Associated data: authenticated, not encrypted.")]

router = APIRouter(prefix="/v1/aead", tags=["aead"], route_class=JsonBodyRoute)


class SealRequest(RequestModel):
    key: Key
    nonce: Annotated[
        Base64In | None,
        Field(description="Never reuse a nonce with a key. Absent: a fresh random one is drawn."),
    ] = None
    plaintext: Base64In
    aad: Aad = b""


class SealResponse(ResponseModel):
    nonce: Base64Out
    ciphertext: Annotated[
        Base64Out, Field(description="Encrypted bytes followed by the 16-byte tag.")
    ]


class OpenRequest(RequestModel):
    key: Key
    nonce: Base64In
    ciphertext: Annotated[
        Base64In,
        checked(lambda ct: len(ct) >= crypto.AEAD_TAG_SIZE, "must hold at least the 16-byte tag"),
        Field(description="Encrypted bytes followed by the 16-byte tag."),
    ]
    aad: Aad = b""


class OpenResponse(ResponseModel):
    plaintext: Base64Out


@router.post("/{algorithm}/seal")
async def seal(algorithm: AlgorithmPath, body: SealRequest, runner: Runner) -> SealResponse:
    """Encrypt and authenticate; returns the nonce used (drawn from the OS CSPRNG when absent)."""
    nonce_size = crypto.AEAD_NONCE_SIZES[algorithm]
    if body.nonce is None:
        nonce = secrets.token_bytes(nonce_size)
    else:
        require_length("nonce", body.nonce, nonce_size, algorithm)
        nonce = body.nonce
    ciphertext = await runner(
        "seal",
        algorithm,
        len(body.plaintext) + len(body.aad),
        crypto.aead_seal,
        algorithm,
        body.key,
        nonce,
        body.plaintext,
        body.aad,
    )
    return SealResponse(nonce=nonce, ciphertext=ciphertext)


@router.post(
    "/{algorithm}/open",
    responses={400: {"description": f"Tag mismatch: {PROBLEM_TYPE_BASE}authentication-failed"}},
)
async def open_(algorithm: AlgorithmPath, body: OpenRequest, runner: Runner) -> OpenResponse:
    """Verify and decrypt; a tag mismatch is a 400 authentication-failed problem, no plaintext."""
    require_length("nonce", body.nonce, crypto.AEAD_NONCE_SIZES[algorithm], algorithm)
    plaintext = await runner(
        "open",
        algorithm,
        len(body.ciphertext) + len(body.aad),
        crypto.aead_open,
        algorithm,
        body.key,
        body.nonce,
        body.ciphertext,
        body.aad,
    )
    return OpenResponse(plaintext=plaintext)
