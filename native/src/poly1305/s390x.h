/* Poly1305 in radix 2^64 for z/Architecture, mlgr products and the carry in alcgr (RFC 8439 2.5): the scalar block loop, key set-up and tag of poly1305/vx.c. */
#ifndef ARCHCRYPT_POLY1305_S390X_H
#define ARCHCRYPT_POLY1305_S390X_H

#if !defined(__s390x__)
#error "poly1305/s390x.h is for s390x"
#endif

#include <stddef.h>
#include <stdint.h>

#include "poly1305/scalar64.h"

/* The head of the state (scalar64.h's p64_head) one word at a time: gcc 12 copies a
 * whole array field through the stack (and through vector registers on z13). */
static inline uint64_t s390x_get(const poly1305_state *st, size_t off)
{
    uint64_t v;

    memcpy(&v, st->opaque + off, sizeof v);
    return v;
}

static inline void s390x_put(poly1305_state *st, size_t off, uint64_t v)
{
    memcpy(st->opaque + off, &v, sizeof v);
}

#define S390X_H(i) (offsetof(p64_head, h) + 8 * (i))
#define S390X_R(i) (offsetof(p64_head, r) + 8 * (i))
#define S390X_S(i) (offsetof(p64_head, s) + 8 * (i))

/* What the block loop reads from memory rather than from registers: the loop needs
 * four register pairs for its products, and memory operands (mlg, msg, alcg) cost no
 * more instructions than register ones. */
typedef struct {
    uint64_t r0, r1, s1, pad;
} s390x_p1305_key;

/* nb >= 1 blocks at in: h = (h + m + pad 2^128) r, partially reduced, per block.
 * The algorithm and bounds of scalar64.h's p64_mul (r0, r1 < 2^60, s1 = 5 r1 / 4,
 * h2 <= 6 once the block and pad bit are in, so h2 s1 < 2^63 and no column sum
 * overflows its two words; h2 <= 4 after folding the bits at 2^130 and up, times 5),
 * in the register assignment of OpenSSL's poly1305-s390x.pl: h0 and h1 are the odd
 * halves of the pairs (t0:h0) and (t1:h1), so `mlgr t0` multiplies h0 in place.
 * lrvg loads a little-endian doubleword. 31 instructions a block and brctg, against
 * 57 from gcc 12's code for scalar64.h (it moves every unsigned __int128 sum through
 * the stack and a vector register). gcc allocates the register pairs (an unsigned
 * __int128 operand is an even/odd pair: %[P] the even register, the high doubleword,
 * %N[P] the odd one). */
static inline void s390x_blocks(uint64_t h[3], const s390x_p1305_key *k, const uint8_t *in,
                                size_t nb)
{
    p64_u128 p0 = h[0], p1 = h[1], d0, d1;
    uint64_t h2 = h[2], n = nb;

    __asm__("0:\n\t"
            "lrvg %N[d0],0(%[in])\n\t"         /* the block, little-endian */
            "lrvg %N[d1],8(%[in])\n\t"
            "la %[in],16(%[in])\n\t"
            "algr %N[d0],%N[p0]\n\t"           /* h += m + pad 2^128 */
            "alcgr %N[d1],%N[p1]\n\t"
            "alcg %[h2],%[pad]\n\t"
            "lgr %N[p0],%N[d0]\n\t"
            "mlg %[d0],%[r0]\n\t"              /* d0 = h0 r0 */
            "lgr %N[p1],%N[d1]\n\t"
            "mlg %[d1],%[s1]\n\t"              /*      + h1 s1 */
            "mlg %[p0],%[r1]\n\t"              /* d1 = h0 r1 */
            "mlg %[p1],%[r0]\n\t"              /*      + h1 r0 */
            "algr %N[d0],%N[d1]\n\t"
            "lgr %N[d1],%[h2]\n\t"
            "alcgr %[d0],%[d1]\n\t"
            "lghi %[d1],0\n\t"
            "algr %N[p1],%N[p0]\n\t"
            "alcgr %[p1],%[p0]\n\t"
            "msg %N[d1],%[s1]\n\t"             /*      + h2 s1 */
            "msg %[h2],%[r0]\n\t"              /* d2 = h2 r0 */
            "algr %N[p1],%N[d1]\n\t"
            "alcgr %[p1],%[d1]\n\t"
            "algr %N[p1],%[d0]\n\t"            /* d1 += d0 >> 64 */
            "alcgr %[h2],%[p1]\n\t"            /* d2 += d1 >> 64 */
            "risbg %N[p0],%[h2],0,128+61,0\n\t" /* 4 (d2 >> 2) */
            "srlg %[p0],%[h2],2\n\t"
            "risbg %[h2],%[h2],62,128+63,0\n\t" /* d2 & 3 */
            "algr %N[p0],%[p0]\n\t"            /* 5 (d2 >> 2) */
            "algr %N[p0],%N[d0]\n\t"           /* h = (d2 & 3, d1, d0) + 5 (d2 >> 2) */
            "alcgr %N[p1],%[d1]\n\t"
            "alcgr %[h2],%[d1]\n\t"
            "brctg %[n],0b"
            : [p0] "+&d"(p0), [p1] "+&d"(p1), [d0] "=&d"(d0), [d1] "=&d"(d1), [h2] "+&d"(h2),
              [in] "+&a"(in), [n] "+&d"(n)
            : [r0] "T"(k->r0), [r1] "T"(k->r1), [s1] "T"(k->s1), [pad] "T"(k->pad)
            : "cc", "memory");
    h[0] = (uint64_t)p0;
    h[1] = (uint64_t)p1;
    h[2] = h2;
}

