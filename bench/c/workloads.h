/* The C benchmarks' one workload table: each operation, per message, as archcrypt runs it
 * and as each library a user would pick instead runs it (OpenSSL 3 EVP, libsodium,
 * libgcrypt). Included by bench/c/bench.c (archcrypt's rows), bench/c/peers.c (all four
 * libraries side by side) and bench/insn/harness.c (one library per build, under qemu).
 *
 * The includer defines which libraries it links before including:
 *   BENCH_ARCHCRYPT, BENCH_OPENSSL, BENCH_SODIUM, BENCH_GCRYPT
 * then fills B (buffers, key, nonce) and calls bench_setup() once. Every call reads its
 * message from B.in and writes to B.out; keys and contexts are made once, as a server
 * reusing them per thread would, and re-keyed per message where the API asks for it.
 * A new operation is one row of `workloads` plus its call in each library below. */
#ifndef ARCHCRYPT_BENCH_WORKLOADS_H
#define ARCHCRYPT_BENCH_WORKLOADS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(BENCH_ARCHCRYPT)
#include "archcrypt.h"
#endif
#if defined(BENCH_OPENSSL)
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif
#if defined(BENCH_SODIUM)
#include <sodium.h>
#endif
#if defined(BENCH_GCRYPT)
#include <gcrypt.h>
#endif

typedef enum { W_CHACHA20, W_POLY1305, W_AEAD, W_SHA256, W_SHA512, W_CAMELLIA, W_COUNT } workload;

static const struct {
    const char *operation;  /* on command lines and in bench/insn's tables */
    const char *algorithm;  /* archcrypt's dispatch table, and the peer tables' heading */
    const char *title;
    size_t out_extra;       /* output: len + out_extra bytes (len_out), else out_extra */
    int len_out;
    size_t unit;            /* message lengths are multiples of this */
} workloads[W_COUNT] = {
    [W_CHACHA20] = {"chacha20", "chacha20",
                    "ChaCha20 (RFC 8439 keystream XOR, counter 1, out of place)", 0, 1, 1},
    [W_POLY1305] = {"poly1305", "poly1305", "Poly1305 (one-time key per message)", 16, 0, 1},
    [W_AEAD] = {"chacha20-poly1305", "chacha20-poly1305",
                "ChaCha20-Poly1305 seal (RFC 8439, no AAD, key and nonce per call)", 16, 1, 1},
    [W_SHA256] = {"sha256", "sha256", "SHA-256 (one-shot)", 32, 0, 1},
    [W_SHA512] = {"sha512", "sha512", "SHA-512 (one-shot)", 64, 0, 1},
    [W_CAMELLIA] = {"camellia-128-ecb", "camellia",
                    "Camellia-128 ECB encrypt (key schedule once, out of place)", 0, 1, 16},
};

/* The workload of an operation or algorithm name, W_COUNT when unknown. */
static inline workload workload_named(const char *name)
{
    for (int w = 0; w < W_COUNT; w++)
        if (strcmp(name, workloads[w].operation) == 0 || strcmp(name, workloads[w].algorithm) == 0)
            return (workload)w;
    return W_COUNT;
}

/* What every call reads and writes. iv16 is the 16-byte IV of OpenSSL's and libgcrypt's
 * ChaCha20: a 32-bit little-endian block counter (1), then the nonce; bench_set_nonce
 * keeps the two in step. */
static struct {
    uint8_t *in, *out;
    uint8_t key[32], nonce[12], iv16[16];
} B;

static inline void bench_set_nonce(const uint8_t nonce[12])
{
    memcpy(B.nonce, nonce, 12);
    B.iv16[0] = 1;
    memset(B.iv16 + 1, 0, 3);
    memcpy(B.iv16 + 4, nonce, 12);
}

static void bench_die(const char *what)
{
    fprintf(stderr, "bench: %s failed\n", what);
    exit(2);
}

typedef void (*bench_fn)(size_t len);

/* ---- archcrypt: the dispatch row in effect is the calling thread's ------------------ */
#if defined(BENCH_ARCHCRYPT)
static archcrypt_camellia_key *ours_camellia_key;

static void ours_chacha20(size_t n) { archcrypt_chacha20_xor(B.out, B.in, n, B.key, B.nonce, 1); }
static void ours_poly1305(size_t n) { archcrypt_poly1305(B.out, B.in, n, B.key); }
static void ours_aead(size_t n)
{
    archcrypt_chacha20poly1305_seal(B.out, B.in, n, NULL, 0, B.key, B.nonce);
}
static void ours_sha256(size_t n) { archcrypt_hash(ARCHCRYPT_SHA256, B.out, B.in, n); }
static void ours_sha512(size_t n) { archcrypt_hash(ARCHCRYPT_SHA512, B.out, B.in, n); }
static void ours_camellia(size_t n)
{
    archcrypt_camellia_ecb_encrypt(ours_camellia_key, B.out, B.in, n);
}

