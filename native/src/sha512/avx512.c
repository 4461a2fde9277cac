/* SHA-512 compression, AVX-512 + BMI2: two blocks' message schedules interleaved in zmm (vprorq, vpternlogq), computed during the first block's scalar rorx rounds; the second block's rounds then read W+K from the stack alone (FIPS 180-4 section 6.4.2). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__)
#error "sha512/avx512.c needs -mavx512f -mavx512vl -mavx512bw -mavx512dq (ISA_FLAGS_avx512 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha512/sha512.h"
#include "sha512/x86_rounds.h"

/* Layout: a schedule vector holds words 4g..4g+3 of two blocks A and B, interleaved
 * (qword 2i = A's W[4g+i], qword 2i+1 = B's). Each 128-bit lane is then one word of
 * both blocks, so "the same words one position later" is a one-qword-pair shift of
 * the whole vector (valignq by 2), with no in-lane/cross-lane split as in the AVX2
 * row, and one schedule step serves both blocks. With sigma in 4 instructions instead
 * of 7 and 8, the vector work per block is about a third of the AVX2 row's (gcc 12:
 * 208 against 592 vector instructions a block). The rounds are the same scalar rounds
 * (22 ALU instructions each, the bound on 4-ALU cores), reading W+K at stride 2; what
 * this row saves is issue bandwidth around them. */

/* sigma0 and sigma1 (section 4.1.3) of each qword: 0x96 is the three-way xor. */
static inline __m512i sigma0(__m512i x)
{
    return _mm512_ternarylogic_epi64(_mm512_ror_epi64(x, 1), _mm512_ror_epi64(x, 8),
                                     _mm512_srli_epi64(x, 7), 0x96);
}

static inline __m512i sigma1(__m512i x)
{
    return _mm512_ternarylogic_epi64(_mm512_ror_epi64(x, 19), _mm512_ror_epi64(x, 61),
                                     _mm512_srli_epi64(x, 6), 0x96);
}

/* Step 1 for group g: x0 = W[t-16..t-13] becomes W[t..t+3] (t = 4g) from
 * x1 = W[t-12..], x2 = W[t-8..], x3 = W[t-4..t-1], all for both blocks. sigma1 needs
 * W[t-2], W[t-1] (lanes 2, 3 of x3) for words t, t+1 (lanes 0, 1), and the new W[t],
 * W[t+1] for words t+2, t+3: two halves in sequence, each a lane shuffle and a masked
 * add. Split in three so that the callers can spread it between rounds. */
#define SCHED_A(x0, x1, x2, x3, t)                                                \
    do {                                                                          \
        (t) = _mm512_add_epi64((x0), _mm512_alignr_epi64((x3), (x2), 2));         \
        (t) = _mm512_add_epi64((t), sigma0(_mm512_alignr_epi64((x1), (x0), 2)));  \
    } while (0)
#define SCHED_B(x3, t)                                                            \
    ((t) = _mm512_mask_add_epi64((t), 0x0f, (t),                                  \
                                 sigma1(_mm512_shuffle_i64x2((x3), (x3), 0xee))))
#define SCHED_C(x0, t)                                                            \
    ((x0) = _mm512_mask_add_epi64((t), 0xf0, (t),                                 \
                                  sigma1(_mm512_shuffle_i64x2((t), (t), 0x44))))

/* W+K of group g (rounds 4g..4g+3 of both blocks) into wk[8g..8g+7]. K[4g..4g+3] each
 * twice: kp = K + 8 * (g >> 1), a 64-byte load for an even and an odd group, and the
 * index (klo, khi) picks the half. */
#define STORE_WK(dst, x, kp, kidx)                                                \
    _mm512_store_si512((dst), _mm512_add_epi64((x), _mm512_permutexvar_epi64(     \
                                                        (kidx), _mm512_load_si512(kp))))

/* Four rounds of block A from wk[0], wk[2], wk[4], wk[6], and between them the
 * schedule step of the group four ahead for both blocks, stored at wk + 32. */
#define RND4S_AT(a, b, c, d, e, f, g, h, rd, st, x0, x1, x2, x3, kp, kidx)     \
    do {                                                                          \
        __m512i t_;                                                               \
        SHA512_RND(a, b, c, d, e, f, g, h, (rd)[0], bc, ab);                      \
        SCHED_A(x0, x1, x2, x3, t_);                                              \
        SHA512_RND(h, a, b, c, d, e, f, g, (rd)[2], ab, bc);                      \
        SCHED_B(x3, t_);                                                          \
        SHA512_RND(g, h, a, b, c, d, e, f, (rd)[4], bc, ab);                      \
        SCHED_C(x0, t_);                                                          \
        SHA512_RND(f, g, h, a, b, c, d, e, (rd)[6], ab, bc);                      \
        STORE_WK((st), x0, kp, kidx);                                             \
    } while (0)
