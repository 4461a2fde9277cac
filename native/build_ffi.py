"""The one cffi builder: archcrypt._native in API mode over libarchcrypt.a, and the one
recipe that compiles it.

The cdef is include/archcrypt_api.h read verbatim, so the binding cannot drift from
the C declarations. Every build of the module is `build_extension()` here, with the same
flags, for every target: setup.py's build_ext (`pip install`), scripts/cross-build.sh (the
image's builder stage, through `python native/build_ffi.py --cc ... --output ...`) and
tests/cross/harness.py (the foreign-arch tests). So the image ships the module the tests
prove. Each build compiles its record (RECIPE, the flags, the compiler, the digests of the
C source and of the library's code) into the module; `build_record(path)` reads it back from the
file without loading it (any arch), and the emitted C refuses to compile without it.

Run this file directly (`python native/build_ffi.py`) to build the library and drop the
extension into service/archcrypt/ for debugging without pip. The static library comes from
`make -C native -s print-lib` (the Makefile knows the target triple, CC-aware for cross
builds) unless ARCHCRYPT_LIB names one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cffi
from cffi import FFI

NATIVE = Path(__file__).resolve().parent
INCLUDE = NATIVE / "include"
API_HEADER = INCLUDE / "archcrypt_api.h"
MODULE = "archcrypt._native"
# The stable ABI: cffi's C uses only the limited API, so one file serves every CPython 3.x
# of the target, whatever headers it was compiled against.
FILENAME = "_native.abi3.so"

# Bump when the recipe changes in a way the flags below do not show.
RECIPE = 1
# The glue is cffi's generated C; the kernels' flags belong to native/Makefile. Hidden
# visibility and --exclude-libs keep libarchcrypt's symbols out of the dynamic table (only
# PyInit__native is exported); full RELRO as distributions link their extensions. The
# library's objects carry -g (for the C self-test's debugging): --strip-debug leaves 0.3 of
# 1.9 MB, the symbol table kept for perf and py-spy --native.
CFLAGS = ("-O2", "-fPIC", "-pthread", "-fwrapv", "-fno-strict-aliasing", "-fvisibility=hidden")
LDFLAGS = (
    "-shared", "-pthread", "-Wl,--exclude-libs,ALL", "-Wl,-z,relro", "-Wl,-z,now",
    "-Wl,--strip-debug",
)  # fmt: skip
# How the record starts in the module's read-only data.
RECORD_MARK = b"archcrypt-ffi-build:"

PREAMBLE = """\
#include "archcrypt.h"

#ifndef ARCHCRYPT_FFI_BUILD
#error "archcrypt._native is compiled by native/build_ffi.py's build_extension(), nothing else"
#endif
/* How this module was built; native/build_ffi.py's build_record() reads it from the file. */
__attribute__((used)) static const char archcrypt_ffi_build[] = ARCHCRYPT_FFI_BUILD;
"""

ffibuilder = FFI()
ffibuilder.cdef(API_HEADER.read_text(encoding="utf-8"))
ffibuilder.set_source(MODULE, PREAMBLE)


class BuildError(RuntimeError):
    """The compiler refused the module."""


def _make() -> str:
    return os.environ.get("MAKE", "make")


def static_library() -> Path:
    """Path of libarchcrypt.a for the target compiler (it need not exist yet)."""
    override = os.environ.get("ARCHCRYPT_LIB")
    if override:
        return Path(override).resolve()
    try:
        result = subprocess.run(
            [_make(), "--no-print-directory", "-s", "-C", str(NATIVE), "print-lib"],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise SystemExit(
            f"build_ffi: `make -C native print-lib` failed ({detail.strip()}); "
            "set ARCHCRYPT_LIB=/path/to/libarchcrypt.a to link a prebuilt library"
        ) from exc
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    if not lines:
        raise SystemExit("build_ffi: `make -C native print-lib` printed nothing")
    path = Path(lines[-1])
    return path if path.is_absolute() else (NATIVE / path).resolve()


def emit_source(path: Path) -> Path:
    """cffi's C for the module (the same for every target), written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    ffibuilder.emit_c_code(str(partial))
    partial.replace(path)
    return path


def host_python_include() -> list[Path]:
    """Python.h and pyconfig.h of the interpreter running this (setup.py's case)."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(Path(paths[key]) for key in ("include", "platinclude")))


def _compiler(cc: str, *args: str) -> str:
    return subprocess.run([cc, *args], check=True, capture_output=True, text=True).stdout.strip()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def library_digest(library: Path, target: str) -> str:
    """sha256 of libarchcrypt.a without its debug sections and compiler comments: the
    objects' code and data, the same wherever the tree was built (the DWARF holds the build
    directory, .comment the compiler package's Debian revision)."""
    objcopy = next(
        (tool for tool in (f"{target}-objcopy", "objcopy") if shutil.which(tool)), "objcopy"
    )
    with tempfile.TemporaryDirectory(prefix="build_ffi-") as tmp:
        stripped = Path(tmp) / library.name
        subprocess.run(
            [objcopy, "--strip-debug", "--remove-section=.comment", str(library), str(stripped)],
            check=True,
            capture_output=True,
        )
        return _sha256(stripped)


