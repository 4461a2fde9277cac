/* Poly1305, POWER9 (ISA 3.0): radix 2^44 (three limbs), 4 blocks per iteration as (h + m0) r^4 + m1 r^3 + m2 r^2 + m3 r with vmsumudm (two 64x64 products plus a 128-bit addend per instruction) and one reduction, powers r^1..r^4 kept in the state; radix 2^64 with addc/adde (poly1305/ppc64.h) for short calls and the last 1-3 blocks (RFC 8439 2.5). */
#if !defined(_ARCH_PWR9) || !defined(__LITTLE_ENDIAN__)
#error "poly1305/power9.c needs little-endian -mcpu=power9 (ISA_FLAGS_power9 in native/isa.mk)"
#endif

#include <altivec.h>

#include "poly1305/scalar64.h"
#include "poly1305/ppc64.h"

typedef __vector unsigned long long u64x2;
typedef __vector unsigned char u8x16;
__extension__ typedef __vector unsigned __int128 u128x1;

/* Calls shorter than this many blocks take the scalar path (break-even points
 * measured in instructions under qemu): the radix conversions in and out and loading
 * the constants cost about five scalar blocks, and the first vector call for a key
 * also computes the powers of r (three multiplications and the tables). */
#define VEC_MIN_BLOCKS 16
#define VEC_MIN_BLOCKS_FIRST 64

#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

/* The vector part of the state, from byte 64. Slot k of a group of four blocks is
 * multiplied by p = r^(4 - k) in radix 2^44 (p0, p1 < 2^44, p2 < 2^42.4).
 * With x = x0 + x1 2^44 + x2 2^88 and 2^132 = 20 (mod 2^130 - 5), x p is, column by
 * column,
 *   d0 = x0 p0 + x1 20p2 + x2 20p1
 *   d1 = x0 p1 + x1 p0   + x2 20p2
 *   d2 = x0 p2 + x1 p1   + x2 p0
 * vmsumudm takes the first two terms from (x0, x1) against b[k][i] and the x2 terms
 * of two slots at once, (x2 of slot 2j, of slot 2j + 1) against c[j][i]. Every vector
 * is (element 0, element 1). */
typedef struct {
    uint64_t b[4][3][2];
    uint64_t c[2][3][2];
} p9_powers;

