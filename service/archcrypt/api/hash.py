"""SHA-2 digests (FIPS 180-4), from a JSON body or from a raw body streamed as it arrives."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from .. import crypto
from ..errors import UNSUPPORTED_MEDIA_TYPE, ProblemError
from ..middleware import set_body_limit
from .common import Base64In, Base64Out, RequestModel, ResponseModel
from .deps import Runner, State, is_json, media_type

HashAlgorithm = Literal["sha224", "sha256", "sha384", "sha512"]

router = APIRouter(prefix="/v1/hash", tags=["hash"])


class HashRequest(RequestModel):
    data: Base64In


class HashResponse(ResponseModel):
    digest: Base64Out


_REQUEST_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/HashRequest"}},
            "application/octet-stream": {
                "schema": {"type": "string", "format": "binary"},
                "description": "Raw bytes, hashed chunk by chunk as they arrive (any size, "
                "up to ARCHCRYPT_MAX_STREAM_BYTES when set).",
            },
        },
    }
}


@router.post("/{algorithm}", openapi_extra=_REQUEST_BODY)
async def digest(
    algorithm: Annotated[HashAlgorithm, Path()], request: Request, state: State, runner: Runner
) -> HashResponse:
    """Digest of `data` (JSON, base64) or of the raw body (application/octet-stream, streamed)."""
    media = media_type(request)
    if media == "application/octet-stream":
        # Streaming keeps memory flat, so the stream may be larger than a buffered body.
        set_body_limit(request.scope, state.settings.max_stream_bytes)
        return HashResponse(digest=await runner.hash_stream(algorithm, request.stream()))
    if not is_json(media):
        raise ProblemError(
            UNSUPPORTED_MEDIA_TYPE, "This route takes application/json or application/octet-stream."
        )
    # The body is parsed here, not by FastAPI, because one route accepts two media types.
    raw = await request.body()
    if not raw:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required"}]
        )
    try:
        body = HashRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        ) from None
    result = await runner("hash", algorithm, len(body.data), crypto.digest, algorithm, body.data)
    return HashResponse(digest=result)
