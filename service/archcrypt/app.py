"""The FastAPI application: create_app() and its lifespan.

No module-level app: uvicorn builds one with `uvicorn --factory archcrypt.app:create_app`,
so settings are read when the server starts, not when something imports this module.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI

from . import __version__, benchmark, crypto
from .api import ROUTERS
from .api.deps import ServiceState
from .api.docs import problem_openapi
from .api.ecb import ECB_WARNING
from .api.keys import ROUTERS as KEY_ROUTERS
from .api.keys import install_key_problem_handlers, named_keys
from .api.system import bench_router
from .config import Settings
from .docs import install_docs
from .errors import install_problem_handlers
from .guard import install as install_guard
from .middleware import BodyLimitMiddleware, RequestMiddleware
from .openapi import complete_openapi
from .scheduler import BackgroundBenchmark

logger = logging.getLogger("archcrypt")

_TAGS = [
    {
        "name": "aead",
        "description": "Authenticated encryption; ciphertext is the encrypted bytes, then the tag.",
    },
    {"name": "mac", "description": "Message authentication codes."},
    {"name": "hash", "description": "SHA-2 digests."},
    {"name": "ecb", "description": ECB_WARNING},
    {
        "name": "keys",
        "description": "Named, versioned keys that never leave the service; self-describing "
        "ciphertext (archcrypt:v<version>:...).",
    },
    {"name": "system", "description": "Backends, health and metrics."},
]


def start(state: ServiceState) -> BackgroundBenchmark | None:
    """Load the native library, self-test every runnable implementation, publish the result,
    and start the benchmark (the process is ready once its first run is over).

    A bad ARCHCRYPT_FORCE or ARCHCRYPT_DISABLE_CPU_FEATURES raises here and stops startup:
    a misconfigured kernel choice should fail loudly, not serve. A failed self-test of a
    chosen implementation keeps the process alive but never ready, and the crypto routes
    refuse to answer; one of an implementation not in use is published (and alerted on)
    and keeps that implementation out of the benchmark.
    """
    crypto.init()
    report = crypto.backends()
    results: dict[tuple[str, str], bool] = {}
    for algorithm in report.algorithms:
        for impl in algorithm.implementations:
            if impl.runnable:
                results[algorithm.name, impl.name] = _self_test(algorithm.name, impl.name)
        state.self_tests[algorithm.name] = results.get((algorithm.name, algorithm.selected), False)
    state.metrics.publish_startup(report, results, http_parser_setting=state.settings.http)
    logger.info(
        "archcrypt %s on %s: %s",
        report.version,
        report.arch,
        ", ".join(f"{a.name}={a.selected}" for a in report.algorithms),
    )
    kernels_ok = all(state.self_tests.values())
    settings = state.settings
    if not (kernels_ok and settings.benchmark_enabled):
        state.ready = kernels_ok
        return None

    cells, skipped = benchmark.plan(report, usable=lambda a, i: results.get((a, i), False))
    for note in skipped:
        logger.debug("benchmark skips %s", note)

    def first_run_over() -> None:
        state.ready = True

    background = BackgroundBenchmark(
        cells,
        budget=settings.benchmark_budget_seconds,
        interval=settings.benchmark_interval_seconds,
        metrics=state.metrics,
        arch=report.arch,
        on_first_run=first_run_over,
    )
    background.start()
    return background


def _self_test(algorithm: str, implementation: str) -> bool:
    try:
        passed = crypto.self_test(algorithm, implementation)
    except crypto.ArchcryptError:
        logger.exception("self-test of %s (%s) raised", algorithm, implementation)
        return False
    if not passed:
        logger.error("self-test FAILED: %s implementation %s", algorithm, implementation)
    return passed


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServiceState = app.state.archcrypt
    background = start(state)
    try:
        async with named_keys(app, state):
            yield
    finally:
        state.ready = False
        if background is not None:
            # between two cells: at most one cell's share of the budget
            await anyio.to_thread.run_sync(background.stop)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings if settings is not None else Settings()
    state = ServiceState.create(settings)

    app = FastAPI(
        title="archcrypt",
        version=__version__,
        summary="Symmetric crypto on hand-tuned C kernels. JSON carries bytes as standard base64.",
        openapi_tags=_TAGS,
        lifespan=lifespan,
        docs_url=None,  # docs.py serves it without a CDN
        redoc_url=None,
        # archcrypt's telemetry is its Prometheus metrics and its own logs. FastAPI's
        # OpenTelemetry bridge, left on, asks OpenTelemetry for its providers on every
        # request (environment look-ups included) even when none is configured.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.archcrypt = state
    install_problem_handlers(app)
    install_key_problem_handlers(app)
    # add_middleware wraps: the last one added runs first. The request id must exist before
    # anything can fail, and the metrics must see the body limit's 413s.
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(RequestMiddleware, metrics=state.metrics)
    for router in (*ROUTERS, *KEY_ROUTERS):
        app.include_router(router)
    if settings.benchmark_null_route:
        app.include_router(bench_router)
    if settings.docs_enabled:
        install_docs(app)
    # Last: it guards every route included above, and refuses routes it cannot guard.
    install_guard(app, settings, state.metrics)
    # The routes' own document (problem+json, their request models), then security's.
    complete_openapi(app, base=lambda: problem_openapi(FastAPI.openapi(app)))
    return app
