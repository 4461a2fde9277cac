/* SHA-256 compression, AVX2 + BMI2: message schedule of two blocks at once (one per 128-bit lane) split between block 1's scalar rorx rounds (inline asm), W+K parked on the stack; block 2's rounds reuse the stored schedule; batches run eight messages in the eight 32-bit lanes (FIPS 180-4 section 6.2.2). */
#if !defined(__AVX2__) || !defined(__BMI2__)
#error "sha256/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha256/sha256.h"

/* Section 4.1.2; with -mbmi2 each rotate is one rorx. */
#define S0(x) (rotr32((x), 2) ^ rotr32((x), 13) ^ rotr32((x), 22))
#define S1(x) (rotr32((x), 6) ^ rotr32((x), 11) ^ rotr32((x), 25))

/* One round of section 6.2.2 step 3 with the names rotated instead of moved: it
 * writes d (the new e) and h (the new a). 22 ALU instructions, 6 of them rorx:
 *   T1 = h + W+K + Ch(e,f,g) + Sigma1(e), Ch = ((f ^ g) & e) ^ g;
 *   Maj(a,b,c) = b ^ ((a^b) & (b^c)), where b^c is the previous round's a^b: bc comes
 *   in, ab goes out, and the caller swaps the two names every round;
 *   Sigma0(a) goes out in s0 and is added to the new a at the start of the next
 *   round, which keeps it off the path from T1 to the new a (the caller adds the
 *   last one after round 63; s0 = 0 before round 0).
 * Why asm: the instruction order decides the speed on the 4-ALU cores this row is
 * for (2 of the ALUs rotate), and gcc's own order of the same C is slower (see
 * sha512/avx2.c). Volatile makes gcc's scheduler keep the vector schedule steps
 * where RND4S puts them, between rounds. 32-bit registers (%k); the lea adds the
 * full registers but writes 32 bits, which depend only on the low halves. */
#define RND(a, b, c, d, e, f, g, h, wk, bc, ab)                                   \
    do {                                                                          \
        uint32_t t0_, t4_;                                                        \
        __asm__ __volatile__("mov %k[o_f],%k[o_t4]\n\t"                           \
                             "xor %k[o_g],%k[o_t4]\n\t"                           \
                             "rorx $25,%k[o_e],%k[o_t0]\n\t"                      \
                             "rorx $11,%k[o_e],%k[o_ab]\n\t"                      \
                             "and %k[o_e],%k[o_t4]\n\t"                           \
                             "add %[o_w],%k[o_h]\n\t"                             \
                             "xor %k[o_ab],%k[o_t0]\n\t"                          \
                             "rorx $6,%k[o_e],%k[o_ab]\n\t"                       \
                             "xor %k[o_g],%k[o_t4]\n\t"       /* Ch */            \
                             "lea (%q[o_a],%q[o_s0]),%k[o_a]\n\t" /* a complete */ \
                             "xor %k[o_ab],%k[o_t0]\n\t"      /* Sigma1(e) */     \
                             "add %k[o_t4],%k[o_h]\n\t"                           \
                             "mov %k[o_a],%k[o_ab]\n\t"                           \
                             "rorx $22,%k[o_a],%k[o_t4]\n\t"                      \
                             "xor %k[o_b],%k[o_ab]\n\t"       /* a ^ b */         \
                             "add %k[o_t0],%k[o_h]\n\t"       /* T1 */            \
                             "rorx $13,%k[o_a],%k[o_s0]\n\t"                      \
                             "add %k[o_h],%k[o_d]\n\t"        /* new e */         \
                             "and %k[o_ab],%k[o_bc]\n\t"                          \
                             "rorx $2,%k[o_a],%k[o_t0]\n\t"                       \
                             "xor %k[o_t4],%k[o_s0]\n\t"                          \
                             "xor %k[o_b],%k[o_bc]\n\t"       /* Maj */           \
                             "add %k[o_bc],%k[o_h]\n\t"       /* new a - S0 */    \
                             "xor %k[o_t0],%k[o_s0]"          /* Sigma0(a) */     \
                             : [o_a] "+r"(a), [o_d] "+r"(d), [o_h] "+r"(h),       \
                               [o_s0] "+r"(s0), [o_bc] "+r"(bc), [o_ab] "=&r"(ab), \
                               [o_t0] "=&r"(t0_), [o_t4] "=&r"(t4_)               \
                             : [o_b] "r"(b), [o_e] "r"(e), [o_f] "r"(f),          \
                               [o_g] "r"(g), [o_w] "m"(wk)                        \
                             : "cc");                                             \
    } while (0)

