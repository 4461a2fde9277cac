/* ChaCha20-Poly1305, AVX2 + BMI2: 8-block AVX2 ChaCha20 stitched with scalar radix-2^64 Poly1305 per 512-byte step (the integer units hash one step of ciphertext while the vector units run the next step's rounds); short messages go to the composed row (RFC 8439 2.8). */
#ifndef __AVX2__
#error "aead/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/Makefile)"
#endif
#ifndef __BMI2__
#error "aead/avx2.c needs -mbmi2 (ISA_FLAGS_avx2 in native/Makefile)"
#endif

#include <immintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"
#include "poly1305/scalar64.h"
#include "aead/aead.h"

/* Below this the composed row (2-block / 4-block ChaCha20 tails, no 8-lane
 * waste) is used; at 1 KiB and up the stitched loop wins (measured). Any value
 * >= 1 is correct (tested with 1). */
#ifndef STITCH_MIN
#define STITCH_MIN 1024
#endif

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865
#define C1 0x3320646e
#define C2 0x79622d32
#define C3 0x6b206574

#define ROTN(v, n) _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))

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
    uint64_t ks[4];
    _mm256_storeu_si256((__m256i *)(void *)ks, lo);
    const uint8_t *kb = (const uint8_t *)ks;
    for (size_t i = 0; i < avail; i++)
        out[i] = (uint8_t)(in[i] ^ kb[i]);
    p64_wipe(ks, sizeof ks);
}

static inline void xor_at(uint8_t *out, const uint8_t *in, __m256i lo, __m256i hi, size_t len,
                          size_t off)
{
    if (len > off)
        xor_upto(out + off, in + off, lo, hi, len - off);
}

/* See chacha20/avx2.c: words a, b, d in registers, the c words parked on the
 * stack two at a time, masks loaded where used. */
static inline void park(__m256i *slot, __m256i v)
{
    *(volatile __m256i *)slot = v;
}

static inline __m256i unpark(const __m256i *slot)
{
    return *(const volatile __m256i *)slot;
}

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

/* The scalar Poly1305 state carried through the stitched loop. */
typedef struct {
    uint64_t h0, h1, h2, r0, r1, s1;
} mac_regs;

/* One full 16-byte block (padbit 1). */
static inline __attribute__((always_inline)) void mac_block(mac_regs *m, const uint8_t *p)
{
    /* p64_mul in one asm block (same bounds): gcc 12 spilled the
     * intrinsic version's carries to memory inside the vector loop. */
    uint64_t h0 = m->h0, h1 = m->h1, h2 = m->h2, t0, t1, t2, t3, t4, t5;

    __asm__("addq 0(%[p]), %[h0]\n\t"
            "adcq 8(%[p]), %[h1]\n\t"
            "adcq $1, %[h2]\n\t"
            "movq %[h0], %%rdx\n\t"
            "mulxq %[r0], %[t0], %[t1]\n\t"
            "mulxq %[r1], %[t2], %[t3]\n\t"
            "movq %[h1], %%rdx\n\t"
            "mulxq %[s1], %[t4], %[t5]\n\t"
            "addq %[t4], %[t0]\n\t"
            "adcq %[t5], %[t1]\n\t"
            "mulxq %[r0], %[t4], %[t5]\n\t"
            "addq %[t4], %[t2]\n\t"
            "adcq %[t5], %[t3]\n\t"
            "movq %[h2], %[t4]\n\t"
            "imulq %[s1], %[t4]\n\t"
            "addq %[t4], %[t2]\n\t"
            "adcq $0, %[t3]\n\t"
            "addq %[t1], %[t2]\n\t"
            "adcq $0, %[t3]\n\t"
            "imulq %[r0], %[h2]\n\t"
            "addq %[h2], %[t3]\n\t"
            "movq %[t3], %[h2]\n\t"
            "andq $3, %[h2]\n\t"
            "movq %[t3], %[t4]\n\t"
            "shrq $2, %[t4]\n\t"
            "andq $-4, %[t3]\n\t"
            "addq %[t4], %[t3]\n\t"
            "addq %[t3], %[t0]\n\t"
            "adcq $0, %[t2]\n\t"
            "adcq $0, %[h2]\n\t"
            "movq %[t0], %[h0]\n\t"
            "movq %[t2], %[h1]"
            : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [t0] "=&r"(t0), [t1] "=&r"(t1),
              [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5)
            : [p] "r"(p), "m"(*(const uint8_t(*)[16])p), [r0] "rm"(m->r0), [r1] "rm"(m->r1),
              [s1] "rm"(m->s1)
            : "rdx", "cc");
    m->h0 = h0;
    m->h1 = h1;
    m->h2 = h2;
}

