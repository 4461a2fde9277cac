/* ChaCha20, AVX-512: two independent 16-block groups per 2 KiB iteration (one state word per zmm, one block per lane, vprold rotates, all 32 zmm registers; vpshufb for the 16- and 8-bit rotates of single groups; the output transpose starts with shifts and vpternlogq to spare port 5; the lane-uniform columns 1..3 of the first round in scalar), one group for 1 KiB and 513..1023-byte tails, 1..8 blocks as 4 blocks per zmm row set; for the AEAD, one group with block 0 as rows in the same rounds; byte-masked I/O (RFC 8439 2.3-2.4). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__)
#error "chacha20/avx512.c needs -mavx512f -mavx512vl -mavx512bw (ISA_FLAGS_avx512 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"
#include "aead/aead.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865
#define C1 0x3320646e
#define C2 0x79622d32
#define C3 0x6b206574

/* The rotates by 16 and 8 of the single-group rounds (1 KiB, 513..2047-byte tails, the
 * row passes) are byte permutations, done by vpshufb: on Intel, vprold zmm issues only on
 * port 0 and vpshufb zmm only on port 5, so half the rotates move to the other 512-bit
 * port. Measured natively on an Intel Xeon (AVX-512, KVM; bench-ab, 81 interleaved
 * rounds): 1 KiB 0.678 -> 0.654 c/B, 640..1536 bytes 1.6-3.5% faster, 64 B and 2 KiB+
 * unchanged. The two-group loop keeps vprold: its working words fill all 32 zmm, and
 * vpshufb there made it 6-9% slower (the permutation tables then come from memory). */
static const uint8_t ROT16_TAB[64] __attribute__((aligned(64))) = {
#define R16(o) 2 + (o), 3 + (o), 0 + (o), 1 + (o)
    R16(0),  R16(4),  R16(8),  R16(12), R16(16), R16(20), R16(24), R16(28),
    R16(32), R16(36), R16(40), R16(44), R16(48), R16(52), R16(56), R16(60)
#undef R16
};
static const uint8_t ROT8_TAB[64] __attribute__((aligned(64))) = {
#define R8(o) 3 + (o), 0 + (o), 1 + (o), 2 + (o)
    R8(0),  R8(4),  R8(8),  R8(12), R8(16), R8(20), R8(24), R8(28),
    R8(32), R8(36), R8(40), R8(44), R8(48), R8(52), R8(56), R8(60)
#undef R8
};
#define ROT16(x) _mm512_shuffle_epi8((x), _mm512_load_si512((const void *)ROT16_TAB))
#define ROT8(x) _mm512_shuffle_epi8((x), _mm512_load_si512((const void *)ROT8_TAB))

/* RFC 8439 2.1 on vectors of 32-bit words, for one group or one set of rows. */
#define QR(a, b, c, d)                                                      \
    do {                                                                    \
        a = _mm512_add_epi32(a, b);                                         \
        d = ROT16(_mm512_xor_si512(d, a));                                  \
        c = _mm512_add_epi32(c, d);                                         \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);                   \
        a = _mm512_add_epi32(a, b);                                         \
        d = ROT8(_mm512_xor_si512(d, a));                                   \
        c = _mm512_add_epi32(c, d);                                         \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);                    \
    } while (0)

/* Four 128-bit lanes of A..D hold rows 0..3 of blocks 0..3 (lane k = block k);
 * returns whole blocks: Bk = A.k B.k C.k D.k, i.e. a 4x4 transpose of lanes. */
#define LANES_TO_BLOCKS(A, B, C, D, B0, B1, B2, B3)                         \
    do {                                                                    \
        __m512i u0_ = _mm512_shuffle_i32x4(A, B, 0x44); /* A0 A1 B0 B1 */   \
        __m512i u1_ = _mm512_shuffle_i32x4(A, B, 0xee); /* A2 A3 B2 B3 */   \
        __m512i u2_ = _mm512_shuffle_i32x4(C, D, 0x44); /* C0 C1 D0 D1 */   \
        __m512i u3_ = _mm512_shuffle_i32x4(C, D, 0xee); /* C2 C3 D2 D3 */   \
        B0 = _mm512_shuffle_i32x4(u0_, u2_, 0x88);      /* A0 B0 C0 D0 */   \
        B1 = _mm512_shuffle_i32x4(u0_, u2_, 0xdd);      /* A1 B1 C1 D1 */   \
        B2 = _mm512_shuffle_i32x4(u1_, u3_, 0x88);                          \
        B3 = _mm512_shuffle_i32x4(u1_, u3_, 0xdd);                          \
    } while (0)

