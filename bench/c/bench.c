/* C benchmark: bytes/s and cycles/byte for every runnable implementation of every
 * algorithm at each message size (the operations of bench/c/workloads.h), then SHA-256's
 * batch path (archcrypt_hash_many of 8 messages) beside the same messages one at a time,
 * per row. Cycles come from the measured core clock (archcrypt_core_hz: a dependent add
 * chain), not from the TSC.
 *
 *   bench [--sizes 64,1024,...] [--min-time SECONDS] [--algorithm NAME] [--csv] */
#include <time.h>

#define BENCH_ARCHCRYPT
#include "workloads.h"

#define SAMPLES 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One message of len bytes (rounded down to the workload's unit); the dispatch row is the
 * thread's override. */
static void run_once(workload w, size_t len)
{
    ours_calls[w](len - len % workloads[w].unit);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over SAMPLES timed batches, each about min_time / SAMPLES long. */
static double measure(workload w, size_t len, double min_time)
{
    size_t iters = 1;
    for (;;) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++)
            run_once(w, len);
        double dt = now() - t0;
        if (dt >= min_time / SAMPLES / 4 || iters > ((size_t)1 << 40))
            break;
        iters *= 2;
    }
    iters = iters * 4;
    double rate[SAMPLES];
    for (int s = 0; s < SAMPLES; s++) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++)
            run_once(w, len);
        rate[s] = (double)len * (double)iters / (now() - t0);
    }
    qsort(rate, SAMPLES, sizeof(rate[0]), cmp_double);
    return rate[SAMPLES / 2];
}

/* ---- SHA-256 batch: archcrypt_hash_many over BATCH_N messages vs one at a time ---------- */

#define BATCH_N 8
/* More rounds than SAMPLES: on a shared machine the interleaved rounds are what make
 * the ratio between rows trustworthy. */
#define BATCH_ROUNDS 15

typedef struct {
    const char *impl;
    int batch;                  /* 1: one archcrypt_hash_many call; 0: BATCH_N archcrypt_hash */
    size_t iters;
    double sec[BATCH_ROUNDS];   /* per message */
} batch_runner;

static const uint8_t *batch_msgs[BATCH_N];
static size_t batch_lens[BATCH_N];
static uint8_t batch_out[BATCH_N * 32];

static void batch_once(const batch_runner *b)
{
    if (b->batch) {
        archcrypt_hash_many(ARCHCRYPT_SHA256, BATCH_N, batch_msgs, batch_lens, batch_out);
    } else {
        for (size_t m = 0; m < BATCH_N; m++)
            archcrypt_hash(ARCHCRYPT_SHA256, batch_out + 32 * m, batch_msgs[m], batch_lens[m]);
    }
}

/* Thread CPU time, not wall time: on a shared, oversubscribed machine a sample's wall
 * time includes whoever ran while this thread waited, which swamps a 2x difference. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double batch_sample(const batch_runner *b)
{
    archcrypt_use_on_this_thread("sha256", b->impl);
    double t0 = thread_cpu();
    for (size_t i = 0; i < b->iters; i++)
        batch_once(b);
    double dt = thread_cpu() - t0;
    archcrypt_use_on_this_thread("sha256", NULL);
    return dt;
}

/* Every runnable sha256 row, batch and one at a time, on the same BATCH_N distinct
 * buffers (one after another in B.in). Calibrated one by one, then sampled round
 * after round, every runner once per round, so the medians share the machine's noise. */
