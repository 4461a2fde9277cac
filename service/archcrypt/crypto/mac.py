"""Poly1305 (RFC 8439 section 2.5) and HMAC over SHA-2 (RFC 2104, FIPS 198-1)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from . import errors
from ._lib import (
    BytesLike,
    StreamingContext,
    arg,
    init,
    length_error,
    lib,
    raise_status,
    require_gc,
    scratch,
    state,
    to_bytes,
    view,
    view_exact,
)
from .hashes import DIGEST_SIZES, HASH_ALGORITHMS, hash_id

__all__ = ["MAC_ALGORITHMS", "TAG_SIZES", "Hmac", "Poly1305", "mac", "mac_verify", "tag_size"]

MAC_ALGORITHMS: Final = ("poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")
POLY1305_KEY_SIZE: Final[int] = lib.ARCHCRYPT_POLY1305_KEY_SIZE
POLY1305_TAG_SIZE: Final[int] = lib.ARCHCRYPT_POLY1305_TAG_SIZE
TAG_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {"poly1305": POLY1305_TAG_SIZE}
    | {f"hmac-{name}": DIGEST_SIZES[name] for name in HASH_ALGORITHMS}
)
# HMAC name -> (hash id, tag size)
_HMAC: Final = {f"hmac-{name}": (hash_id(name), DIGEST_SIZES[name]) for name in HASH_ALGORITHMS}.get
_poly1305: Final = lib.archcrypt_poly1305
_poly1305_verify: Final = lib.archcrypt_poly1305_verify
_hmac: Final = lib.archcrypt_hmac
_hmac_verify: Final = lib.archcrypt_hmac_verify


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
    size = TAG_SIZES.get(algorithm) if isinstance(algorithm, str) else None
    if size is None:
        _hmac_hash(algorithm)  # raises UnknownAlgorithmError
    return size  # type: ignore[return-value]


def mac(algorithm: str, key: BytesLike, data: BytesLike) -> bytes:
    """One-shot tag. Poly1305 takes a 32-byte one-time key; HMAC keys have any length."""
    if not state.ready:
        init()
    if type(key) is not bytes:
        key = arg(key, "key")
    if type(data) is not bytes:
        data = arg(data, "data")
    # Tags are sent to the peer, not secret: C writes them to this thread's scratch buffer.
    out = scratch.buffer
    if algorithm == "poly1305":
        if len(key) != POLY1305_KEY_SIZE:
            raise length_error("key", POLY1305_KEY_SIZE, len(key))
        status = _poly1305(out, data, len(data), key)
        size = POLY1305_TAG_SIZE
    else:
        entry = _HMAC(algorithm) if isinstance(algorithm, str) else None
        if entry is None:
            _hmac_hash(algorithm)  # raises UnknownAlgorithmError
        hid, size = entry  # type: ignore[misc]
        status = _hmac(hid, out, key, len(key), data, len(data))
    if status:
        raise_status(status, algorithm)
    return to_bytes(out, size)


def mac_verify(algorithm: str, key: BytesLike, data: BytesLike, tag: BytesLike) -> bool:
    """Constant-time (in C) check of a full-length tag; a tag of another length is an error."""
    size = tag_size(algorithm)
    if not state.ready:
        init()
    if type(tag) is not bytes:
        tag = arg(tag, "tag")
    if len(tag) != size:
        raise length_error("tag", size, len(tag))
    if type(key) is not bytes:
        key = arg(key, "key")
    if type(data) is not bytes:
        data = arg(data, "data")
    if algorithm == "poly1305":
        if len(key) != POLY1305_KEY_SIZE:
            raise length_error("key", POLY1305_KEY_SIZE, len(key))
        result = _poly1305_verify(tag, data, len(data), key)
    else:
        hid, _ = _HMAC(algorithm)  # type: ignore[misc]
        result = _hmac_verify(hid, tag, size, key, len(key), data, len(data))
    if result < 0:
        raise_status(result, f"{algorithm} verify")
    return bool(result == 1)


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
