"""The audit log: one JSON line per operation, never a secret in it.

A line says who (token name, client address), what (operation, algorithm, key name and
version), how much (request and response bytes) and how it ended (status, outcome), with
the time and the request id. It never holds a key, nonce, plaintext, tag, token or body:
the record has no field that could carry one, and values that come from the client (the
algorithm, the key name) are only taken after the router matched them against the route.

The line is written when the response starts, before any of its body leaves. With
fail_closed, a line that cannot be written turns the response into a 503: no result is
released without its audit line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii  # the C one where it exists
from pathlib import Path
from typing import IO, Any, Final

logger = logging.getLogger("archcrypt")

OUTCOMES: Final = frozenset(
    {
        "ok",
        "auth_failed",  # AEAD open with a wrong tag; a MAC that does not verify
        "invalid_input",  # 4xx about the request itself
        "unauthenticated",  # 401
        "forbidden",  # 403
        "rate_limited",  # 429
        "refused",  # 503: memory budget, not ready, audit sink down
        "error",  # 5xx
    }
)


# Where the guard puts this request's AuditRecord in the ASGI scope. A route (or the error
# handlers) refines it through audit_record(): a named-key route sets key_version, a batch
# route items, an operation whose status does not tell its outcome sets outcome (a MAC
# that does not verify answers 200 with outcome "auth_failed").
AUDIT_SCOPE_KEY: Final = "archcrypt.audit"


def audit_record(scope: Mapping[str, Any]) -> AuditRecord | None:
    """This request's audit record, or None (public routes, or no guard)."""
    record = scope.get(AUDIT_SCOPE_KEY)
    return record if isinstance(record, AuditRecord) else None


@dataclass(slots=True)
class AuditRecord:
    """One operation, filled in along the request path (the guard, then the route)."""

    request_id: str | None
    operation: str
    route: str
    client: str | None
    token: str | None = None
    algorithm: str | None = None
    key: str | None = None
    key_version: int | None = None
    items: int | None = None
    request_bytes: int = 0
    response_bytes: int | None = None
    status: int = 0
    outcome: str | None = None  # set by the route when the status alone does not say
    started: float = 0.0

    def line(self, now: float) -> str:
        """The JSON line. Written out by hand around the C string encoder: json.dumps builds
        an encoder per call, several times the cost of the rest of the request's audit."""
        outcome = self.outcome or outcome_of(self.status)
        duration = round((time.perf_counter() - self.started) * 1000, 3)
        parts = [
            f'{{"time":"{_rfc3339(now)}","request_id":{_str(self.request_id)}',
            f',"operation":{_str(self.operation)},"route":{_str(self.route)}',
            f',"outcome":{_str(outcome)},"status":{int(self.status)}',
            f',"token":{_str(self.token)},"client":{_str(self.client)}',
            f',"request_bytes":{int(self.request_bytes)},"duration_ms":{duration!r}',
        ]
        if self.algorithm is not None:
            parts.append(f',"algorithm":{_str(self.algorithm)}')
        if self.key is not None:
            parts.append(f',"key":{_str(self.key)}')
        for name in ("key_version", "items", "response_bytes"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f',"{name}":{int(value)}')
        parts.append("}\n")
        return "".join(parts)


def _str(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)


def outcome_of(status: int) -> str:
    if status < 400:
        return "ok"
    if status == 401:
        return "unauthenticated"
    if status == 403:
        return "forbidden"
    if status == 429:
        return "rate_limited"
    if status == 503:
        return "refused"
    if status >= 500:
        return "error"
    return "invalid_input"


_second: list[Any] = [-1, ""]  # the last second formatted, and its text


def _rfc3339(epoch: float) -> str:
    seconds = int(epoch)
    millis = int((epoch - seconds) * 1000)
    if seconds != _second[0]:
        _second[:] = [seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))]
    return f"{_second[1]}.{millis:03d}Z"


class AuditSink:
    """Where the lines go: stdout, stderr or a file (appended, reopened when rotated away).

    Lines are flushed once per event-loop turn, so a burst of requests costs one write; in
    fail-closed mode every line is flushed before its response may start, and a failure is
    reported to the caller.
    """

    def __init__(self, target: str, fail_closed: bool = False) -> None:
        self.target = target
        self.fail_closed = fail_closed
        self.enabled = target != "off"
        self._path = None if target in ("stdout", "stderr", "off") else Path(target)
        self._file: IO[str] | None = None
        self._inode: int | None = None
        self._checked = 0.0
        self._flush_pending = False
        self.healthy = True
        self.failures = 0
        self.failed_at = 0.0  # monotonic time of the last failure
        if self.enabled:
            self._open()

    def _open(self) -> None:
        if self._path is None:
            self._file = sys.stdout if self.target == "stdout" else sys.stderr
            return
        self._file = open(self._path, "a", encoding="ascii", buffering=1 << 16)  # noqa: SIM115
        self._inode = os.fstat(self._file.fileno()).st_ino

    def _rotated(self) -> bool:
        """A file moved away by logrotate is reopened (checked at most once a second)."""
        if self._path is None:
            return False
        now = time.monotonic()
        if now - self._checked < 1.0:
            return False
        self._checked = now
        try:
            return os.stat(self._path).st_ino != self._inode
        except OSError:
            return True

    def write(self, line: str) -> bool:
        """Queue (fail-closed: write through) one line; False when the sink failed."""
        if not self.enabled:
            return True
        try:
            if self._file is None or self._rotated():
                self._reopen()
            assert self._file is not None
            self._file.write(line)
            if self.fail_closed:
                self._file.flush()
            elif not self._flush_pending:
                self._schedule_flush()
        except (OSError, ValueError) as exc:
            self._failed(exc)
            return False
        if not self.healthy:
            self.healthy = True
            logger.warning("audit log writable again (%s)", self.target)
        return True

    def _reopen(self) -> None:
        if self._file is not None and self._path is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None
        self._open()

    def _schedule_flush(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_pending = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        self._flush_pending = False
        if self._file is None:
            return
        try:
            self._file.flush()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def recently_failed(self, within: float = 1.0) -> bool:
        """Down, and not for long enough to try again: fail-closed operations are refused
        without doing their work. After `within` seconds one goes ahead, and the write of
        its line (before its response) says whether the sink is back."""
        return not self.healthy and time.monotonic() - self.failed_at < within

    def _failed(self, exc: BaseException) -> None:
        self.failures += 1
        self.failed_at = time.monotonic()
        if self.healthy:
            logger.error("audit log %s cannot be written: %s", self.target, exc)
        self.healthy = False
        if self._path is not None:
            self._file = None  # reopened on the next line

    def close(self) -> None:
        self.flush()
        if self._path is not None and self._file is not None:
            self._file.close()
            self._file = None
