/* SHA-512 compression for AArch64 cores without the SHA512 instructions (the neon slug's base ISA, scalar): 80 rounds unrolled in 64-bit registers with every rotate folded into eor's shifted operand, the schedule a 16-word window in registers (FIPS 180-4 section 6.4.2). */
#if !defined(__aarch64__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sha512/neon.c is for little-endian AArch64 (ISA_FLAGS_neon in native/Makefile)"
#endif

#include "common.h"
#include "sha512/sha512.h"

extern const sha512_kernel archcrypt_sha512_neon;

/*
 * portable.c spells out the standard: an 80-word schedule in memory, wiped per call (ac_wipe
 * writes a byte at a time), ~45 instructions a round under qemu. Here a round is ~18:
 * Σ1 and Σ0 are a ror and two eor-with-ror each; Ch adds its two disjoint halves (e & f,
 * g & ~e via bic) straight into T1; Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b reuses a ^ b as
 * the next round's b ^ c. The schedule lives in sixteen registers (W[t] replaces W[t-16]),
 * so no schedule word is stored and there is nothing to wipe.
 */
#define AC_AI static inline __attribute__((always_inline))

AC_AI uint64_t ror(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* Section 4.1.3. */
#define SIGMA0(x) (ror((x), 28) ^ ror((x), 34) ^ ror((x), 39))
#define SIGMA1(x) (ror((x), 14) ^ ror((x), 18) ^ ror((x), 41))
#define sigma0(x) (ror((x), 1) ^ ror((x), 8) ^ ((x) >> 7))
#define sigma1(x) (ror((x), 19) ^ ror((x), 61) ^ ((x) >> 6))

/* One round t with W[t] in w; bc holds b ^ c and leaves with a ^ b (the next b ^ c). */
#define ROUND(a, b, c, d, e, f, g, h, w, t)                                              \
    do {                                                                                 \
        const uint64_t ab_ = (a) ^ (b);                                                  \
        (h) += SIGMA1(e) + ((e) & (f)) + ((g) & ~(e)) + archcrypt_sha512_K[t] + (w);     \
        (d) += (h);                                                                      \
        (h) += SIGMA0(a) + ((ab_ & bc) ^ (b));                                           \
        bc = ab_;                                                                        \
    } while (0)

/* W[t] for t >= 16 into the slot of W[t-16]. */
#define SCHED(t) \
    (W[(t) & 15] += sigma1(W[((t) - 2) & 15]) + W[((t) - 7) & 15] + sigma0(W[((t) - 15) & 15]))

/* Eight rounds from t; the variables rotate by renaming, not by moves. */
#define ROUNDS8(t, S)                                          \
    do {                                                       \
        S((t) + 0); ROUND(a, b, c, d, e, f, g, h, W[((t) + 0) & 15], (t) + 0); \
        S((t) + 1); ROUND(h, a, b, c, d, e, f, g, W[((t) + 1) & 15], (t) + 1); \
        S((t) + 2); ROUND(g, h, a, b, c, d, e, f, W[((t) + 2) & 15], (t) + 2); \
        S((t) + 3); ROUND(f, g, h, a, b, c, d, e, W[((t) + 3) & 15], (t) + 3); \
        S((t) + 4); ROUND(e, f, g, h, a, b, c, d, W[((t) + 4) & 15], (t) + 4); \
        S((t) + 5); ROUND(d, e, f, g, h, a, b, c, W[((t) + 5) & 15], (t) + 5); \
        S((t) + 6); ROUND(c, d, e, f, g, h, a, b, W[((t) + 6) & 15], (t) + 6); \
        S((t) + 7); ROUND(b, c, d, e, f, g, h, a, W[((t) + 7) & 15], (t) + 7); \
    } while (0)

#define NO_SCHED(t) ((void)0)

static void sha512_compress(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    while (nblocks--) {
        uint64_t W[16];
        uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
        uint64_t bc = b ^ c;

        for (int t = 0; t < 16; t++) {
            uint64_t w;

            memcpy(&w, in + 8 * t, 8);
            W[t] = __builtin_bswap64(w); /* big-endian words (rev) */
        }
        ROUNDS8(0, NO_SCHED);
        ROUNDS8(8, NO_SCHED);
        ROUNDS8(16, SCHED);
        ROUNDS8(24, SCHED);
        ROUNDS8(32, SCHED);
        ROUNDS8(40, SCHED);
        ROUNDS8(48, SCHED);
        ROUNDS8(56, SCHED);
        ROUNDS8(64, SCHED);
        ROUNDS8(72, SCHED);

        H[0] += a;
        H[1] += b;
        H[2] += c;
        H[3] += d;
        H[4] += e;
        H[5] += f;
        H[6] += g;
        H[7] += h;
        in += 128;
    }
}

const sha512_kernel archcrypt_sha512_neon = {
    .compress = sha512_compress,
};
