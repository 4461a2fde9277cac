/* ChaCha20-Poly1305 and XChaCha20-Poly1305 known answers through the public API (RFC 8439 2.8.2 and A.5; draft-irtf-cfrg-xchacha A.3.1). */
#include "common.h"
#include "kat.h"

#define KAT_MAX 384
#define TAG_LEN 16

typedef struct {
    const char *key;
    const char *nonce;
    const char *aad;
    const char *plaintext;
    const char *ciphertext;
    const char *tag;
} aead_vector;

static const aead_vector chacha20_poly1305_vectors[] = {
    /* RFC 8439 2.8.2: the sunscreen text */
    {
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        "070000004041424344454647",
        "50515253c0c1c2c3c4c5c6c7",
        "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
        "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
        "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
        "637265656e20776f756c642062652069742e",
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
        "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
        "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
        "3ff4def08e4b7a9de576d26586cec64b6116",
        "1ae10b594f09e26a7e902ecbd0600691",
    },
    /* RFC 8439 A.5: 265 bytes, the decryption example */
    {
        "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
        "000000000102030405060708",
        "f33388860000000000004e91",
        "496e7465726e65742d4472616674732061726520647261667420646f63756d65"
        "6e74732076616c696420666f722061206d6178696d756d206f6620736978206d"
        "6f6e74687320616e64206d617920626520757064617465642c207265706c6163"
        "65642c206f72206f62736f6c65746564206279206f7468657220646f63756d65"
        "6e747320617420616e792074696d652e20497420697320696e617070726f7072"
        "6961746520746f2075736520496e7465726e65742d4472616674732061732072"
        "65666572656e6365206d6174657269616c206f7220746f206369746520746865"
        "6d206f74686572207468616e206173202fe2809c776f726b20696e2070726f67"
        "726573732e2fe2809d",
        "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2"
        "4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf"
        "332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855"
        "9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4"
        "b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e"
        "af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a"
        "0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10"
        "49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29"
        "a6ad5cb4022b02709b",
        "eead9d67890cbb22392336fea1851f38",
    },
    /* Empty message and AAD (BoringSSL's vectors, via cryptography_vectors
     * ChaCha20Poly1305/boringssl.txt #7) */
    {
        "9a97f65b9b4c721b960a672145fca8d4e32e67f9111ea979ce9c4826806aeee6",
        "000000003de9c0da2bd7f91e",
        "",
        "",
        "",
        "5a6e21f4ba6dbee57380e79e79c30def",
    },
};

static const aead_vector xchacha20_poly1305_vectors[] = {
    /* draft-irtf-cfrg-xchacha A.3.1 */
    {
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        "404142434445464748494a4b4c4d4e4f5051525354555657",
        "50515253c0c1c2c3c4c5c6c7",
        "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
        "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
        "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
        "637265656e20776f756c642062652069742e",
        "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
        "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
        "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
        "21f9664c97637da9768812f615c68b13b52e",
        "c0875924c1c7987947deafd8780acf49",
    },
};

typedef int (*seal_fn)(uint8_t *ct, const uint8_t *pt, size_t len, const uint8_t *aad, size_t aad_len,
                       const uint8_t *key32, const uint8_t *nonce);
typedef int (*open_fn)(uint8_t *pt, const uint8_t *ct, size_t ct_len, const uint8_t *aad, size_t aad_len,
                       const uint8_t *key32, const uint8_t *nonce);

typedef struct {
    uint8_t key[32], nonce[24], aad[KAT_MAX], pt[KAT_MAX], sealed[KAT_MAX + TAG_LEN];
    size_t nonce_len, aad_len, len;
} decoded;

