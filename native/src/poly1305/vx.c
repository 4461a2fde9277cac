/* Poly1305, z13 vector facility: radix 2^26 in two 64-bit lanes, 8 blocks (128 bytes) per iteration as even/odd 32x32 multiply-adds (vmalef/vmalof) against powers of r kept in the state and one carry chain; radix 2^64 with mlgr (poly1305/s390x.h) for short calls and the last 1-7 blocks; h in radix 2^64 between calls, so every call resumes where the last one stopped (RFC 8439 2.5). */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__)
#error "poly1305/vx.c needs -march=z13 -mzvector (ISA_FLAGS_vx in native/isa.mk)"
#endif

#include "poly1305/s390x.h"

/* Calls shorter than this many blocks take the scalar path, break-even points measured
 * in instructions under qemu (bench/insn): entering and leaving the vector path (radix
 * conversions, the last group's coefficients, the lane sum) costs about three scalar
 * blocks, so a vector group (171 instructions) beats eight scalar ones (256) from 16
 * blocks on; the first vector call for a key also builds the table of powers (about 450
 * instructions), which 88 blocks (1408 bytes) repay. */
#define VX_MIN_BLOCKS 16
#define VX_MIN_BLOCKS_FIRST 88

/* What the streaming front collects before each call (poly1305.h, `gather`), sized by
 * measurement (bench/insn, poly1305-stream, instructions per byte): for a stream of
 * 64-byte writes 3.39 without gathering (every write scalar), 3.17 / 3.03 / 2.44 / 2.36
 * / 2.33 gathering 256 / 512 / 1024 / 2048 / 4096 bytes, the copies then costing more than
 * the calls they save; 1 KiB writes 1.58 / 1.54 / 1.51 from 1024 on. At least 88 blocks,
 * so that the first gathered call of a stream builds the table. */
#define VX_GATHER 2048

_Static_assert(VX_GATHER % 16 == 0 && VX_GATHER <= AC_POLY1305_GATHER_MAX &&
                   VX_GATHER / 16 >= VX_MIN_BLOCKS_FIRST,
               "the stream's calls must reach the vector path");

#define M26 0x3ffffffu

/*
 * The algorithm. A vector of four 32-bit elements e0 e1 e2 e3 is two 64-bit lanes,
 * (e0, e1) and (e2, e3) (big-endian: e1 and e3 are the low words). vmalef multiplies
 * e0 and e2 and adds the products to the two lanes of a 64-bit accumulator, vmalof
 * does the same for e1 and e3. Each lane is its own Horner chain: lane 0 takes blocks
 * 0, 2, 4, 6 of each group of eight, lane 1 blocks 1, 3, 5, 7, and within a lane the
 * even and odd elements hold two blocks that take different powers of r:
 *
 *   set 0, limb i:  X0_i = [b2_i, b0_i + H0_i, b3_i, b1_i + H1_i]   r^6, r^8 | r^6, r^8
 *   set 1, limb i:  X1_i = [b6_i, b4_i,        b7_i, b5_i       ]   r^2, r^4 | r^2, r^4
 *
 * so that H0' = (H0 + b0) r^8 + b2 r^6 + b4 r^4 + b6 r^2 and H1' likewise with b1, b3,
 * b5, b7. Then h = H0 + H1 / r holds before and after each group (h is put into lane 0
 * on entry, H1 = 0). The last group of a call multiplies lane 1 by r^7, r^5, r^3, r^1
 * instead, after which h = H0 + H1: the lanes are summed and h leaves in radix 2^64.
 * Every coefficient vector is [even, odd] in both lanes in the steady groups, and
 * lane-specific only in the last: 18 vectors (R0..R4 and S1..S4 = 5 R1..5 R4 for each
 * set) instead of one per product.
 *
 * A product x_i r_j of limbs i and j lands in column i + j, or i + j - 5 times 5
 * (2^130 = 5 mod p): column k takes R_(k-i), or S_(k-i+5) when i > k.
 */
