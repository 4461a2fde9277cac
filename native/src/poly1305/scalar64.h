/* Poly1305 in radix 2^64 with 128-bit products (RFC 8439 2.5; OpenSSL poly1305.c style): the state head and scalar path shared by scalar64.c, avx2.c and avx512ifma.c. */
#ifndef ARCHCRYPT_POLY1305_SCALAR64_H
#define ARCHCRYPT_POLY1305_SCALAR64_H

#include <assert.h>

#include "common.h"
#include "poly1305/poly1305.h"

#if defined(__x86_64__)
#include <x86intrin.h> /* _addcarry_u64: plain adc, no ISA flag */
#endif

#ifndef __SIZEOF_INT128__
#error "poly1305/scalar64.h needs unsigned __int128"
#endif

__extension__ typedef unsigned __int128 p64_u128;

/* The first 64 bytes of poly1305_state for every kernel built on this header.
 * h stays in radix 2^64 between calls whichever path absorbed the blocks, so a
 * stream may go scalar, vector, scalar, ... and finish is one function. The
 * vector kernels keep their powers of r from byte 64 on, computed on the first
 * call long enough to use them (`powers` says whether they are there). */
typedef struct {
    uint64_t h[3];   /* h0 + h1 2^64 + h2 2^128, h2 <= 4 between calls: h < 2^131 */
    uint64_t r[2];   /* clamped r */
    uint64_t s[2];   /* second key half */
    uint64_t powers; /* nonzero once the vector powers of r are in the state */
} p64_head;

static_assert(sizeof(p64_head) == 64, "the Poly1305 head is 64 bytes");

#define P64_VEC_OFFSET 64

/* The head lives in a byte array: read and write its fields with memcpy (the
 * compiler turns these into plain loads and stores) rather than through a cast. */
#define P64_GET(st, field, dst) \
    memcpy(&(dst), (st)->opaque + offsetof(p64_head, field), sizeof(dst))
#define P64_PUT(st, field, src) \
    memcpy((st)->opaque + offsetof(p64_head, field), &(src), sizeof(src))

/* One 64-bit word of the head at byte offset off, read or written alone (P64_GET copies a
 * whole array field, and gcc 12 takes that through a stack buffer). */
static inline uint64_t p64_word(const poly1305_state *st, size_t off)
{
    uint64_t v;

    memcpy(&v, st->opaque + off, sizeof v);
    return v;
}

static inline void p64_set_word(poly1305_state *st, size_t off, uint64_t v)
{
    memcpy(st->opaque + off, &v, sizeof v);
}

/* One 64-bit word of the head, straight from a register. */
#define P64_PUT_WORD(st, field, i, v)                                                     \
    do {                                                                                  \
        uint64_t w_ = (v);                                                                \
        memcpy((st)->opaque + offsetof(p64_head, field) + 8 * (i), &w_, 8);               \
    } while (0)

/* RFC 8439 2.5.1 clamp: r &= 0x0ffffffc0ffffffc0ffffffc0fffffff. Word by word
 * from registers: a head built on the stack and copied as a whole was read back
 * with 16-byte loads over 8-byte stores (failed store forwarding, ~15% of a
 * 64-byte message), and its stack copy of the key then needed wiping. */
static inline void p64_init(poly1305_state *st, const uint8_t key[32])
{
    P64_PUT_WORD(st, h, 0, 0);
    P64_PUT_WORD(st, h, 1, 0);
    P64_PUT_WORD(st, h, 2, 0);
    P64_PUT_WORD(st, r, 0, load64_le(key + 0) & 0x0ffffffc0fffffffu);
    P64_PUT_WORD(st, r, 1, load64_le(key + 8) & 0x0ffffffc0ffffffcu);
    P64_PUT_WORD(st, s, 0, load64_le(key + 16));
    P64_PUT_WORD(st, s, 1, load64_le(key + 24));
    P64_PUT_WORD(st, powers, 0, 0);
}

/* 64-bit pieces: gcc 12 keeps unsigned __int128 sums in memory around a loop, so
 * products are split at once and sums go through explicit carries (adc on x86). */
static inline void p64_mul128(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
    p64_u128 p = (p64_u128)a * b;
    *lo = (uint64_t)p;
    *hi = (uint64_t)(p >> 64);
}