/* Four rounds on wk[0..3]; the next call's names are rotated by four. */
#define RND4(a, b, c, d, e, f, g, h, wk)                                          \
    do {                                                                          \
        RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                             \
        RND(h, a, b, c, d, e, f, g, (wk)[1], ab, bc);                             \
        RND(g, h, a, b, c, d, e, f, (wk)[2], bc, ab);                             \
        RND(f, g, h, a, b, c, d, e, (wk)[3], ab, bc);                             \
    } while (0)

/* Four rounds of block 1 from wk[0..3], and between them step 1 of the schedule of
 * both blocks for group grp: x0 = W[t-16..t-13] becomes W[t..t+3] from
 * x1 = W[t-12..], x2 = W[t-8..], x3 = W[t-4..t-1]. sigma1 needs W[t-2], W[t-1], and
 * for the upper two words W[t], W[t+1] just made, so it runs twice on two words:
 * each word is duplicated into a qword, where a 64-bit right shift is a 32-bit rotate. */
#define RND4S(a, b, c, d, e, f, g, h, wk, x0, x1, x2, x3, grp)                        \
    do {                                                                              \
        __m256i w15_, t_, s0_, d_, s1_;                                               \
        RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                                 \
        w15_ = _mm256_alignr_epi8((x1), (x0), 4);                                     \
        t_ = _mm256_add_epi32((x0), _mm256_alignr_epi8((x3), (x2), 4));               \
        s0_ = _mm256_xor_si256(                                                       \
            _mm256_xor_si256(_mm256_srli_epi32(w15_, 7), _mm256_slli_epi32(w15_, 25)), \
            _mm256_xor_si256(_mm256_srli_epi32(w15_, 18), _mm256_slli_epi32(w15_, 14))); \
        RND(h, a, b, c, d, e, f, g, (wk)[1], ab, bc);                                 \
        t_ = _mm256_add_epi32(t_, _mm256_xor_si256(s0_, _mm256_srli_epi32(w15_, 3))); \
        d_ = _mm256_shuffle_epi32((x3), 0xfa);                                        \
        s1_ = _mm256_xor_si256(                                                       \
            _mm256_xor_si256(_mm256_srli_epi64(d_, 17), _mm256_srli_epi64(d_, 19)),   \
            _mm256_srli_epi32(d_, 10));                                               \
        RND(g, h, a, b, c, d, e, f, (wk)[2], bc, ab);                                 \
        t_ = _mm256_add_epi32(t_, _mm256_shuffle_epi8(s1_, shuf_00ba));               \
        d_ = _mm256_shuffle_epi32(t_, 0x50);                                          \
        s1_ = _mm256_xor_si256(                                                       \
            _mm256_xor_si256(_mm256_srli_epi64(d_, 17), _mm256_srli_epi64(d_, 19)),   \
            _mm256_srli_epi32(d_, 10));                                               \
        RND(f, g, h, a, b, c, d, e, (wk)[3], ab, bc);                                 \
        (x0) = _mm256_add_epi32(t_, _mm256_shuffle_epi8(s1_, shuf_dc00));             \
        STORE_WK(x0, grp);                                                            \
    } while (0)

