"""The one-shot calls' compiled binding, archcrypt._fast (native/python/fast.c), as the facade
uses it: one library with cffi's module, the facade's errors and messages for every wrong
argument, every kind of buffer, empty inputs, and the GIL released from GIL_RELEASE_MIN bytes
(and only from there). The known-answer and differential tests (test_known_answers.py,
test_differential.py) go through the same calls for every runnable row;
test_fast_dispatch.py proves with a debugger that a forced row is the one that runs."""

from __future__ import annotations

import array
import contextlib
import importlib
import itertools
import mmap
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import archcrypt._native
from archcrypt import crypto
from archcrypt.crypto import _lib, aead, ecb, hashes

from . import reference

fast = _lib.fast
mac = importlib.import_module("archcrypt.crypto.mac")  # crypto.mac is the function
KEY = bytes(range(32))
NONCES = {"chacha20-poly1305": bytes(range(12)), "xchacha20-poly1305": bytes(range(24))}
MIN = fast.GIL_RELEASE_MIN


# ---- one library, the facade's entry points -------------------------------------------


def test_fast_lives_in_the_native_modules_file() -> None:
    """_fast is PyInit__fast of cffi's shared object, loaded under its own name: one copy of
    the library, so the dispatch choices made through cffi are the ones _fast runs."""
    assert fast.__name__ == "archcrypt._fast"
    assert sys.modules["archcrypt._fast"] is fast
    assert fast.__file__ == archcrypt._native.__file__
    assert fast.__spec__.origin == archcrypt._native.__file__


def test_the_facade_calls_are_fasts() -> None:
    assert {
        "chacha20-poly1305": fast.chacha20poly1305_seal,
        "xchacha20-poly1305": fast.xchacha20poly1305_seal,
    } == aead._SEAL
    assert {
        "chacha20-poly1305": fast.chacha20poly1305_open,
        "xchacha20-poly1305": fast.xchacha20poly1305_open,
    } == aead._OPEN
    assert aead._chacha20_xor is fast.chacha20_xor
    assert {
        "sha224": fast.sha224,
        "sha256": fast.sha256,
        "sha384": fast.sha384,
        "sha512": fast.sha512,
    } == hashes._DIGEST
    assert {
        "poly1305": fast.poly1305,
        "hmac-sha224": fast.hmac_sha224,
        "hmac-sha256": fast.hmac_sha256,
        "hmac-sha384": fast.hmac_sha384,
        "hmac-sha512": fast.hmac_sha512,
    } == mac._MAC
    assert {
        "poly1305": fast.poly1305_verify,
        "hmac-sha224": fast.hmac_sha224_verify,
        "hmac-sha256": fast.hmac_sha256_verify,
        "hmac-sha384": fast.hmac_sha384_verify,
        "hmac-sha512": fast.hmac_sha512_verify,
    } == mac._VERIFY
    assert (ecb._new_key, ecb._encrypt, ecb._decrypt) == (
        fast.camellia_key,
        fast.camellia_ecb_encrypt,
        fast.camellia_ecb_decrypt,
    )


def test_the_status_table() -> None:
    """Each archcrypt_status maps to the facade's exception (written out here, not read
    from the code under test), for _fast's calls and _lib.raise_status alike."""
    lib = _lib.lib
    expected = {
        lib.ARCHCRYPT_ERR_INVALID_ARGUMENT: crypto.InvalidInputError,
        lib.ARCHCRYPT_ERR_AUTHENTICATION: crypto.AuthenticationError,
        lib.ARCHCRYPT_ERR_MESSAGE_TOO_LONG: crypto.MessageTooLongError,
        lib.ARCHCRYPT_ERR_UNKNOWN_ALGORITHM: crypto.UnknownAlgorithmError,
        lib.ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION: crypto.UnknownImplementationError,
        lib.ARCHCRYPT_ERR_UNSUPPORTED: crypto.UnsupportedImplementationError,
        lib.ARCHCRYPT_ERR_SELFTEST: crypto.ArchcryptError,
        lib.ARCHCRYPT_ERR_NO_MEMORY: MemoryError,
        lib.ARCHCRYPT_ERR_STATE: crypto.ArchcryptError,
        lib.ARCHCRYPT_ERR_CONFIG: crypto.ConfigurationError,
        -11: crypto.ArchcryptError,
        1: crypto.ArchcryptError,
    }
    for status, cls in expected.items():
        assert fast.error_class(status) is cls, status
        with pytest.raises(cls) as raised:
            _lib.raise_status(status, "context")
        assert type(raised.value) is cls
        assert str(raised.value).startswith("context: ")


