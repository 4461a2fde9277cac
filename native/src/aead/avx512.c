/* ChaCha20-Poly1305 for AVX-512 with IFMA: the avx512 ChaCha20 and avx512ifma Poly1305 kernels composed over 8 KiB chunks, each MACed while in L1; up to 448 bytes in one ChaCha20 pass with the one-time key's block, 513..2047 bytes with that block inside the first 16-block group's rounds (RFC 8439 2.8). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__)
#error "aead/avx512.c needs -mavx512f -mavx512vl -mavx512bw -mavx512dq (ISA_FLAGS_avx512 in native/Makefile)"
#endif

#include "common.h"
#include "chacha20/chacha20.h"
#include "poly1305/poly1305.h"
#include "aead/aead.h"

/* Composed, not stitched. On the AVX2 row, stitching pays because its Poly1305 is
 * scalar: the integer units hash while the vector units run ChaCha20. Here both
 * halves are vector code on the same pipes, and ChaCha20's two-group step already keeps
 * them full, so interleaving them would save no issue slots. 8 KiB: the chunk's
 * ciphertext is still in L1 when Poly1305 reads it, and a multiple of the ChaCha20
 * kernel's 2 KiB step.
 * Where the rest goes, measured natively on the Intel AVX-512 host (Xeon under KVM,
 * kernels called directly, interleaved medians, 64 KiB): ChaCha20 alone 0.527 c/B,
 * Poly1305 alone 0.144, but the seal 0.78, ~16% over the sum; all ChaCha20 then all
 * Poly1305 (no chunks) 0.77, Poly1305 over L1-resident data 0.154-0.161: neither the
 * chunking nor the cache. It is the clock: after any 512-bit "heavy" instruction (IFMA,
 * vpmuludq, vpmulld, FMA on zmm) the next ChaCha20 runs 12-14% slower for some tens of
 * microseconds (64 KiB of ChaCha20 right after a 512-byte IFMA MAC: +12%; +14% at 16 KiB,
 * +8% at 256 KiB), and scalar code too (a dependent add chain +20%); ymm IFMA and AVX2
 * multiplies do not do it. libgcrypt 1.12's AEAD (zmm IFMA too) pays the same (0.86-0.87
 * against 0.58 + 0.21). A 256-bit IFMA Poly1305 (a prototype, not in the tree: 0.216 c/B
 * alone) made the 64 KiB seal only 0.976-0.982x (16 KiB 0.975x) and the 1 KiB seal 1.06x;
 * the scalar Poly1305 that a stitched step would hide under ChaCha20 runs 1.14 c/B here,
 * twice ChaCha20's time, so stitching cannot pay on this host. */
#define AEAD_CHUNK 8192

_Static_assert(AEAD_CHUNK % 2048 == 0, "chunks must cover whole two-group ChaCha20 steps");

/* 513..2047 bytes: the first 16-block group computes the one-time key's block in its own
 * rounds (ac_chacha20_avx512_group_otk) instead of a ChaCha20 call of its own for it, a
 * latency-bound pass of one block (~60 ns here) that the group's throughput-bound rounds
 * absorb. Measured natively on the Intel AVX-512 host (Xeon under KVM, interleaved
 * against the parent tree, 61 rounds): seal 528..1024 bytes 0.90-0.91x, 1040..1536
 * 0.92-0.94x, 2000 0.96x; at 1 KiB 0.93x libgcrypt 1.12 (was 1.02x); open 1 KiB 0.89x.
 * Up to 512 bytes the old path stays (two row passes beat a 16-lane group there: 464 and
 * 512 bytes were 4% slower through the group), and from 2048 on the pair step does. */
#define AEAD_OTK_GROUP_MIN 513
#define AEAD_OTK_GROUP_MAX 2047

/* Both directions: the one-pass path for short messages, the one-time key inside the
 * first group up to 2047 bytes, else the two kernels composed. */
static void aead512(int open, uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                    const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                    const uint32_t nonce[3])
{
    if (len <= AEAD_ONEPASS_MAX) {
        ac_aead_onepass(open, &archcrypt_chacha20_avx512, &archcrypt_poly1305_avx512ifma, out,
                        tag, in, len, aad, aad_len, key, nonce);
    } else if (len >= AEAD_OTK_GROUP_MIN && len <= AEAD_OTK_GROUP_MAX && (!open || out != in)) {
        /* The first 16-block group with the one-time key's block in its rounds, the rest
         * (up to 1023 bytes) from block 17. An open MACs the ciphertext after the group
         * has decrypted it, so only out of place (the contract: out == in or no overlap). */
        uint8_t otk[32];
        size_t first = len < 1024 ? len : 1024;

        ac_chacha20_avx512_group_otk(otk, out, in, first, key, nonce);
        if (len > first)
            archcrypt_chacha20_avx512.xor_stream(out + first, in + first, len - first, key, nonce,
                                                 (uint32_t)(1 + first / 64));
        ac_aead_mac(&archcrypt_poly1305_avx512ifma, otk, tag, aad, aad_len, open ? in : out, len);
        ac_wipe(otk, sizeof otk);
    } else {
        ac_aead_compose(open, &archcrypt_chacha20_avx512, &archcrypt_poly1305_avx512ifma,
                        AEAD_CHUNK, out, tag, in, len, aad, aad_len, key, nonce);
    }
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
