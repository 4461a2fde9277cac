"""Error behaviour shared by every route: problem+json, status codes, body limits, request ids."""

from __future__ import annotations

import re

import httpx
import pytest

from .conftest import MAX_BODY_BYTES, Server
from .helpers import assert_problem, b64, raw_post

KEY = b64(bytes(32))
SEAL = "/v1/aead/chacha20-poly1305/seal"


# ---- 400: encoding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "QQ",  # padding missing
        "QQ=",  # padding short
        "QR==",  # non-zero bits after the last byte: not the canonical spelling of b"A"
        "QUI=QUI=",  # padding in the middle
        "QUJD\n",  # whitespace
        " QUJD",
        "QU JD",
        "-_-_",  # URL-safe alphabet
        "QUJD*",
        "QUJDé",
    ],
)
def test_bad_base64_is_400(client: httpx.Client, bad: str) -> None:
    response = client.post(SEAL, json={"key": KEY, "plaintext": bad})
    problem = assert_problem(response, 400, "invalid-encoding")
    assert problem["errors"][0]["loc"] == ["body", "plaintext"]
    assert problem["errors"][0]["type"] == "base64_invalid"


def test_bad_base64_in_a_key_is_not_echoed(client: httpx.Client) -> None:
    secret_ish = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0$"
    response = client.post(SEAL, json={"key": secret_ish, "plaintext": ""})
    assert_problem(response, 400, "invalid-encoding")
    assert "c2VjcmV0" not in response.text


def test_wrong_length_key_is_not_echoed(client: httpx.Client) -> None:
    key = b64(b"0123456789abcdef-secret")
    response = client.post(SEAL, json={"key": key, "plaintext": ""})
    assert_problem(response, 422, "validation-failed")
    assert key not in response.text
    assert "secret" not in response.text


@pytest.mark.parametrize("body", [b"{", b'{"key": ', b"not json", b"\xff\xfe"])
def test_malformed_json_is_400(client: httpx.Client, body: bytes) -> None:
    response = client.post(SEAL, content=body, headers={"content-type": "application/json"})
    assert_problem(response, 400, "invalid-encoding")


# ---- 404 / 405 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/v2/aead/chacha20-poly1305/seal",
        "/v1/aead/aes-256-gcm/seal",
        "/v1/mac/hmac-md5",
        "/nope",
    ],
)
def test_unknown_paths_are_404(client: httpx.Client, path: str) -> None:
    body = assert_problem(client.post(path, json={}), 404, "not-found")
    assert body["instance"] == path


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", SEAL), ("PUT", "/v1/hash/sha256"), ("DELETE", "/v1/mac/poly1305"), ("POST", "/livez")],
)
def test_wrong_method_is_405(client: httpx.Client, method: str, path: str) -> None:
    response = client.request(method, path)
    assert_problem(response, 405, "method-not-allowed")
    assert response.headers["allow"]


@pytest.mark.parametrize(
    ("path", "methods"),
    [("/v1/keys", {"GET", "HEAD", "POST"}), ("/v1/keys/k", {"DELETE", "GET", "HEAD", "PATCH"})],
)
def test_405_allows_every_method_of_the_path(
    client: httpx.Client, path: str, methods: set[str]
) -> None:
    """Each method of these paths is a route of its own; Allow names them all (RFC 9110
    section 15.5.6), not only the first route's (schemathesis' allow_header_conformance)."""
    response = client.request("OPTIONS", path)
    assert_problem(response, 405, "method-not-allowed")
    assert set(response.headers["allow"].split(", ")) == methods


# ---- 413 -------------------------------------------------------------------------------------


def test_declared_oversize_body_is_refused_before_it_is_sent(server: Server) -> None:
    # a terabyte announced, not a byte sent: the answer can only come from the header
    status, headers, body = raw_post(
        server.port, SEAL, {"Content-Type": "application/json", "Content-Length": str(10**12)}
    )
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert b"https://archcrypt.dev/problems/content-too-large" in body
    assert re.fullmatch(r"[0-9a-f]{32}", headers["x-request-id"])


