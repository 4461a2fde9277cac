"""uvicorn, with the deadlines and limits a server facing untrusted clients needs.

uvicorn closes a keep-alive connection after its idle timeout, and nothing else: a
connection that never sends a byte, one that sends half its headers, and one that stalls in
its body are held open for ever; httptools takes any number of headers of any size; a
malformed request gets text/plain. The two protocol classes here are uvicorn's own, each
with one mixin that adds, per connection:

- a head deadline: from the connection (or the previous response) to a complete request
  head, `header_timeout`; an idle connection is closed, a partial head answered 408;
- a body deadline: at most `body_timeout` between two body reads while the server is
  reading (paused while flow control holds the body back: the wait is then ours);
- a request deadline: from the complete head to the end of the response, `request_timeout`;
- header count and size limits, answered 431; a connection beyond `max_connections`
  answered 503; malformed HTTP answered as application/problem+json, not text/plain.

The TLS handshake gets the head deadline too, through the event loop's create_server
(uvicorn does not pass one; asyncio and uvloop default to 60 s).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

import h11
import uvicorn
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import (
    BAD_REQUEST,
    HEADERS_TOO_LARGE,
    OVERLOADED,
    PROBLEM_MEDIA_TYPE,
    REQUEST_TIMEOUT,
    SECURITY_HEADERS,
    ProblemType,
    problem_document,
)

logger = logging.getLogger("archcrypt")

# The TLS handshake deadline, for the loop factory (workers are started afresh, so it
# travels in the environment, as the rest of the settings do).
HANDSHAKE_TIMEOUT_ENV: Final = "ARCHCRYPT_HEADER_TIMEOUT_SECONDS"
# How long a connection we answered and are closing drains what its client still sends.
LINGER_SECONDS: Final = 2.0
NEVER: Final = math.inf  # a deadline not armed
TIMER_SLACK: Final = 0.001


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0
    body_timeout: float = 15.0
    request_timeout: float = 300.0
    max_header_count: int = 100
    max_header_bytes: int = 16 * 1024
    max_connections: int = 1024


class ArchcryptConfig(uvicorn.Config):
    """uvicorn's Config carrying the limits to the protocol instances (and, pickled, to
    the workers)."""

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits


def _raw_problem(problem: ProblemType, detail: str, extra: dict[str, str] | None = None) -> bytes:
    request_id = os.urandom(16).hex()
    body = json.dumps(problem_document(problem, detail, None, request_id)).encode()
    headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        (b"x-request-id", request_id.encode()),
        *SECURITY_HEADERS,
        *((k.lower().encode(), v.encode()) for k, v in (extra or {}).items()),
    ]
    phrase = HTTPStatus(problem.status).phrase.encode()
    head = b"HTTP/1.1 %d %s\r\n" % (problem.status, phrase)
    head += b"".join(b"%s: %s\r\n" % h for h in headers)
    return head + b"\r\n" + body


class _LimitExceededError(Exception):
    """Raised from a parser callback to stop parsing a head over its limits."""


class _TimedFlow(FlowControl):
    """uvicorn's flow control, telling the protocol when reading pauses and resumes: a body
    held back by the server is not a stalled client."""

    def __init__(self, transport: asyncio.Transport, on_change: Callable[[bool], None]) -> None:
        super().__init__(transport)
        self._on_change = on_change

    def pause_reading(self) -> None:
        paused = self.read_paused
        super().pause_reading()
        if not paused:
            self._on_change(True)

    def resume_reading(self) -> None:
        paused = self.read_paused
        super().resume_reading()
        if paused:
            self._on_change(False)


class _Deadlines:
    """The mixin; see the module docstring. Runs on the event loop's thread only."""

    # provided by the uvicorn protocol class
    config: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    flow: FlowControl
    cycle: Any
    connections: set[Any]

    limits: ConnectionLimits

    def _init_limits(self) -> None:
        self.limits = getattr(self.config, "limits", None) or ConnectionLimits()
        # The three deadlines, absolute loop times (NEVER: not armed), and one timer.
        self._head_deadline = self._body_deadline = self._request_deadline = NEVER
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = NEVER
        self._awaiting_head = True
        self._partial_head = False
        self._in_body = False
        self._head_bytes = 0
        self._head_count = 0
        self._refusal: tuple[ProblemType, str] | None = None
        self._lingering = False
        self._raw_head = 0  # bytes received while waiting for the head, whatever the parser
        self._message_done = True  # the current request's body has arrived in full

    # -- deadlines ----------------------------------------------------------------------------
    # Arming or clearing a deadline is an attribute write. The connection's one timer is set
    # for the earliest deadline and only ever moved earlier; when it fires it acts on the
    # deadlines that have passed and sets itself for the next one. Deadlines mostly move
    # later (each body read, each request of a keep-alive connection), so a request costs no
    # timer handle at all, where a timer per deadline cost four handles created and cancelled
    # a request: ~10 % of a 64 B request's CPU (bench/service).

    def _arm(self, at: float) -> None:
        if at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_at(at, self._on_timer)
            self._timer_at = at

    def _on_timer(self) -> None:
        self._timer, self._timer_at = None, NEVER
        now = self.loop.time() + TIMER_SLACK  # a loop may run a timer a tick early
        if self._head_deadline <= now:
            self._head_deadline = NEVER
            self._head_timed_out()
        elif min(self._body_deadline, self._request_deadline) <= now:
            if self._body_deadline <= self._request_deadline:
                self._body_deadline = NEVER
                self._body_timed_out()
            else:
                self._request_deadline = NEVER
                self._request_timed_out()
        earliest = min(self._head_deadline, self._body_deadline, self._request_deadline)
        if earliest < NEVER:
            self._arm(earliest)

    def _await_head(self) -> None:
        self._awaiting_head = True
        self._partial_head = False
        self._head_bytes = self._head_count = self._raw_head = 0
        self._head_deadline = at = self.loop.time() + self.limits.header_timeout
        self._arm(at)

    def _head_complete(self) -> None:
        self._awaiting_head = False
        self._message_done = False
        self._head_deadline = NEVER
        self._request_deadline = at = self.loop.time() + self.limits.request_timeout
        self._arm(at)
        self._in_body = True
        self._arm_body()

    def _arm_body(self) -> None:
        if self._in_body and not self.flow.read_paused:
            self._body_deadline = at = self.loop.time() + self.limits.body_timeout
            self._arm(at)
        else:
            self._body_deadline = NEVER

    def _body_complete(self) -> None:
        self._in_body = False
        self._body_deadline = NEVER

    def _message_complete(self) -> None:
        self._message_done = True
        self._body_complete()
        cycle = self.cycle
        if cycle is not None and cycle.response_complete:
            self._next_request()  # the drain of an early answer's body is over

    def _next_request(self) -> None:
        self._request_deadline = NEVER
        self._await_head()

    def _response_complete(self) -> None:
        """Before uvicorn's on_response_complete: it may go on to a pipelined request, whose
        head then arms its own deadlines. An answer sent before its request's body arrived in
        full (a refusal from the head alone) leaves the rest of that body to drain: those
        bytes are no head, so the wait for the next head starts at the body's end
        (_message_complete), and meanwhile the body and request deadlines still hold."""
        if self._message_done:  # _message_complete has ended the body's deadline
            self._next_request()

    def _reading_paused(self, paused: bool) -> None:
        if paused:
            self._body_deadline = NEVER
        else:
            self._arm_body()

    def _cancel_all(self) -> None:
        self._head_deadline = self._body_deadline = self._request_deadline = NEVER
        if self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, NEVER

    def _serving(self) -> bool:
        cycle = self.cycle
        return cycle is not None and not cycle.response_complete

    def _head_timed_out(self) -> None:
        if self._serving() or self.transport.is_closing():
            return  # a pipelined head came with the previous request: the request deadline holds
        if self._partial_head:
            self._answer_and_close(
                REQUEST_TIMEOUT,
                f"The request head did not arrive within {self.limits.header_timeout:g} s.",
            )
        else:
            self.transport.close()  # idle: nobody to answer

    def _body_timed_out(self) -> None:
        self._abort(
            REQUEST_TIMEOUT,
            f"No body bytes arrived for {self.limits.body_timeout:g} s.",
        )

    def _request_timed_out(self) -> None:
        if self._in_body:
            self._abort(
                REQUEST_TIMEOUT,
                f"The request was not complete within {self.limits.request_timeout:g} s.",
            )
        else:
            self._abort(
                OVERLOADED,
                f"The response was not complete within {self.limits.request_timeout:g} s.",
            )

    def _abort(self, problem: ProblemType, detail: str) -> None:
        """End the request in flight: a problem if nothing was sent yet, then close; the
        application sees a disconnect."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            started = cycle.response_started
            cycle.disconnected = True
            cycle.message_event.set()
            if not started:
                self._answer_and_close(problem, detail)
                return
        self.transport.close()

    def _answer_and_close(
        self, problem: ProblemType, detail: str, headers: dict[str, str] | None = None
    ) -> None:
        """Send the problem, then close gently: the write side first, the socket after
        LINGER_SECONDS, with what the client still sends thrown away. Closing at once with
        its bytes unread would make the kernel send a reset, which can destroy the answer
        before the client reads it."""
        self._cancel_all()
        transport = self.transport
        if transport.is_closing() or self._lingering:
            return
        logger.warning("HTTP %d to %s: %s", problem.status, _peer(transport), detail)
        transport.write(_raw_problem(problem, detail, headers))
        self._lingering = True
        if transport.can_write_eof():
            transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, transport.close)
        else:
            transport.close()

    # -- the head's limits --------------------------------------------------------------------

    def _count_head(self, nbytes: int, fields: int = 0) -> None:
        self._head_bytes += nbytes
        self._head_count += fields
        if self._head_count > self.limits.max_header_count:
            self._refusal = (
                HEADERS_TOO_LARGE,
                f"More than {self.limits.max_header_count} header fields.",
            )
            raise _LimitExceededError
        if self._head_bytes > self.limits.max_header_bytes:
            self._refusal = (
                HEADERS_TOO_LARGE,
                f"The request line and headers exceed {self.limits.max_header_bytes} bytes.",
            )
            raise _LimitExceededError

    def _check_raw_head(self) -> None:
        """A parser that holds a header until it is complete (httptools) would buffer a
        32 MiB one: the bytes received while the head is incomplete are bounded here."""
        if self._awaiting_head and self._raw_head > self.limits.max_header_bytes:
            self._answer_and_close(
                HEADERS_TOO_LARGE,
                f"The request line and headers exceed {self.limits.max_header_bytes} bytes.",
            )

    def _malformed(self, msg: str) -> None:
        """uvicorn's send_400_response, as a problem (431 when a head limit was hit)."""
        problem, detail = self._refusal or (BAD_REQUEST, "Malformed HTTP request.")
        self._answer_and_close(problem, detail)

    def _over_connection_limit(self) -> bool:
        if len(self.connections) <= self.limits.max_connections:
            return False
        self._answer_and_close(
            OVERLOADED,
            f"More than {self.limits.max_connections} open connections.",
            {"Retry-After": "1"},
        )
        return True


