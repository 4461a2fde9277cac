"""MACs: Poly1305 (RFC 8439, one-time key) and HMAC-SHA-2 (RFC 2104, FIPS 198-1).

JSON (bytes as base64) or a raw application/octet-stream body, streamed into the
incremental API as it arrives, with the key (and the tag to verify) in Archcrypt-* headers;
both answer JSON. Each has a batch form.
"""

from __future__ import annotations

import hmac
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request, Response
from pydantic import Field

from .. import crypto
from ..middleware import set_body_limit
from .common import Base64In, Base64Out, Loc, RequestModel, ResponseModel, require_length
from .deps import OperationRoute, runner_of, settings_of
from .docs import ItemError, json_body_docs, operation_docs
from .wire import (
    b64encode,
    body_kind,
    header_bytes,
    json_response,
    parse_json,
    read_body,
    run_batch,
)

MacAlgorithm = Literal["poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"]
AlgorithmPath = Annotated[MacAlgorithm, Path()]

Key = Annotated[
    Base64In,
    Field(description="poly1305: a 32-byte one-time key, never used twice. HMAC: any length."),
]

router = APIRouter(prefix="/v1/mac", tags=["mac"], route_class=OperationRoute)


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


_KEY_HEADER = ("poly1305: 32-byte one-time key; HMAC: any length; base64.", True)
_MAC_HEADERS = {"Archcrypt-Key": _KEY_HEADER}
_VERIFY_HEADERS = {
    "Archcrypt-Key": _KEY_HEADER,
    "Archcrypt-Tag": ("The full tag to check, base64.", True),
}
_VALID = (b'{"valid":false}', b'{"valid":true}')


def _check_key(algorithm: MacAlgorithm, key: bytes, at: Loc) -> None:
    if algorithm == "poly1305":
        require_length(at, key, crypto.POLY1305_KEY_SIZE, algorithm)


def _context(algorithm: MacAlgorithm, key: bytes) -> crypto.Hmac | crypto.Poly1305:
    if algorithm == "poly1305":
        return crypto.Poly1305(key)
    return crypto.Hmac(algorithm, key)


def _check_verify(algorithm: MacAlgorithm, body: VerifyRequest, at: Loc) -> None:
    _check_key(algorithm, body.key, (*at, "key"))
    require_length((*at, "tag"), body.tag, crypto.TAG_SIZES[algorithm], algorithm)


def _mac_item(algorithm: MacAlgorithm, item: MacRequest) -> bytes:
    _check_key(algorithm, item.key, ("key",))
    return b'{"tag":"%s"}' % b64encode(crypto.mac(algorithm, item.key, item.data))


def _verify_item(algorithm: MacAlgorithm, item: VerifyRequest) -> bytes:
    _check_verify(algorithm, item, ())
    return _VALID[crypto.mac_verify(algorithm, item.key, item.data, item.tag)]


async def _streamed_tag(algorithm: MacAlgorithm, request: Request, key: bytes) -> bytes:
    # Streaming keeps memory flat, so the body may be as large as a streamed hash's.
    set_body_limit(request.scope, settings_of(request).max_stream_bytes)
    return await runner_of(request).stream(
        "mac", algorithm, _context(algorithm, key), request.stream()
    )


@router.post(
    "/{algorithm}",
    response_model=MacResponse,
    **operation_docs(MacRequest, body="The data, streamed.", headers=_MAC_HEADERS, result=None),
)
async def mac(algorithm: AlgorithmPath, request: Request) -> Response:
    """Compute the tag of `data` (JSON) or of the raw body (octet-stream, streamed)."""
    runner = runner_of(request)
    if body_kind(request) == "json":
        body = parse_json(MacRequest, await read_body(request))
        _check_key(algorithm, body.key, ("body", "key"))
        tag = await runner(
            "mac", algorithm, len(body.data), lambda: crypto.mac(algorithm, body.key, body.data)
        )
        return json_response(b'{"tag":"%s"}' % b64encode(tag))
    key = header_bytes(request, "Archcrypt-Key", required=True)
    _check_key(algorithm, key, ("header", "Archcrypt-Key"))
    tag = await _streamed_tag(algorithm, request, key)
    return json_response(b'{"tag":"%s"}' % b64encode(tag))


@router.post(
    "/{algorithm}/verify",
    response_model=VerifyResponse,
    **operation_docs(
        VerifyRequest, body="The data, streamed.", headers=_VERIFY_HEADERS, result=None
    ),
)
async def verify(algorithm: AlgorithmPath, request: Request) -> Response:
    """Check a tag in constant time. Truncated tags are refused (422), not compared."""
    runner = runner_of(request)
    if body_kind(request) == "json":
        body = parse_json(VerifyRequest, await read_body(request))
        _check_verify(algorithm, body, ("body",))
        valid = await runner(
            "verify",
            algorithm,
            len(body.data),
            lambda: crypto.mac_verify(algorithm, body.key, body.data, body.tag),
        )
        return json_response(_VALID[valid])
    key = header_bytes(request, "Archcrypt-Key", required=True)
    _check_key(algorithm, key, ("header", "Archcrypt-Key"))
    tag = header_bytes(request, "Archcrypt-Tag", required=True, size=crypto.TAG_SIZES[algorithm])
    computed = await _streamed_tag(algorithm, request, key)
    return json_response(_VALID[hmac.compare_digest(computed, tag)])


# ---- batches -------------------------------------------------------------------------------


class MacBatchRequest(RequestModel):
    items: Annotated[list[MacRequest], Field(description="At most ARCHCRYPT_MAX_BATCH_MESSAGES.")]


class MacBatchResponse(ResponseModel):
    items: Annotated[list[MacResponse | ItemError], Field(description="One per item, in order.")]


class VerifyBatchRequest(RequestModel):
    items: Annotated[
        list[VerifyRequest], Field(description="At most ARCHCRYPT_MAX_BATCH_MESSAGES.")
    ]


class VerifyBatchResponse(ResponseModel):
    items: Annotated[list[VerifyResponse | ItemError], Field(description="One per item, in order.")]


@router.post(
    "/{algorithm}/batch", response_model=MacBatchResponse, **json_body_docs(MacBatchRequest)
)
async def mac_batch(algorithm: AlgorithmPath, request: Request) -> Response:
    """Tags of many messages: each item answers as the single request would, or with
    {"error": <problem>}."""
    return await run_batch(
        request,
        runner_of(request),
        "mac_batch",
        algorithm,
        MacRequest,
        fields=2,
        size=lambda i: len(i.data),
        handle=lambda item: _mac_item(algorithm, item),
    )


@router.post(
    "/{algorithm}/verify/batch",
    response_model=VerifyBatchResponse,
    **json_body_docs(VerifyBatchRequest),
)
async def verify_batch(algorithm: AlgorithmPath, request: Request) -> Response:
    """Check many tags: each item answers {"valid": ...}, or {"error": <problem>}."""
    return await run_batch(
        request,
        runner_of(request),
        "verify_batch",
        algorithm,
        VerifyRequest,
        fields=3,
        size=lambda i: len(i.data),
        handle=lambda item: _verify_item(algorithm, item),
    )
