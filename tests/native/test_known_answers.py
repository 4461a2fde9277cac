"""Known answers from independent sources (NIST CAVS, RFCs, NTT, draft-irtf-cfrg-xchacha),
through the facade, for every runnable implementation."""

from __future__ import annotations

import pytest

from archcrypt import crypto

from . import vectors
from .rows import AEAD_TABLES, Rows, hash_params, params, using

SHA2_FILES = {"sha224": "SHA224", "sha256": "SHA256", "sha384": "SHA384", "sha512": "SHA512"}


# ---- SHA-2 (NIST SHAVS) ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["ShortMsg", "LongMsg"])
@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_sha2_nist_messages(algorithm: str, rows: Rows, kind: str) -> None:
    records = vectors.nist_records(f"hashes/SHA2/{SHA2_FILES[algorithm]}{kind}.rsp")
    assert len(records) > 60
    with using(rows):
        for record in records:
            bits = record.integer("Len")
            assert bits % 8 == 0  # byte-oriented files
            message = record.data("Msg")[: bits // 8]
            assert crypto.digest(algorithm, message) == record.data("MD"), str(record)


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_sha2_nist_monte_carlo(algorithm: str, rows: Rows) -> None:
    """SHAVS 6.4: 100 checkpoints, each 1000 hashes of the last three digests."""
    records = vectors.nist_records(f"hashes/SHA2/{SHA2_FILES[algorithm]}Monte.rsp")
    seed = next(r for r in records if "Seed" in r).data("Seed")
    checkpoints = [r.data("MD") for r in records if "COUNT" in r]
    assert len(checkpoints) == 100
    digest = crypto.digest
    with using(rows):
        for j, expected in enumerate(checkpoints):
            md = [seed, seed, seed]
            for _ in range(1000):
                md = [md[1], md[2], digest(algorithm, md[0] + md[1] + md[2])]
            seed = md[2]
            assert seed == expected, f"checkpoint {j}"


# ---- HMAC (RFC 4231) ---------------------------------------------------------------------


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_hmac_rfc4231(algorithm: str, rows: Rows) -> None:
    records = vectors.nist_records(f"HMAC/rfc-4231-{algorithm}.txt")
    assert len(records) >= 6
    with using(rows):
        for record in records:
            key, msg, expected = record.data("Key"), record.data("Msg"), record.data("MD")
            tag = crypto.mac(f"hmac-{algorithm}", key, msg)
            # truncated expectations compare the prefix (RFC 4231 section 4.6)
            assert tag[: len(expected)] == expected, str(record)
            h = crypto.Hmac(algorithm, key)
            h.update(msg)
            assert h.finalize()[: len(expected)] == expected, str(record)
            if len(expected) == len(tag):
                assert crypto.mac_verify(f"hmac-{algorithm}", key, msg, expected)


# RFC 4231 section 4.6 (test case 5): the one truncated case, not in the vector files.
RFC4231_TRUNCATED = {
    "sha224": "0e2aea68a90c8d37c988bcdb9fca6fa8",
    "sha256": "a3b6167473100ee06e0c796c2955552b",
    "sha384": "3abf34c3503b2a23a46efc619baef897",
    "sha512": "415fad6271580a531d4179bc891d87a6",
}


@pytest.mark.parametrize(("algorithm", "rows"), hash_params())
def test_hmac_rfc4231_truncated(algorithm: str, rows: Rows) -> None:
    key, msg = b"\x0c" * 20, b"Test With Truncation"
    expected = bytes.fromhex(RFC4231_TRUNCATED[algorithm])
    with using(rows):
        assert crypto.mac(f"hmac-{algorithm}", key, msg)[:16] == expected
        # mac_verify checks full tags only: a 128-bit prefix is an input error, not False
        with pytest.raises(crypto.InvalidInputError):
            crypto.mac_verify(f"hmac-{algorithm}", key, msg, expected)


# ---- Camellia (NTT's t_camellia.txt) -----------------------------------------------------


@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("rows", params("camellia"))
def test_camellia_ecb_ntt(bits: int, rows: Rows) -> None:
    found = list(vectors.ntt_block_vectors(f"ciphers/Camellia/camellia-{bits}-ecb.txt"))
    assert len(found) == 1280
    by_key: dict[bytes, list[vectors.BlockVector]] = {}
    with using(rows):
        for v in found:
            assert len(v.key) * 8 == bits
            assert crypto.camellia_ecb_encrypt(v.key, v.plaintext) == v.ciphertext, v.number
            assert crypto.camellia_ecb_decrypt(v.key, v.ciphertext) == v.plaintext, v.number
            by_key.setdefault(v.key, []).append(v)
        # the same blocks as one long call: reaches every multi-block path
        for key, group in by_key.items():
            cipher = crypto.Camellia(key)
            plaintext = b"".join(v.plaintext for v in group)
            ciphertext = b"".join(v.ciphertext for v in group)
            assert cipher.encrypt_ecb(plaintext) == ciphertext
            assert cipher.decrypt_ecb(ciphertext) == plaintext


# ---- ChaCha20 (RFC 7539 appendix A.2, counter overflow) ----------------------------------


def _djb_to_ietf(counter64: int, nonce8: bytes) -> tuple[int, bytes]:
    """The files use a 64-bit counter + 64-bit nonce (state words 12-13 and 14-15). The
    IETF layout reads word 12 as the counter and words 13-15 as the nonce, so the same
    state is counter = low word, nonce = LE32(high word) || nonce8."""
    return counter64 & 0xFFFFFFFF, (counter64 >> 32).to_bytes(4, "little") + nonce8


def _chacha20_djb(key: bytes, nonce8: bytes, counter64: int, data: bytes) -> bytes:
    """The files' 64-bit-counter keystream, one IETF call per stretch that does not wrap
    the low word (where the 64-bit counter carries, the IETF nonce changes)."""
    out = bytearray()
    offset = 0
    while offset < len(data):
        counter, nonce = _djb_to_ietf(counter64, nonce8)
        blocks_left = 0x1_0000_0000 - counter
        chunk = data[offset : offset + blocks_left * 64]
        out += crypto.chacha20_xor(key, nonce, chunk, counter)
        offset += len(chunk)
        counter64 = (counter64 + -(-len(chunk) // 64)) % (1 << 64)
    return bytes(out)


@pytest.mark.parametrize("rows", params("chacha20"))
def test_chacha20_rfc7539(rows: Rows) -> None:
    records = vectors.nist_records("ciphers/ChaCha20/rfc7539.txt")
    assert len(records) == 3
    with using(rows):
        for record in records:
            counter, nonce = _djb_to_ietf(
                record.integer("INITIAL_BLOCK_COUNTER"), record.data("NONCE")
            )
            key, pt, ct = record.data("KEY"), record.data("PLAINTEXT"), record.data("CIPHERTEXT")
            assert crypto.chacha20_xor(key, nonce, pt, counter) == ct, str(record)
            assert crypto.chacha20_xor(key, nonce, ct, counter) == pt, str(record)


@pytest.mark.parametrize("rows", params("chacha20"))
def test_chacha20_counter_overflow_vectors(rows: Rows) -> None:
    records = vectors.nist_records("ciphers/ChaCha20/counter-overflow.txt")
    assert len(records) == 10
    with using(rows):
        for record in records:
            key, pt, ct = record.data("KEY"), record.data("PLAINTEXT"), record.data("CIPHERTEXT")
            counter64 = record.integer("INITIAL_BLOCK_COUNTER")
            counter, nonce = _djb_to_ietf(counter64, record.data("NONCE"))
            blocks = -(-len(pt) // 64)
            if counter + blocks - 1 <= 0xFFFFFFFF:
                assert crypto.chacha20_xor(key, nonce, pt, counter) == ct, str(record)
            else:
                # one IETF call would reuse counter 0 of the same nonce: refused
                with pytest.raises(crypto.MessageTooLongError):
                    crypto.chacha20_xor(key, nonce, pt, counter)
            # split where the 64-bit counter carries: the vector's full keystream
            assert _chacha20_djb(key, record.data("NONCE"), counter64, pt) == ct, str(record)


# ---- Poly1305 (RFC 7539 section 2.5.2, appendix A.3) -------------------------------------


@pytest.mark.parametrize("rows", params("poly1305"))
def test_poly1305_rfc7539(rows: Rows) -> None:
    records = vectors.nist_records("poly1305/rfc7539.txt")
    assert len(records) >= 11
    with using(rows):
        for record in records:
            key, msg, tag = record.data("KEY"), record.data("MSG"), record.data("TAG")
            assert crypto.mac("poly1305", key, msg) == tag, str(record)
            assert crypto.mac_verify("poly1305", key, msg, tag), str(record)
            p = crypto.Poly1305(key)
            for i in range(0, len(msg), 7):
                p.update(msg[i : i + 7])
            assert p.finalize() == tag, str(record)


# ---- ChaCha20-Poly1305 (RFC 7539 2.8.2 / A.5, BoringSSL, OpenSSL) ------------------------


def _aead_records() -> list[tuple[str, vectors.Record]]:
    out = []
    for name in ("boringssl", "openssl"):
        for record in vectors.nist_records(f"ciphers/ChaCha20Poly1305/{name}.txt"):
            out.append((name, record))
    return out


def _field(record: vectors.Record, *names: str) -> bytes:
    for name in names:
        if name in record:
            return record.data(name)
    raise KeyError(names)


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_chacha20poly1305_vectors(rows: Rows) -> None:
    records = _aead_records()
    assert len(records) == 71
    failing = 0
    with using(rows):
        for source, record in records:
            where = f"{source} {record}"
            key = _field(record, "KEY")
            nonce = _field(record, "NONCE", "IV")
            aad = _field(record, "AD", "AAD")
            pt = _field(record, "IN", "PLAINTEXT")
            ct = _field(record, "CT", "CIPHERTEXT") + _field(record, "TAG")
            if record.get("RESULT") is not None:  # a vector that must not authenticate
                failing += 1
                with pytest.raises(crypto.AuthenticationError):
                    crypto.aead_open("chacha20-poly1305", key, nonce, ct, aad)
                continue
            assert crypto.aead_seal("chacha20-poly1305", key, nonce, pt, aad) == ct, where
            assert crypto.aead_open("chacha20-poly1305", key, nonce, ct, aad) == pt, where
            # every vector also fails with one bit of its tag or ciphertext flipped
            for position in (len(ct) - 1, 0):
                bad = bytearray(ct)
                bad[position] ^= 0x01
                with pytest.raises(crypto.AuthenticationError):
                    crypto.aead_open("chacha20-poly1305", key, nonce, bytes(bad), aad)
    assert failing == 1


# ---- HChaCha20 and XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03) -----------------------

HCHACHA20_KEY = bytes(range(32))
HCHACHA20_NONCE = bytes.fromhex("000000090000004a0000000031415927")
HCHACHA20_SUBKEY = bytes.fromhex("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")

XCHACHA_KEY = bytes(range(0x80, 0xA0))
XCHACHA_NONCE = bytes(range(0x40, 0x58))
XCHACHA_AAD = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
XCHACHA_PT = (
    b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
    b"the future, sunscreen would be it."
)
XCHACHA_CT = bytes.fromhex(
    "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
    "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
    "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
    "21f9664c97637da9768812f615c68b13b52e"
)
XCHACHA_TAG = bytes.fromhex("c0875924c1c7987947deafd8780acf49")


def test_hchacha20_draft_2_2_1() -> None:
    assert crypto.hchacha20(HCHACHA20_KEY, HCHACHA20_NONCE) == HCHACHA20_SUBKEY


@pytest.mark.parametrize("rows", params(*AEAD_TABLES))
def test_xchacha20poly1305_draft_a_3_1(rows: Rows) -> None:
    alg = "xchacha20-poly1305"
    with using(rows):
        sealed = crypto.aead_seal(alg, XCHACHA_KEY, XCHACHA_NONCE, XCHACHA_PT, XCHACHA_AAD)
        assert sealed == XCHACHA_CT + XCHACHA_TAG
        assert crypto.aead_open(alg, XCHACHA_KEY, XCHACHA_NONCE, sealed, XCHACHA_AAD) == XCHACHA_PT
        with pytest.raises(crypto.AuthenticationError):
            crypto.aead_open(alg, XCHACHA_KEY, XCHACHA_NONCE, sealed, XCHACHA_AAD[:-1])
