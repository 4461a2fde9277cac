"""application/octet-stream on seal, open, mac, verify and ECB: the body is the data, the
small parameters are Archcrypt-* headers; answers checked against pyca/cryptography."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterator

import httpx
import pytest
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from cryptography.hazmat.primitives.poly1305 import Poly1305

from .conftest import MAX_BODY_BYTES
from .helpers import assert_problem, b64, reference_open, reference_seal, unb64

OCTET = {"content-type": "application/octet-stream"}
NONCE_SIZES = {"chacha20-poly1305": 12, "xchacha20-poly1305": 24}
# empty, around the 16/64-byte blocks, and 200 KB (above the 64 KiB offload threshold)
LENGTHS = [0, 1, 15, 64, 65, 1000, 200_000]


def _headers(**params: bytes) -> dict[str, str]:
    names = {"key": "Archcrypt-Key", "nonce": "Archcrypt-Nonce", "aad": "Archcrypt-AAD",
             "tag": "Archcrypt-Tag"}  # fmt: skip
    return {**OCTET, **{names[k]: b64(v) for k, v in params.items()}}


def _reference_mac(algorithm: str, key: bytes, data: bytes) -> bytes:
    if algorithm == "poly1305":
        return Poly1305.generate_tag(key, data)
    return hmac.new(key, data, getattr(hashlib, algorithm.removeprefix("hmac-"))).digest()


def _camellia(key: bytes, data: bytes, encrypt: bool) -> bytes:
    cipher = Cipher(Camellia(key), modes.ECB())
    ctx = cipher.encryptor() if encrypt else cipher.decryptor()
    return ctx.update(data) + ctx.finalize()


@pytest.mark.parametrize("algorithm", list(NONCE_SIZES))
@pytest.mark.parametrize("length", LENGTHS)
def test_seal_and_open_match_reference(client: httpx.Client, algorithm: str, length: int) -> None:
    key, nonce = os.urandom(32), os.urandom(NONCE_SIZES[algorithm])
    plaintext, aad = os.urandom(length), os.urandom(length % 50)
    expected = reference_seal(algorithm, key, nonce, plaintext, aad)
    sealed = client.post(
        f"/v1/aead/{algorithm}/seal",
        content=plaintext,
        headers=_headers(key=key, nonce=nonce, aad=aad),
    )
    assert sealed.status_code == 200, sealed.text
    assert sealed.headers["content-type"] == "application/octet-stream"
    assert "archcrypt-nonce" not in sealed.headers  # only a drawn nonce is sent back
    assert sealed.content == expected
    opened = client.post(
        f"/v1/aead/{algorithm}/open",
        content=expected,
        headers=_headers(key=key, nonce=nonce, aad=aad),
    )
    assert opened.status_code == 200, opened.text
    assert opened.headers["content-type"] == "application/octet-stream"
    assert opened.content == plaintext


@pytest.mark.parametrize("algorithm", list(NONCE_SIZES))
def test_seal_draws_a_nonce_and_returns_it_in_a_header(
    client: httpx.Client, algorithm: str
) -> None:
    key = os.urandom(32)
    sealed = client.post(f"/v1/aead/{algorithm}/seal", content=b"hello", headers=_headers(key=key))
    assert sealed.status_code == 200, sealed.text
    nonce = unb64(sealed.headers["archcrypt-nonce"])
    assert len(nonce) == NONCE_SIZES[algorithm]
    assert reference_open(algorithm, key, nonce, sealed.content, b"") == b"hello"


def test_open_with_a_changed_byte_is_authentication_failed(client: httpx.Client) -> None:
    key, nonce = os.urandom(32), os.urandom(12)
    sealed = bytearray(reference_seal("chacha20-poly1305", key, nonce, b"x" * 100, b""))
    sealed[3] ^= 1
    response = client.post(
        "/v1/aead/chacha20-poly1305/open",
        content=bytes(sealed),
        headers=_headers(key=key, nonce=nonce),
    )
    problem = assert_problem(response, 400, "authentication-failed")
    assert "x" * 10 not in response.text
    assert problem["instance"] == "/v1/aead/chacha20-poly1305/open"


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


@pytest.mark.parametrize("algorithm", ["poly1305", "hmac-sha256", "hmac-sha512"])
@pytest.mark.parametrize("length", [0, 1, 17, 1000, 300_000])
def test_mac_and_verify_match_reference(client: httpx.Client, algorithm: str, length: int) -> None:
    key = os.urandom(32 if algorithm == "poly1305" else 45)
    data = os.urandom(length)
    expected = _reference_mac(algorithm, key, data)
    # a chunked body: the tag is computed as the chunks arrive
    tag = client.post(
        f"/v1/mac/{algorithm}", content=_chunks(data, 7000), headers=_headers(key=key)
    )
    assert tag.status_code == 200, tag.text
    assert tag.json() == {"tag": b64(expected)}
    good = client.post(
        f"/v1/mac/{algorithm}/verify", content=data, headers=_headers(key=key, tag=expected)
    )
    assert good.json() == {"valid": True}
    wrong = bytes([expected[0] ^ 0x80]) + expected[1:]
    bad = client.post(
        f"/v1/mac/{algorithm}/verify", content=data, headers=_headers(key=key, tag=wrong)
    )
    assert bad.status_code == 200, bad.text
    assert bad.json() == {"valid": False}


def test_streamed_mac_is_not_bound_by_the_buffered_body_limit(client: httpx.Client) -> None:
    # the session server buffers at most 1 MiB, but streams without a limit
    key, data = os.urandom(32), os.urandom(MAX_BODY_BYTES + 4096)
    response = client.post("/v1/mac/poly1305", content=data, headers=_headers(key=key))
    assert response.json() == {"tag": b64(Poly1305.generate_tag(key, data))}


@pytest.mark.parametrize("key_size", [16, 24, 32])
@pytest.mark.parametrize("blocks", [0, 1, 3, 64, 300])
def test_ecb_matches_reference(client: httpx.Client, key_size: int, blocks: int) -> None:
    key, data = os.urandom(key_size), os.urandom(16 * blocks)
    expected = _camellia(key, data, True)
    encrypted = client.post("/v1/ecb/camellia/encrypt", content=data, headers=_headers(key=key))
    assert encrypted.status_code == 200, encrypted.text
    assert encrypted.headers["content-type"] == "application/octet-stream"
    assert encrypted.content == expected
    decrypted = client.post("/v1/ecb/camellia/decrypt", content=expected, headers=_headers(key=key))
    assert decrypted.content == data


# ---- errors: the same statuses as bad JSON fields ----------------------------------------------

SEAL = "/v1/aead/chacha20-poly1305/seal"
OPEN = "/v1/aead/chacha20-poly1305/open"


@pytest.mark.parametrize(
    ("path", "headers", "loc"),
    [
        (SEAL, {}, "Archcrypt-Key"),
        (OPEN, {"Archcrypt-Key": b64(bytes(32))}, "Archcrypt-Nonce"),
        ("/v1/mac/hmac-sha256", {}, "Archcrypt-Key"),
        ("/v1/mac/hmac-sha256/verify", {"Archcrypt-Key": b64(b"k")}, "Archcrypt-Tag"),
        ("/v1/ecb/camellia/encrypt", {}, "Archcrypt-Key"),
    ],
)
def test_missing_header_is_422(
    client: httpx.Client, path: str, headers: dict[str, str], loc: str
) -> None:
    response = client.post(path, content=bytes(32), headers={**OCTET, **headers})
    problem = assert_problem(response, 422, "validation-failed")
    assert problem["errors"][0]["loc"] == ["header", loc]


@pytest.mark.parametrize("header", ["Archcrypt-Key", "Archcrypt-Nonce", "Archcrypt-AAD"])
@pytest.mark.parametrize("bad", ["QQ", "QR==", "-_-_", "QU JD"])
def test_bad_base64_in_a_header_is_400(client: httpx.Client, header: str, bad: str) -> None:
    headers = {**_headers(key=bytes(32), nonce=bytes(12)), header: bad}
    response = client.post(SEAL, content=b"data", headers=headers)
    problem = assert_problem(response, 400, "invalid-encoding")
    assert problem["errors"][0]["loc"] == ["header", header]
    assert problem["errors"][0]["type"] == "base64_invalid"


@pytest.mark.parametrize(
    ("path", "params", "loc"),
    [
        (SEAL, {"key": bytes(31)}, "Archcrypt-Key"),
        (SEAL, {"key": bytes(32), "nonce": bytes(24)}, "Archcrypt-Nonce"),
        (
            "/v1/aead/xchacha20-poly1305/open",
            {"key": bytes(32), "nonce": bytes(12)},
            "Archcrypt-Nonce",
        ),
        ("/v1/mac/poly1305", {"key": bytes(16)}, "Archcrypt-Key"),
        ("/v1/mac/hmac-sha256/verify", {"key": b"k", "tag": bytes(16)}, "Archcrypt-Tag"),
        ("/v1/ecb/camellia/decrypt", {"key": bytes(20)}, "Archcrypt-Key"),
    ],
)
def test_wrong_lengths_are_422(
    client: httpx.Client, path: str, params: dict[str, bytes], loc: str
) -> None:
    secret = b"s3cr3t-key-material"
    headers = _headers(**params)
    response = client.post(path, content=bytes(32), headers=headers)
    problem = assert_problem(response, 422, "validation-failed")
    assert problem["errors"][0]["loc"] == ["header", loc]
    assert secret not in response.content and headers.get("Archcrypt-Key", "@") not in response.text


def test_open_shorter_than_the_tag_and_ecb_partial_blocks_are_422(client: httpx.Client) -> None:
    short = client.post(OPEN, content=bytes(15), headers=_headers(key=bytes(32), nonce=bytes(12)))
    assert_problem(short, 422, "validation-failed")
    partial = client.post(
        "/v1/ecb/camellia/encrypt", content=bytes(17), headers=_headers(key=bytes(16))
    )
    problem = assert_problem(partial, 422, "validation-failed")
    assert problem["errors"][0]["loc"] == ["body"]


def test_binary_body_over_the_limit_is_413(client: httpx.Client) -> None:
    response = client.post(SEAL, content=bytes(MAX_BODY_BYTES + 1), headers=_headers(key=bytes(32)))
    assert_problem(response, 413, "content-too-large")


def test_openapi_describes_both_bodies_and_problem_errors(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for path, model in [
        ("/v1/aead/{algorithm}/seal", "SealRequest"),
        ("/v1/aead/{algorithm}/open", "OpenRequest"),
        ("/v1/mac/{algorithm}", "MacRequest"),
        ("/v1/mac/{algorithm}/verify", "VerifyRequest"),
        ("/v1/hash/{algorithm}", "HashRequest"),
        ("/v1/ecb/camellia/encrypt", "EcbRequest"),
    ]:
        operation = spec["paths"][path]["post"]
        content = operation["requestBody"]["content"]
        assert content["application/json"]["schema"] == {"$ref": f"#/components/schemas/{model}"}
        assert content["application/octet-stream"]["schema"]["format"] == "binary"
        assert set(schemas[model]["properties"]) >= {"key"} or model == "HashRequest"
        assert "200" in operation["responses"]
        for status in ("400", "413", "415", "422"):
            error = operation["responses"][status]["content"]
            assert error == {
                "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
            }
    seal = spec["paths"]["/v1/aead/{algorithm}/seal"]["post"]
    assert "application/octet-stream" in seal["responses"]["200"]["content"]
    assert {p["name"] for p in seal["parameters"] if p["in"] == "header"} == {
        "Archcrypt-Key", "Archcrypt-Nonce", "Archcrypt-AAD"
    }  # fmt: skip
    # every reference resolves
    text = str(spec)
    for name in {part.split("'")[0] for part in text.split("#/components/schemas/")[1:]}:
        assert name in schemas, name
    assert "HTTPValidationError" not in schemas
    assert "/v1/bench/null" not in spec["paths"]


def test_the_null_route_is_off_by_default(client: httpx.Client) -> None:
    response = client.post("/v1/bench/null", content=b"x", headers=OCTET)
    assert_problem(response, 404, "not-found")
