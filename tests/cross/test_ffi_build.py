"""One build of archcrypt._native and archcrypt._fast: pip install, the image's cross build
(tests/images) and the foreign-arch tests (test_foreign_python.py) all compile the shared
object holding both with native/build_ffi.py's build_extension(), which compiles its record
(flags, compiler, digests of cffi's C, of native/python/fast.c and of the library's code) into
it. Here: the module this interpreter imports (made by `pip install -e .`, i.e. setup.py)
carries the record this tree's recipe gives, both modules live in it over one copy of the
library, and neither C source compiles any other way."""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
from pathlib import Path

import archcrypt._native
from archcrypt.crypto import _lib

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
    """cffi's C and fast.c without the recipe's record are compile errors, so no build
    path can bypass build_extension() and its flags."""
    include = sysconfig.get_paths()["include"]
    for source, module in ((cffi_source(), "_native"), (ffi_recipe().FAST_SOURCE, "_fast")):
        compile_alone = subprocess.run(
            ["cc", "-fsyntax-only", f"-I{NATIVE / 'include'}", f"-I{include}", str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert compile_alone.returncode != 0, source
        assert f"archcrypt.{module} is compiled by native/build_ffi.py's build_extension()" in (
            compile_alone.stderr
        )


def test_one_shared_object_two_modules_one_library() -> None:
    """The file exports the two modules' init functions and nothing else, links the
    library once (one archcrypt_init, one dispatch table per algorithm), and the facade's
    _fast is loaded from it."""
    module = Path(archcrypt._native.__file__)
    assert Path(_lib.fast.__file__) == module

    def symbols(*flags: str) -> list[str]:
        listing = subprocess.run(
            ["nm", *flags, "--defined-only", str(module)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [line.split()[-1] for line in listing.splitlines() if line.strip()]

    exported = [name for name in symbols("-D") if not name.startswith("_")]
    assert sorted(exported) == ["PyInit__fast", "PyInit__native"]
    every = symbols()
    assert every.count("archcrypt_init") == 1
    assert every.count("archcrypt_chacha20poly1305_seal") == 1
    tables = [name for name in every if re.fullmatch(r"(chacha20|sha256|camellia)_rows", name)]
    assert sorted(tables) == ["camellia_rows", "chacha20_rows", "sha256_rows"]
