/* ChaCha20, AVX2: 8 blocks per iteration (one state word per ymm, one block per lane, pshufb for rotates by 16/8, one c word parked on the stack, the double round in inline asm); 5..7-block tails as a partial 8-block pass, 1..4 as 2 blocks per ymm row set (RFC 8439 2.3-2.4). */
#ifndef __AVX2__
#error "chacha20/avx2.c needs -mavx2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"
#include "chacha20/avx2_core.h"

/* The row kernels' rotates by whole bytes (the masks of ROT_CONSTANTS). */
#define ROT16(v) _mm256_shuffle_epi8(v, rot16)
#define ROT8(v) _mm256_shuffle_epi8(v, rot8)

#define QR(a, b, c, d)                                                      \
    do {                                                                    \
        a = _mm256_add_epi32(a, b);                                         \
        d = ROT16(_mm256_xor_si256(d, a));                                  \
        c = _mm256_add_epi32(c, d);                                         \
        b = ROTN(_mm256_xor_si256(b, c), 12);                               \
        a = _mm256_add_epi32(a, b);                                         \
        d = ROT8(_mm256_xor_si256(d, a));                                   \
        c = _mm256_add_epi32(c, d);                                         \
        b = ROTN(_mm256_xor_si256(b, c), 7);                                \
    } while (0)

/* 8 blocks (512 bytes) per iteration over len bytes; a last group shorter than
 * 512 bytes computes all 8 blocks and writes only len bytes. */
static void blocks8(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t nonce[3], uint32_t counter)
{
    __m256i st[16], slot;

    chacha8_setup(st, key, nonce, counter);
    while (len > 0) {
        CHACHA8_STATE(st, &slot);
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++)
            CHACHA8_DOUBLE_ROUND(&slot, (void)0, (void)0, (void)0);
        CHACHA8_XOR_OUT(st, &slot, out, in, len);
        if (AC_LIKELY(len >= 512)) {
            st[12] = _mm256_add_epi32(st[12], _mm256_set1_epi32(8));
            out += 512;
            in += 512;
            len -= 512;
        } else {
            len = 0;
        }
    }
    chacha8_wipe(st, &slot);
}

/* Rows of two blocks side by side, one per 128-bit half: r0 = constants, r1/r2 =
 * key, r3 = counter + half, nonce. For the diagonal round rows 0, 2 and 3 rotate
 * within each half so that the column quarter round serves the diagonals; row 1
 * stays put because it is the last one a quarter round produces, so the
 * shuffles stay off the dependency chain. */
#define DIAG(r0, r2, r3)                                                    \
    do {                                                                    \
        r0 = _mm256_shuffle_epi32(r0, 0x93);                                \
        r2 = _mm256_shuffle_epi32(r2, 0x39);                                \
        r3 = _mm256_shuffle_epi32(r3, 0x4e);                                \
    } while (0)
#define UNDIAG(r0, r2, r3)                                                  \
    do {                                                                    \
        r0 = _mm256_shuffle_epi32(r0, 0x39);                                \
        r2 = _mm256_shuffle_epi32(r2, 0x93);                                \
        r3 = _mm256_shuffle_epi32(r3, 0x4e);                                \
    } while (0)

#define ROWS_INIT(key, nonce, counter)                                      \
    const __m256i s0 = _mm256_setr_epi32(CHACHA_C0, CHACHA_C1, CHACHA_C2, CHACHA_C3,    \
                                         CHACHA_C0, CHACHA_C1, CHACHA_C2, CHACHA_C3);   \
    const __m256i s1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(key))); \
    const __m256i s2 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)((key) + 4))); \
    const __m256i s3 = _mm256_add_epi32(                                    \
        _mm256_broadcastsi128_si256(_mm_setr_epi32((int)(counter), (int)(nonce)[0], (int)(nonce)[1], (int)(nonce)[2])), \
        _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0))

/* Block 0 and block 1 of a row set, as (bytes 0..31, bytes 32..63) pairs. */
#define SPLIT(a0, a1, a2, a3, lo0, hi0, lo1, hi1)                           \
    do {                                                                    \
        lo0 = _mm256_permute2x128_si256(a0, a1, 0x20);                      \
        hi0 = _mm256_permute2x128_si256(a2, a3, 0x20);                      \
        lo1 = _mm256_permute2x128_si256(a0, a1, 0x31);                      \
        hi1 = _mm256_permute2x128_si256(a2, a3, 0x31);                      \
    } while (0)

