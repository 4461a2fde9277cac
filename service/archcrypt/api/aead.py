"""AEAD: ChaCha20-Poly1305 (RFC 8439) and XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha).

Each operation takes JSON (bytes as base64) or a raw application/octet-stream body with its
parameters in Archcrypt-* headers, and has a batch form.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request, Response
from pydantic import Field

from .. import crypto
from ..errors import PROBLEM_TYPE_BASE
from .common import (
    Base64In,
    Base64Out,
    Loc,
    RequestModel,
    ResponseModel,
    checked,
    exact_length,
    require_length,
)
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

AeadAlgorithm = Literal["chacha20-poly1305", "xchacha20-poly1305"]
AlgorithmPath = Annotated[
    AeadAlgorithm, Path(description="12-byte nonce, or 24-byte for xchacha20-poly1305.")
]

Key = Annotated[Base64In, exact_length(crypto.AEAD_KEY_SIZE), Field(description="32-byte key.")]
Aad = Annotated[Base64In, Field(description="Associated data: authenticated, not encrypted.")]
Sealed = Annotated[
    Base64In,
    checked(lambda ct: len(ct) >= crypto.AEAD_TAG_SIZE, "must hold at least the 16-byte tag"),
    Field(description="Encrypted bytes followed by the 16-byte tag."),
]

router = APIRouter(prefix="/v1/aead", tags=["aead"], route_class=OperationRoute)


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
    ciphertext: Sealed
    aad: Aad = b""


class OpenResponse(ResponseModel):
    plaintext: Base64Out


_TAG_MISMATCH = {400: {"description": f"Tag mismatch: {PROBLEM_TYPE_BASE}authentication-failed"}}
_SEAL_HEADERS = {
    "Archcrypt-Key": ("32-byte key, base64.", True),
    "Archcrypt-Nonce": ("Nonce, base64; absent: drawn and returned in Archcrypt-Nonce.", False),
    "Archcrypt-AAD": ("Associated data, base64.", False),
}
_OPEN_HEADERS = {
    "Archcrypt-Key": ("32-byte key, base64.", True),
    "Archcrypt-Nonce": ("The nonce the message was sealed with, base64.", True),
    "Archcrypt-AAD": ("Associated data, base64.", False),
}


def _nonce(algorithm: str, nonce: bytes | None, at: Loc) -> bytes:
    """The client's nonce, checked against the algorithm, or a fresh one from the OS CSPRNG."""
    size = crypto.AEAD_NONCE_SIZES[algorithm]
    if nonce is None:
        return secrets.token_bytes(size)
    require_length(at, nonce, size, algorithm)
    return nonce


def _sealed_json(nonce: bytes, ciphertext: bytes) -> bytes:
    return b'{"nonce":"%s","ciphertext":"%s"}' % (b64encode(nonce), b64encode(ciphertext))


def _seal_item(algorithm: str, item: SealRequest) -> bytes:
    nonce = _nonce(algorithm, item.nonce, ("nonce",))
    ciphertext = crypto.aead_seal(algorithm, item.key, nonce, item.plaintext, item.aad)
    return _sealed_json(nonce, ciphertext)


def _open_item(algorithm: str, item: OpenRequest) -> bytes:
    require_length(("nonce",), item.nonce, crypto.AEAD_NONCE_SIZES[algorithm], algorithm)
    plaintext = crypto.aead_open(algorithm, item.key, item.nonce, item.ciphertext, item.aad)
    return b'{"plaintext":"%s"}' % b64encode(plaintext)


@router.post(
    "/{algorithm}/seal",
    response_model=SealResponse,
    **operation_docs(
        SealRequest,
        body="The plaintext.",
        headers=_SEAL_HEADERS,
        result="ciphertext || 16-byte tag.",
        result_headers={"Archcrypt-Nonce": "Binary requests without a nonce: the one drawn."},
    ),
)
async def seal(algorithm: AlgorithmPath, request: Request) -> Response:
    """Encrypt and authenticate; returns the nonce used (drawn from the OS CSPRNG when absent)."""
    runner = runner_of(request)
    kind = body_kind(request)
    raw = await read_body(request)
    if kind == "json":
        body = parse_json(SealRequest, raw)
        nonce = _nonce(algorithm, body.nonce, ("body", "nonce"))
        ciphertext = await runner(
            "seal",
            algorithm,
            len(body.plaintext) + len(body.aad),
            lambda: crypto.aead_seal(algorithm, body.key, nonce, body.plaintext, body.aad),
        )
        return json_response(_sealed_json(nonce, ciphertext))
    key = header_bytes(request, "Archcrypt-Key", required=True, size=crypto.AEAD_KEY_SIZE)
    given = header_bytes(request, "Archcrypt-Nonce", required=False)
    aad = header_bytes(request, "Archcrypt-AAD", required=False) or b""
    nonce = _nonce(algorithm, given, ("header", "Archcrypt-Nonce"))
    ciphertext = await runner(
        "seal",
        algorithm,
        len(raw) + len(aad),
        lambda: crypto.aead_seal(algorithm, key, nonce, raw, aad),
    )
    drawn = {"Archcrypt-Nonce": b64encode(nonce).decode("ascii")} if given is None else None
    return octet_response(ciphertext, drawn)


