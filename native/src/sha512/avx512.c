/* SHA-512 compression, AVX-512 + BMI2: two blocks' message schedules interleaved in zmm (vprorq, vpternlogq), computed during the first block's scalar rorx rounds; the second block's rounds then read W+K from the stack alone (FIPS 180-4 section 6.4.2). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__)
#error "sha512/avx512.c needs -mavx512f -mavx512vl -mavx512bw -mavx512dq (ISA_FLAGS_avx512 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha512/sha512.h"
#include "sha512/x86_rounds.h"

/* Layout: a schedule vector holds words 4g..4g+3 of two blocks A and B, interleaved
 * (qword 2i = A's W[4g+i], qword 2i+1 = B's). Each 128-bit lane is then one word of
 * both blocks, so "the same words one position later" is a one-qword-pair shift of
 * the whole vector (valignq by 2), with no in-lane/cross-lane split as in the AVX2
 * row, and one schedule step serves both blocks. With sigma in 4 instructions instead
 * of 7 and 8, the vector work per block is about a third of the AVX2 row's (gcc 12:
 * 208 against 592 vector instructions a block). The rounds are the same scalar rounds
 * (22 ALU instructions each, the bound on 4-ALU cores), reading W+K at stride 2; what
 * this row saves is issue bandwidth around them. */

/* sigma0 and sigma1 (section 4.1.3) of each qword: 0x96 is the three-way xor. */
static inline __m512i sigma0(__m512i x)
{
    return _mm512_ternarylogic_epi64(_mm512_ror_epi64(x, 1), _mm512_ror_epi64(x, 8),
                                     _mm512_srli_epi64(x, 7), 0x96);
}

static inline __m512i sigma1(__m512i x)
{
    return _mm512_ternarylogic_epi64(_mm512_ror_epi64(x, 19), _mm512_ror_epi64(x, 61),
                                     _mm512_srli_epi64(x, 6), 0x96);
}

/* Step 1 for group g: x0 = W[t-16..t-13] becomes W[t..t+3] (t = 4g) from
 * x1 = W[t-12..], x2 = W[t-8..], x3 = W[t-4..t-1], all for both blocks. sigma1 needs
 * W[t-2], W[t-1] (lanes 2, 3 of x3) for words t, t+1 (lanes 0, 1), and the new W[t],
 * W[t+1] for words t+2, t+3: two halves in sequence, each a lane shuffle and a masked
 * add. Split in three so that the callers can spread it between rounds. */
#define SCHED_A(x0, x1, x2, x3, t)                                                \
    do {                                                                          \
        (t) = _mm512_add_epi64((x0), _mm512_alignr_epi64((x3), (x2), 2));         \
        (t) = _mm512_add_epi64((t), sigma0(_mm512_alignr_epi64((x1), (x0), 2)));  \
    } while (0)
#define SCHED_B(x3, t)                                                            \
    ((t) = _mm512_mask_add_epi64((t), 0x0f, (t),                                  \
                                 sigma1(_mm512_shuffle_i64x2((x3), (x3), 0xee))))
#define SCHED_C(x0, t)                                                            \
    ((x0) = _mm512_mask_add_epi64((t), 0xf0, (t),                                 \
                                  sigma1(_mm512_shuffle_i64x2((t), (t), 0x44))))

/* W+K of group g (rounds 4g..4g+3 of both blocks) into wk[8g..8g+7]. K[4g..4g+3] each
 * twice: kp = K + 8 * (g >> 1), a 64-byte load for an even and an odd group, and the
 * index (klo, khi) picks the half. */
#define STORE_WK(dst, x, kp, kidx)                                                \
    _mm512_store_si512((dst), _mm512_add_epi64((x), _mm512_permutexvar_epi64(     \
                                                        (kidx), _mm512_load_si512(kp))))

/* Four rounds of block A from wk[0], wk[2], wk[4], wk[6], and between them the
 * schedule step of the group four ahead for both blocks, stored at wk + 32. */
#define RND4S(a, b, c, d, e, f, g, h, wk, x0, x1, x2, x3, kp, kidx)              \
    do {                                                                          \
        __m512i t_;                                                               \
        SHA512_RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                      \
        SCHED_A(x0, x1, x2, x3, t_);                                              \
        SHA512_RND(h, a, b, c, d, e, f, g, (wk)[2], ab, bc);                      \
        SCHED_B(x3, t_);                                                          \
        SHA512_RND(g, h, a, b, c, d, e, f, (wk)[4], bc, ab);                      \
        SCHED_C(x0, t_);                                                          \
        SHA512_RND(f, g, h, a, b, c, d, e, (wk)[6], ab, bc);                      \
        STORE_WK((wk) + 32, x0, kp, kidx);                                        \
    } while (0)

