/* ChaCha20, POWER10 (ISA 3.1): 4 blocks per iteration (one state word per vector), the counter-free start of rounds 1-2 computed once per call, vpermxor for 16/8, vrlw for 12/7, lxvp/stxvp for the message; 1-block tail (RFC 8439 2.3-2.4). */
#if !defined(_ARCH_PWR10) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "chacha20/power10.c needs little-endian -mcpu=power10 (ISA_FLAGS_power10 in native/isa.mk)"
#endif

#include <altivec.h>

#include "common.h"
#include "chacha20/chacha20.h"

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

typedef __vector unsigned int u32x4;
typedef __vector unsigned char u8x16;
typedef __vector unsigned long long u64x2;

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865u
#define C1 0x3320646eu
#define C2 0x79622d32u
#define C3 0x6b206574u

/* vpermxor control vectors, big-endian byte indices written in little-endian element
 * order (see chacha20/power8.c): rotl16 and rotl8 of each word. */
#define ROT16_CTL {0xdd, 0xcc, 0xff, 0xee, 0x99, 0x88, 0xbb, 0xaa, \
                   0x55, 0x44, 0x77, 0x66, 0x11, 0x00, 0x33, 0x22}
#define ROT8_CTL  {0xcc, 0xff, 0xee, 0xdd, 0x88, 0xbb, 0xaa, 0x99, \
                   0x44, 0x77, 0x66, 0x55, 0x00, 0x33, 0x22, 0x11}

#define AC_INLINE static inline __attribute__((always_inline))

AC_INLINE u32x4 xor_rot(u32x4 d, u32x4 a, u8x16 ctl)
{
    return (u32x4)__builtin_crypto_vpermxor((u8x16)d, (u8x16)a, ctl);
}

/* RFC 8439 2.1 on vectors. QR_D and QR_C are its tails from the first d and c steps,
 * for quarter rounds whose first steps were done ahead (see blocks4). */
#define QR_C(a, b, c, d)               \
    do {                               \
        c += d;                        \
        b = vec_rl(b ^ c, s12);        \
        a += b;                        \
        d = xor_rot(d, a, r8);         \
        c += d;                        \
        b = vec_rl(b ^ c, s7);         \
    } while (0)
#define QR_D(a, b, c, d)               \
    do {                               \
        d = xor_rot(d, a, r16);        \
        QR_C(a, b, c, d);              \
    } while (0)
#define QR(a, b, c, d)                 \
    do {                               \
        a += b;                        \
        QR_D(a, b, c, d);              \
    } while (0)

/* Four words of four blocks (v_k = word k of blocks 0..3) into four block rows in
 * natural element order (element 0 = lowest word), as lxv/lxvp load them. */
AC_INLINE void transpose4(u32x4 a0, u32x4 a1, u32x4 a2, u32x4 a3, u32x4 o[4])
{
    u64x2 t0 = (u64x2)vec_mergeh(a0, a1); /* a0[0] a1[0] a0[1] a1[1] */
    u64x2 t1 = (u64x2)vec_mergeh(a2, a3); /* a2[0] a3[0] a2[1] a3[1] */
    u64x2 t2 = (u64x2)vec_mergel(a0, a1); /* a0[2] a1[2] a0[3] a1[3] */
    u64x2 t3 = (u64x2)vec_mergel(a2, a3); /* a2[2] a3[2] a2[3] a3[3] */

    o[0] = (u32x4)vec_mergeh(t0, t1); /* a0[0] a1[0] a2[0] a3[0] */
    o[1] = (u32x4)vec_mergel(t0, t1);
    o[2] = (u32x4)vec_mergeh(t2, t3);
    o[3] = (u32x4)vec_mergel(t2, t3);
}

AC_INLINE u32x4 load(const uint8_t *p)
{
    return vec_xl(0, (const unsigned int *)(const void *)p);
}

AC_INLINE void store(uint8_t *p, u32x4 v)
{
    vec_xst(v, 0, (unsigned int *)(void *)p);
}

/* out[off..off+31] = in[off..off+31] ^ (lo, hi) through one lxvp and one stxvp; off a
 * constant multiple of 16. Inline assembly because gcc 12 builds a __vector_pair for
 * stxvp with two register copies (__builtin_vsx_build_pair), 16 per 256 bytes. On
 * little-endian, lxvp puts the first 16 bytes in the odd register of the pair. */
#define XOR32(out, in, off, lo, hi)                                                   \
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

