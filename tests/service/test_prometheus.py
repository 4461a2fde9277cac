"""The metrics as an operator sees them: two archcrypt servers (one with every CPU feature
masked) scraped by a real Prometheus with the deployed scrape job and rules; promtool on
the exposition, the rules and the configs; every Grafana panel's query against it."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from . import promserver
from .conftest import Server, launch
from .helpers import b64
from .promserver import (
    DEPLOY_PROMETHEUS,
    REPO,
    Prometheus,
    load_rules,
    promtool,
    running_prometheus,
)

SIZES = {"64", "1024", "65536"}
DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "archcrypt.json"


@dataclass(frozen=True)
class Fleet:
    prometheus: Prometheus
    normal: Server
    masked: Server

    @staticmethod
    def instance(server: Server) -> str:
        return f"127.0.0.1:{server.port}"


@pytest.fixture(scope="module")
def fleet(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """The session's server and one whose CPU features are all masked (a bad image or
    environment), both scraped by Prometheus. The second server and Prometheus start
    side by side: scrapes that fail until the server is up do no harm."""
    with launch(tmp_path_factory.mktemp("masked"), ARCHCRYPT_DISABLE_CPU_FEATURES="all") as masked:
        targets = [Fleet.instance(server), Fleet.instance(masked.server)]
        with running_prometheus(tmp_path_factory.mktemp("prometheus"), targets) as prometheus:
            masked.wait_ready()
            # ready means benchmarked: the next scrape of each has the figures
            prometheus.wait_for(
                "count by (instance) (archcrypt_benchmark_last_run_timestamp_seconds)",
                lambda result: len(result) == 2,
            )
            yield Fleet(prometheus, server, masked.server)


def _backends(server: Server) -> dict[str, Any]:
    report: dict[str, Any] = httpx.get(f"{server.base_url}/v1/backends").json()
    return report


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _label_sets(result: list[dict[str, Any]], *labels: str) -> set[tuple[str, ...]]:
    return {tuple(sample["metric"][label] for label in labels) for sample in result}


# ---- what each instance publishes, read back through Prometheus -------------------------------


def test_backend_series(fleet: Fleet) -> None:
    for server in (fleet.normal, fleet.masked):
        report = _backends(server)
        instance = Fleet.instance(server)
        result = fleet.prometheus.query(f'archcrypt_backend_info{{instance="{instance}"}}')
        assert _label_sets(result, "algorithm", "backend", "arch", "forced") == {
            (a["name"], a["selected"], report["arch"], "false") for a in report["algorithms"]
        }
        rows = fleet.prometheus.query(f'archcrypt_implementation_info{{instance="{instance}"}}')
        assert _label_sets(rows, "algorithm", "backend", "runnable", "selected") == {
            (a["name"], i["name"], _bool(i["runnable"]), _bool(i["name"] == a["selected"]))
            for a in report["algorithms"]
            for i in a["implementations"]
        }
        (build,) = fleet.prometheus.query(f'archcrypt_build_info{{instance="{instance}"}}')
        assert build["metric"]["arch"] == report["arch"]
        assert build["metric"]["native_version"] == report["version"]
        for label in ("version", "revision", "compiler", "python_version", "cffi_version"):
            assert build["metric"][label], label
        tests = fleet.prometheus.query(f'archcrypt_selftest_ok{{instance="{instance}"}}')
        assert {(s["metric"]["algorithm"], s["metric"]["backend"]) for s in tests} == {
            (a["name"], i["name"])
            for a in report["algorithms"]
            for i in a["implementations"]
            if i["runnable"]
        }
        assert {s["value"][1] for s in tests} == {"1"}


def test_cpu_feature_series(fleet: Fleet) -> None:
    normal, masked = _backends(fleet.normal), _backends(fleet.masked)
    detected = {f["name"] for f in normal["features"] if f["state"] == "present"}
    assert {f["name"] for f in masked["features"] if f["state"] != "absent"} == detected
    for server, state in ((fleet.normal, "present"), (fleet.masked, "masked")):
        result = fleet.prometheus.query(
            f'archcrypt_cpu_feature_info{{instance="{Fleet.instance(server)}"}}'
        )
        # a masked feature is still detected: the same names, another state
        assert _label_sets(result, "feature", "state") == {(name, state) for name in detected}
        assert _label_sets(result, "arch") <= {(normal["arch"],)}


def test_benchmark_series(fleet: Fleet) -> None:
    for server in (fleet.normal, fleet.masked):
        instance = Fleet.instance(server)
        report = _backends(server)
        result = fleet.prometheus.query(
            f'archcrypt_benchmark_throughput_bytes_per_second{{instance="{instance}"}}'
        )
        expected = {
            (a["name"], i["name"], size)
            for a in report["algorithms"]
            for i in a["implementations"]
            if i["runnable"]
            for size in SIZES
        }
        assert _label_sets(result, "algorithm", "backend", "size_bytes") == expected
        assert all(float(sample["value"][1]) > 0 for sample in result)
        assert _label_sets(result, "arch") == {(report["arch"],)}

        (finished,) = fleet.prometheus.query(
            f'archcrypt_benchmark_last_run_timestamp_seconds{{instance="{instance}"}}'
        )
        assert 0 < time.time() - float(finished["value"][1]) < 600
        (duration,) = fleet.prometheus.query(
            f'archcrypt_benchmark_duration_seconds{{instance="{instance}"}}'
        )
        assert 0.1 < float(duration["value"][1]) < 5  # a 0.3 s budget
        (clock,) = fleet.prometheus.query(
            f'archcrypt_benchmark_core_clock_hertz{{instance="{instance}"}}'
        )
        assert 1e8 < float(clock["value"][1]) < 1e10


# ---- masked features: the backend changes and the fallback alerts fire --------------------------


def _expected_fallbacks(report: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(algorithms running portable although the CPU has a faster row, algorithms running an
    accelerated row slower than the best the CPU has), from /v1/backends."""
    detected = {f["name"] for f in report["features"] if f["state"] != "absent"}
    portable, slower = set(), set()
    for algorithm in report["algorithms"]:
        capable = [
            i["name"] for i in algorithm["implementations"] if set(i["requires"]) <= detected
        ]
        if algorithm["selected"] == "portable":
            if any(name != "portable" for name in capable):
                portable.add(algorithm["name"])
        elif capable and capable[0] != algorithm["selected"]:
            slower.add(algorithm["name"])
    return portable, slower


