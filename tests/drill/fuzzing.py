"""Native fuzzing: native/tests/fuzz/fuzz_api.c under libFuzzer with ASan and UBSan.

On a host without AVX-512 the build takes the AVX-512 files through the emulation of
native/tests/emu (FUZZ_EMU=1), so every amd64 row is fuzzed here: the real SSSE3/AVX2/
AES-NI/VAES/SHA-NI rows natively, the AVX-512 ones as their unmodified C over emulated
intrinsics. `EMU_BREAK` builds one emulated intrinsic wrong: the fuzzer must then fail,
which shows it can.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "native"


def host_has_avx512() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return bool(re.search(r"^flags\s*:.*\bavx512f\b", flags, flags=re.M))


def make_args(emu: bool, break_: str | None = None) -> list[str]:
    args = []
    if emu:
        args.append("FUZZ_EMU=1")
    if break_:
        args.append(f"EMU_BREAK={break_}")
    return args


def build(emu: bool, break_: str | None = None) -> Path:
    args = make_args(emu, break_)
    proc = subprocess.run(
        ["make", "-s", "-C", str(NATIVE), f"-j{os.cpu_count() or 2}", "fuzz", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"make fuzz {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    path = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(NATIVE), "print-fuzz-bin", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(path)


@dataclass
class FuzzResult:
    binary: Path
    seconds: float
    runs: int = 0
    coverage: int = 0  # libFuzzer's "cov:" (edges)
    features: int = 0  # "ft:"
    corpus: int = 0
    crash: Path | None = None
    rows: str = ""  # the harness's "runnable rows" line
    failure: str = ""  # the harness's or a sanitizer's report
    returncode: int = 0
    log: str = ""
    wall: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.crash is None and self.runs > 0

    @property
    def execs_per_second(self) -> float:
        return self.runs / self.wall if self.wall else 0.0


@dataclass
class Campaign:
    results: list[FuzzResult] = field(default_factory=list)


def run(
    binary: Path,
    seconds: float,
    corpus: Path,
    artifacts: Path,
    seed: int = 0,
    extra: tuple[str, ...] = (),
) -> FuzzResult:
    """libFuzzer for `seconds` from `corpus` (grown in place); a crash input lands in
    `artifacts`."""
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(binary),
        f"-max_total_time={int(seconds)}",
        "-max_len=512",
        "-len_control=0",
        "-timeout=120",
        "-rss_limit_mb=4096",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        *([f"-seed={seed}"] if seed else []),
        *extra,
        str(corpus),
    ]
    start = time.monotonic()
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        check=False,
        timeout=seconds + 600,
        # the harness's "runnable rows" banner is wanted (set, even
        # empty, the variable silences it)
        env={k: v for k, v in os.environ.items() if k != "FUZZ_API_QUIET"},
    )
    result = FuzzResult(
        binary, seconds, returncode=proc.returncode, log=proc.stderr, wall=time.monotonic() - start
    )
    text = proc.stderr + proc.stdout
    done = re.search(r"Done (\d+) runs in", text)
    if done:
        result.runs = int(done.group(1))
    else:
        units = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
        result.runs = int(units.group(1)) if units else 0
    stats = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", text)
    if stats:
        result.coverage, result.features, result.corpus = map(int, stats[-1])
    rows = re.search(r"^fuzz-api: archcrypt .*$", text, flags=re.M)
    result.rows = rows.group(0) if rows else ""
    crash = re.search(r"Test unit written to (\S+)", text)
    if crash:
        result.crash = Path(crash.group(1))
    failure = re.search(
        r"^(fuzz-api: (?!archcrypt ).*|==\d+==ERROR: .*|.*runtime error: .*)$", text, flags=re.M
    )
    result.failure = failure.group(0) if failure else ""
    return result


def build_standalone(
    emulated: bool, asan: bool, break_: str | None = None, cc: str | None = None
) -> Path:
    """fuzz-api-standalone (gcc, PRNG-driven): in emu-check's variants when `emulated`
    (the AVX-512 rows on the emulation; `break_` breaks intrinsics as EMU_BREAK does), else
    in asan-check's (`asan`) or the plain build; `cc` cross-compiles (static, for qemu)."""
    if emulated:
        args = [
            "fuzz-standalone-emu",
            f"EMU_ASAN={1 if asan else 0}",
            *([f"EMU_BREAK={break_}"] if break_ else []),
        ]
        printer = ["print-fuzz-standalone-emu", *args[1:]]
    else:
        variant = (
            [
                "VARIANT=-asan",
                "OPT=-O1 -fno-omit-frame-pointer",
                "CFLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all",
                "LDFLAGS=-fsanitize=address,undefined",
            ]
            if asan
            else []
        )
        args = ["fuzz-standalone", *variant, *([f"CC={cc}"] if cc else [])]
        printer = None
    proc = subprocess.run(
        ["make", "-s", "-C", str(NATIVE), f"-j{os.cpu_count() or 2}", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"make {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    if printer:
        out = subprocess.run(
            ["make", "-s", "--no-print-directory", "-C", str(NATIVE), *printer],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return Path(out)
    triple = subprocess.run(
        [
            "make",
            "-s",
            "--no-print-directory",
            "-C",
            str(NATIVE),
            "print-triple",
            *([f"CC={cc}"] if cc else []),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return NATIVE / "build" / f"{triple}{'-asan' if asan else ''}" / "fuzz-api-standalone"
