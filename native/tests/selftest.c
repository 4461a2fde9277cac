/* C self-test: known answers of every runnable implementation, then every runnable
 * implementation against portable at boundary lengths, counter edges, unaligned and
 * in-place buffers. Runs natively and under qemu-user for each architecture.
 *
 *   selftest [--quiet]        exit 0 when every check passed; ARCHCRYPT_SEED=<n> reseeds
 *   selftest --dispatch       print the features and the dispatch choices, test nothing */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archcrypt.h"
#include "testutil.h"

static unsigned long checks_passed, checks_failed;
static int quiet;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (cond) {                                                                       \
            checks_passed++;                                                              \
        } else {                                                                          \
            checks_failed++;                                                              \
            if (checks_failed <= 50) {                                                    \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                      \
                fprintf(stderr, __VA_ARGS__);                                             \
                fputc('\n', stderr);                                                      \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* splitmix64: reproducible inputs on every architecture. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
    return splitmix64(&rng_state);
}

static void rng_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rng_next() >> 56);
}

/* Select an implementation for this thread (testutil.h). */
#define use use_row

static void use_auto(void)
{
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++)
        use(archcrypt_algorithm_name(a), NULL);
}

/* Lengths worth testing for a cipher or MAC working in `unit`-byte pieces over up to
 * 16-unit batches: every length up to `dense`, then each batch width +-1 and sums. */
static size_t boundary_lengths(size_t *out, size_t cap, size_t dense, size_t unit)
{
    size_t n = 0;
    for (size_t len = 0; len <= dense && n < cap; len++)
        out[n++] = len;
    static const size_t widths[] = {2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 31, 32, 33, 48, 64, 65};
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
        for (int d = -1; d <= 1 && n < cap; d++) {
            size_t len = widths[w] * unit + (size_t)(long)d;
            if (len > dense)
                out[n++] = len;
        }
    if (n < cap)
        out[n++] = 16384 + 13;
    if (n == cap) {
        fprintf(stderr, "boundary_lengths: %zu entries are not enough\n", cap);
        exit(2);
    }
    return n;
}

#define MAX_LENGTHS 1400

/* ---- ChaCha20 ---------------------------------------------------------------------- */

static void test_chacha20(const char *impl)
{
    size_t lens[MAX_LENGTHS];
    size_t nlens = boundary_lengths(lens, MAX_LENGTHS, 1100, 64);
    uint8_t key[32], nonce[12];
    for (size_t i = 0; i < nlens; i++) {
        size_t len = lens[i];
        size_t off = (size_t)(rng_next() % 64);
        uint8_t *in = xmalloc(len + 64), *ref = xmalloc(len), *out = xmalloc(len + 64);
        rng_fill(key, 32);
        rng_fill(nonce, 12);
        rng_fill(in + off, len);
        uint32_t counter = (uint32_t)(rng_next() % 1000);

        use("chacha20", "portable");
        CHECK(archcrypt_chacha20_xor(ref, in + off, len, key, nonce, counter) == ARCHCRYPT_OK,
              "chacha20 portable len %zu", len);
        use("chacha20", impl);
        size_t ooff = (off * 7 + 3) % 64;
        CHECK(archcrypt_chacha20_xor(out + ooff, in + off, len, key, nonce, counter) == ARCHCRYPT_OK,
              "chacha20/%s len %zu", impl, len);
        CHECK(memcmp(out + ooff, ref, len) == 0, "chacha20/%s != portable, len %zu offsets %zu/%zu",
              impl, len, off, ooff);
        CHECK(archcrypt_chacha20_xor(in + off, in + off, len, key, nonce, counter) == ARCHCRYPT_OK,
              "chacha20/%s in place", impl);
        CHECK(memcmp(in + off, ref, len) == 0, "chacha20/%s in place != portable, len %zu", impl, len);
        free(in);
        free(ref);
        free(out);
    }

    /* The 32-bit counter: legal calls up to block 0xffffffff agree with portable, any
     * call whose last block would need 2^32 is refused, whatever the batch width. */
    static const uint32_t backs[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 31, 32};
    for (size_t b = 0; b < sizeof(backs) / sizeof(backs[0]); b++) {
        uint32_t back = backs[b], counter = 0xffffffffu - back;
        /* 33: the two 16-block groups of a 2 KiB AVX-512 step, and one block more. */
        for (size_t blocks = 1; blocks <= 33; blocks++) {
            size_t len = blocks * 64 - (blocks & 1) * 5;
            uint8_t *in = xmalloc(len), *ref = xmalloc(len), *out = xmalloc(len);
            rng_fill(key, 32);
            rng_fill(nonce, 12);
            rng_fill(in, len);
            int legal = blocks <= (size_t)back + 1;
            use("chacha20", "portable");
            int rc_ref = archcrypt_chacha20_xor(ref, in, len, key, nonce, counter);
            use("chacha20", impl);
            memset(out, 0xa5, len);
            int rc = archcrypt_chacha20_xor(out, in, len, key, nonce, counter);
            if (legal) {
                CHECK(rc == ARCHCRYPT_OK && rc_ref == ARCHCRYPT_OK && memcmp(out, ref, len) == 0,
                      "chacha20/%s counter %#x blocks %zu", impl, counter, blocks);
            } else {
                CHECK(rc == ARCHCRYPT_ERR_MESSAGE_TOO_LONG,
                      "chacha20/%s counter %#x blocks %zu not refused (rc %d)", impl, counter,
                      blocks, rc);
            }
            free(in);
            free(ref);
            free(out);
        }
    }
}

