"""The one door to the native bindings: loading, init, status -> exception, buffer helpers.

Two private bindings over one copy of the C library, both in archcrypt._native's file:
`lib`/`ffi`, cffi's module, for introspection, dispatch control, streaming contexts and
batches; `fast`, archcrypt._fast (native/python/fast.c), for the per-message one-shot calls,
which take bytes-like arguments as they are, check them with the facade's messages, and
return a bytes object the kernel filled in place. Their loose types stop here: everything
else in the package hands back plain Python values. cffi releases the GIL around every C
call, so its inputs go in zero-copy through ffi.from_buffer and stay referenced for the call;
_fast releases it from GIL_RELEASE_MIN bytes on.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, NoReturn, TypeAlias

from . import errors

try:
    from archcrypt import _native
    from archcrypt._native import ffi as _ffi
    from archcrypt._native import lib as _clib
except ImportError as exc:  # pragma: no cover - depends on the build
    raise ImportError(
        f"cannot load archcrypt._native ({exc}); build it with `pip install -e .` "
        "or `python native/build_ffi.py`"
    ) from exc

ffi: Final[Any] = _ffi
lib: Final[Any] = _clib

FAST_MODULE: Final = "archcrypt._fast"


def _load_fast(path: str) -> ModuleType:
    """archcrypt._fast from the file that holds archcrypt._native (its PyInit__fast): one
    shared object, so one copy of the library's dispatch state for both bindings. The
    import system finds a module only by its own file name, hence the explicit loader
    (PEP 489, "Multiple modules in one library")."""
    loaded = sys.modules.get(FAST_MODULE)
    if loaded is not None:
        return loaded
    loader = importlib.machinery.ExtensionFileLoader(FAST_MODULE, path)
    spec = importlib.util.spec_from_file_location(FAST_MODULE, path, loader=loader)
    if spec is None:  # pragma: no cover - an extension path always gives a spec
        raise ImportError(f"cannot load {FAST_MODULE} from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[FAST_MODULE] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[FAST_MODULE]
        raise
    return module


fast: Final[Any] = _load_fast(str(_native.__file__))

BytesLike: TypeAlias = bytes | bytearray | memoryview

OK: Final[int] = int(lib.ARCHCRYPT_OK)

# Outputs are overwritten in full by C before Python sees them: skip ffi.new's memset.
_new_uninitialised: Final[Any] = ffi.new_allocator(should_clear_after_alloc=False)


def wipe(buffer: Any, size: int) -> None:
    """Zero a native output that held a secret once it is copied out: freed heap keeps what
    it held, and the next allocation, a core file or a heap dump would show it. (The _fast
    calls have no such copy: their result bytes is the only one.)"""
    lib.archcrypt_wipe(buffer, size)


class _State:
    """`state.ready`: init() has succeeded. (archcrypt._fast checks the same on its own.)"""

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
    cls = fast.error_class(status)  # the one status -> exception table, _fast's
    detail = status_message(status) or f"status {status}"
    if explained or status == int(lib.ARCHCRYPT_ERR_CONFIG):
        detail = last_error() or detail
    raise cls(f"{context}: {detail}")


def check(status: int, context: str, *, explained: bool = False) -> None:
    if status != OK:
        raise_status(status, context, explained=explained)


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
