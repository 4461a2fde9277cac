/* The ECB loop of the 16-block byte-sliced Camellia kernels (camellia/power8.c, camellia/vx.c): whole batches in place, a short tail as one zero-padded batch through a stack buffer, so that it stays constant time. */
#ifndef ARCHCRYPT_CAMELLIA_BATCH16_H
#define ARCHCRYPT_CAMELLIA_BATCH16_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* One batch of 16 blocks from in to out (out == in allowed), with the kernel's schedule. */
typedef void ac_camellia_batch16_fn(const void *schedule, uint8_t *out, const uint8_t *in);

/* Always inlined with a constant batch: the batch is inlined too, and the loop saves
 * registers once. A tail batch costs less than one block through portable.c (power8:
 * ~1700 instructions against ~1950), and touches no table by secret index. */
static inline __attribute__((always_inline)) void
ac_camellia_batches16(ac_camellia_batch16_fn *batch, const void *schedule, uint8_t *out,
                      const uint8_t *in, size_t nblocks)
{
    uint8_t buf[256];

    while (nblocks) {
        const size_t n = nblocks < 16 ? nblocks : 16;
        const uint8_t *src = in;
        uint8_t *dst = out;

        if (n < 16) {
            memset(buf, 0, sizeof buf);
            memcpy(buf, in, 16 * n);
            src = dst = buf;
        }
        batch(schedule, dst, src);
        if (n < 16) {
            memcpy(out, buf, 16 * n);
            ac_wipe(buf, sizeof buf);
        }
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
}

#endif