/* ---- Poly1305 ---------------------------------------------------------------------- */

static void poly1305_check(const char *impl, const uint8_t *key, const uint8_t *msg, size_t len,
                           const char *what)
{
    uint8_t ref[16], tag[16], inc[16];
    use("poly1305", "portable");
    archcrypt_poly1305(ref, msg, len, key);
    use("poly1305", impl);
    CHECK(archcrypt_poly1305(tag, msg, len, key) == ARCHCRYPT_OK, "poly1305/%s %s", impl, what);
    CHECK(memcmp(tag, ref, 16) == 0, "poly1305/%s != portable: %s len %zu", impl, what, len);
    CHECK(archcrypt_poly1305_verify(ref, msg, len, key) == 1, "poly1305/%s verify %s", impl, what);

    /* Incremental in uneven pieces: 1, 15, 16, 17, 63, 64, 65, ... */
    static const size_t steps[] = {1, 15, 16, 17, 63, 64, 65, 129, 1000};
    archcrypt_poly1305_ctx *ctx = archcrypt_poly1305_new(key);
    size_t pos = 0, s = 0;
    while (pos < len) {
        size_t n = steps[s++ % (sizeof(steps) / sizeof(steps[0]))];
        if (n > len - pos)
            n = len - pos;
        archcrypt_poly1305_update(ctx, msg + pos, n);
        pos += n;
    }
    archcrypt_poly1305_final(ctx, inc);
    archcrypt_poly1305_free(ctx);
    CHECK(memcmp(inc, ref, 16) == 0, "poly1305/%s incremental != one-shot: %s len %zu", impl, what,
          len);
}

static void test_poly1305(const char *impl)
{
    size_t lens[MAX_LENGTHS];
    size_t nlens = boundary_lengths(lens, MAX_LENGTHS, 1100, 16);
    uint8_t key[32];
    for (size_t i = 0; i < nlens; i++) {
        size_t len = lens[i], off = (size_t)(rng_next() % 64);
        uint8_t *buf = xmalloc(len + 64);
        rng_fill(key, 32);
        rng_fill(buf + off, len);
        poly1305_check(impl, key, buf + off, len, "random");
        free(buf);
    }
    /* Past the boundary lengths: a key's first call of 4 KiB or more takes its own path on
     * avx512ifma (powers reloaded from the state), and long calls run the main loops for
     * many iterations; random data and keys there, both one-shot and incremental. */
    static const size_t long_lens[] = {4080, 4095, 4096, 4097, 4111, 4112, 8192 + 48,
                                       16384 + 7, 65536 + 3};
    for (size_t i = 0; i < sizeof long_lens / sizeof long_lens[0]; i++) {
        size_t off = (size_t)(rng_next() % 64);
        uint8_t *buf = xmalloc(long_lens[i] + 64);
        rng_fill(key, 32);
        rng_fill(buf + off, long_lens[i]);
        poly1305_check(impl, key, buf + off, long_lens[i], "random, long");
        free(buf);
    }
    /* Lazy-reduction overflows showed up on long all-0xFF inputs with extreme limbs. */
    size_t len = 4096 + 48;
    uint8_t *ff = xmalloc(len);
    memset(ff, 0xff, len);
    static const uint8_t patterns[] = {0x00, 0xff};
    for (size_t r = 0; r < 2; r++)
        for (size_t s = 0; s < 2; s++) {
            memset(key, patterns[r], 16);
            memset(key + 16, patterns[s], 16);
            for (size_t cut = len - 48; cut <= len; cut += 16)
                poly1305_check(impl, key, ff, cut, "all-0xff");
        }
    /* r = 2, s = 0 over ff..ff drives h to >= 2^130 - 5 before the final reduction. */
    memset(key, 0, 32);
    key[0] = 2;
    poly1305_check(impl, key, ff, 16, "r=2");
    free(ff);
}

/* The streaming API split at every point of one message, and as streams of equal and of
 * random writes: a kernel's gathering (poly1305.h, `gather`: 2048 bytes for s390x vx) and
 * the 16-byte buffering meet at every offset. */
