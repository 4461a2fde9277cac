/* Poly1305, AVX2: radix 2^26 (five limbs), 4 blocks per ymm, 8 per iteration as H r^8 + M r^4 with one reduction, vpmuludq row by row with the broadcast powers as memory operands (no spills), powers r^1..r^8 kept in the state; 64-bit scalar (mulx) for short calls (RFC 8439 2.5). */
#if !defined(__AVX2__) || !defined(__BMI2__)
#error "poly1305/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "poly1305/mulx_core.h"

/* Calls shorter than this many blocks take the scalar path: below it the vector
 * set-up (radix conversions, one horizontal sum) costs more than it saves. The
 * first vector call for a key also computes the powers of r, so it needs a longer
 * input to pay off. Measured on Zen 3 against scalar64: the crossovers are ~8 blocks
 * with the powers ready and ~20 without. */
#define VEC_MIN_BLOCKS 8
#define VEC_MIN_BLOCKS_COLD 20

#define M26 0x3ffffffu

/* The hot helpers must inline: out of line, gcc passes the limb arrays through memory. */
/* The vector part of the state, from byte 64: per-lane powers of r in radix 2^26,
 * one ymm per limb. A group of 4 blocks is loaded with block k in lane k; lane k
 * of P4 holds r^(4 - k), of P8 r^(8 - k). Lane 0 holds r^4 and r^8, broadcast for
 * the main loop. Both come out of the same reduction as h (compute_powers), so
 * limbs 1 and 4 may exceed 2^26 by 2^9.3 and 2^6.9. */
typedef struct {
    uint64_t p4[5][4];
    uint64_t p8[5][4];
} avx2_powers;

static_assert(P64_VEC_OFFSET + sizeof(avx2_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "AVX2 powers must fit in poly1305_state");

AC_INLINE void split26(uint64_t out[5], const uint64_t x[3])
{
    out[0] = x[0] & M26;
    out[1] = (x[0] >> 26) & M26;
    out[2] = ((x[0] >> 52) | (x[1] << 12)) & M26;
    out[3] = (x[1] >> 14) & M26;
    out[4] = (x[1] >> 40) | (x[2] << 24);
}

AC_INLINE __m256i times5(__m256i x)
{
    return _mm256_add_epi64(x, _mm256_slli_epi64(x, 2));
}

/* Split 4 blocks into radix-2^26 limbs, a = blocks 0 and 2, b = blocks 1 and 3
 * (block k ends up in lane k); m4 carries the pad bit at 2^128 (bit 24 of limb 4).
 * m0..m3 < 2^26, m4 < 2^25. */
AC_INLINE void split4(__m256i a, __m256i b, __m256i pad, __m256i m[5])
{
    const __m256i mask = _mm256_set1_epi64x(M26);
    __m256i lo = _mm256_unpacklo_epi64(a, b);
    __m256i hi = _mm256_unpackhi_epi64(a, b);

    m[0] = _mm256_and_si256(lo, mask);
    m[1] = _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask);
    m[2] = _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52), _mm256_slli_epi64(hi, 12)),
                            mask);
    m[3] = _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask);
    m[4] = _mm256_or_si256(_mm256_srli_epi64(hi, 40), pad);
}

AC_INLINE __m128i load_block(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

AC_INLINE void load4(const uint8_t *in, __m256i pad, __m256i m[5])
{
    split4(_mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in)), load_block(in + 32), 1),
           _mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in + 16)), load_block(in + 48),
                                   1),
           pad, m);
}

/* t = 1..3 blocks as the last t blocks of a group of 4, zero blocks before them:
 * read block by block, no copy through the stack and no address before `in`. */
AC_INLINE void load_partial4(const uint8_t *in, size_t t, __m256i pad, __m256i m[5])
{
    const __m128i z = _mm_setzero_si128();
    __m128i b1 = z, b2 = z, b3 = load_block(in + 16 * (t - 1));

    if (t >= 2)
        b2 = load_block(in + 16 * (t - 2));
    if (t == 3)
        b1 = load_block(in);
    split4(_mm256_inserti128_si256(_mm256_castsi128_si256(z), b2, 1),
           _mm256_inserti128_si256(_mm256_castsi128_si256(b1), b3, 1), pad, m);
}

#define MUL(a, b) _mm256_mul_epu32(a, b)
#define ADD(a, b) _mm256_add_epi64(a, b)

/* Products are taken row by row, input limb j against all five columns:
 * d_i += x_j r_(i-j), and for i < j the term at 2^130 and up folds back as
 * 5 r_(5+i-j). Whole rows in order keep the working set at the five columns,
 * one input limb and one product. vpmuludq reads the low 32 bits of each lane:
 * x, 5 x, r and 5 r limbs must all stay below 2^32 (bounds below reduce). The
 * asm after each row keeps gcc's reassociation from regrouping the column sums
 * across rows: it would compute every product first and spill them. */
