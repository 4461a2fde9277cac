/* Camellia ECB byte-sliced for x86 AVX2 + AES (RFC 3713 2.3-2.4): shared by aesni_avx2.c and vaes_avx2.c. */
#ifndef ARCHCRYPT_CAMELLIA_X86_BYTESLICE_H
#define ARCHCRYPT_CAMELLIA_X86_BYTESLICE_H

/*
 * The including file defines CAMELLIA_AESENCLAST256(x) and CAMELLIA_AESDECLAST256(x):
 * aesenclast/aesdeclast with an all-zero round key on both 128-bit lanes of a ymm
 * (VAES does it in one instruction, plain AES-NI in two plus the lane moves), then
 * CAMELLIA_X86_KERNEL(slug) to emit archcrypt_camellia_<slug>.
 *
 * Layout. A state is 16 (xmm) or 32 (ymm) blocks; vector j holds byte j of every block
 * (j = 0 the RFC's first, most significant byte), so D1 = x[0..7], D2 = x[8..15] and an
 * F-function is eight S-box vectors and the P-function's XORs. The ymm state loads 32
 * contiguous bytes per register (blocks 2r, 2r+1) and transposes each 128-bit lane on
 * its own: lane 0 carries the even blocks, lane 1 the odd, and the inverse transpose
 * puts every block back where it came from. Long inputs run two ymm states (64 blocks)
 * round by round side by side, which hides the latency between dependent rounds.
 *
 * S-boxes. s1 = post(aes_sbox(pre(x))) with pre, post affine (power8.c explains how they
 * were found); s2, s3, s4 fold their rotations into other pre/post maps. An affine map of
 * a byte is T_hi[x >> 4] ^ T_lo[x & 15]: two vpshufb. The subkey byte is folded into
 * T_lo (pre(x ^ k) = pre(x) ^ L(k) with L the linear part), so a round has no key XOR:
 * its T_lo tables are built from the subkeys into the key table below, once per key
 * (the key object's cache, camellia.h) or per call when the key has no cache for us.
 *
 * ShiftRows. aesenclast also applies ShiftRows inside each lane, which moves bytes
 * between blocks. Instead of undoing it with a vpshufb per S-box, D2 is kept with its
 * blocks in ShiftRows order all the way through: an F on D1 goes through aesenclast and
 * lands in that order, an F on D2 goes through aesdeclast (InvShiftRows, InvSubBytes)
 * and lands back in block order. aesdeclast's inverse S-box still yields s1: with
 * SubBytes(z) = A(z^-1) ^ 0x63, SubBytes(p) = A(InvSubBytes(A(p) ^ 0x63)) ^ 0x63, so
 * the "D" tables are pre and post composed with the AES affine map. FL and FL^-1 work
 * on one half each and the subkey bytes are broadcast, so neither cares about block
 * order; only the transposes pay: one vpshufb per D2 vector on the way in and out.
 * All tables were generated and checked on all 256 inputs offline; the differential
 * self-test against portable.c checks them again.
 *
 * Constant time: no memory access depends on data or key; the tail runs as one padded
 * batch (in place, or through a stack buffer), never through the table-based portable.c.
 * A per-call key table, the state scratch and the tail buffer are wiped before returning.
 */

#include <immintrin.h>

#include "common.h"
#include "camellia/byteslice_tables.h"
#include "camellia/camellia.h"

#define AC_ALIGN32 __attribute__((aligned(32)))

/* A 16-entry table as x86 vpshufb wants it (entry 0 first), repeated for both lanes. */
#define TABLE(...) {__VA_ARGS__, __VA_ARGS__}

enum {
    C_PRE1_E_HI, C_PRE4_E_HI, C_PRE1_D_HI, C_PRE4_D_HI,
    C_PRE1_E_LO, C_PRE4_E_LO, C_PRE1_D_LO, C_PRE4_D_LO,
    C_POST1_E_HI, C_POST1_E_LO, C_POST2_E_HI, C_POST2_E_LO, C_POST3_E_HI, C_POST3_E_LO,
    C_POST1_D_HI, C_POST1_D_LO, C_POST2_D_HI, C_POST2_D_LO, C_POST3_D_HI, C_POST3_D_LO,
    C_MASK0F, C_SHIFTROWS, C_INV_SHIFTROWS,
    C_COUNT
};

