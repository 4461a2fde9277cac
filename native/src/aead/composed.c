/* ChaCha20-Poly1305 composed from the dispatched ChaCha20 and Poly1305 kernels: one pass in 4 KiB chunks, each MACed while in L1 (RFC 8439 2.8). */
#include "common.h"
#include "dispatch.h"
#include "chacha20/chacha20.h"
#include "poly1305/poly1305.h"
#include "aead/aead.h"

/* Small enough to stay in L1 between the cipher and the MAC touching it, large
 * enough that per-call overhead vanishes. A multiple of 64 so that chunks start
 * on keystream block boundaries. */
#define AEAD_CHUNK 4096

_Static_assert(AEAD_CHUNK % 64 == 0, "chunks must cover whole ChaCha20 blocks");

static const uint8_t zeros[16];

/* RFC 8439 2.8: pad the AAD and the ciphertext each to a multiple of 16. */
static void mac_pad16(ac_poly1305 *mac, size_t len)
{
    ac_poly1305_update(mac, zeros, (16 - len % 16) % 16);
}

typedef enum { SEAL, OPEN } direction;

static void chacha20_poly1305(direction dir, uint8_t *out, uint8_t tag[16],
                              const uint8_t *in, size_t len,
                              const uint8_t *aad, size_t aad_len,
                              const uint32_t key[8], const uint32_t nonce[3])
{
    /* Looked up once: every chunk of this message uses the same pair. */
    const chacha20_kernel *cipher = ac_chacha20_kernel();
    const poly1305_kernel *poly = ac_poly1305_kernel();
    uint8_t otk[32] = {0};
    uint8_t lengths[16];
    ac_poly1305 mac;
    uint32_t counter = 1;

    /* RFC 8439 2.6: the one-time Poly1305 key is the first 32 bytes of block 0. */
    cipher->xor_stream(otk, otk, sizeof otk, key, nonce, 0);
    ac_poly1305_init(&mac, poly, otk);
    ac_wipe(otk, sizeof otk);

    ac_poly1305_update(&mac, aad, aad_len);
    mac_pad16(&mac, aad_len);

    /* The MAC always covers the ciphertext: after encrypting on seal, before
     * decrypting on open (which also makes out == in safe). */
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

static void composed_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                          const uint8_t *aad, size_t aad_len,
                          const uint32_t key[8], const uint32_t nonce[3])
{
    chacha20_poly1305(SEAL, out, tag, in, len, aad, aad_len, key, nonce);
}

static void composed_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                          const uint8_t *aad, size_t aad_len,
                          const uint32_t key[8], const uint32_t nonce[3])
{
    chacha20_poly1305(OPEN, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_composed = {
    .seal = composed_seal,
    .open = composed_open,
};
