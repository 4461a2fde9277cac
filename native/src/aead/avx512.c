/* ChaCha20-Poly1305 for AVX-512 with IFMA: the avx512 ChaCha20 and avx512ifma Poly1305 kernels composed over 8 KiB chunks, each MACed while in L1; up to 448 bytes in one ChaCha20 pass with the one-time key's block (RFC 8439 2.8). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__)
#error "aead/avx512.c needs -mavx512f -mavx512vl -mavx512bw -mavx512dq (ISA_FLAGS_avx512 in native/Makefile)"
#endif

#include "common.h"
#include "chacha20/chacha20.h"
#include "poly1305/poly1305.h"
#include "aead/aead.h"

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

/* Both directions: the one-pass path for short messages, else the two kernels composed. */
static void aead512(int open, uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                    const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                    const uint32_t nonce[3])
{
    if (len <= AEAD_ONEPASS_MAX)
        ac_aead_onepass(open, &archcrypt_chacha20_avx512, &archcrypt_poly1305_avx512ifma, out,
                        tag, in, len, aad, aad_len, key, nonce);
    else
        ac_aead_compose(open, &archcrypt_chacha20_avx512, &archcrypt_poly1305_avx512ifma,
                        AEAD_CHUNK, out, tag, in, len, aad, aad_len, key, nonce);
}

static void avx512_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                        const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                        const uint32_t nonce[3])
{
    aead512(0, out, tag, in, len, aad, aad_len, key, nonce);
}

static void avx512_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                        const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                        const uint32_t nonce[3])
{
    aead512(1, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_avx512 = {
    .seal = avx512_seal,
    .open = avx512_open,
};