/* W+K of group g (rounds 4g..4g+3) for both blocks: block 1 at wk[8g], block 2 at wk[8g+4]. */
#define KG(g) _mm_load_si128((const __m128i *)(archcrypt_sha256_K + 4 * (g)))
#define STORE_WK(x, g)                                                                  \
    _mm256_store_si256((__m256i *)(wk + 8 * (g)),                                       \
                       _mm256_add_epi32((x), _mm256_broadcastsi128_si256(KG(g))))

static inline __m128i load_be128(const uint8_t *p, __m128i bswap)
{
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), bswap);
}

static void sha256_compress_avx2(uint32_t H[8], const uint8_t *in, size_t nblocks)
{
    uint32_t wk[8 * 16] __attribute__((aligned(32)));
    const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
    const __m256i shuf_00ba = _mm256_setr_epi8(
        0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1,
        0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i shuf_dc00 = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 8, 9, 10, 11,
        -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 8, 9, 10, 11);
    uint32_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];

    while (nblocks) {
        /* Two blocks, or the last one alone with a zero upper lane (never read past it). */
        const int two = nblocks >= 2;
        __m256i x[4];
        for (int i = 0; i < 4; i++) {
            __m128i lo = load_be128(in + 16 * i, bswap);
            __m128i hi = two ? load_be128(in + 64 + 16 * i, bswap) : _mm_setzero_si128();
            x[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        }
        __m256i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];

        /* Block 1: rounds interleaved with the schedule of both blocks; each group's
         * W+K is stored four groups before its rounds read it. */
        uint32_t bc = b ^ c, ab, s0 = 0;
        STORE_WK(x0, 0);
        STORE_WK(x1, 1);
        STORE_WK(x2, 2);
        STORE_WK(x3, 3);
        for (int j = 0; j < 12; j += 4) {
            RND4S(a, b, c, d, e, f, g, h, wk + 8 * j, x0, x1, x2, x3, j + 4);
            RND4S(e, f, g, h, a, b, c, d, wk + 8 * j + 8, x1, x2, x3, x0, j + 5);
            RND4S(a, b, c, d, e, f, g, h, wk + 8 * j + 16, x2, x3, x0, x1, j + 6);
            RND4S(e, f, g, h, a, b, c, d, wk + 8 * j + 24, x3, x0, x1, x2, j + 7);
        }
        RND4(a, b, c, d, e, f, g, h, wk + 96);
        RND4(e, f, g, h, a, b, c, d, wk + 104);
        RND4(a, b, c, d, e, f, g, h, wk + 112);
        RND4(e, f, g, h, a, b, c, d, wk + 120);
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        if (!two) {
            in += 64;
            nblocks -= 1;
            break;
        }

        /* Block 2: the stored upper lanes. */
        bc = b ^ c;
        s0 = 0;
        for (int j = 0; j < 16; j += 4) {
            RND4(a, b, c, d, e, f, g, h, wk + 8 * j + 4);
            RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 12);
            RND4(a, b, c, d, e, f, g, h, wk + 8 * j + 20);
            RND4(e, f, g, h, a, b, c, d, wk + 8 * j + 28);
        }
        a += s0;
        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        in += 128;
        nblocks -= 2;
    }

    /* The schedule is message material, and HMAC's first block is the key. Volatile
     * vector stores rather than ac_wipe, which gcc turns into a rep stosq whose
     * start-up cost shows on one-block calls. */
    volatile __m256i *vwk = (volatile __m256i *)wk;
    for (size_t i = 0; i < sizeof(wk) / 32; i++)
        vwk[i] = _mm256_setzero_si256();
}

/* ---- eight messages at once: one per 32-bit lane ------------------------------------ */

