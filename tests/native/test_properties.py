"""Properties (EDGE-CASES.md 4-5): incremental == one-shot at every split, memoryview and
unaligned inputs == bytes, aliased inputs, copy() independence, for every runnable row."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archcrypt import crypto

from . import reference
from .rows import AEAD_TABLES, HASH_TABLE, Rows, combos, hash_params, params, rows_id, using

PROPERTY_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

MESSAGE = random.Random("properties").randbytes(300)
SPLITS = [1, 15, 16, 17, 63, 64, 65, 111, 112, 127, 128, 129]


def _streams() -> list[object]:
    """(label, factory, one-shot, rows) for Hash/Hmac/Poly1305 and every runnable row."""
    key = random.Random("stream-key").randbytes(32)
    out: list[object] = []
    for name in crypto.HASH_ALGORITHMS:
        for rows in combos(HASH_TABLE[name]):

            def hash_factory(n: str = name) -> crypto.Hash:
                return crypto.Hash(n)

            def hash_once(m: bytes, n: str = name) -> bytes:
                return crypto.digest(n, m)

            def hmac_factory(n: str = name) -> crypto.Hmac:
                return crypto.Hmac(n, key)

            def hmac_once(m: bytes, n: str = name) -> bytes:
                return crypto.mac(f"hmac-{n}", key, m)

            out.append(pytest.param(hash_factory, hash_once, rows, id=f"{name}-{rows_id(rows)}"))
            out.append(
                pytest.param(hmac_factory, hmac_once, rows, id=f"hmac-{name}-{rows_id(rows)}")
            )
    for rows in combos("poly1305"):

        def poly_factory() -> crypto.Poly1305:
            return crypto.Poly1305(key)

        def poly_once(m: bytes) -> bytes:
            return crypto.mac("poly1305", key, m)

        out.append(pytest.param(poly_factory, poly_once, rows, id=f"poly1305-{rows_id(rows)}"))
    return out


Factory = Callable[[], crypto.Hash | crypto.Hmac | crypto.Poly1305]
OneShot = Callable[[bytes], bytes]


@pytest.mark.parametrize(("factory", "once", "rows"), _streams())
def test_incremental_equals_one_shot_at_every_split(
    factory: Factory, once: OneShot, rows: Rows
) -> None:
    with using(rows):
        expected = once(MESSAGE)
        for i in range(len(MESSAGE) + 1):
            ctx = factory()
            ctx.update(MESSAGE[:i])
            ctx.update(MESSAGE[i:])
            assert ctx.finalize() == expected, i
        # three pieces around block and SIMD-batch boundaries
        for i in SPLITS:
            for j in SPLITS:
                ctx = factory()
                ctx.update(MESSAGE[:i])
                ctx.update(b"")
                ctx.update(MESSAGE[i : i + j])
                ctx.update(MESSAGE[i + j :])
                assert ctx.finalize() == expected, (i, j)


@pytest.mark.parametrize(("factory", "once", "rows"), _streams())
@PROPERTY_SETTINGS
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=8))
def test_incremental_random_chunks(
    factory: Factory, once: OneShot, rows: Rows, data: bytes, cuts: list[int]
) -> None:
    with using(rows):
        ctx = factory()
        previous = 0
        for cut in sorted(c % (len(data) + 1) for c in cuts):
            ctx.update(data[previous:cut])
            previous = cut
        ctx.update(memoryview(data)[previous:])
        assert ctx.finalize() == once(data)


# ---- memoryview, unaligned and aliased inputs --------------------------------------------


def _hmac_keyed_by_message(algorithm: str, m: bytes | bytearray | memoryview) -> bytes:
    return crypto.mac(algorithm, m, m)


def _operations() -> list[object]:
    """name -> (function of one message, rows); keys and nonces fixed."""
    rng = random.Random("operations")
    key32, nonce12, nonce24 = rng.randbytes(32), rng.randbytes(12), rng.randbytes(24)
    aad = rng.randbytes(21)
    ops: list[object] = []

    def add(name: str, fn: Callable[[bytes | bytearray | memoryview], bytes], *tables: str) -> None:
        for rows in combos(*tables):
            ops.append(pytest.param(fn, rows, id=f"{name}-{rows_id(rows)}"))

    add(
        "seal",
        lambda m: crypto.aead_seal("chacha20-poly1305", key32, nonce12, m, aad),
        *AEAD_TABLES,
    )
    add(
        "xseal",
        lambda m: crypto.aead_seal("xchacha20-poly1305", key32, nonce24, m, aad),
        *AEAD_TABLES,
    )
    add(
        "seal-aad",
        lambda m: crypto.aead_seal("chacha20-poly1305", key32, nonce12, b"x", m),
        *AEAD_TABLES,
    )
    add(
        "open",
        lambda m: crypto.aead_open(
            "chacha20-poly1305",
            key32,
            nonce12,
            crypto.aead_seal("chacha20-poly1305", key32, nonce12, m, aad),
            aad,
        ),
        *AEAD_TABLES,
    )
    add("chacha20", lambda m: crypto.chacha20_xor(key32, nonce12, m, 7), "chacha20")
    add("poly1305", lambda m: crypto.mac("poly1305", key32, m), "poly1305")
    add(
        "poly1305-key",
        lambda m: crypto.mac("poly1305", m[:32] if len(m) >= 32 else key32, m),
        "poly1305",
    )
    for name in crypto.HASH_ALGORITHMS:
        table = HASH_TABLE[name]
        add(name, functools.partial(crypto.digest, name), table)
        add(f"hmac-{name}", functools.partial(_hmac_keyed_by_message, f"hmac-{name}"), table)
    add(
        "camellia", lambda m: crypto.camellia_ecb_encrypt(key32, m[: len(m) // 16 * 16]), "camellia"
    )
    return ops


@pytest.mark.parametrize(("operation", "rows"), _operations())
def test_memoryview_and_unaligned_inputs(
    operation: Callable[[bytes | bytearray | memoryview], bytes], rows: Rows
) -> None:
    rng = random.Random("unaligned")
    with using(rows):
        for n in (0, 1, 16, 63, 64, 65, 255, 256, 513, 1025):
            msg = rng.randbytes(n)
            expected = operation(msg)
            assert operation(bytearray(msg)) == expected, n
            assert operation(memoryview(msg)) == expected, n
            backing = bytearray(rng.randbytes(n + 128))
            for offset in range(1, 64):
                backing[offset : offset + n] = msg
                view = memoryview(backing)[offset : offset + n]
                assert operation(view) == expected, (n, offset)


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_aliased_inputs(rows: Rows) -> None:
    """One buffer as key, nonce, plaintext and aad at once (the facade never writes inputs)."""
    buffer = bytearray(random.Random("alias").randbytes(200))
    view = memoryview(buffer)
    with using(rows):
        sealed = crypto.aead_seal("chacha20-poly1305", view[:32], view[8:20], view, view[3:50])
        expected = reference.chacha20poly1305_seal(
            bytes(buffer[:32]), bytes(buffer[8:20]), bytes(buffer), bytes(buffer[3:50])
        )
        assert sealed == expected
        assert bytes(view) == bytes(buffer)  # inputs untouched
        ct = bytearray(sealed)
        assert crypto.aead_open(
            "chacha20-poly1305", view[:32], view[8:20], memoryview(ct), view[3:50]
        ) == bytes(buffer)
        assert ct == bytearray(sealed)


# ---- copy() ------------------------------------------------------------------------------


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_hash_copy_is_independent(algorithm: str, rows: Rows) -> None:
    with using(rows):
        for split in (0, 1, 55, 56, 64, 111, 112, 128, 300):
            head, tail = MESSAGE[:split], MESSAGE[split:]
            original = crypto.Hash(algorithm)
            original.update(head)
            fork = original.copy()
            fork_of_fork = fork.copy()
            original.update(tail)
            fork.update(b"other")
            assert original.finalize() == reference.digest(algorithm, head + tail)
            assert fork.finalize() == reference.digest(algorithm, head + b"other")
            assert fork_of_fork.finalize() == reference.digest(algorithm, head)


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
@PROPERTY_SETTINGS
@given(first=st.binary(max_size=600), second=st.binary(max_size=600))
def test_hash_copy_property(algorithm: str, rows: Rows, first: bytes, second: bytes) -> None:
    with using(rows):
        h = crypto.Hash(algorithm)
        h.update(first)
        c = h.copy()
        c.update(second)
        assert h.finalize() == reference.digest(algorithm, first)
        assert c.finalize() == reference.digest(algorithm, first + second)


# ---- one context, many threads -----------------------------------------------------------


def test_shared_context_across_threads() -> None:
    """cffi drops the GIL inside C; the facade's lock keeps a shared context consistent."""
    h = crypto.Hash("sha256")
    chunk = b"\xa5" * 4096
    rounds = 200

    def work() -> None:
        for _ in range(rounds):
            h.update(chunk)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.finalize() == reference.digest("sha256", chunk * rounds * 4)
