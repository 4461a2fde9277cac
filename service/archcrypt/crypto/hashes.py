"""SHA-224, SHA-256, SHA-384 and SHA-512 (FIPS 180-4), one-shot and incremental."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from . import errors
from ._lib import (
    BytesLike,
    StreamingContext,
    arg,
    check,
    ffi,
    init,
    lib,
    output,
    raise_status,
    require_gc,
    scratch,
    state,
    to_bytes,
    view,
)

__all__ = ["DIGEST_SIZES", "HASH_ALGORITHMS", "Hash", "digest", "digest_many"]

HASH_ALGORITHMS: Final = ("sha224", "sha256", "sha384", "sha512")
DIGEST_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {
        "sha224": lib.ARCHCRYPT_SHA224_DIGEST_SIZE,
        "sha256": lib.ARCHCRYPT_SHA256_DIGEST_SIZE,
        "sha384": lib.ARCHCRYPT_SHA384_DIGEST_SIZE,
        "sha512": lib.ARCHCRYPT_SHA512_DIGEST_SIZE,
    }
)
BLOCK_SIZES: Final[Mapping[str, int]] = MappingProxyType(
    {
        "sha224": lib.ARCHCRYPT_SHA224_BLOCK_SIZE,
        "sha256": lib.ARCHCRYPT_SHA256_BLOCK_SIZE,
        "sha384": lib.ARCHCRYPT_SHA384_BLOCK_SIZE,
        "sha512": lib.ARCHCRYPT_SHA512_BLOCK_SIZE,
    }
)
_HASH_IDS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "sha224": int(lib.ARCHCRYPT_SHA224),
        "sha256": int(lib.ARCHCRYPT_SHA256),
        "sha384": int(lib.ARCHCRYPT_SHA384),
        "sha512": int(lib.ARCHCRYPT_SHA512),
    }
)


def hash_id(algorithm: str) -> int:
    """The C archcrypt_hash_id of a hash name."""
    try:
        return _HASH_IDS[algorithm]
    except (KeyError, TypeError):
        raise _unknown(algorithm) from None


def _unknown(algorithm: object) -> errors.UnknownAlgorithmError:
    return errors.UnknownAlgorithmError(
        f"unknown hash {algorithm!r}; expected one of {', '.join(HASH_ALGORITHMS)}"
    )


# algorithm -> (hash id, digest size), one lookup per call
_ONE_SHOT: Final = {name: (_HASH_IDS[name], DIGEST_SIZES[name]) for name in HASH_ALGORITHMS}.get
_hash: Final = lib.archcrypt_hash


def digest(algorithm: str, data: BytesLike) -> bytes:
    """One-shot hash of data."""
    entry = _ONE_SHOT(algorithm) if isinstance(algorithm, str) else None
    if entry is None:
        raise _unknown(algorithm)
    hid, size = entry
    if not state.ready:
        init()
    if type(data) is not bytes:
        data = arg(data, "data")
    # The digest is public: C writes it to this thread's scratch buffer, copied out once.
    out = scratch.buffer
    status = _hash(hid, out, data, len(data))
    if status:
        raise_status(status, algorithm)
    return to_bytes(out, size)


def digest_many(algorithm: str, messages: Sequence[BytesLike]) -> list[bytes]:
    """One-shot hashes of many independent messages in one C call, in order.

    The same digests as [digest(algorithm, m) for m in messages]; a row with several
    lanes (SHA-256/224: sha_ni two chains, avx2 eight, sha_ni_avx512 sixteen; SHA-512/384:
    avx512 eight) hashes the messages side by side, about twice the throughput of one at
    a time or more. Inputs are passed without copying.
    """
    hid = hash_id(algorithm)
    init()
    n = len(messages)
    if n == 0:
        return []
    # The views must outlive the call: cffi keeps the buffers pinned while they live.
    views = [view(m, f"messages[{i}]") for i, m in enumerate(messages)]
    pointers = ffi.new("const uint8_t *[]", [v for v, _ in views])
    lengths = ffi.new("size_t[]", [length for _, length in views])
    size = DIGEST_SIZES[algorithm]
    out = output(n * size)
    check(int(lib.archcrypt_hash_many(hid, n, pointers, lengths, out)), algorithm)
    raw: bytes = to_bytes(out, n * size)
    return [raw[i * size : (i + 1) * size] for i in range(n)]


class Hash(StreamingContext):
    """Incremental hash: update() any number of times, copy() to fork, finalize() once."""

    __slots__ = ("block_size", "name")

    def __init__(self, algorithm: str) -> None:
        hid = hash_id(algorithm)
        init()
        ctx = require_gc(lib.archcrypt_hash_new(hid), lib.archcrypt_hash_free, algorithm)
        self._setup(algorithm, ctx)

    def _setup(self, algorithm: str, ctx: object) -> None:
        self.name = algorithm
        self.block_size = BLOCK_SIZES[algorithm]
        self._attach(
            ctx,
            lib.archcrypt_hash_update,
            lib.archcrypt_hash_final,
            DIGEST_SIZES[algorithm],
            algorithm,
        )

    def copy(self) -> Hash:
        """An independent hash of everything absorbed so far."""
        with self._lock:
            if self._done:
                raise self._finished("copy")
            ctx = require_gc(lib.archcrypt_hash_copy(self._ctx), lib.archcrypt_hash_free, self.name)
        clone = Hash.__new__(Hash)
        clone._setup(self.name, ctx)
        return clone
