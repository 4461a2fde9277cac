/* Runtime dispatch: one ordered table per algorithm (fastest first, portable last),
 * resolved once at init from the usable CPU features; ARCHCRYPT_FORCE and the API
 * can pin a row, and a thread can override a row for tests and benchmarks. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "dispatch.h"
#include "kat.h"
#include "cpu/cpu.h"
#include "aead/aead.h"
#include "camellia/camellia.h"
#include "chacha20/chacha20.h"
#include "poly1305/poly1305.h"
#include "sha256/sha256.h"
#include "sha512/sha512.h"

#ifndef ARCHCRYPT_VERSION
#define ARCHCRYPT_VERSION "0.1.0"
#endif

/* ---- the tables: the order is the policy ------------------------------------ */

static const ac_impl_row chacha20_rows[] = {
#if defined(__x86_64__)
    {"avx512", "avx512f,avx512vl,avx512bw,avx512dq", &archcrypt_chacha20_avx512},
    {"avx2", "avx2", &archcrypt_chacha20_avx2},
    {"ssse3", "ssse3", &archcrypt_chacha20_ssse3},
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    /* vec_crypto: vpermxor. power10 adds lxvp/stxvp to power8's 4 blocks: 3.39
     * instructions/byte at 64 KiB under qemu against 3.45. */
    {"power10", "vsx,arch_3_1,vec_crypto", &archcrypt_chacha20_power10},
    {"power8", "vsx,arch_2_07,vec_crypto", &archcrypt_chacha20_power8},
#endif
    {"portable", "", &archcrypt_chacha20_portable},
};

static const ac_impl_row poly1305_rows[] = {
#if defined(__x86_64__)
    {"avx512ifma", "avx512f,avx512vl,avx512ifma", &archcrypt_poly1305_avx512ifma},
    /* bmi2: ISA_FLAGS_avx2 lets the compiler use mulx/shrx in the scalar part. */
    {"avx2", "avx2,bmi2", &archcrypt_poly1305_avx2},
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    /* power9: vmsumudm (ISA 3.0); power8: scalar, addc/adde (see poly1305/power8.c). */
    {"power9", "vsx,arch_3_00", &archcrypt_poly1305_power9},
    {"power8", "arch_2_07", &archcrypt_poly1305_power8},
#endif
#if defined(__s390x__)
    {"vx", "vx", &archcrypt_poly1305_vx},
#endif
#if defined(__SIZEOF_INT128__)
    {"scalar64", "", &archcrypt_poly1305_scalar64},
#endif
    {"portable", "", &archcrypt_poly1305_portable},
};

static const ac_impl_row chacha20_poly1305_rows[] = {
#if defined(__x86_64__)
    /* AVX2 ChaCha20 and scalar (mulx) Poly1305 in one loop, 512 bytes a step. */
    {"avx2", "avx2,bmi2", &archcrypt_chacha20_poly1305_avx2},
#endif
    /* Runs whichever chacha20 and poly1305 rows are in effect, in one pass. */
    {"composed", "", &archcrypt_chacha20_poly1305_composed},
};

static const ac_impl_row sha256_rows[] = {
#if defined(__x86_64__)
    /* ssse3: pshufb for the byte swap; sse4_1: pblendw for the ABEF/CDGH state.
     * Batches (archcrypt_hash_many): sha_ni interleaves two messages' chains, avx2
     * runs eight messages, one per 32-bit lane. */
    {"sha_ni", "sha_ni,sse4_1,ssse3", &archcrypt_sha256_sha_ni},
    {"avx2", "avx2,bmi2", &archcrypt_sha256_avx2},
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    {"power8", "vsx,arch_2_07,vec_crypto", &archcrypt_sha256_power8},
#endif
#if defined(__s390x__)
    {"cpacf", "msa,kimd_sha256", &archcrypt_sha256_cpacf},
    {"vx", "vx", &archcrypt_sha256_vx},
#endif
    {"portable", "", &archcrypt_sha256_portable},
};

static const ac_impl_row sha512_rows[] = {
#if defined(__x86_64__)
    {"avx512", "avx512f,avx512vl,avx512bw,avx512dq,bmi2", &archcrypt_sha512_avx512},
    {"avx2", "avx2,bmi2", &archcrypt_sha512_avx2},
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    {"power8", "vsx,arch_2_07,vec_crypto", &archcrypt_sha512_power8},
#endif
#if defined(__s390x__)
    {"cpacf", "msa,kimd_sha512", &archcrypt_sha512_cpacf},
    {"vx", "vx", &archcrypt_sha512_vx},
#endif
    {"portable", "", &archcrypt_sha512_portable},
};

