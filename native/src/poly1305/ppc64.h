/* Poly1305 in radix 2^64 for 64-bit PowerPC, the carry bit in addc/adde (RFC 8439 2.5): the scalar block loop, key set-up and tag shared by poly1305/power8.c and power9.c. */
#ifndef ARCHCRYPT_POLY1305_PPC64_H
#define ARCHCRYPT_POLY1305_PPC64_H

#if !defined(__powerpc64__) || !defined(__LITTLE_ENDIAN__)
#error "poly1305/ppc64.h is for little-endian 64-bit PowerPC"
#endif

#include <stddef.h>
#include <stdint.h>

#include "poly1305/scalar64.h"

/* One word of the p64_head at the start of the state. Word by word, because gcc 12
 * copies a whole array field (P64_GET) through a stack buffer with vector loads and
 * stores: a dozen instructions per call, and the clamped r left on the stack. */
#define ppc64_get p64_word
#define ppc64_put p64_set_word

#define PPC64_H(i) (offsetof(p64_head, h) + 8 * (i))
#define PPC64_R(i) (offsetof(p64_head, r) + 8 * (i))
#define PPC64_S(i) (offsetof(p64_head, s) + 8 * (i))

/* One block at in + lo: h = (h + m + padbit 2^128) r, partially reduced. Same
 * algorithm and bounds as scalar64.h's p64_mul: r0, r1 < 2^60, s1 = 5 r1 / 4, h2 <= 6
 * once the message and pad bit are in, so h2 s1 < 2^63 and each column sum fits its
 * two words; h2 <= 4 after the fold of the bits at 2^130 and up (times 5). The
 * products of h2 come first so that h2 can take the top word d2: the column sums are
 * the same, and as partial sums of them no addition carries out of d2. */
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
    "mulld %[t0],%[h2],%[s1]\n\t"  /* d1 += h2 s1, d2 = h2 r0 */        \
    "mulld %[h2],%[h2],%[r0]\n\t"                                       \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "addze %[h2],%[h2]\n\t"                                             \
    "mulld %[t0],%[h0],%[r1]\n\t"  /* d1:d2 += h0 r1 + h1 r0 */         \
    "mulhdu %[t1],%[h0],%[r1]\n\t"                                      \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "adde %[h2],%[h2],%[t1]\n\t"                                        \
    "mulld %[t0],%[h1],%[r0]\n\t"                                       \
    "mulhdu %[t1],%[h1],%[r0]\n\t"                                      \
    "addc %[d1],%[d1],%[t0]\n\t"                                        \
    "adde %[h2],%[h2],%[t1]\n\t"                                        \
    "rldicr %[t0],%[h2],0,61\n\t"  /* 4 (d2 >> 2) */                    \
    "srdi %[t1],%[h2],2\n\t"                                            \
    "clrldi %[h2],%[h2],62\n\t"                                         \
    "add %[t0],%[t0],%[t1]\n\t"                                         \
    "addc %[h0],%[d0],%[t0]\n\t"                                        \
    "addze %[h1],%[d1]\n\t"                                             \
    "addze %[h2],%[h2]\n\t"

#define PPC64_P1305_OPERANDS                                                               \
    : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [in] "+&b"(in), [d0] "=&r"(d0),     \
      [d1] "=&r"(d1), [t0] "+&r"(t0), [t1] "=&r"(t1)                                       \
    : [r0] "r"(r0), [r1] "r"(r1), [s1] "r"(s1), [pad] "r"(padbit)                          \
    : "ctr", "xer", "memory"

/* scalar64.h's p64_blocks (same state, same h) in half the instructions. gcc 12 turns
 * the carries of its C (and unsigned __int128 sums) into compares and selects, 69
 * instructions per block on ppc64le; with the carry bit it is 30, plus a loop step
 * (addi, bdnz) per four blocks. The loop counts come in through t0, so that the 12
 * registers of the loop plus the state pointer need only two of the non-volatile
 * ones (the "memory" clobber stands for the message read: an "m" operand on the
 * original `in` would hold one more). nb >= 1. */
static inline void ppc64_blocks(uint64_t h[3], const uint64_t r[2], const uint8_t *in, size_t nb,
                                uint64_t padbit)
{
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], d0, d1, t0, t1;
    const uint64_t r0 = r[0], r1 = r[1], s1 = r1 + (r1 >> 2);

    if (nb % 4) {
        t0 = nb % 4;
        __asm__("mtctr %[t0]\n"
                "1:\n\t"
                PPC64_P1305_BLOCK(0, 8)
                "addi %[in],%[in],16\n\t"
                "bdnz 1b"
                PPC64_P1305_OPERANDS);
    }
    if (nb >= 4) {
        t0 = nb / 4;
        __asm__("mtctr %[t0]\n"
                "1:\n\t"
                PPC64_P1305_BLOCK(0, 8)
                PPC64_P1305_BLOCK(16, 24)
                PPC64_P1305_BLOCK(32, 40)
                PPC64_P1305_BLOCK(48, 56)
                "addi %[in],%[in],64\n\t"
                "bdnz 1b"
                PPC64_P1305_OPERANDS);
    }
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
}

