"""The AVX-512 kernels on a machine without AVX-512 (native/tests/emu/README.md).

`make -C native emu-check` compiles src/chacha20/avx512.c, src/poly1305/avx512ifma.c,
src/camellia/gfni_avx512.c and src/sha512/avx512.c, unmodified, against a plain-C emulation
of their intrinsics, makes the CPU detection of that build variant (and only that one)
report avx512f/vl/bw/dq/ifma and gfni, checks the emulation against real
SSE2/SSSE3/AVX2/AES-NI instructions, then runs the normal C self-test (known answers and
every runnable row against portable), plainly and under ASan/UBSan. The mutation runs
break an emulated intrinsic that one kernel uses and require the self-test to fail on that
row: proof that a green run means something."""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
from pathlib import Path

import pytest

from .harness import NATIVE, make, parse_dispatch, parse_features

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="the AVX-512 emulation is for x86_64 hosts",
)

EMULATED_FEATURES = {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512ifma", "gfni"}
AVX512_ROWS = {
    "chacha20": "avx512",
    "poly1305": "avx512ifma",
    "camellia": "gfni_avx512",
    "sha512": "avx512",
    # SHA-NI (real here) for one message, sixteen emulated zmm lanes for batches.
    "sha256": "sha_ni_avx512",
}
# The AEAD row made of the chacha20 and poly1305 rows above.
AEAD_ROW = "avx512"
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.M)


def selftest_runs(stdout: str) -> list[str]:
    """The output of each self-test run, from its banner line to its summary line."""
    return re.findall(r"^archcrypt .*?^\d+ passed, \d+ failed$", stdout, flags=re.M | re.S)


def row_status(run: str, alg: str, impl: str) -> str | None:
    match = re.search(rf"^  {re.escape(alg)}\s+{re.escape(impl)}\s+(.+)$", run, flags=re.M)
    return match.group(1).strip() if match else None


def rows_of(run: str, alg: str) -> dict[str, str]:
    return dict(re.findall(rf"^  {re.escape(alg)}\s+(\S+)\s+(.+)$", run, flags=re.M))


@functools.cache
def emu_check() -> subprocess.CompletedProcess[str]:
    return make("emu-check")


def test_emu_check_runs_the_avx512_rows_green() -> None:
    proc = emu_check()
    assert proc.stdout.count("emu512 self-check ok:") == 2, proc.stdout[-3000:]
    runs = selftest_runs(proc.stdout)
    assert len(runs) == 2, f"expected the plain and the ASan/UBSan run:\n{proc.stdout[-3000:]}"
    for run, what in zip(runs, ("plain", "ASan/UBSan"), strict=True):
        features = parse_features(run)
        assert features >= EMULATED_FEATURES, f"{what}: missing {EMULATED_FEATURES - features}"
        dispatch = parse_dispatch(run)
        for alg, impl in AVX512_ROWS.items():
            assert dispatch[alg] == impl, f"{what}: dispatch picked {dispatch[alg]} for {alg}"
            assert row_status(run, alg, impl) == "ok", (
                f"{what}: {alg}/{impl}: {row_status(run, alg, impl)}"
            )
        # The AVX-512 AEAD row is chosen; the others run on whatever chacha20/poly1305
        # rows are selected: the emulated ones.
        assert dispatch["chacha20-poly1305"] == "avx512", f"{what}: {dispatch}"
        aead = rows_of(run, "chacha20-poly1305")
        assert aead and all(s == "ok" for s in aead.values()), f"{what}: {aead}"
        summary = SUMMARY.search(run)
        assert summary and summary.group(2) == "0" and int(summary.group(1)) > 1000, (
            f"{what}:\n{run[-3000:]}"
        )