def record_for(cc: str, source: Path, library: Path) -> dict[str, Any]:
    """What a build with this compiler, source and library records."""
    target = _compiler(cc, "-dumpmachine")
    return {
        "recipe": RECIPE,
        "cflags": list(CFLAGS),
        "ldflags": list(LDFLAGS),
        "target": target,
        "compiler": f"gcc {_compiler(cc, '-dumpfullversion')}",
        "cffi": cffi.__version__,
        "source_sha256": _sha256(source),
        "library_sha256": library_digest(library, target),
    }


def build_extension(
    output: Path,
    *,
    cc: str | None = None,
    library: Path | None = None,
    python_include: Sequence[Path] | None = None,
    system_include: Sequence[Path] = (),
    source: Path | None = None,
) -> dict[str, Any]:
    """Compile and link archcrypt._native into `output`; returns the record it carries.

    cc: the target's compiler (default $CC, else cc); library: its libarchcrypt.a (default
    `make print-lib` for that CC); python_include: the target's Python.h directory (default
    this interpreter's); system_include: searched after the compiler's own headers (a
    foreign tree's /usr/include, for Debian's multiarch pyconfig.h); source: cffi's C (default
    emitted here)."""
    cc = cc or os.environ.get("CC") or "cc"
    library = library or static_library()
    includes = list(python_include) if python_include is not None else host_python_include()
    with tempfile.TemporaryDirectory(prefix="build_ffi-") as tmp:
        source = source or emit_source(Path(tmp) / "_native.c")
        record = record_for(cc, source, library)
        text = RECORD_MARK.decode() + json.dumps(record, sort_keys=True, separators=(",", ":"))
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(f"{output.name}.{os.getpid()}.tmp")
        command = [
            cc,
            *CFLAGS,
            # a C string literal: JSON's escapes are C's for this ASCII text
            f"-DARCHCRYPT_FFI_BUILD={json.dumps(text)}",
            f"-I{INCLUDE}",
            *(f"-I{path}" for path in includes),
            *(arg for path in system_include for arg in ("-idirafter", str(path))),
            str(source),
            str(library),
            *LDFLAGS,
            "-o",
            str(partial),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise BuildError(
                f"build_ffi: compiling {MODULE} failed:\n{' '.join(command)}\n{done.stderr}"
            )
        partial.replace(output)  # atomic: a running process may have the old one mapped
    return record


def build_record(module: Path) -> dict[str, Any]:
    """The record a build_extension() build carries, read from the file (no import, so any
    arch); KeyError when the module was not built by the recipe."""
    data = module.read_bytes()
    start = data.find(RECORD_MARK)
    if start < 0:
        raise KeyError(f"{module}: no {RECORD_MARK.decode()} record (not built by build_ffi.py)")
    end = data.index(b"\0", start)
    record: dict[str, Any] = json.loads(data[start + len(RECORD_MARK) : end])
    return record


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Build archcrypt._native (default: for this machine, into service/archcrypt)."
    )
    parser.add_argument("--cc", help="the target's C compiler [$CC, else cc]")
    parser.add_argument("--library", type=Path, help="libarchcrypt.a [make print-lib]")
    parser.add_argument("--python-include", type=Path, action="append",
                        help="the target's Python.h directory [this interpreter's]")  # fmt: skip
    parser.add_argument("--system-include", type=Path, action="append", default=[],
                        help="searched after the compiler's own headers (-idirafter)")  # fmt: skip
    parser.add_argument("--output", type=Path,
                        help=f"the module file [service/archcrypt/{FILENAME}]")  # fmt: skip
    args = parser.parse_args(argv)
    if args.cc:
        os.environ["CC"] = args.cc  # for make, as for the compile below
    if args.library is None and not os.environ.get("ARCHCRYPT_LIB"):
        subprocess.run([_make(), "-C", str(NATIVE), "lib"], check=True)
    output = args.output
    if output is None:
        package = NATIVE.parent / "service" / "archcrypt"
        for stale in package.glob("_native.*"):
            if stale.name != FILENAME:
                stale.unlink()  # Python picks among builds by suffix, not by age
        output = package / FILENAME
    try:
        record = build_extension(
            output,
            cc=args.cc,
            library=args.library,
            python_include=args.python_include,
            system_include=args.system_include,
        )
    except BuildError as exc:
        raise SystemExit(str(exc)) from None
    print(f"build_ffi: {output} ({record['target']}, {record['compiler']})", file=sys.stderr)


if __name__ == "__main__":
    main()
