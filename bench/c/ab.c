/* A/B benchmark: one operation and row through two builds of the library loaded side by
 * side (dlopen), rounds interleaved, each round timed in thread CPU time, medians. For
 * "no regression" on a shared machine: time a neighbour steals lands in neither build's
 * count, and what load remains (caches, the other hyperthread) falls on both alike.
 *
 *   bench-ab OLD.so NEW.so ALGORITHM ROW SIZES [ROUNDS]
 *   e.g. bench-ab /tmp/old/native/build/x86_64-linux-gnu/libarchcrypt.so \
 *                 native/build/x86_64-linux-gnu/libarchcrypt.so chacha20 ssse3 64,1024,65536
 *
 * ALGORITHM is a dispatch table (chacha20, poly1305, chacha20-poly1305, sha256, sha512,
 * camellia); each call is the one bench/c/workloads.h makes, through the public API.
 * sha256-manyN / sha512-manyN (N = 1..64, e.g. sha256-many16) time one
 * archcrypt_hash_many over N distinct messages of SIZE bytes each, and report c/B per
 * message (time / (N * SIZE)): the multi-buffer batch path of the row.
 * `make -C native shared bench-ab` builds the library as a shared object and this. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archcrypt.h" /* the hash ids; the functions come from the two builds (dlsym) */

#define MAX_SIZE (1u << 20)
#define MAX_MANY 64

typedef struct {
    void *handle;
    int (*use)(const char *, const char *);
    int (*chacha20)(uint8_t *, const uint8_t *, size_t, const uint8_t *, const uint8_t *, uint32_t);
    int (*poly1305)(uint8_t *, const uint8_t *, size_t, const uint8_t *);
    int (*seal)(uint8_t *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                const uint8_t *);
    int (*hash)(int, uint8_t *, const uint8_t *, size_t);
    int (*hash_many)(int, size_t, const uint8_t *const *, const size_t *, uint8_t *);
    void *(*camellia_new)(const uint8_t *, size_t);
    int (*camellia)(const void *, uint8_t *, const uint8_t *, size_t);
    double (*core_hz)(double);
    void *camellia_key;
} build;

static uint8_t in[MAX_SIZE], out[MAX_SIZE + 64], key[32], nonce[12];
static const char *algorithm;
/* Batches: the dispatch table's name, the hash id, the message count (0: not a batch).
 * The messages are separate buffers (SIZE + 64 bytes apart, so that lanes neither share
 * cache lines nor all map to one L1 set), as distinct messages would be: overlapping
 * windows of one buffer would keep a batch of 16 KiB messages in L1. */
static char table[32];
static int many_id;
static size_t many_n;
static const uint8_t *many_msgs[MAX_MANY];
static size_t many_lens[MAX_MANY];