static const bench_fn ours_calls[W_COUNT] = {ours_chacha20, ours_poly1305, ours_aead,
                                             ours_sha256,   ours_sha512,   ours_camellia};

/* The batch API: BENCH_BATCH distinct messages of n bytes (one after another in B.in) per
 * call; B.in holds BENCH_BATCH messages of the largest size. */
#define BENCH_BATCH 8
static inline void ours_sha256_many(size_t n)
{
    const uint8_t *msgs[BENCH_BATCH];
    size_t lens[BENCH_BATCH];
    for (size_t m = 0; m < BENCH_BATCH; m++) {
        msgs[m] = B.in + m * n;
        lens[m] = n;
    }
    archcrypt_hash_many(ARCHCRYPT_SHA256, BENCH_BATCH, msgs, lens, B.out);
}

static void ours_setup(void)
{
    if (archcrypt_init() != ARCHCRYPT_OK) {
        fprintf(stderr, "bench: archcrypt_init: %s\n", archcrypt_last_error());
        exit(2);
    }
    if (!(ours_camellia_key = archcrypt_camellia_new(B.key, 16)))
        bench_die("archcrypt_camellia_new");
}
#endif

/* ---- OpenSSL 3: contexts and algorithms fetched once, no implicit fetch when timed ---- */
#if defined(BENCH_OPENSSL)
static EVP_CIPHER_CTX *ossl_chacha_ctx, *ossl_aead_ctx, *ossl_camellia_ctx;
static EVP_MAC_CTX *ossl_poly_ctx;
static EVP_MD *ossl_sha256_md, *ossl_sha512_md;
static EVP_MD_CTX *ossl_md_ctx;

static void ossl_chacha20(size_t n)
{
    int outl;
    EVP_EncryptInit_ex2(ossl_chacha_ctx, NULL, B.key, B.iv16, NULL);
    EVP_EncryptUpdate(ossl_chacha_ctx, B.out, &outl, B.in, (int)n);
}
static void ossl_poly1305(size_t n)
{
    size_t outl;
    EVP_MAC_init(ossl_poly_ctx, B.key, 32, NULL);
    EVP_MAC_update(ossl_poly_ctx, B.in, n);
    EVP_MAC_final(ossl_poly_ctx, B.out, &outl, 16);
}
static void ossl_aead(size_t n)
{
    int outl, fl;
    EVP_EncryptInit_ex2(ossl_aead_ctx, NULL, B.key, B.nonce, NULL);
    EVP_EncryptUpdate(ossl_aead_ctx, B.out, &outl, B.in, (int)n);
    EVP_EncryptFinal_ex(ossl_aead_ctx, B.out + outl, &fl);
    EVP_CIPHER_CTX_ctrl(ossl_aead_ctx, EVP_CTRL_AEAD_GET_TAG, 16, B.out + n);
}
/* EVP_Digest: OpenSSL's one-shot, the counterpart of archcrypt_hash (it sets up a digest
 * context per call, as the one-shot APIs of the other libraries do). */
static void ossl_sha256(size_t n) { EVP_Digest(B.in, n, B.out, NULL, ossl_sha256_md, NULL); }
static void ossl_sha512(size_t n) { EVP_Digest(B.in, n, B.out, NULL, ossl_sha512_md, NULL); }
/* The same with one context reused (EVP_DigestInit_ex2/Update/Final_ex): the cheapest way
 * to hash short messages with OpenSSL. */
static void ossl_sha256_ctx(size_t n)
{
    unsigned int l;
    EVP_DigestInit_ex2(ossl_md_ctx, ossl_sha256_md, NULL);
    EVP_DigestUpdate(ossl_md_ctx, B.in, n);
    EVP_DigestFinal_ex(ossl_md_ctx, B.out, &l);
}
static void ossl_sha512_ctx(size_t n)
{
    unsigned int l;
    EVP_DigestInit_ex2(ossl_md_ctx, ossl_sha512_md, NULL);
    EVP_DigestUpdate(ossl_md_ctx, B.in, n);
    EVP_DigestFinal_ex(ossl_md_ctx, B.out, &l);
}
static void ossl_camellia(size_t n)
{
    int outl;
    EVP_EncryptUpdate(ossl_camellia_ctx, B.out, &outl, B.in, (int)n);
}

