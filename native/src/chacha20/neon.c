/* ChaCha20, NEON (ASIMD): chacha20/body128.h's 4-block vertical body and 1-block row tail over NEON, rev32 for the rotate by 16, tbl for 8, shl + sri for 12 and 7 (14 instructions per quarter round), trn1/trn2 transposes (RFC 8439 2.3-2.4). */
#if !defined(__aarch64__) || !defined(__ARM_NEON) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "chacha20/neon.c needs little-endian AArch64 with ASIMD (ISA_FLAGS_neon in native/isa.mk)"
#endif

#include <arm_neon.h>

typedef uint32x4_t v32;

#define V_ADD(a, b) vaddq_u32((a), (b))
#define V_XOR(a, b) veorq_u32((a), (b))

/* NEON has no vector rotate: 16 swaps the halfwords of each word, 8 is a byte shuffle,
 * 12 and 7 a shift left and a shift right inserted into it. */
#define V_ROTN(x, n) vsriq_n_u32(vshlq_n_u32((x), (n)), (x), 32 - (n))
#define V_XROT16(d, a) vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(V_XOR((d), (a)))))
#define V_XROT12(b, c) V_ROTN(V_XOR((b), (c)), 12)
#define V_XROT8(d, a) vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(V_XOR((d), (a))), rot8))
#define V_XROT7(b, c) V_ROTN(V_XOR((b), (c)), 7)
/* rotl 8 of each little-endian word: byte k takes byte k - 1 of its word */
#define V_CONSTANTS \
    const uint8x16_t rot8 = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14}

#define V_SPLAT(w) vdupq_n_u32(w)
#define V_SET(w0, w1, w2, w3) ((uint32x4_t){(w0), (w1), (w2), (w3)})
#define V_LANES(x, k) vextq_u32((x), (x), (k))
#define V_LOAD(p) vreinterpretq_u32_u8(vld1q_u8(p))
#define V_STORE(p, v) vst1q_u8((p), vreinterpretq_u8_u32(v))

/* trn at 32 bits pairs words of neighbouring blocks, at 64 bits the pairs of pairs. */
#define V_TRANSPOSE(a, b, c, d)                                                       \
    do {                                                                              \
        const uint64x2_t t0_ = vreinterpretq_u64_u32(vtrn1q_u32((a), (b)));             \
        const uint64x2_t t1_ = vreinterpretq_u64_u32(vtrn2q_u32((a), (b)));             \
        const uint64x2_t t2_ = vreinterpretq_u64_u32(vtrn1q_u32((c), (d)));             \
        const uint64x2_t t3_ = vreinterpretq_u64_u32(vtrn2q_u32((c), (d)));             \
        (a) = vreinterpretq_u32_u64(vtrn1q_u64(t0_, t2_));                              \
        (b) = vreinterpretq_u32_u64(vtrn1q_u64(t1_, t3_));                              \
        (c) = vreinterpretq_u32_u64(vtrn2q_u64(t0_, t2_));                              \
        (d) = vreinterpretq_u32_u64(vtrn2q_u64(t1_, t3_));                              \
    } while (0)

/* Vector stores of zeros, and a barrier so that they are not dropped as dead. */
#define V_WIPE(p, n)                                                                  \
    do {                                                                              \
        uint8_t *w_ = (uint8_t *)(p);                                                 \
        for (size_t i_ = 0; i_ < (n); i_ += 16)                                       \
            vst1q_u8(w_ + i_, vdupq_n_u8(0));                                         \
        __asm__ __volatile__("" : : "r"(w_) : "memory");                              \
    } while (0)

#define BODY128_SLUG neon
#include "chacha20/body128.h"
