"""SHA-2 digests (FIPS 180-4), from a JSON body or from a raw body streamed as it arrives."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request, Response

from .. import crypto
from ..middleware import set_body_limit
from .common import Base64In, Base64Out, RequestModel, ResponseModel
from .deps import OperationRoute, runner_of, settings_of
from .docs import operation_docs
from .wire import b64encode, body_kind, json_response, parse_json, read_body

HashAlgorithm = Literal["sha224", "sha256", "sha384", "sha512"]

router = APIRouter(prefix="/v1/hash", tags=["hash"], route_class=OperationRoute)


class HashRequest(RequestModel):
    data: Base64In


class HashResponse(ResponseModel):
    digest: Base64Out


@router.post(
    "/{algorithm}",
    response_model=HashResponse,
    **operation_docs(
        HashRequest,
        body="Raw bytes, hashed chunk by chunk as they arrive (any size, up to "
        "ARCHCRYPT_MAX_STREAM_BYTES when set).",
        headers={},
        result=None,
    ),
)
async def digest(algorithm: Annotated[HashAlgorithm, Path()], request: Request) -> Response:
    """Digest of `data` (JSON, base64) or of the raw body (application/octet-stream, streamed)."""
    runner = runner_of(request)
    if body_kind(request) == "binary":
        # Streaming keeps memory flat, so the stream may be larger than a buffered body.
        set_body_limit(request.scope, settings_of(request).max_stream_bytes)
        result = await runner.stream("hash", algorithm, crypto.Hash(algorithm), request.stream())
    else:
        body = parse_json(HashRequest, await read_body(request))
        result = await runner(
            "hash", algorithm, len(body.data), lambda: crypto.digest(algorithm, body.data)
        )
    return json_response(b'{"digest":"%s"}' % b64encode(result))
