/* ChaCha20 AVX2 building blocks shared by chacha20/avx2.c and aead/avx2.c: the 8-block (one state word per ymm) double round, feed-forward, transpose and XOR-out (RFC 8439 2.3-2.4). */
#ifndef ARCHCRYPT_CHACHA20_AVX2_CORE_H
#define ARCHCRYPT_CHACHA20_AVX2_CORE_H

/* A header gets no ISA flags of its own: only files built with ISA_FLAGS_avx2
 * may include it. */
#ifndef __AVX2__
#error "chacha20/avx2_core.h needs -mavx2: include it only from files built with ISA_FLAGS_avx2"
#endif

#include <immintrin.h>

#include "common.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define CHACHA_C0 0x61707865
#define CHACHA_C1 0x3320646e
#define CHACHA_C2 0x79622d32
#define CHACHA_C3 0x6b206574

/* Rotates by whole bytes are one byte shuffle (masks below); 12 and 7 are two
 * shifts and an OR. */
#define ROTN(v, n) _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))

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
    /* The keystream is as secret as the key it came from. */
    _mm256_storeu_si256((__m256i *)(void *)ks, _mm256_setzero_si256());
    __asm__ __volatile__("" : : "r"(ks) : "memory");
}

/* XOR block bytes [off, off + 64) of a group, clipped to the group's len. */
static inline void xor_at(uint8_t *out, const uint8_t *in, __m256i lo, __m256i hi, size_t len,
                          size_t off)
{
    if (len > off)
        xor_upto(out + off, in + off, lo, hi, len - off);
}

/* Values parked on the stack by hand: 16 state words, two temporaries and two
 * shuffle masks do not fit in 16 ymm registers, and the compiler's own spills
 * land in the quarter-round chains. As in OpenSSL's ChaCha20_8x, words a, b, d
 * stay in registers and the four c words live on the stack, two at a time in
 * registers; the c pair in use is the same across the middle of a double round,
 * so each half round swaps the pair once. volatile keeps gcc from undoing it. */
static inline void park(__m256i *slot, __m256i v)
{
    *(volatile __m256i *)slot = v;
}

static inline __m256i unpark(const __m256i *slot)
{
    return *(const volatile __m256i *)slot;
}

/* Two quarter rounds interleaved; masks[0] and masks[1] are the parked rot16 and
 * rot8 shuffles, loaded where used so they do not hold registers through the
 * round. */
#define QR2(masks, a, b, c, d, e, f, g, h)                                           \
    do {                                                                             \
        __m256i m_;                                                                  \
        a = _mm256_add_epi32(a, b);                                                  \
        e = _mm256_add_epi32(e, f);                                                  \
        m_ = unpark(&(masks)[0]);                                                    \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), m_);                         \
        h = _mm256_shuffle_epi8(_mm256_xor_si256(h, e), m_);                         \
        c = _mm256_add_epi32(c, d);                                                  \
        g = _mm256_add_epi32(g, h);                                                  \
        b = ROTN(_mm256_xor_si256(b, c), 12);                                        \
        f = ROTN(_mm256_xor_si256(f, g), 12);                                        \
        a = _mm256_add_epi32(a, b);                                                  \
        e = _mm256_add_epi32(e, f);                                                  \
        m_ = unpark(&(masks)[1]);                                                    \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), m_);                         \
        h = _mm256_shuffle_epi8(_mm256_xor_si256(h, e), m_);                         \
        c = _mm256_add_epi32(c, d);                                                  \
        g = _mm256_add_epi32(g, h);                                                  \
        b = ROTN(_mm256_xor_si256(b, c), 7);                                         \
        f = ROTN(_mm256_xor_si256(f, g), 7);                                         \
    } while (0)

/* The 8-block state x0..x15 (word i of block j in lane j of xi) for blocks
 * ctr..ctr+7, declared in the caller's scope. x10 and x11 start parked in
 * cs[2], cs[3] (see park). */
#define CHACHA8_STATE(key, nonce, ctr, cs)                                                      \
    __m256i x0 = _mm256_set1_epi32(CHACHA_C0), x1 = _mm256_set1_epi32(CHACHA_C1);               \
    __m256i x2 = _mm256_set1_epi32(CHACHA_C2), x3 = _mm256_set1_epi32(CHACHA_C3);               \
    __m256i x4 = _mm256_set1_epi32((int)(key)[0]), x5 = _mm256_set1_epi32((int)(key)[1]);       \
    __m256i x6 = _mm256_set1_epi32((int)(key)[2]), x7 = _mm256_set1_epi32((int)(key)[3]);       \
    __m256i x8 = _mm256_set1_epi32((int)(key)[4]), x9 = _mm256_set1_epi32((int)(key)[5]);       \
    __m256i x10, x11;                                                                           \
    __m256i x12 = (ctr), x13 = _mm256_set1_epi32((int)(nonce)[0]);                              \
    __m256i x14 = _mm256_set1_epi32((int)(nonce)[1]), x15 = _mm256_set1_epi32((int)(nonce)[2]); \
    park(&(cs)[2], _mm256_set1_epi32((int)(key)[6]));                                          \
    park(&(cs)[3], _mm256_set1_epi32((int)(key)[7]))

/* One double round over the CHACHA8_STATE words: columns, then diagonals.
 * HOOK1..HOOK3 are statements run between its quarter-round pairs (the AEAD
 * threads scalar Poly1305 blocks through them; plain ChaCha20 passes nothing). */
