/* Instruction-count harness: one operation, one message size, N calls, against one
 * library chosen at build time (-DLIB_ARCHCRYPT, -DLIB_GCRYPT, -DLIB_OPENSSL or
 * -DLIB_SODIUM). Run under qemu with an instruction-count plugin; bench/insn/run.py
 * subtracts a run with 0 calls (same binary, same set-up, one warm-up call) and divides
 * by the bytes processed.
 *
 *   harness OPERATION SIZE CALLS      operations: chacha20 poly1305 chacha20-poly1305
 *                                                 sha256 sha512 camellia-128-ecb
 *                                                 poly1305-stream
 *   harness rows                      (archcrypt) every dispatch row, runnable, selected
 * Exit 2 for an operation the library does not have, 1 for a failure.
 *
 * Every library is used the way bench/peers.c uses it: per message, ChaCha20 and the AEAD
 * are keyed with a fresh nonce, Poly1305 with a fresh one-time key, SHA-2 is one-shot;
 * a Camellia key is scheduled once. poly1305-stream is Go's BenchmarkWrite64/Write1K:
 * one MAC, keyed once, CALLS writes of SIZE bytes (the tag is taken after the last, in
 * the empty run too). archcrypt's rows are chosen with ARCHCRYPT_FORCE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(LIB_ARCHCRYPT)
#include "archcrypt.h"
#elif defined(LIB_GCRYPT)
#include <gcrypt.h>
#elif defined(LIB_OPENSSL)
#include <openssl/core_names.h>
#include <openssl/evp.h>
#elif defined(LIB_SODIUM)
#include <sodium.h>
#else
#error "define LIB_ARCHCRYPT, LIB_GCRYPT, LIB_OPENSSL or LIB_SODIUM"
#endif

enum op { CHACHA20, POLY1305, AEAD, SHA256, SHA512, CAMELLIA, POLY1305_STREAM, N_OPS };
static const char *const op_names[N_OPS] = {
    "chacha20", "poly1305", "chacha20-poly1305", "sha256", "sha512", "camellia-128-ecb",
    "poly1305-stream",
};

static uint8_t key[32], nonce[12];
static uint8_t *in, *out;
static volatile uint8_t sink;

static void fail(const char *what)
{
    fprintf(stderr, "harness: %s failed\n", what);
    exit(1);
}

/* ---- one message through each library -------------------------------------------- */

#if defined(LIB_ARCHCRYPT)
static archcrypt_camellia_key *cam;
static archcrypt_poly1305_ctx *stream;

static int setup(enum op op)
{
    if (archcrypt_init() != ARCHCRYPT_OK) {
        fprintf(stderr, "harness: archcrypt_init: %s\n", archcrypt_last_error());
        exit(1);
    }
    if (op == CAMELLIA && !(cam = archcrypt_camellia_new(key, 16)))
        fail("archcrypt_camellia_new");
    if (op == POLY1305_STREAM && !(stream = archcrypt_poly1305_new(key)))
        fail("archcrypt_poly1305_new");
    return 1;
}

static void finish(enum op op)
{
    if (op == POLY1305_STREAM && archcrypt_poly1305_final(stream, out) != ARCHCRYPT_OK)
        fail("archcrypt_poly1305_final");
}

static void once(enum op op, size_t len)
{
    int rc = 0;
    switch (op) {
    case CHACHA20: rc = archcrypt_chacha20_xor(out, in, len, key, nonce, 1); break;
    case POLY1305: rc = archcrypt_poly1305(out, in, len, key); break;
    case AEAD: rc = archcrypt_chacha20poly1305_seal(out, in, len, NULL, 0, key, nonce); break;
    case SHA256: rc = archcrypt_hash(ARCHCRYPT_SHA256, out, in, len); break;
    case SHA512: rc = archcrypt_hash(ARCHCRYPT_SHA512, out, in, len); break;
    case CAMELLIA: rc = archcrypt_camellia_ecb_encrypt(cam, out, in, len); break;
    case POLY1305_STREAM: rc = archcrypt_poly1305_update(stream, in, len); break;
    default: break;
    }
    if (rc != ARCHCRYPT_OK)
        fail(op_names[op]);
}

#elif defined(LIB_GCRYPT)
static gcry_cipher_hd_t cipher;
static gcry_mac_hd_t mac;