/* 1..2 blocks (1..128 bytes) in one pass. */
static void tail2(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    ROWS_INIT(key, nonce, counter);
    __m256i a0 = s0, a1 = s1, a2 = s2, a3 = s3;

    for (int i = 0; i < 10; i++) {
        QR(a0, a1, a2, a3);
        DIAG(a0, a2, a3);
        QR(a0, a1, a2, a3);
        UNDIAG(a0, a2, a3);
    }
    a0 = _mm256_add_epi32(a0, s0);
    a1 = _mm256_add_epi32(a1, s1);
    a2 = _mm256_add_epi32(a2, s2);
    a3 = _mm256_add_epi32(a3, s3);

    __m256i lo0, hi0, lo1, hi1;
    SPLIT(a0, a1, a2, a3, lo0, hi0, lo1, hi1);
    xor_upto(out, in, lo0, hi0, len);
    if (len > 64)
        xor_upto(out + 64, in + 64, lo1, hi1, len - 64);
}

/* 3..4 blocks (129..256 bytes) in one pass: two independent sets of rows, so the
 * latency of one quarter-round chain hides the other's. */
static void tail4(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    ROWS_INIT(key, nonce, counter);
    const __m256i two = _mm256_setr_epi32(2, 0, 0, 0, 2, 0, 0, 0);
    __m256i a0 = s0, a1 = s1, a2 = s2, a3 = s3;
    __m256i c0 = s0, c1 = s1, c2 = s2, c3 = _mm256_add_epi32(s3, two);

    for (int i = 0; i < 10; i++) {
        QR(a0, a1, a2, a3);
        QR(c0, c1, c2, c3);
        DIAG(a0, a2, a3);
        DIAG(c0, c2, c3);
        QR(a0, a1, a2, a3);
        QR(c0, c1, c2, c3);
        UNDIAG(a0, a2, a3);
        UNDIAG(c0, c2, c3);
    }
    a0 = _mm256_add_epi32(a0, s0);
    a1 = _mm256_add_epi32(a1, s1);
    a2 = _mm256_add_epi32(a2, s2);
    a3 = _mm256_add_epi32(a3, s3);
    c0 = _mm256_add_epi32(c0, s0);
    c1 = _mm256_add_epi32(c1, s1);
    c2 = _mm256_add_epi32(c2, s2);
    c3 = _mm256_add_epi32(c3, _mm256_add_epi32(s3, two));

    __m256i lo0, hi0, lo1, hi1;
    SPLIT(a0, a1, a2, a3, lo0, hi0, lo1, hi1);
    xor32(out, in, lo0);
    xor32(out + 32, in + 32, hi0);
    xor32(out + 64, in + 64, lo1);
    xor32(out + 96, in + 96, hi1);
    SPLIT(c0, c1, c2, c3, lo0, hi0, lo1, hi1);
    xor_upto(out + 128, in + 128, lo0, hi0, len - 128);
    if (len > 192)
        xor_upto(out + 192, in + 192, lo1, hi1, len - 192);
}

static void chacha20_xor_stream_avx2(uint8_t *out, const uint8_t *in, size_t len,
                                     const uint32_t key[8], const uint32_t nonce[3],
                                     uint32_t counter)
{
    /* Lanes past the end are computed and dropped; each block used has its own
     * counter, and no block is generated twice. A last group of 5..8 blocks costs
     * less as one 8-block pass than as 4+1..4 blocks in rows (measured). */
    size_t bulk = len % 512 > 256 ? len : len - len % 512;

    if (bulk > 0) {
        blocks8(out, in, bulk, key, nonce, counter);
        /* Wraps only when no block remains (the caller's guarantee). */
        counter += (uint32_t)(bulk / 512 * 8);
        out += bulk;
        in += bulk;
        len -= bulk;
    }
    /* 1..256 bytes left. */
    if (len > 128)
        tail4(out, in, len, key, nonce, counter);
    else if (len > 0)
        tail2(out, in, len, key, nonce, counter);
}

const chacha20_kernel archcrypt_chacha20_avx2 = {
    .xor_stream = chacha20_xor_stream_avx2,
};
