/* SHA-256 compression of one chain with SHA-NI (FIPS 180-4 section 6.2.2), shared by sha_ni.c and sha_ni_avx512.c; RNDS4 and SCHED stay defined for the includer to #undef. */
#ifndef ARCHCRYPT_SHA256_SHA_NI_ONE_H
#define ARCHCRYPT_SHA256_SHA_NI_ONE_H

/* A header gets no ISA flags of its own. */
#if !defined(__SHA__) || !defined(__SSE4_1__) || !defined(__SSSE3__)
#error "sha256/sha_ni_one.h needs -msha -msse4.1 -mssse3: include it only from SHA-NI files"
#endif

#include <immintrin.h>

#include "sha256/sha256.h"
#include "sha256/sha_ni_rounds.h"

/* Section 4.2.2, four constants per group, lane i = K[4g + i]. */
#define KG(g) _mm_load_si128((const __m128i *)(archcrypt_sha256_K + 4 * (g)))

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

static void sha_ni_compress(uint32_t h[8], const uint8_t *in, size_t nblocks)
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

        SHA_NI_ROUNDS(w0, w1, w2, w3);

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

#endif
