/* SHA-512 compression for AArch64 cores without the SHA512 instructions, NEON: the message schedule two words at a time in vector registers (W + K into a 16-entry ring), the 80 rounds scalar with every rotate folded into eor's shifted operand (FIPS 180-4 section 6.4.2). */
#if !defined(__aarch64__) || !defined(__ARM_NEON) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sha512/neon.c needs little-endian AArch64 with ASIMD (ISA_FLAGS_neon in native/Makefile)"
#endif

#include <arm_neon.h>

#include "common.h"
#include "sha512/sha512.h"

/*
 * portable.c spells out the standard: an 80-word schedule in memory, wiped per call (ac_wipe
 * writes a byte at a time), ~45 instructions a round under qemu. Here a round is ~16: Σ1
 * and Σ0 are a ror and two eor-with-ror each; Ch adds its two disjoint halves (e & f,
 * g & ~e via bic) straight into T1; Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b reuses a ^ b as
 * the next round's b ^ c; W + K comes from a 16-entry ring on the stack, one ldr. The
 * vector unit fills the ring 16 words ahead, two words per step (~11 instructions a word;
 * in general registers the schedule needed all 16 words live beside the state and gcc
 * spilled: 18.0 instructions a byte against 17.0 now). The ring is wiped before returning.
 */

AC_INLINE uint64_t ror(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* Section 4.1.3. */
#define SIGMA0(x) (ror((x), 28) ^ ror((x), 34) ^ ror((x), 39))
#define SIGMA1(x) (ror((x), 14) ^ ror((x), 18) ^ ror((x), 41))

/* One round with wk = W[t] + K[t]; bc holds b ^ c and leaves with a ^ b (the next b ^ c). */
#define ROUND(a, b, c, d, e, f, g, h, wk)                                                \
    do {                                                                                 \
        const uint64_t ab_ = (a) ^ (b);                                                  \
        (h) += SIGMA1(e) + ((e) & (f)) + ((g) & ~(e)) + (wk);                            \
        (d) += (h);                                                                      \
        (h) += SIGMA0(a) + ((ab_ & bc) ^ (b));                                           \
        bc = ab_;                                                                        \
    } while (0)

/* 64-bit lane rotates: shl then sri, or one tbl for the byte-sized ror 8. */
#define VROR(x, n) vsriq_n_u64(vshlq_n_u64((x), 64 - (n)), (x), (n))

AC_INLINE uint64x2_t vsigma0(uint64x2_t x, uint8x16_t ror8)
{
    const uint64x2_t r8 = vreinterpretq_u64_u8(vqtbl1q_u8(vreinterpretq_u8_u64(x), ror8));

    return veorq_u64(veorq_u64(VROR(x, 1), r8), vshrq_n_u64(x, 7));
}

AC_INLINE uint64x2_t vsigma1(uint64x2_t x)
{
    return veorq_u64(veorq_u64(VROR(x, 19), VROR(x, 61)), vshrq_n_u64(x, 6));
}

/* Two rounds t, t+1 (t even) from the ring, then W[t+16], W[t+17] from the window
 * v[0..7] = W[t-16..t-1] (two words a vector) into v[0] and, plus K, into the ring slots
 * the two rounds just read. W[t+16] needs σ1(W[t+14]) and W[t+17] σ1(W[t+15]): both in
 * v[7], so the pair is one vector step. The window then shifts by renaming. */
#define STEP(a, b, c, d, e, f, g, h, t, v0, v1, v2, v3, v4, v5, v6, v7, sched)            \
    do {                                                                               \
        ROUND(a, b, c, d, e, f, g, h, ring[(t) & 15]);                                 \
        ROUND(h, a, b, c, d, e, f, g, ring[((t) & 15) + 1]);                           \
        if (sched) {                                                                   \
            (v0) = vaddq_u64(vaddq_u64((v0), vsigma0(vextq_u64((v0), (v1), 1), ror8)),  \
                             vaddq_u64(vextq_u64((v4), (v5), 1), vsigma1(v7)));         \
            vst1q_u64(ring + ((t) & 15), vaddq_u64((v0), vld1q_u64(K + (t) + 16)));     \
        }                                                                              \
    } while (0)

/* Sixteen rounds from t; the state letters rotate by two per step, the window by one. */
#define ROUNDS16(t, sched)                                                               \
    do {                                                                                 \
        STEP(a, b, c, d, e, f, g, h, (t) + 0, w0, w1, w2, w3, w4, w5, w6, w7, sched);    \
        STEP(g, h, a, b, c, d, e, f, (t) + 2, w1, w2, w3, w4, w5, w6, w7, w0, sched);    \
        STEP(e, f, g, h, a, b, c, d, (t) + 4, w2, w3, w4, w5, w6, w7, w0, w1, sched);    \
        STEP(c, d, e, f, g, h, a, b, (t) + 6, w3, w4, w5, w6, w7, w0, w1, w2, sched);    \
        STEP(a, b, c, d, e, f, g, h, (t) + 8, w4, w5, w6, w7, w0, w1, w2, w3, sched);    \
        STEP(g, h, a, b, c, d, e, f, (t) + 10, w5, w6, w7, w0, w1, w2, w3, w4, sched);   \
        STEP(e, f, g, h, a, b, c, d, (t) + 12, w6, w7, w0, w1, w2, w3, w4, w5, sched);   \
        STEP(c, d, e, f, g, h, a, b, (t) + 14, w7, w0, w1, w2, w3, w4, w5, w6, sched);   \
    } while (0)

static void sha512_compress(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    const uint64_t *K = archcrypt_sha512_K;
    /* ror by 8 of each 64-bit lane: byte i takes byte i + 1 (little-endian lanes) */
    const uint8x16_t ror8 = {1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8};
    uint64_t ring[16] __attribute__((aligned(16)));

    if (nblocks == 0)
        return;
    while (nblocks--) {
        uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
        uint64_t bc = b ^ c;
        /* big-endian words: rev64 swaps the bytes of each lane */
#define LOADW(i) vreinterpretq_u64_u8(vrev64q_u8(vld1q_u8(in + 16 * (i))))
        uint64x2_t w0 = LOADW(0), w1 = LOADW(1), w2 = LOADW(2), w3 = LOADW(3), w4 = LOADW(4),
                   w5 = LOADW(5), w6 = LOADW(6), w7 = LOADW(7);
#undef LOADW
        vst1q_u64(ring + 0, vaddq_u64(w0, vld1q_u64(K + 0)));
        vst1q_u64(ring + 2, vaddq_u64(w1, vld1q_u64(K + 2)));
        vst1q_u64(ring + 4, vaddq_u64(w2, vld1q_u64(K + 4)));
        vst1q_u64(ring + 6, vaddq_u64(w3, vld1q_u64(K + 6)));
        vst1q_u64(ring + 8, vaddq_u64(w4, vld1q_u64(K + 8)));
        vst1q_u64(ring + 10, vaddq_u64(w5, vld1q_u64(K + 10)));
        vst1q_u64(ring + 12, vaddq_u64(w6, vld1q_u64(K + 12)));
        vst1q_u64(ring + 14, vaddq_u64(w7, vld1q_u64(K + 14)));

        ROUNDS16(0, 1);
        ROUNDS16(16, 1);
        ROUNDS16(32, 1);
        ROUNDS16(48, 1);
        ROUNDS16(64, 0);

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
    /* W + K is message material (HMAC's first block is the key). */
    {
        volatile uint64_t *r = ring;
        for (int i = 0; i < 16; i++)
            r[i] = 0;
    }
}

const sha512_kernel archcrypt_sha512_neon = {
    .compress = sha512_compress,
};
