/* C benchmark against the libraries a user would pick instead: every runnable archcrypt
 * row of every algorithm, OpenSSL 3 (EVP), libsodium and libgcrypt, the same operation
 * on the same buffers, measured side by side in one process.
 *
 * Noise control: per (algorithm, size) cell every contestant is calibrated to a short
 * sample (~0.5 ms), then the contestants take turns, one sample each, round after round
 * (in a fresh random order), and each reports the median of its samples. A burst of
 * noise from a neighbour therefore lands on all contestants of a cell alike. Samples
 * during which the thread was descheduled are taken again, and the whole plan is swept
 * several times (--passes), so each cell's samples span the run.
 *
 * Cycles per byte use the core clock measured by archcrypt_core_hz() (a chain of
 * dependent one-cycle adds), NOT the TSC, which ticks at a fixed nominal rate.
 * Before timing, every contestant's output is checked against archcrypt's portable
 * row (twice, to catch state that a reused context fails to reset).
 *
 *   bench-peers [--sizes 64,1024,...] [--cell-time SECONDS] [--passes N] [--sample-ms MS]
 *               [--algorithm NAME] [--csv FILE]
 *
 * Markdown tables go to stdout, progress to stderr. Exit status 3 when some output
 * differed from the reference (the numbers of that row are then flagged, not hidden). */
#include <math.h>
#include <stdarg.h>
#include <time.h>

#include <sys/resource.h>

#define BENCH_ARCHCRYPT
#define BENCH_OPENSSL
#define BENCH_SODIUM
#define BENCH_GCRYPT
#include "workloads.h"

#define MAX_SIZES 16
#define MAX_CONTESTANTS 24
#define MAX_SAMPLES 600
#define MAX_PASSES 8

/* ---- clock ------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench-peers: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* ---- contestants and measurement ------------------------------------------------ */

typedef struct {
    char label[128];
    library lib;
    const char *impl; /* archcrypt row (thread override), NULL for peers */
    const char *api;  /* peers: the API timed */
    int chosen;
    int wrong;        /* output differs from archcrypt portable */
    int msgs;         /* messages per call (batch rows; samples are per message), 0: one */
    bench_fn fn;
    uint64_t iters[MAX_SIZES];   /* calls per sample, per size (0: not calibrated yet) */
    int nsamples[MAX_SIZES];
    double *samples;             /* [MAX_SIZES][MAX_SAMPLES] seconds per call */
} contestant;

static const char *cur_alg;

