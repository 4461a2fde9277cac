/* Poly1305, AVX-512 IFMA: radix 2^44 (three limbs), 8 blocks per zmm, 32 per iteration as H r^32 + A r^24 + B r^16 + C r^8 with one reduction, vpmadd52luq/huq, powers r^1..r^16, r^24, r^32 computed on a key's first vector call on a latency-first chain and kept in the state; 64-bit scalar for short calls (RFC 8439 2.5). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512IFMA__)
#error "poly1305/avx512ifma.c needs -mavx512f -mavx512vl -mavx512ifma (ISA_FLAGS_avx512ifma in native/isa.mk)"
#endif

#include <immintrin.h>

#include "poly1305/scalar64.h"

/* Calls shorter than this many blocks take the scalar path: below it the vector
 * set-up (radix conversions, one horizontal sum) costs more than it saves. The
 * first vector call for a key also computes the powers of r, so it needs a longer
 * input to pay off. Measured on the Intel AVX-512 host: with the powers ready (a
 * stream's later writes; latency through h, chained calls) the vector call costs
 * ~91-97 cycles for 2..12 blocks and the scalar one ~19 a block, equal at 5 blocks,
 * 20% and 30% apart at 6 and 7; a key's first call (one-shot, bench-ab) is slower
 * on the vector path up to 288 bytes (1.357 against 1.222 c/B at 18 blocks) and
 * level at 320 (1.200 against 1.192). */
#define VEC_MIN_BLOCKS 6
#define VEC_MIN_BLOCKS_COLD 20
/* From this many blocks a key's first call, once it has the powers, goes on as a later
 * call would, reading them back from the state: with the powers in registers gcc keeps
 * more of them live across the main loop and spills more (8 reloads per 512 bytes
 * against 6), 2-3% slower from 16 KiB up; up to 2 KiB the store-to-load latency on the
 * way to the loop costs more than that (bench-ab: 512 B +3%, 1 KiB +1.7%, 2 KiB +0.7%
 * when every first call went through the state). */
#define COLD_VIA_STATE_BLOCKS 256

#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

/* The hot helpers must inline: out of line, gcc passes the limb arrays through memory. */
/* The vector part of the state, from byte 64: per-lane powers of r in radix 2^44,
 * one zmm per limb. A group of 8 blocks is loaded as two zmm and split with
 * unpacklo/hi, which puts block k of the group in lane LANE_OF_BLOCK[k]; the
 * tables are laid out to match: lane j of P8 holds r^(8 - k), of P16 r^(16 - k),
 * for the block k in that lane. Lane 0 holds block 0, so it carries r^8 and r^16,
 * broadcast for the main loop. The powers come out of the same reduction as h
 * (partially reduced): limbs below 2^44, 2^44 + 2^7 and 2^42. */
typedef struct {
    uint64_t p8[3][8];
    uint64_t p16[3][8];
    uint64_t p24[3], p32[3]; /* broadcast in the main loop */
} ifma_powers;

