/* Poly1305, POWER8 row: radix 2^64 with mulld/mulhdu and the carry bit (addc/adde), 30 instructions per block, no vector unit: radix 2^26 on 128-bit vectors (vmuleuw/vmulouw, no multiply-add) takes more instructions per block than this (RFC 8439 2.5). */
#if !defined(_ARCH_PWR8) || !defined(__LITTLE_ENDIAN__)
#error "poly1305/power8.c needs little-endian -mcpu=power8 (ISA_FLAGS_power8 in native/Makefile)"
#endif

#include "poly1305/scalar64.h"
#include "poly1305/ppc64.h"

extern const poly1305_kernel archcrypt_poly1305_power8;

static void poly1305_power8_init(poly1305_state *st, const uint8_t key[32])
{
    p64_init(st, key);
}

static void poly1305_power8_blocks(poly1305_state *st, const uint8_t *in, size_t len,
                                   uint32_t padbit)
{
    uint64_t h[3], r[2];

    if (len < 16)
        return;
    P64_GET(st, h, h);
    P64_GET(st, r, r);
    ppc64_blocks(h, r, in, len / 16, padbit);
    P64_PUT(st, h, h);
}

static void poly1305_power8_finish(poly1305_state *st, uint8_t tag[16])
{
    p64_finish(st, tag);
}

const poly1305_kernel archcrypt_poly1305_power8 = {
    .init = poly1305_power8_init,
    .blocks = poly1305_power8_blocks,
    .finish = poly1305_power8_finish,
};
