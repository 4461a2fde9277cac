"""Typed facade over the archcrypt C library; the only code that touches archcrypt._native.

Every function initialises the library on first use. Byte inputs may be bytes,
bytearray or memoryview (passed to C without copying); outputs are bytes.
"""

from __future__ import annotations

from ._lib import BytesLike, cstr, init, lib
from .aead import (
    AEAD_ALGORITHMS,
    AEAD_KEY_SIZE,
    AEAD_NONCE_SIZES,
    AEAD_TAG_SIZE,
    aead_open,
    aead_seal,
    chacha20_xor,
    hchacha20,
)
from .backends import (
    DISPATCH_ALGORITHMS,
    Algorithm,
    BackendReport,
    CpuFeature,
    Implementation,
    backends,
    core_hz,
    force,
    self_test,
    use_implementation,
)
from .ecb import (
    CAMELLIA_BLOCK_SIZE,
    CAMELLIA_KEY_SIZES,
    Camellia,
    camellia_ecb_decrypt,
    camellia_ecb_encrypt,
)
from .errors import (
    ArchcryptError,
    AuthenticationError,
    ConfigurationError,
    InvalidInputError,
    MessageTooLongError,
    UnknownAlgorithmError,
    UnknownImplementationError,
    UnsupportedImplementationError,
)
from .hashes import DIGEST_SIZES, HASH_ALGORITHMS, Hash, digest, digest_many
from .mac import (
    MAC_ALGORITHMS,
    POLY1305_KEY_SIZE,
    POLY1305_TAG_SIZE,
    TAG_SIZES,
    Hmac,
    Poly1305,
    mac,
    mac_verify,
)

__all__ = [
    "AEAD_ALGORITHMS",
    "AEAD_KEY_SIZE",
    "AEAD_NONCE_SIZES",
    "AEAD_TAG_SIZE",
    "CAMELLIA_BLOCK_SIZE",
    "CAMELLIA_KEY_SIZES",
    "DIGEST_SIZES",
    "DISPATCH_ALGORITHMS",
    "HASH_ALGORITHMS",
    "MAC_ALGORITHMS",
    "POLY1305_KEY_SIZE",
    "POLY1305_TAG_SIZE",
    "TAG_SIZES",
    "Algorithm",
    "ArchcryptError",
    "AuthenticationError",
    "BackendReport",
    "BytesLike",
    "Camellia",
    "ConfigurationError",
    "CpuFeature",
    "Hash",
    "Hmac",
    "Implementation",
    "InvalidInputError",
    "MessageTooLongError",
    "Poly1305",
    "UnknownAlgorithmError",
    "UnknownImplementationError",
    "UnsupportedImplementationError",
    "aead_open",
    "aead_seal",
    "backends",
    "camellia_ecb_decrypt",
    "camellia_ecb_encrypt",
    "chacha20_xor",
    "core_hz",
    "digest",
    "digest_many",
    "force",
    "hchacha20",
    "init",
    "mac",
    "mac_verify",
    "self_test",
    "use_implementation",
    "version",
]


def version() -> str:
    """Version of the native library."""
    return cstr(lib.archcrypt_version())
