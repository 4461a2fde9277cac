/* ChaCha20, AVX2: 8 blocks per iteration (one state word per ymm, one block per lane, pshufb for rotates by 16/8, c words parked on the stack); 5..7-block tails as a partial 8-block pass, 1..4 as 2 blocks per ymm row set (RFC 8439 2.3-2.4). */
#ifndef __AVX2__
#error "chacha20/avx2.c needs -mavx2 (ISA_FLAGS_avx2 in native/Makefile)"
#endif

#include <immintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865
#define C1 0x3320646e
#define C2 0x79622d32
#define C3 0x6b206574

/* Rotates by whole bytes are one byte shuffle; 12 and 7 are two shifts and an OR. */
#define ROT16(v) _mm256_shuffle_epi8(v, rot16)
#define ROT8(v) _mm256_shuffle_epi8(v, rot8)
#define ROTN(v, n) _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))

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

#define ROT_CONSTANTS                                                       \
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, \
                                           2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13); \
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, \
                                          3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14)

/* 4x4 transpose of 32-bit words inside each 128-bit half. */
#define TRANSPOSE_WORDS(a, b, c, d)                                         \
    do {                                                                    \
        __m256i t0_ = _mm256_unpacklo_epi32(a, b);                          \
        __m256i t1_ = _mm256_unpacklo_epi32(c, d);                          \
        __m256i t2_ = _mm256_unpackhi_epi32(a, b);                          \
        __m256i t3_ = _mm256_unpackhi_epi32(c, d);                          \
        a = _mm256_unpacklo_epi64(t0_, t1_);                                \
        b = _mm256_unpackhi_epi64(t0_, t1_);                                \
        c = _mm256_unpacklo_epi64(t2_, t3_);                                \
        d = _mm256_unpackhi_epi64(t2_, t3_);                                \
    } while (0)

static inline void xor32(uint8_t *out, const uint8_t *in, __m256i ks)
{
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)in), ks));
}

/* XOR up to one block held as two ymm halves; only `avail` bytes are touched. */
static inline void xor_upto(uint8_t *out, const uint8_t *in, __m256i lo, __m256i hi, size_t avail)
{
    if (avail >= 64) {
        xor32(out, in, lo);
        xor32(out + 32, in + 32, hi);
        return;
    }
    if (avail >= 32) {
        xor32(out, in, lo);
        out += 32;
        in += 32;
        avail -= 32;
        lo = hi;
    }
    if (avail == 0)
        return;
    uint8_t ks[32];
    _mm256_storeu_si256((__m256i *)(void *)ks, lo);
    size_t i = 0;
    for (; i + 8 <= avail; i += 8) {
        uint64_t a, b;
        memcpy(&a, in + i, 8);
        memcpy(&b, ks + i, 8);
        a ^= b;
        memcpy(out + i, &a, 8);
    }
    for (; i < avail; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
    /* The keystream is as secret as the key stream it came from. */
    _mm256_storeu_si256((__m256i *)(void *)ks, _mm256_setzero_si256());
    __asm__ __volatile__("" : : "r"(ks) : "memory");
}

/* Values parked on the stack by hand: 16 state words, two temporaries and two
 * shuffle masks do not fit in 16 ymm registers, and the compiler's own spills
 * land in the quarter-round chains. As in OpenSSL's ChaCha20_8x, words a, b, d
 * stay in registers and the four c words live on the stack, two at a time in
 * registers; the c pair in use is the same across the middle of a double round,
 * so each half round swaps the pair once. */
static inline void park(__m256i *slot, __m256i v)
{
    *(volatile __m256i *)slot = v;
}

static inline __m256i unpark(const __m256i *slot)
{
    return *(const volatile __m256i *)slot;
}

/* Two quarter rounds interleaved; the masks are loaded where used so they do
 * not hold registers through the round. */
#define QR2(a, b, c, d, e, f, g, h)                                                  \
    do {                                                                             \
        __m256i m_;                                                                  \
        a = _mm256_add_epi32(a, b);                                                  \
        e = _mm256_add_epi32(e, f);                                                  \
        m_ = unpark(&masks[0]);                                                      \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), m_);                         \
        h = _mm256_shuffle_epi8(_mm256_xor_si256(h, e), m_);                         \
        c = _mm256_add_epi32(c, d);                                                  \
        g = _mm256_add_epi32(g, h);                                                  \
        b = ROTN(_mm256_xor_si256(b, c), 12);                                        \
        f = ROTN(_mm256_xor_si256(f, g), 12);                                        \
        a = _mm256_add_epi32(a, b);                                                  \
        e = _mm256_add_epi32(e, f);                                                  \
        m_ = unpark(&masks[1]);                                                      \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), m_);                         \
        h = _mm256_shuffle_epi8(_mm256_xor_si256(h, e), m_);                         \
        c = _mm256_add_epi32(c, d);                                                  \
        g = _mm256_add_epi32(g, h);                                                  \
        b = ROTN(_mm256_xor_si256(b, c), 7);                                         \
        f = ROTN(_mm256_xor_si256(f, g), 7);                                         \
    } while (0)

/* XOR block bytes [off, off + 64) of a group, clipped to the group's len. */
static inline void xor_at(uint8_t *out, const uint8_t *in, __m256i lo, __m256i hi, size_t len,
                          size_t off)
{
    if (len > off)
        xor_upto(out + off, in + off, lo, hi, len - off);
}

/* 8 blocks (512 bytes) per iteration over len bytes; a last group shorter than
 * 512 bytes computes all 8 blocks and writes only len bytes. */