def test_masking_changes_the_published_backend(fleet: Fleet) -> None:
    def chosen(server: Server) -> dict[str, str]:
        result = fleet.prometheus.query(
            f'archcrypt_backend_info{{instance="{Fleet.instance(server)}"}}'
        )
        return {s["metric"]["algorithm"]: s["metric"]["backend"] for s in result}

    normal, masked = chosen(fleet.normal), chosen(fleet.masked)
    expected = {a["name"]: a["selected"] for a in _backends(fleet.masked)["algorithms"]}
    assert masked == expected
    # every row masked that needs a feature: only rows without requirements remain
    for algorithm in _backends(fleet.masked)["algorithms"]:
        (row,) = (i for i in algorithm["implementations"] if i["name"] == algorithm["selected"])
        assert row["requires"] == []
    if normal == masked:
        pytest.skip("this CPU has no feature any implementation uses: nothing to fall back from")
    assert {name for name in normal if normal[name] != masked[name]}


def test_fallback_alerts_fire_for_the_masked_host_only(fleet: Fleet) -> None:
    rules = load_rules()
    portable, slower = _expected_fallbacks(_backends(fleet.masked))
    assert _expected_fallbacks(_backends(fleet.normal)) == (set(), set())
    if not portable:
        pytest.skip("this CPU has no feature a non-portable implementation uses")
    masked = Fleet.instance(fleet.masked)

    for alert, expected in (
        ("ArchcryptPortableFallback", portable),
        ("ArchcryptSlowerImplementation", slower),
    ):
        result = fleet.prometheus.query(rules[alert]["expr"])
        assert _label_sets(result, "instance", "algorithm") == {
            (masked, algorithm) for algorithm in expected
        }, alert

    # and Prometheus itself evaluates the rule: pending (it has a `for`), then firing
    deadline = time.monotonic() + 15
    while True:
        active = {
            a["labels"]["algorithm"]
            for a in fleet.prometheus.alerts()
            if a["labels"]["alertname"] == "ArchcryptPortableFallback"
            and a["labels"]["instance"] == masked
            and a["state"] in {"pending", "firing"}
        }
        if active == portable or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert active == portable


def test_no_other_alert_fires(fleet: Fleet) -> None:
    rules = load_rules()
    for alert in ("ArchcryptSelfTestFailed", "ArchcryptAeadAuthFailureBurst"):
        assert fleet.prometheus.query(rules[alert]["expr"]) == [], alert


# ---- promtool --------------------------------------------------------------------------------


def test_missing_prometheus_fails_unless_skipped_on_purpose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(promserver.shutil, "which", lambda name: None)
    monkeypatch.delenv("ARCHCRYPT_SKIP_PROMETHEUS", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"scripts/setup\.sh.*apt-get install"):
        promserver.tool("promtool")
    monkeypatch.setenv("ARCHCRYPT_SKIP_PROMETHEUS", "1")
    with pytest.raises(pytest.skip.Exception):
        promserver.tool("prometheus")


