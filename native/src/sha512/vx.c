/* SHA-512, z13 vector facility: the message schedule two doublewords at a time in vector registers (verllg, vesrlg, vsldb), W + K to the stack, the 80 rounds in general registers, eight to a loop step so that no variable moves (FIPS 180-4 6.4.2). */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__)
#error "sha512/vx.c needs -march=z13 -mzvector (ISA_FLAGS_vx in native/isa.mk)"
#endif

#include <vecintrin.h>

#include "common.h"
#include "sha512/sha512.h"

typedef __vector unsigned long long u64x2;

/* Section 4.1.3, two words at once: verllg rotates left, so rotr n is rotl 64 - n. */
static inline u64x2 sigma0v(u64x2 x)
{
    return vec_rli(x, 63) ^ vec_rli(x, 56) ^ (x >> 7);
}

static inline u64x2 sigma1v(u64x2 x)
{
    return vec_rli(x, 45) ^ vec_rli(x, 3) ^ (x >> 6);
}

/* The message is big-endian doublewords: on s390x a plain vector load. */
static inline u64x2 load(const uint8_t *p)
{
    return (u64x2)vec_xl(0, p);
}

/* Section 6.4.2 step 1 for words 2j, 2j+1 from w[j-8..j-1]: W_t-2 is w[j-1] whole (two
 * words per vector: no word of the pair depends on the other), W_t-15 and W_t-7 straddle
 * two vectors (vsldb by a doubleword). */
static inline u64x2 schedule(u64x2 w8, u64x2 w7, u64x2 w4, u64x2 w3, u64x2 w1)
{
    return w8 + sigma0v(vec_sld(w8, w7, 8)) + vec_sld(w4, w3, 8) + sigma1v(w1);
}

static inline uint64_t Sigma0(uint64_t x)
{
    return rotr64(x, 28) ^ rotr64(x, 34) ^ rotr64(x, 39);
}

static inline uint64_t Sigma1(uint64_t x)
{
    return rotr64(x, 14) ^ rotr64(x, 18) ^ rotr64(x, 41);
}

/* One round with the names of round t; the caller rotates them. Ch(e, f, g) as
 * g ^ (e & (f ^ g)), and Maj(a, b, c) as b ^ ((a ^ b) & (b ^ c)), where b ^ c is the
 * previous round's a ^ b (bc in, the new one out): three operations each. */
#define ROUND(a, b, c, d, e, f, g, h, t)                                                  \
    do {                                                                                  \
        uint64_t ab_ = a ^ b;                                                             \
        h += wk[t] + Sigma1(e) + (g ^ (e & (f ^ g)));                                     \
        d += h;                                                                           \
        h += Sigma0(a) + (b ^ (ab_ & bc));                                                \
        bc = ab_;                                                                         \
    } while (0)

static void sha512_vx_compress(uint64_t H[8], const uint8_t *M, size_t nblocks)
{
    _Alignas(16) uint64_t wk[80];

    while (nblocks--) {
        u64x2 w0 = load(M), w1 = load(M + 16), w2 = load(M + 32), w3 = load(M + 48);
        u64x2 w4 = load(M + 64), w5 = load(M + 80), w6 = load(M + 96), w7 = load(M + 112);

        /* W + K for all 80 rounds, 40 vectors; w0..w7 is a window of the last eight,
         * renamed from step to step so that no vector moves. */
#define WK(w, j) vec_xst(w + vec_xl(0, (const unsigned long long *)archcrypt_sha512_K + 2 * (j)), \
                         0, (unsigned long long *)wk + 2 * (j))
#define STEP(a, b, e, f, h, j)                                                            \
    do {                                                                                  \
        WK(a, j);                                                                         \
        a = schedule(a, b, e, f, h);                                                      \
    } while (0)
        for (int j = 0; j < 32; j += 8) {
            STEP(w0, w1, w4, w5, w7, j + 0);
            STEP(w1, w2, w5, w6, w0, j + 1);
            STEP(w2, w3, w6, w7, w1, j + 2);
            STEP(w3, w4, w7, w0, w2, j + 3);
            STEP(w4, w5, w0, w1, w3, j + 4);
            STEP(w5, w6, w1, w2, w4, j + 5);
            STEP(w6, w7, w2, w3, w5, j + 6);
            STEP(w7, w0, w3, w4, w6, j + 7);
        }
        WK(w0, 32);
        WK(w1, 33);
        WK(w2, 34);
        WK(w3, 35);
        WK(w4, 36);
        WK(w5, 37);
        WK(w6, 38);
        WK(w7, 39);
#undef STEP
#undef WK

        uint64_t a = H[0], b = H[1], c = H[2], d = H[3];
        uint64_t e = H[4], f = H[5], g = H[6], h = H[7];
        uint64_t bc = b ^ c;

        for (int t = 0; t < 80; t += 8) {
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
        M += 128;
    }

    /* The schedule is message material, and HMAC's first block is the key. */
    ac_wipe(wk, sizeof wk);
}

const sha512_kernel archcrypt_sha512_vx = {
    .compress = sha512_vx_compress,
};
