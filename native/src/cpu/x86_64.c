/* CPU features on amd64: CPUID leaves 1 and 7, gated by XGETBV on what the OS saves. */
#if defined(__x86_64__)

#include <cpuid.h>

#include "cpu/cpu.h"

/* XCR0 state components (Intel SDM vol. 1, 13.1). */
#define XCR0_SSE       (UINT64_C(1) << 1)
#define XCR0_AVX       (UINT64_C(1) << 2)
#define XCR0_OPMASK    (UINT64_C(1) << 5)
#define XCR0_ZMM_HI256 (UINT64_C(1) << 6)
#define XCR0_HI16_ZMM  (UINT64_C(1) << 7)

#define XCR0_AVX_STATE    (XCR0_SSE | XCR0_AVX)
#define XCR0_AVX512_STATE (XCR0_AVX_STATE | XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM)

/* Inline asm rather than _xgetbv(): the intrinsic needs -mxsave, and this file
 * must build with the baseline flags every amd64 machine accepts. */
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;

    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static int has(uint32_t reg, unsigned bit)
{
    return (reg >> bit) & 1;
}

uint64_t ac_cpu_detect_arch(void)
{
    unsigned int eax, ebx, ecx1, edx, ebx7 = 0, ecx7 = 0;
    uint64_t xcr0 = 0, f = 0;
    int avx_os, avx512_os;

    if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx1, &edx))
        return 0;
    /* __get_cpuid_count checks the maximum leaf, so a CPU without leaf 7 leaves
     * ebx7/ecx7 at zero. */
    (void)__get_cpuid_count(7, 0, &eax, &ebx7, &ecx7, &edx);

    /* OSXSAVE says the OS set CR4.OSXSAVE, i.e. XGETBV exists; without it the
     * instruction faults. AVX and AVX-512 registers are only usable when the OS
     * saves their state on a context switch, which XCR0 tells us. Trusting the
     * CPUID bits alone is the classic SIGILL (EDGE-CASES.md). */
    if (has(ecx1, 27))
        xcr0 = xgetbv0();
    avx_os = (xcr0 & XCR0_AVX_STATE) == XCR0_AVX_STATE;
    avx512_os = (xcr0 & XCR0_AVX512_STATE) == XCR0_AVX512_STATE;

    /* Leaf 1, ECX. Legacy-SSE encodings need nothing beyond what every x86-64 OS saves. */
    if (has(ecx1, 9))
        f |= AC_CPU_BIT(AC_CPU_SSSE3);
    if (has(ecx1, 19))
        f |= AC_CPU_BIT(AC_CPU_SSE4_1);
    if (has(ecx1, 25))
        f |= AC_CPU_BIT(AC_CPU_AESNI);
    if (has(ecx1, 1))
        f |= AC_CPU_BIT(AC_CPU_PCLMULQDQ);
    if (avx_os && has(ecx1, 28))
        f |= AC_CPU_BIT(AC_CPU_AVX);

    /* Leaf 7, EBX. */
    if (avx_os && has(ebx7, 5))
        f |= AC_CPU_BIT(AC_CPU_AVX2);
    if (has(ebx7, 8))
        f |= AC_CPU_BIT(AC_CPU_BMI2);
    if (has(ebx7, 29))
        f |= AC_CPU_BIT(AC_CPU_SHA_NI);
    if (avx512_os) {
        if (has(ebx7, 16))
            f |= AC_CPU_BIT(AC_CPU_AVX512F);
        if (has(ebx7, 17))
            f |= AC_CPU_BIT(AC_CPU_AVX512DQ);
        if (has(ebx7, 21))
            f |= AC_CPU_BIT(AC_CPU_AVX512IFMA);
        if (has(ebx7, 30))
            f |= AC_CPU_BIT(AC_CPU_AVX512BW);
        if (has(ebx7, 31))
            f |= AC_CPU_BIT(AC_CPU_AVX512VL);
        /* Leaf 7, ECX. */
        if (has(ecx7, 1))
            f |= AC_CPU_BIT(AC_CPU_AVX512VBMI);
        if (has(ecx7, 6))
            f |= AC_CPU_BIT(AC_CPU_AVX512VBMI2);
    }

    /* GFNI has a legacy-SSE encoding, so it stands alone; VAES and VPCLMULQDQ
     * exist only as VEX/EVEX forms and need at least the AVX state. */
    if (has(ecx7, 8))
        f |= AC_CPU_BIT(AC_CPU_GFNI);
    if (avx_os && has(ecx7, 9))
        f |= AC_CPU_BIT(AC_CPU_VAES);
    if (avx_os && has(ecx7, 10))
        f |= AC_CPU_BIT(AC_CPU_VPCLMULQDQ);

#ifdef ARCHCRYPT_EMULATED_FEATURES
    /* Test builds only (make emu-check): the AVX-512 kernels of that build run on a plain-C
     * emulation of their intrinsics (tests/emu), so report the features they need. No
     * production build defines this. */
    f |= (uint64_t)(ARCHCRYPT_EMULATED_FEATURES);
#endif
    return f;
}

#else
/* ISO C forbids an empty translation unit. */
typedef int ac_cpu_x86_64_unused;
#endif
