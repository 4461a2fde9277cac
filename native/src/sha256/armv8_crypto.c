/* SHA-256 compression, ARMv8 crypto extensions: sha256h/sha256h2 four rounds per pair over the {a,b,c,d} {e,f,g,h} vectors, sha256su0/su1 schedule, all 16 K vectors held in registers across blocks (FIPS 180-4 section 6.2.2). */
#if !defined(__aarch64__) || !defined(__ARM_FEATURE_SHA2)
#error "sha256/armv8_crypto.c needs -march=armv8-a+crypto (ISA_FLAGS_armv8_crypto in native/Makefile)"
#endif

#include <arm_neon.h>

#include "common.h"
#include "sha256/sha256.h"


/* Four rounds: sha256h advances {a,b,c,d} and needs the old {a,b,c,d} for sha256h2,
 * which advances {e,f,g,h}. */
#define RNDS4(w, k)                                   \
    do {                                              \
        const uint32x4_t wk_ = vaddq_u32((w), (k));   \
        const uint32x4_t abcd_ = abcd;                \
        abcd = vsha256hq_u32(abcd, efgh, wk_);        \
        efgh = vsha256h2q_u32(efgh, abcd_, wk_);      \
    } while (0)

/* Section 6.2.2 step 1 for four words: w0 = W[t-16..t-13] becomes W[t..t+3] from
 * w1..w3 = W[t-12..t-1] (su0 adds σ0, su1 the W[t-7] terms and σ1). */
#define SCHED(w0, w1, w2, w3) (w0) = vsha256su1q_u32(vsha256su0q_u32((w0), (w1)), (w2), (w3))

static void sha256_compress(uint32_t h[8], const uint8_t *in, size_t nblocks)
{
    /* 16 constants + 4 message + 4 state vectors fit the 32 registers: loaded once, the
     * K vectors cost nothing per block (gcc keeps them where they are). */
    const uint32_t *K = archcrypt_sha256_K;
    const uint32x4_t k0 = vld1q_u32(K + 0), k1 = vld1q_u32(K + 4), k2 = vld1q_u32(K + 8),
                     k3 = vld1q_u32(K + 12), k4 = vld1q_u32(K + 16), k5 = vld1q_u32(K + 20),
                     k6 = vld1q_u32(K + 24), k7 = vld1q_u32(K + 28), k8 = vld1q_u32(K + 32),
                     k9 = vld1q_u32(K + 36), k10 = vld1q_u32(K + 40), k11 = vld1q_u32(K + 44),
                     k12 = vld1q_u32(K + 48), k13 = vld1q_u32(K + 52), k14 = vld1q_u32(K + 56),
                     k15 = vld1q_u32(K + 60);
    uint32x4_t abcd = vld1q_u32(h), efgh = vld1q_u32(h + 4);

    while (nblocks--) {
        const uint32x4_t abcd_in = abcd, efgh_in = efgh;
        /* Big-endian words: rev32 swaps the bytes of each lane. */
        uint32x4_t w0 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 0)));
        uint32x4_t w1 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 16)));
        uint32x4_t w2 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 32)));
        uint32x4_t w3 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 48)));

        RNDS4(w0, k0); SCHED(w0, w1, w2, w3);
        RNDS4(w1, k1); SCHED(w1, w2, w3, w0);
        RNDS4(w2, k2); SCHED(w2, w3, w0, w1);
        RNDS4(w3, k3); SCHED(w3, w0, w1, w2);
        RNDS4(w0, k4); SCHED(w0, w1, w2, w3);
        RNDS4(w1, k5); SCHED(w1, w2, w3, w0);
        RNDS4(w2, k6); SCHED(w2, w3, w0, w1);
        RNDS4(w3, k7); SCHED(w3, w0, w1, w2);
        RNDS4(w0, k8); SCHED(w0, w1, w2, w3);
        RNDS4(w1, k9); SCHED(w1, w2, w3, w0);
        RNDS4(w2, k10); SCHED(w2, w3, w0, w1);
        RNDS4(w3, k11); SCHED(w3, w0, w1, w2);
        RNDS4(w0, k12);
        RNDS4(w1, k13);
        RNDS4(w2, k14);
        RNDS4(w3, k15);

        abcd = vaddq_u32(abcd, abcd_in);
        efgh = vaddq_u32(efgh, efgh_in);
        in += 64;
    }
    vst1q_u32(h, abcd);
    vst1q_u32(h + 4, efgh);
}

const sha256_kernel archcrypt_sha256_armv8_crypto = {
    .compress = sha256_compress,
};
