/* SHA-512 rounds for the x86-64 rows (avx2.c, avx512.c): scalar rorx (BMI2) rounds in inline asm, W+K read from memory (FIPS 180-4 section 6.4.2 step 3). */
#ifndef ARCHCRYPT_SHA512_X86_ROUNDS_H
#define ARCHCRYPT_SHA512_X86_ROUNDS_H

#include <stdint.h>

/* One round with the names rotated instead of moved: it writes d (the new e) and
 * h (the new a). 22 ALU instructions, 6 of them rorx:
 *   T1 = h + W+K + Ch(e,f,g) + Sigma1(e), Ch = ((f ^ g) & e) ^ g;
 *   Maj(a,b,c) = b ^ ((a^b) & (b^c)), where b^c is the previous round's a^b: bc comes
 *   in, ab goes out, and the caller swaps the two names every round;
 *   Sigma0(a) goes out in s0 and is added to the new a at the start of the next
 *   round, which keeps it off the path from T1 to the new a (the caller adds the
 *   last one after round 79; s0 = 0 before round 0).
 * The caller declares uint64_t s0, bc, ab. wk is any uint64_t lvalue (the round reads
 * it as a memory operand, so the schedule costs the round no register).
 * Why asm: the instruction order decides the speed on the 4-ALU cores these rows are
 * for (2 of the ALUs rotate), and gcc's own order of the same C was 7 % slower
 * (Zen 3: 4.33 against 4.03 c/B at 64 KiB). Volatile makes gcc's scheduler keep the
 * vector schedule steps where the callers put them, between rounds. rorx is in the
 * asm, not in compiler output, so a file using this needs no -mbmi2 of its own; its
 * dispatch row must require bmi2. */
#define SHA512_RND(a, b, c, d, e, f, g, h, wk, bc, ab)                            \
    do {                                                                          \
        uint64_t t0_, t4_;                                                        \
        __asm__ __volatile__("mov %[o_f],%[o_t4]\n\t"                             \
                             "xor %[o_g],%[o_t4]\n\t"                             \
                             "rorx $41,%[o_e],%[o_t0]\n\t"                        \
                             "rorx $18,%[o_e],%[o_ab]\n\t"                        \
                             "and %[o_e],%[o_t4]\n\t"                             \
                             "add %[o_w],%[o_h]\n\t"                              \
                             "xor %[o_ab],%[o_t0]\n\t"                            \
                             "rorx $14,%[o_e],%[o_ab]\n\t"                        \
                             "xor %[o_g],%[o_t4]\n\t"         /* Ch */            \
                             "lea (%[o_a],%[o_s0]),%[o_a]\n\t" /* a complete */   \
                             "xor %[o_ab],%[o_t0]\n\t"        /* Sigma1(e) */     \
                             "add %[o_t4],%[o_h]\n\t"                             \
                             "mov %[o_a],%[o_ab]\n\t"                             \
                             "rorx $39,%[o_a],%[o_t4]\n\t"                        \
                             "xor %[o_b],%[o_ab]\n\t"         /* a ^ b */         \
                             "add %[o_t0],%[o_h]\n\t"         /* T1 */            \
                             "rorx $34,%[o_a],%[o_s0]\n\t"                        \
                             "add %[o_h],%[o_d]\n\t"          /* new e */         \
                             "and %[o_ab],%[o_bc]\n\t"                            \
                             "rorx $28,%[o_a],%[o_t0]\n\t"                        \
                             "xor %[o_t4],%[o_s0]\n\t"                            \
                             "xor %[o_b],%[o_bc]\n\t"         /* Maj */           \
                             "add %[o_bc],%[o_h]\n\t"         /* new a - S0 */    \
                             "xor %[o_t0],%[o_s0]"            /* Sigma0(a) */     \
                             : [o_a] "+r"(a), [o_d] "+r"(d), [o_h] "+r"(h),       \
                               [o_s0] "+r"(s0), [o_bc] "+r"(bc), [o_ab] "=&r"(ab), \
                               [o_t0] "=&r"(t0_), [o_t4] "=&r"(t4_)               \
                             : [o_b] "r"(b), [o_e] "r"(e), [o_f] "r"(f),          \
                               [o_g] "r"(g), [o_w] "m"(wk)                        \
                             : "cc");                                             \
    } while (0)

/* Four rounds; their W+K are wk[0], wk[s], wk[2s], wk[3s] (s = 2 when two blocks'
 * schedules are interleaved). */
#define SHA512_RND4(a, b, c, d, e, f, g, h, wk, s)                                \
    do {                                                                          \
        SHA512_RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                      \
        SHA512_RND(h, a, b, c, d, e, f, g, (wk)[(s)], ab, bc);                    \
        SHA512_RND(g, h, a, b, c, d, e, f, (wk)[2 * (s)], bc, ab);                \
        SHA512_RND(f, g, h, a, b, c, d, e, (wk)[3 * (s)], ab, bc);                \
    } while (0)

#endif
