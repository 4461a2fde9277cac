/* Constant-time check by the ctgrind method: under valgrind memcheck, secrets (keys, the
 * message, a tag being checked) are marked undefined with client requests, so any branch or
 * memory address that depends on them is reported as a use of an uninitialised value.
 * Outputs are declassified (marked defined) only after the call, and compared with the
 * portable row's answer, so each run is also known to have done the work.
 *
 *   valgrind --tool=memcheck ctgrind <table> <row>...  dispatch rows (tests/drill/ct.py)
 *   ctgrind --list                                     the rows runnable here, "table row"
 *
 * Built with ARCHCRYPT_CTGRIND (src/common.h: AC_DECLASSIFY), which tells memcheck that
 * the accept/reject bit of a tag check is public once computed: the API returns it, so a
 * branch on it (the wipe of a failed open) leaks nothing more. Everything else is built
 * exactly as the library ships (-O2, the rows' own ISA flags). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "archcrypt.h"
#include "../testutil.h"

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

static int failures;

#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "ctgrind: FAIL: ");                                            \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

static uint64_t rng_state = 0x243f6a8885a308d3u;

static void rng_fill(uint8_t *p, size_t n)
{
    splitmix64_fill(&rng_state, p, n);
}

static uint64_t rng_next(void)
{
    return splitmix64(&rng_state);
}

#define use use_row

/* A declassified status: the harness may branch on it. */
static int public_int(int v)
{
    PUBLIC(&v, sizeof v);
    return v;
}

/* Lengths that reach every path of every row: tails of each SIMD width, one and several
 * iterations of the widest loop (16 ChaCha blocks, 8 Poly1305 blocks x 4, the stitched
 * AEAD's 512-byte steps from its 1 KiB threshold). */
static const size_t lengths[] = {0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                                 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 4096 + 13};
#define N_LENGTHS (sizeof lengths / sizeof lengths[0])
#define MAX_LEN (4096 + 13)

/* ---- ChaCha20, HChaCha20 --------------------------------------------------------------- */

static void ct_chacha20(const char *impl)
{
    uint8_t key[32], nonce[12], hn[16], sub[32], sub_ref[32];
    uint8_t *in = xmalloc(MAX_LEN), *out = xmalloc(MAX_LEN), *ref = xmalloc(MAX_LEN);
    for (size_t i = 0; i < N_LENGTHS; i++) {
        size_t len = lengths[i];
        rng_fill(key, 32);
        rng_fill(nonce, 12);
        rng_fill(in, len);
        uint32_t counter = (uint32_t)(rng_next() % 4);
        use("chacha20", "portable");
        archcrypt_chacha20_xor(ref, in, len, key, nonce, counter);
        use("chacha20", impl);
        SECRET(key, 32);
        SECRET(in, len);
        int rc = public_int(archcrypt_chacha20_xor(out, in, len, key, nonce, counter));
        PUBLIC(out, len);
        PUBLIC(key, 32);
        PUBLIC(in, len);
        EXPECT(rc == ARCHCRYPT_OK && memcmp(out, ref, len) == 0, "chacha20/%s len %zu", impl, len);
    }
    rng_fill(key, 32);
    rng_fill(hn, 16);
    use("chacha20", "portable");
    archcrypt_hchacha20(sub_ref, key, hn);
    use("chacha20", impl);
    SECRET(key, 32);
    archcrypt_hchacha20(sub, key, hn);
    PUBLIC(sub, 32);
    PUBLIC(key, 32);
    EXPECT(memcmp(sub, sub_ref, 32) == 0, "hchacha20 with chacha20/%s", impl);
    free(in);
    free(out);
    free(ref);
}

/* ---- Poly1305: the MAC, its verify (the tag under test secret too), incremental -------- */

static void ct_poly1305(const char *impl)
{
    uint8_t key[32], tag[16], ref[16];
    uint8_t *msg = xmalloc(MAX_LEN);
    for (size_t i = 0; i < N_LENGTHS; i++) {
        size_t len = lengths[i];
        rng_fill(key, 32);
        rng_fill(msg, len);
        if (i % 3 == 0)
            memset(msg, 0xff, len);           /* the carry paths of lazy reduction */
        use("poly1305", "portable");
        archcrypt_poly1305(ref, msg, len, key);
        use("poly1305", impl);

        SECRET(key, 32);
        SECRET(msg, len);
        archcrypt_poly1305(tag, msg, len, key);
        PUBLIC(tag, 16);
        EXPECT(memcmp(tag, ref, 16) == 0, "poly1305/%s len %zu", impl, len);

        /* verify: the right tag and one a bit off, both secret while compared. */
        for (int bad = 0; bad < 2; bad++) {
            uint8_t t[16];
            memcpy(t, ref, 16);
            t[len % 16] ^= (uint8_t)bad;
            SECRET(t, 16);
            int ok = public_int(archcrypt_poly1305_verify(t, msg, len, key));
            EXPECT(ok == !bad, "poly1305/%s verify (%s tag) len %zu", impl, bad ? "bad" : "good",
                   len);
        }

        archcrypt_poly1305_ctx *ctx = archcrypt_poly1305_new(key);
        size_t half = len / 3;
        archcrypt_poly1305_update(ctx, msg, half);
        archcrypt_poly1305_update(ctx, msg + half, len - half);
        archcrypt_poly1305_final(ctx, tag);
        archcrypt_poly1305_free(ctx);
        PUBLIC(tag, 16);
        EXPECT(memcmp(tag, ref, 16) == 0, "poly1305/%s incremental len %zu", impl, len);
        PUBLIC(key, 32);
        PUBLIC(msg, len);
    }
    free(msg);
}

