"""The startup benchmark: every runnable implementation of every algorithm at a few sizes,
calibrated so that the whole run fits a time budget.

The service runs it in a background thread and publishes the figures on /metrics,
`archcrypt info` prints the same figures, and `archcrypt bench` shares the workloads.
Each cell forces its implementation on the calling thread only (crypto.use_implementation),
so a run never changes what requests on other threads use.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from time import perf_counter, thread_time
from typing import Any, Final

from . import crypto

# Per call overhead, a typical message, and the kernels' full speed.
SIZES: Final[tuple[int, ...]] = (64, 1024, 65536)
# The best of this many timed batches is the cell's figure: the fastest batch is the one
# least disturbed by everything else on the machine.
BATCHES: Final = 3
CAMELLIA_BLOCK: Final = 16


Workload = Callable[[int], Callable[[], object]]


def _aead(size: int) -> Callable[[], object]:
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(size)
    return lambda: crypto.aead_seal("chacha20-poly1305", key, nonce, data)


def _chacha20(size: int) -> Callable[[], object]:
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(size)
    return lambda: crypto.chacha20_xor(key, nonce, data)


def _poly1305(size: int) -> Callable[[], object]:
    key, data = os.urandom(32), os.urandom(size)
    return lambda: crypto.mac("poly1305", key, data)


def _sha(algorithm: str) -> Workload:
    def workload(size: int) -> Callable[[], object]:
        data = os.urandom(size)
        return lambda: crypto.digest(algorithm, data)

    return workload


def _camellia(size: int) -> Callable[[], object]:
    key, data = os.urandom(16), os.urandom(size)
    return lambda: crypto.camellia_ecb_encrypt(key, data)


# Keyed by the dispatch algorithm names of the C library (crypto.DISPATCH_ALGORITHMS); an
# algorithm without a workload here is reported as skipped, never guessed at.
WORKLOADS: Final[dict[str, Workload]] = {
    "chacha20": _chacha20,
    "poly1305": _poly1305,
    "chacha20-poly1305": _aead,
    "sha256": _sha("sha256"),
    "sha512": _sha("sha512"),
    "camellia": _camellia,
}


@dataclass(frozen=True)
class Cell:
    """One thing to measure: an implementation of an algorithm at one message size."""

    algorithm: str
    implementation: str
    selected: bool
    size_bytes: int


@dataclass(frozen=True)
class Result:
    algorithm: str
    implementation: str
    selected: bool
    size_bytes: int
    bytes_per_second: float
    iterations: int  # of the batch the figure comes from
    seconds: float


@dataclass(frozen=True)
class BenchmarkRun:
    """One complete run. Times are wall-clock seconds since the epoch."""

    started: float
    finished: float
    budget_seconds: float
    core_hz: float
    results: tuple[Result, ...]

    @property
    def duration_seconds(self) -> float:
        return self.finished - self.started

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> BenchmarkRun:
        data: dict[str, Any] = json.loads(text)
        results = tuple(Result(**row) for row in data.pop("results"))
        return cls(results=results, **data)


def plan(
    report: crypto.BackendReport,
    sizes: Sequence[int] = SIZES,
    *,
    algorithms: Iterable[str] = (),
    usable: Callable[[str, str], bool] | None = None,
) -> tuple[list[Cell], list[str]]:
    """The cells for every runnable implementation (of `algorithms`, default all) at every
    size, and a note for each thing left out. `usable(algorithm, implementation)` can
    exclude more, e.g. rows whose self-test failed."""
    wanted = set(algorithms)
    cells: list[Cell] = []
    skipped: list[str] = []
    for algorithm in report.algorithms:
        if wanted and algorithm.name not in wanted:
            continue
        if algorithm.name not in WORKLOADS:
            skipped.append(f"{algorithm.name}: no benchmark workload")
            continue
        for impl in algorithm.implementations:
            if not impl.runnable:
                skipped.append(f"{algorithm.name}/{impl.name}: not runnable on this CPU")
                continue
            if usable is not None and not usable(algorithm.name, impl.name):
                skipped.append(f"{algorithm.name}/{impl.name}: self-test failed")
                continue
            for size in sizes:
                if algorithm.name == "camellia" and size % CAMELLIA_BLOCK:
                    skipped.append(f"camellia/{impl.name} at {size} B: not whole 16-byte blocks")
                    continue
                cells.append(Cell(algorithm.name, impl.name, impl.name == algorithm.selected, size))
    return cells, skipped


def measure(call: Callable[[], object], budget: float) -> tuple[int, float]:
    """(iterations, seconds) of the fastest of BATCHES batches that together take about
    `budget` seconds, after a warm-up and a calibration that take a small part of it.

    The seconds are this thread's CPU time, not wall time: on a busy host (the benchmark
    also repeats while serving) a batch that was preempted would otherwise look slow. The
    budget is kept in wall time.
    """
    start = perf_counter()
    call()  # first-touch page faults and lazy initialisation stay out of the figures
    # Calibrate: grow the batch until it lasts an eighth of the budget.
    iterations = 1
    while True:
        cpu, wall = _timed_batch(call, iterations)
        if wall >= budget / 8 or perf_counter() - start >= budget / 2:
            break
        scale = budget / 8 / wall if wall > 0 else 100.0
        iterations = max(iterations * 2, int(iterations * min(scale, 100.0)))
    best = (iterations, cpu)
    # Batches are sized in wall time, which is what the budget is.
    remaining = budget - (perf_counter() - start)
    batch = int(remaining / BATCHES / (wall / iterations)) if wall > 0 else 0
    if batch >= 1:
        for _ in range(BATCHES):
            cpu, _ = _timed_batch(call, batch)
            if batch * best[1] > best[0] * cpu:  # a higher rate
                best = (batch, cpu)
    return best


def _timed_batch(call: Callable[[], object], iterations: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `iterations` calls."""
    wall, cpu = perf_counter(), thread_time()
    for _ in range(iterations):
        call()
    cpu, wall = thread_time() - cpu, perf_counter() - wall
    # a clock without the resolution for a short batch: fall back on wall time
    return (cpu if cpu > 0 else wall), wall


