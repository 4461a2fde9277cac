/* Camellia ECB, z13 vector facility: 16 blocks byte-sliced into 16 vectors, S-boxes by GF(2^4)-tower inversion in 16-entry vperm tables with Camellia's affine maps folded in, FL/FL^-1 byte-sliced; short inputs and tails four blocks at a time, two halves per vector; constant time (RFC 3713 2.3-2.4). */
#if !defined(__s390x__) || !defined(__VX__) || !defined(__VEC__)
#error "camellia/vx.c needs -march=z13 -mzvector (ISA_FLAGS_vx in native/isa.mk)"
#endif

#include <vecintrin.h>

#include "common.h"
#include "camellia/batch16.h"
#include "camellia/camellia.h"

typedef __vector unsigned char v8;

/*
 * The S-box without AES instructions. s1 is affine-equivalent to inversion in GF(2^8)
 * (camellia/power8.c: s1 = post(aes_sbox(pre(x)))), and inversion in GF(2^8) is a few
 * operations in GF(2^4), each a 16-entry table lookup: Hamburg's vector-permute AES
 * (CHES 2009, OpenSSL's vpaes). With v = the input in his basis, i = v >> 4, k = v & 15,
 * j = i ^ k:
 *     iak = 1/i + a/k,  jak = 1/j + a/k,  io = 1/iak + j,  jo = 1/jak + i,
 * and the inverse, in a linear output basis, is out_u[io] ^ out_t[jo]. 1/0 is a flag
 * ("infinity"), for which a lookup gives 0. vpaes keeps the flag in bit 7, where pshufb
 * zeroes; here it is bit 4, which makes vperm read its second operand: a zero vector, or
 * for out_u a vector of the output constant. vperm reads only the low five bits of an
 * index, so a lookup by a clean nibble can take the table as both operands.
 *
 * The tables fold in Camellia's affine maps and vpaes' basis changes: in_lo/in_hi map a
 * byte (low and high nibble) to v, out_u/out_t map (io, jo) to s1's output, the constant
 * in out_u and in the infinity operand; s2 = s1 <<< 1 and s3 = s1 >>> 1 have output
 * tables of their own, s4(x) = s1(x <<< 1) input tables. They were derived, and are
 * checked on all 256 inputs, by scripts/gen-camellia-vx-tables.py (--check compares them
 * with this file). 21 instructions per 16 bytes, the key byte included.
 */
#define IN_LO  {0x08, 0x78, 0x3d, 0x4d, 0xc8, 0xb8, 0xfd, 0x8d, 0xa7, 0xd7, 0x92, 0xe2, 0x67, 0x17, 0x52, 0x22}
#define IN_HI  {0x00, 0x3f, 0x96, 0xa9, 0x71, 0x4e, 0xe7, 0xd8, 0xc9, 0xf6, 0x5f, 0x60, 0xb8, 0x87, 0x2e, 0x11}
#define IN4_LO {0x08, 0x3d, 0xc8, 0xfd, 0xa7, 0x92, 0x67, 0x52, 0x37, 0x02, 0xf7, 0xc2, 0x98, 0xad, 0x58, 0x6d}
#define IN4_HI {0x00, 0x96, 0x71, 0xe7, 0xc9, 0x5f, 0xb8, 0x2e, 0x70, 0xe6, 0x01, 0x97, 0xb9, 0x2f, 0xc8, 0x5e}
#define INV    {0x10, 0x01, 0x08, 0x0d, 0x0f, 0x06, 0x05, 0x0e, 0x02, 0x0c, 0x0b, 0x0a, 0x09, 0x03, 0x07, 0x04}
#define INVA   {0x10, 0x07, 0x0b, 0x0f, 0x06, 0x0a, 0x04, 0x01, 0x09, 0x08, 0x05, 0x02, 0x0c, 0x0e, 0x0d, 0x03}
#define OUT1_U {0x6e, 0x4f, 0x7b, 0x5e, 0xff, 0xcb, 0x4b, 0xde, 0xcf, 0x7f, 0xfb, 0xda, 0x5a, 0xee, 0xea, 0x6a}
#define OUT1_T {0x00, 0x8c, 0xaf, 0x51, 0xcd, 0xee, 0xfe, 0x41, 0x9c, 0xdd, 0xbf, 0x33, 0x23, 0x10, 0x62, 0x72}
#define OUT2_U {0xdc, 0x9e, 0xf6, 0xbc, 0xff, 0x97, 0x96, 0xbd, 0x9f, 0xfe, 0xf7, 0xb5, 0xb4, 0xdd, 0xd5, 0xd4}
#define OUT2_T {0x00, 0x19, 0x5f, 0xa2, 0x9b, 0xdd, 0xfd, 0x82, 0x39, 0xbb, 0x7f, 0x66, 0x46, 0x20, 0xc4, 0xe4}
#define OUT3_U {0x37, 0xa7, 0xbd, 0x2f, 0xff, 0xe5, 0xa5, 0x6f, 0xe7, 0xbf, 0xfd, 0x6d, 0x2d, 0x77, 0x75, 0x35}
#define OUT3_T {0x00, 0x46, 0xd7, 0xa8, 0xe6, 0x77, 0x7f, 0xa0, 0x4e, 0xee, 0xdf, 0x99, 0x91, 0x08, 0x31, 0x39}
#define SPLAT(b) {b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b}
#define OUT1_C SPLAT(0x6e)
#define OUT2_C SPLAT(0xdc)
#define OUT3_C SPLAT(0x37)

