"""Per-request CPU cost of the security guard (guard.SecurityMiddleware), in-process: a
trivial inner app alone, behind the service's own request-id and metrics middleware (the
yardsticks), and behind the guard in its configurations. Thread CPU time over 20,000
requests, median of five interleaved rounds. Not a test.

    .venv/bin/python bench/security/guard_cost.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from archcrypt.auth import create_token
from archcrypt.config import Settings
from archcrypt.guard import RouteTable, Security, SecurityMiddleware, auth_policy
from archcrypt.metrics import Metrics
from archcrypt.middleware import REQUEST_ID_SCOPE_KEY, MetricsMiddleware, RequestIdMiddleware

BODY = b'{"data":"' + b"A" * 88 + b'"}'
REQUESTS = 20_000
ROUNDS = 5


async def inner(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"57")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"x" * 57})


def guarded(settings: Settings) -> SecurityMiddleware:
    document = {"paths": {"/v1/hash/{algorithm}": {"post": {}}, "/livez": {"get": {}}}}
    security = Security(settings, Metrics(), auth_policy(settings), RouteTable(document))
    return SecurityMiddleware(inner, security)


async def per_request(app: Any, headers: list[tuple[bytes, bytes]]) -> float:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message: Any) -> None:
        pass

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/hash/sha256",
        "client": ("127.0.0.1", 1),
        "headers": headers,
        REQUEST_ID_SCOPE_KEY: "r",
    }
    for _ in range(200):
        await app(dict(scope), receive, send)
    start = time.thread_time()
    for _ in range(REQUESTS):
        await app(dict(scope), receive, send)
    return (time.thread_time() - start) / REQUESTS * 1e6


def main() -> None:
    work = Path(tempfile.mkdtemp())
    store = work / "tokens.json"
    token, _ = create_token(store, "bench", ["hash"])
    plain = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    bearer = [*plain, (b"authorization", b"Bearer " + token.encode())]
    cases: dict[str, tuple[Any, list[tuple[bytes, bytes]]]] = {
        "inner app alone": (inner, plain),
        "RequestIdMiddleware (yardstick)": (RequestIdMiddleware(inner), plain),
        "MetricsMiddleware (yardstick)": (MetricsMiddleware(inner, Metrics()), plain),
        "guard: open, audit off": (guarded(Settings(audit_log="off")), plain),
        "guard: token, audit off": (
            guarded(Settings(audit_log="off", tokens_file=store)),
            bearer,
        ),
        "guard: token, audit to a file": (
            guarded(Settings(audit_log=str(work / "a.log"), tokens_file=store)),
            bearer,
        ),
        "guard: token, audit, rate limit": (
            guarded(
                Settings(
                    audit_log=str(work / "b.log"), tokens_file=store, rate_limit_per_second=1e9
                )
            ),
            bearer,
        ),
    }
    results: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, (app, headers) in cases.items():
            results[name].append(asyncio.run(per_request(app, headers)))
    for name, values in results.items():
        print(f"{name:34s} {statistics.median(values):6.2f} us/request")


if __name__ == "__main__":
    main()