static inline void s390x_key(const poly1305_state *st, s390x_p1305_key *k, uint64_t padbit)
{
    k->r0 = s390x_get(st, S390X_R(0));
    k->r1 = s390x_get(st, S390X_R(1));
    k->s1 = k->r1 + (k->r1 >> 2);
    k->pad = padbit;
}

/* A whole call on the scalar path: h from the state and back. */
static inline void s390x_blocks_call(poly1305_state *st, const uint8_t *in, size_t nb,
                                     uint64_t padbit)
{
    uint64_t h[3] = {s390x_get(st, S390X_H(0)), s390x_get(st, S390X_H(1)),
                     s390x_get(st, S390X_H(2))};
    s390x_p1305_key k;

    s390x_key(st, &k, padbit);
    s390x_blocks(h, &k, in, nb);
    s390x_put(st, S390X_H(0), h[0]);
    s390x_put(st, S390X_H(1), h[1]);
    s390x_put(st, S390X_H(2), h[2]);
}

/* scalar64.h's p64_init, word by word (lrvg for the little-endian key). */
static inline void s390x_init(poly1305_state *st, const uint8_t key[32])
{
    /* RFC 8439 2.5.1 clamp: r &= 0x0ffffffc0ffffffc0ffffffc0fffffff. */
    s390x_put(st, S390X_R(0), load64_le(key + 0) & 0x0ffffffc0fffffffu);
    s390x_put(st, S390X_R(1), load64_le(key + 8) & 0x0ffffffc0ffffffcu);
    s390x_put(st, S390X_S(0), load64_le(key + 16));
    s390x_put(st, S390X_S(1), load64_le(key + 24));
    s390x_put(st, S390X_H(0), 0);
    s390x_put(st, S390X_H(1), 0);
    s390x_put(st, S390X_H(2), 0);
    s390x_put(st, offsetof(p64_head, powers), 0);
}

/* scalar64.h's p64_finish with the carry in alcgr: tag = ((h mod p) + s) mod 2^128
 * (RFC 8439 2.5.1), branch-free. From h2 <= 4, one fold leaves h < 2^130 + 2^64 < 2p;
 * g = h + 5 reaches 2^130 (g2 >> 2 = 1, never more) exactly when h >= p, and then the
 * low 128 bits of h - p are those of g. strvg stores little-endian. */
