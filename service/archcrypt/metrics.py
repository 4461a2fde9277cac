"""Every Prometheus metric the service exports: base units, counters end in _total, bounded labels.

Each app owns a CollectorRegistry, so two apps in one process (tests) never share series.
Info-style metrics are gauges set to 1.
"""

from __future__ import annotations

import platform
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
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from . import __version__

if TYPE_CHECKING:
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
        self.registry = CollectorRegistry()
        # process_resident_memory_bytes is how an operator sees that streamed hashing stays flat.
        ProcessCollector(registry=self.registry)
        common: dict[str, Any] = {"namespace": NAMESPACE, "registry": self.registry}

        self.build_info = Gauge(
            "build_info",
            "Build of this process (always 1).",
            ["version", "native_version", "compiler", "python_version"],
            **common,
        )
        self.backend_info = Gauge(
            "backend_info",
            "Implementation chosen for each algorithm on this host (always 1).",
            ["algorithm", "backend", "arch"],
            **common,
        )
        self.cpu_feature_info = Gauge(
            "cpu_feature_info",
            "CPU features usable on this host, after masking (always 1).",
            ["arch", "feature"],
            **common,
        )
        self.selftest_ok = Gauge(
            "selftest_ok",
            "1 when the startup known-answer test of the chosen implementation passed, else 0.",
            ["algorithm", "backend"],
            **common,
        )
        self.operations = Counter(
            "operations",
            "Crypto operations by outcome (ok, auth_failed, invalid_input, error).",
            ["operation", "algorithm", "outcome"],
            **common,
        )
        self.processed_bytes = Counter(
            "processed_bytes",
            "Input bytes handed to crypto operations.",
            ["operation", "algorithm"],
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

    def publish_startup(self, report: BackendReport, self_tests: Mapping[str, bool]) -> None:
        """Build, backend, CPU feature and self-test series, set once the library is up."""
        self.build_info.labels(
            version=__version__,
            native_version=report.version,
            compiler=report.compiler,
            python_version=platform.python_version(),
        ).set(1)
        for feature in report.features:
            if feature.state == "present":
                self.cpu_feature_info.labels(arch=report.arch, feature=feature.name).set(1)
        for algorithm in report.algorithms:
            self.backend_info.labels(
                algorithm=algorithm.name, backend=algorithm.selected, arch=report.arch
            ).set(1)
            self.selftest_ok.labels(algorithm=algorithm.name, backend=algorithm.selected).set(
                1 if self_tests.get(algorithm.name) else 0
            )

    def observe_operation(
        self, operation: str, algorithm: str, outcome: str, nbytes: int, seconds: float
    ) -> None:
        key = (operation, algorithm, outcome)
        series = self._operation_series.get(key)
        if series is None:
            series = self._operation_series[key] = (
                self.operations.labels(operation, algorithm, outcome),
                self.processed_bytes.labels(operation, algorithm),
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

    def render(self) -> bytes:
        return generate_latest(self.registry)
