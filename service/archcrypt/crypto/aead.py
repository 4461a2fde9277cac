"""ChaCha20-Poly1305 and XChaCha20-Poly1305 (RFC 8439, draft-irtf-cfrg-xchacha), raw ChaCha20."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from . import errors
from ._lib import (
    REUSED_MIN,
    BytesLike,
    allocate,
    arg,
    bulk_output,
    init,
    length_error,
    lib,
    output,
    raise_status,
    state,
    to_bytes,
    view,
    view_exact,
    wipe_reused,
)

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

_CHACHA20_NONCE_SIZE: Final[int] = lib.ARCHCRYPT_CHACHA20_NONCE_SIZE
_HCHACHA20_NONCE_SIZE: Final[int] = lib.ARCHCRYPT_HCHACHA20_NONCE_SIZE
_HCHACHA20_OUTPUT_SIZE: Final[int] = lib.ARCHCRYPT_HCHACHA20_OUTPUT_SIZE
_MAX_COUNTER: Final = 0xFFFFFFFF
_AUTHENTICATION: Final = int(lib.ARCHCRYPT_ERR_AUTHENTICATION)

# algorithm -> (seal, open, nonce size), looked up once per call
_AEAD: Final[Mapping[str, tuple[Any, Any, int]]] = MappingProxyType(
    {
        "chacha20-poly1305": (
            lib.archcrypt_chacha20poly1305_seal,
            lib.archcrypt_chacha20poly1305_open,
            AEAD_NONCE_SIZES["chacha20-poly1305"],
        ),
        "xchacha20-poly1305": (
            lib.archcrypt_xchacha20poly1305_seal,
            lib.archcrypt_xchacha20poly1305_open,
            AEAD_NONCE_SIZES["xchacha20-poly1305"],
        ),
    }
)
_lookup: Final = _AEAD.get


def _unknown(algorithm: object) -> errors.UnknownAlgorithmError:
    return errors.UnknownAlgorithmError(
        f"unknown AEAD algorithm {algorithm!r}; expected one of {', '.join(AEAD_ALGORITHMS)}"
    )


# The two calls below are the per-request path of the service and the library's hottest
# entry points, so they are written flat: one table lookup, bytes handed to C as they are
# (other buffers through one zero-copy view each), one output allocation, one copy out.


def aead_seal(
    algorithm: str, key: BytesLike, nonce: BytesLike, plaintext: BytesLike, aad: BytesLike = b""
) -> bytes:
    """Encrypt and authenticate; returns ciphertext || 16-byte tag."""
    entry = _lookup(algorithm) if isinstance(algorithm, str) else None
    if entry is None:
        raise _unknown(algorithm)
    seal, _, nonce_size = entry
    if not state.ready:
        init()
    if type(key) is not bytes:
        key = arg(key, "key")
    if len(key) != AEAD_KEY_SIZE:
        raise length_error("key", AEAD_KEY_SIZE, len(key))
    if type(nonce) is not bytes:
        nonce = arg(nonce, "nonce")
    if len(nonce) != nonce_size:
        raise length_error("nonce", nonce_size, len(nonce))
    if type(plaintext) is not bytes:
        plaintext = arg(plaintext, "plaintext")
    if type(aad) is not bytes:
        aad = arg(aad, "aad")
    pt_len = len(plaintext)
    size = pt_len + AEAD_TAG_SIZE
    out = allocate("char[]", size) if size < REUSED_MIN else bulk_output(size)
    status = seal(out, plaintext, pt_len, aad, len(aad), key, nonce)
    if status:
        raise_status(status, f"{algorithm} seal")
    return to_bytes(out, size)


def aead_open(
    algorithm: str, key: BytesLike, nonce: BytesLike, ciphertext: BytesLike, aad: BytesLike = b""
) -> bytes:
    """Verify and decrypt ciphertext || tag; AuthenticationError when the tag does not match."""
    entry = _lookup(algorithm) if isinstance(algorithm, str) else None
    if entry is None:
        raise _unknown(algorithm)
    _, open_, nonce_size = entry
    if not state.ready:
        init()
    if type(key) is not bytes:
        key = arg(key, "key")
    if len(key) != AEAD_KEY_SIZE:
        raise length_error("key", AEAD_KEY_SIZE, len(key))
    if type(nonce) is not bytes:
        nonce = arg(nonce, "nonce")
    if len(nonce) != nonce_size:
        raise length_error("nonce", nonce_size, len(nonce))
    if type(ciphertext) is not bytes:
        ciphertext = arg(ciphertext, "ciphertext")
    if type(aad) is not bytes:
        aad = arg(aad, "aad")
    ct_len = len(ciphertext)
    if ct_len < AEAD_TAG_SIZE:
        raise errors.InvalidInputError(
            f"ciphertext must include the {AEAD_TAG_SIZE}-byte tag, got {ct_len} bytes"
        )
    size = ct_len - AEAD_TAG_SIZE
    out = allocate("char[]", size) if size < REUSED_MIN else bulk_output(size)
    status = open_(out, ciphertext, ct_len, aad, len(aad), key, nonce)
    if status:
        # C has wiped the output already
        if status == _AUTHENTICATION:
            raise errors.AuthenticationError(f"{algorithm} open: authentication failed")
        raise_status(status, f"{algorithm} open")
    plaintext = to_bytes(out, size)
    wipe_reused(out, size)
    return plaintext


def chacha20_xor(key: BytesLike, nonce12: BytesLike, data: BytesLike, counter: int = 0) -> bytes:
    """Raw RFC 8439 ChaCha20 (32-bit block counter, 96-bit nonce): data XOR keystream.

    MessageTooLongError when a block would need a counter above 2**32 - 1.
    """
    if isinstance(counter, bool) or not isinstance(counter, int):
        raise TypeError(f"counter must be an int, not {type(counter).__name__}")
    if not 0 <= counter <= _MAX_COUNTER:
        raise errors.InvalidInputError(f"counter must be in 0..2**32-1, got {counter}")
    init()
    key_c = view_exact(key, AEAD_KEY_SIZE, "key")
    nonce_c = view_exact(nonce12, _CHACHA20_NONCE_SIZE, "nonce")
    in_c, length = view(data, "data")
    out = output(length)
    status = int(lib.archcrypt_chacha20_xor(out, in_c, length, key_c, nonce_c, counter))
    if status == int(lib.ARCHCRYPT_ERR_MESSAGE_TOO_LONG):
        blocks = -(-length // 64)
        raise errors.MessageTooLongError(
            f"chacha20: {blocks} blocks from counter {counter} would wrap the 32-bit block counter"
        )
    if status != 0:
        raise_status(status, "chacha20")
    result = to_bytes(out, length)
    wipe_reused(out, length)  # a keystream XOR: either side may be the plaintext
    return result


def hchacha20(key: BytesLike, nonce16: BytesLike) -> bytes:
    """HChaCha20 (draft-irtf-cfrg-xchacha section 2.2): a 32-byte subkey."""
    init()
    key_c = view_exact(key, AEAD_KEY_SIZE, "key")
    nonce_c = view_exact(nonce16, _HCHACHA20_NONCE_SIZE, "nonce")
    out = output(_HCHACHA20_OUTPUT_SIZE)
    lib.archcrypt_hchacha20(out, key_c, nonce_c)
    subkey = to_bytes(out, _HCHACHA20_OUTPUT_SIZE)
    wipe_reused(out, _HCHACHA20_OUTPUT_SIZE)  # a key
    return subkey