def run(
    cells: Sequence[Cell],
    budget: float,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[Cell], None] | None = None,
) -> BenchmarkRun | None:
    """Measure every cell within about `budget` seconds in total; None when `stop` is set
    before the run finishes. Call it on the thread whose dispatch may be overridden."""
    started_wall, start = time.time(), perf_counter()
    # About 5 % of the budget (at most 50 ms) for the clock, for cycles per byte.
    core_hz = crypto.core_hz(min(0.05, max(budget * 0.05, 0.005)))
    results: list[Result] = []
    for index, cell in enumerate(cells):
        if stop is not None and stop.is_set():
            return None
        if progress is not None:
            progress(cell)
        # Each cell gets an equal share of what is left, so an overrun (a slow warm-up, a
        # busy machine) is absorbed by the cells after it and the total stays on budget;
        # but never less than a quarter of its fair share, or the last cells would be noise.
        share = max(
            (budget - (perf_counter() - start)) / (len(cells) - index),
            budget / len(cells) / 4,
        )
        call = WORKLOADS[cell.algorithm](cell.size_bytes)
        with crypto.use_implementation(cell.algorithm, cell.implementation):
            iterations, seconds = measure(call, max(share, 0.0))
        results.append(
            Result(
                algorithm=cell.algorithm,
                implementation=cell.implementation,
                selected=cell.selected,
                size_bytes=cell.size_bytes,
                bytes_per_second=cell.size_bytes * iterations / seconds if seconds > 0 else 0.0,
                iterations=iterations,
                seconds=seconds,
            )
        )
    return BenchmarkRun(
        started=started_wall,
        finished=started_wall + (perf_counter() - start),
        budget_seconds=budget,
        core_hz=core_hz,
        results=tuple(results),
    )
