/* Differential fuzzing of the public C API: every runnable row against portable, driven by
 * lengths, alignments, in-place, split points and counters taken from the fuzzer's input.
 *
 * One libFuzzer target (LLVMFuzzerTestOneInput) for all algorithms; built with clang,
 * -fsanitize=fuzzer,address,undefined by `make -C native fuzz` (RELIABILITY.md).
 * tests/fuzz/standalone.c drives the same function from a PRNG where libFuzzer is not at
 * hand (gcc builds: the AVX-512 emulation, foreign architectures under qemu-user).
 *
 * The input is read as a stream of choices (struct in); a short input reads as zeros, so
 * every input is valid and the fuzzer can grow any field. Message bytes come from a
 * splitmix64 stream seeded by the input, overlaid with the input's own tail, so a few
 * input bytes reach 64 KiB messages (the AVX-512 and stitched-AEAD paths) while the
 * fuzzer still controls the bytes that matter (all-0xff blocks, tag bytes).
 *
 * A disagreement, a wrong status or a buffer touched outside its bounds aborts: libFuzzer
 * then keeps the input as crash-<sha1>, which `fuzz-api <file>` replays. Under ASan the
 * alignment padding before each buffer is poisoned and each buffer ends exactly at its
 * allocation, so one byte of overrun or underrun on either side is caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archcrypt.h"
#include "../testutil.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- failure -------------------------------------------------------------------------- */

/* What is being tested, for the report of a failure. */
static char context[256];

