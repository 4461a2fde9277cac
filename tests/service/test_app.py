"""What the subprocess server cannot show: a 500, a failed self-test, and the pieces in isolation.

Apps here are served by uvicorn in a thread of the test process, so a test can add a
failing route or replace crypto.self_test before startup.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import get_args

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from pydantic_core import PydanticCustomError

from archcrypt import crypto
from archcrypt.api import aead, mac
from archcrypt.api.common import decode_base64
from archcrypt.api.hash import HashAlgorithm
from archcrypt.app import create_app
from archcrypt.config import Settings

from .helpers import assert_problem, b64, free_port, metric_value


@contextmanager
def serving(app: FastAPI) -> Iterator[httpx.Client]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=free_port(), log_level="critical", loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "server thread died"
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{config.port}", timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_unhandled_exception_is_a_500_problem_without_details() -> None:
    app = create_app(Settings())

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("internal secret: key=00112233")

    with serving(app) as client:
        # Starlette re-raises after sending the 500 and uvicorn then closes the
        # connection: ask for that up front so the next request opens a fresh one.
        response = client.get("/boom", headers={"x-request-id": "req-500", "connection": "close"})
        problem = assert_problem(response, 500, "internal-error")
        assert problem["request_id"] == "req-500"
        assert "secret" not in response.text
        assert "RuntimeError" not in response.text
        metrics = client.get("/metrics").text
        assert 'route="/boom",status="500"' in metrics


def test_failed_self_test_means_never_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    real = crypto.self_test
    monkeypatch.setattr(
        crypto, "self_test", lambda algorithm, *a: algorithm != "poly1305" and real(algorithm)
    )
    with serving(create_app(Settings())) as client:
        problem = assert_problem(client.get("/readyz"), 503, "not-ready")
        assert "poly1305" in problem["detail"]
        assert client.get("/livez").status_code == 200
        # a kernel that failed its known answers produces no output
        response = client.post("/v1/hash/sha256", json={"data": ""})
        assert_problem(response, 503, "not-ready")
        backends = client.get("/v1/backends").json()
        passed = {a["name"]: a["self_test_passed"] for a in backends["algorithms"]}
        assert passed["poly1305"] is False
        assert passed["sha256"] is True
        metrics = client.get("/metrics").text
        selected = {a["name"]: a["selected"] for a in backends["algorithms"]}
        assert metric_value(metrics, "archcrypt_selftest_ok", algorithm="poly1305") == 0
        assert (
            metric_value(
                metrics, "archcrypt_selftest_ok", algorithm="sha256", backend=selected["sha256"]
            )
            == 1
        )


def test_offload_threshold_zero_runs_everything_in_threads() -> None:
    # both paths give the same answers; here every call takes the worker thread
    settings = Settings(offload_threshold_bytes=0, benchmark_enabled=False)  # ready at once
    with serving(create_app(settings)) as client:
        response = client.post("/v1/hash/sha256", json={"data": b64(b"abc")})
        assert response.json()["digest"] == "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="


def test_null_route_only_when_enabled_and_never_in_the_schema() -> None:
    settings = Settings(benchmark_null_route=True, benchmark_enabled=False)
    with serving(create_app(settings)) as client:
        body = bytes(range(256)) * 300
        response = client.post(
            "/v1/bench/null", content=body, headers={"content-type": "application/octet-stream"}
        )
        assert response.status_code == 200
        assert response.content == body
        assert response.headers["content-type"] == "application/octet-stream"
        assert "/v1/bench/null" not in client.get("/openapi.json").json()["paths"]
    assert Settings().benchmark_null_route is False


def test_binary_seal_and_open_run_in_threads_too() -> None:
    # the octet-stream path through the worker thread: answers equal to pyca's
    from .helpers import reference_seal

    settings = Settings(offload_threshold_bytes=0, benchmark_enabled=False)
    key, nonce = bytes(range(32)), bytes(12)
    headers = {
        "content-type": "application/octet-stream",
        "archcrypt-key": b64(key),
        "archcrypt-nonce": b64(nonce),
    }
    with serving(create_app(settings)) as client:
        sealed = client.post("/v1/aead/chacha20-poly1305/seal", content=b"abc", headers=headers)
        assert sealed.content == reference_seal("chacha20-poly1305", key, nonce, b"abc", b"")
        opened = client.post(
            "/v1/aead/chacha20-poly1305/open", content=sealed.content, headers=headers
        )
        assert opened.content == b"abc"


def test_route_enums_match_the_facade() -> None:
    assert get_args(aead.AeadAlgorithm) == crypto.AEAD_ALGORITHMS
    assert get_args(mac.MacAlgorithm) == crypto.MAC_ALGORITHMS
    assert get_args(HashAlgorithm) == crypto.HASH_ALGORITHMS


@pytest.mark.parametrize(
    ("text", "value"),
    [("", b""), ("QQ==", b"A"), ("QUI=", b"AB"), ("QUJD", b"ABC"), ("+/+/", b"\xfb\xff\xbf")],
)
def test_base64_accepts_canonical(text: str, value: bytes) -> None:
    assert decode_base64(text) == value


@pytest.mark.parametrize("text", ["QR==", "QUJ=", "QQ", "QQ=", "Q===", "QUJD\r\n", "QUJD=", "-_8="])
def test_base64_rejects_the_rest(text: str) -> None:
    with pytest.raises(PydanticCustomError) as info:
        decode_base64(text)
    assert info.value.type == "base64_invalid"


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCHCRYPT_MAX_BODY_BYTES", "123")
    monkeypatch.setenv("ARCHCRYPT_ACCESS_LOG", "true")
    monkeypatch.setenv("ARCHCRYPT_FORCE", "chacha20=portable")  # the C library's, not ours
    settings = Settings()
    assert settings.max_body_bytes == 123
    assert settings.access_log is True
    assert settings.max_stream_bytes == 1 << 30  # the streamed hash is bounded by default
    assert settings.offload_threshold_bytes == 64 * 1024


def test_base64_canonical_check_agrees_with_the_standard_library_on_every_tail() -> None:
    # every padded final quantum: canonical exactly when the stdlib re-encodes it unchanged
    from itertools import product

    from archcrypt.api.wire import b64decode

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    tails = [a + b + "==" for a, b in product(alphabet, repeat=2)]
    tails += [a + b + c + "=" for a, b, c in product(alphabet[::3], alphabet, alphabet)]
    for tail in tails:
        canonical = base64.b64encode(base64.b64decode(tail)).decode() == tail
        try:
            accepted = b64decode("QUJD" + tail) == base64.b64decode("QUJD" + tail)
        except ValueError:
            accepted = False
        assert accepted == canonical, tail


def test_operation_routes_refuse_parameters_they_would_not_resolve() -> None:
    # an OperationRoute skips dependency solving, so a dependency must fail loudly at
    # definition time rather than never run
    from fastapi import APIRouter, Depends, Request, Response

    from archcrypt.api.deps import OperationRoute

    async def scope_check() -> None:
        raise AssertionError("never called")

    router = APIRouter(route_class=OperationRoute)
    with pytest.raises(TypeError, match="dependencies would not run"):

        @router.post("/x/{name}", dependencies=[Depends(scope_check)])
        async def guarded(name: str, request: Request) -> Response:
            return Response()

    with pytest.raises(TypeError, match="path parameters only"):

        @router.post("/y")
        async def with_query(limit: int, request: Request) -> Response:
            return Response()