static void sha512_compress_avx512(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    /* wk[2t] = W[t]+K[t] of block A, wk[2t+1] of block B. */
    uint64_t wk[160] __attribute__((aligned(64)));
    /* Big-endian qwords to little-endian (vpshufb index per 128-bit lane). */
    const __m512i bswap = _mm512_setr_epi64(0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f);
    /* Interleave words 0-3 (lo) or 4-7 (hi) of A (indices 0-7) and B (8-15). */
    const __m512i ilo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i ihi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    const __m512i klo = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
    const __m512i khi = _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7);
    uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];

    while (nblocks) {
        /* An odd last block is its own partner: the schedule of B is computed (and
         * wiped) but its rounds are skipped, and nothing past the input is read. */
        const uint8_t *inb = nblocks > 1 ? in + 128 : in;
        __m512i a0 = _mm512_shuffle_epi8(_mm512_loadu_si512(in), bswap);
        __m512i a1 = _mm512_shuffle_epi8(_mm512_loadu_si512(in + 64), bswap);
        __m512i b0 = _mm512_shuffle_epi8(_mm512_loadu_si512(inb), bswap);
        __m512i b1 = _mm512_shuffle_epi8(_mm512_loadu_si512(inb + 64), bswap);
        __m512i x0 = _mm512_permutex2var_epi64(a0, ilo, b0);
        __m512i x1 = _mm512_permutex2var_epi64(a0, ihi, b0);
        __m512i x2 = _mm512_permutex2var_epi64(a1, ilo, b1);
        __m512i x3 = _mm512_permutex2var_epi64(a1, ihi, b1);
        uint64_t bc = b ^ c, ab, s0 = 0;

        /* Each group's W+K is stored four groups before block A's rounds read it. */
        STORE_WK(wk, x0, archcrypt_sha512_K, klo);
        STORE_WK(wk + 8, x1, archcrypt_sha512_K, khi);
        STORE_WK(wk + 16, x2, archcrypt_sha512_K + 8, klo);
        STORE_WK(wk + 24, x3, archcrypt_sha512_K + 8, khi);
        /* Pointers, not an index: the rounds hold 13 of the 14 free registers. */
        const uint64_t *kp = archcrypt_sha512_K + 16;
        for (uint64_t *w = wk; w < wk + 128; w += 32, kp += 16) {
            RND4S(a, b, c, d, e, f, g, h, w, x0, x1, x2, x3, kp, klo);
            RND4S(e, f, g, h, a, b, c, d, w + 8, x1, x2, x3, x0, kp, khi);
            RND4S(a, b, c, d, e, f, g, h, w + 16, x2, x3, x0, x1, kp + 8, klo);
            RND4S(e, f, g, h, a, b, c, d, w + 24, x3, x0, x1, x2, kp + 8, khi);
        }
        for (int j = 16; j < 20; j += 2) {
            SHA512_RND4(a, b, c, d, e, f, g, h, wk + 8 * j, 2);
            SHA512_RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 8, 2);
        }
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        if (nblocks == 1)
            break;

        /* Block B: rounds only. */
        bc = b ^ c;
        s0 = 0;
        for (int j = 0; j < 20; j += 2) {
            SHA512_RND4(a, b, c, d, e, f, g, h, wk + 8 * j + 1, 2);
            SHA512_RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 9, 2);
        }
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        in += 256;
        nblocks -= 2;
    }

    /* The schedule is message material, and HMAC's first block is the key. Volatile
     * vector stores rather than ac_wipe, which gcc turns into a rep stosq whose
     * start-up cost shows on one-block calls. */
    volatile __m512i *vwk = (volatile __m512i *)wk;
    for (size_t i = 0; i < sizeof(wk) / 64; i++)
        vwk[i] = _mm512_setzero_si512();
}

/* ---- eight messages at once: one per 64-bit lane (archcrypt_hash_many, HMAC batches) ---- */

/* Section 4.1.3 on eight lanes: every rotate one vprorq, every three-way xor, Ch and Maj
 * one vpternlogq (0x96 = a ^ b ^ c, 0xca = a ? b : c, 0xe8 = majority). */
#define XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96)
#define BSIG0(x) XOR3(_mm512_ror_epi64((x), 28), _mm512_ror_epi64((x), 34), _mm512_ror_epi64((x), 39))
#define BSIG1(x) XOR3(_mm512_ror_epi64((x), 14), _mm512_ror_epi64((x), 18), _mm512_ror_epi64((x), 41))