# The AEAD row and the two rows it is made of, as features are masked rung by rung in the
# emulation build (which reports avx512f/vl/bw/dq/ifma on top of this host's AVX2, BMI2 and
# SSSE3), written by hand from the tables' `requires` strings and the feature dependencies
# (masking avx512f drops everything AVX-512; avx2 drops avx512f with it). Not a timing: the
# order of the rows is the policy, and this is what that policy chooses.
AEAD_LADDER = [
    ("", {"chacha20-poly1305": "avx512", "chacha20": "avx512", "poly1305": "avx512ifma"}),
    # The AVX-512 AEAD row needs no BMI2 (its short path multiplies with plain mul).
    ("bmi2", {"chacha20-poly1305": "avx512", "chacha20": "avx512", "poly1305": "avx512ifma"}),
    ("avx512ifma", {"chacha20-poly1305": "avx2", "chacha20": "avx512", "poly1305": "avx2"}),
    ("avx512dq", {"chacha20-poly1305": "avx2", "chacha20": "avx2", "poly1305": "avx512ifma"}),
    ("avx512vl", {"chacha20-poly1305": "avx2", "chacha20": "avx2", "poly1305": "avx2"}),
    ("avx512f", {"chacha20-poly1305": "avx2", "chacha20": "avx2", "poly1305": "avx2"}),
    # chacha20's avx2 row is built with -mbmi2 and so requires it (isa.mk).
    (
        "avx512f,bmi2",
        {"chacha20-poly1305": "composed", "chacha20": "ssse3", "poly1305": "scalar64"},
    ),
    ("avx2", {"chacha20-poly1305": "composed", "chacha20": "ssse3", "poly1305": "scalar64"}),
    (
        "avx2,ssse3",
        {"chacha20-poly1305": "composed", "chacha20": "portable", "poly1305": "scalar64"},
    ),
]


