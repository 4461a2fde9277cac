"""Cross-architecture harness: build the native self-test with Debian's cross compilers
and run it under qemu-user on every CPU model that selects a different implementation."""

from __future__ import annotations

import ast
import compileall
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    "arm64": Target("arm64", "aarch64-linux-gnu", "qemu-aarch64-static",
                    ("cortex-a53", "cortex-a72", "max")),
    "ppc64le": Target("ppc64le", "powerpc64le-linux-gnu", "qemu-ppc64le-static",
                      ("power8", "power9", "power10")),
    "s390x": Target("s390x", "s390x-linux-gnu", "qemu-s390x-static",
                    ("z13", "z14", "gen15a", "max")),
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
    probe = subprocess.run([qemu, "-cpu", model, str(hello)],
                           capture_output=True, text=True, check=False)
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


def run_under_qemu(
    target: Target, model: str, binary: Path, *args: str,
    env: dict[str, str] | None = None, timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    cmd = [target.qemu, "-cpu", cpu_option(target.qemu, model), str(binary), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})


def parse_dispatch(stdout: str) -> dict[str, str]:
    """'dispatch chacha20 -> avx2 ...' lines of the self-test's banner."""
    return dict(re.findall(r"^dispatch (\S+)\s+-> (\S+)", stdout, flags=re.M))


def parse_features(stdout: str) -> set[str]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("cpu features:"))
    return set(line.split(":", 1)[1].split())


# ---- Python on a foreign arch: a Debian tree, the cross-built cffi module, qemu-user ----
# (../shared/CROSS-ARCH.md, "Running Python on a foreign arch"; scripts/foreign-tree.sh)

FOREIGN = ROOT / "build" / "foreign"
DEBIAN_ARCH = {"arm64": "arm64", "ppc64le": "ppc64el", "s390x": "s390x"}
COMPAT_PLUGIN = Path(__file__).resolve().parent / "foreign_compat.py"

# The tree's pytest is Debian 12's 7.2, older than pyproject's minversion, so the guest
# reads this configuration instead: pyproject's [tool.pytest.ini_options] less minversion.
FOREIGN_PYTEST_INI = """\
[pytest]
addopts = -ra --strict-markers --strict-config
xfail_strict = true
markers =
    slow: long-running sweeps (deselect with -m 'not slow')
"""

_foreign_locks: dict[str, threading.Lock] = {arch: threading.Lock() for arch in TARGETS}
_cffi_lock = threading.Lock()


