"""One build of archcrypt._native: pip install, the image's cross build (tests/images) and the
foreign-arch tests (test_foreign_python.py) all compile it with native/build_ffi.py's
build_extension(), which compiles its record (flags, compiler, digests of cffi's C and of
the library's code) into the module. Here: the module this interpreter imports (made by
`pip install -e .`, i.e. setup.py) carries the record this tree's recipe gives, and cffi's C
refuses to compile any other way."""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

import archcrypt._native

from .harness import NATIVE, cffi_source, expected_ffi_record, ffi_recipe


def test_the_installed_module_is_the_recipes_build() -> None:
    module = Path(archcrypt._native.__file__)
    recipe = ffi_recipe()
    assert module.name == recipe.FILENAME, f"{module}: not the recipe's file name"
    # setup.py compiles with $CC, else cc: the compiler `make -C native lib` used too
    expected = expected_ffi_record(os.environ.get("CC") or "cc")
    assert recipe.build_record(module) == expected, (
        f"{module} was not built from this tree by native/build_ffi.py "
        "(stale? `make setup` or `python native/build_ffi.py` rebuilds it)"
    )


def test_the_binding_compiles_only_through_the_recipe() -> None:
    """cffi's C without the recipe's record is a compile error, so no build path can
    bypass build_extension() and its flags."""
    include = sysconfig.get_paths()["include"]
    compile_alone = subprocess.run(
        ["cc", "-fsyntax-only", f"-I{NATIVE / 'include'}", f"-I{include}", str(cffi_source())],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compile_alone.returncode != 0
    assert "compiled by native/build_ffi.py's build_extension()" in compile_alone.stderr
