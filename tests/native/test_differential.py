"""Differential tests against independent implementations (pyca/cryptography, hashlib,
hmac, pure Python) at the boundary lengths of shared/EDGE-CASES.md, for every runnable
implementation. Inputs come from seeded generators, so a failure reproduces."""

from __future__ import annotations

import random

import pytest

from archcrypt import crypto

from . import reference
from .rows import AEAD_TABLES, Rows, hash_params, params, using

EVERY_LENGTH = range(0, 1101)  # every ChaCha 4/8/16-block batch +-1 and 17 SHA-256 blocks
AAD_LENGTHS = range(0, 258)


def _around(points: list[int], deltas: tuple[int, ...] = (-1, 0, 1)) -> list[int]:
    return sorted({p + d for p in points for d in deltas if p + d >= 0})


# Whole ChaCha blocks up to 65 (sums of every SIMD width), and the powers of two where
# implementations chunk (the AEAD's L1-sized pass, 16 KiB, 64 KiB).
LONG_LENGTHS = [n for n in _around([64 * k for k in range(17, 66)]) if n > 1100] + _around(
    [4096 * k for k in (2, 3, 4, 5)] + [16384, 65536], (-65, -64, -17, -16, -15, -1, 0, 1, 15, 17)
)


def _rng(*seed: object) -> random.Random:
    return random.Random(repr(seed))


# ---- ChaCha20-Poly1305 -------------------------------------------------------------------


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_chacha20poly1305_every_length(rows: Rows) -> None:
    rng = _rng("aead-length")
    with using(rows):
        for n in EVERY_LENGTH:
            key, nonce, pt = rng.randbytes(32), rng.randbytes(12), rng.randbytes(n)
            aad = rng.randbytes(n % 37)
            expected = reference.chacha20poly1305_seal(key, nonce, pt, aad)
            assert crypto.aead_seal("chacha20-poly1305", key, nonce, pt, aad) == expected, n
            assert crypto.aead_open("chacha20-poly1305", key, nonce, expected, aad) == pt, n


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_chacha20poly1305_every_aad_length(rows: Rows) -> None:
    rng = _rng("aead-aad")
    with using(rows):
        for n in (0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257):
            for a in AAD_LENGTHS:
                key, nonce = rng.randbytes(32), rng.randbytes(12)
                pt, aad = rng.randbytes(n), rng.randbytes(a)
                expected = reference.chacha20poly1305_seal(key, nonce, pt, aad)
                sealed = crypto.aead_seal("chacha20-poly1305", key, nonce, pt, aad)
                assert sealed == expected, (n, a)
                assert crypto.aead_open("chacha20-poly1305", key, nonce, sealed, aad) == pt


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_chacha20poly1305_long_lengths(rows: Rows) -> None:
    rng = _rng("aead-long")
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    data = rng.randbytes(max(LONG_LENGTHS))
    with using(rows):
        for n in LONG_LENGTHS:
            pt, aad = data[:n], data[n % 300 : n % 300 + n % 29]
            expected = reference.chacha20poly1305_seal(key, nonce, pt, aad)
            assert crypto.aead_seal("chacha20-poly1305", key, nonce, pt, aad) == expected, n
            assert crypto.aead_open("chacha20-poly1305", key, nonce, expected, aad) == pt, n


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_chacha20poly1305_bad_tag_on_large_payload(rows: Rows) -> None:
    """CVE-2016-7054 failed exactly here: cleanup after a tag mismatch on a big input."""
    rng = _rng("aead-bad-tag")
    key, nonce, aad = rng.randbytes(32), rng.randbytes(12), rng.randbytes(13)
    with using(rows):
        for n in (1 << 16, (1 << 20) + 7):
            sealed = bytearray(reference.chacha20poly1305_seal(key, nonce, rng.randbytes(n), aad))
            for position in (n + 15, n, n - 1, 0):  # tag end, tag start, last and first byte
                sealed[position] ^= 0x80
                with pytest.raises(crypto.AuthenticationError):
                    crypto.aead_open("chacha20-poly1305", key, nonce, sealed, aad)
                sealed[position] ^= 0x80
            assert len(crypto.aead_open("chacha20-poly1305", key, nonce, sealed, aad)) == n