#define ROW_BARRIER(d) __asm__("" : "+x"(d[0]), "+x"(d[1]), "+x"(d[2]), "+x"(d[3]), "+x"(d[4]))

/* d (+)= x b with per-lane multipliers b (registers or the state's tables): the
 * 5 goes onto x (5 x_j < 2^29.4), so b needs no 5 b rows. */
AC_INLINE void mul_lanes(__m256i d[5], const __m256i x[5], const __m256i b[5], int first)
{
    _Pragma("GCC unroll 5") for (int j = 0; j < 5; j++) {
        const __m256i xj = x[j], xj5 = times5(xj);
        _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
            __m256i t = MUL(i >= j ? xj : xj5, b[i >= j ? i - j : 5 + i - j]);
            d[i] = first && j == 0 ? t : ADD(d[i], t);
        }
        ROW_BARRIER(d);
    }
}

/* Bounds. Between iterations h0, h2, h3 < 2^26, h1 < 2^26 + 2^9.3, h4 < 2^26 + 2^6.9;
 * a group adds below 2^26 (limb 4: 2^25; the first group's h from radix 2^64 with
 * h2 <= 4 puts up to 2^26.4 in limb 4), so every x limb is below 2^27.01 (5 x, where
 * mul_lanes puts the 5, below 2^29.33) and every r limb below 2^26.01, s below
 * 2^28.33. One iteration adds x r^8 and m r^4: ten products per column, each below
 * 2^55.4, so d_i < 2^58.7 in 64-bit lanes. The last step and compute_powers stay
 * within the same bounds.
 *
 * Carries, two chains interleaved (d0 -> d1 -> d2 -> d3 and d3 -> d4 -> d0 -> d1),
 * every one in a 64-bit lane: c0, c3 < 2^32.7; c1, c4 < 2^32.8; 5 c4 < 2^35.2, so
 * d0 < 2^35.3 and its second carry is below 2^9.3; c2 < 2^32.8 makes d3 < 2^32.9
 * and its second carry below 2^6.9. That restores the invariant above. (The Linux
 * AVX2 overflow, 678cce40, was this h4 -> h0 carry times 5 outgrowing 32 bits;
 * here the carry and the 5 c are 64-bit adds and shifts.) */
AC_INLINE void reduce(__m256i d[5])
{
    const __m256i mask = _mm256_set1_epi64x(M26);
    __m256i c;

    c = _mm256_srli_epi64(d[0], 26); d[0] = _mm256_and_si256(d[0], mask); d[1] = ADD(d[1], c);
    c = _mm256_srli_epi64(d[3], 26); d[3] = _mm256_and_si256(d[3], mask); d[4] = ADD(d[4], c);
    c = _mm256_srli_epi64(d[1], 26); d[1] = _mm256_and_si256(d[1], mask); d[2] = ADD(d[2], c);
    c = _mm256_srli_epi64(d[4], 26); d[4] = _mm256_and_si256(d[4], mask); d[0] = ADD(d[0], times5(c));
    c = _mm256_srli_epi64(d[2], 26); d[2] = _mm256_and_si256(d[2], mask); d[3] = ADD(d[3], c);
    c = _mm256_srli_epi64(d[0], 26); d[0] = _mm256_and_si256(d[0], mask); d[1] = ADD(d[1], c);
    c = _mm256_srli_epi64(d[3], 26); d[3] = _mm256_and_si256(d[3], mask); d[4] = ADD(d[4], c);
}

/* The main loop's multipliers: one power of r broadcast to every lane, as r
 * limbs and s = 5 r limbs (s[0] unused), kept in memory and read as vpmuludq
 * memory operands. Ten of them per power do not fit in registers beside the
 * state, and when gcc held them there it spilled partial products instead. */
typedef struct {
    __m256i r[5], s[5];
} bcast_power;

/* d (+)= x_j times one broadcast power, for input limb j (see mul_lanes). */
AC_INLINE void row(__m256i d[5], __m256i xj, const bcast_power *p, int j, int first)
{
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        __m256i t = MUL(xj, i >= j ? p->r[i - j] : p->s[5 + i - j]);
        d[i] = first ? t : ADD(d[i], t);
    }
    ROW_BARRIER(d);
}

/* d += m r^k for the group of 4 blocks at in, its limbs split one at a time and
 * consumed at once (split4 made all five before the first product). */
