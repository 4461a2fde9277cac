/* Poly1305 in radix 2^64 for AArch64, the carry flag in adds/adcs (RFC 8439 2.5): the scalar block loop, key set-up and tag of poly1305/neon.c (short calls and the last 1-7 blocks). */
#ifndef ARCHCRYPT_POLY1305_AARCH64_H
#define ARCHCRYPT_POLY1305_AARCH64_H

#if !defined(__aarch64__)
#error "poly1305/aarch64.h is for AArch64"
#endif

#include <stddef.h>
#include <stdint.h>

#include "poly1305/scalar64.h"

#define a64_get p64_word
#define a64_put p64_set_word
#define A64_H(i) (offsetof(p64_head, h) + 8 * (i))
#define A64_R(i) (offsetof(p64_head, r) + 8 * (i))
#define A64_S(i) (offsetof(p64_head, s) + 8 * (i))

/* scalar64.h's p64_blocks (same state, same h, same bounds: r0, r1 < 2^60, s1 = 5 r1 / 4,
 * h2 <= 6 once the block and pad bit are in, so h2 s1 < 2^63 and no column sum carries
 * out of its top word; h2 <= 4 after the fold of the bits at 2^130 and up, times 5).
 * gcc 12 turns the C version's carries into cset/ccmp/cinc: 45 instructions per block
 * on AArch64. With the carry flag it is 30: the column d1 starts from the high half of
 * h0 r0 and the top word d2 from that of h0 r1, so every addition is one adds or adc.
 * nb >= 1; the "memory" clobber stands for the message read. */
static inline void a64_blocks(uint64_t h[3], uint64_t r0, uint64_t r1, const uint8_t *in,
                              size_t nb, uint64_t padbit)
{
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], d0, d1, d2, t0, t1;
    const uint64_t s1 = r1 + (r1 >> 2);

    __asm__("1:\n\t"
            "ldp %[t0], %[t1], [%[in]], #16\n\t" /* little-endian: the block as two words */
            "adds %[h0], %[h0], %[t0]\n\t"
            "adcs %[h1], %[h1], %[t1]\n\t"
            "mul %[d0], %[h0], %[r0]\n\t"        /* d0 = h0 r0 + h1 s1 */
            "adc %[h2], %[h2], %[pad]\n\t"
            "umulh %[d1], %[h0], %[r0]\n\t"
            "mul %[t0], %[h1], %[s1]\n\t"
            "umulh %[t1], %[h1], %[s1]\n\t"
            "adds %[d0], %[d0], %[t0]\n\t"
            "mul %[t0], %[h0], %[r1]\n\t"        /* d1 += h0 r1 + h1 r0 + h2 s1 */
            "adc %[d1], %[d1], %[t1]\n\t"
            "umulh %[d2], %[h0], %[r1]\n\t"
            "adds %[d1], %[d1], %[t0]\n\t"
            "mul %[t0], %[h1], %[r0]\n\t"
            "adc %[d2], %[d2], xzr\n\t"
            "umulh %[t1], %[h1], %[r0]\n\t"
            "adds %[d1], %[d1], %[t0]\n\t"
            "mul %[t0], %[h2], %[s1]\n\t"
            "adc %[d2], %[d2], %[t1]\n\t"
            "mul %[t1], %[h2], %[r0]\n\t"        /* d2 += h2 r0 */
            "adds %[d1], %[d1], %[t0]\n\t"
            "adc %[d2], %[d2], %[t1]\n\t"
            "and %[t0], %[d2], #-4\n\t"          /* 5 (d2 >> 2) = 4 (d2 >> 2) + d2 >> 2 */
            "and %[h2], %[d2], #3\n\t"
            "add %[t0], %[t0], %[d2], lsr #2\n\t"
            "adds %[h0], %[d0], %[t0]\n\t"
            "adcs %[h1], %[d1], xzr\n\t"
            "adc %[h2], %[h2], xzr\n\t"
            "subs %[nb], %[nb], #1\n\t"
            "b.ne 1b"
            : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [in] "+&r"(in), [nb] "+&r"(nb),
              [d0] "=&r"(d0), [d1] "=&r"(d1), [d2] "=&r"(d2), [t0] "=&r"(t0), [t1] "=&r"(t1)
            : [r0] "r"(r0), [r1] "r"(r1), [s1] "r"(s1), [pad] "r"(padbit)
            : "cc", "memory");
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
}

/* The whole of a short call: h and r straight from the state into registers. nb >= 1. */
static inline void a64_blocks_call(poly1305_state *st, const uint8_t *in, size_t nb,
                                   uint64_t padbit)
{
    uint64_t h[3] = {a64_get(st, A64_H(0)), a64_get(st, A64_H(1)), a64_get(st, A64_H(2))};

    a64_blocks(h, a64_get(st, A64_R(0)), a64_get(st, A64_R(1)), in, nb, padbit);
    a64_put(st, A64_H(0), h[0]);
    a64_put(st, A64_H(1), h[1]);
    a64_put(st, A64_H(2), h[2]);
}

/* scalar64.h's p64_finish with the carry flag: tag = ((h mod p) + s) mod 2^128 (RFC
 * 8439 2.5.1), branch-free. From h2 <= 4 one fold leaves h < 2^130 + 2^64 < 2p; g = h + 5
 * reaches 2^130 (g2 >> 2 = 1, never more) exactly when h >= p, and then the low 128 bits
 * of h - p are those of g: `cs` on g2 > 3, never `eq` (BoringSSL 53a87b7c5). */
static inline void a64_finish(poly1305_state *st, uint8_t tag[16])
{
    uint64_t h0 = a64_get(st, A64_H(0)), h1 = a64_get(st, A64_H(1)), h2 = a64_get(st, A64_H(2)),
             s0 = a64_get(st, A64_S(0)), s1 = a64_get(st, A64_S(1)), g0, g1, t;

    __asm__("and %[t], %[h2], #-4\n\t"             /* fold: h += 5 (h2 >> 2), h2 &= 3 */
            "and %[h2], %[h2], #3\n\t"
            "add %[t], %[t], %[t], lsr #2\n\t"
            "adds %[h0], %[h0], %[t]\n\t"
            "adcs %[h1], %[h1], xzr\n\t"
            "adc %[h2], %[h2], xzr\n\t"
            "adds %[g0], %[h0], #5\n\t"            /* g = h + 5 */
            "adcs %[g1], %[h1], xzr\n\t"
            "adc %[t], %[h2], xzr\n\t"
            "cmp %[t], #3\n\t"                     /* g >= 2^130: h >= p */
            "csel %[h0], %[g0], %[h0], hi\n\t"
            "csel %[h1], %[g1], %[h1], hi\n\t"
            "adds %[h0], %[h0], %[s0]\n\t"         /* + s mod 2^128 */
            "adc %[h1], %[h1], %[s1]"
            : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [g0] "=&r"(g0), [g1] "=&r"(g1),
              [t] "=&r"(t)
            : [s0] "r"(s0), [s1] "r"(s1)
            : "cc");
    memcpy(tag, &h0, 8); /* AArch64 Linux is little-endian */
    memcpy(tag + 8, &h1, 8);
}

#endif
