"""The OpenAPI document, completed: every status and content type a route can answer.

FastAPI documents a route's success response and a 422 in its own shape; the service
answers every error as application/problem+json, and the HTTP layer and the guard add
statuses of their own (401, 403, 408, 413, 415, 429, 431, 503). This fills them in from
what each route is (guarded or public, with a body or not, with path parameters or not),
names the bearer scheme and each operation's scope, resolves schema references that a
route's openapi_extra makes by name, and leaves HEAD (GET without a body) out, as is usual.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from typing import Any, Final

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from .auth import SCOPE_EXTENSION, Operation
from .errors import PROBLEM_MEDIA_TYPE, PROBLEM_TYPE_BASE

SCHEME: Final = "bearerToken"
_PROBLEM_REF: Final = {"$ref": "#/components/schemas/Problem"}

PROBLEM_SCHEMA: Final = {
    "type": "object",
    "title": "Problem",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "description": f"{PROBLEM_TYPE_BASE}<slug> or about:blank"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "request_id": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "errors": {
            "type": "array",
            "description": "Validation errors: where and what, never the value.",
            "items": {"type": "object"},
        },
    },
}

_DESCRIPTIONS: Final = {
    400: "Malformed JSON, base64 or HTTP; a failed AEAD open (.../authentication-failed)",
    401: "No bearer token, or one that is unknown, revoked or expired",
    403: "The token lacks this operation's scope",
    404: "No such resource (an unknown algorithm in the path)",
    408: "The request head or body did not arrive in time",
    413: "The body is over its limit (refused before it is read)",
    415: "A content type this route does not take",
    422: "Wrong lengths, unknown or missing fields, a body shape the schema cannot hold",
    429: "Rate limit exceeded; see Retry-After",
    431: "Too many or too large request headers",
    503: "Not ready, at the memory budget or with the audit log down; see Retry-After",
}
_RETRY_AFTER: Final = {
    "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}
}


def _problem_response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _DESCRIPTIONS[status],
        "content": {PROBLEM_MEDIA_TYPE: {"schema": dict(_PROBLEM_REF)}},
    }
    if status in (429, 503):
        response["headers"] = dict(_RETRY_AFTER)
    return response


def _statuses(guarded: bool, scoped: bool, has_params: bool, has_body: bool) -> list[int]:
    statuses = [408, 431, 503]
    if guarded:
        statuses += [401, 429]
        if scoped:
            statuses.append(403)
    if has_params:
        statuses.append(404)
    if has_body:
        statuses += [400, 413, 415, 422]
    return sorted(set(statuses))


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _resolve_named_models(document: dict[str, Any]) -> None:
    """A route's openapi_extra may name a model FastAPI never saw (a body it parses itself);
    find that model in the route's module and add its schema."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    prefix = "#/components/schemas/"
    for _ in range(8):  # added schemas may refer to more
        missing = {r[len(prefix) :] for r in _refs(document) if r.startswith(prefix)} - set(schemas)
        if not missing:
            return
        for name in missing:
            model = _find_model(name)
            if model is None:
                raise RuntimeError(
                    f"OpenAPI refers to {prefix}{name}, which no route module defines"
                )
            schema = model.model_json_schema(ref_template=prefix + "{model}")
            schemas.update(schema.pop("$defs", {}))
            schemas[name] = schema


def _find_model(name: str) -> type[BaseModel] | None:
    """The pydantic model called `name` in one of archcrypt's modules (the routes')."""
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("archcrypt.") and module is not None:
            candidate = getattr(module, name, None)
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                return candidate
    return None


def build_document(
    app: FastAPI, base: Callable[[], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """`base()` (FastAPI's document, or what the routes' own hook makes of it), completed."""
    security = app.state.archcrypt_security
    document = (
        copy.deepcopy(base())
        if base is not None
        else get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=app.description,
            routes=app.routes,
            tags=app.openapi_tags,
        )
    )
    components = document.setdefault("components", {})
    # a Problem schema the routes' own OpenAPI hook may have added wins; ours otherwise
    components.setdefault("schemas", {}).setdefault("Problem", PROBLEM_SCHEMA)
    components["securitySchemes"] = {
        SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `archcrypt tokens create`; each operation names the "
            "scope it needs in x-archcrypt-operation.",
        }
    }
    for path, item in document.get("paths", {}).items():
        item.pop("head", None)
        for method, operation in item.items():
            op = security.table.operations[(method.upper(), path)]
            guarded = not op.public
            operation[SCOPE_EXTENSION] = Operation.openapi_extra(op)[SCOPE_EXTENSION]
            if op.public:
                operation.pop(SCOPE_EXTENSION)
            else:
                operation["security"] = [{SCHEME: []}]
            responses = operation.setdefault("responses", {})
            has_params = "{" in path
            has_body = "requestBody" in operation
            for status in _statuses(guarded, op.scope is not None, has_params, has_body):
                existing = responses.get(str(status))
                problem = _problem_response(status)
                if existing is None:
                    responses[str(status)] = problem
                else:
                    # keep a route's own description (e.g. the 400 of a failed open)
                    existing["content"] = problem["content"]
                    if "headers" in problem:
                        existing["headers"] = problem["headers"]
    # FastAPI's own validation-error shapes are never sent: every 422 is a Problem.
    schemas = components["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    _resolve_named_models(document)
    return document


def complete_openapi(app: FastAPI, base: Callable[[], dict[str, Any]] | None = None) -> None:
    """Replace app.openapi with the completed document (built once, on first use)."""
    completed: dict[str, Any] | None = None

    def openapi() -> dict[str, Any]:
        nonlocal completed
        if completed is None:
            completed = build_document(app, base)
        app.openapi_schema = completed
        return completed

    app.openapi = openapi  # type: ignore[method-assign]
