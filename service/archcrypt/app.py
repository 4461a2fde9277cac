"""The FastAPI application: create_app() and its lifespan.

No module-level app: uvicorn builds one with `uvicorn --factory archcrypt.app:create_app`,
so settings are read when the server starts, not when something imports this module.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import __version__, crypto
from .api import ROUTERS
from .api.deps import ServiceState
from .api.ecb import ECB_WARNING
from .config import Settings
from .errors import install_problem_handlers
from .middleware import BodyLimitMiddleware, MetricsMiddleware, RequestIdMiddleware

logger = logging.getLogger("archcrypt")

_TAGS = [
    {
        "name": "aead",
        "description": "Authenticated encryption; ciphertext is the encrypted bytes, then the tag.",
    },
    {"name": "mac", "description": "Message authentication codes."},
    {"name": "hash", "description": "SHA-2 digests."},
    {"name": "ecb", "description": ECB_WARNING},
    {"name": "system", "description": "Backends, health and metrics."},
]


def start(state: ServiceState) -> None:
    """Load the native library, self-test every chosen implementation, publish the result.

    A bad ARCHCRYPT_FORCE or ARCHCRYPT_DISABLE_CPU_FEATURES raises here and stops startup:
    a misconfigured kernel choice should fail loudly, not serve. A failed self-test keeps
    the process alive but never ready, and the crypto routes refuse to answer.
    """
    crypto.init()
    report = crypto.backends()
    for algorithm in report.algorithms:
        try:
            passed = crypto.self_test(algorithm.name)
        except crypto.ArchcryptError:
            logger.exception("self-test of %s (%s) raised", algorithm.name, algorithm.selected)
            passed = False
        state.self_tests[algorithm.name] = passed
        if not passed:
            logger.error(
                "self-test FAILED: %s implementation %s", algorithm.name, algorithm.selected
            )
    state.metrics.publish_startup(report, state.self_tests)
    state.ready = all(state.self_tests.values())
    logger.info(
        "archcrypt %s on %s: %s",
        report.version,
        report.arch,
        ", ".join(f"{a.name}={a.selected}" for a in report.algorithms),
    )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServiceState = app.state.archcrypt
    start(state)
    yield
    state.ready = False


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings if settings is not None else Settings()
    state = ServiceState.create(settings)

    app = FastAPI(
        title="archcrypt",
        version=__version__,
        summary="Symmetric crypto on hand-tuned C kernels. JSON carries bytes as standard base64.",
        openapi_tags=_TAGS,
        lifespan=lifespan,
    )
    app.state.archcrypt = state
    install_problem_handlers(app)
    # add_middleware wraps: the last one added runs first. The request id must exist before
    # anything can fail, and the metrics must see the body limit's 413s.
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    app.add_middleware(RequestIdMiddleware)
    for router in ROUTERS:
        app.include_router(router)
    return app
