/* ChaCha20, POWER10 (ISA 3.1): chacha20/simd128.h's 4-block body with rows in natural element order, vpermxor for 16/8, vrlw for 12/7, lxvp/stxvp for the message (RFC 8439 2.3-2.4). */
#if !defined(_ARCH_PWR10) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "chacha20/power10.c needs little-endian -mcpu=power10 (ISA_FLAGS_power10 in native/isa.mk)"
#endif

#include "common.h"
#include "chacha20/chacha20.h"
#include "chacha20/simd128_vsx.h"

/* What earns this row its place over power8.c, counted in instructions under qemu
 * (bench/insn) at 64 KiB: 3.39 per byte against 3.45. The loads and stores of the
 * message go in 32-byte pairs (lxvp/stxvp, 16 fewer per 256 bytes), and lxv's
 * displacement form reaches every operand without index registers.
 *
 * Eight blocks per iteration (two word-sliced groups of four) were tried and dropped:
 * they fill all 32 vector registers, and vadduwm, vrlw and vpermxor address only
 * those, each step needing its constant in one; a state word parked in a VSX register
 * around every step costs 24 moves per double round, 4.06 instructions per byte in
 * all. Their extra independent work per step may pay on a real POWER10's pipes, but
 * nothing here can show it. xxeval (three-input logic) has nothing to fuse: every
 * ChaCha20 xor feeds a rotate, an addition or the output. */

/* Rows in natural element order (element i = logical word i), as lxv/lxvp load them. */
#define V_ROW(w0, w1, w2, w3) ((v32){(w0), (w1), (w2), (w3)})
#define V_SPLAT(row, i) vec_splat(row, i)
/* vec_perm indices count in little-endian element order: element i takes i + k. */
#define V_ROTW(row, k) vec_perm(row, row, (u8x16)ROTW##k##_CTL)
#define ROTW1_CTL {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3}
#define ROTW2_CTL {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}
#define ROTW3_CTL {12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

#define V_TRANSPOSE(a0, a1, a2, a3, o) transpose4(a0, a1, a2, a3, o)
AC_INLINE void transpose4(v32 a0, v32 a1, v32 a2, v32 a3, v32 o[4])
{
    u64x2 t0 = (u64x2)vec_mergeh(a0, a1); /* a0[0] a1[0] a0[1] a1[1] */
    u64x2 t1 = (u64x2)vec_mergeh(a2, a3); /* a2[0] a3[0] a2[1] a3[1] */
    u64x2 t2 = (u64x2)vec_mergel(a0, a1); /* a0[2] a1[2] a0[3] a1[3] */
    u64x2 t3 = (u64x2)vec_mergel(a2, a3); /* a2[2] a3[2] a2[3] a3[3] */

    o[0] = (v32)vec_mergeh(t0, t1); /* a0[0] a1[0] a2[0] a3[0] */
    o[1] = (v32)vec_mergel(t0, t1);
    o[2] = (v32)vec_mergeh(t2, t3);
    o[3] = (v32)vec_mergel(t2, t3);
}

#define V_LOADU(p) vec_xl(0, (const unsigned int *)(const void *)(p))
#define V_STOREU(p, v) vec_xst(v, 0, (unsigned int *)(void *)(p))
#define V_STORE_LE(p, row) V_STOREU(p, row)

/* Through one lxvp and one stxvp. Inline assembly because gcc 12 builds a __vector_pair
 * for stxvp with two register copies (__builtin_vsx_build_pair), 16 per 256 bytes. On
 * little-endian, lxvp puts the first 16 bytes in the odd register of the pair. */
#define V_XOR_OUT(out, in, off, lo, hi)                                               \
    do {                                                                              \
        __vector_pair t_;                                                             \
        __asm__("lxvp %x[t],%[o](%[i])\n\t"                                            \
                "xxlxor %x[t]+1,%x[t]+1,%x[l]\n\t"                                     \
                "xxlxor %x[t],%x[t],%x[h]\n\t"                                         \
                "stxvp %x[t],%[o](%[d])"                                              \
                : [t] "=&wa"(t_), "=m"(*(uint8_t(*)[(off) + 32])(void *)(out))        \
                : [i] "b"(in), [d] "b"(out), [o] "n"(off), [l] "wa"(lo), [h] "wa"(hi), \
                  "m"(*(const uint8_t(*)[(off) + 32])(const void *)(in)));            \
    } while (0)

/* The input rows in registers and `pre` in memory across the loop: the barrier keeps
 * gcc reading the precomputed words from `pre`, which is wiped, rather than spilling
 * copies of its own. */
#define V_LOOP_BARRIER(row0, row1, row2, row3, pre) \
    __asm__("" : "+v"(row0), "+v"(row1), "+v"(row2), "+v"(row3), "+m"(pre))

#include "chacha20/simd128.h"

const chacha20_kernel archcrypt_chacha20_power10 = {
    .xor_stream = simd128_xor_stream,
};
