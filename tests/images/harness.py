"""Build the archcrypt image for four platforms with buildah (no Docker engine) and start it.

The base image is made here from Debian's archive (scripts/debootstrap-python-base.sh), one
tree per platform, imported as localhost/python:3.11-slim-bookworm-<arch> (and a manifest
list over them); each platform's build gets its own as BASE_IMAGE, the amd64 one as
BUILDER_IMAGE. The repository's Dockerfile is then built for linux/amd64, arm64, ppc64le and
s390x, one platform at a time, into one manifest list. Nothing foreign runs
during the build: the builder stage cross-compiles on amd64, the runtime stages only COPY.

Everything lives under build/images/ (gitignored): the base trees (cached between runs), a
containers-storage of its own (so the host's images are untouched), the timings and sizes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "images"
ARCHES = ("amd64", "arm64", "ppc64le", "s390x")
PYTHON_BASE = "localhost/python:3.11-slim-bookworm"
IMAGE = "localhost/archcrypt:test"
QEMU = {
    "arm64": "qemu-aarch64-static",
    "ppc64le": "qemu-ppc64le-static",
    "s390x": "qemu-s390x-static",
}
BUILD_PLATFORM = "linux/amd64"
SKIP_ENV = "ARCHCRYPT_SKIP_IMAGES"

# step -> seconds, written to build/images/timings.json and printed at the end of the run
TIMINGS: dict[str, float] = {}
SIZES: dict[str, int] = {}


@contextlib.contextmanager
def timed(step: str) -> Iterator[None]:
    start = time.monotonic()
    try:
        yield
    finally:
        TIMINGS[step] = round(time.monotonic() - start, 1)
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "timings.json").write_text(json.dumps(TIMINGS, indent=2) + "\n")


def require_tools() -> None:
    tools = ["buildah", "podman", "runc", "debootstrap", "dpkg-deb", *QEMU.values()]
    missing = [t for t in tools if shutil.which(t) is None]
    reason = ""
    if os.geteuid() != 0:
        reason = "image tests need root (debootstrap, buildah, podman)"
    elif missing:
        reason = f"missing {', '.join(missing)} (scripts/setup.sh installs them when run as root)"
    if not reason:
        return
    if os.environ.get(SKIP_ENV) == "1" or os.environ.get("ARCHCRYPT_SKIP_CROSS") == "1":
        pytest.skip(reason)
    pytest.fail(f"{reason}; set {SKIP_ENV}=1 to skip explicitly")


def storage_env() -> dict[str, str]:
    """containers-storage under build/images/, for buildah and podman alike."""
    conf = WORK / "storage.conf"
    if not conf.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        conf.write_text(
            "[storage]\n"
            'driver = "overlay"\n'
            f'graphroot = "{WORK / "storage"}"\n'
            f'runroot = "{WORK / "run"}"\n'
        )
    return {**os.environ, "CONTAINERS_STORAGE_CONF": str(conf)}


def run(
    *cmd: str, check: bool = True, timeout: float = 1800, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        list(cmd),
        capture_output=True,
        text=True,
        env=storage_env(),
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} -> {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


# ---- base image -----------------------------------------------------------------------------


def base_trees() -> None:
    """debootstrap the four trees in parallel (network-bound); cached in build/images/."""
    script = ROOT / "scripts" / "debootstrap-python-base.sh"
    procs = {
        arch: subprocess.Popen(
            [str(script), arch, str(WORK / f"rootfs-{arch}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for arch in ARCHES
    }
    failures = []
    for arch, proc in procs.items():
        out, _ = proc.communicate(timeout=1200)
        if proc.returncode != 0:
            failures.append(f"{arch}: {out[-3000:]}")
    assert not failures, "\n".join(failures)


def image_exists(name: str) -> bool:
    return run("buildah", "inspect", "--type", "image", name, check=False).returncode == 0


def import_bases() -> None:
    """One image per tree (tagged -<arch>) and the manifest list over them."""
    for arch in ARCHES:
        tag = f"{PYTHON_BASE}-{arch}"
        if image_exists(tag):
            continue
        ctr = run("buildah", "from", "scratch").stdout.strip()
        try:
            mnt = Path(run("buildah", "mount", ctr).stdout.strip())
            subprocess.run(["cp", "-a", f"{WORK / f'rootfs-{arch}'}/.", f"{mnt}/"], check=True)
            run("buildah", "umount", ctr)
            run(
                "buildah",
                "config",
                "--arch",
                arch,
                "--os",
                "linux",
                "--env",
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--env",
                "LANG=C.UTF-8",
                "--cmd",
                "python3",
                ctr,
            )
            run("buildah", "commit", "-q", ctr, tag)
        finally:
            run("buildah", "rm", ctr, check=False)
    run("buildah", "manifest", "rm", PYTHON_BASE, check=False)
    run("buildah", "manifest", "create", PYTHON_BASE)
    for arch in ARCHES:
        run("buildah", "manifest", "add", PYTHON_BASE, f"containers-storage:{PYTHON_BASE}-{arch}")


# ---- the build ------------------------------------------------------------------------------


def host_ca_bundle() -> Path | None:
    """The CA bundle this machine's pip trusts (a TLS-intercepting proxy's CA may be in it)."""
    for candidate in (
        os.environ.get("PIP_CERT"),
        os.environ.get("SSL_CERT_FILE"),
        ssl.get_default_verify_paths().cafile,
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def wheel_cache_volume() -> list[str]:
    """Build-time only: the wheels scripts/cross-wheels.py cross-builds from sdists (uvloop,
    httptools on ppc64le and s390x), kept in build/images/wheels between runs; the builder
    uses ARCHCRYPT_WHEEL_CACHE's default path when it is mounted."""
    cache = WORK / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    return ["-v", f"{cache}:/var/cache/archcrypt-wheels"]