/* The whole of a short call: h and r straight from the state into registers. */
static inline void ppc64_blocks_call(poly1305_state *st, const uint8_t *in, size_t nb,
                                     uint64_t padbit)
{
    uint64_t h[3] = {ppc64_get(st, PPC64_H(0)), ppc64_get(st, PPC64_H(1)),
                     ppc64_get(st, PPC64_H(2))};
    const uint64_t r[2] = {ppc64_get(st, PPC64_R(0)), ppc64_get(st, PPC64_R(1))};

    ppc64_blocks(h, r, in, nb, padbit);
    ppc64_put(st, PPC64_H(0), h[0]);
    ppc64_put(st, PPC64_H(1), h[1]);
    ppc64_put(st, PPC64_H(2), h[2]);
}

/* scalar64.h's p64_init without its stack copy of the head (and the wipe of it). */
static inline void ppc64_init(poly1305_state *st, const uint8_t key[32])
{
    /* RFC 8439 2.5.1 clamp: r &= 0x0ffffffc0ffffffc0ffffffc0fffffff. */
    ppc64_put(st, PPC64_R(0), load64_le(key + 0) & 0x0ffffffc0fffffffu);
    ppc64_put(st, PPC64_R(1), load64_le(key + 8) & 0x0ffffffc0ffffffcu);
    ppc64_put(st, PPC64_S(0), load64_le(key + 16));
    ppc64_put(st, PPC64_S(1), load64_le(key + 24));
    ppc64_put(st, PPC64_H(0), 0);
    ppc64_put(st, PPC64_H(1), 0);
    ppc64_put(st, PPC64_H(2), 0);
    ppc64_put(st, offsetof(p64_head, powers), 0);
}

/* scalar64.h's p64_finish with the carry bit: tag = ((h mod p) + s) mod 2^128 (RFC
 * 8439 2.5.1), branch-free, nothing on the stack. From h2 <= 4 one fold leaves
 * h < 2^130 + 2^64 < 2p; g = h + 5 reaches 2^130 (g2 >> 2 = 1, never more) exactly
 * when h >= p, and then the low 128 bits of h - p are those of g. */
static inline void ppc64_finish(poly1305_state *st, uint8_t tag[16])
{
    uint64_t h0 = ppc64_get(st, PPC64_H(0)), h1 = ppc64_get(st, PPC64_H(1)),
             h2 = ppc64_get(st, PPC64_H(2)), s0 = ppc64_get(st, PPC64_S(0)),
             s1 = ppc64_get(st, PPC64_S(1)), g0, g1;

    __asm__("rldicr %[g0],%[h2],0,61\n\t"  /* fold: h += 5 (h2 >> 2), h2 &= 3 */
            "srdi %[g1],%[h2],2\n\t"
            "clrldi %[h2],%[h2],62\n\t"
            "add %[g0],%[g0],%[g1]\n\t"
            "addc %[h0],%[h0],%[g0]\n\t"
            "addze %[h1],%[h1]\n\t"
            "addze %[h2],%[h2]\n\t"
            "addic %[g0],%[h0],5\n\t"      /* g = h + 5 */
            "addze %[g1],%[h1]\n\t"
            "addze %[h2],%[h2]\n\t"
            "srdi %[h2],%[h2],2\n\t"       /* all ones when h >= p */
            "neg %[h2],%[h2]\n\t"
            "xor %[g0],%[g0],%[h0]\n\t"    /* h = mask ? g : h */
            "xor %[g1],%[g1],%[h1]\n\t"
            "and %[g0],%[g0],%[h2]\n\t"
            "and %[g1],%[g1],%[h2]\n\t"
            "xor %[h0],%[h0],%[g0]\n\t"
            "xor %[h1],%[h1],%[g1]\n\t"
            "addc %[h0],%[h0],%[s0]\n\t"   /* + s mod 2^128 */
            "adde %[h1],%[h1],%[s1]"
            : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [g0] "=&r"(g0), [g1] "=&r"(g1)
            : [s0] "r"(s0), [s1] "r"(s1)
            : "xer");
    store64_le(tag, h0);
    store64_le(tag + 8, h1);
}

#endif
