"""POST /v1/aead/{algorithm}/seal|open against RFC 8439, the XChaCha draft and pyca/cryptography."""

from __future__ import annotations

import os

import httpx
import pytest
from cryptography.exceptions import InvalidTag

from .helpers import assert_problem, b64, hchacha20, reference_open, reference_seal, unb64

NONCE_SIZES = {"chacha20-poly1305": 12, "xchacha20-poly1305": 24}
ALGORITHMS = tuple(NONCE_SIZES)

# RFC 8439 section 2.8.2
RFC8439_KEY = bytes(range(0x80, 0xA0))
RFC8439_NONCE = bytes.fromhex("070000004041424344454647")
RFC8439_AAD = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
RFC8439_PLAINTEXT = (
    b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
    b"the future, sunscreen would be it."
)
RFC8439_CIPHERTEXT = bytes.fromhex(
    "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca967128"
    "2fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fa"
    "b324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116"
    "1ae10b594f09e26a7e902ecbd0600691"
)


def test_hchacha20_reference_matches_the_draft() -> None:
    # draft-irtf-cfrg-xchacha-03 section 2.2.1: the reference the XChaCha checks rely on
    out = hchacha20(bytes(range(32)), bytes.fromhex("000000090000004a0000000031415927"))
    assert out.hex() == "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"


def test_seal_rfc8439_vector(client: httpx.Client) -> None:
    body = {
        "key": b64(RFC8439_KEY),
        "nonce": b64(RFC8439_NONCE),
        "plaintext": b64(RFC8439_PLAINTEXT),
        "aad": b64(RFC8439_AAD),
    }
    response = client.post("/v1/aead/chacha20-poly1305/seal", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"nonce": b64(RFC8439_NONCE), "ciphertext": b64(RFC8439_CIPHERTEXT)}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(
    ("length", "aad_length"),
    # around the 16-byte Poly1305 block and the 64-byte ChaCha block; 200 KB takes the
    # worker-thread path (above the 64 KiB offload threshold)
    [
        (0, 0),
        (1, 0),
        (15, 1),
        (16, 16),
        (17, 17),
        (63, 0),
        (64, 13),
        (65, 257),
        (1000, 3),
        (200_000, 5),
    ],
)
def test_seal_and_open_match_reference(
    client: httpx.Client, algorithm: str, length: int, aad_length: int
) -> None:
    key, nonce = os.urandom(32), os.urandom(NONCE_SIZES[algorithm])
    plaintext, aad = os.urandom(length), os.urandom(aad_length)
    expected = reference_seal(algorithm, key, nonce, plaintext, aad)

    sealed = client.post(
        f"/v1/aead/{algorithm}/seal",
        json={"key": b64(key), "nonce": b64(nonce), "plaintext": b64(plaintext), "aad": b64(aad)},
    )
    assert sealed.status_code == 200, sealed.text
    assert sealed.json() == {"nonce": b64(nonce), "ciphertext": b64(expected)}

    opened = client.post(
        f"/v1/aead/{algorithm}/open",
        json={"key": b64(key), "nonce": b64(nonce), "ciphertext": b64(expected), "aad": b64(aad)},
    )
    assert opened.status_code == 200, opened.text
    assert opened.json() == {"plaintext": b64(plaintext)}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_aad_is_optional(client: httpx.Client, algorithm: str) -> None:
    key, nonce = os.urandom(32), os.urandom(NONCE_SIZES[algorithm])
    response = client.post(
        f"/v1/aead/{algorithm}/seal",
        json={"key": b64(key), "nonce": b64(nonce), "plaintext": b64(b"hi")},
    )
    assert response.status_code == 200, response.text
    ciphertext = unb64(response.json()["ciphertext"])
    assert reference_open(algorithm, key, nonce, ciphertext, b"") == b"hi"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_seal_without_nonce_draws_a_fresh_one(client: httpx.Client, algorithm: str) -> None:
    key, plaintext = os.urandom(32), b"attack at dawn"
    nonces = set()
    for _ in range(3):
        response = client.post(
            f"/v1/aead/{algorithm}/seal", json={"key": b64(key), "plaintext": b64(plaintext)}
        )
        assert response.status_code == 200, response.text
        body = response.json()
        nonce, ciphertext = unb64(body["nonce"]), unb64(body["ciphertext"])
        assert len(nonce) == NONCE_SIZES[algorithm]
        assert len(ciphertext) == len(plaintext) + 16
        assert reference_open(algorithm, key, nonce, ciphertext, b"") == plaintext
        opened = client.post(
            f"/v1/aead/{algorithm}/open",
            json={"key": b64(key), "nonce": body["nonce"], "ciphertext": body["ciphertext"]},
        )
        assert opened.json() == {"plaintext": b64(plaintext)}
        nonces.add(nonce)
    assert len(nonces) == 3


