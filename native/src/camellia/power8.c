/* Camellia ECB, POWER8 vector crypto: 16 blocks byte-sliced into 16 vectors, S-boxes as vsbox between vpermxor nibble-table affine maps, FL/FL^-1 byte-sliced (RFC 3713 2.3-2.4). */
#if !defined(__POWER8_VECTOR__) || !defined(__CRYPTO__) || !defined(__LITTLE_ENDIAN__)
#error "camellia/power8.c needs -mcpu=power8 -mcrypto on little-endian (ISA_FLAGS_power8 in native/isa.mk)"
#endif

#include <altivec.h>

#include "common.h"
#include "camellia/batch16.h"
#include "camellia/camellia.h"

typedef __vector unsigned char v8;
typedef __vector unsigned long long v64;

/*
 * Camellia's s1 is affine-equivalent to the AES S-box:
 *     s1(x) = post(aes_sbox(pre(x)))
 * with pre and post affine over GF(2)^8: both S-boxes are inversion in GF(2^8) between
 * affine maps. The maps below were solved for offline (guess the input that pre sends to
 * 0, then the linear-equivalence propagation of Biryukov et al., EUROCRYPT 2003, against
 * AES's inversion) and checked on all 256 inputs, as was each derived table pair.
 * An affine map of a byte is T_hi[x >> 4] ^ T_lo[x & 15],
 * and vpermxor does exactly that for 16 bytes in one instruction: each index byte's high
 * nibble picks a byte of the first table, its low nibble one of the second, and the two
 * are XORed. vsbox is AES SubBytes alone: vcipherlast would add ShiftRows, which moves
 * bytes between lanes (i.e. between blocks) and would cost a vperm per vector to undo,
 * and an XOR we do not need. So an S-box is three instructions per 16 bytes and reads
 * no memory.
 *
 *     s2(x) = s1(x) <<< 1   -> post2 = post1 then rotate, one more table pair
 *     s3(x) = s1(x) >>> 1   -> post3
 *     s4(x) = s1(x <<< 1)   -> pre4 = rotate then pre1
 *
 * vpermxor numbers the table bytes big-endian (byte 0 is the leftmost; gcc 12's
 * __builtin_crypto_vpermxor passes the indices through unchanged on little-endian, see
 * CROSS-ARCH.md), so each table is written here from entry 15 down to entry 0: the
 * initialiser lists little-endian elements 0..15. A compiler that "fixed" the index order
 * would fail the differential self-test against portable.c at once.
 */
#define TABLE(t15, t14, t13, t12, t11, t10, t9, t8, t7, t6, t5, t4, t3, t2, t1, t0) \
    ((v8){t15, t14, t13, t12, t11, t10, t9, t8, t7, t6, t5, t4, t3, t2, t1, t0})

