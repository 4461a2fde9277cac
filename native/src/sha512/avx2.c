/* SHA-512 compression, AVX2 + BMI2: message schedule four qwords per ymm, split between the scalar rorx rounds (inline asm, x86_rounds.h), W+K parked on the stack a group ahead (FIPS 180-4 section 6.4.2). */
#if !defined(__AVX2__) || !defined(__BMI2__)
#error "sha512/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha512/sha512.h"
#include "sha512/x86_rounds.h"

/* AVX2 has no 64-bit rotate: shift both ways; the parts are disjoint, so XOR them. */
#define ROR_PARTS(x, n) _mm256_xor_si256(_mm256_srli_epi64((x), (n)), _mm256_slli_epi64((x), 64 - (n)))

/* sigma0 and sigma1 (section 4.1.3) of each qword; the rotate by 8 is a byte shuffle. */
static inline __m256i sigma0(__m256i x, __m256i ror8)
{
    return _mm256_xor_si256(ROR_PARTS(x, 1),
                            _mm256_xor_si256(_mm256_shuffle_epi8(x, ror8), _mm256_srli_epi64(x, 7)));
}

static inline __m256i sigma1(__m256i x)
{
    return _mm256_xor_si256(_mm256_xor_si256(ROR_PARTS(x, 19), ROR_PARTS(x, 61)),
                            _mm256_srli_epi64(x, 6));
}

/* W+K of group g (rounds 4g..4g+3) into wk[4g..4g+3]. */
#define STORE_WK(x, g)                                                                    \
    _mm256_store_si256((__m256i *)(wk + 4 * (g)),                                         \
                       _mm256_add_epi64((x), _mm256_load_si256((const __m256i *)(archcrypt_sha512_K + 4 * (g)))))

/* Four rounds from wk[0..3], and between them step 1 of the schedule for group g:
 * x0 = W[t-16..t-13] becomes W[t..t+3] from x1 = W[t-12..], x2 = W[t-8..],
 * x3 = W[t-4..t-1]. sigma1 needs W[t-2], W[t-1] for the low pair and the new W[t],
 * W[t+1] for the high pair, so it runs twice, each time on a vector whose other half
 * is zero (sigma1(0) = 0). */
#define RND4S(a, b, c, d, e, f, g, h, wk, x0, x1, x2, x3, grp)                        \
    do {                                                                              \
        __m256i w15_, w7_, t_, u_;                                                    \
        SHA512_RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                          \
        w15_ = _mm256_alignr_epi8(_mm256_permute2x128_si256((x0), (x1), 0x21), (x0), 8); \
        w7_ = _mm256_alignr_epi8(_mm256_permute2x128_si256((x2), (x3), 0x21), (x2), 8);  \
        t_ = _mm256_add_epi64((x0), w7_);                                             \
        u_ = _mm256_permute2x128_si256((x3), (x3), 0x81);                             \
        SHA512_RND(h, a, b, c, d, e, f, g, (wk)[1], ab, bc);                          \
        t_ = _mm256_add_epi64(t_, sigma0(w15_, ror8));                                \
        SHA512_RND(g, h, a, b, c, d, e, f, (wk)[2], bc, ab);                          \
        t_ = _mm256_add_epi64(t_, sigma1(u_));                                        \
        u_ = _mm256_permute2x128_si256(t_, t_, 0x08);                                 \
        SHA512_RND(f, g, h, a, b, c, d, e, (wk)[3], ab, bc);                          \
        (x0) = _mm256_add_epi64(t_, sigma1(u_));                                      \
        STORE_WK(x0, grp);                                                            \
    } while (0)

static void sha512_compress_avx2(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    uint64_t wk[80] __attribute__((aligned(32)));
    /* Big-endian qwords to little-endian lanes, and a rotate right by 8 bits. */
    const __m256i bswap = _mm256_setr_epi8(
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    const __m256i ror8 = _mm256_setr_epi8(
        1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8,
        1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8);
    uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];

    while (nblocks--) {
        __m256i x0 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 0)), bswap);
        __m256i x1 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 32)), bswap);
        __m256i x2 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 64)), bswap);
        __m256i x3 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 96)), bswap);
        uint64_t bc = b ^ c, ab, s0 = 0;

        /* Each group's W+K is stored four groups before its rounds read it. */
        STORE_WK(x0, 0);
        STORE_WK(x1, 1);
        STORE_WK(x2, 2);
        STORE_WK(x3, 3);
        for (int j = 0; j < 16; j += 4) {
            RND4S(a, b, c, d, e, f, g, h, wk + 4 * j, x0, x1, x2, x3, j + 4);
            RND4S(e, f, g, h, a, b, c, d, wk + 4 * j + 4, x1, x2, x3, x0, j + 5);
            RND4S(a, b, c, d, e, f, g, h, wk + 4 * j + 8, x2, x3, x0, x1, j + 6);
            RND4S(e, f, g, h, a, b, c, d, wk + 4 * j + 12, x3, x0, x1, x2, j + 7);
        }
        SHA512_RND4(a, b, c, d, e, f, g, h, wk + 64, 1);
        SHA512_RND4(e, f, g, h, a, b, c, d, wk + 68, 1);
        SHA512_RND4(a, b, c, d, e, f, g, h, wk + 72, 1);
        SHA512_RND4(e, f, g, h, a, b, c, d, wk + 76, 1);
        a += s0;

        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        in += 128;
    }

    /* The schedule is message material, and HMAC's first block is the key. Volatile
     * vector stores rather than ac_wipe, which gcc turns into a rep stosq whose
     * start-up cost shows on one-block calls. */
    volatile __m256i *vwk = (volatile __m256i *)wk;
    for (size_t i = 0; i < sizeof(wk) / 32; i++)
        vwk[i] = _mm256_setzero_si256();
}

const sha512_kernel archcrypt_sha512_avx2 = {
    .compress = sha512_compress_avx2,
};
