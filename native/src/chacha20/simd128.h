/* ChaCha20 over 128-bit vectors, written once: 4 blocks per iteration (one state word per vector, one block per lane), the counter-free start of rounds 1-2 computed once per call, 3-4 block tails as one 4-block pass over a copy, 1-2 blocks in row form (RFC 8439 2.3-2.4). Instantiated by chacha20/power8.c and power10.c (their common vocabulary: simd128_vsx.h), chacha20/neon.c (arm64) and chacha20/vx.c (z13). */
#ifndef ARCHCRYPT_CHACHA20_SIMD128_H
#define ARCHCRYPT_CHACHA20_SIMD128_H

/*
 * The including file defines a small vector vocabulary (below), includes this header,
 * and defines its kernel as { .xor_stream = simd128_xor_stream }.
 *
 * Words and rows. A vector holds four 32-bit words. In the 4-block path vector k holds
 * state word k of four blocks, one block per lane (lane j is block counter + j), so one
 * quarter round serves four blocks. In the row path, and after the transposes, a vector
 * is one row of one block: four consecutive state words, kept in whatever element order
 * the target's loads and stores want. "Logical word i" below is the i-th word of a row
 * as RFC 8439 numbers the state, not necessarily element i: POWER8 keeps rows in
 * lxvw4x/stxvw4x order (element 0 = logical word 3), so that no store needs a swap.
 *
 * Byte order. ChaCha20's words are little-endian in memory. The key and nonce arrive as
 * native uint32_t words (the front loaded them little-endian); V_STORE_LE and V_XOR_OUT
 * must write a row's words little-endian whatever the host's byte order. A big-endian
 * target (s390x) swaps the bytes of each word on the way out: a vperm with a byte-swap
 * mask on z13/z14 (one per 16 bytes, unless the transposes' last permutes do it), the
 * byte-reversing vlbrf/vstbrf on z15. V_LOADU and V_STOREU only move bytes to be XORed
 * with keystream already in memory, so they may use any order the two agree on.
 *
 * What an instantiation provides (macros, or AC_INLINE functions):
 *
 *   v32                     the vector type (four 32-bit lanes)
 *   V_ADD(a, b)             lane-wise addition mod 2^32
 *   V_XOR(a, b)             exclusive or
 *   V_XROTL16(a, b)         rotl32(a ^ b, 16) in every lane; likewise V_XROTL12, V_XROTL8
 *   ... V_XROTL7            and V_XROTL7. One name per amount, so that each target uses
 *                           its best form: POWER vpermxor for 16 and 8 (the XOR and the
 *                           byte rotation in one), vxor + vrlw for 12 and 7; NEON eor then
 *                           rev32 (16), tbl (8), shl + sri (12, 7); SVE2 xar for all four;
 *                           z vector vx + verllf for all four
 *   V_DUP(x)                every lane the uint32_t x
 *   V_LANES                 lane j holds j
 *   V_ROW(w0, w1, w2, w3)   a row holding logical words w0..w3
 *   V_SPLAT(row, i)         every lane logical word i of row (i a constant 0..3)
 *   V_ROTW(row, k)          the row with logical word i taken from word (i + k) mod 4
 *                           (k a constant 1..3): what turns a block's diagonals into
 *                           columns (POWER vperm, NEON ext, z vsldb)
 *   V_TRANSPOSE(a0, a1, a2, a3, o)   o[j] = V_ROW(lane j of a0, of a1, of a2, of a3) for
 *                           j = 0..3: four word vectors into rows of four blocks (not
 *                           needed with V_TRANSPOSE_ADD)
 *   V_LOADU(p), V_STOREU(p, v)   16 bytes at p, unaligned
 *   V_STORE_LE(p, row)      the row's logical words 0..3 to p, little-endian
 *   V_XOR_OUT(out, in, off, lo, hi)  the 32 bytes at out + off become those at in + off
 *                           XOR the rows lo then hi, as V_STORE_LE writes them; off is a
 *                           constant multiple of 16 (POWER10 pairs the two in lxvp/stxvp,
 *                           NEON in ldp/stp)
 *
 * Optional (default: nothing):
 *   V_CONSTANTS             declarations the macros above use, at the top of each function
 *                           with rounds (constants may as well be written inline: the
 *                           compiler hoists them)
 *   V_LOOP_BARRIER(row0, row1, row2, row3, pre)   a statement at the top of each 4-block
 *                           iteration, e.g. an empty asm that gives the register allocator
 *                           the plan that suits the target (power8.c, power10.c)
 *   V_TRANSPOSE_ADD(a0, a1, a2, a3, row, o)   the 4-block path's rows in one step: o[j]
 *                           as V_TRANSPOSE makes it plus row, in whatever form V_XOR_OUT4
 *                           takes (default: V_TRANSPOSE, then V_ADD of row to each). For a
 *                           target whose transpose ends in permutes that can put the bytes
 *                           in memory order on the way (z13's vperm does any byte
 *                           permutation of two vectors), which means adding the row before
 *                           those permutes: chacha20/vx.c
 *   V_XOR_OUT4(out, in, off, lo, hi)  V_XOR_OUT for V_TRANSPOSE_ADD's rows (default:
 *                           V_XOR_OUT)
 *
 * Registers: the 4-block loop keeps the 16 word vectors, the counters, the four input
 * rows and the rotate constants live: 25 vectors on POWER, which fits targets with 32
 * vector registers (POWER VRs, NEON, z).
 *
 * Tails: 3-4 blocks run as one 4-block pass over a copy, 1-2 blocks one at a time in row
 * form: the fewest instructions on POWER (bench/insn), not the shortest latency. x86
 * SSSE3 (16 registers) keeps chacha20/ssse3.c: instantiated over this body, measured side
 * by side with thread CPU time on Zen 3 (BENCHMARKS.md), it ran 1-8 % faster from 1 KiB
 * (the precomputed rounds) but 3 % slower at 64 B and 1.3-1.5x slower at 128-192 B, where
 * ssse3.c has two interleaved row blocks and a 4-block pass that writes only what is
 * asked for. A target whose tails matter in cycles may want the same here.
 */