static void ossl_setup(void)
{
    EVP_CIPHER *chacha = EVP_CIPHER_fetch(NULL, "ChaCha20", NULL);
    EVP_CIPHER *aead = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
    EVP_CIPHER *cam = EVP_CIPHER_fetch(NULL, "CAMELLIA-128-ECB", NULL);
    EVP_MAC *poly = EVP_MAC_fetch(NULL, "POLY1305", NULL);
    ossl_sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    ossl_sha512_md = EVP_MD_fetch(NULL, "SHA512", NULL);
    if (!chacha || !aead || !cam || !poly || !ossl_sha256_md || !ossl_sha512_md)
        bench_die("OpenSSL: fetching an algorithm");
    ossl_chacha_ctx = EVP_CIPHER_CTX_new();
    ossl_aead_ctx = EVP_CIPHER_CTX_new();
    ossl_camellia_ctx = EVP_CIPHER_CTX_new();
    ossl_poly_ctx = EVP_MAC_CTX_new(poly);
    ossl_md_ctx = EVP_MD_CTX_new();
    if (!ossl_chacha_ctx || !ossl_aead_ctx || !ossl_camellia_ctx || !ossl_poly_ctx ||
        !ossl_md_ctx || !EVP_EncryptInit_ex2(ossl_chacha_ctx, chacha, B.key, B.iv16, NULL) ||
        !EVP_EncryptInit_ex2(ossl_aead_ctx, aead, B.key, B.nonce, NULL) ||
        !EVP_EncryptInit_ex2(ossl_camellia_ctx, cam, B.key, NULL, NULL) ||
        !EVP_CIPHER_CTX_set_padding(ossl_camellia_ctx, 0))
        bench_die("OpenSSL set-up");
    EVP_CIPHER_free(chacha);
    EVP_CIPHER_free(aead);
    EVP_CIPHER_free(cam);
    EVP_MAC_free(poly);
}
#endif

/* ---- libsodium --------------------------------------------------------------------- */
#if defined(BENCH_SODIUM)
static void na_chacha20(size_t n)
{
    crypto_stream_chacha20_ietf_xor_ic(B.out, B.in, n, B.nonce, 1, B.key);
}
static void na_poly1305(size_t n) { crypto_onetimeauth_poly1305(B.out, B.in, n, B.key); }
static void na_aead(size_t n)
{
    unsigned long long clen;
    crypto_aead_chacha20poly1305_ietf_encrypt(B.out, &clen, B.in, n, NULL, 0, NULL, B.nonce, B.key);
}
static void na_sha256(size_t n) { crypto_hash_sha256(B.out, B.in, n); }
static void na_sha512(size_t n) { crypto_hash_sha512(B.out, B.in, n); }

static void na_setup(void)
{
    if (sodium_init() < 0)
        bench_die("sodium_init");
}
#endif

/* ---- libgcrypt: handles opened once, key and IV set per message ----------------------- */
#if defined(BENCH_GCRYPT)
static gcry_cipher_hd_t gc_chacha_hd, gc_aead_hd, gc_camellia_hd;
static gcry_mac_hd_t gc_poly_hd;

static void gc_chacha20(size_t n)
{
    gcry_cipher_setkey(gc_chacha_hd, B.key, 32);
    gcry_cipher_setiv(gc_chacha_hd, B.iv16, 16);
    gcry_cipher_encrypt(gc_chacha_hd, B.out, n, B.in, n);
}
static void gc_poly1305(size_t n)
{
    size_t tl = 16;
    gcry_mac_setkey(gc_poly_hd, B.key, 32);
    gcry_mac_write(gc_poly_hd, B.in, n);
    gcry_mac_read(gc_poly_hd, B.out, &tl);
}
static void gc_aead(size_t n)
{
    gcry_cipher_setkey(gc_aead_hd, B.key, 32);
    gcry_cipher_setiv(gc_aead_hd, B.nonce, 12);
    gcry_cipher_final(gc_aead_hd);
    gcry_cipher_encrypt(gc_aead_hd, B.out, n, B.in, n);
    gcry_cipher_gettag(gc_aead_hd, B.out + n, 16);
}
static void gc_sha256(size_t n) { gcry_md_hash_buffer(GCRY_MD_SHA256, B.out, B.in, n); }
static void gc_sha512(size_t n) { gcry_md_hash_buffer(GCRY_MD_SHA512, B.out, B.in, n); }
static void gc_camellia(size_t n) { gcry_cipher_encrypt(gc_camellia_hd, B.out, n, B.in, n); }

