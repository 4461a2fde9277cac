/* ChaCha20, POWER8 VSX: chacha20/simd128.h's 4-block body with rows in lxvw4x element order, vpermxor for xor+rotate by 16/8, vrlw for 12/7 (RFC 8439 2.3-2.4). */
#if !defined(__POWER8_VECTOR__) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "chacha20/power8.c needs little-endian -mcpu=power8 -mcrypto (ISA_FLAGS_power8 in native/isa.mk)"
#endif

#include "common.h"
#include "chacha20/chacha20.h"
#include "chacha20/simd128_vsx.h"

/* Rows in the element order lxvw4x/stxvw4x use on little-endian: element e holds
 * logical word 3 - e, so loads and stores need no doubleword swaps. */
#define V_ROW(w0, w1, w2, w3) ((v32){(w3), (w2), (w1), (w0)})
#define V_SPLAT(row, i) vec_splat(row, 3 - (i))
/* Logical word i from word i + k is element e from element e - k; vec_perm indices
 * count in little-endian element order. */
#define V_ROTW(row, k) vec_perm(row, row, (u8x16)ROTW##k##_CTL)
#define ROTW1_CTL {12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
#define ROTW2_CTL {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}
#define ROTW3_CTL {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3}

/* Four words of four blocks (a_k = word k of blocks 0..3) into four block rows. */
#define V_TRANSPOSE(a0, a1, a2, a3, o) transpose4(a0, a1, a2, a3, o)
AC_INLINE void transpose4(v32 a0, v32 a1, v32 a2, v32 a3, v32 o[4])
{
    u64x2 t0 = (u64x2)vec_mergeh(a1, a0); /* a1[0] a0[0] a1[1] a0[1] */
    u64x2 t1 = (u64x2)vec_mergeh(a3, a2); /* a3[0] a2[0] a3[1] a2[1] */
    u64x2 t2 = (u64x2)vec_mergel(a1, a0); /* a1[2] a0[2] a1[3] a0[3] */
    u64x2 t3 = (u64x2)vec_mergel(a3, a2); /* a3[2] a2[2] a3[3] a2[3] */

    o[0] = (v32)vec_mergeh(t1, t0); /* a3[0] a2[0] a1[0] a0[0] */
    o[1] = (v32)vec_mergel(t1, t0);
    o[2] = (v32)vec_mergeh(t3, t2);
    o[3] = (v32)vec_mergel(t3, t2);
}

/* lxvw4x/stxvw4x; the indexed forms take base + offset registers, the offsets
 * loop-invariant. */
#define V_LOADU(p) vec_xl_be(0, (const unsigned int *)(const void *)(p))
#define V_STOREU(p, v) vec_xst_be(v, 0, (unsigned int *)(void *)(p))
#define V_STORE_LE(p, row) V_STOREU(p, row)
#define V_XOR_OUT(out, in, off, lo, hi)                                                    \
    do {                                                                                   \
        vec_xst_be(vec_xl_be((off), (const unsigned int *)(const void *)(in)) ^ (lo), (off),  \
                   (unsigned int *)(void *)(out));                                         \
        vec_xst_be(vec_xl_be((off) + 16, (const unsigned int *)(const void *)(in)) ^ (hi),    \
                   (off) + 16, (unsigned int *)(void *)(out));                             \
    } while (0)

/* The input rows in registers across the loop; `pre` is read from memory as it stands
 * (gcc 12 keeps no copies of its own on the stack; a "+m" on `pre`, as in power10.c,
 * makes it address `pre` through extra registers here, without DQ-form loads: 47 more
 * instructions per iteration). */
#define V_LOOP_BARRIER(row0, row1, row2, row3, pre) \
    __asm__("" : "+v"(row0), "+v"(row1), "+v"(row2), "+v"(row3))

#include "chacha20/simd128.h"

const chacha20_kernel archcrypt_chacha20_power8 = {
    .xor_stream = simd128_xor_stream,
};
