/* ChaCha20 kernel contract (RFC 8439 section 2.4). */
#ifndef ARCHCRYPT_CHACHA20_H
#define ARCHCRYPT_CHACHA20_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

typedef struct chacha20_kernel {
    /* out = in XOR keystream(key, nonce) for blocks counter, counter+1, ...
     * key and nonce are already loaded as little-endian words. The caller has
     * checked that counter + ceil(len / 64) - 1 <= 2^32 - 1, so the 32-bit block
     * counter never wraps inside a call; kernels need not re-check. len may be
     * anything (a partial last block is allowed). out == in is allowed; otherwise
     * the buffers do not overlap. Neither pointer has any alignment. */
    void (*xor_stream)(uint8_t *out, const uint8_t *in, size_t len,
                       const uint32_t key[8], const uint32_t nonce[3], uint32_t counter);
} chacha20_kernel;

/* One kernel per row of chacha20/rows.h, defined by chacha20/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const chacha20_kernel archcrypt_chacha20_##slug;
#include "chacha20/rows.h"
#undef AC_ROW_MIN_LEN

/* RFC 8439 2.1: the quarter round on four 32-bit words (lvalues), for scalar code (the
 * portable kernel; the lane-uniform first columns of the AVX-512 one). rotl32 is
 * common.h's. */
#define AC_CHACHA20_QR(a, b, c, d)                                          \
    do {                                                                    \
        (a) += (b);                                                         \
        (d) = rotl32((d) ^ (a), 16);                                        \
        (c) += (d);                                                         \
        (b) = rotl32((b) ^ (c), 12);                                        \
        (a) += (b);                                                         \
        (d) = rotl32((d) ^ (a), 8);                                         \
        (c) += (d);                                                         \
        (b) = rotl32((b) ^ (c), 7);                                         \
    } while (0)

/* HChaCha20 (draft-irtf-cfrg-xchacha section 2.2), portable only: one block per message. */
void ac_hchacha20(uint32_t out[8], const uint32_t key[8], const uint32_t nonce[4]);

#endif
