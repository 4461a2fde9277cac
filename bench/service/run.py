"""archcrypt's HTTP service side by side with a plain FastAPI + pyca/cryptography app.

Starts both servers on loopback (uvicorn, one worker, later two), checks that they give
the same answers to every body first, then drives each route with wrk and the same body
(64 B .. 1 MiB; JSON, octet-stream and batches), the two servers taking turns cell by
cell, and prints (or writes into BENCHMARKS.md) req/s, payload MB/s, p50/p99 and the
ratios. Also archcrypt's null route (reads the body, sends it back) as the ceiling of a
binary route. Bounded: every wrk run lasts --duration seconds; the plan is printed first.

    python bench/service/run.py [--duration 2] [--connections 32] [--threads 2]
                                [--quick] [--write BENCHMARKS.md] [--json FILE]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LUA = HERE / "post.lua"
SIZES = (64, 1024, 16384, 262144, 1048576)
KEY = bytes(range(32))
NONCE = bytes(range(100, 112))
CAMELLIA_KEY = bytes(range(16))
BATCH_ITEMS = 100
BEGIN, END = "<!-- service:begin -->", "<!-- service:end -->"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def payload(size: int) -> bytes:
    return bytes((i * 131 + 7) & 0xFF for i in range(size))


def label(size: int) -> str:
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    if size >= 1 << 10:
        return f"{size >> 10} KiB"
    return f"{size} B"


# ---- what is measured ----------------------------------------------------------------------


@dataclass
class Case:
    """One request: a route on each server, the body and headers both get, and how many
    payload bytes (and items) one request carries."""

    group: str  # json | binary | batch
    route: str  # short name in the tables
    size: int
    path: str  # archcrypt's path
    plain_path: str | None  # the plain app's (None: archcrypt only)
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)
    items: int = 1

    @property
    def name(self) -> str:
        return f"{self.group} {self.route} {label(self.size)}"


def cases(sizes: tuple[int, ...]) -> list[Case]:
    out: list[Case] = []
    seal_path = "/v1/aead/chacha20-poly1305/seal"
    open_path = "/v1/aead/chacha20-poly1305/open"
    for size in sizes:
        data = payload(size)
        sealed = _reference_seal(data)
        j = "application/json"
        out += [
            Case(
                "json",
                "seal chacha20-poly1305",
                size,
                seal_path,
                seal_path,
                _json(key=b64(KEY), nonce=b64(NONCE), plaintext=b64(data)),
                j,
            ),
            Case(
                "json",
                "open chacha20-poly1305",
                size,
                open_path,
                open_path,
                _json(key=b64(KEY), nonce=b64(NONCE), ciphertext=b64(sealed)),
                j,
            ),
            Case(
                "json",
                "mac poly1305",
                size,
                "/v1/mac/poly1305",
                "/v1/mac/poly1305",
                _json(key=b64(KEY), data=b64(data)),
                j,
            ),
            Case(
                "json",
                "mac hmac-sha256",
                size,
                "/v1/mac/hmac-sha256",
                "/v1/mac/hmac-sha256",
                _json(key=b64(KEY), data=b64(data)),
                j,
            ),
            Case(
                "json",
                "hash sha256",
                size,
                "/v1/hash/sha256",
                "/v1/hash/sha256",
                _json(data=b64(data)),
                j,
            ),
            Case(
                "json",
                "ecb camellia encrypt",
                size,
                "/v1/ecb/camellia/encrypt",
                "/v1/ecb/camellia/encrypt",
                _json(key=b64(CAMELLIA_KEY), data=b64(data)),
                j,
            ),
        ]
    for size in sizes:
        data = payload(size)
        sealed = _reference_seal(data)
        o = "application/octet-stream"
        aead = {"Archcrypt-Key": b64(KEY), "Archcrypt-Nonce": b64(NONCE)}
        out += [
            Case(
                "binary",
                "seal chacha20-poly1305",
                size,
                seal_path,
                "/raw" + seal_path,
                data,
                o,
                aead,
            ),
            Case(
                "binary",
                "open chacha20-poly1305",
                size,
                open_path,
                "/raw" + open_path,
                sealed,
                o,
                aead,
            ),
            Case(
                "binary",
                "mac poly1305",
                size,
                "/v1/mac/poly1305",
                "/raw/v1/mac/poly1305",
                data,
                o,
                {"Archcrypt-Key": b64(KEY)},
            ),
            Case("binary", "hash sha256", size, "/v1/hash/sha256", "/raw/v1/hash/sha256", data, o),
            Case(
                "binary",
                "ecb camellia encrypt",
                size,
                "/v1/ecb/camellia/encrypt",
                "/raw/v1/ecb/camellia/encrypt",
                data,
                o,
                {"Archcrypt-Key": b64(CAMELLIA_KEY)},
            ),
            Case("binary", "null route (body back)", size, "/v1/bench/null", None, data, o),
        ]
    item = {"key": b64(KEY), "nonce": b64(NONCE), "plaintext": b64(payload(64))}
    out.append(
        Case(
            "batch",
            f"seal {BATCH_ITEMS} x 64 B",
            64 * BATCH_ITEMS,
            seal_path + "/batch",
            seal_path + "/batch",
            _json(items=[item] * BATCH_ITEMS),
            "application/json",
            items=BATCH_ITEMS,
        )
    )
    mac_item = {"key": b64(KEY), "data": b64(payload(64))}
    out.append(
        Case(
            "batch",
            f"mac poly1305 {BATCH_ITEMS} x 64 B",
            64 * BATCH_ITEMS,
            "/v1/mac/poly1305/batch",
            None,
            _json(items=[mac_item] * BATCH_ITEMS),
            "application/json",
            items=BATCH_ITEMS,
        )
    )
    return out


def _json(**fields: object) -> bytes:
    return json.dumps(fields).encode()


def _reference_seal(data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    return ChaCha20Poly1305(KEY).encrypt(NONCE, data, None)


# ---- servers -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def cpu_seconds(self) -> float:
        """utime + stime of the server and its worker processes so far."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
        return total


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