def pip_volumes() -> list[str]:
    """Build-time only (-v is not committed): the host's CA bundle and index for pip."""
    ca = host_ca_bundle()
    lines = ["[global]"]
    volumes = []
    if ca:
        lines.append("cert = /etc/pip-ca.crt")
        volumes += ["-v", f"{ca}:/etc/pip-ca.crt:ro"]
    if os.environ.get("PIP_INDEX_URL"):
        lines.append(f"index-url = {os.environ['PIP_INDEX_URL']}")
    conf = WORK / "pip.conf"
    conf.write_text("\n".join(lines) + "\n")
    return [*volumes, "-v", f"{conf}:/etc/pip.conf:ro"]


def project_version() -> str:
    match = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert match
    return match.group(1)


def git_revision() -> str:
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() or "unknown"


def build_image() -> None:
    """The Dockerfile once per platform, each into the one manifest list (docker format keeps
    the HEALTHCHECK), as on per-arch runners. Each build names its platform's own base image:
    Debian 12's buildah 1.28, resolving one manifest-list base for four concurrent platform
    builds, once gave the arm64 image the amd64 base. It also does not set BUILDPLATFORM
    itself: passed here."""
    run("buildah", "manifest", "rm", IMAGE, check=False)
    for arch in ARCHES:
        run(
            "buildah",
            "build",
            "--isolation",
            "chroot",
            "--pull=never",
            "--layers",
            "--format",
            "docker",
            "--platform",
            f"linux/{arch}",
            "--manifest",
            IMAGE,
            "--build-arg",
            f"BUILDPLATFORM={BUILD_PLATFORM}",
            "--build-arg",
            f"BASE_IMAGE={PYTHON_BASE}-{arch}",
            "--build-arg",
            f"BUILDER_IMAGE={PYTHON_BASE}-{BUILD_PLATFORM.split('/')[1]}",
            "--build-arg",
            f"VERSION={project_version()}",
            "--build-arg",
            f"REVISION={git_revision()}",
            *pip_volumes(),
            *wheel_cache_volume(),
            "-f",
            str(ROOT / "Dockerfile"),
            str(ROOT),
            timeout=3000,
        )


@dataclass(frozen=True)
class Instance:
    arch: str
    digest: str  # of the platform's image manifest inside the list
    image_id: str
    config: dict[str, object] = field(hash=False, compare=False)

    @property
    def ref(self) -> str:
        return self.image_id


def instances() -> dict[str, Instance]:
    listing = json.loads(run("buildah", "manifest", "inspect", IMAGE).stdout)
    found: dict[str, Instance] = {}
    images = json.loads(run("podman", "images", "--format", "json", "--digests").stdout)
    by_digest = {
        d: img["Id"]
        for img in images
        for d in [img.get("Digest"), *(img.get("Digests") or [])]
        if d
    }
    for entry in listing["manifests"]:
        arch = entry["platform"]["architecture"]
        image_id = by_digest.get(entry["digest"])
        assert image_id, f"no local image for {arch} {entry['digest']}"
        inspect = json.loads(run("podman", "image", "inspect", image_id).stdout)[0]
        found[arch] = Instance(arch, entry["digest"], image_id, inspect)
    return found


