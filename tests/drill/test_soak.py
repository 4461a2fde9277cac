"""Short form of the soak (the long one: `make soak`, 10 minutes; RELIABILITY.md): one
server, wrk over every route for 60 s (issue 17's CI form), every answer checked against
pyca/cryptography, hmac or hashlib, RSS and descriptors sampled each second
(tests/drill/soak.py). That a wrong answer is counted: tests/drill/test_cli.py, the soak
with --tamper."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from . import soak

# 60 s: past the warm-up (15 s) some 45 one-second samples, the first and last ten of
# which the RSS growth compares by their medians, some 25 s apart (`make soak`: 10
# minutes, the same ten at each end). ARCHCRYPT_SOAK_SECONDS shortens it for a local run.
SECONDS = float(os.environ.get("ARCHCRYPT_SOAK_SECONDS", "60"))


@pytest.fixture(scope="module")
def wrk() -> str:
    path = shutil.which("wrk")
    if path is None:
        pytest.fail("wrk is not installed (scripts/setup.sh installs it when run as root)")
    return path


def test_soak(wrk: str, tmp_path: Path) -> None:
    result = soak.run(SECONDS, tmp_path, warmup=min(15.0, SECONDS / 4))
    figures = result.summary()
    assert result.rss_start_mib > 0, figures  # enough samples after the warm-up to compare
    assert result.requests > 1000, figures
    assert result.errors == 0, figures
    assert result.checked_answers > result.requests / 2, figures  # most answers compared
    assert result.sampler_checked > 0, figures
    assert result.rss_growth < 0.10, figures
    assert result.fds_max - result.fds_min <= 4, figures
    assert result.routes >= 20, figures
