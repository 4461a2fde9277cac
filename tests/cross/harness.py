"""Cross-architecture harness: build the native self-test with Debian's cross compilers
and run it under qemu-user on every CPU model that selects a different implementation."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "native"


@dataclass(frozen=True)
class Target:
    arch: str  # container platform name, as archcrypt_arch() reports it
    triple: str
    qemu: str
    models: tuple[str, ...]

    @property
    def cc(self) -> str:
        return f"{self.triple}-gcc"


# Models chosen so that each rung of every dispatch ladder is reached (../shared/CROSS-ARCH.md).
TARGETS = {
    "arm64": Target("arm64", "aarch64-linux-gnu", "qemu-aarch64-static", ("cortex-a53", "cortex-a72", "max")),
    "ppc64le": Target("ppc64le", "powerpc64le-linux-gnu", "qemu-ppc64le-static", ("power8", "power9", "power10")),
    "s390x": Target("s390x", "s390x-linux-gnu", "qemu-s390x-static", ("z13", "z14", "gen15a", "max")),
}


def require_tools(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    reason = f"missing {', '.join(missing)} (scripts/setup.sh installs them when run as root)"
    if os.environ.get("ARCHCRYPT_SKIP_CROSS") == "1":
        pytest.skip(reason)
    pytest.fail(reason + "; set ARCHCRYPT_SKIP_CROSS=1 to skip explicitly")


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["make", "-s", "-C", str(NATIVE), f"-j{os.cpu_count() or 2}", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, f"make {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@functools.cache
def cpu_option(qemu: str, model: str) -> str:
    """The -cpu value for a model: s390x models abort until every feature qemu cannot
    emulate is switched off, and which those are depends on the qemu version."""
    hello = cross_hello(qemu)
    probe = subprocess.run([qemu, "-cpu", model, str(hello)], capture_output=True, text=True, check=False)
    match = re.search(r"not available in the configuration:\s*(.*)", probe.stderr)
    if not match:
        return model
    return ",".join([model, *(f"{feat}=off" for feat in match.group(1).split())])


@functools.cache
def cross_hello(qemu: str) -> Path:
    triple = {t.qemu: t.triple for t in TARGETS.values()}[qemu]
    out = ROOT / "native" / "build" / triple / "hello"
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text("int main(void) { return 0; }\n")
    subprocess.run([f"{triple}-gcc", "-static", str(src), "-o", str(out)], check=True)
    return out


def run_under_qemu(target: Target, model: str, binary: Path, *args: str, env: dict[str, str] | None = None,
                   timeout: float = 600) -> subprocess.CompletedProcess[str]:
    cmd = [target.qemu, "-cpu", cpu_option(target.qemu, model), str(binary), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})


def parse_dispatch(stdout: str) -> dict[str, str]:
    """'dispatch chacha20 -> avx2 ...' lines of the self-test's banner."""
    return dict(re.findall(r"^dispatch (\S+)\s+-> (\S+)", stdout, flags=re.M))


def parse_features(stdout: str) -> set[str]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("cpu features:"))
    return set(line.split(":", 1)[1].split())