static void *sym(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) {
        fprintf(stderr, "bench-ab: %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void load(build *b, const char *path, const char *row)
{
    b->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!b->handle) {
        fprintf(stderr, "bench-ab: %s\n", dlerror());
        exit(2);
    }
    *(void **)&b->use = sym(b->handle, "archcrypt_use_on_this_thread");
    *(void **)&b->chacha20 = sym(b->handle, "archcrypt_chacha20_xor");
    *(void **)&b->poly1305 = sym(b->handle, "archcrypt_poly1305");
    *(void **)&b->seal = sym(b->handle, "archcrypt_chacha20poly1305_seal");
    *(void **)&b->hash = sym(b->handle, "archcrypt_hash");
    *(void **)&b->hash_many = sym(b->handle, "archcrypt_hash_many");
    *(void **)&b->camellia_new = sym(b->handle, "archcrypt_camellia_new");
    *(void **)&b->camellia = sym(b->handle, "archcrypt_camellia_ecb_encrypt");
    *(void **)&b->core_hz = sym(b->handle, "archcrypt_core_hz");
    if (b->use(table, row) != 0) {
        fprintf(stderr, "bench-ab: %s cannot run %s/%s here\n", path, algorithm, row);
        exit(2);
    }
    b->camellia_key = b->camellia_new(key, 16);
}

static void once(const build *b, size_t len)
{
    if (many_n) {
        for (size_t i = 0; i < many_n; i++)
            many_lens[i] = len;
        b->hash_many(many_id, many_n, many_msgs, many_lens, out);
    } else if (strcmp(algorithm, "chacha20") == 0)
        b->chacha20(out, in, len, key, nonce, 1);
    else if (strcmp(algorithm, "poly1305") == 0)
        b->poly1305(out, in, len, key);
    else if (strcmp(algorithm, "chacha20-poly1305") == 0)
        b->seal(out, in, len, NULL, 0, key, nonce);
    else if (strcmp(algorithm, "sha256") == 0)
        b->hash(ARCHCRYPT_SHA256, out, in, len);
    else if (strcmp(algorithm, "sha512") == 0)
        b->hash(ARCHCRYPT_SHA512, out, in, len);
    else
        b->camellia(b->camellia_key, out, in, len & ~(size_t)15);
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    static const char *const known[] = {"chacha20", "poly1305", "chacha20-poly1305",
                                        "sha256", "sha512", "camellia"};
    if (argc < 6) {
        fprintf(stderr, "usage: %s OLD.so NEW.so ALGORITHM ROW SIZES [ROUNDS]\n", argv[0]);
        return 2;
    }
    algorithm = argv[3];
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok |= strcmp(algorithm, known[i]) == 0;
    snprintf(table, sizeof table, "%s", algorithm);
    if (!ok && (strncmp(algorithm, "sha256-many", 11) == 0 || strncmp(algorithm, "sha512-many", 11) == 0)) {
        char *end;
        unsigned long n = strtoul(algorithm + 11, &end, 10);
        ok = *end == '\0' && n >= 1 && n <= MAX_MANY;
        many_n = ok ? n : 0;
        many_id = algorithm[3] == '2' ? ARCHCRYPT_SHA256 : ARCHCRYPT_SHA512;
        table[6] = '\0';
    }
    int rounds = argc > 6 ? atoi(argv[6]) : 41;
    if (!ok || rounds < 3 || rounds > 1000) {
        fprintf(stderr, "bench-ab: bad algorithm or rounds\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 131 + 7);
    memset(key, 0x42, sizeof key);
    memset(nonce, 0x24, sizeof nonce);
    build b[2];
    load(&b[0], argv[1], argv[4]);
    load(&b[1], argv[2], argv[4]);
    double hz = b[0].core_hz(0.2);
    double *s[2] = {malloc(sizeof(double) * (size_t)rounds), malloc(sizeof(double) * (size_t)rounds)};
    if (!s[0] || !s[1])
        return 2;
    printf("%s/%s, thread CPU time, median of %d interleaved rounds, core clock %.2f GHz\n",
           algorithm, argv[4], rounds, hz / 1e9);
    printf("%10s %10s %10s %8s   (interquartile range old | new)\n", "bytes", "old c/B",
           "new c/B", "new/old");
    for (char *tok = strtok(argv[5], ","); tok; tok = strtok(NULL, ",")) {
        size_t len = strtoull(tok, NULL, 10);
        if (len == 0 || len > MAX_SIZE) {
            fprintf(stderr, "bench-ab: sizes 1..%u\n", MAX_SIZE);
            return 2;
        }
        uint8_t *batch = NULL;
        if (many_n) {
            batch = malloc(many_n * (len + 64));
            if (!batch)
                return 2;
            for (size_t i = 0; i < many_n * (len + 64); i++)
                batch[i] = (uint8_t)(i * 131 + 7);
            for (size_t i = 0; i < many_n; i++)
                many_msgs[i] = batch + i * (len + 64);
        }
        long iters = 1;
        for (;;) {
            double t0 = cpu();
            for (long k = 0; k < iters; k++)
                once(&b[0], len);
            if (cpu() - t0 > 0.01 || iters > (1L << 30))
                break;
            iters *= 2;
        }
        /* ABBA order, so that neither build always runs first. */
        for (int r = 0; r < rounds; r++)
            for (int j = 0; j < 2; j++) {
                int i = (r & 1) ? 1 - j : j;
                double t0 = cpu();
                for (long k = 0; k < iters; k++)
                    once(&b[i], len);
                s[i][r] = (cpu() - t0) / (double)iters;
            }
        for (int i = 0; i < 2; i++)
            qsort(s[i], (size_t)rounds, sizeof(double), cmp);
        double c = hz / (double)len / (double)(many_n ? many_n : 1);
        double o = s[0][rounds / 2], n = s[1][rounds / 2];
        printf("%10zu %10.3f %10.3f %8.3f   (%.3f-%.3f | %.3f-%.3f)\n", len, o * c, n * c, n / o,
               s[0][rounds / 4] * c, s[0][3 * rounds / 4] * c, s[1][rounds / 4] * c,
               s[1][3 * rounds / 4] * c);
        free(batch);
    }
    return 0;
}
