/* Poly1305, NEON (ASIMD): radix 2^26 (five limbs), two lanes, 8 blocks (128 B) per iteration as h r^8 + m r^6 + m' r^4 + m'' r^2 per lane with umlal by element and one reduction, a last step with the lanes' own powers r^8..r^1, powers kept in the state; 64-bit scalar for short calls and the last 1-7 blocks (RFC 8439 2.5). */
#if !defined(__aarch64__) || !defined(__ARM_NEON) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "poly1305/neon.c needs little-endian AArch64 with ASIMD (ISA_FLAGS_neon in native/Makefile)"
#endif

#include <arm_neon.h>

#include "poly1305/aarch64.h"

/* Calls shorter than this many blocks take the scalar path (30 instructions a block,
 * poly1305/aarch64.h). The vector path (21.5 a block) costs a radix conversion in and out
 * and the lanes' final sum, ~90 instructions; the first vector call for a key also
 * computes r^2..r^8 and the tables, ~300. Break-even by count under qemu is ~11 blocks
 * warm and ~46 cold; on a real core the vector path gains more (four umlal pipes against
 * a chain of dependent 64-bit multiplies), so these lean low. */
#define VEC_MIN_BLOCKS 16
#define VEC_MIN_BLOCKS_COLD 48

#define M26 0x3ffffffu

/* The vector part of the state, from byte 64. Nine rows per table: the five limbs of a
 * power of r, then 5 times limbs 1..4 (the terms at 2^130 and up fold back times 5).
 * loop[k] = {r^8, r^6, r^4, r^2} of row k, read by element in the main loop (every lane
 * takes the same power); last_hi[k] = {r^8, r^7, r^6, r^5} and last_lo[k] = {r^4, r^3,
 * r^2, r^1}, read as vectors in the last step, where lane 1 runs one power behind lane 0.
 * Entries come from the reduced (not canonical) powers: below 2^26.01, 5 r below 2^28.33. */
typedef struct {
    uint32_t loop[9][4];
    uint32_t last_hi[9][4];
    uint32_t last_lo[9][4];
} neon_powers;

