/* CPU features: the neutral front. Stable names, which architecture owns each,
 * detection once, and masking by ARCHCRYPT_DISABLE_CPU_FEATURES. */
#include "cpu/cpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "archcrypt.h"

/* The architecture is a compile-time fact: one library build serves one arch.
 * Big-endian arm64/ppc64 builds count as "unknown" on purpose: the SIMD kernels
 * assume little-endian lane order, so such a build must run portable code only.
 * Keep these conditions identical to the guards of cpu/<arch>.c. */
typedef enum { ARCH_AMD64, ARCH_ARM64, ARCH_PPC64LE, ARCH_S390X, ARCH_UNKNOWN } cpu_arch;

#if defined(__x86_64__)
#define THIS_ARCH ARCH_AMD64
#elif defined(__aarch64__) && defined(__linux__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define THIS_ARCH ARCH_ARM64
#elif defined(__powerpc64__) && defined(__linux__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define THIS_ARCH ARCH_PPC64LE
#elif defined(__s390x__) && defined(__linux__)
#define THIS_ARCH ARCH_S390X
#else
#define THIS_ARCH ARCH_UNKNOWN
uint64_t ac_cpu_detect_arch(void)
{
    return 0;
}
#endif

static const char *const arch_names[] = {
    [ARCH_AMD64] = "amd64", [ARCH_ARM64] = "arm64", [ARCH_PPC64LE] = "ppc64le",
    [ARCH_S390X] = "s390x", [ARCH_UNKNOWN] = "unknown",
};

#define B(f) AC_CPU_BIT(AC_CPU_##f)

/* `requires` lists what a feature cannot be used without, in the sense that
 * matters here: what the compiler may emit once a kernel is built for it (gcc's
 * -mavx512f implies -mavx2, -mavx implies -msse4.2, ...), or what the hardware
 * needs for it to mean anything (SVE2 extends SVE, KIMD lives in MSA). Masking a
 * feature therefore also masks everything that requires it, as Linux's
 * arch/x86/kernel/cpu/cpuid-deps.c does: ARCHCRYPT_DISABLE_CPU_FEATURES=avx can
 * never leave an AVX2 kernel selected. */
static const struct {
    const char *name;
    cpu_arch arch;
    uint64_t requires;
} features[AC_CPU_FEATURE_COUNT] = {
    [AC_CPU_SSSE3] = {"ssse3", ARCH_AMD64, 0},
    [AC_CPU_SSE4_1] = {"sse4_1", ARCH_AMD64, B(SSSE3)},
    [AC_CPU_AESNI] = {"aesni", ARCH_AMD64, 0},
    [AC_CPU_PCLMULQDQ] = {"pclmulqdq", ARCH_AMD64, 0},
    [AC_CPU_AVX] = {"avx", ARCH_AMD64, B(SSE4_1)},
    [AC_CPU_AVX2] = {"avx2", ARCH_AMD64, B(AVX)},
    [AC_CPU_BMI2] = {"bmi2", ARCH_AMD64, 0},
    [AC_CPU_SHA_NI] = {"sha_ni", ARCH_AMD64, 0},
    [AC_CPU_AVX512F] = {"avx512f", ARCH_AMD64, B(AVX2)},
    [AC_CPU_AVX512VL] = {"avx512vl", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_AVX512BW] = {"avx512bw", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_AVX512DQ] = {"avx512dq", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_AVX512IFMA] = {"avx512ifma", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_AVX512VBMI] = {"avx512vbmi", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_AVX512VBMI2] = {"avx512vbmi2", ARCH_AMD64, B(AVX512F)},
    [AC_CPU_GFNI] = {"gfni", ARCH_AMD64, 0},
    [AC_CPU_VAES] = {"vaes", ARCH_AMD64, B(AVX) | B(AESNI)},
    [AC_CPU_VPCLMULQDQ] = {"vpclmulqdq", ARCH_AMD64, B(AVX) | B(PCLMULQDQ)},

    [AC_CPU_ASIMD] = {"asimd", ARCH_ARM64, 0},
    [AC_CPU_AES] = {"aes", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_PMULL] = {"pmull", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_SHA2] = {"sha2", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_SHA512] = {"sha512", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_SHA3] = {"sha3", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_SVE] = {"sve", ARCH_ARM64, B(ASIMD)},
    [AC_CPU_SVE2] = {"sve2", ARCH_ARM64, B(SVE)},

    [AC_CPU_ALTIVEC] = {"altivec", ARCH_PPC64LE, 0},
    [AC_CPU_VSX] = {"vsx", ARCH_PPC64LE, B(ALTIVEC)},
    [AC_CPU_ARCH_2_07] = {"arch_2_07", ARCH_PPC64LE, 0},
    [AC_CPU_VEC_CRYPTO] = {"vec_crypto", ARCH_PPC64LE, B(ALTIVEC)},
    [AC_CPU_ARCH_3_00] = {"arch_3_00", ARCH_PPC64LE, B(ARCH_2_07)},
    [AC_CPU_ARCH_3_1] = {"arch_3_1", ARCH_PPC64LE, B(ARCH_3_00)},
    [AC_CPU_MMA] = {"mma", ARCH_PPC64LE, B(VSX) | B(ARCH_3_1)},

    [AC_CPU_VX] = {"vx", ARCH_S390X, 0},
    [AC_CPU_VXE] = {"vxe", ARCH_S390X, B(VX)},
    [AC_CPU_VXE2] = {"vxe2", ARCH_S390X, B(VXE)},
    [AC_CPU_MSA] = {"msa", ARCH_S390X, 0},
    [AC_CPU_KIMD_SHA256] = {"kimd_sha256", ARCH_S390X, B(MSA)},
    [AC_CPU_KIMD_SHA512] = {"kimd_sha512", ARCH_S390X, B(MSA)},
};

