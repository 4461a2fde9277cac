"""What setuptools cannot read from pyproject.toml: the cffi module and the native build hook.

build_ext first runs `make -C native lib` (the Makefile owns every kernel's compiler flag
and honours CC for cross builds), then native/build_ffi.py's build_extension() compiles
archcrypt._native against the static library: the one recipe, which the image's cross build
and the foreign-arch tests use too (not setuptools' compiler, whose flags are whatever the
running Python was built with). ARCHCRYPT_LIB=/path/to/libarchcrypt.a skips make and links
that library instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "native"))
import build_ffi  # noqa: E402  (native/ is not a package)


class BuildNativeFirst(build_ext):
    """build_ext that brings native/build/<triple>/libarchcrypt.a up to date first."""

    def run(self) -> None:
        if not os.environ.get("ARCHCRYPT_LIB"):
            make = os.environ.get("MAKE", "make")
            jobs = [] if "MAKEFLAGS" in os.environ else [f"-j{os.cpu_count() or 1}"]
            subprocess.run([make, *jobs, "-C", str(ROOT / "native"), "lib"], check=True)
        # A build under another suffix (_native.cpython-*.so from an older checkout) would
        # keep being loaded, whatever this build produces.
        for ext in self.extensions:
            wanted = Path(self.get_ext_filename(ext.name)).name
            for stale in (ROOT / "service" / "archcrypt").glob("_native.*"):
                if stale.name != wanted:
                    stale.unlink()
        super().run()

    def build_extension(self, ext: Extension) -> None:
        if ext.name != build_ffi.MODULE:
            super().build_extension(ext)
            return
        output = Path(self.get_ext_fullpath(ext.name))
        build_ffi.build_extension(output, library=build_ffi.static_library())


setup(
    # No sources for setuptools to compile: build_extension() above hands it to the recipe.
    # py_limited_api names it _native.abi3.so, as every other build of it is named.
    ext_modules=[Extension(build_ffi.MODULE, sources=[], py_limited_api=True)],
    cmdclass={"build_ext": BuildNativeFirst},
)
