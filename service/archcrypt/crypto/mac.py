"""Poly1305 (RFC 8439 section 2.5) and HMAC over SHA-2 (RFC 2104, FIPS 198-1)."""

from __future__ import annotations

from typing import Final

from . import errors
from ._lib import (
    BytesLike,
    StreamingContext,
    check,
    init,
    lib,
    output,
    raise_status,
    require_gc,
    to_bytes,
    view,
    view_exact,
)
from .hashes import DIGEST_SIZES, HASH_ALGORITHMS, hash_id

__all__ = ["MAC_ALGORITHMS", "Hmac", "Poly1305", "mac", "mac_verify"]

MAC_ALGORITHMS: Final = ("poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")
POLY1305_KEY_SIZE: Final = 32
POLY1305_TAG_SIZE: Final = 16


def _hmac_hash(algorithm: str) -> str:
    """The hash under an HMAC name ("hmac-sha256" -> "sha256")."""
    if isinstance(algorithm, str) and algorithm.startswith("hmac-"):
        name = algorithm[len("hmac-") :]
        if name in HASH_ALGORITHMS:
            return name
    raise errors.UnknownAlgorithmError(
        f"unknown MAC {algorithm!r}; expected one of {', '.join(MAC_ALGORITHMS)}"
    )


def tag_size(algorithm: str) -> int:
    """Bytes in a full tag of this MAC."""
    if algorithm == "poly1305":
        return POLY1305_TAG_SIZE
    return DIGEST_SIZES[_hmac_hash(algorithm)]


def mac(algorithm: str, key: BytesLike, data: BytesLike) -> bytes:
    """One-shot tag. Poly1305 takes a 32-byte one-time key; HMAC keys have any length."""
    if algorithm == "poly1305":
        init()
        key_c = view_exact(key, POLY1305_KEY_SIZE, "key")
        data_c, length = view(data, "data")
        out = output(POLY1305_TAG_SIZE)
        check(int(lib.archcrypt_poly1305(out, data_c, length, key_c)), algorithm)
        return to_bytes(out, POLY1305_TAG_SIZE)
    name = _hmac_hash(algorithm)
    init()
    key_c, key_len = view(key, "key")
    data_c, length = view(data, "data")
    size = DIGEST_SIZES[name]
    out = output(size)
    check(int(lib.archcrypt_hmac(hash_id(name), out, key_c, key_len, data_c, length)), algorithm)
    return to_bytes(out, size)


def mac_verify(algorithm: str, key: BytesLike, data: BytesLike, tag: BytesLike) -> bool:
    """Constant-time (in C) check of a full-length tag; a tag of another length is an error."""
    size = tag_size(algorithm)
    init()
    tag_c = view_exact(tag, size, "tag")
    data_c, length = view(data, "data")
    if algorithm == "poly1305":
        key_c = view_exact(key, POLY1305_KEY_SIZE, "key")
        result = int(lib.archcrypt_poly1305_verify(tag_c, data_c, length, key_c))
    else:
        key_c, key_len = view(key, "key")
        hid = hash_id(_hmac_hash(algorithm))
        result = int(lib.archcrypt_hmac_verify(hid, tag_c, size, key_c, key_len, data_c, length))
    if result < 0:
        raise_status(result, f"{algorithm} verify")
    return result == 1


class Poly1305(StreamingContext):
    """Incremental Poly1305 with a 32-byte one-time key."""

    __slots__ = ()

    def __init__(self, key: BytesLike) -> None:
        init()
        key_c = view_exact(key, POLY1305_KEY_SIZE, "key")
        ctx = require_gc(lib.archcrypt_poly1305_new(key_c), lib.archcrypt_poly1305_free, "poly1305")
        self._attach(
            ctx,
            lib.archcrypt_poly1305_update,
            lib.archcrypt_poly1305_final,
            POLY1305_TAG_SIZE,
            "poly1305",
        )


class Hmac(StreamingContext):
    """Incremental HMAC; algorithm is a hash name ("sha256"; "hmac-sha256" is accepted too)."""

    __slots__ = ("name",)

    def __init__(self, algorithm: str, key: BytesLike) -> None:
        name = algorithm if algorithm in HASH_ALGORITHMS else _hmac_hash(algorithm)
        init()
        key_c, key_len = view(key, "key")
        ctx = require_gc(
            lib.archcrypt_hmac_new(hash_id(name), key_c, key_len),
            lib.archcrypt_hmac_free,
            f"hmac-{name}",
        )
        self.name = name
        self._attach(
            ctx,
            lib.archcrypt_hmac_update,
            lib.archcrypt_hmac_final,
            DIGEST_SIZES[name],
            f"hmac-{name}",
        )