/* 4x4 transpose of 32-bit words inside every 128-bit lane. Its first step pairs the
 * words of a and b (c and d) by 64-bit shifts merged with vpternlogq (bitwise lo_ ? x :
 * y), not by vpunpck{l,h}dq: after the rounds, a group's output is 64 shuffles that on
 * Intel issue only on port 5 (the unpacks, vshufi32x4) while port 0 has little to do;
 * this moves 16 of them to a shift on port 0 and a ternlog on either port. Measured
 * natively on the Intel AVX-512 host (interleaved against the parent, 61-81 rounds):
 * 1 KiB 0.962-0.970x, 640 B 0.98x, 2 KiB to 64 KiB unchanged (0.99-1.00x). */
#define TRANSPOSE_WORDS(a, b, c, d)                                         \
    do {                                                                    \
        const __m512i lo_ = _mm512_set1_epi64(0xffffffff);                  \
        /* per 128-bit lane: a0 b0 a2 b2, a1 b1 a3 b3, c0 d0 c2 d2, c1 d1 c3 d3 */ \
        __m512i t0_ = _mm512_ternarylogic_epi64(lo_, a, _mm512_slli_epi64(b, 32), 0xca); \
        __m512i t1_ = _mm512_ternarylogic_epi64(lo_, _mm512_srli_epi64(a, 32), b, 0xca); \
        __m512i t2_ = _mm512_ternarylogic_epi64(lo_, c, _mm512_slli_epi64(d, 32), 0xca); \
        __m512i t3_ = _mm512_ternarylogic_epi64(lo_, _mm512_srli_epi64(c, 32), d, 0xca); \
        a = _mm512_unpacklo_epi64(t0_, t2_);                                \
        b = _mm512_unpacklo_epi64(t1_, t3_);                                \
        c = _mm512_unpackhi_epi64(t0_, t2_);                                \
        d = _mm512_unpackhi_epi64(t1_, t3_);                                \
    } while (0)

static inline void xor_full(uint8_t *out, const uint8_t *in, __m512i ks)
{
    _mm512_storeu_si512((void *)out, _mm512_xor_si512(_mm512_loadu_si512((const void *)in), ks));
}

/* XOR up to one block; bytes past `avail` are neither read nor written (masked
 * accesses do not fault on masked-out bytes, so ASan-exact buffers are fine). */
static inline void xor_upto(uint8_t *out, const uint8_t *in, __m512i ks, size_t avail)
{
    if (avail >= 64) {
        xor_full(out, in, ks);
    } else if (avail > 0) {
        __mmask64 m = ((uint64_t)1 << avail) - 1;
        __m512i x = _mm512_maskz_loadu_epi8(m, (const void *)in);
        _mm512_mask_storeu_epi8((void *)out, m, _mm512_xor_si512(x, ks));
    }
}

/* XOR block bytes [off, off + 64) of a group, clipped to the group's len. */
static inline void xor_at(uint8_t *out, const uint8_t *in, __m512i ks, size_t len, size_t off)
{
    if (len > off)
        xor_upto(out + off, in + off, ks, len - off);
}

/* x0..x15 hold word i of 16 blocks (block k in lane k) after the feed-forward: out =
 * in ^ those blocks, len >= 1024 bytes written whole or the first len < 1024. */
#define GROUP_OUT(out, in, len, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) \
    do {                                                                    \
        __m512i b0, b1, b2, b3;                                             \
        /* Lane k of x[4g + j] then holds words 4g..4g+3 of block 4k + j. */ \
        TRANSPOSE_WORDS(x0, x1, x2, x3);                                    \
        TRANSPOSE_WORDS(x4, x5, x6, x7);                                    \
        TRANSPOSE_WORDS(x8, x9, x10, x11);                                  \
        TRANSPOSE_WORDS(x12, x13, x14, x15);                                \
        if (AC_LIKELY((len) >= 1024)) {                                     \
            OUT4(out, in, 0, x0, x4, x8, x12);                              \
            OUT4(out, in, 1, x1, x5, x9, x13);                              \
            OUT4(out, in, 2, x2, x6, x10, x14);                             \
            OUT4(out, in, 3, x3, x7, x11, x15);                             \
        } else {                                                            \
            OUTP(out, in, len, 0, x0, x4, x8, x12);                         \
            OUTP(out, in, len, 1, x1, x5, x9, x13);                         \
            OUTP(out, in, len, 2, x2, x6, x10, x14);                        \
            OUTP(out, in, len, 3, x3, x7, x11, x15);                        \
        }                                                                   \
    } while (0)
