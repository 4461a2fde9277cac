/* ChaCha20 and HChaCha20 public front: byte-order loading, the counter limit, dispatch (RFC 8439 2.4). */
#include "common.h"
#include "dispatch.h"
#include "chacha20/chacha20.h"
#include "chacha20/limits.h"

int archcrypt_chacha20_xor(uint8_t *out, const uint8_t *in, size_t len,
                           const uint8_t *key32, const uint8_t *nonce12, uint32_t counter)
{
    const chacha20_kernel *k = ac_chacha20_kernel(len);
    uint32_t key[8], nonce[3];

    if (!ac_chacha20_len_ok(len, counter))
        return ARCHCRYPT_ERR_MESSAGE_TOO_LONG;
    /* Nothing to do, and out/in may then be NULL. */
    if (len == 0)
        return ARCHCRYPT_OK;

    for (int i = 0; i < 8; i++)
        key[i] = load32_le(key32 + 4 * i);
    for (int i = 0; i < 3; i++)
        nonce[i] = load32_le(nonce12 + 4 * i);
    k->xor_stream(out, in, len, key, nonce, counter);
    ac_wipe(key, sizeof key);
    return ARCHCRYPT_OK;
}

void archcrypt_hchacha20(uint8_t *out32, const uint8_t *key32, const uint8_t *nonce16)
{
    uint32_t key[8], nonce[4], subkey[8];

    /* No kernel to pick (HChaCha20 is portable only), but every entry point
     * initialises the library. */
    (void)ac_kernel(AC_ALG_CHACHA20);

    for (int i = 0; i < 8; i++)
        key[i] = load32_le(key32 + 4 * i);
    for (int i = 0; i < 4; i++)
        nonce[i] = load32_le(nonce16 + 4 * i);
    ac_hchacha20(subkey, key, nonce);
    for (int i = 0; i < 8; i++)
        store32_le(out32 + 4 * i, subkey[i]);
    ac_wipe(key, sizeof key);
    ac_wipe(subkey, sizeof subkey);
}
