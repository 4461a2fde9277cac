/* Camellia ECB, ARMv8 crypto extensions: 16 blocks byte-sliced into 16 vectors, and 1-8 blocks as 32-bit words (ld4), S-boxes as aese/aesd between nibble-table affine maps (ushr, and, tbl), the round subkey in the AES instruction's key operand (RFC 3713 2.3-2.4). */
#if !defined(__aarch64__) || !defined(__ARM_FEATURE_AES) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "camellia/armv8_crypto.c needs little-endian -march=armv8-a+crypto (ISA_FLAGS_armv8_crypto in native/Makefile)"
#endif

#include <arm_neon.h>

#include "common.h"
#include "camellia/byteslice_tables.h"
#include "camellia/camellia.h"

/*
 * The layout and the S-box construction are x86_byteslice.h's, in 16-byte vectors: vector
 * j of a state holds byte j (0 the RFC's first, most significant) of each of 16 blocks,
 * D1 = bytes 0..7, D2 = bytes 8..15; s1 = post(SubBytes(pre(x))) with both affine maps as
 * two tbl lookups on the nibbles (ushr by 4 needs no mask: AArch64 shifts bytes). D2 stays
 * in ShiftRows order throughout, so an F on D1 goes through aese (ShiftRows, SubBytes) and
 * lands in D2's order, and an F on D2 goes through aesd (InvShiftRows, InvSubBytes) and
 * lands back in block order; the D maps make aesd's inverse S-box yield s1 (see
 * byteslice_tables.h). FL and FL^-1 use broadcast subkey bytes and ignore block order.
 *
 * Where x86 folds the subkey into its pre-map tables (aesenclast adds its round key after
 * SubBytes), aese and aesd add theirs first: pre(x ^ k) = pre(x) ^ L(k), L the linear part
 * of pre, so the AES instruction's key operand is L(k) broadcast and the key XOR is free.
 * The key table holds those bytes (and the FL and whitening bytes), built with tbl once
 * per key into the key object's cache, or per call when there is none.
 *
 * Messages and tails of 1-8 blocks run as one or two groups of 4 blocks in 32-bit word
 * vectors (words4, words8, below), whose cost follows the number of blocks; longer tails
 * run as one batch whose missing blocks are zeros that are never stored.
 *
 * Constant time: tbl and the AES instructions are register operations; no memory access
 * depends on data or key, no branch on anything but the block count and the key length.
 * The key table built per call is wiped before returning.
 */

enum {
    /* per direction, in runs that tbl takes as table lists (the word path, below): pre lo
     * {s1-s3's, s4's}, pre hi, post lo {s1's and s4's, s2's, s3's}, post hi */
    C_PRE1_E_LO, C_PRE4_E_LO, C_PRE1_E_HI, C_PRE4_E_HI,
    C_POST1_E_LO, C_POST2_E_LO, C_POST3_E_LO, C_POST1_E_HI, C_POST2_E_HI, C_POST3_E_HI,
    C_PRE1_D_LO, C_PRE4_D_LO, C_PRE1_D_HI, C_PRE4_D_HI,
    C_POST1_D_LO, C_POST2_D_LO, C_POST3_D_LO, C_POST1_D_HI, C_POST2_D_HI, C_POST3_D_HI,
    C_SHIFTROWS, C_INV_SHIFTROWS,
    /* the word path's: 16 x the table of each row, pre and post, for zl and zr; rho_1 in
     * block order, rho_1 and rho_2 in ShiftRows order (rho_2 in block order is rev32 on
     * halfwords). In block order byte 4c + r takes 4c + (r + k) % 4, in ShiftRows order
     * 4((c - k) % 4) + (r + k) % 4. */
    C_PRE_OFF_L, C_PRE_OFF_R, C_POST_OFF_L, C_POST_OFF_R,
    C_RHO1, C_RHO1_SR, C_RHO2_SR,
    C_COUNT
};

/* The D entries are the E ones' counterparts at a fixed distance. */
#define C_D (C_PRE1_D_LO - C_PRE1_E_LO)
#define ROWS4(a, b, c, d) a, b, c, d, a, b, c, d, a, b, c, d, a, b, c, d