static inline unsigned char p64_adc(unsigned char c, uint64_t a, uint64_t b, uint64_t *out)
{
#if defined(__x86_64__)
    unsigned long long o;
    c = _addcarry_u64(c, a, b, &o);
    *out = o;
    return c;
#else
    uint64_t s = a + b, t = s + c;
    *out = t;
    return (unsigned char)((s < a) | (t < s));
#endif
}

/* h = h * r "mod" p, partially reduced.
 *
 * r1 is a multiple of 4 after clamping, so the terms at 2^128 and above fold back
 * as s1 = r1 + r1 / 4 = 5 r1 / 4 (2^130 = 5 mod p). r0, r1 < 2^60 and h2 <= 6
 * (<= 4 between blocks plus a carry and the pad bit), so h2 * s1 < 2^63 and both
 * column sums stay below 2^126 (no carry out of their high words). After the
 * fold, h2 <= 3 plus a possible carry: h2 <= 4, h < 2^130 + 2^66 (donna-64 /
 * OpenSSL bounds). */
static inline void p64_mul(uint64_t *h0, uint64_t *h1, uint64_t *h2, uint64_t r0, uint64_t r1,
                           uint64_t s1)
{
    uint64_t a0, a1, b0, b1, c0, c1, e0, e1, d0, d1, d2, c;
    unsigned char k;

    p64_mul128(*h0, r0, &a0, &a1);
    p64_mul128(*h1, s1, &b0, &b1);
    p64_mul128(*h0, r1, &c0, &c1);
    p64_mul128(*h1, r0, &e0, &e1);

    /* d0 = h0 r0 + h1 s1 in (d0, a1) */
    k = p64_adc(0, a0, b0, &d0);
    p64_adc(k, a1, b1, &a1);
    /* d1 = h0 r1 + h1 r0 + h2 s1 + (d0 >> 64) in (d1, c1) */
    k = p64_adc(0, c0, e0, &d1);
    p64_adc(k, c1, e1, &c1);
    k = p64_adc(0, d1, *h2 * s1, &d1);
    c1 += k;
    k = p64_adc(0, d1, a1, &d1);
    c1 += k;
    d2 = *h2 * r0 + c1;

    /* (d2:d1:d0) = low 130 bits + 5 * (bits above 130) */
    c = (d2 >> 2) + (d2 & ~(uint64_t)3);
    d2 &= 3;
    k = p64_adc(0, d0, c, h0);
    k = p64_adc(k, d1, 0, h1);
    *h2 = d2 + k;
}

/* Absorb nblocks 16-byte blocks, each with 2^128 * padbit added. */
static inline void p64_blocks(uint64_t h[3], uint64_t r0, uint64_t r1, const uint8_t *in,
                              size_t nblocks, uint64_t padbit)
{
    const uint64_t s1 = r1 + (r1 >> 2);
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2];

    while (nblocks--) {
        unsigned char k;

        k = p64_adc(0, h0, load64_le(in), &h0);
        k = p64_adc(k, h1, load64_le(in + 8), &h1);
        h2 += k + padbit;

        p64_mul(&h0, &h1, &h2, r0, r1, s1);
        in += 16;
    }
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
}

/* Bring any h < 2^192 that fits (h2 < 2^62) back to h2 <= 4 by folding the bits
 * above 2^130: used after a vector path hands h back in radix 2^64. */
static inline void p64_fold(uint64_t h[3])
{
    uint64_t c = (h[2] >> 2) + (h[2] & ~(uint64_t)3);
    unsigned char k;

    h[2] &= 3;
    k = p64_adc(0, h[0], c, &h[0]);
    k = p64_adc(k, h[1], 0, &h[1]);
    h[2] += k;
}

/* Radix 2^44, three limbs, for the vector kernels that multiply 64x64 (power9.c, vxe.c):
 * h < 2^131 (h2 <= 4) to x0, x1 < 2^44 and x2 < 2^43, and back from limbs below 2^44 +
 * 2^8 (x2 below 2^42.4), summed (x1 may overlap x2 by a bit) and folded to h2 <= 4. */
static inline void p64_split44(uint64_t out[3], const uint64_t x[3])
{
    out[0] = x[0] & 0xfffffffffffu;
    out[1] = ((x[0] >> 44) | (x[1] << 20)) & 0xfffffffffffu;
    out[2] = (x[1] >> 24) | (x[2] << 40);
}