def test_explicit_null_nonce_means_absent(client: httpx.Client) -> None:
    response = client.post(
        "/v1/aead/chacha20-poly1305/seal",
        json={"key": b64(bytes(32)), "nonce": None, "plaintext": b64(b"x")},
    )
    assert response.status_code == 200, response.text
    assert len(unb64(response.json()["nonce"])) == 12


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("tamper", ["ciphertext", "tag", "aad", "nonce", "key"])
def test_open_rejects_any_change(client: httpx.Client, algorithm: str, tamper: str) -> None:
    key, nonce = os.urandom(32), os.urandom(NONCE_SIZES[algorithm])
    plaintext, aad = b"secret payload " * 5, b"header"
    ciphertext = bytearray(reference_seal(algorithm, key, nonce, plaintext, aad))
    fields = {"key": bytearray(key), "nonce": bytearray(nonce), "aad": bytearray(aad)}
    if tamper == "ciphertext":
        ciphertext[0] ^= 1
    elif tamper == "tag":
        ciphertext[-1] ^= 0x80
    else:
        fields[tamper][0] ^= 1
    with pytest.raises(InvalidTag):
        reference_open(
            algorithm,
            bytes(fields["key"]),
            bytes(fields["nonce"]),
            bytes(ciphertext),
            bytes(fields["aad"]),
        )

    response = client.post(
        f"/v1/aead/{algorithm}/open",
        json={
            "key": b64(fields["key"]),
            "nonce": b64(fields["nonce"]),
            "ciphertext": b64(ciphertext),
            "aad": b64(fields["aad"]),
        },
    )
    body = assert_problem(response, 400, "authentication-failed")
    assert "plaintext" not in body
    assert b64(plaintext)[:16] not in response.text


def test_open_large_tampered_payload_fails_cleanly(client: httpx.Client) -> None:
    # a failure path on a payload big enough to take the worker thread
    key, nonce = os.urandom(32), os.urandom(12)
    ciphertext = bytearray(
        reference_seal("chacha20-poly1305", key, nonce, os.urandom(300_000), b"")
    )
    ciphertext[150_000] ^= 4
    response = client.post(
        "/v1/aead/chacha20-poly1305/open",
        json={"key": b64(key), "nonce": b64(nonce), "ciphertext": b64(ciphertext)},
    )
    assert_problem(response, 400, "authentication-failed")


@pytest.mark.parametrize(
    ("algorithm", "route", "field", "value"),
    [
        ("chacha20-poly1305", "seal", "key", bytes(31)),
        ("chacha20-poly1305", "seal", "key", bytes(33)),
        ("chacha20-poly1305", "seal", "nonce", bytes(24)),
        ("xchacha20-poly1305", "seal", "nonce", bytes(12)),
        ("chacha20-poly1305", "open", "nonce", bytes(11)),
        ("xchacha20-poly1305", "open", "nonce", bytes(25)),
        ("xchacha20-poly1305", "open", "key", b""),
        ("chacha20-poly1305", "open", "ciphertext", bytes(15)),
    ],
)
def test_wrong_lengths_are_422(
    client: httpx.Client, algorithm: str, route: str, field: str, value: bytes
) -> None:
    body = {"key": b64(bytes(32)), "nonce": b64(bytes(NONCE_SIZES[algorithm]))}
    body["plaintext" if route == "seal" else "ciphertext"] = b64(bytes(32))
    body[field] = b64(value)
    response = client.post(f"/v1/aead/{algorithm}/{route}", json=body)
    problem = assert_problem(response, 422, "validation-failed")
    assert [error["loc"] for error in problem["errors"]] == [["body", field]]


def test_open_requires_a_nonce(client: httpx.Client) -> None:
    response = client.post(
        "/v1/aead/chacha20-poly1305/open",
        json={"key": b64(bytes(32)), "ciphertext": b64(bytes(16))},
    )
    problem = assert_problem(response, 422, "validation-failed")
    assert problem["errors"] == [
        {"loc": ["body", "nonce"], "type": "missing", "msg": "Field required"}
    ]