#undef B

static int cpu_initialized;
static uint64_t cpu_detected;
static uint64_t cpu_usable;

const char *ac_cpu_arch_name(void)
{
    return arch_names[THIS_ARCH];
}

/* NULL for a value outside the enum. */
const char *ac_cpu_feature_name(ac_cpu_feature f)
{
    if ((unsigned)f >= AC_CPU_FEATURE_COUNT)
        return NULL;
    return features[f].name;
}

size_t ac_cpu_arch_feature_count(void)
{
    size_t n = 0;
    for (size_t f = 0; f < AC_CPU_FEATURE_COUNT; f++)
        n += features[f].arch == THIS_ARCH;
    return n;
}

/* AC_CPU_FEATURE_COUNT when index is out of range. */
ac_cpu_feature ac_cpu_arch_feature(size_t index)
{
    for (size_t f = 0; f < AC_CPU_FEATURE_COUNT; f++) {
        if (features[f].arch != THIS_ARCH)
            continue;
        if (index-- == 0)
            return (ac_cpu_feature)f;
    }
    return AC_CPU_FEATURE_COUNT;
}

/* ASCII only: tolower() follows the locale, and a Turkish "I" must not decide
 * whether a feature is disabled. */
static int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* Compares the len bytes at s with the NUL-terminated name, ignoring ASCII case. */
static int name_equals(const char *s, size_t len, const char *name)
{
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '\0' || ascii_lower((unsigned char)s[i]) != name[i])
            return 0;
    }
    return name[len] == '\0';
}

static uint64_t feature_bit_n(const char *s, size_t len)
{
    for (size_t f = 0; f < AC_CPU_FEATURE_COUNT; f++) {
        if (name_equals(s, len, features[f].name))
            return AC_CPU_BIT(f);
    }
    return 0;
}

/* Every architecture's names are known here, so a dispatch row or an operator's
 * mask written for another arch is recognised (and simply never matches). */
uint64_t ac_cpu_feature_bit(const char *name)
{
    size_t len = 0;

    if (name == NULL)
        return 0;
    while (name[len] != '\0')
        len++;
    return feature_bit_n(name, len);
}

/* Drops each feature whose prerequisites are gone, until nothing changes (the
 * chains are short: avx -> avx2 -> avx512f -> avx512vl is the longest). */
