/* SHA-512 compression, ARMv8.2 SHA512 instructions: sha512h/sha512h2 two rounds per pair over the {a,b} {c,d} {e,f} {g,h} vectors, sha512su0/su1 schedule over eight two-word vectors (FIPS 180-4 section 6.4.2). */
#if !defined(__aarch64__) || !defined(__ARM_FEATURE_SHA512)
#error "sha512/armv8_sha512.c needs -march=armv8.2-a+crypto+sha3 (ISA_FLAGS_armv8_sha512 in native/Makefile)"
#endif

#include <arm_neon.h>

#include "common.h"
#include "sha512/sha512.h"

extern const sha512_kernel archcrypt_sha512_armv8_sha512;

/* Two rounds t, t+1 with wk = W + K for them. The state is four vectors {a,b} {c,d}
 * {e,f} {g,h} whose roles rotate: ab, cd, ef, gh name what a register holds at round t.
 * sha512h takes the round's T1 inputs from {g,h} + wk (halves swapped: it wants the
 * second round's word high), {f,g} and {d,e}, and returns the two T1 sums; their
 * addition to {c,d} gives the new {e,f}, and sha512h2 turns them and {a,b}, {b,c} into
 * the new {a,b} in gh's register. After it: ab <- gh, cd <- ab, ef <- cd, gh <- ef. */
#define RNDS2(ab, cd, ef, gh, wk)                                                \
    do {                                                                         \
        const uint64x2_t t0_ = vaddq_u64(vextq_u64((wk), (wk), 1), (gh));        \
        const uint64x2_t t1_ =                                                   \
            vsha512hq_u64(t0_, vextq_u64((ef), (gh), 1), vextq_u64((cd), (ef), 1)); \
        (gh) = vsha512h2q_u64(t1_, (cd), (ab));                                  \
        (cd) = vaddq_u64((cd), t1_);                                             \
    } while (0)

/* Section 6.4.2 step 1 for two words: w0 = W[t-16..t-15] becomes W[t..t+1]; su0 adds
 * σ0(W[t-15..t-14]) (from w1), su1 adds σ1 of W[t-2..t-1] (w7) and W[t-7..t-6]. */
#define SCHED(w0, w1, w4, w5, w7) \
    (w0) = vsha512su1q_u64(vsha512su0q_u64((w0), (w1)), (w7), vextq_u64((w4), (w5), 1))

/* Eight rounds from four schedule vectors, K read four vectors at a time (one ld1). */
#define RNDS8(m0, m1, m2, m3, kp)                                                \
    do {                                                                         \
        const uint64x2x4_t k_ = vld1q_u64_x4(kp);                               \
        RNDS2(s0, s1, s2, s3, vaddq_u64((m0), k_.val[0]));                       \
        RNDS2(s3, s0, s1, s2, vaddq_u64((m1), k_.val[1]));                       \
        RNDS2(s2, s3, s0, s1, vaddq_u64((m2), k_.val[2]));                       \
        RNDS2(s1, s2, s3, s0, vaddq_u64((m3), k_.val[3]));                       \
    } while (0)

static void sha512_compress(uint64_t h[8], const uint8_t *in, size_t nblocks)
{
    uint64x2_t s0 = vld1q_u64(h), s1 = vld1q_u64(h + 2), s2 = vld1q_u64(h + 4),
               s3 = vld1q_u64(h + 6);

    while (nblocks--) {
        const uint64x2_t s0_in = s0, s1_in = s1, s2_in = s2, s3_in = s3;
        const uint64_t *kp = archcrypt_sha512_K;
        uint64x2_t w[8];

        /* Big-endian words: rev64 swaps the bytes of each lane. */
        for (int i = 0; i < 8; i++)
            w[i] = vreinterpretq_u64_u8(vrev64q_u8(vld1q_u8(in + 16 * i)));

        /* Rounds 0..63 compute W[16..79] as they go; 64..79 only read them. The four
         * round pairs of RNDS8 leave s0..s3 in their starting roles. */
        for (int r = 0; r < 4; r++) {
            RNDS8(w[0], w[1], w[2], w[3], kp);
            SCHED(w[0], w[1], w[4], w[5], w[7]);
            SCHED(w[1], w[2], w[5], w[6], w[0]);
            SCHED(w[2], w[3], w[6], w[7], w[1]);
            SCHED(w[3], w[4], w[7], w[0], w[2]);
            RNDS8(w[4], w[5], w[6], w[7], kp + 8);
            SCHED(w[4], w[5], w[0], w[1], w[3]);
            SCHED(w[5], w[6], w[1], w[2], w[4]);
            SCHED(w[6], w[7], w[2], w[3], w[5]);
            SCHED(w[7], w[0], w[3], w[4], w[6]);
            kp += 16;
        }
        RNDS8(w[0], w[1], w[2], w[3], kp);
        RNDS8(w[4], w[5], w[6], w[7], kp + 8);

        s0 = vaddq_u64(s0, s0_in);
        s1 = vaddq_u64(s1, s1_in);
        s2 = vaddq_u64(s2, s2_in);
        s3 = vaddq_u64(s3, s3_in);
        in += 128;
    }
    vst1q_u64(h, s0);
    vst1q_u64(h + 2, s1);
    vst1q_u64(h + 4, s2);
    vst1q_u64(h + 6, s3);
}

const sha512_kernel archcrypt_sha512_armv8_sha512 = {
    .compress = sha512_compress,
};
