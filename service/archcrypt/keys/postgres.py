"""The shared key store: PostgreSQL through psycopg 3, for replicas that share their keys.

Writes hold the key's row (SELECT ... FOR UPDATE) for their transaction and end with
pg_notify('archcrypt_keys', <name>), which PostgreSQL delivers at commit to every session
that LISTENs: each instance keeps one such session and reloads the key it names, so a
rotation made on one instance is used by the others as soon as the notification arrives
(milliseconds on a healthy network). After a reconnect the instance resynchronises every key,
since notifications sent while it was away are lost.

Creating a key is INSERT ... ON CONFLICT DO NOTHING on the primary key: two instances
creating one name at once get one row; the later transaction waits for the earlier and then
inserts nothing, which is its 409.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from .store import ChangeCallback, Execute, KeyStore, StoreError

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

logger = logging.getLogger("archcrypt")

CHANNEL: Final = "archcrypt_keys"
# pg_advisory_xact_lock key that serializes schema creation by instances starting together
_SCHEMA_LOCK: Final = 0x61726368  # "arch"
POOL_MAX: Final = 4
CONNECT_TIMEOUT_SECONDS: Final = 10
# How long a request waits for a pooled connection: a store that is down answers 503 after
# this, instead of holding the request for the pool's default 30 s.
POOL_WAIT_SECONDS: Final = 2.0
RECONNECT_SECONDS: Final = 1.0


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(url)
    except Exception:
        return "the PostgreSQL key store (unparsable URL)"
    params.pop("password", None)
    where = params.get("host", "localhost")
    port = params.get("port")
    return f"PostgreSQL {params.get('dbname', '')!s}@{where}{':' + str(port) if port else ''}"


class PostgresKeyStore(KeyStore):
    lock_clause = " FOR UPDATE"
    blob_type = "BYTEA"

    def __init__(self, url: str, timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        try:
            import psycopg
            import psycopg_pool
        except ImportError as exc:
            raise StoreError(
                f"ARCHCRYPT_KEYSTORE_URL needs psycopg 3 with libpq ({exc}); on platforms "
                "without a psycopg-binary wheel install libpq5"
            ) from None
        self._psycopg = psycopg
        self.url = url
        self.description = redact(url)
        self._pool: psycopg_pool.ConnectionPool[psycopg.Connection[Any]] = (
            psycopg_pool.ConnectionPool(
                url,
                min_size=1,
                max_size=POOL_MAX,
                kwargs={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
                # a connection broken by a database restart is replaced, not handed out
                check=psycopg_pool.ConnectionPool.check_connection,
                timeout=POOL_WAIT_SECONDS,
                open=False,
                name="archcrypt-keys",
            )
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except (psycopg_pool.PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to {self.description}: {exc}") from None
        with self._transaction() as execute:
            execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            self._create_schema(execute)

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[Execute]:
        psycopg = self._psycopg
        try:
            with self._pool.connection() as conn, conn.transaction():

                def execute(sql: str, params: Sequence[Any]) -> Any:
                    return conn.execute(sql.replace("?", "%s"), params)

                yield execute
        except psycopg.Error as exc:
            raise StoreError(f"{self.description}: {type(exc).__name__}: {exc}") from None
        except self._pool_errors() as exc:
            raise StoreError(f"{self.description}: {exc}") from None

    @staticmethod
    def _pool_errors() -> tuple[type[Exception], ...]:
        import psycopg_pool

        return (psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed)

    def _notify(self, execute: Execute, name: str) -> None:
        execute("SELECT pg_notify(?, ?)", (CHANNEL, name))

    def watch(self, on_change: ChangeCallback, stop: threading.Event) -> None:
        psycopg = self._psycopg
        first = True
        while not stop.is_set():
            conn: Any = None
            try:
                conn = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
                )
                conn.execute(f"LISTEN {CHANNEL}")
                if not first:
                    logger.info("key store notifications resumed; resynchronising every key")
                    on_change(None)
                first = False
                while not stop.is_set():
                    for notification in conn.notifies(timeout=0.5):
                        on_change(notification.payload)
            except psycopg.Error as exc:
                if stop.is_set():
                    break
                logger.warning(
                    "key store notifications from %s lost (%s); reconnecting",
                    self.description,
                    type(exc).__name__,
                )
                first = False
                stop.wait(RECONNECT_SECONDS)
            finally:
                if conn is not None:
                    conn.close()

    def close(self) -> None:
        self._pool.close()
