/* CPU features on s390x (Linux): AT_HWCAP, the STFLE facility list, and the KIMD query. */
#if defined(__s390x__) && defined(__linux__)

#include <stddef.h>
#include <sys/auxv.h>

#include "cpu/cpu.h"
#include "cpu/s390x_cpacf.h"

/* Linux uapi asm/elf.h (glibc bits/hwcap.h). */
#define S390_HWCAP_STFLE 4UL
#define S390_HWCAP_MSA   8UL
#define S390_HWCAP_VXRS  2048UL

/* Facility numbers (z/Architecture Principles of Operation, "Facility Indications"). */
#define FAC_MSA  17   /* message-security assist: KIMD, KLMD, ... */
#define FAC_VX   129  /* vector facility (z13) */
#define FAC_VXE  135  /* vector-enhancements facility 1 (z14) */
#define FAC_VXE2 148  /* vector-enhancements facility 2 (z15) */

#define FAC_DOUBLEWORDS 3 /* facilities 0..191 */

/* STORE FACILITY LIST EXTENDED: GR0 holds the number of doublewords wanted
 * minus one; facility n is bit n counted from the most significant bit. A CPU
 * with a longer list stores only what fits and sets cc 3, which we ignore. */
static void stfle(uint64_t list[FAC_DOUBLEWORDS])
{
    register unsigned long r0 __asm__("0") = FAC_DOUBLEWORDS - 1;

    __asm__ volatile("stfle 0(%[list])" : "+d"(r0) : [list] "a"(list) : "cc", "memory");
}

static int facility(const uint64_t list[FAC_DOUBLEWORDS], unsigned n)
{
    return (list[n / 64] >> (63 - n % 64)) & 1;
}

/* A feature needs both the CPU (STFLE) and the kernel (hwcap).
 *
 * For the vector facilities the kernel's part is HWCAP_S390_VXRS: it says the
 * kernel has enabled the vector registers and saves them on a context switch.
 * Vector-enhancements 1 and 2 add instructions but no state, and Linux derives
 * HWCAP_S390_VXRS_EXT/_EXT2 from nothing but VXRS and facilities 135/148
 * (arch/s390/kernel/setup.c). Reading the facility bits ourselves gives the
 * same answer on current kernels, and the right one where the extension hwcap
 * is missing although the hardware and kernel are fine: kernels older than the
 * bit, and qemu-user (7.2 included; fixed upstream in August 2023), which
 * never sets VXRS_EXT2 although it emulates the instructions (CROSS-ARCH.md).
 *
 * Which CPACF functions exist is learned only from the query: it varies by
 * machine and by emulator (qemu 7.2 implements KIMD SHA-512 but not SHA-256),
 * never by model. */
uint64_t ac_cpu_detect_arch(void)
{
    const unsigned long hw = getauxval(AT_HWCAP);
    uint64_t fac[FAC_DOUBLEWORDS] = {0, 0, 0};
    uint64_t f = 0;

    if (!(hw & S390_HWCAP_STFLE))
        return 0;
    stfle(fac);

    if ((hw & S390_HWCAP_VXRS) && facility(fac, FAC_VX)) {
        f |= AC_CPU_BIT(AC_CPU_VX);
        if (facility(fac, FAC_VXE))
            f |= AC_CPU_BIT(AC_CPU_VXE);
        if (facility(fac, FAC_VXE) && facility(fac, FAC_VXE2))
            f |= AC_CPU_BIT(AC_CPU_VXE2);
    }

    if ((hw & S390_HWCAP_MSA) && facility(fac, FAC_MSA)) {
        uint8_t mask[16] = {0};

        f |= AC_CPU_BIT(AC_CPU_MSA);
        ac_kimd_query(mask);
        if (ac_kimd_has(mask, AC_KIMD_SHA256))
            f |= AC_CPU_BIT(AC_CPU_KIMD_SHA256);
        if (ac_kimd_has(mask, AC_KIMD_SHA512))
            f |= AC_CPU_BIT(AC_CPU_KIMD_SHA512);
    }
    return f;
}

#else
/* ISO C forbids an empty translation unit. */
typedef int ac_cpu_s390x_unused;
#endif