def test_chunked_oversize_body_is_refused_once_it_passes_the_limit(server: Server) -> None:
    chunks = [b" " * 65536] * (MAX_BODY_BYTES // 65536) + [b" "]
    status, headers, body = raw_post(
        server.port,
        SEAL,
        {"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        chunks,
    )
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert b"content-too-large" in body


def test_body_just_under_the_limit_is_read(client: httpx.Client) -> None:
    # 3/4 of the limit as base64 plus the JSON around it stays under 1 MiB
    plaintext = bytes(MAX_BODY_BYTES * 3 // 4 - 1024)
    response = client.post(SEAL, json={"key": KEY, "plaintext": b64(plaintext)})
    assert response.status_code == 200, response.text


def test_oversize_body_through_httpx(client: httpx.Client) -> None:
    # a normal client with a normal (too large) body also gets the problem, not a reset
    response = client.post(
        SEAL, content=b" " * (MAX_BODY_BYTES + 1), headers={"content-type": "application/json"}
    )
    assert_problem(response, 413, "content-too-large")


# ---- 415 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [SEAL, "/v1/aead/xchacha20-poly1305/open", "/v1/mac/hmac-sha256", "/v1/ecb/camellia/encrypt"],
)
@pytest.mark.parametrize("content_type", ["text/plain", "multipart/form-data", None])
def test_routes_refuse_other_media_types(
    client: httpx.Client, path: str, content_type: str | None
) -> None:
    # httpx sends no Content-Type for raw content unless told to
    headers = {} if content_type is None else {"content-type": content_type}
    response = client.post(path, content=b'{"key": "", "data": ""}', headers=headers)
    assert_problem(response, 415, "unsupported-media-type")


@pytest.mark.parametrize("path", [SEAL, "/v1/hash/sha256"])
def test_media_type_is_judged_before_the_body_is_read(server: Server, path: str) -> None:
    status, headers, _ = raw_post(
        server.port, path, {"Content-Type": "text/plain", "Content-Length": str(10**12)}
    )
    assert status == 415
    assert headers["content-type"] == "application/problem+json"


# ---- 422 -------------------------------------------------------------------------------------


def test_unknown_field_is_422(client: httpx.Client) -> None:
    response = client.post(SEAL, json={"key": KEY, "plaintext": "", "counter": 1})
    problem = assert_problem(response, 422, "validation-failed")
    assert problem["errors"] == [
        {
            "loc": ["body", "counter"],
            "type": "extra_forbidden",
            "msg": "Extra inputs are not permitted",
        }
    ]


def test_missing_fields_are_422_and_all_listed(client: httpx.Client) -> None:
    problem = assert_problem(client.post(SEAL, json={}), 422, "validation-failed")
    assert sorted(tuple(error["loc"]) for error in problem["errors"]) == [
        ("body", "key"),
        ("body", "plaintext"),
    ]
    assert all(error["type"] == "missing" for error in problem["errors"])


@pytest.mark.parametrize(
    "body", [[], "text", 1, {"key": 5, "plaintext": ""}, {"key": None, "plaintext": ""}]
)
def test_wrong_json_types_are_422(client: httpx.Client, body: object) -> None:
    assert_problem(client.post(SEAL, json=body), 422, "validation-failed")


def test_validation_errors_carry_no_input(client: httpx.Client) -> None:
    problem = assert_problem(client.post(SEAL, json={"key": b64(bytes(7)), "plaintext": ""}), 422)
    for error in problem["errors"]:
        assert set(error) == {"loc", "type", "msg"}


# ---- X-Request-ID ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_id", ["abc-123", "0f8c2c1e-8b8a-4a53-9e1f-63b0d1f0a9b1", "trace.span:7/x+y=z@q_1"]
)
def test_sane_request_id_is_echoed(client: httpx.Client, request_id: str) -> None:
    headers = {"x-request-id": request_id}
    assert client.get("/livez", headers=headers).headers["x-request-id"] == request_id
    problem = assert_problem(client.get("/nope", headers=headers), 404)
    assert problem["request_id"] == request_id
    problem = assert_problem(client.post(SEAL, json={}, headers=headers), 422)
    assert problem["request_id"] == request_id


@pytest.mark.parametrize(
    "request_id", ["has space", "x" * 129, "semi;colon", 'quote"d', "<script>"]
)
def test_insane_request_id_is_replaced(client: httpx.Client, request_id: str) -> None:
    response = client.get("/livez", headers={"x-request-id": request_id})
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])


def test_request_id_is_generated_and_unique(client: httpx.Client) -> None:
    ids = {client.get("/livez").headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5
    assert all(re.fullmatch(r"[0-9a-f]{32}", request_id) for request_id in ids)


def test_request_id_on_every_kind_of_response(client: httpx.Client, server: Server) -> None:
    responses = [
        client.post(SEAL, json={"key": KEY, "plaintext": ""}),
        client.get("/metrics"),
        client.get("/readyz"),
        client.get("/openapi.json"),
        client.post(SEAL, content=b"x", headers={"content-type": "text/plain"}),
    ]
    for response in responses:
        assert response.headers.get("x-request-id"), response.request.url
