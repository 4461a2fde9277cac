"""CPU per request of archcrypt's ASGI app and of the plain app, called in-process.

No server, no socket, no wrk: each app is called as uvicorn would call it (one scope, a
receive() that hands over the body, a send() that keeps the messages), so what is measured
is the application's own work per request, framework included, from thread CPU time. On a
shared machine this is the steadiest figure there is: it does not depend on how much of a
core the scheduler gave a server. What it leaves out is the HTTP server (uvicorn, httptools,
the socket), which both apps pay alike; `make bench-service` measures that too.

The bodies are bench/service/run.py's (same cases, same answers), the two apps take turns
case by case and round by round, and each cell is the median (and min) over rounds of
thread CPU per request. archcrypt runs as `archcrypt serve` would by default (auth open on
loopback, the audit log on: to a file here, as stdout is redirected to one under a server).

    .venv/bin/python bench/service/inprocess.py [--rounds 7] [--requests 400]
        [--filter json] [--sizes 64,16384] [--audit off|FILE] [--token]
        [--profile OUT.prof CASE]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (bench/service/run.py: the cases)

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def scope_of(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


class Call:
    """One request, ready to be sent again and again."""

    def __init__(self, path: str, case: bench.Case, token: str | None = None) -> None:
        headers = [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", case.content_type.encode()),
            (b"content-length", str(len(case.body)).encode()),
            *((k.lower().encode(), v.encode()) for k, v in case.headers.items()),
        ]
        if token is not None:
            headers.append((b"authorization", b"Bearer " + token.encode()))
        self.scope = scope_of(path, headers)
        self.body = case.body

    async def once(self, app: ASGIApp) -> tuple[int, bytes]:
        sent = False
        status = 0
        chunks: list[bytes] = []
        body = self.body

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)  # a real server: nothing until the client leaves
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        scope = dict(self.scope)
        scope["state"] = {}
        await app(scope, receive, send)
        return status, b"".join(chunks)

    async def cpu_per_request(self, app: ASGIApp, requests: int) -> float:
        start = time.thread_time()
        for _ in range(requests):
            await self.once(app)
        return (time.thread_time() - start) / requests * 1e6


class Apps:
    """archcrypt (lifespan started) and the plain app, in one event loop."""

    def __init__(self, audit: str, token: bool) -> None:
        self.audit = audit
        self.want_token = token
        self.token: str | None = None
        self.stack = AsyncExitStack()

    async def __aenter__(self) -> Apps:
        from archcrypt.app import create_app
        from archcrypt.config import Settings

        work = Path(tempfile.mkdtemp(prefix="inprocess-"))
        extra: dict[str, Any] = {}
        if self.want_token:
            from archcrypt.auth import create_token

            self.token, _ = create_token(
                work / "tokens.json",
                "bench",
                ["aead:seal", "aead:open", "mac", "mac:verify", "hash", "ecb", "poly1305"],
            )
            extra["tokens_file"] = work / "tokens.json"
        audit = str(work / "audit.log") if self.audit == "file" else self.audit
        settings = Settings(
            host="127.0.0.1",
            benchmark_enabled=False,
            benchmark_null_route=True,
            data_dir=work / "data",
            audit_log=audit,
            **extra,
        )
        app = create_app(settings)
        await self.stack.enter_async_context(app.router.lifespan_context(app))
        self.archcrypt: ASGIApp = app
        self.plain: ASGIApp = importlib.import_module("plain_app").app
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()


async def check(apps: Apps, plan: list[bench.Case]) -> None:
    """Both apps give the same answer to every body, as run.py checks over HTTP."""
    for case in plan:
        status, body = await Call(case.path, case, apps.token).once(apps.archcrypt)
        if status != 200:
            raise SystemExit(f"archcrypt answered {status} to {case.name}: {body[:300]!r}")
        if case.plain_path is None:
            continue
        plain_status, plain_body = await Call(case.plain_path, case).once(apps.plain)
        if plain_status != 200:
            raise SystemExit(f"plain app answered {plain_status} to {case.name}")
        if body[:1] == b"{":
            equal = json.loads(body) == json.loads(plain_body)
        else:
            equal = body == plain_body
        if not equal:
            raise SystemExit(f"the apps disagree on {case.name}")


def requests_for(case: bench.Case, base: int) -> int:
    # about the same CPU per cell whatever the size
    return max(5, base * 64 // max(64, case.size * (case.items or 1) // 16))


async def measure(args: argparse.Namespace, plan: list[bench.Case]) -> dict[str, Any]:
    results: dict[str, dict[str, list[float]]] = {c.name: {"ours": [], "plain": []} for c in plan}
    async with Apps(args.audit, args.token) as apps:
        await check(apps, plan)
        calls = [
            (
                case,
                Call(case.path, case, apps.token),
                Call(case.plain_path, case) if case.plain_path else None,
            )
            for case in plan
        ]
        for _ in range(args.rounds):
            for index, (case, ours, plain) in enumerate(calls):
                n = requests_for(case, args.requests)
                pairs: list[tuple[str, Call, ASGIApp]] = [("ours", ours, apps.archcrypt)]
                if plain is not None:
                    pairs.append(("plain", plain, apps.plain))
                if index % 2:
                    pairs.reverse()
                for who, call, app in pairs:
                    await call.once(app)  # warm
                    results[case.name][who].append(await call.cpu_per_request(app, n))
    return results


def render(plan: list[bench.Case], results: dict[str, Any]) -> str:
    lines = [
        "| case | archcrypt us/req (min) | plain us/req (min) | plain / archcrypt |",
        "|---|--:|--:|--:|",
    ]
    for case in plan:
        ours, plain = results[case.name]["ours"], results[case.name]["plain"]
        o = statistics.median(ours)
        per_item = f" ({o / case.items:.1f}/item)" if case.items > 1 else ""
        cell = f"{o:,.1f} ({min(ours):,.1f}){per_item}"
        if plain:
            p = statistics.median(plain)
            lines.append(f"| {case.name} | {cell} | {p:,.1f} ({min(plain):,.1f}) | {p / o:.2f} |")
        else:
            lines.append(f"| {case.name} | {cell} | - | - |")
    return "\n".join(lines)


async def profile(args: argparse.Namespace, plan: list[bench.Case]) -> None:
    out, wanted = args.profile
    case = next(c for c in plan if c.name == wanted)
    async with Apps(args.audit, args.token) as apps:
        call = Call(case.path, case, apps.token)
        for _ in range(200):
            await call.once(apps.archcrypt)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.requests * 10):
            await call.once(apps.archcrypt)
        profiler.disable()
        profiler.dump_stats(out)
        print(f"wrote {out} ({args.requests * 10} requests of {case.name})")


async def spin(args: argparse.Namespace, plan: list[bench.Case]) -> None:
    wanted, seconds = args.spin
    case = next(c for c in plan if c.name == wanted)
    async with Apps(args.audit, args.token) as apps:
        app = apps.plain if wanted.startswith("plain:") else apps.archcrypt
        call = Call(case.path, case, apps.token)
        deadline = time.monotonic() + float(seconds)
        count = 0
        while time.monotonic() < deadline:
            for _ in range(100):
                await call.once(app)
            count += 100
        print(f"{count} requests of {case.name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=400, help="per cell at 64 B")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--sizes", default="64,1024,16384,262144,1048576")
    parser.add_argument("--audit", default="file", help="file (a temporary file), off, stdout")
    parser.add_argument("--token", action="store_true", help="send a bearer token (tokens on)")
    parser.add_argument("--profile", nargs=2, metavar=("OUT", "CASE"))
    parser.add_argument(
        "--spin", nargs=2, metavar=("CASE", "SECONDS"), help="one case in a loop, for py-spy"
    )
    parser.add_argument("--loop", default="uvloop", choices=("uvloop", "asyncio"))
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    plan = [c for c in bench.cases(sizes) if args.filter in c.name]
    if args.loop == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    if args.profile:
        asyncio.run(profile(args, plan))
        return 0
    if args.spin:
        asyncio.run(spin(args, plan))
        return 0
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    results = asyncio.run(measure(args, plan))
    print(
        f"in-process CPU per request, median (min) of {args.rounds} interleaved rounds; "
        f"audit {args.audit}, token {'yes' if args.token else 'no'}; load {load} -> "
        + " ".join(Path("/proc/loadavg").read_text().split()[:3])
        + f"; pid {os.getpid()}"
    )
    print(render(plan, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