static_assert(P64_VEC_OFFSET + sizeof(neon_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "NEON powers must fit in poly1305_state");

AC_INLINE void split26(uint32_t out[5], const uint64_t x[3])
{
    out[0] = (uint32_t)x[0] & M26;
    out[1] = (uint32_t)(x[0] >> 26) & M26;
    out[2] = (uint32_t)((x[0] >> 52) | (x[1] << 12)) & M26;
    out[3] = (uint32_t)(x[1] >> 14) & M26;
    out[4] = (uint32_t)((x[1] >> 40) | (x[2] << 24));
}

/* Four blocks into radix-2^26 limbs, block e in 32-bit lane e: ld4 deals the blocks'
 * words out by position, so limb i of all four blocks is a few shifts of two vectors.
 * Limbs 0..3 < 2^26, limb 4 < 2^25 (24 bits and the pad bit at 2^24). */
AC_INLINE void load4(const uint8_t *in, uint32x4_t pad, uint32x4_t m[5])
{
    const uint32x4_t mask = vdupq_n_u32(M26);
    const uint32x4x4_t w = vld4q_u32((const uint32_t *)(const void *)in);

    m[0] = vandq_u32(w.val[0], mask);
    m[1] = vandq_u32(vsriq_n_u32(vshlq_n_u32(w.val[1], 6), w.val[0], 26), mask);
    m[2] = vandq_u32(vsriq_n_u32(vshlq_n_u32(w.val[2], 12), w.val[1], 20), mask);
    m[3] = vandq_u32(vsriq_n_u32(vshlq_n_u32(w.val[3], 18), w.val[2], 14), mask);
    m[4] = vorrq_u32(vshrq_n_u32(w.val[3], 8), pad);
}

/* Table row of the multiplier for column i, input limb j: r_(i-j), or 5 r_(5+i-j) for
 * the part that wraps past 2^130. */
#define ROW(i, j) ((i) >= (j) ? (i) - (j) : 9 + (i) - (j))

/* d_i += sum_j x_j t_(ROW(i,j)) with every lane taking element E of the table rows.
 * LO multiplies the low two lanes of a 4-lane x, HI the high two. */
#define MUL_LO_E(d, x, t, E, first)                                                  \
    do {                                                                             \
        _Pragma("GCC unroll 5") for (int i_ = 0; i_ < 5; i_++) {                     \
            _Pragma("GCC unroll 5") for (int j_ = 0; j_ < 5; j_++) {                 \
                if ((first) && j_ == 0)                                              \
                    (d)[i_] = vmull_laneq_u32((x)[j_], (t)[ROW(i_, j_)], (E));       \
                else                                                                 \
                    (d)[i_] = vmlal_laneq_u32((d)[i_], (x)[j_], (t)[ROW(i_, j_)], (E)); \
            }                                                                        \
        }                                                                            \
    } while (0)

#define MUL_HI_E(d, x, t, E)                                                         \
    do {                                                                             \
        _Pragma("GCC unroll 5") for (int i_ = 0; i_ < 5; i_++)                       \
            _Pragma("GCC unroll 5") for (int j_ = 0; j_ < 5; j_++)                   \
                (d)[i_] = vmlal_high_laneq_u32((d)[i_], (x)[j_], (t)[ROW(i_, j_)], (E)); \
    } while (0)

/* The same with per-lane multipliers: the low lanes against the low half of the rows,
 * the high lanes against the high half. */
#define MUL_LO_V(d, x, t, first)                                                     \
    do {                                                                             \
        _Pragma("GCC unroll 5") for (int i_ = 0; i_ < 5; i_++) {                     \
            _Pragma("GCC unroll 5") for (int j_ = 0; j_ < 5; j_++) {                 \
                if ((first) && j_ == 0)                                              \
                    (d)[i_] = vmull_u32((x)[j_], vget_low_u32((t)[ROW(i_, j_)]));    \
                else                                                                 \
                    (d)[i_] = vmlal_u32((d)[i_], (x)[j_], vget_low_u32((t)[ROW(i_, j_)])); \
            }                                                                        \
        }                                                                            \
    } while (0)

#define MUL_HI_V(d, x, t)                                                            \
    do {                                                                             \
        _Pragma("GCC unroll 5") for (int i_ = 0; i_ < 5; i_++)                       \
            _Pragma("GCC unroll 5") for (int j_ = 0; j_ < 5; j_++)                   \
                (d)[i_] = vmlal_high_u32((d)[i_], (x)[j_], (t)[ROW(i_, j_)]);        \
    } while (0)

/* Bounds. Between iterations h0, h2, h3 < 2^26, h1 < 2^26 + 2^10.3, h4 < 2^26 + 2^8
 * (straight from radix 2^64 with h2 <= 4: limb 4 < 2^26.4). Message limbs are below
 * 2^26, so x = h + m < 2^27.01; table entries are below 2^28.33; a product is below
 * 2^55.34 and a column of twenty (four powers, five products each) below 2^59.7: the
 * 64-bit lanes cannot overflow.
 *
 * Carries, two chains interleaved (d0 -> d1 -> d2 -> d3 and d3 -> d4 -> d0 -> d1), each
 * a usra (shift right and accumulate) and a mask: c0, c3 < 2^33.7; c1 < 2^33.8 and
 * c4 < 2^33.8, 5 c4 < 2^36.2 into d0, whose second carry is below 2^10.3 (h1's excess);
 * c2 < 2^33.8 into d3, whose second carry is below 2^8 (h4's). That restores the
 * invariant. Every carry is a 64-bit lane op: nothing like the Linux AVX2 h4 -> h0
 * overflow (678cce40), whose 5 c outgrew 32 bits, can happen here. */
AC_INLINE void reduce(uint64x2_t d[5])
{
    const uint64x2_t mask = vdupq_n_u64(M26);
    uint64x2_t c;

    d[1] = vsraq_n_u64(d[1], d[0], 26); d[0] = vandq_u64(d[0], mask);
    d[4] = vsraq_n_u64(d[4], d[3], 26); d[3] = vandq_u64(d[3], mask);
    d[2] = vsraq_n_u64(d[2], d[1], 26); d[1] = vandq_u64(d[1], mask);
    c = vshrq_n_u64(d[4], 26); d[4] = vandq_u64(d[4], mask);
    d[0] = vaddq_u64(d[0], vaddq_u64(c, vshlq_n_u64(c, 2)));
    d[3] = vsraq_n_u64(d[3], d[2], 26); d[2] = vandq_u64(d[2], mask);
    d[1] = vsraq_n_u64(d[1], d[0], 26); d[0] = vandq_u64(d[0], mask);
    d[4] = vsraq_n_u64(d[4], d[3], 26); d[3] = vandq_u64(d[3], mask);
}

AC_INLINE void load_rows(uint32x4_t t[9], const uint8_t *p)
{
    _Pragma("GCC unroll 9") for (int k = 0; k < 9; k++)
        t[k] = vld1q_u32((const uint32_t *)(const void *)(p + 16 * k));
}

/* d = x y with per-lane multipliers (the two lanes are two products), reduced. */
AC_INLINE void mul2(uint64x2_t d[5], const uint32x2_t x[5], const uint32x2_t y[5])
{
    uint32x2_t t[9];

    _Pragma("GCC unroll 5") for (int k = 0; k < 5; k++)
        t[k] = y[k];
    _Pragma("GCC unroll 4") for (int k = 1; k < 5; k++)
        t[4 + k] = vmul_n_u32(y[k], 5);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        d[i] = vmull_u32(x[0], t[ROW(i, 0)]);
        _Pragma("GCC unroll 4") for (int j = 1; j < 5; j++)
            d[i] = vmlal_u32(d[i], x[j], t[ROW(i, j)]);
    }
    reduce(d);
}

