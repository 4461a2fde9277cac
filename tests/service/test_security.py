"""Issue 11 through a real uvicorn server: tokens and scopes, rate limits, deadlines and
head limits on both HTTP parsers, memory bounds for the worst bodies, TLS and mTLS, the
audit log, the refusal to serve unauthenticated beyond loopback, the response headers,
the OpenAPI document under schemathesis, and no secret in any log.

Every secret a test sends is recorded in SENT; the last test greps every log the servers
of this module wrote (their output and their audit files) for each of them.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from archcrypt.config import Settings

from ..drill import schema
from .helpers import assert_problem, b64, metric_value, reference_seal
from .security_helpers import (
    ALL_SCOPES,
    Pki,
    Running,
    archcrypt,
    create_token,
    peak_rss,
    probe,
    reset_peak_rss,
    running,
    tls_args,
    tls_context,
)

MiB = 1 << 20
SEAL = "/v1/aead/chacha20-poly1305/seal"
SENT: list[bytes] = []  # every secret sent: keys, plaintexts, nonces, tags, tokens
LOGS: list[Path] = []  # every log a server of this module wrote


def secret(data: bytes) -> bytes:
    SENT.append(data)
    return data


def secret_token(token: str) -> str:
    SENT.append(token.encode())
    return token


# ---- servers ----


class Tokens:
    def __init__(self, store: Path) -> None:
        self.store = store
        self.full = secret_token(create_token(store, "full", *ALL_SCOPES))
        self.hash_only = secret_token(create_token(store, "hash-only", "hash"))
        self.mac_only = secret_token(create_token(store, "mac-only", "mac", "mac:verify"))
        self.expired = secret_token(create_token(store, "expired", "hash", expires_in="1s"))
        self.revocable = secret_token(create_token(store, "revocable", "hash"))
        # named keys: one operation on one key, every operation on one key, metadata only
        self.billing_seal = secret_token(create_token(store, "billing-seal", "key:billing:seal"))
        self.billing_all = secret_token(create_token(store, "billing-all", "key:billing:*"))
        self.keys_reader = secret_token(create_token(store, "keys-reader", "keys:read"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("security")


@pytest.fixture(scope="module")
def tokens(workdir: Path) -> Tokens:
    return Tokens(workdir / "tokens.json")


SHORT_DEADLINES = {
    "ARCHCRYPT_HEADER_TIMEOUT_SECONDS": "1",
    "ARCHCRYPT_BODY_TIMEOUT_SECONDS": "1",
    "ARCHCRYPT_REQUEST_TIMEOUT_SECONDS": "3",
    "ARCHCRYPT_KEEP_ALIVE_TIMEOUT_SECONDS": "1",
}


def _secured(workdir: Path, tokens: Tokens, parser: str) -> Iterator[Running]:
    directory = workdir / f"secured-{parser}"
    audit = directory / "audit.log"
    LOGS.extend([directory / "server.log", audit])
    with running(
        directory,
        "--http",
        parser,
        "--tokens-file",
        str(tokens.store),
        ARCHCRYPT_AUDIT_LOG=str(audit),
        ARCHCRYPT_MAX_BODY_BYTES=str(MiB),
        **SHORT_DEADLINES,
    ) as server:
        yield server


@pytest.fixture(scope="module")
def secured(workdir: Path, tokens: Tokens) -> Iterator[Running]:
    yield from _secured(workdir, tokens, "httptools")


@pytest.fixture(scope="module")
def secured_h11(workdir: Path, tokens: Tokens) -> Iterator[Running]:
    yield from _secured(workdir, tokens, "h11")


@pytest.fixture(params=["httptools", "h11"])
def either(request: pytest.FixtureRequest) -> Running:
    name = "secured" if request.param == "httptools" else "secured_h11"
    server: Running = request.getfixturevalue(name)
    return server


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _seal_body() -> dict[str, str]:
    return {"key": b64(secret(os.urandom(32))), "plaintext": b64(secret(os.urandom(40)))}


# ---- 1. tokens and scopes ----


def test_no_token_is_401_problem(secured: Running) -> None:
    response = httpx.post(secured.base_url + SEAL, json=_seal_body())
    body = assert_problem(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "Bearer" in body["detail"]


@pytest.mark.parametrize("header", ["Bearer act_nonsense", "Basic Zm9vOmJhcg==", "Bearer"])
def test_bad_credentials_are_401(secured: Running, header: str) -> None:
    response = httpx.post(
        secured.base_url + SEAL, json=_seal_body(), headers={"Authorization": header}
    )
    assert_problem(response, 401, "unauthorized")


def test_expired_token_is_401(secured: Running, tokens: Tokens) -> None:
    time.sleep(1.1)  # created with a one-second lifetime
    response = httpx.post(
        secured.base_url + "/v1/hash/sha256", json={"data": "aGk="}, headers=_auth(tokens.expired)
    )
    assert_problem(response, 401, "unauthorized")
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_full_token_seals_and_the_answer_is_right(secured: Running, tokens: Tokens) -> None:
    key, plaintext, nonce = secret(os.urandom(32)), secret(b"attack at dawn"), os.urandom(12)
    SENT.append(nonce)
    response = httpx.post(
        secured.base_url + SEAL,
        json={"key": b64(key), "plaintext": b64(plaintext), "nonce": b64(nonce)},
        headers=_auth(tokens.full),
    )
    assert response.status_code == 200, response.text
    ciphertext = base64.b64decode(response.json()["ciphertext"])
    assert ciphertext == reference_seal("chacha20-poly1305", key, nonce, plaintext, b"")
    SENT.append(ciphertext[-16:])  # the tag


@pytest.mark.parametrize(
    ("path", "body", "needed"),
    [
        (SEAL, None, "aead:seal"),
        ("/v1/ecb/camellia/encrypt", {"key": b64(bytes(16)), "data": b64(bytes(16))}, "ecb"),
        ("/v1/mac/poly1305", {"key": b64(bytes(32)), "data": "aGk="}, "poly1305"),
    ],
)
def test_missing_scope_is_403_naming_it(
    secured: Running, tokens: Tokens, path: str, body: dict[str, str] | None, needed: str
) -> None:
    response = httpx.post(
        secured.base_url + path, json=body or _seal_body(), headers=_auth(tokens.mac_only)
    )
    problem = assert_problem(response, 403, "forbidden")
    assert needed in problem["detail"]
    assert f'scope="{needed}"' in response.headers["www-authenticate"]


def test_a_key_name_no_token_can_hold_is_refused_cleanly(secured: Running, tokens: Tokens) -> None:
    # a path value that is no key name (and no latin-1) still gets a 403 problem, not a 500
    url = secured.base_url + "/v1/keys/%F0%B2%82%AB%0F/seal"
    response = httpx.post(url, json={"plaintext": "aGk="}, headers=_auth(tokens.mac_only))
    assert_problem(response, 403, "forbidden")
    assert response.headers["www-authenticate"].endswith('error="insufficient_scope"')
    # a token with key:*:seal may seal with any key; that path names none: 404, not a 500
    response = httpx.post(url, json={"plaintext": "aGk="}, headers=_auth(tokens.full))
    assert_problem(response, 404, "not-found")


def _forbidden(response: httpx.Response, needed: str) -> None:
    problem = assert_problem(response, 403, "forbidden")
    assert needed in problem["detail"]
    assert f'scope="{needed}"' in response.headers["www-authenticate"]


def test_named_key_scopes_through_a_real_server(secured: Running, tokens: Tokens) -> None:
    """key:billing:seal seals with billing (JSON and binary), nothing else; key:billing:*
    does everything on billing and nothing on payroll; keys:read lists and shows but does
    not create or rotate; keys:admin does. Every refusal a 403 problem naming the scope."""
    url = secured.base_url
    for name in ("billing", "payroll"):
        made = httpx.post(url + "/v1/keys", json={"name": name}, headers=_auth(tokens.full))
        assert made.status_code == 201, made.text
    plaintext = secret(os.urandom(48))
    seal_body = {"plaintext": b64(plaintext)}
    sealed = httpx.post(
        url + "/v1/keys/billing/seal", json=seal_body, headers=_auth(tokens.billing_seal)
    )
    assert sealed.status_code == 200, sealed.text
    ciphertext = sealed.json()["ciphertext"]
    binary = httpx.post(
        url + "/v1/keys/billing/seal",
        content=secret(os.urandom(40)),
        headers={**_auth(tokens.billing_seal), "Content-Type": "application/octet-stream"},
    )
    assert binary.status_code == 200 and binary.headers["archcrypt-key-version"] == "1"
    batch = httpx.post(
        url + "/v1/keys/billing/seal/batch",
        json={"items": [seal_body]},
        headers=_auth(tokens.billing_seal),
    )
    assert batch.status_code == 200 and "ciphertext" in batch.json()["items"][0]

    seal_only = _auth(tokens.billing_seal)
    _forbidden(httpx.post(url + "/v1/keys/payroll/seal", json=seal_body, headers=seal_only),
               "key:payroll:seal")  # fmt: skip
    opened = httpx.post(
        url + "/v1/keys/billing/open", json={"ciphertext": ciphertext}, headers=seal_only
    )
    _forbidden(opened, "key:billing:open")
    assert b64(plaintext) not in opened.text
    _forbidden(
        httpx.post(url + "/v1/keys/billing/open/batch", json={"items": []}, headers=seal_only),
        "key:billing:open",
    )
    _forbidden(httpx.post(url + "/v1/keys/billing/datakey", headers=seal_only),
               "key:billing:datakey")  # fmt: skip
    _forbidden(httpx.get(url + "/v1/keys", headers=seal_only), "keys:read")
    _forbidden(httpx.post(url + "/v1/keys/billing/rotate", headers=seal_only), "keys:admin")

    every_op = _auth(tokens.billing_all)
    back = httpx.post(url + "/v1/keys/billing/open", json={"ciphertext": ciphertext},
                      headers=every_op)  # fmt: skip
    assert back.status_code == 200 and back.json()["plaintext"] == b64(plaintext)
    _forbidden(httpx.post(url + "/v1/keys/payroll/seal", json=seal_body, headers=every_op),
               "key:payroll:seal")  # fmt: skip
    _forbidden(httpx.get(url + "/v1/keys/billing", headers=every_op), "keys:read")

    reader = _auth(tokens.keys_reader)
    listed = httpx.get(url + "/v1/keys", headers=reader)
    assert listed.status_code == 200
    assert {"billing", "payroll"} <= {k["name"] for k in listed.json()["keys"]}
    assert httpx.get(url + "/v1/keys/billing", headers=reader).json()["primary_version"] == 1
    _forbidden(httpx.post(url + "/v1/keys", json={"name": "reader-made"}, headers=reader),
               "keys:admin")  # fmt: skip
    _forbidden(httpx.post(url + "/v1/keys/billing/rotate", headers=reader), "keys:admin")
    _forbidden(httpx.patch(url + "/v1/keys/billing", json={"deletion_allowed": True},
                           headers=reader), "keys:admin")  # fmt: skip
    _forbidden(httpx.delete(url + "/v1/keys/billing", headers=reader), "keys:admin")
    _forbidden(httpx.post(url + "/v1/keys/billing/seal", json=seal_body, headers=reader),
               "key:billing:seal")  # fmt: skip
    assert_problem(httpx.get(url + "/v1/keys/nobody-made-this", headers=reader), 404)

    rotated = httpx.post(url + "/v1/keys/billing/rotate", headers=_auth(tokens.full))
    assert rotated.status_code == 200 and rotated.json()["primary_version"] == 2
    assert httpx.get(url + "/v1/keys/billing", headers=reader).json()["primary_version"] == 2


def test_hmac_needs_mac_but_raw_poly1305_its_own_scope(secured: Running, tokens: Tokens) -> None:
    key = b64(secret(os.urandom(32)))
    ok = httpx.post(
        secured.base_url + "/v1/mac/hmac-sha256",
        json={"key": key, "data": "aGk="},
        headers=_auth(tokens.mac_only),
    )
    assert ok.status_code == 200, ok.text
    full = httpx.post(
        secured.base_url + "/v1/mac/poly1305",
        json={"key": key, "data": "aGk="},
        headers=_auth(tokens.full),
    )
    assert full.status_code == 200, full.text


def test_probes_and_metrics_need_no_token_backends_does(secured: Running, tokens: Tokens) -> None:
    for path in ("/livez", "/readyz", "/metrics", "/openapi.json", "/docs"):
        assert httpx.get(secured.base_url + path).status_code == 200, path
    assert_problem(httpx.get(secured.base_url + "/v1/backends"), 401)
    backends = httpx.get(secured.base_url + "/v1/backends", headers=_auth(tokens.hash_only))
    assert backends.is_success
    assert backends.json()["auth"]["mode"] == "tokens"
    assert backends.json()["auth"]["warning"] is None


def test_unknown_paths_need_a_token_too(secured: Running, tokens: Tokens) -> None:
    # no route enumeration without credentials
    assert_problem(httpx.get(secured.base_url + "/v1/nothing"), 401)
    assert_problem(httpx.get(secured.base_url + "/v1/nothing", headers=_auth(tokens.full)), 404)


def test_revoked_token_stops_working_within_seconds(secured: Running, tokens: Tokens) -> None:
    url = secured.base_url + "/v1/hash/sha256"
    assert httpx.post(url, json={"data": "aGk="}, headers=_auth(tokens.revocable)).is_success
    done = archcrypt("tokens", "revoke", "--file", str(tokens.store), "revocable")
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        response = httpx.post(url, json={"data": "aGk="}, headers=_auth(tokens.revocable))
        if response.status_code == 401:
            break
        time.sleep(0.1)
    assert_problem(response, 401)
    assert httpx.post(url, json={"data": "aGk="}, headers=_auth(tokens.hash_only)).is_success


def test_token_list_shows_no_token_or_hash(tokens: Tokens) -> None:
    done = archcrypt("tokens", "list", "--json", "--file", str(tokens.store))
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert {t["name"] for t in listed} >= {"full", "hash-only"}
    assert all("sha256" not in t for t in listed)
    assert tokens.full not in done.stdout
    stored = tokens.store.read_text()
    assert tokens.full not in stored  # only its hash is kept
    assert oct(tokens.store.stat().st_mode & 0o777) == "0o600"


# ---- 2. deadlines and head limits, on both parsers ----


def test_idle_connection_is_closed_by_the_head_deadline(either: Running) -> None:
    seconds, answer = probe(either.port, b"")
    assert answer == b""
    assert 0.8 <= seconds <= 3.0


def test_half_sent_head_is_answered_408_and_closed(either: Running) -> None:
    seconds, answer = probe(either.port, b"POST /v1/hash/sha256 HTTP/1.1\r\nHost: x\r\nX-A: b")
    assert 0.8 <= seconds <= 3.0
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"application/problem+json" in answer
    assert b"request-timeout" in answer


def test_stalled_body_is_answered_408_and_closed(either: Running, tokens: Tokens) -> None:
    head = (
        b"POST /v1/hash/sha256 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + tokens.full.encode() + b"\r\nContent-Length: 100\r\n\r\n"
    )
    seconds, answer = probe(either.port, head + b'{"data":')
    assert 0.8 <= seconds <= 3.0
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"No body bytes arrived" in answer


def test_trickled_body_meets_the_request_deadline(either: Running, tokens: Tokens) -> None:
    # a byte every 0.5 s never trips the 1 s body deadline, but the 3 s request deadline holds
    head = (
        b"POST /v1/hash/sha256 HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
        b"Authorization: Bearer " + tokens.full.encode() + b"\r\nContent-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", either.port), timeout=10) as sock:
        sock.sendall(head)
        start = time.monotonic()
        answer = b""
        sock.settimeout(0.5)
        while time.monotonic() - start < 8:
            try:
                sock.sendall(b"x")
            except OSError:
                break
            try:
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
            except TimeoutError:
                pass
        seconds = time.monotonic() - start
    assert 2.5 <= seconds <= 5.0
    assert answer.startswith(b"HTTP/1.1 408 ")


def _read_answer(sock: socket.socket) -> bytes:
    """One HTTP/1.1 answer with a Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")).split(
            b":"
        )[1]
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    return head + b"\r\n\r\n" + body


