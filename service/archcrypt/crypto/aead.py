"""ChaCha20-Poly1305 and XChaCha20-Poly1305 (RFC 8439, draft-irtf-cfrg-xchacha), raw ChaCha20."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from . import errors
from ._lib import BytesLike, fast, init, lib, output, to_bytes, view_exact, wipe

__all__ = [
    "AEAD_ALGORITHMS",
    "AEAD_KEY_SIZE",
    "AEAD_NONCE_SIZES",
    "AEAD_TAG_SIZE",
    "aead_open",
    "aead_seal",
    "chacha20_xor",
    "hchacha20",
]

AEAD_ALGORITHMS: Final = ("chacha20-poly1305", "xchacha20-poly1305")
AEAD_KEY_SIZE: Final[int] = lib.ARCHCRYPT_AEAD_KEY_SIZE
AEAD_TAG_SIZE: Final[int] = lib.ARCHCRYPT_AEAD_TAG_SIZE
AEAD_NONCE_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {
        "chacha20-poly1305": lib.ARCHCRYPT_CHACHA20POLY1305_NONCE_SIZE,
        "xchacha20-poly1305": lib.ARCHCRYPT_XCHACHA20POLY1305_NONCE_SIZE,
    }
)

_HCHACHA20_NONCE_SIZE: Final[int] = lib.ARCHCRYPT_HCHACHA20_NONCE_SIZE
_HCHACHA20_OUTPUT_SIZE: Final[int] = lib.ARCHCRYPT_HCHACHA20_OUTPUT_SIZE
_MAX_COUNTER: Final = 0xFFFFFFFF

# algorithm -> its _fast entry point (private dicts: a subscript is the cheapest lookup)
_SEAL: Final[dict[str, Any]] = {
    "chacha20-poly1305": fast.chacha20poly1305_seal,
    "xchacha20-poly1305": fast.xchacha20poly1305_seal,
}
_OPEN: Final[dict[str, Any]] = {
    "chacha20-poly1305": fast.chacha20poly1305_open,
    "xchacha20-poly1305": fast.xchacha20poly1305_open,
}
_chacha20_xor: Final = fast.chacha20_xor


def _unknown(algorithm: object) -> errors.UnknownAlgorithmError:
    return errors.UnknownAlgorithmError(
        f"unknown AEAD algorithm {algorithm!r}; expected one of {', '.join(AEAD_ALGORITHMS)}"
    )


# The service's per-request calls and the library's hottest entry points: one table lookup
# here, then archcrypt._fast checks the key and nonce lengths and the types (bytes-like:
# bytes as they are, other buffers without a copy), and the kernel writes into the result.


def aead_seal(
    algorithm: str, key: BytesLike, nonce: BytesLike, plaintext: BytesLike, aad: BytesLike = b""
) -> bytes:
    """Encrypt and authenticate; returns ciphertext || 16-byte tag."""
    try:
        seal = _SEAL[algorithm]
    except (KeyError, TypeError):
        raise _unknown(algorithm) from None
    result: bytes = seal(key, nonce, plaintext, aad)
    return result


def aead_open(
    algorithm: str, key: BytesLike, nonce: BytesLike, ciphertext: BytesLike, aad: BytesLike = b""
) -> bytes:
    """Verify and decrypt ciphertext || tag; AuthenticationError when the tag does not match
    (no plaintext is released: the library wipes what it decrypted)."""
    try:
        open_ = _OPEN[algorithm]
    except (KeyError, TypeError):
        raise _unknown(algorithm) from None
    result: bytes = open_(key, nonce, ciphertext, aad)
    return result


def chacha20_xor(key: BytesLike, nonce12: BytesLike, data: BytesLike, counter: int = 0) -> bytes:
    """Raw RFC 8439 ChaCha20 (32-bit block counter, 96-bit nonce): data XOR keystream.

    MessageTooLongError when a block would need a counter above 2**32 - 1.
    """
    if isinstance(counter, bool) or not isinstance(counter, int):
        raise TypeError(f"counter must be an int, not {type(counter).__name__}")
    if not 0 <= counter <= _MAX_COUNTER:
        raise errors.InvalidInputError(f"counter must be in 0..2**32-1, got {counter}")
    result: bytes = _chacha20_xor(key, nonce12, data, counter)
    return result


def hchacha20(key: BytesLike, nonce16: BytesLike) -> bytes:
    """HChaCha20 (draft-irtf-cfrg-xchacha section 2.2): a 32-byte subkey."""
    init()
    key_c = view_exact(key, AEAD_KEY_SIZE, "key")
    nonce_c = view_exact(nonce16, _HCHACHA20_NONCE_SIZE, "nonce")
    out = output(_HCHACHA20_OUTPUT_SIZE)
    lib.archcrypt_hchacha20(out, key_c, nonce_c)
    subkey = to_bytes(out, _HCHACHA20_OUTPUT_SIZE)
    wipe(out, _HCHACHA20_OUTPUT_SIZE)  # a key
    return subkey