def _peer(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "client"


# ---- h11 ------------------------------------------------------------------------------------


class _H11Connection(h11.Connection):
    """h11's connection, reporting each event to the protocol (head complete, body
    progress) and refusing a head with too many fields; h11 itself bounds the head's
    size (max_incomplete_event_size)."""

    protocol: ArchcryptH11Protocol

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:
                self.protocol._refusal = (
                    HEADERS_TOO_LARGE,
                    f"The request line and headers exceed "
                    f"{self.protocol.limits.max_header_bytes} bytes.",
                )
            raise
        protocol = self.protocol
        if isinstance(event, h11.Request):
            # h11 bounds only a head that is still incomplete; one that arrived whole is
            # measured here, as httptools' callbacks measure theirs.
            size = len(event.target) + sum(len(n) + len(v) + 4 for n, v in event.headers)
            try:
                protocol._count_head(size, len(event.headers))
            except _LimitExceededError:
                raise h11.RemoteProtocolError("head over limits", error_status_hint=431) from None
            protocol._head_complete()
        elif isinstance(event, h11.Data):
            protocol._arm_body()
        elif isinstance(event, h11.EndOfMessage):
            protocol._message_complete()
        return event


class ArchcryptH11Protocol(_Deadlines, H11Protocol):
    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._init_limits()
        conn = _H11Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
        conn.protocol = self
        self.conn = conn

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = _TimedFlow(transport, self._reading_paused)
        if not self._over_connection_limit():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_all()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # answered and closing: drained, not parsed
        if self._awaiting_head:
            self._partial_head = True
            self._raw_head += len(data)
        super().data_received(data)
        self._check_raw_head()

    def send_400_response(self, msg: str) -> None:
        self._malformed(msg)

    def on_response_complete(self) -> None:
        self._response_complete()
        super().on_response_complete()


# ---- httptools ------------------------------------------------------------------------------

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools wheel on this platform: h11 only
    HttpToolsProtocol = None  # type: ignore[assignment, misc]

if HttpToolsProtocol is not None:

    class ArchcryptHttpToolsProtocol(_Deadlines, HttpToolsProtocol):
        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(config, *args, **kwargs)
            self._init_limits()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.flow = _TimedFlow(transport, self._reading_paused)
            if not self._over_connection_limit():
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_all()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._lingering:
                return  # answered and closing: drained, not parsed
            if self._awaiting_head:
                self._partial_head = True
                self._raw_head += len(data)
            super().data_received(data)
            self._check_raw_head()

        def send_400_response(self, msg: str) -> None:
            self._malformed(msg)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._head_bytes = self._head_count = 0

        def on_url(self, url: bytes) -> None:
            self._count_head(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count_head(len(name) + len(value) + 4, 1)
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._head_complete()

        def on_body(self, body: bytes) -> None:
            super().on_body(body)
            self._arm_body()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._message_complete()

        def on_response_complete(self) -> None:
            self._response_complete()
            super().on_response_complete()

else:  # pragma: no cover
    ArchcryptHttpToolsProtocol = None  # type: ignore[assignment, misc]


def protocol_class(parser: str) -> type[asyncio.Protocol]:
    if parser == "h11" or (parser == "auto" and ArchcryptHttpToolsProtocol is None):
        return ArchcryptH11Protocol
    if ArchcryptHttpToolsProtocol is None:
        raise RuntimeError("ARCHCRYPT_HTTP=httptools, but httptools is not installed")
    return ArchcryptHttpToolsProtocol


# ---- the event loop: the TLS handshake deadline ---------------------------------------------


def _handshake_timeout() -> float:
    try:
        return float(os.environ.get(HANDSHAKE_TIMEOUT_ENV, "10"))
    except ValueError:
        return 10.0


def _with_handshake_deadline(base: type[asyncio.AbstractEventLoop]) -> type[Any]:
    class Loop(base):  # type: ignore[misc, valid-type]
        async def create_server(self, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("ssl") is not None:
                kwargs.setdefault("ssl_handshake_timeout", _handshake_timeout())
            return await super().create_server(*args, **kwargs)

    # It is uvloop's (or asyncio's) loop with one method wrapped: introspection that asks
    # which loop serves (buildinfo.http_stack) should get that answer.
    Loop.__name__ = Loop.__qualname__ = base.__name__
    Loop.__module__ = base.__module__
    return Loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvicorn's `loop` setting takes "module:callable" making a loop: uvloop when
    installed, as uvicorn's own "auto" picks, with the head deadline as the TLS
    handshake's."""
    try:
        import uvloop
    except ImportError:
        base: type[asyncio.AbstractEventLoop] = asyncio.SelectorEventLoop
    else:
        base = uvloop.Loop
    loop: asyncio.AbstractEventLoop = _with_handshake_deadline(base)()
    return loop


# ---- running it -----------------------------------------------------------------------------


def tls_options(
    cert: os.PathLike[str] | None, key: os.PathLike[str] | None, client_ca: os.PathLike[str] | None
) -> dict[str, Any]:
    if cert is None:
        return {}
    options: dict[str, Any] = {
        "ssl_certfile": os.fspath(cert),
        "ssl_keyfile": os.fspath(key or cert),
    }
    if client_ca is not None:
        options["ssl_ca_certs"] = os.fspath(client_ca)
        options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
    return options


def disable_core_dumps() -> None:
    """No core file (or core-dump pipe) ever holds this process's keys and plaintexts:
    RLIMIT_CORE 0, and the process marked non-dumpable (which also stops ptrace by other
    processes of the same user; root keeps CAP_SYS_PTRACE for a profiler)."""
    import ctypes
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform == "linux":
        pr_set_dumpable = 4
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_dumpable, 0, 0, 0, 0) != 0:
            logger.warning("prctl(PR_SET_DUMPABLE, 0) failed: errno %d", ctypes.get_errno())


def run(app: Any, limits: ConnectionLimits, workers: int, **options: Any) -> None:
    """uvicorn.run, with our Config and protocol classes (its few lines, for one worker or
    several)."""
    from uvicorn.supervisors import Multiprocess

    os.environ[HANDSHAKE_TIMEOUT_ENV] = repr(limits.header_timeout)
    config = ArchcryptConfig(
        app,
        limits=limits,
        workers=workers,
        loop="archcrypt.server:new_event_loop",
        limit_concurrency=None,  # ours answers problem+json; see _over_connection_limit
        **options,
    )
    server = uvicorn.Server(config)
    try:
        if workers > 1:
            sock = config.bind_socket()
            Multiprocess(config, sockets=[sock]).run()
        else:
            server.run()
    except KeyboardInterrupt:  # pragma: no cover
        pass
    if workers == 1 and not server.started:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE
