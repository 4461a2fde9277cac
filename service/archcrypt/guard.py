"""The one place every operation passes through: token and scope, rate limit, memory
budget, JSON shape bound, audit line, and the security headers of the response.

`install(app, settings)` wraps each route's ASGI app once, at start-up, in an
OperationGuard built from the route's declared Operation (auth.Operation: in the route's
`openapi_extra`, or for the routes that predate it in OPERATIONS below). Nothing is looked
up per request: the guard of a route knows its operation, scope template and limits.

Order, cheapest refusal first: authenticate (401), scope (403), rate limit (429), audit
sink (503 when fail-closed and down), memory budget (503, after waiting its turn); then the
route runs with a receive() that counts the body, bounds its JSON shape and grows the
reservation of a chunked body. The audit line is written when the response starts.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from time import perf_counter
from typing import Any, Final

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from prometheus_client import Counter, Gauge
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .audit import AUDIT_SCOPE_KEY, AuditRecord, AuditSink
from .auth import (
    KEY_NAME_PATTERN,
    SCOPE_EXTENSION,
    Operation,
    TokenStore,
    TokenStoreError,
    validate_scope,
)
from .budget import (
    BudgetExhaustedError,
    CostModel,
    JsonShape,
    JsonShapeCounter,
    MemoryBudget,
    Reservation,
)
from .config import Settings
from .errors import (
    AUDIT_UNAVAILABLE,
    FORBIDDEN,
    OVERLOADED,
    SECURITY_HEADERS,
    TOO_MANY_REQUESTS,
    UNAUTHORIZED,
    ProblemError,
    ProblemType,
    problem_response,
)
from .metrics import Metrics
from .middleware import REQUEST_ID_SCOPE_KEY, ContentTooLarge
from .ratelimit import RateLimiter, retry_after_header

logger = logging.getLogger("archcrypt")

REALM: Final = 'Bearer realm="archcrypt"'

# The operations of routes that do not declare their own (a route's `openapi_extra`
# declaration wins). Keyed by (method, path template). A /v1 route in neither place stops
# start-up: no operation is ever served unguarded by accident.
_MAC = {"poly1305": "poly1305"}
OCTET: Final = frozenset({"application/octet-stream"})
OPERATIONS: Final[Mapping[tuple[str, str], Operation]] = {
    ("POST", "/v1/aead/{algorithm}/seal"): Operation("aead.seal", "aead:seal"),
    ("POST", "/v1/aead/{algorithm}/open"): Operation("aead.open", "aead:open"),
    ("POST", "/v1/aead/{algorithm}/seal/batch"): Operation("aead.seal", "aead:seal", batch=True),
    ("POST", "/v1/aead/{algorithm}/open/batch"): Operation("aead.open", "aead:open", batch=True),
    ("POST", "/v1/mac/{algorithm}"): Operation("mac", "mac", _MAC, streamed=OCTET),
    ("POST", "/v1/mac/{algorithm}/verify"): Operation(
        "mac.verify", "mac:verify", _MAC, streamed=OCTET
    ),
    ("POST", "/v1/mac/{algorithm}/batch"): Operation("mac", "mac", _MAC, batch=True),
    ("POST", "/v1/mac/{algorithm}/verify/batch"): Operation(
        "mac.verify", "mac:verify", _MAC, batch=True
    ),
    ("POST", "/v1/hash/{algorithm}"): Operation("hash", "hash", streamed=OCTET),
    ("POST", "/v1/hash/{algorithm}/batch"): Operation("hash", "hash", batch=True),
    ("POST", "/v1/ecb/camellia/encrypt"): Operation("ecb.encrypt", "ecb"),
    ("POST", "/v1/ecb/camellia/decrypt"): Operation("ecb.decrypt", "ecb"),
    ("POST", "/v1/ecb/camellia/encrypt/batch"): Operation("ecb.encrypt", "ecb", batch=True),
    ("POST", "/v1/ecb/camellia/decrypt/batch"): Operation("ecb.decrypt", "ecb", batch=True),
    ("GET", "/v1/backends"): Operation("backends"),  # any valid token
    # named keys (issue 12): the contract's routes
    ("POST", "/v1/keys"): Operation("keys.create", "keys:admin"),
    ("GET", "/v1/keys"): Operation("keys.list", "keys:read"),
    ("GET", "/v1/keys/{name}"): Operation("keys.show", "keys:read"),
    ("PATCH", "/v1/keys/{name}"): Operation("keys.update", "keys:admin"),
    ("DELETE", "/v1/keys/{name}"): Operation("keys.delete", "keys:admin"),
    ("POST", "/v1/keys/{name}/rotate"): Operation("keys.rotate", "keys:admin"),
    **{
        ("POST", f"/v1/keys/{{name}}/{op}"): Operation.on_key(op, streamed=frozenset())
        for op in ("seal", "open", "rewrap", "datakey", "mac", "verify")
    },
    **{
        ("POST", f"/v1/keys/{{name}}/{op}/batch"): Operation.on_key(op, batch=True)
        for op in ("seal", "open", "rewrap", "mac", "verify")
    },
    ("POST", "/v1/keys/{name}/datakey/wrapped"): Operation.on_key("datakey"),
}
PUBLIC: Final = Operation("public", public=True)
# A route may also state just its scope, as a template ("key:{name}:seal"), under this key;
# and leave the key's name and the version it used in the request scope for the audit line.
SCOPE_TEMPLATE_EXTENSION: Final = "x-archcrypt-scope"
KEY_NAME_SCOPE_KEY: Final = "archcrypt.key_name"
KEY_VERSION_SCOPE_KEY: Final = "archcrypt.key_version"
_PUBLIC_PREFIXES: Final = ("/livez", "/readyz", "/metrics", "/openapi.json", "/docs")


class SecurityConfigError(Exception):
    """Settings that must not serve (no tokens beyond loopback, an undeclared route)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AuthPolicy:
    """What the service does about authentication, decided once from the settings."""

    mode: str  # "tokens" | "open-loopback" | "disabled"
    store: TokenStore | None

    @property
    def enforced(self) -> bool:
        return self.store is not None

    def describe(self) -> dict[str, Any]:
        warning = {
            "tokens": None,
            "open-loopback": "no tokens configured: every operation is open to this host",
            "disabled": "AUTHENTICATION DISABLED: anyone who reaches the port may use every "
            "operation",
        }[self.mode]
        return {
            "mode": self.mode,
            "tokens": len(self.store) if self.store else 0,
            "warning": warning,
        }


def auth_policy(settings: Settings) -> AuthPolicy:
    """Raise SecurityConfigError for a configuration that must not serve."""
    if settings.auth == "disabled":
        return AuthPolicy("disabled", None)
    if settings.tokens_file is not None:
        try:
            store = TokenStore(settings.tokens_file, on_error=logger.error)
        except TokenStoreError as exc:
            raise SecurityConfigError(str(exc)) from None
        if not len(store) and not is_loopback(settings.host):
            raise SecurityConfigError(
                f"{settings.tokens_file} holds no tokens: nobody could use the service; add "
                "one with `archcrypt tokens create`"
            )
        return AuthPolicy("tokens", store)
    if settings.auth == "required":
        raise SecurityConfigError(
            "ARCHCRYPT_AUTH=required but no ARCHCRYPT_TOKENS_FILE: create one with "
            "`archcrypt tokens create --file PATH --name NAME --scope SCOPE`"
        )
    if not is_loopback(settings.host):
        raise SecurityConfigError(
            f"refusing to listen on {settings.host} without authentication: set "
            "ARCHCRYPT_TOKENS_FILE (tokens from `archcrypt tokens create`), listen on "
            "127.0.0.1, or set ARCHCRYPT_AUTH=disabled to serve everyone on purpose"
        )
    return AuthPolicy("open-loopback", None)


class SecurityMetrics:
    def __init__(self, metrics: Metrics) -> None:
        registry = metrics.registry
        common: dict[str, Any] = {"namespace": "archcrypt", "registry": registry}
        self.refused = Counter(
            "requests_refused_total",
            "Requests refused before their operation ran, by reason.",
            ["reason"],
            **common,
        )
        self.budget_in_use = Gauge(
            "memory_budget_in_use_bytes",
            "Estimated peak bytes reserved by the requests in flight.",
            multiprocess_mode="livesum",
            **common,
        )
        self.budget_capacity = Gauge(
            "memory_budget_capacity_bytes",
            "The memory budget (ARCHCRYPT_MEMORY_BUDGET_BYTES).",
            multiprocess_mode="livesum",
            **common,
        )
        self.audit_failures = Counter(
            "audit_write_failures_total", "Audit lines that could not be written.", **common
        )
        self._by_reason = {
            reason: self.refused.labels(reason)
            for reason in (
                "unauthenticated",
                "forbidden",
                "rate_limited",
                "memory_budget",
                "audit_unavailable",
                "json_shape",
            )
        }

    def count(self, reason: str) -> None:
        self._by_reason[reason].inc()


class Security:
    """The service's security state (app.state.archcrypt_security)."""

    def __init__(
        self, settings: Settings, metrics: Metrics, policy: AuthPolicy, table: RouteTable
    ) -> None:
        self.settings = settings
        self.policy = policy
        self.table = table
        # A route may raise its own body limit (a batch's follows from its item limits);
        # the JSON limit bounds every JSON body whatever the route's limit.
        self.json_limit = settings.max_json_body_bytes
        self.single_shape = JsonShape.single()
        self.batch_shape = JsonShape.batch(settings.max_batch_messages)
        self.metrics = SecurityMetrics(metrics)
        self.token_limiter = (
            RateLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
            if settings.rate_limit_per_second
            else None
        )
        self.client_limiter = (
            RateLimiter(settings.client_rate_limit_per_second, settings.client_rate_limit_burst)
            if settings.client_rate_limit_per_second
            else None
        )
        self.costs = CostModel()
        self.budget = MemoryBudget(settings.memory_budget_bytes, settings.budget_wait_seconds)
        self.metrics.budget_capacity.set(settings.memory_budget_bytes)
        # Read at scrape time where one process serves (nothing per request); several
        # workers each write theirs (livesum adds them) when their metrics flush, once an
        # event-loop turn: a gauge write there is an mmap'd file's, too dear per request.
        self.live_budget_gauge = metrics.multiprocess_dir is not None
        budget, in_use = self.budget, self.metrics.budget_in_use
        if self.live_budget_gauge:
            self.touch_budget = metrics.touch
            metrics.on_flush(lambda: in_use.set(budget.in_use))
        else:
            self.touch_budget = _nothing
            in_use.set_function(lambda: budget.in_use)
        self.audit = AuditSink(settings.audit_log, settings.audit_fail_closed)
        worst = max(
            self.costs.cost("application/json", self.json_limit or settings.max_body_bytes),
            self.costs.cost("application/octet-stream", settings.max_body_bytes),
        )
        if worst > settings.memory_budget_bytes:
            raise SecurityConfigError(
                f"ARCHCRYPT_MEMORY_BUDGET_BYTES ({settings.memory_budget_bytes}) is below what "
                f"one request at ARCHCRYPT_MAX_BODY_BYTES costs ({worst}); raise the budget "
                "or lower the body limit"
            )


class _Head:
    """What the guard reads from the request headers, in one pass."""

    __slots__ = ("declared", "media", "token")

    def __init__(self, headers: list[tuple[bytes, bytes]]) -> None:
        self.token: str | None = None  # None: no Authorization; "": not a Bearer token
        self.media = ""
        self.declared: int | None = None
        for name, value in headers:
            if name == b"content-type":
                self.media = value.decode("latin-1").partition(";")[0].strip().lower()
            elif name == b"content-length":
                try:
                    self.declared = int(value)
                except ValueError:
                    self.declared = None
            elif name == b"authorization" and self.token is None:
                scheme, _, credentials = value.partition(b" ")
                credentials = credentials.strip()
                ok = scheme.lower() == b"bearer" and credentials
                self.token = credentials.decode("latin-1") if ok else ""


class RouteTable:
    """(method, path) -> the operation, its route template and path parameters.

    Built once from the routes' declarations as the generated OpenAPI document states them
    (FastAPI copies a route's openapi_extra there), so it sees every documented route
    however routers are included; paths seen are cached (bounded: key names make paths
    unbounded). A request to a path outside the table needs a valid token (or is public):
    an undocumented route is never open by accident.
    """

    CACHE_SIZE: Final = 4096

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._static: dict[tuple[str, str], tuple[Operation, str]] = {}
        self._templated: list[tuple[str, re.Pattern[str], Operation, str]] = []
        self._cache: dict[tuple[str, str], Resolved | None] = {}
        self.undeclared: list[str] = []
        self.operations: dict[tuple[str, str], Operation] = {}
        for path, item in document.get("paths", {}).items():
            for method, spec in item.items():
                method = method.upper()
                op = self._declared(method, path, spec)
                if op is None:
                    self.undeclared.append(f"{method} {path}")
                    continue
                self.operations[(method, path)] = op
                if "{" in path:
                    self._templated.append((method, _compile(path), op, path))
                else:
                    self._static[(method, path)] = (op, path)

    @staticmethod
    def _declared(method: str, path: str, spec: Mapping[str, Any]) -> Operation | None:
        extension = spec.get(SCOPE_EXTENSION)
        if extension is not None:
            return Operation.from_extension(extension)
        op = OPERATIONS.get((method, path))
        template = spec.get(SCOPE_TEMPLATE_EXTENSION)
        if isinstance(template, str):
            # A route that states only its scope template (the named-key routes): the
            # route's word on the scope, the table's (or the path's) on the rest.
            if op is not None:
                return replace(op, scope=template, by_algorithm={})
            name = "keys." + path.rstrip("/").rsplit("/", 1)[-1].replace("{name}", "show")
            return Operation(name, template, batch=path.endswith("/batch"))
        if op is None and path.startswith(_PUBLIC_PREFIXES):
            return PUBLIC
        return op

    def match(self, method: str, path: str) -> tuple[Operation, str, dict[str, str]] | None:
        """(operation, route template, path parameters), or None outside the table."""
        found = self.resolve(method, path)
        return None if found is None else (found.op, found.template, dict(found.params))

    def resolve(self, method: str, path: str) -> Resolved | None:
        """What the guard needs of `method path`, worked out once per path (cached)."""
        key = (method, path)
        try:
            return self._cache[key]
        except KeyError:
            pass
        found: Resolved | None = None
        static = self._static.get(key)
        if static is not None:
            found = Resolved.of(static[0], static[1], {})
        else:
            for route_method, pattern, op, template in self._templated:
                if route_method == method:
                    m = pattern.fullmatch(path)
                    if m is not None:
                        found = Resolved.of(op, template, m.groupdict())
                        break
        if len(self._cache) >= self.CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = found
        return found


@dataclass(frozen=True, slots=True)
class Resolved:
    """A request's operation, with what follows from its path alone computed once: the
    scope it needs, and the path values fit for the audit line."""

    op: Operation
    template: str
    params: Mapping[str, str]
    required: str | None  # the scope (None: any valid token, or public)
    algorithm: str | None  # the path's algorithm, when it looks like one
    key: str | None  # the path's key name, when it looks like one

    @classmethod
    def of(cls, op: Operation, template: str, params: Mapping[str, str]) -> Resolved:
        algorithm = params.get("algorithm")
        if algorithm is not None and not _ALGORITHM_VALUE.fullmatch(algorithm):
            algorithm = None
        key: str | None = None
        if op.key_param is not None:
            name = params.get(op.key_param, "")
            key = name if KEY_NAME_PATTERN.fullmatch(name) else None
        return cls(op, template, params, op.required_scope(params), algorithm, key)


def _compile(template: str) -> re.Pattern[str]:
    """/v1/keys/{name}/seal -> a pattern with one named group per segment parameter."""
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template)
    pattern = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
    )
    return re.compile(pattern)


# Path values land in the audit log only when they look like what they name.
_ALGORITHM_VALUE: Final = re.compile(r"[a-z0-9-]{1,32}")
# Outside the table: any valid token (or, on a public prefix, none).
_UNMATCHED: Final = Resolved(Operation("unknown"), "unmatched", {}, None, None, None)
_UNMATCHED_PUBLIC: Final = Resolved(PUBLIC, "unmatched", {}, None, None, None)


_SECURITY_NAMES: Final = frozenset(name for name, _ in SECURITY_HEADERS)


def _with_security_headers(message: Message) -> Message:
    """The response start with SECURITY_HEADERS added where the app did not set them."""
    headers = message.get("headers", ())
    for name, _ in headers:
        if name.lower() in _SECURITY_NAMES:
            break
    else:  # the usual case: none set, all added
        return {**message, "headers": [*headers, *SECURITY_HEADERS]}
    present = {name.lower() for name, _ in headers}
    if present >= _SECURITY_NAMES:  # problem responses set them themselves
        return message
    missing = [h for h in SECURITY_HEADERS if h[0] not in present]
    return {**message, "headers": [*headers, *missing]}


