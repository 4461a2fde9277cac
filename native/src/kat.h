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

#include <stddef.h>
#include <stdint.h>

/* Hex keeps the vectors comparable, digit for digit, with their sources. */
static inline size_t ac_unhex(uint8_t *out, size_t cap, const char *hex)
{
    size_t n = 0;

    for (; hex[0] != '\0' && hex[1] != '\0' && n < cap; hex += 2) {
        uint8_t byte = 0;
        for (int i = 0; i < 2; i++) {
            char ch = hex[i];
            byte = (uint8_t)(byte << 4);
            if (ch >= '0' && ch <= '9')
                byte |= (uint8_t)(ch - '0');
            else if (ch >= 'a' && ch <= 'f')
                byte |= (uint8_t)(ch - 'a' + 10);
        }
        out[n++] = byte;
    }
    return n;
}

#endif
