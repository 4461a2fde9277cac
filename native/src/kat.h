/* Known-answer self-tests, one per algorithm. Each runs its vectors through the
 * public API, so it exercises whichever implementation is in effect on the calling
 * thread (archcrypt_self_test sets a thread override around the call). */
#ifndef ARCHCRYPT_KAT_H
#define ARCHCRYPT_KAT_H

/* Each returns ARCHCRYPT_OK or ARCHCRYPT_ERR_SELFTEST. */
int ac_kat_chacha20(void);
int ac_kat_poly1305(void);
int ac_kat_chacha20_poly1305(void);   /* also covers XChaCha20-Poly1305 */
int ac_kat_sha256(void);              /* SHA-224 and SHA-256, HMAC-SHA-256 */
int ac_kat_sha512(void);              /* SHA-384 and SHA-512, HMAC-SHA-512 */
int ac_kat_camellia(void);            /* 128, 192, 256, encrypt and decrypt */

#endif