#define OUT4(out, in, j, A, B, C, D)                                        \
    LANES_TO_BLOCKS(A, B, C, D, b0, b1, b2, b3);                            \
    xor_full(out + 64 * (0 + j), in + 64 * (0 + j), b0);                    \
    xor_full(out + 64 * (4 + j), in + 64 * (4 + j), b1);                    \
    xor_full(out + 64 * (8 + j), in + 64 * (8 + j), b2);                    \
    xor_full(out + 64 * (12 + j), in + 64 * (12 + j), b3)
#define OUTP(out, in, len, j, A, B, C, D)                                   \
    LANES_TO_BLOCKS(A, B, C, D, b0, b1, b2, b3);                            \
    xor_at(out, in, b0, len, 64 * (0 + j));                                 \
    xor_at(out, in, b1, len, 64 * (4 + j));                                 \
    xor_at(out, in, b2, len, 64 * (8 + j));                                 \
    xor_at(out, in, b3, len, 64 * (12 + j))

/* A key or nonce word broadcast to every lane straight from the caller's array: gcc makes
 * it vpbroadcastd zmm, m32 or an embedded {1to16} operand of the add, which take a load
 * port and no ALU port. The former volatile read became mov + vpbroadcastd zmm, r32, a
 * port-5 uop per word, 24 per group. Measured natively on the Intel AVX-512 host after
 * the shift-and-ternlog transpose (interleaved, 81 rounds): 1 KiB 0.979-0.980x, 1536 B
 * 0.965x, AEAD seal 1 KiB 0.985x. (Before that transpose it was 1.014x at 1 KiB: the
 * output phase was then port-5 bound anyway.) */
static inline __m512i bcast(const uint32_t *p)
{
    return _mm512_set1_epi32((int)*p);
}

/* Between the rounds and the feed-forward: as far as gcc knows the key and nonce may have
 * changed, so it reads them again (as memory operands) instead of keeping twelve
 * broadcast input words live across the rounds, which with the sixteen working words
 * would be every zmm register and spill them to stack slots that nothing wipes (the
 * group functions have no stack accesses; checked with objdump). No instruction. */
static inline void reread_inputs(void)
{
    __asm__ __volatile__("" : : : "memory");
}

/* The end of a single group (group16, the AEAD's group_otk): the input words added back
 * (RFC 8439 2.3; key and nonce broadcast from memory, re-read after the barrier) and the
 * 16 blocks XORed out. Uses the caller's x0..x15, key, nonce, out, in and len. */
#define GROUP_FINISH(counters)                                              \
    do {                                                                    \
        reread_inputs();                                                    \
        x0 = _mm512_add_epi32(x0, _mm512_set1_epi32(C0));                   \
        x1 = _mm512_add_epi32(x1, _mm512_set1_epi32(C1));                   \
        x2 = _mm512_add_epi32(x2, _mm512_set1_epi32(C2));                   \
        x3 = _mm512_add_epi32(x3, _mm512_set1_epi32(C3));                   \
        x4 = _mm512_add_epi32(x4, bcast(&key[0]));                          \
        x5 = _mm512_add_epi32(x5, bcast(&key[1]));                          \
        x6 = _mm512_add_epi32(x6, bcast(&key[2]));                          \
        x7 = _mm512_add_epi32(x7, bcast(&key[3]));                          \
        x8 = _mm512_add_epi32(x8, bcast(&key[4]));                          \
        x9 = _mm512_add_epi32(x9, bcast(&key[5]));                          \
        x10 = _mm512_add_epi32(x10, bcast(&key[6]));                        \
        x11 = _mm512_add_epi32(x11, bcast(&key[7]));                        \
        x12 = _mm512_add_epi32(x12, (counters));                            \
        x13 = _mm512_add_epi32(x13, bcast(&nonce[0]));                      \
        x14 = _mm512_add_epi32(x14, bcast(&nonce[1]));                      \
        x15 = _mm512_add_epi32(x15, bcast(&nonce[2]));                      \
        GROUP_OUT(out, in, len, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, \
                  x14, x15);                                                \
    } while (0)