#include "common.h"
#include "chacha20/chacha20.h"

#ifndef V_CONSTANTS
#define V_CONSTANTS
#endif
#ifndef V_LOOP_BARRIER
#define V_LOOP_BARRIER(row0, row1, row2, row3, pre) ((void)0)
#endif

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define SIMD128_C0 0x61707865u
#define SIMD128_C1 0x3320646eu
#define SIMD128_C2 0x79622d32u
#define SIMD128_C3 0x6b206574u

/* RFC 8439 2.1 on vectors: four independent quarter rounds, one per lane of a word-sliced
 * state (4-block path) or one per column of a block's rows (row path). SIMD128_QR_D and
 * SIMD128_QR_C are its tails from the first d and c steps, for quarter rounds whose first
 * steps were done ahead (simd128_blocks4). */
#define SIMD128_QR_C(a, b, c, d)  \
    do {                          \
        c = V_ADD(c, d);          \
        b = V_XROTL12(b, c);      \
        a = V_ADD(a, b);          \
        d = V_XROTL8(d, a);       \
        c = V_ADD(c, d);          \
        b = V_XROTL7(b, c);       \
    } while (0)
#define SIMD128_QR_D(a, b, c, d)  \
    do {                          \
        d = V_XROTL16(d, a);      \
        SIMD128_QR_C(a, b, c, d); \
    } while (0)
#define SIMD128_QR(a, b, c, d)    \
    do {                          \
        a = V_ADD(a, b);          \
        SIMD128_QR_D(a, b, c, d); \
    } while (0)

/* Four word vectors into the rows of four blocks, plus the input row (the same for all
 * four blocks once transposed; the counter went into its word vector before). */
#ifdef V_TRANSPOSE_ADD
#define SIMD128_ROWS(o, a0, a1, a2, a3, row) V_TRANSPOSE_ADD(a0, a1, a2, a3, row, o)
#else
#define SIMD128_ROWS(o, a0, a1, a2, a3, row) \
    do {                                    \
        V_TRANSPOSE(a0, a1, a2, a3, o);     \
        o[0] = V_ADD(o[0], row);            \
        o[1] = V_ADD(o[1], row);            \
        o[2] = V_ADD(o[2], row);            \
        o[3] = V_ADD(o[3], row);            \
    } while (0)
#endif
#ifndef V_XOR_OUT4
#define V_XOR_OUT4 V_XOR_OUT
#endif

/* Rows off / 16 and off / 16 + 1 of four blocks: 32 bytes at off of each. */
#define SIMD128_OUT4(off, lo, hi)                              \
    do {                                                       \
        V_XOR_OUT4(out, in, (off), lo[0], hi[0]);              \
        V_XOR_OUT4(out, in, (off) + 64, lo[1], hi[1]);         \
        V_XOR_OUT4(out, in, (off) + 128, lo[2], hi[2]);        \
        V_XOR_OUT4(out, in, (off) + 192, lo[3], hi[3]);        \
    } while (0)

