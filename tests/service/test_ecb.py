"""POST /v1/ecb/camellia/encrypt|decrypt against RFC 3713 and pyca's Camellia."""

from __future__ import annotations

import os

import httpx
import pytest
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives.ciphers import Cipher, modes

from .helpers import assert_problem, b64, unb64

# RFC 3713 appendix A: one plaintext, one key prefix per size
RFC3713_PLAINTEXT = bytes.fromhex("0123456789abcdeffedcba9876543210")
RFC3713 = [
    ("0123456789abcdeffedcba9876543210", "67673138549669730857065648eabe43"),
    ("0123456789abcdeffedcba98765432100011223344556677", "b4993401b3e996f84ee5cee7d79b09b9"),
    (
        "0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff",
        "9acc237dff16d76c20ef7c919e3a7509",
    ),
]


def reference(key: bytes, data: bytes, encrypt: bool) -> bytes:
    cipher = Cipher(Camellia(key), modes.ECB())
    context = cipher.encryptor() if encrypt else cipher.decryptor()
    return context.update(data) + context.finalize()


@pytest.mark.parametrize(("key", "ciphertext"), RFC3713)
def test_rfc3713_vectors(client: httpx.Client, key: str, ciphertext: str) -> None:
    body = {"key": b64(bytes.fromhex(key)), "data": b64(RFC3713_PLAINTEXT)}
    encrypted = client.post("/v1/ecb/camellia/encrypt", json=body)
    assert encrypted.status_code == 200, encrypted.text
    assert encrypted.json() == {"data": b64(bytes.fromhex(ciphertext))}

    body["data"] = b64(bytes.fromhex(ciphertext))
    decrypted = client.post("/v1/ecb/camellia/decrypt", json=body)
    assert decrypted.json() == {"data": b64(RFC3713_PLAINTEXT)}


@pytest.mark.parametrize("key_size", [16, 24, 32])
@pytest.mark.parametrize("blocks", [0, 1, 2, 3, 15, 16, 17, 64, 5000])
def test_matches_reference(client: httpx.Client, key_size: int, blocks: int) -> None:
    key, data = os.urandom(key_size), os.urandom(16 * blocks)
    for direction, encrypt in (("encrypt", True), ("decrypt", False)):
        response = client.post(
            f"/v1/ecb/camellia/{direction}", json={"key": b64(key), "data": b64(data)}
        )
        assert response.status_code == 200, response.text
        assert response.json() == {"data": b64(reference(key, data, encrypt))}


def test_ecb_leaks_equal_blocks(client: httpx.Client) -> None:
    # the property the docs warn about, pinned so nobody mistakes this for a safe mode
    block = os.urandom(16)
    response = client.post(
        "/v1/ecb/camellia/encrypt", json={"key": b64(os.urandom(16)), "data": b64(block * 2)}
    )
    assert response.status_code == 200
    out = unb64(response.json()["data"])
    assert out[:16] == out[16:]


@pytest.mark.parametrize("key_size", [0, 8, 15, 17, 31, 33, 64])
def test_key_length_is_422(client: httpx.Client, key_size: int) -> None:
    response = client.post(
        "/v1/ecb/camellia/encrypt", json={"key": b64(bytes(key_size)), "data": b64(bytes(16))}
    )
    problem = assert_problem(response, 422, "validation-failed")
    assert [error["loc"] for error in problem["errors"]] == [["body", "key"]]


@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("length", [1, 15, 17, 31, 33])
def test_partial_blocks_are_422(client: httpx.Client, direction: str, length: int) -> None:
    response = client.post(
        f"/v1/ecb/camellia/{direction}", json={"key": b64(bytes(16)), "data": b64(bytes(length))}
    )
    problem = assert_problem(response, 422, "validation-failed")
    assert [error["loc"] for error in problem["errors"]] == [["body", "data"]]
    assert "multiple of 16" in problem["detail"]


def test_openapi_warns_about_ecb(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    description = spec["paths"]["/v1/ecb/camellia/encrypt"]["post"]["description"]
    assert "leaks patterns" in description
