/* Camellia kernel contract (RFC 3713): ECB over whole 16-byte blocks. */
#ifndef ARCHCRYPT_CAMELLIA_H
#define ARCHCRYPT_CAMELLIA_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "dispatch.h"

/* Expanded key, RFC 3713 section 2.2 names, 64-bit halves in native order.
 * 128-bit keys use k[0..17] and ke[0..3]; 192/256-bit keys use all. */
typedef struct camellia_subkeys {
    uint64_t kw[4];
    uint64_t k[24];
    uint64_t ke[6];
    unsigned key_bits;     /* 128, 192 or 256 */
} camellia_subkeys;

/* Per-key precomputation an implementation may keep in the key object (camellia.c):
 * CAMELLIA_CACHE_BYTES at CAMELLIA_CACHE_ALIGN, large enough for every implementation. */
#define CAMELLIA_CACHE_BYTES 9216
#define CAMELLIA_CACHE_ALIGN 64

typedef struct camellia_kernel {
    /* nblocks whole blocks; out == in allowed; no alignment. Constant time: no
     * secret-indexed memory access in any SIMD implementation. cache is what this
     * kernel's prepare wrote for ks, or NULL (no prepare, or the key was prepared for
     * another kernel, e.g. under a thread override): then work from ks alone. */
    void (*encrypt)(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                    const uint8_t *in, size_t nblocks);
    void (*decrypt)(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                    const uint8_t *in, size_t nblocks);
    /* Optional (NULL: none): fill cache (CAMELLIA_CACHE_BYTES, CAMELLIA_CACHE_ALIGN-aligned)
     * from ks, once, when the key is created. The key object wipes it when freed. */
    void (*prepare)(const camellia_subkeys *ks, void *cache);
} camellia_kernel;

/* One kernel per row of camellia/rows.h, defined by camellia/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const camellia_kernel archcrypt_camellia_##slug;
#include "camellia/rows.h"
#undef AC_ROW_MIN_LEN

/* The F-function with an S-box read that scans the whole table (portable.c): the key
 * schedule runs it on secret data, so no memory access may depend on the key. */
uint64_t ac_camellia_f_ct(uint64_t F_IN, uint64_t KE);

/* The subkeys in the order one direction uses them (RFC 3713 2.4: decryption runs the
 * same network with k, ke and the kw pairs reversed): round key i = 1..18 or 24, FL key
 * i = 1..4 or 6, and the whitening pair before (kw[0..1]) and after (kw[2..3]). */
static inline unsigned ac_camellia_rounds(const camellia_subkeys *ks)
{
    return ks->key_bits == 128 ? 18 : 24;
}

static inline uint64_t ac_camellia_k(const camellia_subkeys *ks, int decrypt, unsigned i)
{
    return ks->k[decrypt ? ac_camellia_rounds(ks) - i : i - 1];
}

static inline uint64_t ac_camellia_ke(const camellia_subkeys *ks, int decrypt, unsigned i)
{
    return ks->ke[decrypt ? ac_camellia_rounds(ks) / 3 - 2 - i : i - 1];
}

static inline const uint64_t *ac_camellia_kw(const camellia_subkeys *ks, int decrypt, int post)
{
    return &ks->kw[(decrypt ^ post) ? 2 : 0];
}

/* Section 2.4.2: FL and its inverse on one 64-bit half. */
static inline uint64_t ac_camellia_fl(uint64_t x, uint64_t ke)
{
    uint32_t x1 = (uint32_t)(x >> 32), x2 = (uint32_t)x;

    x2 ^= rotl32(x1 & (uint32_t)(ke >> 32), 1);
    x1 ^= x2 | (uint32_t)ke;
    return ((uint64_t)x1 << 32) | x2;
}

static inline uint64_t ac_camellia_flinv(uint64_t y, uint64_t ke)
{
    uint32_t y1 = (uint32_t)(y >> 32), y2 = (uint32_t)y;

    y1 ^= y2 | (uint32_t)ke;
    y2 ^= rotl32(y1 & (uint32_t)(ke >> 32), 1);
    return ((uint64_t)y1 << 32) | y2;
}

/* Key schedule (camellia.c), portable for every implementation. */
int ac_camellia_schedule(camellia_subkeys *ks, const uint8_t *key, size_t key_len);

#endif
