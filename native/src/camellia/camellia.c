/* Camellia key schedule (RFC 3713 section 2.2) and the public ECB API over the dispatched kernel. */

#include <stdlib.h>

#include "camellia.h"
#include "common.h"
#include "dispatch.h"

/* cache holds the precomputation of the kernel prepared_for (camellia.h), the kernel in
 * effect when the key was made, and is only allocated when that kernel has a prepare;
 * any other kernel that runs later gets NULL and builds what it needs per call. Nothing
 * is written after archcrypt_camellia_new, so a key can be shared between threads. */
struct archcrypt_camellia_key {
    camellia_subkeys ks;
    const camellia_kernel *prepared_for;
    _Alignas(CAMELLIA_CACHE_ALIGN) unsigned char cache[];   /* CAMELLIA_CACHE_BYTES or none */
};
_Static_assert(CAMELLIA_CACHE_BYTES % CAMELLIA_CACHE_ALIGN == 0, "aligned_alloc size");

/* Section 2.2: the Sigma constants. */
#define Sigma1 UINT64_C(0xA09E667F3BCC908B)
#define Sigma2 UINT64_C(0xB67AE8584CAA73B2)
#define Sigma3 UINT64_C(0xC6EF372FE94F82BE)
#define Sigma4 UINT64_C(0x54FF53A5F1D36F1C)
#define Sigma5 UINT64_C(0x10E527FADE682D1D)
#define Sigma6 UINT64_C(0xB05688C2B3E6C1FD)

/* A 128-bit key variable (KL, KR, KA, KB) as its left and right 64-bit halves. */
typedef struct {
    uint64_t l, r;
} u128;

/* (X <<< n) >> 64 and (X <<< n) & MASK64. n is a public constant in 0..127. */
static uint64_t left(u128 X, unsigned n)
{
    uint64_t a = n & 64 ? X.r : X.l, b = n & 64 ? X.l : X.r;

    n &= 63;
    return n ? (a << n) | (b >> (64 - n)) : a;
}

static uint64_t right(u128 X, unsigned n)
{
    return left(X, (n + 64) & 127);
}

int ac_camellia_schedule(camellia_subkeys *ks, const uint8_t *key, size_t key_len)
{
    u128 KL, KR, KA, KB = { 0, 0 };
    uint64_t D1, D2;

    if (key_len != 16 && key_len != 24 && key_len != 32)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    KL.l = load64_be(key);
    KL.r = load64_be(key + 8);
    if (key_len == 16) {
        KR.l = 0;
        KR.r = 0;
    } else if (key_len == 24) {
        KR.l = load64_be(key + 16);
        KR.r = ~KR.l;
    } else {
        KR.l = load64_be(key + 16);
        KR.r = load64_be(key + 24);
    }

    D1 = KL.l ^ KR.l;
    D2 = KL.r ^ KR.r;
    D2 ^= ac_camellia_f_ct(D1, Sigma1);
    D1 ^= ac_camellia_f_ct(D2, Sigma2);
    D1 ^= KL.l;
    D2 ^= KL.r;
    D2 ^= ac_camellia_f_ct(D1, Sigma3);
    D1 ^= ac_camellia_f_ct(D2, Sigma4);
    KA.l = D1;
    KA.r = D2;
    if (key_len != 16) {
        D1 = KA.l ^ KR.l;
        D2 = KA.r ^ KR.r;
        D2 ^= ac_camellia_f_ct(D1, Sigma5);
        D1 ^= ac_camellia_f_ct(D2, Sigma6);
        KB.l = D1;
        KB.r = D2;
    }

    memset(ks, 0, sizeof *ks);
    ks->key_bits = (unsigned)key_len * 8;

    /* The RFC's tables, with its 1-based names. */
#define kw(i) ks->kw[(i) - 1]
#define k(i) ks->k[(i) - 1]
#define ke(i) ks->ke[(i) - 1]
    if (key_len == 16) {
        kw(1) = left(KL, 0);     kw(2) = right(KL, 0);
        k(1) = left(KA, 0);      k(2) = right(KA, 0);
        k(3) = left(KL, 15);     k(4) = right(KL, 15);
        k(5) = left(KA, 15);     k(6) = right(KA, 15);
        ke(1) = left(KA, 30);    ke(2) = right(KA, 30);
        k(7) = left(KL, 45);     k(8) = right(KL, 45);
        k(9) = left(KA, 45);     k(10) = right(KL, 60);
        k(11) = left(KA, 60);    k(12) = right(KA, 60);
        ke(3) = left(KL, 77);    ke(4) = right(KL, 77);
        k(13) = left(KL, 94);    k(14) = right(KL, 94);
        k(15) = left(KA, 94);    k(16) = right(KA, 94);
        k(17) = left(KL, 111);   k(18) = right(KL, 111);
        kw(3) = left(KA, 111);   kw(4) = right(KA, 111);
    } else {
        kw(1) = left(KL, 0);     kw(2) = right(KL, 0);
        k(1) = left(KB, 0);      k(2) = right(KB, 0);
        k(3) = left(KR, 15);     k(4) = right(KR, 15);
        k(5) = left(KA, 15);     k(6) = right(KA, 15);
        ke(1) = left(KR, 30);    ke(2) = right(KR, 30);
        k(7) = left(KB, 30);     k(8) = right(KB, 30);
        k(9) = left(KL, 45);     k(10) = right(KL, 45);
        k(11) = left(KA, 45);    k(12) = right(KA, 45);
        ke(3) = left(KL, 60);    ke(4) = right(KL, 60);
        k(13) = left(KR, 60);    k(14) = right(KR, 60);
        k(15) = left(KB, 60);    k(16) = right(KB, 60);
        k(17) = left(KL, 77);    k(18) = right(KL, 77);
        ke(5) = left(KA, 77);    ke(6) = right(KA, 77);
        k(19) = left(KR, 94);    k(20) = right(KR, 94);
        k(21) = left(KA, 94);    k(22) = right(KA, 94);
        k(23) = left(KL, 111);   k(24) = right(KL, 111);
        kw(3) = left(KB, 111);   kw(4) = right(KB, 111);
    }
#undef kw
#undef k
#undef ke

    ac_wipe(&KL, sizeof KL);
    ac_wipe(&KR, sizeof KR);
    ac_wipe(&KA, sizeof KA);
    ac_wipe(&KB, sizeof KB);
    ac_wipe(&D1, sizeof D1);
    ac_wipe(&D2, sizeof D2);
    return ARCHCRYPT_OK;
}

