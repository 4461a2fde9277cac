"""RFC 9457 problem details (application/problem+json) for every error the service returns.

Each problem carries type, title, status, detail, instance (the request path) and
request_id. Bodies, keys and other inputs never appear in a problem or in a log line:
validation errors are reported by location and message only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Match

from . import crypto
from .audit import audit_record
from .middleware import request_id_of

logger = logging.getLogger("archcrypt")

PROBLEM_TYPE_BASE: Final = "https://archcrypt.dev/problems/"
PROBLEM_MEDIA_TYPE: Final = "application/problem+json"

# Error type of a base64 string that is not canonical standard base64 (see api/common.py);
# with JSON syntax errors it makes a 400 rather than a 422.
BASE64_ERROR_TYPE: Final = "base64_invalid"
_ENCODING_ERROR_TYPES: Final = frozenset({"json_invalid", BASE64_ERROR_TYPE})


@dataclass(frozen=True)
class ProblemType:
    type: str
    title: str
    status: int


def _problem(slug: str, title: str, status: int) -> ProblemType:
    return ProblemType(PROBLEM_TYPE_BASE + slug, title, status)


BAD_REQUEST: Final = _problem("bad-request", "Bad request", 400)
INVALID_ENCODING: Final = _problem("invalid-encoding", "Malformed JSON or base64", 400)
AUTHENTICATION_FAILED: Final = _problem("authentication-failed", "Authentication failed", 400)
NOT_FOUND: Final = _problem("not-found", "Not found", 404)
METHOD_NOT_ALLOWED: Final = _problem("method-not-allowed", "Method not allowed", 405)
CONTENT_TOO_LARGE: Final = _problem("content-too-large", "Content too large", 413)
UNSUPPORTED_MEDIA_TYPE: Final = _problem("unsupported-media-type", "Unsupported media type", 415)
VALIDATION_FAILED: Final = _problem("validation-failed", "Invalid request", 422)
INTERNAL_ERROR: Final = _problem("internal-error", "Internal server error", 500)
NOT_READY: Final = _problem("not-ready", "Not ready", 503)
UNAUTHORIZED: Final = _problem("unauthorized", "Authentication required", 401)
FORBIDDEN: Final = _problem("forbidden", "Insufficient scope", 403)
REQUEST_TIMEOUT: Final = _problem("request-timeout", "Request timeout", 408)
TOO_MANY_REQUESTS: Final = _problem("rate-limited", "Too many requests", 429)
HEADERS_TOO_LARGE: Final = _problem(
    "request-header-fields-too-large", "Request header fields too large", 431
)
OVERLOADED: Final = _problem("overloaded", "Service overloaded", 503)
AUDIT_UNAVAILABLE: Final = _problem("audit-unavailable", "Audit log unavailable", 503)

# Every API response: nothing that carries a key or a plaintext is kept by a cache, and no
# browser second-guesses a content type.
SECURITY_HEADERS: Final = (
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
)

# Plain HTTPExceptions (Starlette's 404/405, the body limit's 413) are typed by status.
_BY_STATUS: Final = {
    p.status: p
    for p in (
        BAD_REQUEST,
        NOT_FOUND,
        METHOD_NOT_ALLOWED,
        CONTENT_TOO_LARGE,
        UNSUPPORTED_MEDIA_TYPE,
        VALIDATION_FAILED,
        INTERNAL_ERROR,
        NOT_READY,
        UNAUTHORIZED,
        FORBIDDEN,
        REQUEST_TIMEOUT,
        TOO_MANY_REQUESTS,
        HEADERS_TOO_LARGE,
    )
}


class ProblemError(HTTPException):
    """Raise to answer with a problem of the given type."""

    def __init__(
        self, problem: ProblemType, detail: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(problem.status, detail, headers=dict(headers) if headers else None)
        self.problem = problem


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem_document(
    problem: ProblemType, detail: str, instance: str | None, request_id: str | None
) -> dict[str, Any]:
    """The members every problem carries (also written by the HTTP layer, server.py)."""
    return {
        "type": problem.type,
        "title": problem.title,
        "status": problem.status,
        "detail": detail,
        "instance": instance,
        "request_id": request_id,
    }


def problem_response(
    request: Request,
    problem: ProblemType,
    detail: str,
    *,
    extensions: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ProblemResponse:
    request_id = request_id_of(request.scope)
    body = problem_document(problem, detail, request.url.path, request_id)
    if extensions:
        body.update(extensions)
    out_headers = dict(headers) if headers else {}
    out_headers.update((k.decode(), v.decode()) for k, v in SECURITY_HEADERS)
    if request_id is not None:
        # The 500 path is sent from outside RequestMiddleware, so set the header here too.
        out_headers["X-Request-ID"] = request_id
    return ProblemResponse(body, status_code=problem.status, headers=out_headers)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if isinstance(exc, ProblemError):
        return problem_response(request, exc.problem, exc.detail, headers=exc.headers)
    problem = _BY_STATUS.get(exc.status_code)
    if problem is None:
        phrase = HTTPStatus(exc.status_code).phrase
        problem = ProblemType("about:blank", phrase, exc.status_code)
    detail = exc.detail
    if exc.status_code == 404:
        detail = "No resource at this path."
    elif exc.status_code == 405:
        allowed = _allowed_methods(request) or (exc.headers or {}).get("Allow", "")
        detail = f"{request.method} is not allowed here; allowed: {allowed}."
        return problem_response(
            request, problem, detail, headers={**(exc.headers or {}), "Allow": allowed}
        )
    return problem_response(request, problem, detail, headers=exc.headers)


_METHODS: Final = ("DELETE", "GET", "PATCH", "POST", "PUT")


def _allowed_methods(request: Request) -> str:
    """Every method some route takes at this path. Starlette's 405 names only the first
    route whose path matched (GET /v1/keys and POST /v1/keys are two routes), and RFC 9110
    section 15.5.6 asks for the resource's whole set; each method is asked of the routes as
    routing would ask it (BaseRoute.matches), so included routers answer for their own."""
    routes = getattr(request.app, "routes", ())
    allowed = {
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    }
    if "GET" in allowed:
        allowed.add("HEAD")  # answered as GET without a body (guard.py)
    return ", ".join(sorted(allowed))


async def _validation_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    # Only where and what: pydantic's "input" and "ctx" may hold a key or a plaintext.
    errors = [
        {"loc": list(error.get("loc", ())), "type": error.get("type"), "msg": error.get("msg")}
        for error in exc.errors()
    ]
    path_errors = [error for error in errors if error["loc"][:1] == ["path"]]
    if path_errors:
        # /v1/hash/md5: a path naming no algorithm names no resource; its body is moot.
        problem, errors = NOT_FOUND, path_errors
    elif any(error["type"] in _ENCODING_ERROR_TYPES for error in errors):
        problem = INVALID_ENCODING
    else:
        problem = VALIDATION_FAILED
    detail = "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in errors
    )
    return problem_response(request, problem, detail, extensions={"errors": errors})


async def _authentication_failed(request: Request, exc: Exception) -> Response:
    record = audit_record(request.scope)
    if record is not None:
        record.outcome = "auth_failed"  # a 400, but not the client's syntax: a wrong tag
    return problem_response(
        request,
        AUTHENTICATION_FAILED,
        "The tag does not match the key, nonce, ciphertext and associated data; "
        "no plaintext is released.",
    )


async def _invalid_input(request: Request, exc: Exception) -> Response:
    # The facade's messages name lengths and limits, never values.
    return problem_response(request, VALIDATION_FAILED, str(exc))


async def _client_disconnect(request: Request, exc: Exception) -> Response:
    # Nobody is left to read this; answering keeps a routine event out of the error log.
    return problem_response(
        request, BAD_REQUEST, "The client disconnected before the body was complete."
    )


async def _unhandled(request: Request, exc: Exception) -> Response:
    # Starlette re-raises after this handler, so the server logs the traceback; this line
    # ties it to the request id the client saw. The exception text stays out of the response.
    logger.error(
        "unhandled %s in %s %s (request_id=%s)",
        type(exc).__name__,
        request.method,
        request.url.path,
        request_id_of(request.scope),
    )
    return problem_response(
        request,
        INTERNAL_ERROR,
        "The server failed to handle this request; quote the request_id when reporting it.",
    )


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http_exception)
    app.add_exception_handler(RequestValidationError, _validation_exception)
    app.add_exception_handler(crypto.AuthenticationError, _authentication_failed)
    app.add_exception_handler(crypto.InvalidInputError, _invalid_input)
    app.add_exception_handler(ClientDisconnect, _client_disconnect)
    app.add_exception_handler(Exception, _unhandled)
