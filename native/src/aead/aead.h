/* ChaCha20-Poly1305 kernel contract (RFC 8439 section 2.8). */
#ifndef ARCHCRYPT_AEAD_H
#define ARCHCRYPT_AEAD_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

typedef struct aead_kernel {
    /* Encrypt len bytes (block counter starts at 1; the caller checked that len fits
     * 2^32 - 1 blocks) and compute the tag over aad and the ciphertext. */
    void (*seal)(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                 const uint8_t *aad, size_t aad_len,
                 const uint32_t key[8], const uint32_t nonce[3]);
    /* Decrypt len bytes and compute the expected tag over aad and the ciphertext
     * (in). The caller compares tags in constant time and wipes out on mismatch. */
    void (*open)(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                 const uint8_t *aad, size_t aad_len,
                 const uint32_t key[8], const uint32_t nonce[3]);
} aead_kernel;

/* One kernel per row of aead/rows.h, defined by aead/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const aead_kernel archcrypt_chacha20_poly1305_##slug;
#include "aead/rows.h"
#undef AC_ROW_MIN_LEN

#endif
