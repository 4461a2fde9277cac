"""Short form of the constant-time drill: every row this host's valgrind can run, by the
ctgrind method (native/tests/ct/ctgrind.c; tests/drill/ct.py reads memcheck's reports).

Zero findings on every row but the known exception, the portable Camellia, whose S-box
lookups by secret bytes must be found: that shows the check can fail. The long form
(`make drill`) adds the foreign architectures under qemu and the build without
AC_DECLASSIFY, where the tag check's branch must show. The AVX-512/GFNI rows, which
valgrind cannot decode, run through the emulation build (make -C native ctgrind-emu).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from . import ct


@pytest.fixture(scope="module")
def binary() -> Path:
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed (scripts/setup.sh installs it when run as root)")
    return ct.build()


@pytest.fixture(scope="module")
def under_valgrind(binary: Path) -> list[tuple[str, str]]:
    return ct.list_rows(ct.valgrind(), binary)


@pytest.fixture(scope="module")
def results(
    binary: Path, under_valgrind: list[tuple[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> list[ct.RowResult]:
    # the rows over two valgrind processes (a start-up per row would cost more than the
    # checks), each finding under the row whose marker precedes it
    return ct.run_all(
        under_valgrind, binary, tmp_path_factory.mktemp("ctgrind"), jobs=2, batched=True
    )


def test_every_row_valgrind_runs_is_checked(results: list[ct.RowResult]) -> None:
    checked = {r.key for r in results}
    # the tables whose secrets the drill marks, each with its portable row at least
    for table in ("chacha20", "poly1305", "chacha20-poly1305", "sha256", "sha512", "camellia"):
        assert any(t == table for t, _ in checked), (table, checked)
    assert ("camellia", "portable") in checked


@pytest.mark.parametrize(
    "table", ["chacha20", "poly1305", "chacha20-poly1305", "sha256", "sha512", "camellia"]
)
def test_no_secret_dependent_branch_or_address(results: list[ct.RowResult], table: str) -> None:
    for r in results:
        if r.table != table or r.exception:
            continue
        assert r.answers_ok, (
            f"{r.table}/{r.row} gave wrong answers under valgrind:\n{r.log[-3000:]}"
        )
        assert not r.findings, f"{r.table}/{r.row}:\n" + "\n".join(
            f"{n} x {label}" for label, n in ct.summarize(r.findings)
        )


def test_the_portable_camellia_lookups_are_found(results: list[ct.RowResult]) -> None:
    """The known exception, found where it is: the check can fail."""
    (portable,) = [r for r in results if r.key == ("camellia", "portable")]
    assert portable.answers_ok, portable.log[-3000:]
    assert portable.findings, "the table lookups of camellia/portable went unnoticed"
    frames = {f.frame for f in portable.findings}
    assert all("camellia/portable.c" in frame for frame in frames), frames
    assert {f.kind for f in portable.findings} == {"UninitValue"}  # addresses, not branches
    assert all("client request" in f.origin for f in portable.findings), portable.findings[:3]


def test_hidden_from_valgrind_rows_are_listed(
    binary: Path, under_valgrind: list[tuple[str, str]]
) -> None:
    """Rows this CPU runs that valgrind's CPUID hides (SHA-NI, VAES, AVX-512, GFNI on
    valgrind 3.19) are reported as not covered, never silently skipped."""
    native = set(ct.list_rows([], binary))
    under = set(under_valgrind)
    assert under <= native
    hidden = native - under
    features = set(
        subprocess.run([str(binary), "--list"], capture_output=True, text=True, check=True)
        .stdout.splitlines()[0]
        .split(":", 1)[1]
        .split()
    )
    if "sha_ni" in features:
        assert ("sha256", "sha_ni") in hidden
    if "vaes" in features:
        assert ("camellia", "vaes_avx2") in hidden


@pytest.fixture(scope="module")
def emulated(
    binary: Path, under_valgrind: list[tuple[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> list[ct.RowResult]:
    """The rows this host's valgrind cannot run, as far as the emulation build offers
    them to it (every AVX-512/GFNI row; sha256's sha_ni_avx512 still needs SHA-NI)."""
    emu = ct.build_emulated()
    rows = [r for r in ct.list_rows(ct.valgrind(), emu) if r not in under_valgrind]
    results = ct.run_all(rows, emu, tmp_path_factory.mktemp("ctgrind-emu"), jobs=2, batched=True)
    for r in results:
        r.set_aside_emulation()
    return results


def test_avx512_rows_through_the_emulation(emulated: list[ct.RowResult]) -> None:
    """The AVX-512 rows' own code (key set-up, loops, loads and stores; the instructions
    emulated in C) has no secret-dependent branch or address."""
    checked = {r.key for r in emulated}
    for key in [
        ("chacha20", "avx512"),
        ("poly1305", "avx512ifma"),
        ("chacha20-poly1305", "avx512"),
        ("sha512", "avx512"),
        ("camellia", "gfni_avx512"),
    ]:
        assert key in checked, (key, checked)
    for r in emulated:
        assert r.answers_ok, f"{r.table}/{r.row} (emulated) under valgrind:\n{r.log[-3000:]}"
        assert not r.findings, f"{r.table}/{r.row} (emulated):\n" + "\n".join(
            f"{n} x {label}" for label, n in ct.summarize(r.findings)
        )


def test_emulation_findings_are_set_aside_only_inside_the_emulation(
    emulated: list[ct.RowResult],
) -> None:
    """What is set aside is the emulation's own table and range check, nothing of a row:
    the GF(2^8) inverse's table shows on camellia's gfni_avx512 row, so the setting aside
    is exercised, and every artifact's frame is in emu512.h."""
    (camellia,) = [r for r in emulated if r.key == ("camellia", "gfni_avx512")]
    assert camellia.artifacts, "the emulated GF(2^8) inverse's table lookups went unnoticed"
    for r in emulated:
        assert all(ct.EMULATION_FRAME in f.frame for f in r.artifacts), r.artifacts[:3]
