"""The IETF 32-bit block counter at its end (EDGE-CASES.md 3): equal to an independent
keystream where the blocks fit, refused where the counter would wrap, for every SIMD
width (1..17 blocks from each start)."""

from __future__ import annotations

import random

import pytest

from archcrypt import crypto

from . import reference
from .rows import Rows, params, using

LAST = 0xFFFFFFFF
KEY = random.Random("counter-key").randbytes(32)
NONCE = random.Random("counter-nonce").randbytes(12)


def _lengths(max_blocks: int) -> list[int]:
    out = {0, 1, 63}
    for blocks in range(1, max_blocks + 1):
        out.update({64 * blocks - 1, 64 * blocks, 64 * blocks + 1})
    return sorted(out)


def _fits(counter: int, length: int) -> bool:
    blocks = -(-length // 64)
    return blocks == 0 or counter + blocks - 1 <= LAST


@pytest.mark.parametrize("counter", [LAST - 1, LAST])
@pytest.mark.parametrize("rows", params("chacha20"))
def test_last_counters_one_to_three_blocks(rows: Rows, counter: int) -> None:
    with using(rows):
        for length in _lengths(3):
            data = bytes(range(256)) * (length // 256 + 1)
            data = data[:length]
            if _fits(counter, length):
                expected = reference.chacha20_xor(KEY, NONCE, data, counter)
                assert crypto.chacha20_xor(KEY, NONCE, data, counter) == expected, length
            else:
                with pytest.raises(crypto.MessageTooLongError):
                    crypto.chacha20_xor(KEY, NONCE, data, counter)


@pytest.mark.parametrize("rows", params("chacha20"))
def test_counter_end_through_every_batch_width(rows: Rows) -> None:
    """Starts 1..17 blocks before the end, calls of 1..17 blocks: each legal call equals
    the reference (no repeated keystream block), each wrapping one is refused."""
    zeros = bytes(64 * 18)
    with using(rows):
        for before_end in range(1, 18):
            counter = LAST - before_end + 1
            for length in _lengths(17):
                data = zeros[:length]
                if _fits(counter, length):
                    expected = reference.chacha20_xor(KEY, NONCE, data, counter)
                    got = crypto.chacha20_xor(KEY, NONCE, data, counter)
                    assert got == expected, (counter, length)
                else:
                    with pytest.raises(crypto.MessageTooLongError):
                        crypto.chacha20_xor(KEY, NONCE, data, counter)


@pytest.mark.parametrize("rows", params("chacha20"))
def test_last_block_is_not_block_zero(rows: Rows) -> None:
    """A kernel that wrapped silently would produce block 0's keystream."""
    with using(rows):
        block_last = crypto.chacha20_xor(KEY, NONCE, bytes(64), LAST)
        block_zero = crypto.chacha20_xor(KEY, NONCE, bytes(64), 0)
        assert block_last != block_zero
        two_blocks_before = crypto.chacha20_xor(KEY, NONCE, bytes(128), LAST - 1)
        assert two_blocks_before[64:] == block_last


def test_counter_range_is_checked() -> None:
    with pytest.raises(crypto.InvalidInputError):
        crypto.chacha20_xor(KEY, NONCE, b"x", LAST + 1)
    with pytest.raises(crypto.InvalidInputError):
        crypto.chacha20_xor(KEY, NONCE, b"x", -1)
    with pytest.raises(TypeError):
        crypto.chacha20_xor(KEY, NONCE, b"x", 1.0)  # type: ignore[arg-type]
    assert issubclass(crypto.MessageTooLongError, crypto.InvalidInputError)
    # the empty message needs no block, so any counter is legal
    assert crypto.chacha20_xor(KEY, NONCE, b"", LAST) == b""
