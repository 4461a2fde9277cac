/* ChaCha20, NEON (ASIMD): chacha20/simd128.h's 4-block body over NEON, eor then rev32 for the rotate by 16, tbl for 8, shl + sri for 12 and 7 (14 instructions per quarter round), trn1/trn2 transposes, ldp/stp of row pairs (RFC 8439 2.3-2.4). */
#if !defined(__aarch64__) || !defined(__ARM_NEON) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "chacha20/neon.c needs little-endian AArch64 with ASIMD (ISA_FLAGS_neon in native/isa.mk)"
#endif

#include <arm_neon.h>

#include "common.h"
#include "chacha20/chacha20.h"

typedef uint32x4_t v32;

#define V_ADD(a, b) vaddq_u32((a), (b))
#define V_XOR(a, b) veorq_u32((a), (b))

/* NEON has no vector rotate: 16 swaps the halfwords of each word, 8 is a byte shuffle,
 * 12 and 7 a shift left and a shift right inserted into it. */
#define V_ROTN(x, n) vsriq_n_u32(vshlq_n_u32((x), (n)), (x), 32 - (n))
#define V_XROTL16(a, b) vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(V_XOR((a), (b)))))
#define V_XROTL12(a, b) V_ROTN(V_XOR((a), (b)), 12)
#define V_XROTL8(a, b) vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(V_XOR((a), (b))), rot8))
#define V_XROTL7(a, b) V_ROTN(V_XOR((a), (b)), 7)
/* rotl 8 of each little-endian word: byte k takes byte k - 1 of its word */
#define V_CONSTANTS \
    const uint8x16_t rot8 = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14}

/* Rows in natural lane order (lane i = logical word i), as ld1/st1 of little-endian
 * words has them. */
#define V_DUP(x) vdupq_n_u32(x)
#define V_LANES ((v32){0, 1, 2, 3})
#define V_ROW(w0, w1, w2, w3) ((v32){(w0), (w1), (w2), (w3)})
#define V_SPLAT(row, i) vdupq_laneq_u32((row), (i))
#define V_ROTW(row, k) vextq_u32((row), (row), (k))

/* trn at 32 bits pairs words of neighbouring blocks, at 64 bits the pairs of pairs. */
#define V_TRANSPOSE(a0, a1, a2, a3, o) transpose4(a0, a1, a2, a3, o)
AC_INLINE void transpose4(v32 a0, v32 a1, v32 a2, v32 a3, v32 o[4])
{
    const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(a0, a1)); /* a0[0] a1[0] a0[2] a1[2] */
    const uint64x2_t t1 = vreinterpretq_u64_u32(vtrn2q_u32(a0, a1)); /* a0[1] a1[1] a0[3] a1[3] */
    const uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(a2, a3));
    const uint64x2_t t3 = vreinterpretq_u64_u32(vtrn2q_u32(a2, a3));

    o[0] = vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)); /* a0[0] a1[0] a2[0] a3[0] */
    o[1] = vreinterpretq_u32_u64(vtrn1q_u64(t1, t3));
    o[2] = vreinterpretq_u32_u64(vtrn2q_u64(t0, t2));
    o[3] = vreinterpretq_u32_u64(vtrn2q_u64(t1, t3));
}

#define V_LOADU(p) vreinterpretq_u32_u8(vld1q_u8(p))
#define V_STOREU(p, v) vst1q_u8((p), vreinterpretq_u8_u32(v))
#define V_STORE_LE(p, row) V_STOREU(p, row)
/* One ldp and one stp per 32 bytes, at a constant offset from the pointers the loop
 * advances: gcc 12 pairs none of the 16-byte accesses itself (16 more instructions per
 * 256 bytes). The xors stay in C, for the scheduler. The memory operands name the bytes
 * from the base pointer on, as power10.c's do (naming only the 32 accessed makes gcc
 * compute each address into a register of its own); the stores' is read-write, so that
 * no earlier store into that span can look dead to the compiler. */
#define V_XOR_OUT(out, in, off, lo, hi)                                                   \
    do {                                                                                  \
        uint32x4_t l_, h_;                                                                \
        __asm__("ldp %q[l], %q[h], [%[p], %[o]]"                                          \
                : [l] "=w"(l_), [h] "=w"(h_)                                              \
                : [p] "r"(in), [o] "n"(off),                                             \
                  "m"(*(const uint8_t(*)[(off) + 32])(const void *)(in)));              \
        l_ = V_XOR(l_, (lo));                                                             \
        h_ = V_XOR(h_, (hi));                                                             \
        __asm__("stp %q[l], %q[h], [%[p], %[o]]"                                          \
                : "+m"(*(uint8_t(*)[(off) + 32])(void *)(out))                            \
                : [l] "w"(l_), [h] "w"(h_), [p] "r"(out), [o] "n"(off));                  \
    } while (0)

#include "chacha20/simd128.h"

const chacha20_kernel archcrypt_chacha20_neon = {
    .xor_stream = simd128_xor_stream,
};