static_assert(P64_VEC_OFFSET + sizeof(p9_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "POWER9 powers must fit in poly1305_state");
static_assert(P64_VEC_OFFSET % 16 == 0, "POWER9 powers are loaded as aligned vectors");

/* r^1..r^4 by the scalar path (h = h r on a zero block without pad bit), left
 * partially reduced (h2 <= 4: p2 < 2^42.4, see the bounds below), then the products'
 * operand pairs. Once per key: once per AEAD message that reaches the vector path. */
static void compute_powers(poly1305_state *st)
{
    static const uint8_t zero_block[16];
    uint64_t r[2], h[3], pw[4][3], l[4][3];
    p9_powers t;

    P64_GET(st, r, r);
    h[0] = r[0];
    h[1] = r[1];
    h[2] = 0;
    for (int k = 0; k < 4; k++) {
        if (k > 0)
            ppc64_blocks(h, r, zero_block, 1, 0);
        pw[k][0] = h[0];
        pw[k][1] = h[1];
        pw[k][2] = h[2];
    }
    for (int k = 0; k < 4; k++) {
        p64_split44(l[k], pw[3 - k]); /* slot k: r^(4 - k) */
        t.b[k][0][0] = l[k][0];
        t.b[k][0][1] = 20 * l[k][2];
        t.b[k][1][0] = l[k][1];
        t.b[k][1][1] = l[k][0];
        t.b[k][2][0] = l[k][2];
        t.b[k][2][1] = l[k][1];
    }
    for (int j = 0; j < 2; j++)
        for (int e = 0; e < 2; e++) {
            t.c[j][0][e] = 20 * l[2 * j + e][1];
            t.c[j][1][e] = 20 * l[2 * j + e][2];
            t.c[j][2][e] = l[2 * j + e][0];
        }
    memcpy(st->opaque + P64_VEC_OFFSET, &t, sizeof t);

    uint64_t one = 1;
    P64_PUT(st, powers, one);
    ac_wipe_words(r, sizeof r);
    ac_wipe_words(h, sizeof h);
    ac_wipe_words(pw, sizeof pw);
    ac_wipe_words(l, sizeof l);
    ac_wipe_words(&t, sizeof t);
}

AC_INLINE u64x2 ld(const uint8_t *p)
{
    return (u64x2)vec_xl(0, (const unsigned long long *)(const void *)p);
}

AC_INLINE u128x1 msum(u64x2 a, u64x2 b, u128x1 acc)
{
    return vec_msum(a, b, acc);
}

/* 128-bit right shift by n < 128 given as a splatted byte: vsro moves whole bytes
 * (n >> 3), vsr the remaining n & 7 bits. */
AC_INLINE u128x1 shr128(u128x1 x, u8x16 n)
{
    return (u128x1)vec_srl(vec_sro((u8x16)x, n), n);
}

/* Bounds, 4 blocks per iteration. Between iterations h0 < 2^44, h1 < 2^44 + 2^8,
 * h2 < 2^42 (h2 < 2^42.4 straight from radix 2^64 with h2 <= 4). Message limbs
 * x0, x1 < 2^44, x2 < 2^41 (40 bits and the pad bit at 2^40); slot 0 adds h, so there
 * x0, x1 < 2^45.01, x2 < 2^42.8. Multipliers p0, p1 < 2^44, p2 < 2^42.4 (h2 <= 4 in
 * radix 2^64), 20 p1 < 2^48.4, 20 p2 < 2^46.8. Per slot the columns are below 2^92.8
 * (d0), 2^90.8 (d1), 2^89.8 (d2) for slot 0 and 2^91.4, 2^89.6, 2^88.6 for the others:
 * d0 < 2^94, d1 < 2^92.2, d2 < 2^91.2, far from the 128 bits vmsumudm keeps (and
 * every operand is below 2^64).
 *
 * Carries in 128-bit lanes: c0 = d0 >> 44 < 2^50 into d1 (< 2^92.3), c1 < 2^48.3 into
 * d2 (< 2^91.3), c2 = d2 >> 42 < 2^49.3, 5 c2 < 2^51.7 folds into the low 44 bits of
 * d0 (2^130 = 5), and that sum's carry (< 2^7.8) goes into h1. This restores the
 * bounds above. (Lazy reductions that let a 5 c outgrow its lane broke the Linux AVX2
 * code, 678cce40; every carry here has 12 or more bits of headroom.)
 *
 * Out of line: inlined, its saves of v20-v31 and five GPRs (34 instructions) were
 * paid by every short call too. */
static __attribute__((noinline)) void vec_blocks(const poly1305_state *st, uint64_t h[3],
                                                 const uint8_t *in, size_t ng, uint32_t padbit)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const u64x2 m44 = vec_splats((unsigned long long)M44);
    /* 128-bit masks: the high doubleword must be cleared before a 128-bit shift. */
    const u64x2 m44lo = {M44, 0}, m42lo = {M42, 0};
    const u64x2 sh04 = {0, 4}, sh24 = vec_splats(24ull);
    const u64x2 pad = vec_splats((unsigned long long)padbit << 40);
    const u8x16 s44 = vec_splats((unsigned char)44), s42 = vec_splats((unsigned char)42);
    /* Per-doubleword shifts read the low 6 bits of each doubleword: a splatted byte
     * serves them as well as the 128-bit vsro/vsr pair. */
    const u8x16 s2 = vec_splats((unsigned char)2);
    /* Bytes 0-7 of a block into element 0, bytes 5-12 into element 1 (little-endian
     * element order): shifted right by 0 and 4 they start at bits 0 and 44. */
    const u8x16 p01 = {0, 1, 2, 3, 4, 5, 6, 7, 5, 6, 7, 8, 9, 10, 11, 12};
    const u128x1 zero = {0};
    uint64_t l[3];
    u64x2 h01, h2v;

    p64_split44(l, h);
    h01 = (u64x2){l[0], l[1]};
    h2v = (u64x2){l[2], 0};

#define B(k, i) ld(tab + offsetof(p9_powers, b[k][i]))
#define C(j, i) ld(tab + offsetof(p9_powers, c[j][i]))

    while (ng--) {
        u64x2 m0 = ld(in), m1 = ld(in + 16), m2 = ld(in + 32), m3 = ld(in + 48);
        u64x2 a0 = vec_and(vec_sr((u64x2)vec_perm((u8x16)m0, (u8x16)m0, p01), sh04), m44);
        u64x2 a1 = vec_and(vec_sr((u64x2)vec_perm((u8x16)m1, (u8x16)m1, p01), sh04), m44);
        u64x2 a2 = vec_and(vec_sr((u64x2)vec_perm((u8x16)m2, (u8x16)m2, p01), sh04), m44);
        u64x2 a3 = vec_and(vec_sr((u64x2)vec_perm((u8x16)m3, (u8x16)m3, p01), sh04), m44);
        u64x2 e01 = vec_or(vec_sr(vec_mergel(m0, m1), sh24), pad);
        u64x2 e23 = vec_or(vec_sr(vec_mergel(m2, m3), sh24), pad);
        u128x1 d0, d1, d2, f0, f1, f2, c;

        a0 += h01;
        e01 += h2v;

        /* Two chains per column; the h-dependent products come last. */
        f0 = msum(a3, B(3, 0), msum(a2, B(2, 0), msum(e23, C(1, 0), zero)));
        f1 = msum(a3, B(3, 1), msum(a2, B(2, 1), msum(e23, C(1, 1), zero)));
        f2 = msum(a3, B(3, 2), msum(a2, B(2, 2), msum(e23, C(1, 2), zero)));
        d0 = msum(a0, B(0, 0), msum(e01, C(0, 0), msum(a1, B(1, 0), f0)));
        d1 = msum(a0, B(0, 1), msum(e01, C(0, 1), msum(a1, B(1, 1), f1)));
        d2 = msum(a0, B(0, 2), msum(e01, C(0, 2), msum(a1, B(1, 2), f2)));

        /* Carry d0 -> d1 -> d2 -> (times 5) h0 -> h1. */
        c = shr128(d0, s44);
        d1 = vec_add(d1, c);
        c = shr128(d1, s44);
        d2 = vec_add(d2, c);
        c = shr128(d2, s42);
        h2v = vec_and((u64x2)d2, m42lo);
        c = (u128x1)((u64x2)c + vec_sl((u64x2)c, (u64x2)s2)); /* 5 c2 < 2^64 */
        u64x2 t0 = vec_and((u64x2)d0, m44lo) + (u64x2)c;      /* < 2^51.4 */
        u64x2 t1 = vec_and((u64x2)d1, m44lo) + vec_sr(t0, (u64x2)s44);
        h01 = vec_mergeh(vec_and(t0, m44), t1);
        in += 64;
    }
#undef B
#undef C

    /* Back to radix 2^64: below 2^44 + 2^88.01 + 2^130, folded to h2 <= 4. */
    p64_join44(h, h01[0], h01[1], h2v[0]);
}