static int setup(enum op op)
{
    if (!gcry_check_version(NULL))
        fail("gcry_check_version");
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    gcry_error_t err = 0;
    switch (op) {
    case CHACHA20: err = gcry_cipher_open(&cipher, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_STREAM, 0); break;
    case POLY1305: err = gcry_mac_open(&mac, GCRY_MAC_POLY1305, 0, NULL); break;
    case POLY1305_STREAM:
        err = gcry_mac_open(&mac, GCRY_MAC_POLY1305, 0, NULL);
        if (!err)
            err = gcry_mac_setkey(mac, key, 32);
        break;
    case AEAD: err = gcry_cipher_open(&cipher, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305, 0); break;
    case CAMELLIA:
        err = gcry_cipher_open(&cipher, GCRY_CIPHER_CAMELLIA128, GCRY_CIPHER_MODE_ECB, 0);
        if (!err)
            err = gcry_cipher_setkey(cipher, key, 16);
        break;
    default: break;
    }
    if (err)
        fail(gcry_strerror(err));
    return 1;
}

static void finish(enum op op)
{
    size_t tag_len = 16;
    if (op == POLY1305_STREAM && gcry_mac_read(mac, out, &tag_len))
        fail("gcry_mac_read");
}

static void once(enum op op, size_t len)
{
    gcry_error_t err = 0;
    size_t tag_len = 16;
    switch (op) {
    case CHACHA20: {
        uint8_t iv[16] = {1};  /* 32-bit counter 1, then the 96-bit nonce */
        memcpy(iv + 4, nonce, 12);
        err = gcry_cipher_setkey(cipher, key, 32);
        err = err ? err : gcry_cipher_setiv(cipher, iv, 16);
        err = err ? err : gcry_cipher_encrypt(cipher, out, len, in, len);
        break;
    }
    case POLY1305:
        err = gcry_mac_setkey(mac, key, 32);
        err = err ? err : gcry_mac_write(mac, in, len);
        err = err ? err : gcry_mac_read(mac, out, &tag_len);
        break;
    case AEAD:
        err = gcry_cipher_setkey(cipher, key, 32);
        err = err ? err : gcry_cipher_setiv(cipher, nonce, 12);
        err = err ? err : gcry_cipher_final(cipher);
        err = err ? err : gcry_cipher_encrypt(cipher, out, len, in, len);
        err = err ? err : gcry_cipher_gettag(cipher, out + len, 16);
        break;
    case SHA256: gcry_md_hash_buffer(GCRY_MD_SHA256, out, in, len); break;
    case SHA512: gcry_md_hash_buffer(GCRY_MD_SHA512, out, in, len); break;
    case CAMELLIA: err = gcry_cipher_encrypt(cipher, out, len, in, len); break;
    case POLY1305_STREAM: err = gcry_mac_write(mac, in, len); break;
    default: break;
    }
    if (err)
        fail(gcry_strerror(err));
}

#elif defined(LIB_OPENSSL)
static EVP_CIPHER_CTX *cctx;
static EVP_MAC_CTX *mctx;
static EVP_CIPHER *cipher;
static EVP_MD *md;

static int setup(enum op op)
{
    int ok = 1;
    switch (op) {
    case CHACHA20: ok = (cipher = EVP_CIPHER_fetch(NULL, "ChaCha20", NULL)) != NULL; break;
    case AEAD: ok = (cipher = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL)) != NULL; break;
    case CAMELLIA: ok = (cipher = EVP_CIPHER_fetch(NULL, "CAMELLIA-128-ECB", NULL)) != NULL; break;
    case POLY1305:
    case POLY1305_STREAM: {
        EVP_MAC *m = EVP_MAC_fetch(NULL, "POLY1305", NULL);
        ok = m && (mctx = EVP_MAC_CTX_new(m)) != NULL;
        if (ok && op == POLY1305_STREAM)
            ok = EVP_MAC_init(mctx, key, 32, NULL);
        break;
    }
    case SHA256: ok = (md = EVP_MD_fetch(NULL, "SHA256", NULL)) != NULL; break;
    case SHA512: ok = (md = EVP_MD_fetch(NULL, "SHA512", NULL)) != NULL; break;
    default: break;
    }
    if (ok && cipher) {
        ok = (cctx = EVP_CIPHER_CTX_new()) != NULL;
        if (ok && op == CAMELLIA)
            ok = EVP_EncryptInit_ex2(cctx, cipher, key, NULL, NULL) && EVP_CIPHER_CTX_set_padding(cctx, 0);
    }
    if (!ok)
        fail("OpenSSL set-up");
    return 1;
}

static void finish(enum op op)
{
    size_t tag_len = 0;
    if (op == POLY1305_STREAM && !EVP_MAC_final(mctx, out, &tag_len, 16))
        fail("EVP_MAC_final");
}

