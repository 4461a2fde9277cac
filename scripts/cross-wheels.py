#!/usr/bin/env python3
"""Wheels for a target machine that PyPI has none for, cross-built from the sdist.

    cross-wheels.py --machine s390x --triple s390x-linux-gnu --python-version 3.11 \
        --sysroot /opt/target-python --wheelhouse DIR [--cache DIR] \
        [--platform TAG ...] REQUIREMENT...

pip is asked for a binary wheel for the target of each requirement (the --platform tags,
as `pip install --platform` will be; all at once first); one it finds is left to pip. For
the others the sdist is downloaded and built into DIR with the target's compiler, the way
the cffi module is
(scripts/cross-build.sh): Debian's cross gcc, the target's Python headers and its
_sysconfigdata (EXT_SUFFIX, CC, the platform tag) unpacked from Debian's packages for that
architecture into --sysroot (libpython3.X-dev, libpython3.X-minimal). The build backend
runs on the build machine's Python of the same minor version; only the backend's process
sees the target's configuration
(_PYTHON_SYSCONFIGDATA_NAME, _PYTHON_HOST_PLATFORM, CPython's cross-build switches), while
its build requirements are installed for the build machine by `build`'s isolated
environment. Every shared object in a built wheel must be an ELF for the target.

--cache keeps built wheels keyed by the sdist's sha256, the target, the Python version, the
compiler's version and this recipe (RECIPE), so a later build reuses them.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement

# Bump when the way a wheel is built changes: cached wheels of an older recipe are rebuilt.
RECIPE = 1

# ELF e_machine and byte order (EI_DATA: 1 little, 2 big) of each target, by uname -m.
ELF_MACHINE = {
    "x86_64": (62, 1),
    "aarch64": (183, 1),
    "ppc64le": (21, 1),
    "s390x": (22, 2),
}
# Per-package cross-build switches their build scripts document (uvloop builds its vendored
# libuv with ./configure, which needs --host to pick the cross compiler).
PACKAGE_ENV = {"uvloop": {"LIBUV_CONFIGURE_HOST": "{triple}"}}


def pip(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args],
        capture_output=True,
        text=True,
        check=False,
        env=dict(env) if env is not None else None,
    )


def has_binary(requirements: Sequence[str], args: argparse.Namespace, scratch: Path) -> bool:
    """Whether pip finds a wheel for the target of every one of these (resolved from the
    index's metadata, not downloaded: --dry-run)."""
    platforms = [arg for tag in args.platform for arg in ("--platform", tag)]
    probe = pip(
        "install", "--dry-run", "--quiet", "--no-deps", "--ignore-installed",
        "--only-binary=:all:", "--implementation", "cp", "--python-version",
        args.python_version, *platforms, "--target", str(scratch / "probe"), *requirements,
    )  # fmt: skip
    return probe.returncode == 0


def download_sdist(requirement: str, scratch: Path) -> Path:
    dest = scratch / "sdist"
    # --no-binary for this package only: pip prepares the sdist's metadata in an isolated
    # environment, whose build requirements (Cython) must come as wheels for this machine.
    name = Requirement(requirement).name
    done = pip("download", "--quiet", "--no-deps", f"--no-binary={name}", "--dest", str(dest),
               requirement)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"cross-wheels: no sdist for {requirement}:\n{done.stderr[-3000:]}")
    (sdist,) = [p for p in dest.iterdir() if p.name.endswith(".tar.gz")]
    return sdist


def compiler_version(triple: str) -> str:
    done = subprocess.run([f"{triple}-gcc", "-dumpfullversion"], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def target_sysconfig(sysroot: Path, triple: str, python_version: str, out: Path) -> str:
    """A copy of the target's _sysconfigdata whose include directories point into the
    sysroot (setuptools takes them from INCLUDEPY/CONFINCLUDEPY when they exist); returns
    the module name for _PYTHON_SYSCONFIGDATA_NAME."""
    # Debian's file; _sysconfigdata__linux_<triple>.py, the name CPython looks for, is a
    # link to it (in another package)
    source = sysroot / "usr" / "lib" / f"python{python_version}" / f"_sysconfigdata__{triple}.py"
    name = f"_sysconfigdata__linux_{triple}"
    if not source.is_file():
        found = sorted(p.parent.name for p in sysroot.glob(f"usr/lib/python3.*/{source.name}"))
        raise SystemExit(
            f"cross-wheels: no {source}: the target's Python is {found or 'missing'}, the runtime "
            f"{python_version}; an extension that is not abi3 must be built for the runtime's "
            "own version"
        )
    tree = ast.parse(source.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "build_time_vars":
            variables = dict(ast.literal_eval(node.value))
            break
    else:
        raise SystemExit(f"cross-wheels: {source}: no build_time_vars")
    include = sysroot / "usr" / "include" / f"python{python_version}"
    if not (include / "Python.h").is_file():
        raise SystemExit(f"cross-wheels: no Python.h in {include}")
    variables["INCLUDEPY"] = variables["CONFINCLUDEPY"] = str(include)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.py").write_text(f"build_time_vars = {variables!r}\n")
    return name


def cross_environment(
    args: argparse.Namespace, sysconfig_dir: Path, package: str
) -> dict[str, str]:
    name = target_sysconfig(args.sysroot, args.triple, args.python_version, sysconfig_dir)
    env = {
        "_PYTHON_SYSCONFIGDATA_NAME": name,
        "_PYTHON_HOST_PLATFORM": f"linux-{args.machine}",
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(sysconfig_dir), os.environ.get("PYTHONPATH")])
        ),
        # Debian's pyconfig.h in include/python3.X picks <triple>/python3.X/pyconfig.h by
        # the compiler's arch macros: the sysroot's include dir, after the toolchain's own
        # libc headers. -g0: the target's CFLAGS carry -g, which would triple the size.
        "CFLAGS": f"-idirafter {args.sysroot / 'usr' / 'include'} -g0",
        "CC": f"{args.triple}-gcc",
        "LDSHARED": f"{args.triple}-gcc -shared",
    }
    for key, value in PACKAGE_ENV.get(package, {}).items():
        env[key] = value.format(triple=args.triple)
    return env


