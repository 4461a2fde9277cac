"""POST /v1/hash/{algorithm}: base64 JSON, a raw body with Content-Length, and a chunked stream."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator

import httpx
import pytest

from .conftest import STREAM_LIMIT_BYTES, Server
from .helpers import assert_problem, b64, raw_post

ALGORITHMS = ("sha224", "sha256", "sha384", "sha512")
OCTETS = {"content-type": "application/octet-stream"}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(
    "length",
    # SHA-256 padding edges at 55/56/64, SHA-512 at 111/112/128; 100 KB takes the worker thread
    [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 100_000],
)
def test_json_digest_matches_hashlib(client: httpx.Client, algorithm: str, length: int) -> None:
    data = os.urandom(length)
    response = client.post(f"/v1/hash/{algorithm}", json={"data": b64(data)})
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(hashlib.new(algorithm, data).digest())}


def test_fips_180_abc(client: httpx.Client) -> None:
    response = client.post("/v1/hash/sha256", json={"data": b64(b"abc")})
    expected = bytes.fromhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert response.json() == {"digest": b64(expected)}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("length", [0, 1, 4096, 300_000])
def test_octet_stream_with_content_length(
    client: httpx.Client, algorithm: str, length: int
) -> None:
    data = os.urandom(length)
    response = client.post(f"/v1/hash/{algorithm}", content=data, headers=OCTETS)
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(hashlib.new(algorithm, data).digest())}


def test_octet_stream_beyond_the_json_body_limit(client: httpx.Client) -> None:
    # the test server caps buffered bodies at 1 MiB; a stream has its own (here: no) limit
    data = os.urandom(3 << 20)
    response = client.post("/v1/hash/sha384", content=data, headers=OCTETS)
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(hashlib.sha384(data).digest())}


def test_chunked_64_mib_stream_matches_hashlib(client: httpx.Client) -> None:
    reference = hashlib.sha256()
    block = os.urandom(1 << 20)

    def body() -> Iterator[bytes]:
        # 64 different 1 MiB chunks, produced as they are sent: nothing holds 64 MiB
        for i in range(64):
            chunk = block[i:] + block[:i]
            reference.update(chunk)
            yield chunk

    response = client.post("/v1/hash/sha256", content=body(), headers=OCTETS)
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(reference.digest())}


def test_media_type_parameters_are_ignored(client: httpx.Client) -> None:
    response = client.post(
        "/v1/hash/sha256",
        content=b'{"data": "YWJj"}',
        headers={"content-type": "Application/JSON; charset=utf-8"},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(hashlib.sha256(b"abc").digest())}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_other_media_types_are_415(client: httpx.Client, content_type: str | None) -> None:
    # httpx sends no Content-Type for raw content unless told to
    headers = {} if content_type is None else {"content-type": content_type}
    response = client.post("/v1/hash/sha256", content=b"abc", headers=headers)
    assert_problem(response, 415, "unsupported-media-type")


def test_json_body_errors(client: httpx.Client) -> None:
    assert_problem(client.post("/v1/hash/sha256", json={}), 422, "validation-failed")
    assert_problem(
        client.post("/v1/hash/sha256", json={"data": "", "extra": 1}), 422, "validation-failed"
    )
    assert_problem(
        client.post("/v1/hash/sha256", content=b"", headers={"content-type": "application/json"}),
        422,
        "validation-failed",
    )
    assert_problem(
        client.post("/v1/hash/sha256", content=b"{", headers={"content-type": "application/json"}),
        400,
        "invalid-encoding",
    )
    assert_problem(client.post("/v1/hash/sha256", json={"data": "YWJj\n"}), 400, "invalid-encoding")


def test_unknown_hash_is_404(client: httpx.Client) -> None:
    for algorithm in ("md5", "sha1", "SHA256", "sha3-256"):
        response = client.post(f"/v1/hash/{algorithm}", json={"data": ""})
        assert_problem(response, 404, "not-found")


def test_stream_limit_by_content_length(stream_limited_server: Server) -> None:
    status, headers, body = raw_post(
        stream_limited_server.port,
        "/v1/hash/sha256",
        {"Content-Type": "application/octet-stream", "Content-Length": str(10**12)},
    )
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert b"content-too-large" in body


def test_stream_limit_by_counting(stream_limited_server: Server) -> None:
    # exactly the limit, then one more byte; the answer comes with the stream unfinished
    chunks = [b"\0" * 65536] * (STREAM_LIMIT_BYTES // 65536) + [b"\0"]
    status, headers, body = raw_post(
        stream_limited_server.port,
        "/v1/hash/sha256",
        {"Content-Type": "application/octet-stream", "Transfer-Encoding": "chunked"},
        chunks,
    )
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert b"content-too-large" in body


def test_stream_at_the_limit_is_accepted(stream_limited_server: Server) -> None:
    data = os.urandom(STREAM_LIMIT_BYTES)
    response = httpx.post(
        f"{stream_limited_server.base_url}/v1/hash/sha256", content=iter([data]), headers=OCTETS
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"digest": b64(hashlib.sha256(data).digest())}