/*
 * The rounds are assembly with every vector register named: the 16 state vectors, the
 * nine constants of an S-box and seven temporaries are all 32 (gcc 12 spilled and
 * regenerated the constants of its intrinsics code: 20.4 instructions per byte). Local
 * register variables pin the state to v0-v15 (GCC, "Defining Variables Residing in
 * Specified Registers"); a round loads the constants with vlm, the whole set for the s1
 * pair and the tables that differ before each other pair, and clobbers v16-v31.
 *
 *   v0-v15   the state, x[i] = byte i of the 16 blocks (D1 = x0..x7, D2 = x8..x15)
 *   v16-v24  in_lo in_hi out_u out_c out_t inv inva, 0x0f and zero in every byte
 *   v25-v28  S-box temporaries; v29, v30 the two outputs of a pair; v31 their XOR
 */
static const uint8_t sbox_tables[17][16] __attribute__((aligned(16))) = {
    /* 0: s1, the whole set (v16-v24) */
    IN_LO, IN_HI, OUT1_U, OUT1_C, OUT1_T, INV, INVA, SPLAT(15), SPLAT(0),
    /* 9: s2's output (v18-v20) */
    OUT2_U, OUT2_C, OUT2_T,
    /* 12: s3's output (v18-v20) */
    OUT3_U, OUT3_C, OUT3_T,
    /* 15: s4's input (v16-v17), with s1's output from 2 */
    IN4_LO, IN4_HI,
};

#define TABLES_S1 "vlm %%v16,%%v24,0(%[tab])\n\t"
#define TABLES_S2 "vlm %%v18,%%v20,144(%[tab])\n\t"
#define TABLES_S3 "vlm %%v18,%%v20,192(%[tab])\n\t"
#define TABLES_S4 "vlm %%v16,%%v17,240(%[tab])\n\t" "vlm %%v18,%%v20,32(%[tab])\n\t"

#define SBOX_ASM(src, koff, dst)                                                          \
    "vlrepb %%v25," #koff "(%[kp])\n\t"                                                   \
    "vx %%v25,%[" #src "],%%v25\n\t"  /* x = s ^ k */                                     \
    "vesrlb %%v26,%%v25,4\n\t"                                                            \
    "vperm %%v25,%%v16,%%v16,%%v25\n\t"                                                   \
    "vperm %%v26,%%v17,%%v17,%%v26\n\t"                                                   \
    "vx %%v25,%%v25,%%v26\n\t"        /* v */                                             \
    "vesrlb %%v26,%%v25,4\n\t"        /* i */                                             \
    "vn %%v25,%%v25,%%v23\n\t"        /* k */                                             \
    "vperm %%v27,%%v22,%%v22,%%v25\n\t" /* a/k */                                         \
    "vx %%v25,%%v25,%%v26\n\t"        /* j */                                             \
    "vperm %%v28,%%v21,%%v21,%%v26\n\t"                                                   \
    "vx %%v28,%%v28,%%v27\n\t"        /* iak = 1/i + a/k */                               \
    "vperm " dst ",%%v21,%%v21,%%v25\n\t"                                                 \
    "vx %%v27," dst ",%%v27\n\t"      /* jak = 1/j + a/k */                               \
    "vperm %%v28,%%v21,%%v24,%%v28\n\t"                                                   \
    "vx %%v28,%%v28,%%v25\n\t"        /* io = 1/iak + j */                                \
    "vperm %%v27,%%v21,%%v24,%%v27\n\t"                                                   \
    "vx %%v27,%%v27,%%v26\n\t"        /* jo = 1/jak + i */                                \
    "vperm %%v28,%%v18,%%v19,%%v28\n\t"                                                   \
    "vperm %%v27,%%v20,%%v24,%%v27\n\t"                                                   \
    "vx " dst ",%%v28,%%v27\n\t"