static const uint8_t consts[C_COUNT][16] __attribute__((aligned(16))) = {
    [C_PRE1_E_LO] = {CAMELLIA_PRE1_E_LO},   [C_PRE4_E_LO] = {CAMELLIA_PRE4_E_LO},
    [C_PRE1_E_HI] = {CAMELLIA_PRE1_E_HI},   [C_PRE4_E_HI] = {CAMELLIA_PRE4_E_HI},
    [C_POST1_E_LO] = {CAMELLIA_POST1_E_LO}, [C_POST2_E_LO] = {CAMELLIA_POST2_E_LO},
    [C_POST3_E_LO] = {CAMELLIA_POST3_E_LO}, [C_POST1_E_HI] = {CAMELLIA_POST1_E_HI},
    [C_POST2_E_HI] = {CAMELLIA_POST2_E_HI}, [C_POST3_E_HI] = {CAMELLIA_POST3_E_HI},
    [C_PRE1_D_LO] = {CAMELLIA_PRE1_D_LO},   [C_PRE4_D_LO] = {CAMELLIA_PRE4_D_LO},
    [C_PRE1_D_HI] = {CAMELLIA_PRE1_D_HI},   [C_PRE4_D_HI] = {CAMELLIA_PRE4_D_HI},
    [C_POST1_D_LO] = {CAMELLIA_POST1_D_LO}, [C_POST2_D_LO] = {CAMELLIA_POST2_D_LO},
    [C_POST3_D_LO] = {CAMELLIA_POST3_D_LO}, [C_POST1_D_HI] = {CAMELLIA_POST1_D_HI},
    [C_POST2_D_HI] = {CAMELLIA_POST2_D_HI}, [C_POST3_D_HI] = {CAMELLIA_POST3_D_HI},
    /* out[i] = in[sr[i]]: where ShiftRows takes byte i from, and the inverse */
    [C_SHIFTROWS] = {0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11},
    [C_INV_SHIFTROWS] = {0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3},
    /* zl: s1 s2 s3 s4, zr: s2 s3 s4 s1 */
    [C_PRE_OFF_L] = {ROWS4(0, 0, 0, 16)},   [C_PRE_OFF_R] = {ROWS4(0, 0, 16, 0)},
    [C_POST_OFF_L] = {ROWS4(0, 16, 32, 0)}, [C_POST_OFF_R] = {ROWS4(16, 32, 0, 0)},
    [C_RHO1] = {1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12},
    [C_RHO1_SR] = {13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8},
    [C_RHO2_SR] = {10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5},
};

#undef ROWS4

/*
 * Key table, one direction, in the order that direction uses it, each subkey byte once
 * (the 16-block path broadcasts them with ld4r as it goes; the 1-4 block path replicates
 * them as 32-bit words with ld2r/ld4r), as 32-bit words in memory order so that both
 * loads read them through their own type:
 *   rk[r]     round r, bytes 0..7: L(subkey byte j), the aese/aesd key operand (the pre
 *             map's linear part: bytes 3 and 6 go through s4's, even rounds the E maps,
 *             odd rounds the D maps)
 *   fl[l]     FL layer l: bytes 0..7 of the FL subkey, then 0..7 of the FL^-1 one
 *   kw        bytes of kw_pre (D1, then D2), then of kw_post (D2, then D1)
 */
typedef struct {
    uint32_t rk[24][2];
    uint32_t fl[3][4];
    uint32_t kw[8];
    unsigned rounds; /* 18 or 24 */
} a64_keys;

_Static_assert(2 * sizeof(a64_keys) <= CAMELLIA_CACHE_BYTES, "camellia cache too small");
_Static_assert(CAMELLIA_CACHE_ALIGN % _Alignof(a64_keys) == 0, "camellia cache misaligned");

AC_INLINE uint8x16_t cload(unsigned idx)
{
    return vld1q_u8(consts[idx]);
}

/* The 8 bytes of a subkey in RFC order (lane 0 the most significant). */
AC_INLINE uint8x8_t key_bytes(uint64_t k)
{
    return vrev64_u8(vcreate_u8(k));
}

/* L(b) = pre(b) ^ pre(0) on each byte: the pre map's linear part. */
AC_INLINE uint8x8_t pre_linear(uint8x8_t b, unsigned hi_idx, unsigned lo_idx)
{
    const uint8x16_t hi = cload(hi_idx), lo = cload(lo_idx);

    return veor_u8(veor_u8(vqtbl1_u8(lo, vand_u8(b, vdup_n_u8(0x0f))), vqtbl1_u8(hi, vshr_n_u8(b, 4))),
                   vdup_laneq_u8(hi, 0));
}

AC_INLINE void put8(uint32_t *dst, uint8x8_t v)
{
    vst1_u32(dst, vreinterpret_u32_u8(v));
}

