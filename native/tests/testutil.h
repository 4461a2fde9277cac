/* What the C test programs share (selftest, fuzz/, ct/, emu/selfcheck): a reproducible
 * PRNG (splitmix64, the same stream on every architecture), allocation that cannot fail
 * silently, and selecting a dispatch row for the calling thread. Header-only. */
#ifndef ARCHCRYPT_TESTUTIL_H
#define ARCHCRYPT_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "archcrypt.h"

static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* n bytes of the stream, eight per step. */
static inline void splitmix64_fill(uint64_t *state, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = splitmix64(state);
        for (size_t j = 0; j < 8 && i + j < n; j++)
            p[i + j] = (uint8_t)(r >> (8 * j));
    }
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* Put one row of a table in effect on this thread (NULL: back to the process choice);
 * a row that cannot be selected ends the program with status 2, since testing another
 * row instead would pass for the wrong reason. */
static inline void use_row(const char *alg, const char *impl)
{
    int rc = archcrypt_use_on_this_thread(alg, impl);
    if (rc != ARCHCRYPT_OK) {
        fprintf(stderr, "cannot select %s/%s: %s\n", alg, impl ? impl : "(auto)",
                archcrypt_last_error());
        exit(2);
    }
}

/* The reference every row is compared with: portable rows, and for the AEAD (which has no
 * portable row) the composition of the portable ChaCha20 and Poly1305. */
static inline void use_reference(void)
{
    use_row("chacha20", "portable");
    use_row("poly1305", "portable");
    use_row("chacha20-poly1305", "composed");
    use_row("sha256", "portable");
    use_row("sha512", "portable");
    use_row("camellia", "portable");
}

#endif
