/* SHA-256 compression kernel contract (FIPS 180-4 section 6.2); serves SHA-224 too. */
#ifndef ARCHCRYPT_SHA256_H
#define ARCHCRYPT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

/* Most lanes any row's compress_lanes runs (sha_ni_avx512: sixteen); the mode layer
 * sizes its lane state by it. */
#define SHA256_MAX_LANES 16

typedef struct sha256_kernel {
    /* Compress nblocks 64-byte blocks (no alignment) into the native-order state h. */
    void (*compress)(uint32_t h[8], const uint8_t *in, size_t nblocks);
    /* Optional (NULL: the batch API runs compress one message at a time). Compress
     * `lanes` independent chains at once: h[i] over nblocks blocks at in[i], for every
     * i < lanes. One chain is bound by the latency of its rounds; several in flight
     * fill the pipeline (multi-buffer). Only for lanes >= 2. */
    void (*compress_lanes)(uint32_t (*h)[8], const uint8_t *const *in, size_t nblocks);
    unsigned lanes;
    /* Optional: a narrower multi-lane path (2 <= narrow_lanes < lanes) for batches of
     * half the lanes or fewer, which the wide path would run one message at a time. */
    void (*compress_lanes_narrow)(uint32_t (*h)[8], const uint8_t *const *in, size_t nblocks);
    unsigned narrow_lanes;
} sha256_kernel;

/* Section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes; defined once (portable.c), 16-byte aligned for vector loads. */
extern const uint32_t archcrypt_sha256_K[64];

/* One kernel per row of sha256/rows.h, defined by sha256/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const sha256_kernel archcrypt_sha256_##slug;
#include "sha256/rows.h"
#undef AC_ROW_MIN_LEN

#endif