static inline __m512i lane_counters(uint32_t counter)
{
    return _mm512_add_epi32(_mm512_set1_epi32((int)counter),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* The first column round's quarter rounds on columns 1..3 see the same words in every
 * lane (constants, key, nonce: only column 0 holds the counter), so they are done once in
 * scalar registers (integer ports the vector code leaves idle) and their twelve words
 * broadcast from memory (load ports): 36 vector operations fewer per group, out of ~1070.
 * Measured natively on the Intel AVX-512 host (interleaved against the previous commit,
 * 61-81 rounds): 1 KiB 0.931-0.946x, 640 B 0.914-0.924x, 1536 B 0.99x; in the pair loop
 * (u computed once per call, read every iteration) 2 KiB 0.993x, 4 KiB 0.989x, 64 KiB
 * 0.986-0.989x (keeping twelve broadcast vectors in a stack array instead was 1.3-2.1%
 * slower at 2 KiB). In the AEAD's group with the one-time key's block it changed nothing
 * (0.999-1.001x: that group's rows fill the same slots) and is not used there. u holds
 * key-derived words: the caller wipes it. */
static inline void first_columns(uint32_t u[12], const uint32_t key[8], const uint32_t nonce[3])
{
    static const uint32_t sigma[4] = {C0, C1, C2, C3};

    /* One column at a time, each stored before the next starts: four live words, so that
     * none of them is spilled to a stack slot outside u (which the caller wipes). */
    for (int j = 0; j < 3; j++) {
        uint32_t a = sigma[1 + j], b = key[1 + j], c = key[5 + j], d = nonce[j];

        AC_CHACHA20_QR(a, b, c, d);
        u[j] = a, u[3 + j] = b, u[6 + j] = c, u[9 + j] = d;
        /* Through memory: a broadcast from a general register would take port 5. */
        __asm__ __volatile__("" : "+m"(*(uint32_t(*)[12])u));
    }
}

/* One 16-block group (1 <= len <= 1024 bytes; blocks past len are computed and
 * dropped): the 1 KiB message and the last group of a long one. The input state
 * is never copied: every word comes from its constant or the caller's key and
 * nonce arrays; the only stack state is first_columns' twelve words, wiped.
 * Out of line: inlined, first_columns made gcc keep the caller's counter in a stack
 * slot on every path, and the row passes (1..512 bytes) read it back through store
 * forwarding: 64..512 bytes were up to 1.5% slower. Measured against the inlined form
 * (interleaved, 101 rounds): 64..640 bytes 0.992-0.998x, 1 KiB 0.995x. */
static __attribute__((noinline)) void group16(uint8_t *out, const uint8_t *in, size_t len,
                                              const uint32_t key[8], const uint32_t nonce[3],
                                              uint32_t counter)
{
    uint32_t u[12];

    first_columns(u, key, nonce);
    __m512i x0 = _mm512_set1_epi32(C0), x4 = bcast(&key[0]), x8 = bcast(&key[4]);
    __m512i x12 = lane_counters(counter);
    __m512i x1 = bcast(&u[0]), x2 = bcast(&u[1]), x3 = bcast(&u[2]);
    __m512i x5 = bcast(&u[3]), x6 = bcast(&u[4]), x7 = bcast(&u[5]);
    __m512i x9 = bcast(&u[6]), x10 = bcast(&u[7]), x11 = bcast(&u[8]);
    __m512i x13 = bcast(&u[9]), x14 = bcast(&u[10]), x15 = bcast(&u[11]);

    QR(x0, x4, x8, x12);
    QR(x0, x5, x10, x15);
    QR(x1, x6, x11, x12);
    QR(x2, x7, x8, x13);
    QR(x3, x4, x9, x14);
#pragma GCC unroll 9
    for (int i = 1; i < 10; i++) {
        QR(x0, x4, x8, x12);
        QR(x1, x5, x9, x13);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        QR(x0, x5, x10, x15);
        QR(x1, x6, x11, x12);
        QR(x2, x7, x8, x13);
        QR(x3, x4, x9, x14);
    }

    ac_wipe(u, sizeof u);
    GROUP_FINISH(lane_counters(counter));
}

/* The input state of the pair loop lives in a stack array written and read through
 * volatile accesses: two groups' working words take all 32 zmm registers, so the
 * input words are memory operands; this way they are in one place, read once per
 * use, and wiped. */
static inline void put(__m512i *slot, __m512i v)
{
    *(volatile __m512i *)slot = v;
}

static inline __m512i get(const __m512i *slot)
{
    return *(const volatile __m512i *)slot;
}

/* Quarter rounds of two groups side by side, step by step: eight independent
 * add-xor-rotate chains per half round instead of four, so that the one-cycle
 * dependencies of one group fill the other's issue slots (four 512-bit vector
 * pipes on Zen 4/5 need four ready operations every cycle). */
#define QR2(a, b, c, d, e, f, g, h)                                         \
    do {                                                                    \
        a = _mm512_add_epi32(a, b);                                         \
        e = _mm512_add_epi32(e, f);                                         \
        d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16);                   \
        h = _mm512_rol_epi32(_mm512_xor_si512(h, e), 16);                   \
        c = _mm512_add_epi32(c, d);                                         \
        g = _mm512_add_epi32(g, h);                                         \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);                   \
        f = _mm512_rol_epi32(_mm512_xor_si512(f, g), 12);                   \
        a = _mm512_add_epi32(a, b);                                         \
        e = _mm512_add_epi32(e, f);                                         \
        d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);                    \
        h = _mm512_rol_epi32(_mm512_xor_si512(h, e), 8);                    \
        c = _mm512_add_epi32(c, d);                                         \
        g = _mm512_add_epi32(g, h);                                         \
        b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);                    \
        f = _mm512_rol_epi32(_mm512_xor_si512(f, g), 7);                    \
    } while (0)