#define CHACHA8_DOUBLE_ROUND(masks, cs, HOOK1, HOOK2, HOOK3)                \
    do {                                                                    \
        QR2(masks, x0, x4, x8, x12, x1, x5, x9, x13);                       \
        HOOK1;                                                              \
        park(&(cs)[0], x8);                                                 \
        park(&(cs)[1], x9);                                                 \
        x10 = unpark(&(cs)[2]);                                             \
        x11 = unpark(&(cs)[3]);                                             \
        QR2(masks, x2, x6, x10, x14, x3, x7, x11, x15);                     \
        HOOK2;                                                              \
        QR2(masks, x0, x5, x10, x15, x1, x6, x11, x12);                     \
        park(&(cs)[2], x10);                                                \
        park(&(cs)[3], x11);                                                \
        x8 = unpark(&(cs)[0]);                                              \
        x9 = unpark(&(cs)[1]);                                              \
        HOOK3;                                                              \
        QR2(masks, x2, x7, x8, x13, x3, x4, x9, x14);                       \
    } while (0)

/* After the last double round: bring x10, x11 back and add the input state. */
#define CHACHA8_FEED_FORWARD(key, nonce, ctr, cs)                           \
    do {                                                                    \
        x10 = unpark(&(cs)[2]);                                             \
        x11 = unpark(&(cs)[3]);                                             \
        x0 = _mm256_add_epi32(x0, _mm256_set1_epi32(CHACHA_C0));            \
        x1 = _mm256_add_epi32(x1, _mm256_set1_epi32(CHACHA_C1));            \
        x2 = _mm256_add_epi32(x2, _mm256_set1_epi32(CHACHA_C2));            \
        x3 = _mm256_add_epi32(x3, _mm256_set1_epi32(CHACHA_C3));            \
        x4 = _mm256_add_epi32(x4, _mm256_set1_epi32((int)(key)[0]));        \
        x5 = _mm256_add_epi32(x5, _mm256_set1_epi32((int)(key)[1]));        \
        x6 = _mm256_add_epi32(x6, _mm256_set1_epi32((int)(key)[2]));        \
        x7 = _mm256_add_epi32(x7, _mm256_set1_epi32((int)(key)[3]));        \
        x8 = _mm256_add_epi32(x8, _mm256_set1_epi32((int)(key)[4]));        \
        x9 = _mm256_add_epi32(x9, _mm256_set1_epi32((int)(key)[5]));        \
        x10 = _mm256_add_epi32(x10, _mm256_set1_epi32((int)(key)[6]));      \
        x11 = _mm256_add_epi32(x11, _mm256_set1_epi32((int)(key)[7]));      \
        x12 = _mm256_add_epi32(x12, (ctr));                                 \
        x13 = _mm256_add_epi32(x13, _mm256_set1_epi32((int)(nonce)[0]));    \
        x14 = _mm256_add_epi32(x14, _mm256_set1_epi32((int)(nonce)[1]));    \
        x15 = _mm256_add_epi32(x15, _mm256_set1_epi32((int)(nonce)[2]));    \
    } while (0)

/* Transpose the 8 blocks back to byte order and XOR them over len bytes (all
 * 512 on the fast path; a short last group writes only len bytes). After the
 * transposes half h of x[4g + j] holds words 4g..4g+3 of block 4h + j. */
#define CHACHA8_XOR_OUT(out, in, len)                                                              \
    do {                                                                                           \
        TRANSPOSE_WORDS(x0, x1, x2, x3);                                                           \
        TRANSPOSE_WORDS(x4, x5, x6, x7);                                                           \
        TRANSPOSE_WORDS(x8, x9, x10, x11);                                                         \
        TRANSPOSE_WORDS(x12, x13, x14, x15);                                                       \
        if (AC_LIKELY((len) >= 512)) {                                                             \
            CHACHA8_OUT2_(out, in, 0, x0, x4, x8, x12);                                            \
            CHACHA8_OUT2_(out, in, 1, x1, x5, x9, x13);                                            \
            CHACHA8_OUT2_(out, in, 2, x2, x6, x10, x14);                                           \
            CHACHA8_OUT2_(out, in, 3, x3, x7, x11, x15);                                           \
        } else {                                                                                   \
            CHACHA8_OUTP_(out, in, len, 0, x0, x4, x8, x12);                                       \
            CHACHA8_OUTP_(out, in, len, 1, x1, x5, x9, x13);                                       \
            CHACHA8_OUTP_(out, in, len, 2, x2, x6, x10, x14);                                      \
            CHACHA8_OUTP_(out, in, len, 3, x3, x7, x11, x15);                                      \
        }                                                                                          \
    } while (0)

#define CHACHA8_OUT2_(out, in, j, A, B, C, D)                                                      \
    xor32((out) + 64 * (j), (in) + 64 * (j), _mm256_permute2x128_si256(A, B, 0x20));               \
    xor32((out) + 64 * (j) + 32, (in) + 64 * (j) + 32, _mm256_permute2x128_si256(C, D, 0x20));     \
    xor32((out) + 64 * (4 + j), (in) + 64 * (4 + j), _mm256_permute2x128_si256(A, B, 0x31));       \
    xor32((out) + 64 * (4 + j) + 32, (in) + 64 * (4 + j) + 32, _mm256_permute2x128_si256(C, D, 0x31))

#define CHACHA8_OUTP_(out, in, len, j, A, B, C, D)                                                 \
    xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x20), _mm256_permute2x128_si256(C, D, 0x20),  \
           len, 64 * (j));                                                                         \
    xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x31), _mm256_permute2x128_si256(C, D, 0x31),  \
           len, 64 * (4 + j))

#endif