/* Rows of four blocks (o[b] = 16 bytes at offset 16 g of block b) for groups g, g + 1. */
#define XOR_OUT2(g, lo, hi)                                      \
    do {                                                         \
        XOR32(out, in, 16 * (g), lo[0], hi[0]);                  \
        XOR32(out, in, 16 * (g) + 64, lo[1], hi[1]);             \
        XOR32(out, in, 16 * (g) + 128, lo[2], hi[2]);            \
        XOR32(out, in, 16 * (g) + 192, lo[3], hi[3]);            \
    } while (0)

static inline void wipe(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* The final addition and output of one group of four blocks (x = its 16 words): rows
 * of a block are the same input row for all four blocks once transposed. */
#define FINISH4(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, ctr) \
    do {                                                                              \
        u32x4 o0[4], o1[4];                                                           \
        transpose4(x0, x1, x2, x3, o0);                                               \
        transpose4(x4, x5, x6, x7, o1);                                               \
        o0[0] += row0; o0[1] += row0; o0[2] += row0; o0[3] += row0;                   \
        o1[0] += row1; o1[1] += row1; o1[2] += row1; o1[3] += row1;                   \
        XOR_OUT2(0, o0, o1);                                                          \
        transpose4(x8, x9, x10, x11, o0);                                             \
        transpose4(x12 + (ctr), x13, x14, x15, o1);                                   \
        o0[0] += row2; o0[1] += row2; o0[2] += row2; o0[3] += row2;                   \
        o1[0] += row3; o1[1] += row3; o1[2] += row3; o1[3] += row3;                   \
        XOR_OUT2(2, o0, o1);                                                          \
    } while (0)

/* Input state rows in natural element order; the counter word is 0 in row3 and comes
 * from the per-lane counters. The blocks at 2^32 and beyond are never output (the
 * caller checked), so the 32-bit lane adds may wrap only in discarded lanes. */
#define STATE_ROWS                                                    \
    u32x4 row0 = {C0, C1, C2, C3};                                    \
    u32x4 row1 = {key[0], key[1], key[2], key[3]};                    \
    u32x4 row2 = {key[4], key[5], key[6], key[7]};                    \
    u32x4 row3 = {0, nonce[0], nonce[1], nonce[2]}

/* n groups of 4 blocks: out = in ^ keystream(counter, counter + 1, ...). Out of line:
 * one copy serves the main loop and the 3-4 block tail.
 *
 * Only word 12, the block counter, differs between groups, so whatever the rounds
 * compute before they first read it is the same for every group of a call: three of
 * the four column quarter rounds of round 1, the first addition of the fourth, and
 * the first steps of two diagonal quarter rounds of round 2 (RFC 8439 2.3). That is
 * computed once; each iteration starts from the 13 results, loaded from `pre` (one
 * lxv each, as the 15 splats of the input words were), and skips 34 of its 800 round
 * instructions. They are as secret as the key: the barrier in the loop keeps gcc
 * reading them from `pre`, which is wiped, rather than spilling copies of its own. */
static __attribute__((noinline)) void blocks4(uint8_t *out, const uint8_t *in, size_t n,
                                              const uint32_t key[8], const uint32_t nonce[3],
                                              uint32_t counter)
{
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;
    const u32x4 s12 = vec_splats(12u), s7 = vec_splats(7u);
    STATE_ROWS;
    u32x4 ctr = vec_splats(counter) + (u32x4){0, 1, 2, 3};
    /* Words 0 (as x0 + x4), 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 where the
     * loop takes them up. */
    u32x4 pre[13];

    {
        u32x4 x1 = vec_splat(row0, 1), x5 = vec_splat(row1, 1), x9 = vec_splat(row2, 1),
              x13 = vec_splat(row3, 1), x2 = vec_splat(row0, 2), x6 = vec_splat(row1, 2),
              x10 = vec_splat(row2, 2), x14 = vec_splat(row3, 2), x3 = vec_splat(row0, 3),
              x7 = vec_splat(row1, 3), x11 = vec_splat(row2, 3), x15 = vec_splat(row3, 3);

        QR(x1, x5, x9, x13);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        x1 += x6;                     /* QR(x1, x6, x11, x12) up to d */
        x2 += x7;                     /* QR(x2, x7, x8, x13) up to c */
        x13 = xor_rot(x13, x2, r16);
        pre[0] = vec_splat(row0, 0) + vec_splat(row1, 0);
        pre[1] = x1; pre[2] = x5; pre[3] = x9; pre[4] = x13;
        pre[5] = x2; pre[6] = x6; pre[7] = x10; pre[8] = x14;
        pre[9] = x3; pre[10] = x7; pre[11] = x11; pre[12] = x15;
    }

    while (n--) {
        __asm__("" : "+v"(row0), "+v"(row1), "+v"(row2), "+v"(row3), "+m"(pre));
        u32x4 x0 = pre[0], x4 = vec_splat(row1, 0), x8 = vec_splat(row2, 0), x12 = ctr;
        u32x4 x1 = pre[1], x5 = pre[2], x9 = pre[3], x13 = pre[4], x2 = pre[5], x6 = pre[6],
              x10 = pre[7], x14 = pre[8], x3 = pre[9], x7 = pre[10], x11 = pre[11],
              x15 = pre[12];

        QR_D(x0, x4, x8, x12);
        QR(x0, x5, x10, x15);
        QR_D(x1, x6, x11, x12);
        QR_C(x2, x7, x8, x13);
        QR(x3, x4, x9, x14);

        _Pragma("GCC unroll 9") for (int i = 0; i < 9; i++) {
            QR(x0, x4, x8, x12);
            QR(x1, x5, x9, x13);
            QR(x2, x6, x10, x14);
            QR(x3, x7, x11, x15);
            QR(x0, x5, x10, x15);
            QR(x1, x6, x11, x12);
            QR(x2, x7, x8, x13);
            QR(x3, x4, x9, x14);
        }
        FINISH4(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, ctr);
        ctr += vec_splats(4u);
        in += 256;
        out += 256;
    }
    wipe(pre, sizeof pre);
}

/* out = in ^ ks for n < 64 bytes of keystream held in memory. */
static void xor_bytes(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        store(out + i, load(in + i) ^ load(ks + i));
    for (; i < n; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
}

/* One block in row form (rows cccc kkkk kkkk bnnn), diagonals turned into columns by
 * rotating rows 1-3; for the last one or two blocks. */
static void block1(uint8_t *out, const uint8_t *in, size_t n, u32x4 a0, u32x4 b0, u32x4 c0,
                   u32x4 d0)
{
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;
    const u32x4 s12 = vec_splats(12u), s7 = vec_splats(7u);
    /* vec_perm indices in little-endian element order: element i takes element i + k. */
    const u8x16 rot1 = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3};
    const u8x16 rot2 = {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7};
    const u8x16 rot3 = {12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    u32x4 a = a0, b = b0, c = c0, d = d0;

    _Pragma("GCC unroll 10") for (int i = 0; i < 10; i++) {
        QR(a, b, c, d);
        b = vec_perm(b, b, rot1);
        c = vec_perm(c, c, rot2);
        d = vec_perm(d, d, rot3);
        QR(a, b, c, d);
        b = vec_perm(b, b, rot3);
        c = vec_perm(c, c, rot2);
        d = vec_perm(d, d, rot1);
    }
    a += a0;
    b += b0;
    c += c0;
    d += d0;
    if (n == 64) {
        XOR32(out, in, 0, a, b);
        XOR32(out, in, 32, c, d);
    } else {
        _Alignas(16) uint8_t ks[64];
        store(ks, a);
        store(ks + 16, b);
        store(ks + 32, c);
        store(ks + 48, d);
        xor_bytes(out, in, ks, n);
        wipe(ks, sizeof ks);
    }
}

static void chacha20_power10_xor(uint8_t *out, const uint8_t *in, size_t len,
                                 const uint32_t key[8], const uint32_t nonce[3],
                                 uint32_t counter)
{
    if (len >= 256) {
        size_t n = len / 256;
        blocks4(out, in, n, key, nonce, counter);
        counter += (uint32_t)(4 * n);
        in += 256 * n;
        out += 256 * n;
        len %= 256;
    }
    if (len > 128) {
        /* 3 or 4 blocks: four lanes over a copy, cheaper than three row blocks. */
        _Alignas(16) uint8_t buf[256];
        memcpy(buf, in, len);
        blocks4(buf, buf, 1, key, nonce, counter);
        memcpy(out, buf, len);
        wipe(buf, sizeof buf);
        return;
    }
    if (len > 0) {
        const u32x4 a = {C0, C1, C2, C3};
        const u32x4 b = {key[0], key[1], key[2], key[3]};
        const u32x4 c = {key[4], key[5], key[6], key[7]};
        u32x4 d = {counter, nonce[0], nonce[1], nonce[2]};

        for (;;) {
            size_t n = len < 64 ? len : 64;
            block1(out, in, n, a, b, c, d);
            len -= n;
            if (len == 0)
                break;
            in += 64;
            out += 64;
            d += (u32x4){1, 0, 0, 0};
        }
    }
}

const chacha20_kernel archcrypt_chacha20_power10 = {
    .xor_stream = chacha20_power10_xor,
};