def test_promtool_check_metrics(fleet: Fleet) -> None:
    for server in (fleet.normal, fleet.masked):
        exposition = httpx.get(f"{server.base_url}/metrics").text
        result = promtool("check", "metrics", stdin=exposition)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip() == "", result.stdout


def test_promtool_check_and_test_rules() -> None:
    result = promtool("check", "rules", "archcrypt.rules.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    result = promtool("test", "rules", "archcrypt.rules.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_check_configs(tmp_path: Path) -> None:
    result = promtool("check", "config", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    # Debian builds Prometheus without Kubernetes discovery; check the rest of that config
    # (relabelling included) with a static target in its place.
    config = yaml.safe_load((DEPLOY_PROMETHEUS / "prometheus-kubernetes.yml").read_text())
    for job in config["scrape_configs"]:
        assert job.pop("kubernetes_sd_configs")
        job["static_configs"] = [{"targets": ["127.0.0.1:8000"]}]
    config["rule_files"] = [str(DEPLOY_PROMETHEUS / name) for name in config["rule_files"]]
    (tmp_path / "kubernetes.yml").write_text(yaml.safe_dump(config))
    result = promtool("check", "config", str(tmp_path / "kubernetes.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


# ---- the Grafana dashboard ---------------------------------------------------------------------


def _panels() -> list[dict[str, Any]]:
    dashboard = json.loads(DASHBOARD.read_text())
    panels: list[dict[str, Any]] = []
    for panel in dashboard["panels"]:
        panels.append(panel)
        panels.extend(panel.get("panels", []))  # collapsed rows hold their panels
    return panels


def _substitute(expr: str) -> str:
    """What Grafana sends with every variable at "All" and a 1 m rate interval."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "15s")
    return re.sub(r"\$\{?(job|arch|instance|algorithm|size)\}?", ".*", expr)


def test_dashboard_is_well_formed() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"]
    assert dashboard["title"]
    panels = _panels()
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        assert panel.get("description"), panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert variables == {"datasource", "job", "arch", "instance", "algorithm", "size"}
    provisioning = yaml.safe_load(
        (REPO / "deploy/grafana/provisioning/dashboards/archcrypt.yml").read_text()
    )
    assert provisioning["providers"][0]["options"]["path"]


def _traffic(server: Server) -> None:
    """A bit of every kind of request, an authentication failure included."""
    key = bytes(range(32))
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        for _ in range(3):
            assert client.post("/v1/hash/sha256", json={"data": b64(b"x" * 100)}).status_code == 200
            sealed = client.post(
                "/v1/aead/chacha20-poly1305/seal", json={"key": b64(key), "plaintext": b64(b"hi")}
            ).json()
            assert (
                client.post(
                    "/v1/aead/chacha20-poly1305/open", json={"key": b64(key), **sealed}
                ).status_code
                == 200
            )
            forged = {**sealed, "ciphertext": b64(bytes(18))}
            assert (
                client.post(
                    "/v1/aead/chacha20-poly1305/open", json={"key": b64(key), **forged}
                ).status_code
                == 400
            )
            mac = client.post("/v1/mac/poly1305", json={"key": b64(key), "data": ""})
            assert mac.status_code == 200
            # a named chacha20-poly1305 key: its operations and its nonce budget
            created = client.post("/v1/keys", json={"name": "dash", "type": "chacha20-poly1305"})
            assert created.status_code in (201, 409), created.text
            named = client.post("/v1/keys/dash/seal", json={"plaintext": b64(b"hi")})
            assert named.status_code == 200, named.text
            sealed_named = {"ciphertext": named.json()["ciphertext"]}
            opened = client.post("/v1/keys/dash/open", json=sealed_named)
            assert opened.status_code == 200, opened.text
            assert client.get("/no/such/route").status_code == 404


def test_every_dashboard_query_returns_data(fleet: Fleet) -> None:
    # Twice, with a scrape in between: a series is born with its first value and a rate
    # only sees what comes after that.
    for _ in range(2):
        _traffic(fleet.normal)
        _traffic(fleet.masked)
        marker = time.time()
        fleet.prometheus.wait_for(
            f"count(timestamp(archcrypt_build_info) > {marker:f})",
            lambda result: bool(result) and result[0]["value"][1] == "2",
            timeout=10,
        )
    dashboard = json.loads(DASHBOARD.read_text())
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["query"]["query"])
        assert match, variable["name"]
        selector, label = _substitute(match[1]), match[2]
        fleet.prometheus.wait_for(f"count by ({label}) ({selector})", timeout=10)
    for panel in _panels():
        for target in panel.get("targets", []):
            expr = _substitute(target["expr"])
            assert "$" not in expr, f"{panel['title']}: unknown variable in {expr}"
            # rates need two scrapes after the traffic, recording rules an evaluation
            fleet.prometheus.wait_for(expr, timeout=20)
