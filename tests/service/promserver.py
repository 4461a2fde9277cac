"""A real Prometheus (Debian's package) for the tests: started on loopback with a temporary
config and storage, scraping every second and evaluating deploy/prometheus's rules.

prometheus and promtool are installed by scripts/setup.sh (when run as root). Without them
the tests fail and say how to get them, unless ARCHCRYPT_SKIP_PROMETHEUS=1 marks them
skipped on purpose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from .helpers import free_port, wait_until_ready

REPO = Path(__file__).resolve().parents[2]
DEPLOY_PROMETHEUS = REPO / "deploy" / "prometheus"
RULES = DEPLOY_PROMETHEUS / "archcrypt.rules.yml"
SCRAPE_INTERVAL = "1s"


def tool(name: str) -> str:
    """Path of a Prometheus binary; fails (or skips, when asked to) if it is missing."""
    path = shutil.which(name)
    if path is not None:
        return path
    reason = (
        f"`{name}` not found: the metrics tests need a real Prometheus. Run scripts/setup.sh "
        "as root (it installs the Debian package `prometheus`) or `apt-get install prometheus`"
    )
    if os.environ.get("ARCHCRYPT_SKIP_PROMETHEUS") == "1":
        pytest.skip(reason)
    pytest.fail(reason + "; set ARCHCRYPT_SKIP_PROMETHEUS=1 to skip explicitly", pytrace=False)


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=DEPLOY_PROMETHEUS,
    )


def load_rules() -> dict[str, dict[str, Any]]:
    """Every rule of the rules file by alert or record name."""
    document = yaml.safe_load(RULES.read_text())
    return {
        rule.get("alert") or rule["record"]: rule
        for group in document["groups"]
        for rule in group["rules"]
    }


@dataclass
class Prometheus:
    url: str
    log: Path

    def query(self, expr: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        body = response.json()
        assert body["status"] == "success", f"{expr}: {body}"
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def wait_for(
        self,
        expr: str,
        accept: Callable[[list[dict[str, Any]]], bool] = bool,
        timeout: float = 30.0,
    ) -> list[dict[str, Any]]:
        """Poll `expr` until `accept(result)`; fail with the last result otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if accept(result) or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        assert accept(result), f"after {timeout} s, {expr!r} gives {result}"
        return result

    def alerts(self) -> list[dict[str, Any]]:
        body = httpx.get(f"{self.url}/api/v1/alerts", timeout=10).json()
        alerts: list[dict[str, Any]] = body["data"]["alerts"]
        return alerts


@contextmanager
def running_prometheus(workdir: Path, targets: Sequence[str]) -> Iterator[Prometheus]:
    """Prometheus scraping `targets` with the archcrypt job of deploy/prometheus/prometheus.yml
    (its targets and intervals replaced) and the deployed rules."""
    binary = tool("prometheus")
    deployed = yaml.safe_load((DEPLOY_PROMETHEUS / "prometheus.yml").read_text())
    (job,) = (j for j in deployed["scrape_configs"] if j["job_name"] == "archcrypt")
    job = {**job, "scrape_interval": SCRAPE_INTERVAL, "static_configs": [{"targets": targets}]}
    config = {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
        "rule_files": [str(DEPLOY_PROMETHEUS / name) for name in deployed["rule_files"]],
        "scrape_configs": [job],
    }
    config_file = workdir / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_file}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Prometheus(f"http://127.0.0.1:{port}", log)
    try:
        wait_until_ready(process, f"{server.url}/-/ready", log, 30, "prometheus")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