/* ---- ChaCha20-Poly1305 and XChaCha20-Poly1305: seal, and open with the tag check -------- */

typedef int (*aead_fn)(uint8_t *, const uint8_t *, size_t, const uint8_t *, size_t,
                       const uint8_t *, const uint8_t *);

static void ct_aead(const char *impl)
{
    uint8_t key[32], nonce[24], aad[40];
    uint8_t *pt = xmalloc(MAX_LEN), *ct = xmalloc(MAX_LEN + 16), *ref = xmalloc(MAX_LEN + 16);
    uint8_t *back = xmalloc(MAX_LEN);
    for (size_t i = 0; i < N_LENGTHS; i++) {
        size_t len = lengths[i], aad_len = i % sizeof aad;
        int x = (int)(i & 1);
        aead_fn seal = x ? archcrypt_xchacha20poly1305_seal : archcrypt_chacha20poly1305_seal;
        aead_fn open = x ? archcrypt_xchacha20poly1305_open : archcrypt_chacha20poly1305_open;
        rng_fill(key, 32);
        rng_fill(nonce, 24);
        rng_fill(aad, aad_len);
        rng_fill(pt, len);
        use("chacha20-poly1305", "composed");
        use("chacha20", "portable");
        use("poly1305", "portable");
        seal(ref, pt, len, aad, aad_len, key, nonce);
        use("chacha20", NULL);
        use("poly1305", NULL);
        use("chacha20-poly1305", impl);

        SECRET(key, 32);
        SECRET(pt, len);
        int rc = public_int(seal(ct, pt, len, aad, aad_len, key, nonce));
        PUBLIC(ct, len + 16);
        PUBLIC(pt, len);
        EXPECT(rc == ARCHCRYPT_OK && memcmp(ct, ref, len + 16) == 0, "aead/%s seal len %zu x=%d",
               impl, len, x);

        /* open: the received ciphertext and tag secret as well, a good tag and a forged one
         * (the last tag byte off by one bit), so the comparison runs both ways. */
        for (int bad = 0; bad < 2; bad++) {
            memcpy(ct, ref, len + 16);
            ct[len + 15] ^= (uint8_t)bad;
            SECRET(ct, len + 16);
            rc = public_int(open(back, ct, len + 16, aad, aad_len, key, nonce));
            PUBLIC(back, len);
            PUBLIC(ct, len + 16);
            if (bad)
                EXPECT(rc == ARCHCRYPT_ERR_AUTHENTICATION, "aead/%s forged tag accepted", impl);
            else
                EXPECT(rc == ARCHCRYPT_OK && memcmp(back, pt, len) == 0,
                       "aead/%s open len %zu x=%d", impl, len, x);
        }
        PUBLIC(key, 32);
    }
    use("chacha20-poly1305", NULL);
    free(pt);
    free(ct);
    free(ref);
    free(back);
}

/* ---- HMAC over one SHA-2 row: the MAC and its verify, key, message and tag secret ------- */

static void ct_hmac(const char *alg, const char *impl, int id_small, int id_big)
{
    uint8_t key[200], tag[64], ref[64];
    uint8_t *msg = xmalloc(MAX_LEN);
    static const size_t key_lens[] = {0, 1, 32, 64, 65, 128, 129, 200};
    for (int id = id_small; id <= id_big; id++) {
        size_t dlen = archcrypt_hash_digest_size(id);
        for (size_t i = 0; i < N_LENGTHS; i++) {
            size_t len = lengths[i], klen = key_lens[i % (sizeof key_lens / sizeof key_lens[0])];
            rng_fill(key, klen);
            rng_fill(msg, len);
            use(alg, "portable");
            archcrypt_hmac(id, ref, key, klen, msg, len);
            use(alg, impl);

            SECRET(key, klen);
            SECRET(msg, len);
            archcrypt_hmac(id, tag, key, klen, msg, len);
            PUBLIC(tag, dlen);
            EXPECT(memcmp(tag, ref, dlen) == 0, "hmac %d/%s len %zu", id, impl, len);
            for (int bad = 0; bad < 2; bad++) {
                uint8_t t[64];
                size_t tlen = bad ? dlen : dlen / 2 + 1;
                memcpy(t, ref, dlen);
                t[tlen - 1] ^= (uint8_t)bad;
                SECRET(t, tlen);
                int ok = public_int(archcrypt_hmac_verify(id, t, tlen, key, klen, msg, len));
                EXPECT(ok == !bad, "hmac %d/%s verify (%s tag)", id, impl, bad ? "bad" : "good");
            }
            PUBLIC(key, klen);
            PUBLIC(msg, len);
        }
    }
    free(msg);
}

