"""What /openapi.json says about routes that read their own bodies, and the problem schema.

Routes that take JSON or octet-stream parse the body themselves (once, from the raw bytes),
so FastAPI cannot see their request models; they declare them here, and create_app's
OpenAPI hook adds them to the components and describes every error as problem+json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from ..errors import PROBLEM_MEDIA_TYPE

_DOCUMENTED: Final[dict[str, type[BaseModel]]] = {}
BINARY_SCHEMA: Final = {"type": "string", "format": "binary"}


class ValidationIssue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    loc: list[str | int] = Field(description="Where: body, header or path, then the field.")
    type: str
    msg: str


class Problem(BaseModel):
    """RFC 9457 problem details, the body of every error."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str = Field(description="A URI naming the kind of problem.")
    title: str
    status: int
    detail: str
    instance: str | None = Field(default=None, description="The request path.")
    request_id: str | None = Field(default=None, description="Also in X-Request-ID.")
    errors: list[ValidationIssue] | None = Field(
        default=None, description="Validation problems (400 invalid-encoding, 422)."
    )


class ItemError(BaseModel):
    """A batch item that failed: the problem the single request would have answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    error: Problem


def schema_ref(model: type[BaseModel]) -> dict[str, str]:
    """A $ref to `model`, which the OpenAPI hook then adds to the components."""
    _DOCUMENTED[model.__name__] = model
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def documented_models() -> list[type[BaseModel]]:
    return [*_DOCUMENTED.values(), Problem, ItemError]


def operation_docs(
    model: type[BaseModel],
    *,
    body: str,
    headers: Mapping[str, tuple[str, bool]],
    result: str | None,
    result_headers: Mapping[str, str] | None = None,
    errors: Mapping[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """route keyword arguments for an operation that takes `model` as JSON or its data as
    an application/octet-stream body with `headers` (name -> (description, required));
    `result` describes the raw answer to a binary request (None: it answers JSON)."""
    parameters = [
        {
            "name": name,
            "in": "header",
            "required": False,
            "description": f"{description} Only with an application/octet-stream body"
            + ("; required there." if required else "."),
            "schema": {"type": "string", "contentEncoding": "base64"},
        }
        for name, (description, required) in headers.items()
    ]
    ok: dict[str, Any] = {}
    if result is not None:
        ok["content"] = {"application/octet-stream": {"schema": BINARY_SCHEMA}}
        ok["description"] = f"JSON for a JSON request; for an octet-stream request: {result}"
    if result_headers:
        ok["headers"] = {
            name: {"description": text, "schema": {"type": "string"}}
            for name, text in result_headers.items()
        }
    return {
        "openapi_extra": {
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": schema_ref(model)},
                    "application/octet-stream": {"schema": BINARY_SCHEMA, "description": body},
                },
            },
            "parameters": parameters,
        },
        "responses": ({200: ok} if ok else {}) | dict(errors or {}),
    }


def json_body_docs(model: type[BaseModel]) -> dict[str, Any]:
    """route keyword arguments for a JSON-only body parsed by the route itself."""
    return {
        "openapi_extra": {
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": schema_ref(model)}},
            }
        }
    }


_BODY_ERRORS: Final = {
    "400": "Malformed JSON or base64 (invalid-encoding)",
    "413": "Body over its limit, refused before it is read",
    "415": "A Content-Type the route does not take",
    "422": "Wrong lengths, missing or unknown fields (validation-failed)",
    "503": "The startup self-test has not passed",
}


def problem_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """The app's OpenAPI document with the declared request models in its components and
    every 4xx/5xx response described as what it is: application/problem+json."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in documented_models():
        document = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(document.pop("$defs", {}))
        components[model.__name__] = document
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    problem = {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            responses = operation.setdefault("responses", {})
            if operation.get("requestBody"):
                for status, text in _BODY_ERRORS.items():
                    responses.setdefault(status, {"description": text})
            for status, response in responses.items():
                if status[0] in "45":
                    response["content"] = problem
    return schema
