"""Soak: one archcrypt server under wrk for minutes, every route in the mix, every answer
checked, the server's memory and descriptors sampled every second.

- The load: wrk with tests/drill/soak.lua over a rotation of requests on every route (JSON,
  `application/octet-stream`, the batch of every operation, named keys, the probes). Each
  answer wrk gets is compared with what pyca/cryptography, hmac or hashlib computed for that
  request (the expected base64 or raw bytes must be in the body), matched to its request by
  the X-Request-ID the server echoes.
- A sampler beside it sends fresh random requests (a few a second) and checks them the same
  way, named-key ciphertexts opened with the key material unwrapped from the store by an
  independent XChaCha20-Poly1305 (tests/service/helpers.py), so the random-nonce routes are
  checked too.
- Every second: the server's RSS (VmRSS), open descriptors (/proc/PID/fd), threads.

Figures: requests/s, p50/p99 (wrk's), errors (socket errors, unexpected statuses, wrong
answers: all must be 0), RSS growth from the end of the warm-up to the end (median of ten
samples at each end; under 10 %), descriptors after the warm-up (min..max).
"""

from __future__ import annotations

import base64
import hashlib
import hmac as std_hmac
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives import poly1305
from cryptography.hazmat.primitives.ciphers import Cipher, modes

from tests.service.helpers import free_port, reference_open, reference_seal

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LUA = HERE / "soak.lua"

KEY = bytes(range(32))
NONCE = bytes(range(100, 112))
XNONCE = bytes(range(50, 74))
CAMELLIA_KEY = bytes(range(16, 48))
HMAC_KEY = b"soak hmac key"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def camellia_ecb(key: bytes, data: bytes, decrypt: bool = False) -> bytes:
    cipher = Cipher(Camellia(key), modes.ECB())
    op = cipher.decryptor() if decrypt else cipher.encryptor()
    return op.update(data) + op.finalize()


def payload(size: int, salt: int = 0) -> bytes:
    return bytes((i * 131 + 7 + salt) & 0xFF for i in range(size))


@dataclass
class Case:
    name: str
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    status: int
    expect: list[bytes]
    weight: int = 1


def _json_case(
    name: str, path: str, body: dict[str, Any], expect: list[bytes], weight: int = 1
) -> Case:
    return Case(
        name,
        "POST",
        path,
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
        200,
        expect,
        weight,
    )


def _raw_case(
    name: str, path: str, body: bytes, headers: dict[str, str], expect: list[bytes], weight: int = 1
) -> Case:
    return Case(
        name,
        "POST",
        path,
        body,
        {"Content-Type": "application/octet-stream", **headers},
        200,
        expect,
        weight,
    )


