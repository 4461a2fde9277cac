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

/* ---- the tables: each algorithm's rows.h, in its order ---------------------------- */

/* A row where this target builds its slug; AC_KERNEL picks the table's union member. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) \
    AC_IF_BUILT(slug)({#slug, requires, AC_ISA_FEATURES_##slug, min_len, {AC_KERNEL(slug)}},)

#define AC_KERNEL(slug) .chacha20 = &archcrypt_chacha20_##slug
static const ac_row chacha20_rows[] = {
#include "chacha20/rows.h"
};
#undef AC_KERNEL

#define AC_KERNEL(slug) .poly1305 = &archcrypt_poly1305_##slug
static const ac_row poly1305_rows[] = {
#include "poly1305/rows.h"
};
#undef AC_KERNEL

#define AC_KERNEL(slug) .aead = &archcrypt_chacha20_poly1305_##slug
static const ac_row chacha20_poly1305_rows[] = {
#include "aead/rows.h"
};
#undef AC_KERNEL

#define AC_KERNEL(slug) .sha256 = &archcrypt_sha256_##slug
static const ac_row sha256_rows[] = {
#include "sha256/rows.h"
};
#undef AC_KERNEL

#define AC_KERNEL(slug) .sha512 = &archcrypt_sha512_##slug
static const ac_row sha512_rows[] = {
#include "sha512/rows.h"
};
#undef AC_KERNEL

#define AC_KERNEL(slug) .camellia = &archcrypt_camellia_##slug
static const ac_row camellia_rows[] = {
#include "camellia/rows.h"
};
#undef AC_KERNEL
#undef AC_ROW_MIN_LEN

typedef struct {
    const char *name;
    const ac_row *rows;
    size_t count;
    int (*kat)(void);
    /* 1: the front looks its kernel up with ac_kernel_for_length, so rows may have a
     * min_len. Elsewhere a min_len would be ignored, and init refuses it: streaming fronts
     * choose before they see the length, and the others save the compare until a row
     * needs it (then: set this, and call the _for_length accessor). */
    int by_length;
} ac_table;

#define AC_MAX_ROWS 16
#define TABLE(name, rows, kat, by_length) \
    {name, rows, sizeof(rows) / sizeof((rows)[0]), kat, by_length}
#define ROW_COUNT_OK(rows) _Static_assert(sizeof(rows) / sizeof((rows)[0]) <= AC_MAX_ROWS, \
                                          #rows " has more than AC_MAX_ROWS rows")
ROW_COUNT_OK(chacha20_rows);
ROW_COUNT_OK(poly1305_rows);
ROW_COUNT_OK(chacha20_poly1305_rows);
ROW_COUNT_OK(sha256_rows);
ROW_COUNT_OK(sha512_rows);
ROW_COUNT_OK(camellia_rows);

static const ac_table tables[AC_ALG_COUNT] = {
    [AC_ALG_CHACHA20] = TABLE("chacha20", chacha20_rows, ac_kat_chacha20, 1),
    [AC_ALG_POLY1305] = TABLE("poly1305", poly1305_rows, ac_kat_poly1305, 0),
    [AC_ALG_CHACHA20_POLY1305] =
        TABLE("chacha20-poly1305", chacha20_poly1305_rows, ac_kat_chacha20_poly1305, 1),
    [AC_ALG_SHA256] = TABLE("sha256", sha256_rows, ac_kat_sha256, 0),
    [AC_ALG_SHA512] = TABLE("sha512", sha512_rows, ac_kat_sha512, 0),
    [AC_ALG_CAMELLIA] = TABLE("camellia", camellia_rows, ac_kat_camellia, 0),
};

/* ---- state ------------------------------------------------------------------ */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int init_done;
static int init_status;
static char init_error[512];

/* What the hot path reads of a row, resolved at init: its kernel, its min_len as the
 * front honours it, and the row that runs inputs shorter than that. One pointer to it is
 * the process's choice (or a thread's override), so a lookup is one load away from the
 * kernel and never sees the kernel of one row with the min_len of another. */
typedef struct ac_resolved {
    ac_kernel_ref kernel;
    size_t min_len;
    const struct ac_resolved *below;
} ac_resolved;

/* The features each row needs (all ones: never selectable). */
static uint64_t row_needs[AC_ALG_COUNT][AC_MAX_ROWS];
static ac_resolved resolved[AC_ALG_COUNT][AC_MAX_ROWS];

static atomic_size_t selected[AC_ALG_COUNT];
static atomic_int forced[AC_ALG_COUNT];
static _Atomic(const ac_resolved *) current[AC_ALG_COUNT];

/* The calling thread's override, NULL for none. */
static _Thread_local const ac_resolved *thread_current[AC_ALG_COUNT];
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
    atomic_store(&forced[alg], is_forced);
    atomic_store(&selected[alg], row);
    atomic_store_explicit(&current[alg], &resolved[alg][row], memory_order_release);
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

