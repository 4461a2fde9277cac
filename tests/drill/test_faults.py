"""Short form of the fault drill (tests/drill/faults.py; `make drill` runs every scenario,
RELIABILITY.md has the figures). PostgreSQL stopped is left to the drill here: the suite
has it without load already (tests/service/test_keys.py::test_a_store_outage_keeps_cached_
keys_working), and its under-load form costs a cluster of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import faults


def _check(outcome: faults.Outcome) -> None:
    if outcome.skipped:
        pytest.skip(outcome.skipped)
    assert outcome.ok, (outcome.name, outcome.figures, outcome.notes)


def test_a_killed_worker_loses_no_answer(tmp_path: Path) -> None:
    _check(faults.worker_killed(tmp_path, seconds=6))  # 2 s of load before the kill, 4 after


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting the small tmpfs needs root")
def test_a_full_disk_under_sqlite_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    _check(faults.disk_full(tmp_path))


def test_a_corrupted_key_row_harms_only_its_key(tmp_path: Path) -> None:
    outcome = faults.corrupted_row(tmp_path)
    _check(outcome)
    assert "'bad'" in outcome.figures["detail"], outcome.figures


def test_sigterm_drains_uploads_in_flight(tmp_path: Path) -> None:
    _check(faults.sigterm_drains(tmp_path))
