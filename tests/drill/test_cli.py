"""`python -m tests.drill` (`make drill`): the exit status, the tables and RELIABILITY.md's
figures say which drill failed, and a real drill's failure reaches them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from . import __main__ as cli


def _passing(o: cli.Options) -> cli.Section:
    s = cli.Section("Passing drill", "python -m tests.drill fuzz", ["what", "result"])
    s.add("every row", "pass")
    return s


def _failing(o: cli.Options) -> cli.Section:
    s = cli.Section("Failing drill", "python -m tests.drill ct", ["what", "findings", "result"])
    s.add("chacha20/avx2", 3, "FAIL")
    s.ok = False
    return s


def _raising(o: cli.Options) -> cli.Section:
    raise RuntimeError("the harness did not build")


@pytest.fixture
def drills(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[cli.Options]]:
    calls: dict[str, list[cli.Options]] = {}

    def record(name: str, fn):  # type: ignore[no-untyped-def]
        def run(o: cli.Options) -> cli.Section:
            calls.setdefault(name, []).append(o)
            return fn(o)

        return run

    monkeypatch.setattr(
        cli,
        "DRILLS",
        {
            "fuzz": record("fuzz", _passing),
            "ct": record("ct", _failing),
            "schema": record("schema", _raising),
            "soak": record("soak", _passing),
        },
    )
    return calls


def test_a_failed_or_broken_drill_exits_1_and_is_named(
    drills: dict[str, list[cli.Options]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "RELIABILITY.md"
    # the prose names the markers; only the lines that are markers count
    doc.write_text(
        f"# Reliability\n\nprose before, between `{cli.BEGIN}` and `{cli.END}`\n\n"
        f"{cli.BEGIN}\nold figures\n{cli.END}\n\nprose after\n"
    )
    figures = tmp_path / "drill.json"
    status = cli.main(
        ["--quick", "--workdir", str(tmp_path), "--write", str(doc), "--json", str(figures)]
    )
    assert status == 1
    assert list(drills) == ["fuzz", "ct", "schema", "soak"]  # each ran once, in order
    assert drills["soak"][0].soak_seconds == 60 and drills["fuzz"][0].fuzz_seconds == 30
    out, err = capsys.readouterr()
    assert "Passing drill [pass" in out and "Failing drill [FAIL" in out
    assert "the harness did not build" in out  # the drill that raised: its table says why
    assert "FAILED: Failing drill; schema" in err
    written = doc.read_text()
    assert written.startswith(
        f"# Reliability\n\nprose before, between `{cli.BEGIN}` and `{cli.END}`\n\n{cli.BEGIN}\n"
    )
    assert written.endswith("prose after\n")
    assert "old figures" not in written
    assert "### Passing drill: pass" in written and "### Failing drill: FAIL" in written
    assert "| chacha20/avx2 | 3 | FAIL |" in written
    assert "### schema: FAIL" in written and "RuntimeError: the harness did not build" in written
    assert [s["ok"] for s in json.loads(figures.read_text())] == [True, False, False, True]


def test_all_passed_exits_0_and_only_the_named_drills_run(
    drills: dict[str, list[cli.Options]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "new.md"  # no markers yet: they are added
    assert (
        cli.main(
            ["soak", "fuzz", "--soak-seconds", "5", "--workdir", str(tmp_path), "--write", str(doc)]
        )
        == 0
    )
    assert list(drills) == ["fuzz", "soak"]
    assert drills["soak"][0].soak_seconds == 5 and drills["fuzz"][0].fuzz_seconds == 300
    assert "all passed" in capsys.readouterr().err
    text = doc.read_text()
    assert text.startswith(cli.BEGIN) and text.rstrip().endswith(cli.END)
    assert text.count("### Passing drill: pass") == 2


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (scripts/setup.sh)")
def test_a_wrong_answer_in_the_soak_fails_the_drill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real soak with one expected answer altered by a byte (--tamper): the soak counts
    the server's (right) answers to it as wrong, so a wrong answer from the server would be
    counted too, and the drill exits 1 with it in its table (main(), as `python -m
    tests.drill soak --tamper` calls it)."""
    figures = tmp_path / "drill.json"
    status = cli.main(
        [
            "soak",
            "--soak-seconds",
            "2",
            "--tamper",
            "--workdir",
            str(tmp_path),
            "--json",
            str(figures),
        ]
    )
    out, err = capsys.readouterr()
    assert status == 1, out[-3000:] + err[-3000:]
    (section,) = json.loads(figures.read_text())
    assert not section["ok"]
    row = dict(zip(section["columns"], section["rows"][0], strict=True))
    assert int(row["requests"]) > 0 and int(row["errors"]) > 0, row
    assert row["result"].startswith("FAIL"), row
    assert "FAILED: Soak" in err, err[-2000:]
