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

/*
 * The 16x16 transpose (lane-major message words in, word-major out) in two stages, so
 * that the next block's can run in pieces between the current block's rounds. Done
 * whole at the top of each block, its 16 loads, 16 byte swaps and 64 shuffles were a
 * chain the first rounds waited on: measured natively on the Intel AVX-512 host
 * (bench-ab sha256-many16, 16 KiB per message, interleaved), the batch cost 0.96-0.98
 * c/B with it and 0.86-0.88 with the loads and transposes left out (wrong digests, a
 * bound); spread over the previous block's rounds 0.89-0.95 (0.94-0.95x of the former
 * code in the same runs).
 */

/* Stage A for lanes 4q..4q+3: load, byte swap (big-endian words), in-lane unpacks of
 * dwords, then qwords: u[4q + m] = word 4c + m of those four lanes in 128-bit chunk c. */
static inline __attribute__((always_inline)) void transpose_a(const uint8_t *const *in, size_t off, int q,
                                                               __m512i *u, __m512i bswap)
{
    __m512i r[4], t[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        r[i] = _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)(in[4 * q + i] + off)), bswap);
    t[0] = _mm512_unpacklo_epi32(r[0], r[1]);
    t[1] = _mm512_unpackhi_epi32(r[0], r[1]);
    t[2] = _mm512_unpacklo_epi32(r[2], r[3]);
    t[3] = _mm512_unpackhi_epi32(r[2], r[3]);
    _mm512_store_si512((void *)&u[4 * q], _mm512_unpacklo_epi64(t[0], t[2]));
    _mm512_store_si512((void *)&u[4 * q + 1], _mm512_unpackhi_epi64(t[0], t[2]));
    _mm512_store_si512((void *)&u[4 * q + 2], _mm512_unpacklo_epi64(t[1], t[3]));
    _mm512_store_si512((void *)&u[4 * q + 3], _mm512_unpackhi_epi64(t[1], t[3]));
}

/* Stage B for m: from u[m], u[4 + m], u[8 + m], u[12 + m] (word 4c + m of lane groups
 * 0..3), words m, 4 + m, 8 + m and 12 + m of all sixteen lanes, by two rounds of
 * 128-bit lane selects. */
static inline __attribute__((always_inline)) void transpose_b(int m, const __m512i *u, __m512i *w)
{
    const __m512i u0 = _mm512_load_si512((const void *)&u[m]);
    const __m512i u1 = _mm512_load_si512((const void *)&u[4 + m]);
    const __m512i u2 = _mm512_load_si512((const void *)&u[8 + m]);
    const __m512i u3 = _mm512_load_si512((const void *)&u[12 + m]);
    const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x88); /* chunks 0, 2 of groups 0, 1 */
    const __m512i v1 = _mm512_shuffle_i32x4(u2, u3, 0x88); /* chunks 0, 2 of groups 2, 3 */
    const __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xdd); /* chunks 1, 3 */
    const __m512i v3 = _mm512_shuffle_i32x4(u2, u3, 0xdd);
    _mm512_store_si512((void *)&w[m], _mm512_shuffle_i32x4(v0, v1, 0x88));
    _mm512_store_si512((void *)&w[8 + m], _mm512_shuffle_i32x4(v0, v1, 0xdd));
    _mm512_store_si512((void *)&w[4 + m], _mm512_shuffle_i32x4(v2, v3, 0x88));
    _mm512_store_si512((void *)&w[12 + m], _mm512_shuffle_i32x4(v2, v3, 0xdd));
}

/* Section 6.2.2 for sixteen independent messages, one per 32-bit lane. The state goes
 * between lane-major h and the word-major registers through a stack array, once per
 * call, wiped after; so do the transposes' buffers. */
static void sha256_compress_x16(uint32_t (*H)[8], const uint8_t *const *in, size_t nblocks)
{
    /* Big-endian dwords: reverse the bytes of each. */
    const __m512i bswap = _mm512_setr_epi32(
        0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f, 0x00010203, 0x04050607, 0x08090a0b,
        0x0c0d0e0f, 0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f, 0x00010203, 0x04050607,
        0x08090a0b, 0x0c0d0e0f);
    _Alignas(64) uint32_t words[8][16];
    /* ubuf: stage A's output; wbuf: the next block's words, word-major. */
    __m512i ubuf[16], wbuf[16], w[16];
#define LOADW(i) _mm512_load_si512((const void *)words[i])
#define STOREW(i, v) _mm512_store_si512((void *)words[i], (v))

    for (int l = 0; l < 16; l++)
        for (int i = 0; i < 8; i++)
            words[i][l] = H[l][i];
    for (int q = 0; q < 4; q++)
        transpose_a(in, 0, q, ubuf, bswap);
    for (int m = 0; m < 4; m++)
        transpose_b(m, ubuf, wbuf);

    for (size_t blk = 0; blk < nblocks; blk++) {
        /* The last block transposes itself again rather than read past the input:
         * no branches in the rounds. */
        const size_t next = 64 * (blk + (blk + 1 < nblocks));
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            w[i] = _mm512_load_si512((const void *)&wbuf[i]);

        /* The chaining value waits in `words` during the rounds: with it in registers
         * too, a..h, the sixteen schedule words and it are every zmm register, and gcc
         * spilled some of them in every round. */
        __m512i a = LOADW(0), b = LOADW(1), c = LOADW(2), d = LOADW(3);
        __m512i e = LOADW(4), f = LOADW(5), g = LOADW(6), h = LOADW(7);
#pragma GCC unroll 64
        for (int t = 0; t < 64; t++) {
            /* The next block's transpose: stage A in rounds 32..44, B in 50..59. Placed
             * in rounds 0..18 (no schedule steps, room on port 5) it measured 2% slower,
             * in 20..52 or 44..62 1-2% slower, 48..62 the same (bench-ab, interleaved). */
            if (t >= 32 && t < 48 && t % 4 == 0)
                transpose_a(in, next, (t - 32) / 4, ubuf, bswap);
            if (t >= 50 && t < 62 && (t - 50) % 3 == 0)
                transpose_b((t - 50) / 3, ubuf, wbuf);
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

    /* The schedule and the transposes' buffers are message material (HMAC's first block
     * is the key), the state key-equivalent under HMAC. */
    ac_wipe_zmm(w, sizeof w);
    ac_wipe_zmm(ubuf, sizeof ubuf);
    ac_wipe_zmm(wbuf, sizeof wbuf);
    ac_wipe_zmm(words, sizeof words);
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