class SecurityMiddleware:
    """Pure ASGI: the guard in front of every route (see the module docstring)."""

    def __init__(self, app: ASGIApp, security: Security) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        found = self.security.table.resolve("GET" if method == "HEAD" else method, scope["path"])
        if found is None:
            found = _UNMATCHED_PUBLIC if scope["path"].startswith(_PUBLIC_PREFIXES) else _UNMATCHED
        elif method == "HEAD":
            # RFC 9110: a GET resource answers HEAD. The route sees a GET; the server,
            # whose own scope still says HEAD, sends no body.
            scope = {**scope, "method": "GET"}
        if found.op.public:
            await self.app(scope, receive, self._public_send(send))
            return
        await self._operation(scope, receive, send, found)

    @staticmethod
    def _public_send(send: Send) -> Send:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = _with_security_headers(message)
            await send(message)

        return send_with_headers

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        problem: ProblemType,
        detail: str,
        reason: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.security.metrics.count(reason)
        response = problem_response(Request(scope), problem, detail, headers=headers)
        await response(scope, receive, send)

    async def _operation(self, scope: Scope, receive: Receive, send: Send, found: Resolved) -> None:
        security = self.security
        op = found.op
        client = scope.get("client")
        record = AuditRecord(
            request_id=scope.get(REQUEST_ID_SCOPE_KEY),
            operation=op.name,
            route=found.template,
            client=client[0] if client else None,
            algorithm=found.algorithm,
            key=found.key,
            started=perf_counter(),
        )
        scope[AUDIT_SCOPE_KEY] = record
        sink = security.audit

        async def audited_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
                version = scope.get(KEY_VERSION_SCOPE_KEY)
                if isinstance(version, int):
                    record.key_version = version
                if record.key is None:
                    named = scope.get(KEY_NAME_SCOPE_KEY)
                    if isinstance(named, str) and KEY_NAME_PATTERN.fullmatch(named):
                        record.key = named
                for name, value in message.get("headers", ()):
                    if name == b"content-length":
                        record.response_bytes = int(value)
                if sink.enabled and not sink.write(record.line(time.time())):
                    security.metrics.audit_failures.inc()
                    if sink.fail_closed and record.status < 500:
                        # The result must not leave without its line: answer 503 instead.
                        record.status = 503
                        response = problem_response(
                            Request(scope),
                            AUDIT_UNAVAILABLE,
                            "The audit log cannot be written; operations are refused until it can.",
                            headers={"Retry-After": "1"},
                        )
                        await response(scope, receive, send)
                        raise _WithheldError
                message = _with_security_headers(message)
            await send(message)

        try:
            await self._guarded(scope, receive, audited_send, found, record)
        except _WithheldError:
            return
        finally:
            if record.status == 0:
                # The app raised before answering; the server's 500 goes out past us.
                record.status = 500
                if sink.enabled and not sink.write(record.line(time.time())):
                    security.metrics.audit_failures.inc()

    async def _guarded(
        self, scope: Scope, receive: Receive, send: Send, found: Resolved, record: AuditRecord
    ) -> None:
        security = self.security
        op = found.op
        policy = security.policy
        bucket_key: str | None = None
        limiter: RateLimiter | None = None

        head = _Head(scope["headers"])
        if policy.store is not None:
            token = head.token
            if not token:
                await self._refuse(
                    scope,
                    receive,
                    send,
                    UNAUTHORIZED,
                    "This operation needs an Authorization: Bearer token."
                    if token is None
                    else "The Authorization header is not a Bearer token.",
                    "unauthenticated",
                    {"WWW-Authenticate": REALM},
                )
                return
            holder = policy.store.lookup(token)
            if holder is None or holder.expired():
                await self._refuse(
                    scope,
                    receive,
                    send,
                    UNAUTHORIZED,
                    "The bearer token is unknown, revoked or expired.",
                    "unauthenticated",
                    {"WWW-Authenticate": REALM + ', error="invalid_token"'},
                )
                return
            record.token = holder.name
            required = found.required
            if required is not None and not holder.allows(required):
                await self._refuse(
                    scope,
                    receive,
                    send,
                    FORBIDDEN,
                    f"The token {holder.name!r} lacks the scope {required!r}.",
                    "forbidden",
                    {"WWW-Authenticate": _insufficient_scope(required)},
                )
                return
            limiter, bucket_key = security.token_limiter, holder.name
        elif record.client is not None:
            limiter, bucket_key = security.client_limiter, record.client

        if limiter is not None and bucket_key is not None:
            wait = limiter.acquire(bucket_key)
            if wait:
                await self._refuse(
                    scope,
                    receive,
                    send,
                    TOO_MANY_REQUESTS,
                    f"Rate limit of {limiter.rate:g} requests/s (burst {limiter.burst:g}) "
                    "exceeded.",
                    "rate_limited",
                    {"Retry-After": retry_after_header(wait)},
                )
                return

        if security.audit.fail_closed and security.audit.recently_failed():
            await self._refuse(
                scope,
                receive,
                send,
                AUDIT_UNAVAILABLE,
                "The audit log cannot be written; operations are refused until it can.",
                "audit_unavailable",
                {"Retry-After": "1"},
            )
            return

        media = head.media
        streamed = media in op.streamed
        factor = security.costs.factor(media, streamed)
        reservation = Reservation(security.budget)
        declared = head.declared
        try:
            # A declared length over the body limit is the body limit's 413 (at the first
            # read), not a reason to wait for budget.
            expected = min(declared or 0, security.settings.max_body_bytes)
            if security.json_limit and (media == "application/json" or media.endswith("+json")):
                expected = min(declared or 0, security.json_limit)
            initial = security.costs.cost(media, expected, streamed)
            await reservation.ensure(initial)
        except BudgetExhaustedError:
            await self._refuse(
                scope,
                receive,
                send,
                OVERLOADED,
                "The service is at its memory budget; retry shortly.",
                "memory_budget",
                {"Retry-After": "1"},
            )
            return
        security.touch_budget()

        is_json = media == "application/json" or media.endswith("+json")
        counter = (
            JsonShapeCounter(security.batch_shape if op.batch else security.single_shape)
            if is_json
            else None
        )
        json_limit = security.json_limit if is_json else 0
        base = security.costs.base
        received = 0

        async def guarded_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunk: bytes = message.get("body", b"")
            received += len(chunk)
            if json_limit and (received > json_limit or (declared or 0) > json_limit):
                raise ContentTooLarge(json_limit)
            record.request_bytes = received
            if counter is not None and chunk:
                problem = counter.feed(chunk)
                if problem is not None:
                    security.metrics.count("json_shape")
                    # a 422 like the model's own: a batch over its item limit is too_long
                    kind = "too_long" if op.batch else "json_shape"
                    raise RequestValidationError([{"type": kind, "loc": ("body",), "msg": problem}])
            if factor and declared is None:
                try:
                    await reservation.ensure(base + int(factor * received))
                except BudgetExhaustedError:
                    security.metrics.count("memory_budget")
                    raise ProblemError(
                        OVERLOADED,
                        "The service is at its memory budget; retry shortly.",
                        headers={"Retry-After": "1"},
                    ) from None
                security.touch_budget()
            return message

        try:
            await self.app(scope, guarded_receive, send)
        finally:
            reservation.release()
            security.touch_budget()