static void build_keys(a64_keys *kt, const camellia_subkeys *ks, int decrypt)
{
    const unsigned nk = ac_camellia_rounds(ks);
    const uint64_t *kw_pre = ac_camellia_kw(ks, decrypt, 0);
    const uint64_t *kw_post = ac_camellia_kw(ks, decrypt, 1);
#define K(i) ac_camellia_k(ks, decrypt, (i))
#define KE(i) ac_camellia_ke(ks, decrypt, (i))

    kt->rounds = nk;
    for (unsigned r = 0; r < nk; r++) {
        const unsigned d = (r & 1) ? C_D : 0;
        const uint8x8_t kb = key_bytes(K(r + 1));
        const uint8x8_t l1 = pre_linear(kb, C_PRE1_E_HI + d, C_PRE1_E_LO + d),
                        l4 = pre_linear(kb, C_PRE4_E_HI + d, C_PRE4_E_LO + d);
        /* bytes 3 and 6 from s4's map: lanes 3 and 6 of l4, the others of l1 */
        const uint8x8_t sel = vcreate_u8(0x00ff0000ff000000u);

        put8(kt->rk[r], vbsl_u8(sel, l4, l1));
    }
    for (unsigned l = 0; l + 1 < nk / 6; l++) {
        put8(kt->fl[l], key_bytes(KE(2 * l + 1)));
        put8(kt->fl[l] + 2, key_bytes(KE(2 * l + 2)));
    }
    put8(kt->kw, key_bytes(kw_pre[0]));
    put8(kt->kw + 2, key_bytes(kw_pre[1]));
    put8(kt->kw + 4, key_bytes(kw_post[0]));
    put8(kt->kw + 6, key_bytes(kw_post[1]));
#undef K
#undef KE
}

/* Zero the parts of a key table this key used, with stores the compiler cannot drop. */
static void wipe_keys(a64_keys *kt)
{
    ac_wipe_words(kt->rk, sizeof kt->rk[0] * kt->rounds);
    ac_wipe_words(kt->fl, sizeof kt->fl[0] * (kt->rounds / 6 - 1));
    ac_wipe_words(kt->kw, sizeof kt->kw);
}

/* Eight broadcast vectors from the next 8 key bytes at *p, which moves past them: two ld4r
 * with post-increment (the intrinsic takes its address in a register of its own each time:
 * an add per ld4r, 1% of a batch). */
AC_INLINE void bcast8_next(uint8x16_t dst[8], const uint32_t **p)
{
    const uint8_t *q = (const uint8_t *)*p;
    uint8x16x4_t a, b;

    __asm__("ld4r {%S0.16b - %V0.16b}, [%2], #4\n\t"
            "ld4r {%S1.16b - %V1.16b}, [%2], #4"
            : "=w"(a), "=w"(b), "+r"(q)
            : "m"(*(const uint8_t(*)[8])q));
    *p = (const uint32_t *)(const void *)q;
    dst[0] = a.val[0]; dst[1] = a.val[1]; dst[2] = a.val[2]; dst[3] = a.val[3];
    dst[4] = b.val[0]; dst[5] = b.val[1]; dst[6] = b.val[2]; dst[7] = b.val[3];
}

/* Eight broadcast vectors from the 8 bytes at p (ld4r twice). */
AC_INLINE void bcast8(uint8x16_t dst[8], const uint32_t *p)
{
    const uint8x16x4_t a = vld4q_dup_u8((const uint8_t *)p);
    const uint8x16x4_t b = vld4q_dup_u8((const uint8_t *)p + 4);

    dst[0] = a.val[0]; dst[1] = a.val[1]; dst[2] = a.val[2]; dst[3] = a.val[3];
    dst[4] = b.val[0]; dst[5] = b.val[1]; dst[6] = b.val[2]; dst[7] = b.val[3];
}

/* An affine map of every byte: lo[x & 15] ^ hi[x >> 4]. */
AC_INLINE uint8x16_t affine(uint8x16_t x, uint8x16_t hi, uint8x16_t lo)
{
    return veorq_u8(vqtbl1q_u8(lo, vandq_u8(x, vdupq_n_u8(0x0f))), vqtbl1q_u8(hi, vshrq_n_u8(x, 4)));
}

/*
 * d ^= F(s, k) on byte-sliced halves (section 2.4.1). Bytes 1..8 of F use s1 s2 s3 s4 s2
 * s3 s4 s1; dec picks aesd and the D maps (the source is D2). The P-function is 16 XORs
 * after which t0..t3 hold y5..y8 and t4..t7 y1..y4.
 */