static const ac_impl_row camellia_rows[] = {
#if defined(__x86_64__)
    {"gfni_avx512", "avx512f,avx512vl,avx512bw,gfni", &archcrypt_camellia_gfni_avx512},
    {"vaes_avx2", "vaes,avx2,aesni", &archcrypt_camellia_vaes_avx2},
    {"aesni_avx2", "aesni,avx2", &archcrypt_camellia_aesni_avx2},
#endif
#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    {"power8", "vsx,arch_2_07,vec_crypto", &archcrypt_camellia_power8},
#endif
#if defined(__s390x__)
    {"vx", "vx", &archcrypt_camellia_vx},
#endif
    {"portable", "", &archcrypt_camellia_portable},
};

typedef struct {
    const char *name;
    const ac_impl_row *rows;
    size_t count;
    int (*kat)(void);
} ac_table;

#define TABLE(name, rows, kat) {name, rows, sizeof(rows) / sizeof((rows)[0]), kat}

static const ac_table tables[AC_ALG_COUNT] = {
    [AC_ALG_CHACHA20] = TABLE("chacha20", chacha20_rows, ac_kat_chacha20),
    [AC_ALG_POLY1305] = TABLE("poly1305", poly1305_rows, ac_kat_poly1305),
    [AC_ALG_CHACHA20_POLY1305] =
        TABLE("chacha20-poly1305", chacha20_poly1305_rows, ac_kat_chacha20_poly1305),
    [AC_ALG_SHA256] = TABLE("sha256", sha256_rows, ac_kat_sha256),
    [AC_ALG_SHA512] = TABLE("sha512", sha512_rows, ac_kat_sha512),
    [AC_ALG_CAMELLIA] = TABLE("camellia", camellia_rows, ac_kat_camellia),
};

#define AC_MAX_ROWS 16
_Static_assert(AC_MAX_ROWS <= 64, "row masks are per row");

/* ---- state ------------------------------------------------------------------ */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int init_done;
static int init_status;
static char init_error[512];

static uint64_t row_needs[AC_ALG_COUNT][AC_MAX_ROWS];
static atomic_size_t selected[AC_ALG_COUNT];
static atomic_int forced[AC_ALG_COUNT];
static _Atomic(const void *) current[AC_ALG_COUNT];

static _Thread_local const void *thread_override[AC_ALG_COUNT];
static _Thread_local char thread_error[512];

static void set_error(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Comma-separated names into a bit mask; 0 with an error for an unknown name. */
static int parse_features(const char *list, uint64_t *out, char *err, size_t err_len)
{
    uint64_t mask = 0;
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[32];
        if (n == 0 || n >= sizeof(name)) {
            set_error(err, err_len, "malformed feature list \"%s\"", list);
            return ARCHCRYPT_ERR_CONFIG;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        uint64_t bit = ac_cpu_feature_bit(name);
        if (!bit) {
            set_error(err, err_len, "unknown CPU feature \"%s\"", name);
            return ARCHCRYPT_ERR_CONFIG;
        }
        mask |= bit;
        p = end ? end + 1 : p + n;
    }
    *out = mask;
    return ARCHCRYPT_OK;
}

static int row_runnable(size_t alg, size_t row)
{
    return (row_needs[alg][row] & ~ac_cpu_usable()) == 0;
}

static size_t find_algorithm(const char *name)
{
    for (size_t a = 0; a < AC_ALG_COUNT; a++)
        if (strcasecmp(tables[a].name, name) == 0)
            return a;
    return ARCHCRYPT_NO_INDEX;
}

static size_t find_row(size_t alg, const char *name)
{
    for (size_t r = 0; r < tables[alg].count; r++)
        if (strcasecmp(tables[alg].rows[r].name, name) == 0)
            return r;
    return ARCHCRYPT_NO_INDEX;
}

static void list_rows(size_t alg, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < tables[alg].count && used < len; r++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", r ? ", " : "",
                                 tables[alg].rows[r].name);
}

static void list_algorithms(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < AC_ALG_COUNT && used < len; a++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", a ? ", " : "", tables[a].name);
}

/* Resolve algorithm and implementation names to a runnable row, or explain why not. */
static int lookup(const char *algorithm, const char *implementation, size_t *alg_out,
                  size_t *row_out, char *err, size_t err_len)
{
    char known[256];
    size_t alg = algorithm ? find_algorithm(algorithm) : ARCHCRYPT_NO_INDEX;
    if (alg == ARCHCRYPT_NO_INDEX) {
        list_algorithms(known, sizeof(known));
        set_error(err, err_len, "unknown algorithm \"%s\" (known: %s)",
                  algorithm ? algorithm : "(null)", known);
        return ARCHCRYPT_ERR_UNKNOWN_ALGORITHM;
    }
    *alg_out = alg;
    if (!implementation)
        return ARCHCRYPT_OK;
    size_t row = find_row(alg, implementation);
    if (row == ARCHCRYPT_NO_INDEX) {
        list_rows(alg, known, sizeof(known));
        set_error(err, err_len, "unknown implementation \"%s\" for %s (known here: %s)",
                  implementation, tables[alg].name, known);
        return ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION;
    }
    if (!row_runnable(alg, row)) {
        set_error(err, err_len,
                  "%s implementation \"%s\" needs CPU features {%s}, which this CPU lacks or "
                  "ARCHCRYPT_DISABLE_CPU_FEATURES masks",
                  tables[alg].name, tables[alg].rows[row].name, tables[alg].rows[row].requires);
        return ARCHCRYPT_ERR_UNSUPPORTED;
    }
    *row_out = row;
    return ARCHCRYPT_OK;
}

