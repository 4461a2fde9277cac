"""POST /v1/mac/{algorithm} and .../verify against pyca's Poly1305 and the hmac module."""

from __future__ import annotations

import hmac
import os

import httpx
import pytest
from cryptography.hazmat.primitives.poly1305 import Poly1305

from .helpers import assert_problem, b64

HMACS = ("hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")
TAG_SIZES = {
    "poly1305": 16,
    "hmac-sha224": 28,
    "hmac-sha256": 32,
    "hmac-sha384": 48,
    "hmac-sha512": 64,
}


def reference_tag(algorithm: str, key: bytes, data: bytes) -> bytes:
    if algorithm == "poly1305":
        return Poly1305.generate_tag(key, data)
    return hmac.digest(key, data, algorithm.removeprefix("hmac-"))


# RFC 8439 section 2.5.2
def test_poly1305_rfc8439_vector(client: httpx.Client) -> None:
    key = bytes.fromhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
    response = client.post(
        "/v1/mac/poly1305",
        json={"key": b64(key), "data": b64(b"Cryptographic Forum Research Group")},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"tag": b64(bytes.fromhex("a8061dc1305136c6c22b8baf0c0127a9"))}


@pytest.mark.parametrize("algorithm", tuple(TAG_SIZES))
@pytest.mark.parametrize("length", [0, 1, 16, 17, 64, 127, 128, 129, 5000, 100_000])
def test_tag_matches_reference(client: httpx.Client, algorithm: str, length: int) -> None:
    key = os.urandom(32 if algorithm == "poly1305" else 40)
    data = os.urandom(length)
    response = client.post(f"/v1/mac/{algorithm}", json={"key": b64(key), "data": b64(data)})
    assert response.status_code == 200, response.text
    assert response.json() == {"tag": b64(reference_tag(algorithm, key, data))}


@pytest.mark.parametrize("algorithm", HMACS)
@pytest.mark.parametrize("key_length", [0, 1, 64, 128, 129, 300])
def test_hmac_takes_any_key_length(client: httpx.Client, algorithm: str, key_length: int) -> None:
    # keys longer than the block are hashed first (RFC 2104 section 3), the empty key is legal
    key, data = os.urandom(key_length), b"message"
    response = client.post(f"/v1/mac/{algorithm}", json={"key": b64(key), "data": b64(data)})
    assert response.status_code == 200, response.text
    assert response.json() == {"tag": b64(reference_tag(algorithm, key, data))}


@pytest.mark.parametrize("algorithm", tuple(TAG_SIZES))
def test_verify(client: httpx.Client, algorithm: str) -> None:
    key, data = os.urandom(32), os.urandom(100)
    tag = reference_tag(algorithm, key, data)
    url = f"/v1/mac/{algorithm}/verify"

    good = client.post(url, json={"key": b64(key), "data": b64(data), "tag": b64(tag)})
    assert good.status_code == 200, good.text
    assert good.json() == {"valid": True}

    for position in (0, len(tag) - 1):
        forged = bytearray(tag)
        forged[position] ^= 1
        bad = client.post(url, json={"key": b64(key), "data": b64(data), "tag": b64(forged)})
        assert bad.status_code == 200, bad.text
        assert bad.json() == {"valid": False}


@pytest.mark.parametrize("algorithm", tuple(TAG_SIZES))
@pytest.mark.parametrize("delta", [-1, 1])
def test_verify_refuses_other_tag_lengths(client: httpx.Client, algorithm: str, delta: int) -> None:
    # a truncated tag is never compared: a 1-byte "tag" would be forged in 256 tries
    tag = bytes(TAG_SIZES[algorithm] + delta)
    response = client.post(
        f"/v1/mac/{algorithm}/verify", json={"key": b64(bytes(32)), "data": "", "tag": b64(tag)}
    )
    problem = assert_problem(response, 422, "validation-failed")
    assert [error["loc"] for error in problem["errors"]] == [["body", "tag"]]


@pytest.mark.parametrize("route", ["", "/verify"])
@pytest.mark.parametrize("key_length", [0, 16, 31, 33])
def test_poly1305_key_must_be_32_bytes(client: httpx.Client, route: str, key_length: int) -> None:
    body = {"key": b64(bytes(key_length)), "data": b64(b"x"), "tag": b64(bytes(16))}
    if not route:
        del body["tag"]
    response = client.post(f"/v1/mac/poly1305{route}", json=body)
    problem = assert_problem(response, 422, "validation-failed")
    assert [error["loc"] for error in problem["errors"]] == [["body", "key"]]