/* Blocks [lo, hi) of mac, clipped to nb (constant 32 in the hot loop). */
#define MAC_RANGE(lo, hi)                                                   \
    do {                                                                    \
        for (size_t q_ = (lo); q_ < (size_t)(hi) && q_ < nb; q_++)          \
            mac_block(m, mac + 16 * q_);                                    \
    } while (0)

/* One 8-block step: blocks ctr..ctr+7 XORed over len (<= 512) bytes, while the
 * first nb (<= 32) 16-byte blocks at mac go into the MAC, three per double
 * round. The MAC loads come before this step's stores in program order, so
 * mac == in with out == in is safe (open). */
static inline __attribute__((always_inline)) void step8(uint8_t *out, const uint8_t *in, size_t len,
                                                        const uint32_t key[8],
                                                        const uint32_t nonce[3], __m256i ctr,
                                                        __m256i masks[2], __m256i cs[4],
                                                        mac_regs *m, const uint8_t *mac,
                                                        size_t nb)
{
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
#pragma GCC unroll 2
    for (int i = 0; i < 10; i++) {
        QR2(x0, x4, x8, x12, x1, x5, x9, x13);
        MAC_RANGE(3 * i, 3 * i + 1);
        park(&cs[0], x8);
        park(&cs[1], x9);
        x10 = unpark(&cs[2]);
        x11 = unpark(&cs[3]);
        QR2(x2, x6, x10, x14, x3, x7, x11, x15);
        MAC_RANGE(3 * i + 1, 3 * i + 2);
        QR2(x0, x5, x10, x15, x1, x6, x11, x12);
        park(&cs[2], x10);
        park(&cs[3], x11);
        x8 = unpark(&cs[0]);
        x9 = unpark(&cs[1]);
        MAC_RANGE(3 * i + 2, 3 * i + 3);
        QR2(x2, x7, x8, x13, x3, x4, x9, x14);
    }
    x10 = unpark(&cs[2]);
    x11 = unpark(&cs[3]);
    MAC_RANGE(30, 31);

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
    MAC_RANGE(31, 32);

    TRANSPOSE_WORDS(x0, x1, x2, x3);
    TRANSPOSE_WORDS(x4, x5, x6, x7);
    TRANSPOSE_WORDS(x8, x9, x10, x11);
    TRANSPOSE_WORDS(x12, x13, x14, x15);

    if (AC_LIKELY(len >= 512)) {
#define OUT2(j, A, B, C, D)                                                                    \
        xor32(out + 64 * (j), in + 64 * (j), _mm256_permute2x128_si256(A, B, 0x20));           \
        xor32(out + 64 * (j) + 32, in + 64 * (j) + 32, _mm256_permute2x128_si256(C, D, 0x20)); \
        xor32(out + 64 * (4 + j), in + 64 * (4 + j), _mm256_permute2x128_si256(A, B, 0x31));   \
        xor32(out + 64 * (4 + j) + 32, in + 64 * (4 + j) + 32, _mm256_permute2x128_si256(C, D, 0x31))
        OUT2(0, x0, x4, x8, x12);
        OUT2(1, x1, x5, x9, x13);
        OUT2(2, x2, x6, x10, x14);
        OUT2(3, x3, x7, x11, x15);
#undef OUT2
    } else {
#define OUTP(j, A, B, C, D)                                                                    \
        xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x20),                                 \
               _mm256_permute2x128_si256(C, D, 0x20), len, 64 * (j));                          \
        xor_at(out, in, _mm256_permute2x128_si256(A, B, 0x31),                                 \
               _mm256_permute2x128_si256(C, D, 0x31), len, 64 * (4 + j))
        OUTP(0, x0, x4, x8, x12);
        OUTP(1, x1, x5, x9, x13);
        OUTP(2, x2, x6, x10, x14);
        OUTP(3, x3, x7, x11, x15);
#undef OUTP
    }
}

/* Absorb len bytes as RFC 8439 2.8 pads them: whole blocks, then the rest
 * zero-padded to 16 as one more full block. */
static void mac_padded(mac_regs *m, const uint8_t *p, size_t len)
{
    while (len >= 16) {
        mac_block(m, p);
        p += 16;
        len -= 16;
    }
    if (len > 0) {
        uint64_t blk[2] = {0, 0};
        memcpy(blk, p, len);
        mac_block(m, (const uint8_t *)blk);
        p64_wipe(blk, sizeof blk);
    }
}