static_assert(P64_VEC_OFFSET + sizeof(ifma_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "IFMA powers must fit in poly1305_state");

/* unpacklo/hi of two 4-block zmm: lane j holds block {0, 4, 1, 5, 2, 6, 3, 7}[j]. */
static const uint8_t LANE_OF_BLOCK[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/* 20 x = 2^132 / 2^130 * 5 x: limb products at 2^132 fold back to 2^0 times 20. */
AC_INLINE __m512i times20(__m512i x)
{
    return _mm512_add_epi64(_mm512_slli_epi64(x, 4), _mm512_slli_epi64(x, 2));
}

/* Split 8 blocks, a = blocks 0..3 and b = blocks 4..7, into radix-2^44 limbs:
 * lo = bytes 0..7, hi = bytes 8..15 of each block, m0 = bits 0..43, m1 = 44..87,
 * m2 = 88..127 plus the pad bit at 2^128 (bit 40 of limb 2). m0, m1 < 2^44,
 * m2 < 2^41. */
AC_INLINE void split8(__m512i a, __m512i b, __m512i pad, __m512i mask44, __m512i *m0,
                      __m512i *m1, __m512i *m2)
{
    __m512i lo = _mm512_unpacklo_epi64(a, b);
    __m512i hi = _mm512_unpackhi_epi64(a, b);

    *m0 = _mm512_and_si512(lo, mask44);
    /* (lo >> 44 | hi << 20) & mask44 in one ternary-logic op: 0xa8 = (A | B) & C */
    *m1 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(lo, 44), _mm512_slli_epi64(hi, 20), mask44,
                                    0xa8);
    *m2 = _mm512_or_si512(_mm512_srli_epi64(hi, 24), pad);
}

AC_INLINE void load8(const uint8_t *in, __m512i pad, __m512i mask44, __m512i *m0, __m512i *m1,
                     __m512i *m2)
{
    split8(_mm512_loadu_si512((const void *)in), _mm512_loadu_si512((const void *)(in + 64)), pad,
           mask44, m0, m1, m2);
}

/* t = 1..7 blocks as the last t blocks of a group of 8 (zeros before them): masked
 * loads read exactly the 16 t bytes (no copy through the stack, no address before
 * `in`), then a two-source permute moves the 2 t words to the top of the 16. */
AC_INLINE void load_partial8(const uint8_t *in, unsigned t, __m512i pad, __m512i mask44,
                             __m512i *m0, __m512i *m1, __m512i *m2)
{
    const unsigned words = 2 * t, shift = 16 - words;
    __m512i a = _mm512_maskz_loadu_epi64((__mmask8)((1u << (words < 8 ? words : 8)) - 1), in);
    __m512i b = _mm512_setzero_si512();
    if (words > 8)
        b = _mm512_maskz_loadu_epi64((__mmask8)((1u << (words - 8)) - 1), in + 64);
    const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i sv = _mm512_set1_epi64((long long)shift);
    /* word i of the result is word i - shift of (a, b); lanes below shift are zero */
    __mmask8 ka = (__mmask8)(shift < 8 ? 0xffu << shift : 0);
    __mmask8 kb = (__mmask8)(shift <= 8 ? 0xffu : 0xffu << (shift - 8));
    __m512i g0 = _mm512_maskz_permutex2var_epi64(ka, a, _mm512_sub_epi64(iota, sv), b);
    __m512i g1 = _mm512_maskz_permutex2var_epi64(
        kb, a, _mm512_sub_epi64(_mm512_add_epi64(iota, _mm512_set1_epi64(8)), sv), b);
    split8(g0, g1, pad, mask44, m0, m1, m2);
}

/* Column sums of x * r in radix 2^44 before carries, added into d: d[2c] collects
 * the low 52 bits of each product in column c, d[2c + 1] the high bits (weight
 * 2^52 = 2^8 in the next column). Terms at 2^132 and above use s = 20 r.
 * Needs x and r limbs below 2^52. The x2 products come first: in the main loop
 * h2 is ready before h0 and h1. */
#define MAC(d, x0, x1, x2, r0, r1, r2, s1, s2)                                     \
    do {                                                                           \
        d[0] = _mm512_madd52lo_epu64(d[0], x2, s1);                                \
        d[1] = _mm512_madd52hi_epu64(d[1], x2, s1);                                \
        d[2] = _mm512_madd52lo_epu64(d[2], x2, s2);                                \
        d[3] = _mm512_madd52hi_epu64(d[3], x2, s2);                                \
        d[4] = _mm512_madd52lo_epu64(d[4], x2, r0);                                \
        d[5] = _mm512_madd52hi_epu64(d[5], x2, r0);                                \
        d[0] = _mm512_madd52lo_epu64(d[0], x0, r0);                                \
        d[1] = _mm512_madd52hi_epu64(d[1], x0, r0);                                \
        d[2] = _mm512_madd52lo_epu64(d[2], x0, r1);                                \
        d[3] = _mm512_madd52hi_epu64(d[3], x0, r1);                                \
        d[4] = _mm512_madd52lo_epu64(d[4], x0, r2);                                \
        d[5] = _mm512_madd52hi_epu64(d[5], x0, r2);                                \
        d[0] = _mm512_madd52lo_epu64(d[0], x1, s2);                                \
        d[1] = _mm512_madd52hi_epu64(d[1], x1, s2);                                \
        d[2] = _mm512_madd52lo_epu64(d[2], x1, r0);                                \
        d[3] = _mm512_madd52hi_epu64(d[3], x1, r0);                                \
        d[4] = _mm512_madd52lo_epu64(d[4], x1, r1);                                \
        d[5] = _mm512_madd52hi_epu64(d[5], x1, r1);                                \
    } while (0)

/* Bounds. Between iterations h0 < 2^44, h1 < 2^44 + 2^8, h2 < 2^42; a loaded group
 * adds below 2^44, 2^44, 2^41 (2^42.4 more in limb 2 of the first group, from the
 * radix-2^64 h with h2 <= 4), so x0, x1 < 2^45.1, x2 < 2^43. Powers come out of
 * one-term reductions (r0 < 2^44, r1 < 2^44 + 2^7, r2 < 2^42; before the first
 * vector step r^1..r^4 have h2 <= 4, so limbs below 2^44, 2^44, 2^43 and s below
 * 2^48.4, 2^47.4, three products a column), so s1 < 2^48.4, s2 < 2^46.4: every IFMA
 * input is below 2^52.
 * One iteration of the main loop adds x r^32 and three groups m times r^24, r^16,
 * r^8, so per column the sum of full products is below 2^93.6 (col 0), 2^91.9
 * (col 1), 2^90.9 (col 2): each lo accumulator takes 12 products below 2^52, so
 * stays below 2^55.6, and hi accumulators below 2^41.6, 2^39.9, 2^38.9. (The step
 * of two groups and the last step add fewer terms.)
 *
 * Carries: d1lo + (d0lo >> 44) + (d0hi << 8) < 2^55.6 + 2^11.6 + 2^49.6 < 2^56;
 * likewise d2lo. Bits at 2^130 and up: c = (d2lo >> 42) + (d2hi << 10)
 * < 2^14 + 2^48.9, and h0 + 5c < 2^44 + 2^51.2 < 2^52 fits a lane and an IFMA
 * input; its carry, below 2^7.2, goes into h1. That restores the invariant (the
 * numbers are from evaluating these sums at the bounds; the emulation build aborts
 * on an IFMA input >= 2^52 or an accumulator that wraps). Nothing here is lazy
 * beyond one step: all 64-bit lanes, no 32-bit products (the Linux AVX2 overflow
 * came from a carry that outgrew its lane). */
AC_INLINE void reduce(const __m512i d[6], __m512i mask44, __m512i mask42, __m512i *h0,
                          __m512i *h1, __m512i *h2)
{
    __m512i t, c, d1, d2, x0;

    x0 = _mm512_and_si512(d[0], mask44);
    d1 = _mm512_add_epi64(d[2], _mm512_srli_epi64(d[0], 44));
    d1 = _mm512_add_epi64(d1, _mm512_slli_epi64(d[1], 8));
    *h1 = _mm512_and_si512(d1, mask44);
    d2 = _mm512_add_epi64(d[4], _mm512_srli_epi64(d1, 44));
    d2 = _mm512_add_epi64(d2, _mm512_slli_epi64(d[3], 8));
    *h2 = _mm512_and_si512(d2, mask42);
    c = _mm512_add_epi64(_mm512_srli_epi64(d2, 42), _mm512_slli_epi64(d[5], 10));
    x0 = _mm512_add_epi64(x0, _mm512_add_epi64(c, _mm512_slli_epi64(c, 2)));
    t = _mm512_srli_epi64(x0, 44);
    *h0 = _mm512_and_si512(x0, mask44);
    *h1 = _mm512_add_epi64(*h1, t);
}

/* h = reduce(d) + the group of 8 blocks at in: the pending h of the next step. */
AC_INLINE void reduce_add(const __m512i d[6], const uint8_t *in, __m512i pad, __m512i mask44,
                          __m512i mask42, __m512i *h0, __m512i *h1, __m512i *h2)
{
    __m512i m0, m1, m2;

    reduce(d, mask44, mask42, h0, h1, h2);
    load8(in, pad, mask44, &m0, &m1, &m2);
    *h0 = _mm512_add_epi64(*h0, m0);
    *h1 = _mm512_add_epi64(*h1, m1);
    *h2 = _mm512_add_epi64(*h2, m2);
}

/* The powers one vector call uses, in registers: the lane tables for the last step and
 * the broadcasts r^8, r^16, r^24, r^32 for the loop. Loaded from the state when a call
 * finds them there; on a key's first vector call computed and used straight from the
 * registers, with the state's copy written on the side (a call that waited for its own
 * stores before loading them back would add the store-to-load latency to its chain). */
typedef struct {
    __m512i p8[3], p16[3];
    __m512i b8[3], b16[3], b24[3], b32[3];
} ifma_regs;

/* x * r lane by lane, like mul_reduce, for the chain of powers, where every input
 * arrives at once and only the latency counts: each column sum runs as two chains of
 * multiply-adds (two products, then one) added at the end, 9 cycles deep instead of
 * 12 (vpmadd52 takes 4), for six more adds. The products without s = 20 r come first:
 * they need not wait for times20. */
AC_INLINE void mul_reduce_fast(__m512i x0, __m512i x1, __m512i x2, __m512i r0, __m512i r1,
                               __m512i r2, __m512i *h0, __m512i *h1, __m512i *h2)
{
    const __m512i zero = _mm512_setzero_si512();
    const __m512i s1 = times20(r1), s2 = times20(r2);
    __m512i d[6];

    d[0] = _mm512_add_epi64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, x0, r0), x1, s2),
                            _mm512_madd52lo_epu64(zero, x2, s1));
    d[1] = _mm512_add_epi64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(zero, x0, r0), x1, s2),
                            _mm512_madd52hi_epu64(zero, x2, s1));
    d[2] = _mm512_add_epi64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, x0, r1), x1, r0),
                            _mm512_madd52lo_epu64(zero, x2, s2));
    d[3] = _mm512_add_epi64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(zero, x0, r1), x1, r0),
                            _mm512_madd52hi_epu64(zero, x2, s2));
    d[4] = _mm512_add_epi64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, x0, r2), x1, r1),
                            _mm512_madd52lo_epu64(zero, x2, r0));
    d[5] = _mm512_add_epi64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(zero, x0, r2), x1, r1),
                            _mm512_madd52hi_epu64(zero, x2, r0));
    reduce(d, _mm512_set1_epi64((long long)M44), _mm512_set1_epi64((long long)M42), h0, h1, h2);
}