static uint64_t close_over_requirements(uint64_t set)
{
    uint64_t prev;

    do {
        prev = set;
        for (size_t f = 0; f < AC_CPU_FEATURE_COUNT; f++) {
            if ((set & AC_CPU_BIT(f)) && (set & features[f].requires) != features[f].requires)
                set &= ~AC_CPU_BIT(f);
        }
    } while (set != prev);
    return set;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Appends to err, keeping it NUL-terminated; output past err_len is dropped. */
static void err_append(char *err, size_t err_len, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (err == NULL || *used + 1 >= err_len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(err + *used, err_len - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = ((size_t)n < err_len - *used) ? *used + (size_t)n : err_len - 1;
}

static void report_unknown(char *err, size_t err_len, const char *tok, size_t len)
{
    /* A name is a dozen characters; anything longer is quoted only in part. */
    const int shown = len > 64 ? 64 : (int)len;
    size_t used = 0;
    size_t n = ac_cpu_arch_feature_count();

    err_append(err, err_len, &used,
               "ARCHCRYPT_DISABLE_CPU_FEATURES: unknown CPU feature \"%.*s%s\" (known on %s: ",
               shown, tok, len > 64 ? "..." : "", ac_cpu_arch_name());
    for (size_t i = 0; i < n; i++)
        err_append(err, err_len, &used, "%s, ", ac_cpu_feature_name(ac_cpu_arch_feature(i)));
    err_append(err, err_len, &used, "all)");
}

/* Parses a comma-separated list; whitespace around names and empty items are
 * ignored, so "" and " avx512f , sha_ni," are both fine. */
static int parse_mask(const char *spec, uint64_t *mask, char *err, size_t err_len)
{
    const char *p = spec;

    *mask = 0;
    while (*p != '\0') {
        const char *tok, *end;
        size_t len;
        uint64_t bit;

        while (is_space(*p))
            p++;
        tok = p;
        while (*p != '\0' && *p != ',')
            p++;
        end = p;
        while (end > tok && is_space(end[-1]))
            end--;
        if (*p == ',')
            p++;
        len = (size_t)(end - tok);
        if (len == 0)
            continue;
        if (name_equals(tok, len, "all")) {
            *mask = ~UINT64_C(0);
            continue;
        }
        bit = feature_bit_n(tok, len);
        if (bit == 0) {
            report_unknown(err, err_len, tok, len);
            return ARCHCRYPT_ERR_CONFIG;
        }
        *mask |= bit;
    }
    return ARCHCRYPT_OK;
}

/* Detection runs once; the mask is re-read on every call so a test driver can
 * change the environment and call again. The caller serialises calls. A
 * malformed mask fails closed: the operator asked for something to be off and
 * we cannot tell what, so nothing is usable and only portable code runs. */
int ac_cpu_init(char *err, size_t err_len)
{
    const char *spec;
    uint64_t mask = 0;
    int status = ARCHCRYPT_OK;

    if (err != NULL && err_len > 0)
        err[0] = '\0';
    if (!cpu_initialized) {
        cpu_detected = ac_cpu_detect_arch();
#ifdef ARCHCRYPT_ASSUMED_FEATURES
        /* Test builds only (make ctgrind CT_ASSUME=...): valgrind clears hwcap bits of
         * instructions it may still decode (ppc64le's vec_crypto), so the constant-time
         * check claims them back and finds out by running the rows: an instruction valgrind
         * cannot execute ends that run. No production build defines this. */
        cpu_detected |= (uint64_t)(ARCHCRYPT_ASSUMED_FEATURES);
#endif
        cpu_initialized = 1;
    }
    spec = getenv("ARCHCRYPT_DISABLE_CPU_FEATURES");
    if (spec != NULL)
        status = parse_mask(spec, &mask, err, err_len);
    cpu_usable = status == ARCHCRYPT_OK ? close_over_requirements(cpu_detected & ~mask) : 0;
    return status;
}

uint64_t ac_cpu_detected(void)
{
    return cpu_detected;
}

uint64_t ac_cpu_usable(void)
{
    return cpu_usable;
}
