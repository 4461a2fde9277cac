"""Readers for the cryptography-vectors files: NIST-style "KEY = VALUE" records and NTT's
Camellia tables. Values stay strings; `data()` turns hex or "quoted ASCII" into bytes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import cryptography_vectors


def read_text(path: str) -> str:
    with cryptography_vectors.open_vector_file(path, "r") as handle:
        return str(handle.read())


@dataclass
class Record:
    """One blank-line-separated block, keys upper-cased, plus the [SECTION] it sits under."""

    fields: dict[str, str]
    section: dict[str, str] = field(default_factory=dict)
    line: int = 0

    def __contains__(self, key: str) -> bool:
        return key.upper() in self.fields

    def __getitem__(self, key: str) -> str:
        return self.fields[key.upper()]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.fields.get(key.upper(), default)

    def data(self, key: str) -> bytes:
        return data(self[key])

    def integer(self, key: str) -> int:
        return int(self[key])

    def __str__(self) -> str:
        label = self.fields.get("COUNT", "?")
        return f"line {self.line} (COUNT {label})"


def data(value: str) -> bytes:
    """Hex ("00ff", "" for empty) or a double-quoted ASCII string."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].encode("ascii")
    return bytes.fromhex(value)


_SECTION = re.compile(r"^\[(?P<body>[^\]]*)\]$")


def _parse_section(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in body.split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip().upper()] = value.strip()
        elif part.strip():
            out[part.strip().upper()] = ""
    return out


def nist_records(path: str) -> list[Record]:
    """Records of a NIST CAVS-style file: `KEY = VALUE` lines, blank lines between records,
    `#` comments anywhere, `[L = 32]` section headers that apply to the records below them."""
    records: list[Record] = []
    section: dict[str, str] = {}
    current: dict[str, str] = {}
    start = 0

    def flush() -> None:
        nonlocal current
        if current:
            records.append(Record(current, dict(section), start))
        current = {}

    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.strip()
        if not line:
            flush()
            continue
        if line.startswith("#"):
            continue
        header = _SECTION.match(line)
        if header:
            flush()
            section = _parse_section(header.group("body"))
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"{path}:{number}: not KEY = VALUE: {raw!r}")
        key = key.strip().upper()
        if key in current:  # a repeated key starts the next record even without a blank line
            flush()
        if not current:
            start = number
        current[key] = value.strip()
    flush()
    return records


@dataclass(frozen=True)
class BlockVector:
    key: bytes
    plaintext: bytes
    ciphertext: bytes
    number: int


_NTT_LINE = re.compile(r"^(?P<kind>[KPC])\s+No\.(?P<number>\d+)\s*:\s*(?P<hex>[0-9A-Fa-f ]+)$")


def ntt_block_vectors(path: str) -> Iterator[BlockVector]:
    """NTT's t_camellia.txt layout: `K No.001 : ..` then pairs of `P No.nnn`/`C No.nnn`."""
    key: bytes | None = None
    plaintext: tuple[int, bytes] | None = None
    for raw in read_text(path).splitlines():
        match = _NTT_LINE.match(raw.strip())
        if not match:
            continue
        value = bytes.fromhex(match.group("hex"))
        number = int(match.group("number"))
        kind = match.group("kind")
        if kind == "K":
            key, plaintext = value, None
        elif kind == "P":
            plaintext = (number, value)
        else:
            if key is None or plaintext is None or plaintext[0] != number:
                raise ValueError(f"{path}: C No.{number} without its key and plaintext")
            yield BlockVector(key, plaintext[1], value, number)
            plaintext = None
