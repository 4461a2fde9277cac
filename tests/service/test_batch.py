"""Batches on every operation: {"items": [...]} in, one answer per item out, in order; a
failed item is its problem and the batch is still 200; limits hold for the worst input."""

from __future__ import annotations

import hashlib
import hmac
import os

import httpx
import pytest
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from cryptography.hazmat.primitives.poly1305 import Poly1305

from .conftest import LIMIT_BYTES, LIMIT_MESSAGES
from .helpers import (
    PROBLEM_BASE,
    assert_problem,
    b64,
    metric_value,
    reference_open,
    reference_seal,
    unb64,
)

NONCE_SIZES = {"chacha20-poly1305": 12, "xchacha20-poly1305": 24}


def _error(item: dict[str, object], status: int, slug: str) -> dict[str, object]:
    assert set(item) == {"error"}, item
    problem = item["error"]
    assert isinstance(problem, dict)
    assert problem["status"] == status
    assert problem["type"] == PROBLEM_BASE + slug
    assert problem["title"] and problem["detail"]
    return problem


@pytest.mark.parametrize("algorithm", list(NONCE_SIZES))
def test_seal_and_open_batches_match_reference(client: httpx.Client, algorithm: str) -> None:
    key = os.urandom(32)
    messages = [(os.urandom(NONCE_SIZES[algorithm]), os.urandom(n), os.urandom(n % 7))
                for n in (0, 1, 64, 65, 1000, 100_000)]  # fmt: skip
    items = [{"key": b64(key), "nonce": b64(n), "plaintext": b64(p), "aad": b64(a)}
             for n, p, a in messages]  # fmt: skip
    sealed = client.post(f"/v1/aead/{algorithm}/seal/batch", json={"items": items})
    assert sealed.status_code == 200, sealed.text
    expected = [reference_seal(algorithm, key, n, p, a) for n, p, a in messages]
    assert sealed.json() == {
        "items": [
            {"nonce": b64(n), "ciphertext": b64(c)}
            for (n, _, _), c in zip(messages, expected, strict=True)
        ]
    }
    opens = [{"key": b64(key), "nonce": b64(n), "ciphertext": b64(c), "aad": b64(a)}
             for (n, _, a), c in zip(messages, expected, strict=True)]  # fmt: skip
    opened = client.post(f"/v1/aead/{algorithm}/open/batch", json={"items": opens})
    assert opened.json() == {"items": [{"plaintext": b64(p)} for _, p, _ in messages]}


def test_seal_batch_draws_a_nonce_per_item(client: httpx.Client) -> None:
    key = os.urandom(32)
    items = [{"key": b64(key), "plaintext": b64(b"same")}] * 3
    answer = client.post("/v1/aead/chacha20-poly1305/seal/batch", json={"items": items}).json()
    nonces = [unb64(item["nonce"]) for item in answer["items"]]
    assert len(set(nonces)) == 3
    for item, nonce in zip(answer["items"], nonces, strict=True):
        assert (
            reference_open("chacha20-poly1305", key, nonce, unb64(item["ciphertext"]), b"")
            == b"same"
        )


def test_each_failed_item_is_its_problem_and_the_rest_are_served(client: httpx.Client) -> None:
    key, nonce = bytes(32), bytes(12)
    good = {"key": b64(key), "nonce": b64(nonce), "plaintext": b64(b"ok")}
    items = [
        good,
        {"key": b64(key), "nonce": b64(nonce), "plaintext": "QR=="},  # not canonical base64
        {"key": b64(bytes(31)), "nonce": b64(nonce), "plaintext": ""},  # key length
        {"key": b64(key), "nonce": b64(bytes(24)), "plaintext": ""},  # nonce length (chacha)
        {"key": b64(key), "plaintext": "", "colour": "red"},  # unknown field
        {"nonce": b64(nonce), "plaintext": ""},  # missing key
        "not an object",
        good,
    ]
    response = client.post("/v1/aead/chacha20-poly1305/seal/batch", json={"items": items})
    assert response.status_code == 200, response.text
    answer = response.json()["items"]
    assert len(answer) == len(items)
    expected = {
        "nonce": b64(nonce),
        "ciphertext": b64(reference_seal("chacha20-poly1305", key, nonce, b"ok", b"")),
    }
    assert answer[0] == answer[7] == expected
    assert _error(answer[1], 400, "invalid-encoding")["errors"][0]["loc"] == ["plaintext"]
    assert _error(answer[2], 422, "validation-failed")["errors"][0]["loc"] == ["key"]
    assert _error(answer[3], 422, "validation-failed")["errors"][0]["loc"] == ["nonce"]
    assert _error(answer[4], 422, "validation-failed")["errors"][0]["loc"] == ["colour"]
    assert _error(answer[5], 422, "validation-failed")["errors"][0]["loc"] == ["key"]
    _error(answer[6], 422, "validation-failed")
    assert b64(bytes(31)) not in response.text  # a key never comes back, even a wrong one


