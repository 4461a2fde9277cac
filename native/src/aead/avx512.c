/* ChaCha20-Poly1305 for AVX-512 with IFMA: the avx512 ChaCha20 and avx512ifma Poly1305 kernels composed over 8 KiB chunks, each MACed while in L1; up to 448 bytes in one ChaCha20 pass with the one-time key (aead/onepass.h) (RFC 8439 2.8). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__)
#error "aead/avx512.c needs -mavx512f -mavx512vl -mavx512bw -mavx512dq (ISA_FLAGS_avx512 in native/Makefile)"
#endif

#include "common.h"
#include "chacha20/chacha20.h"
#include "poly1305/poly1305.h"
#include "aead/aead.h"
#include "aead/onepass.h"

/* Composed, not stitched. On the AVX2 row, stitching pays because its Poly1305 is
 * scalar: the integer units hash while the vector units run ChaCha20. Here both
 * halves are vector code on the same four pipes, and ChaCha20's two-group step
 * already keeps them full, so interleaving them would save no issue slots; what
 * composing costs is only each chunk's Poly1305 call overhead (its vector set-up
 * and final lane sum, ~60 operations against ~1300 per KiB of the two kernels'
 * work: under 1% at 8 KiB). Instruction counts per KiB: ChaCha20 ~1100 (960 for the
 * rounds), Poly1305 ~220 (144 IFMA), i.e. ~0.32 c/B at four vector operations a
 * cycle if nothing stalls (an estimate, not a measurement). 8 KiB: the chunk's
 * ciphertext is still in a 32 KiB L1 when Poly1305 reads it, and a multiple of the
 * ChaCha20 kernel's 2 KiB step. */
#define AEAD_CHUNK 8192

_Static_assert(AEAD_CHUNK % 2048 == 0, "chunks must cover whole two-group ChaCha20 steps");

static const uint8_t zeros[16];

static void mac_pad16(ac_poly1305 *mac, size_t len)
{
    ac_poly1305_update(mac, zeros, (16 - len % 16) % 16);
}

typedef enum { SEAL, OPEN } direction;

static void composed512(direction dir, uint8_t *out, uint8_t tag[16], const uint8_t *in,
                        size_t len, const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                        const uint32_t nonce[3])
{
    const chacha20_kernel *cipher = &archcrypt_chacha20_avx512;
    uint8_t otk[32] = {0}, lengths[16];
    ac_poly1305 mac;
    uint32_t counter = 1;

    cipher->xor_stream(otk, otk, sizeof otk, key, nonce, 0);
    ac_poly1305_init(&mac, &archcrypt_poly1305_avx512ifma, otk);
    ac_wipe(otk, sizeof otk);

    ac_poly1305_update(&mac, aad, aad_len);
    mac_pad16(&mac, aad_len);
    /* The MAC covers the ciphertext: after encrypting on seal, before decrypting on
     * open (which also makes out == in safe). */
    for (size_t off = 0; off < len; off += AEAD_CHUNK) {
        size_t n = len - off < AEAD_CHUNK ? len - off : AEAD_CHUNK;

        if (dir == SEAL) {
            cipher->xor_stream(out + off, in + off, n, key, nonce, counter);
            ac_poly1305_update(&mac, out + off, n);
        } else {
            ac_poly1305_update(&mac, in + off, n);
            cipher->xor_stream(out + off, in + off, n, key, nonce, counter);
        }
        counter += AEAD_CHUNK / 64;
    }
    mac_pad16(&mac, len);
    store64_le(lengths, (uint64_t)aad_len);
    store64_le(lengths + 8, (uint64_t)len);
    ac_poly1305_update(&mac, lengths, sizeof lengths);
    ac_poly1305_final(&mac, tag);
}

static void avx512_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                        const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                        const uint32_t nonce[3])
{
    if (len <= AEAD_ONEPASS_MAX)
        aead_onepass(0, &archcrypt_chacha20_avx512, out, tag, in, len, aad, aad_len, key, nonce);
    else
        composed512(SEAL, out, tag, in, len, aad, aad_len, key, nonce);
}

static void avx512_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                        const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                        const uint32_t nonce[3])
{
    if (len <= AEAD_ONEPASS_MAX)
        aead_onepass(1, &archcrypt_chacha20_avx512, out, tag, in, len, aad, aad_len, key, nonce);
    else
        composed512(OPEN, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_avx512 = {
    .seal = avx512_seal,
    .open = avx512_open,
};
