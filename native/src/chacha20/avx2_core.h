/* ChaCha20 AVX2 building blocks shared by chacha20/avx2.c and aead/avx2.c: the 8-block (one state word per ymm, one parked on the stack) double round as inline-asm quarter-round pairs, feed-forward, transpose and XOR-out (RFC 8439 2.3-2.4). */
#ifndef ARCHCRYPT_CHACHA20_AVX2_CORE_H
#define ARCHCRYPT_CHACHA20_AVX2_CORE_H

/* A header gets no ISA flags of its own: only files built with ISA_FLAGS_avx2
 * may include it. */
#ifndef __AVX2__
#error "chacha20/avx2_core.h needs -mavx2: include it only from files built with ISA_FLAGS_avx2"
#endif

#include <immintrin.h>

#include "common.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define CHACHA_C0 0x61707865
#define CHACHA_C1 0x3320646e
#define CHACHA_C2 0x79622d32
#define CHACHA_C3 0x6b206574

/* Rotates by whole bytes are one byte shuffle (masks below); 12 and 7 are two
 * shifts and an OR. */
#define ROTN(v, n) _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))

#define ROT_CONSTANTS                                                       \
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, \
                                           2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13); \
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, \
                                          3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14)

static inline void xor32(uint8_t *out, const uint8_t *in, __m256i ks)
{
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)in), ks));
}

