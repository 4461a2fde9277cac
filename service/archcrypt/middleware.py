"""Pure ASGI middleware: request ids and HTTP metrics, and the request body limit.

Pure ASGI rather than BaseHTTPMiddleware: no extra task per request and bodies pass
through as they arrive instead of being wrapped in another stream.
"""

from __future__ import annotations

import itertools
import os
import re
from time import perf_counter
from typing import Final

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .metrics import Metrics

REQUEST_ID_HEADER: Final = b"x-request-id"
REQUEST_ID_SCOPE_KEY: Final = "archcrypt.request_id"
BODY_LIMIT_SCOPE_KEY: Final = "archcrypt.body_limit"

# Echo only ids that are safe to put in a log line and a header: no spaces, no control
# characters, bounded length. Anything else is replaced rather than sanitised.
_SANE_REQUEST_ID: Final = re.compile(rb"[A-Za-z0-9._:/+=@-]{1,128}")

# The method label comes from a fixed set so a client cannot invent label values.
_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request_id_of(scope: Scope) -> str | None:
    """The id RequestIdMiddleware gave this request (None outside it)."""
    value = scope.get(REQUEST_ID_SCOPE_KEY)
    return value if isinstance(value, str) else None


def set_body_limit(scope: Scope, max_bytes: int) -> None:
    """Replace this request's body limit (0: unlimited); call it before the first read."""
    scope[BODY_LIMIT_SCOPE_KEY] = max_bytes


class ContentTooLarge(HTTPException):
    """The request body is over its limit.

    An HTTPException so that FastAPI's body parsing re-raises it untouched instead of
    turning it into a 400, and errors.py renders it as a 413 problem.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=f"request body exceeds the limit of {limit} bytes")


class RequestMiddleware:
    """Gives every request an id (the client's X-Request-ID when sane), returned as a
    header, and counts and times it by method, route template and status.

    One middleware with one send wrapper, not two: each layer of ASGI wrapping costs a small
    request a few percent. Other per-request concerns (auth, deadlines, audit) can be added
    as further pure ASGI middleware in create_app, or per operation in CryptoRunner.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        # Ids need to be unique and unguessable across instances, not secret: a random
        # 64-bit prefix per process and a counter, instead of a getrandom() call per request.
        self._prefix = os.urandom(8).hex()
        self._counter = itertools.count()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        start = perf_counter()
        request_id: bytes | None = None
        for name, value in scope["headers"]:
            if name == REQUEST_ID_HEADER:
                if _SANE_REQUEST_ID.fullmatch(value):
                    request_id = value
                break
        if request_id is None:
            request_id = b"%s%016x" % (self._prefix.encode("ascii"), next(self._counter))
        scope[REQUEST_ID_SCOPE_KEY] = request_id.decode("ascii")
        header = (REQUEST_ID_HEADER, request_id)
        # Stays 500 when the app raises before responding: ServerErrorMiddleware, outside
        # us, then sends the 500.
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                # Problem responses set it themselves (the 500 path bypasses this wrapper);
                # Starlette sends header names in lower case.
                if not any(name == REQUEST_ID_HEADER for name, _ in headers):
                    headers.append(header)
                    message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            method = scope["method"] if scope["method"] in _METHODS else "OTHER"
            # The router leaves the matched route (also on 405) in the scope: its template
            # is a bounded label, the raw path is not.
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.observe_request(method, route, status, perf_counter() - start)


class BodyLimitMiddleware:
    """Answers 413 for a body over the limit without reading (let alone buffering) it.

    The check runs on each receive(): a declared Content-Length over the limit fails the
    first read before any byte is taken, and a chunked body fails as soon as the running
    count passes the limit. Deciding at read time, not on arrival, lets a route that
    streams (the octet-stream hash) put its own limit in the scope before it reads.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        scope[BODY_LIMIT_SCOPE_KEY] = self.max_body_bytes
        declared = _content_length(scope)
        received = 0

        async def receive_limited() -> Message:
            nonlocal received
            limit: int = scope[BODY_LIMIT_SCOPE_KEY]
            if limit and declared is not None and declared > limit:
                raise ContentTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if limit and received > limit:
                    raise ContentTooLarge(limit)
            return message

        await self.app(scope, receive_limited, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server rejects these before we see them
    return None