AC_INLINE void round_(const uint8x16_t *s, uint8x16_t *d, const uint32_t **key,
                      const uint8_t (*c)[16], int dec)
{
    const unsigned o = dec ? C_D : 0;
    uint8x16_t rk[8];

    bcast8_next(rk, key);
#define CL(i) vld1q_u8(c[(i) + o])
    /* The tables come in afresh each round, as ldp from a register: with 16 state
     * vectors live, gcc hoisted them out of the round loop and then spilled and
     * re-addressed them (adrp + ldr each, ~75 instructions a round). */
    __asm__("" : "+r"(c));
    const uint8x16_t p1h = CL(C_PRE1_E_HI), p1l = CL(C_PRE1_E_LO);
    const uint8x16_t p4h = CL(C_PRE4_E_HI), p4l = CL(C_PRE4_E_LO);
    const uint8x16_t q1h = CL(C_POST1_E_HI), q1l = CL(C_POST1_E_LO);
    const uint8x16_t q2h = CL(C_POST2_E_HI), q2l = CL(C_POST2_E_LO);
    const uint8x16_t q3h = CL(C_POST3_E_HI), q3l = CL(C_POST3_E_LO);
#undef CL
#define SBOX(x, k, ph, pl, qh, ql) \
    affine(dec ? vaesdq_u8(affine((x), ph, pl), (k)) : vaeseq_u8(affine((x), ph, pl), (k)), qh, ql)
    uint8x16_t t0 = SBOX(s[0], rk[0], p1h, p1l, q1h, q1l);
    uint8x16_t t1 = SBOX(s[1], rk[1], p1h, p1l, q2h, q2l);
    uint8x16_t t2 = SBOX(s[2], rk[2], p1h, p1l, q3h, q3l);
    uint8x16_t t3 = SBOX(s[3], rk[3], p4h, p4l, q1h, q1l);
    uint8x16_t t4 = SBOX(s[4], rk[4], p1h, p1l, q2h, q2l);
    uint8x16_t t5 = SBOX(s[5], rk[5], p1h, p1l, q3h, q3l);
    uint8x16_t t6 = SBOX(s[6], rk[6], p4h, p4l, q1h, q1l);
    uint8x16_t t7 = SBOX(s[7], rk[7], p1h, p1l, q1h, q1l);
#undef SBOX

    t0 = veorq_u8(t0, t5); t1 = veorq_u8(t1, t6); t2 = veorq_u8(t2, t7); t3 = veorq_u8(t3, t4);
    t4 = veorq_u8(t4, t2); t5 = veorq_u8(t5, t3); t6 = veorq_u8(t6, t0); t7 = veorq_u8(t7, t1);
    t0 = veorq_u8(t0, t7); t1 = veorq_u8(t1, t4); t2 = veorq_u8(t2, t5); t3 = veorq_u8(t3, t6);
    t4 = veorq_u8(t4, t3); t5 = veorq_u8(t5, t0); t6 = veorq_u8(t6, t1); t7 = veorq_u8(t7, t2);
    d[0] = veorq_u8(d[0], t4); d[1] = veorq_u8(d[1], t5);
    d[2] = veorq_u8(d[2], t6); d[3] = veorq_u8(d[3], t7);
    d[4] = veorq_u8(d[4], t0); d[5] = veorq_u8(d[5], t1);
    d[6] = veorq_u8(d[6], t2); d[7] = veorq_u8(d[7], t3);
}

/* (a <<< 1) over the 32-bit word a0..a3 (a0 most significant), byte by byte: a << 1 with
 * the top bit of the next byte b inserted (sri). */
#define ROTL1(a, b) vsriq_n_u8(vshlq_n_u8((a), 1), (b), 7)

/* Section 2.4.2 on a byte-sliced half h[0..7]: kl = KE >> 32 in k[0..3], kr in k[4..7].
 * FL: x2 ^= (x1 & kl) <<< 1, then x1 ^= x2 | kr. FL^-1: the same two steps in the other
 * order. */
AC_INLINE void fl_left(uint8x16_t *h, const uint8x16_t *k)
{
    const uint8x16_t a0 = vandq_u8(h[0], k[0]), a1 = vandq_u8(h[1], k[1]);
    const uint8x16_t a2 = vandq_u8(h[2], k[2]), a3 = vandq_u8(h[3], k[3]);

    h[4] = veorq_u8(h[4], ROTL1(a0, a1));
    h[5] = veorq_u8(h[5], ROTL1(a1, a2));
    h[6] = veorq_u8(h[6], ROTL1(a2, a3));
    h[7] = veorq_u8(h[7], ROTL1(a3, a0));
}

