/* ChaCha20, SSSE3: 4 blocks per iteration (one state word per xmm, one block per lane, pshufb for rotates by 16/8, c words parked on the stack); 3-block tails as a partial 4-block pass, 1..2 as one block per 4 xmm rows (RFC 8439 2.3-2.4). */
#ifndef __SSSE3__
#error "chacha20/ssse3.c needs -mssse3 (ISA_FLAGS_ssse3 in native/isa.mk)"
#endif

#include <tmmintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865
#define C1 0x3320646e
#define C2 0x79622d32
#define C3 0x6b206574

/* Rotates by whole bytes are one byte shuffle; 12 and 7 are two shifts and an OR. */
#define ROT16(v) _mm_shuffle_epi8(v, rot16)
#define ROT8(v) _mm_shuffle_epi8(v, rot8)
#define ROTN(v, n) _mm_or_si128(_mm_slli_epi32(v, n), _mm_srli_epi32(v, 32 - (n)))

#define QR(a, b, c, d)                                                      \
    do {                                                                    \
        a = _mm_add_epi32(a, b);                                            \
        d = ROT16(_mm_xor_si128(d, a));                                     \
        c = _mm_add_epi32(c, d);                                            \
        b = ROTN(_mm_xor_si128(b, c), 12);                                  \
        a = _mm_add_epi32(a, b);                                            \
        d = ROT8(_mm_xor_si128(d, a));                                      \
        c = _mm_add_epi32(c, d);                                            \
        b = ROTN(_mm_xor_si128(b, c), 7);                                   \
    } while (0)

#define ROT_CONSTANTS                                                                          \
    const __m128i rot16 = _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13); \
    const __m128i rot8 = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14)

/* 4x4 transpose of 32-bit words. */
#define TRANSPOSE_WORDS(a, b, c, d)                                         \
    do {                                                                    \
        __m128i t0_ = _mm_unpacklo_epi32(a, b);                             \
        __m128i t1_ = _mm_unpacklo_epi32(c, d);                             \
        __m128i t2_ = _mm_unpackhi_epi32(a, b);                             \
        __m128i t3_ = _mm_unpackhi_epi32(c, d);                             \
        a = _mm_unpacklo_epi64(t0_, t1_);                                   \
        b = _mm_unpackhi_epi64(t0_, t1_);                                   \
        c = _mm_unpacklo_epi64(t2_, t3_);                                   \
        d = _mm_unpackhi_epi64(t2_, t3_);                                   \
    } while (0)

static inline void xor16(uint8_t *out, const uint8_t *in, __m128i ks)
{
    _mm_storeu_si128((__m128i *)(void *)out,
                     _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)in), ks));
}

