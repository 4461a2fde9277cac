/* Poly1305 kernel contract (RFC 8439 section 2.5). */
#ifndef ARCHCRYPT_POLY1305_H
#define ARCHCRYPT_POLY1305_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

/* Opaque per-implementation state: room for precomputed powers of r in any radix. */
typedef struct poly1305_state {
    _Alignas(64) uint8_t opaque[512];
} poly1305_state;

typedef struct poly1305_kernel {
    /* Clamp r, keep s; the state is otherwise the kernel's own. */
    void (*init)(poly1305_state *st, const uint8_t key[32]);
    /* Absorb len bytes, len a multiple of 16. padbit is 1 for full message blocks
     * (the 2^128 term) and 0 for a final partial block that the caller padded with
     * 0x01 then zeros. */
    void (*blocks)(poly1305_state *st, const uint8_t *in, size_t len, uint32_t padbit);
    /* Fully reduce h, add s, write the tag. The caller wipes the state afterwards. */
    void (*finish)(poly1305_state *st, uint8_t tag[16]);
    /* How many leading bytes of the state init and blocks have written so far: the
     * caller wipes those. A vector kernel's table of powers exists only once a call was
     * long enough to build it, so a short message wipes 64 bytes, not 512 (a 512-byte
     * memset was a quarter of a 64-byte MAC). poly1305/kat.c checks every row's
     * answer against the bytes it really wrote. */
    size_t (*used)(const poly1305_state *st);
    /* Streaming (archcrypt_poly1305_update): bytes the front gathers before it calls
     * blocks, a multiple of 16 up to AC_POLY1305_GATHER_MAX; 0 for none (whole blocks go
     * to blocks as they come). For a kernel whose calls have a fixed cost that a stream
     * of short writes would pay again and again (poly1305/vx.c: the vector set-up). */
    size_t gather;
} poly1305_kernel;

#define AC_POLY1305_GATHER_MAX 2048

/* One kernel per row of poly1305/rows.h, defined by poly1305/<slug>.c. */
#define AC_ROW_MIN_LEN(slug, requires, min_len) extern const poly1305_kernel archcrypt_poly1305_##slug;
#include "poly1305/rows.h"
#undef AC_ROW_MIN_LEN

/* Buffering front (poly1305.c) over whichever kernel was in effect at init. Also
 * used by the AEAD composition. */
typedef struct ac_poly1305 {
    poly1305_state st;
    const poly1305_kernel *k;
    uint8_t buf[16];
    size_t buf_len;
    int finished;
} ac_poly1305;

void ac_poly1305_init(ac_poly1305 *p, const poly1305_kernel *k, const uint8_t key[32]);
void ac_poly1305_update(ac_poly1305 *p, const uint8_t *in, size_t len);
/* Writes the tag and wipes the state. */
void ac_poly1305_final(ac_poly1305 *p, uint8_t tag[16]);

#endif