AC_INLINE void fl_right(uint8x16_t *h, const uint8x16_t *k)
{
    for (int j = 0; j < 4; j++)
        h[j] = veorq_u8(h[j], vorrq_u8(h[4 + j], k[4 + j]));
}

#undef ROTL1

/* 16x16 byte transpose: four rounds of "vector k with vector k + 8, interleaved low and
 * high" into vectors 2k and 2k + 1 (zip1, zip2). Each round rotates the 8-bit address
 * (vector : byte) left by one bit, so four swap its nibbles. Self-inverse. */
AC_INLINE void transpose(uint8x16_t *x)
{
#pragma GCC unroll 4
    for (int round = 0; round < 4; round++) {
        uint8x16_t y[16];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            y[2 * k] = vzip1q_u8(x[k], x[k + 8]);
            y[2 * k + 1] = vzip2q_u8(x[k], x[k + 8]);
        }
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
            x[k] = y[k];
    }
}

/*
 * nblocks (1..16) blocks from in to out (out == in allowed: all are loaded before any is
 * stored). Missing blocks enter as zeros and are never stored.
 */
AC_INLINE void batch(const a64_keys *kt, uint8_t *out, const uint8_t *in, size_t nblocks)
{
    uint8x16_t st[16];

#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        st[r] = (size_t)r < nblocks ? vld1q_u8(in + 16 * r) : vdupq_n_u8(0);
    transpose(st); /* st[j]: byte j of every block; D1 = st[0..7], D2 = st[8..15] */
    {
        const uint8x16_t sr = cload(C_SHIFTROWS);
        uint8x16_t kw[16];

        bcast8(kw, kt->kw);
        bcast8(kw + 8, kt->kw + 2);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            st[j] = veorq_u8(st[j], kw[j]);
            st[j + 8] = veorq_u8(vqtbl1q_u8(st[j + 8], sr), kw[j + 8]);
        }
    }
    const uint32_t *key = kt->rk[0];

    for (unsigned r = 0; r < kt->rounds; r += 6) {
        if (r > 0) {
            uint8x16_t fl[16];

            bcast8(fl, kt->fl[r / 6 - 1]);
            bcast8(fl + 8, kt->fl[r / 6 - 1] + 2);

            fl_left(st, fl);
            fl_right(st, fl);
            fl_right(st + 8, fl + 8);
            fl_left(st + 8, fl + 8);
        }
        for (unsigned q = r; q < r + 6; q += 2) {
            round_(st, st + 8, &key, consts, 0);
            round_(st + 8, st, &key, consts, 1);
        }
    }
    {
        const uint8x16_t isr = cload(C_INV_SHIFTROWS);
        uint8x16_t y[16], kw[16];

        bcast8(kw, kt->kw + 4);
        bcast8(kw + 8, kt->kw + 6);
        /* Postwhitening, D2 back into block order, and out as D2 || D1. */
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            y[j] = vqtbl1q_u8(veorq_u8(st[j + 8], kw[j]), isr);
            y[j + 8] = veorq_u8(st[j], kw[8 + j]);
        }
        transpose(y);
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++)
            if ((size_t)r < nblocks)
                vst1q_u8(out + 16 * r, y[r]);
    }
}