# ---- XChaCha20-Poly1305 (pyca has none: HChaCha20 in Python + pyca's AEAD) ---------------


def test_reference_hchacha20_matches_the_draft() -> None:
    """The reference used below is itself checked (draft-irtf-cfrg-xchacha 2.2.1)."""
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a0000000031415927")
    expected = "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"
    assert reference.hchacha20(key, nonce).hex() == expected


def test_hchacha20_random_inputs() -> None:
    rng = _rng("hchacha20")
    for _ in range(200):
        key, nonce = rng.randbytes(32), rng.randbytes(16)
        assert crypto.hchacha20(key, nonce) == reference.hchacha20(key, nonce)


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_xchacha20poly1305_differential(rows: Rows) -> None:
    rng = _rng("xchacha")
    with using(rows):
        for n in [*range(0, 300), *_around([511, 1024, 4096, 8192])]:
            key, nonce, pt = rng.randbytes(32), rng.randbytes(24), rng.randbytes(n)
            aad = rng.randbytes(n % 41)
            expected = reference.xchacha20poly1305_seal(key, nonce, pt, aad)
            assert crypto.aead_seal("xchacha20-poly1305", key, nonce, pt, aad) == expected, n
            assert crypto.aead_open("xchacha20-poly1305", key, nonce, expected, aad) == pt, n


# ---- raw ChaCha20 ------------------------------------------------------------------------


@pytest.mark.parametrize("rows", params("chacha20"))
def test_chacha20_every_length(rows: Rows) -> None:
    rng = _rng("chacha20")
    with using(rows):
        for n in [*EVERY_LENGTH, *LONG_LENGTHS]:
            key, nonce, data = rng.randbytes(32), rng.randbytes(12), rng.randbytes(n)
            counter = rng.choice((0, 1, rng.randrange(1 << 31)))
            expected = reference.chacha20_xor(key, nonce, data, counter)
            assert crypto.chacha20_xor(key, nonce, data, counter) == expected, (n, counter)


# ---- Poly1305 ----------------------------------------------------------------------------


@pytest.mark.parametrize("rows", params("poly1305"))
def test_poly1305_every_length(rows: Rows) -> None:
    rng = _rng("poly1305")
    with using(rows):
        for n in [*EVERY_LENGTH, *LONG_LENGTHS]:
            key, msg = rng.randbytes(32), rng.randbytes(n)
            assert crypto.mac("poly1305", key, msg) == reference.poly1305(key, msg), n


def _r_with_limbs(radix: int, pattern: str) -> int:
    """r (before clamping) with its radix-2^radix limbs all-ones or zero per `pattern`."""
    r = 0
    for i, bit in enumerate(pattern):
        if bit == "1":
            r |= ((1 << radix) - 1) << (radix * i)
    return r & ((1 << 128) - 1)