static void poly1305_stream_check(const char *impl, const uint8_t *key, const uint8_t *msg,
                                  size_t len, const size_t *cuts, size_t ncuts, const uint8_t ref[16],
                                  const char *what)
{
    uint8_t tag[16];
    archcrypt_poly1305_ctx *ctx = archcrypt_poly1305_new(key);
    size_t pos = 0;
    int ok = ctx != NULL;
    for (size_t c = 0; ok && c <= ncuts; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        ok = archcrypt_poly1305_update(ctx, msg + pos, end - pos) == ARCHCRYPT_OK;
        pos = end;
    }
    ok = ok && archcrypt_poly1305_final(ctx, tag) == ARCHCRYPT_OK && memcmp(tag, ref, 16) == 0;
    archcrypt_poly1305_free(ctx);
    CHECK(ok, "poly1305/%s streaming != one-shot: %s (len %zu, %zu pieces)", impl, what, len,
          ncuts + 1);
}

static void test_poly1305_streaming(const char *impl)
{
    enum { LEN = 2 * 2048 + 100, SPLIT_LEN = 2048 + 100 };
    uint8_t *msg = xmalloc(LEN), key[32], ref[16], ref_split[16];
    size_t *cuts = xmalloc(LEN * sizeof *cuts);
    rng_fill(msg, LEN);
    rng_fill(key, 32);
    use("poly1305", "portable");
    archcrypt_poly1305(ref, msg, LEN, key);
    archcrypt_poly1305(ref_split, msg, SPLIT_LEN, key);
    use("poly1305", impl);

    for (size_t at = 0; at <= SPLIT_LEN; at++)
        poly1305_stream_check(impl, key, msg, SPLIT_LEN, &at, 1, ref_split, "one split");
    static const size_t writes[] = {1, 15, 16, 17, 63, 64, 65, 1000, 1024, 2047, 2048, 2049};
    for (size_t w = 0; w < sizeof writes / sizeof writes[0]; w++) {
        size_t n = 0;
        for (size_t at = writes[w]; at < LEN; at += writes[w])
            cuts[n++] = at;
        poly1305_stream_check(impl, key, msg, LEN, cuts, n, ref, "equal writes");
    }
    for (int r = 0; r < 20; r++) {
        size_t n = 0, at = 0;
        while ((at += (size_t)(rng_next() % (r < 10 ? 80 : 2600))) < LEN)
            cuts[n++] = at;
        poly1305_stream_check(impl, key, msg, LEN, cuts, n, ref, "random writes");
    }
    /* Empty writes anywhere change nothing. */
    size_t empties[] = {0, 0, 5, 5, 2048, 2048, 2048 + 7, LEN, LEN};
    poly1305_stream_check(impl, key, msg, LEN, empties, sizeof empties / sizeof empties[0], ref,
                          "empty writes");
    free(msg);
    free(cuts);
}

/* ---- ChaCha20-Poly1305 --------------------------------------------------------------- */

static void test_aead(const char *impl)
{
    size_t lens[MAX_LENGTHS];
    size_t nlens = boundary_lengths(lens, MAX_LENGTHS, 600, 64);
    uint8_t key[32], nonce[24];
    for (size_t i = 0; i < nlens; i++) {
        size_t len = lens[i];
        size_t aad_len = (size_t)(rng_next() % 258);
        uint8_t *pt = xmalloc(len), *aad = xmalloc(aad_len);
        uint8_t *ref = xmalloc(len + 16), *ct = xmalloc(len + 16), *back = xmalloc(len);
        rng_fill(key, 32);
        rng_fill(nonce, 24);
        rng_fill(pt, len);
        rng_fill(aad, aad_len);
        int x = (int)(i & 1); /* alternate ChaCha20-Poly1305 and XChaCha20-Poly1305 */
        int (*seal)(uint8_t *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                    const uint8_t *) =
            x ? archcrypt_xchacha20poly1305_seal : archcrypt_chacha20poly1305_seal;
        int (*open)(uint8_t *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                    const uint8_t *) =
            x ? archcrypt_xchacha20poly1305_open : archcrypt_chacha20poly1305_open;

        use_reference();
        seal(ref, pt, len, aad, aad_len, key, nonce);
        use_auto();
        use("chacha20-poly1305", impl);
        CHECK(seal(ct, pt, len, aad, aad_len, key, nonce) == ARCHCRYPT_OK, "aead/%s seal", impl);
        CHECK(memcmp(ct, ref, len + 16) == 0, "aead/%s seal != reference, len %zu aad %zu x=%d",
              impl, len, aad_len, x);
        CHECK(open(back, ct, len + 16, aad, aad_len, key, nonce) == ARCHCRYPT_OK &&
                  memcmp(back, pt, len) == 0,
              "aead/%s open round trip, len %zu", impl, len);
        /* Any flipped bit, in the body or the tag, fails and leaves no plaintext. */
        size_t flip = (size_t)(rng_next() % (len + 16));
        ct[flip] ^= (uint8_t)(1u << (rng_next() % 8));
        memset(back, 0x5a, len);
        CHECK(open(back, ct, len + 16, aad, aad_len, key, nonce) == ARCHCRYPT_ERR_AUTHENTICATION,
              "aead/%s tampered byte %zu accepted", impl, flip);
        size_t nonzero = 0;
        for (size_t j = 0; j < len; j++)
            nonzero |= back[j];
        CHECK(nonzero == 0, "aead/%s output not wiped after failure", impl);
        free(pt);
        free(aad);
        free(ref);
        free(ct);
        free(back);
    }
    uint8_t small[15] = {0}, out[1];
    CHECK(archcrypt_chacha20poly1305_open(out, small, sizeof(small), NULL, 0, key, nonce) ==
              ARCHCRYPT_ERR_INVALID_ARGUMENT,
          "aead/%s ciphertext shorter than the tag accepted", impl);
    use_auto();
}

