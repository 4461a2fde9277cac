/* SHA-512 compression, POWER8 vector crypto: vshasigmad for Σ/σ, 2-word vector message schedule, rounds in one vector lane with K+W a group ahead, vsel for Ch/Maj (FIPS 180-4 section 6.4.2). */
#if !defined(__POWER8_VECTOR__) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "sha512/power8.c needs -mcpu=power8 -mcrypto on little-endian POWER"
#endif

#include <altivec.h>

#include "common.h"
#include "sha512/sha512.h"

typedef __vector unsigned long long v64;
typedef __vector unsigned char v8;

/* Section 4.1.3 with one vshasigmad each: ST=1 is Σ, ST=0 is σ; SIX=0 selects the
 * 0 function and SIX=0xf the 1 function in both lanes. */
#define SIG0(x) __builtin_crypto_vshasigmad((x), 1, 0)
#define SIG1(x) __builtin_crypto_vshasigmad((x), 1, 0xf)
#define sig0(x) __builtin_crypto_vshasigmad((x), 0, 0)
#define sig1(x) __builtin_crypto_vshasigmad((x), 0, 0xf)

/* K pairs (archcrypt_sha512_K, in FIPS order) through a pointer the compiler cannot
 * see through: with constant addresses gcc hoists all 40 loads out of the block loop
 * and spills them. lvx, not lxvd2x: in little-endian mode it puts the doubleword at
 * the lower address in element 0, so FIPS order needs no xxswapd (lvx ignores the
 * low 4 address bits; the table is 64-byte aligned). X-form only, so kp advances
 * every fourth pair and the offsets 0/16/32/48 stay in loop-invariant registers
 * (1.25 instructions a load). */
static inline v64 lvx_off(const uint64_t *base, long off)
{
    v64 v;
    __asm__("lvx %0,%1,%2" : "=v"(v) : "b"(base), "r"(off));
    return v;
}

#define OPAQUE(p) __asm__ volatile("" : "+r"(p))

/* Two big-endian message words: lxvd2x then a full byte reversal leaves
 * little-endian element j = the big-endian doubleword j.
 * No memory operand (it would cost an address computation per load): nothing
 * writes the message during a call, and (p, off) names the bytes read. */
static inline v64 load_be(const uint8_t *p, long off, v8 rev)
{
    v8 x;
    __asm__("lxvd2x %x0,%1,%2" : "=wa"(x) : "b"(p), "r"(off));
    return (v64)vec_perm(x, x, rev);
}

/* vsldoi on the register as the hardware sees it, spelled in asm because compilers
 * differ on whether vec_sld is endian adjusted: SLD(hi, lo) = {lo[1], hi[0]} in
 * element order. */
#define SLD(hi, lo)                                                            \
    __extension__({                                                          \
        v64 r_;                                                              \
        __asm__("vsldoi %0,%1,%2,8" : "=v"(r_) : "v"(hi), "v"(lo));          \
        r_;                                                                  \
    })

/* One round, state in element 0 (the other lane carries harmless junk). h becomes
 * the new a and d the new e; the caller rotates the names. */
#define ROUND(a, b, c, d, e, f, g, h, kw)                     \
    do {                                                      \
        v64 t1_ = (h) + (kw);                                 \
        v64 t2_ = SIG0(a) + vec_sel((b), (c), (a) ^ (b));     \
        t1_ += vec_sel((g), (f), (e));                        \
        t1_ += SIG1(e);                                       \
        (d) += t1_;                                           \
        (h) = t1_ + t2_;                                      \
    } while (0)

#define ROUND2(a, b, c, d, e, f, g, h, kw)                    \
    do {                                                      \
        ROUND(a, b, c, d, e, f, g, h, (kw));                  \
        ROUND(h, a, b, c, d, e, f, g, vec_splat((kw), 1));    \
    } while (0)

/* W[t..t+1] into y0 (which held W[t-16..t-15]) from y1..y7 = W[t-14..t-1]:
 * W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]. */
#define SCHED(y0, y1, y4, y5, y7)                             \
    do {                                                      \
        v64 s_ = (y0) + sig0(SLD((y1), (y0)));                \
        s_ += SLD((y5), (y4));                                \
        (y0) = s_ + sig1(y7);                                 \
    } while (0)