/* ---- Camellia: the key schedule and both directions, key and blocks secret ------------- */

static void ct_camellia(const char *impl)
{
    static const size_t key_lens[] = {16, 24, 32};
    static const size_t block_counts[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130};
    uint8_t key[32];
    uint8_t *pt = xmalloc(130 * 16), *ct = xmalloc(130 * 16), *ref = xmalloc(130 * 16);
    for (size_t k = 0; k < 3; k++)
        for (size_t b = 0; b < sizeof block_counts / sizeof block_counts[0]; b++) {
            size_t len = block_counts[b] * 16, klen = key_lens[k];
            rng_fill(key, klen);
            rng_fill(pt, len);
            use("camellia", "portable");
            archcrypt_camellia_key *ks_ref = archcrypt_camellia_new(key, klen);
            archcrypt_camellia_ecb_encrypt(ks_ref, ref, pt, len);
            archcrypt_camellia_free(ks_ref);
            use("camellia", impl);

            SECRET(key, klen);
            SECRET(pt, len);
            archcrypt_camellia_key *ks = archcrypt_camellia_new(key, klen);
            int rc = public_int(archcrypt_camellia_ecb_encrypt(ks, ct, pt, len));
            PUBLIC(ct, len);
            EXPECT(rc == ARCHCRYPT_OK && memcmp(ct, ref, len) == 0,
                   "camellia-%zu/%s encrypt %zu blocks", klen * 8, impl, block_counts[b]);
            SECRET(ct, len);
            rc = public_int(archcrypt_camellia_ecb_decrypt(ks, ct, ct, len));
            PUBLIC(ct, len);
            PUBLIC(pt, len);
            EXPECT(rc == ARCHCRYPT_OK && memcmp(ct, pt, len) == 0,
                   "camellia-%zu/%s decrypt %zu blocks", klen * 8, impl, block_counts[b]);
            archcrypt_camellia_free(ks);
            PUBLIC(key, klen);
        }
    free(pt);
    free(ct);
    free(ref);
}

/* ---- driver --------------------------------------------------------------------------- */

/* One row: its answers checked against portable's, each finding after the row's marker in
 * memcheck's report (a <clientmsg> in the XML), so that several rows share one valgrind
 * start-up (seconds each) and their findings are still told apart. Valgrind reports an
 * error once per stack: a finding in code two rows share is under the first of them. */
static int check_row(const char *alg, const char *impl)
{
    failures = 0;
    VALGRIND_PRINTF("ctgrind-row %s %s\n", alg, impl);
    /* Every table back to the process choice: the previous row's selections end here. */
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++)
        use(archcrypt_algorithm_name(a), NULL);
    /* Refuse a row this CPU (as valgrind presents it) cannot run, rather than test another. */
    use(alg, impl);
    use(alg, NULL);
    if (strcmp(alg, "chacha20") == 0)
        ct_chacha20(impl);
    else if (strcmp(alg, "poly1305") == 0)
        ct_poly1305(impl);
    else if (strcmp(alg, "chacha20-poly1305") == 0)
        ct_aead(impl);
    else if (strcmp(alg, "sha256") == 0)
        ct_hmac(alg, impl, ARCHCRYPT_SHA224, ARCHCRYPT_SHA256);
    else if (strcmp(alg, "sha512") == 0)
        ct_hmac(alg, impl, ARCHCRYPT_SHA384, ARCHCRYPT_SHA512);
    else if (strcmp(alg, "camellia") == 0)
        ct_camellia(impl);
    else {
        fprintf(stderr, "ctgrind: no constant-time check for table %s\n", alg);
        return 2;
    }
    printf("ctgrind %s/%s: %s\n", alg, impl, failures ? "WRONG ANSWERS" : "answers ok");
    fflush(stdout);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (archcrypt_init() != ARCHCRYPT_OK) {
        fprintf(stderr, "ctgrind: archcrypt_init: %s\n", archcrypt_last_error());
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        /* What the CPU offers as seen from here (under valgrind: what valgrind presents). */
        printf("# %s cpu features:", archcrypt_arch());
        for (size_t i = 0; i < archcrypt_cpu_feature_count(); i++)
            if (archcrypt_cpu_feature_state(i) == 1)
                printf(" %s", archcrypt_cpu_feature_name(i));
        printf("\n");
        for (size_t a = 0; a < archcrypt_algorithm_count(); a++)
            for (size_t r = 0; r < archcrypt_implementation_count(a); r++)
                if (archcrypt_implementation_runnable(a, r))
                    printf("%s %s\n", archcrypt_algorithm_name(a), archcrypt_implementation_name(a, r));
        return 0;
    }
    if (argc < 3 || argc % 2 == 0) {
        fprintf(stderr, "usage: ctgrind --list | ctgrind <table> <row> [<table> <row>...]\n");
        return 2;
    }
    int status = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        int rc = check_row(argv[i], argv[i + 1]);
        if (rc == 2)
            return 2;
        status |= rc;
    }
    return status;
}
