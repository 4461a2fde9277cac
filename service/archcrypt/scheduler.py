"""The service's benchmark: run in a background thread at startup, repeated on a schedule.

Request handling never waits for it: each cell overrides the dispatch of this thread only
(crypto.use_implementation) and the C calls release the GIL. /readyz stays false until
the first run has finished, so no traffic is routed to the process while it measures.

With several workers (prometheus-client multiprocess mode), one benchmark per host is
enough and concurrent ones would only slow each other down: the worker that takes an
exclusive lock in the multiprocess directory measures and publishes; the others wait
for its announcement and become ready with it. If that worker dies, the lock dies with
it and another worker takes over at the next scheduled run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from . import benchmark

if TYPE_CHECKING:  # not at run time: `archcrypt serve` cleans up before prometheus_client loads
    from .metrics import Metrics

logger = logging.getLogger("archcrypt")

COORDINATION_PREFIX: Final = "archcrypt-benchmark"
LOCK_FILE: Final = f"{COORDINATION_PREFIX}.lock"
ANNOUNCEMENT_FILE: Final = f"{COORDINATION_PREFIX}.json"
_FOLLOWER_POLL_SECONDS: Final = 0.1


class Coordinator:
    """Elects the one worker that benchmarks for the host, through flock on a shared file."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._fd: int | None = None

    @property
    def leading(self) -> bool:
        return self._fd is not None

    def try_lead(self) -> bool:
        """True when this process holds (or just took) the lock; it keeps it until close()."""
        if self._fd is not None:
            return True
        fd = os.open(self.directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def announce(self, run: benchmark.BenchmarkRun) -> None:
        """Tell the other workers that a run finished (written whole, then renamed)."""
        target = self.directory / ANNOUNCEMENT_FILE
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(run.to_json())
        os.replace(partial, target)

    def announced(self) -> bool:
        return (self.directory / ANNOUNCEMENT_FILE).exists()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None


def clean_multiprocess_dir(directory: str | os.PathLike[str]) -> None:
    """Remove what a previous server generation left: prometheus-client's value files
    (old counters would otherwise be added to the new ones) and our coordination files."""
    path = Path(directory)
    for child in path.iterdir():
        if child.suffix == ".db" or child.name.startswith(COORDINATION_PREFIX):
            with contextlib.suppress(FileNotFoundError):
                child.unlink()


class BackgroundBenchmark:
    """Runs the benchmark on its own thread: once at start, then every `interval` seconds
    (0: never again). `on_first_run` is called once the first run is over, whatever its
    outcome, so a benchmark bug cannot keep a healthy process unready forever."""

    def __init__(
        self,
        cells: Sequence[benchmark.Cell],
        *,
        budget: float,
        interval: float,
        metrics: Metrics,
        arch: str,
        on_first_run: Callable[[], None],
    ) -> None:
        self.cells = tuple(cells)
        self.budget = budget
        self.interval = interval
        self.metrics = metrics
        self.arch = arch
        self.on_first_run = on_first_run
        self.coordinator = (
            Coordinator(metrics.multiprocess_dir) if metrics.multiprocess_dir else None
        )
        self.last_run: benchmark.BenchmarkRun | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="archcrypt-benchmark", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the thread to stop (it checks between cells) and wait for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self.coordinator is not None:
            self.coordinator.close()

    def _main(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                self._run_once(first)
            except Exception:
                logger.exception("benchmark run failed")
            if first:
                first = False
                if not self._stop.is_set():  # shutting down: stay unready
                    self.on_first_run()
            if not self.interval or self._stop.wait(self.interval):
                return

    def _run_once(self, first: bool) -> None:
        if self.coordinator is None:
            self._measure_and_publish()
            return
        while not self._stop.is_set():
            if self.coordinator.try_lead():
                run = self._measure_and_publish()
                if run is not None:
                    self.coordinator.announce(run)
                return
            # Someone else measures for this host. At startup wait for its figures; on a
            # scheduled run there is nothing to wait for.
            if not first or self.coordinator.announced():
                return
            self._stop.wait(_FOLLOWER_POLL_SECONDS)

    def _measure_and_publish(self) -> benchmark.BenchmarkRun | None:
        run = benchmark.run(self.cells, self.budget, stop=self._stop)
        if run is None:
            return None
        self.metrics.publish_benchmark(run, self.arch)
        self.last_run = run
        logger.info(
            "benchmark: %d cells in %.2f s (budget %.2f s); %s",
            len(run.results),
            run.duration_seconds,
            run.budget_seconds,
            summary(run),
        )
        return run


def summary(run: benchmark.BenchmarkRun) -> str:
    """The chosen implementations at the largest size, for the log: `chacha20=avx2 2.1 GB/s`."""
    largest = max((r.size_bytes for r in run.results), default=0)
    return ", ".join(
        f"{r.algorithm}={r.implementation} {r.bytes_per_second / 1e9:.2f} GB/s"
        for r in run.results
        if r.selected and r.size_bytes == largest
    )
