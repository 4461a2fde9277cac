"""Service state, the dependencies routes declare with Annotated, and the JSON-only route class.

Every dependency is `async def`: FastAPI runs a plain `def` dependency in the threadpool,
a hop that costs more than the whole crypto call of a small request.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Coroutine
from dataclasses import dataclass, field
from time import perf_counter
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from .. import crypto
from ..config import Settings
from ..errors import NOT_READY, ProblemError
from ..metrics import Metrics
from ..middleware import ContentTooLarge
from .wire import body_kind

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
        self, operation: str, algorithm: str, nbytes: int, call: Callable[[], T]
    ) -> T:
        """`call()` (a facade call, written out at the call site) as operation `operation`
        of `algorithm` on `nbytes` input bytes. Every crypto operation passes here once
        (a batch once for all its items): the place for what each operation must do
        whatever its route (metrics today; an audit line, a scope or budget check)."""
        outcome = "error"
        spent = [0.0]
        try:
            result = await self._call(nbytes, call, spent)
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

    async def stream(
        self,
        operation: str,
        algorithm: str,
        context: crypto.Hash | crypto.Hmac | crypto.Poly1305,
        chunks: AsyncIterable[bytes],
    ) -> bytes:
        """`context.finalize()` after every chunk of a body went into `context.update` as it
        arrived: memory stays one chunk deep (hash and MAC of an octet-stream body).

        Chunks are absorbed inline: the server hands them over at most a read buffer at a
        time (64-256 KiB, tens of microseconds of hashing), so a thread hop per chunk
        would cost more than the chunk and the loop never waits longer than one chunk."""
        nbytes = 0
        busy = 0.0  # time in the kernel itself; waiting for the network is not the operation's
        outcome = "error"
        update = context.update
        try:
            async for chunk in chunks:
                if chunk:
                    start = perf_counter()
                    update(chunk)
                    busy += perf_counter() - start
                    nbytes += len(chunk)
            start = perf_counter()
            result = context.finalize()
            busy += perf_counter() - start
            outcome = "ok"
            return result
        except ContentTooLarge:
            outcome = "invalid_input"
            raise
        finally:
            self.metrics.observe_operation(operation, algorithm, outcome, nbytes, busy)


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


def settings_of(request: Request) -> Settings:
    state: ServiceState = request.app.state.archcrypt
    return state.settings


def runner_of(request: Request) -> CryptoRunner:
    """The runner of this app, once the startup self-test has passed: a kernel that failed
    its known answers must not produce output, readiness probe or not. (A plain function
    rather than a dependency: FastAPI's dependency solving costs more than a small
    request's whole crypto call.)"""
    state: ServiceState = request.app.state.archcrypt
    if not state.ready:
        raise ProblemError(NOT_READY, "The startup self-test has not passed; see /readyz.")
    return state.runner


class JsonBodyRoute(APIRoute):
    """A route whose body must be declared as JSON (a missing Content-Type included): 415
    otherwise, decided from the header before FastAPI reads the body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def json_only(request: Request) -> Response:
            body_kind(request, binary=False)  # 415 unless JSON
            return await handler(request)

        return json_only


class OperationRoute(APIRoute):
    """The route class of the crypto operations: `endpoint(request, <path parameters>)`,
    without FastAPI's dependency solving.

    Operation endpoints read their own bodies (JSON or octet-stream, parsed once from the
    raw bytes) and return a Response, so all FastAPI would do per request is validate
    the path parameters through its general machinery, which costs a small request about
    as much as its whole endpoint. Here each path parameter goes through its own pydantic
    field (the same validation, the same errors, so an unknown algorithm is still a 404),
    and the signature still documents the route in /openapi.json.

    A route of this class takes no other parameters: the constructor refuses dependencies,
    query, header, cookie or body parameters, so that one can never be skipped silently.
    Per-operation checks (scopes, audit, budgets) belong in CryptoRunner, which every
    operation passes, or in pure ASGI middleware.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        dependant = self.dependant
        extra = (
            dependant.dependencies
            or dependant.query_params
            or dependant.header_params
            or dependant.cookie_params
            or dependant.body_params
        )
        if extra or dependant.request_param_name != "request":
            raise TypeError(
                f"{self.path}: an OperationRoute endpoint takes `request: Request` and path "
                "parameters only (its dependencies would not run)"
            )
        endpoint = self.endpoint
        fields = tuple((field, ("path", field.alias)) for field in dependant.path_params)

        async def handler(request: Request) -> Response:
            values = request.scope["path_params"]
            arguments: dict[str, Any] = {}
            for param, loc in fields:
                value, errors = param.validate(values.get(param.alias), {}, loc=loc)
                if errors:
                    raise RequestValidationError(errors)
                arguments[param.name] = value
            response: Response = await endpoint(request=request, **arguments)
            return response

        return handler
