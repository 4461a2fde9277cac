"""Many SHA-2 digests in one request: the batch path of the native library (multi-buffer)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import Field

from .. import crypto
from ..config import Settings
from ..errors import CONTENT_TOO_LARGE, ProblemError
from ..middleware import set_body_limit
from .common import Base64In, Base64Out, RequestModel, ResponseModel
from .deps import JsonBodyRoute, ServiceState, runner_of, settings_of
from .hash import HashAlgorithm
from .wire import BatchLimits, count_items


def batch_body_limit(settings: Settings) -> int:
    """The largest JSON body the batch limits allow: every message at its base64 size
    (4 characters per 3 bytes, rounded up per message), its quotes and comma, and room
    for the envelope and whitespace."""
    n, total = settings.max_batch_messages, settings.max_batch_bytes
    return 4 * (total // 3 + n) + 8 * n + 1024


class BatchBodyRoute(JsonBodyRoute):
    """JSON only, under the batch's own body limit, set before the body is read."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            state: ServiceState = request.app.state.archcrypt
            set_body_limit(request.scope, batch_body_limit(state.settings))
            # Counted before FastAPI parses it (it reuses the body read here): a million
            # empty strings would otherwise cost seconds of Python objects first.
            count_items(await request.body(), BatchLimits.of(state.settings, fields_per_item=0))
            return await handler(request)

        return limited


router = APIRouter(prefix="/v1/hash", tags=["hash"], route_class=BatchBodyRoute)


class BatchRequest(RequestModel):
    messages: Annotated[
        list[Base64In],
        Field(description="The messages, each standard base64; ARCHCRYPT_MAX_BATCH_* bound them."),
    ]


class BatchResponse(ResponseModel):
    digests: Annotated[list[Base64Out], Field(description="One digest per message, in order.")]


@router.post("/{algorithm}/batch")
async def digest_batch(
    algorithm: Annotated[HashAlgorithm, Path()],
    body: BatchRequest,
    request: Request,
) -> BatchResponse:
    """Digests of many messages, hashed side by side (SHA-224/256 on a multi-lane row)."""
    runner = runner_of(request)
    settings = settings_of(request)
    count = len(body.messages)
    if count > settings.max_batch_messages:
        raise RequestValidationError(
            [
                {
                    "type": "too_long",
                    "loc": ("body", "messages"),
                    "msg": f"at most {settings.max_batch_messages} messages, got {count}",
                }
            ]
        )
    total = sum(len(m) for m in body.messages)
    if total > settings.max_batch_bytes:
        raise ProblemError(
            CONTENT_TOO_LARGE,
            f"the messages add up to {total} bytes; the batch limit is {settings.max_batch_bytes}",
        )
    digests = await runner(
        "hash_batch", algorithm, total, lambda: crypto.digest_many(algorithm, body.messages)
    )
    return BatchResponse(digests=digests)