static void append_names(char *buf, size_t len, uint64_t mask)
{
    size_t used = strlen(buf);
    for (size_t f = 0; f < AC_CPU_FEATURE_COUNT && used < len; f++)
        if (mask & AC_CPU_BIT(f))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     ac_cpu_feature_name((ac_cpu_feature)f));
}

/* The build-time check (tools/check-rows.awk) once more, on what was compiled in: a row
 * that requires less than its slug's flags assume could be selected on a CPU (or under a
 * mask) where the compiler's instructions fault. Also the shape every table relies on:
 * the last row runs anywhere, on inputs of any length. Returns ARCHCRYPT_OK or
 * ARCHCRYPT_ERR_CONFIG with the reason in err; a failing row is never selected. */
static int resolve_row(size_t a, size_t r, char *err, size_t err_len)
{
    const ac_row *row = &tables[a].rows[r];
    const int last = r + 1 == tables[a].count;
    uint64_t needs = 0, assumed = 0;
    char msg[300];
    int rc;

    resolved[a][r].kernel = row->kernel;
    resolved[a][r].min_len = row->min_len;
    rc = parse_features(row->requires, &needs, msg, sizeof(msg));
    if (rc == ARCHCRYPT_OK)
        rc = parse_features(row->isa_features, &assumed, msg, sizeof(msg));
    if (rc == ARCHCRYPT_OK && (assumed & ~needs) != 0) {
        char missing[160] = "";
        append_names(missing, sizeof(missing), assumed & ~needs);
        set_error(msg, sizeof(msg),
                  "requires {%s}, but isa.mk builds slug %s with flags that assume {%s}: "
                  "the row must require %s too",
                  row->requires, row->name, row->isa_features, missing);
        rc = ARCHCRYPT_ERR_CONFIG;
    }
    if (rc == ARCHCRYPT_OK && last && (needs != 0 || row->min_len != 0)) {
        set_error(msg, sizeof(msg), "the last row must require nothing and take any length");
        rc = ARCHCRYPT_ERR_CONFIG;
    }
    if (rc == ARCHCRYPT_OK && row->min_len != 0 && !tables[a].by_length) {
        set_error(msg, sizeof(msg),
                  "has a min_len, but the %s front picks its kernel before it knows the "
                  "length (by_length in dispatch.c)", tables[a].name);
        rc = ARCHCRYPT_ERR_CONFIG;
    }
    if (rc != ARCHCRYPT_OK) {
        /* A build bug: never select the row, and keep every lookup terminating. */
        if (!last)
            row_needs[a][r] = ~UINT64_C(0);
        resolved[a][r].min_len = 0;
        set_error(err, err_len, "dispatch row %s/%s: %s", tables[a].name, row->name, msg);
        return rc;
    }
    row_needs[a][r] = needs;
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
        const size_t count = tables[a].count;
        for (size_t r = 0; r < count; r++) {
            int row_rc = resolve_row(a, r, msg, sizeof(msg));
            if (row_rc != ARCHCRYPT_OK && rc == ARCHCRYPT_OK) {
                set_error(init_error, sizeof(init_error), "%s", msg);
                rc = row_rc;
            }
        }
        /* Below a row's min_len runs the next row this CPU can run (the last always can). */
        for (size_t r = 0; r < count; r++) {
            size_t next = r + 1;
            while (next + 1 < count && !row_runnable(a, next))
                next++;
            resolved[a][r].below = &resolved[a][next < count ? next : r];
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

static inline const ac_resolved *effective(ac_alg_id alg)
{
    ensure_init();
    const ac_resolved *row = thread_current[alg];
    return row ? row : atomic_load_explicit(&current[alg], memory_order_acquire);
}

ac_kernel_ref ac_kernel(ac_alg_id alg)
{
    return effective(alg)->kernel;
}

ac_kernel_ref ac_kernel_for_length(ac_alg_id alg, size_t len)
{
    const ac_resolved *row = effective(alg);
    while (AC_UNLIKELY(len < row->min_len))
        row = row->below;
    return row->kernel;
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

size_t archcrypt_implementation_min_len(size_t algorithm, size_t implementation)
{
    ensure_init();
    return valid_row(algorithm, implementation) ? resolved[algorithm][implementation].min_len : 0;
}

size_t archcrypt_implementation_below(size_t algorithm, size_t implementation)
{
    ensure_init();
    if (!valid_row(algorithm, implementation) || resolved[algorithm][implementation].min_len == 0)
        return ARCHCRYPT_NO_INDEX;
    return (size_t)(resolved[algorithm][implementation].below - resolved[algorithm]);
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
    thread_current[alg] = implementation ? &resolved[alg][row] : NULL;
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
    const ac_resolved *saved = thread_current[algorithm];
    thread_current[algorithm] = &resolved[algorithm][implementation];
    int rc = tables[algorithm].kat();
    thread_current[algorithm] = saved;
    if (rc != ARCHCRYPT_OK)
        set_error(thread_error, sizeof(thread_error), "%s/%s: known-answer self-test failed",
                  tables[algorithm].name, tables[algorithm].rows[implementation].name);
    return rc;
}
