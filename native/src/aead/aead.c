/* ChaCha20-Poly1305 and XChaCha20-Poly1305 public front: limits, tag check, wiping, dispatch by length (RFC 8439 2.8; draft-irtf-cfrg-xchacha 2.3). */
#include "common.h"
#include "dispatch.h"
#include "chacha20/chacha20.h"
#include "chacha20/limits.h"
#include "aead/aead.h"

#define TAG_LEN 16

/* The message uses blocks 1, 2, ...: block 0 made the Poly1305 key. */
#define FIRST_MESSAGE_BLOCK 1

static void load_key(uint32_t key[8], const uint8_t *key32)
{
    for (int i = 0; i < 8; i++)
        key[i] = load32_le(key32 + 4 * i);
}

static void load_nonce(uint32_t nonce[3], const uint8_t *nonce12)
{
    for (int i = 0; i < 3; i++)
        nonce[i] = load32_le(nonce12 + 4 * i);
}

/* draft-irtf-cfrg-xchacha 2.3: subkey = HChaCha20(key, nonce[0..16]); the
 * ChaCha20 nonce is four zero bytes then nonce[16..24]. */
static void xchacha_derive(uint32_t subkey[8], uint32_t nonce[3],
                           const uint8_t *key32, const uint8_t *nonce24)
{
    uint32_t key[8], hnonce[4];

    load_key(key, key32);
    for (int i = 0; i < 4; i++)
        hnonce[i] = load32_le(nonce24 + 4 * i);
    ac_hchacha20(subkey, key, hnonce);
    nonce[0] = 0;
    nonce[1] = load32_le(nonce24 + 16);
    nonce[2] = load32_le(nonce24 + 20);
    ac_wipe(key, sizeof key);
}

static int open_words(uint8_t *pt, const uint8_t *ct, size_t ct_len,
                      const uint8_t *aad, size_t aad_len,
                      const uint32_t key[8], const uint32_t nonce[3])
{
    size_t len = ct_len - TAG_LEN;
    uint8_t expected[TAG_LEN];
    int ok;

    ac_aead_kernel(len)->open(pt, expected, ct, len, aad, aad_len, key, nonce);
    ok = ac_ct_equal(expected, ct + len, TAG_LEN);
    ac_wipe(expected, sizeof expected);
    AC_DECLASSIFY(&ok, sizeof ok);
    if (!ok) {
        /* Release nothing decrypted under a forged tag. */
        ac_wipe(pt, len);
        return ARCHCRYPT_ERR_AUTHENTICATION;
    }
    return ARCHCRYPT_OK;
}

/* Checks shared by both nonce sizes, done before any key material is touched. */
static int check_seal(size_t len)
{
    return ac_chacha20_len_ok(len, FIRST_MESSAGE_BLOCK) ? ARCHCRYPT_OK : ARCHCRYPT_ERR_MESSAGE_TOO_LONG;
}

static int check_open(size_t ct_len)
{
    if (ct_len < TAG_LEN)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return check_seal(ct_len - TAG_LEN);
}

int archcrypt_chacha20poly1305_seal(uint8_t *ct, const uint8_t *pt, size_t len,
                                    const uint8_t *aad, size_t aad_len,
                                    const uint8_t *key32, const uint8_t *nonce12)
{
    uint32_t key[8], nonce[3];
    int rc = check_seal(len);

    if (rc != ARCHCRYPT_OK)
        return rc;
    load_key(key, key32);
    load_nonce(nonce, nonce12);
    ac_aead_kernel(len)->seal(ct, ct + len, pt, len, aad, aad_len, key, nonce);
    ac_wipe(key, sizeof key);
    return ARCHCRYPT_OK;
}

int archcrypt_chacha20poly1305_open(uint8_t *pt, const uint8_t *ct, size_t ct_len,
                                    const uint8_t *aad, size_t aad_len,
                                    const uint8_t *key32, const uint8_t *nonce12)
{
    uint32_t key[8], nonce[3];
    int rc = check_open(ct_len);

    if (rc != ARCHCRYPT_OK)
        return rc;
    load_key(key, key32);
    load_nonce(nonce, nonce12);
    rc = open_words(pt, ct, ct_len, aad, aad_len, key, nonce);
    ac_wipe(key, sizeof key);
    return rc;
}

int archcrypt_xchacha20poly1305_seal(uint8_t *ct, const uint8_t *pt, size_t len,
                                     const uint8_t *aad, size_t aad_len,
                                     const uint8_t *key32, const uint8_t *nonce24)
{
    uint32_t subkey[8], nonce[3];
    int rc = check_seal(len);

    if (rc != ARCHCRYPT_OK)
        return rc;
    xchacha_derive(subkey, nonce, key32, nonce24);
    ac_aead_kernel(len)->seal(ct, ct + len, pt, len, aad, aad_len, subkey, nonce);
    ac_wipe(subkey, sizeof subkey);
    return ARCHCRYPT_OK;
}

int archcrypt_xchacha20poly1305_open(uint8_t *pt, const uint8_t *ct, size_t ct_len,
                                     const uint8_t *aad, size_t aad_len,
                                     const uint8_t *key32, const uint8_t *nonce24)
{
    uint32_t subkey[8], nonce[3];
    int rc = check_open(ct_len);

    if (rc != ARCHCRYPT_OK)
        return rc;
    xchacha_derive(subkey, nonce, key32, nonce24);
    rc = open_words(pt, ct, ct_len, aad, aad_len, subkey, nonce);
    ac_wipe(subkey, sizeof subkey);
    return rc;
}