#define ZA "%%v29"
#define ZB "%%v30"

/* P for one pair (z_a in v29, z_b in v30): u = z_a ^ z_b into four bytes of d, z_a into
 * one, z_b into two (see ROUND). */
#define PAIR_ASM(u0, u1, u2, u3, a0, b0, b1)                                              \
    "vx %%v31,%%v29,%%v30\n\t"                                                            \
    "vx %[" #u0 "],%[" #u0 "],%%v31\n\t"                                                  \
    "vx %[" #u1 "],%[" #u1 "],%%v31\n\t"                                                  \
    "vx %[" #u2 "],%[" #u2 "],%%v31\n\t"                                                  \
    "vx %[" #u3 "],%[" #u3 "],%%v31\n\t"                                                  \
    "vx %[" #a0 "],%[" #a0 "],%%v29\n\t"                                                  \
    "vx %[" #b0 "],%[" #b0 "],%%v30\n\t"                                                  \
    "vx %[" #b1 "],%[" #b1 "],%%v30\n\t"

/*
 * One Feistel round on byte-sliced halves (section 2.4.1): d ^= P(S(s ^ k)), with the
 * S-boxes of bytes 1..8 s1 s2 s3 s4 s2 s3 s4 s1. Bytes 1 and 8, 2 and 5, 3 and 6, 4 and 7
 * take the same S-box, and in P each such pair shares four of its outputs: with
 * u = z_a ^ z_b, P(z) is u into four bytes of d and z_a, z_b into the rest, 8 XORs per
 * pair and no S-box output kept past its pair (the 24-XOR network of power8.c needs all
 * eight at once, more registers than there are).
 *   (z1, z8): u -> y1 y2 y3 y5, z1 -> y8, z8 -> y6 y7
 *   (z2, z5): u -> y2 y3 y4 y6, z2 -> y5, z5 -> y7 y8
 *   (z3, z6): u -> y1 y3 y4 y7, z3 -> y6, z6 -> y5 y8
 *   (z4, z7): u -> y1 y2 y4 y8, z4 -> y7, z7 -> y5 y6
 * 205 instructions per round and 256 bytes.
 */
