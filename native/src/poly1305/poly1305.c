/* Poly1305 front: 16-byte buffering over a kernel's block function, the public one-shot API, and the streaming API with the gathering a kernel asks for (RFC 8439 2.5). */
#include <stddef.h>
#include <stdlib.h>

#include "common.h"
#include "dispatch.h"
#include "poly1305/poly1305.h"

void ac_poly1305_init(ac_poly1305 *p, const poly1305_kernel *k, const uint8_t key[32])
{
    p->k = k;
    p->buf_len = 0;
    p->finished = 0;
    k->init(&p->st, key);
}

void ac_poly1305_update(ac_poly1305 *p, const uint8_t *in, size_t len)
{
    /* Also keeps memcpy away from a NULL `in` with len 0. */
    if (len == 0)
        return;

    if (p->buf_len > 0) {
        size_t want = 16 - p->buf_len;
        size_t n = len < want ? len : want;

        memcpy(p->buf + p->buf_len, in, n);
        p->buf_len += n;
        in += n;
        len -= n;
        if (p->buf_len < 16)
            return;
        p->k->blocks(&p->st, p->buf, 16, 1);
        p->buf_len = 0;
    }

    /* Whole blocks straight from the caller's buffer: kernels go fastest on long runs. */
    size_t bulk = len & ~(size_t)15;
    if (bulk > 0) {
        p->k->blocks(&p->st, in, bulk, 1);
        in += bulk;
        len -= bulk;
    }

    if (len > 0) {
        memcpy(p->buf, in, len);
        p->buf_len = len;
    }
}

void ac_poly1305_final(ac_poly1305 *p, uint8_t tag[16])
{
    /* RFC 8439 2.5.1: a short last block gets a 0x01 byte after it instead of the
     * 2^128 term, then zeros up to 16 bytes. */
    if (p->buf_len > 0) {
        p->buf[p->buf_len] = 1;
        memset(p->buf + p->buf_len + 1, 0, 16 - p->buf_len - 1);
        p->k->blocks(&p->st, p->buf, 16, 0);
    }
    size_t used = p->k->used(&p->st);
    p->k->finish(&p->st, tag);

    /* A short message leaves only the head: a constant size the compiler turns into a
     * few stores instead of a memset call. */
    if (used <= 64)
        ac_wipe(&p->st, 64);
    else
        ac_wipe(&p->st, used);
    ac_wipe(p->buf, sizeof p->buf);
    p->buf_len = 0;
    p->finished = 1;
}

/* ---- public API ---------------------------------------------------------- */

static void poly1305_oneshot(const poly1305_kernel *k, uint8_t tag[16],
                             const uint8_t *msg, size_t len, const uint8_t key[32])
{
    ac_poly1305 p;

    ac_poly1305_init(&p, k, key);
    ac_poly1305_update(&p, msg, len);
    ac_poly1305_final(&p, tag);
}

int archcrypt_poly1305(uint8_t *tag16, const uint8_t *msg, size_t len, const uint8_t *key32)
{
    const poly1305_kernel *k = ac_poly1305_kernel();

    poly1305_oneshot(k, tag16, msg, len, key32);
    return ARCHCRYPT_OK;
}

int archcrypt_poly1305_verify(const uint8_t *tag16, const uint8_t *msg, size_t len, const uint8_t *key32)
{
    const poly1305_kernel *k = ac_poly1305_kernel();
    uint8_t expected[16];
    int ok;

    poly1305_oneshot(k, expected, msg, len, key32);
    ok = ac_ct_equal(expected, tag16, 16);
    ac_wipe(expected, sizeof expected);
    return ok;
}

/* The kernel is captured at new(): a thread override that changes later cannot
 * switch a half-absorbed state to a kernel with a different state layout. A kernel
 * that asks for it (`gather`) gets its input in pieces of that size, the way Go's
 * s390x MAC buffers 256 bytes for its vector code: short writes are collected in `buf`
 * and long ones go straight through. */
struct archcrypt_poly1305_ctx {
    ac_poly1305 p;
    size_t gather;   /* the kernel's, or 0 */
    size_t gathered; /* bytes in buf, < gather */
    size_t high;     /* most bytes buf has held: what final wipes */
    uint8_t buf[AC_POLY1305_GATHER_MAX];
};

archcrypt_poly1305_ctx *archcrypt_poly1305_new(const uint8_t *key32)
{
    const poly1305_kernel *k = ac_poly1305_kernel();
    archcrypt_poly1305_ctx *ctx;

    /* poly1305_state is 64-byte aligned for SIMD kernels; malloc promises less.
     * The size of a 64-byte-aligned struct is a multiple of 64, as C11 asks. */
    ctx = aligned_alloc(_Alignof(archcrypt_poly1305_ctx), sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ac_poly1305_init(&ctx->p, k, key32);
    ctx->gather = k->gather;
    ctx->gathered = 0;
    ctx->high = 0;
    return ctx;
}

static void gather_into(archcrypt_poly1305_ctx *ctx, const uint8_t *msg, size_t len)
{
    memcpy(ctx->buf + ctx->gathered, msg, len);
    ctx->gathered += len;
    if (ctx->gathered > ctx->high)
        ctx->high = ctx->gathered;
}

static void stream(archcrypt_poly1305_ctx *ctx, const uint8_t *msg, size_t len)
{
    const size_t g = ctx->gather;

    if (g == 0) {
        ac_poly1305_update(&ctx->p, msg, len);
        return;
    }
    if (len == 0)
        return;
    if (ctx->gathered + len < g) {
        gather_into(ctx, msg, len);
        return;
    }
    if (ctx->gathered > 0) {
        size_t take = g - ctx->gathered;

        gather_into(ctx, msg, take);
        ac_poly1305_update(&ctx->p, ctx->buf, g);
        ctx->gathered = 0;
        msg += take;
        len -= take;
    }
    /* At least a gather's worth left: every whole block now, only the tail waits. */
    if (len >= g) {
        size_t bulk = len & ~(size_t)15;

        ac_poly1305_update(&ctx->p, msg, bulk);
        msg += bulk;
        len -= bulk;
    }
    if (len > 0)
        gather_into(ctx, msg, len);
}

int archcrypt_poly1305_update(archcrypt_poly1305_ctx *ctx, const uint8_t *msg, size_t len)
{
    if (ctx == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    if (ctx->p.finished)
        return ARCHCRYPT_ERR_STATE;
    stream(ctx, msg, len);
    return ARCHCRYPT_OK;
}

int archcrypt_poly1305_final(archcrypt_poly1305_ctx *ctx, uint8_t *tag16)
{
    if (ctx == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    if (ctx->p.finished)
        return ARCHCRYPT_ERR_STATE;
    if (ctx->gathered > 0)
        ac_poly1305_update(&ctx->p, ctx->buf, ctx->gathered);
    ac_poly1305_final(&ctx->p, tag16);
    ac_wipe(ctx->buf, ctx->high);
    ctx->gathered = ctx->high = 0;
    return ARCHCRYPT_OK;
}

void archcrypt_poly1305_free(archcrypt_poly1305_ctx *ctx)
{
    if (ctx == NULL)
        return;
    ac_wipe(ctx->buf, ctx->high);
    ac_wipe(ctx, offsetof(archcrypt_poly1305_ctx, buf));
    free(ctx);
}
