/* ChaCha20 over any 128-bit vector unit: 4 blocks per iteration vertically (one state word per vector, one block per lane), the counter-free start of rounds 1-2 computed once per call, 1-2 block tails one block per row vector; written once over a small vocabulary that an ISA file defines (RFC 8439 2.3-2.4). */
#ifndef ARCHCRYPT_CHACHA20_BODY128_H
#define ARCHCRYPT_CHACHA20_BODY128_H

/*
 * The including file (chacha20/neon.c) defines, then includes this header once:
 *
 *   v32                       the vector type, four 32-bit lanes; lane 0 is word 0
 *   V_ADD(a, b), V_XOR(a, b)  lane-wise
 *   V_XROT16(d, a) .. V_XROT7 rotl(d ^ a, n): ISAs that fuse the xor into the rotate
 *                             (POWER's vpermxor) say so here
 *   V_CONSTANTS               declarations the rotates need (shuffle tables), in scope
 *   V_SPLAT(w), V_SET(w0, w1, w2, w3)
 *   V_LANES(x, k)             lane i takes lane i + k (mod 4)
 *   V_LOAD(p), V_STORE(p, v)  16 bytes of little-endian words <-> lanes 0..3, unaligned
 *   V_TRANSPOSE(a, b, c, d)   4x4 transpose of words, in place
 *   V_WIPE(p, n)              zero n bytes (a multiple of 16) the compiler may not drop
 *   BODY128_SLUG              the row's slug: archcrypt_chacha20_<slug> is defined here
 *
 * and gets chacha20_body128_xor, the kernel's xor_stream. The byte order is the
 * vocabulary's business (V_LOAD/V_STORE); this header is the algorithm alone.
 */

#include "common.h"
#include "chacha20/chacha20.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define B128_C0 0x61707865u
#define B128_C1 0x3320646eu
#define B128_C2 0x79622d32u
#define B128_C3 0x6b206574u

#define B128_INLINE static inline __attribute__((always_inline))

/* RFC 8439 2.1 on vectors: four independent quarter rounds, one per lane of a
 * word-sliced state (4-block path) or one per column of a row state (1-block path).
 * QR_C and QR_D are its tails from the first c and d steps, for quarter rounds whose
 * first steps were done ahead (see body128_blocks4). */
#define B128_QR_C(a, b, c, d)          \
    do {                               \
        c = V_ADD(c, d);               \
        b = V_XROT12(b, c);            \
        a = V_ADD(a, b);               \
        d = V_XROT8(d, a);             \
        c = V_ADD(c, d);               \
        b = V_XROT7(b, c);             \
    } while (0)
#define B128_QR_D(a, b, c, d)          \
    do {                               \
        d = V_XROT16(d, a);            \
        B128_QR_C(a, b, c, d);         \
    } while (0)
#define B128_QR(a, b, c, d)            \
    do {                               \
        a = V_ADD(a, b);               \
        B128_QR_D(a, b, c, d);         \
    } while (0)

/* out = in ^ four block rows of keystream, block k's row at offset 64 k. */
#define B128_XOR_OUT(off, r0, r1, r2, r3)                                     \
    do {                                                                      \
        V_STORE(out + (off), V_XOR(V_LOAD(in + (off)), (r0)));                \
        V_STORE(out + (off) + 64, V_XOR(V_LOAD(in + (off) + 64), (r1)));      \
        V_STORE(out + (off) + 128, V_XOR(V_LOAD(in + (off) + 128), (r2)));    \
        V_STORE(out + (off) + 192, V_XOR(V_LOAD(in + (off) + 192), (r3)));    \
    } while (0)

/*
 * n groups of 4 blocks: out = in ^ keystream(counter, counter + 1, ...). Out of line: one
 * copy serves the main loop and the 3-4 block tail.
 *
 * The input is added back after the transposition, as four rows that are the same for
 * every block (the counter is added before): 16 splatted words held across the rounds
 * would not fit beside the 16 working vectors. Only word 12, the block counter, differs
 * between groups, so whatever the rounds compute before they first read it is the same for
 * every group of a call: three of the four column quarter rounds of round 1, the first
 * addition of the fourth, and the first steps of two diagonal quarter rounds of round 2.
 * That is computed once into `pre` (as secret as the key, wiped after); each group starts
 * from its 13 vectors and skips ~45 of its ~1,150 instructions (POWER8's design).
 */