/*
 * The 1-8 block path. A byte-sliced batch costs the same ~3,100 instructions for one block
 * as for sixteen; here the instruction count follows the work. The blocks sit in word
 * vectors, as ld4 of 32-bit elements leaves them: vector w holds word w (bytes 4w..4w+3)
 * of blocks 0..3, one block per 32-bit lane ("column"), its bytes in rows 0..3 in memory
 * order. D1 = vectors 0-1, D2 = vectors 2-3. 5-8 blocks are a second group of four beside
 * the first, sharing its table loads.
 *
 * S-boxes: which of s1..s4 a byte goes through depends only on its row and vector (bytes
 * 1..8 of F use s1 s2 s3 s4 s2 s3 s4 s1), so each affine map is a tbl over two (pre: s4's
 * or the others') or three (post: s1/s4's, s2's, s3's) tables at once, indexed by the
 * nibble plus 16 times the byte's table (a constant per row). The key is aese/aesd's
 * operand, as in the batch, replicated per column from the same key table.
 *
 * Order: ShiftRows moves row r of a 16-byte vector r columns, that is, across blocks. As in
 * the batch, D1 stays in block order and D2 in ShiftRows order ("row r of column c holds
 * block c + r"), F on D1 goes through aese and lands in D2's order, F on D2 through aesd
 * (the D maps) and lands in D1's. What moves bytes between rows (P, FL's rotation) is a tbl
 * built for the order its operand is in.
 *
 * P (section 2.4.1) on the words zl = z1..z4 and zr = z5..z8, rho_k(x) row r = x row r + k
 * (the word rotated by 8k bits towards its most significant byte):
 *   zl ^= rho_2(zr); zr ^= zl; zl ^= rho_1(zr); zr ^= rho_2(zl); then y1..y4 = zr and
 *   y5..y8 = zl
 * (found by searching the four-step programs of that shape; checked against portable by the
 * self-test). FL's rotation by one bit: (t << 1) | (rho_1(t) >> 7) on every byte.
 *
 * Per round and group of four blocks, 39 instructions (the S-boxes 2 x 15, P 7, the xor
 * into the other half 2) against the batch's ~170 for sixteen: 1,100 instructions for a
 * 4-block message where the batch took 3,200, 1,900 for 8 blocks.
 */

/* One word vector through its S-boxes: pre map, aese/aesd with key k, post map; poff and
 * qoff pick each row's tables. */
AC_INLINE uint8x16_t sbox_rows(uint8x16_t x, uint8x16_t k, const uint8x16x2_t pl,
                               const uint8x16x2_t ph, const uint8x16x3_t ql,
                               const uint8x16x3_t qh, uint8x16_t poff, uint8x16_t qoff, int dec)
{
    const uint8x16_t m = vdupq_n_u8(0x0f);
    uint8x16_t p = veorq_u8(vqtbl2q_u8(pl, vorrq_u8(vandq_u8(x, m), poff)),
                            vqtbl2q_u8(ph, vorrq_u8(vshrq_n_u8(x, 4), poff)));

    p = dec ? vaesdq_u8(p, k) : vaeseq_u8(p, k);
    return veorq_u8(vqtbl3q_u8(ql, vorrq_u8(vandq_u8(p, m), qoff)),
                    vqtbl3q_u8(qh, vorrq_u8(vshrq_n_u8(p, 4), qoff)));
}

/* P, then d ^= y, on the S-box outputs zl, zr of one group; rho1 and rho2 for their order
 * (rho2 == NULL: block order, where it is rev32 on halfwords). */
AC_INLINE void p_xor(uint8x16_t zl, uint8x16_t zr, uint8x16_t *d, uint8x16_t rho1,
                     const uint8x16_t *rho2)
{
#define RHO2(x) (rho2 ? vqtbl1q_u8((x), *rho2) \
                      : vreinterpretq_u8_u16(vrev32q_u16(vreinterpretq_u16_u8(x))))
    zl = veorq_u8(zl, RHO2(zr));
    zr = veorq_u8(zr, zl);
    zl = veorq_u8(zl, vqtbl1q_u8(zr, rho1));
    zr = veorq_u8(zr, RHO2(zl));
#undef RHO2
    d[0] = veorq_u8(d[0], zr);
    d[1] = veorq_u8(d[1], zl);
}

/* One round on each of `groups` states: d ^= F(s) on word vectors (st[g] + from: s[0] =
 * bytes 0..3 of the half, s[1] = 4..7; st[g] + to: d), round key at *key (moved past it).
 * dec: F on D2 (aesd, the D maps, output in block order); else F on D1 (aese, output in
 * ShiftRows order). The tables are loaded once for both groups. */
AC_INLINE void round_words(uint8x16_t (*st)[4], int groups, unsigned from, unsigned to,
                           const uint32_t **key, int dec)
{
    const uint8_t(*c)[16] = consts + (dec ? C_D : 0);
    const uint32x4x2_t k = vld2q_dup_u32(*key);
    const uint8x16x2_t pl = vld1q_u8_x2(c[C_PRE1_E_LO]), ph = vld1q_u8_x2(c[C_PRE1_E_HI]);
    const uint8x16x3_t ql = vld1q_u8_x3(c[C_POST1_E_LO]), qh = vld1q_u8_x3(c[C_POST1_E_HI]);
    const uint8x16_t rho2_sr = cload(C_RHO2_SR);

    *key += 2;
#pragma GCC unroll 2
    for (int g = 0; g < groups; g++) {
        const uint8x16_t zl = sbox_rows(st[g][from], vreinterpretq_u8_u32(k.val[0]), pl, ph, ql, qh,
                                        cload(C_PRE_OFF_L), cload(C_POST_OFF_L), dec);
        const uint8x16_t zr = sbox_rows(st[g][from + 1], vreinterpretq_u8_u32(k.val[1]), pl, ph, ql,
                                        qh, cload(C_PRE_OFF_R), cload(C_POST_OFF_R), dec);

        if (dec)
            p_xor(zl, zr, st[g] + to, cload(C_RHO1), NULL);
        else
            p_xor(zl, zr, st[g] + to, cload(C_RHO1_SR), &rho2_sr);
    }
}

