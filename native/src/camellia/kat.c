/* Camellia known answers: RFC 3713 Appendix A (128, 192, 256-bit keys), encrypt and decrypt, via the public API. */

#include <string.h>

#include "archcrypt.h"
#include "kat.h"

/* Appendix A's three keys are prefixes of this one. */
static const uint8_t kat_key[32] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};

static const uint8_t kat_plaintext[16] = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
};

static const struct {
    size_t key_len;
    uint8_t ciphertext[16];
} kat_vectors[] = {
    { 16, { 0x67, 0x67, 0x31, 0x38, 0x54, 0x96, 0x69, 0x73,
            0x08, 0x57, 0x06, 0x56, 0x48, 0xea, 0xbe, 0x43 } },
    { 24, { 0xb4, 0x99, 0x34, 0x01, 0xb3, 0xe9, 0x96, 0xf8,
            0x4e, 0xe5, 0xce, 0xe7, 0xd7, 0x9b, 0x09, 0xb9 } },
    { 32, { 0x9a, 0xcc, 0x23, 0x7d, 0xff, 0x16, 0xd7, 0x6c,
            0x20, 0xef, 0x7c, 0x91, 0x9e, 0x3a, 0x75, 0x09 } },
};

/* The vector repeated over more blocks than the widest SIMD batch (64), with a
 * ragged tail, so a wide kernel's main loop is checked as well as its tail. It
 * cannot catch blocks landing in the wrong lane; the differential tests do. */
#define KAT_BLOCKS 67

static int every_block_is(const uint8_t *buf, const uint8_t want[16])
{
    for (size_t i = 0; i < KAT_BLOCKS; i++)
        if (memcmp(buf + 16 * i, want, 16) != 0)
            return 0;
    return 1;
}

static int kat_one(archcrypt_camellia_key *key, const uint8_t ct[16])
{
    uint8_t block[16];
    uint8_t many[16 * KAT_BLOCKS];

    /* One block, out of place. */
    if (archcrypt_camellia_ecb_encrypt(key, block, kat_plaintext, 16) != ARCHCRYPT_OK ||
        memcmp(block, ct, 16) != 0)
        return 0;
    if (archcrypt_camellia_ecb_decrypt(key, block, ct, 16) != ARCHCRYPT_OK ||
        memcmp(block, kat_plaintext, 16) != 0)
        return 0;

    /* Many blocks, in place. */
    for (size_t i = 0; i < KAT_BLOCKS; i++)
        memcpy(many + 16 * i, kat_plaintext, 16);
    if (archcrypt_camellia_ecb_encrypt(key, many, many, sizeof many) != ARCHCRYPT_OK ||
        !every_block_is(many, ct))
        return 0;
    if (archcrypt_camellia_ecb_decrypt(key, many, many, sizeof many) != ARCHCRYPT_OK ||
        !every_block_is(many, kat_plaintext))
        return 0;
    return 1;
}

int ac_kat_camellia(void)
{
    for (size_t i = 0; i < sizeof kat_vectors / sizeof kat_vectors[0]; i++) {
        archcrypt_camellia_key *key = archcrypt_camellia_new(kat_key, kat_vectors[i].key_len);
        int ok;

        if (key == NULL)
            return ARCHCRYPT_ERR_SELFTEST;
        ok = kat_one(key, kat_vectors[i].ciphertext);
        archcrypt_camellia_free(key);
        if (!ok)
            return ARCHCRYPT_ERR_SELFTEST;
    }
    return ARCHCRYPT_OK;
}
