"""The archcrypt command: serve the API, report the backends, benchmark every implementation."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from copy import deepcopy
from time import perf_counter
from typing import Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__, crypto

DEFAULT_SIZES = (64, 1024, 16384, 65536, 1048576)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="archcrypt")
def main() -> None:
    """archcrypt: symmetric crypto over HTTP on hand-tuned C kernels."""


# ---- serve ------------------------------------------------------------------------------


@main.command()
@click.option("--host", help="Interface to bind [env ARCHCRYPT_HOST, default 127.0.0.1].")
@click.option(
    "--port", type=click.IntRange(0, 65535), help="Port [env ARCHCRYPT_PORT, default 8000]."
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    help="[env ARCHCRYPT_LOG_LEVEL, default info]",
)
def serve(host: str | None, port: int | None, log_level: str | None) -> None:
    """Run the HTTP service (uvicorn, one process; scale with replicas)."""
    import uvicorn

    from .app import create_app
    from .config import Settings

    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level and log_level.lower(),
    }
    try:
        # only what was given, so the environment still supplies the rest
        settings = Settings(**{k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from None
    _init()  # before uvicorn, so a configuration error reads as one
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=_log_config(settings.log_level),
        access_log=settings.access_log,
        server_header=False,
    )


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging setup, plus the archcrypt logger on the same handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = deepcopy(LOGGING_CONFIG)
    config["loggers"]["archcrypt"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    return config


# ---- info -------------------------------------------------------------------------------


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(as_json: bool) -> None:
    """CPU features and, per algorithm, the chosen implementation and every other one."""
    report = _backends()
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(report), indent=2))
        return

    console = Console()
    console.print(
        f"[bold]archcrypt[/] {report.version} on [bold]{report.arch}[/], "
        f"built with {report.compiler}"
    )
    style = {"present": "green", "masked": "yellow", "absent": "dim"}
    features = " ".join(f"[{style[f.state]}]{f.name}[/]" for f in report.features)
    console.print(
        f"CPU features: {features or '(none known)'}  "
        "([green]present[/] [yellow]masked[/] [dim]absent[/])"
    )

    table = Table(title="Implementations (fastest first)")
    table.add_column("algorithm")
    table.add_column("implementation")
    table.add_column("requires")
    table.add_column("runnable")
    table.add_column("chosen")
    for algorithm in report.algorithms:
        for index, impl in enumerate(algorithm.implementations):
            chosen = impl.name == algorithm.selected
            table.add_row(
                algorithm.name if index == 0 else "",
                f"[bold]{impl.name}[/]" if chosen else impl.name,
                ", ".join(impl.requires) or "-",
                "[green]yes[/]" if impl.runnable else "[red]no[/]",
                ("forced" if algorithm.forced else "yes") if chosen else "",
            )
        table.add_section()
    console.print(table)


# ---- bench ------------------------------------------------------------------------------


def _parse_sizes(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(
            "a comma-separated list of byte counts, e.g. 64,1024,65536"
        ) from None
    if not sizes or any(size <= 0 for size in sizes):
        raise click.BadParameter("sizes must be positive")
    return sizes


@main.command()
@click.option(
    "--sizes",
    default=",".join(map(str, DEFAULT_SIZES)),
    show_default=True,
    callback=_parse_sizes,
    help="Message sizes in bytes, comma-separated.",
)
@click.option(
    "--min-time",
    type=click.FloatRange(min=0.0, min_open=True),
    default=0.2,
    show_default=True,
    help="Seconds of timed calls per cell.",
)
@click.option(
    "--algorithm",
    "algorithms",
    multiple=True,
    metavar="NAME",
    help="Only this algorithm (repeatable); default: all.",
)
@click.option("--json", "as_json", is_flag=True, help="Emit a JSON list of cells on stdout.")
def bench(
    sizes: tuple[int, ...], min_time: float, algorithms: tuple[str, ...], as_json: bool
) -> None:
    """Throughput of every runnable implementation, through the Python facade.

    Each cell forces one implementation on this thread (crypto.use_implementation) and calls
    the facade for at least --min-time seconds. Small sizes measure the Python call path as
    much as the kernel; native/bench is the kernel-only number.
    """
    report = _backends()
    known = [a.name for a in report.algorithms]
    unknown = sorted(set(algorithms) - set(known))
    if unknown:
        raise click.BadParameter(
            f"unknown {', '.join(unknown)}; known: {', '.join(known)}", param_hint="--algorithm"
        )

    plan: list[tuple[str, str, bool, int]] = []
    skipped: list[str] = []
    for algorithm in report.algorithms:
        if algorithms and algorithm.name not in algorithms:
            continue
        if algorithm.name not in _WORKLOADS:
            skipped.append(f"{algorithm.name}: no benchmark workload")
            continue
        for impl in algorithm.implementations:
            if not impl.runnable:
                skipped.append(f"{algorithm.name}/{impl.name}: not runnable on this CPU")
                continue
            for size in sizes:
                if algorithm.name == "camellia" and size % 16:
                    skipped.append(f"camellia/{impl.name} at {size} B: not whole 16-byte blocks")
                    continue
                plan.append((algorithm.name, impl.name, impl.name == algorithm.selected, size))

    err = Console(stderr=True)
    hz = crypto.core_hz()
    cells: list[dict[str, Any]] = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("benchmark", total=len(plan))
        for name, impl_name, selected, size in plan:
            progress.update(task, description=f"{name}/{impl_name} {size} B")
            call = _WORKLOADS[name](size)
            with crypto.use_implementation(name, impl_name):
                iterations, seconds = _time(call, min_time)
            rate = size * iterations / seconds
            cells.append(
                {
                    "algorithm": name,
                    "implementation": impl_name,
                    "selected": selected,
                    "size_bytes": size,
                    "bytes_per_second": rate,
                    "cycles_per_byte": hz / rate,
                    "iterations": iterations,
                    "seconds": seconds,
                    "core_hz": hz,
                }
            )
            progress.advance(task)

    if as_json:
        click.echo(json.dumps(cells, indent=2))
    else:
        _print_bench(Console(), cells, sizes, hz)
    for note in skipped:
        err.print(f"[dim]skipped {note}[/]")


def _time(call: Callable[[], object], min_time: float) -> tuple[int, float]:
    """(iterations, seconds) of the first batch that lasts at least min_time."""
    call()  # first-touch page faults and lazy init stay out of the timing
    iterations = 1
    while True:
        start = perf_counter()
        for _ in range(iterations):
            call()
        seconds = perf_counter() - start
        if seconds >= min_time:
            return iterations, seconds
        # Aim 20 % past min_time so the next batch usually suffices; at most 100x per step.
        scale = min_time * 1.2 / seconds if seconds > 0 else 100.0
        iterations = max(iterations + 1, int(iterations * min(scale, 100.0)))


def _aead(size: int) -> Callable[[], object]:
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(size)
    return lambda: crypto.aead_seal("chacha20-poly1305", key, nonce, data)


def _chacha20(size: int) -> Callable[[], object]:
    key, nonce, data = os.urandom(32), os.urandom(12), os.urandom(size)
    return lambda: crypto.chacha20_xor(key, nonce, data)


def _poly1305(size: int) -> Callable[[], object]:
    key, data = os.urandom(32), os.urandom(size)
    return lambda: crypto.mac("poly1305", key, data)


def _sha(algorithm: str) -> Callable[[int], Callable[[], object]]:
    def workload(size: int) -> Callable[[], object]:
        data = os.urandom(size)
        return lambda: crypto.digest(algorithm, data)

    return workload


def _camellia(size: int) -> Callable[[], object]:
    key, data = os.urandom(16), os.urandom(size)
    return lambda: crypto.camellia_ecb_encrypt(key, data)


# Keyed by the dispatch algorithm names of the C library (crypto.DISPATCH_ALGORITHMS).
_WORKLOADS: dict[str, Callable[[int], Callable[[], object]]] = {
    "chacha20": _chacha20,
    "poly1305": _poly1305,
    "chacha20-poly1305": _aead,
    "sha256": _sha("sha256"),
    "sha512": _sha("sha512"),
    "camellia": _camellia,
}


def _print_bench(
    console: Console, cells: Sequence[dict[str, Any]], sizes: Sequence[int], hz: float
) -> None:
    table = Table(title="Throughput through the Python facade: GB/s and cycles/byte")
    table.add_column("algorithm")
    table.add_column("implementation")
    for size in sizes:
        table.add_column(_size_label(size), justify="right")
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    selected: set[tuple[str, str]] = set()
    for cell in cells:
        key = (cell["algorithm"], cell["implementation"])
        rows.setdefault(key, {})[cell["size_bytes"]] = cell
        if cell["selected"]:
            selected.add(key)
    previous = None
    for (algorithm, impl), by_size in rows.items():
        if previous is not None and algorithm != previous:
            table.add_section()
        values = []
        for size in sizes:
            found = by_size.get(size)
            values.append(
                f"{found['bytes_per_second'] / 1e9:.3f} GB/s\n{found['cycles_per_byte']:.2f} c/B"
                if found
                else "-"
            )
        label = f"[bold]{impl}[/] *" if (algorithm, impl) in selected else impl
        table.add_row(algorithm if algorithm != previous else "", label, *values)
        previous = algorithm
    console.print(table)
    console.print(
        f"cycles/byte use the measured core clock, {hz / 1e9:.3f} GHz (crypto.core_hz(): a timed "
        "chain of dependent adds, not the TSC). * = the implementation chosen for this CPU."
    )


def _size_label(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _init() -> None:
    """Load the library; a bad ARCHCRYPT_FORCE/DISABLE_CPU_FEATURES is a usage error."""
    try:
        crypto.init()
    except crypto.ConfigurationError as exc:
        raise click.ClickException(str(exc)) from None


def _backends() -> crypto.BackendReport:
    _init()
    return crypto.backends()
