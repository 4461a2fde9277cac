/* ChaCha20, POWER8 VSX: 4 blocks per iteration (one state word per vector, one block per lane), the counter-free start of rounds 1-2 computed once per call, vpermxor for xor+rotate by 16/8, vrlw for 12/7; 1-2 block tails one block per row vector (RFC 8439 2.3-2.4). */
#if !defined(__POWER8_VECTOR__) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "chacha20/power8.c needs little-endian -mcpu=power8 -mcrypto (ISA_FLAGS_power8 in native/isa.mk)"
#endif

#include <altivec.h>

#include "common.h"
#include "chacha20/chacha20.h"

typedef __vector unsigned int u32x4;
typedef __vector unsigned char u8x16;
typedef __vector unsigned long long u64x2;

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865u
#define C1 0x3320646eu
#define C2 0x79622d32u
#define C3 0x6b206574u

/* vpermxor(a, b, c) byte i = a[c_i >> 4] ^ b[c_i & 15], indices numbered big-endian
 * (byte 0 is the most significant byte of word 0). Word j is bytes 4j..4j+3, so
 * rotl16 takes byte 4j + ((k + 2) & 3) into byte 4j + k, rotl8 byte 4j + ((k + 1) & 3).
 * Written here in little-endian element order (element i is big-endian byte 15 - i);
 * the self-test checks the result against portable. */
#define ROT16_CTL {0xdd, 0xcc, 0xff, 0xee, 0x99, 0x88, 0xbb, 0xaa, \
                   0x55, 0x44, 0x77, 0x66, 0x11, 0x00, 0x33, 0x22}
#define ROT8_CTL  {0xcc, 0xff, 0xee, 0xdd, 0x88, 0xbb, 0xaa, 0x99, \
                   0x44, 0x77, 0x66, 0x55, 0x00, 0x33, 0x22, 0x11}

#define AC_INLINE static inline __attribute__((always_inline))

/* d = rotl(d ^ a, 16 or 8) in one vpermxor: the same byte permutation applied to
 * both operands commutes with the xor. */
AC_INLINE u32x4 xor_rot(u32x4 d, u32x4 a, u8x16 ctl)
{
    return (u32x4)__builtin_crypto_vpermxor((u8x16)d, (u8x16)a, ctl);
}

/* RFC 8439 2.1 on vectors: four independent quarter rounds, one per element of a
 * word-sliced state (4-block path) or one per column of a row state (1-block path).
 * QR_D and QR_C are its tails from the first d and c steps, for quarter rounds whose
 * first steps were done ahead (see blocks4). */
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

/* Four words of four blocks (v_k = word k of blocks 0..3) into four block rows in the
 * element order lxvw4x/stxvw4x use on little-endian (element 0 = highest word), so
 * that loads and stores need no doubleword swaps. */
AC_INLINE void transpose4(u32x4 a0, u32x4 a1, u32x4 a2, u32x4 a3, u32x4 o[4])
{
    u64x2 t0 = (u64x2)vec_mergeh(a1, a0); /* a1[0] a0[0] a1[1] a0[1] */
    u64x2 t1 = (u64x2)vec_mergeh(a3, a2); /* a3[0] a2[0] a3[1] a2[1] */
    u64x2 t2 = (u64x2)vec_mergel(a1, a0); /* a1[2] a0[2] a1[3] a0[3] */
    u64x2 t3 = (u64x2)vec_mergel(a3, a2); /* a3[2] a2[2] a3[3] a2[3] */

    o[0] = (u32x4)vec_mergeh(t1, t0); /* a3[0] a2[0] a1[0] a0[0] */
    o[1] = (u32x4)vec_mergel(t1, t0);
    o[2] = (u32x4)vec_mergeh(t3, t2);
    o[3] = (u32x4)vec_mergel(t3, t2);
}

AC_INLINE u32x4 load_be(const uint8_t *p)
{
    return vec_xl_be(0, (const unsigned int *)(const void *)p);
}