def cases(named: dict[str, Any]) -> list[Case]:
    """The rotation. `named`: the named keys made at start (names, a ciphertext and a tag
    made by the service, and the plaintexts they hold)."""
    out: list[Case] = []
    for size in (64, 1024, 16384):
        pt = payload(size)
        aad = payload(size % 97, 3)
        for alg, nonce in (("chacha20-poly1305", NONCE), ("xchacha20-poly1305", XNONCE)):
            sealed = reference_seal(alg, KEY, nonce, pt, aad)
            base = f"/v1/aead/{alg}"
            out.append(
                _json_case(
                    f"json seal {alg} {size}",
                    base + "/seal",
                    {"key": b64(KEY), "nonce": b64(nonce), "plaintext": b64(pt), "aad": b64(aad)},
                    [b64(sealed).encode()],
                    2,
                )
            )
            out.append(
                _json_case(
                    f"json open {alg} {size}",
                    base + "/open",
                    {
                        "key": b64(KEY),
                        "nonce": b64(nonce),
                        "ciphertext": b64(sealed),
                        "aad": b64(aad),
                    },
                    [b64(pt).encode()],
                    2,
                )
            )
            headers = {
                "Archcrypt-Key": b64(KEY),
                "Archcrypt-Nonce": b64(nonce),
                "Archcrypt-AAD": b64(aad),
            }
            out.append(
                _raw_case(f"binary seal {alg} {size}", base + "/seal", pt, headers, [sealed], 2)
            )
            out.append(
                _raw_case(f"binary open {alg} {size}", base + "/open", sealed, headers, [pt], 2)
            )
        tag = poly1305.Poly1305.generate_tag(KEY, pt)
        out.append(
            _json_case(
                f"json mac poly1305 {size}",
                "/v1/mac/poly1305",
                {"key": b64(KEY), "data": b64(pt)},
                [b64(tag).encode()],
            )
        )
        out.append(
            _raw_case(
                f"binary mac poly1305 {size}",
                "/v1/mac/poly1305",
                pt,
                {"Archcrypt-Key": b64(KEY)},
                [b64(tag).encode()],
            )
        )
        for alg in ("sha256", "sha512"):
            mac = std_hmac.new(HMAC_KEY, pt, alg).digest()
            out.append(
                _json_case(
                    f"json mac hmac-{alg} {size}",
                    f"/v1/mac/hmac-{alg}",
                    {"key": b64(HMAC_KEY), "data": b64(pt)},
                    [b64(mac).encode()],
                )
            )
            out.append(
                _json_case(
                    f"json verify hmac-{alg} {size}",
                    f"/v1/mac/hmac-{alg}/verify",
                    {"key": b64(HMAC_KEY), "data": b64(pt), "tag": b64(mac)},
                    [b'"valid":true'],
                )
            )
            out.append(
                _raw_case(
                    f"binary verify hmac-{alg} {size}",
                    f"/v1/mac/hmac-{alg}/verify",
                    pt,
                    {"Archcrypt-Key": b64(HMAC_KEY), "Archcrypt-Tag": b64(mac)},
                    [b'"valid":true'],
                )
            )
            digest = hashlib.new(alg, pt).digest()
            out.append(
                _json_case(
                    f"json hash {alg} {size}",
                    f"/v1/hash/{alg}",
                    {"data": b64(pt)},
                    [b64(digest).encode()],
                )
            )
            out.append(
                _raw_case(
                    f"binary hash {alg} {size}", f"/v1/hash/{alg}", pt, {}, [b64(digest).encode()]
                )
            )
        blocks = pt[: size - size % 16]
        ct = camellia_ecb(CAMELLIA_KEY, blocks)
        out.append(
            _json_case(
                f"json ecb encrypt {size}",
                "/v1/ecb/camellia/encrypt",
                {"key": b64(CAMELLIA_KEY), "data": b64(blocks)},
                [b64(ct).encode()],
            )
        )
        out.append(
            _raw_case(
                f"binary ecb decrypt {size}",
                "/v1/ecb/camellia/decrypt",
                ct,
                {"Archcrypt-Key": b64(CAMELLIA_KEY)},
                [blocks],
            )
        )

    # the batch of every operation, 16 items of 256 bytes
    items = [payload(256, i) for i in range(16)]
    sealed_items = [reference_seal("chacha20-poly1305", KEY, NONCE, p, b"") for p in items]
    out.append(
        _json_case(
            "batch seal",
            "/v1/aead/chacha20-poly1305/seal/batch",
            {"items": [{"key": b64(KEY), "nonce": b64(NONCE), "plaintext": b64(p)} for p in items]},
            [b64(s).encode() for s in sealed_items],
        )
    )
    out.append(
        _json_case(
            "batch open",
            "/v1/aead/chacha20-poly1305/open/batch",
            {
                "items": [
                    {"key": b64(KEY), "nonce": b64(NONCE), "ciphertext": b64(s)}
                    for s in sealed_items
                ]
            },
            [b64(p).encode() for p in items],
        )
    )
    tags = [std_hmac.new(HMAC_KEY, p, "sha256").digest() for p in items]
    out.append(
        _json_case(
            "batch mac",
            "/v1/mac/hmac-sha256/batch",
            {"items": [{"key": b64(HMAC_KEY), "data": b64(p)} for p in items]},
            [b64(t).encode() for t in tags],
        )
    )
    out.append(
        _json_case(
            "batch verify",
            "/v1/mac/hmac-sha256/verify/batch",
            {
                "items": [
                    {"key": b64(HMAC_KEY), "data": b64(p), "tag": b64(t)}
                    for p, t in zip(items, tags, strict=True)
                ]
            },
            [b'"valid":true'],
        )
    )
    out.append(
        _json_case(
            "batch hash",
            "/v1/hash/sha256/batch",
            {"messages": [b64(p) for p in items]},
            [b64(hashlib.sha256(p).digest()).encode() for p in items],
        )
    )
    out.append(
        _json_case(
            "batch ecb",
            "/v1/ecb/camellia/encrypt/batch",
            {"items": [{"key": b64(CAMELLIA_KEY), "data": b64(p)} for p in items]},
            [b64(camellia_ecb(CAMELLIA_KEY, p)).encode() for p in items],
        )
    )

    # named keys: seal answers a fresh ciphertext (checked by the sampler, which can unwrap
    # the key); open and verify of what the service made at start must give back our data
    aead, mac_key = named["aead"], named["hmac"]
    out.append(
        _json_case(
            "named seal",
            f"/v1/keys/{aead}/seal",
            {"plaintext": b64(named["plaintext"])},
            [b'"ciphertext":"archcrypt:v1:'],
            2,
        )
    )
    out.append(
        _json_case(
            "named open",
            f"/v1/keys/{aead}/open",
            {"ciphertext": named["ciphertext"]},
            [b64(named["plaintext"]).encode()],
            2,
        )
    )
    out.append(
        _raw_case(
            "named binary open",
            f"/v1/keys/{aead}/open",
            named["binary"],
            {},
            [named["plaintext"]],
            2,
        )
    )
    out.append(
        _json_case(
            "named verify",
            f"/v1/keys/{mac_key}/verify",
            {"data": b64(named["plaintext"]), "tag": named["tag"]},
            [b'"valid":true'],
        )
    )
    out.append(
        _json_case(
            "named open batch",
            f"/v1/keys/{aead}/open/batch",
            {"items": [{"ciphertext": named["ciphertext"]}] * 8},
            [b64(named["plaintext"]).encode()],
        )
    )
    # rewrap and the data keys answer fresh ciphertexts: here their shape, in the sampler
    # their content (opened with the unwrapped key); HMAC is deterministic, so the named
    # mac must give back the tag the service made at start
    out.append(
        _json_case(
            "named rewrap",
            f"/v1/keys/{aead}/rewrap",
            {"ciphertext": named["ciphertext"]},
            [b'"ciphertext":"archcrypt:v1:', b'"key_version":1'],
        )
    )
    out.append(
        _json_case(
            "named datakey",
            f"/v1/keys/{aead}/datakey",
            {"bits": 256},
            [b'"plaintext":"', b'"ciphertext":"archcrypt:v1:', b'"key_version":1'],
        )
    )
    out.append(
        _json_case(
            "named datakey wrapped",
            f"/v1/keys/{aead}/datakey/wrapped",
            {"bits": 512},
            [b'"ciphertext":"archcrypt:v1:', b'"key_version":1'],
        )
    )
    out.append(
        _json_case(
            "named mac",
            f"/v1/keys/{mac_key}/mac",
            {"data": b64(named["plaintext"])},
            [f'"tag":"{named["tag"]}"'.encode()],
        )
    )
    for path in ("/livez", "/readyz"):
        out.append(Case(f"GET {path}", "GET", path, None, {}, 200, []))
    # what the library in this process selects is what the server must report, throughout
    out.append(Case("GET /v1/backends", "GET", "/v1/backends", None, {}, 200, backends_expect()))
    out.append(
        Case(
            "GET /metrics",
            "GET",
            "/metrics",
            None,
            {},
            200,
            [
                b"# TYPE archcrypt_http_requests_total counter",
                b"archcrypt_build_info{",
                b"archcrypt_operations_total{",
            ],
        )
    )
    out.append(
        Case(
            "GET /v1/keys/<name>",
            "GET",
            f"/v1/keys/{aead}",
            None,
            {},
            200,
            [f'"name":"{aead}"'.encode()],
        )
    )
    return out