#define ROUND(s0, s1, s2, s3, s4, s5, s6, s7, d0, d1, d2, d3, d4, d5, d6, d7, key)        \
    __asm__(TABLES_S1                                                                     \
            SBOX_ASM(s0, 0, ZA)                                                           \
            SBOX_ASM(s7, 7, ZB)                                                           \
            PAIR_ASM(d0, d1, d2, d4, d7, d5, d6)                                          \
            TABLES_S2                                                                     \
            SBOX_ASM(s1, 1, ZA)                                                           \
            SBOX_ASM(s4, 4, ZB)                                                           \
            PAIR_ASM(d1, d2, d3, d5, d4, d6, d7)                                          \
            TABLES_S3                                                                     \
            SBOX_ASM(s2, 2, ZA)                                                           \
            SBOX_ASM(s5, 5, ZB)                                                           \
            PAIR_ASM(d0, d2, d3, d6, d5, d4, d7)                                          \
            TABLES_S4                                                                     \
            SBOX_ASM(s3, 3, ZA)                                                           \
            SBOX_ASM(s6, 6, ZB)                                                           \
            PAIR_ASM(d0, d1, d3, d7, d6, d4, d5)                                          \
            : [d0] "+v"(d0), [d1] "+v"(d1), [d2] "+v"(d2), [d3] "+v"(d3),                 \
              [d4] "+v"(d4), [d5] "+v"(d5), [d6] "+v"(d6), [d7] "+v"(d7)                  \
            : [s0] "v"(s0), [s1] "v"(s1), [s2] "v"(s2), [s3] "v"(s3), [s4] "v"(s4),       \
              [s5] "v"(s5), [s6] "v"(s6), [s7] "v"(s7), [kp] "a"(key),                    \
              [tab] "a"(sbox_tables), "m"(sbox_tables), "m"(*(const uint8_t(*)[8])(key))  \
            : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25",       \
              "v26", "v27", "v28", "v29", "v30", "v31")

/* FL, FL^-1 and the whitening on one byte-sliced half h0..h7 (h0 the most significant
 * byte), in assembly too: gcc 12 moved the pinned state through general registers
 * around the same code in C. A subkey byte reaches all 16 lanes with vlrepb: byte j of a
 * 64-bit subkey (j = 0 the most significant, the RFC's first byte) is byte j of its
 * native big-endian representation. Section 2.4.2: kl = KE >> 32 is bytes 0..3,
 * kr = KE & 0xffffffff bytes 4..7. */
#define HALF_OUTPUTS(h0, h1, h2, h3, h4, h5, h6, h7)                                      \
    [H0] "+v"(h0), [H1] "+v"(h1), [H2] "+v"(h2), [H3] "+v"(h3), [H4] "+v"(h4),            \
        [H5] "+v"(h5), [H6] "+v"(h6), [H7] "+v"(h7)
#define HALF_CLOBBERS "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23"

/* x2 ^= (x1 & kl) <<< 1, the 32-bit rotate byte by byte: (a_i << 1) | (a_i+1 >> 7). */
#define FL_LEFT_ASM                                                                       \
    "vlrepb %%v16,0(%[kp])\n\t" "vn %%v16,%[H0],%%v16\n\t"                                \
    "vlrepb %%v17,1(%[kp])\n\t" "vn %%v17,%[H1],%%v17\n\t"                                \
    "vlrepb %%v18,2(%[kp])\n\t" "vn %%v18,%[H2],%%v18\n\t"                                \
    "vlrepb %%v19,3(%[kp])\n\t" "vn %%v19,%[H3],%%v19\n\t"                                \
    ROTL1_ASM(H4, 16, 17) ROTL1_ASM(H5, 17, 18) ROTL1_ASM(H6, 18, 19) ROTL1_ASM(H7, 19, 16)
#define ROTL1_ASM(h, a, b)                                                                \
    "veslb %%v20,%%v" #a ",1\n\t" "vesrlb %%v21,%%v" #b ",7\n\t"                          \
    "vo %%v20,%%v20,%%v21\n\t" "vx %[" #h "],%[" #h "],%%v20\n\t"
/* x1 ^= x2 | kr */
#define FL_RIGHT_ASM                                                                      \
    OR_XOR_ASM(H0, H4, 4) OR_XOR_ASM(H1, H5, 5) OR_XOR_ASM(H2, H6, 6) OR_XOR_ASM(H3, H7, 7)
#define OR_XOR_ASM(h, g, j)                                                               \
    "vlrepb %%v16," #j "(%[kp])\n\t" "vo %%v16,%[" #g "],%%v16\n\t"                       \
    "vx %[" #h "],%[" #h "],%%v16\n\t"

#define FL(h0, h1, h2, h3, h4, h5, h6, h7, key)                                           \
    __asm__(FL_LEFT_ASM FL_RIGHT_ASM : HALF_OUTPUTS(h0, h1, h2, h3, h4, h5, h6, h7)         \
            : [kp] "a"(key), "m"(*(const uint8_t(*)[8])(key)) : HALF_CLOBBERS)
#define FLINV(h0, h1, h2, h3, h4, h5, h6, h7, key)                                        \
    __asm__(FL_RIGHT_ASM FL_LEFT_ASM : HALF_OUTPUTS(h0, h1, h2, h3, h4, h5, h6, h7)         \
            : [kp] "a"(key), "m"(*(const uint8_t(*)[8])(key)) : HALF_CLOBBERS)

#define WHITEN_ASM(h, j) "vlrepb %%v16," #j "(%[kp])\n\t" "vx %[" #h "],%[" #h "],%%v16\n\t"
#define WHITEN(h0, h1, h2, h3, h4, h5, h6, h7, key)                                       \
    __asm__(WHITEN_ASM(H0, 0) WHITEN_ASM(H1, 1) WHITEN_ASM(H2, 2) WHITEN_ASM(H3, 3)       \
            WHITEN_ASM(H4, 4) WHITEN_ASM(H5, 5) WHITEN_ASM(H6, 6) WHITEN_ASM(H7, 7)       \
            : HALF_OUTPUTS(h0, h1, h2, h3, h4, h5, h6, h7)                                \
            : [kp] "a"(key), "m"(*(const uint8_t(*)[8])(key)) : "v16")

/*
 * 16x16 byte transpose: four rounds of "vector k with vector k+8, merged high and low"
 * into vectors 2k and 2k+1 (vmrhb/vmrlb). Each round rotates the 8-bit address (vector
 * index : byte) left by one bit, so four of them swap its nibbles: (block, byte) ->
 * (byte, block). It is its own inverse. Named vectors, not arrays: gcc 12 kept an array
 * of vectors in memory and looped over it.
 */
#define MERGE_ROUND(o, i)                                                                 \
    v8 o##0 = vec_mergeh(i##0, i##8), o##1 = vec_mergel(i##0, i##8);                      \
    v8 o##2 = vec_mergeh(i##1, i##9), o##3 = vec_mergel(i##1, i##9);                      \
    v8 o##4 = vec_mergeh(i##2, i##10), o##5 = vec_mergel(i##2, i##10);                    \
    v8 o##6 = vec_mergeh(i##3, i##11), o##7 = vec_mergel(i##3, i##11);                    \
    v8 o##8 = vec_mergeh(i##4, i##12), o##9 = vec_mergel(i##4, i##12);                    \
    v8 o##10 = vec_mergeh(i##5, i##13), o##11 = vec_mergel(i##5, i##13);                  \
    v8 o##12 = vec_mergeh(i##6, i##14), o##13 = vec_mergel(i##6, i##14);                  \
    v8 o##14 = vec_mergeh(i##7, i##15), o##15 = vec_mergel(i##7, i##15)

#define TRANSPOSE16(o, i)                                                                 \
    MERGE_ROUND(o##r1_, i);                                                               \
    MERGE_ROUND(o##r2_, o##r1_);                                                          \
    MERGE_ROUND(o##r3_, o##r2_);                                                          \
    MERGE_ROUND(o, o##r3_)

/*
 * Subkeys in the order one direction uses them:
 *   [0], [1]      kw_pre (D1, D2)
 *   per group g:  (FL, FLINV) for g > 0, then six round keys
 *   last two      kw_post (D2, D1)
 * 24 rounds at most: 2 + 4 * 6 + 3 * 2 + 2 = 34.
 */
#define MAX_SCHED 34

typedef struct {
    uint64_t k[MAX_SCHED];
    unsigned groups; /* 3 or 4 groups of six rounds */
} sched;

static void build_schedule(sched *sv, const camellia_subkeys *ks, int decrypt)
{
    const unsigned nk = ks->key_bits == 128 ? 18 : 24;
    const unsigned nke = nk / 3 - 2;
    const uint64_t *kw_pre = decrypt ? &ks->kw[2] : &ks->kw[0];
    const uint64_t *kw_post = decrypt ? &ks->kw[0] : &ks->kw[2];
#define K(i) (ks->k[decrypt ? nk - (i) : (i) - 1])
#define KE(i) (ks->ke[decrypt ? nke - (i) : (i) - 1])
    unsigned n = 0;

    sv->groups = nk / 6;
    sv->k[n++] = kw_pre[0];
    sv->k[n++] = kw_pre[1];
    for (unsigned g = 0; g < sv->groups; g++) {
        if (g > 0) {
            sv->k[n++] = KE(2 * g - 1);
            sv->k[n++] = KE(2 * g);
        }
        for (unsigned r = 1; r <= 6; r++)
            sv->k[n++] = K(6 * g + r);
    }
    sv->k[n++] = kw_post[0];
    sv->k[n++] = kw_post[1];
#undef K
#undef KE
}

/* The halves as macro argument lists; EXPAND lets them split into eight arguments. */
#define D1 x0, x1, x2, x3, x4, x5, x6, x7
#define D2 x8, x9, x10, x11, x12, x13, x14, x15
#define EXPAND(m, ...) m(__VA_ARGS__)
#define PIN(n, init) register v8 x##n __asm__("v" #n) = (init)

/* 16 blocks from in to out (out == in allowed: everything is loaded before any store). */
static inline __attribute__((always_inline)) void camellia16(const sched *sv, uint8_t *out,
                                                             const uint8_t *in)
{
    const uint64_t *kp = sv->k;
#define LOAD(n) v8 b##n = vec_xl(16 * n, in)
    LOAD(0); LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5); LOAD(6); LOAD(7);
    LOAD(8); LOAD(9); LOAD(10); LOAD(11); LOAD(12); LOAD(13); LOAD(14); LOAD(15);
#undef LOAD
    TRANSPOSE16(t, b); /* tn: byte n of the 16 blocks; D1 = t0..t7, D2 = t8..t15 */

    PIN(0, t0); PIN(1, t1); PIN(2, t2); PIN(3, t3);
    PIN(4, t4); PIN(5, t5); PIN(6, t6); PIN(7, t7);
    PIN(8, t8); PIN(9, t9); PIN(10, t10); PIN(11, t11);
    PIN(12, t12); PIN(13, t13); PIN(14, t14); PIN(15, t15);
    EXPAND(WHITEN, D1, kp);
    EXPAND(WHITEN, D2, kp + 1);
    kp += 2;
    for (unsigned g = 0; g < sv->groups; g++) {
        if (g > 0) {
            EXPAND(FL, D1, kp);
            EXPAND(FLINV, D2, kp + 1);
            kp += 2;
        }
        for (int r = 0; r < 3; r++) {
            EXPAND(ROUND, D1, D2, kp);
            EXPAND(ROUND, D2, D1, kp + 1);
            kp += 2;
        }
    }
    EXPAND(WHITEN, D2, kp);
    EXPAND(WHITEN, D1, kp + 1);

    /* The output block is D2 || D1. The transpose's first round reads the pinned state in
     * assembly: gcc 12 moved it through memory and general registers for C code. */
    v8 or1_0, or1_1, or1_2, or1_3, or1_4, or1_5, or1_6, or1_7;
    v8 or1_8, or1_9, or1_10, or1_11, or1_12, or1_13, or1_14, or1_15;
#define MERGE2(o, a, b) "vmrhb %[" #o "a],%[" #a "],%[" #b "]\n\t" "vmrlb %[" #o "b],%[" #a "],%[" #b "]\n\t"
    __asm__(MERGE2(m0, a0, b0) MERGE2(m1, a1, b1) MERGE2(m2, a2, b2) MERGE2(m3, a3, b3)
            : [m0a] "=&v"(or1_0), [m0b] "=&v"(or1_1), [m1a] "=&v"(or1_2), [m1b] "=&v"(or1_3),
              [m2a] "=&v"(or1_4), [m2b] "=&v"(or1_5), [m3a] "=&v"(or1_6), [m3b] "=&v"(or1_7)
            : [a0] "v"(x8), [b0] "v"(x0), [a1] "v"(x9), [b1] "v"(x1), [a2] "v"(x10),
              [b2] "v"(x2), [a3] "v"(x11), [b3] "v"(x3));
    __asm__(MERGE2(m0, a0, b0) MERGE2(m1, a1, b1) MERGE2(m2, a2, b2) MERGE2(m3, a3, b3)
            : [m0a] "=&v"(or1_8), [m0b] "=&v"(or1_9), [m1a] "=&v"(or1_10), [m1b] "=&v"(or1_11),
              [m2a] "=&v"(or1_12), [m2b] "=&v"(or1_13), [m3a] "=&v"(or1_14), [m3b] "=&v"(or1_15)
            : [a0] "v"(x12), [b0] "v"(x4), [a1] "v"(x13), [b1] "v"(x5), [a2] "v"(x14),
              [b2] "v"(x6), [a3] "v"(x15), [b3] "v"(x7));
#undef MERGE2
    MERGE_ROUND(or2_, or1_);
    MERGE_ROUND(or3_, or2_);
    MERGE_ROUND(o, or3_);
#define STORE(n) vec_xst(o##n, 16 * n, out)
    STORE(0); STORE(1); STORE(2); STORE(3); STORE(4); STORE(5); STORE(6); STORE(7);
    STORE(8); STORE(9); STORE(10); STORE(11); STORE(12); STORE(13); STORE(14); STORE(15);
#undef STORE
}

#undef D1
#undef D2
#undef EXPAND
#undef PIN

/*
 * Four blocks, for short inputs and tails, where 16 lanes would mostly compute nothing:
 * each vector holds the same half of two blocks, one 64-bit half per doubleword (from
 * the blocks by vpdi, no transpose). Within a half, byte p is the RFC's x(p+1), so one
 * S-box pass covers every byte position, the s4 bytes rotated on the way in and the s2,
 * s3 bytes on the way out by per-byte rotates (verllv). P is the 4-layer network of
 * power8.c, each layer half the bytes XORed with a permutation of the other half
 * (vperm with zero for the bytes that stay), then the output order. 20 instructions a
 * byte against the 16-block path's 16.2, but for 4 blocks where that pays for 16.
 */
static const uint8_t quad_tables[7][16] __attribute__((aligned(16))) = {
    /* per-byte left rotates: the s4 inputs (x4, x7), the s2 (x2, x5) and s3 (x3, x6)
     * outputs */
    {0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0},
    {0, 1, 7, 0, 1, 7, 0, 0, 0, 1, 7, 0, 1, 7, 0, 0},
    /* P, power8.c's layers t0^=t5 t1^=t6 t2^=t7 t3^=t4 | t4^=t2 t5^=t3 t6^=t0 t7^=t1 |
     * t0^=t7 t1^=t4 t2^=t5 t3^=t6 | t4^=t3 t5^=t0 t6^=t1 t7^=t2 (16: a zero byte), then
     * y1..y4 = t4..t7 and y5..y8 = t0..t3 */
    {5, 6, 7, 4, 16, 16, 16, 16, 13, 14, 15, 12, 16, 16, 16, 16},
    {16, 16, 16, 16, 2, 3, 0, 1, 16, 16, 16, 16, 10, 11, 8, 9},
    {7, 4, 5, 6, 16, 16, 16, 16, 15, 12, 13, 14, 16, 16, 16, 16},
    {16, 16, 16, 16, 3, 0, 1, 2, 16, 16, 16, 16, 11, 8, 9, 10},
    {4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11},
};

typedef __vector unsigned int v32q;
typedef __vector unsigned long long v64q;

typedef struct {
    v8 in_lo, in_hi, inv, inva, out_u, out_c, out_t, nib, zero;
    v8 rot_in, rot_out, p1, p2, p3, p4, swap;
} quad_consts;

AC_INLINE v8 quad_sbox(const quad_consts *c, v8 x)
{
    x = vec_rl(x, c->rot_in);
    v8 v = vec_perm(c->in_lo, c->in_lo, x) ^ vec_perm(c->in_hi, c->in_hi, x >> 4);
    v8 i = v >> 4, k = v & c->nib;
    v8 ak = vec_perm(c->inva, c->inva, k), j = i ^ k;
    v8 io = vec_perm(c->inv, c->zero, vec_perm(c->inv, c->inv, i) ^ ak) ^ j;
    v8 jo = vec_perm(c->inv, c->zero, vec_perm(c->inv, c->inv, j) ^ ak) ^ i;
    v8 z = vec_perm(c->out_u, c->out_c, io) ^ vec_perm(c->out_t, c->zero, jo);
    return vec_rl(z, c->rot_out);
}

/* d ^= F(s, k) for two blocks' halves at once. */
AC_INLINE v8 quad_f(const quad_consts *c, v8 s, const uint64_t *k)
{
    v8 t = quad_sbox(c, s ^ (v8)vec_splats((unsigned long long)*k));
    t ^= vec_perm(t, c->zero, c->p1);
    t ^= vec_perm(t, c->zero, c->p2);
    t ^= vec_perm(t, c->zero, c->p3);
    t ^= vec_perm(t, c->zero, c->p4);
    return vec_perm(t, t, c->swap);
}

/* Section 2.4.2 on halves [x1 x2 | x1 x2] (32-bit words), KE = [kl kr | kl kr]:
 * FL x2 ^= (x1 & kl) <<< 1, x1 ^= x2 | kr; FLINV the same steps the other way round.
 * verllg by 32 swaps the words of a doubleword. */
AC_INLINE v8 quad_fl_left(v8 h, v8 ke)
{
    const v64q lo = {0xffffffffu, 0xffffffffu};
    v64q t = (v64q)vec_rli((v32q)(h & ke), 1);
    return h ^ (v8)(vec_rli(t, 32) & lo);
}

AC_INLINE v8 quad_fl_right(v8 h, v8 ke)
{
    const v64q hi = {0xffffffff00000000u, 0xffffffff00000000u};
    return h ^ (v8)(vec_rli((v64q)(h | ke), 32) & hi);
}

/* Four blocks in to out (out == in allowed). */
static void camellia4(const sched *sv, uint8_t *out, const uint8_t *in)
{
    const quad_consts cs = {
        IN_LO, IN_HI, INV, INVA, OUT1_U, OUT1_C, OUT1_T, SPLAT(15), SPLAT(0),
        vec_xl(0, quad_tables[0]), vec_xl(0, quad_tables[1]), vec_xl(0, quad_tables[2]),
        vec_xl(0, quad_tables[3]), vec_xl(0, quad_tables[4]), vec_xl(0, quad_tables[5]),
        vec_xl(0, quad_tables[6]),
    };
    const quad_consts *c = &cs;
    const uint64_t *kp = sv->k;
    v64q b0 = (v64q)vec_xl(0, in), b1 = (v64q)vec_xl(16, in);
    v64q b2 = (v64q)vec_xl(32, in), b3 = (v64q)vec_xl(48, in);
    /* D1 of blocks 0, 1 and 2, 3; D2 likewise */
    v8 d1a = (v8)vec_permi(b0, b1, 0), d1b = (v8)vec_permi(b2, b3, 0);
    v8 d2a = (v8)vec_permi(b0, b1, 3), d2b = (v8)vec_permi(b2, b3, 3);
#define KEY(p) ((v8)vec_splats((unsigned long long)*(p)))

    d1a ^= KEY(kp);
    d1b ^= KEY(kp);
    d2a ^= KEY(kp + 1);
    d2b ^= KEY(kp + 1);
    kp += 2;
    for (unsigned g = 0; g < sv->groups; g++) {
        if (g > 0) {
            v8 ke1 = KEY(kp), ke2 = KEY(kp + 1);
            d1a = quad_fl_right(quad_fl_left(d1a, ke1), ke1);
            d1b = quad_fl_right(quad_fl_left(d1b, ke1), ke1);
            d2a = quad_fl_left(quad_fl_right(d2a, ke2), ke2);
            d2b = quad_fl_left(quad_fl_right(d2b, ke2), ke2);
            kp += 2;
        }
        for (int r = 0; r < 3; r++) {
            d2a ^= quad_f(c, d1a, kp);
            d2b ^= quad_f(c, d1b, kp);
            d1a ^= quad_f(c, d2a, kp + 1);
            d1b ^= quad_f(c, d2b, kp + 1);
            kp += 2;
        }
    }
    d2a ^= KEY(kp);
    d2b ^= KEY(kp);
    d1a ^= KEY(kp + 1);
    d1b ^= KEY(kp + 1);
#undef KEY
    /* The output block is D2 || D1. */
    vec_xst((v8)vec_permi((v64q)d2a, (v64q)d1a, 0), 0, out);
    vec_xst((v8)vec_permi((v64q)d2a, (v64q)d1a, 3), 16, out);
    vec_xst((v8)vec_permi((v64q)d2b, (v64q)d1b, 0), 32, out);
    vec_xst((v8)vec_permi((v64q)d2b, (v64q)d1b, 3), 48, out);
}

static void batch16(const void *schedule, uint8_t *out, const uint8_t *in)
{
    camellia16((const sched *)schedule, out, in);
}

/* 1-12 blocks as groups of four, the last one padded through a buffer. */
static void quads(const sched *sv, uint8_t *out, const uint8_t *in, size_t nblocks)
{
    uint8_t buf[64];

    for (; nblocks >= 4; nblocks -= 4, in += 64, out += 64)
        camellia4(sv, out, in);
    if (nblocks) {
        memset(buf, 0, sizeof buf);
        memcpy(buf, in, 16 * nblocks);
        camellia4(sv, buf, buf);
        memcpy(out, buf, 16 * nblocks);
        ac_wipe(buf, sizeof buf);
    }
}

static void camellia_vx(const camellia_subkeys *ks, int decrypt, uint8_t *out,
                        const uint8_t *in, size_t nblocks)
{
    /* Up to 12 left over, groups of four cost less than one 16-block batch (1290
     * instructions each against 4140). */
    const size_t rest = nblocks % 16 <= 12 ? nblocks % 16 : 0;
    sched sv;

    build_schedule(&sv, ks, decrypt);
    ac_camellia_batches16(batch16, &sv, out, in, nblocks - rest);
    quads(&sv, out + 16 * (nblocks - rest), in + 16 * (nblocks - rest), rest);
    ac_wipe(&sv, sizeof sv);
}

static void camellia_vx_encrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                const uint8_t *in, size_t nblocks)
{
    (void)cache;
    camellia_vx(ks, 0, out, in, nblocks);
}

static void camellia_vx_decrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                const uint8_t *in, size_t nblocks)
{
    (void)cache;
    camellia_vx(ks, 1, out, in, nblocks);
}

const camellia_kernel archcrypt_camellia_vx = {
    camellia_vx_encrypt,
    camellia_vx_decrypt,
    NULL,
};