# ---- running a platform's image -------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Running:
    arch: str
    model: str | None
    port: int
    log: Path
    stop: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    container: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float) -> float:
        start = time.monotonic()
        deadline = start + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                break
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return time.monotonic() - start
            time.sleep(0.5)
        raise AssertionError(
            f"{self.arch}/{self.model}: not ready in {timeout:.0f}s\n{self.logs()[-4000:]}"
        )

    def logs(self) -> str:
        if self.container:
            proc = run("podman", "logs", self.container, check=False)
            return proc.stdout + proc.stderr
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def terminate(self) -> None:
        if self.container:
            run("podman", "rm", "-f", "-t", "5", self.container, check=False)
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# A short startup benchmark: readiness waits for it, and under qemu every second counts.
SERVICE_ENV = {"ARCHCRYPT_BENCHMARK_BUDGET_SECONDS": "0.3"}
# The image requires bearer tokens (ARCHCRYPT_AUTH=required) from the store it expects at
# /etc/archcrypt/tokens/tokens.json; the runs get one made here, with every family scope.
TOKENS_DIR = WORK / "tokens"
IMAGE_TOKENS_DIR = "/etc/archcrypt/tokens"


@functools.cache
def service_token() -> str:
    """The token the image runs accept (a test store: world-readable, so uid 10001 in the
    container can read the bind mount)."""
    from archcrypt.auth import create_token

    TOKENS_DIR.mkdir(parents=True, exist_ok=True)
    store = TOKENS_DIR / "tokens.json"
    store.unlink(missing_ok=True)
    scopes = ["aead:seal", "aead:open", "mac", "mac:verify", "hash", "ecb", "poly1305"]
    token, _ = create_token(store, "image-tests", scopes)
    store.chmod(0o644)
    TOKENS_DIR.chmod(0o755)
    return token


def start_podman(instance: Instance, tokens: bool = True) -> Running:
    """The image as a container: non-root, read-only root, no capabilities, host loopback;
    with the test token store mounted where the image expects it (tokens=False: without)."""
    port = free_port()
    name = f"archcrypt-test-{instance.arch}-{port}"
    env = [f"-e{k}={v}" for k, v in {**SERVICE_ENV, "ARCHCRYPT_PORT": str(port)}.items()]
    service_token()
    if tokens:
        env += ["--volume", f"{TOKENS_DIR}:{IMAGE_TOKENS_DIR}:ro"]
    run(
        "podman",
        "--runtime",
        "runc",
        "--cgroup-manager",
        "cgroupfs",
        "--events-backend",
        "file",
        "run",
        "-d",
        "--name",
        name,
        "--read-only",
        "--cap-drop",
        "all",
        "--security-opt",
        "no-new-privileges",
        "--network",
        "host",
        "--ulimit",
        "nofile=1024:1024",
        "--ulimit",
        "nproc=1024:1024",
        *env,
        instance.ref,
    )
    return Running(instance.arch, None, port, WORK / f"{name}.log", container=name)


def _config_env(instance: Instance) -> dict[str, str]:
    config = instance.config["Config"]
    assert isinstance(config, dict)
    return dict(item.split("=", 1) for item in config.get("Env") or [])


def start_qemu(instance: Instance, root: Path, model: str, cpu: str) -> Running:
    """The image's root file system under qemu-user: its Env, Entrypoint and Cmd, run with
    qemu's -L pointing at the tree, so no binfmt_misc and no chroot are needed."""
    config = instance.config["Config"]
    assert isinstance(config, dict)
    env = _config_env(instance)
    argv = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    exe = next(
        (
            str(root / d.lstrip("/") / argv[0])
            for d in env["PATH"].split(":")
            if (root / d.lstrip("/") / argv[0]).exists()
        ),
        None,
    )
    assert exe, f"{argv[0]} not on the image's PATH"
    port = free_port()
    service_token()
    env.update(
        SERVICE_ENV,
        ARCHCRYPT_PORT=str(port),
        ARCHCRYPT_HOST="127.0.0.1",
        ARCHCRYPT_TOKENS_FILE=str(TOKENS_DIR / "tokens.json"),
    )
    log = WORK / f"qemu-{instance.arch}-{model}.log"
    handle = log.open("wb")
    process = subprocess.Popen(
        [QEMU[instance.arch], "-L", str(root), "-cpu", cpu, exe, *argv[1:]],
        stdout=handle,
        stderr=subprocess.STDOUT,
        env=env,
        cwd="/",
    )
    handle.close()
    return Running(instance.arch, model, port, log, process=process)


@contextlib.contextmanager
def mounted(instance: Instance) -> Iterator[Path]:
    ctr = run("buildah", "from", "--pull=never", instance.ref).stdout.strip().splitlines()[-1]
    try:
        yield Path(run("buildah", "mount", ctr).stdout.strip())
    finally:
        run("buildah", "umount", ctr, check=False)
        run("buildah", "rm", ctr, check=False)


def parallel(func, items, workers: int = 2):  # type: ignore[no-untyped-def]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(func, items))


if __name__ == "__main__":  # `python tests/images/harness.py`: build only, print timings
    with timed("base_trees"):
        base_trees()
    with timed("import_bases"):
        import_bases()
    with timed("build_4_platforms"):
        build_image()
    print(json.dumps(TIMINGS, indent=2), file=sys.stderr)
