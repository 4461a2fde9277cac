/* SHA-256 compression of two messages' chains side by side with SHA-NI (FIPS 180-4 section 6.2.2), shared by sha_ni.c (its batches) and sha_ni_avx512.c (batches too small for sixteen lanes); include it after sha_ni_one.h. */
#ifndef ARCHCRYPT_SHA256_SHA_NI_TWO_H
#define ARCHCRYPT_SHA256_SHA_NI_TWO_H

/* A header gets no ISA flags of its own. */
#if !defined(__SHA__) || !defined(__SSE4_1__) || !defined(__SSSE3__)
#error "sha256/sha_ni_two.h needs -msha -msse4.1 -mssse3: include it only from SHA-NI files"
#endif

#include <immintrin.h>

#include "sha256/sha256.h"
#include "sha256/sha_ni_rounds.h"

#define SHA_NI_LANES 2

/* ---- multi-buffer: independent messages side by side (archcrypt_hash_many) ---- */

#undef RNDS4
#undef SCHED

/*
 * One message cannot go faster than sha_ni: each sha256rnds2 needs the state the
 * previous one wrote, so a block costs 32 of its latencies (~2 c/B on Zen 3) while the
 * unit could accept one about every other cycle. Chains of different messages do not
 * depend on each other, so issuing their rounds side by side fills those gaps.
 * Measured on a Zen 3 (bench, 8 messages of 16 and 64 KiB, per message, three runs
 * of both widths interleaved in one process on a loaded machine): 2 lanes 1.16-1.37
 * c/B, 4 lanes 1.10-1.58, one at a time 2.11-2.20. Two chains already fill the unit;
 * four add register pressure and need a batch of four to start.
 */
#define LANES SHA_NI_LANES
_Static_assert(LANES >= 2 && LANES <= SHA256_MAX_LANES, "lanes");

/* The loop over lanes must unroll so each lane's registers stay registers. */
#define EACH_LANE _Pragma("GCC unroll 4") for (int l = 0; l < LANES; l++)

/* Four rounds of every lane. sha256rnds2 does two, taking W+K from the low two lanes
 * of its third operand; the first half of every lane is issued before any second half. */
#define RNDS4(w, g)                                                          \
    do {                                                                     \
        const __m128i k_ = KG(g);                                            \
        __m128i wk_[LANES];                                                  \
        EACH_LANE {                                                          \
            wk_[l] = _mm_add_epi32((w)[l], k_);                              \
            cdgh[l] = _mm_sha256rnds2_epu32(cdgh[l], abef[l], wk_[l]);       \
        }                                                                    \
        EACH_LANE {                                                          \
            wk_[l] = _mm_shuffle_epi32(wk_[l], 0x0e);                        \
            abef[l] = _mm_sha256rnds2_epu32(abef[l], cdgh[l], wk_[l]);       \
        }                                                                    \
    } while (0)

/* Section 6.2.2 step 1, four words per lane, as sha_ni_one.h's SCHED: the result replaces w0. */
#define SCHED(w0, w1, w2, w3)                                                           \
    EACH_LANE {                                                                         \
        (w0)[l] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32((w0)[l], (w1)[l]), \
                                                     _mm_alignr_epi8((w3)[l], (w2)[l], 4)), \
                                       (w3)[l]);                                        \
    }

static void sha_ni_compress_lanes(uint32_t (*h)[8], const uint8_t *const *in, size_t nblocks)
{
    const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
    __m128i abef[LANES], cdgh[LANES], w0[LANES], w1[LANES], w2[LANES], w3[LANES];
    const uint8_t *p[LANES];

    /* Native {a,b,c,d}, {e,f,g,h} to sha256rnds2's A,B,E,F and C,D,G,H (as above). */
    EACH_LANE {
        __m128i cdab = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h[l]), 0xb1);
        __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h[l] + 4)), 0x1b);
        abef[l] = _mm_alignr_epi8(cdab, efgh, 8);
        cdgh[l] = _mm_blend_epi16(efgh, cdab, 0xf0);
        p[l] = in[l];
    }

    while (nblocks--) {
        __m128i abef_in[LANES], cdgh_in[LANES];
        EACH_LANE {
            abef_in[l] = abef[l];
            cdgh_in[l] = cdgh[l];
            w0[l] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p[l] + 0)), bswap);
            w1[l] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p[l] + 16)), bswap);
            w2[l] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p[l] + 32)), bswap);
            w3[l] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p[l] + 48)), bswap);
        }

        SHA_NI_ROUNDS(w0, w1, w2, w3);

        EACH_LANE {
            abef[l] = _mm_add_epi32(abef[l], abef_in[l]);
            cdgh[l] = _mm_add_epi32(cdgh[l], cdgh_in[l]);
            p[l] += 64;
        }
    }

    EACH_LANE {
        __m128i feba = _mm_shuffle_epi32(abef[l], 0x1b);
        __m128i dchg = _mm_shuffle_epi32(cdgh[l], 0xb1);
        _mm_storeu_si128((__m128i *)h[l], _mm_blend_epi16(feba, dchg, 0xf0));
        _mm_storeu_si128((__m128i *)(h[l] + 4), _mm_alignr_epi8(dchg, feba, 8));
    }
}

#undef EACH_LANE
#undef LANES

#endif
