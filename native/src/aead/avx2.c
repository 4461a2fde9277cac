/* ChaCha20-Poly1305, AVX2 + BMI2: 8-block AVX2 ChaCha20 stitched with scalar radix-2^64 Poly1305 per 512-byte step (the integer units hash one step of ciphertext while the vector units run the next step's rounds); its row's min_len (aead/rows.h) leaves short messages to the composed row (RFC 8439 2.8). */
#ifndef __AVX2__
#error "aead/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif
#ifndef __BMI2__
#error "aead/avx2.c needs -mbmi2 (ISA_FLAGS_avx2 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "chacha20/chacha20.h"
#include "chacha20/avx2_core.h"
#include "poly1305/mulx_core.h"
#include "aead/aead.h"

typedef p64_regs mac_regs;

/* One full 16-byte block (padbit 1). */
AC_INLINE void mac_block(mac_regs *m, const uint8_t *p)
{
    p64_mulx_block(m, p, 1);
}

/* Every 8-block step of ChaCha20 (512 bytes) absorbs 32 MAC blocks that are
 * already ciphertext: three per double round (between its quarter-round pairs,
 * while the vector units are busy), the last two after the rounds. The step is straight-line code with no conditions: with the
 * blocks clipped to a count, gcc turned them into inner loops and spilled the
 * ChaCha20 state around them. len bytes at in are XORed (steps of 512, the last
 * may be shorter) with blocks ctr, ctr+1, ..., while step k hashes the 512 bytes
 * at mac + 512 k, loaded before that step's stores (so mac == in == out is
 * safe: open hashes a step's ciphertext, then decrypts it in place). */
static __attribute__((noinline)) void stitch_steps(uint8_t *out, const uint8_t *in, size_t len,
                                                   const uint32_t key[8], const uint32_t nonce[3],
                                                   uint32_t counter, mac_regs *mac_state,
                                                   const uint8_t *mac)
{
    __m256i st[16], slot;
    /* A local copy (see p64_regs). */
    mac_regs ml = *mac_state, *m = &ml;

    chacha8_setup(st, key, nonce, counter);
    while (len > 0) {
        CHACHA8_STATE(st, &slot);
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++)
            CHACHA8_DOUBLE_ROUND(&slot, mac_block(m, mac + 48 * i),
                                 mac_block(m, mac + 48 * i + 16), mac_block(m, mac + 48 * i + 32));
        mac_block(m, mac + 480);
        mac_block(m, mac + 496);
        CHACHA8_XOR_OUT(st, &slot, out, in, len);
        if (len <= 512)
            break;
        st[12] = _mm256_add_epi32(st[12], _mm256_set1_epi32(8));
        out += 512;
        in += 512;
        mac += 512;
        len -= 512;
    }
    *mac_state = ml;
    chacha8_wipe(st, &slot);
}

/* Absorb len bytes as RFC 8439 2.8 pads them: whole blocks, then the rest
 * zero-padded to 16 as one more full block. */
static void mac_padded(mac_regs *m, const uint8_t *p, size_t len)
{
    while (len >= 16) {
        mac_block(m, p);
        p += 16;
        len -= 16;
    }
    if (len > 0) {
        uint64_t blk[2] = {0, 0};
        memcpy(blk, p, len);
        mac_block(m, (const uint8_t *)blk);
        ac_wipe_words(blk, sizeof blk);
    }
}

typedef enum { SEAL, OPEN } direction;

static void stitched(direction dir, uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                     const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                     const uint32_t nonce[3])
{
    const chacha20_kernel *cc = &archcrypt_chacha20_avx2;
    uint64_t otk[4] = {0, 0, 0, 0}, lengths[2];
    mac_regs m;

    /* RFC 8439 2.6: the one-time key is the first 32 bytes of block 0. */
    cc->xor_stream((uint8_t *)otk, (const uint8_t *)otk, sizeof otk, key, nonce, 0);
    m.h0 = m.h1 = m.h2 = 0;
    m.r0 = load64_le((const uint8_t *)&otk[0]) & 0x0ffffffc0fffffffu;
    m.r1 = load64_le((const uint8_t *)&otk[1]) & 0x0ffffffc0ffffffcu;
    m.s1 = m.r1 + (m.r1 >> 2);

    mac_padded(&m, aad, aad_len);

    if (dir == SEAL) {
        /* Step k hashes the ciphertext of step k - 1 (still in L1); the first
         * step has nothing to hash, the last step's ciphertext is hashed after. */
        size_t first = len < 512 ? len : 512;

        cc->xor_stream(out, in, first, key, nonce, 1);
        if (len > 512)
            stitch_steps(out + 512, in + 512, len - 512, key, nonce, 9, &m, out);
        /* Hashed so far: 512 bytes per stitched step. */
        size_t hashed = len > 512 ? (len - 512 + 511) / 512 * 512 : 0;
        mac_padded(&m, out + hashed, len - hashed);
    } else {
        /* Hash each whole step's ciphertext while decrypting it; the tail is
         * hashed first, as decrypting in place overwrites it. */
        size_t bulk = len - len % 512;

        if (bulk > 0)
            stitch_steps(out, in, bulk, key, nonce, 1, &m, in);
        if (len > bulk) {
            mac_padded(&m, in + bulk, len - bulk);
            cc->xor_stream(out + bulk, in + bulk, len - bulk, key, nonce,
                           (uint32_t)(1 + bulk / 64));
        }
    }

    lengths[0] = (uint64_t)aad_len;
    lengths[1] = (uint64_t)len;
    mac_block(&m, (const uint8_t *)lengths);

    {
        uint64_t h[3] = {m.h0, m.h1, m.h2}, t0, t1;

        p64_reduce_full(h);
        p64_adc(p64_adc(0, h[0], load64_le((const uint8_t *)&otk[2]), &t0), h[1],
                load64_le((const uint8_t *)&otk[3]), &t1);
        store64_le(tag, t0);
        store64_le(tag + 8, t1);
        ac_wipe_words(h, sizeof h);
    }
    ac_wipe_words(otk, sizeof otk);
    ac_wipe_words(&m, sizeof m);
}

/* Correct at any length (the front sends this row only messages of at least its min_len;
 * the self-test reaches the first-step, tail and stitched paths above that). */
static void avx2_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                      const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                      const uint32_t nonce[3])
{
    stitched(SEAL, out, tag, in, len, aad, aad_len, key, nonce);
}

static void avx2_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                      const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                      const uint32_t nonce[3])
{
    stitched(OPEN, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_avx2 = {
    .seal = avx2_seal,
    .open = avx2_open,
};
