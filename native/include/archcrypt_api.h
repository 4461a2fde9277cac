/* archcrypt public API: declarations only, read verbatim as cffi's cdef.
 * No #include, no #if: everything here must parse as plain C declarations. */

/* Status codes returned by every fallible function. */
typedef enum {
    ARCHCRYPT_OK = 0,
    ARCHCRYPT_ERR_INVALID_ARGUMENT = -1,   /* a length or parameter outside its contract */
    ARCHCRYPT_ERR_AUTHENTICATION = -2,     /* AEAD/MAC tag mismatch; outputs are wiped */
    ARCHCRYPT_ERR_MESSAGE_TOO_LONG = -3,   /* the 32-bit ChaCha20 block counter would wrap */
    ARCHCRYPT_ERR_UNKNOWN_ALGORITHM = -4,
    ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION = -5,
    ARCHCRYPT_ERR_UNSUPPORTED = -6,        /* this CPU/OS cannot run that implementation */
    ARCHCRYPT_ERR_SELFTEST = -7,           /* a known-answer self-test failed */
    ARCHCRYPT_ERR_NO_MEMORY = -8,
    ARCHCRYPT_ERR_STATE = -9,              /* e.g. update after final */
    ARCHCRYPT_ERR_CONFIG = -10             /* ARCHCRYPT_FORCE / ARCHCRYPT_DISABLE_CPU_FEATURES malformed */
} archcrypt_status;

typedef enum {
    ARCHCRYPT_SHA224 = 0,
    ARCHCRYPT_SHA256 = 1,
    ARCHCRYPT_SHA384 = 2,
    ARCHCRYPT_SHA512 = 3
} archcrypt_hash_id;

/* Sizes in bytes, in one block: the Python layer reads them from here (lib.ARCHCRYPT_*). */
enum {
    ARCHCRYPT_CHACHA20_KEY_SIZE = 32,
    ARCHCRYPT_CHACHA20_NONCE_SIZE = 12,            /* RFC 8439: 96-bit nonce, 32-bit counter */
    ARCHCRYPT_HCHACHA20_NONCE_SIZE = 16,
    ARCHCRYPT_HCHACHA20_OUTPUT_SIZE = 32,
    ARCHCRYPT_CHACHA20_BLOCK_SIZE = 64,
    ARCHCRYPT_AEAD_KEY_SIZE = 32,
    ARCHCRYPT_AEAD_TAG_SIZE = 16,
    ARCHCRYPT_CHACHA20POLY1305_NONCE_SIZE = 12,
    ARCHCRYPT_XCHACHA20POLY1305_NONCE_SIZE = 24,
    ARCHCRYPT_POLY1305_KEY_SIZE = 32,
    ARCHCRYPT_POLY1305_TAG_SIZE = 16,
    ARCHCRYPT_SHA224_DIGEST_SIZE = 28,
    ARCHCRYPT_SHA256_DIGEST_SIZE = 32,
    ARCHCRYPT_SHA384_DIGEST_SIZE = 48,
    ARCHCRYPT_SHA512_DIGEST_SIZE = 64,
    ARCHCRYPT_SHA224_BLOCK_SIZE = 64,
    ARCHCRYPT_SHA256_BLOCK_SIZE = 64,
    ARCHCRYPT_SHA384_BLOCK_SIZE = 128,
    ARCHCRYPT_SHA512_BLOCK_SIZE = 128,
    ARCHCRYPT_CAMELLIA128_KEY_SIZE = 16,
    ARCHCRYPT_CAMELLIA192_KEY_SIZE = 24,
    ARCHCRYPT_CAMELLIA256_KEY_SIZE = 32,
    ARCHCRYPT_CAMELLIA_BLOCK_SIZE = 16
};

/* ---- library state ------------------------------------------------------ */

/* Detect CPU features, apply ARCHCRYPT_DISABLE_CPU_FEATURES and ARCHCRYPT_FORCE,
 * resolve every dispatch table. Idempotent and thread-safe; every other entry
 * point calls it implicitly. Returns the status of the first (only) run. */
int archcrypt_init(void);
/* Human-readable reason for the last init/force failure ("" when none). */
const char *archcrypt_last_error(void);
const char *archcrypt_strerror(int status);
const char *archcrypt_version(void);
/* Compiler that built the library, e.g. "gcc 12.2.0". */
const char *archcrypt_compiler(void);

/* ---- CPU ---------------------------------------------------------------- */