static void bench_batch(const size_t *sizes, size_t nsizes, double min_time, double hz, int csv)
{
    size_t a = archcrypt_algorithm_index("sha256");
    batch_runner run[32];
    size_t nrun = 0;
    for (size_t r = 0; r < archcrypt_implementation_count(a) && nrun + 2 <= 32; r++) {
        if (!archcrypt_implementation_runnable(a, r))
            continue;
        for (int batch = 1; batch >= 0; batch--)
            run[nrun++] = (batch_runner){.impl = archcrypt_implementation_name(a, r), .batch = batch};
    }
    if (!csv)
        printf("\nsha256, %d messages per call (cycles/B per message, median of %d interleaved "
               "samples of thread CPU time)\n%-12s %10s %12s %12s %8s\n",
               BATCH_N, BATCH_ROUNDS, "impl", "bytes", "hash_many", "one-by-one", "speedup");
    for (size_t s = 0; s < nsizes; s++) {
        size_t len = sizes[s];
        for (size_t m = 0; m < BATCH_N; m++) {
            batch_msgs[m] = B.in + m * len;
            batch_lens[m] = len;
        }
        for (size_t i = 0; i < nrun; i++) {
            run[i].iters = 1;
            while (batch_sample(&run[i]) < min_time / BATCH_ROUNDS / (double)nrun &&
                   run[i].iters < ((size_t)1 << 40))
                run[i].iters *= 2;
        }
        for (int k = 0; k < BATCH_ROUNDS; k++)
            for (size_t i = 0; i < nrun; i++)
                run[i].sec[k] = batch_sample(&run[i]) / (double)run[i].iters / BATCH_N;
        for (size_t i = 0; i < nrun; i++)
            qsort(run[i].sec, BATCH_ROUNDS, sizeof(double), cmp_double);
        for (size_t i = 0; i + 1 < nrun; i += 2) {
            double many = run[i].sec[BATCH_ROUNDS / 2], single = run[i + 1].sec[BATCH_ROUNDS / 2];
            if (csv)
                printf("sha256-many%d,%s,%zu,%.0f,%.4f\n", BATCH_N, run[i].impl, len,
                       (double)len / many, hz * many / (double)len);
            else
                printf("%-12s %10zu %12.3f %12.3f %7.2fx\n", run[i].impl, len,
                       hz * many / (double)len, hz * single / (double)len, single / many);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    size_t sizes[16] = {64, 1024, 16384, 65536, 1048576};
    size_t nsizes = 5;
    double min_time = 0.2;
    const char *only = NULL;
    int csv = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = 0;
            for (char *p = strtok(argv[++i], ","); p && nsizes < 16; p = strtok(NULL, ","))
                sizes[nsizes++] = strtoull(p, NULL, 10);
        } else if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
            min_time = atof(argv[++i]);
        } else if (strcmp(argv[i], "--algorithm") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else {
            fprintf(stderr, "usage: %s [--sizes N,N,...] [--min-time S] [--algorithm NAME] [--csv]\n",
                    argv[0]);
            return 2;
        }
    }
    size_t max = 0;
    for (size_t i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    /* The batch section reads BATCH_N messages of the largest size, one after another. */
    B.in = malloc(BATCH_N * max + 16);
    B.out = malloc(max + 16);
    if (!B.in || !B.out)
        return 2;
    for (size_t i = 0; i < BATCH_N * max + 16; i++)
        B.in[i] = (uint8_t)(i * 131 + 7);
    memset(B.key, 0x42, sizeof(B.key));
    const uint8_t nonce[12] = {0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24};
    bench_set_nonce(nonce);
    bench_setup();

    double hz = archcrypt_core_hz(0.2);
    if (csv)
        printf("algorithm,implementation,size_bytes,bytes_per_second,cycles_per_byte\n");
    else
        printf("archcrypt %s on %s, core clock %.3f GHz (measured: dependent add chain)\n"
               "%-18s %-12s %10s %10s %10s\n",
               archcrypt_version(), archcrypt_arch(), hz / 1e9, "algorithm", "impl", "bytes",
               "GB/s", "cycles/B");
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++) {
        const char *alg = archcrypt_algorithm_name(a);
        workload w = workload_named(alg);
        if ((only && strcmp(only, alg) != 0) || w == W_COUNT)
            continue;
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++) {
            if (!archcrypt_implementation_runnable(a, r))
                continue;
            const char *impl = archcrypt_implementation_name(a, r);
            archcrypt_use_on_this_thread(alg, impl);
            for (size_t s = 0; s < nsizes; s++) {
                double bps = measure(w, sizes[s], min_time);
                if (csv)
                    printf("%s,%s,%zu,%.0f,%.4f\n", alg, impl, sizes[s], bps, hz / bps);
                else
                    printf("%-18s %-12s %10zu %10.3f %10.3f\n", alg, impl, sizes[s], bps / 1e9,
                           hz / bps);
                fflush(stdout);
            }
            archcrypt_use_on_this_thread(alg, NULL);
        }
    }
    if (!only || strcmp(only, "sha256") == 0)
        bench_batch(sizes, nsizes, min_time, hz, csv);
    archcrypt_camellia_free(ours_camellia_key);
    free(B.in);
    free(B.out);
    return 0;
}