static void once(enum op op, size_t len)
{
    int ok = 1, n = 0;
    size_t tag_len = 0;
    switch (op) {
    case CHACHA20: {
        uint8_t iv[16] = {1};
        memcpy(iv + 4, nonce, 12);
        ok = EVP_EncryptInit_ex2(cctx, cipher, key, iv, NULL) && EVP_EncryptUpdate(cctx, out, &n, in, (int)len);
        break;
    }
    case POLY1305:
        ok = EVP_MAC_init(mctx, key, 32, NULL) && EVP_MAC_update(mctx, in, len) &&
             EVP_MAC_final(mctx, out, &tag_len, 16);
        break;
    case AEAD:
        ok = EVP_EncryptInit_ex2(cctx, cipher, key, nonce, NULL) &&
             EVP_EncryptUpdate(cctx, out, &n, in, (int)len) && EVP_EncryptFinal_ex(cctx, out + n, &n) &&
             EVP_CIPHER_CTX_ctrl(cctx, EVP_CTRL_AEAD_GET_TAG, 16, out + len);
        break;
    case SHA256:
    case SHA512: ok = EVP_Digest(in, len, out, NULL, md, NULL); break;
    case CAMELLIA: ok = EVP_EncryptUpdate(cctx, out, &n, in, (int)len); break;
    case POLY1305_STREAM: ok = EVP_MAC_update(mctx, in, len); break;
    default: break;
    }
    if (!ok)
        fail(op_names[op]);
}

#elif defined(LIB_SODIUM)
static crypto_onetimeauth_poly1305_state stream;

static int setup(enum op op)
{
    if (sodium_init() < 0)
        fail("sodium_init");
    if (op == POLY1305_STREAM && crypto_onetimeauth_poly1305_init(&stream, key) != 0)
        fail("crypto_onetimeauth_poly1305_init");
    return op != CAMELLIA;  /* libsodium has no Camellia */
}

static void finish(enum op op)
{
    if (op == POLY1305_STREAM && crypto_onetimeauth_poly1305_final(&stream, out) != 0)
        fail("crypto_onetimeauth_poly1305_final");
}

static void once(enum op op, size_t len)
{
    int rc = 0;
    switch (op) {
    case CHACHA20: rc = crypto_stream_chacha20_ietf_xor_ic(out, in, len, nonce, 1, key); break;
    case POLY1305: rc = crypto_onetimeauth_poly1305(out, in, len, key); break;
    case AEAD:
        rc = crypto_aead_chacha20poly1305_ietf_encrypt(out, NULL, in, len, NULL, 0, NULL, nonce, key);
        break;
    case SHA256: rc = crypto_hash_sha256(out, in, len); break;
    case SHA512: rc = crypto_hash_sha512(out, in, len); break;
    case POLY1305_STREAM: rc = crypto_onetimeauth_poly1305_update(&stream, in, len); break;
    default: break;
    }
    if (rc != 0)
        fail(op_names[op]);
}
#endif

#if defined(LIB_ARCHCRYPT)
/* `harness rows`: "<table> <row> <runnable 0|1> <selected 0|1>" per dispatch row. */
static int print_rows(void)
{
    if (archcrypt_init() != ARCHCRYPT_OK) {
        fprintf(stderr, "harness: archcrypt_init: %s\n", archcrypt_last_error());
        return 1;
    }
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++)
        for (size_t i = 0; i < archcrypt_implementation_count(a); i++)
            printf("%s %s %d %d\n", archcrypt_algorithm_name(a), archcrypt_implementation_name(a, i),
                   archcrypt_implementation_runnable(a, i), archcrypt_selected_implementation(a) == i);
    return 0;
}
#endif

int main(int argc, char **argv)
{
#if defined(LIB_ARCHCRYPT)
    if (argc == 2 && strcmp(argv[1], "rows") == 0)
        return print_rows();
#endif
    if (argc != 4) {
        fprintf(stderr, "usage: %s OPERATION SIZE CALLS\n", argv[0]);
        return 1;
    }
    enum op op = N_OPS;
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(argv[1], op_names[i]) == 0)
            op = (enum op)i;
    size_t len = strtoull(argv[2], NULL, 10);
    unsigned long calls = strtoul(argv[3], NULL, 10);
    if (op == N_OPS || (op == CAMELLIA && len % 16)) {
        fprintf(stderr, "harness: bad operation or size\n");
        return 1;
    }
    in = aligned_alloc(64, len + 64);
    out = aligned_alloc(64, len + 128);
    if (!in || !out)
        fail("aligned_alloc");
    for (size_t i = 0; i < len + 64; i++)
        in[i] = (uint8_t)(i * 131 + 7);
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i + 1);
    if (!setup(op))
        return 2;
    once(op, len);  /* warm-up: lazy initialisation lands in the empty run too */
    for (unsigned long c = 0; c < calls; c++) {
        nonce[0] = (uint8_t)c;  /* a fresh nonce per message, as a user would */
        once(op, len);
    }
    finish(op);
    sink = out[0];
    return 0;
}