/* ---- SHA-2 --------------------------------------------------------------------------- */

static void test_hash(const char *alg, const char *impl, int id_small, int id_big)
{
    size_t block = archcrypt_hash_block_size(id_big);
    size_t lens[MAX_LENGTHS];
    size_t nlens = boundary_lengths(lens, MAX_LENGTHS, 1100, block);
    for (size_t i = 0; i < nlens; i++) {
        size_t len = lens[i], off = (size_t)(rng_next() % 64);
        uint8_t *msg = xmalloc(len + 64);
        rng_fill(msg + off, len);
        for (int id = id_small; id <= id_big; id++) {
            uint8_t ref[64], dig[64], inc[64];
            size_t dlen = archcrypt_hash_digest_size(id);
            use(alg, "portable");
            archcrypt_hash(id, ref, msg + off, len);
            use(alg, impl);
            CHECK(archcrypt_hash(id, dig, msg + off, len) == ARCHCRYPT_OK, "%s/%s", alg, impl);
            CHECK(memcmp(dig, ref, dlen) == 0, "%s/%s id %d != portable, len %zu", alg, impl, id, len);
            size_t split = len ? (size_t)(rng_next() % (len + 1)) : 0;
            archcrypt_hash_ctx *ctx = archcrypt_hash_new(id);
            archcrypt_hash_update(ctx, msg + off, split);
            archcrypt_hash_ctx *copy = archcrypt_hash_copy(ctx);
            archcrypt_hash_update(ctx, msg + off + split, len - split);
            archcrypt_hash_final(ctx, inc);
            CHECK(memcmp(inc, ref, dlen) == 0, "%s/%s incremental split %zu of %zu", alg, impl,
                  split, len);
            archcrypt_hash_update(copy, msg + off + split, len - split);
            archcrypt_hash_final(copy, inc);
            CHECK(memcmp(inc, ref, dlen) == 0, "%s/%s copied context", alg, impl);
            CHECK(archcrypt_hash_update(ctx, msg, 1) == ARCHCRYPT_ERR_STATE,
                  "%s/%s update after final accepted", alg, impl);
            archcrypt_hash_free(ctx);
            archcrypt_hash_free(copy);

            /* HMAC through the same kernel, with a key longer than a block. */
            uint8_t key[300], mref[64], mac[64];
            size_t klen = (size_t)(rng_next() % sizeof(key));
            rng_fill(key, klen);
            use(alg, "portable");
            archcrypt_hmac(id, mref, key, klen, msg + off, len);
            use(alg, impl);
            archcrypt_hmac(id, mac, key, klen, msg + off, len);
            CHECK(memcmp(mac, mref, dlen) == 0, "hmac over %s/%s id %d len %zu key %zu", alg, impl,
                  id, len, klen);
            CHECK(archcrypt_hmac_verify(id, mref, dlen, key, klen, msg + off, len) == 1,
                  "hmac verify over %s/%s", alg, impl);
        }
        free(msg);
    }
    use(alg, NULL);
}

/* ---- SHA-2 batch (archcrypt_hash_many) ------------------------------------------------ */

/* Padding edges of both block sizes (55/56 and 111/112 leave no room for the length
 * field), block +-1, and lengths that keep one lane busy long after the others. */
static const size_t many_lens[] = {0,   1,   55,  56,  63,   64,  65,  111, 112,
                                   119, 120, 127, 128, 129, 1000, 4113, 65536 + 7};
#define N_MANY_LENS (sizeof(many_lens) / sizeof(many_lens[0]))

/* n messages of lens[], each in its own buffer at a random misalignment, hashed by the
 * row's batch path and, one at a time, by portable; the digests must agree and the
 * output must end where it should. */