/* XOR up to one block held as four rows; only `avail` bytes are touched. */
static inline void xor_upto(uint8_t *out, const uint8_t *in, __m128i r0, __m128i r1,
                            __m128i r2, __m128i r3, size_t avail)
{
    if (avail >= 64) {
        xor16(out, in, r0);
        xor16(out + 16, in + 16, r1);
        xor16(out + 32, in + 32, r2);
        xor16(out + 48, in + 48, r3);
        return;
    }
    uint8_t ks[64];
    _mm_storeu_si128((__m128i *)(void *)ks, r0);
    _mm_storeu_si128((__m128i *)(void *)(ks + 16), r1);
    _mm_storeu_si128((__m128i *)(void *)(ks + 32), r2);
    _mm_storeu_si128((__m128i *)(void *)(ks + 48), r3);
    size_t i = 0;
    for (; i + 16 <= avail; i += 16)
        xor16(out + i, in + i, _mm_loadu_si128((const __m128i *)(const void *)(ks + i)));
    for (; i + 8 <= avail; i += 8) {
        uint64_t a, b;
        memcpy(&a, in + i, 8);
        memcpy(&b, ks + i, 8);
        a ^= b;
        memcpy(out + i, &a, 8);
    }
    for (; i < avail; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
    /* The keystream is as secret as the key it came from. */
    ac_wipe(ks, sizeof ks);
}

/* Values parked on the stack by hand: 16 state words, temporaries and two
 * shuffle masks do not fit in 16 xmm registers, and the compiler's own spills
 * land in the quarter-round chains. Words a, b, d stay in registers and the four
 * c words live on the stack, two at a time in registers; the c pair in use is
 * the same across the middle of a double round, so each half round swaps the
 * pair once (the register plan of OpenSSL's ChaCha20_8x). */
static inline void park(__m128i *slot, __m128i v)
{
    *(volatile __m128i *)slot = v;
}

static inline __m128i unpark(const __m128i *slot)
{
    return *(const volatile __m128i *)slot;
}

/* Two quarter rounds interleaved; the masks are loaded where used so they do
 * not hold registers through the round. */
#define QR2(a, b, c, d, e, f, g, h)                                         \
    do {                                                                    \
        __m128i m_;                                                         \
        a = _mm_add_epi32(a, b);                                            \
        e = _mm_add_epi32(e, f);                                            \
        m_ = unpark(&masks[0]);                                             \
        d = _mm_shuffle_epi8(_mm_xor_si128(d, a), m_);                      \
        h = _mm_shuffle_epi8(_mm_xor_si128(h, e), m_);                      \
        c = _mm_add_epi32(c, d);                                            \
        g = _mm_add_epi32(g, h);                                            \
        b = ROTN(_mm_xor_si128(b, c), 12);                                  \
        f = ROTN(_mm_xor_si128(f, g), 12);                                  \
        a = _mm_add_epi32(a, b);                                            \
        e = _mm_add_epi32(e, f);                                            \
        m_ = unpark(&masks[1]);                                             \
        d = _mm_shuffle_epi8(_mm_xor_si128(d, a), m_);                      \
        h = _mm_shuffle_epi8(_mm_xor_si128(h, e), m_);                      \
        c = _mm_add_epi32(c, d);                                            \
        g = _mm_add_epi32(g, h);                                            \
        b = ROTN(_mm_xor_si128(b, c), 7);                                   \
        f = ROTN(_mm_xor_si128(f, g), 7);                                   \
    } while (0)

/* 4 blocks (256 bytes) per iteration over len bytes; a last group shorter than
 * 256 bytes computes all 4 blocks and writes only len bytes. */
static void blocks4(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    __m128i masks[2], cs[4];
    __m128i ctr = _mm_add_epi32(_mm_set1_epi32((int)counter), _mm_setr_epi32(0, 1, 2, 3));

    park(&masks[0], rot16);
    park(&masks[1], rot8);
    while (len > 0) {
        __m128i x0 = _mm_set1_epi32(C0), x1 = _mm_set1_epi32(C1);
        __m128i x2 = _mm_set1_epi32(C2), x3 = _mm_set1_epi32(C3);
        __m128i x4 = _mm_set1_epi32((int)key[0]), x5 = _mm_set1_epi32((int)key[1]);
        __m128i x6 = _mm_set1_epi32((int)key[2]), x7 = _mm_set1_epi32((int)key[3]);
        __m128i x8 = _mm_set1_epi32((int)key[4]), x9 = _mm_set1_epi32((int)key[5]);
        __m128i x10, x11;
        __m128i x12 = ctr, x13 = _mm_set1_epi32((int)nonce[0]);
        __m128i x14 = _mm_set1_epi32((int)nonce[1]), x15 = _mm_set1_epi32((int)nonce[2]);

        park(&cs[2], _mm_set1_epi32((int)key[6]));
        park(&cs[3], _mm_set1_epi32((int)key[7]));
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

        x0 = _mm_add_epi32(x0, _mm_set1_epi32(C0));
        x1 = _mm_add_epi32(x1, _mm_set1_epi32(C1));
        x2 = _mm_add_epi32(x2, _mm_set1_epi32(C2));
        x3 = _mm_add_epi32(x3, _mm_set1_epi32(C3));
        x4 = _mm_add_epi32(x4, _mm_set1_epi32((int)key[0]));
        x5 = _mm_add_epi32(x5, _mm_set1_epi32((int)key[1]));
        x6 = _mm_add_epi32(x6, _mm_set1_epi32((int)key[2]));
        x7 = _mm_add_epi32(x7, _mm_set1_epi32((int)key[3]));
        x8 = _mm_add_epi32(x8, _mm_set1_epi32((int)key[4]));
        x9 = _mm_add_epi32(x9, _mm_set1_epi32((int)key[5]));
        x10 = _mm_add_epi32(x10, _mm_set1_epi32((int)key[6]));
        x11 = _mm_add_epi32(x11, _mm_set1_epi32((int)key[7]));
        x12 = _mm_add_epi32(x12, ctr);
        x13 = _mm_add_epi32(x13, _mm_set1_epi32((int)nonce[0]));
        x14 = _mm_add_epi32(x14, _mm_set1_epi32((int)nonce[1]));
        x15 = _mm_add_epi32(x15, _mm_set1_epi32((int)nonce[2]));

        /* x[4g + j] then holds words 4g..4g+3 of block j. */
        TRANSPOSE_WORDS(x0, x1, x2, x3);
        TRANSPOSE_WORDS(x4, x5, x6, x7);
        TRANSPOSE_WORDS(x8, x9, x10, x11);
        TRANSPOSE_WORDS(x12, x13, x14, x15);

        if (AC_LIKELY(len >= 256)) {
#define OUT1(j, A, B, C, D)                                                 \
            xor16(out + 64 * (j), in + 64 * (j), A);                        \
            xor16(out + 64 * (j) + 16, in + 64 * (j) + 16, B);              \
            xor16(out + 64 * (j) + 32, in + 64 * (j) + 32, C);              \
            xor16(out + 64 * (j) + 48, in + 64 * (j) + 48, D)
            OUT1(0, x0, x4, x8, x12);
            OUT1(1, x1, x5, x9, x13);
            OUT1(2, x2, x6, x10, x14);
            OUT1(3, x3, x7, x11, x15);
#undef OUT1
            ctr = _mm_add_epi32(ctr, _mm_set1_epi32(4));
            out += 256;
            in += 256;
            len -= 256;
        } else {
            /* 129..255 bytes: blocks 0 and 1 are whole, 2 is partial or whole, 3 may be unused. */
            xor_upto(out, in, x0, x4, x8, x12, 64);
            xor_upto(out + 64, in + 64, x1, x5, x9, x13, 64);
            xor_upto(out + 128, in + 128, x2, x6, x10, x14, len - 128);
            if (len > 192)
                xor_upto(out + 192, in + 192, x3, x7, x11, x15, len - 192);
            len = 0;
        }
    }
    /* The parked words are key material. */
    for (int i = 0; i < 4; i++)
        park(&cs[i], _mm_setzero_si128());
}

/* One block as four rows r0 = constants, r1/r2 = key, r3 = counter, nonce. For
 * the diagonal round rows 0, 2 and 3 rotate so that the column quarter round
 * serves the diagonals; row 1 stays put because it is the last one a quarter
 * round produces, so the shuffles stay off the dependency chain. */
#define DIAG(r0, r2, r3)                                                    \
    do {                                                                    \
        r0 = _mm_shuffle_epi32(r0, 0x93);                                \
        r2 = _mm_shuffle_epi32(r2, 0x39);                                \
        r3 = _mm_shuffle_epi32(r3, 0x4e);                                \
    } while (0)
#define UNDIAG(r0, r2, r3)                                                  \
    do {                                                                    \
        r0 = _mm_shuffle_epi32(r0, 0x39);                                \
        r2 = _mm_shuffle_epi32(r2, 0x93);                                \
        r3 = _mm_shuffle_epi32(r3, 0x4e);                                \
    } while (0)

#define ROWS_INIT(key, nonce, counter)                                      \
    const __m128i s0 = _mm_setr_epi32(C0, C1, C2, C3);                      \
    const __m128i s1 = _mm_loadu_si128((const __m128i *)(const void *)(key)); \
    const __m128i s2 = _mm_loadu_si128((const __m128i *)(const void *)((key) + 4)); \
    const __m128i s3 = _mm_setr_epi32((int)(counter), (int)(nonce)[0], (int)(nonce)[1], (int)(nonce)[2])

/* One block (1..64 bytes). */
static void tail1(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    ROWS_INIT(key, nonce, counter);
    __m128i a0 = s0, a1 = s1, a2 = s2, a3 = s3;

    for (int i = 0; i < 10; i++) {
        QR(a0, a1, a2, a3);
        DIAG(a0, a2, a3);
        QR(a0, a1, a2, a3);
        UNDIAG(a0, a2, a3);
    }
    xor_upto(out, in, _mm_add_epi32(a0, s0), _mm_add_epi32(a1, s1), _mm_add_epi32(a2, s2),
             _mm_add_epi32(a3, s3), len);
}

/* 2 blocks (65..128 bytes) in one pass: two independent row sets, so the latency
 * of one quarter-round chain hides the other's. */
static void tail2(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROT_CONSTANTS;
    ROWS_INIT(key, nonce, counter);
    const __m128i t3 = _mm_add_epi32(s3, _mm_setr_epi32(1, 0, 0, 0));
    __m128i a0 = s0, a1 = s1, a2 = s2, a3 = s3;
    __m128i c0 = s0, c1 = s1, c2 = s2, c3 = t3;

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
    xor16(out, in, _mm_add_epi32(a0, s0));
    xor16(out + 16, in + 16, _mm_add_epi32(a1, s1));
    xor16(out + 32, in + 32, _mm_add_epi32(a2, s2));
    xor16(out + 48, in + 48, _mm_add_epi32(a3, s3));
    xor_upto(out + 64, in + 64, _mm_add_epi32(c0, s0), _mm_add_epi32(c1, s1),
             _mm_add_epi32(c2, s2), _mm_add_epi32(c3, t3), len - 64);
}

static void chacha20_xor_stream_ssse3(uint8_t *out, const uint8_t *in, size_t len,
                                      const uint32_t key[8], const uint32_t nonce[3],
                                      uint32_t counter)
{
    /* Lanes past the end are computed and dropped; each block used has its own
     * counter, and no block is generated twice. A last group of 3..4 blocks costs
     * less as one 4-block pass than as 2+1..2 blocks in rows (measured). */
    size_t bulk = len % 256 > 128 ? len : len - len % 256;

    if (bulk > 0) {
        blocks4(out, in, bulk, key, nonce, counter);
        /* Wraps only when no block remains (the caller's guarantee). */
        counter += (uint32_t)(bulk / 256 * 4);
        out += bulk;
        in += bulk;
        len -= bulk;
    }
    /* 1..128 bytes left. */
    if (len > 64)
        tail2(out, in, len, key, nonce, counter);
    else if (len > 0)
        tail1(out, in, len, key, nonce, counter);
}

const chacha20_kernel archcrypt_chacha20_ssse3 = {
    .xor_stream = chacha20_xor_stream_ssse3,
};
