/* The SHA-2 known-answer runner shared by sha256/kat.c and sha512/kat.c. */
#include <string.h>

#include "archcrypt.h"
#include "hash/kat.h"

/* One-shot, then streaming through new/update/copy/final with a split that
 * leaves the first byte in the buffer, then the after-final state rule. */
static int hash_ok(int id, const uint8_t *msg, size_t len, const uint8_t *want)
{
    const size_t n = archcrypt_hash_digest_size(id);
    const size_t head = len > 0 ? 1 : 0;
    uint8_t got[64], got_copy[64];

    if (archcrypt_hash(id, got, msg, len) != ARCHCRYPT_OK || memcmp(got, want, n) != 0)
        return 0;

    archcrypt_hash_ctx *ctx = archcrypt_hash_new(id);
    archcrypt_hash_ctx *copy = NULL;
    int ok = ctx != NULL
             && archcrypt_hash_update(ctx, msg, head) == ARCHCRYPT_OK
             && (copy = archcrypt_hash_copy(ctx)) != NULL
             && archcrypt_hash_update(ctx, msg + head, len - head) == ARCHCRYPT_OK
             && archcrypt_hash_update(copy, msg + head, len - head) == ARCHCRYPT_OK
             && archcrypt_hash_final(ctx, got) == ARCHCRYPT_OK
             && archcrypt_hash_final(copy, got_copy) == ARCHCRYPT_OK
             && memcmp(got, want, n) == 0
             && memcmp(got_copy, want, n) == 0
             && archcrypt_hash_update(ctx, msg, len) == ARCHCRYPT_ERR_STATE
             && archcrypt_hash_final(ctx, got) == ARCHCRYPT_ERR_STATE;
    archcrypt_hash_free(ctx);
    archcrypt_hash_free(copy);
    return ok;
}

/* One-shot, streaming with a split, verify of the right tag and of a wrong one. */
static int hmac_ok(int id, const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len,
                   const uint8_t *want, size_t want_len)
{
    const size_t head = len / 2;
    uint8_t got[64], bad[64];

    if (archcrypt_hmac(id, got, key, key_len, msg, len) != ARCHCRYPT_OK
        || memcmp(got, want, want_len) != 0)
        return 0;

    archcrypt_hmac_ctx *ctx = archcrypt_hmac_new(id, key, key_len);
    int ok = ctx != NULL
             && archcrypt_hmac_update(ctx, msg, head) == ARCHCRYPT_OK
             && archcrypt_hmac_update(ctx, msg + head, len - head) == ARCHCRYPT_OK
             && archcrypt_hmac_final(ctx, got) == ARCHCRYPT_OK
             && memcmp(got, want, want_len) == 0
             && archcrypt_hmac_final(ctx, got) == ARCHCRYPT_ERR_STATE;
    archcrypt_hmac_free(ctx);

    memcpy(bad, want, want_len);
    bad[want_len - 1] ^= 0x01;
    return ok
           && archcrypt_hmac_verify(id, want, want_len, key, key_len, msg, len) == 1
           && archcrypt_hmac_verify(id, bad, want_len, key, key_len, msg, len) == 0;
}

int ac_kat_sha2(const ac_hash_vector *hash_vectors, size_t hash_count,
                const ac_hmac_vector *hmac_vectors, size_t hmac_count)
{
    for (size_t i = 0; i < hash_count; i++) {
        const uint8_t *msg = (const uint8_t *)hash_vectors[i].msg;
        if (!hash_ok(hash_vectors[i].hash_id, msg, strlen(hash_vectors[i].msg),
                     (const uint8_t *)hash_vectors[i].digest))
            return ARCHCRYPT_ERR_SELFTEST;
    }

    for (size_t i = 0; i < hmac_count; i++) {
        uint8_t key[131];          /* the longest RFC 4231 key (test cases 6, 7) */
        const size_t key_len = hmac_vectors[i].key_len;
        if (hmac_vectors[i].key != NULL)
            memcpy(key, hmac_vectors[i].key, key_len);
        else
            memset(key, hmac_vectors[i].key_fill, key_len);
        if (!hmac_ok(hmac_vectors[i].hash_id, key, key_len,
                     (const uint8_t *)hmac_vectors[i].msg, strlen(hmac_vectors[i].msg),
                     (const uint8_t *)hmac_vectors[i].tag, hmac_vectors[i].tag_len))
            return ARCHCRYPT_ERR_SELFTEST;
    }

    return ARCHCRYPT_OK;
}