/* Two independent 16-block groups (2048 bytes) per iteration over len, a multiple
 * of 2048. */
static void pairs16(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t nonce[3], uint32_t counter)
{
    __m512i st[16], park[16];
    uint32_t u[12];

    /* Columns 1..3 after the first column round: the same for both groups and every
     * iteration (first_columns). */
    first_columns(u, key, nonce);
    put(&st[0], _mm512_set1_epi32(C0));
    put(&st[1], _mm512_set1_epi32(C1));
    put(&st[2], _mm512_set1_epi32(C2));
    put(&st[3], _mm512_set1_epi32(C3));
    for (int i = 0; i < 8; i++)
        put(&st[4 + i], _mm512_set1_epi32((int)key[i]));
    put(&st[12], lane_counters(counter));
    for (int i = 0; i < 3; i++)
        put(&st[13 + i], _mm512_set1_epi32((int)nonce[i]));
    const __m512i sixteen = _mm512_set1_epi32(16);

    for (; len > 0; len -= 2048, out += 2048, in += 2048) {
        __m512i x0 = get(&st[0]), x4 = get(&st[4]), x8 = get(&st[8]), x12 = get(&st[12]);
        /* Read u again every iteration (memory operands, not registers held across it). */
        __asm__ __volatile__("" : "+m"(*(uint32_t(*)[12])u));
        __m512i x1 = bcast(&u[0]), x2 = bcast(&u[1]), x3 = bcast(&u[2]);
        __m512i x5 = bcast(&u[3]), x6 = bcast(&u[4]), x7 = bcast(&u[5]);
        __m512i x9 = bcast(&u[6]), x10 = bcast(&u[7]), x11 = bcast(&u[8]);
        __m512i x13 = bcast(&u[9]), x14 = bcast(&u[10]), x15 = bcast(&u[11]);
        __m512i y0 = x0, y1 = x1, y2 = x2, y3 = x3, y4 = x4, y5 = x5, y6 = x6, y7 = x7;
        __m512i y8 = x8, y9 = x9, y10 = x10, y11 = x11;
        __m512i y12 = _mm512_add_epi32(x12, sixteen), y13 = x13, y14 = x14, y15 = x15;

        QR2(x0, x4, x8, x12, y0, y4, y8, y12);
        QR2(x0, x5, x10, x15, y0, y5, y10, y15);
        QR2(x1, x6, x11, x12, y1, y6, y11, y12);
        QR2(x2, x7, x8, x13, y2, y7, y8, y13);
        QR2(x3, x4, x9, x14, y3, y4, y9, y14);
#pragma GCC unroll 9
        for (int i = 1; i < 10; i++) {
            QR2(x0, x4, x8, x12, y0, y4, y8, y12);
            QR2(x1, x5, x9, x13, y1, y5, y9, y13);
            QR2(x2, x6, x10, x14, y2, y6, y10, y14);
            QR2(x3, x7, x11, x15, y3, y7, y11, y15);
            QR2(x0, x5, x10, x15, y0, y5, y10, y15);
            QR2(x1, x6, x11, x12, y1, y6, y11, y12);
            QR2(x2, x7, x8, x13, y2, y7, y8, y13);
            QR2(x3, x4, x9, x14, y3, y4, y9, y14);
        }

        /* The second group waits in the stack while the first one's transpose needs
         * registers. */
        put(&park[0], _mm512_add_epi32(y0, get(&st[0])));
        put(&park[1], _mm512_add_epi32(y1, get(&st[1])));
        put(&park[2], _mm512_add_epi32(y2, get(&st[2])));
        put(&park[3], _mm512_add_epi32(y3, get(&st[3])));
        put(&park[4], _mm512_add_epi32(y4, get(&st[4])));
        put(&park[5], _mm512_add_epi32(y5, get(&st[5])));
        put(&park[6], _mm512_add_epi32(y6, get(&st[6])));
        put(&park[7], _mm512_add_epi32(y7, get(&st[7])));
        put(&park[8], _mm512_add_epi32(y8, get(&st[8])));
        put(&park[9], _mm512_add_epi32(y9, get(&st[9])));
        put(&park[10], _mm512_add_epi32(y10, get(&st[10])));
        put(&park[11], _mm512_add_epi32(y11, get(&st[11])));
        put(&park[12], _mm512_add_epi32(y12, _mm512_add_epi32(get(&st[12]), sixteen)));
        put(&park[13], _mm512_add_epi32(y13, get(&st[13])));
        put(&park[14], _mm512_add_epi32(y14, get(&st[14])));
        put(&park[15], _mm512_add_epi32(y15, get(&st[15])));
        x0 = _mm512_add_epi32(x0, get(&st[0]));
        x1 = _mm512_add_epi32(x1, get(&st[1]));
        x2 = _mm512_add_epi32(x2, get(&st[2]));
        x3 = _mm512_add_epi32(x3, get(&st[3]));
        x4 = _mm512_add_epi32(x4, get(&st[4]));
        x5 = _mm512_add_epi32(x5, get(&st[5]));
        x6 = _mm512_add_epi32(x6, get(&st[6]));
        x7 = _mm512_add_epi32(x7, get(&st[7]));
        x8 = _mm512_add_epi32(x8, get(&st[8]));
        x9 = _mm512_add_epi32(x9, get(&st[9]));
        x10 = _mm512_add_epi32(x10, get(&st[10]));
        x11 = _mm512_add_epi32(x11, get(&st[11]));
        x12 = _mm512_add_epi32(x12, get(&st[12]));
        x13 = _mm512_add_epi32(x13, get(&st[13]));
        x14 = _mm512_add_epi32(x14, get(&st[14]));
        x15 = _mm512_add_epi32(x15, get(&st[15]));
        put(&st[12], _mm512_add_epi32(get(&st[12]), _mm512_set1_epi32(32)));
        GROUP_OUT(out, in, 1024, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14,
                  x15);
        x0 = get(&park[0]), x1 = get(&park[1]), x2 = get(&park[2]), x3 = get(&park[3]);
        x4 = get(&park[4]), x5 = get(&park[5]), x6 = get(&park[6]), x7 = get(&park[7]);
        x8 = get(&park[8]), x9 = get(&park[9]), x10 = get(&park[10]), x11 = get(&park[11]);
        x12 = get(&park[12]), x13 = get(&park[13]), x14 = get(&park[14]), x15 = get(&park[15]);
        GROUP_OUT(out + 1024, in + 1024, 1024, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11,
                  x12, x13, x14, x15);
    }
    for (int i = 0; i < 16; i++) {
        put(&st[i], _mm512_setzero_si512());
        put(&park[i], _mm512_setzero_si512());
    }
    ac_wipe(u, sizeof u);
}