def backends_expect() -> list[bytes]:
    """GET /v1/backends must name this host's arch and, per algorithm, the row the library
    selects here (the same library and environment as the server's)."""
    from archcrypt import crypto

    report = crypto.backends()
    return [f'"arch":"{report.arch}"'.encode()] + [
        f'"name":"{a.name}","selected":"{a.selected}"'.encode() for a in report.algorithms
    ]


def write_cases(directory: Path, rotation: list[Case]) -> Path:
    """The Lua table soak.lua reads, bodies and expectations in files beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["return {"]
    for i, case in enumerate(rotation, 1):
        body_file = None
        if case.body is not None:
            body_file = directory / f"body{i}"
            body_file.write_bytes(case.body)
        expect_files = []
        for j, want in enumerate(case.expect):
            path = directory / f"expect{i}-{j}"
            path.write_bytes(want)
            expect_files.append(path)
        headers = ", ".join(f"[{_lua(k)}] = {_lua(v)}" for k, v in case.headers.items())
        lines.append(
            f"  {{name = {_lua(case.name)}, method = {_lua(case.method)}, path = {_lua(case.path)},"
            f" headers = {{{headers}}}, body_file = {_lua(str(body_file)) if body_file else 'nil'},"
            f" status = {case.status}, weight = {case.weight},"
            f" expect_files = {{{', '.join(_lua(str(p)) for p in expect_files)}}}}},"
        )
    lines.append("}")
    out = directory / "cases.lua"
    out.write_text("\n".join(lines) + "\n")
    return out


def _lua(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- the server ------------------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    data_dir: Path
    kek_file: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        """The serving processes: the server, or with workers its children."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            kids = [int(p) for p in children.read_text().split()]
        except OSError:
            kids = []
        return kids or [self.process.pid]


