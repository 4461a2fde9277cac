/* Camellia ECB, AVX2 + AES-NI: byte-sliced 32-block ymm states (two interleaved, 16-block xmm for short tails), S-boxes as aesenclast/aesdeclast per 128-bit lane between vpshufb nibble-table affine maps (RFC 3713 2.3-2.4). */
#if !defined(__AVX2__) || !defined(__AES__)
#error "camellia/aesni_avx2.c needs -mavx2 -maes (ISA_FLAGS_aesni_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"

/* Without VAES the ymm S-box runs as two xmm AES instructions and the lane moves. */
AC_INLINE __m256i aesenclast_2x128(__m256i x)
{
    const __m128i z = _mm_setzero_si128();
    __m128i lo = _mm_aesenclast_si128(_mm256_castsi256_si128(x), z);
    __m128i hi = _mm_aesenclast_si128(_mm256_extracti128_si256(x, 1), z);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

AC_INLINE __m256i aesdeclast_2x128(__m256i x)
{
    const __m128i z = _mm_setzero_si128();
    __m128i lo = _mm_aesdeclast_si128(_mm256_castsi256_si128(x), z);
    __m128i hi = _mm_aesdeclast_si128(_mm256_extracti128_si256(x, 1), z);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

#define CAMELLIA_AESENCLAST256(x) aesenclast_2x128(x)
#define CAMELLIA_AESDECLAST256(x) aesdeclast_2x128(x)
#include "camellia/x86_byteslice.h"

CAMELLIA_X86_KERNEL(aesni_avx2);
