"""Every Prometheus metric the service exports: base units, counters end in _total, bounded labels.

Each app owns a CollectorRegistry, so two apps in one process (tests) never share series.
Info-style metrics are gauges set to 1.

With several uvicorn workers, prometheus-client's multiprocess mode is on (the
PROMETHEUS_MULTIPROC_DIR environment variable, set and cleaned by `archcrypt serve`):
each process writes its values to files there and /metrics merges them, so counters and
histograms add up over the workers. Every gauge here says the same on every worker of a
host, so they use the "mostrecent" mode: one series, no pid label.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
    values,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from .buildinfo import BuildInfo, HttpStack, build_info, http_stack

if TYPE_CHECKING:
    from .benchmark import BenchmarkRun
    from .crypto import BackendReport

NAMESPACE: Final = "archcrypt"
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

# A small request costs ~150-260 us end to end, a 16 MiB one tens of ms: buckets from
# 100 us up. The kernels alone go from about 1 us (64 B) to seconds (GiB streams).
HTTP_BUCKETS: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    10.0,
)  # fmt: skip
OPERATION_BUCKETS: Final = (
    0.000001, 0.000005, 0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5,
    1.0, 5.0,
)  # fmt: skip


class Metrics:
    """The metric objects of one app and the few ways the service updates them."""

    def __init__(self) -> None:
        # The *_created series double the output and no dashboard reads them. The switch is
        # process-wide; it is flipped here because this is where the service's metrics begin.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.multiprocess_dir = multiprocess_dir()
        self.registry = CollectorRegistry()
        if self.multiprocess_dir is None:
            # process_resident_memory_bytes is how an operator sees that streamed hashing
            # stays flat. (In multiprocess mode it would describe whichever worker answered.)
            ProcessCollector(registry=self.registry)
            self._exposition = self.registry
        else:
            self._exposition = CollectorRegistry()
            MultiProcessCollector(  # type: ignore[no-untyped-call]
                self._exposition, path=self.multiprocess_dir
            )
        common: dict[str, Any] = {"namespace": NAMESPACE, "registry": self.registry}
        gauge: dict[str, Any] = {**common, "multiprocess_mode": "mostrecent"}

        self.build_info = Gauge(
            "build_info",
            "Build of this process (always 1).",
            [
                "version",
                "revision",
                "native_version",
                "compiler",
                "python_version",
                "cffi_version",
                "arch",
                "http_parser",
                "event_loop",
            ],
            **gauge,
        )
        self.backend_info = Gauge(
            "backend_info",
            "Implementation chosen for each algorithm on this host; forced by ARCHCRYPT_FORCE "
            "or not (always 1).",
            ["algorithm", "backend", "arch", "forced"],
            **gauge,
        )
        self.implementation_info = Gauge(
            "implementation_info",
            "Every implementation of every algorithm (always 1). runnable: usable now, after "
            "masking; capable: the CPU has every feature it requires, masked or not; "
            "preferred: the one dispatch would pick with nothing masked or forced; "
            "selected: the one in use.",
            [
                "algorithm",
                "backend",
                "arch",
                "requires",
                "runnable",
                "capable",
                "preferred",
                "selected",
            ],
            **gauge,
        )
        self.cpu_feature_info = Gauge(
            "cpu_feature_info",
            "CPU features detected on this host (always 1); state is present (usable) or "
            "masked (by ARCHCRYPT_DISABLE_CPU_FEATURES or a masked prerequisite).",
            ["arch", "feature", "state"],
            **gauge,
        )
        self.selftest_ok = Gauge(
            "selftest_ok",
            "1 when the startup known-answer test of the implementation passed, else 0; "
            "every runnable implementation is tested.",
            ["algorithm", "backend"],
            **gauge,
        )
        self.benchmark_throughput = Gauge(
            "benchmark_throughput_bytes_per_second",
            "Startup benchmark: bytes per second (of thread CPU time) of each runnable "
            "implementation at each message size, on one thread, through the Python facade.",
            ["arch", "algorithm", "backend", "size_bytes"],
            **gauge,
        )
        self.benchmark_last_run = Gauge(
            "benchmark_last_run_timestamp_seconds",
            "When the last complete benchmark run finished (Unix time).",
            **gauge,
        )
        self.benchmark_duration = Gauge(
            "benchmark_duration_seconds",
            "How long the last complete benchmark run took.",
            **gauge,
        )
        self.benchmark_core_clock = Gauge(
            "benchmark_core_clock_hertz",
            "Core clock measured by the last benchmark run (a chain of dependent adds, not "
            "the TSC): divide by a throughput for cycles per byte.",
            **gauge,
        )
        self.operations = Counter(
            "operations",
            "Crypto operations by outcome (ok, auth_failed, invalid_input, error).",
            ["operation", "algorithm", "outcome"],
            **common,
        )
        self.processed_bytes = Counter(
            "processed_bytes",
            "Input bytes handed to crypto operations, by outcome.",
            ["operation", "algorithm", "outcome"],
            **common,
        )
        self.operation_duration = Histogram(
            "operation_duration_seconds",
            "Time spent in crypto operations, HTTP and encoding excluded.",
            ["operation", "algorithm"],
            buckets=OPERATION_BUCKETS,
            **common,
        )
        self.http_requests = Counter(
            "http_requests",
            "HTTP requests by method, route template and status.",
            ["method", "route", "status"],
            **common,
        )
        self.http_request_duration = Histogram(
            "http_request_duration_seconds",
            "HTTP request latency by method and route template.",
            ["method", "route"],
            buckets=HTTP_BUCKETS,
            **common,
        )
        # labels() costs a few microseconds a call; the label sets are bounded, so each
        # request and operation looks its series up here instead.
        self._operation_series: dict[tuple[str, str, str], tuple[Counter, Counter, Histogram]] = {}
        self._request_series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def publish_startup(
        self,
        report: BackendReport,
        self_tests: Mapping[tuple[str, str], bool],
        build: BuildInfo | None = None,
        stack: HttpStack | None = None,
        http_parser_setting: str = "auto",
    ) -> None:
        """Build, CPU feature, implementation and self-test series, set once the library is
        up. self_tests maps (algorithm, implementation) to the known-answer result; stack is
        read from the running loop and the ARCHCRYPT_HTTP setting unless given."""
        build = build if build is not None else build_info()
        stack = stack if stack is not None else http_stack(http_parser_setting)
        self.build_info.labels(
            version=build.version,
            revision=build.revision,
            native_version=report.version,
            compiler=report.compiler,
            python_version=build.python_version,
            cffi_version=build.cffi_version,
            arch=report.arch,
            http_parser=stack.http_parser,
            event_loop=stack.event_loop,
        ).set(1)
        for feature in report.features:
            if feature.state != "absent":
                self.cpu_feature_info.labels(
                    arch=report.arch, feature=feature.name, state=feature.state
                ).set(1)
        for algorithm in report.algorithms:
            self.backend_info.labels(
                algorithm=algorithm.name,
                backend=algorithm.selected,
                arch=report.arch,
                forced=_bool(algorithm.forced),
            ).set(1)
        for row in implementation_rows(report):
            self.implementation_info.labels(**row).set(1)
        for (algorithm_name, implementation), passed in self_tests.items():
            self.selftest_ok.labels(algorithm=algorithm_name, backend=implementation).set(
                1 if passed else 0
            )

    def publish_benchmark(self, run: BenchmarkRun, arch: str) -> None:
        for result in run.results:
            self.benchmark_throughput.labels(
                arch=arch,
                algorithm=result.algorithm,
                backend=result.implementation,
                size_bytes=str(result.size_bytes),
            ).set(result.bytes_per_second)
        self.benchmark_core_clock.set(run.core_hz)
        self.benchmark_duration.set(run.duration_seconds)
        # last: a dashboard that sees the new timestamp also sees the new figures
        self.benchmark_last_run.set(run.finished)

    def observe_operation(
        self, operation: str, algorithm: str, outcome: str, nbytes: int, seconds: float
    ) -> None:
        key = (operation, algorithm, outcome)
        series = self._operation_series.get(key)
        if series is None:
            series = self._operation_series[key] = (
                self.operations.labels(operation, algorithm, outcome),
                self.processed_bytes.labels(operation, algorithm, outcome),
                self.operation_duration.labels(operation, algorithm),
            )
        count, processed, duration = series
        count.inc()
        processed.inc(nbytes)
        duration.observe(seconds)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        series = self._request_series.get(key)
        if series is None:
            series = self._request_series[key] = (
                self.http_requests.labels(method, route, str(status)),
                self.http_request_duration.labels(method, route),
            )
        count, duration = series
        count.inc()
        duration.observe(seconds)

    def register_collector(self, collector: Collector) -> None:
        """A collector computed at scrape time (the same in every worker, like the gauges)."""
        self._exposition.register(collector)

    def render(self) -> bytes:
        return generate_latest(self._exposition)


def multiprocess_dir() -> str | None:
    """The directory of prometheus-client's multiprocess mode, None when it is off.

    prometheus-client decides once, when it is imported, from PROMETHEUS_MULTIPROC_DIR;
    what it decided is what counts, not the variable as it is now.
    """
    if not getattr(values.ValueClass, "_multiprocess", False):
        return None
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def _bool(value: bool) -> str:
    return "true" if value else "false"


def implementation_rows(report: BackendReport) -> list[dict[str, str]]:
    """The labels of archcrypt_implementation_info, one dict per dispatch row.

    A masked feature is still detected: `capable` says what the hardware can run, so an
    alert can tell a host that has a faster kernel but runs portable (masked features, a
    bad ARCHCRYPT_DISABLE_CPU_FEATURES) from one whose CPU has nothing better.
    """
    detected = {f.name for f in report.features if f.state != "absent"}
    rows: list[dict[str, str]] = []
    for algorithm in report.algorithms:
        preferred = next(
            (i.name for i in algorithm.implementations if set(i.requires) <= detected), None
        )
        for impl in algorithm.implementations:
            rows.append(
                {
                    "algorithm": algorithm.name,
                    "backend": impl.name,
                    "arch": report.arch,
                    "requires": ",".join(impl.requires) or "none",
                    "runnable": _bool(impl.runnable),
                    "capable": _bool(set(impl.requires) <= detected),
                    "preferred": _bool(impl.name == preferred),
                    "selected": _bool(impl.name == algorithm.selected),
                }
            )
    return rows