#define FAIL_IF(cond, ...)                                                                 \
    do {                                                                                   \
        if (cond) {                                                                        \
            fprintf(stderr, "fuzz-api: %s: ", context);                                    \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* ---- the input as a stream of choices ------------------------------------------------- */

struct in {
    const uint8_t *p;
    size_t n;
};

static uint8_t u8(struct in *s)
{
    if (s->n == 0)
        return 0;
    s->n--;
    return *s->p++;
}

static uint16_t u16(struct in *s)
{
    uint16_t lo = u8(s);
    return (uint16_t)(lo | (uint16_t)u8(s) << 8);
}

static uint32_t u32(struct in *s)
{
    uint32_t lo = u16(s);
    return lo | (uint32_t)u16(s) << 16;
}

static uint64_t u64(struct in *s)
{
    uint64_t lo = u32(s);
    return lo | (uint64_t)u32(s) << 32;
}

/* The longest message: past the AEAD's 16 KiB passes and 64 KiB, where implementations chunk. */
#define LONG (65536 + 300)

/* A length up to `cap`, shaped so that short lengths (every SIMD tail) are common and long
 * ones (several loop iterations of the widest row) reachable: the first byte picks the
 * scale. */
static size_t length(struct in *s, size_t cap)
{
    uint8_t scale = u8(s);
    size_t n;
    if (scale < 128)
        n = u8(s);                          /* 0..255: tails of every width */
    else if (scale < 224)
        n = u16(s) % 4200;                  /* a few 1 KiB AVX-512 / stitched-AEAD steps */
    else
        n = u32(s) % (cap + 1);             /* up to cap */
    return n > cap ? cap : n;
}

/* ---- message bytes -------------------------------------------------------------------- */

/* Fill n bytes: one pattern byte chooses random, all-0xff (Poly1305's lazy-reduction edge),
 * all-zero or a repeated byte; the input's own next bytes are laid over the start. */
static void fill(struct in *s, uint8_t *p, size_t n)
{
    uint8_t pattern = u8(s);
    uint64_t seed = u64(s);
    switch (pattern & 3) {
    case 0:
        splitmix64_fill(&seed, p, n);
        break;
    case 1:
        memset(p, 0xff, n);
        break;
    case 2:
        memset(p, 0, n);
        break;
    default:
        memset(p, (int)(seed & 0xff), n);
        break;
    }
    size_t own = u8(s);
    for (size_t i = 0; i < own && i < n; i++)
        p[i] = u8(s);
}

/* ---- buffers -------------------------------------------------------------------------- */

/* len bytes at a misalignment of 0..63 from the allocation, ending exactly where it ends;
 * the padding before them is poisoned under ASan. */
typedef struct {
    uint8_t *base;
    uint8_t *p;
    size_t pad;
    size_t len;
} buf;

static buf buf_new(size_t len, size_t pad)
{
    buf b;
    b.pad = pad % 64;
    b.len = len;
    b.base = malloc(b.pad + len + (b.pad + len == 0));
    if (!b.base) {
        fprintf(stderr, "fuzz-api: out of memory\n");
        abort();
    }
    b.p = b.base + b.pad;
    POISON(b.base, b.pad);
    return b;
}

static buf buf_copy(const uint8_t *src, size_t len, size_t pad)
{
    buf b = buf_new(len, pad);
    if (len)
        memcpy(b.p, src, len);
    return b;
}

static void buf_free(buf *b)
{
    UNPOISON(b->base, b->pad);
    free(b->base);
    b->base = b->p = NULL;
}

static int same(const uint8_t *a, const uint8_t *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

/* ---- rows ----------------------------------------------------------------------------- */

enum { MAX_ROWS = 16 };

typedef struct {
    const char *name;
    size_t count;
    const char *rows[MAX_ROWS];
} table;

/* The runnable rows of each dispatch table, read from the library once. */
static table tables[8];
static size_t n_tables;

static const table *table_named(const char *name)
{
    for (size_t i = 0; i < n_tables; i++)
        if (strcmp(tables[i].name, name) == 0)
            return &tables[i];
    fprintf(stderr, "fuzz-api: no dispatch table %s\n", name);
    abort();
}

#define use use_row

/* Pick one runnable row of the table from the input and put it in effect. */
static const char *pick(struct in *s, const char *alg)
{
    const table *t = table_named(alg);
    const char *impl = t->rows[u8(s) % t->count];
    use(alg, impl);
    return impl;
}

static int initialised;

static void init_once(void)
{
    if (initialised)
        return;
    int rc = archcrypt_init();
    if (rc != ARCHCRYPT_OK) {
        fprintf(stderr, "fuzz-api: archcrypt_init: %s: %s\n", archcrypt_strerror(rc),
                archcrypt_last_error());
        abort();
    }
    n_tables = archcrypt_algorithm_count();
    if (n_tables > sizeof tables / sizeof tables[0]) {
        fprintf(stderr, "fuzz-api: %zu dispatch tables, room for %zu\n", n_tables,
                sizeof tables / sizeof tables[0]);
        abort();
    }
    for (size_t a = 0; a < n_tables; a++) {
        table *t = &tables[a];
        t->name = archcrypt_algorithm_name(a);
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++)
            if (archcrypt_implementation_runnable(a, r) && t->count < MAX_ROWS)
                t->rows[t->count++] = archcrypt_implementation_name(a, r);
        if (t->count == 0) {
            fprintf(stderr, "fuzz-api: no runnable row for %s\n", t->name);
            abort();
        }
    }
    if (!getenv("FUZZ_API_QUIET")) {
        fprintf(stderr, "fuzz-api: archcrypt %s on %s, runnable rows:", archcrypt_version(),
                archcrypt_arch());
        for (size_t a = 0; a < n_tables; a++) {
            fprintf(stderr, " %s=", tables[a].name);
            for (size_t r = 0; r < tables[a].count; r++)
                fprintf(stderr, "%s%s", r ? "," : "", tables[a].rows[r]);
        }
        fputc('\n', stderr);
    }
    initialised = 1;
}

/* ---- ChaCha20 and HChaCha20 ------------------------------------------------------------ */

static void fuzz_chacha20(struct in *s)
{
    uint8_t key[32], nonce[12], hnonce[16], sub_ref[32], sub[32];
    const char *impl = pick(s, "chacha20");
    size_t len = length(s, LONG);
    uint8_t flags = u8(s);
    /* Counters near 2^32 are where batches wrap: half the inputs start within 20 blocks. */
    uint32_t counter = (flags & 1) ? 0xffffffffu - (u8(s) % 20) : u32(s);
    size_t ipad = u8(s), opad = u8(s);
    size_t split_blocks = u16(s);
    fill(s, key, 32);
    fill(s, nonce, 12);
    fill(s, hnonce, 16);
    buf in = buf_new(len, ipad);
    fill(s, in.p, len);
    snprintf(context, sizeof context, "chacha20/%s len %zu counter %#x pads %zu/%zu", impl, len,
             counter, in.pad, opad % 64);

    buf ref = buf_new(len, 0), out = buf_new(len, opad);
    use("chacha20", "portable");
    int rc_ref = archcrypt_chacha20_xor(ref.p, in.p, len, key, nonce, counter);
    archcrypt_hchacha20(sub_ref, key, hnonce);
    use("chacha20", impl);
    int rc = archcrypt_chacha20_xor(out.p, in.p, len, key, nonce, counter);
    FAIL_IF(rc != rc_ref, "status %d, portable %d", rc, rc_ref);
    FAIL_IF(rc_ref == ARCHCRYPT_OK && !same(out.p, ref.p, len), "output != portable");
    archcrypt_hchacha20(sub, key, hnonce);
    FAIL_IF(memcmp(sub, sub_ref, 32) != 0, "hchacha20 != portable");

    if (rc_ref == ARCHCRYPT_OK) {
        /* In place. */
        buf io = buf_copy(in.p, len, opad + 1);
        FAIL_IF(archcrypt_chacha20_xor(io.p, io.p, len, key, nonce, counter) != ARCHCRYPT_OK,
                "in place refused");
        FAIL_IF(!same(io.p, ref.p, len), "in place != portable");
        buf_free(&io);

        /* Two calls, split at a block boundary, the second counter advanced. */
        size_t blocks = (len + 63) / 64;
        size_t k = blocks ? split_blocks % (blocks + 1) : 0;
        size_t head = k * 64 < len ? k * 64 : len;
        buf two = buf_new(len, opad + 7);
        FAIL_IF(archcrypt_chacha20_xor(two.p, in.p, head, key, nonce, counter) != ARCHCRYPT_OK,
                "split head (%zu bytes) refused", head);
        FAIL_IF(archcrypt_chacha20_xor(two.p + head, in.p + head, len - head, key, nonce,
                                       counter + (uint32_t)k) != ARCHCRYPT_OK,
                "split tail refused at block %zu", k);
        FAIL_IF(!same(two.p, ref.p, len), "split at block %zu != one-shot", k);
        buf_free(&two);
    }
    buf_free(&in);
    buf_free(&ref);
    buf_free(&out);
    use("chacha20", NULL);
}

/* ---- Poly1305 ------------------------------------------------------------------------- */

/* Feed msg to an incremental context in pieces whose sizes the input chooses. */
typedef int (*update_fn)(void *ctx, const uint8_t *msg, size_t len);

static void feed(struct in *s, void *ctx, update_fn update, const uint8_t *msg, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        uint8_t c = u8(s);
        /* 0..64 mostly (every block edge), sometimes up to 4 KiB, and the rest when the
         * input runs out (c == 0 after the end). */
        size_t step = c == 0 ? len - pos : c < 200 ? (size_t)(c % 66) : (size_t)u16(s) % 4096;
        if (step > len - pos)
            step = len - pos;
        FAIL_IF(update(ctx, msg + pos, step) != ARCHCRYPT_OK, "update of %zu at %zu refused",
                step, pos);
        pos += step;
    }
}

static int poly_update(void *ctx, const uint8_t *msg, size_t len)
{
    return archcrypt_poly1305_update(ctx, msg, len);
}

static void fuzz_poly1305(struct in *s)
{
    uint8_t key[32], ref[16], tag[16], inc[16];
    const char *impl = pick(s, "poly1305");
    size_t len = length(s, LONG);
    size_t pad = u8(s);
    /* Keys with limbs at 0 and at their maximum are where the reductions break. */
    fill(s, key, 32);
    buf msg = buf_new(len, pad);
    fill(s, msg.p, len);
    snprintf(context, sizeof context, "poly1305/%s len %zu pad %zu", impl, len, msg.pad);

    use("poly1305", "portable");
    archcrypt_poly1305(ref, msg.p, len, key);
    use("poly1305", impl);
    FAIL_IF(archcrypt_poly1305(tag, msg.p, len, key) != ARCHCRYPT_OK, "refused");
    FAIL_IF(memcmp(tag, ref, 16) != 0, "tag != portable");
    FAIL_IF(archcrypt_poly1305_verify(ref, msg.p, len, key) != 1, "verify rejected its tag");
    uint8_t bad[16];
    memcpy(bad, ref, 16);
    bad[u8(s) % 16] ^= (uint8_t)(1u << (u8(s) % 8));
    FAIL_IF(archcrypt_poly1305_verify(bad, msg.p, len, key) != 0, "verify accepted a bad tag");

    archcrypt_poly1305_ctx *ctx = archcrypt_poly1305_new(key);
    FAIL_IF(ctx == NULL, "new failed");
    feed(s, ctx, poly_update, msg.p, len);
    FAIL_IF(archcrypt_poly1305_final(ctx, inc) != ARCHCRYPT_OK, "final refused");
    FAIL_IF(memcmp(inc, ref, 16) != 0, "incremental != one-shot");
    FAIL_IF(archcrypt_poly1305_update(ctx, key, 1) == ARCHCRYPT_OK, "update after final accepted");
    archcrypt_poly1305_free(ctx);
    buf_free(&msg);
    use("poly1305", NULL);
}

/* ---- ChaCha20-Poly1305 and XChaCha20-Poly1305 ------------------------------------------- */

typedef int (*aead_fn)(uint8_t *, const uint8_t *, size_t, const uint8_t *, size_t,
                       const uint8_t *, const uint8_t *);

static void fuzz_aead(struct in *s)
{
    uint8_t key[32], nonce[24];
    /* The AEAD row and the ChaCha20 and Poly1305 rows the composed row runs through. */
    const char *aead = pick(s, "chacha20-poly1305");
    const char *chacha = pick(s, "chacha20");
    const char *poly = pick(s, "poly1305");
    int x = u8(s) & 1;
    aead_fn seal = x ? archcrypt_xchacha20poly1305_seal : archcrypt_chacha20poly1305_seal;
    aead_fn open = x ? archcrypt_xchacha20poly1305_open : archcrypt_chacha20poly1305_open;
    size_t len = length(s, LONG);
    size_t aad_len = length(s, 1024);
    size_t ppad = u8(s), cpad = u8(s), apad = u8(s);
    fill(s, key, 32);
    fill(s, nonce, 24);
    buf pt = buf_new(len, ppad), aad = buf_new(aad_len, apad);
    fill(s, pt.p, len);
    fill(s, aad.p, aad_len);
    snprintf(context, sizeof context,
             "%s aead=%s chacha20=%s poly1305=%s len %zu aad %zu pads %zu/%zu/%zu",
             x ? "xchacha20-poly1305" : "chacha20-poly1305", aead, chacha, poly, len, aad_len,
             pt.pad, cpad % 64, aad.pad);

    buf ref = buf_new(len + 16, 0);
    use_reference();
    FAIL_IF(seal(ref.p, pt.p, len, aad.p, aad_len, key, nonce) != ARCHCRYPT_OK,
            "reference seal refused");
    use("chacha20", chacha);
    use("poly1305", poly);
    use("chacha20-poly1305", aead);

    buf ct = buf_new(len + 16, cpad);
    FAIL_IF(seal(ct.p, pt.p, len, aad.p, aad_len, key, nonce) != ARCHCRYPT_OK, "seal refused");
    FAIL_IF(!same(ct.p, ref.p, len + 16), "seal != reference");

    buf back = buf_new(len, ppad + 5);
    FAIL_IF(open(back.p, ct.p, len + 16, aad.p, aad_len, key, nonce) != ARCHCRYPT_OK,
            "open rejected its own ciphertext");
    FAIL_IF(!same(back.p, pt.p, len), "open != plaintext");

    /* In place: the plaintext at the start of the ciphertext's buffer, and back. */
    buf io = buf_new(len + 16, cpad + 3);
    if (len)
        memcpy(io.p, pt.p, len);
    FAIL_IF(seal(io.p, io.p, len, aad.p, aad_len, key, nonce) != ARCHCRYPT_OK,
            "in-place seal refused");
    FAIL_IF(!same(io.p, ref.p, len + 16), "in-place seal != reference");
    FAIL_IF(open(io.p, io.p, len + 16, aad.p, aad_len, key, nonce) != ARCHCRYPT_OK,
            "in-place open rejected");
    FAIL_IF(!same(io.p, pt.p, len), "in-place open != plaintext");
    buf_free(&io);

    /* One flipped bit anywhere in ciphertext, tag or AAD: refused, nothing released. */
    uint8_t where = u8(s);
    size_t pos = u32(s);
    uint8_t bit = (uint8_t)(1u << (u8(s) % 8));
    uint8_t *victim = (where & 1) && aad_len ? aad.p + pos % aad_len : ct.p + pos % (len + 16);
    *victim ^= bit;
    if (len)
        memset(back.p, 0x5a, len);
    FAIL_IF(open(back.p, ct.p, len + 16, aad.p, aad_len, key, nonce) !=
                ARCHCRYPT_ERR_AUTHENTICATION,
            "a flipped bit (%s byte %zu) was accepted", (where & 1) && aad_len ? "aad" : "ct",
            (size_t)(victim - ((where & 1) && aad_len ? aad.p : ct.p)));
    FAIL_IF(!all_zero(back.p, len), "plaintext not wiped after a failed open");
    *victim ^= bit;

    /* Shorter than a tag: refused before anything is read past the end. */
    size_t short_len = u8(s) % 16;
    buf tiny = buf_copy(ct.p, short_len, cpad);
    uint8_t sink[1];
    FAIL_IF(open(sink, tiny.p, short_len, aad.p, aad_len, key, nonce) !=
                ARCHCRYPT_ERR_INVALID_ARGUMENT,
            "a %zu-byte ciphertext was not refused", short_len);
    buf_free(&tiny);

    buf_free(&pt);
    buf_free(&aad);
    buf_free(&ref);
    buf_free(&ct);
    buf_free(&back);
    use("chacha20", NULL);
    use("poly1305", NULL);
    use("chacha20-poly1305", NULL);
}

/* ---- SHA-2, batches and HMAC ------------------------------------------------------------ */

static const char *hash_table(int id)
{
    return id <= ARCHCRYPT_SHA256 ? "sha256" : "sha512";
}

static int hash_update(void *ctx, const uint8_t *msg, size_t len)
{
    return archcrypt_hash_update(ctx, msg, len);
}

static int hmac_update(void *ctx, const uint8_t *msg, size_t len)
{
    return archcrypt_hmac_update(ctx, msg, len);
}

static void fuzz_hash(struct in *s)
{
    int id = u8(s) % 4;
    const char *alg = hash_table(id);
    const char *impl = pick(s, alg);
    size_t dlen = archcrypt_hash_digest_size(id);
    size_t len = length(s, LONG);
    size_t pad = u8(s);
    buf msg = buf_new(len, pad);
    fill(s, msg.p, len);
    uint8_t ref[64], dig[64], inc[64];
    snprintf(context, sizeof context, "hash %d over %s/%s len %zu pad %zu", id, alg, impl, len,
             msg.pad);

    use(alg, "portable");
    archcrypt_hash(id, ref, msg.p, len);
    use(alg, impl);
    FAIL_IF(archcrypt_hash(id, dig, msg.p, len) != ARCHCRYPT_OK, "refused");
    FAIL_IF(memcmp(dig, ref, dlen) != 0, "digest != portable");

    /* Incremental in input-chosen pieces, with a copy taken part way. */
    size_t cut = len ? (size_t)u32(s) % (len + 1) : 0;
    archcrypt_hash_ctx *ctx = archcrypt_hash_new(id);
    FAIL_IF(ctx == NULL, "new failed");
    feed(s, ctx, hash_update, msg.p, cut);
    archcrypt_hash_ctx *copy = archcrypt_hash_copy(ctx);
    FAIL_IF(copy == NULL, "copy failed");
    feed(s, ctx, hash_update, msg.p + cut, len - cut);
    FAIL_IF(archcrypt_hash_final(ctx, inc) != ARCHCRYPT_OK, "final refused");
    FAIL_IF(memcmp(inc, ref, dlen) != 0, "incremental != one-shot (copy at %zu)", cut);
    FAIL_IF(archcrypt_hash_update(copy, msg.p + cut, len - cut) != ARCHCRYPT_OK, "copy update");
    FAIL_IF(archcrypt_hash_final(copy, inc) != ARCHCRYPT_OK, "copy final refused");
    FAIL_IF(memcmp(inc, ref, dlen) != 0, "copied context at %zu != one-shot", cut);
    archcrypt_hash_free(ctx);
    archcrypt_hash_free(copy);
    buf_free(&msg);

    /* A batch: up to 17 messages (two full 8-lane rounds and one left over) of lengths the
     * input chooses, each in its own exactly-sized buffer; digests end where they should. */
    enum { MAX_N = 17 };
    size_t n = u8(s) % (MAX_N + 1);
    buf msgs[MAX_N];
    const uint8_t *ptrs[MAX_N];
    size_t lens[MAX_N];
    for (size_t i = 0; i < n; i++) {
        lens[i] = length(s, 9000);
        msgs[i] = buf_new(lens[i], u8(s));
        fill(s, msgs[i].p, lens[i]);
        ptrs[i] = lens[i] == 0 && (u8(s) & 1) ? NULL : msgs[i].p;
    }
    buf refs = buf_new(n * dlen, 0), got = buf_new(n * dlen, u8(s));
    use(alg, "portable");
    for (size_t i = 0; i < n; i++)
        archcrypt_hash(id, refs.p + i * dlen, ptrs[i], lens[i]);
    use(alg, impl);
    snprintf(context, sizeof context, "hash_many %d over %s/%s n %zu", id, alg, impl, n);
    FAIL_IF(archcrypt_hash_many(id, n, n ? ptrs : NULL, n ? lens : NULL, n ? got.p : NULL) !=
                ARCHCRYPT_OK,
            "refused");
    for (size_t i = 0; i < n; i++)
        FAIL_IF(memcmp(got.p + i * dlen, refs.p + i * dlen, dlen) != 0,
                "message %zu (len %zu) != portable", i, lens[i]);
    for (size_t i = 0; i < n; i++)
        buf_free(&msgs[i]);
    buf_free(&refs);
    buf_free(&got);
    use(alg, NULL);
}

static void fuzz_hmac(struct in *s)
{
    int id = u8(s) % 4;
    const char *alg = hash_table(id);
    const char *impl = pick(s, alg);
    size_t dlen = archcrypt_hash_digest_size(id);
    size_t klen = length(s, 600);          /* around and past the 64/128-byte block */
    size_t len = length(s, 1 << 16);
    buf key = buf_new(klen, u8(s)), msg = buf_new(len, u8(s));
    fill(s, key.p, klen);
    fill(s, msg.p, len);
    uint8_t ref[64], mac[64], inc[64];
    snprintf(context, sizeof context, "hmac %d over %s/%s key %zu len %zu", id, alg, impl, klen,
             len);

    use(alg, "portable");
    archcrypt_hmac(id, ref, key.p, klen, msg.p, len);
    use(alg, impl);
    FAIL_IF(archcrypt_hmac(id, mac, key.p, klen, msg.p, len) != ARCHCRYPT_OK, "refused");
    FAIL_IF(memcmp(mac, ref, dlen) != 0, "tag != portable");

    /* Truncated tags down to one byte verify; one flipped bit in them does not. */
    size_t tlen = 1 + u8(s) % dlen;
    buf tag = buf_copy(ref, tlen, u8(s));
    FAIL_IF(archcrypt_hmac_verify(id, tag.p, tlen, key.p, klen, msg.p, len) != 1,
            "verify rejected its %zu-byte tag", tlen);
    tag.p[u8(s) % tlen] ^= (uint8_t)(1u << (u8(s) % 8));
    FAIL_IF(archcrypt_hmac_verify(id, tag.p, tlen, key.p, klen, msg.p, len) != 0,
            "verify accepted a bad %zu-byte tag", tlen);
    FAIL_IF(archcrypt_hmac_verify(id, ref, dlen + 1, key.p, klen, msg.p, len) != 0,
            "verify accepted a tag longer than the digest");
    buf_free(&tag);

    archcrypt_hmac_ctx *ctx = archcrypt_hmac_new(id, key.p, klen);
    FAIL_IF(ctx == NULL, "new failed");
    feed(s, ctx, hmac_update, msg.p, len);
    FAIL_IF(archcrypt_hmac_final(ctx, inc) != ARCHCRYPT_OK, "final refused");
    FAIL_IF(memcmp(inc, ref, dlen) != 0, "incremental != one-shot");
    archcrypt_hmac_free(ctx);
    buf_free(&key);
    buf_free(&msg);
    use(alg, NULL);
}

/* ---- Camellia ------------------------------------------------------------------------- */

static void fuzz_camellia(struct in *s)
{
    static const size_t key_lens[] = {16, 24, 32};
    const char *impl = pick(s, "camellia");
    size_t klen = key_lens[u8(s) % 3];
    size_t blocks = length(s, 4096);
    size_t len = blocks * 16;
    uint8_t key[32];
    int prepared_for_portable = u8(s) & 1;
    fill(s, key, klen);
    buf pt = buf_new(len, u8(s));
    fill(s, pt.p, len);
    snprintf(context, sizeof context, "camellia-%zu/%s %zu blocks, key prepared for %s",
             klen * 8, impl, blocks, prepared_for_portable ? "portable" : impl);

    /* A key object is prepared for the row in effect when it is made; rows must also
     * take one prepared for portable. */
    use("camellia", "portable");
    archcrypt_camellia_key *ks_ref = archcrypt_camellia_new(key, klen);
    use("camellia", impl);
    archcrypt_camellia_key *ks = prepared_for_portable ? NULL : archcrypt_camellia_new(key, klen);
    const archcrypt_camellia_key *k = prepared_for_portable ? ks_ref : ks;
    FAIL_IF(ks_ref == NULL || k == NULL, "key schedule failed");

    buf ref = buf_new(len, 0), ct = buf_new(len, u8(s));
    use("camellia", "portable");
    archcrypt_camellia_ecb_encrypt(ks_ref, ref.p, pt.p, len);
    use("camellia", impl);
    FAIL_IF(archcrypt_camellia_ecb_encrypt(k, ct.p, pt.p, len) != ARCHCRYPT_OK, "encrypt refused");
    FAIL_IF(!same(ct.p, ref.p, len), "encrypt != portable");
    buf back = buf_new(len, u8(s));
    FAIL_IF(archcrypt_camellia_ecb_decrypt(k, back.p, ct.p, len) != ARCHCRYPT_OK,
            "decrypt refused");
    FAIL_IF(!same(back.p, pt.p, len), "decrypt != plaintext");
    /* In place, both ways. */
    FAIL_IF(archcrypt_camellia_ecb_encrypt(k, back.p, back.p, len) != ARCHCRYPT_OK ||
                !same(back.p, ref.p, len),
            "in-place encrypt != portable");
    FAIL_IF(archcrypt_camellia_ecb_decrypt(k, back.p, back.p, len) != ARCHCRYPT_OK ||
                !same(back.p, pt.p, len),
            "in-place decrypt != plaintext");
    /* Not a multiple of the block: refused. */
    if (len)
        FAIL_IF(archcrypt_camellia_ecb_encrypt(k, back.p, pt.p, len - 1 - u8(s) % 15) !=
                    ARCHCRYPT_ERR_INVALID_ARGUMENT,
                "a partial block was not refused");

    archcrypt_camellia_free(ks_ref);
    archcrypt_camellia_free(ks);
    buf_free(&pt);
    buf_free(&ref);
    buf_free(&ct);
    buf_free(&back);
    use("camellia", NULL);
}

/* ---- entry ---------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    init_once();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static void (*const targets[])(struct in *) = {
        fuzz_chacha20, fuzz_poly1305, fuzz_aead, fuzz_hash, fuzz_hmac, fuzz_camellia,
    };
    struct in s = {data, size};
    init_once();
    targets[u8(&s) % (sizeof targets / sizeof targets[0])](&s);
    return 0;
}
