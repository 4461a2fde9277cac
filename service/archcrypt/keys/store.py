"""Where named keys live: the records, the errors, and the SQL both backends share.

A store holds metadata and wrapped material only; it never sees a KEK or a plaintext key.
Every method is synchronous and thread-safe: the service calls them from worker threads,
the CLI directly. Each write is one transaction and bumps the key's `revision`, which is
how other instances notice it (PostgreSQL: NOTIFY at commit; SQLite: PRAGMA data_version).

Two tables, prefixed so they can share a database with others:

- archcrypt_keys (name, type, created_at, primary_version, min_decryption_version,
  deletion_allowed, revision)
- archcrypt_key_versions (name, version, created_at, kek_id, wrapped, usage,
  nonces_reserved): `usage` counts seals or MACs (flushed by each instance about once a
  second), `nonces_reserved` the random nonces instances have claimed from the version's
  budget (claimed in blocks before use, so it is an upper bound of the nonces drawn).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

SCHEMA_VERSION: Final = "1"

# (version) -> (kek id, wrapped material): the store asks for the wrap once it knows the
# version number, inside the transaction that allocates it.
Wrapper = Callable[[int], tuple[str, bytes]]
# (name, version, type, kek id, wrapped) -> (new kek id, new wrapped)
Rewrapper = Callable[[str, int, str, str, bytes], tuple[str, bytes]]
# a key's name when one changed, None when anything may have (reconnect, external change)
ChangeCallback = Callable[[str | None], None]


class StoreError(Exception):
    """The store cannot be reached or used (HTTP 503)."""


class KeyExistsError(Exception):
    pass


class KeyNotFoundError(Exception):
    pass


class DeletionNotAllowedError(Exception):
    pass


class InvalidUpdateError(ValueError):
    pass


@dataclass(frozen=True)
class VersionRecord:
    version: int
    created_at: str
    kek_id: str
    wrapped: bytes
    usage: int
    nonces_reserved: int


@dataclass(frozen=True)
class KeyRecord:
    name: str
    type: str
    created_at: str
    primary_version: int
    min_decryption_version: int
    deletion_allowed: bool
    revision: int
    versions: tuple[VersionRecord, ...]


@dataclass(frozen=True)
class PrimaryLevel:
    """The primary version of a key and how much of its nonce budget is claimed."""

    name: str
    type: str
    version: int
    nonces_reserved: int


def now() -> str:
    """RFC 3339 UTC with microseconds: sortable as text, the same in both backends."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


Execute = Callable[[str, Sequence[Any]], Cursor]