/* Rows of four blocks side by side, one block per 128-bit lane: r0 = constants,
 * r1/r2 = key, r3 = counter + lane, nonce. For the diagonal round rows 0, 2 and
 * 3 rotate within each lane so that the column quarter round serves the
 * diagonals; row 1 stays put because it is the last one a quarter round
 * produces, so the shuffles stay off the dependency chain. */
#define DIAG(r0, r2, r3)                                                    \
    do {                                                                    \
        r0 = _mm512_shuffle_epi32(r0, (_MM_PERM_ENUM)0x93);                 \
        r2 = _mm512_shuffle_epi32(r2, (_MM_PERM_ENUM)0x39);                 \
        r3 = _mm512_shuffle_epi32(r3, (_MM_PERM_ENUM)0x4e);                 \
    } while (0)
#define UNDIAG(r0, r2, r3)                                                  \
    do {                                                                    \
        r0 = _mm512_shuffle_epi32(r0, (_MM_PERM_ENUM)0x39);                 \
        r2 = _mm512_shuffle_epi32(r2, (_MM_PERM_ENUM)0x93);                 \
        r3 = _mm512_shuffle_epi32(r3, (_MM_PERM_ENUM)0x4e);                 \
    } while (0)

#define ROWS_INIT(key, nonce, counter)                                      \
    const __m512i s0 = _mm512_broadcast_i32x4(_mm_setr_epi32(C0, C1, C2, C3)); \
    const __m512i s1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)(key))); \
    const __m512i s2 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)((key) + 4))); \
    const __m512i s3 = _mm512_add_epi32(                                    \
        _mm512_broadcast_i32x4(_mm_setr_epi32((int)(counter), (int)(nonce)[0], (int)(nonce)[1], (int)(nonce)[2])), \
        _mm512_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0))