static const uint8_t camellia_x86_consts[C_COUNT][32] AC_ALIGN32 = {
    /* pre maps: E feed aesenclast, D feed aesdeclast; 4 = s4's (input rotated) */
    [C_PRE1_E_HI] = TABLE(CAMELLIA_PRE1_E_HI),
    [C_PRE1_E_LO] = TABLE(CAMELLIA_PRE1_E_LO),
    [C_PRE4_E_HI] = TABLE(CAMELLIA_PRE4_E_HI),
    [C_PRE4_E_LO] = TABLE(CAMELLIA_PRE4_E_LO),
    [C_PRE1_D_HI] = TABLE(CAMELLIA_PRE1_D_HI),
    [C_PRE1_D_LO] = TABLE(CAMELLIA_PRE1_D_LO),
    [C_PRE4_D_HI] = TABLE(CAMELLIA_PRE4_D_HI),
    [C_PRE4_D_LO] = TABLE(CAMELLIA_PRE4_D_LO),
    /* post maps: 1 for s1 and s4, 2 = s1 <<< 1, 3 = s1 >>> 1 */
    [C_POST1_E_HI] = TABLE(CAMELLIA_POST1_E_HI),
    [C_POST1_E_LO] = TABLE(CAMELLIA_POST1_E_LO),
    [C_POST2_E_HI] = TABLE(CAMELLIA_POST2_E_HI),
    [C_POST2_E_LO] = TABLE(CAMELLIA_POST2_E_LO),
    [C_POST3_E_HI] = TABLE(CAMELLIA_POST3_E_HI),
    [C_POST3_E_LO] = TABLE(CAMELLIA_POST3_E_LO),
    [C_POST1_D_HI] = TABLE(CAMELLIA_POST1_D_HI),
    [C_POST1_D_LO] = TABLE(CAMELLIA_POST1_D_LO),
    [C_POST2_D_HI] = TABLE(CAMELLIA_POST2_D_HI),
    [C_POST2_D_LO] = TABLE(CAMELLIA_POST2_D_LO),
    [C_POST3_D_HI] = TABLE(CAMELLIA_POST3_D_HI),
    [C_POST3_D_LO] = TABLE(CAMELLIA_POST3_D_LO),
    [C_MASK0F] = TABLE(0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f),
    /* out[i] = in[sr[i]]: where aesenclast's ShiftRows takes byte i from */
    [C_SHIFTROWS] = TABLE(0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11),
    [C_INV_SHIFTROWS] = TABLE(0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3),
};

#undef TABLE

/*
 * Key table, 16-byte vectors (a ymm batch reads each with vbroadcasti128, so a
 * vpshufb table or a broadcast byte fills both lanes), in the order one direction uses them:
 *   rk[r][j]   round r's pre-map T_lo for byte j, subkey byte folded in
 *   fl[l][j]   FL layer l: bytes 0..7 of the FL subkey, then 0..7 of the FL^-1 one,
 *              each broadcast
 *   kw[j]      bytes of kw_pre (D1 then D2), then kw_post (D2 then D1), broadcast
 * Built two entries per ymm operation, so the pairs (j, j + 1) are what the code sees.
 */
typedef struct {
    __m128i rk[24][8] AC_ALIGN32;
    __m128i fl[3][16];
    __m128i kw[32];
    unsigned rounds;       /* 18 or 24 */
} camellia_x86_keys;

AC_INLINE __m256i cload(unsigned idx)
{
    return _mm256_load_si256((const __m256i *)(const void *)camellia_x86_consts[idx]);
}

/* Bytes j and j + 1 (RFC order: 0 the most significant) of the 64-bit subkeys in the
 * qwords of kq, broadcast over lane 0 and lane 1 respectively. */
AC_INLINE __m256i bcast_pair(__m256i kq, unsigned j)
{
    return _mm256_shuffle_epi8(kq, _mm256_setr_m128i(_mm_set1_epi8((char)(7 - j)),
                                                     _mm_set1_epi8((char)(6 - j))));
}

AC_INLINE void store_pair(__m128i *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v);
}

/* pre(k) ^ pre(0): the linear part of a pre map, on every byte of kq. */
AC_INLINE __m256i pre_linear(__m256i kq, unsigned hi_idx, unsigned lo_idx)
{
    const __m256i m = cload(C_MASK0F), hi = cload(hi_idx), lo = cload(lo_idx);
    __m256i v = _mm256_xor_si256(_mm256_shuffle_epi8(lo, _mm256_and_si256(kq, m)),
                                 _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(kq, 4), m)));
    return _mm256_xor_si256(v, _mm256_shuffle_epi8(hi, _mm256_setzero_si256()));
}