#define PRE1_HI  TABLE(0x84, 0x23, 0x17, 0xb0, 0xe5, 0x42, 0x76, 0xd1, 0x5d, 0xfa, 0xce, 0x69, 0x3c, 0x9b, 0xaf, 0x08)
#define PRE1_LO  TABLE(0x02, 0x03, 0x1b, 0x1a, 0xb3, 0xb2, 0xaa, 0xab, 0xa9, 0xa8, 0xb0, 0xb1, 0x18, 0x19, 0x01, 0x00)
#define PRE4_HI  TABLE(0x22, 0xb1, 0x43, 0xd0, 0xfb, 0x68, 0x9a, 0x09, 0x23, 0xb0, 0x42, 0xd1, 0xfa, 0x69, 0x9b, 0x08)
#define PRE4_LO  TABLE(0xa4, 0xbd, 0x15, 0x0c, 0x0f, 0x16, 0xbe, 0xa7, 0x03, 0x1a, 0xb2, 0xab, 0xa8, 0xb1, 0x19, 0x00)
#define POST1_HI TABLE(0x78, 0xc0, 0xa1, 0x19, 0xd8, 0x60, 0x01, 0xb9, 0xd0, 0x68, 0x09, 0xb1, 0x70, 0xc8, 0xa9, 0x11)
#define POST1_LO TABLE(0x49, 0xda, 0xdc, 0x4f, 0x66, 0xf5, 0xf3, 0x60, 0x29, 0xba, 0xbc, 0x2f, 0x06, 0x95, 0x93, 0x00)
#define POST2_HI TABLE(0xf0, 0x81, 0x43, 0x32, 0xb1, 0xc0, 0x02, 0x73, 0xa1, 0xd0, 0x12, 0x63, 0xe0, 0x91, 0x53, 0x22)
#define POST2_LO TABLE(0x92, 0xb5, 0xb9, 0x9e, 0xcc, 0xeb, 0xe7, 0xc0, 0x52, 0x75, 0x79, 0x5e, 0x0c, 0x2b, 0x27, 0x00)
#define POST3_HI TABLE(0x3c, 0x60, 0xd0, 0x8c, 0x6c, 0x30, 0x80, 0xdc, 0x68, 0x34, 0x84, 0xd8, 0x38, 0x64, 0xd4, 0x88)
#define POST3_LO TABLE(0xa4, 0x6d, 0x6e, 0xa7, 0x33, 0xfa, 0xf9, 0x30, 0x94, 0x5d, 0x5e, 0x97, 0x03, 0xca, 0xc9, 0x00)

typedef struct {
    v8 pre1_hi, pre1_lo, pre4_hi, pre4_lo;
    v8 post1_hi, post1_lo, post2_hi, post2_lo, post3_hi, post3_lo;
    v8 seven;
} sbox_consts;

static inline v8 affine(v8 hi, v8 lo, v8 x)
{
    return (v8)__builtin_crypto_vpermxor(hi, lo, x);
}

static inline v8 subbytes(v8 x)
{
    return (v8)__builtin_crypto_vsbox((v64)x);
}