def test_a_tampered_item_fails_alone(client: httpx.Client) -> None:
    key, nonce = os.urandom(32), os.urandom(12)
    ct = reference_seal("chacha20-poly1305", key, nonce, b"secret plaintext", b"")
    bad = bytes([ct[0] ^ 1]) + ct[1:]
    items = [
        {"key": b64(key), "nonce": b64(nonce), "ciphertext": b64(c)} for c in (ct, bad, ct[:10])
    ]
    answer = client.post("/v1/aead/chacha20-poly1305/open/batch", json={"items": items}).json()
    assert answer["items"][0] == {"plaintext": b64(b"secret plaintext")}
    _error(answer["items"][1], 400, "authentication-failed")
    _error(answer["items"][2], 422, "validation-failed")  # shorter than the tag


@pytest.mark.parametrize(
    "algorithm", ["poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"]
)
def test_mac_and_verify_batches_match_reference(client: httpx.Client, algorithm: str) -> None:
    def reference(key: bytes, data: bytes) -> bytes:
        if algorithm == "poly1305":
            return Poly1305.generate_tag(key, data)
        return hmac.new(key, data, getattr(hashlib, algorithm[5:])).digest()

    pairs = [(os.urandom(32), os.urandom(n)) for n in (0, 1, 16, 17, 1000, 70_000)]
    items = [{"key": b64(k), "data": b64(d)} for k, d in pairs]
    tags = client.post(f"/v1/mac/{algorithm}/batch", json={"items": items})
    assert tags.status_code == 200, tags.text
    expected = [reference(k, d) for k, d in pairs]
    assert tags.json() == {"items": [{"tag": b64(t)} for t in expected]}
    checks = [{**item, "tag": b64(t)} for item, t in zip(items, expected, strict=True)]
    checks[1]["tag"] = b64(bytes(len(expected[1])))  # wrong tag: false, not an error
    checks[2]["tag"] = b64(expected[2][:-1])  # truncated: refused
    answer = client.post(f"/v1/mac/{algorithm}/verify/batch", json={"items": checks}).json()
    assert answer["items"][0] == {"valid": True}
    assert answer["items"][1] == {"valid": False}
    assert _error(answer["items"][2], 422, "validation-failed")["errors"][0]["loc"] == ["tag"]
    assert answer["items"][3:] == [{"valid": True}] * 3


def test_poly1305_batch_item_with_a_short_key(client: httpx.Client) -> None:
    items = [{"key": b64(bytes(16)), "data": ""}, {"key": b64(bytes(32)), "data": ""}]
    answer = client.post("/v1/mac/poly1305/batch", json={"items": items}).json()
    assert _error(answer["items"][0], 422, "validation-failed")["errors"][0]["loc"] == ["key"]
    assert answer["items"][1] == {"tag": b64(Poly1305.generate_tag(bytes(32), b""))}


def test_ecb_batches_match_reference(client: httpx.Client) -> None:
    pairs = [
        (os.urandom(size), os.urandom(16 * blocks)) for size, blocks in ((16, 0), (24, 1), (32, 65))
    ]
    items = [{"key": b64(k), "data": b64(d)} for k, d in pairs] + [
        {"key": b64(bytes(16)), "data": b64(bytes(17))}
    ]
    encrypted = client.post("/v1/ecb/camellia/encrypt/batch", json={"items": items}).json()["items"]
    for (key, data), item in zip(pairs, encrypted, strict=False):
        encryptor = Cipher(Camellia(key), modes.ECB()).encryptor()
        assert unb64(item["data"]) == encryptor.update(data) + encryptor.finalize()
    _error(encrypted[3], 422, "validation-failed")
    back = [
        {"key": i["key"], "data": e["data"]} for i, e in zip(items[:3], encrypted, strict=False)
    ]
    decrypted = client.post("/v1/ecb/camellia/decrypt/batch", json={"items": back}).json()["items"]
    assert [unb64(i["data"]) for i in decrypted] == [d for _, d in pairs]


BATCH_ROUTES = [
    "/v1/aead/chacha20-poly1305/seal/batch",
    "/v1/aead/xchacha20-poly1305/open/batch",
    "/v1/mac/hmac-sha256/batch",
    "/v1/mac/poly1305/verify/batch",
    "/v1/ecb/camellia/encrypt/batch",
    "/v1/ecb/camellia/decrypt/batch",
]


@pytest.mark.parametrize("path", BATCH_ROUTES)
def test_envelope_errors(client: httpx.Client, path: str) -> None:
    assert client.post(path, json={"items": []}).json() == {"items": []}
    assert_problem(client.post(path, json={"items": [], "extra": 1}), 422, "validation-failed")
    assert_problem(client.post(path, json={"item": []}), 422, "validation-failed")
    assert_problem(
        client.post(path, content=b"{", headers={"content-type": "application/json"}),
        400,
        "invalid-encoding",
    )
    assert_problem(
        client.post(path, content=b"{}", headers={"content-type": "application/octet-stream"}),
        415,
        "unsupported-media-type",
    )