#define NCOEF 9 /* R0 R1 R2 R3 R4 S1 S2 S3 S4 */

/* From byte 64 of the state: steady[set][c] = [r^6 r^8 r^6 r^8] and [r^2 r^4 r^2 r^4],
 * c = R0..R4, S1..S4, loaded nine at a time with vlm; last1[set][c], lane 1 of the last
 * group ([r^5 r^7] and [r^1 r^3]), which replaces that doubleword (vleg). Full vectors of
 * the last group too would need 576 bytes of the 448 there are. */
typedef struct {
    uint32_t steady[2][NCOEF][4];
    uint32_t last1[2][NCOEF][2];
} vx_powers;

static_assert(P64_VEC_OFFSET + sizeof(vx_powers) <= sizeof(((poly1305_state *)0)->opaque),
              "the z vector powers must fit in poly1305_state");
static_assert(P64_VEC_OFFSET % 16 == 0, "the z vector powers are 16-byte aligned");
static_assert(offsetof(vx_powers, steady[1]) == 144 && offsetof(vx_powers, last1) == 288 &&
                  offsetof(vx_powers, last1[1]) == 360,
              "vx_blocks' assembly addresses the table by these offsets");

/* Radix 2^64 (h2 <= 4: h < 2^131) to five 26-bit limbs; l4 < 5 2^24 < 2^26.4. */
AC_INLINE void split26(uint64_t l[5], uint64_t h0, uint64_t h1, uint64_t h2)
{
    l[0] = h0 & M26;
    l[1] = (h0 >> 26) & M26;
    l[2] = ((h0 >> 52) | (h1 << 12)) & M26;
    l[3] = (h1 >> 14) & M26;
    l[4] = (h1 >> 40) | (h2 << 24);
}

/* Power h = r^n, as five R words, into the table at `at` and, if dup, at at + 8 too. */
AC_INLINE void put_power(uint8_t *at, int dup, const uint64_t h[3])
{
    uint64_t l[5];

    split26(l, h[0], h[1], h[2]);
    for (int d = 0; d < 5; d++) {
        uint32_t w = (uint32_t)l[d];
        memcpy(at + 16 * d, &w, 4);
        if (dup)
            memcpy(at + 16 * d + 8, &w, 4);
    }
}

/* Lane 1 of the last group: five R words 8 bytes apart. */
AC_INLINE void put_power_last1(uint8_t *at, const uint64_t h[3])
{
    uint64_t l[5];

    split26(l, h[0], h[1], h[2]);
    for (int d = 0; d < 5; d++) {
        uint32_t w = (uint32_t)l[d];
        memcpy(at + 8 * d, &w, 4);
    }
}

/* r^1..r^8 by the scalar path (h = h r on a zero block without pad bit), left
 * partially reduced (h2 <= 4: every limb below 2^26.4), written straight into the
 * table: the R limbs one word each, S = 5 R by vector operations. Once per key: once per
 * AEAD message that reaches the vector path, so every address is a constant (a table
 * built on the stack, copied and wiped cost 1100 instructions; this is about 400). */