/* n groups of 4 blocks: out = in ^ keystream(counter, counter + 1, ...). Out of line: one
 * copy serves the main loop and the 3-4 block tail.
 *
 * 16 word vectors, the constants, the counters and the input state as 4 rows are what
 * fits a 32-register file; 15 splatted input words held across the rounds would not. So
 * the rows are added back after the transposition.
 *
 * Only word 12, the block counter, differs between groups, so whatever the rounds compute
 * before they first read it is the same for every group of a call: three of the four
 * column quarter rounds of round 1, the first addition of the fourth, and the first steps
 * of two diagonal quarter rounds of round 2 (RFC 8439 2.3). That is computed once; each
 * iteration starts from the 13 results, loaded from `pre` (one load each, as the 15
 * splats of the input words were), and skips 34 of its 800 round operations. They are as
 * secret as the key, and `pre` is wiped. */
static __attribute__((noinline)) void simd128_blocks4(uint8_t *out, const uint8_t *in, size_t n,
                                                      const uint32_t key[8],
                                                      const uint32_t nonce[3], uint32_t counter)
{
    V_CONSTANTS;
    /* The counter word is 0 in row3 and comes from the per-lane counters. Blocks at 2^32
     * and beyond are never output (the caller checked), so the 32-bit lane additions may
     * wrap only in lanes whose keystream is thrown away. */
    v32 row0 = V_ROW(SIMD128_C0, SIMD128_C1, SIMD128_C2, SIMD128_C3);
    v32 row1 = V_ROW(key[0], key[1], key[2], key[3]);
    v32 row2 = V_ROW(key[4], key[5], key[6], key[7]);
    v32 row3 = V_ROW(0, nonce[0], nonce[1], nonce[2]);
    v32 ctr = V_ADD(V_DUP(counter), V_LANES);
    /* Words 0 (as x0 + x4), 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 where the loop takes
     * them up. */
    v32 pre[13];

    {
        v32 x1 = V_SPLAT(row0, 1), x5 = V_SPLAT(row1, 1), x9 = V_SPLAT(row2, 1),
            x13 = V_SPLAT(row3, 1), x2 = V_SPLAT(row0, 2), x6 = V_SPLAT(row1, 2),
            x10 = V_SPLAT(row2, 2), x14 = V_SPLAT(row3, 2), x3 = V_SPLAT(row0, 3),
            x7 = V_SPLAT(row1, 3), x11 = V_SPLAT(row2, 3), x15 = V_SPLAT(row3, 3);

        SIMD128_QR(x1, x5, x9, x13);
        SIMD128_QR(x2, x6, x10, x14);
        SIMD128_QR(x3, x7, x11, x15);
        x1 = V_ADD(x1, x6);           /* QR(x1, x6, x11, x12) up to d */
        x2 = V_ADD(x2, x7);           /* QR(x2, x7, x8, x13) up to c */
        x13 = V_XROTL16(x13, x2);
        pre[0] = V_ADD(V_SPLAT(row0, 0), V_SPLAT(row1, 0));
        pre[1] = x1; pre[2] = x5; pre[3] = x9; pre[4] = x13;
        pre[5] = x2; pre[6] = x6; pre[7] = x10; pre[8] = x14;
        pre[9] = x3; pre[10] = x7; pre[11] = x11; pre[12] = x15;
    }

    while (n--) {
        V_LOOP_BARRIER(row0, row1, row2, row3, pre);
        v32 x0 = pre[0], x4 = V_SPLAT(row1, 0), x8 = V_SPLAT(row2, 0), x12 = ctr;
        v32 x1 = pre[1], x5 = pre[2], x9 = pre[3], x13 = pre[4], x2 = pre[5], x6 = pre[6],
            x10 = pre[7], x14 = pre[8], x3 = pre[9], x7 = pre[10], x11 = pre[11],
            x15 = pre[12];
        v32 lo[4], hi[4];

        SIMD128_QR_D(x0, x4, x8, x12);
        SIMD128_QR(x0, x5, x10, x15);
        SIMD128_QR_D(x1, x6, x11, x12);
        SIMD128_QR_C(x2, x7, x8, x13);
        SIMD128_QR(x3, x4, x9, x14);
        _Pragma("GCC unroll 9") for (int i = 0; i < 9; i++) {
            SIMD128_QR(x0, x4, x8, x12);
            SIMD128_QR(x1, x5, x9, x13);
            SIMD128_QR(x2, x6, x10, x14);
            SIMD128_QR(x3, x7, x11, x15);
            SIMD128_QR(x0, x5, x10, x15);
            SIMD128_QR(x1, x6, x11, x12);
            SIMD128_QR(x2, x7, x8, x13);
            SIMD128_QR(x3, x4, x9, x14);
        }
        SIMD128_ROWS(lo, x0, x1, x2, x3, row0);
        SIMD128_ROWS(hi, x4, x5, x6, x7, row1);
        SIMD128_OUT4(0, lo, hi);
        SIMD128_ROWS(lo, x8, x9, x10, x11, row2);
        SIMD128_ROWS(hi, V_ADD(x12, ctr), x13, x14, x15, row3);
        SIMD128_OUT4(32, lo, hi);
        ctr = V_ADD(ctr, V_DUP(4));
        in += 256;
        out += 256;
    }
    ac_wipe(pre, sizeof pre);
}

