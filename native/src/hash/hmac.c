/* HMAC over SHA-2 (RFC 2104, FIPS 198-1): inner and outer states keyed once at init, constant-time verify. */
#include <stdlib.h>

#include "common.h"
#include "hash/hash.h"

/* Both states have already absorbed their padded key block, so a message costs
 * only its own blocks plus the two finalisations. They are key-equivalent:
 * whoever holds them can forge tags, hence the wiping. */
struct archcrypt_hmac_ctx {
    ac_hash_ctx inner;          /* H((K0 ^ ipad) || text) */
    ac_hash_ctx outer;          /* H((K0 ^ opad) || inner digest), fed at final */
};

static int hmac_init(archcrypt_hmac_ctx *ctx, int hash_id, const uint8_t *key, size_t key_len)
{
    int status = ac_hash_init(&ctx->inner, hash_id);
    if (status != ARCHCRYPT_OK)
        return status;

    /* RFC 2104 section 2: K0 is the key padded with zeros to the block size, or
     * H(key) padded likewise when the key is longer than a block. The outer
     * state and the key hasher start as copies of the fresh inner one, so all
     * three use the kernel captured by the one ac_hash_init. */
    const size_t bs = ctx->inner.block_size;
    uint8_t k0[AC_HASH_MAX_BLOCK];
    uint8_t pad[AC_HASH_MAX_BLOCK];

    memset(k0, 0, bs);
    ctx->outer = ctx->inner;
    if (key_len > bs) {
        ac_hash_ctx key_hash = ctx->inner;
        ac_hash_update(&key_hash, key, key_len);
        ac_hash_final(&key_hash, k0);           /* wipes key_hash */
    } else if (key_len > 0) {
        memcpy(k0, key, key_len);
    }

    for (size_t i = 0; i < bs; i++)
        pad[i] = k0[i] ^ 0x36;
    ac_hash_update(&ctx->inner, pad, bs);
    for (size_t i = 0; i < bs; i++)
        pad[i] = k0[i] ^ 0x5c;
    ac_hash_update(&ctx->outer, pad, bs);

    ac_wipe(k0, bs);
    ac_wipe(pad, bs);
    return ARCHCRYPT_OK;
}

static int hmac_final(archcrypt_hmac_ctx *ctx, uint8_t *tag)
{
    uint8_t inner_digest[AC_HASH_MAX_DIGEST];

    /* The inner state finishes first, so its mark alone says "already final". */
    int status = ac_hash_final(&ctx->inner, inner_digest);
    if (status != ARCHCRYPT_OK)
        return status;
    ac_hash_update(&ctx->outer, inner_digest, ctx->outer.digest_size);
    ac_hash_final(&ctx->outer, tag);
    ac_wipe(inner_digest, sizeof inner_digest);
    return ARCHCRYPT_OK;
}

static int key_ok(const uint8_t *key, size_t key_len)
{
    return key != NULL || key_len == 0;
}

int archcrypt_hmac(int hash_id, uint8_t *tag, const uint8_t *key, size_t key_len,
                   const uint8_t *msg, size_t len)
{
    if (tag == NULL || !key_ok(key, key_len) || (msg == NULL && len > 0))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    /* hmac_final wipes both states; a failed init never wrote to them. */
    archcrypt_hmac_ctx ctx;
    int status = hmac_init(&ctx, hash_id, key, key_len);
    if (status != ARCHCRYPT_OK)
        return status;
    ac_hash_update(&ctx.inner, msg, len);
    return hmac_final(&ctx, tag);
}

int archcrypt_hmac_many(int hash_id, const uint8_t *key, size_t key_len, size_t n,
                        const uint8_t *const *msgs, const size_t *lens, uint8_t *tags)
{
    if (!key_ok(key, key_len) || archcrypt_hash_digest_size(hash_id) == 0)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    if (n == 0)
        return ARCHCRYPT_OK;
    if (msgs == NULL || lens == NULL || tags == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++)
        if (msgs[i] == NULL && lens[i] > 0)
            return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    archcrypt_hmac_ctx ctx;
    int status = hmac_init(&ctx, hash_id, key, key_len);
    if (status != ARCHCRYPT_OK)
        return status;
    const size_t ds = ctx.inner.digest_size;
    if (!ac_hmac_many(&ctx.inner, &ctx.outer, n, msgs, lens, tags)) {
        for (size_t i = 0; i < n; i++) {
            archcrypt_hmac_ctx one = ctx;
            ac_hash_update(&one.inner, msgs[i], lens[i]);
            hmac_final(&one, tags + i * ds);    /* wipes one */
        }
    }
    ac_wipe(&ctx, sizeof ctx);
    return ARCHCRYPT_OK;
}

int archcrypt_hmac_verify(int hash_id, const uint8_t *tag, size_t tag_len,
                          const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len)
{
    /* Truncated tags are allowed down to one byte (RFC 2104 section 5 suggests
     * no fewer than half the output; that policy belongs to the caller). */
    const size_t digest_size = archcrypt_hash_digest_size(hash_id);
    if (tag == NULL || tag_len == 0 || tag_len > digest_size)
        return 0;

    uint8_t expected[AC_HASH_MAX_DIGEST];
    int ok = archcrypt_hmac(hash_id, expected, key, key_len, msg, len) == ARCHCRYPT_OK
             && ac_ct_equal(tag, expected, tag_len);
    ac_wipe(expected, sizeof expected);
    return ok;
}

archcrypt_hmac_ctx *archcrypt_hmac_new(int hash_id, const uint8_t *key, size_t key_len)
{
    if (!key_ok(key, key_len))
        return NULL;
    archcrypt_hmac_ctx *ctx = malloc(sizeof *ctx);
    if (ctx != NULL && hmac_init(ctx, hash_id, key, key_len) != ARCHCRYPT_OK) {
        free(ctx);      /* a failed init has written nothing into it */
        ctx = NULL;
    }
    return ctx;
}

int archcrypt_hmac_update(archcrypt_hmac_ctx *ctx, const uint8_t *msg, size_t len)
{
    if (ctx == NULL || (msg == NULL && len > 0))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return ac_hash_update(&ctx->inner, msg, len);
}

int archcrypt_hmac_final(archcrypt_hmac_ctx *ctx, uint8_t *tag)
{
    if (ctx == NULL || tag == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return hmac_final(ctx, tag);
}

void archcrypt_hmac_free(archcrypt_hmac_ctx *ctx)
{
    if (ctx == NULL)
        return;
    ac_wipe(ctx, sizeof *ctx);
    free(ctx);
}
