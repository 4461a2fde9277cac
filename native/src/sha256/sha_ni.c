/* SHA-256 compression, SHA-NI: sha256rnds2 over the ABEF/CDGH state (shuffled once per call), sha256msg1/msg2 schedule, 4 rounds per group; batches run two messages' chains interleaved (FIPS 180-4 section 6.2.2). */
#if !defined(__SHA__) || !defined(__SSE4_1__) || !defined(__SSSE3__)
#error "sha256/sha_ni.c needs -msha -msse4.1 -mssse3 (ISA_FLAGS_sha_ni in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha256/sha256.h"
#include "sha256/sha_ni_rounds.h"

#include "sha256/sha_ni_one.h"
#include "sha256/sha_ni_two.h"

const sha256_kernel archcrypt_sha256_sha_ni = {
    .compress = sha_ni_compress,
    .compress_lanes = sha_ni_compress_lanes,
    .lanes = SHA_NI_LANES,
};
