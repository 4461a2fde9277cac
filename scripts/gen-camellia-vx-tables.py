#!/usr/bin/env python3
"""Derive the vperm tables of native/src/camellia/vx.c (Camellia's S-boxes on the z13
vector facility, by GF(2^4)-tower inversion) and check them on all 256 inputs.

    scripts/gen-camellia-vx-tables.py            print the #define lines
    scripts/gen-camellia-vx-tables.py --check    exit 1 unless vx.c holds exactly these

The chain, each step checked against the one before:
  1. Camellia's s1 is affine-equivalent to the AES S-box: s1 = post(aes_sbox(pre(x))),
     the maps of camellia/power8.c (nibble tables, there in vpermxor's order).
  2. The AES S-box minus its constant 0x63 is Hamburg's vector-permute inversion (CHES
     2009; OpenSSL's vpaes-x86_64.pl tables): the input in his basis (ipt), five 16-entry
     lookups in GF(2^4) with 1/0 an "infinity" flag that zeroes a lookup, and an output
     basis (sbou, sbot).
  3. Composed, and with vpaes' flag (bit 7, pshufb's zeroing) moved to bit 4 (vperm's
     second operand), one S-box is: v = in_lo[x] ^ in_hi[x >> 4]; i = v >> 4; k = v & 15;
     the inversion; s1(x) = out_u[io] (flag: out_c) ^ out_t[jo] (flag: 0).
  4. s2 = s1 <<< 1 and s3 = s1 >>> 1 rotate the output tables, s4(x) = s1(x <<< 1) has
     input tables of its own.
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

VX_C = Path(__file__).resolve().parents[1] / "native" / "src" / "camellia" / "vx.c"


def quads(*qs: int) -> list[int]:
    return list(b"".join(struct.pack("<Q", q) for q in qs))


# OpenSSL crypto/aes/asm/vpaes-x86_64.pl: .Lk_inv (inv, inva), .Lk_ipt, .Lk_sbo.
INV = quads(0x0E05060F0D080180, 0x040703090A0B0C02)
INVA = quads(0x01040A060F0B0780, 0x030D0E0C02050809)
IPT_LO = quads(0xC2B2E8985A2A7000, 0xCABAE09052227808)
IPT_HI = quads(0x4C01307D317C4D00, 0xCD80B1FCB0FDCC81)
SBOU = quads(0xD0D26D176FBDC700, 0x15AABF7AC502A878)
SBOT = quads(0xCFE474A55FBB6A00, 0x8E1E90D1412B35FA)


def vpermxor_table(*entries_15_to_0: int) -> list[int]:
    return list(reversed(entries_15_to_0))


# camellia/power8.c: PRE1_HI/LO and POST1_HI/LO.
PRE1_HI = vpermxor_table(
    0x84, 0x23, 0x17, 0xb0, 0xe5, 0x42, 0x76, 0xd1,
    0x5d, 0xfa, 0xce, 0x69, 0x3c, 0x9b, 0xaf, 0x08,
)
PRE1_LO = vpermxor_table(
    0x02, 0x03, 0x1b, 0x1a, 0xb3, 0xb2, 0xaa, 0xab,
    0xa9, 0xa8, 0xb0, 0xb1, 0x18, 0x19, 0x01, 0x00,
)
POST1_HI = vpermxor_table(
    0x78, 0xc0, 0xa1, 0x19, 0xd8, 0x60, 0x01, 0xb9,
    0xd0, 0x68, 0x09, 0xb1, 0x70, 0xc8, 0xa9, 0x11,
)
POST1_LO = vpermxor_table(
    0x49, 0xda, 0xdc, 0x4f, 0x66, 0xf5, 0xf3, 0x60,
    0x29, 0xba, 0xbc, 0x2f, 0x06, 0x95, 0x93, 0x00,
)

# RFC 3713 section 2.4.4, SBOX1.
SBOX1 = [
    112, 130, 44, 236, 179, 39, 192, 229, 228, 133, 87, 53, 234, 12, 174, 65,
    35, 239, 107, 147, 69, 25, 165, 33, 237, 14, 79, 78, 29, 101, 146, 189,
    134, 184, 175, 143, 124, 235, 31, 206, 62, 48, 220, 95, 94, 197, 11, 26,
    166, 225, 57, 202, 213, 71, 93, 61, 217, 1, 90, 214, 81, 86, 108, 77,
    139, 13, 154, 102, 251, 204, 176, 45, 116, 18, 43, 32, 240, 177, 132, 153,
    223, 76, 203, 194, 52, 126, 118, 5, 109, 183, 169, 49, 209, 23, 4, 215,
    20, 88, 58, 97, 222, 27, 17, 28, 50, 15, 156, 22, 83, 24, 242, 34,
    254, 68, 207, 178, 195, 181, 122, 145, 36, 8, 232, 168, 96, 252, 105, 80,
    170, 208, 160, 125, 161, 137, 98, 151, 84, 91, 30, 149, 224, 255, 100, 210,
    16, 196, 0, 72, 163, 247, 117, 219, 138, 3, 230, 218, 9, 63, 221, 148,
    135, 92, 131, 2, 205, 74, 144, 51, 115, 103, 246, 243, 157, 127, 191, 226,
    82, 155, 216, 38, 200, 55, 198, 59, 129, 150, 111, 75, 19, 190, 99, 46,
    233, 121, 167, 140, 159, 110, 188, 142, 41, 245, 249, 182, 47, 253, 180, 89,
    120, 152, 6, 106, 231, 70, 113, 186, 212, 37, 171, 66, 136, 162, 141, 250,
    114, 7, 185, 85, 248, 238, 172, 10, 54, 73, 42, 104, 60, 56, 241, 164,
    64, 40, 211, 123, 187, 201, 67, 193, 21, 227, 173, 244, 119, 199, 128, 158,
]


def rotl(b: int, n: int) -> int:
    return ((b << n) | (b >> (8 - n))) & 0xFF


def gf_mul(a: int, b: int) -> int:  # GF(2^8) with the AES polynomial x^8 + x^4 + x^3 + x + 1
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        if a & 0x100:
            a ^= 0x11B
        b >>= 1
    return r


def aes_sbox(x: int) -> int:
    inv = 0 if x == 0 else next(b for b in range(1, 256) if gf_mul(x, b) == 1)
    return inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63


def nibbles(hi: list[int], lo: list[int], x: int) -> int:
    return hi[x >> 4] ^ lo[x & 15]


def pshufb(t: list[int], i: int) -> int:
    return 0 if i & 0x80 else t[i & 15]


def vperm(a: list[int], b: list[int], i: int) -> int:
    return (a + b)[i & 31]


def derive() -> dict[str, list[int] | int]:
    pre1 = lambda x: nibbles(PRE1_HI, PRE1_LO, x)  # noqa: E731
    post1 = lambda x: nibbles(POST1_HI, POST1_LO, x)  # noqa: E731
    assert all(post1(aes_sbox(pre1(x))) == SBOX1[x] for x in range(256)), "step 1"

    ipt = lambda y: pshufb(IPT_LO, y & 15) ^ pshufb(IPT_HI, y >> 4)  # noqa: E731

    def vpaes(y: int) -> int:
        v = ipt(y)
        i, k = v >> 4, v & 15
        ak, j = pshufb(INVA, k), i ^ k
        io = pshufb(INV, pshufb(INV, i) ^ ak) ^ j
        jo = pshufb(INV, pshufb(INV, j) ^ ak) ^ i
        return pshufb(SBOU, io) ^ pshufb(SBOT, jo)

    assert all(vpaes(y) ^ 0x63 == aes_sbox(y) for y in range(256)), "step 2"

    # Step 3: composed tables, the flag in bit 4.
    flag = lambda t: [0x10 if e == 0x80 else e for e in t]  # noqa: E731
    inv, inva = flag(INV), flag(INVA)
    linear_post = lambda y: post1(y) ^ post1(0)  # noqa: E731
    into = lambda f: ([f(n) for n in range(16)], [f(n << 4) ^ f(0) for n in range(16)])  # noqa: E731
    in_lo, in_hi = into(lambda x: ipt(pre1(x)))
    in4_lo, in4_hi = into(lambda x: ipt(pre1(rotl(x, 1))))
    out_c = linear_post(0x63) ^ post1(0)
    out_u = [linear_post(SBOU[n]) ^ out_c for n in range(16)]
    out_t = [linear_post(SBOT[n]) for n in range(16)]

    zero = [0] * 16

    def sbox(x: int, il: list[int], ih: list[int], ou: list[int], oc: int, ot: list[int]) -> int:
        v = vperm(il, il, x) ^ vperm(ih, ih, x >> 4)
        i, k = v >> 4, v & 15
        ak, j = vperm(inva, inva, k), i ^ k
        io = vperm(inv, zero, vperm(inv, inv, i) ^ ak) ^ j
        jo = vperm(inv, zero, vperm(inv, inv, j) ^ ak) ^ i
        return vperm(ou, [oc] * 16, io) ^ vperm(ot, zero, jo)

    rot = lambda t, n: [rotl(e, n) for e in t]  # noqa: E731
    out = {1: (out_u, out_c, out_t), 2: (rot(out_u, 1), rotl(out_c, 1), rot(out_t, 1)),
           3: (rot(out_u, 7), rotl(out_c, 7), rot(out_t, 7))}
    # Step 4, and the S-boxes as RFC 3713 section 2.4.4 defines them.
    for x in range(256):
        assert sbox(x, in_lo, in_hi, *out[1]) == SBOX1[x], "s1"
        assert sbox(x, in_lo, in_hi, *out[2]) == rotl(SBOX1[x], 1), "s2"
        assert sbox(x, in_lo, in_hi, *out[3]) == rotl(SBOX1[x], 7), "s3"
        assert sbox(x, in4_lo, in4_hi, *out[1]) == SBOX1[rotl(x, 1)], "s4"

    tables: dict[str, list[int] | int] = {
        "IN_LO": in_lo, "IN_HI": in_hi, "IN4_LO": in4_lo, "IN4_HI": in4_hi,
        "INV": inv, "INVA": inva,
    }
    for n in (1, 2, 3):
        tables[f"OUT{n}_U"], tables[f"OUT{n}_T"] = out[n][0], out[n][2]
    for n in (1, 2, 3):
        tables[f"OUT{n}_C"] = out[n][1]
    return tables


def render(tables: dict[str, list[int] | int]) -> list[str]:
    lines = []
    for name, t in tables.items():
        if isinstance(t, list):
            lines.append(f"#define {name:6s} {{" + ", ".join(f"0x{e:02x}" for e in t) + "}")
        else:
            lines.append(f"#define {name} SPLAT(0x{t:02x})")
    return lines


def main() -> int:
    lines = render(derive())
    if sys.argv[1:] == ["--check"]:
        source = VX_C.read_text()
        have = [ln for ln in source.splitlines() if re.match(r"#define (IN|OUT|INV)\w* ", ln)]
        if have != lines:
            print(f"{VX_C}: the tables differ from the derivation:", *lines, sep="\n")
            return 1
        print(f"{VX_C}: {len(lines)} tables as derived")
        return 0
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
