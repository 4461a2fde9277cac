"""The short way from the middleware to an operation's endpoint: a route table resolved once
from FastAPI's own routes.

Between the last middleware and an endpoint, FastAPI runs a request through
ExceptionMiddleware, AsyncExitStackMiddleware, its router (each included router's routes
matched in turn, route versions checked, scope bookkeeping for included routers), the
route's own exception wrapper and `request_response` (two AsyncExitStacks): a quarter of
the CPU of a small crypto request, measured in-process (BENCHMARKS.md, "Service: reading").
For the crypto operation routes (`api.deps.OperationRoute`: `endpoint(request, path
params) -> Response`, no dependencies, no body parameters) all of that comes down to three
things, which this layer does directly:

1. find the route FastAPI's router would pick: the first route, in the router's order, whose
   path and method match (routes are FastAPI's own effective routes, read once, at start-up);
2. put in the scope what routing puts there (`route`, `endpoint`, `path_params`, `router`,
   Starlette's exception handlers) and call the route's own handler (`get_route_handler()`:
   the same path-parameter validation, the same endpoint);
3. turn an exception into the response of the handler the app registered for it, exactly as
   Starlette's `wrap_app_handling_exceptions` does (status handlers first, then the class's
   MRO; an exception with no handler propagates to ServerErrorMiddleware as before).

Everything else (other methods, other routes, a path no operation route matches first, an
app mounted under a root_path) goes the usual way, so 404, 405, HEAD and every non-operation
route are FastAPI's own. What is left out for the operation routes is only what they cannot
use: the AsyncExitStacks exist for dependencies with `yield` and uploaded files, and an
OperationRoute refuses dependencies and reads its own body. It sits innermost of the
middleware, so request ids, metrics, the body limit and the guard see every request as
before. `ARCHCRYPT_FAST_PATH=false` turns it off (tests/service/test_fastpath.py sends every
route the same requests both ways and compares the answers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from re import Pattern
from typing import Any, Final

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette._utils import is_async_callable
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .api.deps import OperationRoute

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class _Route:
    """One route as the router sees it: its pattern, methods, and for an operation route
    what the fast path needs to serve it."""

    path_regex: Pattern[str]
    methods: frozenset[str]
    param_convertors: dict[str, Any]
    route: BaseRoute
    handler: Handler | None  # None: not an operation route (served the usual way)


def _effective_routes(app: FastAPI) -> Iterator[tuple[Any, BaseRoute]]:
    """(context, original route) in the order FastAPI's router tries them; context holds the
    path as included (prefixes applied), its regex, methods and body limit."""
    for route in app.router.routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is not None:  # an included router: its routes, in their order
            for context in contexts():
                yield context, context.original_route
        else:
            yield route, route


def _route_table(app: FastAPI) -> list[_Route]:
    table: list[_Route] = []
    for context, route in _effective_routes(app):
        regex = getattr(context, "path_regex", None)
        if regex is None:  # mounts, hosts, frontend groups: never an operation route
            table.append(_Route(_NEVER, frozenset(), {}, route, None))
            continue
        handler: Handler | None = None
        if (
            isinstance(route, OperationRoute)
            and not getattr(context, "dependencies", None)
            and getattr(context, "max_body_size", None) is None
        ):
            handler = route.get_route_handler()
        methods = getattr(context, "methods", None) or ()
        convertors = getattr(context, "param_convertors", {})
        table.append(_Route(regex, frozenset(methods), convertors, route, handler))
    return table


class _NeverMatches:
    def match(self, path: str) -> None:
        return None


_NEVER: Final[Any] = _NeverMatches()


class OperationDispatch:
    """Pure ASGI, the innermost middleware: an operation route's request goes straight to
    its handler; everything else to `app` (FastAPI's exception middleware and router)."""

    CACHE_SIZE: Final = 4096  # key names make paths unbounded; the cache is not

    def __init__(self, app: ASGIApp, fastapi_app: FastAPI) -> None:
        self.app = app
        self.router = fastapi_app.router
        self._table = _route_table(fastapi_app)
        self._cache: dict[str, tuple[_Route, dict[str, Any]] | None] = {}
        # The handler dictionaries ExceptionMiddleware builds from the app's handlers
        # (FastAPI gives it every one but Exception/500, which ServerErrorMiddleware has).
        handlers = {
            key: value
            for key, value in fastapi_app.exception_handlers.items()
            if key not in (500, Exception)
        }
        reference = ExceptionMiddleware(app, handlers=handlers, debug=fastapi_app.debug)
        self._exception_handlers = reference._exception_handlers
        self._status_handlers = reference._status_handlers
        self._handlers_scope = (self._exception_handlers, self._status_handlers)
        self._by_type: dict[type[BaseException], Any] = {}

    def resolve(self, method: str, path: str) -> tuple[_Route, dict[str, Any]] | None:
        """The operation route (and its path parameters) FastAPI's router would serve
        `method path` with, or None when it would pick anything else."""
        if method != "POST":
            return None
        try:
            return self._cache[path]
        except KeyError:
            pass
        found: tuple[_Route, dict[str, Any]] | None = None
        for entry in self._table:
            match = entry.path_regex.match(path)
            if match is None or (entry.methods and method not in entry.methods):
                continue  # the router goes on looking for a full match too
            if entry.handler is not None:
                params = match.groupdict()
                for name, value in params.items():
                    params[name] = entry.param_convertors[name].convert(value)
                found = (entry, params)
            break
        if len(self._cache) >= self.CACHE_SIZE:
            self._cache.clear()
        self._cache[path] = found
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            found = self.resolve(scope["method"], scope["path"])
            if found is not None:
                await self._serve(found[0], found[1], scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _serve(
        self,
        entry: _Route,
        params: dict[str, Any],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        # what the router and ExceptionMiddleware would have put in the scope
        scope["starlette.exception_handlers"] = self._handlers_scope
        scope.setdefault("router", self.router)
        scope["endpoint"] = entry.route.endpoint  # type: ignore[attr-defined]
        scope["path_params"] = dict(params)
        scope["route"] = entry.route
        request = Request(scope, receive, send)
        started = False

        async def sender(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        assert entry.handler is not None
        try:
            response = await entry.handler(request)
            await response(scope, receive, sender)
        except Exception as exc:
            handler = self._handler_for(exc)
            if handler is None:
                raise
            if started:
                raise RuntimeError(
                    "Caught handled exception, but response already started."
                ) from exc
            if is_async_callable(handler):
                answer = await handler(request, exc)
            else:
                answer = await run_in_threadpool(handler, request, exc)
            if answer is not None:
                await answer(scope, receive, sender)
            exc.__traceback__ = None

    def _handler_for(self, exc: Exception) -> Any:
        """Starlette's choice: a status handler for an HTTPException, else the nearest
        class in the exception's MRO that has one (memoized per type)."""
        if isinstance(exc, HTTPException):
            handler = self._status_handlers.get(exc.status_code)
            if handler is not None:
                return handler
        kind = type(exc)
        try:
            return self._by_type[kind]
        except KeyError:
            pass
        handler = next(
            (self._exception_handlers[c] for c in kind.__mro__ if c in self._exception_handlers),
            None,
        )
        self._by_type[kind] = handler
        return handler


def install(app: FastAPI) -> None:
    """The fast path as the innermost middleware (call after the guard is installed: it must
    run inside it). The table is read when the middleware stack is built, at the first
    request, when every route is there."""
    app.user_middleware.append(Middleware(OperationDispatch, fastapi_app=app))


def operation_routes(app: FastAPI) -> list[APIRoute]:
    """The routes the fast path serves (for tests and /v1/backends-style introspection)."""
    return [e.route for e in _route_table(app) if e.handler is not None]  # type: ignore[misc]
