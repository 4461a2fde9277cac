"""`archcrypt bench --plot`: throughput per implementation and message size, one panel per
algorithm, so that two hosts (or more) can be compared at a glance.

Colour follows the implementation, the same in every panel; line style follows the host.
The implementation each host chose is drawn thicker; the rate axis is logarithmic so that
the same ratio between two hosts looks the same at every size. matplotlib is an optional dependency
(`pip install 'archcrypt[plot]'`) and is imported only here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

COLUMNS: Final = 3
HOST_STYLES: Final = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))


def plot_throughput(hosts: Sequence[Sequence[Mapping[str, Any]]], path: Path) -> None:
    """Draw the cells of `archcrypt bench --json`, one list per host, into a PNG at `path`."""
    hosts = [cells for cells in hosts if cells]
    if not hosts:
        raise ValueError("nothing to plot: no benchmark cells")
    algorithms = _unique(c["algorithm"] for cells in hosts for c in cells)
    implementations = _unique(c["implementation"] for cells in hosts for c in cells)
    palette = [f"C{i}" for i in range(10)]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(implementations)}
    labels = [_host_label(cells, index) for index, cells in enumerate(hosts)]

    rows = math.ceil(len(algorithms) / COLUMNS)
    columns = min(COLUMNS, len(algorithms))
    height = 3.8 * rows + 1.6  # inches: the panels, the title and the host legend
    figure = Figure(figsize=(5.2 * columns, height))
    # Fixed margins rather than a layout engine, which draws everything twice.
    figure.subplots_adjust(
        left=0.07, right=0.98, top=1 - 0.8 / height, bottom=1.25 / height, hspace=0.45, wspace=0.22
    )
    axes = figure.subplots(rows, columns, squeeze=False)
    for index, algorithm in enumerate(algorithms):
        ax = axes[index // COLUMNS][index % COLUMNS]
        sizes: set[int] = set()
        for host_index, cells in enumerate(hosts):
            linestyle, marker = HOST_STYLES[host_index % len(HOST_STYLES)]
            mine = [c for c in cells if c["algorithm"] == algorithm]
            for impl in _unique(c["implementation"] for c in mine):
                points = sorted(
                    (int(c["size_bytes"]), float(c["bytes_per_second"]) / 1e9, bool(c["selected"]))
                    for c in mine
                    if c["implementation"] == impl
                )
                sizes.update(size for size, _, _ in points)
                selected = any(chosen for _, _, chosen in points)
                ax.plot(
                    [size for size, _, _ in points],
                    [rate for _, rate, _ in points],
                    color=colour[impl],
                    linestyle=linestyle,
                    marker=marker,
                    linewidth=2.8 if selected else 1.3,
                    markersize=5,
                    label=f"{impl} *" if selected and len(hosts) == 1 else impl,
                )
        ax.set_title(algorithm, fontweight="bold")
        ax.set_xscale("log", base=2)
        ordered = sorted(sizes)
        ax.xaxis.set_major_locator(FixedLocator(ordered))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([_size_label(size) for size in ordered])
        ax.set_xlabel("message size")
        # log: a 2x gap between two hosts looks the same at 64 B as at 64 KiB
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(_rate_label))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylabel("GB/s (log)")
        ax.grid(True, alpha=0.3)
        # one entry per implementation whatever the number of hosts, in dispatch order
        handles = [
            Line2D([], [], color=colour[impl], linewidth=2, label=impl)
            for impl in _unique(
                c["implementation"] for cells in hosts for c in cells if c["algorithm"] == algorithm
            )
        ]
        ax.legend(handles=handles, fontsize="small", loc="upper left")
    for index in range(len(algorithms), rows * columns):
        axes[index // COLUMNS][index % COLUMNS].set_visible(False)

    figure.legend(
        handles=[
            Line2D(
                [],
                [],
                color="black",
                linestyle=HOST_STYLES[i % len(HOST_STYLES)][0],
                marker=HOST_STYLES[i % len(HOST_STYLES)][1],
                label=label,
            )
            for i, label in enumerate(labels)
        ],
        loc="lower center",
        ncols=min(len(labels), 4),
        title="host (thick line: the implementation it chose)",
    )
    figure.suptitle(
        "archcrypt throughput per implementation and message size (through the Python facade)"
    )
    figure.savefig(path, dpi=110)


def _host_label(cells: Sequence[Mapping[str, Any]], index: int) -> str:
    first = cells[0]
    host = first.get("host") or f"host {index + 1}"
    details = [str(first["arch"])] if first.get("arch") else []
    if first.get("core_hz"):
        details.append(f"{float(first['core_hz']) / 1e9:.2f} GHz")
    return f"{host} ({', '.join(details)})" if details else str(host)


def _rate_label(value: float, _position: object) -> str:
    return f"{value:g}"


def _unique(values: Any) -> list[Any]:
    return list(dict.fromkeys(values))


def _size_label(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"