static void many_check(const char *alg, const char *impl, int id, size_t n, const size_t *lens,
                       const char *what)
{
    enum { MAX_N = 33 };
    const uint8_t *msgs[MAX_N];
    uint8_t *bufs[MAX_N];
    uint8_t ref[MAX_N * 64], got[MAX_N * 64 + 64];
    size_t dlen = archcrypt_hash_digest_size(id);
    for (size_t i = 0; i < n; i++) {
        size_t off = (size_t)(rng_next() % 64);
        bufs[i] = xmalloc(lens[i] + 64);
        rng_fill(bufs[i] + off, lens[i]);
        /* An empty message may come as NULL. */
        msgs[i] = lens[i] == 0 && (rng_next() & 1) ? NULL : bufs[i] + off;
    }
    use(alg, "portable");
    for (size_t i = 0; i < n; i++)
        archcrypt_hash(id, ref + i * dlen, msgs[i], lens[i]);
    use(alg, impl);
    memset(got, 0xa5, sizeof got);
    CHECK(archcrypt_hash_many(id, n, msgs, lens, got) == ARCHCRYPT_OK, "%s/%s hash_many", alg,
          impl);
    for (size_t i = 0; i < n; i++)
        CHECK(memcmp(got + i * dlen, ref + i * dlen, dlen) == 0,
              "%s/%s hash_many id %d, %s, n %zu: message %zu (len %zu) != portable", alg, impl, id,
              what, n, i, lens[i]);
    CHECK(got[n * dlen] == 0xa5 && got[n * dlen + 63] == 0xa5,
          "%s/%s hash_many wrote past %zu digests", alg, impl, n);

    /* HMAC of the same messages under one key (sometimes longer than a block). */
    uint8_t key[200];
    size_t klen = (size_t)(rng_next() % sizeof key);
    rng_fill(key, klen);
    use(alg, "portable");
    for (size_t i = 0; i < n; i++)
        archcrypt_hmac(id, ref + i * dlen, key, klen, msgs[i], lens[i]);
    use(alg, impl);
    memset(got, 0xa5, sizeof got);
    CHECK(archcrypt_hmac_many(id, key, klen, n, msgs, lens, got) == ARCHCRYPT_OK,
          "%s/%s hmac_many", alg, impl);
    for (size_t i = 0; i < n; i++)
        CHECK(memcmp(got + i * dlen, ref + i * dlen, dlen) == 0,
              "%s/%s hmac_many id %d, %s, n %zu, key %zu: message %zu (len %zu) != portable", alg,
              impl, id, what, n, klen, i, lens[i]);
    CHECK(got[n * dlen] == 0xa5 && got[n * dlen + 63] == 0xa5,
          "%s/%s hmac_many wrote past %zu tags", alg, impl, n);
    for (size_t i = 0; i < n; i++)
        free(bufs[i]);
}

static void test_hash_many(const char *alg, const char *impl, int id_small, int id_big)
{
    /* 12 and 24: a 16-lane batch that starts partly full, and one that refills, before its
     * last messages leave the wide lanes for the row's narrow path (hash/hash.c many_run). */
    static const size_t counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 33};
    size_t lens[33];
    use(alg, impl);
    for (int id = id_small; id <= id_big; id++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            size_t n = counts[c];
            /* All equal: the lanes move in lockstep and finish together. */
            for (size_t k = 0; k < N_MANY_LENS; k++) {
                if (many_lens[k] > 4113 && n > 4)
                    continue;       /* the long one is for the uneven mixes */
                for (size_t i = 0; i < n; i++)
                    lens[i] = many_lens[k];
                many_check(alg, impl, id, n, lens, "equal lengths");
            }
            /* All different: every rotation of the edge lengths over the lanes, so each
             * lane finishes first, last and in between, and refills mid-batch. */
            for (size_t r = 0; r < N_MANY_LENS; r++) {
                for (size_t i = 0; i < n; i++)
                    lens[i] = many_lens[(r + i * 5) % N_MANY_LENS];
                many_check(alg, impl, id, n, lens, "different lengths");
            }
            for (int r = 0; r < 4; r++) {
                for (size_t i = 0; i < n; i++)
                    lens[i] = (size_t)(rng_next() % 300);
                many_check(alg, impl, id, n, lens, "random lengths");
            }
        }

        /* Refused before anything is written. */
        uint8_t dig[2 * 64], m = 0;
        const uint8_t *bad[2] = {&m, NULL};
        size_t bad_lens[2] = {1, 1};
        memset(dig, 0x5a, sizeof dig);
        CHECK(archcrypt_hash_many(id, 2, bad, bad_lens, dig) == ARCHCRYPT_ERR_INVALID_ARGUMENT &&
                  dig[0] == 0x5a,
              "%s/%s hash_many accepted a NULL message with a length", alg, impl);
        CHECK(archcrypt_hash_many(id, 0, NULL, NULL, NULL) == ARCHCRYPT_OK,
              "%s/%s hash_many of no messages", alg, impl);
        CHECK(archcrypt_hash_many(id, 1, NULL, bad_lens, dig) == ARCHCRYPT_ERR_INVALID_ARGUMENT,
              "%s/%s hash_many accepted msgs NULL", alg, impl);
        CHECK(archcrypt_hmac_many(id, &m, 1, 2, bad, bad_lens, dig) ==
                      ARCHCRYPT_ERR_INVALID_ARGUMENT && dig[0] == 0x5a,
              "%s/%s hmac_many accepted a NULL message with a length", alg, impl);
        CHECK(archcrypt_hmac_many(id, NULL, 1, 1, bad, bad_lens, dig) ==
                  ARCHCRYPT_ERR_INVALID_ARGUMENT,
              "%s/%s hmac_many accepted a NULL key with a length", alg, impl);
    }
    CHECK(archcrypt_hash_many(99, 1, NULL, NULL, NULL) == ARCHCRYPT_ERR_INVALID_ARGUMENT,
          "hash_many accepted an unknown hash id");
    use(alg, NULL);
}

