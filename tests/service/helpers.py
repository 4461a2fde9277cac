"""Independent references and small HTTP utilities for the service tests.

Results are checked against pyca/cryptography, hmac and hashlib, never against archcrypt
itself. pyca has no XChaCha20-Poly1305, so HChaCha20 is written out here from
draft-irtf-cfrg-xchacha section 2.2 and checked against the draft's own vector.
"""

from __future__ import annotations

import base64
import http.client
import socket
import struct
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from prometheus_client.parser import text_string_to_metric_families

PROBLEM_BASE = "https://archcrypt.dev/problems/"


def b64(data: bytes | bytearray) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


# ---- XChaCha20-Poly1305 reference ----------------------------------------------------------


def _rotl32(value: int, count: int) -> int:
    return ((value << count) & 0xFFFFFFFF) | (value >> (32 - count))


def _quarter_round(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] = _rotl32(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] = _rotl32(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] = _rotl32(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] = _rotl32(s[b] ^ s[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """draft-irtf-cfrg-xchacha-03 section 2.2: 20 rounds, no feed-forward, words 0-3 and 12-15."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += struct.unpack("<8L", key) + struct.unpack("<4L", nonce16)
    for _ in range(10):
        _quarter_round(state, 0, 4, 8, 12)
        _quarter_round(state, 1, 5, 9, 13)
        _quarter_round(state, 2, 6, 10, 14)
        _quarter_round(state, 3, 7, 11, 15)
        _quarter_round(state, 0, 5, 10, 15)
        _quarter_round(state, 1, 6, 11, 12)
        _quarter_round(state, 2, 7, 8, 13)
        _quarter_round(state, 3, 4, 9, 14)
    return struct.pack("<8L", *state[0:4], *state[12:16])


def _xchacha_parts(key: bytes, nonce24: bytes) -> tuple[ChaCha20Poly1305, bytes]:
    return ChaCha20Poly1305(hchacha20(key, nonce24[:16])), b"\0\0\0\0" + nonce24[16:]


def reference_seal(algorithm: str, key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    if algorithm == "xchacha20-poly1305":
        aead, nonce = _xchacha_parts(key, nonce)
    else:
        aead = ChaCha20Poly1305(key)
    return aead.encrypt(nonce, plaintext, aad)


def reference_open(
    algorithm: str, key: bytes, nonce: bytes, ciphertext: bytes, aad: bytes
) -> bytes:
    if algorithm == "xchacha20-poly1305":
        aead, nonce = _xchacha_parts(key, nonce)
    else:
        aead = ChaCha20Poly1305(key)
    return aead.decrypt(nonce, ciphertext, aad)


# ---- problem+json --------------------------------------------------------------------------


def assert_problem(
    response: httpx.Response, status: int, slug: str | None = None
) -> dict[str, Any]:
    """An RFC 9457 problem with our members, and the request id in body and header agreeing."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert isinstance(body["title"], str)
    assert body["title"]
    assert isinstance(body["detail"], str)
    assert body["detail"]
    if slug is not None:
        assert body["type"] == PROBLEM_BASE + slug
    assert body["request_id"] == response.headers["x-request-id"]
    return body


# ---- raw HTTP, for what httpx will not send ------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_ready(
    process: subprocess.Popen[bytes], url: str, log: Path, timeout: float, what: str
) -> None:
    """Poll `url` until it answers 200; fail with the process's log if it exits first or
    does not get there within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail(f"{what} not ready after {timeout:g} s:\n{log.read_text()}")


def raw_post(
    port: int,
    path: str,
    headers: dict[str, str],
    chunks: Iterable[bytes] = (),
) -> tuple[int, dict[str, str], bytes]:
    """POST with hand-set headers; `chunks` go out in chunked encoding, without the final
    zero-length chunk, so the server answers while the body is still unfinished."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", path, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        for chunk in chunks:
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


# ---- Prometheus ----------------------------------------------------------------------------


def metric_value(text: str, sample_name: str, **labels: str) -> float:
    """Sum of the samples called `sample_name` whose labels include `labels` (0 when none)."""
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == sample_name and all(
                sample.labels.get(k) == v for k, v in labels.items()
            ):
                total += sample.value
    return total