#define SBOX(c, pre, post, x) \
    affine((c)->post##_hi, (c)->post##_lo, subbytes(affine((c)->pre##_hi, (c)->pre##_lo, (x))))

/*
 * Subkeys travel as vectors of two 64-bit subkeys (little-endian doubleword elements), so
 * byte j of a subkey (j = 0 the most significant, the RFC's first byte) sits in lane 7 - j
 * of the first and 15 - j of the second; vspltb makes the 16-lane constant. base is 7 or 15.
 */
#define KB(kv, base, j) vec_splat((kv), (base) - (j))

/*
 * One Feistel round on byte-sliced halves (section 2.4.1): d ^= P(S(s ^ k)). The P
 * function is 16 in-place XORs after which t0..t3 hold y5..y8 and t4..t7 hold y1..y4.
 * Bytes 1..8 of F use s1 s2 s3 s4 s2 s3 s4 s1.
 */
#define ROUND(c, s0, s1, s2, s3, s4, s5, s6, s7, d0, d1, d2, d3, d4, d5, d6, d7, kv, base) \
    do {                                                                                \
        v8 t0 = SBOX(c, pre1, post1, vec_xor(s0, KB(kv, base, 0)));                     \
        v8 t1 = SBOX(c, pre1, post2, vec_xor(s1, KB(kv, base, 1)));                     \
        v8 t2 = SBOX(c, pre1, post3, vec_xor(s2, KB(kv, base, 2)));                     \
        v8 t3 = SBOX(c, pre4, post1, vec_xor(s3, KB(kv, base, 3)));                     \
        v8 t4 = SBOX(c, pre1, post2, vec_xor(s4, KB(kv, base, 4)));                     \
        v8 t5 = SBOX(c, pre1, post3, vec_xor(s5, KB(kv, base, 5)));                     \
        v8 t6 = SBOX(c, pre4, post1, vec_xor(s6, KB(kv, base, 6)));                     \
        v8 t7 = SBOX(c, pre1, post1, vec_xor(s7, KB(kv, base, 7)));                     \
        t0 ^= t5; t1 ^= t6; t2 ^= t7; t3 ^= t4;                                         \
        t4 ^= t2; t5 ^= t3; t6 ^= t0; t7 ^= t1;                                         \
        t0 ^= t7; t1 ^= t4; t2 ^= t5; t3 ^= t6;                                         \
        t4 ^= t3; t5 ^= t0; t6 ^= t1; t7 ^= t2;                                         \
        d0 ^= t4; d1 ^= t5; d2 ^= t6; d3 ^= t7;                                         \
        d4 ^= t0; d5 ^= t1; d6 ^= t2; d7 ^= t3;                                         \
    } while (0)

/* (a <<< 1) over the 32-bit word a0..a3 (a0 most significant), byte by byte. */
#define ROTL1(c, a, b) vec_or(vec_add(a, a), vec_sr(b, (c)->seven))

/* Section 2.4.2 on a byte-sliced half h0..h7 (h0 the most significant byte): kl = KE >> 32
 * in bytes 0..3, kr = KE & 0xffffffff in bytes 4..7 of the subkey in kv at base. */
#define FL_LEFT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base)                            \
    do {                                                                                \
        v8 a0 = vec_and(h0, KB(kv, base, 0)), a1 = vec_and(h1, KB(kv, base, 1));        \
        v8 a2 = vec_and(h2, KB(kv, base, 2)), a3 = vec_and(h3, KB(kv, base, 3));        \
        h4 ^= ROTL1(c, a0, a1); h5 ^= ROTL1(c, a1, a2);                                 \
        h6 ^= ROTL1(c, a2, a3); h7 ^= ROTL1(c, a3, a0);                                 \
    } while (0)

#define FL_RIGHT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base)                           \
    do {                                                                                \
        h0 ^= vec_or(h4, KB(kv, base, 4)); h1 ^= vec_or(h5, KB(kv, base, 5));           \
        h2 ^= vec_or(h6, KB(kv, base, 6)); h3 ^= vec_or(h7, KB(kv, base, 7));           \
    } while (0)

/* FL: x2 ^= (x1 & kl) <<< 1, then x1 ^= x2 | kr. FLINV: the same steps in reverse order. */
#define FL(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base)                                 \
    do {                                                                                \
        FL_LEFT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base);                           \
        FL_RIGHT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base);                          \
    } while (0)

#define FLINV(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base)                              \
    do {                                                                                \
        FL_RIGHT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base);                          \
        FL_LEFT(c, h0, h1, h2, h3, h4, h5, h6, h7, kv, base);                           \
    } while (0)

/* The whitening XOR of one 64-bit subkey into a half. */
#define WHITEN(h0, h1, h2, h3, h4, h5, h6, h7, kv, base)                                \
    do {                                                                                \
        h0 ^= KB(kv, base, 0); h1 ^= KB(kv, base, 1);                                   \
        h2 ^= KB(kv, base, 2); h3 ^= KB(kv, base, 3);                                   \
        h4 ^= KB(kv, base, 4); h5 ^= KB(kv, base, 5);                                   \
        h6 ^= KB(kv, base, 6); h7 ^= KB(kv, base, 7);                                   \
    } while (0)

/*
 * 16x16 byte transpose: four rounds of "vector k with vector k+8, merged high and low"
 * into vectors 2k and 2k+1. Each round rotates the 8-bit address (vector index : lane)
 * left by one bit, so four of them swap the two nibbles: (block, byte) -> (byte, block).
 * It is its own inverse.
 */