#define RND4S(a, b, c, d, e, f, g, h, wk, x0, x1, x2, x3, kp, kidx)              \
    RND4S_AT(a, b, c, d, e, f, g, h, wk, (wk) + 32, x0, x1, x2, x3, kp, kidx)

static void sha512_compress_avx512(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    /* wk[2t] = W[t]+K[t] of block A, wk[2t+1] of block B. */
    uint64_t wk[160] __attribute__((aligned(64)));
    /* Big-endian qwords to little-endian (vpshufb index per 128-bit lane). */
    const __m512i bswap = _mm512_setr_epi64(0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f,
                                            0x0001020304050607, 0x08090a0b0c0d0e0f);
    /* Interleave words 0-3 (lo) or 4-7 (hi) of A (indices 0-7) and B (8-15). */
    const __m512i ilo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i ihi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    const __m512i klo = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
    const __m512i khi = _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7);
    uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
    /* The call's first four rounds read W+K from scalar loads (wk0, at the same stride
     * as wk): the vector path to wk[0] is a 64-byte load, vpshufb, vpermt2q, vpaddq and a
     * store, and its load cannot be forwarded from the narrower stores that have just
     * written a one-shot's padded tail; an 8-byte load can. Later pairs' rounds read wk,
     * whose vector start overlaps the previous pair's last rounds. bench-ab against
     * reading wk from round 0 (101 interleaved rounds, twice): 16-111 B -3%, 129 and 256 B
     * -1..-2%, 112 B and 1 KiB and up level, 128-200 B (a copied block and a one-block
     * tail) 0..+1.8%; eight rounds from wk0 were 1.5% slower than four, sixteen 3.5%. */
    uint64_t wk0[8] __attribute__((aligned(64)));
    const uint64_t *rd = wk0;
    if (nblocks == 0)
        return;
    for (int t = 0; t < 4; t++)
        ((volatile uint64_t *)wk0)[2 * t] = load64_be(in + 8 * t) + archcrypt_sha512_K[t];

    while (nblocks) {
        /* An odd last block is its own partner: the schedule of B is computed (and
         * wiped) but its rounds are skipped, and nothing past the input is read. */
        const uint8_t *inb = nblocks > 1 ? in + 128 : in;
        __m512i a0 = _mm512_shuffle_epi8(_mm512_loadu_si512(in), bswap);
        __m512i a1 = _mm512_shuffle_epi8(_mm512_loadu_si512(in + 64), bswap);
        __m512i b0 = _mm512_shuffle_epi8(_mm512_loadu_si512(inb), bswap);
        __m512i b1 = _mm512_shuffle_epi8(_mm512_loadu_si512(inb + 64), bswap);
        __m512i x0 = _mm512_permutex2var_epi64(a0, ilo, b0);
        __m512i x1 = _mm512_permutex2var_epi64(a0, ihi, b0);
        __m512i x2 = _mm512_permutex2var_epi64(a1, ilo, b1);
        __m512i x3 = _mm512_permutex2var_epi64(a1, ihi, b1);
        uint64_t bc = b ^ c, ab, s0 = 0;

        /* Each group's W+K is stored four groups before block A's rounds read it. */
        STORE_WK(wk, x0, archcrypt_sha512_K, klo);
        STORE_WK(wk + 8, x1, archcrypt_sha512_K, khi);
        STORE_WK(wk + 16, x2, archcrypt_sha512_K + 8, klo);
        STORE_WK(wk + 24, x3, archcrypt_sha512_K + 8, khi);
        /* Pointers, not an index: the rounds hold 13 of the 14 free registers. */
        const uint64_t *kp = archcrypt_sha512_K + 16;
        RND4S_AT(a, b, c, d, e, f, g, h, rd, wk + 32, x0, x1, x2, x3, kp, klo);
        RND4S(e, f, g, h, a, b, c, d, wk + 8, x1, x2, x3, x0, kp, khi);
        RND4S(a, b, c, d, e, f, g, h, wk + 16, x2, x3, x0, x1, kp + 8, klo);
        RND4S(e, f, g, h, a, b, c, d, wk + 24, x3, x0, x1, x2, kp + 8, khi);
        rd = wk;
        kp += 16;
        for (uint64_t *w = wk + 32; w < wk + 128; w += 32, kp += 16) {
            RND4S(a, b, c, d, e, f, g, h, w, x0, x1, x2, x3, kp, klo);
            RND4S(e, f, g, h, a, b, c, d, w + 8, x1, x2, x3, x0, kp, khi);
            RND4S(a, b, c, d, e, f, g, h, w + 16, x2, x3, x0, x1, kp + 8, klo);
            RND4S(e, f, g, h, a, b, c, d, w + 24, x3, x0, x1, x2, kp + 8, khi);
        }
        for (int j = 16; j < 20; j += 2) {
            SHA512_RND4(a, b, c, d, e, f, g, h, wk + 8 * j, 2);
            SHA512_RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 8, 2);
        }
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        if (nblocks == 1)
            break;

        /* Block B: rounds only. */
        bc = b ^ c;
        s0 = 0;
        for (int j = 0; j < 20; j += 2) {
            SHA512_RND4(a, b, c, d, e, f, g, h, wk + 8 * j + 1, 2);
            SHA512_RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 9, 2);
        }
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        in += 256;
        nblocks -= 2;
    }

    /* The schedule is message material, and HMAC's first block is the key. */
    ac_wipe_zmm(wk, sizeof wk);
    ac_wipe_zmm(wk0, sizeof wk0);
}

