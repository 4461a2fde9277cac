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

/* Seal (open == 0) or open with the given ChaCha20 and Poly1305 kernels in one pass
 * over chunks of `chunk` bytes (a multiple of 64), each MACed while in L1; the
 * contract of aead_kernel otherwise. The composed rows are this over their kernels. */
struct chacha20_kernel;
struct poly1305_kernel;
void ac_aead_compose(int open, const struct chacha20_kernel *cipher,
                     const struct poly1305_kernel *poly, size_t chunk, uint8_t *out,
                     uint8_t tag[16], const uint8_t *in, size_t len, const uint8_t *aad,
                     size_t aad_len, const uint32_t key[8], const uint32_t nonce[3]);

/* Messages up to this long fit with block 0 in one 512-byte ChaCha20 pass: */
#define AEAD_ONEPASS_MAX 448
/* the same for len <= AEAD_ONEPASS_MAX in a single ChaCha20 call that makes the
 * one-time key's block and the message's keystream together (a cipher kernel with a
 * min_len must take 64 + len bytes). Past 448 bytes the copy through a stack buffer
 * would cost more than the pass it saves. */
void ac_aead_onepass(int open, const struct chacha20_kernel *cipher,
                     const struct poly1305_kernel *poly, uint8_t *out, uint8_t tag[16],
                     const uint8_t *in, size_t len, const uint8_t *aad, size_t aad_len,
                     const uint32_t key[8], const uint32_t nonce[3]);

/* The MAC of RFC 8439 2.8 once the one-time key is known: Poly1305 under otk over the
 * aad, the ciphertext ct and their lengths, with the given kernel. */
void ac_aead_mac(const struct poly1305_kernel *poly, const uint8_t otk[32], uint8_t tag[16],
                 const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t len);

/* chacha20/avx512.c, for the avx512 AEAD row (aead/avx512.c): 1 <= len <= 1024 bytes of
 * message with blocks 1..16 and, in the same rounds, the one-time key (the first 32 bytes
 * of block 0) into otk. out == in is allowed. */
void ac_chacha20_avx512_group_otk(uint8_t otk[32], uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t nonce[3]);

/* One kernel per row of aead/rows.h, defined by aead/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const aead_kernel archcrypt_chacha20_poly1305_##slug;
#include "aead/rows.h"
#undef AC_ROW_MIN_LEN

#endif
