"""The C self-test (known answers + every runnable implementation against portable) on
this host, under ASan/UBSan, and under qemu-user on arm64, ppc64le and s390x models.

The expected dispatch choice per CPU model is written out here, independently of the
dispatch tables, so a row that silently stops being picked fails the suite."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import pytest

from .harness import (
    NATIVE,
    TARGETS,
    make,
    parse_dispatch,
    parse_features,
    require_tools,
    run_under_qemu,
)

# The first row of each table that needs no CPU feature: what every target must pick when
# it has no SIMD row for an algorithm (and what masking every feature falls back to).
# Poly1305's scalar64 is plain C with 64-bit limbs, for every compiler with __int128.
BASELINE = {
    "chacha20": "portable",
    "poly1305": "scalar64",
    "chacha20-poly1305": "composed",
    "sha256": "portable",
    "sha512": "portable",
    "camellia": "portable",
}

# What each emulated CPU must report (a subset) and must not report.
FEATURES = {
    ("arm64", "cortex-a53"): ({"asimd", "aes", "pmull", "sha2"}, {"sha512", "sve"}),
    ("arm64", "cortex-a72"): ({"asimd", "aes", "pmull", "sha2"}, {"sha512", "sve"}),
    ("arm64", "max"): ({"asimd", "aes", "pmull", "sha2", "sha512", "sha3", "sve", "sve2"}, set()),
    ("ppc64le", "power8"): ({"altivec", "vsx", "arch_2_07", "vec_crypto"},
                           {"arch_3_00", "arch_3_1"}),
    ("ppc64le", "power9"): ({"altivec", "vsx", "arch_2_07", "vec_crypto", "arch_3_00"},
                           {"arch_3_1"}),
    ("ppc64le", "power10"): ({"vsx", "arch_3_00", "arch_3_1", "mma"}, set()),
    # qemu 7.2 answers the CPACF KIMD query with SHA-512 only, on every model.
    ("s390x", "z13"): ({"vx", "msa", "kimd_sha512"}, {"vxe", "vxe2", "kimd_sha256"}),
    ("s390x", "z14"): ({"vx", "vxe", "msa"}, {"vxe2"}),
    ("s390x", "gen15a"): ({"vx", "vxe", "vxe2"}, set()),
    ("s390x", "max"): ({"vx", "vxe", "vxe2"}, set()),
}

# Per (arch, model): the rows dispatch must choose where they differ from BASELINE.
POWER8_CRYPTO = {"sha256": "power8", "sha512": "power8", "camellia": "power8"}
# Every qemu aarch64 model has ASIMD, AES, PMULL and SHA2; only max has SHA512.
ARMV8_CRYPTO = {"chacha20": "neon", "poly1305": "neon", "sha256": "armv8_crypto",
                "sha512": "neon", "camellia": "armv8_crypto"}
EXPECTED_DISPATCH: dict[tuple[str, str], dict[str, str]] = {
    ("arm64", "cortex-a53"): ARMV8_CRYPTO,
    ("arm64", "cortex-a72"): ARMV8_CRYPTO,
    ("arm64", "max"): {**ARMV8_CRYPTO, "sha512": "armv8_sha512", "chacha20": "sve2"},
    ("ppc64le", "power8"): {**POWER8_CRYPTO, "chacha20": "power8", "poly1305": "power8"},
    ("ppc64le", "power9"): {**POWER8_CRYPTO, "chacha20": "power8", "poly1305": "power9"},
    ("ppc64le", "power10"): {**POWER8_CRYPTO, "chacha20": "power10", "poly1305": "power9"},
}
# s390x: the z13 floor runs the vx rows; z14 and later add Poly1305's vxe (vmslg). qemu's
# KIMD query reports SHA-512 on every model and never SHA-256 (sha256/cpacf is gated off).
S390X_ROWS = {"chacha20": "vx", "poly1305": "vx", "sha256": "vx", "sha512": "cpacf",
              "camellia": "vx"}
EXPECTED_DISPATCH.update({
    ("s390x", "z13"): S390X_ROWS,
    ("s390x", "z14"): {**S390X_ROWS, "poly1305": "vxe"},
    ("s390x", "gen15a"): {**S390X_ROWS, "poly1305": "vxe"},
    ("s390x", "max"): {**S390X_ROWS, "poly1305": "vxe"},
})

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.M)


def assert_green(proc: subprocess.CompletedProcess[str], what: str) -> None:
    summary = SUMMARY.search(proc.stdout)
    green = summary and summary.group(2) == "0" and int(summary.group(1)) > 1000
    assert proc.returncode == 0 and green, (
        f"{what}: exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )


def test_native_selftest() -> None:
    proc = make("check")
    assert_green(proc, "native self-test")


def test_native_selftest_under_sanitizers() -> None:
    """Unaligned, in-place and exactly sized buffers: ASan catches a one-byte overrun."""
    proc = make("asan-check")
    assert_green(proc, "ASan/UBSan self-test")


def test_native_selftest_all_features_masked() -> None:
    proc = subprocess.run(
        [str(NATIVE / "build" / make("-s", "print-triple").stdout.strip() / "selftest")],
        capture_output=True, text=True, env={"ARCHCRYPT_DISABLE_CPU_FEATURES": "all"}, check=False,
    )
    assert_green(proc, "self-test with every feature masked")
    assert parse_dispatch(proc.stdout) == BASELINE
    assert "(masked)" in proc.stdout


@functools.cache
def cross_build(arch: str) -> Path:
    target = TARGETS[arch]
    make(f"CC={target.cc}", "selftest")
    return NATIVE / "build" / target.triple / "selftest"


@pytest.mark.parametrize(
    ("arch", "model"), [(arch, model) for arch, t in sorted(TARGETS.items()) for model in t.models]
)
def test_cross_selftest(arch: str, model: str) -> None:
    target = TARGETS[arch]
    require_tools(target.cc, target.qemu)
    proc = run_under_qemu(target, model, cross_build(arch))
    assert_green(proc, f"{arch} -cpu {model}")
    assert f" on {arch} " in proc.stdout.splitlines()[0]

    present, absent = FEATURES[(arch, model)]
    features = parse_features(proc.stdout)
    assert present <= features, f"{model}: missing {present - features}"
    assert not (absent & features), f"{model}: unexpected {absent & features}"

    expected = {**BASELINE, **EXPECTED_DISPATCH.get((arch, model), {})}
    assert parse_dispatch(proc.stdout) == expected


# No qemu aarch64 model lacks AES, PMULL or SHA2, so the rungs below them are reached by
# masking: each mask, the rows dispatch must then choose (written out, like
# EXPECTED_DISPATCH), and the whole self-test green with those features gone.
ARM64_MASKED = {
    # Crypto extensions and SVE off: SHA-256 and Camellia fall back to portable, SHA-512
    # to the neon row (scalar rounds), ChaCha20 below sve2; the ASIMD rows stay.
    "aes,pmull,sha2,sha512,sha3,sve,sve2": {**BASELINE, "chacha20": "neon", "poly1305": "neon",
                                            "sha512": "neon"},
    # Without ASIMD nothing but the baseline may run: every arm64 row names it.
    "asimd": BASELINE,
}


# qemu's max runs SVE at 512 bits unless told otherwise (so test_cross_selftest covers
# 512); the sve2 row must not assume any width, so 128 and 256 bits run too.
@pytest.mark.parametrize("vector_bytes", [16, 32])
def test_cross_selftest_arm64_sve_widths(vector_bytes: int) -> None:
    target = TARGETS["arm64"]
    require_tools(target.cc, target.qemu)
    model = f"max,sve-default-vector-length={vector_bytes}"
    proc = run_under_qemu(target, model, cross_build("arm64"))
    assert_green(proc, f"arm64 -cpu {model}")
    assert parse_dispatch(proc.stdout) == {**BASELINE, **EXPECTED_DISPATCH[("arm64", "max")]}


@pytest.mark.parametrize("mask", sorted(ARM64_MASKED))
def test_cross_selftest_arm64_masked(mask: str) -> None:
    target = TARGETS["arm64"]
    require_tools(target.cc, target.qemu)
    proc = run_under_qemu(target, "max", cross_build("arm64"),
                          env={"ARCHCRYPT_DISABLE_CPU_FEATURES": mask})
    assert_green(proc, f"arm64 -cpu max, {mask} masked")
    assert parse_dispatch(proc.stdout) == ARM64_MASKED[mask]
