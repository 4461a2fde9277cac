/* SHA-256 compression, POWER8 vector crypto: vshasigmaw for Σ/σ, 4-word vector message schedule, rounds in one vector lane with K+W a group ahead, vsel for Ch/Maj (FIPS 180-4 section 6.2.2). */
#if !defined(__POWER8_VECTOR__) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "sha256/power8.c needs -mcpu=power8 -mcrypto on little-endian POWER"
#endif

#include <altivec.h>

#include "common.h"
#include "sha256/sha256.h"

typedef __vector unsigned int v32;
typedef __vector unsigned char v8;

/* Section 4.1.2 with one vshasigmaw each: ST=1 is Σ, ST=0 is σ; SIX=0 selects the
 * 0 function and SIX=0xf the 1 function in all four lanes. */
#define SIG0(x) __builtin_crypto_vshasigmaw((x), 1, 0)
#define SIG1(x) __builtin_crypto_vshasigmaw((x), 1, 0xf)
#define sig0(x) __builtin_crypto_vshasigmaw((x), 0, 0)
#define sig1(x) __builtin_crypto_vshasigmaw((x), 0, 0xf)

/* K groups (archcrypt_sha256_K, in FIPS order) through a pointer the compiler cannot
 * see through: with constant addresses gcc hoists the 16 loads out of the block loop
 * and spills them. lxvd2x puts {K1,K0} in doubleword 0 as the hardware sees it, that
 * is elements {K2,K3,K0,K1}; xxswapd gives element j = K[j], and both are off the
 * critical path (K+W is formed a group ahead). lxvd2x is X-form only, so kp advances
 * every fourth group and the offsets 0/16/32/48 stay in loop-invariant registers. */
static inline v32 load_k(const uint32_t *base, long off)
{
    v32 v;
    __asm__("lxvd2x %x0,%1,%2\n\txxswapd %x0,%x0" : "=wa"(v) : "b"(base), "r"(off));
    return v;
}

#define OPAQUE(p) __asm__ volatile("" : "+r"(p))

/* Four big-endian message words: lxvw4x then a full byte reversal leaves
 * little-endian element j = the big-endian word j (derivation: byte k of the
 * wanted register is byte 15-k of lxvw4x's).
 * No memory operand (it would cost an address computation per load): nothing
 * writes the message during a call, and (p, off) names the bytes read. */
static inline v32 load_be(const uint8_t *p, long off, v8 rev)
{
    v8 x;
    __asm__("lxvw4x %x0,%1,%2" : "=wa"(x) : "b"(p), "r"(off));
    return (v32)vec_perm(x, x, rev);
}

/* vsldoi on the register as the hardware sees it, spelled in asm because compilers
 * differ on whether vec_sld is endian adjusted: SLD(hi, lo, 12) = {lo[1], lo[2],
 * lo[3], hi[0]} and SLD(hi, lo, 8) = {lo[2], lo[3], hi[0], hi[1]} in element order. */
#define SLD(hi, lo, n)                                                         \
    __extension__({                                                          \
        v32 r_;                                                              \
        __asm__("vsldoi %0,%1,%2,%3" : "=v"(r_) : "v"(hi), "v"(lo), "n"(n)); \
        r_;                                                                  \
    })

/* One round, state in element 0 (the other lanes carry harmless junk). h becomes the
 * new a and d the new e; the caller rotates the names. */
#define ROUND(a, b, c, d, e, f, g, h, kw)                     \
    do {                                                      \
        v32 t1_ = (h) + (kw);                                 \
        v32 t2_ = SIG0(a) + vec_sel((b), (c), (a) ^ (b));     \
        t1_ += vec_sel((g), (f), (e));                        \
        t1_ += SIG1(e);                                       \
        (d) += t1_;                                           \
        (h) = t1_ + t2_;                                      \
    } while (0)

/* Four rounds from one K+W vector: element 0 in place, the others splatted. */
#define ROUND4(a, b, c, d, e, f, g, h, kw)                    \
    do {                                                      \
        ROUND(a, b, c, d, e, f, g, h, (kw));                  \
        ROUND(h, a, b, c, d, e, f, g, vec_splat((kw), 1));    \
        ROUND(g, h, a, b, c, d, e, f, vec_splat((kw), 2));    \
        ROUND(f, g, h, a, b, c, d, e, vec_splat((kw), 3));    \
    } while (0)

