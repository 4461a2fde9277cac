/* ChaCha20, POWER10 (ISA 3.1): 8 blocks per iteration (two word-sliced groups of 4 in all 32 vector registers, one parked in a VSX register around each rotate), vpermxor for 16/8, vrlw for 12/7, lxvp/stxvp pairs; 4-block and 1-block tails (RFC 8439 2.3-2.4). */
#if !defined(_ARCH_PWR10) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "chacha20/power10.c needs little-endian -mcpu=power10 (ISA_FLAGS_power10 in native/Makefile)"
#endif

#include <altivec.h>

#include "common.h"
#include "chacha20/chacha20.h"

extern const chacha20_kernel archcrypt_chacha20_power10;

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

#define QR(a, b, c, d)                 \
    do {                               \
        a += b;                        \
        d = xor_rot(d, a, r16);        \
        c += d;                        \
        b = vec_rl(b ^ c, s12);        \
        a += b;                        \
        d = xor_rot(d, a, r8);         \
        c += d;                        \
        b = vec_rl(b ^ c, s7);         \
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

/* out[0..31] = in[0..31] ^ (lo, hi) through one lxvp and one stxvp. */
AC_INLINE void xor32(uint8_t *out, const uint8_t *in, u32x4 lo, u32x4 hi)
{
    const void *src = in;
    void *dst = out;
    __vector_pair p = __builtin_vsx_lxvp(0, (const __vector_pair *)src);
    u8x16 v[2];

    __builtin_vsx_disassemble_pair(v, &p);
    __builtin_vsx_build_pair(&p, (u8x16)((u32x4)v[0] ^ lo), (u8x16)((u32x4)v[1] ^ hi));
    __builtin_vsx_stxvp(p, 0, (__vector_pair *)dst);
}

/* Rows of four blocks (o[b] = 16 bytes at offset 16 g of block b) for groups g, g + 1. */
#define XOR_OUT2(g, lo, hi)                                  \
    do {                                                     \
        xor32(out + 16 * (g), in + 16 * (g), lo[0], hi[0]);             \
        xor32(out + 16 * (g) + 64, in + 16 * (g) + 64, lo[1], hi[1]);   \
        xor32(out + 16 * (g) + 128, in + 16 * (g) + 128, lo[2], hi[2]); \
        xor32(out + 16 * (g) + 192, in + 16 * (g) + 192, lo[3], hi[3]); \
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

/* n groups of 4 blocks (the 256-511 byte remainder and the 3-4 block tail). */
static __attribute__((noinline)) void blocks4(uint8_t *out, const uint8_t *in, size_t n,
                                              const uint32_t key[8], const uint32_t nonce[3],
                                              uint32_t counter)
{
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;
    const u32x4 s12 = vec_splats(12u), s7 = vec_splats(7u);
    STATE_ROWS;
    u32x4 ctr = vec_splats(counter) + (u32x4){0, 1, 2, 3};

    while (n--) {
        __asm__("" : "+v"(row0), "+v"(row1), "+v"(row2), "+v"(row3));
        u32x4 x0 = vec_splat(row0, 0), x1 = vec_splat(row0, 1), x2 = vec_splat(row0, 2),
              x3 = vec_splat(row0, 3), x4 = vec_splat(row1, 0), x5 = vec_splat(row1, 1),
              x6 = vec_splat(row1, 2), x7 = vec_splat(row1, 3), x8 = vec_splat(row2, 0),
              x9 = vec_splat(row2, 1), x10 = vec_splat(row2, 2), x11 = vec_splat(row2, 3),
              x12 = ctr, x13 = vec_splat(row3, 1), x14 = vec_splat(row3, 2),
              x15 = vec_splat(row3, 3);

        _Pragma("GCC unroll 10") for (int i = 0; i < 10; i++) {
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
}

/* ---- 8 blocks per iteration ----------------------------------------------------
 *
 * Two word-sliced groups of four blocks, X in v0-v15 and Y in v16-v31, fill all 32
 * vector registers, and vadduwm, vrlw and vpermxor only address those (vs32-vs63).
 * Each step of a quarter round needs one constant in a vector register (the vpermxor
 * control for 16 or 8, the splat for 12 or 7), so one state vector idle in that step
 * is parked in vs0, a VSX register the vector unit cannot compute on: x8 (a "c" word)
 * while the a/b/d steps run, x0 (an "a" word) while the c/b steps run. That costs
 * three register moves per step (restore, park, constant), 24 per double round.
 *
 * That is 4.05 instructions per byte against 3.58 for the 4-block power8 row, which
 * needs no moves; the 8 blocks are for the hardware: each step then has eight
 * independent quarter rounds to issue instead of four. ChaCha20 has no three-input
 * boolean operation (every xor feeds a rotate, an add or the output), so ISA 3.1's
 * xxeval has nothing to fuse here.
 *
 * This is inline assembly because gcc 12, given the same computation in C, spills
 * state vectors to the stack: 2475 instructions per 512 bytes (322 lxv, 247 stxv,
 * 150 register copies) against 2075 here. Registers: vs0 parked word, vs1/vs2
 * rotate controls, vs3/vs4 lane counters of X and Y, vs6-vs9 input rows then
 * transposition temporaries, vs10-vs13 two lxvp/stxvp data pairs; all volatile
 * (vs14-vs31 are the callee-saved f14-f31, untouched; gcc saves v20-v31). */
typedef struct {
    u8x16 r16, r8;                 /*   0, 16: vpermxor controls */
    u32x4 row0, row1, row2, row3;  /*  32..80: input state rows, row3 word 0 = 0 */
    u32x4 ctr;                     /*  96: counters of X's four lanes */
    u32x4 four, eight;             /* 112, 128 */
} consts8;

#define S_(x) #x
#define VADD(d, a, b) "vadduwm " S_(d) "," S_(a) "," S_(b) "\n\t"
#define VPX(d, a, k) "vpermxor " S_(d) "," S_(d) "," S_(a) "," S_(k) "\n\t"
#define VXRL(b, c, k) "vxor " S_(b) "," S_(b) "," S_(c) "\n\tvrlw " S_(b) "," S_(b) "," S_(k) "\n\t"
#define MOV(t, s) "xxlor " S_(t) "," S_(s) "," S_(s) "\n\t"

/* a += b, d = rotl(d ^ a, 16 or 8) for eight quarter rounds (a, b, d). */
#define STEP_ABD(k, a0, b0, d0, a1, b1, d1, a2, b2, d2, a3, b3, d3)                  \
    VADD(a0, a0, b0) VADD(a1, a1, b1) VADD(a2, a2, b2) VADD(a3, a3, b3)              \
    VADD(a0 + 16, a0 + 16, b0 + 16) VADD(a1 + 16, a1 + 16, b1 + 16)                  \
    VADD(a2 + 16, a2 + 16, b2 + 16) VADD(a3 + 16, a3 + 16, b3 + 16)                  \
    VPX(d0, a0, k) VPX(d1, a1, k) VPX(d2, a2, k) VPX(d3, a3, k)                      \
    VPX(d0 + 16, a0 + 16, k) VPX(d1 + 16, a1 + 16, k)                                \
    VPX(d2 + 16, a2 + 16, k) VPX(d3 + 16, a3 + 16, k)

/* c += d, b = rotl(b ^ c, 12 or 7) for eight quarter rounds (c, d, b). */
#define STEP_CDB(k, c0, d0, b0, c1, d1, b1, c2, d2, b2, c3, d3, b3)                  \
    VADD(c0, c0, d0) VADD(c1, c1, d1) VADD(c2, c2, d2) VADD(c3, c3, d3)              \
    VADD(c0 + 16, c0 + 16, d0 + 16) VADD(c1 + 16, c1 + 16, d1 + 16)                  \
    VADD(c2 + 16, c2 + 16, d2 + 16) VADD(c3 + 16, c3 + 16, d3 + 16)                  \
    VXRL(b0, c0, k) VXRL(b1, c1, k) VXRL(b2, c2, k) VXRL(b3, c3, k)                  \
    VXRL(b0 + 16, c0 + 16, k) VXRL(b1 + 16, c1 + 16, k)                              \
    VXRL(b2 + 16, c2 + 16, k) VXRL(b3 + 16, c3 + 16, k)

/* One round (RFC 8439 2.1 on four columns or diagonals of both groups). Entered and
 * left with x0 parked in vs0 (v0 free). Register numbers below 32 are vector registers
 * in v-form instructions; in xxlor, 32 + n is vn. */
#define ROUND(a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3)        \
    MOV(32, 0) MOV(0, 40) MOV(40, 1)                                                 \
    STEP_ABD(8, a0, b0, d0, a1, b1, d1, a2, b2, d2, a3, b3, d3)                      \
    MOV(40, 0) MOV(0, 32) "vspltisw 0,12\n\t"                                        \
    STEP_CDB(0, c0, d0, b0, c1, d1, b1, c2, d2, b2, c3, d3, b3)                      \
    MOV(32, 0) MOV(0, 40) MOV(40, 2)                                                 \
    STEP_ABD(8, a0, b0, d0, a1, b1, d1, a2, b2, d2, a3, b3, d3)                      \
    MOV(40, 0) MOV(0, 32) "vspltisw 0,7\n\t"                                         \
    STEP_CDB(0, c0, d0, b0, c1, d1, b1, c2, d2, b2, c3, d3, b3)

/* Words a0..a3 (VSR numbers) of four blocks into the four blocks' rows, in place
 * (a0 then holds block 0's row), natural element order. Big-endian word numbering:
 * word j of a word-sliced vector is block 3 - j. */
#define TP(a0, a1, a2, a3)                                                           \
    "xxmrghw 6," S_(a3) "," S_(a2) "\n\t"                                             \
    "xxmrghw 7," S_(a1) "," S_(a0) "\n\t"                                             \
    "xxmrglw 8," S_(a3) "," S_(a2) "\n\t"                                             \
    "xxmrglw 9," S_(a1) "," S_(a0) "\n\t"                                             \
    "xxpermdi " S_(a3) ",6,7,0\n\t"                                                   \
    "xxpermdi " S_(a2) ",6,7,3\n\t"                                                   \
    "xxpermdi " S_(a1) ",8,9,0\n\t"                                                   \
    "xxpermdi " S_(a0) ",8,9,3\n\t"

/* Add input row (byte offset in consts8) held in vector register t to v[r..r+3]. */
#define ADDROW(t, off, r0, r1, r2, r3)                                               \
    "lxv " S_(32 + t) "," S_(off) "(%[k])\n\t"                                        \
    VADD(r0, r0, t) VADD(r1, r1, t) VADD(r2, r2, t) VADD(r3, r3, t)

/* 32 bytes at off: in ^ (lo, hi) -> out, through pair p (on little-endian, lxvp puts
 * the first 16 bytes in the odd register of the pair). */
#define XOR32(p, off, lo, hi)                                                        \
    "lxvp " S_(p) "," S_(off) "(%[in])\n\t"                                           \
    "xxlxor " S_(p) "+1," S_(p) "+1," S_(lo) "\n\t"                                   \
    "xxlxor " S_(p) "," S_(p) "," S_(hi) "\n\t"                                       \
    "stxvp " S_(p) "," S_(off) "(%[out])\n\t"

/* One 512-byte step: out = in ^ keystream of the 8 blocks from consts8.ctr; ctr += 8. */
static __attribute__((noinline)) void blocks8(uint8_t *out, const uint8_t *in, size_t n,
                                              consts8 *k)
{
    /* gcc would otherwise copy the asm body to unroll this loop. */
    _Pragma("GCC unroll 1") while (n--) {
        unsigned long t;
        __asm__ volatile(
            "lxv 1,0(%[k])\n\t"
            "lxv 2,16(%[k])\n\t"
            "lxv 6,32(%[k])\n\t"
            "lxv 7,48(%[k])\n\t"
            "lxv 8,64(%[k])\n\t"
            "lxv 9,80(%[k])\n\t"
            "lxv 44,96(%[k])\n\t"   /* x12 = X counters */
            "lxv 48,112(%[k])\n\t"
            VADD(28, 12, 16)         /* y12 = Y counters */
            MOV(3, 44) MOV(4, 60)
            /* Splat the rows (xxspltw numbers words big-endian: word i of a row in
             * natural order is 3 - i); x0 goes straight to its parking place. */
            "xxspltw 0,6,3\n\txxspltw 33,6,2\n\txxspltw 34,6,1\n\txxspltw 35,6,0\n\t"
            "xxspltw 36,7,3\n\txxspltw 37,7,2\n\txxspltw 38,7,1\n\txxspltw 39,7,0\n\t"
            "xxspltw 40,8,3\n\txxspltw 41,8,2\n\txxspltw 42,8,1\n\txxspltw 43,8,0\n\t"
            "xxspltw 45,9,2\n\txxspltw 46,9,1\n\txxspltw 47,9,0\n\t"
            "xxspltw 48,6,3\n\txxspltw 49,6,2\n\txxspltw 50,6,1\n\txxspltw 51,6,0\n\t"
            "xxspltw 52,7,3\n\txxspltw 53,7,2\n\txxspltw 54,7,1\n\txxspltw 55,7,0\n\t"
            "xxspltw 56,8,3\n\txxspltw 57,8,2\n\txxspltw 58,8,1\n\txxspltw 59,8,0\n\t"
            "xxspltw 61,9,2\n\txxspltw 62,9,1\n\txxspltw 63,9,0\n\t"
            "li %[t],10\n\t"
            "mtctr %[t]\n"
            "1:\n\t"
            ROUND(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)
            ROUND(0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14)
            "bdnz 1b\n\t"
            /* Y (blocks 4-7): v0 is free while x0 stays parked. */
            MOV(32, 4)
            VADD(28, 28, 0)
            TP(60, 61, 62, 63)
            ADDROW(0, 80, 28, 29, 30, 31)
            TP(56, 57, 58, 59)
            ADDROW(0, 64, 24, 25, 26, 27)
            XOR32(10, 288, 56, 60) XOR32(12, 352, 57, 61)
            XOR32(10, 416, 58, 62) XOR32(12, 480, 59, 63)
            TP(52, 53, 54, 55)
            ADDROW(0, 48, 20, 21, 22, 23)
            TP(48, 49, 50, 51)
            ADDROW(0, 32, 16, 17, 18, 19)
            XOR32(10, 256, 48, 52) XOR32(12, 320, 49, 53)
            XOR32(10, 384, 50, 54) XOR32(12, 448, 51, 55)
            /* X (blocks 0-3), v16-v31 now free. */
            MOV(32, 0)
            MOV(48, 3)
            VADD(12, 12, 16)
            TP(44, 45, 46, 47)
            ADDROW(16, 80, 12, 13, 14, 15)
            TP(40, 41, 42, 43)
            ADDROW(16, 64, 8, 9, 10, 11)
            XOR32(10, 32, 40, 44) XOR32(12, 96, 41, 45)
            XOR32(10, 160, 42, 46) XOR32(12, 224, 43, 47)
            TP(36, 37, 38, 39)
            ADDROW(16, 48, 4, 5, 6, 7)
            TP(32, 33, 34, 35)
            ADDROW(16, 32, 0, 1, 2, 3)
            XOR32(10, 0, 32, 36) XOR32(12, 64, 33, 37)
            XOR32(10, 128, 34, 38) XOR32(12, 192, 35, 39)
            /* Blocks 2^32 and beyond are never output (the caller checked): the lane
             * adds may wrap only where the keystream is thrown away. */
            MOV(48, 3)
            "lxv 49,128(%[k])\n\t"
            VADD(16, 16, 17)
            "stxv 48,96(%[k])"
            : [t] "=&r"(t)
            : [k] "b"(k), [in] "b"(in), [out] "b"(out)
            : "memory", "ctr", "vs0", "vs1", "vs2", "vs3", "vs4", "vs5", "vs6", "vs7", "vs8",
              "vs9", "vs10", "vs11", "vs12", "vs13", "v0", "v1", "v2", "v3", "v4", "v5", "v6",
              "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18",
              "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",
              "v30", "v31");
        in += 512;
        out += 512;
    }
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
        xor32(out, in, a, b);
        xor32(out + 32, in + 32, c, d);
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
    if (len >= 512) {
        size_t n = len / 512;
        consts8 k = {
            .r16 = ROT16_CTL,
            .r8 = ROT8_CTL,
            .row0 = {C0, C1, C2, C3},
            .row1 = {key[0], key[1], key[2], key[3]},
            .row2 = {key[4], key[5], key[6], key[7]},
            .row3 = {0, nonce[0], nonce[1], nonce[2]},
            .ctr = {counter, counter + 1, counter + 2, counter + 3},
            .four = {4, 4, 4, 4},
            .eight = {8, 8, 8, 8},
        };
        blocks8(out, in, n, &k);
        wipe(&k, sizeof k);
        counter += (uint32_t)(8 * n);
        in += 512 * n;
        out += 512 * n;
        len %= 512;
    }
    if (len >= 256) {
        blocks4(out, in, 1, key, nonce, counter);
        counter += 4;
        in += 256;
        out += 256;
        len -= 256;
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