archcrypt_camellia_key *archcrypt_camellia_new(const uint8_t *key, size_t key_len)
{
    archcrypt_camellia_key *ctx;
    const camellia_kernel *k;

    if (key == NULL)
        return NULL;
    k = ac_camellia_kernel();
    if (k != NULL && k->prepare == NULL)
        k = NULL;
    /* sizeof *ctx and the cache size are multiples of the struct's alignment, as
     * aligned_alloc wants. */
    ctx = aligned_alloc(_Alignof(archcrypt_camellia_key),
                        sizeof *ctx + (k != NULL ? CAMELLIA_CACHE_BYTES : 0));
    if (ctx == NULL)
        return NULL;
    if (ac_camellia_schedule(&ctx->ks, key, key_len) != ARCHCRYPT_OK) {   /* key_len */
        free(ctx);
        return NULL;
    }
    ctx->prepared_for = k;
    if (k != NULL)
        k->prepare(&ctx->ks, ctx->cache);
    return ctx;
}

void archcrypt_camellia_free(archcrypt_camellia_key *key)
{
    if (key == NULL)
        return;
    if (key->prepared_for != NULL)
        ac_wipe(key->cache, CAMELLIA_CACHE_BYTES);
    ac_wipe(&key->ks, sizeof key->ks);
    free(key);
}

/* The checks live here, once, so kernels see only whole blocks (camellia.h). */
static int ecb_check(const archcrypt_camellia_key *key, const uint8_t *out,
                     const uint8_t *in, size_t len)
{
    if (key == NULL || len % 16 != 0)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    if (len != 0 && (out == NULL || in == NULL))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return ARCHCRYPT_OK;
}

int archcrypt_camellia_ecb_encrypt(const archcrypt_camellia_key *key, uint8_t *out,
                                   const uint8_t *in, size_t len)
{
    int rc = ecb_check(key, out, in, len);
    const camellia_kernel *k;

    if (rc != ARCHCRYPT_OK || len == 0)
        return rc;
    k = ac_camellia_kernel();
    k->encrypt(&key->ks, k == key->prepared_for ? key->cache : NULL, out, in, len / 16);
    return ARCHCRYPT_OK;
}

int archcrypt_camellia_ecb_decrypt(const archcrypt_camellia_key *key, uint8_t *out,
                                   const uint8_t *in, size_t len)
{
    int rc = ecb_check(key, out, in, len);
    const camellia_kernel *k;

    if (rc != ARCHCRYPT_OK || len == 0)
        return rc;
    k = ac_camellia_kernel();
    k->decrypt(&key->ks, k == key->prepared_for ? key->cache : NULL, out, in, len / 16);
    return ARCHCRYPT_OK;
}
