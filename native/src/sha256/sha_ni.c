/* SHA-256 compression, SHA-NI: sha256rnds2 over the ABEF/CDGH state (shuffled once per call), sha256msg1/msg2 schedule, 4 rounds per group (FIPS 180-4 section 6.2.2). */
#if !defined(__SHA__) || !defined(__SSE4_1__) || !defined(__SSSE3__)
#error "sha256/sha_ni.c needs -msha -msse4.1 -mssse3 (ISA_FLAGS_sha_ni in native/Makefile)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha256/sha256.h"

/* Section 4.2.2, four constants per group, lane i = K[4g + i]. */
static const uint32_t K[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define KG(g) _mm_load_si128((const __m128i *)(K + 4 * (g)))

/* Four rounds: sha256rnds2 does two, taking W+K for them from the low two lanes. */
#define RNDS4(w, g)                                                    \
    do {                                                               \
        __m128i wk_ = _mm_add_epi32((w), KG(g));                       \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk_);                 \
        wk_ = _mm_shuffle_epi32(wk_, 0x0e);                            \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, wk_);                 \
    } while (0)

/* Section 6.2.2 step 1 for four words: W[t..t+3] from the groups w0 = W[t-16..],
 * w1 = W[t-12..], w2 = W[t-8..], w3 = W[t-4..]. msg1 adds sigma0(W[t-15..t-12]) to
 * w0, the alignr supplies W[t-7..t-4], and msg2 adds sigma1 of W[t-2], W[t-1] (the
 * last two from its own output). The result replaces w0. */
#define SCHED(w0, w1, w2, w3)                                                       \
    (w0) = _mm_sha256msg2_epu32(                                                    \
        _mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), _mm_alignr_epi8((w3), (w2), 4)), \
        (w3))

static void sha256_compress_sha_ni(uint32_t h[8], const uint8_t *in, size_t nblocks)
{
    /* Big-endian words to little-endian lanes. */
    const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);

    /* Native {a,b,c,d}, {e,f,g,h} to the register order sha256rnds2 wants:
     * lanes 3..0 = A,B,E,F and C,D,G,H. */
    __m128i dcba = _mm_loadu_si128((const __m128i *)h);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)(h + 4));
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);

    while (nblocks--) {
        const __m128i abef_in = abef, cdgh_in = cdgh;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 0)), bswap);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 16)), bswap);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 32)), bswap);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 48)), bswap);

        RNDS4(w0, 0);
        RNDS4(w1, 1);
        RNDS4(w2, 2);
        RNDS4(w3, 3);
        SCHED(w0, w1, w2, w3); RNDS4(w0, 4);
        SCHED(w1, w2, w3, w0); RNDS4(w1, 5);
        SCHED(w2, w3, w0, w1); RNDS4(w2, 6);
        SCHED(w3, w0, w1, w2); RNDS4(w3, 7);
        SCHED(w0, w1, w2, w3); RNDS4(w0, 8);
        SCHED(w1, w2, w3, w0); RNDS4(w1, 9);
        SCHED(w2, w3, w0, w1); RNDS4(w2, 10);
        SCHED(w3, w0, w1, w2); RNDS4(w3, 11);
        SCHED(w0, w1, w2, w3); RNDS4(w0, 12);
        SCHED(w1, w2, w3, w0); RNDS4(w1, 13);
        SCHED(w2, w3, w0, w1); RNDS4(w2, 14);
        SCHED(w3, w0, w1, w2); RNDS4(w3, 15);

        /* Step 4: the state adds lane-wise in either order. */
        abef = _mm_add_epi32(abef, abef_in);
        cdgh = _mm_add_epi32(cdgh, cdgh_in);
        in += 64;
    }

    /* Back to {a,b,c,d}, {e,f,g,h}. */
    __m128i feba = _mm_shuffle_epi32(abef, 0x1b);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
    _mm_storeu_si128((__m128i *)h, _mm_blend_epi16(feba, dchg, 0xf0));
    _mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}

const sha256_kernel archcrypt_sha256_sha_ni = {
    .compress = sha256_compress_sha_ni,
};
