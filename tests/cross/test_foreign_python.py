"""The crypto layer (tests/native, through archcrypt.crypto) on foreign CPUs: each target's
own Python (Debian 12's python3, cffi, pytest, hypothesis, cryptography) under qemu-user,
importing archcrypt with its cffi module cross-compiled for that target.

The C self-test (test_c_selftest.py) proves the kernels; this proves the binding on top of
them: the cffi module built for the target's ABI and byte order, the facade's buffer
handling on a big-endian host (s390x), and the dispatch report as Python sees it.

Emulated Python runs ~10x slower than native, so each CPU model runs what only it can
prove: the whole of tests/native once on POWER9 (every ppc64le row but one), and on the
other models the known-answer and differential tests of the rows that model adds (POWER8:
the power8 rows on the ABI floor; POWER10: chacha20/power10; arm64 Cortex-A72: every arm64
row but the SHA512 and SVE2 ones, which max adds; s390x z13: the vx and cpacf rows). The
SHA-2 Monte Carlo sweeps run on POWER9 only. Every run must pass with no skip. The runs go
in parallel, one per core, the Debian trees (scripts/foreign-tree.sh) and the builds
cached in build/foreign/ (README, "Foreign architectures").
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from .harness import (
    ROOT,
    TARGETS,
    ForeignPython,
    can_make_foreign_tree,
    expected_ffi_record,
    ffi_recipe,
    foreign_python,
    require_foreign_tree,
    require_tools,
)
from .test_c_selftest import BASELINE, EXPECTED_DISPATCH

# ---- what runs where ------------------------------------------------------------------

FULL = ("tests/native",)


def known_answers_and_differential(rows: str = "") -> tuple[str, ...]:
    """Every known answer and differential test (optionally only those whose id names a
    row, e.g. "power8"); the SHA-2 Monte Carlo sweeps (100 000 digests each, a third of
    FULL's time under qemu) run in FULL only."""
    keyword = "not monte_carlo" + (f" and {rows}" if rows else "")
    return (
        "tests/native/test_known_answers.py",
        "tests/native/test_differential.py",
        "-k",
        keyword,
    )


@dataclass(frozen=True)
class Run:
    arch: str
    model: str
    selection: tuple[str, ...]
    minimum: int  # tests that must have run (and passed): catches a selection gone empty
    why: str

    def __str__(self) -> str:
        return f"{self.arch}-{self.model}"


# CPU seconds under qemu-user 7.2 (sum ~295 s, two runs at a time): power9 ~125, power8
# ~35, power10 ~25, s390x ~30, arm64 cortex-a72 ~30, max ~25, plus ~1.5 each for the
# dispatch report.
RUNS = (
    # POWER9 can run every ppc64le row but chacha20/power10: the whole suite there,
    # property and subprocess (environment configuration) tests included.
    Run("ppc64le", "power9", FULL, 300, "every ppc64le row but chacha20/power10"),
    # POWER8 is the ABI floor: the power8 rows must hold no ISA 3.0 instruction (qemu
    # traps it), so every test that pins one of them.
    Run("ppc64le", "power8", known_answers_and_differential("power8"), 50, "the power8 rows"),
    # The only row that POWER9 cannot run.
    Run("ppc64le", "power10", known_answers_and_differential("power10"), 25, "chacha20/power10"),
    # Big-endian: the cffi module and the facade's buffers over the s390x rows (the
    # portable ones are proven big-endian by the C self-test), on z13, the floor they are
    # built for; z14's poly1305/vxe is proven by the C self-test.
    Run("s390x", "z13", known_answers_and_differential("(vx or cpacf)"), 40,
        "big-endian, the s390x rows on the z13 floor"),
    # Every arm64 row but sha512/armv8_sha512 (no Cortex model has SHA512), on the
    # aarch64 ABI; the portable rows are the host's C and run there.
    Run("arm64", "cortex-a72", known_answers_and_differential("(neon or armv8_crypto)"), 40,
        "every arm64 row but one"),
    # The rows only max (SHA512, SHA3, SVE2) can run, SVE at qemu's default 512 bits.
    Run("arm64", "max", known_answers_and_differential("(armv8_sha512 or sve2)"), 15,
        "sha512/armv8_sha512, chacha20/sve2"),
)

# Every arch by default (a third Debian tree costs ~65 CPU seconds once, then it is
# cached); ARCHCRYPT_FOREIGN_ARCHES picks a comma-separated subset.
DEFAULT_ARCHES = tuple(TARGETS)


def enabled_arches() -> tuple[str, ...]:
    value = os.environ.get("ARCHCRYPT_FOREIGN_ARCHES", "").strip()
    if not value:
        return DEFAULT_ARCHES
    if value == "all":
        return tuple(TARGETS)
    arches = tuple(a.strip() for a in value.split(",") if a.strip())
    unknown = set(arches) - set(TARGETS)
    assert not unknown, (
        f"ARCHCRYPT_FOREIGN_ARCHES: unknown {sorted(unknown)}; known {list(TARGETS)}"
    )
    return arches


# Only the enabled arches are collected (an arch left out is not a skipped test).
ENABLED_RUNS = tuple(run for run in RUNS if run.arch in enabled_arches())


# The choice dispatch must make on each model: the same written-out expectation the C
# self-test checks (test_c_selftest: BASELINE, and EXPECTED_DISPATCH where a model differs).
def expected_selected(arch: str, model: str) -> dict[str, str]:
    return {**BASELINE, **EXPECTED_DISPATCH.get((arch, model), {})}


REPORT = (
    "import dataclasses, json; from archcrypt import crypto; "
    "print(json.dumps(dataclasses.asdict(crypto.backends())))"
)
TIMEOUT = 1800.0

# ---- running them, in parallel ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    report: subprocess.CompletedProcess[str]
    pytest: subprocess.CompletedProcess[str] | None  # None: its test was not selected
    junit: Path
    seconds: float
    native_module: Path  # the cross-built archcrypt._native it imported


def _execute(run: Run, python: ForeignPython, with_tests: bool) -> Outcome:
    executable = str(python.executable(run.model))
    workdir = python.home / "runs" / run.model
    workdir.mkdir(parents=True, exist_ok=True)
    junit = workdir / "junit.xml"
    junit.unlink(missing_ok=True)
    env = python.environment(HYPOTHESIS_STORAGE_DIRECTORY=str(workdir / "hypothesis"))

    def guest(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [executable, *args], cwd=cwd, env=env, timeout=timeout,
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    start = time.monotonic()
    report = guest("-c", REPORT, cwd=workdir, timeout=300)
    tests = None
    if with_tests:
        tests = guest(
            *("-m", "pytest", "-c", str(python.stage / "pytest.ini"), "--rootdir", str(ROOT)),
            *("-p", "archcrypt_foreign_compat", "-p", "no:cacheprovider"),
            *("-q", f"--junitxml={junit}", *run.selection),
            cwd=ROOT,
            timeout=TIMEOUT,
        )
    return Outcome(report, tests, junit, time.monotonic() - start, python.native_module)


def _tools(run: Run) -> tuple[str, ...]:
    return (TARGETS[run.arch].cc, TARGETS[run.arch].qemu)


def _schedule(runs: list[Run], with_tests: set[Run]) -> tuple[dict[Run, Future[Outcome]], Any]:
    """One thread prepares the arches in RUNS order (tree, library, cffi module), queueing
    each arch's runs as soon as it is ready; one worker per core takes the queued run that
    comes first in RUNS. So POWER9's full suite, the longest run, starts as soon as the
    ppc64el tree is made (one download at a time: two at once made each ~35 % slower), and
    the other arches are prepared and run beside it. Returns the futures and a join()."""
    futures: dict[Run, Future[Outcome]] = {run: Future() for run in runs}
    ready: queue.PriorityQueue[tuple[int, int, Run | None, ForeignPython | None]]
    ready = queue.PriorityQueue()
    order = itertools.count()
    arches = list(dict.fromkeys(run.arch for run in runs))
    workers = min(os.cpu_count() or 2, len(runs)) or 1

    def prepare() -> None:
        for arch in arches:
            mine = [run for run in runs if run.arch == arch]
            if all(futures[run].cancelled() for run in mine):
                continue  # the session is ending
            try:
                python = foreign_python(arch)  # cached in build/foreign
            except BaseException as exc:  # handed to the tests of this arch
                for run in mine:
                    futures[run].set_exception(exc)
                continue
            for run in mine:
                ready.put((RUNS.index(run), next(order), run, python))

    def work() -> None:
        while True:
            _, _, run, python = ready.get()
            if run is None or python is None:
                return
            if not futures[run].set_running_or_notify_cancel():
                continue
            try:
                futures[run].set_result(_execute(run, python, run in with_tests))
            except BaseException as exc:  # handed to the tests of this run
                futures[run].set_exception(exc)

    preparer = threading.Thread(target=prepare, daemon=True)
    pool = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
    for thread in (preparer, *pool):
        thread.start()

    def join() -> None:
        preparer.join()
        for _ in pool:
            ready.put((len(RUNS), next(order), None, None))  # after every queued run
        for thread in pool:
            thread.join()

    return futures, join


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> Iterator[dict[Run, Future[Outcome]]]:
    """Start every selected run the first time a test asks; each test waits for its own."""
    selected: list[tuple[Run, str]] = [
        (cast(Run, item.callspec.params["run"]), item.originalname)
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.module is request.module
    ]
    runs = [
        run
        for run in RUNS
        if any(r == run for r, _ in selected)
        and run.arch in enabled_arches()
        and all(shutil.which(t) for t in _tools(run))
        and can_make_foreign_tree(run.arch)
    ]
    with_tests = {run for run, name in selected if name == "test_foreign_crypto_layer"}
    futures, join = _schedule(runs, with_tests)
    try:
        yield futures
    finally:
        for future in futures.values():
            future.cancel()  # those not started yet
        join()


def _outcome(run: Run, outcomes: dict[Run, Future[Outcome]]) -> Outcome:
    require_tools(*_tools(run))
    require_foreign_tree(run.arch)
    return outcomes[run].result(timeout=TIMEOUT)


@pytest.mark.parametrize("run", ENABLED_RUNS, ids=str)
def test_foreign_dispatch(run: Run, outcomes: dict[Run, Future[Outcome]]) -> None:
    """archcrypt.crypto.backends() in the target's Python reports the target arch and the
    row dispatch.c's table order picks on this CPU model."""
    outcome = _outcome(run, outcomes)
    proc = outcome.report
    assert proc.returncode == 0, (
        f"{run}: backends() failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["arch"] == run.arch
    selected = {a["name"]: a["selected"] for a in report["algorithms"]}
    assert selected == expected_selected(run.arch, run.model), f"{run}: {selected}"
    assert not any(a["forced"] for a in report["algorithms"])
    # The module these tests prove is the recipe's build, as the image's is (tests/images).
    record = ffi_recipe().build_record(outcome.native_module)
    assert record == expected_ffi_record(TARGETS[run.arch].cc), record


@pytest.mark.parametrize("run", ENABLED_RUNS, ids=str)
def test_foreign_crypto_layer(run: Run, outcomes: dict[Run, Future[Outcome]]) -> None:
    """tests/native (or its known-answer and differential part) passes in the target's
    Python: no failure, no error, and no skip."""
    outcome = _outcome(run, outcomes)
    proc = outcome.pytest
    assert proc is not None
    tail = f"\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, f"{run} ({run.why}): pytest exit {proc.returncode}{tail}"
    root = ET.parse(outcome.junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, tail
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == counts["skipped"] == 0, (
        f"{run}: {counts}{tail}"
    )
    assert counts["tests"] >= run.minimum, f"{run}: only {counts['tests']} tests ran{tail}"
    print(f"{run}: {counts['tests']} passed in {outcome.seconds:.0f} s under qemu")