static void camellia_x86_build_keys(camellia_x86_keys *kt, const camellia_subkeys *ks, int decrypt)
{
    const unsigned nk = ks->key_bits == 128 ? 18 : 24;
    const unsigned nke = nk / 3 - 2;
    const uint64_t *kw_pre = decrypt ? &ks->kw[2] : &ks->kw[0];
    const uint64_t *kw_post = decrypt ? &ks->kw[0] : &ks->kw[2];
#define K(i) (ks->k[decrypt ? nk - (i) : (i) - 1])
#define KE(i) (ks->ke[decrypt ? nke - (i) : (i) - 1])

    kt->rounds = nk;
    for (unsigned r = 0; r < nk; r++) {
        /* Even rounds read D1 (aesenclast, E maps), odd ones D2 (aesdeclast, D maps).
         * Bytes 3 and 6 use s4's pre map: pairs (2, 3) and (6, 7) blend it into one lane. */
        const unsigned odd = r & 1;
        const __m256i kq = _mm256_set1_epi64x((long long)K(r + 1));
        const unsigned lo1_idx = odd ? C_PRE1_D_LO : C_PRE1_E_LO, lo4_idx = odd ? C_PRE4_D_LO : C_PRE4_E_LO;
        const __m256i lo1 = cload(lo1_idx), lo4 = cload(lo4_idx);
        const __m256i l1 = pre_linear(kq, odd ? C_PRE1_D_HI : C_PRE1_E_HI, lo1_idx);
        const __m256i l4 = pre_linear(kq, odd ? C_PRE4_D_HI : C_PRE4_E_HI, lo4_idx);
        store_pair(&kt->rk[r][0], _mm256_xor_si256(lo1, bcast_pair(l1, 0)));
        store_pair(&kt->rk[r][2], _mm256_xor_si256(_mm256_blend_epi32(lo1, lo4, 0xf0),
                                                   bcast_pair(_mm256_blend_epi32(l1, l4, 0xf0), 2)));
        store_pair(&kt->rk[r][4], _mm256_xor_si256(lo1, bcast_pair(l1, 4)));
        store_pair(&kt->rk[r][6], _mm256_xor_si256(_mm256_blend_epi32(lo1, lo4, 0x0f),
                                                   bcast_pair(_mm256_blend_epi32(l1, l4, 0x0f), 6)));
    }
    for (unsigned l = 0; l + 1 < nk / 6; l++) {
        const __m256i a = _mm256_set1_epi64x((long long)KE(2 * l + 1));
        const __m256i b = _mm256_set1_epi64x((long long)KE(2 * l + 2));
        for (unsigned j = 0; j < 8; j += 2) {
            store_pair(&kt->fl[l][j], bcast_pair(a, j));
            store_pair(&kt->fl[l][8 + j], bcast_pair(b, j));
        }
    }
    const __m256i w0 = _mm256_set1_epi64x((long long)kw_pre[0]);
    const __m256i w1 = _mm256_set1_epi64x((long long)kw_pre[1]);
    const __m256i w2 = _mm256_set1_epi64x((long long)kw_post[0]);
    const __m256i w3 = _mm256_set1_epi64x((long long)kw_post[1]);
    for (unsigned j = 0; j < 8; j += 2) {
        store_pair(&kt->kw[j], bcast_pair(w0, j));
        store_pair(&kt->kw[8 + j], bcast_pair(w1, j));
        store_pair(&kt->kw[16 + j], bcast_pair(w2, j));
        store_pair(&kt->kw[24 + j], bcast_pair(w3, j));
    }
#undef K
#undef KE
}

/* Zero the parts of the table this key used. */
static void camellia_x86_wipe_keys(camellia_x86_keys *kt)
{
    ac_wipe_words(kt->rk, sizeof kt->rk[0] * kt->rounds);
    ac_wipe_words(kt->fl, sizeof kt->fl[0] * (kt->rounds / 6 - 1));
    ac_wipe_words(kt->kw, sizeof kt->kw);
}

/* The batch template, once for xmm and once for ymm. */
#define BS_W 128
#include "camellia/x86_byteslice_batch.h"
#undef BS_W
#define BS_W 256
#include "camellia/x86_byteslice_batch.h"
#undef BS_W

/* One call site each, so each batch size is one copy of the code. The xmm batch holds one
 * block per vector, so it takes 1..16 blocks straight from in to out: the missing ones
 * enter as zeros and are never stored. */
static __attribute__((noinline)) void camellia_x86_batch16(const camellia_x86_keys *kt, void *scratch,
                                                           uint8_t *out, const uint8_t *in,
                                                           size_t nblocks)
{
    batch_128(kt, scratch, out, in, 1, nblocks);
}

