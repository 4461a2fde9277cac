"""Short form of the native fuzzing drill (the long one: `make drill`, RELIABILITY.md).

native/tests/fuzz/fuzz_api.c, driven from a PRNG by tests/fuzz/standalone.c, in the
ASan/UBSan variants the suite already builds for the self-test (so this costs a link, not
a library build): on a host without AVX-512 the emu-check one, where the AVX-512 rows run
on the emulation and every amd64 row is fuzzed. Every runnable row against portable, with
random lengths, alignments, in-place calls and split points. Then the same harness over a
library with broken emulated intrinsics must fail: it can find a wrong kernel.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from . import fuzzing

SECONDS = 8  # of PRNG inputs under ASan: thousands of runs, every row many times
BROKEN_SECONDS = 30  # a bound: the broken build fails within its first inputs
# The break variant tests/cross/test_emulated_avx512.py builds (its build is reused).
BROKEN = "MADD52HI ROL_EPI32 GF2P8AFFINEINV ROR_EPI64"
BROKEN_ROWS = {
    "poly1305": "avx512ifma",
    "chacha20": "avx512",
    "camellia": "gfni_avx512",
    "sha512": "avx512",
}


def _rows(banner: str) -> dict[str, set[str]]:
    """'fuzz-api: archcrypt ... runnable rows: chacha20=avx2,ssse3,portable ...'"""
    return {t: set(r.split(",")) for t, r in re.findall(r"(\S+)=(\S+)", banner.split(":", 2)[-1])}


@pytest.fixture(scope="module")
def emulated() -> bool:
    return not fuzzing.host_has_avx512()


def test_every_runnable_row_agrees_with_portable_under_asan(emulated: bool) -> None:
    binary = fuzzing.build_standalone(emulated=emulated, asan=True)
    proc = subprocess.run(
        [str(binary), f"-max_total_time={SECONDS}", "-seed=17"],
        capture_output=True,
        text=True,
        timeout=SECONDS + 300,
        check=False,
    )
    log = proc.stdout[-3000:] + proc.stderr[-6000:]
    assert proc.returncode == 0, log
    runs = int(re.search(r"Done (\d+) runs", proc.stdout).group(1))  # type: ignore[union-attr]
    assert runs >= 100, log  # ~300 in 8 s on the shared 2-core machine
    banner = next(ln for ln in proc.stderr.splitlines() if "runnable rows:" in ln)
    rows = _rows(banner)
    # The fuzzer saw the rows the library offers here, the emulated AVX-512 ones included.
    from archcrypt import crypto

    for algorithm in crypto.backends().algorithms:
        runnable = {i.name for i in algorithm.implementations if i.runnable}
        assert runnable <= rows[algorithm.name], (algorithm.name, banner)
    if emulated:
        for table, row in BROKEN_ROWS.items():
            assert row in rows[table], banner


def test_a_broken_kernel_is_found() -> None:
    # The emulated build runs its AVX-512 rows on the emulation whatever the host has, so
    # this proves the harness can fail on an AVX-512 host too (where the test above fuzzes
    # the native rows with the same harness).
    binary = fuzzing.build_standalone(emulated=True, asan=False, break_=BROKEN)
    proc = subprocess.run(
        [str(binary), f"-max_total_time={BROKEN_SECONDS}", "-seed=17"],
        capture_output=True,
        text=True,
        timeout=BROKEN_SECONDS + 300,
        check=False,
    )
    assert proc.returncode != 0, f"broken {BROKEN} not found:\n{proc.stderr[-3000:]}"
    failure = next(
        (
            ln
            for ln in proc.stderr.splitlines()
            if ln.startswith("fuzz-api: ") and "runnable rows" not in ln
        ),
        "",
    )
    # e.g. "camellia-256/gfni_avx512 85 blocks ...: encrypt != portable", or an AEAD over
    # "chacha20=avx512"
    assert any(re.search(rf"\b{t}(-\d+)?[=/]{r}\b", failure) for t, r in BROKEN_ROWS.items()), (
        proc.stderr[-3000:]
    )
