/* SHA-256 compression, SHA-NI for one message and AVX-512 for batches: sixteen messages side by side, one per 32-bit lane of a zmm (vprold, vpternlogq for Ch, Maj and the three-way xors: bitwise, so lane width does not matter), a block's words by a 16x16 transpose (FIPS 180-4 section 6.2.2). */
#if !defined(__SHA__) || !defined(__SSE4_1__) || !defined(__SSSE3__)
#error "sha256/sha_ni_avx512.c needs -msha -msse4.1 -mssse3 (ISA_FLAGS_sha_ni_avx512 in native/Makefile)"
#endif
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__)
#error "sha256/sha_ni_avx512.c needs -mavx512f -mavx512vl -mavx512bw (ISA_FLAGS_sha_ni_avx512 in native/Makefile)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha256/sha256.h"
#include "sha256/sha_ni_one.h"
#include "sha256/sha_ni_two.h"

/*
 * Why a row of its own: one message is bound by the latency of sha256rnds2's chain
 * (~2 c/B on Zen 3 to 5), which the sha_ni row's two interleaved chains bring to 1.38
 * c/B per message on Zen 5. Sixteen lanes of portable rounds cost ~1600 vector
 * operations per block of all sixteen messages (64 rounds of ~17, 48 schedule steps of
 * ~11, a 64-operation transpose): ~1.6 per byte, ~0.4 c/B per message at four 512-bit
 * operations a cycle, ~0.8 at two (Zen 4) (estimates from the instruction mix, not
 * measurements). One message keeps SHA-NI: this row is sha_ni's compress with a wider
 * batch path.
 */

/* Rotates right by n as vprold by 32 - n; 0x96 = a ^ b ^ c. */
#define ROR(x, n) _mm512_rol_epi32((x), 32 - (n))
#define XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96)
#define BSIG0(x) XOR3(ROR((x), 2), ROR((x), 13), ROR((x), 22))
#define BSIG1(x) XOR3(ROR((x), 6), ROR((x), 11), ROR((x), 25))
#define SSIG0(x) XOR3(ROR((x), 7), ROR((x), 18), _mm512_srli_epi32((x), 3))
#define SSIG1(x) XOR3(ROR((x), 17), ROR((x), 19), _mm512_srli_epi32((x), 10))

/* r[i] = the sixteen words of lane i in, r[j] = word j of every lane out: in-lane
 * unpacks of dwords and qwords, then two rounds of 128-bit lane selects (its own
 * inverse). */
static inline void transpose16(__m512i r[16])
{
    __m512i t[16], u[16], v[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    /* t[2q + h]: words 4c + 2h, 4c + 2h + 1 of lanes 2q, 2q + 1 in 128-bit chunk c */
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    /* u[4g + m]: word 4c + m of lanes 4g..4g+3 in chunk c */
    for (int m = 0; m < 4; m++) {
        v[m] = _mm512_shuffle_i32x4(u[m], u[4 + m], 0x88);          /* c 0, 2 of g 0, 1 */
        v[4 + m] = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0x88); /* c 0, 2 of g 2, 3 */
        v[8 + m] = _mm512_shuffle_i32x4(u[m], u[4 + m], 0xdd);      /* c 1, 3 */
        v[12 + m] = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0xdd);
    }
    for (int m = 0; m < 4; m++) {
        r[m] = _mm512_shuffle_i32x4(v[m], v[4 + m], 0x88);          /* chunk 0: word m */
        r[8 + m] = _mm512_shuffle_i32x4(v[m], v[4 + m], 0xdd);      /* chunk 2: word 8 + m */
        r[4 + m] = _mm512_shuffle_i32x4(v[8 + m], v[12 + m], 0x88); /* chunk 1: word 4 + m */
        r[12 + m] = _mm512_shuffle_i32x4(v[8 + m], v[12 + m], 0xdd);
    }
}

/* Section 6.2.2 for sixteen independent messages, one per 32-bit lane. The state goes
 * between lane-major h and the word-major registers through a stack array, once per
 * call, wiped after. */