@pytest.mark.parametrize(
    ("masked", "expected"), AEAD_LADDER, ids=[m or "none" for m, _ in AEAD_LADDER]
)
def test_aead_dispatch_ladder_under_emulated_avx512(masked: str, expected: dict[str, str]) -> None:
    emu_check()  # builds the emulation variant's self-test
    triple = make("-s", "print-triple").stdout.strip()
    binary = NATIVE / "build" / f"{triple}-emu512" / "selftest"
    out = subprocess.run(
        [str(binary), "--dispatch"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ARCHCRYPT_DISABLE_CPU_FEATURES": masked},
    ).stdout
    features = parse_features(out)
    assert {"avx512f", "avx512ifma"} <= features or masked, out
    for name in filter(None, masked.split(",")):
        assert f"{name}(masked)" in features, out
    dispatch = parse_dispatch(out)
    assert {alg: dispatch[alg] for alg in expected} == expected, out


def test_host_build_claims_exactly_the_cpus_features() -> None:
    """ARCHCRYPT_EMULATED_FEATURES belongs to the emu512 variant only: the host build reports
    the AVX-512/GFNI features /proc/cpuinfo lists and no other, and picks the AVX-512 rows
    exactly when the CPU has all of them (natively, on an AVX-512 host)."""
    flags = set(
        re.findall(r"^flags\s*:(.*)$", Path("/proc/cpuinfo").read_text(), flags=re.M)[0].split()
    )
    triple = make("-s", "print-triple").stdout.strip()
    make("selftest")
    out = subprocess.run(
        [str(NATIVE / "build" / triple / "selftest")], capture_output=True, text=True, check=False
    ).stdout
    assert EMULATED_FEATURES & parse_features(out) == EMULATED_FEATURES & flags, out
    dispatch = parse_dispatch(out)
    if flags >= EMULATED_FEATURES:
        assert {alg: dispatch[alg] for alg in AVX512_ROWS} == AVX512_ROWS, out
        assert dispatch["chacha20-poly1305"] == AEAD_ROW, out
    elif "avx512f" not in flags:
        assert all(dispatch[alg] != impl for alg, impl in AVX512_ROWS.items()), dispatch


# Each run breaks intrinsics that the kernels named use (one build for several; a break
# shows on the row of every kernel that calls it, so the map lists each broken row with the
# intrinsic that breaks it), among them spec-ordering mistakes a plausible emulation could
# make: the operand order of vpternlogq's index, the lane sources of vshufi32x4, the matrix
# row order of vgf2p8affineqb and the order of inversion and affine map in
# vgf2p8affineinvqb, the rotate direction of vprorq, the operand order of valignq and the
# lane offset of vpshufb. Each of sha512's own intrinsics goes into a run that breaks no
# other intrinsic it calls, so that its row failing is charged to that one name. The
# emulated rows of kernels a run does not break must stay green. sha512's one-message path
# cannot see TERNARYLOGIC or SHUFFLE_I32X4 (its only immediate, 0x96, is symmetric in the
# operands, and it calls vshufi64x2 with a == b); its eight-lane batch path sees both (Ch's
# 0xca, and a transpose over two sources). camellia cannot see TERNARYLOGIC either: since
# its FL layer runs as GF(2) matrices (vgf2p8affineqb), 0x96 is its only immediate.
MUTATIONS = {
    "MADD52HI ROL_EPI32 GF2P8AFFINEINV ROR_EPI64": {
        "poly1305": "MADD52HI",
        "chacha20": "ROL_EPI32",
        "camellia": "GF2P8AFFINEINV",
        "sha512": "ROR_EPI64",
        "sha256": "ROL_EPI32",
    },
    "TERNARYLOGIC SHUFFLE_I32X4": {
        "poly1305": "TERNARYLOGIC",
        # chacha20's output transpose also calls vpternlogq (0xca) since its first step
        # pairs words by 64-bit shifts; either break fails the row.
        "chacha20": "SHUFFLE_I32X4",
        # Ch's 0xca is not symmetric in its operands (Maj's 0xe8 and xor's 0x96 are).
        "sha256": "TERNARYLOGIC",
        "sha512": "TERNARYLOGIC",
    },
    # Only sha256's batch path shifts dwords (sigma0/sigma1's >> 3 and >> 10), and it
    # calls neither of the other two.
    "GF2P8AFFINE ALIGNR_EPI64 SRLI_EPI32": {
        "camellia": "GF2P8AFFINE",
        "sha512": "ALIGNR_EPI64",
        "sha256": "SRLI_EPI32",
    },
    # chacha20's single-group rounds rotate by 16 and 8 with vpshufb (c9d2d81).
    "MADD52LO SHUFFLE_EPI8": {
        "poly1305": "MADD52LO",
        "chacha20": "SHUFFLE_EPI8",
        "sha512": "SHUFFLE_EPI8",
        "sha256": "SHUFFLE_EPI8",
    },
}


@pytest.mark.slow  # a library build per run
@pytest.mark.parametrize("broken", sorted(MUTATIONS))
def test_a_broken_intrinsic_fails_the_selftest(broken: str) -> None:
    proc = subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(NATIVE),
            f"-j{os.cpu_count() or 2}",
            "emu-check",
            f"EMU_BREAK={broken}",
            "EMU_ASAN=0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    log = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert proc.returncode != 0, f"EMU_BREAK={broken} passed emu-check:\n{log}"
    runs = selftest_runs(proc.stdout)
    assert len(runs) == 1, f"EMU_BREAK={broken}: the self-test did not run to its end:\n{log}"
    run = runs[0]
    for alg, intrinsic in MUTATIONS[broken].items():
        impl = AVX512_ROWS[alg]
        assert parse_dispatch(run)[alg] == impl
        assert row_status(run, alg, impl) == "FAILED", (
            f"broken {intrinsic}: {alg}/{impl} not caught:\n{log}"
        )
    # The other rows run the real instructions and stay green; so do the emulated rows of
    # kernels that do not call the broken intrinsics.
    for alg in AVX512_ROWS:
        others = {i: st for i, st in rows_of(run, alg).items() if i != AVX512_ROWS[alg]}
        assert others and all(st == "ok" for st in others.values()), f"{alg}: {others}"
        if alg not in MUTATIONS[broken]:
            assert row_status(run, alg, AVX512_ROWS[alg]) == "ok", f"{alg}: broken by {broken}"
    # The AVX-512 AEAD row runs the chacha20 and poly1305 kernels: it fails with either.
    aead = row_status(run, "chacha20-poly1305", AEAD_ROW)
    broken_parts = {"chacha20", "poly1305"} & set(MUTATIONS[broken])
    assert aead == ("FAILED" if broken_parts else "ok"), f"chacha20-poly1305/{AEAD_ROW}: {aead}"
    # The emulation's own self-check catches the same breaks against SSE2 or the pseudo-code.
    assert "emu512 self-check FAILED" in proc.stdout, log