def _edge_keys() -> list[bytes]:
    """Keys whose r limbs (radix 2^26, 2^44, 2^64 after clamping) sit at 0 and at their
    maximum, alone and mixed, with s at 0 and at its maximum; plus r = 2 (donna #2)."""
    rs = {0, 2, 1, (1 << 128) - 1}
    for radix in (26, 44, 64):
        limbs = -(-128 // radix)
        for i in range(limbs):
            rs.add(_r_with_limbs(radix, "0" * i + "1" + "0" * (limbs - i - 1)))
            rs.add(_r_with_limbs(radix, "1" * i + "0" + "1" * (limbs - i - 1)))
    keys = []
    for r in sorted(rs):
        r &= reference.R_CLAMP
        for s in (0, (1 << 128) - 1):
            keys.append(r.to_bytes(16, "little") + s.to_bytes(16, "little"))
    return keys


@pytest.mark.parametrize("rows", params("poly1305"))
def test_poly1305_all_ones_input_edge_keys(rows: Rows) -> None:
    """Long all-0xFF messages stress lazy reduction and the final h >= p step."""
    lengths = [16, 17, 32, 63, 64, 65, 128, 129, 256, 2048, 2063, 4096, 16384 + 15]
    with using(rows):
        for key in _edge_keys():
            for n in lengths:
                msg = b"\xff" * n
                expected = reference.poly1305(key, msg)
                assert crypto.mac("poly1305", key, msg) == expected, (key.hex(), n)
                p = crypto.Poly1305(key)
                p.update(msg[:7])
                p.update(msg[7:])
                assert p.finalize() == expected, (key.hex(), n)


def test_reference_poly1305_maths_agrees_with_pyca() -> None:
    """The pure-Python formula and OpenSSL agree, so either can judge an edge case."""
    for key in _edge_keys()[:8]:
        for n in (0, 16, 2048):
            msg = b"\xff" * n
            assert reference.poly1305_maths(key, msg) == reference.poly1305(key, msg)


# ---- SHA-2 and HMAC ----------------------------------------------------------------------

HASH_LONG = _around(
    [b * k for b in (64, 128) for k in (4, 8, 16, 32, 64)] + [1 << 16, 1 << 20], (-1, 0, 1)
)


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_hash_every_length(algorithm: str, rows: Rows) -> None:
    """0..1100 covers the 55/56, 111/112 padding edges and 64/128-byte blocks in batches."""
    rng = _rng("hash", algorithm)
    data = rng.randbytes(max(HASH_LONG))
    with using(rows):
        for n in [*EVERY_LENGTH, *HASH_LONG]:
            msg = data[:n]
            assert crypto.digest(algorithm, msg) == reference.digest(algorithm, msg), n


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_hmac_key_and_message_lengths(algorithm: str, rows: Rows) -> None:
    """Keys 0..2 blocks + 1 (longer than a block are hashed first), messages across blocks."""
    rng = _rng("hmac", algorithm)
    block = 64 if algorithm in ("sha224", "sha256") else 128
    with using(rows):
        for key_len in range(0, 2 * block + 2):
            key = rng.randbytes(key_len)
            for n in (0, 1, block - 9, block - 8, block, block + 1, 3 * block + 5):
                msg = rng.randbytes(n)
                expected = reference.hmac_tag(algorithm, key, msg)
                assert crypto.mac(f"hmac-{algorithm}", key, msg) == expected, (key_len, n)
        for n in EVERY_LENGTH:
            key, msg = rng.randbytes(n % 150), rng.randbytes(n)
            expected = reference.hmac_tag(algorithm, key, msg)
            assert crypto.mac(f"hmac-{algorithm}", key, msg) == expected, n


# ---- Camellia ----------------------------------------------------------------------------

CAMELLIA_BLOCKS = [*range(0, 41), *_around([64, 128, 256, 1024])]


@pytest.mark.parametrize("key_size", crypto.CAMELLIA_KEY_SIZES)
@pytest.mark.parametrize("rows", params("camellia"))
def test_camellia_ecb_block_counts(rows: Rows, key_size: int) -> None:
    """0..40 blocks covers 2/4/8/16/32-block batches +-1; then larger batches."""
    rng = _rng("camellia", key_size)
    with using(rows):
        for blocks in CAMELLIA_BLOCKS:
            key, data = rng.randbytes(key_size), rng.randbytes(16 * blocks)
            expected = reference.camellia_ecb(key, data)
            assert crypto.camellia_ecb_encrypt(key, data) == expected, blocks
            assert crypto.camellia_ecb_decrypt(key, expected) == data, blocks
            decrypted = reference.camellia_ecb(key, data, decrypt=True)
            assert crypto.Camellia(key).decrypt_ecb(data) == decrypted, blocks
