"""The pieces of named keys that need no server: the KEK file, wrapping, the ciphertext
format, the bounded metric labels, the settings that cannot work. In-process, milliseconds."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
from pathlib import Path

import pytest
from pydantic import SecretStr

from archcrypt.config import Settings
from archcrypt.keys import KeyConfigurationError, open_key_service
from archcrypt.keys import format as ctfmt
from archcrypt.keys.kek import (
    Kek,
    KekError,
    KekRing,
    create_kek_file,
    parse_kek_file,
    write_kek_file,
)
from archcrypt.keys.metrics import KeyLabels
from archcrypt.keys.types import KEY_TYPES, valid_name

from .helpers import reference_open

KEK = bytes(range(32))


def test_kek_file_formats() -> None:
    line = base64.b64encode(KEK)
    other = base64.b64encode(bytes(32))
    assert [k.material for k in parse_kek_file(line + b"\n", "f")] == [KEK]
    both = b"# comment\n\n" + line + b"\r\n  " + other + b"  \n"
    assert [k.material for k in parse_kek_file(both, "f")] == [KEK, bytes(32)]
    assert [k.material for k in parse_kek_file(KEK, "f")] == [KEK]  # raw bytes
    for bad in (b"", b"# only a comment\n", base64.b64encode(bytes(31)), b"\xff" * 33,
                line + b"\nnot base64\n", b"x" * 31):  # fmt: skip
        with pytest.raises(KekError) as info:
            parse_kek_file(bad, "the file")
        assert "the file" in str(info.value)
        assert line.decode() not in str(info.value)


def test_kek_id_is_the_documented_hmac() -> None:
    expected = hmac.new(KEK, b"archcrypt KEK id", hashlib.sha256).digest()[:8].hex()
    assert Kek.from_material(KEK).id == expected
    assert KEK.hex() not in repr(Kek.from_material(KEK))


def test_wrapping_binds_name_version_and_type() -> None:
    ring = KekRing([Kek.from_material(KEK)], "test")
    material = bytes(range(100, 132))
    kid, wrapped = ring.wrap(material, "payments", 3, "chacha20-poly1305")
    # independently: XChaCha20-Poly1305, nonce first, the documented AAD
    aad = b"archcrypt key material v1\0payments\x003\0chacha20-poly1305"
    assert reference_open("xchacha20-poly1305", KEK, wrapped[:24], wrapped[24:], aad) == material
    assert ring.unwrap(kid, wrapped, "payments", 3, "chacha20-poly1305") == material
    for name, version, key_type in [("payment", 3, "chacha20-poly1305"),
                                    ("payments", 4, "chacha20-poly1305"),
                                    ("payments", 3, "xchacha20-poly1305")]:  # fmt: skip
        with pytest.raises(KekError, match="altered or moved"):
            ring.unwrap(kid, wrapped, name, version, key_type)
    with pytest.raises(KekError, match="truncated"):
        ring.unwrap(kid, wrapped[:30], "payments", 3, "chacha20-poly1305")
    other = KekRing([Kek.generate()], "other file")
    with pytest.raises(KekError, match=f"KEK {kid}.*other file does not hold"):
        other.unwrap(kid, wrapped, "payments", 3, "chacha20-poly1305")
    # a ring unwraps under any of its KEKs and wraps under the first
    rolled = KekRing([*other.keks, *ring.keks], "ring")
    assert rolled.unwrap(kid, wrapped, "payments", 3, "chacha20-poly1305") == material
    assert rolled.wrap(material, "p", 1, "hmac-sha256")[0] == other.current.id


def test_kek_file_is_written_0600_and_atomically(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "kek"
    write_kek_file(path, [Kek.from_material(KEK)])
    assert path.stat().st_mode & 0o777 == 0o600
    assert [k.material for k in parse_kek_file(path.read_bytes(), "p")] == [KEK]
    assert sorted(p.name for p in path.parent.iterdir()) == ["kek"]
    # created only once: a second process starting at the same time keeps the first's KEK
    assert not create_kek_file(path, [Kek.generate()])
    assert [k.material for k in parse_kek_file(path.read_bytes(), "p")] == [KEK]
    assert create_kek_file(tmp_path / "dir" / "other", [Kek.generate()])
    assert sorted(p.name for p in path.parent.iterdir()) == ["kek", "other"]


def test_binary_header_is_the_documented_one() -> None:
    key_type = KEY_TYPES["xchacha20-poly1305"]
    assert ctfmt.header(key_type, 258) == b"ac\x01\x02" + struct.pack(">I", 258)
    assert ctfmt.header(KEY_TYPES["chacha20-poly1305"], 1) == b"ac\x01\x01\0\0\0\x01"
    blob = ctfmt.header(key_type, 7) + bytes(24) + bytes(16)
    sealed = ctfmt.parse_binary(blob, key_type)
    assert (sealed.version, sealed.nonce, sealed.body) == (7, bytes(24), bytes(16))
    for bad, message in [
        (b"xx" + blob[2:], "magic"),
        (blob[:2] + b"\x02" + blob[3:], "format version 2"),
        (blob[:3] + b"\x09" + blob[4:], "algorithm id 9"),
        (blob[:3] + b"\x01" + blob[4:], "not this key's"),
        (blob[:4] + bytes(4) + blob[8:], "start at 1"),
        (blob[:-1], "at least"),
        (blob[:7], "header"),
    ]:
        with pytest.raises(ctfmt.MalformedError, match=message):
            ctfmt.parse_binary(bad, key_type)


def test_text_form_has_one_spelling() -> None:
    assert ctfmt.parse_text("archcrypt:v12:AAE=") == (12, b"\0\1")
    assert ctfmt.to_text(12, b"\0\1") == "archcrypt:v12:AAE="
    for bad in (
        "archcrypt:v012:AAE=",
        "archcrypt:v0:AAE=",
        "archcrypt:v1:AAF=",
        "archcrypt:v1:AAE",
        "archcrypt:v1:AA E=",
        "archcrypt:v4294967296:AA==",
        "archcrypt:v1:AAE=\n",
        "",
    ):
        with pytest.raises(ctfmt.MalformedError):
            ctfmt.parse_text(bad)
    assert ctfmt.parse_text("archcrypt:v4294967295:") == (4294967295, b"")


def test_names() -> None:
    for good in ("a", "0", "a" * 64, "pay.ments_v2-eu"):
        assert valid_name(good)
    for bad in ("", "A", "_a", ".a", "a" * 65, "a/b", "a b", "a\n", "ä"):
        assert not valid_name(bad)


def test_key_labels_are_bounded() -> None:
    labels = KeyLabels(2)
    assert [labels(n) for n in ("a", "b", "c", "a", "d")] == ["a", "b", "other", "a", "other"]
    assert KeyLabels(5)("other") == "other"
    assert KeyLabels(0)("a") == "other"


def test_shared_store_needs_a_kek_file(tmp_path: Path) -> None:
    settings = Settings(keystore_url=SecretStr("postgresql://x@/db?host=/nonexistent"))
    needs = "ARCHCRYPT_KEYSTORE_URL needs ARCHCRYPT_KEK_FILE"
    with pytest.raises(KeyConfigurationError, match=needs):
        open_key_service(settings)
    assert "postgresql" not in repr(settings)  # the URL (and its password) stays out of reprs
    url_file = tmp_path / "url"
    url_file.write_text("postgresql://x@/db?host=/nonexistent\n")
    with pytest.raises(KeyConfigurationError, match=needs):
        open_key_service(Settings(keystore_url_file=url_file))
    with pytest.raises(KeyConfigurationError, match="cannot read"):
        open_key_service(Settings(keystore_url_file=tmp_path / "missing"))


def test_made_up_versions_cost_one_reload_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening with a version above the cached primary reloads the key (it may be a rotation
    not seen here yet), but a client looping over made-up versions must not turn every
    request into a store query."""
    import anyio

    from archcrypt.keys import service as key_service
    from archcrypt.keys.errors import UnknownVersionError

    kek_file = tmp_path / "kek"
    write_kek_file(kek_file, [Kek.from_material(KEK)])
    settings = Settings(data_dir=tmp_path / "data", kek_file=kek_file)
    service = open_key_service(settings)
    other = open_key_service(settings)  # another instance on the same store
    try:
        service.create("loop", "xchacha20-poly1305")
        anyio.run(service.key, "loop")  # cached, as after a first request
        gets = 0
        real_get = service.store.get

        def counting_get(name: str):  # type: ignore[no-untyped-def]
            nonlocal gets
            gets += 1
            return real_get(name)

        monkeypatch.setattr(service.store, "get", counting_get)
        clock = [1000.0]
        monkeypatch.setattr(key_service.time, "monotonic", lambda: clock[0])

        async def open_many(version: int, times: int) -> None:
            key = await service.key("loop")
            for _ in range(times):
                with pytest.raises(UnknownVersionError):
                    await service.material(key, version)

        anyio.run(open_many, 7, 50)
        assert gets == 1
        clock[0] += key_service.MISSING_TTL_SECONDS
        anyio.run(open_many, 8, 50)
        assert gets == 2
        # A real rotation made elsewhere is still found by the next allowed reload.
        other.rotate("loop")
        clock[0] += key_service.MISSING_TTL_SECONDS

        async def open_rotated() -> int:
            key = await service.material(await service.key("loop"), 2)
            return key[0].primary_version

        assert anyio.run(open_rotated) == 2
    finally:
        other.close()
        service.close()