/* Group i: rounds 2i, 2i+1 with kw = K+W for them, and K+W for group i+1 from yn. */
#define GROUP(i, a, b, c, d, e, f, g, h, yn)                  \
    do {                                                      \
        v64 nkw_ = lvx_off(kp, 16 * (((i) + 1) & 3)) + (yn); \
        if ((((i) + 1) & 3) == 3) {                           \
            kp += 8;                                          \
            OPAQUE(kp);                                       \
        }                                                     \
        ROUND2(a, b, c, d, e, f, g, h, kw);                   \
        kw = nkw_;                                            \
    } while (0)

#define GROUP_S(i, a, b, c, d, e, f, g, h, y0, y1, y2, y3, y4, y5, y6, y7) \
    do {                                                      \
        SCHED(y0, y1, y4, y5, y7);                            \
        GROUP(i, a, b, c, d, e, f, g, h, y0);                 \
    } while (0)

/* Groups i..i+7 (i = 7 mod 8: the state names and the schedule ring both cycle). */
#define GROUPS8(i)                                                                  \
    do {                                                                            \
        GROUP_S((i), c, d, e, f, g, h, a, b, y0, y1, y2, y3, y4, y5, y6, y7);       \
        GROUP_S((i) + 1, a, b, c, d, e, f, g, h, y1, y2, y3, y4, y5, y6, y7, y0);   \
        GROUP_S((i) + 2, g, h, a, b, c, d, e, f, y2, y3, y4, y5, y6, y7, y0, y1);   \
        GROUP_S((i) + 3, e, f, g, h, a, b, c, d, y3, y4, y5, y6, y7, y0, y1, y2);   \
        GROUP_S((i) + 4, c, d, e, f, g, h, a, b, y4, y5, y6, y7, y0, y1, y2, y3);   \
        GROUP_S((i) + 5, a, b, c, d, e, f, g, h, y5, y6, y7, y0, y1, y2, y3, y4);   \
        GROUP_S((i) + 6, g, h, a, b, c, d, e, f, y6, y7, y0, y1, y2, y3, y4, y5);   \
        GROUP_S((i) + 7, e, f, g, h, a, b, c, d, y7, y0, y1, y2, y3, y4, y5, y6);   \
    } while (0)

static void sha512_compress(uint64_t H[8], const uint8_t *M, size_t nblocks)
{
    const v8 rev = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    v64 h0 = vec_splats(H[0]), h1 = vec_splats(H[1]), h2 = vec_splats(H[2]), h3 = vec_splats(H[3]);
    v64 h4 = vec_splats(H[4]), h5 = vec_splats(H[5]), h6 = vec_splats(H[6]), h7 = vec_splats(H[7]);

    while (nblocks--) {
        v64 a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
        v64 y0 = load_be(M, 0, rev), y1 = load_be(M, 16, rev);
        v64 y2 = load_be(M, 32, rev), y3 = load_be(M, 48, rev);
        v64 y4 = load_be(M, 64, rev), y5 = load_be(M, 80, rev);
        v64 y6 = load_be(M, 96, rev), y7 = load_be(M, 112, rev);
        const uint64_t *kp = archcrypt_sha512_K;
        OPAQUE(kp);
        v64 kw = lvx_off(kp, 0) + y0;

        GROUP(0, a, b, c, d, e, f, g, h, y1);
        GROUP(1, g, h, a, b, c, d, e, f, y2);
        GROUP(2, e, f, g, h, a, b, c, d, y3);
        GROUP(3, c, d, e, f, g, h, a, b, y4);
        GROUP(4, a, b, c, d, e, f, g, h, y5);
        GROUP(5, g, h, a, b, c, d, e, f, y6);
        GROUP(6, e, f, g, h, a, b, c, d, y7);
        GROUPS8(7);
        GROUPS8(15);
        GROUPS8(23);
        GROUPS8(31);
        ROUND2(c, d, e, f, g, h, a, b, kw);

        h0 += a;
        h1 += b;
        h2 += c;
        h3 += d;
        h4 += e;
        h5 += f;
        h6 += g;
        h7 += h;
        M += 128;
    }

    H[0] = vec_extract(h0, 0);
    H[1] = vec_extract(h1, 0);
    H[2] = vec_extract(h2, 0);
    H[3] = vec_extract(h3, 0);
    H[4] = vec_extract(h4, 0);
    H[5] = vec_extract(h5, 0);
    H[6] = vec_extract(h6, 0);
    H[7] = vec_extract(h7, 0);
}

const sha512_kernel archcrypt_sha512_power8 = {
    .compress = sha512_compress,
};