@contextmanager
def serve(directory: Path, *args: str, ready_timeout: float = 60, **env: str) -> Iterator[Server]:
    """`archcrypt serve` on a free loopback port, named keys on SQLite in `directory`, the
    audit log to /dev/null (its cost paid, no disk filled), no start-up benchmark."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = directory / "server.log"
    kek_file = directory / "kek"
    if not kek_file.exists():
        kek_file.write_text(b64(os.urandom(32)) + "\n")  # one base64 KEK a line (README)
        kek_file.chmod(0o600)
    environment = {
        **os.environ,
        "ARCHCRYPT_BENCHMARK_ENABLED": "false",
        "ARCHCRYPT_DATA_DIR": str(directory / "data"),
        "ARCHCRYPT_KEK_FILE": str(kek_file),
        "ARCHCRYPT_AUDIT_LOG": "/dev/null",
        **env,
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "archcrypt",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    server = Server(process, port, log, directory / "data", kek_file)
    try:
        wait_ready(server, ready_timeout)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_ready(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"server exited with {server.process.returncode}:\n{server.log.read_text()[-3000:]}"
            )
        try:
            if httpx.get(server.base_url + "/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"server not ready:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.1)


# ---- named keys and their independent check -----------------------------------------------


def make_named_keys(client: httpx.Client) -> dict[str, Any]:
    suffix = os.urandom(4).hex()
    aead, mac_key = f"soak-aead-{suffix}", f"soak-hmac-{suffix}"
    for name, key_type in ((aead, "xchacha20-poly1305"), (mac_key, "hmac-sha256")):
        created = client.post("/v1/keys", json={"name": name, "type": key_type})
        assert created.status_code == 201, created.text
    plaintext = payload(200, 9)
    sealed = client.post(f"/v1/keys/{aead}/seal", json={"plaintext": b64(plaintext)})
    binary = client.post(
        f"/v1/keys/{aead}/seal",
        content=plaintext,
        headers={"Content-Type": "application/octet-stream"},
    )
    tag = client.post(f"/v1/keys/{mac_key}/mac", json={"data": b64(plaintext)})
    assert sealed.status_code == binary.status_code == tag.status_code == 200
    return {
        "aead": aead,
        "hmac": mac_key,
        "plaintext": plaintext,
        "ciphertext": sealed.json()["ciphertext"],
        "binary": binary.content,
        "tag": tag.json()["tag"],
    }


def key_material(server: Server, name: str, version: int = 1) -> bytes:
    """The named key's material, unwrapped from the SQLite store with the KEK file by the
    test suite's own unwrap (tests/service/test_keys.py), not by the service."""
    import sqlite3

    from tests.service.test_keys import read_keks, unwrap

    with sqlite3.connect(server.data_dir / "keys.sqlite3") as db:
        row = db.execute(
            "SELECT k.type, v.wrapped FROM archcrypt_keys k JOIN archcrypt_key_versions v "
            "ON v.name = k.name WHERE k.name = ? AND v.version = ?",
            (name, version),
        ).fetchone()
    key_type, wrapped = row
    (kek,) = read_keks(server.kek_file)
    return unwrap(kek, name, version, key_type, bytes(wrapped))


