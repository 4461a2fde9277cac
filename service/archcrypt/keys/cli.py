"""`archcrypt keys ...` and `archcrypt kek rotate`: the operator's side of named keys, against
the store the settings name (the same ARCHCRYPT_* variables as the server).

A running server notices what these commands change: PostgreSQL instances through NOTIFY,
SQLite through the database's change counter, within a second.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from .. import crypto
from ..config import Settings
from . import KeyConfigurationError, data_dir, open_key_service, open_store
from .errors import KeyExistsError, KeyNotFoundError, StoreError
from .kek import (
    EMBEDDED_KEK_NAME,
    Kek,
    KekError,
    KekRing,
    create_kek_file,
    load_kek_file,
    write_kek_file,
)
from .service import KeyService
from .store import KeyRecord, KeyStore
from .types import DEFAULT_KEY_TYPE, KEY_TYPES, valid_name


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from None


@contextmanager
def _failures() -> Iterator[None]:
    try:
        crypto.init()
        yield
    except (StoreError, KekError, KeyConfigurationError, crypto.ConfigurationError) as exc:
        raise click.ClickException(str(exc)) from None


def open_checked(settings: Settings) -> KeyService:
    """The key service, or a usage error that says what is wrong with the store or KEK."""
    with _failures():
        return open_key_service(settings)


@contextmanager
def _service() -> Iterator[KeyService]:
    service = open_checked(_settings())
    try:
        yield service
    finally:
        service.close()


def _metadata(record: KeyRecord, budget: int) -> dict[str, Any]:
    # the API's own shape, so a script can read either
    from ..api.keys import key_info

    return key_info(record, {}, budget).model_dump(mode="json")


def _print_keys(records: list[KeyRecord]) -> None:
    table = Table(title="Named keys")
    for column in ("name", "type", "primary", "min decrypt", "versions", "usage", "deletable"):
        table.add_column(column)
    for r in records:
        table.add_row(
            r.name,
            r.type,
            str(r.primary_version),
            str(r.min_decryption_version),
            str(len(r.versions)),
            str(sum(v.usage for v in r.versions)),
            "yes" if r.deletion_allowed else "no",
        )
    Console().print(table)


@click.group("keys")
def keys_group() -> None:
    """Named keys in the store ARCHCRYPT_KEYSTORE_URL or ARCHCRYPT_DATA_DIR names."""


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help='The API\'s JSON, {"keys": [...]}.')
def keys_list(as_json: bool) -> None:
    """Every key's metadata (never material)."""
    with _service() as service:
        records = service.store.list_keys()
    if as_json:
        budget = _settings().chacha20_nonce_budget
        click.echo(json.dumps({"keys": [_metadata(r, budget) for r in records]}, indent=2))
    else:
        _print_keys(records)


@keys_group.command("show")
@click.argument("name")
def keys_show(name: str) -> None:
    """One key's metadata as JSON, as GET /v1/keys/NAME gives it."""
    with _service() as service:
        try:
            record = service.record(name)
        except KeyNotFoundError:
            raise click.ClickException(f"no key named {name!r}") from None
    click.echo(json.dumps(_metadata(record, _settings().chacha20_nonce_budget), indent=2))


@keys_group.command("create")
@click.argument("name")
@click.option(
    "--type",
    "key_type",
    type=click.Choice(sorted(KEY_TYPES)),
    default=DEFAULT_KEY_TYPE,
    show_default=True,
)
def keys_create(name: str, key_type: str) -> None:
    """Create a key with one version."""
    if not valid_name(name):
        raise click.BadParameter("names match [a-z0-9][a-z0-9._-]{0,63}", param_hint="NAME")
    with _service() as service:
        try:
            record = service.create(name, key_type)
        except KeyExistsError:
            raise click.ClickException(f"a key named {name!r} exists already") from None
    click.echo(json.dumps(_metadata(record, _settings().chacha20_nonce_budget), indent=2))


@keys_group.command("rotate")
@click.argument("name")
def keys_rotate(name: str) -> None:
    """Add a version and make it primary."""
    with _service() as service:
        try:
            record = service.rotate(name)
        except KeyNotFoundError:
            raise click.ClickException(f"no key named {name!r}") from None
    click.echo(json.dumps(_metadata(record, _settings().chacha20_nonce_budget), indent=2))


# ---- kek ------------------------------------------------------------------------------------


@click.group("kek")
def kek_group() -> None:
    """The key-encryption key that wraps every stored version."""


def rewrap_under(store: KeyStore, unwrap: KekRing, wrap: KekRing) -> int:
    """Every version rewrapped under wrap.current, in one transaction."""

    def rewrap(
        name: str, version: int, key_type: str, kek_id: str, wrapped: bytes
    ) -> tuple[str, bytes]:
        material = unwrap.unwrap(kek_id, wrapped, name, version, key_type)
        return wrap.wrap(material, name, version, key_type)

    return store.rewrap_all(rewrap)


@kek_group.command("rotate")
@click.option(
    "--new-kek-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Wrap under the first KEK of this file (created with a fresh KEK, mode 0600, if it "
    "does not exist) instead of the first of ARCHCRYPT_KEK_FILE; then point ARCHCRYPT_KEK_FILE "
    "at it.",
)
def kek_rotate(new_kek_file: Path | None) -> None:
    """Rewrap every stored version under a new KEK, in one transaction.

    \b
    Embedded default (no ARCHCRYPT_KEK_FILE): a new KEK is generated into the data
    directory, kept there beside the old one until every version is rewrapped, then alone.
    With ARCHCRYPT_KEK_FILE: wraps under the file's first KEK (put the new one first and
    keep the old one after it while instances roll over), or under --new-kek-file's.
    Run it again after a rollout: it is idempotent and reports what each KEK wraps.
    """
    settings = _settings()
    with _failures():
        store, ring = open_store(settings)
        try:
            before = store.kek_usage()
            if new_kek_file is not None:
                if create_kek_file(new_kek_file, [Kek.generate()]):
                    click.echo(f"generated a new KEK in {new_kek_file} (mode 0600)")
                target = load_kek_file(new_kek_file)
                unwrap = KekRing([*target.keks, *ring.keks], f"{ring.source} and {new_kek_file}")
                count = rewrap_under(store, unwrap, target)
                where = f"{new_kek_file}: set ARCHCRYPT_KEK_FILE={new_kek_file}"
            elif settings.kek_file is None:
                path = data_dir(settings) / EMBEDDED_KEK_NAME
                fresh = Kek.generate()
                # new first and the old kept until the transaction is in: a crash in between
                # leaves a file that still unwraps every row, and running this again finishes
                write_kek_file(path, [fresh, *ring.keks])
                target = KekRing([fresh], str(path))
                count = rewrap_under(store, KekRing([fresh, *ring.keks], str(path)), target)
                write_kek_file(path, [fresh])
                where = str(path)
            else:
                target = KekRing([ring.current], str(settings.kek_file))
                count = rewrap_under(store, ring, target)
                where = (
                    f"{settings.kek_file} (the first KEK); the others there can be removed "
                    "once every instance runs with this file"
                )
            after = store.kek_usage()
        finally:
            store.close()
    click.echo(f"rewrapped {count} key versions under KEK {target.current.id}, in {where}")
    click.echo(f"versions per KEK before: {_counts(before)}; after: {_counts(after)}")


def _counts(usage: dict[str, int]) -> str:
    return ", ".join(f"{kid}={n}" for kid, n in sorted(usage.items())) or "none"