/* Blend: lanes of k from x, the others from src (one masked add of zero). */
AC_INLINE __m512i blend(__m512i src, __mmask8 k, __m512i x)
{
    return _mm512_mask_add_epi64(src, k, x, _mm512_setzero_si512());
}

/* A key's first vector call: r^2..r^4 by the scalar step (three dependent
 * multiplications by the clamped r, partially reduced: h2 <= 4, so limb 2 of the split
 * is below 2^43), then three vector steps: P8 = [r^4 r^4 r^3 r^3 r^2 r^2 r^1 r^1] *
 * [r^4 1 r^4 1 r^4 1 r^4 1], P16 = P8 * r^8 and [r^24 r^32] = r^16 * [r^8 r^16].
 * Everything stays in registers on its way to the message: scalar to vector by
 * broadcasts and blends (no setr through the stack), the broadcasts of r^8..r^32 by
 * vpermq. It was 258 cycles before (measured, this host; the four powers each fully
 * reduced, the vectors built by setr, each step 12 multiply-adds deep and r^24, r^32
 * read back from the state through horizontal sums). */
AC_INLINE void powers_compute(poly1305_state *st, ifma_regs *R)
{
    const uint64_t r0 = p64_word(st, offsetof(p64_head, r));
    const uint64_t r1 = p64_word(st, offsetof(p64_head, r) + 8);
    const uint64_t s1 = r1 + (r1 >> 2);
    uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const __m512i zero = _mm512_setzero_si512();
    uint64_t a0 = r0, a1 = r1, a2 = 0;
    __m512i q[4][3], v[3], w[3], e[3];

    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {
        const uint64_t a[3] = {a0, a1, a2};
        uint64_t l[3];

        p64_split44(l, a);
        q[k][0] = _mm512_set1_epi64((long long)l[0]);
        q[k][1] = _mm512_set1_epi64((long long)l[1]);
        q[k][2] = _mm512_set1_epi64((long long)l[2]);
        if (k < 3)
            p64_mul(&a0, &a1, &a2, r0, r1, s1);
    }
    /* Lane j needs r^e, e = 8 - (block in lane j) = 8 4 7 3 6 2 5 1: v holds r^(e - 4)
     * or r^e and w holds r^4 or 1; r^4, the last to arrive, is blended last. */
    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++) {
        v[i] = blend(blend(blend(q[0][i], 0x30, q[1][i]), 0x0c, q[2][i]), 0x03, q[3][i]);
        w[i] = blend(i == 0 ? _mm512_set1_epi64(1) : zero, 0x55, q[3][i]);
    }
    mul_reduce_fast(v[0], v[1], v[2], w[0], w[1], w[2], &R->p8[0], &R->p8[1], &R->p8[2]);
    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++)
        R->b8[i] = _mm512_permutexvar_epi64(zero, R->p8[i]); /* lane 0: r^8 */
    mul_reduce_fast(R->p8[0], R->p8[1], R->p8[2], R->b8[0], R->b8[1], R->b8[2], &R->p16[0],
                    &R->p16[1], &R->p16[2]);
    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++) {
        R->b16[i] = _mm512_permutexvar_epi64(zero, R->p16[i]);
        w[i] = blend(R->b8[i], 0x02, R->b16[i]); /* r^8 in lane 0, r^16 in lane 1 */
    }
    mul_reduce_fast(R->b16[0], R->b16[1], R->b16[2], w[0], w[1], w[2], &e[0], &e[1], &e[2]);
    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++) {
        R->b24[i] = _mm512_permutexvar_epi64(zero, e[i]);
        R->b32[i] = _mm512_permutexvar_epi64(_mm512_set1_epi64(1), e[i]);
    }

    /* The state's copy, for the key's later calls. r^24 and r^32 leave lanes 0 and 1 of
     * e through the slots of P16 (whole-vector stores, then 8-byte loads inside them,
     * which store forwarding serves) before P16 goes there: horizontal sums to move
     * them cost ~40 shuffles and adds on the two vector ports. */
    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++) {
        const size_t slot = P64_VEC_OFFSET + offsetof(ifma_powers, p16[i]);
        _mm512_store_si512((void *)(st->opaque + slot), e[i]);
        p64_set_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p24) + 8 * (size_t)i,
                     p64_word(st, slot));
        p64_set_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p32) + 8 * (size_t)i,
                     p64_word(st, slot + 8));
        _mm512_store_si512((void *)(tab + offsetof(ifma_powers, p8[i])), R->p8[i]);
        _mm512_store_si512((void *)(st->opaque + slot), R->p16[i]);
    }
    p64_set_word(st, offsetof(p64_head, powers), 1);
}