/* ---- eight messages at once: one per 64-bit lane (archcrypt_hash_many, HMAC batches) ---- */

/* Section 4.1.3 on eight lanes: every rotate one vprorq, every three-way xor, Ch and Maj
 * one vpternlogq (0x96 = a ^ b ^ c, 0xca = a ? b : c, 0xe8 = majority). */
#define XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96)
#define BSIG0(x) XOR3(_mm512_ror_epi64((x), 28), _mm512_ror_epi64((x), 34), _mm512_ror_epi64((x), 39))
#define BSIG1(x) XOR3(_mm512_ror_epi64((x), 14), _mm512_ror_epi64((x), 18), _mm512_ror_epi64((x), 41))

/*
 * The two 8x8 transposes of a block (lane-major qwords in, word-major out) in two
 * stages, so that the next block's run in pieces between the current block's rounds
 * rather than as a chain at the top of each block (as in sha256/sha_ni_avx512.c).
 */

/* Stage A for half hf (qwords 8hf..8hf+7) of lanes 4q..4q+3: load, byte swap, unpack
 * even and odd qwords of lane pairs, then 128-bit selects: v[4o + q] (chunks 0, 2) and
 * v[4o + 2 + q] (chunks 1, 3) of the o (even/odd) words of this group. */
static inline __attribute__((always_inline)) void transpose_a(const uint8_t *const *in, size_t off, int q,
                                                               __m512i *v, __m512i bswap)
{
    __m512i r[4], t[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        r[i] = _mm512_shuffle_epi8(_mm512_loadu_si512((const void *)(in[4 * q + i] + off)), bswap);
    t[0] = _mm512_unpacklo_epi64(r[0], r[1]); /* even words of lanes 4q, 4q+1 */
    t[1] = _mm512_unpackhi_epi64(r[0], r[1]); /* odd words */
    t[2] = _mm512_unpacklo_epi64(r[2], r[3]);
    t[3] = _mm512_unpackhi_epi64(r[2], r[3]);
#pragma GCC unroll 2
    for (int o = 0; o < 2; o++) {
        _mm512_store_si512((void *)&v[4 * o + q], _mm512_shuffle_i64x2(t[o], t[2 + o], 0x88));
        _mm512_store_si512((void *)&v[4 * o + 2 + q], _mm512_shuffle_i64x2(t[o], t[2 + o], 0xdd));
    }
}

/* Stage B for parity o: words 4k + 2p + o (k, p in 0..1) of all eight lanes. */
static inline __attribute__((always_inline)) void transpose_b(int o, const __m512i *v, __m512i *w)
{
#pragma GCC unroll 2
    for (int p = 0; p < 2; p++) {
        const __m512i x = _mm512_load_si512((const void *)&v[4 * o + 2 * p]);
        const __m512i y = _mm512_load_si512((const void *)&v[4 * o + 2 * p + 1]);
        _mm512_store_si512((void *)&w[2 * p + o], _mm512_shuffle_i64x2(x, y, 0x88));
        _mm512_store_si512((void *)&w[4 + 2 * p + o], _mm512_shuffle_i64x2(x, y, 0xdd));
    }
}

/* Section 6.4.2 for eight independent messages, one per 64-bit lane: the portable round,
 * eight times the work per instruction. The state goes through a stack array once per
 * call (lane-major in h, word-major in the rounds), wiped after, as do the transposes'
 * buffers. */
static void sha512_compress_x8(uint64_t (*H)[8], const uint8_t *const *in, size_t nblocks)
{
    /* Big-endian qwords: reverse the bytes of each. */
    const __m512i bswap = _mm512_setr_epi64(
        0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL,
        0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
    _Alignas(64) uint64_t words[8][8];
    /* vbuf: stage A's output (two halves); wbuf: the next block's words, word-major. */
    __m512i vbuf[16], wbuf[16], w[16];
#define LOADW(i) _mm512_load_si512((const void *)words[i])
#define STOREW(i, v) _mm512_store_si512((void *)words[i], (v))

    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 8; i++)
            words[i][l] = H[l][i];
    for (int hf = 0; hf < 2; hf++) {
        for (int q = 0; q < 2; q++)
            transpose_a(in, 64 * (size_t)hf, q, vbuf + 8 * hf, bswap);
        for (int o = 0; o < 2; o++)
            transpose_b(o, vbuf + 8 * hf, wbuf + 8 * hf);
    }

    for (size_t blk = 0; blk < nblocks; blk++) {
        /* The last block transposes itself again rather than read past the input. */
        const size_t next = 128 * (blk + (blk + 1 < nblocks));
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            w[i] = _mm512_load_si512((const void *)&wbuf[i]);

        __m512i a = LOADW(0), b = LOADW(1), c = LOADW(2), d = LOADW(3);
        __m512i e = LOADW(4), f = LOADW(5), g = LOADW(6), h = LOADW(7);
#pragma GCC unroll 80
        for (int t = 0; t < 80; t++) {
            /* The next block's transposes: stage A in rounds 16..28, B in 36..48. At
             * 48..73 (as SHA-256 has them) 1-3% slower, at 0..18 the same or 1% slower
             * (bench-ab sha512-many8, interleaved). */
            if (t >= 16 && t < 32 && t % 4 == 0) {
                const int k = (t - 16) / 4;
                transpose_a(in, next + 64 * (size_t)(k >> 1), k & 1, vbuf + 8 * (k >> 1), bswap);
            }
            if (t >= 36 && t < 52 && t % 4 == 0) {
                const int k = (t - 36) / 4;
                transpose_b(k & 1, vbuf + 8 * (k >> 1), wbuf + 8 * (k >> 1));
            }
            if (t >= 16)
                w[t & 15] = _mm512_add_epi64(
                    _mm512_add_epi64(sigma1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    _mm512_add_epi64(sigma0(w[(t - 15) & 15]), w[t & 15]));
            __m512i t1 = _mm512_add_epi64(
                _mm512_add_epi64(_mm512_add_epi64(h, BSIG1(e)),
                                 _mm512_ternarylogic_epi64(e, f, g, 0xca)),
                _mm512_add_epi64(w[t & 15], _mm512_set1_epi64((long long)archcrypt_sha512_K[t])));
            __m512i t2 = _mm512_add_epi64(BSIG0(a), _mm512_ternarylogic_epi64(a, b, c, 0xe8));
            h = g;
            g = f;
            f = e;
            e = _mm512_add_epi64(d, t1);
            d = c;
            c = b;
            b = a;
            a = _mm512_add_epi64(t1, t2);
        }
        STOREW(0, _mm512_add_epi64(LOADW(0), a));
        STOREW(1, _mm512_add_epi64(LOADW(1), b));
        STOREW(2, _mm512_add_epi64(LOADW(2), c));
        STOREW(3, _mm512_add_epi64(LOADW(3), d));
        STOREW(4, _mm512_add_epi64(LOADW(4), e));
        STOREW(5, _mm512_add_epi64(LOADW(5), f));
        STOREW(6, _mm512_add_epi64(LOADW(6), g));
        STOREW(7, _mm512_add_epi64(LOADW(7), h));
    }

    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 8; i++)
            H[l][i] = words[i][l];
#undef LOADW
#undef STOREW

    /* The schedule and the transposes' buffers are message material (HMAC's first block
     * is the key), the state key-equivalent under HMAC. */
    ac_wipe_zmm(w, sizeof w);
    ac_wipe_zmm(vbuf, sizeof vbuf);
    ac_wipe_zmm(wbuf, sizeof wbuf);
    ac_wipe_zmm(words, sizeof words);
}

const sha512_kernel archcrypt_sha512_avx512 = {
    .compress = sha512_compress_avx512,
    .compress_lanes = sha512_compress_x8,
    .lanes = 8,
};