AC_INLINE void store_be(uint8_t *p, u32x4 v)
{
    vec_xst_be(v, 0, (unsigned int *)(void *)p);
}

/* Indexed forms: base + offset register, the offsets loop-invariant. */
AC_INLINE u32x4 load_be_at(const uint8_t *p, long off)
{
    return vec_xl_be(off, (const unsigned int *)(const void *)p);
}

AC_INLINE void store_be_at(uint8_t *p, long off, u32x4 v)
{
    vec_xst_be(v, off, (unsigned int *)(void *)p);
}

/* out = in ^ four block rows of keystream, rows in lxvw4x element order. */
#define XOR_OUT(off, o)                                                   \
    do {                                                                  \
        store_be_at(out, (off), load_be_at(in, (off)) ^ (o)[0]);              \
        store_be_at(out, (off) + 64, load_be_at(in, (off) + 64) ^ (o)[1]);    \
        store_be_at(out, (off) + 128, load_be_at(in, (off) + 128) ^ (o)[2]);  \
        store_be_at(out, (off) + 192, load_be_at(in, (off) + 192) ^ (o)[3]);  \
    } while (0)

/* memset that the optimiser may not drop (see poly1305/scalar64.h). */
static inline void wipe(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* n groups of 4 blocks: out = in ^ keystream(counter, counter + 1, ...). Out of line:
 * one copy serves the main loop and the 3-4 block tail.
 *
 * Registers: 16 working vectors, 4 rotate constants, the counters and the input state
 * as 4 rows fill 25 of the 32 vector registers; 15 splatted input words held across
 * the rounds would not fit. So the rows are added back after the transposition, where
 * a row is the same for all four blocks (the counter is added before it).
 *
 * Only word 12, the block counter, differs between groups, so whatever the rounds
 * compute before they first read it is the same for every group of a call: three of
 * the four column quarter rounds of round 1, the first addition of the fourth, and
 * the first steps of two diagonal quarter rounds of round 2 (RFC 8439 2.3). That is
 * computed once; each iteration starts from the 13 results, loaded from `pre` (one
 * load each, as the 15 splats of the input words were), and skips 34 of its 800
 * round instructions. They are as secret as the key, and `pre` is wiped; gcc 12
 * loads them from there and keeps no copies of its own on the stack (a "+m" barrier
 * on `pre`, as in power10.c, makes it address them through extra registers here,
 * without DQ-form loads: 47 more instructions per iteration). */
static __attribute__((noinline)) void blocks4(uint8_t *out, const uint8_t *in, size_t n,
                                              const uint32_t key[8], const uint32_t nonce[3],
                                              uint32_t counter)
{
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;
    const u32x4 s12 = vec_splats(12u), s7 = vec_splats(7u);
    /* Rows in lxvw4x element order (element 0 = highest word), like the output. */
    u32x4 row0 = {C3, C2, C1, C0};
    u32x4 row1 = {key[3], key[2], key[1], key[0]};
    u32x4 row2 = {key[7], key[6], key[5], key[4]};
    u32x4 row3 = {nonce[2], nonce[1], nonce[0], 0};
    /* Blocks at 2^32 and beyond are never output (the caller checked), so the 32-bit
     * lane adds may wrap only in lanes whose keystream is thrown away. */
    u32x4 ctr = vec_splats(counter) + (u32x4){0, 1, 2, 3};
    /* Words 0 (as x0 + x4), 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 where the
     * loop takes them up. */
    u32x4 pre[13];

    {
        u32x4 x1 = vec_splat(row0, 2), x5 = vec_splat(row1, 2), x9 = vec_splat(row2, 2),
              x13 = vec_splat(row3, 2), x2 = vec_splat(row0, 1), x6 = vec_splat(row1, 1),
              x10 = vec_splat(row2, 1), x14 = vec_splat(row3, 1), x3 = vec_splat(row0, 0),
              x7 = vec_splat(row1, 0), x11 = vec_splat(row2, 0), x15 = vec_splat(row3, 0);

        QR(x1, x5, x9, x13);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        x1 += x6;                     /* QR(x1, x6, x11, x12) up to d */
        x2 += x7;                     /* QR(x2, x7, x8, x13) up to c */
        x13 = xor_rot(x13, x2, r16);
        pre[0] = vec_splat(row0, 3) + vec_splat(row1, 3);
        pre[1] = x1; pre[2] = x5; pre[3] = x9; pre[4] = x13;
        pre[5] = x2; pre[6] = x6; pre[7] = x10; pre[8] = x14;
        pre[9] = x3; pre[10] = x7; pre[11] = x11; pre[12] = x15;
    }

    while (n--) {
        __asm__("" : "+v"(row0), "+v"(row1), "+v"(row2), "+v"(row3));
        u32x4 x0 = pre[0], x4 = vec_splat(row1, 3), x8 = vec_splat(row2, 3), x12 = ctr;
        u32x4 x1 = pre[1], x5 = pre[2], x9 = pre[3], x13 = pre[4], x2 = pre[5], x6 = pre[6],
              x10 = pre[7], x14 = pre[8], x3 = pre[9], x7 = pre[10], x11 = pre[11],
              x15 = pre[12];
        u32x4 o[4];

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
        transpose4(x0, x1, x2, x3, o);
        o[0] += row0; o[1] += row0; o[2] += row0; o[3] += row0;
        XOR_OUT(0, o);
        transpose4(x4, x5, x6, x7, o);
        o[0] += row1; o[1] += row1; o[2] += row1; o[3] += row1;
        XOR_OUT(16, o);
        transpose4(x8, x9, x10, x11, o);
        o[0] += row2; o[1] += row2; o[2] += row2; o[3] += row2;
        XOR_OUT(32, o);
        transpose4(x12 + ctr, x13, x14, x15, o);
        o[0] += row3; o[1] += row3; o[2] += row3; o[3] += row3;
        XOR_OUT(48, o);
        ctr += vec_splats(4u);
        in += 256;
        out += 256;
    }
    wipe(pre, sizeof pre);
}

/* out = in ^ ks for n < 256 bytes of keystream held in memory. */
static void xor_bytes(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        store_be(out + i, load_be(in + i) ^ load_be(ks + i));
    for (; i < n; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
}

/* One block in row form (rows cccc kkkk kkkk bnnn): the quarter rounds work on
 * columns, and rotating rows 1-3 by one, two and three words turns the diagonals
 * into columns and back. Used for the last one or two blocks, where four lanes
 * would mostly compute keystream that is thrown away. */
static void block1(uint8_t *out, const uint8_t *in, size_t n, u32x4 a0, u32x4 b0, u32x4 c0,
                   u32x4 d0)
{
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;
    const u32x4 s12 = vec_splats(12u), s7 = vec_splats(7u);
    /* vec_perm indices in little-endian element order: element i takes element i + k. */
    const u8x16 rot1 = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3};
    const u8x16 rot2 = {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7};
    const u8x16 rot3 = {12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    /* Reverse the words: row order to lxvw4x element order. */
    const u8x16 rev = {12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3};
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
    a = vec_perm(a + a0, a + a0, rev);
    b = vec_perm(b + b0, b + b0, rev);
    c = vec_perm(c + c0, c + c0, rev);
    d = vec_perm(d + d0, d + d0, rev);
    if (n == 64) {
        store_be(out, load_be(in) ^ a);
        store_be(out + 16, load_be(in + 16) ^ b);
        store_be(out + 32, load_be(in + 32) ^ c);
        store_be(out + 48, load_be(in + 48) ^ d);
    } else {
        _Alignas(16) uint8_t ks[64];
        store_be(ks, a);
        store_be(ks + 16, b);
        store_be(ks + 32, c);
        store_be(ks + 48, d);
        xor_bytes(out, in, ks, n);
        wipe(ks, sizeof ks);
    }
}

static void chacha20_power8_xor(uint8_t *out, const uint8_t *in, size_t len,
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

const chacha20_kernel archcrypt_chacha20_power8 = {
    .xor_stream = chacha20_power8_xor,
};
