"""The kinds of named key, their names and what each one can do."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

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


# HMAC keys are as long as the hash's block would suggest for full strength: 32 bytes for
# the 256-bit family, 64 for SHA-384/512 (RFC 2104 section 3: at least the output length).
KEY_TYPES: Final = MappingProxyType(
    {
        t.name: t
        for t in (
            KeyType("xchacha20-poly1305", "aead", 32, format_id=2, nonce_size=24),
            KeyType("chacha20-poly1305", "aead", 32, format_id=1, nonce_size=12, nonce_budget=True),
            KeyType("hmac-sha224", "hmac", 32),
            KeyType("hmac-sha256", "hmac", 32),
            KeyType("hmac-sha384", "hmac", 64),
            KeyType("hmac-sha512", "hmac", 64),
        )
    }
)
KEY_TYPES_BY_FORMAT_ID: Final = MappingProxyType(
    {t.format_id: t for t in KEY_TYPES.values() if t.kind == "aead"}
)


def valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None
