/* Poly1305, portable: h = (h + m) * r mod 2^130 - 5 in radix 2^26, five 32-bit limbs, 64-bit products (RFC 8439 2.5; poly1305-donna-32 style). */
#include "common.h"
#include "poly1305/poly1305.h"

/* Limb i holds bits 26*i .. 26*i + 25 of a 130-bit number. */
#define LIMB_MASK 0x3ffffffu

typedef struct {
    uint32_t r[5];  /* clamped r */
    uint32_t h[5];  /* the accumulator, partially reduced between calls */
    uint32_t s[4];  /* the second key half, added at the end, little-endian words */
} poly1305_portable;

_Static_assert(sizeof(poly1305_portable) <= sizeof(((poly1305_state *)0)->opaque),
              "portable Poly1305 state must fit in poly1305_state");

/* The opaque state is a byte array: copying in and out rather than casting
 * keeps to C's effective-type rules. The copies are wiped after use. */
static void load_state(poly1305_portable *p, const poly1305_state *st)
{
    memcpy(p, st->opaque, sizeof *p);
}

static void save_state(poly1305_state *st, const poly1305_portable *p)
{
    memcpy(st->opaque, p, sizeof *p);
}

/* RFC 8439 2.5.1: r &= 0x0ffffffc0ffffffc0ffffffc0fffffff, here applied while
 * cutting r into 26-bit limbs (each load starts at the byte holding bit 26*i).
 * The clamp leaves r0 < 2^26, r1..r3 < 2^26 and r4 < 2^20, so 5 * r_i < 2^29. */
static void poly1305_init(poly1305_state *st, const uint8_t key[32])
{
    poly1305_portable p;

    p.r[0] = (load32_le(key + 0)) & 0x3ffffffu;
    p.r[1] = (load32_le(key + 3) >> 2) & 0x3ffff03u;
    p.r[2] = (load32_le(key + 6) >> 4) & 0x3ffc0ffu;
    p.r[3] = (load32_le(key + 9) >> 6) & 0x3f03fffu;
    p.r[4] = (load32_le(key + 12) >> 8) & 0x00fffffu;
    for (int i = 0; i < 5; i++)
        p.h[i] = 0;
    for (int i = 0; i < 4; i++)
        p.s[i] = load32_le(key + 16 + 4 * i);

    save_state(st, &p);
    ac_wipe(&p, sizeof p);
}

/* Invariant between blocks: h0, h2, h3, h4 < 2^26 and h1 < 2^26 + 2^6.
 *
 * Adding a block (limbs < 2^26; m4 < 2^24 plus the 2^24 pad bit) leaves h0..h3
 * below 2^27 + 2^6 and h4 below 2^26 + 2^25. Since 2^130 = 5 (mod p), product terms
 * that land at or above 2^130 are folded back multiplied by 5, using s_i = 5 * r_i
 * < 2^28.4. Each product is then below 2^27.01 * 2^28.4 = 2^55.4 and each column
 * sum d_i, five products plus a carry, below 2^57.8: no 64-bit overflow, and every
 * carry d_i >> 26 fits 32 bits.
 *
 * d4 has no folded terms, so d4 < 5 * 2^27.01 * 2^26 < 2^55.4 and its carry c is
 * below 2^29.4: h0 + 5 * c < 2^32 still fits a limb, and its own carry, below 2^6,
 * is what h1 may hold above 2^26. */
static void poly1305_blocks(poly1305_state *st, const uint8_t *in, size_t len, uint32_t padbit)
{
    poly1305_portable p;

    load_state(&p, st);

    const uint32_t r0 = p.r[0], r1 = p.r[1], r2 = p.r[2], r3 = p.r[3], r4 = p.r[4];
    const uint32_t s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5;
    /* The block's 2^(8 * 16) term: bit 128 = 26 * 4 + 24 is bit 24 of limb 4. */
    const uint32_t hibit = padbit << 24;
    uint32_t h0 = p.h[0], h1 = p.h[1], h2 = p.h[2], h3 = p.h[3], h4 = p.h[4];

    while (len >= 16) {
        uint64_t d0, d1, d2, d3, d4;
        uint32_t c;

        /* h += m */
        h0 += (load32_le(in + 0)) & LIMB_MASK;
        h1 += (load32_le(in + 3) >> 2) & LIMB_MASK;
        h2 += (load32_le(in + 6) >> 4) & LIMB_MASK;
        h3 += (load32_le(in + 9) >> 6) & LIMB_MASK;
        h4 += (load32_le(in + 12) >> 8) | hibit;

        /* h *= r, column by column */
        d0 = (uint64_t)h0 * r0 + (uint64_t)h1 * s4 + (uint64_t)h2 * s3 + (uint64_t)h3 * s2 + (uint64_t)h4 * s1;
        d1 = (uint64_t)h0 * r1 + (uint64_t)h1 * r0 + (uint64_t)h2 * s4 + (uint64_t)h3 * s3 + (uint64_t)h4 * s2;
        d2 = (uint64_t)h0 * r2 + (uint64_t)h1 * r1 + (uint64_t)h2 * r0 + (uint64_t)h3 * s4 + (uint64_t)h4 * s3;
        d3 = (uint64_t)h0 * r3 + (uint64_t)h1 * r2 + (uint64_t)h2 * r1 + (uint64_t)h3 * r0 + (uint64_t)h4 * s4;
        d4 = (uint64_t)h0 * r4 + (uint64_t)h1 * r3 + (uint64_t)h2 * r2 + (uint64_t)h3 * r1 + (uint64_t)h4 * r0;

        /* partial reduction mod p back to the invariant */
                    c = (uint32_t)(d0 >> 26); h0 = (uint32_t)d0 & LIMB_MASK;
        d1 += c;    c = (uint32_t)(d1 >> 26); h1 = (uint32_t)d1 & LIMB_MASK;
        d2 += c;    c = (uint32_t)(d2 >> 26); h2 = (uint32_t)d2 & LIMB_MASK;
        d3 += c;    c = (uint32_t)(d3 >> 26); h3 = (uint32_t)d3 & LIMB_MASK;
        d4 += c;    c = (uint32_t)(d4 >> 26); h4 = (uint32_t)d4 & LIMB_MASK;
        h0 += c * 5; c = h0 >> 26;            h0 &= LIMB_MASK;
        h1 += c;

        in += 16;
        len -= 16;
    }

    p.h[0] = h0;
    p.h[1] = h1;
    p.h[2] = h2;
    p.h[3] = h3;
    p.h[4] = h4;
    save_state(st, &p);
    ac_wipe(&p, sizeof p);
}

