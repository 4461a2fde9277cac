"""The ISA registry (native/isa.mk) against the rows (native/src/<algorithm>/rows.h).

A row must require every CPU feature its slug's compiler flags assume; otherwise masking
that feature (or a CPU without it) leaves a kernel selected whose instructions fault. The
build refuses such a row (native/tools/check-rows.awk) and so does archcrypt_init(). Each
check is proven here on a copy of native/ with a deliberately wrong row: the two
disagreements the registry was made to end (chacha20/avx2 built with -mbmi2 but requiring
only avx2, poly1305/power8 built with -mvsx -mcrypto but requiring only arch_2_07)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .harness import NATIVE

HOST_TRIPLE = subprocess.run(
    ["gcc", "-dumpmachine"], capture_output=True, text=True, check=True
).stdout.strip()

# (rows.h, the row as it is, the row as it was before the registry, what the build must say)
WRONG_ROWS = {
    "chacha20-avx2": (
        "chacha20/rows.h",
        'AC_ROW(avx2, "avx2,bmi2")',
        'AC_ROW(avx2, "avx2")',
        'row avx2 requires "avx2", but isa.mk builds slug avx2 with flags that assume '
        "{avx2,bmi2} (ISA_FEATURES_avx2): the row must require bmi2 too",
    ),
    # A ppc64le row, caught by this (amd64) build: every build checks every arch's rows.
    "poly1305-power8": (
        "poly1305/rows.h",
        'AC_ROW(power8, "vsx,arch_2_07,vec_crypto")',
        'AC_ROW(power8, "arch_2_07")',
        'row power8 requires "arch_2_07", but isa.mk builds slug power8 with flags that '
        "assume {vsx,arch_2_07,vec_crypto} (ISA_FEATURES_power8): the row must require",
    ),
}


def copy_native(tmp_path: Path) -> Path:
    """What `make -C native` reads, without its build directory."""
    dest = tmp_path / "native"
    dest.mkdir()
    for name in ("Makefile", "isa.mk"):
        shutil.copy2(NATIVE / name, dest / name)
    for name in ("src", "include", "tools", "tests"):
        shutil.copytree(NATIVE / name, dest / name)
    return dest


def run_make(native: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-s", "-C", str(native), f"-j{os.cpu_count() or 2}", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: {old!r} is not there once"
    path.write_text(text.replace(old, new))


def test_the_rows_as_they_are_pass_the_check(tmp_path: Path) -> None:
    native = copy_native(tmp_path)
    proc = run_make(native, f"build/{HOST_TRIPLE}/gen/archcrypt_isa.h")
    assert proc.returncode == 0, proc.stderr
    header = (native / "build" / HOST_TRIPLE / "gen" / "archcrypt_isa.h").read_text()
    assert '#define AC_ISA_FEATURES_avx2 "avx2,bmi2"' in header
    assert "#define AC_ISA_BUILT_avx2 1" in header
    assert "#define AC_ISA_BUILT_power8 0" in header  # an amd64 build does not build it
    assert "#define AC_ISA_BUILT_portable 1" in header


@pytest.mark.parametrize("case", sorted(WRONG_ROWS))
def test_a_row_requiring_less_than_its_isa_fails_the_build(tmp_path: Path, case: str) -> None:
    rows, right, wrong, message = WRONG_ROWS[case]
    native = copy_native(tmp_path)
    edit(native / "src" / rows, right, wrong)
    proc = run_make(native, "lib")
    assert proc.returncode != 0, f"the build accepted {wrong}"
    assert f"src/{rows}:" in proc.stderr and message in proc.stderr, proc.stderr
    # The check runs before anything is compiled.
    assert not (native / "build" / HOST_TRIPLE / "obj").exists()


def test_a_row_without_a_slug_in_isa_mk_fails_the_build(tmp_path: Path) -> None:
    native = copy_native(tmp_path)
    edit(native / "src" / "chacha20" / "rows.h", 'AC_ROW(ssse3, "ssse3")', 'AC_ROW(sse9, "ssse3")')
    proc = run_make(native, "lib")
    assert proc.returncode != 0
    assert "row sse9: no ISA slug sse9 in isa.mk" in proc.stderr, proc.stderr


@pytest.mark.slow  # a library build at -O0 (~10 CPU seconds)
def test_init_refuses_a_row_requiring_less_than_its_isa(tmp_path: Path) -> None:
    """The same rule at run time, on what was compiled in: the build check is skipped
    (ROWS_CHECK=0) and the ssse3 slug claims one feature more than the chacha20/ssse3 row
    requires. archcrypt_init() must fail with the reason, so the self-test (and the
    service, whose start-up calls it) stops."""
    native = copy_native(tmp_path)
    proc = run_make(
        native, "ROWS_CHECK=0", "ISA_FEATURES_ssse3=ssse3 sse4_1", "OPT=-O0", "selftest"
    )
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run(
        [str(native / "build" / HOST_TRIPLE / "selftest")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2, run.stdout[-2000:]
    assert (
        "dispatch row chacha20/ssse3: requires {ssse3}, but isa.mk builds slug ssse3 with "
        "flags that assume {ssse3,sse4_1}: the row must require sse4_1 too"
    ) in run.stderr, run.stderr
