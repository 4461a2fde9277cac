"""What setuptools cannot read from pyproject.toml: the cffi module and the native build hook.

build_ext first runs `make -C native lib` (the Makefile owns every compiler flag and
honours CC for cross builds), then cffi compiles archcrypt._native against the static
library. ARCHCRYPT_LIB=/path/to/libarchcrypt.a skips make and links that library instead.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class BuildNativeFirst(build_ext):
    """build_ext that brings native/build/<triple>/libarchcrypt.a up to date first."""

    def run(self) -> None:
        if not os.environ.get("ARCHCRYPT_LIB"):
            make = os.environ.get("MAKE", "make")
            jobs = [] if "MAKEFLAGS" in os.environ else [f"-j{os.cpu_count() or 1}"]
            subprocess.run([make, *jobs, "-C", str(ROOT / "native"), "lib"], check=True)
        # `python native/build_ffi.py` drops a differently-suffixed build into the package;
        # Python would keep loading that one, whatever this build produces.
        for ext in self.extensions:
            wanted = Path(self.get_ext_filename(ext.name)).name
            for stale in (ROOT / "service" / "archcrypt").glob("_native.*"):
                if stale.name != wanted:
                    stale.unlink()
        super().run()


setup(
    cffi_modules=["native/build_ffi.py:ffibuilder"],
    cmdclass={"build_ext": BuildNativeFirst},
)
