"""crypto.digest_many (archcrypt_hash_many): many messages in one call, for every runnable
row of each hash's table, against hashlib; batch == map(single) as a property."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archcrypt import crypto

from .rows import HASH_TABLE, RUNNABLE, Rows, hash_params, using

# The padding edges of both block sizes, block +-1, and long ones that keep one lane
# busy while the others refill.
EDGES = [0, 1, 55, 56, 63, 64, 65, 111, 112, 119, 120, 127, 128, 129, 1000, 4113, 65543]
COUNTS = [1, 2, 3, 4, 5, 7, 8, 9, 17]


def _expected(algorithm: str, messages: list[bytes]) -> list[bytes]:
    return [hashlib.new(algorithm, m).digest() for m in messages]


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_equal_lengths_match_hashlib(algorithm: str, rows: Rows) -> None:
    rng = random.Random(f"many-equal-{algorithm}")
    with using(rows):
        for n in COUNTS:
            for length in EDGES[:-1]:
                messages = [rng.randbytes(length) for _ in range(n)]
                assert crypto.digest_many(algorithm, messages) == _expected(algorithm, messages), (
                    n,
                    length,
                )


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_different_lengths_match_hashlib(algorithm: str, rows: Rows) -> None:
    rng = random.Random(f"many-mixed-{algorithm}")
    with using(rows):
        for n in COUNTS:
            # every rotation: each lane finishes first, last and in between
            for r in range(len(EDGES)):
                lengths = [EDGES[(r + 5 * i) % len(EDGES)] for i in range(n)]
                messages = [rng.randbytes(length) for length in lengths]
                assert crypto.digest_many(algorithm, messages) == _expected(algorithm, messages), (
                    n,
                    lengths,
                )


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_unaligned_and_mixed_buffer_types(algorithm: str, rows: Rows) -> None:
    rng = random.Random(f"many-unaligned-{algorithm}")
    backing = rng.randbytes(70_000)
    views: list[bytes | bytearray | memoryview] = []
    for i in range(11):
        start, length = rng.randrange(1, 64), rng.choice(EDGES[:-1])
        chunk = memoryview(backing)[start : start + length]
        views.append(chunk if i % 3 == 0 else bytearray(chunk) if i % 3 == 1 else bytes(chunk))
    with using(rows):
        got = crypto.digest_many(algorithm, views)
    assert got == _expected(algorithm, [bytes(v) for v in views])


@pytest.mark.parametrize(("algorithm", "rows"), hash_params(("sha224", "sha256")))
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(messages=st.lists(st.binary(max_size=300), max_size=19))
def test_batch_is_map_of_single(algorithm: str, rows: Rows, messages: list[bytes]) -> None:
    with using(rows):
        assert crypto.digest_many(algorithm, messages) == [
            crypto.digest(algorithm, m) for m in messages
        ]


@pytest.mark.parametrize("algorithm", crypto.HASH_ALGORITHMS)
def test_every_row_by_name(algorithm: str) -> None:
    """Each row named explicitly: if dispatch lost a row, its name would fail here."""
    table = HASH_TABLE[algorithm]
    rng = random.Random(f"many-rows-{algorithm}")
    messages = [rng.randbytes(rng.choice(EDGES[:-1])) for _ in range(9)]
    expected = _expected(algorithm, messages)
    for impl in RUNNABLE[table]:
        with crypto.use_implementation(table, impl):
            assert crypto.digest_many(algorithm, messages) == expected, impl


def test_empty_batch_and_errors() -> None:
    assert crypto.digest_many("sha256", []) == []
    assert crypto.digest_many("sha256", [b""]) == [hashlib.sha256().digest()]
    with pytest.raises(crypto.UnknownAlgorithmError):
        crypto.digest_many("md5", [b"x"])
    with pytest.raises(TypeError):
        crypto.digest_many("sha256", [b"x", "not bytes"])  # type: ignore[list-item]