def _checked(cmd: list[str], what: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    assert proc.returncode == 0, (
        f"{what} failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


def foreign_tree(arch: str) -> Path:
    """build/foreign/<debian arch>/root: Debian 12 with python3, cffi, pytest, hypothesis,
    cryptography and the Python headers; built once, then reused (its stamp file)."""
    debian = DEBIAN_ARCH[arch]
    tree = FOREIGN / debian / "root"
    _checked(["bash", str(ROOT / "scripts" / "foreign-tree.sh"), debian, str(tree)],
             f"scripts/foreign-tree.sh {debian}", timeout=1800)
    return tree


def can_make_foreign_tree(arch: str) -> bool:
    """debootstrap runs as root only; a tree made earlier serves anyone."""
    stamp = FOREIGN / DEBIAN_ARCH[arch] / "root" / ".archcrypt-foreign-tree"
    return os.geteuid() == 0 or stamp.exists()


def require_foreign_tree(arch: str) -> None:
    """Like require_tools, for the tree: fail (or skip with ARCHCRYPT_SKIP_CROSS=1) when it
    is missing and cannot be made."""
    if (FOREIGN / DEBIAN_ARCH[arch] / "root" / ".archcrypt-foreign-tree").exists():
        return
    require_tools("debootstrap")
    if can_make_foreign_tree(arch):
        return
    debian = DEBIAN_ARCH[arch]
    reason = (f"no {debian} tree in build/foreign and debootstrap needs root: run "
              f"scripts/foreign-tree.sh {debian} build/foreign/{debian}/root as root once")
    if os.environ.get("ARCHCRYPT_SKIP_CROSS") == "1":
        pytest.skip(reason)
    pytest.fail(reason + "; set ARCHCRYPT_SKIP_CROSS=1 to skip explicitly")


def target_sysconfig(tree: Path, triple: str) -> dict[str, Any]:
    """The target interpreter's build-time variables (EXT_SUFFIX, INCLUDEPY, ...), read from
    its _sysconfigdata module as data, without running it."""
    (path,) = tree.glob(f"usr/lib/python3.*/_sysconfigdata__linux_{triple}.py")
    module = ast.parse(path.read_text())
    for node in module.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "build_time_vars":
            return dict(ast.literal_eval(node.value))
    raise AssertionError(f"{path}: no build_time_vars")


@functools.cache
def ffi_recipe() -> Any:
    """native/build_ffi.py, the one recipe for archcrypt._native (pip install, the image's
    cross build and these tests all compile the module with its build_extension())."""
    spec = importlib.util.spec_from_file_location("_archcrypt_build_ffi", NATIVE / "build_ffi.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cffi_source() -> Path:
    """The C that native/build_ffi.py's ffibuilder emits (the same for every target)."""
    with _cffi_lock:
        # atomic: another session may be compiling the last one
        return Path(ffi_recipe().emit_source(FOREIGN / "_native.c"))


def expected_ffi_record(cc: str) -> dict[str, Any]:
    """What a module built by the recipe with this compiler from this tree records (its
    library brought up to date first): what the foreign tests' module and the image's
    must both carry."""
    make(f"CC={cc}", "lib")
    library = Path(make(f"CC={cc}", "--no-print-directory", "print-lib").stdout.strip())
    return dict(ffi_recipe().record_for(cc, cffi_source(), library))


@dataclass(frozen=True)
class ForeignPython:
    """The target's python3 under qemu-user, with PYTHONPATH at a staging copy of the
    archcrypt package whose _native is cross-compiled for the target (service/archcrypt
    keeps the host build)."""

    target: Target
    tree: Path
    home: Path  # this test session's own directory: bin/, stage/, runs/
    native_module: Path

    @property
    def stage(self) -> Path:
        """PYTHONPATH: archcrypt with the cross-built _native, the compat plugin, the vectors."""
        return self.home / "stage"

    def executable(self, model: str) -> Path:
        """A script that runs the tree's python3 under qemu -cpu <model>. Python reports it
        as sys.executable (qemu -0), so a test that starts `sys.executable` in a subprocess
        gets the same emulated interpreter: there is no binfmt_misc to do that."""
        qemu = shutil.which(self.target.qemu)
        assert qemu, self.target.qemu
        path = self.home / "bin" / f"python3-{model}"
        path.parent.mkdir(parents=True, exist_ok=True)
        cpu = cpu_option(self.target.qemu, model)
        python = self.tree / "usr" / "bin" / "python3"
        path.write_text(
            "#!/bin/sh\n"
            f"# {self.target.arch} python3 under qemu -cpu {model} (tests/cross/harness.py)\n"
            f'exec {qemu} -cpu {cpu} -L {self.tree} -0 "$0" {python} "$@"\n'
        )
        path.chmod(0o755)
        return path

    def environment(self, **extra: str) -> dict[str, str]:
        """The host's environment without what would leak into the guest interpreter
        (the host's PYTHONPATH/venv, ARCHCRYPT_* overrides, QEMU_* settings)."""
        drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
        env = {k: v for k, v in os.environ.items()
               if k not in drop and not k.startswith(("ARCHCRYPT_", "QEMU_"))}
        env["PYTHONPATH"] = str(self.stage)
        env.update(extra)
        return env


_foreign_built: dict[str, ForeignPython] = {}


def _session_home(arch: str) -> Path:
    """build/foreign/<arch>/session-<pid>: what one test session builds and runs, so that
    two sessions in one checkout (a developer's and CI's) never pull the staged package
    from under each other. Directories of sessions that have ended are removed."""
    parent = FOREIGN / DEBIAN_ARCH[arch]
    for old in parent.glob("session-*"):
        pid = old.name.removeprefix("session-")
        alive = pid.isdigit() and Path("/proc", pid).exists()
        if not alive or int(pid) == os.getpid():
            shutil.rmtree(old, ignore_errors=True)
    home = parent / f"session-{os.getpid()}"
    home.mkdir(parents=True)
    return home


def foreign_python(arch: str, tree: Path | None = None) -> ForeignPython:
    """Build (once per test session) everything the target's Python needs to import
    archcrypt.crypto, in `tree` if it is already made; safe to call from several threads."""
    target = TARGETS[arch]
    with _foreign_locks[arch]:
        if arch in _foreign_built:
            return _foreign_built[arch]
        tree = tree or foreign_tree(arch)
        make(f"CC={target.cc}", "lib")
        library = Path(make(f"CC={target.cc}", "--no-print-directory", "print-lib").stdout.strip())
        config = target_sysconfig(tree, target.triple)

        home = _session_home(arch)
        stage = home / "stage"
        shutil.copytree(ROOT / "service" / "archcrypt", stage / "archcrypt",
                        ignore=shutil.ignore_patterns("__pycache__", "_native.*", "_native*.so"))
        recipe = ffi_recipe()
        native_module = stage / "archcrypt" / recipe.FILENAME
        recipe.build_extension(
            native_module,
            cc=target.cc,
            library=library,
            python_include=[Path(f"{tree}{config['INCLUDEPY']}")],
            # the multiarch pyconfig.h; after the cross toolchain's own libc headers
            system_include=[tree / "usr" / "include"],
            source=cffi_source(),
        )
        shutil.copy2(COMPAT_PLUGIN, stage / "archcrypt_foreign_compat.py")
        (stage / "pytest.ini").write_text(FOREIGN_PYTEST_INI)
        # cryptography-vectors is pure Python: the host's pinned copy serves every arch.
        vectors = importlib.util.find_spec("cryptography_vectors")
        assert vectors and vectors.origin, (
            "cryptography_vectors is not installed on the host (pip install -e '.[test]')"
        )
        (stage / "cryptography_vectors").symlink_to(Path(vectors.origin).parent)
        # Byte code for the staged package, compiled natively when the versions agree.
        if config["VERSION"] == f"{sys.version_info.major}.{sys.version_info.minor}":
            compileall.compile_dir(stage / "archcrypt", quiet=1)
        built = ForeignPython(target, tree, home, native_module)
        _foreign_built[arch] = built
        return built
