"""Camellia (RFC 3713) in ECB mode; the key length selects Camellia-128/192/256."""

from __future__ import annotations

from typing import Final

from ._lib import BytesLike, fast, lib

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


_new_key: Final = fast.camellia_key
_encrypt: Final = fast.camellia_ecb_encrypt
_decrypt: Final = fast.camellia_ecb_decrypt


class Camellia:
    """An expanded Camellia key; safe to share between threads (C only reads it). The key
    schedule lives in C, freed and wiped with this object."""

    __slots__ = ("_key", "key_size")

    def __init__(self, key: BytesLike) -> None:
        # _fast checks the type and the length (16, 24 or 32 bytes)
        self._key = _new_key(key)
        self.key_size: int = memoryview(key).nbytes

    def encrypt_ecb(self, data: BytesLike) -> bytes:
        """Encrypt whole 16-byte blocks independently."""
        result: bytes = _encrypt(self._key, data)
        return result

    def decrypt_ecb(self, data: BytesLike) -> bytes:
        """Decrypt whole 16-byte blocks independently."""
        result: bytes = _decrypt(self._key, data)
        return result


def camellia_ecb_encrypt(key: BytesLike, data: BytesLike) -> bytes:
    """One-shot Camellia-ECB encryption (data a multiple of 16 bytes)."""
    return Camellia(key).encrypt_ecb(data)


def camellia_ecb_decrypt(key: BytesLike, data: BytesLike) -> bytes:
    """One-shot Camellia-ECB decryption (data a multiple of 16 bytes)."""
    return Camellia(key).decrypt_ecb(data)