static __attribute__((noinline)) void body128_blocks4(uint8_t *out, const uint8_t *in, size_t n,
                                                      const uint32_t key[8], const uint32_t nonce[3],
                                                      uint32_t counter)
{
    V_CONSTANTS;
    const v32 row0 = V_SET(B128_C0, B128_C1, B128_C2, B128_C3);
    const v32 row1 = V_SET(key[0], key[1], key[2], key[3]);
    const v32 row2 = V_SET(key[4], key[5], key[6], key[7]);
    const v32 row3 = V_SET(0, nonce[0], nonce[1], nonce[2]);
    /* Blocks at 2^32 and beyond are never output (the caller checked), so the 32-bit lane
     * adds may wrap only in lanes whose keystream is thrown away. */
    v32 ctr = V_ADD(V_SPLAT(counter), V_SET(0, 1, 2, 3));
    /* Words 0 (as x0 + x4), 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 where the loop takes
     * them up. */
    v32 pre[13];

    {
        v32 x1 = V_SPLAT(B128_C1), x5 = V_SPLAT(key[1]), x9 = V_SPLAT(key[5]),
            x13 = V_SPLAT(nonce[0]), x2 = V_SPLAT(B128_C2), x6 = V_SPLAT(key[2]),
            x10 = V_SPLAT(key[6]), x14 = V_SPLAT(nonce[1]), x3 = V_SPLAT(B128_C3),
            x7 = V_SPLAT(key[3]), x11 = V_SPLAT(key[7]), x15 = V_SPLAT(nonce[2]);

        B128_QR(x1, x5, x9, x13);
        B128_QR(x2, x6, x10, x14);
        B128_QR(x3, x7, x11, x15);
        x1 = V_ADD(x1, x6);             /* QR(x1, x6, x11, x12) up to d */
        x2 = V_ADD(x2, x7);             /* QR(x2, x7, x8, x13) up to c */
        x13 = V_XROT16(x13, x2);
        pre[0] = V_SPLAT(B128_C0 + key[0]);
        pre[1] = x1; pre[2] = x5; pre[3] = x9; pre[4] = x13;
        pre[5] = x2; pre[6] = x6; pre[7] = x10; pre[8] = x14;
        pre[9] = x3; pre[10] = x7; pre[11] = x11; pre[12] = x15;
    }

    while (n--) {
        v32 x0 = pre[0], x4 = V_SPLAT(key[0]), x8 = V_SPLAT(key[4]), x12 = ctr;
        v32 x1 = pre[1], x5 = pre[2], x9 = pre[3], x13 = pre[4], x2 = pre[5], x6 = pre[6],
            x10 = pre[7], x14 = pre[8], x3 = pre[9], x7 = pre[10], x11 = pre[11],
            x15 = pre[12];

        B128_QR_D(x0, x4, x8, x12);
        B128_QR(x0, x5, x10, x15);
        B128_QR_D(x1, x6, x11, x12);
        B128_QR_C(x2, x7, x8, x13);
        B128_QR(x3, x4, x9, x14);
        _Pragma("GCC unroll 9") for (int i = 0; i < 9; i++) {
            B128_QR(x0, x4, x8, x12);
            B128_QR(x1, x5, x9, x13);
            B128_QR(x2, x6, x10, x14);
            B128_QR(x3, x7, x11, x15);
            B128_QR(x0, x5, x10, x15);
            B128_QR(x1, x6, x11, x12);
            B128_QR(x2, x7, x8, x13);
            B128_QR(x3, x4, x9, x14);
        }
        V_TRANSPOSE(x0, x1, x2, x3);
        B128_XOR_OUT(0, V_ADD(x0, row0), V_ADD(x1, row0), V_ADD(x2, row0), V_ADD(x3, row0));
        V_TRANSPOSE(x4, x5, x6, x7);
        B128_XOR_OUT(16, V_ADD(x4, row1), V_ADD(x5, row1), V_ADD(x6, row1), V_ADD(x7, row1));
        V_TRANSPOSE(x8, x9, x10, x11);
        B128_XOR_OUT(32, V_ADD(x8, row2), V_ADD(x9, row2), V_ADD(x10, row2), V_ADD(x11, row2));
        x12 = V_ADD(x12, ctr);
        V_TRANSPOSE(x12, x13, x14, x15);
        B128_XOR_OUT(48, V_ADD(x12, row3), V_ADD(x13, row3), V_ADD(x14, row3),
                     V_ADD(x15, row3));
        ctr = V_ADD(ctr, V_SPLAT(4));
        in += 256;
        out += 256;
    }
    V_WIPE(pre, sizeof pre);
}