class KeyStore(abc.ABC):
    """The SQL of both backends, written once with `?` placeholders; a backend supplies the
    transaction, the row lock and the change notification."""

    # appended to a SELECT that reads a row about to be updated
    lock_clause: str = ""
    blob_type: str = "BLOB"
    description: str = ""

    @abc.abstractmethod
    def _transaction(self, write: bool = True) -> AbstractContextManager[Execute]:
        """A transaction; a writing one serializes with other writers of the same rows."""

    @abc.abstractmethod
    def _notify(self, execute: Execute, name: str) -> None:
        """Tell other instances, at commit, that `name` changed."""

    @abc.abstractmethod
    def watch(self, on_change: ChangeCallback, stop: threading.Event) -> None:
        """Call `on_change` when another writer changed a key, until `stop` is set (runs on a
        thread of its own)."""

    @abc.abstractmethod
    def close(self) -> None: ...

    # ---- schema ---------------------------------------------------------------------------

    def _schema(self) -> list[str]:
        return [
            "CREATE TABLE IF NOT EXISTS archcrypt_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
            """CREATE TABLE IF NOT EXISTS archcrypt_keys (
                name TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                created_at TEXT NOT NULL,
                primary_version INTEGER NOT NULL,
                min_decryption_version INTEGER NOT NULL,
                deletion_allowed BOOLEAN NOT NULL,
                revision BIGINT NOT NULL
            )""",
            f"""CREATE TABLE IF NOT EXISTS archcrypt_key_versions (
                name TEXT NOT NULL REFERENCES archcrypt_keys (name),
                version INTEGER NOT NULL,
                created_at TEXT NOT NULL,
                kek_id TEXT NOT NULL,
                wrapped {self.blob_type} NOT NULL,
                usage BIGINT NOT NULL DEFAULT 0,
                nonces_reserved BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (name, version)
            )""",
        ]

    def _create_schema(self, execute: Execute) -> None:
        for statement in self._schema():
            execute(statement, ())
        row = execute("SELECT v FROM archcrypt_meta WHERE k = 'schema_version'", ()).fetchone()
        if row is None:
            execute(
                "INSERT INTO archcrypt_meta (k, v) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
            )
        elif row[0] != SCHEMA_VERSION:
            raise StoreError(
                f"{self.description} holds key store schema {row[0]}; this archcrypt knows "
                f"schema {SCHEMA_VERSION}"
            )

    # ---- reads ----------------------------------------------------------------------------

    _KEY_COLUMNS: Final = (
        "name, type, created_at, primary_version, min_decryption_version, deletion_allowed, "
        "revision"
    )
    _VERSION_COLUMNS: Final = "version, created_at, kek_id, wrapped, usage, nonces_reserved"

    @staticmethod
    def _version(row: Sequence[Any]) -> VersionRecord:
        return VersionRecord(int(row[0]), row[1], row[2], bytes(row[3]), int(row[4]), int(row[5]))

    def _read(self, execute: Execute, name: str, lock: bool = False) -> KeyRecord | None:
        suffix = self.lock_clause if lock else ""
        row = execute(
            f"SELECT {self._KEY_COLUMNS} FROM archcrypt_keys WHERE name = ?{suffix}", (name,)
        ).fetchone()
        if row is None:
            return None
        versions = execute(
            f"SELECT {self._VERSION_COLUMNS} FROM archcrypt_key_versions WHERE name = ? "
            "ORDER BY version",
            (name,),
        ).fetchall()
        return KeyRecord(
            row[0],
            row[1],
            row[2],
            int(row[3]),
            int(row[4]),
            bool(row[5]),
            int(row[6]),
            tuple(self._version(v) for v in versions),
        )

    def get(self, name: str) -> KeyRecord | None:
        with self._transaction(write=False) as execute:
            return self._read(execute, name)

    def list_keys(self) -> list[KeyRecord]:
        with self._transaction(write=False) as execute:
            keys = execute(
                f"SELECT {self._KEY_COLUMNS} FROM archcrypt_keys ORDER BY name", ()
            ).fetchall()
            rows = execute(
                f"SELECT name, {self._VERSION_COLUMNS} FROM archcrypt_key_versions "
                "ORDER BY name, version",
                (),
            ).fetchall()
        versions: dict[str, list[VersionRecord]] = {}
        for row in rows:
            versions.setdefault(row[0], []).append(self._version(row[1:]))
        return [
            KeyRecord(
                k[0], k[1], k[2], int(k[3]), int(k[4]), bool(k[5]), int(k[6]),
                tuple(versions.get(k[0], ())),
            )
            for k in keys
        ]  # fmt: skip

    def revisions(self) -> dict[str, int]:
        with self._transaction(write=False) as execute:
            rows = execute("SELECT name, revision FROM archcrypt_keys", ()).fetchall()
        return {row[0]: int(row[1]) for row in rows}

    def primary_levels(self) -> list[PrimaryLevel]:
        with self._transaction(write=False) as execute:
            rows = execute(
                "SELECT k.name, k.type, k.primary_version, v.nonces_reserved "
                "FROM archcrypt_keys k JOIN archcrypt_key_versions v "
                "ON v.name = k.name AND v.version = k.primary_version ORDER BY k.name",
                (),
            ).fetchall()
        return [PrimaryLevel(r[0], r[1], int(r[2]), int(r[3])) for r in rows]

    def kek_usage(self) -> dict[str, int]:
        """How many versions each KEK id wraps."""
        with self._transaction(write=False) as execute:
            rows = execute(
                "SELECT kek_id, COUNT(*) FROM archcrypt_key_versions GROUP BY kek_id", ()
            ).fetchall()
        return {row[0]: int(row[1]) for row in rows}

    # ---- writes ---------------------------------------------------------------------------

    def _add_version(
        self, execute: Execute, name: str, version: int, created_at: str, wrap: Wrapper
    ) -> None:
        kek_id, wrapped = wrap(version)
        execute(
            "INSERT INTO archcrypt_key_versions (name, version, created_at, kek_id, wrapped) "
            "VALUES (?, ?, ?, ?, ?)",
            (name, version, created_at, kek_id, wrapped),
        )

    def create(self, name: str, key_type: str, wrap: Wrapper) -> KeyRecord:
        created_at = now()
        with self._transaction() as execute:
            inserted = execute(
                f"INSERT INTO archcrypt_keys ({self._KEY_COLUMNS}) VALUES (?, ?, ?, 1, 1, ?, 1) "
                "ON CONFLICT (name) DO NOTHING",
                (name, key_type, created_at, False),
            )
            if inserted.rowcount != 1:
                raise KeyExistsError(name)
            self._add_version(execute, name, 1, created_at, wrap)
            self._notify(execute, name)
            record = self._read(execute, name)
        assert record is not None
        return record

    def rotate(self, name: str, wrap: Wrapper, expected_primary: int | None = None) -> KeyRecord:
        """A new primary version; with `expected_primary`, only if the primary is still that
        one (two instances exhausting one nonce budget at once rotate once)."""
        with self._transaction() as execute:
            record = self._read(execute, name, lock=True)
            if record is None:
                raise KeyNotFoundError(name)
            if expected_primary is not None and record.primary_version != expected_primary:
                return record
            version = record.primary_version + 1
            self._add_version(execute, name, version, now(), wrap)
            execute(
                "UPDATE archcrypt_keys SET primary_version = ?, revision = revision + 1 "
                "WHERE name = ?",
                (version, name),
            )
            self._notify(execute, name)
            updated = self._read(execute, name)
        assert updated is not None
        return updated

    def update(
        self,
        name: str,
        min_decryption_version: int | None = None,
        deletion_allowed: bool | None = None,
    ) -> KeyRecord:
        with self._transaction() as execute:
            record = self._read(execute, name, lock=True)
            if record is None:
                raise KeyNotFoundError(name)
            minimum = record.min_decryption_version
            if min_decryption_version is not None:
                if not 1 <= min_decryption_version <= record.primary_version:
                    raise InvalidUpdateError(
                        f"min_decryption_version must be between 1 and the primary version "
                        f"({record.primary_version}), got {min_decryption_version}"
                    )
                minimum = min_decryption_version
            allowed = record.deletion_allowed if deletion_allowed is None else deletion_allowed
            execute(
                "UPDATE archcrypt_keys SET min_decryption_version = ?, deletion_allowed = ?, "
                "revision = revision + 1 WHERE name = ?",
                (minimum, allowed, name),
            )
            self._notify(execute, name)
            updated = self._read(execute, name)
        assert updated is not None
        return updated

    def delete(self, name: str) -> None:
        with self._transaction() as execute:
            record = self._read(execute, name, lock=True)
            if record is None:
                raise KeyNotFoundError(name)
            if not record.deletion_allowed:
                raise DeletionNotAllowedError(name)
            execute("DELETE FROM archcrypt_key_versions WHERE name = ?", (name,))
            execute("DELETE FROM archcrypt_keys WHERE name = ?", (name,))
            self._notify(execute, name)

    def reserve_nonces(self, name: str, version: int, count: int, budget: int) -> tuple[int, int]:
        """Claim up to `count` nonces of the version's budget: (first index, how many were
        granted); 0 granted once the budget is spent. A claimed nonce is never granted again,
        so instances that crash only waste budget, never share it."""
        with self._transaction() as execute:
            row = execute(
                "SELECT nonces_reserved FROM archcrypt_key_versions WHERE name = ? AND version = ?"
                + self.lock_clause,
                (name, version),
            ).fetchone()
            if row is None:
                raise KeyNotFoundError(name)
            start = int(row[0])
            granted = max(0, min(count, budget - start))
            if granted:
                execute(
                    "UPDATE archcrypt_key_versions SET nonces_reserved = ? "
                    "WHERE name = ? AND version = ?",
                    (start + granted, name, version),
                )
        return start, granted

    def add_usage(self, deltas: Mapping[tuple[str, int], int]) -> None:
        if not deltas:
            return
        with self._transaction() as execute:
            for (name, version), delta in sorted(deltas.items()):
                execute(
                    "UPDATE archcrypt_key_versions SET usage = usage + ? "
                    "WHERE name = ? AND version = ?",
                    (delta, name, version),
                )

    def rewrap_all(self, rewrap: Rewrapper) -> int:
        """Every version rewrapped in one transaction: all or nothing. Material is unchanged,
        so revisions stay and no instance needs to reload."""
        with self._transaction() as execute:
            rows = execute(
                "SELECT v.name, v.version, k.type, v.kek_id, v.wrapped "
                "FROM archcrypt_key_versions v JOIN archcrypt_keys k ON k.name = v.name "
                f"ORDER BY v.name, v.version{self.lock_clause}",
                (),
            ).fetchall()
            for name, version, key_type, kek_id, wrapped in rows:
                new_id, new_wrapped = rewrap(name, int(version), key_type, kek_id, bytes(wrapped))
                execute(
                    "UPDATE archcrypt_key_versions SET kek_id = ?, wrapped = ? "
                    "WHERE name = ? AND version = ?",
                    (new_id, new_wrapped, name, version),
                )
        return len(rows)