/* W[t..t+3] into x0 (which held W[t-16..t-13]) from x1..x3 = W[t-12..t-1]:
 * W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]. σ1 runs twice, on two words at
 * a time, because W[t+2..t+3] need W[t..t+1]; zero lanes stay zero through σ.
 * p holds W[t-15..t-12], the W[t-7..t-4] of two schedule steps back; it leaves with
 * W[t-7..t-4] for the step after next. */
#define SCHED(x0, x1, x2, x3, p)                              \
    do {                                                      \
        v32 s_ = (x0) + sig0(p);                              \
        (p) = SLD((x3), (x2), 12);                            \
        s_ += (p);                                            \
        s_ += sig1(SLD(zero, (x3), 8));                       \
        (x0) = s_ + sig1(SLD(s_, zero, 8));                   \
    } while (0)

/* Group i: rounds 4i..4i+3 with kw = K+W for them, and K+W for group i+1 from xn. */
#define GROUP(i, a, b, c, d, e, f, g, h, xn)                  \
    do {                                                      \
        v32 nkw_ = load_k(kp, 16 * (((i) + 1) & 3)) + (xn); \
        if ((((i) + 1) & 3) == 3) {                           \
            kp += 16;                                         \
            OPAQUE(kp);                                       \
        }                                                     \
        ROUND4(a, b, c, d, e, f, g, h, kw);                   \
        kw = nkw_;                                            \
    } while (0)

#define GROUP_S(i, a, b, c, d, e, f, g, h, x0, x1, x2, x3, p) \
    do {                                                      \
        SCHED(x0, x1, x2, x3, p);                             \
        GROUP(i, a, b, c, d, e, f, g, h, x0);                 \
    } while (0)

static void sha256_compress(uint32_t H[8], const uint8_t *M, size_t nblocks)
{
    const v8 rev = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    const v32 zero = {0, 0, 0, 0};
    v32 h0 = vec_splats(H[0]), h1 = vec_splats(H[1]), h2 = vec_splats(H[2]), h3 = vec_splats(H[3]);
    v32 h4 = vec_splats(H[4]), h5 = vec_splats(H[5]), h6 = vec_splats(H[6]), h7 = vec_splats(H[7]);

    while (nblocks--) {
        v32 a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
        v32 x0 = load_be(M, 0, rev), x1 = load_be(M, 16, rev);
        v32 x2 = load_be(M, 32, rev), x3 = load_be(M, 48, rev);
        v32 p0 = SLD(x1, x0, 12), p1 = SLD(x2, x1, 12);
        const uint32_t *kp = archcrypt_sha256_K;
        OPAQUE(kp);
        v32 kw = load_k(kp, 0) + x0;

        GROUP(0, a, b, c, d, e, f, g, h, x1);
        GROUP(1, e, f, g, h, a, b, c, d, x2);
        GROUP(2, a, b, c, d, e, f, g, h, x3);
        GROUP_S(3, e, f, g, h, a, b, c, d, x0, x1, x2, x3, p0);
        GROUP_S(4, a, b, c, d, e, f, g, h, x1, x2, x3, x0, p1);
        GROUP_S(5, e, f, g, h, a, b, c, d, x2, x3, x0, x1, p0);
        GROUP_S(6, a, b, c, d, e, f, g, h, x3, x0, x1, x2, p1);
        GROUP_S(7, e, f, g, h, a, b, c, d, x0, x1, x2, x3, p0);
        GROUP_S(8, a, b, c, d, e, f, g, h, x1, x2, x3, x0, p1);
        GROUP_S(9, e, f, g, h, a, b, c, d, x2, x3, x0, x1, p0);
        GROUP_S(10, a, b, c, d, e, f, g, h, x3, x0, x1, x2, p1);
        GROUP_S(11, e, f, g, h, a, b, c, d, x0, x1, x2, x3, p0);
        GROUP_S(12, a, b, c, d, e, f, g, h, x1, x2, x3, x0, p1);
        GROUP_S(13, e, f, g, h, a, b, c, d, x2, x3, x0, x1, p0);
        GROUP_S(14, a, b, c, d, e, f, g, h, x3, x0, x1, x2, p1);
        ROUND4(e, f, g, h, a, b, c, d, kw);

        h0 += a;
        h1 += b;
        h2 += c;
        h3 += d;
        h4 += e;
        h5 += f;
        h6 += g;
        h7 += h;
        M += 64;
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

const sha256_kernel archcrypt_sha256_power8 = {
    .compress = sha256_compress,
};
