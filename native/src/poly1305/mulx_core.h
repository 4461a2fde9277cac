/* Poly1305 block in radix 2^64 with mulx (BMI2), one asm block: the scalar step shared by poly1305/avx2.c (short calls) and aead/avx2.c (threaded through the ChaCha20 rounds) (RFC 8439 2.5). */
#ifndef ARCHCRYPT_POLY1305_MULX_CORE_H
#define ARCHCRYPT_POLY1305_MULX_CORE_H

/* A header gets no ISA flags of its own: only files built with ISA_FLAGS_avx2
 * (-mbmi2) may include it. The scalar64 row stays plain C: it also runs on
 * x86-64 CPUs without mulx. */
#ifndef __BMI2__
#error "poly1305/mulx_core.h needs -mbmi2: include it only from files built with ISA_FLAGS_avx2"
#endif

#include "poly1305/scalar64.h"

/* h, the clamped r and s1 = r1 + r1 / 4, as the callers' loops keep them in
 * registers (a local copy: through a pointer that the output stores might
 * alias, gcc keeps h in memory and stores it after every block). */
typedef struct {
    uint64_t h0, h1, h2, r0, r1, s1;
} p64_regs;

/* h = (h + m + padbit 2^128) r, partially reduced: p64_mul's arithmetic and
 * bounds (h2 <= 4 in and out) in one asm block, as gcc 12 spilled the C
 * version's carries to memory inside the vector loop. The products come in
 * the order the sums need them; a2 r0 joins the top column with the carry of
 * a2 s1, the result comes back in new registers and the block is read as two
 * memory operands, so the step is 29 instructions: threaded through ChaCha20,
 * integer and vector work share the front end. The dependency chain is 16
 * cycles a block on Zen 3 (p64_blocks in C: ~20). */
AC_INLINE void p64_mulx_block(p64_regs *m, const uint8_t *p,
                                                                 uint64_t padbit)
{
    uint64_t a0 = m->h0, a1 = m->h1, a2 = m->h2, d0, d1, d2, t0, t1, t2;

    __asm__("addq %[m0], %[a0]\n\t"
            "adcq %[m1], %[a1]\n\t"
            "adcq %[pad], %[a2]\n\t"
            "movq %[a0], %%rdx\n\t"
            "mulxq %[r0], %[d0], %[t0]\n\t" /* a0 r0 */
            "mulxq %[r1], %[d1], %[d2]\n\t" /* a0 r1 */
            "movq %[a1], %%rdx\n\t"
            "mulxq %[s1], %[t1], %[t2]\n\t" /* a1 s1 */
            "addq %[t1], %[d0]\n\t"
            "adcq %[t2], %[t0]\n\t"
            "mulxq %[r0], %[t1], %[t2]\n\t" /* a1 r0 */
            "addq %[t1], %[d1]\n\t"
            "adcq %[t2], %[d2]\n\t"
            "movq %[a2], %[t1]\n\t"
            "imulq %[s1], %[t1]\n\t"
            "imulq %[r0], %[a2]\n\t"
            "addq %[t1], %[d1]\n\t"
            "adcq %[a2], %[d2]\n\t"
            "addq %[t0], %[d1]\n\t"
            "adcq $0, %[d2]\n\t"
            /* (d2:d1:d0) = low 130 bits + 5 * (bits above 130) */
            "movq %[d2], %[a2]\n\t"
            "andq $3, %[a2]\n\t"
            "movq %[d2], %[t1]\n\t"
            "shrq $2, %[t1]\n\t"
            "andq $-4, %[d2]\n\t"
            "addq %[t1], %[d2]\n\t"
            "addq %[d2], %[d0]\n\t"
            "adcq $0, %[d1]\n\t"
            "adcq $0, %[a2]"
            : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [d0] "=&r"(d0), [d1] "=&r"(d1),
              [d2] "=&r"(d2), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2)
            : [m0] "m"(*(const uint8_t(*)[8])p), [m1] "m"(*(const uint8_t(*)[8])(p + 8)),
              [pad] "re"(padbit), [r0] "rm"(m->r0), [r1] "rm"(m->r1), [s1] "rm"(m->s1)
            : "rdx", "cc");
    m->h0 = d0;
    m->h1 = d1;
    m->h2 = a2;
}

/* len / 16 blocks of a poly1305_state in the p64_head layout. */
static inline void p64_mulx_blocks_call(poly1305_state *st, const uint8_t *in, size_t len,
                                        uint32_t padbit)
{
    uint64_t h[3], r[2];
    p64_regs m;

    P64_GET(st, h, h);
    P64_GET(st, r, r);
    m.h0 = h[0];
    m.h1 = h[1];
    m.h2 = h[2];
    m.r0 = r[0];
    m.r1 = r[1];
    m.s1 = r[1] + (r[1] >> 2);
    for (size_t i = 0; i < len / 16; i++)
        p64_mulx_block(&m, in + 16 * i, padbit);
    h[0] = m.h0;
    h[1] = m.h1;
    h[2] = m.h2;
    P64_PUT(st, h, h);
}

#endif