#define MERGE_ROUND(x)                                                                  \
    do {                                                                                \
        v8 y_[16];                                                                      \
        y_[0] = vec_mergeh(x[0], x[8]);   y_[1] = vec_mergel(x[0], x[8]);               \
        y_[2] = vec_mergeh(x[1], x[9]);   y_[3] = vec_mergel(x[1], x[9]);               \
        y_[4] = vec_mergeh(x[2], x[10]);  y_[5] = vec_mergel(x[2], x[10]);              \
        y_[6] = vec_mergeh(x[3], x[11]);  y_[7] = vec_mergel(x[3], x[11]);              \
        y_[8] = vec_mergeh(x[4], x[12]);  y_[9] = vec_mergel(x[4], x[12]);              \
        y_[10] = vec_mergeh(x[5], x[13]); y_[11] = vec_mergel(x[5], x[13]);             \
        y_[12] = vec_mergeh(x[6], x[14]); y_[13] = vec_mergel(x[6], x[14]);             \
        y_[14] = vec_mergeh(x[7], x[15]); y_[15] = vec_mergel(x[7], x[15]);             \
        x[0] = y_[0]; x[1] = y_[1]; x[2] = y_[2]; x[3] = y_[3];                         \
        x[4] = y_[4]; x[5] = y_[5]; x[6] = y_[6]; x[7] = y_[7];                         \
        x[8] = y_[8]; x[9] = y_[9]; x[10] = y_[10]; x[11] = y_[11];                     \
        x[12] = y_[12]; x[13] = y_[13]; x[14] = y_[14]; x[15] = y_[15];                 \
    } while (0)

#define TRANSPOSE16(x)                                                                  \
    do {                                                                                \
        MERGE_ROUND(x); MERGE_ROUND(x); MERGE_ROUND(x); MERGE_ROUND(x);                 \
    } while (0)

/*
 * Subkeys in the order one direction uses them, two per vector:
 *   [0]           kw_pre (D1, D2)
 *   per group g:  (FL, FLINV) for g > 0, then (k, k+1) three times
 *   [last]        kw_post (D2, D1)
 * 24 F-rounds: 1 + 4*3 + 3 + 1 = 17 vectors at most.
 */
#define MAX_KV 17

typedef struct {
    v8 kv[MAX_KV];
    unsigned groups;     /* 3 or 4 groups of six rounds */
} sched_vec;

static void build_schedule(sched_vec *sv, const camellia_subkeys *ks, int decrypt)
{
    const unsigned nk = ks->key_bits == 128 ? 18 : 24;
    const unsigned nke = nk / 3 - 2;
    const uint64_t *kw_pre = decrypt ? &ks->kw[2] : &ks->kw[0];
    const uint64_t *kw_post = decrypt ? &ks->kw[0] : &ks->kw[2];
#define K(i) (ks->k[decrypt ? nk - (i) : (i) - 1])
#define KE(i) (ks->ke[decrypt ? nke - (i) : (i) - 1])
    unsigned n = 0;

    sv->groups = nk / 6;
    sv->kv[n++] = (v8)(v64){kw_pre[0], kw_pre[1]};
    for (unsigned g = 0; g < sv->groups; g++) {
        unsigned r = 6 * g + 1;
        if (g > 0)
            sv->kv[n++] = (v8)(v64){KE(2 * g - 1), KE(2 * g)};
        sv->kv[n++] = (v8)(v64){K(r), K(r + 1)};
        sv->kv[n++] = (v8)(v64){K(r + 2), K(r + 3)};
        sv->kv[n++] = (v8)(v64){K(r + 4), K(r + 5)};
    }
    sv->kv[n++] = (v8)(v64){kw_post[0], kw_post[1]};
#undef K
#undef KE
}

/* A subkey vector from memory into a register: without the (empty) barrier gcc turns
 * each vspltb of a vector in memory into a byte load, a move and a splat. */
static inline v8 key_vector(const v8 *p)
{
    v8 k = vec_ld(0, p);
    __asm__("" : "+v"(k));
    return k;
}

/* The halves as macro argument lists; EXPAND lets them split into eight arguments. */
#define D1 x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
#define D2 x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]
#define EXPAND(m, ...) m(__VA_ARGS__)

