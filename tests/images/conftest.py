"""Print what the image tests measured (also in build/images/timings.json, sizes.json)."""

from __future__ import annotations

import pytest

from .harness import SIZES, TIMINGS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TIMINGS and not SIZES:
        return
    terminalreporter.section("container images")
    for step, seconds in TIMINGS.items():
        terminalreporter.write_line(f"{step:<40} {seconds:>7.1f} s")
    for arch, size in SIZES.items():
        terminalreporter.write_line(f"image size {arch:<29} {size / 1e6:>7.1f} MB (uncompressed)")
