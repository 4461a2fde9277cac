"""The embedded key store: one SQLite file in the data directory.

One connection per process, serialized by a lock (SQLite has one writer at a time anyway),
in WAL mode so that other processes (more workers, `archcrypt keys ...` while the server
runs) read without waiting. Writers take the write lock up front (BEGIN IMMEDIATE), which is
the row lock PostgreSQL gets from SELECT ... FOR UPDATE. synchronous=FULL: a created or
rotated key is on disk before it is used.

Changes by other processes show up through PRAGMA data_version, polled on a connection of
its own every POLL_SECONDS.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from .store import ChangeCallback, Execute, KeyStore, StoreError

logger = logging.getLogger("archcrypt")

DATABASE_NAME: Final = "keys.sqlite3"
POLL_SECONDS: Final = 0.2
BUSY_TIMEOUT_MS: Final = 10_000


class SqliteKeyStore(KeyStore):
    blob_type = "BLOB"

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / DATABASE_NAME
        self.description = f"the SQLite key store {self.path}"
        try:
            data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            # created 0600 before SQLite opens it; its -wal and -shm files copy the mode
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            self._conn = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open {self.description}: {exc}") from None
        self._lock = threading.Lock()
        with self._transaction() as execute:
            self._create_schema(execute)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[Execute]:
        def execute(sql: str, params: Sequence[Any]) -> Any:
            return self._conn.execute(sql, params)

        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as exc:
                raise StoreError(f"{self.description}: {exc}") from None
            try:
                yield execute
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"{self.description}: {exc}") from None
            except BaseException:
                self._rollback()
                raise
            else:
                try:
                    self._conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._rollback()
                    raise StoreError(f"{self.description}: {exc}") from None

    def _rollback(self) -> None:
        """ROLLBACK unless SQLite ended the transaction itself: a COMMIT that fails with
        SQLITE_FULL or SQLITE_IOERR is rolled back automatically, and a ROLLBACK then raises
        "no transaction is active" in place of the real error (found by the disk-full drill,
        tests/drill/faults.py)."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                logger.warning("%s: rollback failed: %s", self.description, exc)

    def _notify(self, execute: Execute, name: str) -> None:
        pass  # other connections see the commit in PRAGMA data_version

    def watch(self, on_change: ChangeCallback, stop: threading.Event) -> None:
        conn = self._connect()
        try:
            last = conn.execute("PRAGMA data_version").fetchone()[0]
            while not stop.wait(POLL_SECONDS):
                try:
                    current = conn.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error as exc:
                    logger.warning("key store poll failed: %s", exc)
                    continue
                if current != last:
                    last = current
                    on_change(None)
        finally:
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
