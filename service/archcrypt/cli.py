"""The archcrypt command: serve the API, report the backends, benchmark every implementation."""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Sequence
from copy import deepcopy
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__, benchmark, crypto

if TYPE_CHECKING:
    from .config import Settings

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
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="uvicorn worker processes [env ARCHCRYPT_WORKERS, default 1; scale with replicas].",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False),
    help="PEM certificate (chain): serve HTTPS [env ARCHCRYPT_TLS_CERT].",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False),
    help="PEM private key of --tls-cert [env ARCHCRYPT_TLS_KEY].",
)
@click.option(
    "--tls-client-ca",
    type=click.Path(exists=True, dir_okay=False),
    help="Require client certificates signed by this CA bundle (mTLS) "
    "[env ARCHCRYPT_TLS_CLIENT_CA].",
)
@click.option(
    "--tokens-file",
    type=click.Path(dir_okay=False),
    help="Bearer tokens from `archcrypt tokens create` [env ARCHCRYPT_TOKENS_FILE].",
)
@click.option(
    "--http",
    type=click.Choice(["auto", "h11", "httptools"]),
    help="HTTP parser [env ARCHCRYPT_HTTP, default auto: httptools when installed].",
)
def serve(
    host: str | None,
    port: int | None,
    log_level: str | None,
    workers: int | None,
    tls_cert: str | None,
    tls_key: str | None,
    tls_client_ca: str | None,
    tokens_file: str | None,
    http: str | None,
) -> None:
    """Run the HTTP service (uvicorn; one process unless --workers says otherwise)."""
    from . import server
    from .config import Settings
    from .guard import SecurityConfigError, auth_policy

    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level and log_level.lower(),
        "workers": workers,
        "tls_cert": tls_cert,
        "tls_key": tls_key,
        "tls_client_ca": tls_client_ca,
        "tokens_file": tokens_file,
        "http": http,
    }
    try:
        # only what was given, so the environment still supplies the rest
        settings = Settings(**{k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from None
    try:
        auth_policy(settings)  # the refusal to serve beyond loopback unauthenticated, early
    except SecurityConfigError as exc:
        raise click.ClickException(str(exc)) from None
    server.disable_core_dumps()
    _init()  # before uvicorn, so a configuration error reads as one
    _check_key_store(settings)  # likewise: a store or KEK that cannot work stops here
    # Before anything imports prometheus_client: it picks its mode once, at import.
    _prepare_multiprocess_metrics(settings.workers)
    limits = server.ConnectionLimits(
        header_timeout=settings.header_timeout_seconds,
        body_timeout=settings.body_timeout_seconds,
        request_timeout=settings.request_timeout_seconds,
        max_header_count=settings.max_header_count,
        max_header_bytes=settings.max_header_bytes,
        max_connections=settings.max_connections,
    )
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "log_config": _log_config(settings.log_level),
        "access_log": settings.access_log,
        "server_header": False,
        "http": server.protocol_class(settings.http),
        "timeout_keep_alive": settings.keep_alive_timeout_seconds,
        **server.tls_options(settings.tls_cert, settings.tls_key, settings.tls_client_ca),
    }
    if settings.workers == 1:
        from .app import create_app

        server.run(create_app(settings), limits, 1, **common)
    else:
        # Each worker builds its app from the environment; pass on what came as options.
        for name, value in options.items():
            if value is not None:
                os.environ[f"ARCHCRYPT_{name.upper()}"] = str(value)
        server.run("archcrypt.app:create_app", limits, settings.workers, factory=True, **common)


def _check_key_store(settings: Settings) -> None:
    from .keys.cli import open_checked

    open_checked(settings).close()


def _prepare_multiprocess_metrics(workers: int) -> None:
    """Several workers share their metrics through prometheus-client's multiprocess mode:
    a directory of value files, PROMETHEUS_MULTIPROC_DIR (a fresh temporary one unless
    set). Whatever an earlier generation left there is removed before the workers start;
    counters would otherwise carry on from a previous run."""
    from .scheduler import clean_multiprocess_dir

    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
    elif workers > 1:
        directory = tempfile.mkdtemp(prefix="archcrypt-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    else:
        return
    clean_multiprocess_dir(directory)


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


# ---- tokens -----------------------------------------------------------------------------


def _tokens_path(path: str | None) -> Path:
    value = path or os.environ.get("ARCHCRYPT_TOKENS_FILE")
    if not value:
        raise click.UsageError("give --file or set ARCHCRYPT_TOKENS_FILE")
    return Path(value)


_FILE_OPTION = click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False),
    help="The token store [env ARCHCRYPT_TOKENS_FILE]; created if missing.",
)


