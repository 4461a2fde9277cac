"""`archcrypt info` and `archcrypt bench`, run as a user would: in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest


def archcrypt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "archcrypt", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        # `info` runs the startup benchmark: keep it short
        env={**os.environ, "ARCHCRYPT_BENCHMARK_BUDGET_SECONDS": "0.2"},
    )


def test_info_json() -> None:
    result = archcrypt("info", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"arch", "version", "compiler", "features", "algorithms", "benchmark"}
    assert report["algorithms"]
    for algorithm in report["algorithms"]:
        assert set(algorithm) == {"name", "selected", "forced", "implementations"}
        assert algorithm["selected"] in {impl["name"] for impl in algorithm["implementations"]}
        for impl in algorithm["implementations"]:
            assert set(impl) == {"name", "requires", "runnable", "min_len", "below_min_len"}
            assert isinstance(impl["requires"], list)
            assert isinstance(impl["runnable"], bool)
    for feature in report["features"]:
        assert feature["state"] in {"present", "absent", "masked"}


def test_info_table() -> None:
    result = archcrypt("info")
    assert result.returncode == 0, result.stderr
    assert "chacha20-poly1305" in result.stdout
    assert "portable" in result.stdout


def test_bench_json() -> None:
    result = archcrypt("bench", "--json", "--sizes", "64", "--min-time", "0.001")
    assert result.returncode == 0, result.stderr
    cells: list[dict[str, Any]] = json.loads(result.stdout)
    info = json.loads(archcrypt("info", "--json", "--no-benchmark").stdout)
    runnable = {
        (a["name"], i["name"])
        for a in info["algorithms"]
        for i in a["implementations"]
        if i["runnable"]
    }
    assert {(c["algorithm"], c["implementation"]) for c in cells} == runnable
    for cell in cells:
        assert cell["size_bytes"] == 64
        assert cell["bytes_per_second"] > 0
        assert cell["cycles_per_byte"] > 0
        assert cell["cycles_per_byte"] * cell["bytes_per_second"] == pytest.approx(cell["core_hz"])


def test_bench_filter_and_bad_arguments() -> None:
    result = archcrypt(
        "bench", "--json", "--sizes", "16,32", "--min-time", "0.001", "--algorithm", "camellia"
    )
    assert result.returncode == 0, result.stderr
    cells = json.loads(result.stdout)
    assert {c["algorithm"] for c in cells} == {"camellia"}
    assert {c["size_bytes"] for c in cells} == {16, 32}

    assert archcrypt("bench", "--algorithm", "rot13").returncode == 2
    assert archcrypt("bench", "--sizes", "0").returncode == 2
    assert archcrypt("bench", "--sizes", "abc").returncode == 2
