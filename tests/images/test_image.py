"""The Dockerfile built for linux/amd64, arm64, ppc64le and s390x into one manifest list
(buildah, from a debootstrapped base, no Docker engine), then each platform's image served
over HTTP: amd64 as a podman container (non-root, read-only root, no capabilities), the
others from the image's root file system under qemu-user, one run per CPU model that changes
the dispatch choice. Each run seals/opens, hashes, MACs and scrapes /metrics, and must report
its platform's arch and the implementations that CPU model selects."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from prometheus_client.parser import text_string_to_metric_families

from ..cross.harness import (
    NATIVE,
    TARGETS,
    cpu_option,
    expected_ffi_record,
    ffi_recipe,
    make,
    parse_dispatch,
)
from ..cross.test_c_selftest import BASELINE, EXPECTED_DISPATCH
from . import harness
from .harness import ARCHES, IMAGE, SIZES, Instance, Running, run, timed

pytestmark = pytest.mark.images

# Under qemu a Python start (imports, self-test, the short benchmark) takes 30-60 s.
QEMU_READY_TIMEOUT = 300.0

# What uvicorn serves each platform's image with (/v1/backends "http", build_info labels),
# written by hand: httptools and uvloop everywhere, from PyPI's wheels or, where PyPI has
# none (httptools on s390x, uvloop on ppc64le and s390x), cross-built from the sdist.
HTTP_STACK = {
    "amd64": {"parser": "httptools", "event_loop": "uvloop"},
    "arm64": {"parser": "httptools", "event_loop": "uvloop"},
    "ppc64le": {"parser": "httptools", "event_loop": "uvloop"},
    "s390x": {"parser": "httptools", "event_loop": "uvloop"},
}
# The distribution each of them comes from.
HTTP_DISTRIBUTIONS = {"httptools": "httptools", "h11": "h11", "uvloop": "uvloop"}
# uname -m, ELF e_machine and byte order of each platform
MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}
ELF_MACHINE = {"amd64": (62, "little"), "arm64": (183, "little"), "ppc64le": (21, "little"),
               "s390x": (22, "big")}  # fmt: skip
# The C compiler the Dockerfile's builder uses for each platform (scripts/cross-build.sh).
COMPILER = {"amd64": "gcc", **{arch: target.cc for arch, target in TARGETS.items()}}
SITE = "opt/archcrypt/site"


def expected_dispatch(arch: str, model: str) -> dict[str, str]:
    return {**BASELINE, **EXPECTED_DISPATCH.get((arch, model), {})}


def models_to_run(arch: str) -> list[str]:
    """One model per distinct expected dispatch (the most capable of its group), or every
    model with ARCHCRYPT_IMAGE_MODELS=all. tests/cross proves every model on the C side."""
    models = list(TARGETS[arch].models)
    if os.environ.get("ARCHCRYPT_IMAGE_MODELS") == "all":
        return models
    chosen: dict[frozenset[tuple[str, str]], str] = {}
    for model in models:
        chosen[frozenset(expected_dispatch(arch, model).items())] = model
    return [m for m in models if m in chosen.values()]


FOREIGN_CASES = [
    (arch, model) for arch in ARCHES if arch != "amd64" for model in models_to_run(arch)
]


@pytest.fixture(scope="module")
def built() -> dict[str, Instance]:
    harness.require_tools()
    with timed("base trees (debootstrap x4, parallel)"):
        harness.base_trees()
    with timed("base images (import + manifest list)"):
        harness.import_bases()
    with timed("build 4 platforms (buildah, one manifest list)"):
        harness.build_image()
    found = harness.instances()
    for arch, instance in found.items():
        SIZES[arch] = int(instance.config["Size"])  # type: ignore[call-overload]
    (harness.WORK / "sizes.json").write_text(json.dumps(SIZES, indent=2) + "\n")
    return found


# ---- what is checked on every running instance ------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass
class Observed:
    backends: dict[str, object]
    metrics: str


def exercise(server: Running) -> Observed:
    """Seal/open (checked against pyca), hash, MAC and ECB (against hashlib/hmac/pyca), then
    the backends report and /metrics."""
    auth = {"Authorization": f"Bearer {harness.service_token()}"}
    with httpx.Client(base_url=server.url, timeout=120, headers=auth) as client:
        key, nonce, aad = os.urandom(32), os.urandom(12), b"header"
        for size in (0, 1, 1000, 70_000):  # 70 kB crosses the thread-offload threshold
            plaintext = os.urandom(size)
            sealed = client.post(
                "/v1/aead/chacha20-poly1305/seal",
                json={
                    "key": b64(key),
                    "nonce": b64(nonce),
                    "plaintext": b64(plaintext),
                    "aad": b64(aad),
                },
            )
            assert sealed.status_code == 200, sealed.text
            ciphertext = base64.b64decode(sealed.json()["ciphertext"])
            assert ciphertext == ChaCha20Poly1305(key).encrypt(nonce, plaintext, aad), size
            opened = client.post(
                "/v1/aead/chacha20-poly1305/open",
                json={
                    "key": b64(key),
                    "nonce": b64(nonce),
                    "ciphertext": b64(ciphertext),
                    "aad": b64(aad),
                },
            )
            assert opened.status_code == 200, opened.text
            assert base64.b64decode(opened.json()["plaintext"]) == plaintext
        tampered = bytes([ciphertext[0] ^ 1]) + ciphertext[1:]
        refused = client.post(
            "/v1/aead/chacha20-poly1305/open",
            json={
                "key": b64(key),
                "nonce": b64(nonce),
                "ciphertext": b64(tampered),
                "aad": b64(aad),
            },
        )
        assert refused.status_code == 400
        assert "plaintext" not in refused.json()  # a problem document, no plaintext field

        xsealed = client.post(
            "/v1/aead/xchacha20-poly1305/seal", json={"key": b64(key), "plaintext": b64(b"hi")}
        )
        assert xsealed.status_code == 200, xsealed.text
        xopened = client.post(
            "/v1/aead/xchacha20-poly1305/open", json={"key": b64(key), **xsealed.json()}
        )
        assert base64.b64decode(xopened.json()["plaintext"]) == b"hi"

        for algorithm in ("sha256", "sha512"):
            for size in (0, 3, 1000, 70_000):
                data = os.urandom(size)
                digest = client.post(f"/v1/hash/{algorithm}", json={"data": b64(data)})
                assert digest.status_code == 200, digest.text
                assert (
                    base64.b64decode(digest.json()["digest"])
                    == hashlib.new(algorithm, data).digest()
                )
            data = os.urandom(200_000)
            streamed = client.post(
                f"/v1/hash/{algorithm}",
                content=data,
                headers={"content-type": "application/octet-stream"},
            )
            assert (
                base64.b64decode(streamed.json()["digest"]) == hashlib.new(algorithm, data).digest()
            )

        mac_key, data = os.urandom(40), os.urandom(500)
        tag = client.post("/v1/mac/hmac-sha256", json={"key": b64(mac_key), "data": b64(data)})
        assert base64.b64decode(tag.json()["tag"]) == hmac.new(mac_key, data, "sha256").digest()

        block_key, blocks = os.urandom(16), os.urandom(64)
        ecb = client.post(
            "/v1/ecb/camellia/encrypt", json={"key": b64(block_key), "data": b64(blocks)}
        )
        encryptor = Cipher(Camellia(block_key), modes.ECB()).encryptor()
        assert (
            base64.b64decode(ecb.json()["data"]) == encryptor.update(blocks) + encryptor.finalize()
        )

        backends = client.get("/v1/backends").json()
        metrics = client.get("/metrics")
        assert metrics.status_code == 200
        return Observed(backends, metrics.text)


def check_platform(observed: Observed, arch: str, expected: dict[str, str]) -> None:
    """The arch label, the chosen implementations and the HTTP stack, in the API and in
    /metrics."""
    assert observed.backends["arch"] == arch
    assert observed.backends["http"] == HTTP_STACK[arch]
    selected = {a["name"]: a["selected"] for a in observed.backends["algorithms"]}  # type: ignore[union-attr]
    assert selected == expected
    assert all(a["self_test_passed"] for a in observed.backends["algorithms"])  # type: ignore[union-attr]

    samples = [
        s for family in text_string_to_metric_families(observed.metrics) for s in family.samples
    ]

    def series(name: str) -> list[dict[str, str]]:
        return [s.labels for s in samples if s.name == name and s.value == 1]

    backend_info = {
        (s["algorithm"], s["backend"])
        for s in series("archcrypt_backend_info")
        if s["arch"] == arch
    }
    assert backend_info == set(expected.items())
    assert not [s for s in series("archcrypt_backend_info") if s["arch"] != arch]
    assert {s["algorithm"] for s in series("archcrypt_selftest_ok")} == set(expected)
    (build,) = series("archcrypt_build_info")
    assert (build["arch"], build["http_parser"], build["event_loop"]) == (
        arch,
        HTTP_STACK[arch]["parser"],
        HTTP_STACK[arch]["event_loop"],
    )
    features = {s["feature"] for s in series("archcrypt_cpu_feature_info") if s["arch"] == arch}
    reported = {f["name"] for f in observed.backends["features"] if f["state"] == "present"}  # type: ignore[union-attr]
    assert features == reported
    sealed = [
        s
        for s in samples
        if s.name == "archcrypt_operations_total"
        and s.labels.get("algorithm") == "chacha20-poly1305"
        and s.labels.get("outcome") == "ok"
    ]
    assert sum(s.value for s in sealed) >= 8


# ---- the manifest list and each platform's configuration ---------------------------------------


def test_manifest_list_has_the_four_platforms(built: dict[str, Instance]) -> None:
    listing = json.loads(run("buildah", "manifest", "inspect", IMAGE).stdout)
    platforms = sorted(
        (m["platform"]["os"], m["platform"]["architecture"]) for m in listing["manifests"]
    )
    assert platforms == sorted(("linux", a) for a in ARCHES)


@pytest.mark.parametrize("arch", ARCHES)
def test_image_configuration(built: dict[str, Instance], arch: str) -> None:
    inspect = built[arch].config
    assert inspect["Architecture"] == arch and inspect["Os"] == "linux"
    config = inspect["Config"]
    assert isinstance(config, dict)
    assert config["User"] == "10001:10001"
    assert "8000/tcp" in config["ExposedPorts"]
    assert config["Entrypoint"] == ["python3", "-m", "archcrypt"] and config["Cmd"] == ["serve"]
    env = dict(e.split("=", 1) for e in config["Env"])
    assert env["ARCHCRYPT_HOST"] == "0.0.0.0" and env["ARCHCRYPT_PORT"] == "8000"
    # auth on: tokens from the store a Secret mounts (issue 11)
    assert env["ARCHCRYPT_AUTH"] == "required"
    assert env["ARCHCRYPT_TOKENS_FILE"] == f"{harness.IMAGE_TOKENS_DIR}/tokens.json"
    healthcheck = config.get("Healthcheck") or inspect.get("Healthcheck")  # podman: top level
    assert isinstance(healthcheck, dict) and "/livez" in " ".join(healthcheck["Test"])
    labels = config["Labels"]
    for key in ("title", "version", "revision", "source", "licenses"):
        assert labels.get(f"org.opencontainers.image.{key}"), key
    assert labels["org.opencontainers.image.version"] == harness.project_version()
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"


@pytest.mark.parametrize("arch", ARCHES)
def test_runtime_stage_only_copies(built: dict[str, Instance], arch: str) -> None:
    """No RUN after the base: a foreign platform is built without emulation."""
    history = json.loads(
        run("podman", "image", "history", "--format", "json", built[arch].ref).stdout
    )
    created = [h.get("CreatedBy", h.get("createdBy", "")) for h in history]
    ours = [c for c in created if "archcrypt" in c or "COPY" in c or "copy" in c.lower()]
    assert ours, created
    assert not [c for c in created if "/bin/sh -c" in c and "#(nop)" not in c], created


def elf_machine(path: Path) -> tuple[int, str]:
    head = path.read_bytes()[:20]
    assert head[:4] == b"\x7fELF", path
    order = "little" if head[5] == 1 else "big"
    return int.from_bytes(head[18:20], order), order  # type: ignore[arg-type]


@pytest.mark.parametrize("arch", ARCHES)
def test_extension_is_the_recipes_build(built: dict[str, Instance], arch: str) -> None:
    """The image's archcrypt._native is the platform's, and it is the module the foreign-arch
    tests prove: built by native/build_ffi.py's recipe with the same flags, compiler, cffi C
    and library code as this tree gives for that target (test_foreign_python.py checks its
    own module against the same record)."""
    with harness.mounted(built[arch]) as root:
        package = root / SITE / "archcrypt"
        ext = package / ffi_recipe().FILENAME
        assert elf_machine(ext) == ELF_MACHINE[arch]
        assert [p.name for p in package.glob("_native*")] == [ext.name]
        record = ffi_recipe().build_record(ext)
    assert record == expected_ffi_record(COMPILER[arch])


@pytest.mark.parametrize("arch", ARCHES)
def test_dependencies_follow_pyproject(built: dict[str, Instance], arch: str) -> None:
    """The image holds every distribution pyproject's markers select for the platform
    (scripts/target-requirements.py, as the build does), among them the HTTP parser and
    loop it must serve with, and every compiled module in it is the platform's."""
    listed = subprocess.run(
        [sys.executable, str(harness.ROOT / "scripts" / "target-requirements.py"),
         "--machine", MACHINE[arch], "--python-version", "3.11",
         str(harness.ROOT / "pyproject.toml")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    required = {canonicalize_name(Requirement(line).name) for line in listed.splitlines()}
    assert {HTTP_DISTRIBUTIONS[v] for v in HTTP_STACK[arch].values()} <= required
    with harness.mounted(built[arch]) as root:
        site = root / SITE
        installed = {
            canonicalize_name(p.name.split("-")[0]) for p in site.glob("*.dist-info")
        }
        objects = [p for p in site.rglob("*.so") if p.is_file()]
        machines = {p.relative_to(site).as_posix(): elf_machine(p) for p in objects}
    assert required <= installed, sorted(required - installed)
    assert machines and all(m == ELF_MACHINE[arch] for m in machines.values()), machines


# ---- running them -------------------------------------------------------------------------------


def host_dispatch() -> dict[str, str]:
    """What this machine's CPU selects with the sources the image was built from: the C
    self-test built natively from this tree says it; the amd64 container must agree."""
    triple = make("-s", "print-triple").stdout.strip()
    make("selftest")
    proc = subprocess.run(
        [str(NATIVE / "build" / triple / "selftest")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return parse_dispatch(proc.stdout)


def test_amd64_container(built: dict[str, Instance]) -> None:
    server = harness.start_podman(built["amd64"])
    try:
        with timed("amd64 container: start to ready"):
            server.wait_ready(120)
        with timed("amd64 container: HTTP checks"):
            observed = exercise(server)
        check_platform(observed, "amd64", host_dispatch())

        status = run("podman", "exec", server.container or "", "cat", "/proc/1/status").stdout
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
        assert set(uids) == {"10001"}
        caps = next(line for line in status.splitlines() if line.startswith("CapEff:")).split()[1]
        assert int(caps, 16) == 0
        wrote = run(
            "podman", "exec", server.container or "", "touch", "/opt/archcrypt/x", check=False
        )
        assert wrote.returncode != 0 and "Read-only" in wrote.stderr
        health = run("podman", "healthcheck", "run", server.container or "", check=False)
        assert health.returncode == 0, health.stdout + health.stderr
        # no core file can hold a key: RLIMIT_CORE 0 (archcrypt serve sets it)
        limits = run("podman", "exec", server.container or "", "cat", "/proc/1/limits").stdout
        core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
        assert core.split()[4:6] == ["0", "0"], core
        # a token is needed, and a wrong scope is refused
        unauthenticated = httpx.post(f"{server.url}/v1/hash/sha256", json={"data": "aGk="})
        assert unauthenticated.status_code == 401
        assert unauthenticated.headers["content-type"] == "application/problem+json"
    finally:
        server.terminate()


def test_amd64_container_refuses_to_serve_without_tokens(built: dict[str, Instance]) -> None:
    server = harness.start_podman(built["amd64"], tokens=False)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = run(
                "podman", "inspect", "--format", "{{.State.Status}}", server.container or ""
            ).stdout.strip()
            if state == "exited":
                break
            time.sleep(0.5)
        assert state == "exited", state
        assert "tokens.json does not exist" in server.logs()
    finally:
        server.terminate()


@pytest.fixture(scope="module")
def foreign(
    built: dict[str, Instance],
) -> Iterator[dict[tuple[str, str], Observed | BaseException]]:
    """Every foreign (arch, model) started from its image's root file system, two at a time."""
    results: dict[tuple[str, str], Observed | BaseException] = {}
    with ExitStack() as stack:
        roots = {
            arch: stack.enter_context(harness.mounted(built[arch]))
            for arch in ARCHES
            if arch != "amd64"
        }

        def one(case: tuple[str, str]) -> None:
            arch, model = case
            server = harness.start_qemu(
                built[arch], roots[arch], model, cpu_option(TARGETS[arch].qemu, model)
            )
            try:
                with timed(f"{arch} -cpu {model}: start to ready (qemu)"):
                    server.wait_ready(QEMU_READY_TIMEOUT)
                with timed(f"{arch} -cpu {model}: HTTP checks (qemu)"):
                    results[case] = exercise(server)
            except BaseException as exc:  # reported by the test of this case
                results[case] = exc
            finally:
                server.terminate()

        with timed("foreign runs (all models, 2 at a time)"):
            harness.parallel(one, FOREIGN_CASES, workers=2)
        yield results


@pytest.mark.parametrize(("arch", "model"), FOREIGN_CASES)
def test_foreign_platform(
    foreign: dict[tuple[str, str], Observed | BaseException], arch: str, model: str
) -> None:
    observed = foreign[(arch, model)]
    if isinstance(observed, BaseException):
        raise observed
    check_platform(observed, arch, expected_dispatch(arch, model))


def test_sizes_reported_in_readme(built: dict[str, Instance]) -> None:
    """README's table gives each platform's size; it must stay within 15 % of this build."""
    readme = (Path(harness.ROOT) / "README.md").read_text()
    for arch, size in SIZES.items():
        line = next((ln for ln in readme.splitlines() if ln.startswith(f"| linux/{arch} ")), None)
        assert line, f"README: no size row for linux/{arch}"
        documented = float(line.split("|")[2].split()[0])
        assert abs(documented - size / 1e6) / (size / 1e6) < 0.15, (arch, documented, size / 1e6)