# ---- the sampler: fresh random requests, checked ----------------------------------------------


@dataclass
class SamplerStats:
    checked: int = 0
    wrong: int = 0
    failed: int = 0  # transport errors or unexpected statuses
    first_problem: str = ""


def sampler(
    server: Server,
    named: dict[str, Any],
    material: bytes,
    stop: threading.Event,
    stats: SamplerStats,
    rate: float = 5.0,
    hmac_material: bytes = b"",
) -> None:
    from tests.service.test_keys import reference_open_text

    rng = random.Random(7)
    checks: list[Callable[[httpx.Client], bool]] = []

    def aead(client: httpx.Client) -> bool:
        alg = rng.choice(("chacha20-poly1305", "xchacha20-poly1305"))
        key, pt, aad = rng.randbytes(32), rng.randbytes(rng.randrange(0, 5000)), rng.randbytes(9)
        nonce = rng.randbytes(12 if alg == "chacha20-poly1305" else 24)
        r = client.post(
            f"/v1/aead/{alg}/seal",
            json={"key": b64(key), "nonce": b64(nonce), "plaintext": b64(pt), "aad": b64(aad)},
        )
        ct = base64.b64decode(r.json()["ciphertext"])
        return (
            ct == reference_seal(alg, key, nonce, pt, aad)
            and reference_open(alg, key, nonce, ct, aad) == pt
        )

    def named_seal(client: httpx.Client) -> bool:
        pt = rng.randbytes(rng.randrange(0, 3000))
        r = client.post(f"/v1/keys/{named['aead']}/seal", json={"plaintext": b64(pt)})
        text = r.json()["ciphertext"]
        return reference_open_text(material, "xchacha20-poly1305", text) == pt

    def digest(client: httpx.Client) -> bool:
        alg = rng.choice(("sha224", "sha256", "sha384", "sha512"))
        data = rng.randbytes(rng.randrange(0, 9000))
        r = client.post(
            f"/v1/hash/{alg}", content=data, headers={"Content-Type": "application/octet-stream"}
        )
        return base64.b64decode(r.json()["digest"]) == hashlib.new(alg, data).digest()

    def ecb(client: httpx.Client) -> bool:
        key = rng.randbytes(rng.choice((16, 24, 32)))
        data = rng.randbytes(16 * rng.randrange(0, 200))
        r = client.post("/v1/ecb/camellia/encrypt", json={"key": b64(key), "data": b64(data)})
        return base64.b64decode(r.json()["data"]) == camellia_ecb(key, data)

    def named_rewrap(client: httpx.Client) -> bool:
        pt, aad = rng.randbytes(rng.randrange(0, 3000)), rng.randbytes(rng.randrange(0, 40))
        sealed = client.post(
            f"/v1/keys/{named['aead']}/seal", json={"plaintext": b64(pt), "aad": b64(aad)}
        ).json()["ciphertext"]
        r = client.post(
            f"/v1/keys/{named['aead']}/rewrap", json={"ciphertext": sealed, "aad": b64(aad)}
        )
        text = r.json()["ciphertext"]
        return (
            text != sealed
            and "plaintext" not in r.json()
            and reference_open_text(material, "xchacha20-poly1305", text, aad) == pt
        )

    def named_datakey(client: httpx.Client) -> bool:
        bits = rng.choice((128, 256, 512))
        r = client.post(f"/v1/keys/{named['aead']}/datakey", json={"bits": bits}).json()
        data_key = base64.b64decode(r["plaintext"])
        return (
            len(data_key) == bits // 8
            and reference_open_text(material, "xchacha20-poly1305", r["ciphertext"]) == data_key
        )

    def named_datakey_wrapped(client: httpx.Client) -> bool:
        bits = rng.choice((128, 256, 512))
        r = client.post(f"/v1/keys/{named['aead']}/datakey/wrapped", json={"bits": bits}).json()
        opened = reference_open_text(material, "xchacha20-poly1305", r["ciphertext"])
        return "plaintext" not in r and len(opened) == bits // 8

    def named_mac(client: httpx.Client) -> bool:
        data = rng.randbytes(rng.randrange(0, 3000))
        tag = client.post(f"/v1/keys/{named['hmac']}/mac", json={"data": b64(data)}).json()["tag"]
        verified = client.post(
            f"/v1/keys/{named['hmac']}/verify", json={"data": b64(data), "tag": tag}
        ).json()["valid"]
        want = std_hmac.new(hmac_material, data, "sha256").digest()
        return verified is True and tag == f"archcrypt:v1:{b64(want)}"

    checks = [
        aead,
        named_seal,
        digest,
        ecb,
        named_rewrap,
        named_datakey,
        named_datakey_wrapped,
        named_mac,
    ]
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        while not stop.wait(1.0 / rate):
            check = rng.choice(checks)
            try:
                good = check(client)
            except Exception as exc:  # a transport error or a status without the field
                stats.failed += 1
                stats.first_problem = stats.first_problem or f"{check.__name__}: {exc!r}"
                continue
            stats.checked += 1
            if not good:
                stats.wrong += 1
                stats.first_problem = stats.first_problem or f"{check.__name__}: wrong answer"