/* A later call: the tables as they are, the broadcasts straight from memory. */
AC_INLINE void powers_load(const poly1305_state *st, ifma_regs *R)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;

    _Pragma("GCC unroll 3") for (int i = 0; i < 3; i++) {
        R->p8[i] = _mm512_load_si512((const void *)(tab + offsetof(ifma_powers, p8[i])));
        R->p16[i] = _mm512_load_si512((const void *)(tab + offsetof(ifma_powers, p16[i])));
        R->b8[i] = _mm512_set1_epi64(
            (long long)p64_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p8[i])));
        R->b16[i] = _mm512_set1_epi64(
            (long long)p64_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p16[i])));
        R->b24[i] = _mm512_set1_epi64(
            (long long)p64_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p24) + 8 * (size_t)i));
        R->b32[i] = _mm512_set1_epi64(
            (long long)p64_word(st, P64_VEC_OFFSET + offsetof(ifma_powers, p32) + 8 * (size_t)i));
    }
}

/* nb >= 1 blocks through the vector path; h in radix 2^64 read from and written back
 * to the state word by word (an array copied whole went through the stack, and a
 * 16-byte load over two 8-byte stores misses store forwarding). */
AC_INLINE void vec_blocks(poly1305_state *st, const ifma_regs *R, const uint8_t *in, size_t nb,
                          uint32_t padbit)
{
    const __m512i mask44 = _mm512_set1_epi64((long long)M44);
    const __m512i mask42 = _mm512_set1_epi64((long long)M42);
    const __m512i pad = _mm512_set1_epi64((long long)((uint64_t)padbit << 40));
    __m512i h0, h1, h2, m0, m1, m2;
    size_t t = nb % 8, groups = (nb + 7) / 8;

    /* The first group: a partial one when nb is not a multiple of 8, read as 8 - t
     * zero blocks without pad bits followed by the t real blocks; h joins the
     * first real block. */
    {
        unsigned first = 0;

        if (t != 0) {
            __mmask8 lanes = 0;
            first = 8 - (unsigned)t;
            for (unsigned k = first; k < 8; k++)
                lanes |= (__mmask8)(1u << LANE_OF_BLOCK[k]);
            load_partial8(in, (unsigned)t, _mm512_maskz_mov_epi64(lanes, pad), mask44, &m0, &m1,
                          &m2);
            in += 16 * t;
        } else {
            load8(in, pad, mask44, &m0, &m1, &m2);
            in += 128;
        }

        __mmask8 hl = (__mmask8)(1u << LANE_OF_BLOCK[first]);
        const uint64_t x[3] = {p64_word(st, offsetof(p64_head, h)),
                               p64_word(st, offsetof(p64_head, h) + 8),
                               p64_word(st, offsetof(p64_head, h) + 16)};
        uint64_t a[3];

        p64_split44(a, x);
        h0 = _mm512_mask_add_epi64(m0, hl, m0, _mm512_set1_epi64((long long)a[0]));
        h1 = _mm512_mask_add_epi64(m1, hl, m1, _mm512_set1_epi64((long long)a[1]));
        h2 = _mm512_mask_add_epi64(m2, hl, m2, _mm512_set1_epi64((long long)a[2]));
    }
    groups -= 1;

    /* Main loop: h = h r^32 + a r^24 + b r^16 + c r^8 + m, four groups per iteration
     * and one reduction; then at most one step of two, h = h r^16 + m r^8 + m'. The
     * products of a, b and c do not depend on h, so they are summed while the previous
     * reduction runs: what h waits for per 512 bytes is three multiply-adds and one
     * reduction, against the same per 256 bytes with two groups an iteration. */
    if (groups >= 2) {
        const __m512i zero = _mm512_setzero_si512();
        const __m512i b8_0 = R->b8[0], b8_1 = R->b8[1], b8_2 = R->b8[2];
        const __m512i b8_s1 = times20(b8_1), b8_s2 = times20(b8_2);
        const __m512i b16_0 = R->b16[0], b16_1 = R->b16[1], b16_2 = R->b16[2];
        const __m512i b16_s1 = times20(b16_1), b16_s2 = times20(b16_2);

        if (groups >= 4) {
            const __m512i b24_0 = R->b24[0], b24_1 = R->b24[1], b24_2 = R->b24[2];
            const __m512i b24_s1 = times20(b24_1), b24_s2 = times20(b24_2);
            const __m512i b32_0 = R->b32[0], b32_1 = R->b32[1], b32_2 = R->b32[2];
            const __m512i b32_s1 = times20(b32_1), b32_s2 = times20(b32_2);

            do {
                __m512i d[6] = {zero, zero, zero, zero, zero, zero};

                load8(in, pad, mask44, &m0, &m1, &m2);
                MAC(d, m0, m1, m2, b24_0, b24_1, b24_2, b24_s1, b24_s2);
                load8(in + 128, pad, mask44, &m0, &m1, &m2);
                MAC(d, m0, m1, m2, b16_0, b16_1, b16_2, b16_s1, b16_s2);
                load8(in + 256, pad, mask44, &m0, &m1, &m2);
                MAC(d, m0, m1, m2, b8_0, b8_1, b8_2, b8_s1, b8_s2);
                MAC(d, h0, h1, h2, b32_0, b32_1, b32_2, b32_s1, b32_s2);
                reduce_add(d, in + 384, pad, mask44, mask42, &h0, &h1, &h2);
                in += 512;
                groups -= 4;
            } while (groups >= 4);
        }
        if (groups >= 2) {
            __m512i d[6] = {zero, zero, zero, zero, zero, zero};

            load8(in, pad, mask44, &m0, &m1, &m2);
            MAC(d, m0, m1, m2, b8_0, b8_1, b8_2, b8_s1, b8_s2);
            MAC(d, h0, h1, h2, b16_0, b16_1, b16_2, b16_s1, b16_s2);
            reduce_add(d, in + 128, pad, mask44, mask42, &h0, &h1, &h2);
            in += 256;
            groups -= 2;
        }
    }

    /* Last step: lane j times the power for its block, and one more group if left. */
    {
        const __m512i zero = _mm512_setzero_si512();
        __m512i d[6] = {zero, zero, zero, zero, zero, zero};
        const __m512i p0 = R->p8[0], p1 = R->p8[1], p2 = R->p8[2];

        if (groups == 1) {
            const __m512i q0 = R->p16[0], q1 = R->p16[1], q2 = R->p16[2];
            load8(in, pad, mask44, &m0, &m1, &m2);
            MAC(d, m0, m1, m2, p0, p1, p2, times20(p1), times20(p2));
            MAC(d, h0, h1, h2, q0, q1, q2, times20(q1), times20(q2));
        } else {
            MAC(d, h0, h1, h2, p0, p1, p2, times20(p1), times20(p2));
        }
        reduce(d, mask44, mask42, &h0, &h1, &h2);
    }

    /* Sum the lanes (each limb sum below 2^47.1) and return to radix 2^64:
     * below 2^133.1, folded back to h2 <= 4. */
    uint64_t a0 = (uint64_t)_mm512_reduce_add_epi64(h0);
    uint64_t a1 = (uint64_t)_mm512_reduce_add_epi64(h1);
    uint64_t a2 = (uint64_t)_mm512_reduce_add_epi64(h2);
    uint64_t h[3];
    p64_join44(h, a0, a1, a2);
    p64_set_word(st, offsetof(p64_head, h), h[0]);
    p64_set_word(st, offsetof(p64_head, h) + 8, h[1]);
    p64_set_word(st, offsetof(p64_head, h) + 16, h[2]);
}