/* XOR up to one block held as two ymm halves; only `avail` bytes are touched. */
static inline void xor_upto(uint8_t *out, const uint8_t *in, __m256i lo, __m256i hi, size_t avail)
{
    if (avail >= 64) {
        xor32(out, in, lo);
        xor32(out + 32, in + 32, hi);
        return;
    }
    if (avail >= 32) {
        xor32(out, in, lo);
        out += 32;
        in += 32;
        avail -= 32;
        lo = hi;
    }
    if (avail == 0)
        return;
    uint8_t ks[32];
    _mm256_storeu_si256((__m256i *)(void *)ks, lo);
    size_t i = 0;
    for (; i + 8 <= avail; i += 8) {
        uint64_t a, b;
        memcpy(&a, in + i, 8);
        memcpy(&b, ks + i, 8);
        a ^= b;
        memcpy(out + i, &a, 8);
    }
    for (; i < avail; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
    /* The keystream is as secret as the key it came from. */
    _mm256_storeu_si256((__m256i *)(void *)ks, _mm256_setzero_si256());
    __asm__ __volatile__("" : : "r"(ks) : "memory");
}

/* The 8-block step: x0..x15 hold state word i of blocks ctr..ctr+7 (block j in
 * lane j). Its quarter rounds need 16 state words and one temporary for the
 * rotates by 12 and 7, one register more than there are, so exactly one c word
 * lives in a 32-byte stack slot and the rest stay in registers (as in
 * libgcrypt's chacha20-amd64-avx2.S). The words in flight per quarter-round
 * pair are (0 4 8 12, 1 5 9 13), (2 6 10 14, 3 7 11 15), (0 5 10 15,
 * 1 6 11 12), (2 7 8 13, 3 4 9 14): x11 is parked through the first pair, x8
 * through the middle two, x11 again through the last, so a double round costs
 * two swaps of one store and one load each.
 *
 * The pairs are inline asm: from intrinsics gcc 12 interleaved the pairs,
 * kept the shuffle masks and its own temporaries in registers and made about
 * 220 stack accesses per 512-byte step (the intrinsics version with two parked
 * c words; now 40 swaps plus 32 for the input state). In asm each pair takes its eight words and one scratch
 * register; the rotates by 16 and 8 are vpshufb with the mask as a memory
 * operand, so they need no register at all. The asm is not volatile: it has
 * no effect beyond its operands. */
static const uint8_t chacha8_rot16[32] __attribute__((aligned(32))) = {
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13};
static const uint8_t chacha8_rot8[32] __attribute__((aligned(32))) = {
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14};

/* b = rotl(b, n) with the scratch t, n given as (n, 32 - n). */
#define CHACHA8_ROT_(b, n, m)                                               \
    "vpsrld $" #m ", %[" #b "], %[t]\n\t"                                  \
    "vpslld $" #n ", %[" #b "], %[" #b "]\n\t"                             \
    "vpor %[t], %[" #b "], %[" #b "]\n\t"

/* Two quarter rounds, (a b c d) and (e f g h), interleaved (RFC 8439 2.1). */
#define CHACHA8_QR2_(PRE, slot, A, B, C, D, E, F, G, H)                     \
    do {                                                                    \
        __m256i t_;                                                         \
        __asm__(PRE                                                         \
                "vpaddd %[b], %[a], %[a]\n\t"                               \
                "vpaddd %[f], %[e], %[e]\n\t"                               \
                "vpxor %[a], %[d], %[d]\n\t"                                \
                "vpxor %[e], %[h], %[h]\n\t"                                \
                "vpshufb %[r16], %[d], %[d]\n\t"                            \
                "vpshufb %[r16], %[h], %[h]\n\t"                            \
                "vpaddd %[d], %[c], %[c]\n\t"                               \
                "vpaddd %[h], %[g], %[g]\n\t"                               \
                "vpxor %[c], %[b], %[b]\n\t"                                \
                "vpxor %[g], %[f], %[f]\n\t"                                \
                CHACHA8_ROT_(b, 12, 20)                                     \
                CHACHA8_ROT_(f, 12, 20)                                     \
                "vpaddd %[b], %[a], %[a]\n\t"                               \
                "vpaddd %[f], %[e], %[e]\n\t"                               \
                "vpxor %[a], %[d], %[d]\n\t"                                \
                "vpxor %[e], %[h], %[h]\n\t"                                \
                "vpshufb %[r8], %[d], %[d]\n\t"                             \
                "vpshufb %[r8], %[h], %[h]\n\t"                             \
                "vpaddd %[d], %[c], %[c]\n\t"                               \
                "vpaddd %[h], %[g], %[g]\n\t"                               \
                "vpxor %[c], %[b], %[b]\n\t"                                \
                "vpxor %[g], %[f], %[f]\n\t"                                \
                CHACHA8_ROT_(b, 7, 25)                                      \
                CHACHA8_ROT_(f, 7, 25)                                      \
                : [a] "+x"(A), [b] "+x"(B), [c] "+x"(C), [d] "+x"(D),       \
                  [e] "+x"(E), [f] "+x"(F), [g] "+x"(G), [h] "+x"(H),       \
                  [t] "=&x"(t_), [m] "+m"(*(slot))                          \
                : [r16] "m"(*(const __m256i *)(const void *)chacha8_rot16), \
                  [r8] "m"(*(const __m256i *)(const void *)chacha8_rot8));  \
    } while (0)

/* A pair of quarter rounds; the S form first swaps the word in its operand
 * `reg` (the caller's xs) with the parked one, through the scratch register
 * before the rounds need it. */
#define CHACHA8_QR2(slot, A, B, C, D, E, F, G, H)                           \
    CHACHA8_QR2_("", slot, A, B, C, D, E, F, G, H)
#define CHACHA8_QR2S(slot, reg, A, B, C, D, E, F, G, H)                     \
    CHACHA8_QR2_("vmovdqa %[" #reg "], %[t]\n\t"                            \
                 "vmovdqa %[m], %[" #reg "]\n\t"                            \
                 "vmovdqa %[t], %[m]\n\t",                                  \
                 slot, A, B, C, D, E, F, G, H)

/* Stack accesses that gcc must make exactly where they are written: with plain
 * loads of the step's input state it hoisted the invariant words out of the
 * loop into registers and then spilled them to a second copy. */
static inline void park(__m256i *slot, __m256i v)
{
    *(volatile __m256i *)slot = v;
}

static inline __m256i unpark(const __m256i *slot)
{
    return *(const volatile __m256i *)slot;
}

/* The step's input state (RFC 8439 2.3), each word broadcast to all lanes and
 * lane j of word 12 set to counter + j; the caller adds 8 to st[12] per step.
 * Kept in memory: the step loads it at the start and adds it as memory
 * operands at the end, so it costs no register. Key material: wipe it. */
static inline void chacha8_setup(__m256i st[16], const uint32_t key[8], const uint32_t nonce[3],
                                 uint32_t counter)
{
    st[0] = _mm256_set1_epi32(CHACHA_C0);
    st[1] = _mm256_set1_epi32(CHACHA_C1);
    st[2] = _mm256_set1_epi32(CHACHA_C2);
    st[3] = _mm256_set1_epi32(CHACHA_C3);
    for (int i = 0; i < 8; i++)
        st[4 + i] = _mm256_set1_epi32((int)key[i]);
    st[12] = _mm256_add_epi32(_mm256_set1_epi32((int)counter),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int i = 0; i < 3; i++)
        st[13 + i] = _mm256_set1_epi32((int)nonce[i]);
}

/* The key words and the parked state word; constants, counter and nonce are
 * public. */
static inline void chacha8_wipe(__m256i st[16], __m256i *slot)
{
    for (int i = 4; i < 12; i++)
        park(&st[i], _mm256_setzero_si256());
    park(slot, _mm256_setzero_si256());
}

/* Declares the state words in the caller's scope from st: x8 or x11, whichever
 * is not parked in *slot, is xs (x8 at the start and the end of a double
 * round). */
#define CHACHA8_STATE(st, slot)                                                                 \
    __m256i x0 = unpark(&(st)[0]), x1 = unpark(&(st)[1]), x2 = unpark(&(st)[2]);                \
    __m256i x3 = unpark(&(st)[3]), x4 = unpark(&(st)[4]), x5 = unpark(&(st)[5]);                \
    __m256i x6 = unpark(&(st)[6]), x7 = unpark(&(st)[7]), xs = unpark(&(st)[8]);                \
    __m256i x9 = unpark(&(st)[9]), x10 = unpark(&(st)[10]), x12 = unpark(&(st)[12]);            \
    __m256i x13 = unpark(&(st)[13]), x14 = unpark(&(st)[14]), x15 = unpark(&(st)[15]);          \
    park(slot, unpark(&(st)[11]))

/* One double round: columns, then diagonals. HOOK1..HOOK3 are statements run
 * between its quarter-round pairs (the AEAD threads scalar Poly1305 blocks
 * through them; plain ChaCha20 passes nothing); they must not use vector
 * registers, all sixteen are taken. */
#define CHACHA8_DOUBLE_ROUND(slot, HOOK1, HOOK2, HOOK3)                     \
    do {                                                                    \
        CHACHA8_QR2(slot, x0, x4, xs, x12, x1, x5, x9, x13);                \
        HOOK1;                                                              \
        CHACHA8_QR2S(slot, g, x2, x6, x10, x14, x3, x7, xs, x15);           \
        HOOK2;                                                              \
        CHACHA8_QR2(slot, x0, x5, x10, x15, x1, x6, xs, x12);               \
        HOOK3;                                                              \
        CHACHA8_QR2S(slot, c, x2, x7, xs, x13, x3, x4, x9, x14);            \
    } while (0)

/* 4x4 transpose of 32-bit words inside each 128-bit half. */
#define TRANSPOSE_WORDS(a, b, c, d)                                         \
    do {                                                                    \
        __m256i t0_ = _mm256_unpacklo_epi32(a, b);                          \
        __m256i t1_ = _mm256_unpacklo_epi32(c, d);                          \
        __m256i t2_ = _mm256_unpackhi_epi32(a, b);                          \
        __m256i t3_ = _mm256_unpackhi_epi32(c, d);                          \
        a = _mm256_unpacklo_epi64(t0_, t1_);                                \
        b = _mm256_unpackhi_epi64(t0_, t1_);                                \
        c = _mm256_unpacklo_epi64(t2_, t3_);                                \
        d = _mm256_unpackhi_epi64(t2_, t3_);                                \
    } while (0)

static inline void ks_store(uint8_t *out, const uint8_t *in, __m256i ks)
{
    (void)in;
    _mm256_storeu_si256((__m256i *)(void *)out, ks);
}

/* Words 4g..4g+7 of all 8 blocks (g = 0: bytes 0..31, g = 2: bytes 32..63),
 * fed forward, transposed and passed to SINK(out, in, 32 bytes). After the
 * transposes half h of aj (bj) holds words 4g..4g+3 (4g+4..4g+7) of block
 * 4h + j. Half a block at a time, so that the transposes' temporaries do not
 * push the other eight words out of their registers. */
#define CHACHA8_HALF_(SINK, out, in, st, g, a0, a1, a2, a3, b0, b1, b2, b3)                      \
    do {                                                                                         \
        a0 = _mm256_add_epi32(a0, (st)[4 * (g) + 0]);                                            \
        a1 = _mm256_add_epi32(a1, (st)[4 * (g) + 1]);                                            \
        a2 = _mm256_add_epi32(a2, (st)[4 * (g) + 2]);                                            \
        a3 = _mm256_add_epi32(a3, (st)[4 * (g) + 3]);                                            \
        b0 = _mm256_add_epi32(b0, (st)[4 * (g) + 4]);                                            \
        b1 = _mm256_add_epi32(b1, (st)[4 * (g) + 5]);                                            \
        b2 = _mm256_add_epi32(b2, (st)[4 * (g) + 6]);                                            \
        b3 = _mm256_add_epi32(b3, (st)[4 * (g) + 7]);                                            \
        TRANSPOSE_WORDS(a0, a1, a2, a3);                                                         \
        TRANSPOSE_WORDS(b0, b1, b2, b3);                                                         \
        SINK((out) + 16 * (g), (in) + 16 * (g), _mm256_permute2x128_si256(a0, b0, 0x20));        \
        SINK((out) + 16 * (g) + 256, (in) + 16 * (g) + 256, _mm256_permute2x128_si256(a0, b0, 0x31)); \
        SINK((out) + 16 * (g) + 64, (in) + 16 * (g) + 64, _mm256_permute2x128_si256(a1, b1, 0x20)); \
        SINK((out) + 16 * (g) + 320, (in) + 16 * (g) + 320, _mm256_permute2x128_si256(a1, b1, 0x31)); \
        SINK((out) + 16 * (g) + 128, (in) + 16 * (g) + 128, _mm256_permute2x128_si256(a2, b2, 0x20)); \
        SINK((out) + 16 * (g) + 384, (in) + 16 * (g) + 384, _mm256_permute2x128_si256(a2, b2, 0x31)); \
        SINK((out) + 16 * (g) + 192, (in) + 16 * (g) + 192, _mm256_permute2x128_si256(a3, b3, 0x20)); \
        SINK((out) + 16 * (g) + 448, (in) + 16 * (g) + 448, _mm256_permute2x128_si256(a3, b3, 0x31)); \
    } while (0)

static inline void xor_bytes(uint8_t *out, const uint8_t *in, const uint8_t *ks, size_t len)
{
    size_t i = 0;
    for (; i + 32 <= len; i += 32)
        xor32(out + i, in + i, _mm256_loadu_si256((const __m256i *)(const void *)(ks + i)));
    for (; i + 8 <= len; i += 8) {
        uint64_t a, b;
        memcpy(&a, in + i, 8);
        memcpy(&b, ks + i, 8);
        a ^= b;
        memcpy(out + i, &a, 8);
    }
    for (; i < len; i++)
        out[i] = (uint8_t)(in[i] ^ ks[i]);
}

/* After the last double round: add the input state, transpose the 8 blocks
 * back to byte order and XOR them over len bytes (all 512 on the fast path; a
 * short last group goes through a keystream buffer and writes only len bytes). */
#define CHACHA8_XOR_OUT(st, slot, out, in, len)                                                  \
    do {                                                                                         \
        if (AC_LIKELY((len) >= 512)) {                                                           \
            CHACHA8_HALF_(xor32, out, in, st, 0, x0, x1, x2, x3, x4, x5, x6, x7);                \
            __m256i x11 = unpark(slot);                                                          \
            CHACHA8_HALF_(xor32, out, in, st, 2, xs, x9, x10, x11, x12, x13, x14, x15);          \
        } else {                                                                                 \
            __m256i ks_[16];                                                                     \
            uint8_t *k_ = (uint8_t *)ks_;                                                        \
            CHACHA8_HALF_(ks_store, k_, k_, st, 0, x0, x1, x2, x3, x4, x5, x6, x7);              \
            __m256i x11 = unpark(slot);                                                          \
            CHACHA8_HALF_(ks_store, k_, k_, st, 2, xs, x9, x10, x11, x12, x13, x14, x15);        \
            xor_bytes(out, in, k_, len);                                                         \
            /* The keystream is as secret as the key it came from. */                           \
            for (int i_ = 0; i_ < 16; i_++)                                                      \
                park(&ks_[i_], _mm256_setzero_si256());                                          \
        }                                                                                        \
    } while (0)

#endif
