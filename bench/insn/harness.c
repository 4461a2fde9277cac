/* Instruction-count harness: one operation, one message size, N calls, against the one
 * library it was built for (-DBENCH_ARCHCRYPT, -DBENCH_GCRYPT, -DBENCH_OPENSSL or
 * -DBENCH_SODIUM), each call as bench/c/workloads.h makes it. Run under qemu with an
 * instruction-count plugin; bench/insn/run.py subtracts a run with 0 calls (same binary,
 * same set-up, one warm-up call) and divides by the bytes processed.
 *
 *   harness OPERATION SIZE CALLS      an operation of workloads.h (chacha20, ...,
 *                                     camellia-128-ecb), or poly1305-stream
 *   harness workloads                 "<operation> <archcrypt table> <unit>" per workload
 *   harness rows                      (archcrypt) every dispatch row, runnable, selected
 * Exit 2 for an operation the library does not have, 1 for a failure.
 *
 * Per message, as a user would: a fresh nonce for ChaCha20 and the AEAD, a fresh one-time
 * key for Poly1305 (the same bytes: the harness measures, it does not attack), one-shot
 * SHA-2, a Camellia key scheduled once. archcrypt's rows are chosen with ARCHCRYPT_FORCE.
 *
 * poly1305-stream is this harness's own: Go's BenchmarkWrite64/Write1K, one MAC keyed
 * once and CALLS writes of SIZE bytes into it, the tag taken after the last (in the empty
 * run too), through each library's streaming API: what a MAC over a stream of small
 * writes costs, buffering included. */
#include "../c/workloads.h"

#if defined(BENCH_ARCHCRYPT) + defined(BENCH_OPENSSL) + defined(BENCH_SODIUM) + \
        defined(BENCH_GCRYPT) != 1
#error "define exactly one of BENCH_ARCHCRYPT, BENCH_OPENSSL, BENCH_SODIUM, BENCH_GCRYPT"
#endif

static volatile uint8_t sink;

/* ---- poly1305-stream: begin (after bench_setup), one write per call, end ---------------- */
static const char STREAM_OPERATION[] = "poly1305-stream";

#if defined(BENCH_ARCHCRYPT)
static archcrypt_poly1305_ctx *stream;
static void stream_begin(void)
{
    if (!(stream = archcrypt_poly1305_new(B.key)))
        bench_die("archcrypt_poly1305_new");
}
static void stream_write(size_t n)
{
    if (archcrypt_poly1305_update(stream, B.in, n) != ARCHCRYPT_OK)
        bench_die("archcrypt_poly1305_update");
}
static void stream_end(void)
{
    if (archcrypt_poly1305_final(stream, B.out) != ARCHCRYPT_OK)
        bench_die("archcrypt_poly1305_final");
}
#elif defined(BENCH_OPENSSL)
static void stream_begin(void)
{
    if (!EVP_MAC_init(ossl_poly_ctx, B.key, 32, NULL))
        bench_die("EVP_MAC_init");
}
static void stream_write(size_t n)
{
    if (!EVP_MAC_update(ossl_poly_ctx, B.in, n))
        bench_die("EVP_MAC_update");
}
static void stream_end(void)
{
    size_t outl;
    if (!EVP_MAC_final(ossl_poly_ctx, B.out, &outl, 16))
        bench_die("EVP_MAC_final");
}
#elif defined(BENCH_SODIUM)
static crypto_onetimeauth_poly1305_state stream;
static void stream_begin(void)
{
    if (crypto_onetimeauth_poly1305_init(&stream, B.key) != 0)
        bench_die("crypto_onetimeauth_poly1305_init");
}
static void stream_write(size_t n)
{
    if (crypto_onetimeauth_poly1305_update(&stream, B.in, n) != 0)
        bench_die("crypto_onetimeauth_poly1305_update");
}
static void stream_end(void)
{
    if (crypto_onetimeauth_poly1305_final(&stream, B.out) != 0)
        bench_die("crypto_onetimeauth_poly1305_final");
}
#elif defined(BENCH_GCRYPT)
static void stream_begin(void)
{
    if (gcry_mac_setkey(gc_poly_hd, B.key, 32))
        bench_die("gcry_mac_setkey");
}
static void stream_write(size_t n)
{
    if (gcry_mac_write(gc_poly_hd, B.in, n))
        bench_die("gcry_mac_write");
}
static void stream_end(void)
{
    size_t tl = 16;
    if (gcry_mac_read(gc_poly_hd, B.out, &tl))
        bench_die("gcry_mac_read");
}
#endif

/* This build's call for a workload, NULL when its library has none. */
static bench_fn call_for(workload w)
{
#if defined(BENCH_ARCHCRYPT)
    return ours_calls[w];
#else
    for (size_t i = 0; i < N_PEER_ROWS; i++)
        if (peer_rows[i].w == w)
            return peer_rows[i].fn;  /* the library's first API for it (EVP_Digest for SHA-2) */
    return NULL;
#endif
}

#if defined(BENCH_ARCHCRYPT)
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
    if (argc == 2 && strcmp(argv[1], "workloads") == 0) {
        for (int w = 0; w < W_COUNT; w++)
            printf("%s %s %zu\n", workloads[w].operation, workloads[w].algorithm, workloads[w].unit);
        printf("%s poly1305 1\n", STREAM_OPERATION);
        return 0;
    }
#if defined(BENCH_ARCHCRYPT)
    if (argc == 2 && strcmp(argv[1], "rows") == 0)
        return print_rows();
#endif
    if (argc != 4) {
        fprintf(stderr, "usage: %s OPERATION SIZE CALLS | workloads%s\n", argv[0],
#if defined(BENCH_ARCHCRYPT)
                " | rows"
#else
                ""
#endif
        );
        return 1;
    }
    int streaming = strcmp(argv[1], STREAM_OPERATION) == 0;
    workload w = streaming ? W_POLY1305 : workload_named(argv[1]);
    size_t len = strtoull(argv[2], NULL, 10);
    unsigned long calls = strtoul(argv[3], NULL, 10);
    if (w == W_COUNT || len % workloads[w].unit) {
        fprintf(stderr, "harness: bad operation or size\n");
        return 1;
    }
    B.in = aligned_alloc(64, len + 64);
    B.out = aligned_alloc(64, len + 128);
    if (!B.in || !B.out)
        bench_die("aligned_alloc");
    for (size_t i = 0; i < len + 64; i++)
        B.in[i] = (uint8_t)(i * 131 + 7);
    for (size_t i = 0; i < sizeof B.key; i++)
        B.key[i] = (uint8_t)(i + 1);
    uint8_t nonce[12] = {0};
    bench_set_nonce(nonce);
    bench_fn fn = streaming ? stream_write : call_for(w);
    if (!fn)
        return 2;
    bench_setup();
    if (streaming)
        stream_begin();
    fn(len); /* warm-up: lazy initialisation lands in the empty run too */
    for (unsigned long c = 0; c < calls; c++) {
        /* A fresh nonce per message, as a user would (iv16 carries it too). */
        B.nonce[0] = B.iv16[4] = (uint8_t)c;
        fn(len);
    }
    if (streaming)
        stream_end();
    sink = B.out[0];
    return 0;
}