static void compute_powers(poly1305_state *st)
{
    typedef uint32_t w32x4 __attribute__((vector_size(16)));
    static const uint8_t zero_block[16];
    uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    s390x_p1305_key k;
    uint64_t h[3];

#define STEADY(set, e) (tab + offsetof(vx_powers, steady[set][0][e]))
#define LAST1(set, e) (tab + offsetof(vx_powers, last1[set][0][e]))
    s390x_key(st, &k, 0);
    h[0] = k.r0;
    h[1] = k.r1;
    h[2] = 0;
    put_power_last1(LAST1(1, 0), h); /* r^1 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power(STEADY(1, 0), 1, h); /* r^2 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power_last1(LAST1(1, 1), h); /* r^3 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power(STEADY(1, 1), 1, h); /* r^4 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power_last1(LAST1(0, 0), h); /* r^5 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power(STEADY(0, 0), 1, h); /* r^6 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power_last1(LAST1(0, 1), h); /* r^7 */
    s390x_blocks(h, &k, zero_block, 1);
    put_power(STEADY(0, 1), 1, h); /* r^8 */
#undef STEADY
#undef LAST1
    /* S_d = 5 R_d < 2^28.7: for the steady vectors one each, for lane 1 of the last
     * group two coefficients (R1 R2 and R3 R4) per vector. */
    for (int s = 0; s < 2; s++) {
        for (int d = 1; d < 5; d++) {
            w32x4 r;
            memcpy(&r, tab + offsetof(vx_powers, steady[s][d]), 16);
            r += r << 2;
            memcpy(tab + offsetof(vx_powers, steady[s][4 + d]), &r, 16);
        }
        for (int d = 1; d < 5; d += 2) {
            w32x4 r;
            memcpy(&r, tab + offsetof(vx_powers, last1[s][d]), 16);
            r += r << 2;
            memcpy(tab + offsetof(vx_powers, last1[s][4 + d]), &r, 16);
        }
    }
    s390x_put(st, offsetof(p64_head, powers), 1);
    ac_wipe_words(&k, sizeof k);
    ac_wipe_words(h, sizeof h);
}

/*
 * The loop in assembly, every vector register named: the 18 coefficient vectors, five
 * accumulators and five limb vectors with the message, the constants and temporaries
 * would need 36 registers of 32 (gcc 12's intrinsics code spilled 11 values a group and
 * regenerated two: 193 instructions a group). Here one set's nine coefficients are in
 * registers at a time, each set loaded with one vlm when its four blocks come: 171
 * instructions per 128 bytes.
 *
 *   v0-v4    accumulators a0..a4 (H between groups)   v5-v9    limb vectors x0..x4
 *   v10-v13  four message blocks (vlm)                 v14-v15  temporaries
 *   v16-v18  vperm patterns for limbs (0,1), (2,3), 4  v19      2^26 - 1 per word
 *   v20      2^24 - 1 per word                         v21      the pad bit at 2^24
 *   v22      2^26 - 1 per doubleword, for the carry
 *   v23-v31  the coefficients R0 R1 R2 R3 R4 S1 S2 S3 S4 of the set at hand
 */
#define STR_(x) #x
#define STR(x) STR_(x)
#define V(n) "%%v" STR(n)
#define A0 0
#define A1 1
#define A2 2
#define A3 3
#define A4 4
#define X0 5
#define X1 6
#define X2 7
#define X3 8
#define X4 9
#define T0 14
#define T1 15
#define M26D 22
#define R0 23
#define R1 24
#define R2 25
#define R3 26
#define R4 27
#define S1 28
#define S2 29
#define S3 30
#define S4 31

#define INSN3(op, a, b, c) op " " V(a) "," V(b) "," V(c) "\n\t"
#define INSN4(op, a, b, c, d) op " " V(a) "," V(b) "," V(c) "," V(d) "\n\t"
/* acc = x c (both halves of the lane products), acc += x c */
#define MUL(acc, x, c) INSN3("vmlef", acc, x, c) INSN4("vmalof", acc, x, c, acc)
#define MAC(acc, x, c) INSN4("vmalef", acc, x, c, acc) INSN4("vmalof", acc, x, c, acc)

/*
 * Four blocks (v10-v13 = a, b, c, d) into x_i = [c_i, a_i, d_i, b_i]. A limb of a
 * little-endian block is a big-endian word of four of its bytes in reverse order,
 * shifted right by 0, 2, 4, 6 and masked to 26 bits (limb 3's window ends where the
 * limb does: no mask); limb 4 is bytes 15, 14, 13 with the pad bit at 2^24 (2^128 /
 * 2^104). vperm gathers those words for limbs (0, 1), (2, 3) and 4 of two blocks at
 * once, c with a and d with b (it numbers the 32 bytes of its sources from the left,
 * big-endian like the message), and vmrhg/vmrlg take limb i's doubleword of each.
 */