# ---- wrong arguments ------------------------------------------------------------------------

# (call taking the argument under test, its name): every byte argument of every call
NOT_BUFFERS = ["text", 7, None, [1, 2], memoryview(bytes(64))[::2]]


def _byte_arguments() -> list[tuple[str, Callable[[Any], object]]]:
    n12, n24 = NONCES["chacha20-poly1305"], NONCES["xchacha20-poly1305"]
    sealed = crypto.aead_seal("chacha20-poly1305", KEY, n12, b"x")
    cam = crypto.Camellia(KEY[:16])
    calls: list[tuple[str, Callable[[Any], object]]] = []
    for alg, nonce in (("chacha20-poly1305", n12), ("xchacha20-poly1305", n24)):
        calls += [
            ("key", lambda v, a=alg, n=nonce: crypto.aead_seal(a, v, n, b"")),
            ("nonce", lambda v, a=alg: crypto.aead_seal(a, KEY, v, b"")),
            ("plaintext", lambda v, a=alg, n=nonce: crypto.aead_seal(a, KEY, n, v)),
            ("aad", lambda v, a=alg, n=nonce: crypto.aead_seal(a, KEY, n, b"", v)),
            ("key", lambda v, a=alg, n=nonce: crypto.aead_open(a, v, n, sealed)),
            ("nonce", lambda v, a=alg: crypto.aead_open(a, KEY, v, sealed)),
            ("ciphertext", lambda v, a=alg, n=nonce: crypto.aead_open(a, KEY, n, v)),
            ("aad", lambda v, a=alg, n=nonce: crypto.aead_open(a, KEY, n, sealed, v)),
        ]
    calls += [
        ("key", lambda v: crypto.chacha20_xor(v, n12, b"")),
        ("nonce", lambda v: crypto.chacha20_xor(KEY, v, b"")),
        ("data", lambda v: crypto.chacha20_xor(KEY, n12, v)),
        ("key", lambda v: crypto.Camellia(v)),
        ("data", lambda v: cam.encrypt_ecb(v)),
        ("data", lambda v: cam.decrypt_ecb(v)),
    ]
    for name in crypto.HASH_ALGORITHMS:
        calls.append(("data", lambda v, h=name: crypto.digest(h, v)))
    for name in crypto.MAC_ALGORITHMS:
        size = crypto.TAG_SIZES[name]
        calls += [
            ("key", lambda v, m=name: crypto.mac(m, v, b"")),
            ("data", lambda v, m=name: crypto.mac(m, KEY, v)),
            ("tag", lambda v, m=name: crypto.mac_verify(m, KEY, b"", v)),
            ("key", lambda v, m=name, s=size: crypto.mac_verify(m, v, b"", bytes(s))),
            ("data", lambda v, m=name, s=size: crypto.mac_verify(m, KEY, v, bytes(s))),
        ]
    return calls


@pytest.mark.parametrize("bad", NOT_BUFFERS, ids=lambda v: type(v).__name__)
def test_a_non_buffer_argument_is_a_type_error_naming_it(bad: object) -> None:
    for name, call in _byte_arguments():
        with pytest.raises(TypeError) as raised:
            call(bad)
        assert str(raised.value) == (
            f"{name} must be a contiguous bytes-like object (bytes, bytearray, memoryview), "
            f"not {type(bad).__name__}"
        )


