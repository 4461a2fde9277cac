"""The startup benchmark and the metrics around it: calibration to a budget, readiness,
the schedule, the switch, the implementation rows behind the fallback alerts, and the
figures `archcrypt info` prints."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from archcrypt import benchmark, crypto, scheduler
from archcrypt.app import create_app
from archcrypt.config import Settings
from archcrypt.crypto import Algorithm, BackendReport, CpuFeature, Implementation
from archcrypt.metrics import implementation_rows

from .helpers import metric_value
from .test_app import serving

THROUGHPUT = "archcrypt_benchmark_throughput_bytes_per_second"
LAST_RUN = "archcrypt_benchmark_last_run_timestamp_seconds"


def _runnable_cells(report: BackendReport, sizes: tuple[int, ...]) -> set[tuple[str, str, int]]:
    return {
        (a.name, i.name, size)
        for a in report.algorithms
        if a.name in benchmark.WORKLOADS
        for i in a.implementations
        if i.runnable
        for size in sizes
    }


def test_run_covers_every_runnable_implementation_within_its_budget() -> None:
    report = crypto.backends()
    cells, _ = benchmark.plan(report)
    run = benchmark.run(cells, 0.3)
    assert run is not None
    assert {(r.algorithm, r.implementation, r.size_bytes) for r in run.results} == (
        _runnable_cells(report, benchmark.SIZES)
    )
    assert all(r.bytes_per_second > 0 and r.iterations >= 1 for r in run.results)
    assert {r.implementation for r in run.results if r.selected} == {
        a.selected for a in report.algorithms if a.name in benchmark.WORKLOADS
    }
    # calibrated to the budget; a loaded machine may add a little
    assert 0.25 < run.duration_seconds < 0.9
    assert run.core_hz > 1e8
    assert benchmark.BenchmarkRun.from_json(run.to_json()) == run


def test_run_stops_between_cells() -> None:
    cells, _ = benchmark.plan(crypto.backends())
    stop = threading.Event()
    stop.set()
    assert benchmark.run(cells, 10.0, stop=stop) is None


def test_plan_leaves_out_failed_self_tests() -> None:
    cells, skipped = benchmark.plan(
        crypto.backends(), (64,), usable=lambda algorithm, impl: impl != "portable"
    )
    assert cells
    assert all(cell.implementation != "portable" for cell in cells)
    assert any("portable: self-test failed" in note for note in skipped)


def test_interval_must_leave_the_cpu_to_requests() -> None:
    with pytest.raises(ValidationError, match="ten times"):
        Settings(benchmark_budget_seconds=2, benchmark_interval_seconds=5)
    assert Settings(benchmark_budget_seconds=2, benchmark_interval_seconds=20)
    assert Settings(benchmark_interval_seconds=0)


# ---- the rows behind the fallback alerts -------------------------------------------------------


def _report(selected: str, features: dict[str, str]) -> BackendReport:
    rows = (
        Implementation("avx512", ("avx512f", "avx512vl"), False),
        Implementation("avx2", ("avx2",), features.get("avx2") == "present"),
        Implementation("ssse3", ("ssse3",), features.get("ssse3") == "present"),
        Implementation("portable", (), True),
    )
    return BackendReport(
        arch="amd64",
        version="0",
        compiler="cc",
        features=tuple(CpuFeature(name, state) for name, state in features.items()),
        algorithms=(Algorithm("chacha20", selected, False, rows),),
    )


def _flags(report: BackendReport, label: str) -> dict[str, str]:
    return {row["backend"]: row[label] for row in implementation_rows(report)}


def test_masked_features_are_still_capable() -> None:
    # avx2 masked, ssse3 usable, no avx-512: ssse3 runs, avx2 is what the CPU could run
    report = _report("ssse3", {"avx512f": "absent", "avx2": "masked", "ssse3": "present"})
    assert _flags(report, "runnable") == {
        "avx512": "false",
        "avx2": "false",
        "ssse3": "true",
        "portable": "true",
    }
    assert _flags(report, "capable") == {
        "avx512": "false",
        "avx2": "true",
        "ssse3": "true",
        "portable": "true",
    }
    assert _flags(report, "preferred") == {
        "avx512": "false",
        "avx2": "true",
        "ssse3": "false",
        "portable": "false",
    }
    assert _flags(report, "selected")["ssse3"] == "true"
    assert _flags(report, "requires") == {
        "avx512": "avx512f,avx512vl",
        "avx2": "avx2",
        "ssse3": "ssse3",
        "portable": "none",
    }


def test_a_cpu_without_features_prefers_portable() -> None:
    report = _report("portable", {"avx512f": "absent", "avx2": "absent", "ssse3": "absent"})
    assert _flags(report, "capable") == {
        "avx512": "false",
        "avx2": "false",
        "ssse3": "false",
        "portable": "true",
    }
    assert _flags(report, "preferred")["portable"] == "true"


# ---- in the service ----------------------------------------------------------------------------


def _ready(client: httpx.Client) -> bool:
    return client.get("/readyz").status_code == 200


def _wait(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_readiness_waits_for_the_first_run(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real_run = benchmark.run

    def held_run(*args: Any, **kwargs: Any) -> benchmark.BenchmarkRun | None:
        release.wait(20)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(benchmark, "run", held_run)
    settings = Settings(benchmark_budget_seconds=0.1)
    with serving(create_app(settings)) as client:
        try:
            assert client.get("/livez").status_code == 200
            time.sleep(0.2)
            assert not _ready(client)
            assert metric_value(client.get("/metrics").text, LAST_RUN) == 0
        finally:
            release.set()
        _wait(lambda: _ready(client))
        text = client.get("/metrics").text
        assert metric_value(text, LAST_RUN) > 0
        assert metric_value(text, THROUGHPUT, size_bytes="65536") > 0
        # the crypto routes answer now, with the process-wide choice untouched by the run
        assert client.post("/v1/hash/sha256", json={"data": ""}).status_code == 200
        selected = {a.name: a.selected for a in crypto.backends().algorithms}
        backends = client.get("/v1/backends").json()
        assert {a["name"]: a["selected"] for a in backends["algorithms"]} == selected


def test_benchmark_can_be_turned_off() -> None:
    with serving(create_app(Settings(benchmark_enabled=False))) as client:
        assert _ready(client)  # at once
        text = client.get("/metrics").text
        assert metric_value(text, THROUGHPUT) == 0  # no samples
        assert metric_value(text, LAST_RUN) == 0
        assert metric_value(text, "archcrypt_backend_info") > 0


def test_benchmark_repeats_on_schedule() -> None:
    settings = Settings(benchmark_budget_seconds=0.05, benchmark_interval_seconds=0.5)
    with serving(create_app(settings)) as client:
        _wait(lambda: _ready(client))
        first = metric_value(client.get("/metrics").text, LAST_RUN)
        assert first > 0
        _wait(lambda: metric_value(client.get("/metrics").text, LAST_RUN) > first, timeout=10)
        assert _ready(client)  # a repeat never takes readiness away


def test_coordinator_elects_one_leader(tmp_path: Any) -> None:
    first, second = scheduler.Coordinator(tmp_path), scheduler.Coordinator(tmp_path)
    try:
        assert first.try_lead()
        assert not second.try_lead()
        assert not second.announced()
        cells, _ = benchmark.plan(crypto.backends(), (64,), algorithms=["poly1305"])
        run = benchmark.run(cells, 0.05)
        assert run is not None
        first.announce(run)
        assert second.announced()
        first.close()  # a leader that dies releases the lock
        assert second.try_lead()
    finally:
        first.close()
        second.close()
    scheduler.clean_multiprocess_dir(tmp_path)
    assert list(tmp_path.iterdir()) == []


# ---- archcrypt info prints the same figures ----------------------------------------------------


def test_info_prints_the_startup_benchmark() -> None:
    def info(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "archcrypt", "info", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    result = info("--json", "--budget", "0.2")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    run = report["benchmark"]
    assert run["budget_seconds"] == 0.2
    cells = {(r["algorithm"], r["implementation"], r["size_bytes"]) for r in run["results"]}
    assert cells == _runnable_cells(crypto.backends(), benchmark.SIZES)
    assert all(r["bytes_per_second"] > 0 for r in run["results"])

    table = info("--budget", "0.2")
    assert table.returncode == 0, table.stderr
    assert "GB/s" in table.stdout
    assert "archcrypt_benchmark_throughput_bytes_per_second" in table.stdout