AC_INLINE void load4_rows(__m256i d[5], const uint8_t *in, __m256i pad, const bcast_power *p)
{
    const __m256i mask = _mm256_set1_epi64x(M26);
    __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in)),
                                        load_block(in + 32), 1);
    __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in + 16)),
                                        load_block(in + 48), 1);
    __m256i lo = _mm256_unpacklo_epi64(a, b);
    __m256i hi = _mm256_unpackhi_epi64(a, b);

    row(d, _mm256_and_si256(lo, mask), p, 0, 0);
    row(d, _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask), p, 1, 0);
    row(d, _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52), _mm256_slli_epi64(hi, 12)),
                            mask),
        p, 2, 0);
    row(d, _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask), p, 3, 0);
    row(d, _mm256_or_si256(_mm256_srli_epi64(hi, 40), pad), p, 4, 0);
}

/* x = d + m for the group of 4 blocks at in, limb by limb: made all at once the
 * limbs sat beside the reduction's carries and gcc spilled one. */
AC_INLINE void load4_add(__m256i x[5], const __m256i d[5], const uint8_t *in, __m256i pad)
{
    const __m256i mask = _mm256_set1_epi64x(M26);
    __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in)),
                                        load_block(in + 32), 1);
    __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(load_block(in + 16)),
                                        load_block(in + 48), 1);
    __m256i lo = _mm256_unpacklo_epi64(a, b);
    __m256i hi = _mm256_unpackhi_epi64(a, b);

    x[0] = ADD(d[0], _mm256_and_si256(lo, mask));
    x[1] = ADD(d[1], _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask));
    x[2] = ADD(d[2], _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52),
                                                      _mm256_slli_epi64(hi, 12)),
                                      mask));
    x[3] = ADD(d[3], _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask));
    x[4] = ADD(d[4], _mm256_or_si256(_mm256_srli_epi64(hi, 40), pad));
}

AC_INLINE void bcast_table(bcast_power *p, const uint8_t *tab)
{
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        p->r[i] = _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(tab + 32 * i)));
        p->s[i] = times5(p->r[i]);
    }
}

/* The tables from r alone in three vector multiplications, each a 4-lane
 * product and one reduction: [r, r, r, r] [r, r, 1, 1] = [r^2, r^2, r, r];
 * that times [r^2, r, r, 1] = [r^4, r^3, r^2, r] = P4; P4 r^4 = P8. Shorter
 * than the chain of scalar multiplications (each with a full reduction) it
 * replaces, and it runs once per key, so once per AEAD message. Inputs below
 * 2^26.01 per limb keep every step inside the bounds of the main loop. */
static void compute_powers(poly1305_state *st)
{
    __m256i *tab = (__m256i *)(void *)(st->opaque + P64_VEC_OFFSET);
    __m256i rv[5], b[5], v[5];
    uint64_t r[3] = {0, 0, 0}, l[5];

    P64_GET(st, r, r);
    r[2] = 0;
    split26(l, r);
    /* Lanes 2 and 3 of the first multiplier, and lane 3 of the second, are 1. */
    const __m256i one_hi = _mm256_setr_epi64x(0, 0, 1, 1), one_top = _mm256_setr_epi64x(0, 0, 0, 1);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        rv[i] = _mm256_set1_epi64x((long long)l[i]);
        b[i] = _mm256_blend_epi32(rv[i], i == 0 ? one_hi : _mm256_setzero_si256(), 0xf0);
    }
    mul_lanes(v, rv, b, 1);
    reduce(v);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        b[i] = _mm256_blend_epi32(_mm256_permute4x64_epi64(v[i], 0x00), rv[i], 0x3c);
        b[i] = _mm256_blend_epi32(b[i], i == 0 ? one_top : _mm256_setzero_si256(), 0xc0);
    }
    mul_lanes(rv, v, b, 1);
    reduce(rv);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        _mm256_store_si256(&tab[offsetof(avx2_powers, p4[i]) / 32], rv[i]);
        b[i] = _mm256_permute4x64_epi64(rv[i], 0x00);
    }
    mul_lanes(v, rv, b, 1);
    reduce(v);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
        _mm256_store_si256(&tab[offsetof(avx2_powers, p8[i]) / 32], v[i]);
    ac_wipe_words(l, sizeof l);
    ac_wipe_words(r, sizeof r);

    uint64_t one = 1;
    P64_PUT(st, powers, one);
}

AC_INLINE uint64_t hsum(__m256i v)
{
    __m128i x = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return (uint64_t)_mm_cvtsi128_si64(x) + (uint64_t)_mm_extract_epi64(x, 1);
}