/* 1..4 blocks (1..256 bytes, the last one possibly partial) in one pass. */
static void tail4(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROWS_INIT(key, nonce, counter);
    __m512i a0 = s0, a1 = s1, a2 = s2, a3 = s3;

    for (int i = 0; i < 10; i++) {
        QR(a0, a1, a2, a3);
        DIAG(a0, a2, a3);
        QR(a0, a1, a2, a3);
        UNDIAG(a0, a2, a3);
    }
    a0 = _mm512_add_epi32(a0, s0);
    a1 = _mm512_add_epi32(a1, s1);
    a2 = _mm512_add_epi32(a2, s2);
    a3 = _mm512_add_epi32(a3, s3);

    if (len <= 64) {
        /* One block: lane 0 of each row, no cross-lane transpose needed. */
        __m512i b = _mm512_shuffle_i32x4(_mm512_shuffle_i32x4(a0, a1, 0x00),  /* A0 A0 B0 B0 */
                                         _mm512_shuffle_i32x4(a2, a3, 0x00),  /* C0 C0 D0 D0 */
                                         0x88);                               /* A0 B0 C0 D0 */
        xor_upto(out, in, b, len);
        return;
    }
    __m512i b0, b1, b2, b3;
    LANES_TO_BLOCKS(a0, a1, a2, a3, b0, b1, b2, b3);
    xor_full(out, in, b0);
    xor_upto(out + 64, in + 64, b1, len - 64);
    if (len > 128)
        xor_upto(out + 128, in + 128, b2, len - 128);
    if (len > 192)
        xor_upto(out + 192, in + 192, b3, len - 192);
}

/* 5..8 blocks (257..512 bytes) in one pass: two independent sets of rows, so the
 * latency of one quarter-round chain hides the other's. */
static void tail8(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                  const uint32_t nonce[3], uint32_t counter)
{
    ROWS_INIT(key, nonce, counter);
    const __m512i four = _mm512_setr_epi32(4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0);
    __m512i a0 = s0, a1 = s1, a2 = s2, a3 = s3;
    __m512i c0 = s0, c1 = s1, c2 = s2, c3 = _mm512_add_epi32(s3, four);

    for (int i = 0; i < 10; i++) {
        QR(a0, a1, a2, a3);
        QR(c0, c1, c2, c3);
        DIAG(a0, a2, a3);
        DIAG(c0, c2, c3);
        QR(a0, a1, a2, a3);
        QR(c0, c1, c2, c3);
        UNDIAG(a0, a2, a3);
        UNDIAG(c0, c2, c3);
    }
    a0 = _mm512_add_epi32(a0, s0);
    a1 = _mm512_add_epi32(a1, s1);
    a2 = _mm512_add_epi32(a2, s2);
    a3 = _mm512_add_epi32(a3, s3);
    c0 = _mm512_add_epi32(c0, s0);
    c1 = _mm512_add_epi32(c1, s1);
    c2 = _mm512_add_epi32(c2, s2);
    c3 = _mm512_add_epi32(c3, _mm512_add_epi32(s3, four));

    __m512i b0, b1, b2, b3;
    LANES_TO_BLOCKS(a0, a1, a2, a3, b0, b1, b2, b3);
    xor_full(out, in, b0);
    xor_full(out + 64, in + 64, b1);
    xor_full(out + 128, in + 128, b2);
    xor_full(out + 192, in + 192, b3);
    LANES_TO_BLOCKS(c0, c1, c2, c3, b0, b1, b2, b3);
    xor_upto(out + 256, in + 256, b0, len - 256);
    if (len > 320)
        xor_upto(out + 320, in + 320, b1, len - 320);
    if (len > 384)
        xor_upto(out + 384, in + 384, b2, len - 384);
    if (len > 448)
        xor_upto(out + 448, in + 448, b3, len - 448);
}

