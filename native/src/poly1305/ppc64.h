/* Poly1305 in radix 2^64 for 64-bit PowerPC, the carry bit in addc/adde (RFC 8439 2.5): the scalar block loop shared by poly1305/power8.c and power9.c. */
#ifndef ARCHCRYPT_POLY1305_PPC64_H
#define ARCHCRYPT_POLY1305_PPC64_H

#if !defined(__powerpc64__) || !defined(__LITTLE_ENDIAN__)
#error "poly1305/ppc64.h is for little-endian 64-bit PowerPC"
#endif

#include <stddef.h>
#include <stdint.h>

/* One block at in + lo: h = (h + m + padbit 2^128) r, partially reduced. Same
 * algorithm and bounds as scalar64.h's p64_mul: r0, r1 < 2^60, s1 = 5 r1 / 4, h2 <= 6
 * once the message and pad bit are in, so h2 s1 < 2^63 and each column sum fits its
 * two words; h2 <= 4 after the fold of the bits at 2^130 and up (times 5). */
#define PPC64_P1305_BLOCK(lo, hi)                                        \
    "ld %[t0]," #lo "(%[in])\n\t"  /* little-endian: the block as two words */ \
    "ld %[t1]," #hi "(%[in])\n\t"                                       \
    "addc %[h0],%[h0],%[t0]\n\t"                                        \
    "adde %[h1],%[h1],%[t1]\n\t"                                        \
    "adde %[h2],%[h2],%[pad]\n\t"                                       \
    "mulld %[d0],%[h0],%[r0]\n\t"  /* d0 = h0 r0 + h1 s1 */             \
    "mulhdu %[d1],%[h0],%[r0]\n\t"                                      \
    "mulld %[t0],%[h1],%[s1]\n\t"                                       \
    "mulhdu %[t1],%[h1],%[s1]\n\t"                                      \
    "addc %[d0],%[d0],%[t0]\n\t"                                        \
    "adde %[d1],%[d1],%[t1]\n\t"                                        \
    "mulld %[t0],%[h0],%[r1]\n\t"  /* d1 += h0 r1 + h1 r0 + h2 s1 */    \
    "mulhdu %[d2],%[h0],%[r1]\n\t"                                      \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "addze %[d2],%[d2]\n\t"                                             \
    "mulld %[t0],%[h1],%[r0]\n\t"                                       \
    "mulhdu %[t1],%[h1],%[r0]\n\t"                                      \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "adde %[d2],%[d2],%[t1]\n\t"                                        \
    "mulld %[t0],%[h2],%[s1]\n\t"                                       \
    "mulld %[t1],%[h2],%[r0]\n\t"  /* d2 += h2 r0 */                    \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "adde %[d2],%[d2],%[t1]\n\t"                                        \
    "rldicr %[t0],%[d2],0,61\n\t"  /* 4 (d2 >> 2) */                    \
    "clrldi %[h2],%[d2],62\n\t"                                         \
    "srdi %[t1],%[d2],2\n\t"                                            \
    "add %[t0],%[t0],%[t1]\n\t"                                         \
    "addc %[h0],%[d0],%[t0]\n\t"                                        \
    "addze %[h1],%[d1]\n\t"                                             \
    "addze %[h2],%[h2]\n\t"

/* scalar64.h's p64_blocks (same state, same h) in half the instructions. gcc 12 turns
 * the carries of its C (and unsigned __int128 sums) into compares and selects, 69
 * instructions per block on ppc64le; with the carry bit it is 30, plus a loop step per
 * two blocks: 1.94 per byte. nb >= 1. */
static inline void ppc64_blocks(uint64_t h[3], const uint64_t r[2], const uint8_t *in, size_t nb,
                                uint64_t padbit)
{
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], d0, d1, d2, t0, t1;
    const uint64_t r0 = r[0], r1 = r[1], s1 = r1 + (r1 >> 2);

    __asm__("andi. %[t0],%[nb],1\n\t"
            "beq 2f\n\t"
            PPC64_P1305_BLOCK(0, 8)
            "addi %[in],%[in],16\n"
            "2:\n\t"
            "srdi. %[t0],%[nb],1\n\t"
            "beq 3f\n\t"
            "mtctr %[t0]\n"
            "1:\n\t"
            PPC64_P1305_BLOCK(0, 8)
            PPC64_P1305_BLOCK(16, 24)
            "addi %[in],%[in],32\n\t"
            "bdnz 1b\n"
            "3:"
            : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [in] "+&b"(in), [d0] "=&r"(d0),
              [d1] "=&r"(d1), [d2] "=&r"(d2), [t0] "=&r"(t0), [t1] "=&r"(t1)
            : [nb] "r"(nb), [r0] "r"(r0), [r1] "r"(r1), [s1] "r"(s1), [pad] "r"(padbit),
              "m"(*(const uint8_t(*)[])in)
            : "ctr", "xer", "cr0");
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
}

#endif