def _nothing() -> None:
    pass


def _insufficient_scope(required: str) -> str:
    """The 403's challenge; it names the scope only when a token could hold it (a key name
    from the path that names no key may hold anything, even what a header cannot carry)."""
    challenge = REALM + ', error="insufficient_scope"'
    try:
        validate_scope(required)
    except TokenStoreError:
        return challenge
    return challenge + f', scope="{required}"'


class _WithheldError(Exception):
    """The response was replaced (fail-closed audit); unwinds the app's send."""


def install(app: FastAPI, settings: Settings, metrics: Metrics) -> Security:
    """Guard every route; call after every router is included (the route table is read
    from the OpenAPI document they make). Raises SecurityConfigError for a configuration
    that must not serve."""
    policy = auth_policy(settings)
    # FastAPI's own document, before openapi.py completes it from this same table.
    table = RouteTable(get_openapi(title=app.title, version=app.version, routes=app.routes))
    undeclared = [r for r in table.undeclared if " /v1" in r]
    if undeclared:
        raise SecurityConfigError(
            "routes without a declared operation (auth.Operation in openapi_extra, or "
            f"guard.OPERATIONS): {'; '.join(undeclared)}"
        )
    security = Security(settings, metrics, policy, table)
    app.state.archcrypt_security = security
    # No slash redirects: a redirect built from the client's Host header sends a
    # redirect-following client's key and plaintext wherever the Host said.
    app.router.redirect_slashes = False
    # Innermost of the middleware (appended, where add_middleware would put it outermost):
    # the request id exists and the metrics see its refusals, and it reads the body
    # through the body limit.
    app.user_middleware.append(Middleware(SecurityMiddleware, security=security))
    if policy.mode == "disabled":
        logger.warning(
            "AUTHENTICATION DISABLED (ARCHCRYPT_AUTH=disabled): anyone who reaches %s:%s "
            "may use every operation, ECB and raw Poly1305 included",
            settings.host,
            settings.port,
        )
    elif policy.mode == "open-loopback":
        logger.warning(
            "no ARCHCRYPT_TOKENS_FILE: every operation is open to processes on this host "
            "(listening on loopback %s only)",
            settings.host,
        )
    else:
        logger.info(
            "bearer tokens required (%d in %s)", len(policy.store or ()), settings.tokens_file
        )
    return security