@contextmanager
def serve(name: str, workers: int, log_dir: Path) -> Iterator[Server]:
    port = free_port()
    python = sys.executable
    env = {**os.environ}
    if name == "archcrypt":
        command = [
            python,
            "-m",
            "archcrypt",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ]
        # the null route exists only here; the startup benchmark is not what is measured
        env |= {"ARCHCRYPT_BENCHMARK_NULL_ROUTE": "true", "ARCHCRYPT_BENCHMARK_ENABLED": "false"}
        ready = "/readyz"
    else:
        # as its author would run it, minus the access log (archcrypt's is off by default)
        command = [
            python,
            "-m",
            "uvicorn",
            "--app-dir",
            str(HERE),
            "plain_app:app",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        ready = "/healthz"
    log = (log_dir / f"{name}-{workers}.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    server = Server(name, port, process)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"{name} exited; see {log.name}")
            try:
                with urllib.request.urlopen(server.url(ready), timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"{name} not ready after 60 s; see {log.name}")
            time.sleep(0.1)
        if workers > 1:
            time.sleep(1.0)  # let every worker come up, not only the first to answer
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def post(server: Server, path: str, case: Case) -> tuple[int, bytes]:
    request = urllib.request.Request(
        server.url(path),
        data=case.body,
        method="POST",
        headers={"Content-Type": case.content_type, **case.headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def same_answers(ours: Server, plain: Server, plan: list[Case]) -> None:
    """Both servers must answer every body alike (and 200) before anything is timed."""
    for case in plan:
        status, body = post(ours, case.path, case)
        if status != 200:
            raise SystemExit(f"archcrypt answered {status} to {case.name}: {body[:200]!r}")
        if case.plain_path is None:
            if case.route.startswith("null") and body != case.body:
                raise SystemExit("the null route did not send the body back")
            continue
        plain_status, plain_body = post(plain, case.plain_path, case)
        if plain_status != 200:
            raise SystemExit(f"plain app answered {plain_status} to {case.name}")
        if case.content_type == "application/json" or case.group == "batch" or body[:1] == b"{":
            equal = json.loads(body) == json.loads(plain_body)
        else:
            equal = body == plain_body
        if not equal:
            raise SystemExit(f"archcrypt and the plain app disagree on {case.name}")


# ---- wrk ---------------------------------------------------------------------------------------


@dataclass
class Run:
    server: str
    workers: int
    case: str
    group: str
    route: str
    size: int
    items: int
    requests_per_second: float
    payload_mb_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cores: float
    wrk_cores: float


def wrk(
    server: Server, path: str, case: Case, body_file: Path, args: argparse.Namespace, workers: int
) -> Run:
    headers = [f"{k}:{v}" for k, v in case.headers.items()]
    command = [
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{args.duration}s",
        "--latency",
        # a 1 MiB request on a loaded machine can take seconds: slow is measured, not an error
        "--timeout",
        "10s",
        "-s",
        str(LUA),
        server.url(path),
        "--",
        str(body_file),
        case.content_type,
        *headers,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = server.cpu_seconds()
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=args.duration + 30)
    elapsed = time.monotonic() - started
    cpu = server.cpu_seconds() - cpu_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    match = re.search(r"^WRK (\{.*\})$", result.stdout, re.M)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"wrk failed on {case.name}:\n{result.stdout}\n{result.stderr}")
    figures = json.loads(match.group(1))
    seconds = figures["duration_us"] / 1e6
    rps = figures["requests"] / seconds
    wrk_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(
        server=server.name,
        workers=workers,
        case=case.name,
        group=case.group,
        route=case.route,
        size=case.size,
        items=case.items,
        requests_per_second=rps,
        payload_mb_per_second=rps * case.size / 1e6,
        p50_ms=figures["p50_us"] / 1e3,
        p99_ms=figures["p99_us"] / 1e3,
        errors=figures["status_errors"] + figures["socket_errors"],
        server_cores=cpu / elapsed,
        wrk_cores=wrk_cpu / elapsed,
    )


# ---- the run -------------------------------------------------------------------------------------


def measure(
    plan: list[Case], workers: int, args: argparse.Namespace, tmp: Path, progress: Progress
) -> list[Run]:
    runs: list[Run] = []
    with serve("archcrypt", workers, tmp) as ours, serve("plain", workers, tmp) as plain:
        progress.note(
            f"{workers} worker(s): archcrypt on :{ours.port}, plain app on "
            f":{plain.port}; checking that they agree"
        )
        same_answers(ours, plain, plan)
        for index, case in enumerate(plan):
            body_file = tmp / f"body-{index}"
            body_file.write_bytes(case.body)
            pairs = [(ours, case.path)]
            if case.plain_path is not None:
                pairs.append((plain, case.plain_path))
            if index % 2:
                pairs.reverse()  # neither server always goes first
            for server, path in pairs:
                progress.start(f"{workers}w {server.name:9s} {case.name}")
                run = wrk(server, path, case, body_file, args, workers)
                progress.done(
                    f"{run.requests_per_second:10,.0f} req/s  p99 {run.p99_ms:7.2f} ms"
                    + (f"  {run.errors} errors" if run.errors else "")
                )
                runs.append(run)
            body_file.unlink()
    return runs


class Progress:
    def __init__(self, total: int, duration: float) -> None:
        self.total, self.duration, self.count = total, duration, 0
        self.started = time.monotonic()

    def note(self, text: str) -> None:
        print(f"==> {text}", file=sys.stderr, flush=True)

    def start(self, text: str) -> None:
        self.count += 1
        elapsed = time.monotonic() - self.started
        left = (self.total - self.count + 1) * (self.duration + 0.3)
        print(
            f"[{self.count:3d}/{self.total} {elapsed:4.0f}s, ~{left:3.0f}s left] {text:52s}",
            end="",
            file=sys.stderr,
            flush=True,
        )

    def done(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=2, help="seconds per wrk run (whole)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="64 B and 16 KiB only, 1 s runs")
    parser.add_argument("--write", type=Path, help="rewrite this file's service section")
    parser.add_argument("--json", type=Path, help="also write every run here")
    parser.add_argument("--command", default="make bench-service", help="for the report")
    parser.add_argument("--from-json", type=Path, help="only render the report of a --json file")
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        text = report([Run(**r) for r in saved["runs"]], saved["meta"])
        print(text)
        if args.write:
            write_section(args.write, text)
        return 0
    if shutil.which("wrk") is None:
        raise SystemExit(
            "bench-service: wrk not found (Debian package wrk; scripts/setup.sh "
            "installs it when run as root)"
        )
    sizes = (64, 16384) if args.quick else SIZES
    if args.quick:
        args.duration = 1
    plan = cases(sizes)
    two = [
        c
        for c in plan
        if c.group == "json" and c.route.startswith("seal") and c.size in (64, 16384)
    ]
    total = sum(2 if c.plain_path else 1 for c in plan) + 2 * len(two)
    progress = Progress(total, args.duration)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    progress.note(
        f"{total} wrk runs of {args.duration:g} s (-t{args.threads} "
        f"-c{args.connections}), about {total * (args.duration + 0.3) / 60:.0f} min"
    )
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        runs = measure(plan, 1, args, Path(tmp), progress)
        runs += measure(two, 2, args, Path(tmp), progress)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    meta = {
        "command": args.command,
        "date": started,
        "took_s": round(time.monotonic() - progress.started),
        "wrk": f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s --timeout 10s",
        "load_before": " ".join(load_before),
        "load_after": " ".join(load_after),
        "tree": _git("rev-parse", "--short", "HEAD"),
        "cpus": os.cpu_count(),
    }
    if args.json:  # first: a report that fails must not lose the measurements
        args.json.write_text(
            json.dumps({"meta": meta, "runs": [asdict(r) for r in runs]}, indent=1)
        )
    text = report(runs, meta)
    print(text)
    if args.write:
        write_section(args.write, text)
        print(f"bench-service: wrote {args.write}", file=sys.stderr)
    return 0


def _git(*argv: str) -> str:
    try:
        return subprocess.run(
            ["git", *argv], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---- the report ----------------------------------------------------------------------------------


def report(runs: list[Run], meta: dict[str, object]) -> str:
    by = {(r.server, r.workers, r.group, r.route, r.size): r for r in runs}
    lines = [
        BEGIN,
        "## Service: archcrypt vs a plain FastAPI + pyca/cryptography app",
        "",
        f"- **Command:** `{meta['command']}` (`bench/service/run.py`: both servers under "
        f"uvicorn on loopback, `{meta['wrk']}` per cell, the two servers taking turns cell "
        "by cell, answers compared before timing)",
        f"- **Date:** {meta['date']} (took {meta['took_s']} s); tree `{meta['tree']}`; "
        f"{meta['cpus']} CPUs; load average {meta['load_before']} before, "
        f"{meta['load_after']} after",
        "- **The plain app** is `bench/service/plain_app.py`: pydantic models with base64 "
        "string fields, `async def` handlers, stdlib base64 and hashlib, pyca/cryptography; "
        "run as `uvicorn plain_app:app` (httptools, uvloop) with the access log off, as "
        "archcrypt's is by default.",
        "- Cells: requests per second, payload MB/s (request data bytes x req/s), p50 / p99 "
        "latency in ms; *ratio* = archcrypt req/s / plain req/s (above 1 archcrypt is faster). "
        "*per CPU* = the same ratio of requests per CPU-second the server process(es) used "
        "(from /proc): what a request costs, whatever share of the cores the scheduler gave "
        "each server; on a shared machine it is the steadier figure.",
        "",
    ]
    for group, title in (
        ("json", "JSON bodies (base64 fields), one worker each"),
        ("binary", "application/octet-stream bodies, one worker each"),
    ):
        lines += [
            f"### {title}",
            "",
            "| route | size | archcrypt req/s | plain req/s | **ratio** | per CPU | archcrypt MB/s "
            "| plain MB/s | archcrypt p50 / p99 | plain p50 / p99 |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        routes = dict.fromkeys(r.route for r in runs if r.group == group and r.workers == 1)
        for route in routes:
            for size in sorted({r.size for r in runs if r.route == route and r.group == group}):
                ours = by.get(("archcrypt", 1, group, route, size))
                plain = by.get(("plain", 1, group, route, size))
                if ours is None:
                    continue
                ratio = (
                    f"**{_quotient(ours.requests_per_second, plain.requests_per_second)}**"
                    if plain
                    else "-"
                )
                lines.append(
                    f"| {route} | {label(size)} | {ours.requests_per_second:,.0f} | "
                    f"{_rps(plain)} | {ratio} | {_per_cpu(ours, plain)} | "
                    f"{ours.payload_mb_per_second:,.1f} | "
                    f"{_mbs(plain)} | {_lat(ours)} | {_lat(plain)} |"
                )
        lines.append("")
        if group == "binary":
            lines += _null_share(by), ""
    lines += [
        "### Batches, one worker each",
        "",
        "| route | archcrypt items/s | plain app items/s | archcrypt single requests, "
        "items/s | batch / plain batch | batch / archcrypt one request per item | "
        "batch / plain one request per item |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in runs:
        if r.group != "batch" or r.server != "archcrypt":
            continue
        items = r.requests_per_second * r.items
        plain = by.get(("plain", 1, "batch", r.route, r.size))
        single_route = "seal chacha20-poly1305" if r.route.startswith("seal") else "mac poly1305"
        single = by.get(("archcrypt", 1, "json", single_route, 64))
        plain_single = by.get(("plain", 1, "json", single_route, 64))
        lines.append(
            f"| {r.route} | {items:,.0f} | "
            f"{_fmt(plain.requests_per_second * plain.items) if plain else '-'} | "
            f"{_fmt(single.requests_per_second) if single else '-'} | "
            f"{_ratio(items, plain.requests_per_second * plain.items if plain else None)} | "
            f"{_ratio(items, single.requests_per_second if single else None)} | "
            f"{_ratio(items, plain_single.requests_per_second if plain_single else None)} |"
        )
    lines += [
        "",
        "### Two workers against one (JSON seal)",
        "",
        "| server | size | 1 worker req/s | 2 workers req/s | 2 / 1 | server cores "
        "(1 / 2 workers) | wrk cores (1 / 2 workers) |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in runs:
        if r.workers != 2:
            continue
        one = by.get((r.server, 1, r.group, r.route, r.size))
        if one is None:
            continue
        lines.append(
            f"| {r.server} | {label(r.size)} | {one.requests_per_second:,.0f} | "
            f"{r.requests_per_second:,.0f} | "
            f"{_quotient(r.requests_per_second, one.requests_per_second)} | "
            f"{one.server_cores:.2f} / {r.server_cores:.2f} | "
            f"{one.wrk_cores:.2f} / {r.wrk_cores:.2f} |"
        )
    errors = sum(r.errors for r in runs)
    lines += ["", f"{len(runs)} wrk runs; {errors} non-2xx or socket errors in all.", END]
    return "\n".join(lines) + "\n"


def _null_share(by: dict[tuple[str, int, str, str, int], Run]) -> str:
    parts = []
    for size in sorted({k[4] for k in by if k[3].startswith("null")}):
        null = by[("archcrypt", 1, "binary", "null route (body back)", size)]
        for route in ("seal chacha20-poly1305", "open chacha20-poly1305"):
            ours = by.get(("archcrypt", 1, "binary", route, size))
            if ours:
                parts.append(
                    f"{route.split()[0]} {label(size)} "
                    f"{_quotient(100 * ours.requests_per_second, null.requests_per_second, 0)}%"
                )
    return "Binary seal and open as a share of the null route's req/s: " + ", ".join(parts) + "."


def _quotient(a: float, b: float, digits: int = 2) -> str:
    """a / b for a table; a server that answered nothing in a cell (b = 0) is said so."""
    return f"{a / b:.{digits}f}" if b else "inf (0 answers)"


def _per_cpu(ours: Run, plain: Run | None) -> str:
    if plain is None or not (ours.server_cores and plain.server_cores):
        return "-"
    ours_per_cpu = ours.requests_per_second / ours.server_cores
    return _quotient(ours_per_cpu, plain.requests_per_second / plain.server_cores)


def _fmt(value: float) -> str:
    return f"{value:,.0f}"


def _rps(run: Run | None) -> str:
    return _fmt(run.requests_per_second) if run else "-"


def _mbs(run: Run | None) -> str:
    return f"{run.payload_mb_per_second:,.1f}" if run else "-"


def _lat(run: Run | None) -> str:
    return f"{run.p50_ms:.2f} / {run.p99_ms:.2f}" if run else "-"


def _ratio(a: float, b: float | None) -> str:
    return f"{a / b:.1f}" if b else "-"


def write_section(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
