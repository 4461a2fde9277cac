"""The one door to archcrypt._native: loading, init, status -> exception, buffer helpers.

cffi's loose types stop here: everything else in the package sees `ffi`/`lib` as Any
and hands back plain Python values. cffi releases the GIL around every C call, so
inputs go in zero-copy through ffi.from_buffer and stay referenced for the call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final, NoReturn, TypeAlias

from . import errors

try:
    from archcrypt._native import ffi as _ffi
    from archcrypt._native import lib as _clib
except ImportError as exc:  # pragma: no cover - depends on the build
    raise ImportError(
        f"cannot load archcrypt._native ({exc}); build it with `pip install -e .` "
        "or `python native/build_ffi.py`"
    ) from exc

ffi: Final[Any] = _ffi
lib: Final[Any] = _clib

BytesLike: TypeAlias = bytes | bytearray | memoryview

OK: Final[int] = int(lib.ARCHCRYPT_OK)

_STATUS_ERRORS: Final[dict[int, type[Exception]]] = {
    int(lib.ARCHCRYPT_ERR_INVALID_ARGUMENT): errors.InvalidInputError,
    int(lib.ARCHCRYPT_ERR_AUTHENTICATION): errors.AuthenticationError,
    int(lib.ARCHCRYPT_ERR_MESSAGE_TOO_LONG): errors.MessageTooLongError,
    int(lib.ARCHCRYPT_ERR_UNKNOWN_ALGORITHM): errors.UnknownAlgorithmError,
    int(lib.ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION): errors.UnknownImplementationError,
    int(lib.ARCHCRYPT_ERR_UNSUPPORTED): errors.UnsupportedImplementationError,
    int(lib.ARCHCRYPT_ERR_SELFTEST): errors.ArchcryptError,
    int(lib.ARCHCRYPT_ERR_NO_MEMORY): MemoryError,
    int(lib.ARCHCRYPT_ERR_STATE): errors.ArchcryptError,
    int(lib.ARCHCRYPT_ERR_CONFIG): errors.ConfigurationError,
}

# Outputs are overwritten in full by C before Python sees them: skip ffi.new's memset.
_new_uninitialised: Final[Any] = ffi.new_allocator(should_clear_after_alloc=False)


class _Scratch(threading.local):
    """Per-thread output buffers, reused from call to call. Per thread because cffi drops
    the GIL inside C, so another thread may run the same function meanwhile.

    `buffer`: SCRATCH_SIZE bytes for the fixed, small, public outputs (digests and tags).
    `large`: the output of a bulk call of REUSED_MIN..REUSED_MAX bytes. A fresh buffer that
    large comes from mmap and costs a page fault per 4 KiB page on its first write, which
    on a virtual machine can cost more than the kernel (1 MiB AEAD seal: ~0.7 ms with a
    warm buffer, 1.2-8 ms with a fresh one, measured on the project's KVM guests); the
    result is still copied out into bytes once. Secret outputs are wiped after the copy.
    """

    def __init__(self) -> None:
        self.buffer = _new_uninitialised("char[]", SCRATCH_SIZE)
        self.large: Any = None
        self.large_size = 0


REUSED_MIN: Final = 64 * 1024
REUSED_MAX: Final = 4 * 1024 * 1024  # per thread at most; larger outputs are allocated per call


def bulk_output(size: int) -> Any:
    """A buffer of at least `size` bytes for C to fill: this thread's reused one for bulk
    sizes, else a fresh one. Pass a secret output to wipe_reused() once it is copied out."""
    if size < REUSED_MIN or size > REUSED_MAX:
        return _new_uninitialised("char[]", size)
    local = _scratch
    if local.large_size < size:
        local.large = _new_uninitialised("char[]", size)
        local.large_size = size
    return local.large


def wipe_reused(buffer: Any, size: int) -> None:
    """Zero a secret output once it is copied out, whether `buffer` stays alive (this
    thread's reused one) or is freed next (a fresh one): freed heap keeps what it held, and
    the next allocation, a core file or a heap dump would show it."""
    lib.archcrypt_wipe(buffer, size)


SCRATCH_SIZE: Final = 64  # the largest digest (SHA-512) and tag
# `scratch.buffer`: this thread's SCRATCH_SIZE-byte output buffer (attribute access, not a
# call: the hot paths read it once per call).
scratch: Final = _Scratch()
_scratch: Final = scratch
# `allocate("char[]", n)`: a fresh output buffer C overwrites in full (no memset), for the
# hot paths that cannot afford the call to output().
allocate: Final[Any] = _new_uninitialised


class _State:
    """`state.ready`: init() has succeeded (one attribute read per call in the hot paths)."""

    __slots__ = ("ready",)

    def __init__(self) -> None:
        self.ready = False


state: Final = _State()


def cstr(pointer: Any) -> str:
    """A C string from the library as str ("" for NULL)."""
    if pointer == ffi.NULL:
        return ""
    return bytes(ffi.string(pointer)).decode("utf-8", "replace")


def status_message(status: int) -> str:
    return cstr(lib.archcrypt_strerror(status))


def last_error() -> str:
    return cstr(lib.archcrypt_last_error())


def init() -> None:
    """Initialise the native library once; ConfigurationError carries its message."""
    if state.ready:
        return
    status = int(lib.archcrypt_init())
    if status != OK:
        raise errors.ConfigurationError(last_error() or status_message(status))
    state.ready = True


def raise_status(status: int, context: str, *, explained: bool = False) -> NoReturn:
    """Raise the exception for a failing C status, prefixed with what was being done.

    explained: the call leaves a specific reason in archcrypt_last_error() (the
    dispatch calls do); use it instead of the generic status text.
    """
    cls = _STATUS_ERRORS.get(status, errors.ArchcryptError)
    detail = status_message(status) or f"status {status}"
    if explained or status == int(lib.ARCHCRYPT_ERR_CONFIG):
        detail = last_error() or detail
    raise cls(f"{context}: {detail}")


def check(status: int, context: str, *, explained: bool = False) -> None:
    if status != OK:
        raise_status(status, context, explained=explained)


def arg(data: BytesLike, name: str) -> Any:
    """What a `const uint8_t *` parameter takes: bytes as they are (cffi passes their
    storage), any other contiguous buffer through a zero-copy view."""
    if type(data) is bytes:
        return data
    return view(data, name)[0]


def view(data: BytesLike, name: str) -> tuple[Any, int]:
    """Zero-copy `uint8_t[]` over a bytes-like object and its size in bytes."""
    try:
        cdata = ffi.from_buffer("uint8_t[]", data)
    except (TypeError, BufferError) as exc:
        raise TypeError(
            f"{name} must be a contiguous bytes-like object "
            f"(bytes, bytearray, memoryview), not {type(data).__name__}"
        ) from exc
    return cdata, len(cdata)


def view_exact(data: BytesLike, size: int, name: str) -> Any:
    """Like view(), but the length must be exactly `size` (the C side takes no length)."""
    cdata, length = view(data, name)
    if length != size:
        raise errors.InvalidInputError(f"{name} must be {size} bytes, got {length}")
    return cdata


def output(size: int) -> Any:
    """An uninitialised buffer of `size` bytes for C to fill (char[]: cffi passes it as
    uint8_t * and ffi.unpack turns it into bytes in one copy)."""
    return _new_uninitialised("char[]", size)


# ffi.unpack of a char[] is bytes: the one copy out of C memory.
to_bytes: Final[Callable[[Any, int], bytes]] = ffi.unpack


def length_error(name: str, expected: int, got: int) -> errors.InvalidInputError:
    return errors.InvalidInputError(f"{name} must be {expected} bytes, got {got}")


def require_gc(pointer: Any, destructor: Any, what: str) -> Any:
    """Tie a freshly allocated C context to Python's lifetime (ffi.release frees early)."""
    if pointer == ffi.NULL:
        raise MemoryError(f"{what}: allocation failed")
    return ffi.gc(pointer, destructor)


class StreamingContext:
    """Shared body of Hash, Hmac and Poly1305: one C context behind a lock.

    The lock matters because cffi drops the GIL inside C: two threads updating one
    context at once would race on its buffer. The context is freed (and wiped by C)
    as soon as finalize() returns, not when the object is collected.
    """

    __slots__ = ("_ctx", "_done", "_final", "_lock", "_size", "_update", "_what")

    def _attach(self, ctx: Any, update: Any, final: Any, size: int, what: str) -> None:
        self._ctx = ctx
        self._update = update
        self._final = final
        self._size = size
        self._what = what
        self._lock = threading.Lock()
        self._done = False

    def _finished(self, operation: str) -> errors.ArchcryptError:
        return errors.ArchcryptError(f"{self._what}: {operation}() after finalize()")

    @property
    def digest_size(self) -> int:
        """Bytes returned by finalize()."""
        return self._size

    def update(self, data: BytesLike) -> None:
        """Absorb more input."""
        data_c, length = view(data, "data")
        with self._lock:
            if self._done:
                raise self._finished("update")
            check(int(self._update(self._ctx, data_c, length)), self._what)

    def finalize(self) -> bytes:
        """The digest or tag; the context cannot be used afterwards."""
        out = output(self._size)
        with self._lock:
            if self._done:
                raise self._finished("finalize")
            self._done = True
            try:
                check(int(self._final(self._ctx, out)), self._what)
            finally:
                ffi.release(self._ctx)
        return to_bytes(out, self._size)