static void poly1305_avx512ifma_init(poly1305_state *st, const uint8_t key[32])
{
    p64_init(st, key);
}

/* The vector calls out of line: inlined, their prologue (five pushes, a 64-byte
 * aligned frame for spills) ran before the length check of every call, and the 64-byte
 * MAC on the scalar path was 3% slower (bench-ab). */
static __attribute__((noinline)) void vec_call_warm(poly1305_state *st, const uint8_t *in,
                                                    size_t nb, uint32_t padbit)
{
    ifma_regs R;

    powers_load(st, &R);
    vec_blocks(st, &R, in, nb, padbit);
}

static __attribute__((noinline)) void vec_call_cold(poly1305_state *st, const uint8_t *in,
                                                    size_t nb, uint32_t padbit)
{
    ifma_regs R;

    powers_compute(st, &R);
    if (nb >= COLD_VIA_STATE_BLOCKS)
        vec_call_warm(st, in, nb, padbit);
    else
        vec_blocks(st, &R, in, nb, padbit);
}

/* Aligned: placed wherever the vector code before it ends, the 64-byte MAC moved by
 * +-2% from build to build. */
static __attribute__((noinline, aligned(64))) void scalar_call(poly1305_state *st,
                                                              const uint8_t *in, size_t len,
                                                              uint32_t padbit)
{
    p64_blocks_call(st, in, len, padbit);
}

/* Only the length checks here, every path a tail call: whatever gcc inlines into this
 * function, its prologue runs on every call (six pushes cost the 64-byte MAC 10%). */
static void poly1305_avx512ifma_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                       uint32_t padbit)
{
    size_t nb = len / 16;

    if (nb < VEC_MIN_BLOCKS) {
        scalar_call(st, in, len, padbit);
    } else if (p64_word(st, offsetof(p64_head, powers)) != 0) {
        vec_call_warm(st, in, nb, padbit);
    } else if (nb < VEC_MIN_BLOCKS_COLD) {
        scalar_call(st, in, len, padbit);
    } else {
        vec_call_cold(st, in, nb, padbit);
    }
}

static void poly1305_avx512ifma_finish(poly1305_state *st, uint8_t tag[16])
{
    p64_finish(st, tag);
}

static size_t poly1305_avx512ifma_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(ifma_powers));
}

const poly1305_kernel archcrypt_poly1305_avx512ifma = {
    .init = poly1305_avx512ifma_init,
    .blocks = poly1305_avx512ifma_blocks,
    .finish = poly1305_avx512ifma_finish,
    .used = poly1305_avx512ifma_used,
};
