/* CPU features on ppc64le (Linux): the kernel's AT_HWCAP/AT_HWCAP2 bits. */
#if defined(__powerpc64__) && defined(__linux__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

#include <sys/auxv.h>

#include "cpu/cpu.h"

/* Linux uapi asm/cputable.h; glibc spells one of them differently
 * (PPC_FEATURE2_HAS_VEC_CRYPTO), so we name the ABI values ourselves. */
#define PPC_HWCAP_ALTIVEC      0x10000000UL
#define PPC_HWCAP_VSX          0x00000080UL
#define PPC_HWCAP2_ARCH_2_07   0x80000000UL
#define PPC_HWCAP2_VEC_CRYPTO  0x02000000UL
#define PPC_HWCAP2_ARCH_3_00   0x00800000UL
#define PPC_HWCAP2_ARCH_3_1    0x00040000UL
#define PPC_HWCAP2_MMA         0x00020000UL

/* The hwcaps, because the kernel only advertises what it also context-switches
 * (MMA's accumulators need kernel support on top of a POWER10). */
uint64_t ac_cpu_detect_arch(void)
{
    const unsigned long hw = getauxval(AT_HWCAP);
    const unsigned long hw2 = getauxval(AT_HWCAP2);
    uint64_t f = 0;

    if (hw & PPC_HWCAP_ALTIVEC)
        f |= AC_CPU_BIT(AC_CPU_ALTIVEC);
    if (hw & PPC_HWCAP_VSX)
        f |= AC_CPU_BIT(AC_CPU_VSX);
    if (hw2 & PPC_HWCAP2_ARCH_2_07)
        f |= AC_CPU_BIT(AC_CPU_ARCH_2_07);
    if (hw2 & PPC_HWCAP2_VEC_CRYPTO)
        f |= AC_CPU_BIT(AC_CPU_VEC_CRYPTO);
    if (hw2 & PPC_HWCAP2_ARCH_3_00)
        f |= AC_CPU_BIT(AC_CPU_ARCH_3_00);
    if (hw2 & PPC_HWCAP2_ARCH_3_1)
        f |= AC_CPU_BIT(AC_CPU_ARCH_3_1);
    if (hw2 & PPC_HWCAP2_MMA)
        f |= AC_CPU_BIT(AC_CPU_MMA);
    return f;
}

#else
/* ISO C forbids an empty translation unit. */
typedef int ac_cpu_ppc64le_unused;
#endif
