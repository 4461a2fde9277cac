/* Shared runner for the SHA-2 known answers: every vector through the one-shot,
 * streaming, copy, batch and verify paths of the public API (sha256/kat.c, sha512/kat.c). */
#ifndef ARCHCRYPT_HASH_KAT_H
#define ARCHCRYPT_HASH_KAT_H

#include <stddef.h>
#include <stdint.h>

/* Messages shared by FIPS 180-4's worked examples ("Examples with Intermediate
 * Values", NIST CSRC), NIST's SHA*ShortMsg.rsp (Len = 0) and RFC 4231. */
#define MSG_ABC "abc"
#define MSG_EMPTY ""
#define MSG_TC2 "what do ya want for nothing?"
#define MSG_TC5 "Test With Truncation"
#define MSG_TC6 "Test Using Larger Than Block-Size Key - Hash Key First"

typedef struct {
    int hash_id;
    const char *msg;
    const char *digest;
} ac_hash_vector;

typedef struct {
    int hash_id;
    const char *key;            /* NULL: key_len copies of key_fill */
    uint8_t key_fill;
    size_t key_len;
    const char *msg;
    const char *tag;
    size_t tag_len;             /* shorter than the digest: a truncated tag */
} ac_hmac_vector;

/* ARCHCRYPT_OK or ARCHCRYPT_ERR_SELFTEST. */
int ac_kat_sha2(const ac_hash_vector *hash_vectors, size_t hash_count,
                const ac_hmac_vector *hmac_vectors, size_t hmac_count);

#endif
