"""Bearer tokens and scopes: the token store, what each operation requires, and the check.

A token is 256 random bits, printed once by `archcrypt tokens create` and stored only as its
SHA-256 (a fast hash is right here: the input is uniformly random, not a password, so there
is nothing to brute-force). The store is one JSON file, written atomically with mode 0600
and re-read by a running server within a second of a change, so a Kubernetes Secret update
or `archcrypt tokens revoke` takes effect without a restart.

Scopes name operation families (`aead:seal`, `mac`, `hash`, `ecb`, `poly1305`, ...) and,
for named keys, `key:<name>:<op>` with the wildcards `key:<name>:*` and `key:*:<op>`.
A route declares what it needs in one place, `Operation` (below): the scope template, with
`{name}` filled from the path when the route works on a named key, and the audit name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

TOKEN_PREFIX: Final = "act_"  # lets secret scanners recognise a leaked token
_TOKEN_BYTES: Final = 32
_STORE_VERSION: Final = 1
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
KEY_NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

# Operation-family scopes. ECB and raw one-time-key Poly1305 are apart from `mac` on purpose:
# both are easy to misuse, so a token has to be given them by name.
FAMILY_SCOPES: Final = frozenset(
    {
        "aead:seal",
        "aead:open",
        "mac",
        "mac:verify",
        "hash",
        "ecb",
        "poly1305",
        "keys:admin",  # create, rotate, patch, delete named keys
        "keys:read",  # list and show their metadata
    }
)
KEY_OPERATIONS: Final = frozenset({"seal", "open", "rewrap", "datakey", "mac", "verify"})
_KEY_SCOPE: Final = re.compile(r"key:(\*|[a-z0-9][a-z0-9._-]{0,63}):(\*|[a-z]+)")


class TokenStoreError(Exception):
    """The token file cannot be read, or a request to change it is invalid."""


def validate_scope(scope: str) -> str:
    """`scope` if a token may hold it; TokenStoreError (naming the known ones) otherwise."""
    if scope in FAMILY_SCOPES:
        return scope
    match = _KEY_SCOPE.fullmatch(scope)
    if match is not None:
        name, op = match.groups()
        if (op == "*" or op in KEY_OPERATIONS) and not (name == "*" and op == "*"):
            return scope
    raise TokenStoreError(
        f"unknown scope {scope!r}; known: {', '.join(sorted(FAMILY_SCOPES))}, "
        f"key:<name>:<op> (op one of {', '.join(sorted(KEY_OPERATIONS))}), "
        "key:<name>:* and key:*:<op>"
    )


def scope_grants(held: str, required: str) -> bool:
    """Whether a token holding `held` may do what needs `required`."""
    if held == required:
        return True
    if not (held.startswith("key:") and required.startswith("key:")):
        return False
    _, held_name, held_op = held.split(":", 2)
    _, name, op = required.split(":", 2)
    return held_name in ("*", name) and held_op in ("*", op)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    """What the store keeps about a token: never the token itself."""

    name: str
    sha256: str
    scopes: tuple[str, ...]
    created: datetime
    expires: datetime | None = None

    def expired(self, now: float | None = None) -> bool:
        return self.expires is not None and (now or time.time()) >= self.expires.timestamp()

    def allows(self, required: str) -> bool:
        return any(scope_grants(held, required) for held in self.scopes)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "scopes": list(self.scopes),
            "created": _iso(self.created),
            "expires": _iso(self.expires) if self.expires else None,
        }

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> TokenRecord:
        try:
            name, digest, scopes = item["name"], item["sha256"], item["scopes"]
            if not (isinstance(name, str) and NAME_PATTERN.fullmatch(name)):
                raise TokenStoreError(f"bad token name {name!r}")
            if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
                raise TokenStoreError(f"token {name}: sha256 must be 64 hex digits")
            if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                raise TokenStoreError(f"token {name}: scopes must be a list of strings")
            return cls(
                name=name,
                sha256=digest,
                scopes=tuple(validate_scope(s) for s in scopes),
                created=_parse_time(item.get("created")) or datetime.fromtimestamp(0, UTC),
                expires=_parse_time(item.get("expires")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TokenStoreError(f"malformed token entry: {exc}") from None


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _parse_time(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("times are RFC 3339 strings")
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"time {value!r} has no UTC offset")
    return moment


def parse_duration(text: str) -> float:
    """'90d', '12h', '30m', '45s' (or a bare number of seconds) -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not match:
        raise TokenStoreError(f"bad duration {text!r}; e.g. 90d, 12h, 30m")
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[match.group(2)]
    return float(match.group(1)) * unit


