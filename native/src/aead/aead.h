/* ChaCha20-Poly1305 kernel contract (RFC 8439 section 2.8). */
#ifndef ARCHCRYPT_AEAD_H
#define ARCHCRYPT_AEAD_H

#include <stddef.h>
#include <stdint.h>

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

/* The dispatched ChaCha20 and Poly1305 kernels, one pass over L1-sized chunks. */
extern const aead_kernel archcrypt_chacha20_poly1305_composed;

#if defined(__x86_64__)
/* AVX2 ChaCha20 stitched with scalar Poly1305 per 512-byte step. */
extern const aead_kernel archcrypt_chacha20_poly1305_avx2;
/* The avx512 ChaCha20 and avx512ifma Poly1305 kernels composed per 8 KiB. */
extern const aead_kernel archcrypt_chacha20_poly1305_avx512;
#endif

#endif
