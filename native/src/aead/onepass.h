/* ChaCha20-Poly1305 for short messages in one ChaCha20 call: the one-time key's block 0 and the message's blocks 1..n come out of the same multi-block pass, and Poly1305 runs in radix 2^64 on registers (RFC 8439 2.6, 2.8). */
#ifndef ARCHCRYPT_AEAD_ONEPASS_H
#define ARCHCRYPT_AEAD_ONEPASS_H

#include "common.h"
#include "chacha20/chacha20.h"
#include "poly1305/scalar64.h"

/* Message bytes that fit with block 0 in one 512-byte pass: every SIMD ChaCha20 kernel
 * here computes 2, 4 or 8 blocks at once, so the one-time key comes free, where a
 * separate call for it costs a whole pass (about a third of a 64-byte seal, measured
 * on the AVX2 row). Past this, the copy through the stack would cost more than the
 * pass saved. */
#define AEAD_ONEPASS_MAX 448

/* Absorb len bytes as RFC 8439 2.8 pads them: whole blocks, then the rest zero-padded
 * to 16 as one more full block. */
static inline void onepass_mac(uint64_t h[3], uint64_t r0, uint64_t r1, const uint8_t *p,
                               size_t len)
{
    size_t whole = len / 16;

    if (whole > 0)
        p64_blocks(h, r0, r1, p, whole, 1);
    if (len % 16 != 0) {
        uint64_t blk[2] = {0, 0};

        memcpy(blk, p + 16 * whole, len % 16);
        p64_blocks(h, r0, r1, (const uint8_t *)blk, 1, 1);
        p64_wipe(blk, sizeof blk);
    }
}

/* Seal (open == 0) or open len <= AEAD_ONEPASS_MAX bytes with the ChaCha20 kernel cc;
 * the aead_kernel contract otherwise (out == in allowed). The buffer holds 64 zero
 * bytes, then the message: one xor_stream from counter 0 turns the zeros into block 0
 * and the message into its output. Open MACs the ciphertext from `in`, which stays
 * untouched until the result is copied out. */
static inline void aead_onepass(int open, const chacha20_kernel *cc, uint8_t *out,
                                uint8_t tag[16], const uint8_t *in, size_t len,
                                const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                                const uint32_t nonce[3])
{
    uint64_t buf[(64 + AEAD_ONEPASS_MAX) / 8];
    uint64_t h[3] = {0, 0, 0}, r0, r1, t0, t1;
    uint8_t lengths[16];
    uint8_t *b = (uint8_t *)buf;

    for (int i = 0; i < 8; i++)
        buf[i] = 0;
    if (len > 0)
        memcpy(b + 64, in, len);
    cc->xor_stream(b, b, 64 + len, key, nonce, 0);
    r0 = load64_le(b) & 0x0ffffffc0fffffffu;
    r1 = load64_le(b + 8) & 0x0ffffffc0ffffffcu;

    onepass_mac(h, r0, r1, aad, aad_len);
    onepass_mac(h, r0, r1, open ? in : b + 64, len);
    store64_le(lengths, (uint64_t)aad_len);
    store64_le(lengths + 8, (uint64_t)len);
    p64_blocks(h, r0, r1, lengths, 1, 1);
    p64_reduce_full(h);
    p64_adc(p64_adc(0, h[0], load64_le(b + 16), &t0), h[1], load64_le(b + 24), &t1);
    store64_le(tag, t0);
    store64_le(tag + 8, t1);

    if (len > 0)
        memcpy(out, b + 64, len);
    /* Block 0 is key material; after open the rest is plaintext. */
    p64_wipe(buf, 64 + (len + 7) / 8 * 8);
    p64_wipe(h, sizeof h);
}

#endif