#define SPLIT4                                                                            \
    INSN4("vperm", T0, 12, 10, 16) INSN4("vperm", T1, 13, 11, 16)                         \
    INSN3("vmrhg", X0, T0, T1) INSN3("vmrlg", X1, T0, T1)                                 \
    INSN3("vn", X0, X0, 19)                                                               \
    "vesrlf " V(X1) "," V(X1) ",2\n\t" INSN3("vn", X1, X1, 19)                            \
    INSN4("vperm", T0, 12, 10, 17) INSN4("vperm", T1, 13, 11, 17)                         \
    INSN3("vmrhg", X2, T0, T1) INSN3("vmrlg", X3, T0, T1)                                 \
    "vesrlf " V(X2) "," V(X2) ",4\n\t" INSN3("vn", X2, X2, 19)                            \
    "vesrlf " V(X3) "," V(X3) ",6\n\t"                                                    \
    INSN4("vperm", T0, 12, 10, 18) INSN4("vperm", T1, 13, 11, 18)                         \
    INSN3("vmrhg", X4, T0, T1) INSN4("vsel", X4, X4, 21, 20)

/* One set, limb by limb against the coefficients in registers: column k takes R_(k-i),
 * or S_(k-i+5) when i > k. START is MUL for set 0, which starts the accumulators, and
 * MAC for set 1. */
#define SET(START)                                                                        \
    START(A0, X0, R0) START(A1, X0, R1) START(A2, X0, R2) START(A3, X0, R3)               \
    START(A4, X0, R4)                                                                     \
    MAC(A0, X1, S4) MAC(A1, X1, R0) MAC(A2, X1, R1) MAC(A3, X1, R2) MAC(A4, X1, R3)       \
    MAC(A0, X2, S3) MAC(A1, X2, S4) MAC(A2, X2, R0) MAC(A3, X2, R1) MAC(A4, X2, R2)       \
    MAC(A0, X3, S2) MAC(A1, X3, S3) MAC(A2, X3, S4) MAC(A3, X3, R0) MAC(A4, X3, R1)       \
    MAC(A0, X4, S1) MAC(A1, X4, S2) MAC(A2, X4, S3) MAC(A3, X4, S4) MAC(A4, X4, R0)

/* The coefficients of set s for the steady groups, and for the last group with lane 1's
 * doubleword replaced by its own powers. */
#define COEF_STEADY(s) "vlm %%v23,%%v31," STR(s) "(%[tab])\n\t"
#define LANE1(reg, at) "vleg %%v" #reg "," STR(at) "(%[tab]),1\n\t"
#define COEF_LAST(s, at)                                                                  \
    COEF_STEADY(s)                                                                        \
    LANE1(23, at) LANE1(24, at + 8) LANE1(25, at + 16) LANE1(26, at + 24)                 \
    LANE1(27, at + 32) LANE1(28, at + 40) LANE1(29, at + 48) LANE1(30, at + 56)           \
    LANE1(31, at + 64)

/* One group of 8 blocks at %[in]: set 0 (blocks 0-3, H added) and set 1 (blocks 4-7). */
#define GROUP(coef0, coef1)                                                               \
    coef0                                                                                 \
    "vlm %%v10,%%v13,0(%[in])\n\t"                                                        \
    SPLIT4                                                                                \
    INSN3("vaf", X0, X0, A0) INSN3("vaf", X1, X1, A1) INSN3("vaf", X2, X2, A2)            \
    INSN3("vaf", X3, X3, A3) INSN3("vaf", X4, X4, A4)                                     \
    SET(MUL)                                                                              \
    coef1                                                                                 \
    "vlm %%v10,%%v13,64(%[in])\n\t"                                                       \
    SPLIT4                                                                                \
    SET(MAC)

