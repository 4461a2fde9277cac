"""Self-describing ciphertexts and tags of named keys: the text form for JSON and the binary
form for application/octet-stream bodies.

Text: ``archcrypt:v<version>:<base64>``, where the base64 (standard, padded) is
``nonce || ciphertext || tag`` for an AEAD key and the bare tag for an HMAC key.

Binary (AEAD only), big-endian::

    offset  size  field
    0       2     magic "ac" (0x61 0x63)
    2       1     format version, 1
    3       1     algorithm: 1 chacha20-poly1305, 2 xchacha20-poly1305
    4       4     key version, unsigned
    8       n     nonce: 12 bytes (chacha20-poly1305) or 24 (xchacha20-poly1305)
    8+n     m     ciphertext, as long as the plaintext
    8+n+m   16    Poly1305 tag

Both forms seal the same bytes: the AEAD's associated data is the 8-byte header followed by
the caller's AAD, in either form (the text form's header is rebuilt from the key's type and
the version in the prefix). So the header is authenticated, and one form converts to the
other without the key: ``binary = header || base64-decoded text payload``.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass
from typing import Final

from .types import KEY_TYPES_BY_FORMAT_ID, KeyType

TEXT_PREFIX: Final = "archcrypt:v"
MAGIC: Final = b"ac"
FORMAT_VERSION: Final = 1
HEADER_SIZE: Final = 8
TAG_SIZE: Final = 16
MAX_VERSION: Final = 0xFFFFFFFF

_HEADER: Final = struct.Struct(">2sBBI")
# No leading zeros and no sign: one spelling per version, so an edited prefix never names
# the same version twice.
_TEXT: Final = re.compile(r"archcrypt:v([1-9][0-9]{0,9}):([A-Za-z0-9+/]*={0,2})")


class MalformedError(ValueError):
    """Not a ciphertext or tag of this format (HTTP 400: authentication-failed for a
    ciphertext, invalid-ciphertext for a tag; api/keys.py says why)."""


@dataclass(frozen=True)
class Sealed:
    """A parsed AEAD ciphertext: its key version and nonce || ciphertext || tag."""

    version: int
    nonce: bytes
    body: bytes  # ciphertext || tag


def header(key_type: KeyType, version: int) -> bytes:
    return _HEADER.pack(MAGIC, FORMAT_VERSION, key_type.format_id, version)


def associated_data(key_type: KeyType, version: int, aad: bytes) -> bytes:
    """What the AEAD authenticates besides the ciphertext: the header, then the caller's AAD."""
    return header(key_type, version) + aad


def to_text(version: int, payload: bytes) -> str:
    return f"{TEXT_PREFIX}{version}:{base64.b64encode(payload).decode('ascii')}"


def parse_text(text: str) -> tuple[int, bytes]:
    """(version, payload) of ``archcrypt:v<version>:<base64>``; MalformedError otherwise."""
    match = _TEXT.fullmatch(text)
    if match is None:
        raise MalformedError("expected archcrypt:v<version>:<standard base64>")
    version = int(match.group(1))
    if version > MAX_VERSION:
        raise MalformedError("the key version is out of range")
    encoded = match.group(2).encode("ascii")
    try:
        payload = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        raise MalformedError("the payload is not standard base64") from None
    # one spelling only: unused bits after the last byte must be zero
    if base64.b64encode(payload) != encoded:
        raise MalformedError("the payload is not canonical standard base64")
    return version, payload


def split_aead(key_type: KeyType, version: int, payload: bytes) -> Sealed:
    if len(payload) < key_type.nonce_size + TAG_SIZE:
        raise MalformedError(
            f"a {key_type.name} ciphertext holds at least a {key_type.nonce_size}-byte nonce "
            f"and a {TAG_SIZE}-byte tag"
        )
    return Sealed(version, payload[: key_type.nonce_size], payload[key_type.nonce_size :])


def aead_text(version: int, nonce: bytes, body: bytes) -> str:
    return to_text(version, nonce + body)


def aead_binary(key_type: KeyType, version: int, nonce: bytes, body: bytes) -> bytes:
    return b"".join((header(key_type, version), nonce, body))


def parse_binary(data: bytes, key_type: KeyType) -> Sealed:
    """A binary ciphertext for a key of `key_type`; MalformedError for another format or
    another algorithm's ciphertext."""
    if len(data) < HEADER_SIZE:
        raise MalformedError(f"a binary ciphertext starts with a {HEADER_SIZE}-byte header")
    magic, fmt, algorithm, version = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise MalformedError("not an archcrypt binary ciphertext (bad magic)")
    if fmt != FORMAT_VERSION:
        raise MalformedError(f"unknown binary ciphertext format version {fmt}")
    sealed_with = KEY_TYPES_BY_FORMAT_ID.get(algorithm)
    if sealed_with is None:
        raise MalformedError(f"unknown algorithm id {algorithm}")
    if sealed_with is not key_type:
        raise MalformedError(f"sealed with {sealed_with.name}, not this key's {key_type.name}")
    if version == 0:
        raise MalformedError("key versions start at 1")
    return split_aead(key_type, version, data[HEADER_SIZE:])
