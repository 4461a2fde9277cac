/* Camellia ECB, ARMv8 crypto extensions: 16 blocks byte-sliced into 16 vectors, S-boxes as aese/aesd between nibble-table affine maps (ushr, and, tbl), the round subkey in the AES instruction's key operand, FL/FL^-1 byte-sliced (RFC 3713 2.3-2.4). */
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
 * The key table holds those vectors (and the FL and whitening bytes), built with tbl once
 * per key into the key object's cache, or per call when there is none.
 *
 * Constant time: tbl and the AES instructions are register operations; no memory access
 * depends on data or key. A tail of 1..15 blocks runs as one batch whose missing blocks are
 * zeros that are never stored. The key table built per call is wiped before returning.
 */

enum {
    C_PRE1_E_HI, C_PRE1_E_LO, C_PRE4_E_HI, C_PRE4_E_LO,
    C_POST1_E_HI, C_POST1_E_LO, C_POST2_E_HI, C_POST2_E_LO, C_POST3_E_HI, C_POST3_E_LO,
    C_PRE1_D_HI, C_PRE1_D_LO, C_PRE4_D_HI, C_PRE4_D_LO,
    C_POST1_D_HI, C_POST1_D_LO, C_POST2_D_HI, C_POST2_D_LO, C_POST3_D_HI, C_POST3_D_LO,
    C_SHIFTROWS, C_INV_SHIFTROWS,
    C_COUNT
};

/* The D entries are the E ones' counterparts at a fixed distance. */
#define C_D (C_PRE1_D_HI - C_PRE1_E_HI)

static const uint8_t consts[C_COUNT][16] __attribute__((aligned(16))) = {
    [C_PRE1_E_HI] = {CAMELLIA_PRE1_E_HI},   [C_PRE1_E_LO] = {CAMELLIA_PRE1_E_LO},
    [C_PRE4_E_HI] = {CAMELLIA_PRE4_E_HI},   [C_PRE4_E_LO] = {CAMELLIA_PRE4_E_LO},
    [C_POST1_E_HI] = {CAMELLIA_POST1_E_HI}, [C_POST1_E_LO] = {CAMELLIA_POST1_E_LO},
    [C_POST2_E_HI] = {CAMELLIA_POST2_E_HI}, [C_POST2_E_LO] = {CAMELLIA_POST2_E_LO},
    [C_POST3_E_HI] = {CAMELLIA_POST3_E_HI}, [C_POST3_E_LO] = {CAMELLIA_POST3_E_LO},
    [C_PRE1_D_HI] = {CAMELLIA_PRE1_D_HI},   [C_PRE1_D_LO] = {CAMELLIA_PRE1_D_LO},
    [C_PRE4_D_HI] = {CAMELLIA_PRE4_D_HI},   [C_PRE4_D_LO] = {CAMELLIA_PRE4_D_LO},
    [C_POST1_D_HI] = {CAMELLIA_POST1_D_HI}, [C_POST1_D_LO] = {CAMELLIA_POST1_D_LO},
    [C_POST2_D_HI] = {CAMELLIA_POST2_D_HI}, [C_POST2_D_LO] = {CAMELLIA_POST2_D_LO},
    [C_POST3_D_HI] = {CAMELLIA_POST3_D_HI}, [C_POST3_D_LO] = {CAMELLIA_POST3_D_LO},
    /* out[i] = in[sr[i]]: where ShiftRows takes byte i from, and the inverse */
    [C_SHIFTROWS] = {0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11},
    [C_INV_SHIFTROWS] = {0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3},
};

/*
 * Key table, one direction, in the order that direction uses it:
 *   rk[r][j]  round r, byte j: L(subkey byte j) broadcast, the aese/aesd key operand (the
 *             pre map's linear part: bytes 3 and 6 go through s4's, even rounds the E
 *             maps, odd rounds the D maps)
 *   fl[l][j]  FL layer l: bytes 0..7 of the FL subkey, then 0..7 of the FL^-1 one
 *   kw[j]     bytes of kw_pre (D1, then D2), then of kw_post (D2, then D1)
 */