/* r[i] = eight qwords of lane i in, r[j] = qword j of every lane out: an 8x8 transpose
 * (in-lane unpacks, then two rounds of 128-bit lane selects; its own inverse). */
static inline void transpose8x8(__m512i r[8])
{
    __m512i t[8], v[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi64(r[i], r[i + 1]);     /* even words of lanes i, i+1 */
        t[i + 1] = _mm512_unpackhi_epi64(r[i], r[i + 1]); /* odd words */
    }
    for (int o = 0; o < 2; o++) {
        v[4 * o + 0] = _mm512_shuffle_i64x2(t[o], t[2 + o], 0x88);
        v[4 * o + 1] = _mm512_shuffle_i64x2(t[4 + o], t[6 + o], 0x88);
        v[4 * o + 2] = _mm512_shuffle_i64x2(t[o], t[2 + o], 0xdd);
        v[4 * o + 3] = _mm512_shuffle_i64x2(t[4 + o], t[6 + o], 0xdd);
    }
    /* v[4o + 2p + q]: words 4k + 2p + o of lane pairs; k = 0 from 0x88, k = 1 from 0xdd */
    for (int o = 0; o < 2; o++)
        for (int p = 0; p < 2; p++) {
            r[2 * p + o] = _mm512_shuffle_i64x2(v[4 * o + 2 * p], v[4 * o + 2 * p + 1], 0x88);
            r[4 + 2 * p + o] = _mm512_shuffle_i64x2(v[4 * o + 2 * p], v[4 * o + 2 * p + 1], 0xdd);
        }
}

/* Section 6.4.2 for eight independent messages, one per 64-bit lane: the portable round,
 * eight times the work per instruction. The state goes through a stack array once per
 * call (lane-major in h, word-major in the registers), wiped after. */
static void sha512_compress_x8(uint64_t (*H)[8], const uint8_t *const *in, size_t nblocks)
{
    /* Big-endian qwords: reverse the bytes of each. */
    const __m512i bswap = _mm512_setr_epi64(
        0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL,
        0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
    __m512i s[8], w[16];

    for (int l = 0; l < 8; l++)
        s[l] = _mm512_loadu_si512((const void *)H[l]);
    transpose8x8(s);

    for (size_t blk = 0; blk < nblocks; blk++) {
        for (int half = 0; half < 2; half++) {
            for (int l = 0; l < 8; l++)
                w[8 * half + l] = _mm512_shuffle_epi8(
                    _mm512_loadu_si512((const void *)(in[l] + 128 * blk + 64 * half)), bswap);
            transpose8x8(w + 8 * half);
        }

        __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
#pragma GCC unroll 80
        for (int t = 0; t < 80; t++) {
            if (t >= 16)
                w[t & 15] = _mm512_add_epi64(
                    _mm512_add_epi64(sigma1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    _mm512_add_epi64(sigma0(w[(t - 15) & 15]), w[t & 15]));
            __m512i t1 = _mm512_add_epi64(
                _mm512_add_epi64(_mm512_add_epi64(h, BSIG1(e)),
                                 _mm512_ternarylogic_epi64(e, f, g, 0xca)),
                _mm512_add_epi64(w[t & 15], _mm512_set1_epi64((long long)archcrypt_sha512_K[t])));
            __m512i t2 = _mm512_add_epi64(BSIG0(a), _mm512_ternarylogic_epi64(a, b, c, 0xe8));
            h = g;
            g = f;
            f = e;
            e = _mm512_add_epi64(d, t1);
            d = c;
            c = b;
            b = a;
            a = _mm512_add_epi64(t1, t2);
        }
        s[0] = _mm512_add_epi64(s[0], a);
        s[1] = _mm512_add_epi64(s[1], b);
        s[2] = _mm512_add_epi64(s[2], c);
        s[3] = _mm512_add_epi64(s[3], d);
        s[4] = _mm512_add_epi64(s[4], e);
        s[5] = _mm512_add_epi64(s[5], f);
        s[6] = _mm512_add_epi64(s[6], g);
        s[7] = _mm512_add_epi64(s[7], h);
    }

    transpose8x8(s);
    for (int l = 0; l < 8; l++)
        _mm512_storeu_si512((void *)H[l], s[l]);

    /* The schedule is message material (HMAC's first block is the key). */
    volatile __m512i *vw = (volatile __m512i *)w;
    for (int i = 0; i < 16; i++)
        vw[i] = _mm512_setzero_si512();
}

const sha512_kernel archcrypt_sha512_avx512 = {
    .compress = sha512_compress_avx512,
    .compress_lanes = sha512_compress_x8,
    .lanes = 8,
};
