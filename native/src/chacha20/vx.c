/* ChaCha20, z13 vector facility: chacha20/simd128.h's 4-block body, vx + verllf for every rotate, the keystream's little-endian byte order put in by the transposes' last vperm (RFC 8439 2.3-2.4). */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__)
#error "chacha20/vx.c needs -march=z13 -mzvector (ISA_FLAGS_vx in native/isa.mk)"
#endif

#include <vecintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"

typedef __vector unsigned int v32;
typedef __vector unsigned char u8x16;
typedef __vector unsigned long long u64x2;

/* Rows in element order: s390x is big-endian, element i is logical word i. z13 has no
 * byte-shuffling rotate, so every rotate is vx then verllf (an immediate amount). */
#define V_ADD(a, b) ((a) + (b))
#define V_XOR(a, b) ((a) ^ (b))
#define V_XROTL16(a, b) vec_rli((a) ^ (b), 16)
#define V_XROTL12(a, b) vec_rli((a) ^ (b), 12)
#define V_XROTL8(a, b) vec_rli((a) ^ (b), 8)
#define V_XROTL7(a, b) vec_rli((a) ^ (b), 7)
#define V_DUP(x) vec_splats((unsigned int)(x))
#define V_LANES ((v32){0, 1, 2, 3})
#define V_ROW(w0, w1, w2, w3) ((v32){(w0), (w1), (w2), (w3)})
#define V_SPLAT(row, i) vec_splat(row, i)
#define V_ROTW(row, k) vec_sld(row, row, 4 * (k)) /* vsldb */

/* Keystream words are little-endian in memory: reverse the bytes of each word. */
#define BSWAP32 ((u8x16){3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12})

/* The 4-block path's rows, a_k = word k of blocks 0..3. A transpose is two merge steps;
 * here the first merges words (a0 a1 and a2 a3, lanes 0-1 and 2-3), the input row is
 * added to the halves (w0 w1) and (w2 w3) it meets there, and the second step is a vperm
 * that picks each block's doublewords and reverses the bytes of each word in the same
 * instruction: 4 merges, 4 additions (plus 2 merges of the row, hoisted out of the loop)
 * and 4 vperm per 4 rows, against 8 merges, 4 additions and 4 byte swaps. The rows come
 * out as the keystream's bytes, for V_XOR_OUT4. */
#define ROW_HI ((u8x16){3, 2, 1, 0, 7, 6, 5, 4, 19, 18, 17, 16, 23, 22, 21, 20})
#define ROW_LO ((u8x16){11, 10, 9, 8, 15, 14, 13, 12, 27, 26, 25, 24, 31, 30, 29, 28})
#define V_TRANSPOSE_ADD(a0, a1, a2, a3, row, o) transpose_add(a0, a1, a2, a3, row, o)
AC_INLINE void transpose_add(v32 a0, v32 a1, v32 a2, v32 a3, v32 row, v32 o[4])
{
    const v32 r01 = (v32)vec_mergeh((u64x2)row, (u64x2)row); /* w0 w1 w0 w1 */
    const v32 r23 = (v32)vec_mergel((u64x2)row, (u64x2)row); /* w2 w3 w2 w3 */
    /* t0 = a0[0] a1[0] a0[1] a1[1] + r01, t1 = a2[0] a3[0] a2[1] a3[1] + r23, ... */
    u8x16 t0 = (u8x16)(vec_mergeh(a0, a1) + r01), t1 = (u8x16)(vec_mergeh(a2, a3) + r23);
    u8x16 t2 = (u8x16)(vec_mergel(a0, a1) + r01), t3 = (u8x16)(vec_mergel(a2, a3) + r23);

    o[0] = (v32)vec_perm(t0, t1, ROW_HI); /* block 0: t0's first, t1's first doubleword */
    o[1] = (v32)vec_perm(t0, t1, ROW_LO);
    o[2] = (v32)vec_perm(t2, t3, ROW_HI);
    o[3] = (v32)vec_perm(t2, t3, ROW_LO);
}

#define V_LOADU(p) ((v32)vec_xl(0, (const unsigned char *)(p)))
#define V_STOREU(p, v) vec_xst((u8x16)(v), 0, (unsigned char *)(p))
#define V_BSWAP(row) ((v32)vec_perm((u8x16)(row), (u8x16)(row), BSWAP32))
#define V_STORE_LE(p, row) V_STOREU(p, V_BSWAP(row))
#define V_XOR_OUT(out, in, off, lo, hi)                                         \
    do {                                                                        \
        V_STOREU((out) + (off), V_LOADU((in) + (off)) ^ V_BSWAP(lo));           \
        V_STOREU((out) + (off) + 16, V_LOADU((in) + (off) + 16) ^ V_BSWAP(hi)); \
    } while (0)
/* 32 bytes in one vlm and one vstm, two instructions fewer than vl, vl, vst, vst. Both
 * take consecutive registers, which only asm can name: v30 and v31, clobbered. The rows
 * are already in memory order. */
#define V_XOR_OUT4(out, in, off, lo, hi)                                                 \
    __asm__("vlm %%v30,%%v31,%[src]\n\t"                                                 \
            "vx %%v30,%%v30,%[l]\n\t"                                                    \
            "vx %%v31,%%v31,%[h]\n\t"                                                    \
            "vstm %%v30,%%v31,%[dst]"                                                    \
            : [dst] "=Q"(*(uint8_t(*)[32])((out) + (off)))                               \
            : [src] "Q"(*(const uint8_t(*)[32])((in) + (off))), [l] "v"(lo), [h] "v"(hi) \
            : "v30", "v31")

#include "chacha20/simd128.h"

const chacha20_kernel archcrypt_chacha20_vx = {
    .xor_stream = simd128_xor_stream,
};