@main.group()
def tokens() -> None:
    """Bearer tokens: a token is printed once and stored only as its SHA-256."""


@tokens.command("create")
@_FILE_OPTION
@click.option("--name", required=True, help="Shown in the audit log; unique in the store.")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    required=True,
    metavar="SCOPE",
    help="Repeatable: aead:seal aead:open mac mac:verify hash ecb poly1305 keys:admin "
    "keys:read key:<name>:<op> key:<name>:* key:*:<op>.",
)
@click.option("--expires-in", help="Lifetime, e.g. 90d, 12h (default: no expiry).")
def tokens_create(
    path: str | None, name: str, scopes: tuple[str, ...], expires_in: str | None
) -> None:
    """Create a token and print it (to stdout, once; the store keeps only its hash)."""
    from .auth import TokenStoreError, create_token, parse_duration

    target = _tokens_path(path)
    try:
        lifetime = parse_duration(expires_in) if expires_in else None
        token, record = create_token(target, name, scopes, lifetime)
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    expiry = record.expires.isoformat() if record.expires else "never"
    click.echo(
        f"created token {record.name!r} ({', '.join(record.scopes)}; expires {expiry}) in "
        f"{target}; it is shown once:",
        err=True,
    )
    click.echo(token)


@tokens.command("list")
@_FILE_OPTION
@click.option("--json", "as_json", is_flag=True)
def tokens_list(path: str | None, as_json: bool) -> None:
    """Names, scopes and expiry of every token (never a token)."""
    from .auth import TokenStoreError, load_records

    try:
        records = load_records(_tokens_path(path))
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        listed = [{k: v for k, v in r.to_json().items() if k != "sha256"} for r in records]
        click.echo(json.dumps(listed, indent=2))
        return
    table = Table(title="Tokens")
    for column in ("name", "scopes", "created", "expires", "state"):
        table.add_column(column)
    for r in records:
        table.add_row(
            r.name,
            " ".join(r.scopes),
            r.created.isoformat(),
            r.expires.isoformat() if r.expires else "never",
            "[red]expired[/]" if r.expired() else "active",
        )
    Console().print(table)


@tokens.command("revoke")
@_FILE_OPTION
@click.argument("name")
def tokens_revoke(path: str | None, name: str) -> None:
    """Remove a token; a running server stops accepting it within a second."""
    from .auth import TokenStoreError, revoke_token

    try:
        revoke_token(_tokens_path(path), name)
    except TokenStoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"revoked {name!r}", err=True)


# ---- info -------------------------------------------------------------------------------


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--benchmark/--no-benchmark",
    "run_benchmark",
    default=None,
    help="Run the service's startup benchmark and print its figures "
    "[env ARCHCRYPT_BENCHMARK_ENABLED, default on].",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds for the whole benchmark [env ARCHCRYPT_BENCHMARK_BUDGET_SECONDS, default 2].",
)
def info(as_json: bool, run_benchmark: bool | None, budget: float | None) -> None:
    """CPU features, per algorithm the chosen implementation and every other one, and the
    throughput figures a server on this host publishes on /metrics."""
    from .config import Settings

    report = _backends()
    try:
        settings = Settings()
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from None
    run: benchmark.BenchmarkRun | None = None
    if run_benchmark if run_benchmark is not None else settings.benchmark_enabled:
        # What the service does at startup: the same cells, sizes and budget.
        cells, _ = benchmark.plan(report)
        run = _run_with_progress(cells, budget or settings.benchmark_budget_seconds)

    if as_json:
        document: dict[str, Any] = dataclasses.asdict(report)
        if run is not None:
            document["benchmark"] = dataclasses.asdict(run)
        click.echo(json.dumps(document, indent=2))
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
    if run is not None:
        figures = [_cell(result, run.core_hz) for result in run.results]
        _print_bench(console, figures, benchmark.SIZES, run.core_hz)
        console.print(
            f"Benchmark: {len(run.results)} cells in {run.duration_seconds:.2f} s "
            f"(budget {run.budget_seconds:g} s), as a server publishes them in "
            "archcrypt_benchmark_throughput_bytes_per_second."
        )