def build_wheel(sdist: Path, args: argparse.Namespace, scratch: Path, out: Path) -> Path:
    from build.env import DefaultIsolatedEnv
    from pyproject_hooks import quiet_subprocess_runner

    from build import ProjectBuilder

    with tarfile.open(sdist) as archive:
        # the "data" filter (no links out, no devices) where this Python has it (3.11.4+)
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(scratch / "src", **safe)
    (source,) = (scratch / "src").iterdir()
    package = re.split(r"[-_.]", sdist.name, maxsplit=1)[0].lower()
    cross = cross_environment(args, scratch / "sysconfig", package)

    def runner(
        cmd: Sequence[str], cwd: str | None = None, extra_environ: Mapping[str, str] | None = None
    ) -> None:
        # Only the backend's process is the target's: pip in the isolated environment
        # installs the build requirements for this machine.
        environment = {**(extra_environ or {}), **cross}
        if extra_environ and "PYTHONPATH" in extra_environ:
            environment["PYTHONPATH"] = os.pathsep.join(
                [cross["PYTHONPATH"], extra_environ["PYTHONPATH"]]
            )
        try:
            quiet_subprocess_runner(cmd, cwd, environment)
        except subprocess.CalledProcessError as exc:
            output = exc.output.decode(errors="replace") if exc.output else ""
            message = f"cross-wheels: building {sdist.name} failed:\n{output[-6000:]}"
            raise SystemExit(message) from None

    with DefaultIsolatedEnv() as env:
        builder = ProjectBuilder.from_isolated_env(env, source, runner=runner)
        env.install(builder.build_system_requires)
        env.install(builder.get_requires_for_build("wheel"))
        wheel = Path(builder.build("wheel", str(out)))
    check_wheel(wheel, args.machine)
    return wheel


def check_wheel(wheel: Path, machine: str) -> None:
    """Every shared object in the wheel is an ELF for the target: a backend that ignored the
    cross compiler would otherwise ship the build machine's code under the target's tag."""
    e_machine, data = ELF_MACHINE[machine]
    with zipfile.ZipFile(wheel) as archive:
        objects = [n for n in archive.namelist() if n.endswith(".so")]
        if not objects:
            raise SystemExit(f"cross-wheels: {wheel.name} holds no extension module")
        for name in objects:
            head = archive.open(name).read(20)
            byteorder = "little" if head[5] == 1 else "big"
            if (
                head[:4] != b"\x7fELF"
                or head[5] != data
                or (int.from_bytes(head[18:20], byteorder) != e_machine)
            ):
                raise SystemExit(f"cross-wheels: {wheel.name}: {name} is not a {machine} ELF")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True, choices=sorted(ELF_MACHINE))
    parser.add_argument("--triple", required=True, help="e.g. s390x-linux-gnu")
    parser.add_argument("--python-version", required=True, help="e.g. 3.11")
    parser.add_argument("--sysroot", required=True, type=Path)
    parser.add_argument("--wheelhouse", required=True, type=Path)
    parser.add_argument("--cache", type=Path, help="keep built wheels here between builds")
    parser.add_argument("--platform", action="append", default=[], help="pip --platform tag")
    parser.add_argument("requirements", nargs="+")
    args = parser.parse_args()
    args.sysroot = args.sysroot.resolve()
    args.wheelhouse.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="cross-wheels-") as tmp:
        if has_binary(args.requirements, args, Path(tmp)):
            return  # the usual case (amd64, arm64): one look-up
        # Which ones have none: one look-up each, side by side.
        with ThreadPoolExecutor(max_workers=8) as pool:
            found = list(
                pool.map(
                    lambda pair: has_binary([pair[1]], args, Path(tmp) / str(pair[0])),
                    enumerate(args.requirements),
                )
            )
    for requirement in (r for r, ok in zip(args.requirements, found, strict=True) if not ok):
        with tempfile.TemporaryDirectory(prefix="cross-wheels-") as tmp:
            scratch = Path(tmp)
            sdist = download_sdist(requirement, scratch)
            key = hashlib.sha256(
                f"{RECIPE} {sha256(sdist)} {args.machine} {args.triple} {args.python_version} "
                f"{compiler_version(args.triple)}".encode()
            ).hexdigest()[:16]
            stem = sdist.name.removesuffix(".tar.gz")
            cached = args.cache / f"{stem}-{args.machine}-{key}" if args.cache else None
            if cached and any(cached.glob("*.whl")):
                (wheel,) = cached.glob("*.whl")
                check_wheel(wheel, args.machine)
                print(f"cross-wheels: {requirement}: {wheel.name} (cached)", file=sys.stderr)
            else:
                wheel = build_wheel(sdist, args, scratch, scratch / "out")
                if cached:
                    cached.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(wheel, cached / wheel.name)
                print(f"cross-wheels: {requirement}: built {wheel.name} from {sdist.name}",
                      file=sys.stderr)  # fmt: skip
            shutil.copy2(wheel, args.wheelhouse / wheel.name)


if __name__ == "__main__":
    main()
