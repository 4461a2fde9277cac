"""POST /v1/hash/{algorithm}/batch: many base64 messages in, one digest each out, against
hashlib; the count and size limits (refused before the body is read); metrics."""

from __future__ import annotations

import hashlib
import os

import httpx
import pytest

from .conftest import LIMIT_BYTES, LIMIT_MESSAGES, Server
from .helpers import assert_problem, b64, metric_value, raw_post

ALGORITHMS = ("sha224", "sha256", "sha384", "sha512")
# Padding edges of SHA-256 (55/56/64) and SHA-512 (111/112/128); 100 KB moves the batch
# to the worker thread.
LENGTHS = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 100_000]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_batch_matches_hashlib(client: httpx.Client, algorithm: str) -> None:
    messages = [os.urandom(n) for n in LENGTHS] + [os.urandom(n) for n in reversed(LENGTHS)]
    response = client.post(
        f"/v1/hash/{algorithm}/batch", json={"messages": [b64(m) for m in messages]}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "digests": [b64(hashlib.new(algorithm, m).digest()) for m in messages]
    }


def test_fips_180_abc_in_a_batch(client: httpx.Client) -> None:
    abc = bytes.fromhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    empty = bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    response = client.post("/v1/hash/sha256/batch", json={"messages": [b64(b"abc"), ""]})
    assert response.json() == {"digests": [b64(abc), b64(empty)]}


def test_empty_batch(client: httpx.Client) -> None:
    response = client.post("/v1/hash/sha256/batch", json={"messages": []})
    assert response.status_code == 200, response.text
    assert response.json() == {"digests": []}


def test_bad_base64_in_one_message_is_400(client: httpx.Client) -> None:
    response = client.post("/v1/hash/sha256/batch", json={"messages": [b64(b"ok"), "QR=="]})
    assert_problem(response, 400, "invalid-encoding")


def test_unknown_field_and_unknown_algorithm(client: httpx.Client) -> None:
    response = client.post("/v1/hash/sha256/batch", json={"messages": [], "extra": 1})
    assert_problem(response, 422, "validation-failed")
    # an algorithm the path does not know is a resource that does not exist, as on /v1/hash
    response = client.post("/v1/hash/md5/batch", json={"messages": []})
    assert_problem(response, 404, "not-found")


def test_json_only(client: httpx.Client) -> None:
    response = client.post(
        "/v1/hash/sha256/batch",
        content=b"abc",
        headers={"content-type": "application/octet-stream"},
    )
    assert_problem(response, 415, "unsupported-media-type")


def test_at_the_limits_is_served(limited_client: httpx.Client) -> None:
    messages = [os.urandom(LIMIT_BYTES // LIMIT_MESSAGES) for _ in range(LIMIT_MESSAGES)]
    response = limited_client.post(
        "/v1/hash/sha256/batch", json={"messages": [b64(m) for m in messages]}
    )
    assert response.status_code == 200, response.text
    assert response.json()["digests"] == [b64(hashlib.sha256(m).digest()) for m in messages]


def test_too_many_messages_is_422(limited_client: httpx.Client) -> None:
    response = limited_client.post(
        "/v1/hash/sha256/batch", json={"messages": [""] * (LIMIT_MESSAGES + 1)}
    )
    body = assert_problem(response, 422, "validation-failed")
    assert str(LIMIT_MESSAGES) in str(body)


def test_too_many_bytes_is_413(limited_client: httpx.Client) -> None:
    # under the body limit (base64 slack) but one byte over the decoded total
    messages = [b64(bytes(LIMIT_BYTES - 1)), b64(b"xy")]
    response = limited_client.post("/v1/hash/sha256/batch", json={"messages": messages})
    assert_problem(response, 413, "content-too-large")


def test_oversize_body_is_refused_before_it_is_sent(limited: Server) -> None:
    # the batch limits allow about 6 KiB of JSON here; 1 MB is announced, nothing sent
    status, headers, body = raw_post(
        limited.port,
        "/v1/hash/sha256/batch",
        {"Content-Type": "application/json", "Content-Length": str(10**6)},
    )
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert b"content-too-large" in body


def test_batch_is_counted_in_the_operation_metrics(client: httpx.Client) -> None:
    def scrape() -> str:
        response = client.get("/metrics")
        assert response.status_code == 200
        return response.text

    before = scrape()
    messages = [os.urandom(100), os.urandom(200), os.urandom(700)]
    response = client.post("/v1/hash/sha384/batch", json={"messages": [b64(m) for m in messages]})
    assert response.status_code == 200, response.text
    after = scrape()

    def delta(name: str, **labels: str) -> float:
        return metric_value(after, name, **labels) - metric_value(before, name, **labels)

    labels = {"operation": "hash_batch", "algorithm": "sha384"}
    assert delta("archcrypt_operations_total", outcome="ok", **labels) == 1
    assert delta("archcrypt_processed_bytes_total", **labels) == 1000
    assert delta("archcrypt_operation_duration_seconds_count", **labels) == 1
    assert (
        delta(
            "archcrypt_http_requests_total",
            method="POST",
            route="/v1/hash/{algorithm}/batch",
            status="200",
        )
        == 1
    )