static void sha256_compress_x16(uint32_t (*H)[8], const uint8_t *const *in, size_t nblocks)
{
    /* Big-endian dwords: reverse the bytes of each. */
    const __m512i bswap = _mm512_setr_epi32(
        0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f, 0x00010203, 0x04050607, 0x08090a0b,
        0x0c0d0e0f, 0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f, 0x00010203, 0x04050607,
        0x08090a0b, 0x0c0d0e0f);
    _Alignas(64) uint32_t words[8][16];
    __m512i w[16];
#define LOADW(i) _mm512_load_si512((const void *)words[i])
#define STOREW(i, v) _mm512_store_si512((void *)words[i], (v))

    for (int l = 0; l < 16; l++)
        for (int i = 0; i < 8; i++)
            words[i][l] = H[l][i];

    for (size_t blk = 0; blk < nblocks; blk++) {
        for (int l = 0; l < 16; l++)
            w[l] = _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)(in[l] + 64 * blk)), bswap);
        transpose16(w);

        /* The chaining value waits in `words` during the rounds: with it in registers
         * too, a..h, the sixteen schedule words and it are every zmm register, and gcc
         * spilled some of them in every round. */
        __m512i a = LOADW(0), b = LOADW(1), c = LOADW(2), d = LOADW(3);
        __m512i e = LOADW(4), f = LOADW(5), g = LOADW(6), h = LOADW(7);
#pragma GCC unroll 64
        for (int t = 0; t < 64; t++) {
            if (t >= 16)
                w[t & 15] = _mm512_add_epi32(
                    _mm512_add_epi32(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    _mm512_add_epi32(SSIG0(w[(t - 15) & 15]), w[t & 15]));
            /* 0xca: e ? f : g (Ch); 0xe8: majority (Maj) */
            __m512i t1 = _mm512_add_epi32(
                _mm512_add_epi32(_mm512_add_epi32(h, BSIG1(e)),
                                 _mm512_ternarylogic_epi64(e, f, g, 0xca)),
                _mm512_add_epi32(w[t & 15], _mm512_set1_epi32((int)archcrypt_sha256_K[t])));
            __m512i t2 = _mm512_add_epi32(BSIG0(a), _mm512_ternarylogic_epi64(a, b, c, 0xe8));
            h = g;
            g = f;
            f = e;
            e = _mm512_add_epi32(d, t1);
            d = c;
            c = b;
            b = a;
            a = _mm512_add_epi32(t1, t2);
        }
        STOREW(0, _mm512_add_epi32(LOADW(0), a));
        STOREW(1, _mm512_add_epi32(LOADW(1), b));
        STOREW(2, _mm512_add_epi32(LOADW(2), c));
        STOREW(3, _mm512_add_epi32(LOADW(3), d));
        STOREW(4, _mm512_add_epi32(LOADW(4), e));
        STOREW(5, _mm512_add_epi32(LOADW(5), f));
        STOREW(6, _mm512_add_epi32(LOADW(6), g));
        STOREW(7, _mm512_add_epi32(LOADW(7), h));
    }

    for (int l = 0; l < 16; l++)
        for (int i = 0; i < 8; i++)
            H[l][i] = words[i][l];
#undef LOADW
#undef STOREW

    /* The schedule is message material (HMAC's first block is the key), the state
     * key-equivalent under HMAC. */
    volatile __m512i *vw = (volatile __m512i *)w;
    for (int i = 0; i < 16; i++)
        vw[i] = _mm512_setzero_si512();
    volatile __m512i *vs = (volatile __m512i *)(void *)words;
    for (int i = 0; i < 8; i++)
        vs[i] = _mm512_setzero_si512();
}

const sha256_kernel archcrypt_sha256_sha_ni_avx512 = {
    .compress = sha_ni_compress,
    .compress_lanes = sha256_compress_x16,
    .lanes = 16,
    /* Batches of 2..8: sha_ni's two chains (1.74 c/B per message, measured natively on an
     * Intel AVX-512 host) beat sixteen lanes with half or more idle, and one message at a
     * time (2.08). */
    .compress_lanes_narrow = sha_ni_compress_lanes,
    .narrow_lanes = SHA_NI_LANES,
};
