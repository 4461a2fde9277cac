"""No plaintext or key is left behind in native memory (issue 11).

The per-message calls (seal, open, ChaCha20, ECB: archcrypt._fast) write their result
straight into the bytes object they return, so there is no native copy to wipe. What is
left to prove: a failed open wipes what it decrypted before that bytes object is freed (the
library's contract, checked here through the entry points _fast calls), and a cffi output
that held a key (HChaCha20's subkey) is zeroed once copied out.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from archcrypt import crypto
from archcrypt.crypto import _lib, aead

OPENS = {
    "chacha20-poly1305": (_lib.lib.archcrypt_chacha20poly1305_open, 12),
    "xchacha20-poly1305": (_lib.lib.archcrypt_xchacha20poly1305_open, 24),
}


def test_wipe_zeroes_a_buffer() -> None:
    buffer = _lib.output(64)
    _lib.ffi.memmove(buffer, os.urandom(64), 64)
    _lib.wipe(buffer, 64)
    assert _lib.ffi.unpack(buffer, 64) == bytes(64)


@pytest.mark.parametrize("algorithm", sorted(OPENS))
@pytest.mark.parametrize("size", [1, 64, 100_000])
def test_a_failed_open_wipes_what_it_decrypted(algorithm: str, size: int) -> None:
    open_, nonce_size = OPENS[algorithm]
    key, nonce = os.urandom(32), os.urandom(nonce_size)
    sealed = bytearray(crypto.aead_seal(algorithm, key, nonce, os.urandom(size)))
    sealed[-1] ^= 1
    out = _lib.output(size)
    _lib.ffi.memmove(out, b"\xa5" * size, size)
    status = open_(out, bytes(sealed), len(sealed), b"", 0, key, nonce)
    assert status == _lib.lib.ARCHCRYPT_ERR_AUTHENTICATION
    assert _lib.ffi.unpack(out, size) == bytes(size)
    with pytest.raises(crypto.AuthenticationError):
        crypto.aead_open(algorithm, key, nonce, sealed)


def test_the_hchacha20_subkey_is_wiped(monkeypatch: pytest.MonkeyPatch) -> None:
    wiped: list[bytes] = []

    def spy(buffer: Any, length: int) -> None:
        _lib.wipe(buffer, length)
        wiped.append(bytes(_lib.ffi.unpack(buffer, length)))

    monkeypatch.setattr(aead, "wipe", spy)
    subkey = crypto.hchacha20(os.urandom(32), os.urandom(16))
    assert len(subkey) == 32 and subkey != bytes(32)
    assert wiped == [bytes(32)]