static inline void p64_join44(uint64_t h[3], uint64_t x0, uint64_t x1, uint64_t x2)
{
    p64_u128 v = (p64_u128)x0 + ((p64_u128)x1 << 44);

    h[0] = (uint64_t)v;
    v = (v >> 64) + ((p64_u128)x2 << 24);
    h[1] = (uint64_t)v;
    h[2] = (uint64_t)(v >> 64);
    p64_fold(h);
}

/* h mod p, canonical (h2 <= 3), from h2 <= 4 (h < 2^131). After one fold
 * h < 2^130 + 2^64 < 2p, so one conditional subtraction is enough: g = h + 5
 * reaches 2^130 exactly when h >= p (r = 2, m = ff..ff lands here, donna #2), and
 * then h - p = g - 2^130. Branch-free on h. */
static inline void p64_reduce_full(uint64_t h[3])
{
    uint64_t g0, g1, g2, mask;
    unsigned char k;

    p64_fold(h);
    k = p64_adc(0, h[0], 5, &g0);
    k = p64_adc(k, h[1], 0, &g1);
    g2 = h[2] + k;

    mask = (uint64_t)0 - (g2 >> 2);  /* all ones when h >= p */
    h[0] = (h[0] & ~mask) | (g0 & mask);
    h[1] = (h[1] & ~mask) | (g1 & mask);
    h[2] = (h[2] & ~mask) | (g2 & 3 & mask);
}

/* RFC 8439 2.5.1: tag = ((h mod p) + s) mod 2^128. h and s stay in registers
 * (the caller wipes the state): wiping stack copies of them forced the copies
 * into being, and with store64_le's byte assembly this was ~15% of a 64-byte
 * message. */
static inline void p64_finish(poly1305_state *st, uint8_t tag[16])
{
    uint64_t h[3], s0, s1, t0, t1;

    P64_GET(st, h, h);
    memcpy(&s0, st->opaque + offsetof(p64_head, s), 8);
    memcpy(&s1, st->opaque + offsetof(p64_head, s) + 8, 8);
    p64_reduce_full(h);
    p64_adc(p64_adc(0, h[0], s0, &t0), h[1], s1, &t1);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(tag, &t0, 8);
    memcpy(tag + 8, &t1, 8);
#else
    store64_le(tag, t0);
    store64_le(tag + 8, t1);
#endif
}

/* The kernel contract's `used`: the head, and the vector table of `table` bytes once
 * `powers` says it was built. */
static inline size_t p64_used(const poly1305_state *st, size_t table)
{
    uint64_t powers;

    memcpy(&powers, st->opaque + offsetof(p64_head, powers), sizeof powers);
    return P64_VEC_OFFSET + (powers ? table : 0);
}

/* The scalar path over a whole call, for scalar64.c and the short calls of the
 * vector kernels. */
static inline void p64_blocks_call(poly1305_state *st, const uint8_t *in, size_t len,
                                   uint32_t padbit)
{
    uint64_t h[3], r[2];

    P64_GET(st, h, h);
    P64_GET(st, r, r);
    p64_blocks(h, r[0], r[1], in, len / 16, padbit);
    P64_PUT(st, h, h);
}

/* r^1 .. r^n fully reduced, for the vector kernels' tables: out[k - 1] = r^k as
 * three words (canonical, so out[k - 1][2] <= 3). Inlined into a caller whose
 * `out` does not escape, it all stays in registers: no stack copies to wipe, and
 * no burst of stores just before the vector loop (stores there made the first
 * message loads stall on false 4 KiB-alias dependences, up to ~300 cycles). */
AC_INLINE void p64_powers(const poly1305_state *st,
                                                             uint64_t out[][3], size_t n)
{
    uint64_t r[2], h[3];

    P64_GET(st, r, r);
    const uint64_t s1 = r[1] + (r[1] >> 2);
    h[0] = r[0];
    h[1] = r[1];
    h[2] = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t c[3] = {h[0], h[1], h[2]};
        p64_reduce_full(c);
        out[k][0] = c[0];
        out[k][1] = c[1];
        out[k][2] = c[2];
        /* r^(k+2) = r^(k+1) * r with the clamped r as the multiplier (s1 needs r1 % 4 == 0). */
        if (k + 1 < n)
            p64_mul(&h[0], &h[1], &h[2], r[0], r[1], s1);
    }
}

#endif