# ---- the file -------------------------------------------------------------------------------


def load_records(path: Path) -> list[TokenRecord]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TokenStoreError(f"token file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TokenStoreError(f"cannot read token file {path}: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != _STORE_VERSION:
        raise TokenStoreError(f"{path} is not an archcrypt token file (version {_STORE_VERSION})")
    items = document.get("tokens")
    if not isinstance(items, list):
        raise TokenStoreError(f"{path}: 'tokens' must be a list")
    records = [TokenRecord.from_json(item) for item in items]
    names = [r.name for r in records]
    if len(set(names)) != len(names):
        raise TokenStoreError(f"{path}: token names must be unique")
    return records


def save_records(path: Path, records: Iterable[TokenRecord]) -> None:
    """Replace the file atomically (rename), readable by its owner only."""
    document = {"version": _STORE_VERSION, "tokens": [r.to_json() for r in records]}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def create_token(
    path: Path, name: str, scopes: Iterable[str], expires_in: float | None = None
) -> tuple[str, TokenRecord]:
    """Add a token to the store; returns (token, record). The token is not kept anywhere."""
    if not NAME_PATTERN.fullmatch(name):
        raise TokenStoreError(f"bad name {name!r}: letters, digits, '.', '_', '-', at most 64")
    wanted = tuple(dict.fromkeys(validate_scope(s) for s in scopes))
    if not wanted:
        raise TokenStoreError("a token needs at least one --scope")
    records = load_records(path) if path.exists() else []
    if any(r.name == name for r in records):
        raise TokenStoreError(f"a token named {name!r} exists; revoke it first")
    token = TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)
    now = datetime.now(UTC).replace(microsecond=0)
    expires = datetime.fromtimestamp(now.timestamp() + expires_in, UTC) if expires_in else None
    record = TokenRecord(name, hash_token(token), wanted, now, expires)
    save_records(path, [*records, record])
    return token, record


def revoke_token(path: Path, name: str) -> TokenRecord:
    records = load_records(path)
    kept = [r for r in records if r.name != name]
    if len(kept) == len(records):
        raise TokenStoreError(f"no token named {name!r} in {path}")
    save_records(path, kept)
    return next(r for r in records if r.name == name)


# ---- what a server holds --------------------------------------------------------------------


