"""Named keys through real uvicorn servers, on SQLite and on a real PostgreSQL (two instances).

Nothing here trusts archcrypt to check itself: stored rows are read straight from SQLite or
PostgreSQL and unwrapped with the test's own XChaCha20-Poly1305 (pyca + the HChaCha20 of
helpers.py) under the KEK read from its file; ciphertexts, binary ciphertexts and tags are
then checked with pyca and hmac against that material, following the README's format.

Servers (once per module, ~1 s each, no start-up benchmark):
- sqlite: the embedded default, a generated KEK; chacha20-poly1305 budget 64 with
  refusal at the budget; at most 4 key labels in /metrics;
- postgres a, b: one PostgreSQL, one KEK file; budget 64 with rotation at the budget.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sqlite3
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from click.testing import CliRunner

from archcrypt.cli import main

from .conftest import Server, launch
from .helpers import assert_problem, b64, metric_value, reference_open, unb64
from .pgserver import DATABASE, Postgres
from .promserver import promtool

BUDGET = 64
AEAD_TYPES = ("xchacha20-poly1305", "chacha20-poly1305")
HMAC_TYPES = ("hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")
FORMAT_ID = {"chacha20-poly1305": 1, "xchacha20-poly1305": 2}
NONCE_SIZE = {"chacha20-poly1305": 12, "xchacha20-poly1305": 24}
JSON = {"content-type": "application/json"}
BINARY = {"content-type": "application/octet-stream"}
FAST_START = {"ARCHCRYPT_BENCHMARK_ENABLED": "false"}
# a well-formed body for each operation of each kind of key
AEAD_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("seal", {"plaintext": "eA=="}),
    ("open", {"ciphertext": "archcrypt:v1:AA=="}),
    ("rewrap", {"ciphertext": "archcrypt:v1:AA=="}),
    ("datakey", {}),
    ("datakey/wrapped", {}),
]
HMAC_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("mac", {"data": "eA=="}),
    ("verify", {"data": "eA==", "tag": "archcrypt:v1:AA=="}),
]


# Plaintexts the tests seal (long enough to grep for); the last test of the module looks for
# them, and for every stored version's material, in the servers' logs.
SENT: list[bytes] = []


def unique(prefix: str = "k") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ---- the store read independently ---------------------------------------------------------


def read_keks(path: Path) -> list[bytes]:
    lines = [ln.strip() for ln in path.read_text().splitlines()]
    return [base64.b64decode(ln) for ln in lines if ln and not ln.startswith("#")]


def kek_id(kek: bytes) -> str:
    return hmac.new(kek, b"archcrypt KEK id", hashlib.sha256).digest()[:8].hex()


def unwrap(kek: bytes, name: str, version: int, key_type: str, wrapped: bytes) -> bytes:
    """The README's wrapping: XChaCha20-Poly1305, nonce first, AAD binding name/version/type."""
    aad = b"\0".join((b"archcrypt key material v1", name.encode(), str(version).encode(),
                      key_type.encode()))  # fmt: skip
    return reference_open("xchacha20-poly1305", kek, wrapped[:24], wrapped[24:], aad)


@dataclass
class Deployment:
    backend: str
    servers: list[Server]
    kek_file: Path
    rows: Callable[[], list[tuple[Any, ...]]]  # (name, version, type, kek_id, wrapped)

    def client(self, index: int = 0) -> httpx.Client:
        return httpx.Client(base_url=self.servers[index].base_url, timeout=30)

    def material(self, name: str, version: int) -> bytes:
        keks = {kek_id(k): k for k in read_keks(self.kek_file)}
        for row_name, row_version, key_type, kid, wrapped in self.rows():
            if (row_name, row_version) == (name, version):
                return unwrap(keks[kid], name, version, key_type, bytes(wrapped))
        raise AssertionError(f"no stored row for {name} v{version}")


_ROWS = (
    "SELECT v.name, v.version, k.type, v.kek_id, v.wrapped FROM "
    "archcrypt_key_versions v JOIN archcrypt_keys k USING (name)"
)


def sqlite_rows(path: Path) -> Callable[[], list[tuple[Any, ...]]]:
    def rows() -> list[tuple[Any, ...]]:
        with sqlite3.connect(path) as conn:
            return conn.execute(_ROWS).fetchall()

    return rows


def postgres_rows(url: str) -> Callable[[], list[tuple[Any, ...]]]:
    def rows() -> list[tuple[Any, ...]]:
        with psycopg.connect(url) as conn:
            return conn.execute(_ROWS).fetchall()

    return rows


def write_kek(path: Path, *keks: bytes) -> Path:
    path.write_text("".join(b64(k) + "\n" for k in keks))
    path.chmod(0o600)
    return path


def sqlite_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **FAST_START,
        "ARCHCRYPT_DATA_DIR": str(data_dir),
        "ARCHCRYPT_CHACHA20_NONCE_BUDGET": str(BUDGET),
        "ARCHCRYPT_NONCE_BUDGET_EXHAUSTED": "refuse",
        "ARCHCRYPT_METRICS_KEY_LABELS": "4",
        **extra,
    }


def postgres_env(pg: Postgres, kek_file: Path, **extra: str) -> dict[str, str]:
    return {
        **FAST_START,
        "ARCHCRYPT_KEYSTORE_URL": pg.url,
        "ARCHCRYPT_KEK_FILE": str(kek_file),
        "ARCHCRYPT_CHACHA20_NONCE_BUDGET": str(BUDGET),
        "ARCHCRYPT_NONCE_BUDGET_EXHAUSTED": "rotate",
        **extra,
    }


@pytest.fixture(scope="module")
def sqlite_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("keys-sqlite")
    data = root / "data"
    with launch(root, **sqlite_env(data)) as launched:
        server = launched.wait_ready()
        yield Deployment("sqlite", [server], data / "kek", sqlite_rows(data / "keys.sqlite3"))


@pytest.fixture(scope="module")
def postgres_deployment(
    tmp_path_factory: pytest.TempPathFactory, postgres: Postgres
) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("keys-postgres")
    kek_file = write_kek(root / "kek", uuid.uuid4().bytes * 2)
    (root / "a").mkdir()
    (root / "b").mkdir()
    with (
        launch(root / "a", **postgres_env(postgres, kek_file)) as a,
        launch(root / "b", **postgres_env(postgres, kek_file)) as b,
    ):
        servers = [a.wait_ready(), b.wait_ready()]
        yield Deployment("postgres", servers, kek_file, postgres_rows(postgres.url))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def deployment(request: pytest.FixtureRequest) -> Deployment:
    found: Deployment = request.getfixturevalue(f"{request.param}_deployment")
    return found


@pytest.fixture
def client(deployment: Deployment) -> Iterator[httpx.Client]:
    with deployment.client() as http:
        yield http


# ---- helpers ----------------------------------------------------------------------------------


def create(client: httpx.Client, key_type: str | None = None, name: str | None = None) -> str:
    name = name or unique(key_type.split("-")[0] if key_type else "k")
    body: dict[str, str] = {"name": name}
    if key_type is not None:
        body["type"] = key_type
    response = client.post("/v1/keys", json=body)
    assert response.status_code == 201, response.text
    return name