static void select_row(size_t alg, size_t row, int is_forced)
{
    atomic_store(&selected[alg], row);
    atomic_store(&forced[alg], is_forced);
    atomic_store(&current[alg], tables[alg].rows[row].kernel);
}

static void select_fastest(size_t alg)
{
    /* Portable rows require nothing, so the scan always ends on a row. */
    size_t row = 0;
    while (row + 1 < tables[alg].count && !row_runnable(alg, row))
        row++;
    select_row(alg, row, 0);
}

/* ARCHCRYPT_FORCE="chacha20=portable,sha256=portable" */
static int apply_force_env(const char *spec, char *err, size_t err_len)
{
    char buf[512];
    if (strlen(spec) >= sizeof(buf)) {
        set_error(err, err_len, "ARCHCRYPT_FORCE is too long");
        return ARCHCRYPT_ERR_CONFIG;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        if (!*item)
            continue;
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1]) {
            set_error(err, err_len,
                      "ARCHCRYPT_FORCE: \"%s\" is not <algorithm>=<implementation>", item);
            return ARCHCRYPT_ERR_CONFIG;
        }
        *eq = '\0';
        char msg[400];
        size_t alg = 0, row = 0;
        int rc = lookup(item, eq + 1, &alg, &row, msg, sizeof(msg));
        if (rc != ARCHCRYPT_OK) {
            set_error(err, err_len, "ARCHCRYPT_FORCE: %s", msg);
            return rc;
        }
        select_row(alg, row, 1);
    }
    return ARCHCRYPT_OK;
}

/* A configuration error is reported, but the tables are still resolved (a failed mask
 * leaves every feature masked), so no entry point ever meets an empty row. */
static void init_run(void)
{
    char msg[400];
    int rc = ac_cpu_init(msg, sizeof(msg));
    if (rc != ARCHCRYPT_OK)
        set_error(init_error, sizeof(init_error), "%s", msg);
    for (size_t a = 0; a < AC_ALG_COUNT; a++) {
        size_t count = tables[a].count < AC_MAX_ROWS ? tables[a].count : AC_MAX_ROWS;
        for (size_t r = 0; r < count; r++) {
            int row_rc = parse_features(tables[a].rows[r].requires, &row_needs[a][r], msg, sizeof(msg));
            if (row_rc != ARCHCRYPT_OK) {
                /* A row naming an unknown feature is a build bug: never select it. */
                row_needs[a][r] = ~UINT64_C(0);
                if (rc == ARCHCRYPT_OK) {
                    set_error(init_error, sizeof(init_error), "dispatch row %s/%s: %s",
                              tables[a].name, tables[a].rows[r].name, msg);
                    rc = row_rc;
                }
            }
        }
        select_fastest(a);
    }
    const char *spec = getenv("ARCHCRYPT_FORCE");
    if (spec && rc == ARCHCRYPT_OK)
        rc = apply_force_env(spec, init_error, sizeof(init_error));
    init_status = rc;
    atomic_store_explicit(&init_done, 1, memory_order_release);
}

int archcrypt_init(void)
{
    pthread_once(&init_once, init_run);
    return init_status;
}

static inline void ensure_init(void)
{
    if (AC_UNLIKELY(!atomic_load_explicit(&init_done, memory_order_acquire)))
        archcrypt_init();
}

const void *ac_kernel(ac_alg_id alg)
{
    ensure_init();
    const void *k = thread_override[alg];
    if (k)
        return k;
    return atomic_load_explicit(&current[alg], memory_order_acquire);
}

/* ---- public introspection ------------------------------------------------------ */

const char *archcrypt_last_error(void)
{
    return thread_error[0] ? thread_error : init_error;
}

const char *archcrypt_strerror(int status)
{
    switch (status) {
    case ARCHCRYPT_OK: return "success";
    case ARCHCRYPT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ARCHCRYPT_ERR_AUTHENTICATION: return "authentication failed";
    case ARCHCRYPT_ERR_MESSAGE_TOO_LONG: return "message too long for the 32-bit block counter";
    case ARCHCRYPT_ERR_UNKNOWN_ALGORITHM: return "unknown algorithm";
    case ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION: return "unknown implementation";
    case ARCHCRYPT_ERR_UNSUPPORTED: return "implementation not supported by this CPU";
    case ARCHCRYPT_ERR_SELFTEST: return "known-answer self-test failed";
    case ARCHCRYPT_ERR_NO_MEMORY: return "out of memory";
    case ARCHCRYPT_ERR_STATE: return "context used after it was finalised";
    case ARCHCRYPT_ERR_CONFIG: return "invalid configuration";
    default: return "unknown status";
    }
}

