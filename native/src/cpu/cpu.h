/* CPU feature detection: one neutral front (cpu.c) over one file per architecture. */
#ifndef ARCHCRYPT_CPU_H
#define ARCHCRYPT_CPU_H

#include <stddef.h>
#include <stdint.h>

/* Feature bits. Names (cpu.c) are stable, lowercase, and are what
 * ARCHCRYPT_DISABLE_CPU_FEATURES and dispatch rows' `requires` use. Each
 * architecture only ever sets its own bits. */
typedef enum {
    /* amd64 */
    AC_CPU_SSSE3, AC_CPU_SSE4_1, AC_CPU_AESNI, AC_CPU_PCLMULQDQ, AC_CPU_AVX, AC_CPU_AVX2,
    AC_CPU_BMI2, AC_CPU_SHA_NI, AC_CPU_AVX512F, AC_CPU_AVX512VL, AC_CPU_AVX512BW,
    AC_CPU_AVX512DQ, AC_CPU_AVX512IFMA, AC_CPU_AVX512VBMI, AC_CPU_AVX512VBMI2,
    AC_CPU_GFNI, AC_CPU_VAES, AC_CPU_VPCLMULQDQ,
    /* arm64 */
    AC_CPU_ASIMD, AC_CPU_AES, AC_CPU_PMULL, AC_CPU_SHA2, AC_CPU_SHA512, AC_CPU_SHA3,
    AC_CPU_SVE, AC_CPU_SVE2,
    /* ppc64le */
    AC_CPU_ALTIVEC, AC_CPU_VSX, AC_CPU_ARCH_2_07, AC_CPU_VEC_CRYPTO, AC_CPU_ARCH_3_00,
    AC_CPU_ARCH_3_1, AC_CPU_MMA,
    /* s390x */
    AC_CPU_VX, AC_CPU_VXE, AC_CPU_VXE2, AC_CPU_MSA, AC_CPU_KIMD_SHA256, AC_CPU_KIMD_SHA512,
    AC_CPU_FEATURE_COUNT
} ac_cpu_feature;

#define AC_CPU_BIT(f) (UINT64_C(1) << (f))

/* Implemented once per architecture (cpu/<arch>.c): raw detection, no masking.
 * Must only report a feature the OS also enables (x86: XGETBV state bits). */
uint64_t ac_cpu_detect_arch(void);

/* The neutral front (cpu.c). */
const char *ac_cpu_arch_name(void);                 /* "amd64", "arm64", "ppc64le", "s390x", "unknown" */
const char *ac_cpu_feature_name(ac_cpu_feature f);
/* Features that belong to this architecture, in enum order. */
size_t ac_cpu_arch_feature_count(void);
ac_cpu_feature ac_cpu_arch_feature(size_t index);
/* Bit for a name (case-insensitive), 0 when unknown. */
uint64_t ac_cpu_feature_bit(const char *name);
/* Detect once and apply ARCHCRYPT_DISABLE_CPU_FEATURES ("all" masks everything).
 * Returns ARCHCRYPT_OK or ARCHCRYPT_ERR_CONFIG (an unknown name; message in err). */
int ac_cpu_init(char *err, size_t err_len);
uint64_t ac_cpu_detected(void);   /* before masking */
uint64_t ac_cpu_usable(void);     /* after masking */

#endif