def seal(client: httpx.Client, name: str, plaintext: bytes, aad: bytes = b"") -> dict[str, Any]:
    if len(plaintext) >= 8 and len(set(plaintext)) > 1:
        SENT.append(plaintext)
    body = {"plaintext": b64(plaintext)}
    if aad:
        body["aad"] = b64(aad)
    response = client.post(f"/v1/keys/{name}/seal", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def open_(client: httpx.Client, name: str, ciphertext: str, aad: bytes = b"") -> httpx.Response:
    return client.post(f"/v1/keys/{name}/open", json={"ciphertext": ciphertext, "aad": b64(aad)})


def split_text(ciphertext: str) -> tuple[int, bytes]:
    prefix, version, payload = ciphertext.split(":")
    assert prefix == "archcrypt" and version.startswith("v")
    return int(version[1:]), unb64(payload)


def header(key_type: str, version: int) -> bytes:
    return b"ac" + bytes([1, FORMAT_ID[key_type]]) + struct.pack(">I", version)


def reference_open_text(material: bytes, key_type: str, ciphertext: str, aad: bytes = b"") -> bytes:
    version, payload = split_text(ciphertext)
    n = NONCE_SIZE[key_type]
    return reference_open(
        key_type, material, payload[:n], payload[n:], header(key_type, version) + aad
    )


def no_plaintext(response: httpx.Response, plaintext: bytes) -> None:
    assert b64(plaintext) not in response.text
    assert "plaintext" not in response.json()


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Seconds until predicate() held; fails after `timeout`."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(0.02)
    return time.monotonic() - start


# ---- administration ---------------------------------------------------------------------------


def test_create_list_show_metadata_and_conflicts(client: httpx.Client) -> None:
    name = unique()
    created = client.post("/v1/keys", json={"name": name})
    assert created.status_code == 201
    meta = created.json()
    assert meta["name"] == name and meta["type"] == "xchacha20-poly1305"  # the default
    assert meta["primary_version"] == 1 and meta["min_decryption_version"] == 1
    assert meta["deletion_allowed"] is False
    assert [v["version"] for v in meta["versions"]] == [1]
    assert meta["versions"][0]["usage"] == 0
    assert meta["created_at"].endswith("Z")

    assert_problem(client.post("/v1/keys", json={"name": name}), 409, "key-exists")
    for bad in ["", "UPPER", "-lead", "a" * 65, "sp ace", "sl/ash", "é"]:
        assert_problem(client.post("/v1/keys", json={"name": bad}), 422, "validation-failed")
    assert_problem(client.post("/v1/keys", json={"name": unique(), "type": "aes-gcm"}), 422)
    assert_problem(client.post("/v1/keys", json={"name": unique(), "x": 1}), 422)
    assert_problem(client.post("/v1/keys", content=b"{", headers=JSON), 400, "invalid-encoding")
    assert_problem(client.post("/v1/keys", content=b"name=x"), 415)

    shown = client.get(f"/v1/keys/{name}")
    assert shown.status_code == 200 and shown.json() == meta
    listed = client.get("/v1/keys").json()["keys"]
    assert meta in listed
    assert_problem(client.get("/v1/keys/no-such-key"), 404, "not-found")
    assert_problem(client.get("/v1/keys/NOT_A_NAME"), 404)


@pytest.mark.parametrize("key_type", AEAD_TYPES + HMAC_TYPES)
def test_metadata_never_contains_material(deployment: Deployment, key_type: str) -> None:
    with deployment.client() as client:
        name = create(client, key_type)
        answers = [client.post(f"/v1/keys/{name}/rotate")]
        answers.append(client.patch(f"/v1/keys/{name}", json={"deletion_allowed": True}))
        answers += [client.get(f"/v1/keys/{name}"), client.get("/v1/keys")]
    size = 64 if key_type in ("hmac-sha384", "hmac-sha512") else 32
    for version in (1, 2):
        material = deployment.material(name, version)
        assert len(material) == size
        for answer in answers:
            assert answer.status_code == 200
            for spelling in (
                b64(material),
                material.hex(),
                base64.urlsafe_b64encode(material).decode(),
            ):
                assert spelling not in answer.text
        # nor the wrapped form
        wrapped = next(bytes(r[4]) for r in deployment.rows() if r[:2] == (name, version))
        assert all(b64(wrapped) not in a.text and wrapped.hex() not in a.text for a in answers)
    assert set(answers[0].json()) == {
        "name", "type", "created_at", "versions", "primary_version", "min_decryption_version",
        "deletion_allowed", "nonce_budget"}  # fmt: skip


def test_rotate_patch_and_delete(client: httpx.Client) -> None:
    name = create(client)
    first = seal(client, name, b"old")
    rotated = client.post(f"/v1/keys/{name}/rotate")
    assert rotated.status_code == 200
    assert rotated.json()["primary_version"] == 2
    assert [v["version"] for v in rotated.json()["versions"]] == [1, 2]
    second = seal(client, name, b"new")
    assert (first["key_version"], second["key_version"]) == (1, 2)
    assert first["ciphertext"].startswith("archcrypt:v1:")
    assert second["ciphertext"].startswith("archcrypt:v2:")
    assert unb64(open_(client, name, first["ciphertext"]).json()["plaintext"]) == b"old"

    # min_decryption_version: 1 .. primary; older versions refused without plaintext
    for bad in (0, 3, -1):
        assert_problem(client.patch(f"/v1/keys/{name}", json={"min_decryption_version": bad}), 422)
    patched = client.patch(f"/v1/keys/{name}", json={"min_decryption_version": 2})
    assert patched.status_code == 200 and patched.json()["min_decryption_version"] == 2
    refused = open_(client, name, first["ciphertext"])
    assert_problem(refused, 409, "key-version-retired")
    no_plaintext(refused, b"old")
    assert_problem(
        client.post(f"/v1/keys/{name}/rewrap", json={"ciphertext": first["ciphertext"]}),
        409,
        "key-version-retired",
    )
    assert open_(client, name, second["ciphertext"]).status_code == 200

    assert_problem(client.delete(f"/v1/keys/{name}"), 409, "deletion-not-allowed")
    assert client.get(f"/v1/keys/{name}").status_code == 200
    assert client.patch(f"/v1/keys/{name}", json={"deletion_allowed": True}).status_code == 200
    deleted = client.delete(f"/v1/keys/{name}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert_problem(client.get(f"/v1/keys/{name}"), 404)
    assert_problem(open_(client, name, second["ciphertext"]), 404)
    assert_problem(client.delete(f"/v1/keys/{name}"), 404)
    # the name is free again, and the new key is another key
    create(client, name=name)
    assert_problem(open_(client, name, second["ciphertext"]), 400)
    for method, path in [("post", "rotate"), ("patch", ""), ("delete", "")]:
        url = f"/v1/keys/{unique()}" + (f"/{path}" if path else "")
        kwargs: dict[str, Any] = {"json": {}} if method == "patch" else {}
        assert_problem(getattr(client, method)(url, **kwargs), 404)


# ---- AEAD: seal, open, rewrap, datakey --------------------------------------------------------


@pytest.mark.parametrize("key_type", AEAD_TYPES)
def test_seal_open_against_the_reference(deployment: Deployment, key_type: str) -> None:
    with deployment.client() as client:
        name = create(client, key_type)
        for plaintext, aad in [(b"", b""), (b"x", b""), (b"hello world" * 20, b"header"),
                               (bytes(range(256)) * 5, bytes(300))]:  # fmt: skip
            sealed = seal(client, name, plaintext, aad)
            assert sealed["key_version"] == 1
            version, payload = split_text(sealed["ciphertext"])
            assert version == 1
            assert len(payload) == NONCE_SIZE[key_type] + len(plaintext) + 16
            material = deployment.material(name, 1)
            assert reference_open_text(material, key_type, sealed["ciphertext"], aad) == plaintext
            opened = open_(client, name, sealed["ciphertext"], aad)
            assert opened.status_code == 200, opened.text
            assert opened.json() == {"plaintext": b64(plaintext), "key_version": 1}
            # the nonce is fresh every time
            assert seal(client, name, plaintext, aad)["ciphertext"] != sealed["ciphertext"]

        wrong = open_(client, name, sealed["ciphertext"], aad + b"!")
        assert_problem(wrong, 400, "authentication-failed")
        no_plaintext(wrong, plaintext)
        assert_problem(open_(client, name, sealed["ciphertext"]), 400, "authentication-failed")


def tampered_texts(ciphertext: str) -> Iterator[tuple[str, str]]:
    version, payload = split_text(ciphertext)
    for i in range(len(payload)):
        for bit in (0x01, 0x80):
            flipped = bytearray(payload)
            flipped[i] ^= bit
            yield f"byte {i} ^ {bit:#x}", f"archcrypt:v{version}:{b64(bytes(flipped))}"
    for cut in range(len(payload)):
        yield f"truncated to {cut}", f"archcrypt:v{version}:{b64(payload[:cut])}"
    body = b64(payload)
    yield from [
        ("version 2 (none)", f"archcrypt:v2:{body}"),
        ("version 0", f"archcrypt:v0:{body}"),
        ("leading zero", f"archcrypt:v01:{body}"),
        ("no v", f"archcrypt:1:{body}"),
        ("other scheme", f"vault:v1:{body}"),
        ("upper case", f"ARCHCRYPT:v1:{body}"),
        ("no prefix", body),
        ("trailing space", f"archcrypt:v1:{body} "),
        ("appended byte", f"archcrypt:v1:{b64(payload + b'0')}"),
        ("not base64", f"archcrypt:v1:{body[:-4]}!!!!"),
        ("huge version", f"archcrypt:v99999999999:{body}"),
        ("negative", f"archcrypt:v-1:{body}"),
    ]


@pytest.mark.parametrize("key_type", AEAD_TYPES)
def test_tampered_ciphertext_is_refused(deployment: Deployment, key_type: str) -> None:
    """Every flipped bit, every truncation, every edit of the prefix, another key's ciphertext:
    400 authentication-failed with one and the same detail (no oracle about which part was
    wrong) and no plaintext, through the batch (one item each) and the single route."""
    with deployment.client() as client:
        name, other = create(client, key_type), create(client, key_type)
        plaintext = b"attack at dawn"
        sealed = seal(client, name, plaintext, b"ctx")["ciphertext"]
        cases = list(tampered_texts(sealed))
        cases.append(("another key's", seal(client, other, plaintext, b"ctx")["ciphertext"]))
        response = client.post(
            f"/v1/keys/{name}/open/batch",
            json={"items": [{"ciphertext": text, "aad": b64(b"ctx")} for _, text in cases]},
        )
        assert response.status_code == 200
        no_plaintext_anywhere = b64(plaintext) not in response.text
        assert no_plaintext_anywhere
        details = set()
        for (label, _), item in zip(cases, response.json()["items"], strict=True):
            assert set(item) == {"error"}, label
            assert item["error"]["status"] == 400, (label, item)
            assert item["error"]["type"].endswith("/authentication-failed"), (label, item)
            details.add(item["error"]["detail"])
        assert len(details) == 1, details
        for label, text in cases[:: max(1, len(cases) // 12)] + cases[-13:]:
            for route in ("open", "rewrap"):
                single = client.post(
                    f"/v1/keys/{name}/{route}", json={"ciphertext": text, "aad": b64(b"ctx")}
                )
                problem = assert_problem(single, 400, "authentication-failed")
                assert problem["detail"] in details, (route, label)
                assert b64(plaintext) not in single.text, label
        # a ciphertext that is no string at all is a field's 422, as for any other field
        no_string = client.post(f"/v1/keys/{name}/open", json={"ciphertext": 5})
        assert_problem(no_string, 422, "validation-failed")


@pytest.mark.parametrize("key_type", AEAD_TYPES)
def test_binary_seal_and_open(deployment: Deployment, key_type: str) -> None:
    with deployment.client() as client:
        name = create(client, key_type)
        plaintext, aad = b"binary body \x00\xff" * 10, b"binary aad"
        sealed = client.post(
            f"/v1/keys/{name}/seal",
            content=plaintext,
            headers={**BINARY, "Archcrypt-AAD": b64(aad)},
        )
        assert sealed.status_code == 200, sealed.text
        assert sealed.headers["content-type"] == "application/octet-stream"
        assert sealed.headers["archcrypt-key-version"] == "1"
        blob = sealed.content
        n = NONCE_SIZE[key_type]
        assert blob[:8] == header(key_type, 1)
        assert len(blob) == 8 + n + len(plaintext) + 16
        material = deployment.material(name, 1)
        assert reference_open(key_type, material, blob[8 : 8 + n], blob[8 + n :],
                              blob[:8] + aad) == plaintext  # fmt: skip

        opened = client.post(
            f"/v1/keys/{name}/open", content=blob, headers={**BINARY, "Archcrypt-AAD": b64(aad)}
        )
        assert opened.status_code == 200
        assert opened.content == plaintext and opened.headers["archcrypt-key-version"] == "1"
        # the text form of the same bytes opens too (one format, two spellings)
        text = f"archcrypt:v1:{b64(blob[8:])}"
        assert unb64(open_(client, name, text, aad).json()["plaintext"]) == plaintext

        for i in range(len(blob)):
            flipped = bytearray(blob)
            flipped[i] ^= 0x01
            refused = client.post(
                f"/v1/keys/{name}/open",
                content=bytes(flipped),
                headers={**BINARY, "Archcrypt-AAD": b64(aad)},
            )
            assert_problem(refused, 400, "authentication-failed")
            assert plaintext not in refused.content
        for cut in (0, 1, 7, 8, 8 + n, 8 + n + 15, len(blob) - 1):
            assert_problem(
                client.post(f"/v1/keys/{name}/open", content=blob[:cut],
                            headers={**BINARY, "Archcrypt-AAD": b64(aad)}),
                400,
                "authentication-failed",
            )  # fmt: skip
        assert_problem(
            client.post(f"/v1/keys/{name}/open", content=blob, headers=BINARY),
            400,
            "authentication-failed",
        )
        assert_problem(
            client.post(f"/v1/keys/{name}/seal", content=b"x",
                        headers={**BINARY, "Archcrypt-AAD": "not base64!"}),
            400,
            "invalid-encoding",
        )  # fmt: skip
        assert_problem(
            client.post(
                f"/v1/keys/{name}/seal", content=b"x", headers={"content-type": "text/plain"}
            ),
            415,
        )
        # a ciphertext of the other algorithm is refused by its header, as unauthentic
        other_type = next(t for t in AEAD_TYPES if t != key_type)
        other = create(client, other_type)
        foreign = client.post(f"/v1/keys/{other}/seal", content=b"x", headers=BINARY).content
        assert_problem(
            client.post(f"/v1/keys/{name}/open", content=foreign, headers=BINARY),
            400,
            "authentication-failed",
        )


def test_rewrap_and_datakeys(deployment: Deployment) -> None:
    with deployment.client() as client:
        name = create(client)
        old = seal(client, name, b"secret", b"aad")
        client.post(f"/v1/keys/{name}/rotate")
        rewrapped = client.post(
            f"/v1/keys/{name}/rewrap", json={"ciphertext": old["ciphertext"], "aad": b64(b"aad")}
        )
        assert rewrapped.status_code == 200
        body = rewrapped.json()
        assert set(body) == {"ciphertext", "key_version"} and body["key_version"] == 2
        assert b64(b"secret") not in rewrapped.text
        material = deployment.material(name, 2)
        assert (
            reference_open_text(material, "xchacha20-poly1305", body["ciphertext"], b"aad")
            == b"secret"
        )
        assert_problem(
            client.post(f"/v1/keys/{name}/rewrap", json={"ciphertext": old["ciphertext"]}),
            400,
            "authentication-failed",
        )

        for bits in (128, 256, 512):
            made = client.post(f"/v1/keys/{name}/datakey", json={"bits": bits})
            assert made.status_code == 200, made.text
            pair = made.json()
            data_key = unb64(pair["plaintext"])
            assert len(data_key) == bits // 8 and pair["key_version"] == 2
            assert (
                reference_open_text(material, "xchacha20-poly1305", pair["ciphertext"]) == data_key
            )
            assert unb64(open_(client, name, pair["ciphertext"]).json()["plaintext"]) == data_key
        default = client.post(f"/v1/keys/{name}/datakey", json={})
        assert len(unb64(default.json()["plaintext"])) == 32
        wrapped = client.post(f"/v1/keys/{name}/datakey/wrapped", json={"bits": 128})
        assert wrapped.status_code == 200 and set(wrapped.json()) == {"ciphertext", "key_version"}
        opened = open_(client, name, wrapped.json()["ciphertext"]).json()
        assert len(unb64(opened["plaintext"])) == 16
        for bad in (64, 255, 1024, "256"):
            assert_problem(client.post(f"/v1/keys/{name}/datakey", json={"bits": bad}), 422)


# ---- HMAC ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key_type", HMAC_TYPES)
def test_mac_and_verify(deployment: Deployment, key_type: str) -> None:
    digest = key_type.removeprefix("hmac-")
    with deployment.client() as client:
        name = create(client, key_type)
        made = client.post(f"/v1/keys/{name}/mac", json={"data": b64(b"message")})
        assert made.status_code == 200
        tag = made.json()["tag"]
        version, raw = split_text(tag)
        assert version == 1
        expected = hmac.new(deployment.material(name, 1), b"message", digest).digest()
        assert raw == expected

        def verify(data: bytes, tag_text: str) -> httpx.Response:
            return client.post(f"/v1/keys/{name}/verify", json={"data": b64(data), "tag": tag_text})

        assert verify(b"message", tag).json() == {"valid": True}
        assert verify(b"messagE", tag).json() == {"valid": False}
        bad = bytearray(raw)
        bad[-1] ^= 1
        assert verify(b"message", f"archcrypt:v1:{b64(bytes(bad))}").json() == {"valid": False}
        assert verify(b"message", f"archcrypt:v7:{b64(raw)}").json() == {"valid": False}
        for malformed in (
            "",
            raw.hex(),
            f"archcrypt:v1:{b64(raw[:-1])}",
            f"archcrypt:v1:{b64(raw)}x",
        ):
            assert_problem(verify(b"message", malformed), 400, "invalid-ciphertext")

        client.post(f"/v1/keys/{name}/rotate")
        newer = client.post(f"/v1/keys/{name}/mac", json={"data": b64(b"message")}).json()["tag"]
        assert newer.startswith("archcrypt:v2:") and newer != tag
        assert verify(b"message", tag).json() == {"valid": True}  # every version verifies
        assert verify(b"message", newer).json() == {"valid": True}
        client.patch(f"/v1/keys/{name}", json={"min_decryption_version": 2})
        assert_problem(verify(b"message", tag), 409, "key-version-retired")
        assert verify(b"message", newer).json() == {"valid": True}


def test_type_mismatch_is_409(client: httpx.Client) -> None:
    aead, mac = create(client), create(client, "hmac-sha256")
    for path, body in HMAC_BODIES:
        assert_problem(client.post(f"/v1/keys/{aead}/{path}", json=body), 409, "key-type-mismatch")
        assert_problem(
            client.post(f"/v1/keys/{aead}/{path}/batch", json={"items": [body]}), 409,
            "key-type-mismatch",
        )  # fmt: skip
    for path, body in AEAD_BODIES:
        assert_problem(client.post(f"/v1/keys/{mac}/{path}", json=body), 409, "key-type-mismatch")
    assert_problem(
        client.post(f"/v1/keys/{mac}/seal", content=b"x", headers=BINARY), 409, "key-type-mismatch"
    )


def test_unknown_keys_are_404_everywhere(client: httpx.Client) -> None:
    name = unique()
    for path, body in [
        *AEAD_BODIES,
        *HMAC_BODIES,
        ("seal/batch", {"items": []}),
        ("open/batch", {"items": []}),
        ("rewrap/batch", {"items": []}),
        ("mac/batch", {"items": []}),
        ("verify/batch", {"items": []}),
    ]:
        assert_problem(client.post(f"/v1/keys/{name}/{path}", json=body), 404, "not-found")
        assert_problem(client.post(f"/v1/keys/Bad%20Name/{path}", json=body), 404)
    assert_problem(client.post(f"/v1/keys/{name}/seal", content=b"x", headers=BINARY), 404)


# ---- batches ---------------------------------------------------------------------------------


def test_batches_answer_in_order_with_item_errors(client: httpx.Client) -> None:
    name, mac_key = create(client, "chacha20-poly1305"), create(client, "hmac-sha512")
    items = [
        {"plaintext": b64(b"one")},
        {"plaintext": "not base64"},
        {"plaintext": b64(b"3"), "aad": b64(b"a")},
        {"plain": "eA=="},
        {"plaintext": b64(b"")},
    ]
    sealed = client.post(f"/v1/keys/{name}/seal/batch", json={"items": items})
    assert sealed.status_code == 200
    out = sealed.json()["items"]
    assert len(out) == 5
    assert out[1]["error"]["status"] == 400 and out[1]["error"]["type"].endswith(
        "/invalid-encoding"
    )
    assert out[3]["error"]["status"] == 422
    good = [out[0], out[2], out[4]]
    assert all(set(o) == {"ciphertext", "key_version"} for o in good)

    opened = client.post(
        f"/v1/keys/{name}/open/batch",
        json={"items": [{"ciphertext": out[0]["ciphertext"]}, {"ciphertext": out[2]["ciphertext"]},
                        {"ciphertext": out[2]["ciphertext"], "aad": b64(b"a")}, {"ciphertext": 5}]},
    ).json()["items"]  # fmt: skip
    assert opened[0] == {"plaintext": b64(b"one"), "key_version": 1}
    assert opened[1]["error"]["type"].endswith("/authentication-failed")
    assert opened[2] == {"plaintext": b64(b"3"), "key_version": 1}
    assert opened[3]["error"]["status"] == 422

    client.post(f"/v1/keys/{name}/rotate")
    rewrapped = client.post(
        f"/v1/keys/{name}/rewrap/batch",
        json={"items": [{"ciphertext": out[0]["ciphertext"]}, {"ciphertext": "junk"}]},
    ).json()["items"]
    assert rewrapped[0]["key_version"] == 2
    assert rewrapped[1]["error"]["type"].endswith("/authentication-failed")

    macs = client.post(
        f"/v1/keys/{mac_key}/mac/batch", json={"items": [{"data": b64(b"a")}, {"data": b64(b"b")}]}
    ).json()["items"]
    assert [m["key_version"] for m in macs] == [1, 1]
    verified = client.post(
        f"/v1/keys/{mac_key}/verify/batch",
        json={"items": [{"data": b64(b"a"), "tag": macs[0]["tag"]},
                        {"data": b64(b"a"), "tag": macs[1]["tag"]},
                        {"data": b64(b"a"), "tag": "archcrypt:v1:xx"}]},
    ).json()["items"]  # fmt: skip
    assert verified[:2] == [{"valid": True}, {"valid": False}]
    assert verified[2]["error"]["type"].endswith("/invalid-ciphertext")

    assert client.post(f"/v1/keys/{name}/seal/batch", json={"items": []}).json() == {"items": []}
    assert_problem(client.post(f"/v1/keys/{name}/seal/batch", json={"items": [{}] * 1025}), 422)
    assert_problem(client.post(f"/v1/keys/{name}/seal/batch", json={"item": []}), 422)
    assert_problem(client.post(f"/v1/keys/{name}/seal/batch", json=[1]), 422)


def test_batch_at_its_limits(sqlite_deployment: Deployment) -> None:
    """ARCHCRYPT_MAX_BATCH_MESSAGES (1024) items of ARCHCRYPT_MAX_BATCH_BYTES (4 MiB) in all,
    with AAD: accepted (the body limit follows from them); one byte more: 413. (The limits
    are the routes', the same on either store: one backend is enough.)"""
    with sqlite_deployment.client() as client:
        at_limits(client)


def at_limits(client: httpx.Client) -> None:
    name = create(client)
    plaintext, aad = b64(bytes(4095)), b64(b"a")
    items = [{"plaintext": plaintext, "aad": aad} for _ in range(1024)]
    full = client.post(f"/v1/keys/{name}/seal/batch", json={"items": items})
    assert full.status_code == 200, full.text[:300]
    assert all(set(i) == {"ciphertext", "key_version"} for i in full.json()["items"])
    items[0] = {"plaintext": b64(bytes(4096)), "aad": aad}
    assert_problem(client.post(f"/v1/keys/{name}/seal/batch", json={"items": items}), 413)
    assert_problem(
        client.post(f"/v1/keys/{name}/seal/batch", json={"items": [{"plaintext": ""}] * 1025}),
        422,
    )


# ---- usage and the nonce budget ---------------------------------------------------------------


def test_usage_counts_seals_and_macs_per_version(deployment: Deployment) -> None:
    with deployment.client() as client:
        name, mac_key = create(client), create(client, "hmac-sha256")
        for _ in range(3):
            seal(client, name, b"x")
        client.post(f"/v1/keys/{name}/seal/batch", json={"items": [{"plaintext": "eA=="}] * 4})
        client.post(f"/v1/keys/{name}/datakey", json={})
        ciphertext = seal(client, name, b"y")["ciphertext"]
        open_(client, name, ciphertext)  # opens are not usage
        client.post(f"/v1/keys/{name}/rotate")
        client.post(f"/v1/keys/{name}/rewrap", json={"ciphertext": ciphertext})
        client.post(f"/v1/keys/{mac_key}/mac/batch", json={"items": [{"data": "eA=="}] * 2})

        def usage(key: str) -> list[int]:
            return [v["usage"] for v in client.get(f"/v1/keys/{key}").json()["versions"]]

        assert usage(name) == [9, 1]
        assert usage(mac_key) == [2]
    # and the store has it once flushed (about every second), for every instance to see
    with deployment.client(len(deployment.servers) - 1) as last:
        wait_for(
            lambda: [v["usage"] for v in last.get(f"/v1/keys/{name}").json()["versions"]] == [9, 1],
            5,
            "usage flushed to the store",
        )


def test_chacha20_nonce_budget(deployment: Deployment) -> None:
    """BUDGET seals per version at most; then rotation (postgres servers) or a 409 refusal
    (sqlite server), and the store's claim never passes the budget."""
    with deployment.client() as client:
        name = create(client, "chacha20-poly1305")
        first = client.post(
            f"/v1/keys/{name}/seal/batch", json={"items": [{"plaintext": "eA=="}] * BUDGET}
        ).json()["items"]
        assert [i["key_version"] for i in first] == [1] * BUDGET
        meta = client.get(f"/v1/keys/{name}").json()
        assert meta["nonce_budget"] == BUDGET and meta["versions"][0]["nonces_reserved"] == BUDGET
        nonces = {split_text(i["ciphertext"])[1][:12] for i in first}
        assert len(nonces) == BUDGET
        if deployment.backend == "sqlite":
            refused = client.post(f"/v1/keys/{name}/seal", json={"plaintext": "eA=="})
            assert_problem(refused, 409, "nonce-budget-exhausted")
            assert client.post(f"/v1/keys/{name}/rotate").json()["primary_version"] == 2
        else:
            assert seal(client, name, b"x")["key_version"] == 2  # rotated by the service
        assert seal(client, name, b"x")["key_version"] == 2
        # the old version still opens
        assert open_(client, name, first[0]["ciphertext"]).status_code == 200
        # xchacha20-poly1305 and HMAC keys have no such budget
        other = create(client)
        many = client.post(
            f"/v1/keys/{other}/seal/batch", json={"items": [{"plaintext": "eA=="}] * (BUDGET + 5)}
        ).json()["items"]
        assert {i["key_version"] for i in many} == {1}
        assert client.get(f"/v1/keys/{other}").json()["nonce_budget"] is None


def test_metrics_per_key_are_bounded(deployment: Deployment) -> None:
    with deployment.client() as client:
        names = [create(client, "chacha20-poly1305") for _ in range(6)]
        for name in names:
            seal(client, name, b"x")
        open_(client, names[0], "archcrypt:v1:AAAA")
        missing = unique("missing")
        assert client.post(f"/v1/keys/{missing}/seal", json={"plaintext": ""}).status_code == 404
        text = client.get("/metrics").text
    assert f'key="{missing}"' not in text  # a name that does not exist takes no label
    assert metric_value(text, "archcrypt_key_operations_total", operation="seal", outcome="ok") >= 6
    labels = {
        line.split('key="', 1)[1].split('"', 1)[0]
        for line in text.splitlines()
        if line.startswith("archcrypt_key_operations_total{")
    }
    if deployment.backend == "sqlite":  # ARCHCRYPT_METRICS_KEY_LABELS=4
        assert len(labels - {"other"}) <= 4 and "other" in labels
    else:
        assert set(names) <= labels
        assert metric_value(text, "archcrypt_key_operations_total", key=names[0],
                            operation="open", outcome="auth_failed") == 1  # fmt: skip
    # the nonce gauges come from the store every few seconds
    with deployment.client() as client:
        wait_for(
            lambda: metric_value(client.get("/metrics").text, "archcrypt_key_nonce_budget") > 0,
            8,
            "nonce budget gauges",
        )
        text = client.get("/metrics").text
    assert metric_value(text, "archcrypt_key_nonce_budget") % BUDGET == 0
    assert metric_value(text, "archcrypt_key_nonces_reserved") >= 1
    assert metric_value(text, "archcrypt_key_primary_version") >= 1
    linted = promtool("check", "metrics", stdin=text)
    assert linted.returncode == 0, linted.stdout + linted.stderr


# ---- every error is problem+json ----------------------------------------------------------------


def test_bad_bodies_are_problems(client: httpx.Client) -> None:
    name = create(client)
    for path in ("seal", "open", "rewrap", "datakey", "seal/batch"):
        assert_problem(client.post(f"/v1/keys/{name}/{path}", content=b"{", headers=JSON), 400)
        assert_problem(client.post(f"/v1/keys/{name}/{path}", content=b"x",
                                   headers={"content-type": "text/plain"}), 415)  # fmt: skip
    assert_problem(client.post(f"/v1/keys/{name}/seal", json={"plaintext": "eA==", "n": 1}), 422)
    assert_problem(client.post(f"/v1/keys/{name}/seal", content=b"", headers=JSON), 422)
    assert_problem(client.post(f"/v1/keys/{name}/open", json={"ciphertext": 1}), 422)
    assert_problem(client.put(f"/v1/keys/{name}"), 405)


def test_openapi_documents_every_key_route(sqlite_deployment: Deployment) -> None:
    """Each route names its scope, documents its problems, and every reference resolves (the
    named-key models do not collide with the raw-key routes' models of the same shape)."""
    with sqlite_deployment.client() as client:
        spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    paths = {p: ops for p, ops in spec["paths"].items() if p.startswith("/v1/keys")}
    assert len(paths) == 15
    for path, operations in paths.items():
        for method, operation in operations.items():
            scope = operation["x-archcrypt-scope"]
            assert scope in ("keys:admin", "keys:read") or scope == (
                f"key:{{name}}:{path.split('/')[4] if len(path.split('/')) > 4 else ''}"
            ), (path, method, scope)
            assert {"404", "409", "422"} <= set(operation["responses"]), (path, method)
    seal_body = paths["/v1/keys/{name}/seal"]["post"]["requestBody"]["content"]
    json_schema = seal_body["application/json"]["schema"]
    if "$ref" in json_schema:
        json_schema = schemas[json_schema["$ref"].rsplit("/", 1)[1]]
    assert set(json_schema["properties"]) == {"plaintext", "aad"}
    assert "application/octet-stream" in seal_body
    text = json.dumps(paths)
    for name in {part.split('"')[0] for part in text.split("#/components/schemas/")[1:]}:
        assert name in schemas, name


# ---- PostgreSQL: instances sharing one store ---------------------------------------------------


@pytest.fixture
def pg(postgres_deployment: Deployment) -> Deployment:
    return postgres_deployment


def test_instances_see_each_others_rotation_within_a_second(pg: Deployment) -> None:
    with pg.client(0) as a, pg.client(1) as b:
        name = create(a)
        assert seal(b, name, b"x")["key_version"] == 1  # b has it cached now
        for expected in (2, 3):
            assert a.post(f"/v1/keys/{name}/rotate").json()["primary_version"] == expected
            waited = wait_for(
                lambda expected=expected: seal(b, name, b"x")["key_version"] == expected,
                1.0,
                "b seals with the new version",
            )
            assert waited < 1.0
        # and the other way round, with a policy change
        old = seal(a, name, b"old")["ciphertext"]
        b.post(f"/v1/keys/{name}/rotate")
        b.patch(f"/v1/keys/{name}", json={"min_decryption_version": 4})
        wait_for(
            lambda: open_(a, name, old).status_code == 409, 1.0, "a refuses the retired version"
        )
        # a ciphertext of a version this instance has not heard of yet still opens: it reloads
        c_key = create(a)
        seal(b, c_key, b"x")
        b.post(f"/v1/keys/{c_key}/rotate")
        fresh = seal(a, c_key, b"new")  # a may or may not have the notification yet
        assert open_(b, c_key, fresh["ciphertext"]).status_code == 200
        # deletion reaches the other instance too
        a.patch(f"/v1/keys/{c_key}", json={"deletion_allowed": True})
        assert a.delete(f"/v1/keys/{c_key}").status_code == 204
        wait_for(
            lambda: b.post(f"/v1/keys/{c_key}/seal", json={"plaintext": "eA=="}).status_code == 404,
            1.0,
            "b forgets the deleted key",
        )


def test_concurrent_create_gives_one_key_and_one_409(pg: Deployment) -> None:
    with pg.client(0) as a, pg.client(1) as b:
        for _ in range(8):
            name = unique("race")
            barrier = threading.Barrier(2)
            results: dict[str, httpx.Response] = {}

            def post(
                label: str,
                http: httpx.Client,
                key_type: str,
                name: str = name,
                barrier: threading.Barrier = barrier,
                results: dict[str, httpx.Response] = results,
            ) -> None:
                barrier.wait()
                results[label] = http.post("/v1/keys", json={"name": name, "type": key_type})

            threads = [
                threading.Thread(target=post, args=("a", a, "xchacha20-poly1305")),
                threading.Thread(target=post, args=("b", b, "hmac-sha256")),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            statuses = sorted(r.status_code for r in results.values())
            assert statuses == [201, 409], {k: r.text for k, r in results.items()}
            loser = next(r for r in results.values() if r.status_code == 409)
            assert_problem(loser, 409, "key-exists")
            winner = next(r for r in results.values() if r.status_code == 201).json()
            rows = [r for r in pg.rows() if r[0] == name]
            assert len(rows) == 1 and rows[0][2] == winner["type"]
            assert a.get(f"/v1/keys/{name}").json() == b.get(f"/v1/keys/{name}").json()


def test_concurrent_budget_exhaustion_rotates_once(pg: Deployment) -> None:
    """Two instances sealing one chacha20-poly1305 key past its budget: together they never
    exceed it per version, and the key is rotated once per budget, not once per instance."""
    with pg.client(0) as a, pg.client(1) as b:
        name = create(a, "chacha20-poly1305")
        versions: list[int] = []

        def run(http: httpx.Client) -> None:
            for _ in range(3):
                items = http.post(
                    f"/v1/keys/{name}/seal/batch", json={"items": [{"plaintext": "eA=="}] * 20}
                ).json()["items"]
                versions.extend(i["key_version"] for i in items)

        threads = [threading.Thread(target=run, args=(h,)) for h in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(versions) == 120
        for version in set(versions):
            assert versions.count(version) <= BUDGET
        meta = a.get(f"/v1/keys/{name}").json()
        assert meta["primary_version"] == max(versions) == 2
        assert all(v["nonces_reserved"] <= BUDGET for v in meta["versions"])


def test_keys_survive_a_restart_postgres(
    pg: Deployment, postgres: Postgres, tmp_path: Path
) -> None:
    with pg.client(0) as a:
        name, mac_key = create(a, "chacha20-poly1305"), create(a, "hmac-sha384")
        sealed = seal(a, name, b"kept", b"aad")["ciphertext"]
        tag = a.post(f"/v1/keys/{mac_key}/mac", json={"data": "eA=="}).json()["tag"]
        before = a.get(f"/v1/keys/{name}").json()
    # a new instance, started after the keys were made, on the same store and KEK
    with launch(tmp_path, **postgres_env(postgres, pg.kek_file)) as launched:
        server = launched.wait_ready()
        with httpx.Client(base_url=server.base_url, timeout=30) as c:
            assert unb64(open_(c, name, sealed, b"aad").json()["plaintext"]) == b"kept"
            assert c.post(
                f"/v1/keys/{mac_key}/verify", json={"data": "eA==", "tag": tag}
            ).json() == {"valid": True}
            after = c.get(f"/v1/keys/{name}").json()
    assert after["versions"][0]["created_at"] == before["versions"][0]["created_at"]
    assert after["versions"][0]["nonces_reserved"] >= 1


def test_a_store_outage_keeps_cached_keys_working(pg: Deployment, postgres: Postgres) -> None:
    """PostgreSQL stopped: cached keys still seal and open, what needs the store is a 503
    problem (soon, not after a long wait); restarted: writes work again and the instances
    hear each other again (the pool replaces dead connections, the listener reconnects)."""
    with pg.client(0) as a, pg.client(1) as b:
        name = create(a)
        sealed = seal(b, name, b"cached")["ciphertext"]
        postgres.control("stop")
        try:
            assert seal(b, name, b"still")["key_version"] == 1
            assert unb64(open_(b, name, sealed).json()["plaintext"]) == b"cached"
            start = time.monotonic()
            down = a.post("/v1/keys", json={"name": unique()})
            assert_problem(down, 503, "keystore-unavailable")
            assert down.headers["retry-after"] == "1" and time.monotonic() - start < 10
            assert "postgres" not in down.text.lower()  # the cause is logged, not sent
        finally:
            postgres.control("start")
        wait_for(lambda: a.post(f"/v1/keys/{name}/rotate").status_code == 200, 10, "store back")
        wait_for(lambda: seal(b, name, b"x")["key_version"] == 2, 5, "b hears rotations again")


def own_database(postgres: Postgres, name: str) -> str:
    """A fresh database in the session's cluster: for a test that rewraps every row under
    another KEK, which the module's two servers (holding only their KEK) must not see."""
    with psycopg.connect(postgres.url.replace(f"/{DATABASE}?", "/postgres?"), autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")  # a name of the test's own, not input
    return postgres.url.replace(f"/{DATABASE}?", f"/{name}?")


def test_cli_on_postgres_and_kek_rotation(postgres: Postgres, tmp_path: Path) -> None:
    """`archcrypt keys list|create|rotate|show` against PostgreSQL while a server runs on it:
    the server uses what the CLI made and seals with the CLI's rotation within a second;
    `archcrypt kek rotate` rewraps every version, and a server holding only the new KEK
    opens what every version sealed."""
    url = own_database(postgres, f"cli_{uuid.uuid4().hex[:8]}")
    old = uuid.uuid4().bytes * 2
    kek_file = write_kek(tmp_path / "kek", old)
    env = postgres_env(postgres, kek_file, ARCHCRYPT_KEYSTORE_URL=url)
    rows = postgres_rows(url)
    made = cli(env, "keys", "create", "cli-aead")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["type"] == "xchacha20-poly1305"
    assert cli(env, "keys", "create", "cli-mac", "--type", "hmac-sha256").returncode == 0
    (tmp_path / "first").mkdir()
    with launch(tmp_path / "first", **env) as launched:
        server = launched.wait_ready()
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            v1 = seal(client, "cli-aead", b"sealed by version one")
            assert v1["key_version"] == 1
            tag = client.post("/v1/keys/cli-mac/mac", json={"data": "eA=="}).json()["tag"]
            assert cli(env, "keys", "rotate", "cli-aead").returncode == 0
            waited = wait_for(
                lambda: seal(client, "cli-aead", b"x")["key_version"] == 2, 1.0, "CLI rotation"
            )
            assert waited < 1.0
            v2 = seal(client, "cli-aead", b"sealed by version two")
        shown = cli(env, "keys", "show", "cli-aead")
        assert shown.returncode == 0, shown.stderr
        meta = json.loads(shown.stdout)
        assert meta["primary_version"] == 2 and [v["version"] for v in meta["versions"]] == [1, 2]
        listed = cli(env, "keys", "list", "--json")
        assert {k["name"] for k in json.loads(listed.stdout)["keys"]} == {"cli-aead", "cli-mac"}
        assert cli(env, "keys", "list").returncode == 0
        missing = cli(env, "keys", "rotate", "nope")
        assert missing.returncode != 0 and "no key named 'nope'" in missing.stderr

        # the rollout: the new KEK first, the old kept after it; then every row rewrapped
        new = uuid.uuid4().bytes * 2
        write_kek(kek_file, new, old)
        rotated = cli(env, "kek", "rotate")
        assert rotated.returncode == 0, rotated.stderr
        assert "rewrapped 3 key versions" in rotated.stdout
        assert {r[3] for r in rows()} == {kek_id(new)}
        # the running server (old KEK only) still opens both versions from its cache
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            for sealed in (v1, v2):
                assert open_(client, "cli-aead", sealed["ciphertext"]).status_code == 200
    # a server that holds only the new KEK opens and verifies every version
    write_kek(kek_file, new)
    (tmp_path / "second").mkdir()
    with launch(tmp_path / "second", **env) as launched:
        server = launched.wait_ready()
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            for sealed, plaintext in ((v1, b"sealed by version one"),
                                      (v2, b"sealed by version two")):  # fmt: skip
                opened = open_(client, "cli-aead", sealed["ciphertext"])
                assert opened.status_code == 200, opened.text
                assert unb64(opened.json()["plaintext"]) == plaintext
            verified = client.post("/v1/keys/cli-mac/verify", json={"data": "eA==", "tag": tag})
            assert verified.json() == {"valid": True}
    for name, version, key_type, _, wrapped in rows():
        assert len(unwrap(new, name, version, key_type, bytes(wrapped))) == 32


# ---- SQLite: restart, the CLI against a running server, KEK rotation ----------------------------


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def cli(env: dict[str, str], *args: str) -> CliResult:
    """`archcrypt ARGS` in this process (click's runner: the real command, no interpreter
    start-up), with `env` as its environment; a separate connection to the store, as a
    separate process would have."""
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


def test_sqlite_keys_survive_restarts_and_kek_rotation(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = sqlite_env(data)
    with launch(tmp_path, **env) as launched:
        server = launched.wait_ready()
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            name = create(client, "chacha20-poly1305")
            sealed = seal(client, name, b"persisted")["ciphertext"]
            seal(client, name, b"again")
            # the CLI works on the same store while the server runs ...
            made = cli(env, "keys", "create", "from-cli", "--type", "hmac-sha256")
            assert made.returncode == 0, made.stderr
            assert json.loads(made.stdout)["type"] == "hmac-sha256"
            assert cli(env, "keys", "rotate", name).returncode == 0
            # ... and the server sees it within a second
            versions: list[int] = []  # every seal is usage of the version it used
            wait_for(
                lambda: (
                    versions.append(seal(client, name, b"x")["key_version"]) or versions[-1] == 2
                ),
                1.0,
                "CLI rotation",
            )
            assert client.post("/v1/keys/from-cli/mac", json={"data": "eA=="}).status_code == 200
    kek = data / "kek"
    assert kek.stat().st_mode & 0o777 == 0o600
    log = launched.server.log.read_text()
    assert "generated a KEK" in log
    # nothing secret in the log: not the KEK, not a version's material
    (kek_material,) = read_keks(kek)
    rows = sqlite_rows(data / "keys.sqlite3")()
    secret = [kek_material, *(unwrap(kek_material, n, v, t, bytes(w)) for n, v, t, _, w in rows)]
    assert len(secret) == 4 and all(b64(x) not in log and x.hex() not in log for x in secret)
    old_ids = {r[3] for r in sqlite_rows(data / "keys.sqlite3")()}

    rotated = cli(env, "kek", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert "rewrapped 3 key versions" in rotated.stdout
    new_ids = {r[3] for r in sqlite_rows(data / "keys.sqlite3")()}
    (new_kek,) = read_keks(kek)
    assert new_ids == {kek_id(new_kek)} and not (new_ids & old_ids)
    assert kek.stat().st_mode & 0o777 == 0o600

    shown = cli(env, "keys", "show", name)
    assert shown.returncode == 0, shown.stderr
    usage = [v["usage"] for v in json.loads(shown.stdout)["versions"]]
    assert usage == [2 + versions.count(1), versions.count(2)]
    listed = cli(env, "keys", "list", "--json")
    assert {k["name"] for k in json.loads(listed.stdout)["keys"]} == {name, "from-cli"}
    assert cli(env, "keys", "list").returncode == 0
    missing = cli(env, "keys", "rotate", "nope")
    assert missing.returncode != 0 and "no key named 'nope'" in missing.stderr

    # restarted under the new KEK: the old ciphertext still opens, usage is kept
    (tmp_path / "again").mkdir()
    with launch(tmp_path / "again", **env) as launched:
        server = launched.wait_ready()
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            assert unb64(open_(client, name, sealed).json()["plaintext"]) == b"persisted"
            assert client.get(f"/v1/keys/{name}").json()["primary_version"] == 2
    assert "generated a KEK" not in launched.server.log.read_text()


def test_kek_file_ring_and_rotation(tmp_path: Path) -> None:
    """ARCHCRYPT_KEK_FILE: rotate to --new-kek-file; a server holding only the old KEK then
    refuses to start, naming the KEK it lacks; one holding the new KEK opens everything."""
    data = tmp_path / "data"
    old = write_kek(tmp_path / "old.kek", uuid.uuid4().bytes * 2)
    env = sqlite_env(data, ARCHCRYPT_KEK_FILE=str(old))
    assert cli(env, "keys", "create", "ring").returncode == 0
    assert not (data / "kek").exists()  # no generated KEK beside the store
    new = tmp_path / "new.kek"
    rotated = cli(env, "kek", "rotate", "--new-kek-file", str(new))
    assert rotated.returncode == 0, rotated.stderr
    assert new.stat().st_mode & 0o777 == 0o600
    (new_kek,) = read_keks(new)
    assert {r[3] for r in sqlite_rows(data / "keys.sqlite3")()} == {kek_id(new_kek)}
    with launch(tmp_path, **env) as launched:
        assert launched.process.wait(timeout=30) != 0
    log = launched.server.log.read_text()
    assert kek_id(new_kek) in log and "does not hold" in log
    # a ring: new first, old after, as during a rollout
    write_kek(tmp_path / "ring.kek", new_kek, read_keks(old)[0])
    env["ARCHCRYPT_KEK_FILE"] = str(tmp_path / "ring.kek")
    shown = cli(env, "keys", "show", "ring")
    assert shown.returncode == 0, shown.stderr


# ---- last: nothing secret in the servers' logs ------------------------------------------------


def test_no_plaintext_or_material_in_the_server_logs(
    sqlite_deployment: Deployment, postgres_deployment: Deployment
) -> None:
    """The module's servers log their audit lines to stdout (their log files): none of the
    plaintexts sealed above, nor any stored version's material, appears there in any form."""
    for deployment in (sqlite_deployment, postgres_deployment):  # never vacuous, run alone
        with deployment.client() as client:
            seal(client, create(client), uuid.uuid4().bytes)
    secrets_: list[bytes] = list(SENT)
    logs = b""
    for deployment in (sqlite_deployment, postgres_deployment):
        keks = {kek_id(k): k for k in read_keks(deployment.kek_file)}
        for name, version, key_type, kid, wrapped in deployment.rows():
            secrets_.append(unwrap(keks[kid], name, version, key_type, bytes(wrapped)))
        logs += b"\n".join(server.log.read_bytes() for server in deployment.servers)
    assert len(SENT) >= 2 and len(secrets_) >= len(SENT) + 2
    assert b'"operation":"keys.seal"' in logs  # the audit lines are there to be searched
    for value in secrets_:
        forms = {value, base64.b64encode(value), value.hex().encode()}
        forms |= {base64.b64encode(value[:48]), value[:48]}
        for form in forms:
            assert form not in logs, f"a secret ({len(value)} bytes) appears in a server log"
