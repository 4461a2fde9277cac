"""The one cffi builder: archcrypt._native in API mode over libarchcrypt.a.

The cdef is include/archcrypt_api.h read verbatim, so the binding cannot drift from
the C declarations. setup.py uses `ffibuilder`; run this file directly
(`python native/build_ffi.py`) to build the library and drop the extension into
service/archcrypt/ for debugging without pip.

The static library comes from `make -C native -s print-lib` (the Makefile knows the
target triple, CC-aware for cross builds) unless ARCHCRYPT_LIB names one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from cffi import FFI

NATIVE = Path(__file__).resolve().parent
INCLUDE = NATIVE / "include"
API_HEADER = INCLUDE / "archcrypt_api.h"
MODULE = "archcrypt._native"


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


def _for_setuptools(path: Path) -> str:
    """Relative to the project when setup.py drives the build (setuptools wants relative
    `depends`); absolute when run directly, because ffibuilder.compile() changes directory."""
    if __name__ != "__main__" and path.is_relative_to(Path.cwd()):
        return os.path.relpath(path)
    return str(path)


LIBRARY = static_library()

ffibuilder = FFI()
ffibuilder.cdef(API_HEADER.read_text(encoding="utf-8"))
ffibuilder.set_source(
    MODULE,
    '#include "archcrypt.h"\n',
    include_dirs=[_for_setuptools(INCLUDE)],
    extra_objects=[_for_setuptools(LIBRARY)],
    # relink when the library or the API changes, not only when cffi's C source does
    depends=[_for_setuptools(p) for p in (LIBRARY, API_HEADER, INCLUDE / "archcrypt.h")],
)


def main() -> None:
    if not os.environ.get("ARCHCRYPT_LIB"):
        subprocess.run([_make(), "-C", str(NATIVE), "lib"], check=True)
    built = Path(ffibuilder.compile(tmpdir=str(NATIVE / "build" / "ffi"), verbose=True))
    package = NATIVE.parent / "service" / "archcrypt"
    for stale in package.glob("_native.*"):
        stale.unlink()  # one build at a time: Python picks among them by suffix, not by age
    dest = package / built.name
    shutil.copy2(built, dest)
    print(f"build_ffi: {dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
