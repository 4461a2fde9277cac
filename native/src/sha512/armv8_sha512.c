/* SHA-512 compression, ARMv8.2 SHA512 instructions: sha512h/sha512h2 two rounds per pair over the {a,b} {c,d} {e,f} {g,h} vectors rotating through five registers, sha512su0/su1 schedule over eight two-word vectors, one asm block per call (FIPS 180-4 section 6.4.2). */
#if !defined(__aarch64__) || !defined(__ARM_FEATURE_SHA512) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sha512/armv8_sha512.c needs little-endian -march=armv8.2-a+crypto+sha3 (ISA_FLAGS_armv8_sha512 in native/Makefile)"
#endif

#include "common.h"
#include "sha512/sha512.h"


/*
 * Two rounds t, t+1 (DR; DRS also computes W[t+16], W[t+17] in place of W[t], W[t+1]).
 * i0..i3 are the registers holding {a,b} {c,d} {e,f} {g,h} at round t and i4 a free one;
 * rc holds K[t], K[t+1] and in0 W[t], W[t+1]. sha512h takes {g,h} + W + K with its halves
 * swapped (it wants the second round's word high), {f,g} and {d,e}, and returns the two
 * T1 sums; {c,d} plus those is the new {e,f} (into i4), and sha512h2 turns them, {c,d}
 * and {a,b} into the new {a,b} (in i3). The next pair's registers are then (i3, i0, i4,
 * i2, i1): the roles cycle through the five registers every five pairs, so no vector is
 * ever moved. Schedule (section 6.4.2 step 1): in1 = W[t+2..], in2 = W[t+14..], in3,
 * in4 = W[t+8..], W[t+10..]; su0 adds σ0(W[t+1..t+2]), su1 σ1(W[t+14..t+15]) and
 * W[t+9..t+10]. The layout is the one of the Linux kernel's sha512-ce-core.S.
 *
 * In C with the intrinsics (the first version of this file) gcc 12 moved a vector per
 * pair and spilled the schedule: 4.15 instructions a byte under qemu against 3.5 here.
 * v8-v15 (whose low halves the ABI makes callee-saved) are not used.
 */
#define V(n) "v" #n
#define DR(i0, i1, i2, i3, i4, rc, in0)                                   \
    "add v5.2d, " V(rc) ".2d, " V(in0) ".2d\n\t"                         \
    "ext v6.16b, " V(i2) ".16b, " V(i3) ".16b, #8\n\t"                   \
    "ext v5.16b, v5.16b, v5.16b, #8\n\t"                                \
    "ext v7.16b, " V(i1) ".16b, " V(i2) ".16b, #8\n\t"                   \
    "add " V(i3) ".2d, " V(i3) ".2d, v5.2d\n\t"                          \
    "sha512h q" #i3 ", q6, v7.2d\n\t"                                    \
    "add " V(i4) ".2d, " V(i1) ".2d, " V(i3) ".2d\n\t"                    \
    "sha512h2 q" #i3 ", q" #i1 ", " V(i0) ".2d\n\t"

#define DRS(i0, i1, i2, i3, i4, rc, in0, in1, in2, in3, in4)               \
    "add v5.2d, " V(rc) ".2d, " V(in0) ".2d\n\t"                         \
    "ext v6.16b, " V(i2) ".16b, " V(i3) ".16b, #8\n\t"                   \
    "ext v5.16b, v5.16b, v5.16b, #8\n\t"                                \
    "ext v7.16b, " V(i1) ".16b, " V(i2) ".16b, #8\n\t"                   \
    "add " V(i3) ".2d, " V(i3) ".2d, v5.2d\n\t"                          \
    "ext v5.16b, " V(in3) ".16b, " V(in4) ".16b, #8\n\t"                 \
    "sha512su0 " V(in0) ".2d, " V(in1) ".2d\n\t"                         \
    "sha512h q" #i3 ", q6, v7.2d\n\t"                                    \
    "sha512su1 " V(in0) ".2d, " V(in2) ".2d, v5.2d\n\t"                  \
    "add " V(i4) ".2d, " V(i1) ".2d, " V(i3) ".2d\n\t"                    \
    "sha512h2 q" #i3 ", q" #i1 ", " V(i0) ".2d\n\t"

