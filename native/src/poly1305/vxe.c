/* Poly1305, z14 vector-enhancements facility 1: radix 2^44 (three limbs), 4 blocks per iteration as (h + m0) r^4 + m1 r^3 + m2 r^2 + m3 r with vmslg (two 64x64 products plus a 128-bit addend per instruction) and one reduction, powers r^1..r^4 kept in the state; radix 2^64 with mlgr (poly1305/s390x.h) for short calls and the last 1-3 blocks (RFC 8439 2.5). poly1305/power9.c's algorithm, big-endian. */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__) || __ARCH__ < 12
#error "poly1305/vxe.c needs -march=z14 -mzvector (ISA_FLAGS_vxe in native/isa.mk)"
#endif

#include <vecintrin.h>

#include "poly1305/s390x.h"

typedef __vector unsigned long long u64x2;
typedef __vector unsigned char u8x16;

/* Calls shorter than this many blocks take the scalar path, break-even points measured
 * in instructions under qemu z14 (bench/insn): a vector group of four blocks costs 69
 * instructions against 128 scalar, and entering and leaving the vector path about three
 * scalar blocks, so from 12 blocks on; the first vector call for a key also builds r^2..r^4
 * and the table, which 48 blocks (768 bytes) repay. */
#define VXE_MIN_BLOCKS 12
#define VXE_MIN_BLOCKS_FIRST 48

/* What the streaming front gathers before each call (poly1305.h, `gather`), sized by
 * measurement (bench/insn poly1305-stream, z14): streamed 64-byte writes 2.22 / 2.15 /
 * 2.05 instructions per byte gathering 768 / 1024 / 2048 bytes, 1 KiB writes 1.29 / 1.29
 * / 1.23. */
#define VXE_GATHER 2048

_Static_assert(VXE_GATHER % 16 == 0 && VXE_GATHER <= AC_POLY1305_GATHER_MAX &&
                   VXE_GATHER / 16 >= VXE_MIN_BLOCKS_FIRST,
               "the stream's calls must reach the vector path");

#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

/*
 * The vector part of the state, from byte 64. Slot k of a group of four blocks is
 * multiplied by p = r^(4 - k) in radix 2^44 (p0, p1 < 2^44, p2 < 2^42.4). With
 * x = x0 + x1 2^44 + x2 2^88 and 2^132 = 20 (mod 2^130 - 5), x p is, column by column,
 *   d0 = x0 p0 + x1 20p2 + x2 20p1
 *   d1 = x0 p1 + x1 p0   + x2 20p2
 *   d2 = x0 p2 + x1 p1   + x2 p0
 * vmslg multiplies doubleword 0 by doubleword 0 and 1 by 1 and adds both products and
 * a 128-bit addend: b[k][i] pairs with (x0, x1) of slot k, c[j][i] with the x2 of slots
 * 2j + 1 and 2j (in that order: the reduction leaves h2 in doubleword 1, which is then
 * slot 0's without a move).
 */
typedef struct {
    uint64_t b[4][3][2];
    uint64_t c[2][3][2];
} vxe_powers;