/* Context switches of this thread so far (voluntary + involuntary). */
static long switches(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return -1;
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall seconds for `iters` calls. *disturbed is set when the thread was descheduled
 * meanwhile (the wall time then includes someone else's work); *cpu receives the
 * thread's CPU time over the same calls, which excludes the time it was not running. */
static double run_sample_checked(contestant *c, size_t len, uint64_t iters, int *disturbed,
                                 double *cpu)
{
    if (c->impl)
        archcrypt_use_on_this_thread(cur_alg, c->impl);
    long sw0 = switches();
    double c0 = thread_cpu();
    double t0 = now();
    for (uint64_t i = 0; i < iters; i++)
        c->fn(len);
    double dt = now() - t0;
    double c1 = thread_cpu();
    long sw1 = switches();
    if (c->impl)
        archcrypt_use_on_this_thread(cur_alg, NULL);
    if (disturbed)
        *disturbed = (sw0 < 0 || sw1 != sw0);
    if (cpu)
        *cpu = c1 - c0;
    return dt;
}

static double run_sample(contestant *c, size_t len, uint64_t iters)
{
    return run_sample_checked(c, len, iters, NULL, NULL);
}

static long samples_taken, samples_disturbed, samples_cpu_time;

/* xorshift64*: the order of the contestants in each round (fixed seed: reproducible). */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1du;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

/* One pass over one cell (size index si): calibrate each contestant to ~sample seconds
 * the first time, then take turns for about cell_time seconds. Returns the rounds run. */
static int measure_cell(contestant *cs, int n, size_t si, size_t len, double sample,
                        double cell_time, int max_rounds)
{
    double round_est = 0;
    for (int i = 0; i < n; i++) {
        uint64_t it = cs[i].iters[si];
        double t;
        if (it) {
            round_est += run_sample(&cs[i], len, it); /* also a warm-up */
            continue;
        }
        it = 1;
        for (;;) {
            t = run_sample(&cs[i], len, it);
            if (t >= sample * 0.8 || it > ((uint64_t)1 << 40))
                break;
            double grow = t > 0 ? sample / t : 100.0;
            uint64_t next = (uint64_t)((double)it * (grow > 100.0 ? 100.0 : grow * 1.05)) + 1;
            it = next > it ? next : it * 2;
        }
        cs[i].iters[si] = it;
        round_est += t;
    }
    int rounds = (int)(cell_time / round_est);
    if (rounds < 3)
        rounds = 3;
    if (rounds > max_rounds)
        rounds = max_rounds;
    /* A sample during which the thread was descheduled is taken again (up to 4 times):
     * on a shared, oversubscribed machine that removes most of the noise at its source.
     * A sample that never runs undisturbed (a call longer than a scheduler time slice,
     * e.g. portable code on 1 MiB) counts the thread's CPU time instead of wall time. */
    for (int r = 0; r < rounds; r++) {
        /* A fresh random order every round: noise that recurs with some period (a
         * neighbour's timer, a cron-like job) cannot line up with one contestant. */
        int order[MAX_CONTESTANTS];
        for (int k = 0; k < n; k++)
            order[k] = k;
        for (int k = n - 1; k > 0; k--) {
            int j = (int)(next_random() % (uint64_t)(k + 1)), tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (int k = 0; k < n; k++) {
            contestant *c = &cs[order[k]];
            double t = 0, cpu = 0;
            for (int attempt = 0; attempt < 4; attempt++) {
                int disturbed;
                t = run_sample_checked(c, len, c->iters[si], &disturbed, &cpu);
                samples_taken++;
                if (!disturbed)
                    break;
                samples_disturbed++;
                if (attempt == 3) {
                    t = cpu;
                    samples_cpu_time++;
                }
            }
            if (c->nsamples[si] < MAX_SAMPLES)
                c->samples[si * MAX_SAMPLES + (size_t)c->nsamples[si]++] =
                    t / (double)c->iters[si] / (c->msgs > 1 ? c->msgs : 1);
        }
    }
    return rounds;
}

/* Output of the contestant at len bytes, run twice (the second run must still be right). */
static int verify(contestant *c, size_t len, const uint8_t *ref, size_t outlen)
{
    for (int pass = 0; pass < 2; pass++) {
        memset(B.out, 0xee, len + 64);
        run_sample(c, len, 1);
        if (memcmp(B.out, ref, outlen) != 0)
            return 0;
    }
    return 1;
}

/* ---- formatting ------------------------------------------------------------------- */

static void size_label(char *buf, size_t n, size_t s)
{
    if (s >= 1048576 && s % 1048576 == 0)
        snprintf(buf, n, "%zu MiB", s / 1048576);
    else if (s >= 1024 && s % 1024 == 0)
        snprintf(buf, n, "%zu KiB", s / 1024);
    else
        snprintf(buf, n, "%zu B", s);
}

static void short_version(library lib, char *buf, size_t n)
{
    /* "OpenSSL 3.0.22 25 Aug 2026" -> "OpenSSL 3.0.22" */
    const char *v = library_versions[lib];
    if (lib == LIB_ARCHCRYPT) {
        snprintf(buf, n, "archcrypt %s", archcrypt_version());
        return;
    }
    snprintf(buf, n, "%s", v);
    if (lib == LIB_OPENSSL) {
        char *sp = strchr(buf, ' ');
        if (sp && (sp = strchr(sp + 1, ' ')))
            *sp = 0;
    }
}

/* results[w][contestant][size] */
typedef struct {
    contestant cs[MAX_CONTESTANTS];
    int n;
    double med[MAX_CONTESTANTS][MAX_SIZES];
    double p25[MAX_CONTESTANTS][MAX_SIZES], p75[MAX_CONTESTANTS][MAX_SIZES];
    double iqr[MAX_CONTESTANTS][MAX_SIZES]; /* (p75 - p25) / median */
    int rounds[MAX_SIZES];
    int present;
} alg_result;

static alg_result results[W_COUNT];

static contestant *new_contestant(alg_result *R)
{
    if (R->n >= MAX_CONTESTANTS)
        die("more than %d contestants in one table", MAX_CONTESTANTS);
    contestant *c = &R->cs[R->n++];
    memset(c, 0, sizeof(*c));
    c->samples = calloc((size_t)MAX_SIZES * MAX_SAMPLES, sizeof(double));
    if (!c->samples)
        die("out of memory");
    return c;
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES] = {64, 1024, 16384, 65536, 1048576};
    size_t nsizes = 5;
    double cell_time = 3.0, sample_ms = 0.5;
    int passes = 3;
    const char *only = NULL, *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = 0;
            for (char *p = strtok(argv[++i], ","); p && nsizes < MAX_SIZES; p = strtok(NULL, ","))
                sizes[nsizes++] = strtoull(p, NULL, 10);
        } else if (strcmp(argv[i], "--cell-time") == 0 && i + 1 < argc) {
            cell_time = atof(argv[++i]);
        } else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc) {
            passes = atoi(argv[++i]);
            if (passes < 1 || passes > MAX_PASSES)
                die("--passes must be 1..%d", MAX_PASSES);
        } else if (strcmp(argv[i], "--sample-ms") == 0 && i + 1 < argc) {
            sample_ms = atof(argv[++i]);
        } else if (strcmp(argv[i], "--algorithm") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv_path = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: %s [--sizes N,N,...] [--cell-time S] [--passes N] [--sample-ms MS] "
                    "[--algorithm NAME] [--csv FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    for (size_t s = 0; s < nsizes; s++)
        if (sizes[s] == 0 || sizes[s] % 16 || sizes[s] > ((size_t)1 << 30))
            die("sizes must be positive multiples of 16 (Camellia ECB) up to 1 GiB");

    size_t max = 0;
    for (size_t i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    /* 64-byte aligned; C11 wants the size a multiple of the alignment. */
    size_t alloc = (BENCH_BATCH * max + 128 + 63) & ~(size_t)63;
    B.in = aligned_alloc(64, alloc);
    B.out = aligned_alloc(64, alloc);
    uint8_t *ref = malloc(max + 128);
    if (!B.in || !B.out || !ref)
        die("out of memory");
    for (size_t i = 0; i < BENCH_BATCH * max + 128; i++)
        B.in[i] = (uint8_t)(i * 131 + 7);
    memset(B.out, 0, max + 128);
    uint8_t nonce[12];
    for (int i = 0; i < 32; i++)
        B.key[i] = (uint8_t)(0x42 + 3 * i);
    for (int i = 0; i < 12; i++)
        nonce[i] = (uint8_t)(0x24 + 5 * i);
    bench_set_nonce(nonce);
    bench_setup();

    /* Core clock: measured before each algorithm and at the end; the median is used. */
    double hz_samples[W_COUNT * MAX_PASSES + 2];
    int nhz = 0;
    hz_samples[nhz++] = archcrypt_core_hz(0.3);

    /* Plan: every algorithm of the library with a workload here. */
    int plan_cells = 0, plan_wl[W_COUNT], nplan = 0;
    char notes[2048] = "";
    for (size_t a = 0; a < archcrypt_algorithm_count(); a++) {
        const char *name = archcrypt_algorithm_name(a);
        if (only && strcmp(only, name) != 0)
            continue;
        workload found = workload_named(name);
        if (found == W_COUNT) {
            size_t l = strlen(notes);
            snprintf(notes + l, sizeof(notes) - l,
                     "- `%s`: archcrypt has this algorithm but bench-peers has no workload for it.\n",
                     name);
            continue;
        }
        plan_wl[nplan++] = found;
        plan_cells += (int)nsizes;
    }

    int bad_outputs = 0, cell_no = 0;
    double t_start = now();
    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv)
            die("cannot write %s", csv_path);
        fprintf(csv, "algorithm,library,implementation,api,chosen,output_ok,size_bytes,"
                     "ns_per_call,ns_p25,ns_p75,bytes_per_second,cycles_per_byte,samples\n");
    }

    for (int p = 0; p < nplan; p++) {
        workload w = (workload)plan_wl[p];
        alg_result *R = &results[w];
        const char *alg = workloads[w].algorithm;
        size_t a = archcrypt_algorithm_index(alg);
        cur_alg = alg;
        R->present = 1;
        R->n = 0;
        size_t selected = archcrypt_selected_implementation(a);
        /* archcrypt: every runnable row, whatever the table holds by now. */
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++) {
            if (!archcrypt_implementation_runnable(a, r))
                continue;
            contestant *c = new_contestant(R);
            c->lib = LIB_ARCHCRYPT;
            c->impl = archcrypt_implementation_name(a, r);
            c->chosen = (r == selected);
            c->fn = ours_calls[w];
            if (w == W_AEAD) {
                size_t ci = archcrypt_algorithm_index("chacha20"),
                       pi = archcrypt_algorithm_index("poly1305");
                snprintf(c->label, sizeof(c->label), "archcrypt %s (chacha20=%s, poly1305=%s)",
                         c->impl,
                         archcrypt_implementation_name(ci, archcrypt_selected_implementation(ci)),
                         archcrypt_implementation_name(pi, archcrypt_selected_implementation(pi)));
            } else {
                snprintf(c->label, sizeof(c->label), "archcrypt %s", c->impl);
            }
        }
        if (w == W_SHA256) {
            contestant *c = new_contestant(R);
            c->lib = LIB_ARCHCRYPT;
            c->impl = archcrypt_implementation_name(a, selected);
            c->api = "archcrypt_hash_many";
            c->msgs = BENCH_BATCH;
            c->fn = ours_sha256_many;
            snprintf(c->label, sizeof(c->label), "archcrypt %s, archcrypt_hash_many of %d (per message)",
                     c->impl, BENCH_BATCH);
        }
        for (size_t i = 0; i < N_PEER_ROWS; i++) {
            if (peer_rows[i].w != w)
                continue;
            contestant *c = new_contestant(R);
            c->lib = peer_rows[i].lib;
            c->fn = peer_rows[i].fn;
            c->api = peer_rows[i].api;
            char v[64];
            short_version(c->lib, v, sizeof(v));
            snprintf(c->label, sizeof(c->label), "%s (%s)", v, peer_rows[i].api);
        }

        /* Reference output: archcrypt portable at 1 KiB (and the smallest size). */
        size_t check_lens[2] = {1024 <= max ? 1024 : sizes[0], sizes[0]};
        for (int k = 0; k < 2; k++) {
            size_t len = check_lens[k];
            size_t outlen = workloads[w].len_out ? len + workloads[w].out_extra
                                                 : workloads[w].out_extra;
            contestant portable = {.impl = "portable", .fn = ours_calls[w]};
            memset(B.out, 0xee, len + 64);
            run_sample(&portable, len, 1);
            memcpy(ref, B.out, outlen);
            for (int i = 0; i < R->n; i++) {
                if (!R->cs[i].wrong && !verify(&R->cs[i], len, ref, outlen)) {
                    R->cs[i].wrong = 1;
                    bad_outputs++;
                    fprintf(stderr, "bench-peers: WRONG OUTPUT: %s %s at %zu bytes\n", alg,
                            R->cs[i].label, len);
                }
            }
        }

    }

    /* The measurement: `passes` sweeps over every cell, each with a share of cell_time,
     * so each cell's samples come from moments minutes apart and a burst of load
     * that favours one contestant for a few seconds moves at most one pass. */
    for (int pass = 0; pass < passes; pass++) {
        for (int p = 0; p < nplan; p++) {
            workload w = (workload)plan_wl[p];
            alg_result *R = &results[w];
            const char *alg = workloads[w].algorithm;
            cur_alg = alg;
            hz_samples[nhz++] = archcrypt_core_hz(0.05);
            for (size_t s = 0; s < nsizes; s++) {
                char sl[32];
                size_label(sl, sizeof(sl), sizes[s]);
                cell_no++;
                fprintf(stderr, "[pass %d/%d %3d/%d %4.0fs] %-18s %-8s %2d contestants ... ",
                        pass + 1, passes, cell_no, plan_cells * passes, now() - t_start, alg, sl,
                        R->n);
                fflush(stderr);
                double t0 = now();
                R->rounds[s] += measure_cell(R->cs, R->n, s, sizes[s], sample_ms * 1e-3,
                                             cell_time / passes, MAX_SAMPLES / passes);
                fprintf(stderr, "%3d rounds, %.1fs\n", R->rounds[s], now() - t0);
            }
        }
    }
    for (int w = 0; w < W_COUNT; w++) {
        alg_result *R = &results[w];
        if (!R->present)
            continue;
        for (int i = 0; i < R->n; i++) {
            for (size_t s = 0; s < nsizes; s++) {
                double *v = R->cs[i].samples + s * MAX_SAMPLES;
                int n = R->cs[i].nsamples[s];
                qsort(v, (size_t)n, sizeof(double), cmp_double);
                R->med[i][s] = quantile(v, n, 0.5);
                R->p25[i][s] = quantile(v, n, 0.25);
                R->p75[i][s] = quantile(v, n, 0.75);
                R->iqr[i][s] = (R->p75[i][s] - R->p25[i][s]) / R->med[i][s];
            }
        }
    }
    hz_samples[nhz++] = archcrypt_core_hz(0.2);
    double hz_sorted[W_COUNT * MAX_PASSES + 2];
    memcpy(hz_sorted, hz_samples, sizeof(double) * (size_t)nhz);
    qsort(hz_sorted, (size_t)nhz, sizeof(double), cmp_double);
    double hz = quantile(hz_sorted, nhz, 0.5);

    /* ---- CSV ---- */
    if (csv) {
        for (int w = 0; w < W_COUNT; w++) {
            alg_result *R = &results[w];
            if (!R->present)
                continue;
            for (int i = 0; i < R->n; i++) {
                contestant *c = &R->cs[i];
                const char *api = c->api ? c->api : "archcrypt API";
                for (size_t s = 0; s < nsizes; s++) {
                    double t = R->med[i][s];
                    fprintf(csv, "%s,%s,%s,\"%s\",%d,%d,%zu,%.2f,%.2f,%.2f,%.0f,%.4f,%d\n",
                            workloads[w].algorithm, library_names[c->lib], c->impl ? c->impl : "",
                            api, c->chosen,
                            !c->wrong, sizes[s], t * 1e9,
                            R->p25[i][s] * 1e9, R->p75[i][s] * 1e9,
                            (double)sizes[s] / t, hz * t / (double)sizes[s], R->rounds[s]);
                }
            }
        }
        fclose(csv);
    }

    /* ---- Markdown ---- */
    printf("Core clock %.3f GHz: median of %d measurements by archcrypt_core_hz() "
           "(a chain of dependent one-cycle adds; range %.3f-%.3f GHz), not the TSC. "
           "Cells: cycles/byte at that clock (GB/s), median of the interleaved samples; "
           "lower c/B is better.\n\n",
           hz / 1e9, nhz, hz_sorted[0] / 1e9, hz_sorted[nhz - 1] / 1e9);
    printf("Libraries: archcrypt %s (%s), %s, %s, %s.\n\n", archcrypt_version(),
           archcrypt_compiler(), library_versions[LIB_OPENSSL], library_versions[LIB_SODIUM],
           library_versions[LIB_GCRYPT]);
    printf("CPU features archcrypt detects here:");
    for (size_t f = 0; f < archcrypt_cpu_feature_count(); f++)
        if (archcrypt_cpu_feature_state(f) == 1)
            printf(" %s", archcrypt_cpu_feature_name(f));
    printf(".\n\n");

    double worst_iqr = 0, iqr_all[MAX_CONTESTANTS * MAX_SIZES * W_COUNT];
    int niqr = 0;
    for (int w = 0; w < W_COUNT; w++) {
        alg_result *R = &results[w];
        if (!R->present)
            continue;
        size_t a = archcrypt_algorithm_index(workloads[w].algorithm);
        printf("### %s: %s\n\n", workloads[w].algorithm, workloads[w].title);
        printf("| implementation |");
        for (size_t s = 0; s < nsizes; s++) {
            char sl[32];
            size_label(sl, sizeof(sl), sizes[s]);
            printf(" %s |", sl);
        }
        printf("\n|---|");
        for (size_t s = 0; s < nsizes; s++)
            printf("--:|");
        printf("\n");
        for (int i = 0; i < R->n; i++) {
            contestant *c = &R->cs[i];
            if (c->chosen)
                printf("| **%s** (chosen)%s |", c->label, c->wrong ? " WRONG OUTPUT" : "");
            else
                printf("| %s%s |", c->label, c->wrong ? " WRONG OUTPUT" : "");
            for (size_t s = 0; s < nsizes; s++) {
                double t = R->med[i][s];
                /* bold: the fastest row of this column */
                int best = 1;
                for (int j = 0; j < R->n; j++)
                    if (R->med[j][s] < t)
                        best = 0;
                printf(best ? " **%.2f** (%.2f) |" : " %.2f (%.2f) |", hz * t / (double)sizes[s],
                       (double)sizes[s] / t / 1e9);
                iqr_all[niqr++] = R->iqr[i][s];
                if (R->iqr[i][s] > worst_iqr)
                    worst_iqr = R->iqr[i][s];
            }
            printf("\n");
        }
        /* ours(chosen) / best peer, by time per call: below 1 we are faster. */
        printf("| *ours(chosen) / best peer* |");
        for (size_t s = 0; s < nsizes; s++) {
            double ours = 0, best = 0;
            int bi = -1;
            for (int i = 0; i < R->n; i++) {
                if (R->cs[i].chosen)
                    ours = R->med[i][s];
                else if (R->cs[i].lib != LIB_ARCHCRYPT && !R->cs[i].wrong &&
                         (bi < 0 || R->med[i][s] < best)) {
                    best = R->med[i][s];
                    bi = i;
                }
            }
            if (bi < 0 || ours == 0)
                printf(" n/a |");
            else
                printf(" *%.2f* %s |", ours / best, library_names[R->cs[bi].lib]);
        }
        printf("\n");
        /* The batch rows against the same best peer, one message at a time. */
        for (int i = 0; i < R->n; i++) {
            if (R->cs[i].msgs <= 1)
                continue;
            printf("| *ours(%s of %d) / best peer* |", R->cs[i].api, R->cs[i].msgs);
            for (size_t s = 0; s < nsizes; s++) {
                double best = 0;
                for (int j = 0; j < R->n; j++)
                    if (R->cs[j].lib != LIB_ARCHCRYPT && !R->cs[j].wrong &&
                        (best == 0 || R->med[j][s] < best))
                        best = R->med[j][s];
                if (best == 0)
                    printf(" n/a |");
                else
                    printf(" *%.2f* |", R->med[i][s] / best);
            }
            printf("\n");
        }
        printf("\n");
        int any = 0;
        for (size_t r = 0; r < archcrypt_implementation_count(a); r++) {
            if (archcrypt_implementation_runnable(a, r))
                continue;
            printf(any ? ", `%s` (needs %s)" : "Not runnable on this CPU: `%s` (needs %s)",
                   archcrypt_implementation_name(a, r), archcrypt_implementation_requires(a, r));
            any = 1;
        }
        if (any)
            printf(".\n\n");
        if (w == W_CAMELLIA)
            printf("libsodium has no Camellia.\n\n");
    }
    if (notes[0])
        printf("%s\n", notes);

    /* Per-call latency at the smallest size. */
    char sl0[32];
    size_label(sl0, sizeof(sl0), sizes[0]);
    printf("### Per call at %s (ns, median)\n\n| operation | archcrypt (chosen) | OpenSSL | libsodium | "
           "libgcrypt |\n|---|--:|--:|--:|--:|\n",
           sl0);
    for (int w = 0; w < W_COUNT; w++) {
        alg_result *R = &results[w];
        if (!R->present)
            continue;
        printf("| %s |", workloads[w].algorithm);
        for (int l = 0; l < LIB_COUNT; l++) {
            double best = 0;
            for (int i = 0; i < R->n; i++) {
                if ((int)R->cs[i].lib != l || R->cs[i].wrong)
                    continue;
                if (l == LIB_ARCHCRYPT && !R->cs[i].chosen)
                    continue;
                if (best == 0 || R->med[i][0] < best)
                    best = R->med[i][0];
            }
            if (best == 0)
                printf(" - |");
            else
                printf(" %.0f |", best * 1e9);
        }
        printf("\n");
    }
    printf("\nPeers with two OpenSSL rows (SHA-2): the faster one. \"ours(chosen) / best peer\" is "
           "time per call divided: below 1 archcrypt is faster.\n\n");

    qsort(iqr_all, (size_t)niqr, sizeof(double), cmp_double);
    if (niqr)
        printf("Spread: the interquartile range of a row's samples is %.1f%% of its median in the "
               "median case, %.1f%% at worst. %.1f%% of %ld samples were re-taken because the "
               "thread was descheduled during them; %ld (%.2f%%) never ran undisturbed and count "
               "thread CPU time instead. %d cells, %.0f s.\n",
               100 * quantile(iqr_all, niqr, 0.5), 100 * worst_iqr,
               samples_taken ? 100.0 * (double)samples_disturbed / (double)samples_taken : 0.0,
               samples_taken, samples_cpu_time,
               samples_taken ? 100.0 * (double)samples_cpu_time / (double)samples_taken : 0.0,
               plan_cells, now() - t_start);
    fprintf(stderr, "bench-peers: done in %.0f s\n", now() - t_start);

    archcrypt_camellia_free(ours_camellia_key);
    free(B.in);
    free(B.out);
    free(ref);
    return bad_outputs ? 3 : 0;
}
