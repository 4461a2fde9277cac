"""KeyService: named keys as the routes and the CLI use them.

- Admin operations (create, rotate, update, delete) go straight to the store; material is
  drawn from the OS CSPRNG and wrapped under the KEK before it reaches the store.
- Keys in use are cached in memory, unwrapped, one immutable LoadedKey per name, so a seal
  or an open costs no database round trip. Another instance's change reaches the cache
  through the store's watch (PostgreSQL LISTEN/NOTIFY, SQLite data_version); an open of a
  version newer than the cache knows reloads the key first, so only seals can lag (by that
  notification's latency). Every RESYNC_SECONDS the whole cache is checked against the
  store's revisions anyway.
- chacha20-poly1305 versions have a budget of random nonces (2^32 by default, see types.py).
  Each instance claims nonces from the store in blocks before it uses them, so all instances
  together never exceed the budget; at the budget the key is rotated (once, even when
  several instances get there together) or, with ARCHCRYPT_NONCE_BUDGET_EXHAUSTED=refuse,
  seals are refused until an operator rotates it.
- Usage (seals and MACs per version) is counted in memory and added to the store every
  FLUSH_SECONDS and at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, TypeVar

import anyio.to_thread

from .errors import (
    KeyNotFoundError,
    KeyTypeMismatchError,
    KeyUnavailableError,
    NonceBudgetExhaustedError,
    StoreError,
    UnknownVersionError,
    VersionRetiredError,
)
from .kek import KekError, KekRing
from .store import KeyRecord, KeyStore, PrimaryLevel
from .types import KEY_TYPES, KeyOperation, KeyType

logger = logging.getLogger("archcrypt")

FLUSH_SECONDS: Final = 1.0
LEVELS_SECONDS: Final = 5.0
RESYNC_SECONDS: Final = 30.0
# A name the store does not have is remembered this long, so a client asking for it in a
# loop costs one query a second, not one per request; a notification for it ends this early.
MISSING_TTL_SECONDS: Final = 1.0
MAX_NONCE_BLOCK: Final = 65_536

BudgetAction = Literal["rotate", "refuse"]
T = TypeVar("T")


class Usage:
    """Counts of seals or MACs not yet added to the store, by key and version."""

    def __init__(self, counts: Mapping[tuple[str, int], int]) -> None:
        self._counts = dict(counts)

    def of(self, name: str) -> dict[int, int]:
        return {v: n for (k, v), n in self._counts.items() if k == name}


@dataclass(frozen=True)
class LoadedKey:
    name: str
    type: KeyType
    created_at: str
    revision: int
    primary_version: int
    min_decryption_version: int
    deletion_allowed: bool
    materials: Mapping[int, bytes]

    def __repr__(self) -> str:  # never the material
        return f"LoadedKey({self.name!r}, {self.type.name}, primary={self.primary_version})"

    def require(self, operation: KeyOperation) -> None:
        if operation not in self.type.operations:
            raise KeyTypeMismatchError(self.name, self.type.name, operation)


class _NonceBlock:
    __slots__ = ("end", "next")

    def __init__(self, start: int, end: int) -> None:
        self.next, self.end = start, end

    def take(self) -> bool:
        if self.next < self.end:
            self.next += 1
            return True
        return False


class KeyService:
    def __init__(
        self,
        store: KeyStore,
        ring: KekRing,
        *,
        nonce_budget: int,
        on_budget_exhausted: BudgetAction = "rotate",
    ) -> None:
        self.store = store
        self.ring = ring
        self.nonce_budget = nonce_budget
        self.on_budget_exhausted = on_budget_exhausted
        self.nonce_block = max(1, min(MAX_NONCE_BLOCK, nonce_budget // 1024))
        self._cache: dict[str, LoadedKey] = {}
        self._missing: dict[str, float] = {}
        # When a version above a key's cached primary last made it reload (by key name, so
        # bounded by the names the store has held): a client sending made-up versions in a
        # loop costs one store query a MISSING_TTL_SECONDS per key, not one per request.
        self._reloaded_above: dict[str, float] = {}
        # by (name, created_at, version): a key deleted and created again starts afresh
        self._blocks: dict[tuple[str, str, int], _NonceBlock] = {}
        self._reserve_locks: dict[str, asyncio.Lock] = {}
        self._usage: dict[tuple[str, int], int] = {}
        self._usage_lock = threading.Lock()  # the counts (taken on the event loop: brief)
        self._flush_lock = threading.Lock()  # a flush's swap and store write, as one
        self.levels: tuple[PrimaryLevel, ...] = ()
        self._levels_stale = False
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ---- lifecycle ------------------------------------------------------------------------

    def check_keks(self) -> None:
        """Refuse to run when the store holds material wrapped under a KEK this instance lacks:
        those keys would fail at first use instead."""
        unknown = {kid: n for kid, n in self.store.kek_usage().items() if kid not in self.ring.ids}
        if unknown:
            listed = ", ".join(f"{kid} ({n} versions)" for kid, n in sorted(unknown.items()))
            raise KekError(
                f"{self.store.description} holds material wrapped under KEK {listed}, which "
                f"{self.ring.source} does not hold; add that KEK to the file (after the current "
                "one) or finish the rotation with `archcrypt kek rotate`"
            )

    def start(self) -> None:
        """The watch and flush threads (the service; the CLI runs without them)."""
        self._refresh_levels()
        for target, name in (
            (self._watch, "archcrypt-keys-watch"),
            (self._flusher, "archcrypt-keys-flush"),
        ):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()
        try:
            self.flush_usage()
        except StoreError as exc:
            logger.warning("usage counts not saved at shutdown: %s", exc)
        self.store.close()

    def _watch(self) -> None:
        try:
            self.store.watch(self._changed, self._stop)
        except Exception:
            logger.exception("key store watch stopped")

    def _flusher(self) -> None:
        last_levels = last_resync = time.monotonic()
        while not self._stop.wait(FLUSH_SECONDS):
            try:
                self.flush_usage()
                now = time.monotonic()
                if self._levels_stale or now - last_levels >= LEVELS_SECONDS:
                    last_levels, self._levels_stale = now, False
                    self._refresh_levels()
                if now - last_resync >= RESYNC_SECONDS:
                    last_resync = now
                    self._changed(None)
            except StoreError as exc:
                logger.warning("key store maintenance failed: %s", exc)
            except Exception:
                logger.exception("key store maintenance failed")

    def _refresh_levels(self) -> None:
        self.levels = tuple(self.store.primary_levels())

    # ---- the cache ------------------------------------------------------------------------

    def _unwrap(self, record: KeyRecord) -> LoadedKey:
        key_type = KEY_TYPES[record.type]  # type: ignore[index]
        try:
            materials = {
                v.version: self.ring.unwrap(
                    v.kek_id, v.wrapped, record.name, v.version, record.type
                )
                for v in record.versions
            }
        except KekError as exc:
            raise KeyUnavailableError(str(exc), name=record.name) from None
        return LoadedKey(
            record.name,
            key_type,
            record.created_at,
            record.revision,
            record.primary_version,
            record.min_decryption_version,
            record.deletion_allowed,
            MappingProxyType(materials),
        )

    def _install(self, record: KeyRecord) -> LoadedKey:
        loaded = self._unwrap(record)
        cached = self._cache.get(record.name)
        # A slower reader must not put back an older state than one already installed.
        if cached is None or (loaded.created_at, loaded.revision) >= (
            cached.created_at,
            cached.revision,
        ):
            self._cache[record.name] = loaded
            self._missing.pop(record.name, None)
            return loaded
        return cached

    def load(self, name: str) -> LoadedKey:
        """From the store into the cache (blocking: a worker thread or the CLI)."""
        record = self.store.get(name)
        if record is None:
            self._cache.pop(name, None)
            self._missing[name] = time.monotonic()
            raise KeyNotFoundError(name)
        return self._install(record)

    def _changed(self, name: str | None) -> None:
        """The watch thread's callback: reload what changed, drop what is gone."""
        self._levels_stale = True
        if name is not None:
            self._missing.pop(name, None)
            if name in self._cache:
                try:
                    self.load(name)
                except KeyNotFoundError:
                    pass
                except KeyUnavailableError as exc:
                    logger.error("%s", exc)
            return
        self._missing.clear()
        revisions = self.store.revisions()
        for cached_name, cached in list(self._cache.items()):
            revision = revisions.get(cached_name)
            if revision is None:
                self._cache.pop(cached_name, None)
            elif revision != cached.revision:
                with contextlib.suppress(KeyNotFoundError, KeyUnavailableError):
                    self.load(cached_name)

    async def key(self, name: str) -> LoadedKey:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        missing_since = self._missing.get(name)
        if missing_since is not None and time.monotonic() - missing_since < MISSING_TTL_SECONDS:
            raise KeyNotFoundError(name)
        return await anyio.to_thread.run_sync(self.load, name)

    async def material(self, key: LoadedKey, version: int) -> tuple[LoadedKey, bytes]:
        """The material of `version` for opening or verifying, after the policy check. A
        version above the cached primary may be a rotation not yet seen here: reload once (at
        most once a MISSING_TTL_SECONDS per key)."""
        if version > key.primary_version:
            now = time.monotonic()
            if now - self._reloaded_above.get(key.name, -MISSING_TTL_SECONDS) >= (
                MISSING_TTL_SECONDS
            ):
                self._reloaded_above[key.name] = now
                key = await anyio.to_thread.run_sync(self.load, key.name)
        if version < key.min_decryption_version:
            raise VersionRetiredError(key.name, version, key.min_decryption_version)
        material = key.materials.get(version)
        if material is None:
            raise UnknownVersionError(key.name, version)
        return key, material

    # ---- sealing versions and their nonce budget ------------------------------------------

    async def sealing_version(self, key: LoadedKey) -> tuple[LoadedKey, int]:
        """The version a new seal or MAC uses (the primary), with one nonce of its budget
        claimed for a chacha20-poly1305 key."""
        if not key.type.nonce_budget:
            return key, key.primary_version
        while True:
            version = key.primary_version
            block = self._blocks.get((key.name, key.created_at, version))
            if block is not None and block.take():
                return key, version
            lock = self._reserve_locks.setdefault(key.name, asyncio.Lock())
            async with lock:
                block = self._blocks.get((key.name, key.created_at, version))
                if block is not None and block.take():
                    return key, version
                start, granted = await anyio.to_thread.run_sync(
                    self.store.reserve_nonces,
                    key.name,
                    version,
                    self.nonce_block,
                    self.nonce_budget,
                )
                if granted:
                    self._blocks[key.name, key.created_at, version] = _NonceBlock(
                        start, start + granted
                    )
                    self._note_level(key, version, start + granted)
                    continue
                if self.on_budget_exhausted == "refuse":
                    raise NonceBudgetExhaustedError(key.name, version, self.nonce_budget)
                logger.warning(
                    "key %r version %d reached its nonce budget (%d); rotating",
                    key.name,
                    version,
                    self.nonce_budget,
                )
                rotate = functools.partial(
                    self.store.rotate, key.name, self._wrapper(key.name, key.type), version
                )
                record = await anyio.to_thread.run_sync(rotate)
                key = self._install(record)
                self._blocks.pop((key.name, key.created_at, version), None)

    def _note_level(self, key: LoadedKey, version: int, reserved: int) -> None:
        levels = [lv for lv in self.levels if lv.name != key.name]
        levels.append(PrimaryLevel(key.name, key.type.name, version, reserved))
        self.levels = tuple(sorted(levels, key=lambda lv: lv.name))

    # ---- usage ----------------------------------------------------------------------------

    def count_use(self, name: str, version: int, count: int = 1) -> None:
        with self._usage_lock:
            self._usage[name, version] = self._usage.get((name, version), 0) + count

    def with_usage(self, read: Callable[[], T]) -> tuple[T, Usage]:
        """read() (a store read), and the counts not yet in the store at that moment: a flush
        cannot run in between, so a count is never in neither nor in both."""
        with self._flush_lock:
            result = read()
            with self._usage_lock:
                return result, Usage(self._usage)

    def flush_usage(self) -> None:
        with self._flush_lock:
            with self._usage_lock:
                pending, self._usage = self._usage, {}
            if not pending:
                return
            try:
                self.store.add_usage(pending)
            except StoreError:
                self.count_back(pending)
                raise

    def count_back(self, pending: Mapping[tuple[str, int], int]) -> None:
        with self._usage_lock:
            for key, count in pending.items():
                self._usage[key] = self._usage.get(key, 0) + count

    # ---- administration (blocking) --------------------------------------------------------

    def _wrapper(self, name: str, key_type: KeyType):  # type: ignore[no-untyped-def]
        def wrap(version: int) -> tuple[str, bytes]:
            material = secrets.token_bytes(key_type.material_size)
            return self.ring.wrap(material, name, version, key_type.name)

        return wrap

    def create(self, name: str, key_type: str) -> KeyRecord:
        record = self.store.create(name, key_type, self._wrapper(name, KEY_TYPES[key_type]))  # type: ignore[index]
        self._missing.pop(name, None)
        return record

    def rotate(self, name: str) -> KeyRecord:
        record = self.store.get(name)
        if record is None:
            raise KeyNotFoundError(name)
        updated = self.store.rotate(name, self._wrapper(name, KEY_TYPES[record.type]))  # type: ignore[index]
        if name in self._cache:
            self._install(updated)
        return updated

    def update(
        self, name: str, min_decryption_version: int | None, deletion_allowed: bool | None
    ) -> KeyRecord:
        updated = self.store.update(name, min_decryption_version, deletion_allowed)
        if name in self._cache:
            self._install(updated)
        return updated

    def delete(self, name: str) -> None:
        self.store.delete(name)
        self._cache.pop(name, None)
        self._missing[name] = time.monotonic()
        with self._usage_lock:
            for key in [k for k in self._usage if k[0] == name]:
                del self._usage[key]

    def record(self, name: str) -> KeyRecord:
        record = self.store.get(name)
        if record is None:
            raise KeyNotFoundError(name)
        return record