static void blocks8(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    __m256i masks[2], cs[4];
    __m256i ctr = _mm256_add_epi32(_mm256_set1_epi32((int)counter), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));

    park(&masks[0], rot16);
    park(&masks[1], rot8);
    while (len > 0) {
        __m256i x0 = _mm256_set1_epi32(C0), x1 = _mm256_set1_epi32(C1);
        __m256i x2 = _mm256_set1_epi32(C2), x3 = _mm256_set1_epi32(C3);
        __m256i x4 = _mm256_set1_epi32((int)key[0]), x5 = _mm256_set1_epi32((int)key[1]);
        __m256i x6 = _mm256_set1_epi32((int)key[2]), x7 = _mm256_set1_epi32((int)key[3]);
        __m256i x8 = _mm256_set1_epi32((int)key[4]), x9 = _mm256_set1_epi32((int)key[5]);
        __m256i x10, x11;
        __m256i x12 = ctr, x13 = _mm256_set1_epi32((int)nonce[0]);
        __m256i x14 = _mm256_set1_epi32((int)nonce[1]), x15 = _mm256_set1_epi32((int)nonce[2]);

        park(&cs[2], _mm256_set1_epi32((int)key[6]));
        park(&cs[3], _mm256_set1_epi32((int)key[7]));
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++) {
            QR2(x0, x4, x8, x12, x1, x5, x9, x13);
            park(&cs[0], x8);
            park(&cs[1], x9);
            x10 = unpark(&cs[2]);
            x11 = unpark(&cs[3]);
            QR2(x2, x6, x10, x14, x3, x7, x11, x15);
            QR2(x0, x5, x10, x15, x1, x6, x11, x12);
            park(&cs[2], x10);
            park(&cs[3], x11);
            x8 = unpark(&cs[0]);
            x9 = unpark(&cs[1]);
            QR2(x2, x7, x8, x13, x3, x4, x9, x14);
        }
        x10 = unpark(&cs[2]);
        x11 = unpark(&cs[3]);

        x0 = _mm256_add_epi32(x0, _mm256_set1_epi32(C0));
        x1 = _mm256_add_epi32(x1, _mm256_set1_epi32(C1));
        x2 = _mm256_add_epi32(x2, _mm256_set1_epi32(C2));
        x3 = _mm256_add_epi32(x3, _mm256_set1_epi32(C3));
        x4 = _mm256_add_epi32(x4, _mm256_set1_epi32((int)key[0]));
        x5 = _mm256_add_epi32(x5, _mm256_set1_epi32((int)key[1]));
        x6 = _mm256_add_epi32(x6, _mm256_set1_epi32((int)key[2]));
        x7 = _mm256_add_epi32(x7, _mm256_set1_epi32((int)key[3]));
        x8 = _mm256_add_epi32(x8, _mm256_set1_epi32((int)key[4]));
        x9 = _mm256_add_epi32(x9, _mm256_set1_epi32((int)key[5]));
        x10 = _mm256_add_epi32(x10, _mm256_set1_epi32((int)key[6]));
        x11 = _mm256_add_epi32(x11, _mm256_set1_epi32((int)key[7]));
        x12 = _mm256_add_epi32(x12, ctr);
        x13 = _mm256_add_epi32(x13, _mm256_set1_epi32((int)nonce[0]));
        x14 = _mm256_add_epi32(x14, _mm256_set1_epi32((int)nonce[1]));
        x15 = _mm256_add_epi32(x15, _mm256_set1_epi32((int)nonce[2]));

        /* Half h of x[4g + j] then holds words 4g..4g+3 of block 4h + j. */
        TRANSPOSE_WORDS(x0, x1, x2, x3);
        TRANSPOSE_WORDS(x4, x5, x6, x7);
        TRANSPOSE_WORDS(x8, x9, x10, x11);
        TRANSPOSE_WORDS(x12, x13, x14, x15);

        if (AC_LIKELY(len >= 512)) {
#define OUT2(j, A, B, C, D)                                                                    \
            xor32(out + 64 * (j), in + 64 * (j), _mm256_permute2x128_si256(A, B, 0x20));       \
            xor32(out + 64 * (j) + 32, in + 64 * (j) + 32, _mm256_permute2x128_si256(C, D, 0x20)); \
            xor32(out + 64 * (4 + j), in + 64 * (4 + j), _mm256_permute2x128_si256(A, B, 0x31)); \
            xor32(out + 64 * (4 + j) + 32, in + 64 * (4 + j) + 32, _mm256_permute2x128_si256(C, D, 0x31))
            OUT2(0, x0, x4, x8, x12);
            OUT2(1, x1, x5, x9, x13);
            OUT2(2, x2, x6, x10, x14);
            OUT2(3, x3, x7, x11, x15);
#undef OUT2
            ctr = _mm256_add_epi32(ctr, _mm256_set1_epi32(8));
            out += 512;
            in += 512;
            len -= 512;
        } else {
#define OUTP(j, A, B, C, D)                                                                    \
            xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x20),                             \
                   _mm256_permute2x128_si256(C, D, 0x20), len, 64 * (j));                      \
            xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x31),                             \
                   _mm256_permute2x128_si256(C, D, 0x31), len, 64 * (4 + j))
            OUTP(0, x0, x4, x8, x12);
            OUTP(1, x1, x5, x9, x13);
            OUTP(2, x2, x6, x10, x14);
            OUTP(3, x3, x7, x11, x15);
#undef OUTP
            len = 0;
        }
    }
    /* The parked words are key material. */
    for (int i = 0; i < 4; i++)
        park(&cs[i], _mm256_setzero_si256());
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
    const __m256i s0 = _mm256_setr_epi32(C0, C1, C2, C3, C0, C1, C2, C3);   \
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
