"""Native output buffers that held a plaintext or a key are zeroed once copied out, fresh
ones (freed next) as well as this thread's reused bulk buffer (issue 11)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from archcrypt import crypto
from archcrypt.crypto import _lib, aead, ecb


def test_wipe_zeroes_a_fresh_buffer() -> None:
    buffer = _lib.allocate("char[]", 64)
    _lib.ffi.memmove(buffer, os.urandom(64), 64)
    _lib.wipe_reused(buffer, 64)
    assert _lib.ffi.unpack(buffer, 64) == bytes(64)


@pytest.mark.parametrize("size", [16, 100_000])  # a fresh buffer, and the reused bulk one
def test_secret_outputs_are_wiped(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    wiped: list[tuple[bytes, int]] = []

    def spy(buffer: Any, length: int) -> None:
        _lib.wipe_reused(buffer, length)
        wiped.append((bytes(_lib.ffi.unpack(buffer, length)), length))

    monkeypatch.setattr(aead, "wipe_reused", spy)
    monkeypatch.setattr(ecb, "wipe_reused", spy)
    key, nonce, plaintext = os.urandom(32), os.urandom(12), os.urandom(size)
    sealed = crypto.aead_seal("chacha20-poly1305", key, nonce, plaintext, b"")
    assert crypto.aead_open("chacha20-poly1305", key, nonce, sealed, b"") == plaintext
    crypto.chacha20_xor(key, nonce, plaintext)
    crypto.hchacha20(key, os.urandom(16))
    blocks = plaintext[: size // 16 * 16]
    crypto.camellia_ecb_decrypt(os.urandom(16), blocks)
    lengths = [length for _, length in wiped]
    assert lengths == [size, size, 32, len(blocks)]
    assert all(content == bytes(length) for content, length in wiped)