static __attribute__((noinline)) void camellia_x86_batch32(const camellia_x86_keys *kt, void *scratch,
                                                           uint8_t *out, const uint8_t *in)
{
    batch_256(kt, scratch, out, in, 1, 16);
}

static __attribute__((noinline)) void camellia_x86_batch64(const camellia_x86_keys *kt, void *scratch,
                                                           uint8_t *out, const uint8_t *in)
{
    batch_256(kt, scratch, out, in, 2, 16);
}

/* The per-key cache (camellia.h): the encryption table, then the decryption one. */
_Static_assert(2 * sizeof(camellia_x86_keys) <= CAMELLIA_CACHE_BYTES, "camellia cache too small");
_Static_assert(CAMELLIA_CACHE_ALIGN % _Alignof(camellia_x86_keys) == 0, "camellia cache misaligned");

static void camellia_x86_prepare(const camellia_subkeys *ks, void *cache)
{
    camellia_x86_keys *kt = (camellia_x86_keys *)cache;

    camellia_x86_build_keys(&kt[0], ks, 0);
    camellia_x86_build_keys(&kt[1], ks, 1);
}

/*
 * 64 blocks at a time (two interleaved ymm states); what is left goes as one batch:
 * 1..16 blocks as an xmm batch in place, 17..32 as one ymm state, 33..63 as two, the
 * ymm ones padded through buf unless exactly 32. Measured here (Zen 3, cycles per
 * batch): xmm 16 ~1090, one ymm state ~1150, two ~1830, so e.g. 20 blocks cost one ymm
 * batch rather than two xmm ones, and 40 one two-state batch rather than a ymm plus an
 * xmm one. The key table comes from the key's cache when there is one (cache != NULL),
 * else it is built here and wiped after; the scratch the states went through is wiped.
 */
static void camellia_x86_run(const camellia_subkeys *ks, const void *cache, int decrypt,
                             uint8_t *out, const uint8_t *in, size_t nblocks)
{
    camellia_x86_keys local AC_ALIGN32;
    const camellia_x86_keys *kt;
    __m256i scratch[32] AC_ALIGN32;
    size_t used = 0;       /* bytes of scratch written */

    if (nblocks == 0)
        return;
    if (cache != NULL) {
        kt = (const camellia_x86_keys *)cache + decrypt;
    } else {
        camellia_x86_build_keys(&local, ks, decrypt);
        kt = &local;
    }
    if (nblocks >= 64)
        used = sizeof scratch;
    for (; nblocks >= 64; nblocks -= 64, in += 1024, out += 1024)
        camellia_x86_batch64(kt, scratch, out, in);
    if (nblocks == 0) {
        /* all done */
    } else if (nblocks <= 16) {
        camellia_x86_batch16(kt, scratch, out, in, nblocks);
        if (used < 256)
            used = 256;
    } else if (nblocks == 32) {
        camellia_x86_batch32(kt, scratch, out, in);
        if (used < 512)
            used = 512;
    } else {
        uint8_t buf[1024] AC_ALIGN32;
        const size_t len = 16 * nblocks;
        const size_t padded = nblocks < 32 ? 512 : 1024;

        memcpy(buf, in, len);
        memset(buf + len, 0, padded - len);
        if (padded == 512)
            camellia_x86_batch32(kt, scratch, buf, buf);
        else
            camellia_x86_batch64(kt, scratch, buf, buf);
        memcpy(out, buf, len);
        ac_wipe_words(buf, padded);
        if (used < padded)
            used = padded;
    }
    if (cache == NULL)
        camellia_x86_wipe_keys(&local);
    ac_wipe_words(scratch, used);
}

#define CAMELLIA_X86_KERNEL(slug)                                                       \
    static void camellia_##slug##_encrypt(const camellia_subkeys *ks, const void *cache, \
                                          uint8_t *out, const uint8_t *in, size_t nblocks) \
    {                                                                                   \
        camellia_x86_run(ks, cache, 0, out, in, nblocks);                               \
    }                                                                                   \
    static void camellia_##slug##_decrypt(const camellia_subkeys *ks, const void *cache, \
                                          uint8_t *out, const uint8_t *in, size_t nblocks) \
    {                                                                                   \
        camellia_x86_run(ks, cache, 1, out, in, nblocks);                               \
    }                                                                                   \
    const camellia_kernel archcrypt_camellia_##slug = {                                 \
        camellia_##slug##_encrypt,                                                      \
        camellia_##slug##_decrypt,                                                      \
        camellia_x86_prepare,                                                           \
    }

#endif