/* ---- Camellia ------------------------------------------------------------------------ */

static void test_camellia(const char *impl)
{
    /* Every count to 70, then around the 64-block loop running twice, and around a
     * 128-block step (gfni_avx512's two interleaved batches) followed by a 64-block one
     * and by a short tail. */
    static const size_t key_lens[] = {16, 24, 32};
    static const size_t extra[] = {95, 96, 97, 112, 127, 128, 129, 130, 191, 192, 193, 255, 256, 257};
    for (size_t k = 0; k < 3; k++)
        for (size_t step = 0; step <= 70 + sizeof(extra) / sizeof(extra[0]); step++) {
            size_t blocks = step <= 70 ? step : extra[step - 71];
            uint8_t key[32];
            size_t len = blocks * 16, off = (size_t)(rng_next() % 16);
            uint8_t *pt = xmalloc(len + 16), *ref = xmalloc(len), *ct = xmalloc(len + 16);
            rng_fill(key, key_lens[k]);
            rng_fill(pt + off, len);
            /* A key object is prepared for the row in effect when it is made: run this
             * row with a key prepared for itself and with one prepared for portable
             * (the path without a precomputed table). */
            use("camellia", "portable");
            archcrypt_camellia_key *ks_portable = archcrypt_camellia_new(key, key_lens[k]);
            use("camellia", impl);
            archcrypt_camellia_key *ks_impl = archcrypt_camellia_new(key, key_lens[k]);
            CHECK(ks_portable != NULL && ks_impl != NULL, "camellia key schedule");
            if (!ks_portable || !ks_impl)
                return;
            use("camellia", "portable");
            archcrypt_camellia_ecb_encrypt(ks_portable, ref, pt + off, len);
            use("camellia", impl);
            archcrypt_camellia_key *keys[2] = {ks_impl, ks_portable};
            for (size_t which = 0; which < 2; which++) {
                const char *prepared = which ? "portable" : impl;
                CHECK(archcrypt_camellia_ecb_encrypt(keys[which], ct + 3, pt + off, len) ==
                          ARCHCRYPT_OK,
                      "camellia/%s encrypt", impl);
                CHECK(memcmp(ct + 3, ref, len) == 0,
                      "camellia/%s-%zu (key prepared for %s) encrypt != portable, %zu blocks",
                      impl, key_lens[k] * 8, prepared, blocks);
                archcrypt_camellia_ecb_decrypt(keys[which], ct + 3, ct + 3, len);
                CHECK(memcmp(ct + 3, pt + off, len) == 0,
                      "camellia/%s-%zu (key prepared for %s) in-place decrypt, %zu blocks", impl,
                      key_lens[k] * 8, prepared, blocks);
            }
            archcrypt_camellia_free(ks_portable);
            archcrypt_camellia_free(ks_impl);
            free(pt);
            free(ref);
            free(ct);
        }
    use("camellia", NULL);
}

/* ---- driver ------------------------------------------------------------------------- */

static void print_backends(void)
{
    printf("archcrypt %s on %s (%s)\n", archcrypt_version(), archcrypt_arch(), archcrypt_compiler());
    printf("cpu features:");
    for (size_t i = 0; i < archcrypt_cpu_feature_count(); i++) {
        int st = archcrypt_cpu_feature_state(i);
        if (st)
            printf(" %s%s", archcrypt_cpu_feature_name(i), st == 2 ? "(masked)" : "");
    }
    printf("\n");
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++) {
        size_t sel = archcrypt_selected_implementation(a);
        printf("dispatch %-18s -> %-12s%s  [", archcrypt_algorithm_name(a),
               archcrypt_implementation_name(a, sel),
               archcrypt_implementation_forced(a) ? " (forced)" : "");
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++)
            printf("%s%s%s", r ? " " : "", archcrypt_implementation_name(a, r),
                   archcrypt_implementation_runnable(a, r) ? "" : "(unavailable)");
        printf("]");
        size_t below = archcrypt_implementation_below(a, sel);
        if (below != ARCHCRYPT_NO_INDEX)
            printf(" below %zu B: %s", archcrypt_implementation_min_len(a, sel),
                   archcrypt_implementation_name(a, below));
        printf("\n");
    }
}