/* RFC 8439 2.5.1: tag = ((h mod p) + s) mod 2^128.
 *
 * Entering here h0, h2, h3, h4 < 2^26 and h1 < 2^26 + 2^6 (the invariant above).
 * One carry pass h1 -> h2 -> h3 -> h4 -> h0 -> h1 then makes every limb < 2^26:
 * a carry out of h1 leaves h1 < 2^6, so whatever ripples round through h0 back
 * into h1 stops there, and without one nothing ripples at all. So h < 2^130 < 2p
 * and one conditional subtraction of p completes the reduction. Values of h in
 * [p, 2^130) are rare and easy to get wrong; RFC 8439 A.3 #5 (r = 2, m = ff..ff)
 * is one. */
static void poly1305_finish(poly1305_state *st, uint8_t tag[16])
{
    poly1305_portable p;
    uint32_t g[5], c, mask;
    uint64_t f;

    load_state(&p, st);
    uint32_t *h = p.h;

                     c = h[1] >> 26; h[1] &= LIMB_MASK;
    h[2] += c;       c = h[2] >> 26; h[2] &= LIMB_MASK;
    h[3] += c;       c = h[3] >> 26; h[3] &= LIMB_MASK;
    h[4] += c;       c = h[4] >> 26; h[4] &= LIMB_MASK;
    h[0] += c * 5;   c = h[0] >> 26; h[0] &= LIMB_MASK;
    h[1] += c;

    /* g = h + 5 - 2^130 = h - p */
    g[0] = h[0] + 5; c = g[0] >> 26; g[0] &= LIMB_MASK;
    g[1] = h[1] + c; c = g[1] >> 26; g[1] &= LIMB_MASK;
    g[2] = h[2] + c; c = g[2] >> 26; g[2] &= LIMB_MASK;
    g[3] = h[3] + c; c = g[3] >> 26; g[3] &= LIMB_MASK;
    g[4] = h[4] + c - (1u << 26);

    /* g4 wrapped below zero exactly when h < p: keep h then, else take g,
     * without a branch on the secret. */
    mask = (g[4] >> 31) - 1;
    for (int i = 0; i < 5; i++)
        h[i] = (h[i] & ~mask) | (g[i] & mask);

    /* h mod 2^128 as four 32-bit words; the limbs are canonical so OR is exact. */
    uint32_t w0 = h[0] | (h[1] << 26);
    uint32_t w1 = (h[1] >> 6) | (h[2] << 20);
    uint32_t w2 = (h[2] >> 12) | (h[3] << 14);
    uint32_t w3 = (h[3] >> 18) | (h[4] << 8);

    /* + s mod 2^128 */
    f = (uint64_t)w0 + p.s[0];             store32_le(tag + 0, (uint32_t)f);
    f = (uint64_t)w1 + p.s[1] + (f >> 32); store32_le(tag + 4, (uint32_t)f);
    f = (uint64_t)w2 + p.s[2] + (f >> 32); store32_le(tag + 8, (uint32_t)f);
    f = (uint64_t)w3 + p.s[3] + (f >> 32); store32_le(tag + 12, (uint32_t)f);

    ac_wipe(&p, sizeof p);
    ac_wipe(g, sizeof g);
}

static size_t poly1305_used(const poly1305_state *st)
{
    (void)st;
    return sizeof(poly1305_portable);
}

const poly1305_kernel archcrypt_poly1305_portable = {
    .init = poly1305_init,
    .blocks = poly1305_blocks,
    .finish = poly1305_finish,
    .used = poly1305_used,
};