static void gc_setup(void)
{
    if (!gcry_check_version(NULL))
        bench_die("gcry_check_version");
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    if (gcry_cipher_open(&gc_chacha_hd, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_STREAM, 0) ||
        gcry_cipher_open(&gc_aead_hd, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305, 0) ||
        gcry_cipher_open(&gc_camellia_hd, GCRY_CIPHER_CAMELLIA128, GCRY_CIPHER_MODE_ECB, 0) ||
        gcry_mac_open(&gc_poly_hd, GCRY_MAC_POLY1305, 0, NULL) ||
        gcry_cipher_setkey(gc_camellia_hd, B.key, 16))
        bench_die("libgcrypt: opening a handle");
}
#endif

/* ---- the peers, as rows: per workload, the library and the API timed ------------------ */

typedef enum { LIB_ARCHCRYPT, LIB_OPENSSL, LIB_SODIUM, LIB_GCRYPT, LIB_COUNT } library;
static const char *const library_names[LIB_COUNT] = {"archcrypt", "OpenSSL", "libsodium",
                                                     "libgcrypt"};

static const struct peer_row {
    workload w;
    library lib;
    const char *api;
    bench_fn fn;
} peer_rows[] = {
#if defined(BENCH_OPENSSL)
    {W_CHACHA20, LIB_OPENSSL, "EVP_chacha20", ossl_chacha20},
    {W_POLY1305, LIB_OPENSSL, "EVP_MAC POLY1305", ossl_poly1305},
    {W_AEAD, LIB_OPENSSL, "EVP_chacha20_poly1305", ossl_aead},
    {W_SHA256, LIB_OPENSSL, "EVP_Digest", ossl_sha256},
    {W_SHA256, LIB_OPENSSL, "EVP_DigestInit_ex2/Update/Final, ctx reused", ossl_sha256_ctx},
    {W_SHA512, LIB_OPENSSL, "EVP_Digest", ossl_sha512},
    {W_SHA512, LIB_OPENSSL, "EVP_DigestInit_ex2/Update/Final, ctx reused", ossl_sha512_ctx},
    {W_CAMELLIA, LIB_OPENSSL, "EVP_camellia_128_ecb", ossl_camellia},
#endif
#if defined(BENCH_SODIUM)
    /* libsodium has no Camellia. */
    {W_CHACHA20, LIB_SODIUM, "crypto_stream_chacha20_ietf_xor_ic", na_chacha20},
    {W_POLY1305, LIB_SODIUM, "crypto_onetimeauth_poly1305", na_poly1305},
    {W_AEAD, LIB_SODIUM, "crypto_aead_chacha20poly1305_ietf_encrypt", na_aead},
    {W_SHA256, LIB_SODIUM, "crypto_hash_sha256", na_sha256},
    {W_SHA512, LIB_SODIUM, "crypto_hash_sha512", na_sha512},
#endif
#if defined(BENCH_GCRYPT)
    {W_CHACHA20, LIB_GCRYPT, "gcry_cipher CHACHA20 STREAM", gc_chacha20},
    {W_POLY1305, LIB_GCRYPT, "gcry_mac POLY1305", gc_poly1305},
    {W_AEAD, LIB_GCRYPT, "gcry_cipher CHACHA20 POLY1305", gc_aead},
    {W_SHA256, LIB_GCRYPT, "gcry_md_hash_buffer", gc_sha256},
    {W_SHA512, LIB_GCRYPT, "gcry_md_hash_buffer", gc_sha512},
    {W_CAMELLIA, LIB_GCRYPT, "gcry_cipher CAMELLIA128 ECB", gc_camellia},
#endif
    {W_COUNT, LIB_COUNT, NULL, NULL}, /* ISO C wants a row; none has W_COUNT */
};
#define N_PEER_ROWS (sizeof(peer_rows) / sizeof(peer_rows[0]) - 1)

/* Version strings of the libraries linked, e.g. "OpenSSL 3.0.15 3 Sep 2024". */
static char library_versions[LIB_COUNT][64];

/* Opens every library this file was built with; B.key and B.nonce must be set. */
static void bench_setup(void)
{
#if defined(BENCH_ARCHCRYPT)
    ours_setup();
    snprintf(library_versions[LIB_ARCHCRYPT], sizeof library_versions[0], "archcrypt %s",
             archcrypt_version());
#endif
#if defined(BENCH_OPENSSL)
    ossl_setup();
    snprintf(library_versions[LIB_OPENSSL], sizeof library_versions[0], "%s",
             OpenSSL_version(OPENSSL_VERSION));
#endif
#if defined(BENCH_SODIUM)
    na_setup();
    snprintf(library_versions[LIB_SODIUM], sizeof library_versions[0], "libsodium %s",
             sodium_version_string());
#endif
#if defined(BENCH_GCRYPT)
    gc_setup();
    snprintf(library_versions[LIB_GCRYPT], sizeof library_versions[0], "libgcrypt %s",
             gcry_check_version(NULL));
#endif
}

#endif
