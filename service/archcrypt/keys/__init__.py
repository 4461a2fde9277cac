"""Named keys: versioned, rotated, stored wrapped under a KEK in SQLite (embedded default)
or PostgreSQL (replicas), used through the cache of KeyService.

The routes are in archcrypt.api.keys, the commands in archcrypt.keys.cli.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Settings
from .kek import KekError, KekRing, embedded_kek, load_kek_file
from .service import KeyService, LoadedKey
from .store import KeyRecord, KeyStore, StoreError
from .types import DEFAULT_KEY_TYPE, KEY_TYPES, NAME_PATTERN, KeyType

__all__ = [
    "DEFAULT_KEY_TYPE",
    "KEY_TYPES",
    "NAME_PATTERN",
    "KekError",
    "KeyRecord",
    "KeyService",
    "KeyStore",
    "KeyType",
    "LoadedKey",
    "StoreError",
    "default_data_dir",
    "open_key_service",
    "open_store",
]


class KeyConfigurationError(Exception):
    """Settings that cannot give a usable key store."""


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/archcrypt, else ~/.local/share/archcrypt (the XDG base directory spec)."""
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "archcrypt"


def data_dir(settings: Settings) -> Path:
    return settings.data_dir if settings.data_dir is not None else default_data_dir()


def keystore_url(settings: Settings) -> str | None:
    if settings.keystore_url is not None:
        return settings.keystore_url.get_secret_value()
    if settings.keystore_url_file is None:
        return None
    try:
        url = settings.keystore_url_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyConfigurationError(
            f"cannot read ARCHCRYPT_KEYSTORE_URL_FILE {settings.keystore_url_file}: {exc}"
        ) from None
    if not url:
        raise KeyConfigurationError(f"{settings.keystore_url_file} is empty")
    return url


def open_store(settings: Settings) -> tuple[KeyStore, KekRing]:
    """The store and the KEK ring the settings name."""
    url = keystore_url(settings)
    if url is not None:
        if settings.kek_file is None:
            # Each replica would otherwise make up a KEK of its own.
            raise KeyConfigurationError(
                "ARCHCRYPT_KEYSTORE_URL needs ARCHCRYPT_KEK_FILE: instances sharing a key store "
                "must share its KEK (a generated KEK is for the embedded store only)"
            )
        ring = load_kek_file(settings.kek_file)
        from .postgres import PostgresKeyStore

        return PostgresKeyStore(url), ring
    directory = data_dir(settings)
    from .sqlite import SqliteKeyStore

    store = SqliteKeyStore(directory)
    try:
        ring = load_kek_file(settings.kek_file) if settings.kek_file else embedded_kek(directory)
    except BaseException:
        store.close()
        raise
    return store, ring


def open_key_service(settings: Settings) -> KeyService:
    store, ring = open_store(settings)
    service = KeyService(
        store,
        ring,
        nonce_budget=settings.chacha20_nonce_budget,
        on_budget_exhausted=settings.nonce_budget_exhausted,
    )
    try:
        service.check_keks()
    except BaseException:
        store.close()
        raise
    return service