def _run_with_progress(cells: Sequence[benchmark.Cell], budget: float) -> benchmark.BenchmarkRun:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task("benchmark", total=len(cells))
        done = 0

        def advance(cell: benchmark.Cell) -> None:  # called as each cell starts
            nonlocal done
            description = f"{cell.algorithm}/{cell.implementation} {cell.size_bytes} B"
            progress.update(task, description=description, completed=done)
            done += 1

        run = benchmark.run(cells, budget, progress=advance)
    assert run is not None  # only a stop event ends a run early
    return run


def _cell(result: benchmark.Result, hz: float) -> dict[str, Any]:
    return {
        "algorithm": result.algorithm,
        "implementation": result.implementation,
        "selected": result.selected,
        "size_bytes": result.size_bytes,
        "bytes_per_second": result.bytes_per_second,
        "cycles_per_byte": hz / result.bytes_per_second if result.bytes_per_second else 0.0,
        "iterations": result.iterations,
        "seconds": result.seconds,
        "core_hz": hz,
    }


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
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also draw throughput per implementation and size into this PNG (needs matplotlib: "
    "pip install 'archcrypt[plot]').",
)
@click.option(
    "--compare",
    "compare_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE.json",
    help="With --plot: also draw the cells of another host, saved by `archcrypt bench --json` "
    "(repeatable).",
)
def bench(
    sizes: tuple[int, ...],
    min_time: float,
    algorithms: tuple[str, ...],
    as_json: bool,
    plot_file: Path | None,
    compare_files: tuple[Path, ...],
) -> None:
    """Throughput of every runnable implementation, through the Python facade.

    Each cell forces one implementation on this thread (crypto.use_implementation) and calls
    the facade for at least --min-time seconds. Small sizes measure the Python call path as
    much as the kernel; bench/c/bench.c (`make -C native bench-run`) is the kernel-only number.
    """
    if compare_files and plot_file is None:
        raise click.BadParameter("needs --plot", param_hint="--compare")
    others = [_load_cells(path) for path in compare_files]
    if plot_file is not None:
        _check_plot_support()
    report = _backends()
    known = [a.name for a in report.algorithms]
    unknown = sorted(set(algorithms) - set(known))
    if unknown:
        raise click.BadParameter(
            f"unknown {', '.join(unknown)}; known: {', '.join(known)}", param_hint="--algorithm"
        )
    plan, skipped = benchmark.plan(report, sizes, algorithms=algorithms)

    err = Console(stderr=True)
    hz = crypto.core_hz()
    host = socket.gethostname()
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
        for cell in plan:
            progress.update(
                task, description=f"{cell.algorithm}/{cell.implementation} {cell.size_bytes} B"
            )
            call = benchmark.WORKLOADS[cell.algorithm](cell.size_bytes)
            with crypto.use_implementation(cell.algorithm, cell.implementation):
                iterations, seconds = _time(call, min_time)
            rate = cell.size_bytes * iterations / seconds
            cells.append(
                {
                    "algorithm": cell.algorithm,
                    "implementation": cell.implementation,
                    "selected": cell.selected,
                    "size_bytes": cell.size_bytes,
                    "bytes_per_second": rate,
                    "cycles_per_byte": hz / rate,
                    "iterations": iterations,
                    "seconds": seconds,
                    "core_hz": hz,
                    "host": host,
                    "arch": report.arch,
                }
            )
            progress.advance(task)

    if as_json:
        click.echo(json.dumps(cells, indent=2))
    else:
        _print_bench(Console(), cells, sizes, hz)
    for note in skipped:
        err.print(f"[dim]skipped {note}[/]")
    if plot_file is not None:
        from .plot import plot_throughput

        plot_throughput([cells, *others], plot_file)
        err.print(f"plot written to {plot_file}")


def _check_plot_support() -> None:
    """Fail before benchmarking, not after, when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise click.ClickException(
            "--plot needs matplotlib: pip install 'archcrypt[plot]'"
        ) from None


def _load_cells(path: Path) -> list[dict[str, Any]]:
    try:
        cells = json.loads(path.read_text())
        valid = isinstance(cells, list) and all(
            isinstance(c, dict)
            and {"algorithm", "implementation", "size_bytes", "bytes_per_second"} <= set(c)
            for c in cells
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        valid = False
    if not valid:
        raise click.BadParameter(
            f"{path} is not the output of `archcrypt bench --json`", param_hint="--compare"
        )
    for cell in cells:
        cell.setdefault("host", path.stem)
    return list(cells)


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


# ---- named keys -------------------------------------------------------------------------

from .keys.cli import kek_group, keys_group  # noqa: E402  (after main: they attach to it)

main.add_command(keys_group)
main.add_command(kek_group)
