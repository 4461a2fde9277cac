"""The kinds of named key, their names and what each one can do."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from ..crypto._lib import lib

KeyTypeName = Literal[
    "xchacha20-poly1305",
    "chacha20-poly1305",
    "hmac-sha224",
    "hmac-sha256",
    "hmac-sha384",
    "hmac-sha512",
]
KeyOperation = Literal["seal", "open", "rewrap", "datakey", "mac", "verify"]

DEFAULT_KEY_TYPE: Final[KeyTypeName] = "xchacha20-poly1305"
NAME_PATTERN: Final = r"^[a-z0-9][a-z0-9._-]{0,63}$"
_NAME: Final = re.compile(NAME_PATTERN)

# ChaCha20-Poly1305 with random 96-bit nonces: after 2^32 messages under one key the chance
# that two of them drew the same nonce reaches about 2^-33 (birthday bound q^2 / 2^97), the
# limit NIST SP 800-38D section 8.3 sets for random GCM nonces. XChaCha20's 192-bit nonces
# put that bound beyond any realistic volume, so it has no budget.
CHACHA20_NONCE_BUDGET: Final = 1 << 32


@dataclass(frozen=True)
class KeyType:
    name: KeyTypeName
    kind: Literal["aead", "hmac"]
    material_size: int
    # AEAD only: the id in the binary ciphertext header and the nonce length
    format_id: int = 0
    nonce_size: int = 0
    # True when the random-nonce budget applies to each version
    nonce_budget: bool = False

    @property
    def operations(self) -> tuple[KeyOperation, ...]:
        if self.kind == "aead":
            return ("seal", "open", "rewrap", "datakey")
        return ("mac", "verify")


# Sizes come from the library's size enum (archcrypt_api.h), as the crypto facade reads them.
# HMAC keys are as long as the hash's full internal state, for full strength: SHA-224/256's
# 32 bytes, SHA-384/512's 64 (RFC 2104 section 3: at least the output length).
_AEAD_KEY: Final[int] = lib.ARCHCRYPT_AEAD_KEY_SIZE
_HMAC_256_KEY: Final[int] = lib.ARCHCRYPT_SHA256_DIGEST_SIZE
_HMAC_512_KEY: Final[int] = lib.ARCHCRYPT_SHA512_DIGEST_SIZE
KEY_TYPES: Final = MappingProxyType(
    {
        t.name: t
        for t in (
            KeyType(
                "xchacha20-poly1305",
                "aead",
                _AEAD_KEY,
                format_id=2,
                nonce_size=lib.ARCHCRYPT_XCHACHA20POLY1305_NONCE_SIZE,
            ),
            KeyType(
                "chacha20-poly1305",
                "aead",
                _AEAD_KEY,
                format_id=1,
                nonce_size=lib.ARCHCRYPT_CHACHA20POLY1305_NONCE_SIZE,
                nonce_budget=True,
            ),
            KeyType("hmac-sha224", "hmac", _HMAC_256_KEY),
            KeyType("hmac-sha256", "hmac", _HMAC_256_KEY),
            KeyType("hmac-sha384", "hmac", _HMAC_512_KEY),
            KeyType("hmac-sha512", "hmac", _HMAC_512_KEY),
        )
    }
)
KEY_TYPES_BY_FORMAT_ID: Final = MappingProxyType(
    {t.format_id: t for t in KEY_TYPES.values() if t.kind == "aead"}
)


def valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None