static int decode(decoded *d, const aead_vector *v)
{
    uint8_t tag[TAG_LEN];

    d->nonce_len = ac_unhex(d->nonce, sizeof d->nonce, v->nonce);
    d->aad_len = ac_unhex(d->aad, sizeof d->aad, v->aad);
    d->len = ac_unhex(d->pt, sizeof d->pt, v->plaintext);
    if (ac_unhex(d->key, sizeof d->key, v->key) != sizeof d->key ||
        ac_unhex(d->sealed, KAT_MAX, v->ciphertext) != d->len ||
        ac_unhex(tag, sizeof tag, v->tag) != sizeof tag)
        return 0;
    memcpy(d->sealed + d->len, tag, sizeof tag);
    return 1;
}

/* Seal must give the published ciphertext and tag, and open must give back the
 * plaintext. Empty inputs go in as NULL pointers, which the API accepts. */
static int check_vector(const aead_vector *v, size_t nonce_len, seal_fn seal, open_fn open)
{
    decoded d;
    uint8_t out[KAT_MAX + TAG_LEN];

    memset(&d, 0, sizeof d);
    if (!decode(&d, v) || d.nonce_len != nonce_len)
        return 0;

    const uint8_t *aad = d.aad_len > 0 ? d.aad : NULL;
    const uint8_t *pt = d.len > 0 ? d.pt : NULL;
    uint8_t *pt_out = d.len > 0 ? out : NULL;

    if (seal(out, pt, d.len, aad, d.aad_len, d.key, d.nonce) != ARCHCRYPT_OK ||
        memcmp(out, d.sealed, d.len + TAG_LEN) != 0)
        return 0;
    if (open(pt_out, d.sealed, d.len + TAG_LEN, aad, d.aad_len, d.key, d.nonce) != ARCHCRYPT_OK ||
        (d.len > 0 && memcmp(out, d.pt, d.len) != 0))
        return 0;
    return 1;
}

/* A forged tag on the longest vector: refused, and no plaintext released. A
 * ciphertext shorter than a tag is a caller error, not a forgery. */
static int check_failures(const aead_vector *v, size_t nonce_len, open_fn open)
{
    decoded d;
    uint8_t out[KAT_MAX];

    memset(&d, 0, sizeof d);
    if (!decode(&d, v) || d.nonce_len != nonce_len || d.len == 0)
        return 0;

    d.sealed[d.len + TAG_LEN - 1] ^= 0x01;
    memset(out, 0xa5, sizeof out);
    if (open(out, d.sealed, d.len + TAG_LEN, d.aad, d.aad_len, d.key, d.nonce) != ARCHCRYPT_ERR_AUTHENTICATION)
        return 0;
    for (size_t i = 0; i < d.len; i++)
        if (out[i] != 0)
            return 0;

    if (open(out, d.sealed, TAG_LEN - 1, d.aad, d.aad_len, d.key, d.nonce) != ARCHCRYPT_ERR_INVALID_ARGUMENT)
        return 0;
    return 1;
}

int ac_kat_chacha20_poly1305(void)
{
    for (size_t i = 0; i < sizeof chacha20_poly1305_vectors / sizeof chacha20_poly1305_vectors[0]; i++)
        if (!check_vector(&chacha20_poly1305_vectors[i], 12,
                          archcrypt_chacha20poly1305_seal, archcrypt_chacha20poly1305_open))
            return ARCHCRYPT_ERR_SELFTEST;
    for (size_t i = 0; i < sizeof xchacha20_poly1305_vectors / sizeof xchacha20_poly1305_vectors[0]; i++)
        if (!check_vector(&xchacha20_poly1305_vectors[i], 24,
                          archcrypt_xchacha20poly1305_seal, archcrypt_xchacha20poly1305_open))
            return ARCHCRYPT_ERR_SELFTEST;
    /* A.5 (index 1) is the longest IETF vector. */
    if (!check_failures(&chacha20_poly1305_vectors[1], 12, archcrypt_chacha20poly1305_open) ||
        !check_failures(&xchacha20_poly1305_vectors[0], 24, archcrypt_xchacha20poly1305_open))
        return ARCHCRYPT_ERR_SELFTEST;
    return ARCHCRYPT_OK;
}