static_assert(P64_VEC_OFFSET + sizeof(vxe_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "the z14 powers must fit in poly1305_state");
static_assert(P64_VEC_OFFSET % 16 == 0, "the z14 powers are loaded as aligned vectors");

/* r^1..r^4 by the scalar path (h = h r on a zero block without pad bit), left partially
 * reduced (h2 <= 4: p2 < 2^42.4), then the products' operand pairs. Once per key. */
static void compute_powers(poly1305_state *st)
{
    static const uint8_t zero_block[16];
    uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    s390x_p1305_key k;
    uint64_t h[3], l[4][3];
    vxe_powers t;

    s390x_key(st, &k, 0);
    h[0] = k.r0;
    h[1] = k.r1;
    h[2] = 0;
    for (int n = 0; n < 4; n++) {
        if (n > 0)
            s390x_blocks(h, &k, zero_block, 1);
        p64_split44(l[3 - n], h); /* slot 3 - n: r^(n + 1) */
    }
    for (int s = 0; s < 4; s++) {
        t.b[s][0][0] = l[s][0];
        t.b[s][0][1] = 20 * l[s][2];
        t.b[s][1][0] = l[s][1];
        t.b[s][1][1] = l[s][0];
        t.b[s][2][0] = l[s][2];
        t.b[s][2][1] = l[s][1];
    }
    for (int j = 0; j < 2; j++)
        for (int e = 0; e < 2; e++) {
            const uint64_t *p = l[2 * j + 1 - e]; /* doubleword 0: slot 2j + 1 */
            t.c[j][0][e] = 20 * p[1];
            t.c[j][1][e] = 20 * p[2];
            t.c[j][2][e] = p[0];
        }
    memcpy(tab, &t, sizeof t);
    s390x_put(st, offsetof(p64_head, powers), 1);
    ac_wipe_words(&k, sizeof k);
    ac_wipe_words(h, sizeof h);
    ac_wipe_words(l, sizeof l);
    ac_wipe_words(&t, sizeof t);
}

AC_INLINE u64x2 ld(const uint8_t *p)
{
    return (u64x2)vec_xl(0, p);
}

AC_INLINE u8x16 msum(u64x2 a, u64x2 b, u8x16 acc)
{
    return vec_msum_u128(a, b, acc, 0);
}

/* 128-bit right shift by n < 128 given as a splatted byte: vsrlb moves whole bytes
 * (n >> 3), vsrl the remaining n & 7 bits. */
AC_INLINE u8x16 shr128(u8x16 x, u8x16 n)
{
    return vec_srl(vec_srb(x, n), n);
}

/*
 * Bounds, 4 blocks per iteration. Between iterations h0 < 2^44, h1 < 2^44 + 2^8,
 * h2 < 2^42 (h2 < 2^42.4 straight from radix 2^64 with h2 <= 4). Message limbs
 * x0, x1 < 2^44, x2 < 2^41 (40 bits and the pad bit at 2^40); slot 0 adds h, so there
 * x0, x1 < 2^45.01, x2 < 2^42.8. Multipliers p0, p1 < 2^44, p2 < 2^42.4, 20 p1 < 2^48.4,
 * 20 p2 < 2^46.8. The columns stay below 2^94 (d0), 2^92.2 (d1), 2^91.2 (d2), far from
 * the 128 bits vmslg keeps, and every operand is below 2^64.
 *
 * Carries in 128-bit lanes: c0 = d0 >> 44 < 2^50 into d1, c1 < 2^48.3 into d2,
 * c2 = d2 >> 42 < 2^49.3, 5 c2 < 2^51.7 folds into the low 44 bits of d0 (2^130 = 5),
 * and that sum's carry (< 2^7.8) goes into h1, restoring the bounds above. A 128-bit
 * value's low doubleword is doubleword 1 (big-endian).
 *
 * Out of line: the callee-saved f8-f15 it may use are then saved on the vector path only.
 */
static __attribute__((noinline)) void vxe_blocks(const poly1305_state *st, uint64_t h[3],
                                                 const uint8_t *in, size_t ng, uint32_t padbit)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const u64x2 m44 = vec_splats((unsigned long long)M44);
    const u64x2 m44lo = {0, M44}, m42lo = {0, M42};
    const u64x2 sh04 = {0, 4};
    const u64x2 pad = vec_splats((unsigned long long)padbit << 40);
    const u8x16 s44 = vec_splats((unsigned char)44), s42 = vec_splats((unsigned char)42);
    /* Bytes 7..0 of a block into doubleword 0, bytes 12..5 into doubleword 1: the
     * little-endian words that shifted right by 0 and 4 start at bits 0 and 44. The
     * high halves (bytes 15..8) of two blocks, second one first: x2 << 24 each. */
    const u8x16 p01 = {7, 6, 5, 4, 3, 2, 1, 0, 12, 11, 10, 9, 8, 7, 6, 5};
    const u8x16 phi = {31, 30, 29, 28, 27, 26, 25, 24, 15, 14, 13, 12, 11, 10, 9, 8};
    const u8x16 zero = {0};
    uint64_t l[3];
    u64x2 h01, h2v;

    p64_split44(l, h);
    h01 = (u64x2){l[0], l[1]};
    h2v = (u64x2){0, l[2]};

#define B(k, i) ld(tab + offsetof(vxe_powers, b[k][i]))
#define C(j, i) ld(tab + offsetof(vxe_powers, c[j][i]))

    while (ng--) {
        u64x2 m0 = ld(in), m1 = ld(in + 16), m2 = ld(in + 32), m3 = ld(in + 48);
        u64x2 a0 = ((u64x2)vec_perm((u8x16)m0, (u8x16)m0, p01) >> sh04) & m44;
        u64x2 a1 = ((u64x2)vec_perm((u8x16)m1, (u8x16)m1, p01) >> sh04) & m44;
        u64x2 a2 = ((u64x2)vec_perm((u8x16)m2, (u8x16)m2, p01) >> sh04) & m44;
        u64x2 a3 = ((u64x2)vec_perm((u8x16)m3, (u8x16)m3, p01) >> sh04) & m44;
        u64x2 e10 = ((u64x2)vec_perm((u8x16)m0, (u8x16)m1, phi) >> 24) | pad;
        u64x2 e32 = ((u64x2)vec_perm((u8x16)m2, (u8x16)m3, phi) >> 24) | pad;
        u8x16 d0, d1, d2, f0, f1, f2, c;

        a0 += h01;
        e10 += h2v;

        /* Two chains per column; the h-dependent products come last. */
        f0 = msum(a3, B(3, 0), msum(a2, B(2, 0), msum(e32, C(1, 0), zero)));
        f1 = msum(a3, B(3, 1), msum(a2, B(2, 1), msum(e32, C(1, 1), zero)));
        f2 = msum(a3, B(3, 2), msum(a2, B(2, 2), msum(e32, C(1, 2), zero)));
        d0 = msum(a0, B(0, 0), msum(e10, C(0, 0), msum(a1, B(1, 0), f0)));
        d1 = msum(a0, B(0, 1), msum(e10, C(0, 1), msum(a1, B(1, 1), f1)));
        d2 = msum(a0, B(0, 2), msum(e10, C(0, 2), msum(a1, B(1, 2), f2)));

        /* Carry d0 -> d1 -> d2 -> (times 5) h0 -> h1. */
        c = shr128(d0, s44);
        d1 = vec_add_u128(d1, c);
        c = shr128(d1, s44);
        d2 = vec_add_u128(d2, c);
        c = shr128(d2, s42);
        h2v = (u64x2)d2 & m42lo;
        u64x2 c5 = (u64x2)c + ((u64x2)c << 2);          /* 5 c2 < 2^64, in doubleword 1 */
        u64x2 t0 = ((u64x2)d0 & m44lo) + c5;            /* < 2^51.4 */
        u64x2 t1 = ((u64x2)d1 & m44lo) + (t0 >> 44);
        h01 = vec_mergel(t0 & m44, t1);                 /* (t0 low 44 bits, t1) */
        in += 64;
    }
#undef B
#undef C

    /* Back to radix 2^64: below 2^44 + 2^88.01 + 2^130, folded to h2 <= 4. */
    p64_join44(h, h01[0], h01[1], h2v[1]);
}

static void poly1305_vxe_init(poly1305_state *st, const uint8_t key[32])
{
    s390x_init(st, key);
}

static __attribute__((noinline)) void vxe_call(poly1305_state *st, const uint8_t *in,
                                               size_t ng, uint32_t padbit)
{
    s390x_vec_call(st, in, ng, padbit, compute_powers, vxe_blocks);
}

static void poly1305_vxe_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                uint32_t padbit)
{
    s390x_dispatch(st, in, len, padbit, 4, VXE_MIN_BLOCKS, VXE_MIN_BLOCKS_FIRST, vxe_call);
}

static void poly1305_vxe_finish(poly1305_state *st, uint8_t tag[16])
{
    s390x_finish(st, tag);
}

static size_t poly1305_vxe_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(vxe_powers));
}

const poly1305_kernel archcrypt_poly1305_vxe = {
    .init = poly1305_vxe_init,
    .blocks = poly1305_vxe_blocks,
    .finish = poly1305_vxe_finish,
    .used = poly1305_vxe_used,
    .gather = VXE_GATHER,
};