# ---- resources ------------------------------------------------------------------------------


@dataclass
class Sample:
    t: float
    rss: int
    fds: int
    threads: int


def sample(pids: list[int], t: float) -> Sample | None:
    rss = fds = threads = 0
    try:
        for pid in pids:
            status = Path(f"/proc/{pid}/status").read_text()
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            rss += int(fields["VmRSS"].split()[0]) * 1024
            threads += int(fields["Threads"])
            fds += len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, KeyError):
        return None
    return Sample(t, rss, fds, threads)


# ---- the run --------------------------------------------------------------------------------


@dataclass
class SoakResult:
    seconds: float
    warmup: float
    connections: int
    requests: int = 0
    requests_per_second: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    socket_errors: int = 0
    bad_status: int = 0
    wrong_answers: int = 0
    checked_answers: int = 0
    sampler_checked: int = 0
    sampler_errors: int = 0
    rss_start_mib: float = 0.0  # median of 10 samples after the warm-up (5 of 10..19)
    rss_end_mib: float = 0.0  # median of the last 10 (5)
    rss_peak_mib: float = 0.0
    fds_min: int = 0
    fds_max: int = 0
    threads_max: int = 0
    routes: int = 0
    problem: str = ""
    samples: list[Sample] = field(default_factory=list)
    wrk: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return self.socket_errors + self.bad_status + self.wrong_answers + self.sampler_errors

    @property
    def rss_growth(self) -> float:
        if not self.rss_start_mib:
            return 0.0
        return (self.rss_end_mib - self.rss_start_mib) / self.rss_start_mib

    @property
    def ok(self) -> bool:
        return (
            self.errors == 0
            and self.requests > 0
            and self.rss_growth < 0.10
            and self.fds_max - self.fds_min <= 4
        )

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("samples")
        out["errors"] = self.errors
        out["rss_growth"] = self.rss_growth
        return out


