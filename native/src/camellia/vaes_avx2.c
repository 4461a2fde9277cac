/* Camellia ECB, AVX2 + VAES: byte-sliced 32-block ymm states (two interleaved, 16-block xmm for short tails), S-boxes as 256-bit vaesenclast/vaesdeclast between vpshufb nibble-table affine maps (RFC 3713 2.3-2.4). */
#if !defined(__AVX2__) || !defined(__AES__) || !defined(__VAES__)
#error "camellia/vaes_avx2.c needs -mavx2 -maes -mvaes (ISA_FLAGS_vaes_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#define CAMELLIA_AESENCLAST256(x) _mm256_aesenclast_epi128((x), _mm256_setzero_si256())
#define CAMELLIA_AESDECLAST256(x) _mm256_aesdeclast_epi128((x), _mm256_setzero_si256())
#include "camellia/x86_byteslice.h"

CAMELLIA_X86_KERNEL(vaes_avx2);
