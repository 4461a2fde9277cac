"""Every implementation this CPU can run, as pytest parameters.

An operation depends on one or more dispatch tables (the AEAD composes the chacha20
and poly1305 rows); its parameters are the product of their runnable rows, so a SIMD
row added to a rows.h is tested here without touching the tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager

import pytest

from archcrypt import crypto

REPORT = crypto.backends()
RUNNABLE: Mapping[str, tuple[str, ...]] = {
    algorithm.name: tuple(i.name for i in algorithm.implementations if i.runnable)
    for algorithm in REPORT.algorithms
}

# Which dispatch tables an operation runs through.
HASH_TABLE = {"sha224": "sha256", "sha256": "sha256", "sha384": "sha512", "sha512": "sha512"}
AEAD_TABLES = ("chacha20-poly1305", "chacha20", "poly1305")

Rows = tuple[tuple[str, str], ...]


def combos(*tables: str) -> list[Rows]:
    return [
        tuple(zip(tables, choice, strict=True))
        for choice in itertools.product(*(RUNNABLE[t] for t in tables))
    ]


def rows_id(rows: Rows) -> str:
    return "+".join(f"{table}={impl}" for table, impl in rows)


def params(*tables: str) -> list[object]:
    """pytest.param per combination of runnable rows of the tables."""
    return [pytest.param(r, id=rows_id(r)) for r in combos(*tables)]


def hash_params(algorithms: tuple[str, ...] = crypto.HASH_ALGORITHMS) -> list[object]:
    """(hash name, rows) for every hash and every runnable row of its table."""
    return [
        pytest.param(name, r, id=f"{name}-{rows_id(r)}")
        for name in algorithms
        for r in combos(HASH_TABLE[name])
    ]


@contextmanager
def using(rows: Rows) -> Iterator[None]:
    """Run the block with these rows in effect on this thread."""
    with ExitStack() as stack:
        for table, impl in rows:
            stack.enter_context(crypto.use_implementation(table, impl))
        yield
