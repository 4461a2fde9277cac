"""`archcrypt bench --plot`: a PNG of throughput per implementation and size, this host and
others saved with `bench --json`. Run in-process (click's runner): the drawing is what is
under test, not the interpreter start-up."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from archcrypt.cli import main

QUICK = ("--sizes", "64,1024,4096", "--min-time", "0.002", "--algorithm", "chacha20")
QUICK += ("--algorithm", "sha256", "--algorithm", "camellia")


def test_plot_compares_two_hosts(tmp_path: Path) -> None:
    runner = CliRunner()
    saved = runner.invoke(main, ["bench", "--json", *QUICK])
    assert saved.exit_code == 0, saved.output
    cells = json.loads(saved.stdout)
    assert {c["host"] for c in cells} and {c["arch"] for c in cells}
    # another host: the same table, half as fast
    other = [
        {**c, "host": "other-host", "bytes_per_second": c["bytes_per_second"] / 2} for c in cells
    ]
    (tmp_path / "other.json").write_text(json.dumps(other))

    png = tmp_path / "throughput.png"
    plotted = runner.invoke(
        main, ["bench", *QUICK, "--plot", str(png), "--compare", str(tmp_path / "other.json")]
    )
    assert plotted.exit_code == 0, plotted.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000
    with Image.open(png) as image:
        width, height = image.size
        assert width >= 1000 and height >= 400
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 100  # lines, text, antialiasing
        white = max(count for count, colour in colours if colour == (255, 255, 255))
        assert white < 0.97 * width * height  # something was drawn


def test_plot_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    (tmp_path / "bad.json").write_text('{"not": "cells"}')
    png = str(tmp_path / "x.png")
    assert runner.invoke(main, ["bench", "--compare", str(tmp_path / "bad.json")]).exit_code == 2
    bad = runner.invoke(main, ["bench", "--plot", png, "--compare", str(tmp_path / "bad.json")])
    assert bad.exit_code == 2
    assert "archcrypt bench --json" in bad.output

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    missing = runner.invoke(main, ["bench", *QUICK, "--plot", png])
    assert missing.exit_code == 1
    assert "archcrypt[plot]" in missing.output
    assert not Path(png).exists()