/*
 * Bounds. Between groups every limb of H is below 2^26 but H1 and H4, below 2^26 +
 * 2^10.3 (and l4 < 2^26.4 on entry): x elements with H are below 2^27.3, message limbs
 * below 2^26 (limb 4 with its pad bit below 2^24 + 2^24). Coefficients R < 2^26.4,
 * S = 5 R < 2^28.7. A product is below 2^56, and a lane of a column sums 20 of them:
 * below 2^60.4, inside the 64 bits vmalef/vmalof keep.
 *
 * The carry (Bernstein and Schwabe's NEON order, as OpenSSL's poly1305-s390x.pl): 3 -> 4
 * and 0 -> 1, 4 -> 0 (times 5 as c + 4c) and 1 -> 2, 2 -> 3, 0 -> 1 and 3 -> 4. A carry out
 * of a column is below 2^34.4, 5 c4 < 2^36.8 lands on h0 < 2^26, and the last two steps
 * leave h0, h2, h3 < 2^26 and h1, h4 < 2^26 + 2^10.3. (Lazy reductions that let 5 c
 * outgrow its lane broke the Linux AVX2 code, 678cce40; every lane here keeps 3.6 bits.)
 */
#define CARRY                                                                             \
    "vesrlg " V(T0) "," V(A3) ",26\n\t" "vesrlg " V(T1) "," V(A0) ",26\n\t"               \
    INSN3("vn", A3, A3, M26D) INSN3("vn", A0, A0, M26D)                                   \
    INSN3("vag", A4, A4, T0) INSN3("vag", A1, A1, T1)                                     \
    "vesrlg " V(T0) "," V(A4) ",26\n\t" "vesrlg " V(T1) "," V(A1) ",26\n\t"               \
    INSN3("vn", A4, A4, M26D) INSN3("vn", A1, A1, M26D)                                   \
    INSN3("vag", A0, A0, T0) INSN3("vag", A2, A2, T1)                                     \
    "veslg " V(T0) "," V(T0) ",2\n\t" "vesrlg " V(T1) "," V(A2) ",26\n\t"                 \
    INSN3("vn", A2, A2, M26D) INSN3("vag", A0, A0, T0) INSN3("vag", A3, A3, T1)           \
    "vesrlg " V(T0) "," V(A0) ",26\n\t" "vesrlg " V(T1) "," V(A3) ",26\n\t"               \
    INSN3("vn", A0, A0, M26D) INSN3("vn", A3, A3, M26D)                                   \
    INSN3("vag", A1, A1, T0) INSN3("vag", A4, A4, T1)

/* Byte patterns of SPLIT4: limb (0, 1), (2, 3) and 4 words of the first source, then of
 * the second, for the two limbs. */
static const uint8_t split_patterns[3][16] __attribute__((aligned(16))) = {
    {3, 2, 1, 0, 19, 18, 17, 16, 6, 5, 4, 3, 22, 21, 20, 19},
    {9, 8, 7, 6, 25, 24, 23, 22, 12, 11, 10, 9, 28, 27, 26, 25},
    {15, 15, 14, 13, 31, 31, 30, 29, 15, 15, 14, 13, 31, 31, 30, 29},
};

/* ng >= 1 groups of 128 bytes into h (radix 2^64, h2 <= 4 in and out). Out of line: the
 * callee-saved f8-f15 that the assembly clobbers are saved only on the vector path. */
