/* Poly1305, 64-bit limbs: h = (h + m) * r mod 2^130 - 5 in radix 2^64 with 128-bit products, no vector unit (RFC 8439 2.5). */
#ifndef __SIZEOF_INT128__
#error "poly1305/scalar64.c needs unsigned __int128 (ISA_ARCH_scalar64 in native/isa.mk)"
#endif

#include "poly1305/poly1305.h"
#include "poly1305/scalar64.h"

static void poly1305_scalar64_init(poly1305_state *st, const uint8_t key[32])
{
    p64_init(st, key);
}

static void poly1305_scalar64_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                     uint32_t padbit)
{
    p64_blocks_call(st, in, len, padbit);
}

static void poly1305_scalar64_finish(poly1305_state *st, uint8_t tag[16])
{
    p64_finish(st, tag);
}

static size_t poly1305_scalar64_used(const poly1305_state *st)
{
    (void)st;
    return P64_VEC_OFFSET;
}

const poly1305_kernel archcrypt_poly1305_scalar64 = {
    .init = poly1305_scalar64_init,
    .blocks = poly1305_scalar64_blocks,
    .finish = poly1305_scalar64_finish,
    .used = poly1305_scalar64_used,
};