/* Section 4.1.2 on eight lanes. AVX2 has no rotate: a shift each way and an or. */
static inline __m256i rotr8(__m256i x, int n)
{
    return _mm256_or_si256(_mm256_srli_epi32(x, n), _mm256_slli_epi32(x, 32 - n));
}
#define XOR3(x, y, z) _mm256_xor_si256(_mm256_xor_si256((x), (y)), (z))
#define BSIG0(x) XOR3(rotr8((x), 2), rotr8((x), 13), rotr8((x), 22))
#define BSIG1(x) XOR3(rotr8((x), 6), rotr8((x), 11), rotr8((x), 25))
#define SSIG0(x) XOR3(rotr8((x), 7), rotr8((x), 18), _mm256_srli_epi32((x), 3))
#define SSIG1(x) XOR3(rotr8((x), 17), rotr8((x), 19), _mm256_srli_epi32((x), 10))

/* r[i] = eight words of lane i in, r[j] = word j of every lane out (an 8x8 transpose
 * of 32-bit words; its own inverse). */
static inline void transpose8(__m256i r[8])
{
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
    }
}

/* Section 6.2.2 for eight independent messages, each in its own 32-bit lane: the same
 * instructions as the portable round, eight times the work per instruction. For CPUs
 * without SHA-NI, where one message runs scalar rounds (7 c/B on Zen 3). */
static void sha256_compress_x8(uint32_t (*H)[8], const uint8_t *const *in, size_t nblocks)
{
    const __m256i bswap = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
                                           3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    __m256i s[8], w[16];

    for (int l = 0; l < 8; l++)
        s[l] = _mm256_loadu_si256((const __m256i *)H[l]);
    transpose8(s);

    for (size_t blk = 0; blk < nblocks; blk++) {
        for (int half = 0; half < 2; half++) {
            for (int l = 0; l < 8; l++)
                w[8 * half + l] = _mm256_shuffle_epi8(
                    _mm256_loadu_si256((const __m256i *)(in[l] + 64 * blk + 32 * half)), bswap);
            transpose8(w + 8 * half);
        }

        __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
        for (int t = 0; t < 64; t++) {
            if (t >= 16)
                w[t & 15] = _mm256_add_epi32(
                    _mm256_add_epi32(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    _mm256_add_epi32(SSIG0(w[(t - 15) & 15]), w[t & 15]));
            /* Ch = ((f ^ g) & e) ^ g, Maj = ((a ^ b) & (b ^ c)) ^ b */
            __m256i ch = _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256(f, g), e), g);
            __m256i maj = _mm256_xor_si256(
                _mm256_and_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(b, c)), b);
            __m256i t1 = _mm256_add_epi32(
                _mm256_add_epi32(_mm256_add_epi32(h, BSIG1(e)), _mm256_add_epi32(ch, w[t & 15])),
                _mm256_set1_epi32((int)archcrypt_sha256_K[t]));
            __m256i t2 = _mm256_add_epi32(BSIG0(a), maj);
            h = g;
            g = f;
            f = e;
            e = _mm256_add_epi32(d, t1);
            d = c;
            c = b;
            b = a;
            a = _mm256_add_epi32(t1, t2);
        }
        s[0] = _mm256_add_epi32(s[0], a);
        s[1] = _mm256_add_epi32(s[1], b);
        s[2] = _mm256_add_epi32(s[2], c);
        s[3] = _mm256_add_epi32(s[3], d);
        s[4] = _mm256_add_epi32(s[4], e);
        s[5] = _mm256_add_epi32(s[5], f);
        s[6] = _mm256_add_epi32(s[6], g);
        s[7] = _mm256_add_epi32(s[7], h);
    }

    transpose8(s);
    for (int l = 0; l < 8; l++)
        _mm256_storeu_si256((__m256i *)H[l], s[l]);

    /* The schedule is message material (HMAC's first block is the key). */
    volatile __m256i *vw = (volatile __m256i *)w;
    for (int i = 0; i < 16; i++)
        vw[i] = _mm256_setzero_si256();
}

const sha256_kernel archcrypt_sha256_avx2 = {
    .compress = sha256_compress_avx2,
    .compress_lanes = sha256_compress_x8,
    .lanes = 8,
};
