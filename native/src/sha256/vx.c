/* SHA-256, z13 vector facility: the message schedule four words at a time in vector registers (verllf, vesrlf, vsldb), W + K to the stack, the 64 rounds in general registers, eight to a loop step so that no variable moves (FIPS 180-4 6.2.2). */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__)
#error "sha256/vx.c needs -march=z13 -mzvector (ISA_FLAGS_vx in native/isa.mk)"
#endif

#include <vecintrin.h>

#include "common.h"
#include "sha256/sha256.h"

typedef __vector unsigned int u32x4;
typedef __vector unsigned char u8x16;

/* Section 4.1.2, four words at once: verllf rotates left, so rotr n is rotl 32 - n. */
static inline u32x4 sigma0v(u32x4 x)
{
    return vec_rli(x, 25) ^ vec_rli(x, 14) ^ (x >> 3);
}

static inline u32x4 sigma1v(u32x4 x)
{
    return vec_rli(x, 15) ^ vec_rli(x, 13) ^ (x >> 10);
}

/* The message is big-endian words: on s390x a plain vector load. */
static inline u32x4 load(const uint8_t *p)
{
    return (u32x4)vec_xl(0, p);
}

/*
 * Section 6.2.2 step 1, W_t = sigma1(W_t-2) + W_t-7 + sigma0(W_t-15) + W_t-16, for words
 * 4j..4j+3 from w[j-4..j-1]. W_t-15 and W_t-7 straddle two vectors (vsldb by a word).
 * The first two words need sigma1 of the last two of w[j-1]; the last two need sigma1 of
 * the first two being computed, so sigma1 runs twice, each time on the half it has.
 */
static inline u32x4 schedule(u32x4 w4, u32x4 w3, u32x4 w2, u32x4 w1)
{
    const u32x4 zero = {0, 0, 0, 0};
    u32x4 s = w4 + sigma0v(vec_sld(w4, w3, 4)) + vec_sld(w2, w1, 4);

    s += vec_sld(sigma1v(w1), zero, 8); /* words 0, 1 complete */
    s += vec_sld(zero, sigma1v(s), 8);  /* words 2, 3 */
    return s;
}

static inline uint32_t Sigma0(uint32_t x)
{
    return rotr32(x, 2) ^ rotr32(x, 13) ^ rotr32(x, 22);
}

static inline uint32_t Sigma1(uint32_t x)
{
    return rotr32(x, 6) ^ rotr32(x, 11) ^ rotr32(x, 25);
}

/* One round with the names of round t; the caller rotates them. Ch(e, f, g) as
 * g ^ (e & (f ^ g)), and Maj(a, b, c) as b ^ ((a ^ b) & (b ^ c)), where b ^ c is the
 * previous round's a ^ b (bc in, the new one out): three operations each. */
#define ROUND(a, b, c, d, e, f, g, h, t)                                                  \
    do {                                                                                  \
        uint32_t ab_ = a ^ b;                                                             \
        h += wk[t] + Sigma1(e) + (g ^ (e & (f ^ g)));                                     \
        d += h;                                                                           \
        h += Sigma0(a) + (b ^ (ab_ & bc));                                                \
        bc = ab_;                                                                         \
    } while (0)

static void sha256_vx_compress(uint32_t H[8], const uint8_t *M, size_t nblocks)
{
    _Alignas(16) uint32_t wk[64];

    while (nblocks--) {
        u32x4 w0 = load(M), w1 = load(M + 16), w2 = load(M + 32), w3 = load(M + 48);

        /* W + K for all 64 rounds, 16 vectors; w0..w3 is a window of the last four,
         * renamed from step to step so that no vector moves. */
#define WK(w, j) vec_xst(w + vec_xl(0, archcrypt_sha256_K + 4 * (j)), 0, wk + 4 * (j))
#define STEP(a, b, c, d, j)                                                               \
    do {                                                                                  \
        WK(a, j);                                                                         \
        a = schedule(a, b, c, d);                                                         \
    } while (0)
        for (int j = 0; j < 12; j += 4) {
            STEP(w0, w1, w2, w3, j + 0);
            STEP(w1, w2, w3, w0, j + 1);
            STEP(w2, w3, w0, w1, j + 2);
            STEP(w3, w0, w1, w2, j + 3);
        }
        WK(w0, 12);
        WK(w1, 13);
        WK(w2, 14);
        WK(w3, 15);
#undef STEP
#undef WK

        uint32_t a = H[0], b = H[1], c = H[2], d = H[3];
        uint32_t e = H[4], f = H[5], g = H[6], h = H[7];
        uint32_t bc = b ^ c;

        for (int t = 0; t < 64; t += 8) {
            ROUND(a, b, c, d, e, f, g, h, t + 0);
            ROUND(h, a, b, c, d, e, f, g, t + 1);
            ROUND(g, h, a, b, c, d, e, f, t + 2);
            ROUND(f, g, h, a, b, c, d, e, t + 3);
            ROUND(e, f, g, h, a, b, c, d, t + 4);
            ROUND(d, e, f, g, h, a, b, c, t + 5);
            ROUND(c, d, e, f, g, h, a, b, t + 6);
            ROUND(b, c, d, e, f, g, h, a, t + 7);
        }

        H[0] += a;
        H[1] += b;
        H[2] += c;
        H[3] += d;
        H[4] += e;
        H[5] += f;
        H[6] += g;
        H[7] += h;
        M += 64;
    }

    /* The schedule is message material, and HMAC's first block is the key. */
    ac_wipe(wk, sizeof wk);
}

const sha256_kernel archcrypt_sha256_vx = {
    .compress = sha256_vx_compress,
};