AC_INLINE void narrow(uint32x2_t x[5], const uint64x2_t d[5])
{
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
        x[i] = vmovn_u64(d[i]);
}

/* r^1..r^8 in four two-lane products, [r, r] [r, 1] = [r^2, r], [r^2, r^2] [r^2, r] =
 * [r^4, r^3], [r^4, r^4] [r^2, r] = [r^6, r^5] and [r^4, r^4] [r^4, r^3] = [r^8, r^7],
 * into the three tables. Each product is one of the main loop's (same bounds: inputs
 * below 2^26.01, outputs within the invariant of reduce), so entries stay below 2^26.01
 * and 5 r below 2^28.33. Once per key: once per AEAD message that reaches the vector
 * path. (r^1..r^8 one scalar multiplication and full reduction at a time, and the table
 * filled word by word, cost ~2,500 instructions: a 1 KiB message's whole budget.) */
static __attribute__((noinline)) void compute_powers(poly1305_state *st)
{
    uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    uint64_t r[3] = {a64_get(st, A64_R(0)), a64_get(st, A64_R(1)), 0};
    uint32_t l[5];
    uint32x2_t r1[5], one_r[5], r21[5], r43[5], x[5];
    uint64x2_t d[5];

    split26(l, r);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++) {
        r1[i] = vdup_n_u32(l[i]);
        /* lane 0 r, lane 1 the number 1 */
        one_r[i] = vset_lane_u32(i == 0 ? 1u : 0u, r1[i], 1);
    }
    mul2(d, r1, one_r);
    narrow(r21, d);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
        x[i] = vdup_lane_u32(r21[i], 0);
    mul2(d, x, r21);
    narrow(r43, d);
    _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
        x[i] = vdup_lane_u32(r43[i], 0);
    {
        uint32x2_t r65[5], r87[5];

        mul2(d, x, r21);
        narrow(r65, d);
        mul2(d, x, r43);
        narrow(r87, d);
        _Pragma("GCC unroll 9") for (int k = 0; k < 9; k++) {
            /* Row k: limb k, or 5 times limb k - 4. */
            const int i = k < 5 ? k : k - 4;
            uint32x4_t hi = vcombine_u32(r87[i], r65[i]), lo = vcombine_u32(r43[i], r21[i]);

            if (k >= 5) {
                hi = vmulq_n_u32(hi, 5);
                lo = vmulq_n_u32(lo, 5);
            }
            vst1q_u32((uint32_t *)(void *)(tab + offsetof(neon_powers, last_hi) + 16 * k), hi);
            vst1q_u32((uint32_t *)(void *)(tab + offsetof(neon_powers, last_lo) + 16 * k), lo);
            vst1q_u32((uint32_t *)(void *)(tab + offsetof(neon_powers, loop) + 16 * k),
                      vuzp1q_u32(hi, lo));
        }
    }
    ac_wipe_words(r, sizeof r);
    {
        volatile uint32_t *w = l;
        for (int i = 0; i < 5; i++)
            w[i] = 0;
    }
    a64_put(st, offsetof(p64_head, powers), 1);
}

/* ng >= 1 groups of 8 blocks; h in radix 2^64 in and out. Out of line: inlined, its
 * saves of the callee-saved d8-d15 were paid by every short call too. */
