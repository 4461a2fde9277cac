"""`archcrypt serve --workers 2`: prometheus-client's multiprocess mode, one benchmark for
the host, info-style gauges that survive the merge, and a directory cleaned at start."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.parser import text_string_to_metric_families

from .conftest import launch
from .helpers import b64, metric_value

STALE_ROUTE = "/left-by-an-earlier-run"


def _stale_counter(directory: Path) -> None:
    """What a previous generation of workers leaves behind: a counter file of a dead pid."""
    values = MmapedDict(str(directory / "counter_999999.db"))
    labels = ["method", "route", "status"]
    name = "archcrypt_http_requests_total"
    key = mmap_key(name, name, labels, ["GET", STALE_ROUTE, "200"], "stale")
    values.write_value(key, 1000.0, 0.0)
    values.close()


def test_workers_share_one_set_of_metrics(tmp_path: Path) -> None:
    directory = tmp_path / "multiproc"
    directory.mkdir()
    _stale_counter(directory)
    with launch(
        tmp_path,
        "--workers",
        "2",
        PROMETHEUS_MULTIPROC_DIR=str(directory),
        ARCHCRYPT_BENCHMARK_BUDGET_SECONDS="0.2",
    ) as launched:
        server = launched.wait_ready()
        # both workers published their startup gauges, and both are ready (new connections
        # land on either worker)
        deadline = time.monotonic() + 30
        while len(list(directory.glob("gauge_mostrecent_*.db"))) < 2:
            assert time.monotonic() < deadline, sorted(p.name for p in directory.iterdir())
            time.sleep(0.05)
        for _ in range(10):
            assert httpx.get(f"{server.base_url}/readyz").status_code == 200

        for _ in range(20):
            response = httpx.post(f"{server.base_url}/v1/hash/sha256", json={"data": b64(b"x")})
            assert response.status_code == 200

        for _ in range(4):  # whichever worker answers, the same totals
            text = httpx.get(f"{server.base_url}/metrics").text
            labels = {"operation": "hash", "algorithm": "sha256", "outcome": "ok"}
            assert metric_value(text, "archcrypt_operations_total", **labels) == 20
            assert metric_value(text, "archcrypt_http_requests_total", route=STALE_ROUTE) == 0
            families = {f.name: f for f in text_string_to_metric_families(text)}
            (build,) = families["archcrypt_build_info"].samples
            assert "pid" not in build.labels
            assert build.value == 1
            backends = families["archcrypt_backend_info"].samples
            assert len(backends) == len({s.labels["algorithm"] for s in backends})
            throughput = families["archcrypt_benchmark_throughput_bytes_per_second"].samples
            keys = [
                (s.labels["algorithm"], s.labels["backend"], s.labels["size_bytes"])
                for s in throughput
            ]
            assert keys
            assert len(keys) == len(set(keys))
            assert all(s.value > 0 for s in throughput)
            assert len(families["archcrypt_benchmark_last_run_timestamp_seconds"].samples) == 1

    # one benchmark for the host: the other worker waited for its figures
    log = launched.server.log.read_text()
    assert log.count("benchmark: ") == 1, log