def run(
    seconds: float,
    directory: Path | None = None,
    connections: int = 16,
    warmup: float | None = None,
    progress: Callable[[str], None] | None = None,
    tamper: bool = False,
) -> SoakResult:
    """`tamper`: after the preflight, one expected answer is changed by a byte, so that the
    run must count wrong answers (the check can fail)."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise FileNotFoundError("wrk is not installed (Debian: wrk; scripts/setup.sh)")
    warmup = warmup if warmup is not None else max(10.0, seconds / 10)
    work = Path(directory or tempfile.mkdtemp(prefix="archcrypt-soak-"))
    result = SoakResult(seconds, warmup, connections)
    say = progress or (lambda _: None)
    with serve(work / "server") as server:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            named = make_named_keys(client)
            rotation = cases(named)
            preflight(client, rotation)
        result.routes = len({c.path for c in rotation})
        cases_file = write_cases(work / "cases", rotation)
        if tamper:
            first = next(p for p in sorted((work / "cases").glob("expect*")) if p.stat().st_size)
            data = bytearray(first.read_bytes())
            data[len(data) // 2] ^= 1
            first.write_bytes(bytes(data))
        material = key_material(server, named["aead"])
        hmac_material = key_material(server, named["hmac"])
        stop = threading.Event()
        stats = SamplerStats()
        sampler_thread = threading.Thread(
            target=sampler,
            daemon=True,
            args=(server, named, material, stop, stats),
            kwargs={"hmac_material": hmac_material},
        )
        say(
            f"soak: {len(rotation)} requests over {result.routes} routes, {connections} "
            f"connections, {seconds:.0f} s (warm-up {warmup:.0f} s), "
            f"server pid {server.process.pid}"
        )
        load = subprocess.Popen(
            [
                wrk,
                "-t",
                "1",
                "-c",
                str(connections),
                "-d",
                f"{int(seconds)}s",
                "--timeout",
                "10s",
                "--latency",
                "-s",
                str(LUA),
                server.base_url,
                "--",
                str(cases_file),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        sampler_thread.start()
        start = time.monotonic()
        next_report = start + 30
        while load.poll() is None:
            now = time.monotonic()
            s = sample(server.pids(), now - start)
            if s is not None:
                result.samples.append(s)
            if now >= next_report:
                say(
                    f"soak: {now - start:4.0f} s  rss {s.rss / 2**20 if s else 0:6.1f} MiB  "
                    f"fds {s.fds if s else 0}  sampled answers {stats.checked} "
                    f"(wrong {stats.wrong}, failed {stats.failed})"
                )
                next_report += 30
            time.sleep(max(0.0, 1.0 - (time.monotonic() - now)))
        stop.set()
        sampler_thread.join(timeout=30)
        out, err = load.communicate()
        if server.process.poll() is not None:
            result.problem = f"server exited with {server.process.returncode}"
    line = next((ln for ln in out.splitlines() if ln.startswith("SOAK ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no figures:\n{out[-3000:]}\n{err[-3000:]}")
    figures = json.loads(line[5:])
    result.wrk = figures
    result.requests = figures["requests"]
    result.requests_per_second = figures["requests"] / (figures["duration_us"] / 1e6)
    result.p50_ms, result.p99_ms = figures["p50_us"] / 1000, figures["p99_us"] / 1000
    result.max_ms = figures["max_us"] / 1000
    result.socket_errors = (
        figures["connect_errors"]
        + figures["read_errors"]
        + figures["write_errors"]
        + figures["timeouts"]
    )
    result.bad_status = figures["bad_status"] + figures["unattributed"]
    result.wrong_answers = figures["mismatches"] + stats.wrong
    result.checked_answers = figures["checked"]
    result.sampler_checked, result.sampler_errors = stats.checked, stats.failed
    result.problem = result.problem or figures["problem"] or stats.first_problem
    after = [s for s in result.samples if s.t >= warmup]
    if len(after) >= 10:
        # ten samples at each end, or half of a short run's each (the suite's 20 s)
        n = min(10, len(after) // 2)
        result.rss_start_mib = statistics.median(s.rss for s in after[:n]) / 2**20
        result.rss_end_mib = statistics.median(s.rss for s in after[-n:]) / 2**20
        result.rss_peak_mib = max(s.rss for s in after) / 2**20
        result.fds_min, result.fds_max = min(s.fds for s in after), max(s.fds for s in after)
        result.threads_max = max(s.threads for s in after)
    return result


def preflight(client: httpx.Client, rotation: list[Case]) -> None:
    """Each request once before the load: a wrong expectation shows here, by name."""
    for case in rotation:
        response = client.request(case.method, case.path, content=case.body, headers=case.headers)
        assert response.status_code == case.status, (
            case.name,
            response.status_code,
            response.text[:500],
        )
        for want in case.expect:
            assert want in response.content, (case.name, want[:80], response.content[:300])