/* out = in ^ ks for n < 256 bytes of keystream held in memory. */
B128_INLINE void body128_xor_bytes(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16)
        V_STORE(out + i, V_XOR(V_LOAD(in + i), V_LOAD(ks + i)));
    for (; i < n; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
}

/* One block in row form (rows cccc kkkk kkkk bnnn): the quarter rounds work on columns,
 * and rotating rows 1-3 by one, two and three lanes turns the diagonals into columns and
 * back. For the last one or two blocks, where four lanes would mostly compute keystream
 * that is thrown away. n <= 64 bytes. */
static void body128_block1(uint8_t *out, const uint8_t *in, size_t n, v32 a0, v32 b0, v32 c0,
                           v32 d0)
{
    V_CONSTANTS;
    v32 a = a0, b = b0, c = c0, d = d0;

    _Pragma("GCC unroll 10") for (int i = 0; i < 10; i++) {
        B128_QR(a, b, c, d);
        b = V_LANES(b, 1);
        c = V_LANES(c, 2);
        d = V_LANES(d, 3);
        B128_QR(a, b, c, d);
        b = V_LANES(b, 3);
        c = V_LANES(c, 2);
        d = V_LANES(d, 1);
    }
    a = V_ADD(a, a0);
    b = V_ADD(b, b0);
    c = V_ADD(c, c0);
    d = V_ADD(d, d0);
    if (n == 64) {
        V_STORE(out, V_XOR(V_LOAD(in), a));
        V_STORE(out + 16, V_XOR(V_LOAD(in + 16), b));
        V_STORE(out + 32, V_XOR(V_LOAD(in + 32), c));
        V_STORE(out + 48, V_XOR(V_LOAD(in + 48), d));
    } else {
        _Alignas(16) uint8_t ks[64];

        V_STORE(ks, a);
        V_STORE(ks + 16, b);
        V_STORE(ks + 32, c);
        V_STORE(ks + 48, d);
        body128_xor_bytes(out, in, ks, n);
        V_WIPE(ks, sizeof ks);
    }
}

static void chacha20_body128_xor(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                                 const uint32_t nonce[3], uint32_t counter)
{
    if (len >= 256) {
        size_t n = len / 256;

        body128_blocks4(out, in, n, key, nonce, counter);
        counter += (uint32_t)(4 * n);
        in += 256 * n;
        out += 256 * n;
        len %= 256;
    }
    if (len > 128) {
        /* 3 or 4 blocks: four lanes over a copy, cheaper than three row blocks. */
        _Alignas(16) uint8_t buf[256];

        memcpy(buf, in, len);
        body128_blocks4(buf, buf, 1, key, nonce, counter);
        memcpy(out, buf, len);
        V_WIPE(buf, sizeof buf);
        return;
    }
    if (len > 0) {
        const v32 a = V_SET(B128_C0, B128_C1, B128_C2, B128_C3);
        const v32 b = V_SET(key[0], key[1], key[2], key[3]);
        const v32 c = V_SET(key[4], key[5], key[6], key[7]);
        v32 d = V_SET(counter, nonce[0], nonce[1], nonce[2]);

        for (;;) {
            size_t n = len < 64 ? len : 64;

            body128_block1(out, in, n, a, b, c, d);
            len -= n;
            if (len == 0)
                break;
            in += 64;
            out += 64;
            d = V_ADD(d, V_SET(1, 0, 0, 0));
        }
    }
}

#define B128_KERNEL_(slug) archcrypt_chacha20_##slug
#define B128_KERNEL(slug) B128_KERNEL_(slug)
const chacha20_kernel B128_KERNEL(BODY128_SLUG) = {
    .xor_stream = chacha20_body128_xor,
};
#undef B128_KERNEL
#undef B128_KERNEL_

#endif
