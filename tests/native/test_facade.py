"""The facade's contract: constants, error types, length checks, empty inputs, state."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

import archcrypt
from archcrypt import crypto
from archcrypt.crypto._lib import lib

from . import reference

KEY = bytes(range(32))
NONCES = {"chacha20-poly1305": bytes(12), "xchacha20-poly1305": bytes(24)}
ROOT = Path(__file__).resolve().parents[2]


def test_versions_agree() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert archcrypt.__version__ == project["version"] == crypto.version()


def test_constants_match_the_library() -> None:
    assert crypto.AEAD_ALGORITHMS == ("chacha20-poly1305", "xchacha20-poly1305")
    assert dict(crypto.AEAD_NONCE_SIZES) == {"chacha20-poly1305": 12, "xchacha20-poly1305": 24}
    assert (crypto.AEAD_KEY_SIZE, crypto.AEAD_TAG_SIZE) == (32, 16)
    assert crypto.MAC_ALGORITHMS == (
        "poly1305",
        "hmac-sha224",
        "hmac-sha256",
        "hmac-sha384",
        "hmac-sha512",
    )
    assert crypto.HASH_ALGORITHMS == ("sha224", "sha256", "sha384", "sha512")
    for hash_id, name in enumerate(crypto.HASH_ALGORITHMS):
        assert crypto.DIGEST_SIZES[name] == lib.archcrypt_hash_digest_size(hash_id)
        assert crypto.Hash(name).digest_size == crypto.DIGEST_SIZES[name]
        assert crypto.Hash(name).block_size == lib.archcrypt_hash_block_size(hash_id)
    assert lib.archcrypt_hash_digest_size(99) == 0
    assert crypto.CAMELLIA_KEY_SIZES == (16, 24, 32)
    assert crypto.CAMELLIA_BLOCK_SIZE == 16
    with pytest.raises(TypeError):
        crypto.AEAD_NONCE_SIZES["x"] = 1  # type: ignore[index]


def test_error_hierarchy() -> None:
    assert issubclass(crypto.InvalidInputError, ValueError)
    assert issubclass(crypto.MessageTooLongError, crypto.InvalidInputError)
    assert issubclass(crypto.UnknownAlgorithmError, LookupError)
    assert issubclass(crypto.UnknownImplementationError, LookupError)
    for cls in (
        crypto.InvalidInputError,
        crypto.AuthenticationError,
        crypto.UnknownAlgorithmError,
        crypto.UnknownImplementationError,
        crypto.UnsupportedImplementationError,
        crypto.ConfigurationError,
    ):
        assert issubclass(cls, crypto.ArchcryptError)
    assert not issubclass(crypto.AuthenticationError, ValueError)


def test_init_is_idempotent() -> None:
    crypto.init()
    crypto.init()


# ---- AEAD --------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", crypto.AEAD_ALGORITHMS)
def test_aead_empty_inputs(algorithm: str) -> None:
    nonce = NONCES[algorithm]
    sealed = crypto.aead_seal(algorithm, KEY, nonce, b"")
    assert isinstance(sealed, bytes)
    assert len(sealed) == 16
    assert crypto.aead_open(algorithm, KEY, nonce, sealed) == b""
    assert crypto.aead_open(algorithm, KEY, nonce, bytearray(sealed), memoryview(b"")) == b""
    if algorithm == "chacha20-poly1305":
        assert sealed == reference.chacha20poly1305_seal(KEY, nonce, b"", b"")


@pytest.mark.parametrize("algorithm", crypto.AEAD_ALGORITHMS)
def test_aead_lengths_are_checked(algorithm: str) -> None:
    nonce = NONCES[algorithm]
    ct = crypto.aead_seal(algorithm, KEY, nonce, b"data", b"ad")
    for bad_key in (b"", KEY[:31], KEY + b"\x00", KEY[:16]):
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.aead_seal(algorithm, bad_key, nonce, b"data")
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.aead_open(algorithm, bad_key, nonce, ct, b"ad")
    # every other nonce length, the other algorithm's included (CVE-2019-1543)
    for size in (0, 8, 11, 12, 13, 16, 23, 24, 25, 32):
        if size == len(nonce):
            continue
        with pytest.raises(crypto.InvalidInputError, match="nonce"):
            crypto.aead_seal(algorithm, KEY, bytes(size), b"data")
        with pytest.raises(crypto.InvalidInputError, match="nonce"):
            crypto.aead_open(algorithm, KEY, bytes(size), ct, b"ad")
    # shorter than the tag (CVE-2017-3731)
    for size in range(16):
        with pytest.raises(crypto.InvalidInputError, match="tag"):
            crypto.aead_open(algorithm, KEY, nonce, ct[:size], b"ad")


@pytest.mark.parametrize("algorithm", crypto.AEAD_ALGORITHMS)
def test_aead_authentication(algorithm: str) -> None:
    nonce = NONCES[algorithm]
    ct = crypto.aead_seal(algorithm, KEY, nonce, b"attack at dawn", b"ad")
    with pytest.raises(crypto.AuthenticationError):
        crypto.aead_open(algorithm, KEY, nonce, ct, b"AD")
    with pytest.raises(crypto.AuthenticationError):
        crypto.aead_open(algorithm, KEY[::-1], nonce, ct, b"ad")
    with pytest.raises(crypto.AuthenticationError):
        crypto.aead_open(algorithm, KEY, nonce, ct[:-1] + bytes([ct[-1] ^ 1]), b"ad")
    with pytest.raises(crypto.AuthenticationError):
        crypto.aead_open(algorithm, KEY, nonce, ct[1:], b"ad")
    assert crypto.aead_open(algorithm, KEY, nonce, ct, b"ad") == b"attack at dawn"


def test_unknown_algorithms() -> None:
    for call in (
        lambda: crypto.aead_seal("aes-gcm", KEY, bytes(12), b""),
        lambda: crypto.aead_open("aes-gcm", KEY, bytes(12), bytes(16)),
        lambda: crypto.mac("hmac-md5", KEY, b""),
        lambda: crypto.mac("sha256", KEY, b""),
        lambda: crypto.mac_verify("hmac-sha1", KEY, b"", bytes(20)),
        lambda: crypto.digest("md5", b""),
        lambda: crypto.digest("SHA256", b""),
        lambda: crypto.Hash("sha3-256"),
        lambda: crypto.Hmac("md5", KEY),
    ):
        with pytest.raises(crypto.UnknownAlgorithmError):
            call()


def test_inputs_must_be_bytes_like() -> None:
    for bad in ("text", 123, None, [1, 2, 3]):
        with pytest.raises(TypeError):
            crypto.digest("sha256", bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            crypto.aead_seal("chacha20-poly1305", KEY, bytes(12), bad)  # type: ignore[arg-type]
    strided = memoryview(bytes(64))[::2]
    with pytest.raises(TypeError, match="contiguous"):
        crypto.digest("sha256", strided)


# ---- ChaCha20 / HChaCha20 ----------------------------------------------------------------


def test_chacha20_and_hchacha20_lengths() -> None:
    assert crypto.chacha20_xor(KEY, bytes(12), b"") == b""
    with pytest.raises(crypto.InvalidInputError, match="key"):
        crypto.chacha20_xor(KEY[:31], bytes(12), b"x")
    with pytest.raises(crypto.InvalidInputError, match="nonce"):
        crypto.chacha20_xor(KEY, bytes(8), b"x")
    with pytest.raises(crypto.InvalidInputError, match="nonce"):
        crypto.hchacha20(KEY, bytes(12))
    with pytest.raises(crypto.InvalidInputError, match="key"):
        crypto.hchacha20(KEY[:16], bytes(16))
    assert len(crypto.hchacha20(KEY, bytes(16))) == 32


# ---- MACs --------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", crypto.MAC_ALGORITHMS)
def test_mac_verify(algorithm: str) -> None:
    msg = b"message"
    tag = crypto.mac(algorithm, KEY, msg)
    size = 16 if algorithm == "poly1305" else crypto.DIGEST_SIZES[algorithm[5:]]
    assert isinstance(tag, bytes)
    assert len(tag) == size
    assert crypto.mac_verify(algorithm, KEY, msg, tag) is True
    assert crypto.mac_verify(algorithm, KEY, memoryview(msg), bytearray(tag)) is True
    assert crypto.mac_verify(algorithm, KEY, msg + b"!", tag) is False
    for i in (0, size // 2, size - 1):
        bad = bytearray(tag)
        bad[i] ^= 0x40
        assert crypto.mac_verify(algorithm, KEY, msg, bad) is False
    for wrong in (b"", tag[:-1], tag + b"\x00", tag[:16] if size > 16 else tag * 2):
        with pytest.raises(crypto.InvalidInputError, match="tag"):
            crypto.mac_verify(algorithm, KEY, msg, wrong)
    # empty message
    assert crypto.mac_verify(algorithm, KEY, b"", crypto.mac(algorithm, KEY, b""))


def test_mac_keys() -> None:
    for bad_key in (b"", KEY[:31], KEY + b"x"):
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.mac("poly1305", bad_key, b"m")
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.Poly1305(bad_key)
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.mac_verify("poly1305", bad_key, b"m", bytes(16))
    # HMAC takes any key length, the empty key included
    for name in crypto.HASH_ALGORITHMS:
        for key in (b"", b"k", bytes(200)):
            expected = reference.hmac_tag(name, key, b"m")
            assert crypto.mac(f"hmac-{name}", key, b"m") == expected
            h = crypto.Hmac(name, key)
            h.update(b"m")
            assert h.finalize() == expected
            h = crypto.Hmac(f"hmac-{name}", key)  # the MAC name is accepted too
            h.update(b"m")
            assert h.finalize() == expected


# ---- hashes ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", crypto.HASH_ALGORITHMS)
def test_hash_empty_and_state(name: str) -> None:
    assert crypto.digest(name, b"") == reference.digest(name, b"")
    h = crypto.Hash(name)
    assert h.name == name
    h.update(b"")
    assert h.finalize() == reference.digest(name, b"")
    with pytest.raises(crypto.ArchcryptError, match="after finalize"):
        h.update(b"x")
    with pytest.raises(crypto.ArchcryptError, match="after finalize"):
        h.finalize()
    with pytest.raises(crypto.ArchcryptError, match="after finalize"):
        h.copy()


def test_mac_contexts_after_finalize() -> None:
    for ctx in (crypto.Poly1305(KEY), crypto.Hmac("sha256", KEY)):
        ctx.update(b"abc")
        assert len(ctx.finalize()) == ctx.digest_size
        with pytest.raises(crypto.ArchcryptError):
            ctx.update(b"x")
        with pytest.raises(crypto.ArchcryptError):
            ctx.finalize()


# ---- Camellia ----------------------------------------------------------------------------


def test_camellia_lengths() -> None:
    for size in crypto.CAMELLIA_KEY_SIZES:
        key = bytes(size)
        assert crypto.camellia_ecb_encrypt(key, b"") == b""
        assert crypto.camellia_ecb_decrypt(key, b"") == b""
        cipher = crypto.Camellia(bytearray(key))
        assert cipher.key_size == size
        block = cipher.encrypt_ecb(bytes(16))
        assert cipher.decrypt_ecb(block) == bytes(16)
        for bad in (1, 15, 17, 33):
            with pytest.raises(crypto.InvalidInputError, match="multiple of 16"):
                cipher.encrypt_ecb(bytes(bad))
            with pytest.raises(crypto.InvalidInputError, match="multiple of 16"):
                crypto.camellia_ecb_decrypt(key, bytes(bad))
    for bad_size in (0, 8, 15, 17, 20, 31, 33, 64):
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.Camellia(bytes(bad_size))
        with pytest.raises(crypto.InvalidInputError, match="key"):
            crypto.camellia_ecb_encrypt(bytes(bad_size), bytes(16))


def test_bulk_outputs_reuse_a_buffer_and_wipe_plaintext() -> None:
    # outputs of 64 KiB .. 4 MiB reuse one buffer per thread: every size, growing and
    # shrinking, must give pyca's answer, and an opened plaintext must not stay behind
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    from archcrypt.crypto import _lib

    key, nonce = os.urandom(32), os.urandom(12)
    reference = ChaCha20Poly1305(key)
    for size in (70_000, 65_536, 1 << 20, 100_000, (4 << 20) + 1, 65_520):
        plaintext = os.urandom(size)
        sealed = crypto.aead_seal("chacha20-poly1305", key, nonce, plaintext)
        assert sealed == reference.encrypt(nonce, plaintext, None)
        assert crypto.aead_open("chacha20-poly1305", key, nonce, sealed) == plaintext
        reused = _lib.scratch.large
        if _lib.REUSED_MIN <= size <= _lib.REUSED_MAX:
            assert bytes(_lib.ffi.buffer(reused, size)) == bytes(size)
    blocks = os.urandom(1 << 17)
    camellia = crypto.Camellia(key[:16])
    assert camellia.decrypt_ecb(camellia.encrypt_ecb(blocks)) == blocks
    assert bytes(_lib.ffi.buffer(_lib.scratch.large, len(blocks))) == bytes(len(blocks))
