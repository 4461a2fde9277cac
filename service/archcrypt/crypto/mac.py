"""Poly1305 (RFC 8439 section 2.5) and HMAC over SHA-2 (RFC 2104, FIPS 198-1)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from . import errors
from ._lib import BytesLike, StreamingContext, fast, init, lib, require_gc, view, view_exact
from .hashes import DIGEST_SIZES, HASH_ALGORITHMS, hash_id

__all__ = ["MAC_ALGORITHMS", "TAG_SIZES", "Hmac", "Poly1305", "mac", "mac_verify", "tag_size"]

MAC_ALGORITHMS: Final = ("poly1305", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")
POLY1305_KEY_SIZE: Final[int] = lib.ARCHCRYPT_POLY1305_KEY_SIZE
POLY1305_TAG_SIZE: Final[int] = lib.ARCHCRYPT_POLY1305_TAG_SIZE
TAG_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {"poly1305": POLY1305_TAG_SIZE}
    | {f"hmac-{name}": DIGEST_SIZES[name] for name in HASH_ALGORITHMS}
)
# MAC name -> its _fast entry points, one lookup per call
_MAC: Final[dict[str, Any]] = {
    name: getattr(fast, name.replace("-", "_")) for name in MAC_ALGORITHMS
}
_VERIFY: Final[dict[str, Any]] = {
    name: getattr(fast, f"{name.replace('-', '_')}_verify") for name in MAC_ALGORITHMS
}


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
    try:
        function = _MAC[algorithm]
    except (KeyError, TypeError):
        _hmac_hash(algorithm)  # raises UnknownAlgorithmError
        raise
    result: bytes = function(key, data)
    return result


def mac_verify(algorithm: str, key: BytesLike, data: BytesLike, tag: BytesLike) -> bool:
    """Constant-time (in C) check of a full-length tag; a tag of another length is an error."""
    try:
        function = _VERIFY[algorithm]
    except (KeyError, TypeError):
        _hmac_hash(algorithm)  # raises UnknownAlgorithmError
        raise
    result: bool = function(key, data, tag)
    return result


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