class TokenStore:
    """The tokens a server accepts, re-read when the file changes (checked at most once a
    second, on the request path: a stat, no thread). A file that turns unreadable keeps the
    last good set and logs once per change, so a half-written Secret never locks users out."""

    RECHECK_SECONDS: Final = 1.0

    def __init__(self, path: Path, on_error: Any = None) -> None:
        self.path = path
        self._on_error = on_error
        self._lock = threading.Lock()
        self._by_hash: dict[str, TokenRecord] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._checked = 0.0
        self.reload(strict=True)

    def _file_stamp(self) -> tuple[int, int, int]:
        st = os.stat(self.path)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def reload(self, strict: bool = False) -> None:
        try:
            records = load_records(self.path)
            stamp = self._file_stamp()
        except (OSError, TokenStoreError) as exc:
            if strict:
                raise TokenStoreError(str(exc)) from None
            if self._on_error is not None:
                self._on_error(f"token file not reloaded, keeping the previous tokens: {exc}")
            self._stamp = None  # try again next time
            return
        self._by_hash = {r.sha256: r for r in records}
        self._stamp = stamp

    def _maybe_reload(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.RECHECK_SECONDS:
            return
        with self._lock:
            self._checked = now
            try:
                stamp = self._file_stamp()
            except OSError:
                stamp = None
            if stamp != self._stamp:
                self.reload()

    def __len__(self) -> int:
        return len(self._by_hash)

    def lookup(self, token: str) -> TokenRecord | None:
        """The record of a presented token, or None. Looked up by hash, so the time taken
        says nothing about how close a guess was."""
        self._maybe_reload()
        return self._by_hash.get(hash_token(token))


# ---- what an operation requires -------------------------------------------------------------

SCOPE_EXTENSION: Final = "x-archcrypt-operation"


@dataclass(frozen=True)
class Operation:
    """An operation as the route that serves it declares it, in one place.

    scope: the scope it needs; `{name}` is filled from the path parameter `name` (named
    keys), so `Operation.on_key("seal")` needs `key:<that key>:seal`.
    by_algorithm: a different scope when the path's `algorithm` is one of these
    (raw Poly1305 on the MAC routes needs `poly1305`, not `mac`).
    name: what the audit log calls it (`aead.seal`, `keys.rotate`, ...).
    streamed: media types whose body the route consumes chunk by chunk (constant memory).
    batch: a batch route: its JSON may hold as many objects as the batch limit allows.
    public: no token needed (health, metrics, the API description). With neither a scope
    nor public, any valid token will do.
    """

    name: str
    scope: str | None = None
    by_algorithm: Mapping[str, str] = field(default_factory=dict)
    streamed: frozenset[str] = frozenset()
    batch: bool = False
    public: bool = False

    @property
    def key_param(self) -> str | None:
        return "name" if self.scope is not None and "{name}" in self.scope else None

    def required_scope(self, path_params: Mapping[str, Any]) -> str | None:
        """None: any valid token will do (or, public, none at all)."""
        if self.scope is None:
            return None
        algorithm = path_params.get("algorithm")
        if isinstance(algorithm, str) and algorithm in self.by_algorithm:
            return self.by_algorithm[algorithm]
        if self.key_param is not None:
            return self.scope.format(name=path_params.get("name", ""))
        return self.scope

    @classmethod
    def on_key(cls, op: str, **kwargs: Any) -> Operation:
        """A named-key operation: needs key:<name>:<op>, audited as keys.<op> with the key."""
        if op not in KEY_OPERATIONS:
            raise ValueError(f"unknown key operation {op!r}")
        return cls(name=f"keys.{op}", scope=f"key:{{name}}:{op}", **kwargs)

    def openapi_extra(self) -> dict[str, Any]:
        """For a route decorator: `@router.post(..., openapi_extra=op.openapi_extra())`.
        The guard reads the declaration back from the route, and the OpenAPI document says
        which scope each operation needs."""
        extension: dict[str, Any] = {"name": self.name}
        if self.scope is not None:
            extension["scope"] = self.scope
        if self.by_algorithm:
            extension["byAlgorithm"] = dict(self.by_algorithm)
        if self.streamed:
            extension["streamed"] = sorted(self.streamed)
        if self.batch:
            extension["batch"] = True
        if self.public:
            extension["public"] = True
        return {SCOPE_EXTENSION: extension}

    @classmethod
    def from_extension(cls, extension: Mapping[str, Any]) -> Operation:
        return cls(
            name=extension["name"],
            scope=extension.get("scope"),
            by_algorithm=dict(extension.get("byAlgorithm", {})),
            streamed=frozenset(extension.get("streamed", ())),
            batch=bool(extension.get("batch", False)),
            public=bool(extension.get("public", False)),
        )


def requires(scope: str, name: str, **kwargs: Any) -> dict[str, Any]:
    """Shorthand for a route decorator's openapi_extra: `requires("aead:seal", "aead.seal")`."""
    return Operation(name=name, scope=scope, **kwargs).openapi_extra()
