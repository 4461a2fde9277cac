"""archcrypt_hmac_many (many messages under one key, in one C call) for every runnable row
of each hash's table, against Python's hmac module; and its argument checks."""

from __future__ import annotations

import hmac
import random

import pytest

from archcrypt import crypto
from archcrypt.crypto._lib import ffi, lib

from .rows import Rows, hash_params, using

IDS = {"sha224": 0, "sha256": 1, "sha384": 2, "sha512": 3}
# Padding edges of both block sizes, block +-1, and a long one that keeps one lane busy.
EDGES = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 4113]
# Around the lane counts of the rows (2, 8, 16) and past two rounds of sixteen.
COUNTS = [1, 2, 3, 8, 9, 16, 17, 33]
# Empty, short, one block exactly, longer than a block (hashed first, RFC 2104).
KEY_LENGTHS = [0, 1, 32, 64, 65, 128, 129, 200]


def _hmac_many(algorithm: str, key: bytes, messages: list[bytes]) -> list[bytes]:
    n, size = len(messages), crypto.DIGEST_SIZES[algorithm]
    keep = [ffi.from_buffer(m) for m in messages]
    pointers = ffi.new("const uint8_t *[]", keep or 1)
    lengths = ffi.new("size_t[]", [len(m) for m in messages] or 1)
    out = ffi.new("uint8_t[]", n * size + 1)
    status = lib.archcrypt_hmac_many(IDS[algorithm], key, len(key), n, pointers, lengths, out)
    assert status == lib.ARCHCRYPT_OK
    raw = bytes(ffi.buffer(out, n * size + 1))
    assert raw[-1] == 0, "wrote past the last tag"
    return [raw[i * size : (i + 1) * size] for i in range(n)]


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_matches_the_hmac_module(algorithm: str, rows: Rows) -> None:
    rng = random.Random(f"hmac-many-{algorithm}")
    with using(rows):
        for n in COUNTS:
            key = rng.randbytes(rng.choice(KEY_LENGTHS))
            lengths = [EDGES[(r + 5 * n) % len(EDGES)] for r in range(n)]
            messages = [rng.randbytes(length) for length in lengths]
            expected = [hmac.digest(key, m, algorithm) for m in messages]
            assert _hmac_many(algorithm, key, messages) == expected, (n, len(key), lengths)


def test_arguments_are_checked_before_anything_is_written() -> None:
    out = ffi.new("uint8_t[]", 64)
    m = ffi.new("uint8_t[]", 1)
    pointers = ffi.new("const uint8_t *[]", [m, ffi.NULL])
    lengths = ffi.new("size_t[]", [1, 1])
    invalid = lib.ARCHCRYPT_ERR_INVALID_ARGUMENT
    assert lib.archcrypt_hmac_many(1, b"k", 1, 2, pointers, lengths, out) == invalid
    assert bytes(ffi.buffer(out, 64)) == bytes(64)
    assert lib.archcrypt_hmac_many(1, ffi.NULL, 1, 1, pointers, lengths, out) == invalid
    assert lib.archcrypt_hmac_many(99, b"k", 1, 1, pointers, lengths, out) == invalid
    assert lib.archcrypt_hmac_many(1, b"k", 1, 0, ffi.NULL, ffi.NULL, ffi.NULL) == lib.ARCHCRYPT_OK
