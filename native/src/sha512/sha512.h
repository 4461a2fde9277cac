/* SHA-512 compression kernel contract (FIPS 180-4 section 6.4); serves SHA-384 too. */
#ifndef ARCHCRYPT_SHA512_H
#define ARCHCRYPT_SHA512_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

/* Most lanes any row's compress_lanes runs (avx512: eight). */
#define SHA512_MAX_LANES 8

typedef struct sha512_kernel {
    /* Compress nblocks 128-byte blocks (no alignment) into the native-order state h. */
    void (*compress)(uint64_t h[8], const uint8_t *in, size_t nblocks);
    /* Optional, as in sha256.h: `lanes` independent chains at once (multi-buffer). */
    void (*compress_lanes)(uint64_t (*h)[8], const uint8_t *const *in, size_t nblocks);
    unsigned lanes;
} sha512_kernel;

/* Section 4.2.3: the first 64 bits of the fractional parts of the cube roots of the
 * first 80 primes; defined once (portable.c), 64-byte aligned for vector loads. */
extern const uint64_t archcrypt_sha512_K[80];

/* One kernel per row of sha512/rows.h, defined by sha512/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const sha512_kernel archcrypt_sha512_##slug;
#include "sha512/rows.h"
#undef AC_ROW_MIN_LEN

#endif
