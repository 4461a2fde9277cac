"""Camellia (RFC 3713) in ECB mode; the key length selects Camellia-128/192/256."""

from __future__ import annotations

from typing import Any, Final

from . import errors
from ._lib import (
    REUSED_MIN,
    BytesLike,
    allocate,
    arg,
    bulk_output,
    init,
    lib,
    raise_status,
    require_gc,
    to_bytes,
    view,
    wipe_reused,
)

__all__ = [
    "CAMELLIA_BLOCK_SIZE",
    "CAMELLIA_KEY_SIZES",
    "Camellia",
    "camellia_ecb_decrypt",
    "camellia_ecb_encrypt",
]

CAMELLIA_KEY_SIZES: Final[tuple[int, ...]] = (
    lib.ARCHCRYPT_CAMELLIA128_KEY_SIZE,
    lib.ARCHCRYPT_CAMELLIA192_KEY_SIZE,
    lib.ARCHCRYPT_CAMELLIA256_KEY_SIZE,
)
CAMELLIA_BLOCK_SIZE: Final[int] = lib.ARCHCRYPT_CAMELLIA_BLOCK_SIZE


_encrypt: Final = lib.archcrypt_camellia_ecb_encrypt
_decrypt: Final = lib.archcrypt_camellia_ecb_decrypt


class Camellia:
    """An expanded Camellia key; safe to share between threads (C only reads it)."""

    __slots__ = ("_key", "key_size")

    def __init__(self, key: BytesLike) -> None:
        key_c, key_len = view(key, "key")
        if key_len not in CAMELLIA_KEY_SIZES:
            raise errors.InvalidInputError(
                f"Camellia key must be 16, 24 or 32 bytes, got {key_len}"
            )
        init()
        self.key_size = key_len
        self._key = require_gc(
            lib.archcrypt_camellia_new(key_c, key_len), lib.archcrypt_camellia_free, "camellia"
        )

    def _run(self, function: Any, data: BytesLike, what: str) -> bytes:
        if type(data) is not bytes:
            data = arg(data, "data")
        length = len(data)
        if length % CAMELLIA_BLOCK_SIZE:
            raise errors.InvalidInputError(
                f"data must be a multiple of {CAMELLIA_BLOCK_SIZE} bytes, got {length}"
            )
        out = allocate("char[]", length) if length < REUSED_MIN else bulk_output(length)
        status = function(self._key, out, data, length)
        if status:
            raise_status(status, what)
        result = to_bytes(out, length)
        wipe_reused(out, length)  # one of the two directions is a plaintext
        return result

    def encrypt_ecb(self, data: BytesLike) -> bytes:
        """Encrypt whole 16-byte blocks independently."""
        return self._run(_encrypt, data, "camellia encrypt")

    def decrypt_ecb(self, data: BytesLike) -> bytes:
        """Decrypt whole 16-byte blocks independently."""
        return self._run(_decrypt, data, "camellia decrypt")


def camellia_ecb_encrypt(key: BytesLike, data: BytesLike) -> bytes:
    """One-shot Camellia-ECB encryption (data a multiple of 16 bytes)."""
    return Camellia(key).encrypt_ecb(data)


def camellia_ecb_decrypt(key: BytesLike, data: BytesLike) -> bytes:
    """One-shot Camellia-ECB decryption (data a multiple of 16 bytes)."""
    return Camellia(key).decrypt_ecb(data)