typedef enum { SEAL, OPEN } direction;

static __attribute__((noinline)) void stitched(direction dir, uint8_t *out, uint8_t tag[16],
                                               const uint8_t *in, size_t len,
                                               const uint8_t *aad, size_t aad_len,
                                               const uint32_t key[8], const uint32_t nonce[3])
{
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                           2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
                                          3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    __m256i masks[2], cs[4];
    __m256i ctr = _mm256_add_epi32(_mm256_set1_epi32(1), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i eight = _mm256_set1_epi32(8);
    uint64_t otk[4] = {0, 0, 0, 0}, lengths[2];
    mac_regs m;

    /* RFC 8439 2.6: the one-time key is the first 32 bytes of block 0. */
    archcrypt_chacha20_avx2.xor_stream((uint8_t *)otk, (const uint8_t *)otk, sizeof otk, key,
                                       nonce, 0);
    m.h0 = m.h1 = m.h2 = 0;
    m.r0 = load64_le((const uint8_t *)&otk[0]) & 0x0ffffffc0fffffffu;
    m.r1 = load64_le((const uint8_t *)&otk[1]) & 0x0ffffffc0ffffffcu;
    m.s1 = m.r1 + (m.r1 >> 2);

    mac_padded(&m, aad, aad_len);

    park(&masks[0], rot16);
    park(&masks[1], rot8);

    size_t rem = len % 512;
    const uint8_t *end = in + (len - rem);

    if (dir == SEAL) {
        /* Step k hashes the ciphertext of step k - 1 (already in L1). */
        size_t prev = 0; /* blocks of the previous step still to hash: 0 or 32 */

        if (in != end) {
            step8(out, in, 512, key, nonce, ctr, masks, cs, &m, out, 0);
            ctr = _mm256_add_epi32(ctr, eight);
            in += 512;
            out += 512;
            prev = 32;
        }
        while (in != end) {
            step8(out, in, 512, key, nonce, ctr, masks, cs, &m, out - 512, 32);
            ctr = _mm256_add_epi32(ctr, eight);
            in += 512;
            out += 512;
        }
        if (rem > 0) {
            step8(out, in, rem, key, nonce, ctr, masks, cs, &m, out - 16 * prev, prev);
            mac_padded(&m, out, rem);
        } else if (prev > 0) {
            mac_padded(&m, out - 512, 512);
        }
    } else {
        /* Hash this step's ciphertext, then decrypt it. */
        while (in != end) {
            step8(out, in, 512, key, nonce, ctr, masks, cs, &m, in, 32);
            ctr = _mm256_add_epi32(ctr, eight);
            in += 512;
            out += 512;
        }
        if (rem > 0) {
            /* Whole blocks ride along with the rounds; the partial one is
             * copied first, as the XOR may overwrite it in place. */
            uint64_t last[2] = {0, 0};
            size_t nb = rem / 16, part = rem % 16;

            memcpy(last, in + 16 * nb, part);
            step8(out, in, rem, key, nonce, ctr, masks, cs, &m, in, nb);
            if (part > 0)
                mac_block(&m, (const uint8_t *)last);
            p64_wipe(last, sizeof last);
        }
    }

    lengths[0] = (uint64_t)aad_len;
    lengths[1] = (uint64_t)len;
    mac_block(&m, (const uint8_t *)lengths);

    {
        uint64_t h[3] = {m.h0, m.h1, m.h2}, t0, t1;

        p64_reduce_full(h);
        p64_adc(p64_adc(0, h[0], load64_le((const uint8_t *)&otk[2]), &t0), h[1],
                load64_le((const uint8_t *)&otk[3]), &t1);
        store64_le(tag, t0);
        store64_le(tag + 8, t1);
        p64_wipe(h, sizeof h);
    }
    p64_wipe(otk, sizeof otk);
    for (int i = 0; i < 4; i++)
        park(&cs[i], _mm256_setzero_si256());
}

static void avx2_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                      const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                      const uint32_t nonce[3])
{
    if (len < STITCH_MIN)
        archcrypt_chacha20_poly1305_composed.seal(out, tag, in, len, aad, aad_len, key, nonce);
    else
        stitched(SEAL, out, tag, in, len, aad, aad_len, key, nonce);
}

static void avx2_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                      const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                      const uint32_t nonce[3])
{
    if (len < STITCH_MIN)
        archcrypt_chacha20_poly1305_composed.open(out, tag, in, len, aad, aad_len, key, nonce);
    else
        stitched(OPEN, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_avx2 = {
    .seal = avx2_seal,
    .open = avx2_open,
};