/* ---- AArch64: callee-saved registers (AAPCS64: x19-x28, the low halves of v8-v15) ----- */

#if defined(__aarch64__)
/* The arm64 rows hold inline asm with hand-written clobber lists; a register missing from
 * one would leave the caller's value overwritten with the results still right (OpenSSL's
 * arm64 ChaCha20 d8/d9, EDGE-CASES.md). ac_call_checked(fn, arg, seed) fills x19-x28 and
 * d8-d15 with seed + n, calls fn(arg), and returns how many of them changed. */
unsigned ac_call_checked(void (*fn)(void *), void *arg, uint64_t seed);
__asm__(".text\n"
        ".p2align 2\n"
        ".type ac_call_checked, %function\n"
        "ac_call_checked:\n\t"
        "stp x29, x30, [sp, #-176]!\n\t"
        "mov x29, sp\n\t"
        "stp x19, x20, [sp, #16]\n\t"
        "stp x21, x22, [sp, #32]\n\t"
        "stp x23, x24, [sp, #48]\n\t"
        "stp x25, x26, [sp, #64]\n\t"
        "stp x27, x28, [sp, #80]\n\t"
        "stp d8, d9, [sp, #96]\n\t"
        "stp d10, d11, [sp, #112]\n\t"
        "stp d12, d13, [sp, #128]\n\t"
        "stp d14, d15, [sp, #144]\n\t"
        "str x2, [sp, #160]\n\t"
        "mov x9, x0\n\t"
        "mov x0, x1\n\t"
        "add x19, x2, #19\n\t" "add x20, x2, #20\n\t" "add x21, x2, #21\n\t"
        "add x22, x2, #22\n\t" "add x23, x2, #23\n\t" "add x24, x2, #24\n\t"
        "add x25, x2, #25\n\t" "add x26, x2, #26\n\t" "add x27, x2, #27\n\t"
        "add x28, x2, #28\n\t"
        "add x10, x2, #8\n\t" "fmov d8, x10\n\t" "add x10, x2, #9\n\t" "fmov d9, x10\n\t"
        "add x10, x2, #10\n\t" "fmov d10, x10\n\t" "add x10, x2, #11\n\t" "fmov d11, x10\n\t"
        "add x10, x2, #12\n\t" "fmov d12, x10\n\t" "add x10, x2, #13\n\t" "fmov d13, x10\n\t"
        "add x10, x2, #14\n\t" "fmov d14, x10\n\t" "add x10, x2, #15\n\t" "fmov d15, x10\n\t"
        "blr x9\n\t"
        "ldr x2, [sp, #160]\n\t"
        "mov x0, #0\n\t"
#define AC_CHECK_X(n) "add x10, x2, #" #n "\n\tcmp x" #n ", x10\n\tcinc x0, x0, ne\n\t"
#define AC_CHECK_D(n) "add x10, x2, #" #n "\n\tfmov x11, d" #n "\n\tcmp x11, x10\n\tcinc x0, x0, ne\n\t"
        AC_CHECK_X(19) AC_CHECK_X(20) AC_CHECK_X(21) AC_CHECK_X(22) AC_CHECK_X(23)
        AC_CHECK_X(24) AC_CHECK_X(25) AC_CHECK_X(26) AC_CHECK_X(27) AC_CHECK_X(28)
        AC_CHECK_D(8) AC_CHECK_D(9) AC_CHECK_D(10) AC_CHECK_D(11) AC_CHECK_D(12)
        AC_CHECK_D(13) AC_CHECK_D(14) AC_CHECK_D(15)
#undef AC_CHECK_X
#undef AC_CHECK_D
        "ldp x19, x20, [sp, #16]\n\t"
        "ldp x21, x22, [sp, #32]\n\t"
        "ldp x23, x24, [sp, #48]\n\t"
        "ldp x25, x26, [sp, #64]\n\t"
        "ldp x27, x28, [sp, #80]\n\t"
        "ldp d8, d9, [sp, #96]\n\t"
        "ldp d10, d11, [sp, #112]\n\t"
        "ldp d12, d13, [sp, #128]\n\t"
        "ldp d14, d15, [sp, #144]\n\t"
        "ldp x29, x30, [sp], #176\n\t"
        "ret\n"
        ".size ac_call_checked, .-ac_call_checked\n");