static __attribute__((noinline)) void vec_blocks(const poly1305_state *st, uint64_t h[3], const uint8_t *in, size_t ng,
                       uint32_t padbit)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const uint32x4_t pad = vdupq_n_u32(padbit << 24);
    uint32x4_t ma[5], mb[5], t[9];
    uint32x2_t x[5];
    uint64x2_t d[5];

    /* h joins lane 0; lane 1 starts at zero. */
    {
        uint32_t l[5];

        split26(l, h);
        _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
            d[i] = vcombine_u64(vcreate_u64(l[i]), vcreate_u64(0));
    }

    /* Lane e (0, 1) takes blocks e, 2 + e, 4 + e, 6 + e of each group:
     * h_e = (h_e + m_e) r^8 + m_(2+e) r^6 + m_(4+e) r^4 + m_(6+e) r^2. Lane 0 is then
     * exact (its blocks have the powers they need at the end of the group), lane 1 is
     * one power of r ahead; the last step repays that with r^7, r^5, r^3, r^1. */
    if (ng > 1) {
        /* One asm block (the loop above in C, as gcc 12 compiled it, spent 15 of its 172
         * instructions moving accumulators between registers; this is 155): the limbs
         * come out of ld4 into v5-v9 (blocks 0-3) and v0-v4 (4-7), x = h + m into v0-v4,
         * the table rows in v16-v24, h and the columns in v25-v29, where the reduction
         * leaves h for the next group's xtn. */
        register uint64x2_t h0 __asm__("v25") = d[0], h1 __asm__("v26") = d[1],
                            h2 __asm__("v27") = d[2], h3 __asm__("v28") = d[3],
                            h4 __asm__("v29") = d[4];
        register uint32x4_t t0 __asm__("v16"), t1 __asm__("v17"), t2 __asm__("v18"),
            t3 __asm__("v19"), t4 __asm__("v20"), t5 __asm__("v21"), t6 __asm__("v22"),
            t7 __asm__("v23"), t8 __asm__("v24");
        register uint32x4_t mask __asm__("v30") = vdupq_n_u32(M26), padv __asm__("v31") = pad;
        register uint64x2_t mask64 __asm__("v15") = vdupq_n_u64(M26);
        size_t n = ng - 1;

        load_rows(t, tab + offsetof(neon_powers, loop));
        t0 = t[0]; t1 = t[1]; t2 = t[2]; t3 = t[3]; t4 = t[4];
        t5 = t[5]; t6 = t[6]; t7 = t[7]; t8 = t[8];
        __asm__(
            "1:\n\t"
            "ld4 {v10.4s-v13.4s}, [%[in]], #64\n\t"
            "shl v5.4s, v11.4s, #6\n\t"
            "sri v5.4s, v10.4s, #26\n\t"
            "and v5.16b, v5.16b, v30.16b\n\t"
            "shl v6.4s, v12.4s, #12\n\t"
            "sri v6.4s, v11.4s, #20\n\t"
            "and v6.16b, v6.16b, v30.16b\n\t"
            "shl v7.4s, v13.4s, #18\n\t"
            "sri v7.4s, v12.4s, #14\n\t"
            "and v7.16b, v7.16b, v30.16b\n\t"
            "ushr v8.4s, v13.4s, #8\n\t"
            "orr v8.16b, v8.16b, v31.16b\n\t"
            "and v9.16b, v10.16b, v30.16b\n\t"
            "xtn v0.2s, v25.2d\n\t"
            "add v0.2s, v0.2s, v9.2s\n\t"
            "xtn v1.2s, v26.2d\n\t"
            "add v1.2s, v1.2s, v5.2s\n\t"
            "xtn v2.2s, v27.2d\n\t"
            "add v2.2s, v2.2s, v6.2s\n\t"
            "xtn v3.2s, v28.2d\n\t"
            "add v3.2s, v3.2s, v7.2s\n\t"
            "xtn v4.2s, v29.2d\n\t"
            "add v4.2s, v4.2s, v8.2s\n\t"
            "umull v25.2d, v0.2s, v16.s[0]\n\t"
            "umull v26.2d, v0.2s, v17.s[0]\n\t"
            "umull v27.2d, v0.2s, v18.s[0]\n\t"
            "umull v28.2d, v0.2s, v19.s[0]\n\t"
            "umull v29.2d, v0.2s, v20.s[0]\n\t"
            "umlal v25.2d, v1.2s, v24.s[0]\n\t"
            "umlal v26.2d, v1.2s, v16.s[0]\n\t"
            "umlal v27.2d, v1.2s, v17.s[0]\n\t"
            "umlal v28.2d, v1.2s, v18.s[0]\n\t"
            "umlal v29.2d, v1.2s, v19.s[0]\n\t"
            "umlal v25.2d, v2.2s, v23.s[0]\n\t"
            "umlal v26.2d, v2.2s, v24.s[0]\n\t"
            "umlal v27.2d, v2.2s, v16.s[0]\n\t"
            "umlal v28.2d, v2.2s, v17.s[0]\n\t"
            "umlal v29.2d, v2.2s, v18.s[0]\n\t"
            "umlal v25.2d, v3.2s, v22.s[0]\n\t"
            "umlal v26.2d, v3.2s, v23.s[0]\n\t"
            "umlal v27.2d, v3.2s, v24.s[0]\n\t"
            "umlal v28.2d, v3.2s, v16.s[0]\n\t"
            "umlal v29.2d, v3.2s, v17.s[0]\n\t"
            "umlal v25.2d, v4.2s, v21.s[0]\n\t"
            "umlal v26.2d, v4.2s, v22.s[0]\n\t"
            "umlal v27.2d, v4.2s, v23.s[0]\n\t"
            "umlal v28.2d, v4.2s, v24.s[0]\n\t"
            "umlal v29.2d, v4.2s, v16.s[0]\n\t"
            "umlal2 v25.2d, v9.4s, v16.s[1]\n\t"
            "umlal2 v26.2d, v9.4s, v17.s[1]\n\t"
            "umlal2 v27.2d, v9.4s, v18.s[1]\n\t"
            "umlal2 v28.2d, v9.4s, v19.s[1]\n\t"
            "umlal2 v29.2d, v9.4s, v20.s[1]\n\t"
            "umlal2 v25.2d, v5.4s, v24.s[1]\n\t"
            "umlal2 v26.2d, v5.4s, v16.s[1]\n\t"
            "umlal2 v27.2d, v5.4s, v17.s[1]\n\t"
            "umlal2 v28.2d, v5.4s, v18.s[1]\n\t"
            "umlal2 v29.2d, v5.4s, v19.s[1]\n\t"
            "umlal2 v25.2d, v6.4s, v23.s[1]\n\t"
            "umlal2 v26.2d, v6.4s, v24.s[1]\n\t"
            "umlal2 v27.2d, v6.4s, v16.s[1]\n\t"
            "umlal2 v28.2d, v6.4s, v17.s[1]\n\t"
            "umlal2 v29.2d, v6.4s, v18.s[1]\n\t"
            "umlal2 v25.2d, v7.4s, v22.s[1]\n\t"
            "umlal2 v26.2d, v7.4s, v23.s[1]\n\t"
            "umlal2 v27.2d, v7.4s, v24.s[1]\n\t"
            "umlal2 v28.2d, v7.4s, v16.s[1]\n\t"
            "umlal2 v29.2d, v7.4s, v17.s[1]\n\t"
            "umlal2 v25.2d, v8.4s, v21.s[1]\n\t"
            "umlal2 v26.2d, v8.4s, v22.s[1]\n\t"
            "umlal2 v27.2d, v8.4s, v23.s[1]\n\t"
            "umlal2 v28.2d, v8.4s, v24.s[1]\n\t"
            "umlal2 v29.2d, v8.4s, v16.s[1]\n\t"
            "ld4 {v10.4s-v13.4s}, [%[in]], #64\n\t"
            "shl v1.4s, v11.4s, #6\n\t"
            "sri v1.4s, v10.4s, #26\n\t"
            "and v1.16b, v1.16b, v30.16b\n\t"
            "shl v2.4s, v12.4s, #12\n\t"
            "sri v2.4s, v11.4s, #20\n\t"
            "and v2.16b, v2.16b, v30.16b\n\t"
            "shl v3.4s, v13.4s, #18\n\t"
            "sri v3.4s, v12.4s, #14\n\t"
            "and v3.16b, v3.16b, v30.16b\n\t"
            "ushr v4.4s, v13.4s, #8\n\t"
            "orr v4.16b, v4.16b, v31.16b\n\t"
            "and v0.16b, v10.16b, v30.16b\n\t"
            "umlal v25.2d, v0.2s, v16.s[2]\n\t"
            "umlal v26.2d, v0.2s, v17.s[2]\n\t"
            "umlal v27.2d, v0.2s, v18.s[2]\n\t"
            "umlal v28.2d, v0.2s, v19.s[2]\n\t"
            "umlal v29.2d, v0.2s, v20.s[2]\n\t"
            "umlal v25.2d, v1.2s, v24.s[2]\n\t"
            "umlal v26.2d, v1.2s, v16.s[2]\n\t"
            "umlal v27.2d, v1.2s, v17.s[2]\n\t"
            "umlal v28.2d, v1.2s, v18.s[2]\n\t"
            "umlal v29.2d, v1.2s, v19.s[2]\n\t"
            "umlal v25.2d, v2.2s, v23.s[2]\n\t"
            "umlal v26.2d, v2.2s, v24.s[2]\n\t"
            "umlal v27.2d, v2.2s, v16.s[2]\n\t"
            "umlal v28.2d, v2.2s, v17.s[2]\n\t"
            "umlal v29.2d, v2.2s, v18.s[2]\n\t"
            "umlal v25.2d, v3.2s, v22.s[2]\n\t"
            "umlal v26.2d, v3.2s, v23.s[2]\n\t"
            "umlal v27.2d, v3.2s, v24.s[2]\n\t"
            "umlal v28.2d, v3.2s, v16.s[2]\n\t"
            "umlal v29.2d, v3.2s, v17.s[2]\n\t"
            "umlal v25.2d, v4.2s, v21.s[2]\n\t"
            "umlal v26.2d, v4.2s, v22.s[2]\n\t"
            "umlal v27.2d, v4.2s, v23.s[2]\n\t"
            "umlal v28.2d, v4.2s, v24.s[2]\n\t"
            "umlal v29.2d, v4.2s, v16.s[2]\n\t"
            "umlal2 v25.2d, v0.4s, v16.s[3]\n\t"
            "umlal2 v26.2d, v0.4s, v17.s[3]\n\t"
            "umlal2 v27.2d, v0.4s, v18.s[3]\n\t"
            "umlal2 v28.2d, v0.4s, v19.s[3]\n\t"
            "umlal2 v29.2d, v0.4s, v20.s[3]\n\t"
            "umlal2 v25.2d, v1.4s, v24.s[3]\n\t"
            "umlal2 v26.2d, v1.4s, v16.s[3]\n\t"
            "umlal2 v27.2d, v1.4s, v17.s[3]\n\t"
            "umlal2 v28.2d, v1.4s, v18.s[3]\n\t"
            "umlal2 v29.2d, v1.4s, v19.s[3]\n\t"
            "umlal2 v25.2d, v2.4s, v23.s[3]\n\t"
            "umlal2 v26.2d, v2.4s, v24.s[3]\n\t"
            "umlal2 v27.2d, v2.4s, v16.s[3]\n\t"
            "umlal2 v28.2d, v2.4s, v17.s[3]\n\t"
            "umlal2 v29.2d, v2.4s, v18.s[3]\n\t"
            "umlal2 v25.2d, v3.4s, v22.s[3]\n\t"
            "umlal2 v26.2d, v3.4s, v23.s[3]\n\t"
            "umlal2 v27.2d, v3.4s, v24.s[3]\n\t"
            "umlal2 v28.2d, v3.4s, v16.s[3]\n\t"
            "umlal2 v29.2d, v3.4s, v17.s[3]\n\t"
            "umlal2 v25.2d, v4.4s, v21.s[3]\n\t"
            "umlal2 v26.2d, v4.4s, v22.s[3]\n\t"
            "umlal2 v27.2d, v4.4s, v23.s[3]\n\t"
            "umlal2 v28.2d, v4.4s, v24.s[3]\n\t"
            "umlal2 v29.2d, v4.4s, v16.s[3]\n\t"
            "usra v26.2d, v25.2d, #26\n\t"
            "and v25.16b, v25.16b, v15.16b\n\t"
            "usra v29.2d, v28.2d, #26\n\t"
            "and v28.16b, v28.16b, v15.16b\n\t"
            "usra v27.2d, v26.2d, #26\n\t"
            "and v26.16b, v26.16b, v15.16b\n\t"
            "ushr v5.2d, v29.2d, #26\n\t"
            "and v29.16b, v29.16b, v15.16b\n\t"
            "add v25.2d, v25.2d, v5.2d\n\t"
            "shl v5.2d, v5.2d, #2\n\t"
            "add v25.2d, v25.2d, v5.2d\n\t"
            "usra v28.2d, v27.2d, #26\n\t"
            "and v27.16b, v27.16b, v15.16b\n\t"
            "usra v26.2d, v25.2d, #26\n\t"
            "and v25.16b, v25.16b, v15.16b\n\t"
            "usra v29.2d, v28.2d, #26\n\t"
            "and v28.16b, v28.16b, v15.16b\n\t"
            "subs %[n], %[n], #1\n\t"
            "b.ne 1b"
            : [in] "+r"(in), [n] "+r"(n), "+w"(h0), "+w"(h1), "+w"(h2), "+w"(h3), "+w"(h4)
            : "w"(t0), "w"(t1), "w"(t2), "w"(t3), "w"(t4), "w"(t5), "w"(t6), "w"(t7), "w"(t8),
              "w"(mask), "w"(padv), "w"(mask64)
            : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",
              "v10", "v11", "v12", "v13");
        d[0] = h0; d[1] = h1; d[2] = h2; d[3] = h3; d[4] = h4;
    }

    /* Last group: lane 0 takes r^8, r^6, r^4, r^2, lane 1 r^7, r^5, r^3, r^1. */
    {
        uint32x4_t hi[9], lo[9];
        uint32x2_t y[5];

        load_rows(hi, tab + offsetof(neon_powers, last_hi));
        load_rows(lo, tab + offsetof(neon_powers, last_lo));
        load4(in, pad, ma);
        load4(in + 64, pad, mb);
        _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
            x[i] = vadd_u32(vmovn_u64(d[i]), vget_low_u32(ma[i]));
        MUL_LO_V(d, x, hi, 1);
        MUL_HI_V(d, ma, hi);
        _Pragma("GCC unroll 5") for (int i = 0; i < 5; i++)
            y[i] = vget_low_u32(mb[i]);
        MUL_LO_V(d, y, lo, 0);
        MUL_HI_V(d, mb, lo);
        reduce(d);
    }

    /* Sum the lanes (each limb below 2^26 + 2^10.3) and return to radix 2^64: below
     * 2^131.1, folded back to h2 <= 4. */
    uint64_t a0 = vaddvq_u64(d[0]), a1 = vaddvq_u64(d[1]), a2 = vaddvq_u64(d[2]),
             a3 = vaddvq_u64(d[3]), a4 = vaddvq_u64(d[4]);
    p64_u128 v = (p64_u128)a0 + ((p64_u128)a1 << 26) + ((p64_u128)a2 << 52);
    h[0] = (uint64_t)v;
    v = (v >> 64) + ((p64_u128)a3 << 14) + ((p64_u128)a4 << 40);
    h[1] = (uint64_t)v;
    h[2] = (uint64_t)(v >> 64);
    p64_fold(h);
}