@router.post(
    "/{algorithm}/open",
    response_model=OpenResponse,
    **operation_docs(
        OpenRequest,
        body="Ciphertext || 16-byte tag.",
        headers=_OPEN_HEADERS,
        result="the plaintext.",
        errors=_TAG_MISMATCH,
    ),
)
async def open_(algorithm: AlgorithmPath, request: Request) -> Response:
    """Verify and decrypt; a tag mismatch is a 400 authentication-failed problem, no plaintext."""
    runner = runner_of(request)
    kind = body_kind(request)
    raw = await read_body(request)
    if kind == "json":
        body = parse_json(OpenRequest, raw)
        require_length(("body", "nonce"), body.nonce, crypto.AEAD_NONCE_SIZES[algorithm], algorithm)
        plaintext = await runner(
            "open",
            algorithm,
            len(body.ciphertext) + len(body.aad),
            lambda: crypto.aead_open(algorithm, body.key, body.nonce, body.ciphertext, body.aad),
        )
        return json_response(b'{"plaintext":"%s"}' % b64encode(plaintext))
    key = header_bytes(request, "Archcrypt-Key", required=True, size=crypto.AEAD_KEY_SIZE)
    nonce = header_bytes(request, "Archcrypt-Nonce", required=True)
    aad = header_bytes(request, "Archcrypt-AAD", required=False) or b""
    require_length(
        ("header", "Archcrypt-Nonce"), nonce, crypto.AEAD_NONCE_SIZES[algorithm], algorithm
    )
    plaintext = await runner(
        "open",
        algorithm,
        len(raw) + len(aad),
        lambda: crypto.aead_open(algorithm, key, nonce, raw, aad),
    )
    return octet_response(plaintext)


# ---- batches -------------------------------------------------------------------------------


class SealBatchRequest(RequestModel):
    items: Annotated[list[SealRequest], Field(description="At most ARCHCRYPT_MAX_BATCH_MESSAGES.")]


class SealBatchResponse(ResponseModel):
    items: Annotated[list[SealResponse | ItemError], Field(description="One per item, in order.")]


class OpenBatchRequest(RequestModel):
    items: Annotated[list[OpenRequest], Field(description="At most ARCHCRYPT_MAX_BATCH_MESSAGES.")]


class OpenBatchResponse(ResponseModel):
    items: Annotated[list[OpenResponse | ItemError], Field(description="One per item, in order.")]


@router.post(
    "/{algorithm}/seal/batch", response_model=SealBatchResponse, **json_body_docs(SealBatchRequest)
)
async def seal_batch(algorithm: AlgorithmPath, request: Request) -> Response:
    """Seal many messages: each item answers as /seal would, or with {"error": <problem>}."""
    return await run_batch(
        request,
        runner_of(request),
        "seal_batch",
        algorithm,
        SealRequest,
        fields=4,
        size=lambda i: len(i.plaintext) + len(i.aad),
        handle=lambda item: _seal_item(algorithm, item),
    )


@router.post(
    "/{algorithm}/open/batch", response_model=OpenBatchResponse, **json_body_docs(OpenBatchRequest)
)
async def open_batch(algorithm: AlgorithmPath, request: Request) -> Response:
    """Open many messages: each item answers as /open would, or with {"error": <problem>}
    (a tag mismatch is that item's 400 authentication-failed problem)."""
    return await run_batch(
        request,
        runner_of(request),
        "open_batch",
        algorithm,
        OpenRequest,
        fields=4,
        size=lambda i: len(i.ciphertext) + len(i.aad),
        handle=lambda item: _open_item(algorithm, item),
    )