@pytest.mark.parametrize("path", BATCH_ROUTES)
def test_limits_at_their_edges(limited_client: httpx.Client, path: str) -> None:
    field = (
        "plaintext" if path.endswith("seal/batch") else "ciphertext" if "open" in path else "data"
    )
    item = {"key": b64(bytes(32 if "camellia" not in path else 16))}
    if "open" in path:
        item["nonce"] = b64(bytes(24))
    if "verify" in path:
        item["tag"] = b64(bytes(16))
    per_item = LIMIT_BYTES // LIMIT_MESSAGES  # 512: a multiple of 16 for ECB
    full = [{**item, field: b64(bytes(per_item))}] * LIMIT_MESSAGES
    at_limit = limited_client.post(path, json={"items": full})
    assert at_limit.status_code == 200, at_limit.text
    assert len(at_limit.json()["items"]) == LIMIT_MESSAGES
    too_many = limited_client.post(
        path, json={"items": [{**item, field: ""}] * (LIMIT_MESSAGES + 1)}
    )
    problem = assert_problem(too_many, 422, "validation-failed")
    assert problem["errors"][0]["loc"] == ["body", "items"]
    over = [*full[:-1], {**item, field: b64(bytes(per_item + 16))}]
    assert_problem(limited_client.post(path, json={"items": over}), 413, "content-too-large")


def test_a_million_tiny_items_are_refused_before_they_are_parsed(client: httpx.Client) -> None:
    # under the batch body limit (about 5.8 MB with the default limits), but 1.5 million items
    body = b'{"items":[' + b",".join([b"{}"] * 1_500_000) + b"]}"
    response = client.post(
        "/v1/mac/poly1305/batch", content=body, headers={"content-type": "application/json"}
    )
    problem = assert_problem(response, 422, "validation-failed")
    assert problem["errors"][0]["type"] == "too_long"
    strings = b'{"messages":[' + b",".join([b'""'] * 1_500_000) + b"]}"
    response = client.post(
        "/v1/hash/sha256/batch", content=strings, headers={"content-type": "application/json"}
    )
    assert_problem(response, 422, "validation-failed")


def test_batch_body_over_its_limit_is_413_before_it_is_read(limited_client: httpx.Client) -> None:
    response = limited_client.post(
        "/v1/mac/hmac-sha256/batch",
        content=b" " * 100_000,
        headers={"content-type": "application/json"},
    )
    assert_problem(response, 413, "content-too-large")


def test_a_batch_is_one_operation_in_the_metrics(client: httpx.Client) -> None:
    def count() -> float:
        text = client.get("/metrics").text
        return metric_value(
            text,
            "archcrypt_operations_total",
            operation="mac_batch",
            algorithm="hmac-sha512",
            outcome="ok",
        )

    before = count()
    items = [{"key": b64(b"k"), "data": b64(b"d")}] * 5
    assert client.post("/v1/mac/hmac-sha512/batch", json={"items": items}).status_code == 200
    assert count() == before + 1


def test_item_problems_are_the_same_on_both_validation_paths(client: httpx.Client) -> None:
    # a batch of well-formed string items is validated as strings and decoded in one loop;
    # one malformed item sends the whole batch through per-item pydantic validation: the
    # other items must get the same answers either way
    key = b64(bytes(32))
    items = [
        {"key": key, "nonce": b64(bytes(12)), "plaintext": "QR=="},
        {"key": b64(bytes(33)), "nonce": b64(bytes(12)), "plaintext": ""},
        {"key": "not base64!", "plaintext": "", "aad": "QQ="},
        {"key": key, "nonce": b64(bytes(12)), "plaintext": b64(b"x"), "aad": ""},
    ]
    fast = client.post("/v1/aead/chacha20-poly1305/seal/batch", json={"items": items}).json()
    slow = client.post(
        "/v1/aead/chacha20-poly1305/seal/batch", json={"items": [*items, {"key": 1}]}
    ).json()
    assert fast["items"] == slow["items"][:4]
    assert _error(slow["items"][4], 422, "validation-failed")["errors"][0]["loc"] == ["key"]
    assert _error(fast["items"][0], 400, "invalid-encoding")["errors"][0]["loc"] == ["plaintext"]
    assert _error(fast["items"][1], 422, "validation-failed")["errors"][0]["loc"] == ["key"]
    both = _error(fast["items"][2], 400, "invalid-encoding")["errors"]
    assert [e["loc"] for e in both] == [["key"], ["aad"]]
    assert "nonce" in fast["items"][3]