typedef struct {
    uint8x16_t rk[24][8];
    uint8x16_t fl[3][16];
    uint8x16_t kw[32];
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
AC_INLINE uint8x8_t pre_linear(uint8x8_t b, unsigned hi_idx)
{
    const uint8x16_t hi = cload(hi_idx), lo = cload(hi_idx + 1);

    return veor_u8(veor_u8(vqtbl1_u8(lo, vand_u8(b, vdup_n_u8(0x0f))), vqtbl1_u8(hi, vshr_n_u8(b, 4))),
                   vdup_laneq_u8(hi, 0));
}

/* Eight broadcast vectors from the 8 bytes of v. */
#define BCAST8(dst, v)                      \
    do {                                    \
        (dst)[0] = vdupq_lane_u8((v), 0);   \
        (dst)[1] = vdupq_lane_u8((v), 1);   \
        (dst)[2] = vdupq_lane_u8((v), 2);   \
        (dst)[3] = vdupq_lane_u8((v), 3);   \
        (dst)[4] = vdupq_lane_u8((v), 4);   \
        (dst)[5] = vdupq_lane_u8((v), 5);   \
        (dst)[6] = vdupq_lane_u8((v), 6);   \
        (dst)[7] = vdupq_lane_u8((v), 7);   \
    } while (0)

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
        const uint8x8_t l1 = pre_linear(kb, C_PRE1_E_HI + d), l4 = pre_linear(kb, C_PRE4_E_HI + d);
        /* bytes 3 and 6 from s4's map: lanes 3 and 6 of l4, the others of l1 */
        const uint8x8_t sel = vcreate_u8(0x00ff0000ff000000u);

        BCAST8(kt->rk[r], vbsl_u8(sel, l4, l1));
    }
    for (unsigned l = 0; l + 1 < nk / 6; l++) {
        BCAST8(kt->fl[l], key_bytes(KE(2 * l + 1)));
        BCAST8(kt->fl[l] + 8, key_bytes(KE(2 * l + 2)));
    }
    BCAST8(kt->kw, key_bytes(kw_pre[0]));
    BCAST8(kt->kw + 8, key_bytes(kw_pre[1]));
    BCAST8(kt->kw + 16, key_bytes(kw_post[0]));
    BCAST8(kt->kw + 24, key_bytes(kw_post[1]));
#undef K
#undef KE
}

/* Zero the parts of a key table this key used, with stores the compiler cannot drop. */
static void wipe_keys(a64_keys *kt)
{
    volatile uint8x16_t *v = kt->rk[0];

    for (size_t i = 0; i < 8 * (size_t)kt->rounds; i++)
        v[i] = vdupq_n_u8(0);
    v = kt->fl[0];
    for (size_t i = 0; i < 16 * (size_t)(kt->rounds / 6 - 1); i++)
        v[i] = vdupq_n_u8(0);
    v = kt->kw;
    for (size_t i = 0; i < 32; i++)
        v[i] = vdupq_n_u8(0);
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
AC_INLINE void round_(const uint8x16_t *s, uint8x16_t *d, const uint8x16_t *rk, const uint8_t (*c)[16],
                  int dec)
{
    const unsigned o = dec ? C_D : 0;
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
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            st[j] = veorq_u8(st[j], kt->kw[j]);
            st[j + 8] = veorq_u8(vqtbl1q_u8(st[j + 8], sr), kt->kw[j + 8]);
        }
    }
    for (unsigned r = 0; r < kt->rounds; r += 6) {
        if (r > 0) {
            const uint8x16_t *fl = kt->fl[r / 6 - 1];

            fl_left(st, fl);
            fl_right(st, fl);
            fl_right(st + 8, fl + 8);
            fl_left(st + 8, fl + 8);
        }
        for (unsigned q = r; q < r + 6; q += 2) {
            round_(st, st + 8, kt->rk[q], consts, 0);
            round_(st + 8, st, kt->rk[q + 1], consts, 1);
        }
    }
    {
        const uint8x16_t isr = cload(C_INV_SHIFTROWS);
        uint8x16_t y[16];

        /* Postwhitening, D2 back into block order, and out as D2 || D1. */
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            y[j] = vqtbl1q_u8(veorq_u8(st[j + 8], kt->kw[16 + j]), isr);
            y[j + 8] = veorq_u8(st[j], kt->kw[24 + j]);
        }
        transpose(y);
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++)
            if ((size_t)r < nblocks)
                vst1q_u8(out + 16 * r, y[r]);
    }
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
    if (nblocks > 0)
        batch_tail(kt, out, in, nblocks);
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