static inline void s390x_finish(poly1305_state *st, uint8_t tag[16])
{
    uint64_t h0 = s390x_get(st, S390X_H(0)), h1 = s390x_get(st, S390X_H(1)),
             h2 = s390x_get(st, S390X_H(2)), s0 = s390x_get(st, S390X_S(0)),
             s1 = s390x_get(st, S390X_S(1)), g0, g1, z;

    __asm__("risbg %[g0],%[h2],0,128+61,0\n\t"  /* fold: h += 5 (h2 >> 2), h2 &= 3 */
            "srlg %[g1],%[h2],2\n\t"
            "risbg %[h2],%[h2],62,128+63,0\n\t"
            "algr %[g0],%[g1]\n\t"
            "lghi %[z],0\n\t"
            "algr %[h0],%[g0]\n\t"
            "alcgr %[h1],%[z]\n\t"
            "alcgr %[h2],%[z]\n\t"
            "lghi %[g0],5\n\t"                    /* g = h + 5 */
            "algr %[g0],%[h0]\n\t"
            "lgr %[g1],%[h1]\n\t"
            "alcgr %[g1],%[z]\n\t"
            "alcgr %[h2],%[z]\n\t"
            "srlg %[h2],%[h2],2\n\t"              /* all ones when h >= p */
            "lcgr %[h2],%[h2]\n\t"
            "xgr %[g0],%[h0]\n\t"                 /* h = mask ? g : h */
            "xgr %[g1],%[h1]\n\t"
            "ngr %[g0],%[h2]\n\t"
            "ngr %[g1],%[h2]\n\t"
            "xgr %[h0],%[g0]\n\t"
            "xgr %[h1],%[g1]\n\t"
            "algr %[h0],%[s0]\n\t"                /* + s mod 2^128 */
            "alcgr %[h1],%[s1]\n\t"
            "strvg %[h0],%[t0]\n\t"
            "strvg %[h1],%[t1]"
            : [h0] "+&d"(h0), [h1] "+&d"(h1), [h2] "+&d"(h2), [g0] "=&d"(g0), [g1] "=&d"(g1),
              [z] "=&d"(z), [t0] "=T"(*(uint8_t(*)[8])tag), [t1] "=T"(*(uint8_t(*)[8])(tag + 8))
            : [s0] "d"(s0), [s1] "d"(s1)
            : "cc");
}

/* A vector kernel's part of a call (poly1305/vx.c, vxe.c): whole groups of blocks, h from
 * the state and back, the table of powers built on the first vector call for a key. The
 * kernel wraps it in a function of its own, out of line, so that the scalar path of a
 * short call saves no registers for it. */
typedef void s390x_vec_blocks_fn(const poly1305_state *st, uint64_t h[3], const uint8_t *in,
                                 size_t ng, uint32_t padbit);
typedef void s390x_vec_call_fn(poly1305_state *st, const uint8_t *in, size_t ng,
                               uint32_t padbit);

static inline __attribute__((always_inline)) void
s390x_vec_call(poly1305_state *st, const uint8_t *in, size_t ng, uint32_t padbit,
               void (*powers)(poly1305_state *), s390x_vec_blocks_fn *vec_blocks)
{
    uint64_t h[3] = {s390x_get(st, S390X_H(0)), s390x_get(st, S390X_H(1)),
                     s390x_get(st, S390X_H(2))};

    if (!s390x_get(st, offsetof(p64_head, powers)))
        powers(st);
    vec_blocks(st, h, in, ng, padbit);
    s390x_put(st, S390X_H(0), h[0]);
    s390x_put(st, S390X_H(1), h[1]);
    s390x_put(st, S390X_H(2), h[2]);
}

/* The kernel contract's `blocks`: the vector path in groups of `group` blocks from `min`
 * blocks on (from `first` while the table of powers is still to be built), the rest
 * scalar. */
static inline __attribute__((always_inline)) void
s390x_dispatch(poly1305_state *st, const uint8_t *in, size_t len, uint32_t padbit, size_t group,
               size_t min, size_t first, s390x_vec_call_fn *vec_call)
{
    size_t nb = len / 16;

    if (nb >= min && (nb >= first || s390x_get(st, offsetof(p64_head, powers)))) {
        vec_call(st, in, nb / group, padbit);
        in += 16 * group * (nb / group);
        nb %= group;
    }
    if (nb > 0)
        s390x_blocks_call(st, in, nb, padbit);
}

#endif