def test_wrong_lengths_are_invalid_input_with_the_facades_messages() -> None:
    n12, n24 = NONCES["chacha20-poly1305"], NONCES["xchacha20-poly1305"]
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: crypto.aead_seal("chacha20-poly1305", KEY[:31], n12, b""),
         "key must be 32 bytes, got 31"),
        (lambda: crypto.aead_seal("chacha20-poly1305", KEY, n24, b""),
         "nonce must be 12 bytes, got 24"),
        (lambda: crypto.aead_open("xchacha20-poly1305", KEY, n12, bytes(16)),
         "nonce must be 24 bytes, got 12"),
        (lambda: crypto.aead_open("chacha20-poly1305", KEY, n12, bytes(15)),
         "ciphertext must include the 16-byte tag, got 15 bytes"),
        (lambda: crypto.chacha20_xor(KEY + b"!", n12, b""), "key must be 32 bytes, got 33"),
        (lambda: crypto.chacha20_xor(KEY, n24, b""), "nonce must be 12 bytes, got 24"),
        (lambda: crypto.mac("poly1305", KEY[:16], b""), "key must be 32 bytes, got 16"),
        (lambda: crypto.mac_verify("poly1305", KEY, b"", bytes(15)),
         "tag must be 16 bytes, got 15"),
        (lambda: crypto.mac_verify("poly1305", b"", b"", bytes(16)),
         "key must be 32 bytes, got 0"),
        (lambda: crypto.mac_verify("hmac-sha384", KEY, b"", bytes(64)),
         "tag must be 48 bytes, got 64"),
        (lambda: crypto.Camellia(bytes(20)), "Camellia key must be 16, 24 or 32 bytes, got 20"),
        (lambda: crypto.Camellia(bytes(16)).encrypt_ecb(bytes(17)),
         "data must be a multiple of 16 bytes, got 17"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(crypto.InvalidInputError) as raised:
            call()
        assert str(raised.value) == message


def test_the_facades_checks_come_in_its_order() -> None:
    """A call with several bad arguments reports the first the facade checks."""
    n12 = NONCES["chacha20-poly1305"]
    with pytest.raises(crypto.InvalidInputError, match=r"^key"):
        crypto.aead_seal("chacha20-poly1305", b"short", b"bad nonce", "not bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^nonce"):
        crypto.aead_seal("chacha20-poly1305", KEY, None, "not bytes")  # type: ignore[arg-type]
    with pytest.raises(crypto.InvalidInputError, match=r"^nonce"):
        crypto.aead_open("chacha20-poly1305", KEY, b"", b"")
    with pytest.raises(TypeError, match=r"^plaintext"):
        crypto.aead_seal("chacha20-poly1305", KEY, n12, None, None)  # type: ignore[arg-type]
    with pytest.raises(crypto.InvalidInputError, match=r"^tag"):
        crypto.mac_verify("poly1305", b"", None, b"")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^data"):
        crypto.mac_verify("poly1305", b"", None, bytes(16))  # type: ignore[arg-type]


def test_unknown_algorithms_before_anything_else() -> None:
    for call in (
        lambda: crypto.aead_seal(["chacha20-poly1305"], KEY, b"", b""),  # type: ignore[arg-type]
        lambda: crypto.aead_open(None, KEY, b"", b""),  # type: ignore[arg-type]
        lambda: crypto.digest(b"sha256", b""),  # type: ignore[arg-type]
        lambda: crypto.mac({}, KEY, b""),  # type: ignore[arg-type]
        lambda: crypto.mac_verify("hmac-sha1", KEY, b"", b""),
    ):
        with pytest.raises(crypto.UnknownAlgorithmError):
            call()


def test_the_binding_checks_its_own_arguments() -> None:
    """Private, but never a crash: wrong counts, a foreign object for a Camellia key, a
    counter outside 32 bits."""
    with pytest.raises(TypeError, match="takes 4 positional arguments, got 3"):
        fast.chacha20poly1305_seal(KEY, bytes(12), b"")
    with pytest.raises(TypeError, match="takes 1 positional arguments, got 0"):
        fast.sha256()
    with pytest.raises(TypeError, match="takes 3 positional arguments, got 2"):
        fast.poly1305_verify(KEY, b"")
    with pytest.raises(ValueError, match="PyCapsule"):
        fast.camellia_ecb_encrypt(KEY, bytes(16))
    with pytest.raises(crypto.InvalidInputError, match="counter"):
        fast.chacha20_xor(KEY, bytes(12), b"", 1 << 32)
    with pytest.raises(OverflowError):
        fast.chacha20_xor(KEY, bytes(12), b"", -1)


# every (name, arity) of the module's byte-taking calls
MACS = ("poly1305", "hmac_sha224", "hmac_sha256", "hmac_sha384", "hmac_sha512")
ARITIES = {
    **dict.fromkeys((f"{alg}_{op}" for alg in ("chacha20poly1305", "xchacha20poly1305")
                     for op in ("seal", "open")), 4),
    "chacha20_xor": 4, "camellia_key": 1, "camellia_ecb_encrypt": 2, "camellia_ecb_decrypt": 2,
    **dict.fromkeys(("sha224", "sha256", "sha384", "sha512"), 1),
    **dict.fromkeys(MACS, 2),
    **dict.fromkeys((f"{name}_verify" for name in MACS), 3),
}  # fmt: skip


def test_every_call_survives_every_mix_of_bad_arguments() -> None:
    """Each argument of each call drawn from right and wrong values (every length the
    calls check, non-buffers, a non-contiguous view, a foreign capsule): each call answers
    or raises one of the facade's errors or TypeError/ValueError/OverflowError, and no
    exported buffer is left behind (the bytearrays can still be resized)."""
    capsule = fast.camellia_key(KEY)
    exported = [bytearray(n) for n in (0, 12, 16, 24, 32)]
    values: list[object] = [
        None, "text", -1, 1 << 40, capsule, memoryview(bytes(64))[::2], *exported, bytes(65),
    ]  # fmt: skip
    documented = (crypto.ArchcryptError, TypeError, ValueError, OverflowError)
    rng = random.Random(0xFA57)
    calls = 0
    assert set(ARITIES) == {name for name in dir(fast) if callable(getattr(fast, name))} - {
        "error_class"
    }
    for name, arity in ARITIES.items():
        function = getattr(fast, name)
        combinations = list(itertools.product(values, repeat=arity))
        for args in rng.sample(combinations, min(len(combinations), 600)):
            with contextlib.suppress(*documented):
                function(*args)
            calls += 1
    assert calls > 5000
    for buffer in exported:
        buffer.append(0)  # BufferError if a call kept it exported


def test_authentication_and_long_messages_raise_the_facades_errors() -> None:
    for alg, nonce in NONCES.items():
        sealed = bytearray(crypto.aead_seal(alg, KEY, nonce, b"attack at dawn", b"ad"))
        sealed[0] ^= 1
        with pytest.raises(crypto.AuthenticationError, match=f"^{alg} open: authentication"):
            crypto.aead_open(alg, KEY, nonce, sealed, b"ad")
    with pytest.raises(crypto.MessageTooLongError, match="2 blocks from counter 4294967295"):
        crypto.chacha20_xor(KEY, bytes(12), bytes(65), 0xFFFFFFFF)
    assert len(crypto.chacha20_xor(KEY, bytes(12), bytes(64), 0xFFFFFFFF)) == 64


# ---- every kind of buffer, and nothing ------------------------------------------------------


def _subclass(data: bytes) -> bytes:
    return type("BytesSubclass", (bytes,), {})(data)


def _mapped(data: bytes) -> mmap.mmap | bytes:
    if not data:
        return data  # an empty mmap cannot be made
    region = mmap.mmap(-1, len(data))
    region.write(data)
    return region


# The same bytes as every kind of contiguous buffer a caller may hold.
KINDS: dict[str, Callable[[bytes], object]] = {
    "bytes": bytes,
    "bytearray": bytearray,
    "memoryview": memoryview,
    "readonly memoryview": lambda b: memoryview(bytearray(b)).toreadonly(),
    "memoryview slice": lambda b: memoryview(b"\xee" * 7 + b + b"\xee" * 5)[7 : 7 + len(b)],
    "bytes subclass": _subclass,
    # bytes, not items, are counted
    "array('I')": lambda b: array.array("I", b) if len(b) % 4 == 0 else b,
    "mmap": _mapped,
}


def _operations(n: int) -> list[tuple[str, Callable[[Callable[[bytes], object]], object], bytes]]:
    """(name, call with one argument transformed, expected) for every _fast call at length n."""
    rng = os.urandom
    data, aad = rng(n), rng(n // 3)
    n12, n24 = NONCES["chacha20-poly1305"], NONCES["xchacha20-poly1305"]
    ops: list[tuple[str, Callable[[Callable[[bytes], object]], object], bytes]] = []
    sealed = reference.chacha20poly1305_seal(KEY, n12, data, aad)
    xsealed = reference.xchacha20poly1305_seal(KEY, n24, data, aad)
    ops += [
        ("seal", lambda t: crypto.aead_seal("chacha20-poly1305", t(KEY), t(n12), t(data), t(aad)),
         sealed),
        ("open", lambda t: crypto.aead_open("chacha20-poly1305", t(KEY), t(n12), t(sealed),
                                            t(aad)), data),
        ("xseal", lambda t: crypto.aead_seal("xchacha20-poly1305", t(KEY), t(n24), t(data),
                                             t(aad)), xsealed),
        ("xopen", lambda t: crypto.aead_open("xchacha20-poly1305", t(KEY), t(n24), t(xsealed),
                                             t(aad)), data),
        ("chacha20", lambda t: crypto.chacha20_xor(t(KEY), t(n12), t(data), 7),
         reference.chacha20_xor(KEY, n12, data, 7)),
    ]  # fmt: skip
    for name in crypto.HASH_ALGORITHMS:
        ops.append(
            (name, lambda t, h=name: crypto.digest(h, t(data)), reference.digest(name, data))
        )
    for name in crypto.HASH_ALGORITHMS:
        key = rng(n % 200)
        tag = reference.hmac_tag(name, key, data)
        ops += [
            (f"hmac-{name}", lambda t, h=name, k=key: crypto.mac(f"hmac-{h}", t(k), t(data)), tag),
            (f"hmac-{name} verify",
             lambda t, h=name, k=key, g=tag: crypto.mac_verify(f"hmac-{h}", t(k), t(data), t(g)),
             True),
        ]  # fmt: skip
    tag = reference.poly1305(KEY, data)
    ops += [
        ("poly1305", lambda t: crypto.mac("poly1305", t(KEY), t(data)), tag),
        ("poly1305 verify", lambda t: crypto.mac_verify("poly1305", t(KEY), t(data), t(tag)), True),
    ]
    blocks = data[: n // 16 * 16]
    ops += [
        ("camellia encrypt", lambda t: crypto.Camellia(t(KEY[:16])).encrypt_ecb(t(blocks)),
         reference.camellia_ecb(KEY[:16], blocks)),
        ("camellia decrypt", lambda t: crypto.Camellia(t(KEY)).decrypt_ecb(t(blocks)),
         reference.camellia_ecb(KEY, blocks, decrypt=True)),
    ]  # fmt: skip
    return ops


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("n", [0, 1, 16, 64, 1000])
def test_every_kind_of_buffer_gives_the_references_answer(kind: str, n: int) -> None:
    convert = KINDS[kind]
    for name, call, expected in _operations(n):
        result = call(convert)
        assert result == expected, (name, kind, n)
        assert type(result) is type(expected), (name, kind)


def test_empty_inputs() -> None:
    n12 = NONCES["chacha20-poly1305"]
    sealed = crypto.aead_seal("chacha20-poly1305", KEY, n12, b"", b"")
    assert sealed == reference.chacha20poly1305_seal(KEY, n12, b"", b"")
    for empty in (b"", bytearray(), memoryview(b""), memoryview(bytearray(8))[4:4]):
        assert crypto.aead_open("chacha20-poly1305", KEY, n12, sealed, empty) == b""
        assert crypto.chacha20_xor(KEY, n12, empty) == b""
        assert crypto.Camellia(KEY).encrypt_ecb(empty) == b""
        assert crypto.digest("sha256", empty) == reference.digest("sha256", b"")
        assert crypto.mac("hmac-sha512", empty, empty) == reference.hmac_tag("sha512", b"", b"")
        assert crypto.mac("poly1305", KEY, empty) == reference.poly1305(KEY, b"")


# ---- the GIL -----------------------------------------------------------------------------------


@contextlib.contextmanager
def _busy_prober(probe: bytearray, grow_first: bool) -> Iterator[list[int]]:
    """A second thread that keeps trying to resize `probe` (restoring its length at once)
    and counts the BufferErrors: a resize fails only while the buffer is exported, and _fast
    exports a bytearray argument only inside the call, between acquiring and releasing it,
    running no Python code there. So a thread that gets to try during that window proves
    the GIL was released inside the call. A tiny switch interval keeps the prober asking
    for the GIL. It resizes by one Camellia block, so the input stays whole blocks, and in
    the direction (grow_first: n + 16, else n - 16) that never moves the call across
    GIL_RELEASE_MIN."""
    hits = [0]
    stop = threading.Event()
    block = bytes(16)

    def probe_forever() -> None:
        while not stop.is_set():
            try:
                if grow_first:
                    probe.extend(block)
                    del probe[-16:]
                else:
                    tail = probe[-16:]
                    del probe[-16:]
                    probe.extend(tail)
            except BufferError:
                hits[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=probe_forever, daemon=True)
    thread.start()
    try:
        yield hits
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)


def _gil_calls(probe: bytearray, blocks: bytearray) -> list[tuple[str, Callable[[], object]]]:
    """Every _fast call with the probe as its long argument (blocks: Camellia's, whole
    blocks). An open of the probe fails its tag check, after the kernel has run."""
    n12 = NONCES["chacha20-poly1305"]
    tag = crypto.mac("hmac-sha256", KEY, probe)
    cam = crypto.Camellia(KEY)
    return [
        ("seal", lambda: crypto.aead_seal("chacha20-poly1305", KEY, n12, probe)),
        ("seal (aad)", lambda: crypto.aead_seal("chacha20-poly1305", KEY, n12, b"", probe)),
        ("open", lambda: crypto.aead_open("xchacha20-poly1305", KEY, bytes(24), probe)),
        ("chacha20", lambda: crypto.chacha20_xor(KEY, n12, probe)),
        ("sha256", lambda: crypto.digest("sha256", probe)),
        ("sha384", lambda: crypto.digest("sha384", probe)),
        ("hmac", lambda: crypto.mac("hmac-sha256", KEY, probe)),
        ("poly1305", lambda: crypto.mac("poly1305", KEY, probe)),
        ("verify", lambda: crypto.mac_verify("hmac-sha256", KEY, probe, tag)),
        ("camellia", lambda: cam.encrypt_ecb(blocks)),
    ]


def _outcome(call: Callable[[], object]) -> None:
    # the prober may change the input under a call (a tag no longer matches, a length is off)
    with contextlib.suppress(crypto.ArchcryptError):
        call()


def test_the_gil_is_kept_below_the_threshold() -> None:
    """Deterministic: below GIL_RELEASE_MIN no other thread runs while the buffer is
    exported, however hard it asks."""
    probe, blocks = bytearray(os.urandom(MIN - 1)), bytearray(os.urandom(MIN - 16))
    for name, call in _gil_calls(probe, blocks):
        with _busy_prober(blocks if name == "camellia" else probe, grow_first=False) as hits:
            deadline = time.monotonic() + 0.1
            while time.monotonic() < deadline:
                _outcome(call)
        assert hits[0] == 0, f"{name}: the GIL was released below {MIN} bytes"


def test_the_gil_is_released_from_the_threshold() -> None:
    """From GIL_RELEASE_MIN bytes on, another thread runs inside the call: it finds the
    input exported (and cannot resize it under the kernel). The first call it gets into
    ends the wait; the bound only keeps a broken build from hanging."""
    for size in (MIN, 4 << 20):
        probe = bytearray(os.urandom(size))
        for name, call in _gil_calls(probe, probe):
            with _busy_prober(probe, grow_first=True) as hits:
                deadline = time.monotonic() + 30
                while not hits[0] and time.monotonic() < deadline:
                    _outcome(call)
            assert hits[0], f"{name}: no other thread ran during a call on {size} bytes"