/* Section 2.4.2 on word vectors h[0] (the left 32 bits) and h[1], subkey words kl, kr
 * replicated; rho1 for the order h is in. */
AC_INLINE uint8x16_t rotl1_words(uint8x16_t t, uint8x16_t rho1)
{
    return vsriq_n_u8(vshlq_n_u8(t, 1), vqtbl1q_u8(t, rho1), 7);
}

AC_INLINE void fl4(uint8x16_t *h, uint8x16_t kl, uint8x16_t kr, uint8x16_t rho1)
{
    h[1] = veorq_u8(h[1], rotl1_words(vandq_u8(h[0], kl), rho1));
    h[0] = veorq_u8(h[0], vorrq_u8(h[1], kr));
}

AC_INLINE void fl4_inv(uint8x16_t *h, uint8x16_t kl, uint8x16_t kr, uint8x16_t rho1)
{
    h[0] = veorq_u8(h[0], vorrq_u8(h[1], kr));
    h[1] = veorq_u8(h[1], rotl1_words(vandq_u8(h[0], kl), rho1));
}

#define U8(v) vreinterpretq_u8_u32(v)
#define U32(v) vreinterpretq_u32_u8(v)

/* n (1..4) blocks at in as word vectors, prewhitened, D2 in ShiftRows order; missing
 * blocks are zeros. */
AC_INLINE void load_words(uint8x16_t st[4], const a64_keys *kt, const uint8_t *in, size_t n)
{
    const uint32x4x4_t kw = vld4q_dup_u32(kt->kw);
    const uint8x16_t sr = cload(C_SHIFTROWS);
    uint32x4x4_t w;

    if (n >= 4) {
        w = vld4q_u32((const uint32_t *)(const void *)in);
    } else {
        w.val[0] = w.val[1] = w.val[2] = w.val[3] = vdupq_n_u32(0);
        w = vld4q_lane_u32((const uint32_t *)(const void *)in, w, 0);
        if (n > 1)
            w = vld4q_lane_u32((const uint32_t *)(const void *)(in + 16), w, 1);
        if (n > 2)
            w = vld4q_lane_u32((const uint32_t *)(const void *)(in + 32), w, 2);
    }
    st[0] = U8(veorq_u32(w.val[0], kw.val[0]));
    st[1] = U8(veorq_u32(w.val[1], kw.val[1]));
    st[2] = vqtbl1q_u8(U8(veorq_u32(w.val[2], kw.val[2])), sr);
    st[3] = vqtbl1q_u8(U8(veorq_u32(w.val[3], kw.val[3])), sr);
}

/* Postwhitening, D2 back into block order, and n (1..4) blocks out as D2 || D1. */
AC_INLINE void store_words(uint8_t *out, const a64_keys *kt, const uint8x16_t st[4], size_t n)
{
    const uint32x4x4_t kw = vld4q_dup_u32(kt->kw + 4);
    const uint8x16_t isr = cload(C_INV_SHIFTROWS);
    uint32x4x4_t w;

    w.val[0] = U32(vqtbl1q_u8(veorq_u8(st[2], U8(kw.val[0])), isr));
    w.val[1] = U32(vqtbl1q_u8(veorq_u8(st[3], U8(kw.val[1])), isr));
    w.val[2] = veorq_u32(U32(st[0]), kw.val[2]);
    w.val[3] = veorq_u32(U32(st[1]), kw.val[3]);
    if (n >= 4) {
        vst4q_u32((uint32_t *)(void *)out, w);
    } else {
        vst4q_lane_u32((uint32_t *)(void *)out, w, 0);
        if (n > 1)
            vst4q_lane_u32((uint32_t *)(void *)(out + 16), w, 1);
        if (n > 2)
            vst4q_lane_u32((uint32_t *)(void *)(out + 32), w, 2);
    }
}

#undef U8
#undef U32