const char *archcrypt_version(void)
{
    return ARCHCRYPT_VERSION;
}

const char *archcrypt_compiler(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}

const char *archcrypt_arch(void)
{
    return ac_cpu_arch_name();
}

size_t archcrypt_cpu_feature_count(void)
{
    return ac_cpu_arch_feature_count();
}

const char *archcrypt_cpu_feature_name(size_t index)
{
    if (index >= ac_cpu_arch_feature_count())
        return NULL;
    return ac_cpu_feature_name(ac_cpu_arch_feature(index));
}

int archcrypt_cpu_feature_state(size_t index)
{
    ensure_init();
    if (index >= ac_cpu_arch_feature_count())
        return 0;
    uint64_t bit = AC_CPU_BIT(ac_cpu_arch_feature(index));
    if (!(ac_cpu_detected() & bit))
        return 0;
    return (ac_cpu_usable() & bit) ? 1 : 2;
}

size_t archcrypt_algorithm_count(void)
{
    return AC_ALG_COUNT;
}

const char *archcrypt_algorithm_name(size_t algorithm)
{
    return algorithm < AC_ALG_COUNT ? tables[algorithm].name : NULL;
}

size_t archcrypt_algorithm_index(const char *name)
{
    return name ? find_algorithm(name) : ARCHCRYPT_NO_INDEX;
}

size_t archcrypt_implementation_count(size_t algorithm)
{
    return algorithm < AC_ALG_COUNT ? tables[algorithm].count : 0;
}

static int valid_row(size_t alg, size_t row)
{
    return alg < AC_ALG_COUNT && row < tables[alg].count;
}

const char *archcrypt_implementation_name(size_t algorithm, size_t implementation)
{
    return valid_row(algorithm, implementation) ? tables[algorithm].rows[implementation].name : NULL;
}

const char *archcrypt_implementation_requires(size_t algorithm, size_t implementation)
{
    return valid_row(algorithm, implementation) ? tables[algorithm].rows[implementation].requires
                                                 : NULL;
}

int archcrypt_implementation_runnable(size_t algorithm, size_t implementation)
{
    ensure_init();
    return valid_row(algorithm, implementation) && row_runnable(algorithm, implementation);
}

size_t archcrypt_selected_implementation(size_t algorithm)
{
    ensure_init();
    return algorithm < AC_ALG_COUNT ? atomic_load(&selected[algorithm]) : ARCHCRYPT_NO_INDEX;
}

int archcrypt_implementation_forced(size_t algorithm)
{
    ensure_init();
    return algorithm < AC_ALG_COUNT ? atomic_load(&forced[algorithm]) : 0;
}

int archcrypt_force(const char *algorithm, const char *implementation)
{
    ensure_init();
    thread_error[0] = '\0';
    size_t alg = 0, row = 0;
    int rc = lookup(algorithm, implementation, &alg, &row, thread_error, sizeof(thread_error));
    if (rc != ARCHCRYPT_OK)
        return rc;
    if (implementation)
        select_row(alg, row, 1);
    else
        select_fastest(alg);
    return ARCHCRYPT_OK;
}

int archcrypt_use_on_this_thread(const char *algorithm, const char *implementation)
{
    ensure_init();
    thread_error[0] = '\0';
    size_t alg = 0, row = 0;
    int rc = lookup(algorithm, implementation, &alg, &row, thread_error, sizeof(thread_error));
    if (rc != ARCHCRYPT_OK)
        return rc;
    thread_override[alg] = implementation ? tables[alg].rows[row].kernel : NULL;
    return ARCHCRYPT_OK;
}

int archcrypt_self_test(size_t algorithm, size_t implementation)
{
    ensure_init();
    thread_error[0] = '\0';
    if (!valid_row(algorithm, implementation))
        return ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION;
    if (!row_runnable(algorithm, implementation))
        return ARCHCRYPT_ERR_UNSUPPORTED;
    const void *saved = thread_override[algorithm];
    thread_override[algorithm] = tables[algorithm].rows[implementation].kernel;
    int rc = tables[algorithm].kat();
    thread_override[algorithm] = saved;
    if (rc != ARCHCRYPT_OK)
        set_error(thread_error, sizeof(thread_error), "%s/%s: known-answer self-test failed",
                  tables[algorithm].name, tables[algorithm].rows[implementation].name);
    return rc;
}