def test_body_after_an_early_answer_is_no_head(either: Running, tokens: Tokens) -> None:
    """An answer sent before the body is read (415 here) leaves the rest of that body to
    drain on a keep-alive connection: those bytes are body, not the next request's head, so
    they neither count against the head limit (431) nor hide the next request."""
    body = b"x" * (256 * 1024)  # far over the 16 KiB head limit
    head = (
        b"POST /v1/aead/chacha20-poly1305/seal HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: text/plain\r\nAuthorization: Bearer " + tokens.full.encode() + b"\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    with socket.create_connection(("127.0.0.1", either.port), timeout=10) as sock:
        sock.sendall(head)
        first = _read_answer(sock)  # answered from the head alone
        assert first.startswith(b"HTTP/1.1 415 "), first[:200]
        sock.sendall(body)
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        second = _read_answer(sock)
    assert second.startswith(b"HTTP/1.1 200 "), second[:300]


def test_too_many_headers_is_431(either: Running) -> None:
    fields = b"".join(b"X-%d: a\r\n" % i for i in range(150))
    _, answer = probe(either.port, b"GET /livez HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert b"application/problem+json" in answer


@pytest.mark.parametrize("size", [20_000, 32 * MiB])
def test_oversized_head_is_431(either: Running, size: int) -> None:
    payload = b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
    try:
        _, answer = probe(either.port, payload)
    except (BrokenPipeError, ConnectionResetError):
        answer = b"HTTP/1.1 431 (closed while sending)"
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_malformed_http_is_a_problem(either: Running) -> None:
    _, answer = probe(either.port, b"NOT HTTP AT ALL\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head
    problem = json.loads(body)
    assert problem["status"] == 400
    assert problem["type"].endswith("/bad-request")


def test_default_deadlines_and_limits() -> None:
    defaults = Settings()
    # idle and half-sent heads closed within 20 s, a stalled body within 30 s
    assert defaults.keep_alive_timeout_seconds <= 20
    assert defaults.header_timeout_seconds <= 20
    assert defaults.body_timeout_seconds <= 30
    assert defaults.request_timeout_seconds == 300
    assert defaults.max_header_count == 100
    assert defaults.max_header_bytes == 16 * 1024
    assert defaults.max_stream_bytes == 1 << 30  # the streamed hash has a default limit
    assert defaults.max_json_body_bytes == 16 << 20
    assert defaults.rate_limit_per_second == 0  # off until configured
    assert defaults.auth == "auto"


# ---- 7. the rest of the surface ----


def test_no_slash_redirect(secured: Running, tokens: Tokens) -> None:
    response = httpx.post(
        secured.base_url + "/v1/hash/sha256/",
        json={"data": "aGk="},
        headers={**_auth(tokens.full), "Host": "evil.example"},
    )
    assert_problem(response, 404)
    assert "location" not in response.headers


def test_security_headers_on_api_responses(secured: Running, tokens: Tokens) -> None:
    answers = [
        httpx.post(secured.base_url + SEAL, json=_seal_body(), headers=_auth(tokens.full)),
        httpx.post(secured.base_url + SEAL, json=_seal_body()),  # 401
        httpx.post(secured.base_url + SEAL, json={}, headers=_auth(tokens.full)),  # 422
        httpx.get(secured.base_url + "/nothing", headers=_auth(tokens.full)),  # 404
        httpx.get(secured.base_url + "/livez"),
    ]
    for response in answers:
        assert response.headers["cache-control"] == "no-store", response.request.url
        assert response.headers["x-content-type-options"] == "nosniff"


def test_head_on_get_routes(secured: Running, tokens: Tokens) -> None:
    for path, headers in (("/livez", {}), ("/v1/backends", _auth(tokens.full))):
        response = httpx.head(secured.base_url + path, headers=headers)
        assert response.status_code == 200, path
        assert response.content == b""
        assert response.headers["content-type"] == "application/json"


def test_docs_load_nothing_from_elsewhere(secured: Running) -> None:
    page = httpx.get(secured.base_url + "/docs")
    assert page.status_code == 200
    assert "http://" not in page.text and "https://" not in page.text.replace(
        "https://archcrypt.dev", ""
    )
    script = httpx.get(secured.base_url + "/docs/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert len(script.content) > 100_000


def test_openapi_declares_bearer_scopes_and_problems(secured: Running) -> None:
    document = httpx.get(secured.base_url + "/openapi.json").json()
    seal = document["paths"]["/v1/aead/{algorithm}/seal"]["post"]
    assert seal["security"] == [{"bearerToken": []}]
    assert seal["x-archcrypt-operation"]["scope"] == "aead:seal"
    for status in ("400", "401", "403", "413", "415", "422", "429", "503"):
        assert "application/problem+json" in seal["responses"][status]["content"], status
    assert "security" not in document["paths"]["/livez"]["get"]


def test_schemathesis_conformance_finds_nothing(secured: Running, tokens: Tokens) -> None:
    """Every schemathesis check and phase against a server with auth on, a few examples per
    operation (tests/drill/schema.py; `make drill` runs at least 500): no 5xx, no status,
    content type, header or body the document does not declare, no Allow header short of
    the path's methods, auth never ignored. The two checks that judge the request schemas'
    precision are counted only (see schema.py)."""
    result = schema.run(
        secured.base_url, tokens.full, secured.log.parent / "schemathesis", examples=10, timeout=600
    )
    assert result.ok, (result.failures, result.errors, result.output[-6000:])
    assert result.operations >= 30, result.output[-3000:]


# ---- 5. rate limits ----


def test_rate_limit_is_429_with_retry_after_and_counted(workdir: Path, tokens: Tokens) -> None:
    directory = workdir / "limited"
    LOGS.append(directory / "server.log")
    with running(
        directory,
        "--tokens-file",
        str(tokens.store),
        ARCHCRYPT_RATE_LIMIT_PER_SECOND="0.5",
        ARCHCRYPT_RATE_LIMIT_BURST="2",
        ARCHCRYPT_MAX_CONNECTIONS="6",
    ) as server:
        url = server.base_url + "/v1/hash/sha256"
        codes = [
            httpx.post(url, json={"data": "aGk="}, headers=_auth(tokens.hash_only))
            for _ in range(3)
        ]
        assert [r.status_code for r in codes[:2]] == [200, 200]
        problem = assert_problem(codes[2], 429, "rate-limited")
        assert "0.5 requests/s" in problem["detail"]
        assert 1 <= int(codes[2].headers["retry-after"]) <= 2
        # another token has its own bucket
        assert httpx.post(url, json={"data": "aGk="}, headers=_auth(tokens.full)).is_success
        text = httpx.get(server.base_url + "/metrics").text
        assert metric_value(text, "archcrypt_requests_refused_total", reason="rate_limited") == 1
        # the connection limit: six idle connections held, the seventh is answered 503
        held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(6)]
        try:
            time.sleep(0.3)
            _, answer = probe(server.port, b"")
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:80]
            assert b"application/problem+json" in answer and b"retry-after: 1" in answer
        finally:
            for sock in held:
                sock.close()


def test_client_address_rate_limit_where_no_token_is_needed(workdir: Path) -> None:
    """Auth off (open on loopback): one bucket per client address, 429 problem with
    Retry-After, counted; another address has its own bucket; probes are never limited."""
    directory = workdir / "client-limited"
    LOGS.append(directory / "server.log")
    with running(
        directory,
        ARCHCRYPT_CLIENT_RATE_LIMIT_PER_SECOND="0.5",
        ARCHCRYPT_CLIENT_RATE_LIMIT_BURST="2",
    ) as server:
        url = server.base_url + "/v1/hash/sha256"
        codes = [httpx.post(url, json={"data": "aGk="}) for _ in range(3)]
        assert [r.status_code for r in codes[:2]] == [200, 200]
        problem = assert_problem(codes[2], 429, "rate-limited")
        assert "0.5 requests/s" in problem["detail"]
        assert 1 <= int(codes[2].headers["retry-after"]) <= 2
        assert httpx.get(server.base_url + "/livez").status_code == 200
        # the same loopback server from another loopback address: a bucket of its own
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(transport=transport) as other:
            assert other.post(url, json={"data": "aGk="}).status_code == 200
        assert_problem(httpx.post(url, json={"data": "aGk="}), 429, "rate-limited")
        text = httpx.get(server.base_url + "/metrics").text
        assert metric_value(text, "archcrypt_requests_refused_total", reason="rate_limited") == 2


# ---- 1. memory, for the worst bodies ----

BODY_LIMIT = 16 * MiB  # the default body limit
JSON_LIMIT = 16 * MiB  # the default JSON body limit
ALLOWED_PEAK = 128 * MiB


@pytest.fixture(scope="module")
def roomy(workdir: Path) -> Iterator[Running]:
    """Defaults (16 MiB bodies, 256 MiB budget), open on loopback."""
    directory = workdir / "roomy"
    LOGS.append(directory / "server.log")
    with running(directory, ARCHCRYPT_AUDIT_LOG=str(directory / "audit.log")) as server:
        LOGS.append(directory / "audit.log")
        # warm up what a first request allocates once (imports, pools)
        httpx.post(server.base_url + "/v1/hash/sha256", json={"data": "aGk="})
        yield server


def _max_seal() -> bytes:
    plaintext = secret(os.urandom((JSON_LIMIT - 200) * 3 // 4))
    body = json.dumps({"key": b64(secret(os.urandom(32))), "plaintext": b64(plaintext)})
    assert JSON_LIMIT - 1024 < len(body) <= JSON_LIMIT
    return body.encode()


@pytest.mark.parametrize("size", [JSON_LIMIT, BODY_LIMIT + MiB])
def test_junk_body_of_empty_objects_costs_little(roomy: Running, size: int) -> None:
    junk = b'{"data":"aGVsbG8=","x":[' + b"{}," * ((size - 40) // 3) + b"{}]}"
    assert size - 16 <= len(junk) <= size
    pid = roomy.process.pid
    reset_peak_rss(pid)
    before = peak_rss(pid)
    response = httpx.post(
        roomy.base_url + "/v1/hash/sha256",
        content=junk,
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    if size > BODY_LIMIT:
        assert_problem(response, 413, "content-too-large")  # by its Content-Length, unread
    else:
        assert_problem(response, 422, "validation-failed")  # by its shape, as it arrived
    grown = peak_rss(pid) - before
    assert grown <= ALLOWED_PEAK, f"peak RSS grew {grown / MiB:.0f} MiB"
    assert grown <= 40 * MiB  # refused as it arrived, not parsed: about the body's own size


def test_max_size_seal_raises_peak_rss_by_at_most_128_mib(roomy: Running) -> None:
    body = _max_seal()
    pid = roomy.process.pid
    reset_peak_rss(pid)
    before = peak_rss(pid)
    response = httpx.post(
        roomy.base_url + SEAL,
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 200, response.text[:300]
    grown = peak_rss(pid) - before
    assert grown <= ALLOWED_PEAK, f"peak RSS grew {grown / MiB:.0f} MiB"


def _rss_growth(server: Running, send: Callable[[], httpx.Response]) -> int:
    pid = server.process.pid
    reset_peak_rss(pid)
    before = peak_rss(pid)
    response = send()
    assert response.status_code == 200, response.text[:300]
    return peak_rss(pid) - before


def test_max_size_binary_seal_raises_peak_rss_by_at_most_128_mib(roomy: Running) -> None:
    plaintext = secret(os.urandom(BODY_LIMIT))  # the binary body limit, exactly
    headers = {
        "Content-Type": "application/octet-stream",
        "Archcrypt-Key": b64(secret(os.urandom(32))),
        "Archcrypt-Nonce": b64(os.urandom(12)),
    }
    grown = _rss_growth(
        roomy,
        lambda: httpx.post(roomy.base_url + SEAL, content=plaintext, headers=headers, timeout=60),
    )
    assert grown <= ALLOWED_PEAK, f"peak RSS grew {grown / MiB:.0f} MiB"


def test_batch_at_its_limits_raises_peak_rss_by_at_most_128_mib(roomy: Running) -> None:
    """ARCHCRYPT_MAX_BATCH_MESSAGES items of ARCHCRYPT_MAX_BATCH_BYTES in all (the defaults)."""
    defaults = Settings()
    each = defaults.max_batch_bytes // defaults.max_batch_messages
    made = httpx.post(roomy.base_url + "/v1/keys", json={"name": "rss-batch"})
    assert made.status_code == 201, made.text
    plaintext = b64(secret(os.urandom(each - 1)))
    items = [{"plaintext": plaintext, "aad": "YQ=="}] * defaults.max_batch_messages
    body = json.dumps({"items": items}).encode()
    grown = _rss_growth(
        roomy,
        lambda: httpx.post(
            roomy.base_url + "/v1/keys/rss-batch/seal/batch",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=60,
        ),
    )
    assert grown <= ALLOWED_PEAK, f"peak RSS grew {grown / MiB:.0f} MiB"


def test_concurrent_max_size_seals_get_200_or_503_within_the_budget(roomy: Running) -> None:
    body = _max_seal()
    pid = roomy.process.pid
    reset_peak_rss(pid)
    before = peak_rss(pid)
    answers: list[httpx.Response] = []

    def one() -> None:
        with httpx.Client(timeout=120) as http:
            answers.append(
                http.post(
                    roomy.base_url + SEAL,
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
            )

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(r.status_code for r in answers)
    assert len(statuses) == 8 and set(statuses) <= {200, 503}, statuses
    assert 200 in statuses
    for refused in (r for r in answers if r.status_code == 503):
        assert_problem(refused, 503, "overloaded")
        assert refused.headers["retry-after"] == "1"
    grown = peak_rss(pid) - before
    # the budget (256 MiB of estimated cost) and a margin for what it does not count
    assert grown <= 256 * MiB, f"peak RSS grew {grown / MiB:.0f} MiB"
    text = httpx.get(roomy.base_url + "/metrics").text
    assert metric_value(text, "archcrypt_memory_budget_in_use_bytes") == 0
    assert metric_value(text, "archcrypt_memory_budget_capacity_bytes") == 256 * MiB


# ---- 4. TLS and mTLS ----


@pytest.fixture(scope="module")
def pki(workdir: Path) -> Pki:
    directory = workdir / "pki"
    directory.mkdir()
    return Pki(directory)


def test_tls_serves_https_only_and_bounds_the_handshake(workdir: Path, pki: Pki) -> None:
    directory = workdir / "tls"
    LOGS.append(directory / "server.log")
    context = tls_context(pki)
    with running(
        directory,
        *tls_args(pki),
        scheme="https",
        ready_client={"verify": context},
        ARCHCRYPT_HEADER_TIMEOUT_SECONDS="1",
    ) as server:
        response = httpx.post(
            server.base_url + "/v1/hash/sha256", json={"data": "aGk="}, verify=context
        )
        assert response.status_code == 200
        assert response.url.scheme == "https"
        with pytest.raises(httpx.TransportError):  # plain HTTP on the TLS port
            httpx.get(f"http://127.0.0.1:{server.port}/livez", timeout=3)
        # connect and never say hello: the head deadline covers the handshake
        seconds, answer = probe(server.port, b"")
        assert answer == b""
        assert seconds <= 3.0


def test_mtls_takes_only_clients_of_its_ca(workdir: Path, pki: Pki) -> None:
    directory = workdir / "mtls"
    LOGS.append(directory / "server.log")
    good = tls_context(pki, pki.client_cert, pki.client_key)
    with running(
        directory, *tls_args(pki, client_ca=True), scheme="https", ready_client={"verify": good}
    ) as server:
        url = server.base_url + "/v1/hash/sha256"
        assert httpx.post(url, json={"data": "aGk="}, verify=good).status_code == 200
        for context in (tls_context(pki), tls_context(pki, pki.rogue_cert, pki.rogue_key)):
            with pytest.raises((httpx.TransportError, ssl.SSLError)):
                httpx.post(url, json={"data": "aGk="}, verify=context, timeout=5)


# ---- 3. refusal to serve unauthenticated beyond loopback ----


def test_refuses_to_listen_beyond_loopback_without_tokens() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "archcrypt", "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("ARCHCRYPT_")},
    )
    assert done.returncode != 0
    assert "refusing to listen on 0.0.0.0 without authentication" in done.stderr
    assert "ARCHCRYPT_TOKENS_FILE" in done.stderr
    assert "Uvicorn running" not in done.stdout + done.stderr


def test_auth_disabled_is_loud(workdir: Path) -> None:
    directory = workdir / "disabled"
    LOGS.append(directory / "server.log")
    with running(directory, ARCHCRYPT_AUTH="disabled") as server:
        assert httpx.post(server.base_url + SEAL, json=_seal_body()).status_code == 200
        auth = httpx.get(server.base_url + "/v1/backends").json()["auth"]
    assert auth["mode"] == "disabled"
    assert "AUTHENTICATION DISABLED" in auth["warning"]
    assert "AUTHENTICATION DISABLED" in (directory / "server.log").read_text()


# ---- 6. the audit log ----


def test_audit_lines_say_who_did_what_and_nothing_secret(secured: Running, tokens: Tokens) -> None:
    marker = "audit-" + os.urandom(8).hex()
    response = httpx.post(
        secured.base_url + "/v1/mac/hmac-sha512",
        json={"key": b64(secret(os.urandom(64))), "data": b64(secret(b"payroll " * 100))},
        headers={**_auth(tokens.mac_only), "X-Request-ID": marker},
    )
    assert response.status_code == 200
    SENT.append(base64.b64decode(response.json()["tag"]))
    audit = secured.log.parent / "audit.log"
    time.sleep(0.2)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    mine = [line for line in lines if line["request_id"] == marker]
    assert len(mine) == 1
    entry = mine[0]
    assert entry["operation"] == "mac"
    assert entry["algorithm"] == "hmac-sha512"
    assert entry["token"] == "mac-only"
    assert entry["outcome"] == "ok" and entry["status"] == 200
    assert entry["client"] == "127.0.0.1"
    assert entry["request_bytes"] > 800
    assert set(entry) <= {
        "time", "request_id", "operation", "route", "outcome", "status", "token", "client",
        "request_bytes", "duration_ms", "algorithm", "key", "key_version", "items",
        "response_bytes",
    }  # fmt: skip
    # a wrong tag is audited as such, not as bad input
    marker = "audit-" + os.urandom(8).hex()
    key, nonce = secret(os.urandom(32)), os.urandom(12)
    forged = httpx.post(
        secured.base_url + "/v1/aead/chacha20-poly1305/open",
        json={"key": b64(key), "nonce": b64(nonce), "ciphertext": b64(bytes(32))},
        headers={**_auth(tokens.full), "X-Request-ID": marker},
    )
    assert_problem(forged, 400, "authentication-failed")
    time.sleep(0.2)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    (failed,) = [line for line in lines if line["request_id"] == marker]
    assert (failed["operation"], failed["outcome"]) == ("aead.open", "auth_failed")
    # refusals are audited too
    marks = {"unauthenticated": {}, "forbidden": _auth(tokens.mac_only)}
    for outcome, headers in marks.items():
        httpx.post(
            secured.base_url + SEAL,
            json=_seal_body(),
            headers={**headers, "X-Request-ID": f"{marker}-{outcome}"},
        )
    time.sleep(0.2)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    by_id = {line["request_id"]: line for line in lines}
    assert by_id[f"{marker}-unauthenticated"]["outcome"] == "unauthenticated"
    assert by_id[f"{marker}-unauthenticated"]["token"] is None
    assert by_id[f"{marker}-forbidden"]["outcome"] == "forbidden"
    assert by_id[f"{marker}-forbidden"]["token"] == "mac-only"


def _audit_line(server: Running, marker: str) -> dict[str, object]:
    time.sleep(0.2)
    text = (server.log.parent / "audit.log").read_text()
    (line,) = [
        entry for entry in map(json.loads, text.splitlines()) if entry["request_id"] == marker
    ]
    return dict(line)


def test_named_key_audit_lines_name_the_key_and_version(secured: Running, tokens: Tokens) -> None:
    url, full = secured.base_url, _auth(tokens.full)
    for name, key_type in (("audited-aead", "xchacha20-poly1305"), ("audited-mac", "hmac-sha256")):
        made = httpx.post(url + "/v1/keys", json={"name": name, "type": key_type}, headers=full)
        assert made.status_code == 201, made.text
        assert httpx.post(url + f"/v1/keys/{name}/rotate", headers=full).status_code == 200
    marker = "audit-" + os.urandom(8).hex()
    sealed = httpx.post(
        url + "/v1/keys/audited-aead/seal",
        json={"plaintext": b64(secret(os.urandom(32)))},
        headers={**full, "X-Request-ID": marker},
    )
    assert sealed.status_code == 200
    line = _audit_line(secured, marker)
    assert (line["operation"], line["key"]) == ("keys.seal", "audited-aead")
    assert line["key_version"] == 2
    assert line["outcome"] == "ok" and line["token"] == "full"

    data = b64(secret(os.urandom(24)))
    tag = httpx.post(url + "/v1/keys/audited-mac/mac", json={"data": data}, headers=full)
    marker = "audit-" + os.urandom(8).hex()
    verified = httpx.post(
        url + "/v1/keys/audited-mac/verify",
        json={"data": data, "tag": tag.json()["tag"]},
        headers={**full, "X-Request-ID": marker},
    )
    assert verified.json() == {"valid": True}
    line = _audit_line(secured, marker)
    assert (line["operation"], line["key"]) == ("keys.verify", "audited-mac")
    assert line["key_version"] == 2
    assert line["outcome"] == "ok"
    # a tampered ciphertext: audited as a failed authentication, with the key
    marker = "audit-" + os.urandom(8).hex()
    text = sealed.json()["ciphertext"]
    forged = httpx.post(
        url + "/v1/keys/audited-aead/open",
        json={"ciphertext": text[:-6] + ("A" if text[-6] != "A" else "B") + text[-5:]},
        headers={**full, "X-Request-ID": marker},
    )
    assert_problem(forged, 400, "authentication-failed")
    line = _audit_line(secured, marker)
    assert (line["key"], line["outcome"]) == ("audited-aead", "auth_failed")


def test_audit_fail_closed_refuses_operations(workdir: Path) -> None:
    directory = workdir / "fail-closed"
    LOGS.append(directory / "server.log")
    with running(
        directory, ARCHCRYPT_AUDIT_LOG="/dev/full", ARCHCRYPT_AUDIT_FAIL_CLOSED="true"
    ) as server:
        response = httpx.post(server.base_url + SEAL, json=_seal_body())
        assert_problem(response, 503, "audit-unavailable")
        assert "ciphertext" not in response.text
        again = httpx.post(server.base_url + SEAL, json=_seal_body())
        assert_problem(again, 503, "audit-unavailable")
        assert httpx.get(server.base_url + "/livez").status_code == 200


# ---- last: no secret in any log ----


def test_no_secret_in_any_log() -> None:
    assert len(SENT) > 20
    logs = [path for path in LOGS if path.exists()]
    assert len(logs) >= 8
    text = b"\n".join(path.read_bytes() for path in logs)
    assert b'"operation"' in text  # the audit lines are there to be searched
    for value in SENT:
        forms = {value, base64.b64encode(value), value.hex().encode()}
        if len(value) > 48:
            forms |= {base64.b64encode(value[:48]), value[:48]}
        for form in forms:
            if len(form) >= 8:
                assert form not in text, f"a secret ({len(value)} bytes) appears in a log"