/* The AEAD's first (or only) group with its one-time key: blocks 1..16 of the message
 * (1 <= len <= 1024 bytes) and, in the same rounds, block 0 as one set of rows (lane 0;
 * lanes 1..3 are computed and dropped), whose first 32 bytes go to otk (RFC 8439 2.6).
 * Alone, that one block is a pass of its own, ten dependent double rounds (~300 cycles
 * of latency, ~60 ns a call here) that the sixteen-lane group after it cannot overlap
 * once the reorder buffer is full; interleaved, its ~330 operations take issue slots the
 * group leaves free. aead/avx512.c has the measurements. */
void ac_chacha20_avx512_group_otk(uint8_t otk[32], uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t nonce[3])
{
    __m512i x0 = _mm512_set1_epi32(C0), x1 = _mm512_set1_epi32(C1);
    __m512i x2 = _mm512_set1_epi32(C2), x3 = _mm512_set1_epi32(C3);
    __m512i x4 = bcast(&key[0]), x5 = bcast(&key[1]), x6 = bcast(&key[2]), x7 = bcast(&key[3]);
    __m512i x8 = bcast(&key[4]), x9 = bcast(&key[5]), x10 = bcast(&key[6]), x11 = bcast(&key[7]);
    __m512i x12 = lane_counters(1);
    __m512i x13 = bcast(&nonce[0]), x14 = bcast(&nonce[1]), x15 = bcast(&nonce[2]);
    ROWS_INIT(key, nonce, 0);
    __m512i a0 = s0, a1 = s1, a2 = s2, a3 = s3;

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) {
        QR(x0, x4, x8, x12);
        QR(a0, a1, a2, a3);
        QR(x1, x5, x9, x13);
        DIAG(a0, a2, a3);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        QR(x0, x5, x10, x15);
        QR(a0, a1, a2, a3);
        QR(x1, x6, x11, x12);
        UNDIAG(a0, a2, a3);
        QR(x2, x7, x8, x13);
        QR(x3, x4, x9, x14);
    }

    /* Block 0, words 0..7 (rows 0 and 1 of lane 0). */
    a0 = _mm512_add_epi32(a0, s0);
    a1 = _mm512_add_epi32(a1, s1);
    _mm512_mask_storeu_epi8((void *)otk, (__mmask64)0xffff, a0);
    _mm512_mask_storeu_epi8((void *)(otk + 16), (__mmask64)0xffff, a1);

    GROUP_FINISH(lane_counters(1));
}

static void chacha20_xor_stream_avx512(uint8_t *out, const uint8_t *in, size_t len,
                                       const uint32_t key[8], const uint32_t nonce[3],
                                       uint32_t counter)
{
    /* Lanes past the end are computed and dropped; each block used has its own
     * counter, and no block is generated twice (counters wrap only when no block
     * remains: the caller's guarantee). 2 KiB steps of two groups, then up to two
     * single groups (a last one of 9..15 blocks is one 16-block pass rather than two
     * passes of rows, as the AVX2 kernel measured at 5..7 of 8 blocks), then rows. */
    size_t pairs = len & ~(size_t)2047;

    if (pairs > 0) {
        pairs16(out, in, pairs, key, nonce, counter);
        counter += (uint32_t)(pairs / 64);
        out += pairs;
        in += pairs;
        len -= pairs;
    }
    while (len > 512) {
        size_t n = len < 1024 ? len : 1024;
        group16(out, in, n, key, nonce, counter);
        counter += 16;
        out += n;
        in += n;
        len -= n;
    }
    /* 0..512 bytes left. */
    if (len > 256)
        tail8(out, in, len, key, nonce, counter);
    else if (len > 0)
        tail4(out, in, len, key, nonce, counter);
}

const chacha20_kernel archcrypt_chacha20_avx512 = {
    .xor_stream = chacha20_xor_stream_avx512,
};