/* "amd64", "arm64", "ppc64le", "s390x" or "unknown" (container platform names). */
const char *archcrypt_arch(void);
/* Features this architecture knows about, in a stable order. */
size_t archcrypt_cpu_feature_count(void);
const char *archcrypt_cpu_feature_name(size_t index);
/* 0: absent, 1: present and usable, 2: present but masked by ARCHCRYPT_DISABLE_CPU_FEATURES. */
int archcrypt_cpu_feature_state(size_t index);

/* ---- dispatch ----------------------------------------------------------- */

size_t archcrypt_algorithm_count(void);
const char *archcrypt_algorithm_name(size_t algorithm);
/* Returns the index, or (size_t)-1 when unknown. */
size_t archcrypt_algorithm_index(const char *name);
size_t archcrypt_implementation_count(size_t algorithm);
const char *archcrypt_implementation_name(size_t algorithm, size_t implementation);
/* Comma-separated feature names this implementation needs ("" for none). */
const char *archcrypt_implementation_requires(size_t algorithm, size_t implementation);
/* 1 when the CPU (after masking) offers every required feature. */
int archcrypt_implementation_runnable(size_t algorithm, size_t implementation);
/* Shortest input the implementation runs, 0 for any: the library sends shorter ones to
 * the implementation archcrypt_implementation_below names (the next runnable row). */
size_t archcrypt_implementation_min_len(size_t algorithm, size_t implementation);
/* That implementation, or (size_t)-1 when min_len is 0. */
size_t archcrypt_implementation_below(size_t algorithm, size_t implementation);
/* Process-wide choice (fastest runnable, or the forced one). */
size_t archcrypt_selected_implementation(size_t algorithm);
int archcrypt_implementation_forced(size_t algorithm);
/* Force the process-wide implementation; implementation NULL returns to automatic choice. */
int archcrypt_force(const char *algorithm, const char *implementation);
/* Override for the calling thread only (tests, benchmarks); NULL clears it. */
int archcrypt_use_on_this_thread(const char *algorithm, const char *implementation);
/* Known-answer self-test of one implementation (on the calling thread). */
int archcrypt_self_test(size_t algorithm, size_t implementation);

/* ---- ChaCha20 (RFC 8439) ------------------------------------------------ */

/* out = in XOR keystream starting at block `counter`. Refuses with
 * ARCHCRYPT_ERR_MESSAGE_TOO_LONG when the last block would need counter > 2^32-1.
 * out may equal in (in place); otherwise they must not overlap. */
int archcrypt_chacha20_xor(uint8_t *out, const uint8_t *in, size_t len,
                           const uint8_t *key32, const uint8_t *nonce12, uint32_t counter);
void archcrypt_hchacha20(uint8_t *out32, const uint8_t *key32, const uint8_t *nonce16);

/* ---- Poly1305 ----------------------------------------------------------- */

typedef struct archcrypt_poly1305_ctx archcrypt_poly1305_ctx;
int archcrypt_poly1305(uint8_t *tag16, const uint8_t *msg, size_t len, const uint8_t *key32);
/* 1 when tag16 matches, 0 otherwise (constant time). */
int archcrypt_poly1305_verify(const uint8_t *tag16, const uint8_t *msg, size_t len, const uint8_t *key32);
archcrypt_poly1305_ctx *archcrypt_poly1305_new(const uint8_t *key32);
int archcrypt_poly1305_update(archcrypt_poly1305_ctx *ctx, const uint8_t *msg, size_t len);
int archcrypt_poly1305_final(archcrypt_poly1305_ctx *ctx, uint8_t *tag16);
void archcrypt_poly1305_free(archcrypt_poly1305_ctx *ctx);

/* ---- AEAD (RFC 8439; XChaCha20 per draft-irtf-cfrg-xchacha) -------------- */

/* ct receives len + 16 bytes: ciphertext then tag. */
int archcrypt_chacha20poly1305_seal(uint8_t *ct, const uint8_t *pt, size_t len,
                                    const uint8_t *aad, size_t aad_len,
                                    const uint8_t *key32, const uint8_t *nonce12);
/* ct_len includes the 16-byte tag; pt receives ct_len - 16 bytes, wiped on failure. */
int archcrypt_chacha20poly1305_open(uint8_t *pt, const uint8_t *ct, size_t ct_len,
                                    const uint8_t *aad, size_t aad_len,
                                    const uint8_t *key32, const uint8_t *nonce12);
