/* SHA-256 compression kernel contract (FIPS 180-4 section 6.2); serves SHA-224 too. */
#ifndef ARCHCRYPT_SHA256_H
#define ARCHCRYPT_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_kernel {
    /* Compress nblocks 64-byte blocks (no alignment) into the native-order state h. */
    void (*compress)(uint32_t h[8], const uint8_t *in, size_t nblocks);
} sha256_kernel;

extern const sha256_kernel archcrypt_sha256_portable;

#if defined(__x86_64__)
extern const sha256_kernel archcrypt_sha256_sha_ni;
extern const sha256_kernel archcrypt_sha256_avx2;
#endif

#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
extern const sha256_kernel archcrypt_sha256_power8;
#endif

#endif
