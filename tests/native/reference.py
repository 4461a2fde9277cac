"""Independent references: pyca/cryptography (OpenSSL), hashlib/hmac, and a few lines of
pure Python where pyca has no equivalent (HChaCha20, XChaCha20-Poly1305, Poly1305 maths)."""

from __future__ import annotations

import hashlib
import hmac
import struct

from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.poly1305 import Poly1305


def chacha20poly1305_seal(key: bytes, nonce: bytes, pt: bytes, aad: bytes) -> bytes:
    return ChaCha20Poly1305(key).encrypt(nonce, pt, aad)


def chacha20_xor(key: bytes, nonce12: bytes, data: bytes, counter: int) -> bytes:
    """OpenSSL's ChaCha20 takes a 16-byte IV: LE32 block counter || 96-bit nonce."""
    iv = counter.to_bytes(4, "little") + nonce12
    return Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor().update(data)


def poly1305(key: bytes, msg: bytes) -> bytes:
    return Poly1305.generate_tag(key, msg)


P1305 = (1 << 130) - 5
R_CLAMP = 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF


def poly1305_maths(key: bytes, msg: bytes) -> bytes:
    """RFC 8439 section 2.5.1, with Python integers (no limbs, nothing to get wrong)."""
    r = int.from_bytes(key[:16], "little") & R_CLAMP
    s = int.from_bytes(key[16:], "little")
    acc = 0
    for i in range(0, len(msg), 16):
        block = msg[i : i + 16] + b"\x01"
        acc = (acc + int.from_bytes(block, "little")) * r % P1305
    return ((acc + s) % (1 << 128)).to_bytes(16, "little")


def digest(algorithm: str, data: bytes) -> bytes:
    return hashlib.new(algorithm, data).digest()


def hmac_tag(algorithm: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, algorithm).digest()


def camellia_ecb(key: bytes, data: bytes, *, decrypt: bool = False) -> bytes:
    cipher = Cipher(Camellia(key), modes.ECB())
    ctx = cipher.decryptor() if decrypt else cipher.encryptor()
    return ctx.update(data) + ctx.finalize()


def _rotl32(v: int, n: int) -> int:
    return ((v << n) | (v >> (32 - n))) & 0xFFFFFFFF


def _quarter_round(x: list[int], a: int, b: int, c: int, d: int) -> None:
    x[a] = (x[a] + x[b]) & 0xFFFFFFFF
    x[d] = _rotl32(x[d] ^ x[a], 16)
    x[c] = (x[c] + x[d]) & 0xFFFFFFFF
    x[b] = _rotl32(x[b] ^ x[c], 12)
    x[a] = (x[a] + x[b]) & 0xFFFFFFFF
    x[d] = _rotl32(x[d] ^ x[a], 8)
    x[c] = (x[c] + x[d]) & 0xFFFFFFFF
    x[b] = _rotl32(x[b] ^ x[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """draft-irtf-cfrg-xchacha section 2.2: 20 ChaCha rounds, no feed-forward, words 0-3
    and 12-15 out."""
    x = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    x += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        _quarter_round(x, 0, 4, 8, 12)
        _quarter_round(x, 1, 5, 9, 13)
        _quarter_round(x, 2, 6, 10, 14)
        _quarter_round(x, 3, 7, 11, 15)
        _quarter_round(x, 0, 5, 10, 15)
        _quarter_round(x, 1, 6, 11, 12)
        _quarter_round(x, 2, 7, 8, 13)
        _quarter_round(x, 3, 4, 9, 14)
    return struct.pack("<8I", *x[0:4], *x[12:16])


def xchacha20poly1305_seal(key: bytes, nonce24: bytes, pt: bytes, aad: bytes) -> bytes:
    """draft-irtf-cfrg-xchacha section 2.3: subkey from the first 16 nonce bytes, then
    ChaCha20-Poly1305 with nonce 0x00000000 || the last 8."""
    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).encrypt(b"\x00" * 4 + nonce24[16:], pt, aad)