static void poly1305_power9_init(poly1305_state *st, const uint8_t key[32])
{
    ppc64_init(st, key);
}

static void poly1305_power9_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                   uint32_t padbit)
{
    size_t nb = len / 16;
    uint64_t ready = ppc64_get(st, offsetof(p64_head, powers));

    if (nb >= (ready ? VEC_MIN_BLOCKS : VEC_MIN_BLOCKS_FIRST)) {
        uint64_t h[3] = {ppc64_get(st, PPC64_H(0)), ppc64_get(st, PPC64_H(1)),
                         ppc64_get(st, PPC64_H(2))};

        if (!ready)
            compute_powers(st);
        vec_blocks(st, h, in, nb / 4, padbit);
        ppc64_put(st, PPC64_H(0), h[0]);
        ppc64_put(st, PPC64_H(1), h[1]);
        ppc64_put(st, PPC64_H(2), h[2]);
        in += 64 * (nb / 4);
        nb %= 4;
    }
    if (nb > 0)
        ppc64_blocks_call(st, in, nb, padbit);
}

static void poly1305_power9_finish(poly1305_state *st, uint8_t tag[16])
{
    ppc64_finish(st, tag);
}

static size_t poly1305_power9_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(p9_powers));
}

const poly1305_kernel archcrypt_poly1305_power9 = {
    .init = poly1305_power9_init,
    .blocks = poly1305_power9_blocks,
    .finish = poly1305_power9_finish,
    .used = poly1305_power9_used,
};
