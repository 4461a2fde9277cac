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

/* The batch API over all vectors of one hash in one call, each vector twice, so a
 * multi-lane row runs every lane and refills lanes with messages of other lengths. */
static int many_ok(const ac_hash_vector *v, size_t count, int id)
{
    enum { MAX_BATCH = 32 };
    const uint8_t *msgs[MAX_BATCH];
    size_t lens[MAX_BATCH], want[MAX_BATCH], n = 0;
    uint8_t got[MAX_BATCH * 64];
    const size_t ds = archcrypt_hash_digest_size(id);

    for (int rep = 0; rep < 2; rep++)
        for (size_t i = 0; i < count && n < MAX_BATCH; i++)
            if (v[i].hash_id == id) {
                msgs[n] = (const uint8_t *)v[i].msg;
                lens[n] = strlen(v[i].msg);
                want[n++] = i;
            }
    if (n == 0)
        return 1;
    if (archcrypt_hash_many(id, n, msgs, lens, got) != ARCHCRYPT_OK)
        return 0;
    for (size_t m = 0; m < n; m++)
        if (memcmp(got + m * ds, v[want[m]].digest, ds) != 0)
            return 0;
    return 1;
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
    for (int id = ARCHCRYPT_SHA224; id <= ARCHCRYPT_SHA512; id++)
        if (!many_ok(hash_vectors, hash_count, id))
            return ARCHCRYPT_ERR_SELFTEST;

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
