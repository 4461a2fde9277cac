/* The IETF ChaCha20 length limit (RFC 8439 2.4): a 32-bit block counter that must not wrap. */
#ifndef ARCHCRYPT_CHACHA20_LIMITS_H
#define ARCHCRYPT_CHACHA20_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* 1 when blocks counter .. counter + ceil(len / 64) - 1 all fit in 32 bits, i.e.
 * no keystream block would repeat. Counted in 64 bits so that neither a 64-bit
 * size_t nor counter + blocks can overflow. */
static inline int ac_chacha20_len_ok(size_t len, uint32_t counter)
{
    uint64_t blocks = (uint64_t)(len / 64) + (len % 64 != 0);

    return blocks <= ((uint64_t)1 << 32) - counter;
}

#endif