static __attribute__((noinline)) void vx_blocks(const poly1305_state *st, uint64_t h[3],
                                                const uint8_t *in, size_t ng, uint32_t padbit)
{
    const uint8_t *tab = st->opaque + P64_VEC_OFFSET;
    const uint32_t pad = padbit << 24;
    uint64_t l[5], sums[5][2];

    split26(l, h[0], h[1], h[2]);
    __asm__ volatile(
        /* H = (h, 0): h in lane 0, nothing in lane 1 */
        "vllezg %%v0,0(%[l])\n\t"
        "vllezg %%v1,8(%[l])\n\t"
        "vllezg %%v2,16(%[l])\n\t"
        "vllezg %%v3,24(%[l])\n\t"
        "vllezg %%v4,32(%[l])\n\t"
        "vlm %%v16,%%v18,0(%[pat])\n\t"
        "vgmf %%v19,6,31\n\t"
        "vgmf %%v20,8,31\n\t"
        "vlrepf %%v21,%[pad]\n\t"
        "vgmg %%v22,38,63\n\t"
        "cgije %[ng],1,1f\n"
        "0:\n\t"
        GROUP(COEF_STEADY(0), COEF_STEADY(144))
        "la %[in],128(%[in])\n\t"
        "aghi %[ng],-1\n\t"
        CARRY
        "cgijne %[ng],1,0b\n"
        "1:\n\t"
        /* the last group: lane 1 takes r^7 r^5 r^3 r^1 */
        GROUP(COEF_LAST(0, 288), COEF_LAST(144, 360))
        "3:\n\t"
        /* h = H0 + H1: the two lanes of each column summed (below 2^61.4) */
        "vzero %%v14\n\t"
        "vsumqg %%v0,%%v0,%%v14\n\t"
        "vsumqg %%v1,%%v1,%%v14\n\t"
        "vsumqg %%v2,%%v2,%%v14\n\t"
        "vsumqg %%v3,%%v3,%%v14\n\t"
        "vsumqg %%v4,%%v4,%%v14\n\t"
        "vstm %%v0,%%v4,%[sums]"
        : [in] "+&a"(in), [ng] "+&d"(ng), [sums] "=Q"(sums)
        : [l] "a"(l), [pat] "a"(split_patterns), [tab] "a"(tab), [pad] "R"(pad)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
          "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
          "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");

    /* One carry chain and radix 2^64. After the chain every limb is below 2^26 but
     * b1 < 2^26 + 2^12, so b1 << 26 and b2 << 52 may overlap by a bit: sum, don't or. */
    uint64_t b0 = sums[0][1], b1v = sums[1][1], b2 = sums[2][1], b3 = sums[3][1],
             b4 = sums[4][1], c;
    b1v += b0 >> 26; b0 &= M26;
    b2 += b1v >> 26; b1v &= M26;
    b3 += b2 >> 26; b2 &= M26;
    b4 += b3 >> 26; b3 &= M26;
    c = b4 >> 26;   b4 &= M26;
    b0 += c + (c << 2);
    b1v += b0 >> 26; b0 &= M26;

    uint64_t lo = b0 + (b1v << 26), t = b2 << 52, mid = (b2 >> 12) + (b3 << 14), w = b4 << 40,
             top = b4 >> 24, z = 0;
    __asm__("algr %[lo],%[t]\n\t"    /* h0 = lo + (b2 << 52) */
            "alcgr %[mid],%[w]\n\t"  /* h1 = mid + (b4 << 40) + carry */
            "alcgr %[top],%[z]"      /* h2 = b4 >> 24 + carry <= 4 */
            : [lo] "+&d"(lo), [mid] "+&d"(mid), [top] "+&d"(top)
            : [t] "d"(t), [w] "d"(w), [z] "d"(z)
            : "cc");
    h[0] = lo;
    h[1] = mid;
    h[2] = top;
}

static void poly1305_vx_init(poly1305_state *st, const uint8_t key[32])
{
    s390x_init(st, key);
}

static __attribute__((noinline)) void vx_call(poly1305_state *st, const uint8_t *in,
                                              size_t ng, uint32_t padbit)
{
    s390x_vec_call(st, in, ng, padbit, compute_powers, vx_blocks);
}

static void poly1305_vx_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                               uint32_t padbit)
{
    s390x_dispatch(st, in, len, padbit, 8, VX_MIN_BLOCKS, VX_MIN_BLOCKS_FIRST, vx_call);
}

static void poly1305_vx_finish(poly1305_state *st, uint8_t tag[16])
{
    s390x_finish(st, tag);
}

static size_t poly1305_vx_used(const poly1305_state *st)
{
    return p64_used(st, sizeof(vx_powers));
}

const poly1305_kernel archcrypt_poly1305_vx = {
    .init = poly1305_vx_init,
    .blocks = poly1305_vx_blocks,
    .finish = poly1305_vx_finish,
    .used = poly1305_vx_used,
    .gather = VX_GATHER,
};