static void sha512_compress(uint64_t h[8], const uint8_t *in, size_t nblocks)
{
    const uint64_t *k;

    if (nblocks == 0)
        return;
    /* volatile: its only effect, the store to h, is not an output operand */
    __asm__ __volatile__("ld1 {v0.2d-v3.2d}, [%[h]]\n"
            "1:\n\t"
            "ld1 {v16.2d-v19.2d}, [%[in]], #64\n\t"
            "ld1 {v20.2d-v23.2d}, [%[in]], #64\n\t"
            "mov %[k], %[kbase]\n\t"
            /* big-endian words: rev64 swaps the bytes of each lane */
            "rev64 v16.16b, v16.16b\n\t"
            "rev64 v17.16b, v17.16b\n\t"
            "rev64 v18.16b, v18.16b\n\t"
            "rev64 v19.16b, v19.16b\n\t"
            "rev64 v20.16b, v20.16b\n\t"
            "rev64 v21.16b, v21.16b\n\t"
            "rev64 v22.16b, v22.16b\n\t"
            "rev64 v23.16b, v23.16b\n\t"
            "mov v24.16b, v0.16b\n\t"
            "mov v25.16b, v1.16b\n\t"
            "mov v26.16b, v2.16b\n\t"
            "mov v27.16b, v3.16b\n\t"
            /* rounds 0..79, K four pairs at a time into v28..v31 */
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(0, 1, 2, 3, 4, 28, 16, 17, 23, 20, 21)
            DRS(3, 0, 4, 2, 1, 29, 17, 18, 16, 21, 22)
            DRS(2, 3, 1, 4, 0, 30, 18, 19, 17, 22, 23)
            DRS(4, 2, 0, 1, 3, 31, 19, 20, 18, 23, 16)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(1, 4, 3, 0, 2, 28, 20, 21, 19, 16, 17)
            DRS(0, 1, 2, 3, 4, 29, 21, 22, 20, 17, 18)
            DRS(3, 0, 4, 2, 1, 30, 22, 23, 21, 18, 19)
            DRS(2, 3, 1, 4, 0, 31, 23, 16, 22, 19, 20)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(4, 2, 0, 1, 3, 28, 16, 17, 23, 20, 21)
            DRS(1, 4, 3, 0, 2, 29, 17, 18, 16, 21, 22)
            DRS(0, 1, 2, 3, 4, 30, 18, 19, 17, 22, 23)
            DRS(3, 0, 4, 2, 1, 31, 19, 20, 18, 23, 16)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(2, 3, 1, 4, 0, 28, 20, 21, 19, 16, 17)
            DRS(4, 2, 0, 1, 3, 29, 21, 22, 20, 17, 18)
            DRS(1, 4, 3, 0, 2, 30, 22, 23, 21, 18, 19)
            DRS(0, 1, 2, 3, 4, 31, 23, 16, 22, 19, 20)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(3, 0, 4, 2, 1, 28, 16, 17, 23, 20, 21)
            DRS(2, 3, 1, 4, 0, 29, 17, 18, 16, 21, 22)
            DRS(4, 2, 0, 1, 3, 30, 18, 19, 17, 22, 23)
            DRS(1, 4, 3, 0, 2, 31, 19, 20, 18, 23, 16)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(0, 1, 2, 3, 4, 28, 20, 21, 19, 16, 17)
            DRS(3, 0, 4, 2, 1, 29, 21, 22, 20, 17, 18)
            DRS(2, 3, 1, 4, 0, 30, 22, 23, 21, 18, 19)
            DRS(4, 2, 0, 1, 3, 31, 23, 16, 22, 19, 20)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(1, 4, 3, 0, 2, 28, 16, 17, 23, 20, 21)
            DRS(0, 1, 2, 3, 4, 29, 17, 18, 16, 21, 22)
            DRS(3, 0, 4, 2, 1, 30, 18, 19, 17, 22, 23)
            DRS(2, 3, 1, 4, 0, 31, 19, 20, 18, 23, 16)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DRS(4, 2, 0, 1, 3, 28, 20, 21, 19, 16, 17)
            DRS(1, 4, 3, 0, 2, 29, 21, 22, 20, 17, 18)
            DRS(0, 1, 2, 3, 4, 30, 22, 23, 21, 18, 19)
            DRS(3, 0, 4, 2, 1, 31, 23, 16, 22, 19, 20)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DR(2, 3, 1, 4, 0, 28, 16)
            DR(4, 2, 0, 1, 3, 29, 17)
            DR(1, 4, 3, 0, 2, 30, 18)
            DR(0, 1, 2, 3, 4, 31, 19)
            "ld1 {v28.2d-v31.2d}, [%[k]], #64\n\t"
            DR(3, 0, 4, 2, 1, 28, 20)
            DR(2, 3, 1, 4, 0, 29, 21)
            DR(4, 2, 0, 1, 3, 30, 22)
            DR(1, 4, 3, 0, 2, 31, 23)
            /* forty pairs: the roles are back in v0..v3 */
            "add v0.2d, v0.2d, v24.2d\n\t"
            "add v1.2d, v1.2d, v25.2d\n\t"
            "add v2.2d, v2.2d, v26.2d\n\t"
            "add v3.2d, v3.2d, v27.2d\n\t"
            "subs %[n], %[n], #1\n\t"
            "b.ne 1b\n\t"
            "st1 {v0.2d-v3.2d}, [%[h]]"
            : [in] "+r"(in), [n] "+r"(nblocks), [k] "=&r"(k)
            : [h] "r"(h), [kbase] "r"(archcrypt_sha512_K)
            : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17",
              "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
              "v29", "v30", "v31");
}

#undef DR
#undef DRS
#undef V

const sha512_kernel archcrypt_sha512_armv8_sha512 = {
    .compress = sha512_compress,
};
