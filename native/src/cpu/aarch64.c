/* CPU features on arm64 (Linux): the kernel's AT_HWCAP/AT_HWCAP2 bits. */
#if defined(__aarch64__) && defined(__linux__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

#include <sys/auxv.h>

#include "cpu/cpu.h"

/* Linux uapi asm/hwcap.h; the ABI fixes these values, and defining them here
 * keeps an older libc's headers from silently dropping a feature. */
#define ARM_HWCAP_ASIMD  (1UL << 1)
#define ARM_HWCAP_AES    (1UL << 3)
#define ARM_HWCAP_PMULL  (1UL << 4)
#define ARM_HWCAP_SHA2   (1UL << 6)
#define ARM_HWCAP_SHA3   (1UL << 17)
#define ARM_HWCAP_SHA512 (1UL << 21)
#define ARM_HWCAP_SVE    (1UL << 22)
#define ARM_HWCAP2_SVE2  (1UL << 1)

/* The hwcaps, not the ID registers: the kernel only reports what it enables
 * (SVE needs its context-switch support), and reading ID_AA64*_EL1 from user
 * space relies on trap-and-emulate that older kernels lack. */
uint64_t ac_cpu_detect_arch(void)
{
    const unsigned long hw = getauxval(AT_HWCAP);
    const unsigned long hw2 = getauxval(AT_HWCAP2);
    uint64_t f = 0;

    if (hw & ARM_HWCAP_ASIMD)
        f |= AC_CPU_BIT(AC_CPU_ASIMD);
    if (hw & ARM_HWCAP_AES)
        f |= AC_CPU_BIT(AC_CPU_AES);
    if (hw & ARM_HWCAP_PMULL)
        f |= AC_CPU_BIT(AC_CPU_PMULL);
    if (hw & ARM_HWCAP_SHA2)
        f |= AC_CPU_BIT(AC_CPU_SHA2);
    if (hw & ARM_HWCAP_SHA512)
        f |= AC_CPU_BIT(AC_CPU_SHA512);
    if (hw & ARM_HWCAP_SHA3)
        f |= AC_CPU_BIT(AC_CPU_SHA3);
    if (hw & ARM_HWCAP_SVE)
        f |= AC_CPU_BIT(AC_CPU_SVE);
    if (hw2 & ARM_HWCAP2_SVE2)
        f |= AC_CPU_BIT(AC_CPU_SVE2);
    return f;
}

#else
/* ISO C forbids an empty translation unit. */
typedef int ac_cpu_aarch64_unused;
#endif