/* One long call of the algorithm (every vector path and the scalar tails), through
 * whichever row this thread uses. */
static void callee_saved_job(void *p)
{
    const char *alg = p;
    static uint8_t buf[4096 + 48], out[4096 + 64];
    static const uint8_t key[32] = {1, 2, 3}, nonce[12] = {4, 5, 6};

    if (strcmp(alg, "chacha20") == 0) {
        (void)archcrypt_chacha20_xor(out, buf, sizeof buf, key, nonce, 1);
        (void)archcrypt_chacha20_xor(out, buf, 100, key, nonce, 1);
    } else if (strcmp(alg, "poly1305") == 0) {
        (void)archcrypt_poly1305(out, buf, sizeof buf, key);
        (void)archcrypt_poly1305(out, buf, 100, key);
    } else if (strcmp(alg, "chacha20-poly1305") == 0) {
        (void)archcrypt_chacha20poly1305_seal(out, buf, 4096, buf, 13, key, nonce);
    } else if (strcmp(alg, "sha256") == 0) {
        (void)archcrypt_hash(ARCHCRYPT_SHA256, out, buf, sizeof buf);
    } else if (strcmp(alg, "sha512") == 0) {
        (void)archcrypt_hash(ARCHCRYPT_SHA512, out, buf, sizeof buf);
    } else if (strcmp(alg, "camellia") == 0) {
        archcrypt_camellia_key *k = archcrypt_camellia_new(key, 16);
        if (k) {
            (void)archcrypt_camellia_ecb_encrypt(k, out, buf, 4096 + 32);
            (void)archcrypt_camellia_ecb_decrypt(k, out, buf, 48);
            archcrypt_camellia_free(k);
        }
    }
}

static void test_callee_saved(const char *alg, const char *impl)
{
    static const uint64_t seeds[] = {0x0123456789abcdefu, 0xfedcba9876543210u};

    use(alg, impl);
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        CHECK(ac_call_checked(callee_saved_job, (void *)alg, seeds[i]) == 0,
              "%s/%s changed a callee-saved register", alg, impl);
    use(alg, NULL);
}
#endif

int main(int argc, char **argv)
{
    int dispatch_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--dispatch") == 0)
            dispatch_only = 1;
    }
    const char *seed = getenv("ARCHCRYPT_SEED");
    if (seed)
        rng_state = strtoull(seed, NULL, 0);

    int rc = archcrypt_init();
    if (rc != ARCHCRYPT_OK) {
        fprintf(stderr, "archcrypt_init: %s: %s\n", archcrypt_strerror(rc), archcrypt_last_error());
        return 2;
    }
    if (!quiet || dispatch_only)
        print_backends();
    if (dispatch_only)
        return 0;

    for (size_t a = 0; a < archcrypt_algorithm_count(); a++) {
        const char *alg = archcrypt_algorithm_name(a);
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++) {
            const char *impl = archcrypt_implementation_name(a, r);
            if (!archcrypt_implementation_runnable(a, r)) {
                if (!quiet)
                    printf("  %-18s %-12s not runnable here (needs %s)\n", alg, impl,
                           archcrypt_implementation_requires(a, r));
                continue;
            }
            unsigned long failed_before = checks_failed;
            CHECK(archcrypt_self_test(a, r) == ARCHCRYPT_OK, "%s/%s known answers", alg, impl);
            if (strcmp(alg, "chacha20") == 0)
                test_chacha20(impl);
            else if (strcmp(alg, "poly1305") == 0) {
                test_poly1305(impl);
                test_poly1305_streaming(impl);
            }
            else if (strcmp(alg, "chacha20-poly1305") == 0)
                test_aead(impl);
            else if (strcmp(alg, "sha256") == 0) {
                test_hash(alg, impl, ARCHCRYPT_SHA224, ARCHCRYPT_SHA256);
                test_hash_many(alg, impl, ARCHCRYPT_SHA224, ARCHCRYPT_SHA256);
            } else if (strcmp(alg, "sha512") == 0) {
                test_hash(alg, impl, ARCHCRYPT_SHA384, ARCHCRYPT_SHA512);
                test_hash_many(alg, impl, ARCHCRYPT_SHA384, ARCHCRYPT_SHA512);
            }
            else if (strcmp(alg, "camellia") == 0)
                test_camellia(impl);
            else
                CHECK(0, "no differential test for algorithm %s", alg);
#if defined(__aarch64__)
            test_callee_saved(alg, impl);
#endif
            if (!quiet)
                printf("  %-18s %-12s %s\n", alg, impl,
                       checks_failed == failed_before ? "ok" : "FAILED");
        }
    }
    printf("%lu passed, %lu failed\n", checks_passed, checks_failed);
    return checks_failed ? 1 : 0;
}
