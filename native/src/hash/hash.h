/* SHA-2 mode layer (FIPS 180-4 sections 5 and 6): buffering, padding and output
 * over the compression kernels, shared by the public hash API and HMAC. */
#ifndef ARCHCRYPT_HASH_H
#define ARCHCRYPT_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "archcrypt.h"
#include "sha256/sha256.h"
#include "sha512/sha512.h"

#define AC_HASH_MAX_DIGEST 64
#define AC_HASH_MAX_BLOCK 128

/* The public opaque archcrypt_hash_ctx is this struct itself, so a context can
 * live on the stack (one-shot hashing, HMAC) or on the heap (the public API). */
struct archcrypt_hash_ctx {
    union {
        uint32_t w32[8];        /* SHA-224, SHA-256 */
        uint64_t w64[8];        /* SHA-384, SHA-512 */
    } h;
    union {
        const sha256_kernel *k256;
        const sha512_kernel *k512;
    } k;                        /* captured at init: a thread override set later does not apply */
    uint64_t count_lo;          /* bytes absorbed so far, 128 bits wide */
    uint64_t count_hi;
    size_t buf_len;             /* bytes waiting in buf, always < block_size */
    uint8_t buf[AC_HASH_MAX_BLOCK];
    uint8_t block_size;         /* 64 or 128 */
    uint8_t digest_size;        /* 28, 32, 48 or 64 */
    uint8_t wide;               /* 1 for the 64-bit-word family */
    uint8_t finished;
};
typedef struct archcrypt_hash_ctx ac_hash_ctx;

/* ARCHCRYPT_OK, or ARCHCRYPT_ERR_INVALID_ARGUMENT for an unknown id (ctx left
 * untouched), or ARCHCRYPT_ERR_UNSUPPORTED when dispatch offers no kernel. */
int ac_hash_init(ac_hash_ctx *ctx, int hash_id);
/* ARCHCRYPT_OK, or ARCHCRYPT_ERR_STATE after final. Arguments are not checked. */
int ac_hash_update(ac_hash_ctx *ctx, const uint8_t *msg, size_t len);
/* Writes digest_size bytes, then wipes everything but the finished mark.
 * ARCHCRYPT_ERR_STATE when already finished. */
int ac_hash_final(ac_hash_ctx *ctx, uint8_t *digest);
/* HMAC tags of n >= 2 messages from the keyed inner and outer states (each has absorbed
 * its padded key block) on the kernel's multi-lane path: 1, or 0 with nothing written
 * when the kernel has none. */
int ac_hmac_many(const ac_hash_ctx *inner, const ac_hash_ctx *outer, size_t n,
                 const uint8_t *const *msgs, const size_t *lens, uint8_t *tags);

#endif