/* 16 blocks from in to out (out == in allowed: everything is loaded before any store). */
AC_INLINE void camellia16(const sched_vec *sv,
                                                             uint8_t *out, const uint8_t *in)
{
    const sbox_consts cs = {
        PRE1_HI, PRE1_LO, PRE4_HI, PRE4_LO,
        POST1_HI, POST1_LO, POST2_HI, POST2_LO, POST3_HI, POST3_LO,
        vec_splat_u8(7),
    };
    const sbox_consts *c = &cs;
    const v8 *kp = sv->kv;
    v8 x[16], k;

    x[0] = vec_xl(0, in);     x[1] = vec_xl(16, in);    x[2] = vec_xl(32, in);
    x[3] = vec_xl(48, in);    x[4] = vec_xl(64, in);    x[5] = vec_xl(80, in);
    x[6] = vec_xl(96, in);    x[7] = vec_xl(112, in);   x[8] = vec_xl(128, in);
    x[9] = vec_xl(144, in);   x[10] = vec_xl(160, in);  x[11] = vec_xl(176, in);
    x[12] = vec_xl(192, in);  x[13] = vec_xl(208, in);  x[14] = vec_xl(224, in);
    x[15] = vec_xl(240, in);
    TRANSPOSE16(x);     /* x[i]: byte i of the 16 blocks; D1 = x[0..7], D2 = x[8..15] */

    k = key_vector(kp++);
    EXPAND(WHITEN, D1, k, 7);
    EXPAND(WHITEN, D2, k, 15);
    for (unsigned g = 0; g < sv->groups; g++) {
        if (g > 0) {
            k = key_vector(kp++);
            EXPAND(FL, c, D1, k, 7);
            EXPAND(FLINV, c, D2, k, 15);
        }
        for (int r = 0; r < 3; r++) {
            k = key_vector(kp++);
            EXPAND(ROUND, c, D1, D2, k, 7);
            EXPAND(ROUND, c, D2, D1, k, 15);
        }
    }
    k = key_vector(kp);
    EXPAND(WHITEN, D2, k, 7);
    EXPAND(WHITEN, D1, k, 15);

    /* The output block is D2 || D1. */
    v8 y[16] = {D2, D1};
    TRANSPOSE16(y);
    vec_xst(y[0], 0, out);     vec_xst(y[1], 16, out);    vec_xst(y[2], 32, out);
    vec_xst(y[3], 48, out);    vec_xst(y[4], 64, out);    vec_xst(y[5], 80, out);
    vec_xst(y[6], 96, out);    vec_xst(y[7], 112, out);   vec_xst(y[8], 128, out);
    vec_xst(y[9], 144, out);   vec_xst(y[10], 160, out);  vec_xst(y[11], 176, out);
    vec_xst(y[12], 192, out);  vec_xst(y[13], 208, out);  vec_xst(y[14], 224, out);
    vec_xst(y[15], 240, out);
}

#undef D1
#undef D2
#undef EXPAND

static void batch16(const void *schedule, uint8_t *out, const uint8_t *in)
{
    camellia16((const sched_vec *)schedule, out, in);
}

static void camellia_power8(const camellia_subkeys *ks, int decrypt, uint8_t *out,
                            const uint8_t *in, size_t nblocks)
{
    sched_vec sv;

    build_schedule(&sv, ks, decrypt);
    ac_camellia_batches16(batch16, &sv, out, in, nblocks);
    ac_wipe(&sv, sizeof sv);
}

static void camellia_power8_encrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                    const uint8_t *in, size_t nblocks)
{
    (void)cache;
    camellia_power8(ks, 0, out, in, nblocks);
}

static void camellia_power8_decrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                    const uint8_t *in, size_t nblocks)
{
    (void)cache;
    camellia_power8(ks, 1, out, in, nblocks);
}

const camellia_kernel archcrypt_camellia_power8 = {
    camellia_power8_encrypt,
    camellia_power8_decrypt,
    NULL,
};