static void poly1305_neon_init(poly1305_state *st, const uint8_t key[32])
{
    p64_init(st, key);
}

static void poly1305_neon_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                 uint32_t padbit)
{
    size_t nb = len / 16;
    uint64_t ready = a64_get(st, offsetof(p64_head, powers));

    if (nb >= (ready ? VEC_MIN_BLOCKS : VEC_MIN_BLOCKS_COLD)) {
        uint64_t h[3] = {a64_get(st, A64_H(0)), a64_get(st, A64_H(1)), a64_get(st, A64_H(2))};

        if (!ready)
            compute_powers(st);
        vec_blocks(st, h, in, nb / 8, padbit);
        a64_put(st, A64_H(0), h[0]);
        a64_put(st, A64_H(1), h[1]);
        a64_put(st, A64_H(2), h[2]);
        in += 128 * (nb / 8);
        nb %= 8;
    }
    if (nb > 0)
        a64_blocks_call(st, in, nb, padbit);
}

static void poly1305_neon_finish(poly1305_state *st, uint8_t tag[16])
{
    a64_finish(st, tag);
}

static size_t poly1305_neon_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(neon_powers));
}

const poly1305_kernel archcrypt_poly1305_neon = {
    .init = poly1305_neon_init,
    .blocks = poly1305_neon_blocks,
    .finish = poly1305_neon_finish,
    .used = poly1305_neon_used,
};