/* out = in ^ ks for n < 64 bytes of keystream held in memory. */
static void simd128_xor_bytes(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        V_STOREU(out + i, V_XOR(V_LOADU(in + i), V_LOADU(ks + i)));
    for (; i < n; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
}

/* One block in row form (rows cccc kkkk kkkk bnnn): the quarter rounds work on columns,
 * and rotating rows 1-3 by one, two and three words turns the diagonals into columns and
 * back. For the last one or two blocks, where four lanes would mostly compute keystream
 * that is thrown away. */
static void simd128_block1(uint8_t *out, const uint8_t *in, size_t n, v32 a0, v32 b0, v32 c0,
                           v32 d0)
{
    V_CONSTANTS;
    v32 a = a0, b = b0, c = c0, d = d0;

    _Pragma("GCC unroll 10") for (int i = 0; i < 10; i++) {
        SIMD128_QR(a, b, c, d);
        b = V_ROTW(b, 1);
        c = V_ROTW(c, 2);
        d = V_ROTW(d, 3);
        SIMD128_QR(a, b, c, d);
        b = V_ROTW(b, 3);
        c = V_ROTW(c, 2);
        d = V_ROTW(d, 1);
    }
    a = V_ADD(a, a0);
    b = V_ADD(b, b0);
    c = V_ADD(c, c0);
    d = V_ADD(d, d0);
    if (n == 64) {
        V_XOR_OUT(out, in, 0, a, b);
        V_XOR_OUT(out, in, 32, c, d);
    } else {
        _Alignas(16) uint8_t ks[64];
        V_STORE_LE(ks, a);
        V_STORE_LE(ks + 16, b);
        V_STORE_LE(ks + 32, c);
        V_STORE_LE(ks + 48, d);
        simd128_xor_bytes(out, in, ks, n);
        ac_wipe(ks, sizeof ks);
    }
}

static void simd128_xor_stream(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                               const uint32_t nonce[3], uint32_t counter)
{
    if (len >= 256) {
        size_t n = len / 256;
        simd128_blocks4(out, in, n, key, nonce, counter);
        counter += (uint32_t)(4 * n);
        in += 256 * n;
        out += 256 * n;
        len %= 256;
    }
    if (len > 128) {
        /* 3 or 4 blocks: four lanes over a copy, cheaper than three row blocks. */
        _Alignas(16) uint8_t buf[256];
        memcpy(buf, in, len);
        simd128_blocks4(buf, buf, 1, key, nonce, counter);
        memcpy(out, buf, len);
        ac_wipe(buf, sizeof buf);
        return;
    }
    if (len > 0) {
        const v32 a = V_ROW(SIMD128_C0, SIMD128_C1, SIMD128_C2, SIMD128_C3);
        const v32 b = V_ROW(key[0], key[1], key[2], key[3]);
        const v32 c = V_ROW(key[4], key[5], key[6], key[7]);
        v32 d = V_ROW(counter, nonce[0], nonce[1], nonce[2]);

        for (;;) {
            size_t n = len < 64 ? len : 64;
            simd128_block1(out, in, n, a, b, c, d);
            len -= n;
            if (len == 0)
                break;
            in += 64;
            out += 64;
            d = V_ADD(d, V_ROW(1, 0, 0, 0));
        }
    }
}

#endif
