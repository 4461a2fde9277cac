/* Poly1305, POWER8 row: radix 2^64 with mulld/mulhdu and the carry bit (addc/adde), 30 instructions per block, key set-up and tag without stack copies (poly1305/ppc64.h); no vector path, see below (RFC 8439 2.5). */
#if !defined(_ARCH_PWR8) || !defined(__LITTLE_ENDIAN__)
#error "poly1305/power8.c needs little-endian -mcpu=power8 (ISA_FLAGS_power8 in native/isa.mk)"
#endif

#include "poly1305/ppc64.h"

/* Why no radix-2^26 vector path for long inputs: ISA 2.07 has no integer multiply-add
 * (vmsumudm is ISA 3.0, poly1305/power9.c), so each 26 x 26-bit partial product costs
 * half a vmuleuw/vmulouw plus half a vaddudm. A block has 25 of them (5 limbs by 5):
 * 25 instructions per block before the message is split into limbs (5-6 more per
 * block: permutes, shifts, masks) and the sums are carried, against 30 for the whole
 * block here plus a loop step per four blocks (1.91 per byte at 64 KiB under qemu's
 * insn plugin). OpenSSL's POWER8 code is that vector design (4 blocks per iteration,
 * powers r^1..r^4 interleaved, lazy reduction): 2.63 per byte in the same count.
 * Radix 2^13 with vmsumuhm (16-bit multiply-sum into 32-bit lanes) overflows its
 * lanes, and doubles with xvmaddadp need 6 limbs and conversions. On a real POWER8
 * the vector path may still win in cycles (more independent work per block); these
 * counts cannot show that. */

static void poly1305_power8_init(poly1305_state *st, const uint8_t key[32])
{
    ppc64_init(st, key);
}

static void poly1305_power8_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                   uint32_t padbit)
{
    if (len >= 16)
        ppc64_blocks_call(st, in, len / 16, padbit);
}

static void poly1305_power8_finish(poly1305_state *st, uint8_t tag[16])
{
    ppc64_finish(st, tag);
}

static size_t poly1305_power8_used(const poly1305_state *st)
{
    (void)st;
    return P64_VEC_OFFSET;
}

const poly1305_kernel archcrypt_poly1305_power8 = {
    .init = poly1305_power8_init,
    .blocks = poly1305_power8_blocks,
    .finish = poly1305_power8_finish,
    .used = poly1305_power8_used,
};
