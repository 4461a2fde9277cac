"""Service state, the dependencies routes declare with Annotated, and the JSON-only route class.

Every dependency is `async def`: FastAPI runs a plain `def` dependency in the threadpool,
a hop that costs more than the whole crypto call of a small request.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, Callable, Coroutine
from dataclasses import dataclass, field
from time import perf_counter
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio.to_thread
from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute

from .. import crypto
from ..config import Settings
from ..errors import NOT_READY, UNSUPPORTED_MEDIA_TYPE, ProblemError
from ..metrics import Metrics
from ..middleware import ContentTooLarge

P = ParamSpec("P")
T = TypeVar("T")


class CryptoRunner:
    """Calls the facade for a route: inline when the input is small, in a worker thread
    when it is at least `offload_threshold` bytes, and records the operation metrics.

    The C call releases the GIL, so a large input in a thread leaves the event loop free
    and can use another core; a small one would spend longer on the hop than on the kernel.
    """

    def __init__(self, metrics: Metrics, offload_threshold: int) -> None:
        self.metrics = metrics
        self.offload_threshold = offload_threshold

    async def _call(self, nbytes: int, fn: Callable[[], T], spent: list[float]) -> T:
        """fn(), inline or in a worker thread; adds the seconds fn itself ran to spent[0]
        (timed where it runs: the thread hop and the wait for a free thread are not the
        operation's time)."""
        if nbytes >= self.offload_threshold:

            def timed() -> T:
                start = perf_counter()
                try:
                    return fn()
                finally:
                    spent[0] += perf_counter() - start

            return await anyio.to_thread.run_sync(timed)
        start = perf_counter()
        try:
            return fn()
        finally:
            spent[0] += perf_counter() - start

    async def __call__(
        self,
        operation: str,
        algorithm: str,
        nbytes: int,
        fn: Callable[P, T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        outcome = "error"
        spent = [0.0]
        try:
            result = await self._call(nbytes, functools.partial(fn, *args, **kwargs), spent)
            # mac_verify reports a mismatch as False rather than raising.
            outcome = "auth_failed" if result is False else "ok"
            return result
        except crypto.AuthenticationError:
            outcome = "auth_failed"
            raise
        except crypto.InvalidInputError:
            outcome = "invalid_input"
            raise
        finally:
            self.metrics.observe_operation(operation, algorithm, outcome, nbytes, spent[0])

    async def hash_stream(self, algorithm: str, chunks: AsyncIterable[bytes]) -> bytes:
        """Digest of a body fed chunk by chunk as it arrives: memory stays one chunk deep."""
        hasher = crypto.Hash(algorithm)
        nbytes = 0
        busy = [0.0]  # time in the hash itself; waiting for the network is not the operation's
        outcome = "error"
        try:
            async for chunk in chunks:
                if chunk:
                    await self._call(len(chunk), functools.partial(hasher.update, chunk), busy)
                    nbytes += len(chunk)
            digest = await self._call(0, hasher.finalize, busy)
            outcome = "ok"
            return digest
        except ContentTooLarge:
            outcome = "invalid_input"
            raise
        finally:
            self.metrics.observe_operation("hash", algorithm, outcome, nbytes, busy[0])


@dataclass
class ServiceState:
    """What the app knows at run time; lives in app.state.archcrypt."""

    settings: Settings
    metrics: Metrics
    runner: CryptoRunner
    ready: bool = False
    self_tests: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def create(cls, settings: Settings) -> ServiceState:
        metrics = Metrics()
        return cls(settings, metrics, CryptoRunner(metrics, settings.offload_threshold_bytes))


async def get_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.archcrypt
    return state


State = Annotated[ServiceState, Depends(get_state)]


async def get_runner(request: Request) -> CryptoRunner:
    # Takes the request, not State: each level of dependency costs FastAPI a few microseconds.
    state: ServiceState = request.app.state.archcrypt
    # A kernel that failed its known answers must not produce output, readiness probe or not.
    if not state.ready:
        raise ProblemError(NOT_READY, "The startup self-test has not passed; see /readyz.")
    return state.runner


Runner = Annotated[CryptoRunner, Depends(get_runner)]


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").partition(";")[0].strip().lower()


def is_json(media: str) -> bool:
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


class JsonBodyRoute(APIRoute):
    """A route whose body must be declared as JSON (a missing Content-Type included): 415
    otherwise, decided from the header before FastAPI reads the body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def json_only(request: Request) -> Response:
            if not is_json(media_type(request)):
                raise ProblemError(
                    UNSUPPORTED_MEDIA_TYPE, "This route takes Content-Type application/json."
                )
            return await handler(request)

        return json_only