/* nb >= 1 blocks through the vector path; h in radix 2^64 in and out. */
static void vec_blocks(const poly1305_state *st, uint64_t h[3], const uint8_t *in, size_t nb,
                       uint32_t padbit)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const uint8_t *tab4 = tab, *tab8 = tab + offsetof(avx2_powers, p8);
    const __m256i pad = _mm256_set1_epi64x((long long)((uint64_t)padbit << 24));
    const __m256i lane_idx = _mm256_setr_epi64x(0, 1, 2, 3);
    __m256i x[5], m[5];
    size_t t = nb % 4, groups = (nb + 3) / 4;

    /* The first group: a partial one when nb is not a multiple of 4, read as 4 - t
     * zero blocks without pad bits followed by the t real blocks; h joins the
     * first real block. */
    {
        long long first = 0;

        if (t != 0)
            first = 4 - (long long)t;
        __m256i live = _mm256_cmpgt_epi64(lane_idx, _mm256_set1_epi64x(first - 1));
        __m256i hl = _mm256_cmpeq_epi64(lane_idx, _mm256_set1_epi64x(first));
        uint64_t l[5];
        split26(l, h);
        if (t != 0) {
            load_partial4(in, t, _mm256_and_si256(pad, live), m);
            in += 16 * t;
        } else {
            load4(in, pad, m);
            in += 64;
        }
        _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
            x[i] = ADD(m[i], _mm256_and_si256(_mm256_set1_epi64x((long long)l[i]), hl));
    }
    groups -= 1;

    /* Main loop: h = h r^8 + m r^4 + m', two groups per iteration, one reduction. */
    if (groups >= 2) {
        bcast_power pw[2]; /* r^4, r^8 */

        bcast_table(&pw[0], tab4);
        bcast_table(&pw[1], tab8);
        /* The stores above must happen here, not be sunk into the loop as
         * registers: see bcast_power. */
        __asm__("" : : "r"(pw) : "memory");
        while (groups >= 2) {
            __m256i d[5];
            row(d, x[0], &pw[1], 0, 1);
            row(d, x[1], &pw[1], 1, 0);
            row(d, x[2], &pw[1], 2, 0);
            row(d, x[3], &pw[1], 3, 0);
            row(d, x[4], &pw[1], 4, 0);
            load4_rows(d, in, pad, &pw[0]);
            reduce(d);
            __asm__("" : "+x"(d[0]), "+x"(d[1]), "+x"(d[2]), "+x"(d[3]), "+x"(d[4]));
            load4_add(x, d, in + 64, pad);
            in += 128;
            groups -= 2;
        }
        /* Powers of r are key material (a ymm store per 32 bytes). */
        ac_wipe_words(pw, sizeof pw);
    }

    /* Last step: lane k times r^(4 - k), and one more group if left (then x
     * takes r^(8 - k) first, so x is dead before m is loaded). */
    {
        const __m256i *p4 = (const __m256i *)(const void *)tab4;
        const __m256i *p8 = (const __m256i *)(const void *)tab8;
        __m256i d[5];

        if (groups == 1) {
            mul_lanes(d, x, p8, 1);
            load4(in, pad, m);
            mul_lanes(d, m, p4, 0);
        } else {
            mul_lanes(d, x, p4, 1);
        }
        reduce(d);
        x[0] = d[0]; x[1] = d[1]; x[2] = d[2]; x[3] = d[3]; x[4] = d[4];
    }

    /* Sum the lanes (each below 2^28.01) and return to radix 2^64: below 2^132.1,
     * folded back to h2 <= 4. */
    uint64_t a0 = hsum(x[0]), a1 = hsum(x[1]), a2 = hsum(x[2]), a3 = hsum(x[3]), a4 = hsum(x[4]);
    p64_u128 v = (p64_u128)a0 + ((p64_u128)a1 << 26) + ((p64_u128)a2 << 52);
    h[0] = (uint64_t)v;
    v = (v >> 64) + ((p64_u128)a3 << 14) + ((p64_u128)a4 << 40);
    h[1] = (uint64_t)v;
    h[2] = (uint64_t)(v >> 64);
    p64_fold(h);
}

static void poly1305_avx2_init(poly1305_state *st, const uint8_t key[32])
{
    p64_init(st, key);
}

static void poly1305_avx2_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                 uint32_t padbit)
{
    size_t nb = len / 16;
    uint64_t h[3], ready;

    if (nb < VEC_MIN_BLOCKS) {
        p64_mulx_blocks_call(st, in, len, padbit);
        return;
    }
    P64_GET(st, powers, ready);
    if (!ready) {
        if (nb < VEC_MIN_BLOCKS_COLD) {
            p64_mulx_blocks_call(st, in, len, padbit);
            return;
        }
        compute_powers(st);
    }
    P64_GET(st, h, h);
    vec_blocks(st, h, in, nb, padbit);
    P64_PUT(st, h, h);
}

static void poly1305_avx2_finish(poly1305_state *st, uint8_t tag[16])
{
    p64_finish(st, tag);
}

static size_t poly1305_avx2_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(avx2_powers));
}

const poly1305_kernel archcrypt_poly1305_avx2 = {
    .init = poly1305_avx2_init,
    .blocks = poly1305_avx2_blocks,
    .finish = poly1305_avx2_finish,
    .used = poly1305_avx2_used,
};