int archcrypt_xchacha20poly1305_seal(uint8_t *ct, const uint8_t *pt, size_t len,
                                     const uint8_t *aad, size_t aad_len,
                                     const uint8_t *key32, const uint8_t *nonce24);
int archcrypt_xchacha20poly1305_open(uint8_t *pt, const uint8_t *ct, size_t ct_len,
                                     const uint8_t *aad, size_t aad_len,
                                     const uint8_t *key32, const uint8_t *nonce24);

/* ---- SHA-2 (FIPS 180-4) ------------------------------------------------- */

typedef struct archcrypt_hash_ctx archcrypt_hash_ctx;
/* 0 for an unknown id. */
size_t archcrypt_hash_digest_size(int hash_id);
size_t archcrypt_hash_block_size(int hash_id);
int archcrypt_hash(int hash_id, uint8_t *digest, const uint8_t *msg, size_t len);
/* n independent messages in one call: msgs[i] (lens[i] bytes, NULL when 0) hashed into
 * digests + i * digest size. Same results as n archcrypt_hash calls; a row with several
 * lanes (multi-buffer) hashes them side by side. Arguments are checked before anything
 * is written. */
int archcrypt_hash_many(int hash_id, size_t n, const uint8_t *const *msgs, const size_t *lens,
                        uint8_t *digests);
archcrypt_hash_ctx *archcrypt_hash_new(int hash_id);
archcrypt_hash_ctx *archcrypt_hash_copy(const archcrypt_hash_ctx *ctx);
int archcrypt_hash_update(archcrypt_hash_ctx *ctx, const uint8_t *msg, size_t len);
int archcrypt_hash_final(archcrypt_hash_ctx *ctx, uint8_t *digest);
void archcrypt_hash_free(archcrypt_hash_ctx *ctx);

/* ---- HMAC (RFC 2104 / FIPS 198-1) over SHA-2 ----------------------------- */

typedef struct archcrypt_hmac_ctx archcrypt_hmac_ctx;
int archcrypt_hmac(int hash_id, uint8_t *tag, const uint8_t *key, size_t key_len,
                   const uint8_t *msg, size_t len);
/* 1 when the first tag_len bytes match (tag_len in 1..digest size), 0 otherwise. */
int archcrypt_hmac_verify(int hash_id, const uint8_t *tag, size_t tag_len,
                          const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len);
/* n messages under one key: msgs[i] (lens[i] bytes, NULL when 0) into tags + i * digest
 * size. Same results as n archcrypt_hmac calls; the key is prepared once and a row with
 * several lanes hashes the messages side by side (as archcrypt_hash_many). Arguments are
 * checked before anything is written. */
int archcrypt_hmac_many(int hash_id, const uint8_t *key, size_t key_len, size_t n,
                        const uint8_t *const *msgs, const size_t *lens, uint8_t *tags);
archcrypt_hmac_ctx *archcrypt_hmac_new(int hash_id, const uint8_t *key, size_t key_len);
int archcrypt_hmac_update(archcrypt_hmac_ctx *ctx, const uint8_t *msg, size_t len);
int archcrypt_hmac_final(archcrypt_hmac_ctx *ctx, uint8_t *tag);
void archcrypt_hmac_free(archcrypt_hmac_ctx *ctx);

/* ---- Camellia (RFC 3713), ECB -------------------------------------------- */

typedef struct archcrypt_camellia_key archcrypt_camellia_key;
/* key_len 16, 24 or 32; NULL on a bad length or no memory. */
archcrypt_camellia_key *archcrypt_camellia_new(const uint8_t *key, size_t key_len);
void archcrypt_camellia_free(archcrypt_camellia_key *key);
/* len must be a multiple of 16; out may equal in. */
int archcrypt_camellia_ecb_encrypt(const archcrypt_camellia_key *key, uint8_t *out,
                                   const uint8_t *in, size_t len);
int archcrypt_camellia_ecb_decrypt(const archcrypt_camellia_key *key, uint8_t *out,
                                   const uint8_t *in, size_t len);

/* ---- memory ------------------------------------------------------------ */

/* Zero len bytes at buf in a way the compiler cannot drop (for buffers a binding reuses). */
void archcrypt_wipe(void *buf, size_t len);

/* ---- measurement -------------------------------------------------------- */

/* Core clock in Hz, measured by timing a chain of dependent single-cycle adds
 * (not the TSC, which runs at a fixed nominal rate). Takes about `seconds`. */
double archcrypt_core_hz(double seconds);