/* nblocks blocks (1..4 for one group, 5..8 for two) from in to out (out == in allowed: all
 * are loaded before any is stored). The second group's rounds are independent of the
 * first's, there for a core to overlap: one group's round is a chain of ~17 dependent
 * instructions. */
AC_INLINE void words(const a64_keys *kt, uint8_t *out, const uint8_t *in, size_t nblocks,
                     int groups)
{
    const uint32_t *key = kt->rk[0];
    uint8x16_t st[2][4];

    load_words(st[0], kt, in, groups == 1 ? nblocks : 4);
    if (groups == 2)
        load_words(st[1], kt, in + 64, nblocks - 4);
    for (unsigned r = 0; r < kt->rounds; r += 6) {
        if (r > 0) {
            const uint32x4x4_t f = vld4q_dup_u32(kt->fl[r / 6 - 1]);

#pragma GCC unroll 2
            for (int g = 0; g < groups; g++) {
                fl4(st[g], vreinterpretq_u8_u32(f.val[0]), vreinterpretq_u8_u32(f.val[1]),
                    cload(C_RHO1));
                fl4_inv(st[g] + 2, vreinterpretq_u8_u32(f.val[2]), vreinterpretq_u8_u32(f.val[3]),
                        cload(C_RHO1_SR));
            }
        }
        for (unsigned q = r; q < r + 6; q += 2) {
            round_words(st, groups, 0, 2, &key, 0);
            round_words(st, groups, 2, 0, &key, 1);
        }
    }
    store_words(out, kt, st[0], groups == 1 ? nblocks : 4);
    if (groups == 2)
        store_words(out + 64, kt, st[1], nblocks - 4);
}

static __attribute__((noinline)) void words4(const a64_keys *kt, uint8_t *out, const uint8_t *in,
                                             size_t nblocks)
{
    words(kt, out, in, nblocks, 1);
}

static __attribute__((noinline)) void words8(const a64_keys *kt, uint8_t *out, const uint8_t *in,
                                             size_t nblocks)
{
    words(kt, out, in, nblocks, 2);
}

/* One copy for whole batches, one for the tail (whose loads and stores test nblocks). */
static __attribute__((noinline)) void batch16(const a64_keys *kt, uint8_t *out, const uint8_t *in)
{
    batch(kt, out, in, 16);
}

static __attribute__((noinline)) void batch_tail(const a64_keys *kt, uint8_t *out,
                                                 const uint8_t *in, size_t nblocks)
{
    batch(kt, out, in, nblocks);
}

static void prepare(const camellia_subkeys *ks, void *cache)
{
    a64_keys *kt = (a64_keys *)cache;

    build_keys(&kt[0], ks, 0);
    build_keys(&kt[1], ks, 1);
}

static void run(const camellia_subkeys *ks, const void *cache, int decrypt, uint8_t *out,
                const uint8_t *in, size_t nblocks)
{
    a64_keys local;
    const a64_keys *kt;

    if (nblocks == 0)
        return;
    if (cache != NULL) {
        kt = (const a64_keys *)cache + decrypt;
    } else {
        build_keys(&local, ks, decrypt);
        kt = &local;
    }
    for (; nblocks >= 16; nblocks -= 16, in += 256, out += 256)
        batch16(kt, out, in);
    /* 9-15 blocks as one batch: word passes would execute fewer instructions (2,900
     * against 3,250 per call at 9-12 blocks, under qemu), but a group's round is one chain
     * of dependent steps, where the batch gives a core 16 independent vectors at each. */
    if (nblocks > 8)
        batch_tail(kt, out, in, nblocks);
    else if (nblocks > 4)
        words8(kt, out, in, nblocks);
    else if (nblocks > 0)
        words4(kt, out, in, nblocks);
    if (cache == NULL)
        wipe_keys(&local);
}

static void camellia_armv8_crypto_encrypt(const camellia_subkeys *ks, const void *cache,
                                          uint8_t *out, const uint8_t *in, size_t nblocks)
{
    run(ks, cache, 0, out, in, nblocks);
}

static void camellia_armv8_crypto_decrypt(const camellia_subkeys *ks, const void *cache,
                                          uint8_t *out, const uint8_t *in, size_t nblocks)
{
    run(ks, cache, 1, out, in, nblocks);
}

const camellia_kernel archcrypt_camellia_armv8_crypto = {
    .encrypt = camellia_armv8_crypto_encrypt,
    .decrypt = camellia_armv8_crypto_decrypt,
    .prepare = prepare,
};
