"""The key-encryption key (KEK): every version's material is stored only wrapped under it.

Wrapping is XChaCha20-Poly1305 through archcrypt's own kernels with a fresh 24-byte nonce;
the associated data binds the key's name, version and type, so a wrapped blob moved to
another row (another key, version or type) fails to unwrap instead of yielding a key.

A KEK file holds one KEK per line, standard base64 of 32 bytes (blank lines and lines
starting with # are ignored), or exactly 32 raw bytes. The first KEK wraps new material;
the others only unwrap: that is how a KEK is rotated without a moment where some instance
cannot read a row (see `archcrypt kek rotate`). Each KEK has a public id, the first 8 bytes
of HMAC-SHA-256(KEK, "archcrypt KEK id"), stored with every wrapped row; it tells which KEK
a row needs and reveals nothing about the KEK itself.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .. import crypto

logger = logging.getLogger("archcrypt")

KEK_SIZE: Final = 32
_WRAP_ALGORITHM: Final = "xchacha20-poly1305"
_WRAP_NONCE_SIZE: Final = 24
_ID_LABEL: Final = b"archcrypt KEK id"
_AAD_LABEL: Final = b"archcrypt key material v1"
EMBEDDED_KEK_NAME: Final = "kek"


class KekError(Exception):
    """A KEK file that cannot be used, or a row no KEK of the ring can unwrap."""


@dataclass(frozen=True)
class Kek:
    material: bytes
    id: str

    @classmethod
    def from_material(cls, material: bytes) -> Kek:
        if len(material) != KEK_SIZE:
            raise KekError(f"a KEK is {KEK_SIZE} bytes, got {len(material)}")
        kid = crypto.mac("hmac-sha256", material, _ID_LABEL)[:8].hex()
        return cls(material, kid)

    @classmethod
    def generate(cls) -> Kek:
        return cls.from_material(secrets.token_bytes(KEK_SIZE))

    def __repr__(self) -> str:  # never the material
        return f"Kek(id={self.id!r})"


def wrap_aad(name: str, version: int, key_type: str) -> bytes:
    # Name (no NUL by its pattern), version and type, NUL-separated: one encoding per triple.
    return b"\0".join((_AAD_LABEL, name.encode("ascii"), str(version).encode(), key_type.encode()))


class KekRing:
    """The current KEK (first) and the older ones still accepted for unwrapping."""

    def __init__(self, keks: Sequence[Kek], source: str) -> None:
        if not keks:
            raise KekError(f"{source} holds no KEK")
        by_id: dict[str, Kek] = {}
        for kek in keks:
            by_id.setdefault(kek.id, kek)
        self.keks = tuple(by_id.values())
        self.source = source
        self._by_id = by_id

    @property
    def current(self) -> Kek:
        return self.keks[0]

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self._by_id)

    def wrap(self, material: bytes, name: str, version: int, key_type: str) -> tuple[str, bytes]:
        """(kek id, nonce || ciphertext || tag) of `material` under the current KEK."""
        kek = self.current
        nonce = secrets.token_bytes(_WRAP_NONCE_SIZE)
        sealed = crypto.aead_seal(
            _WRAP_ALGORITHM, kek.material, nonce, material, wrap_aad(name, version, key_type)
        )
        return kek.id, nonce + sealed

    def unwrap(self, kek_id: str, wrapped: bytes, name: str, version: int, key_type: str) -> bytes:
        kek = self._by_id.get(kek_id)
        if kek is None:
            raise KekError(
                f"version {version} of key {name!r} is wrapped under KEK {kek_id}, which "
                f"{self.source} does not hold (it holds {', '.join(sorted(self._by_id))})"
            )
        if len(wrapped) < _WRAP_NONCE_SIZE + crypto.AEAD_TAG_SIZE:
            raise KekError(f"version {version} of key {name!r}: the wrapped material is truncated")
        try:
            return crypto.aead_open(
                _WRAP_ALGORITHM,
                kek.material,
                wrapped[:_WRAP_NONCE_SIZE],
                wrapped[_WRAP_NONCE_SIZE:],
                wrap_aad(name, version, key_type),
            )
        except crypto.AuthenticationError:
            raise KekError(
                f"version {version} of key {name!r} does not unwrap under KEK {kek_id}: the row "
                "was altered or moved"
            ) from None


def parse_kek_file(data: bytes, source: str) -> list[Kek]:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        lines = [ln.strip() for ln in text.splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith("#")]
        try:
            decoded = [base64.b64decode(ln, validate=True) for ln in lines]
        except binascii.Error:
            decoded = None
        if decoded and all(len(d) == KEK_SIZE for d in decoded):
            return [Kek.from_material(d) for d in decoded]
    if len(data) == KEK_SIZE:
        return [Kek.from_material(data)]
    # Say what is wrong without quoting the content.
    raise KekError(
        f"{source}: expected one standard-base64 {KEK_SIZE}-byte KEK per line (the first wraps, "
        f"the others only unwrap) or exactly {KEK_SIZE} raw bytes; "
        f"generate one with: head -c {KEK_SIZE} /dev/urandom | base64"
    )


def load_kek_file(path: Path) -> KekRing:
    try:
        data = path.read_bytes()
        mode = path.stat().st_mode
    except OSError as exc:
        raise KekError(f"cannot read the KEK file {path}: {exc.strerror}") from None
    # Group read is how a Kubernetes Secret reaches a non-root pod (fsGroup); more is not.
    if mode & (stat.S_IRWXO | stat.S_IWGRP | stat.S_IXGRP):
        logger.warning(
            "the KEK file %s is open to others or group-writable (mode %o); 0400 or 0440 is enough",
            path,
            stat.S_IMODE(mode),
        )
    return KekRing(parse_kek_file(data, str(path)), str(path))


def format_kek_file(keks: Sequence[Kek]) -> bytes:
    lines = ["# archcrypt KEKs: the first wraps, the others only unwrap. Keep this file secret."]
    lines += [base64.b64encode(k.material).decode("ascii") for k in keks]
    return ("\n".join(lines) + "\n").encode("ascii")


def _write_temporary(path: Path, keks: Sequence[Kek]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, format_kek_file(keks))
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def _sync_directory(directory: Path) -> None:
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_kek_file(path: Path, keks: Sequence[Kek]) -> None:
    """Atomically replace `path` (mode 0600) with `keks`, durably: written, fsynced, renamed,
    and the directory fsynced, so a crash leaves the old file or the new one."""
    tmp = _write_temporary(path, keks)
    os.replace(tmp, path)
    _sync_directory(path.parent)


def create_kek_file(path: Path, keks: Sequence[Kek]) -> bool:
    """Like write_kek_file, but only if `path` does not exist yet (False: it did). Two
    processes starting at once (uvicorn workers) thus agree on one generated KEK."""
    tmp = _write_temporary(path, keks)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink()
    _sync_directory(path.parent)
    return True


def embedded_kek(data_dir: Path) -> KekRing:
    """The embedded default's KEK, in the data directory beside the database; generated on
    first use. It protects a copy of the database on its own, not a copy of the directory."""
    path = data_dir / EMBEDDED_KEK_NAME
    if not path.exists() and create_kek_file(path, [Kek.generate()]):
        logger.warning(
            "generated a KEK in %s (mode 0600) because ARCHCRYPT_KEK_FILE is not set: the key "
            "store and the KEK that protects it are in one directory. For anything beyond a "
            "single machine, keep the KEK elsewhere and set ARCHCRYPT_KEK_FILE.",
            path,
        )
    return load_kek_file(path)
