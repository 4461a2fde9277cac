/* CPACF COMPUTE INTERMEDIATE MESSAGE DIGEST (KIMD) for s390x: the query and the digest functions, shared by cpu/s390x.c and the cpacf rows (z/Architecture PoO, "Message-Security-Assist Extensions"). */
#ifndef ARCHCRYPT_CPU_S390X_CPACF_H
#define ARCHCRYPT_CPU_S390X_CPACF_H

#if !defined(__s390x__)
#error "cpu/s390x_cpacf.h is for s390x"
#endif

#include <stddef.h>
#include <stdint.h>

/* KIMD function codes. */
#define AC_KIMD_QUERY  0
#define AC_KIMD_SHA256 2
#define AC_KIMD_SHA512 3

/* GR0 holds the function code, GR1 the parameter block, GR2/GR3 the message address and
 * length (an even/odd pair, named in the encoding: rre R2 = 2), which the instruction
 * advances. .insn keeps the assembler from needing a -march, as Linux's cpacf.h does. */

/* Function 0 stores a 128-bit mask of the implemented function codes, MSB first, at
 * GR1; it neither reads nor changes GR2/GR3. */
static inline void ac_kimd_query(uint8_t mask[16])
{
    register unsigned long r0 __asm__("0") = AC_KIMD_QUERY;
    register unsigned long r1 __asm__("1") = (unsigned long)mask;

    __asm__ volatile(".insn rre,0xb93e0000,0,2" : : "d"(r0), "a"(r1) : "cc", "memory");
}

static inline int ac_kimd_has(const uint8_t mask[16], unsigned fc)
{
    return (mask[fc / 8] >> (7 - fc % 8)) & 1;
}

/* Digest len bytes (whole blocks) at in into the chaining value at param. A machine may
 * stop after any number of blocks with condition code 3, partial completion, with the
 * registers advanced (qemu 7.2 does after every 64 blocks of SHA-512): brc 1 reissues
 * the instruction until it has taken them all. */
static inline void ac_kimd(unsigned long fc, void *param, const uint8_t *in, size_t len)
{
    register unsigned long r0 __asm__("0") = fc;
    register void *r1 __asm__("1") = param;
    register const uint8_t *r2 __asm__("2") = in;
    register unsigned long r3 __asm__("3") = len;

    __asm__ volatile("0: .insn rre,0xb93e0000,0,2\n\t"
                     "brc 1,0b"
                     : "+a"(r2), "+d"(r3)
                     : "d"(r0), "a"(r1)
                     : "cc", "memory");
}

#endif
