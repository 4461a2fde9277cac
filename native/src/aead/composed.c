/* ChaCha20-Poly1305 composed from ChaCha20 and Poly1305 kernels: one pass in L1-sized chunks, each MACed while in L1; short messages with the one-time key's block in the same ChaCha20 call (RFC 8439 2.6, 2.8). */
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
_Static_assert(AEAD_ONEPASS_MAX % 16 == 0 && (64 + AEAD_ONEPASS_MAX) % 64 == 0,
               "the one-pass buffer is whole blocks");

static const uint8_t zeros[16];

/* RFC 8439 2.8: pad the AAD and the ciphertext each to a multiple of 16. */
static void mac_pad16(ac_poly1305 *mac, size_t len)
{
    ac_poly1305_update(mac, zeros, (16 - len % 16) % 16);
}

/* The MAC's end, once the ciphertext is in: its padding, the two lengths, the tag. */
static inline void mac_finish(ac_poly1305 *mac, uint8_t tag[16], size_t aad_len, size_t len)
{
    uint8_t lengths[16];

    mac_pad16(mac, len);
    store64_le(lengths, (uint64_t)aad_len);
    store64_le(lengths + 8, (uint64_t)len);
    ac_poly1305_update(mac, lengths, sizeof lengths);
    ac_poly1305_final(mac, tag);
}

/* The whole MAC once the one-time key is known; inline in the one-pass path, where a
 * call of its own cost the 64-byte seal 2% (bench-ab). */
static inline void mac_message(const poly1305_kernel *poly, const uint8_t otk[32],
                               uint8_t tag[16], const uint8_t *aad, size_t aad_len,
                               const uint8_t *ct, size_t len)
{
    ac_poly1305 mac;

    ac_poly1305_init(&mac, poly, otk);
    ac_poly1305_update(&mac, aad, aad_len);
    mac_pad16(&mac, aad_len);
    ac_poly1305_update(&mac, ct, len);
    mac_finish(&mac, tag, aad_len, len);
}

void ac_aead_mac(const poly1305_kernel *poly, const uint8_t otk[32], uint8_t tag[16],
                 const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t len)
{
    mac_message(poly, otk, tag, aad, aad_len, ct, len);
}

void ac_aead_onepass(int open, const chacha20_kernel *cipher, const poly1305_kernel *poly,
                     uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                     const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                     const uint32_t nonce[3])
{
    /* 64 zero bytes, then the message: one xor_stream from counter 0 turns the zeros
     * into block 0, whose first 32 bytes are the one-time key (RFC 8439 2.6), and the
     * message into its output. The SIMD kernels compute 2, 4 or 8 blocks a pass, so the
     * key's block comes free where a call of its own costs a whole pass. */
    _Alignas(64) uint8_t buf[64 + AEAD_ONEPASS_MAX];

    memset(buf, 0, 64);
    if (len > 0)
        memcpy(buf + 64, in, len);
    cipher->xor_stream(buf, buf, 64 + len, key, nonce, 0);
    /* Open MACs the ciphertext in `in`, untouched until the copy out (out == in works). */
    mac_message(poly, buf, tag, aad, aad_len, open ? in : buf + 64, len);
    if (len > 0)
        memcpy(out, buf + 64, len);
    /* Block 0 is key material; after open, the rest is plaintext. */
    ac_wipe(buf, 64 + len);
}

void ac_aead_compose(int open, const chacha20_kernel *cipher, const poly1305_kernel *poly,
                     size_t chunk, uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                     const uint8_t *aad, size_t aad_len, const uint32_t key[8],
                     const uint32_t nonce[3])
{
    uint8_t otk[32] = {0};
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
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;

        if (!open) {
            cipher->xor_stream(out + off, in + off, n, key, nonce, counter);
            ac_poly1305_update(&mac, out + off, n);
        } else {
            ac_poly1305_update(&mac, in + off, n);
            cipher->xor_stream(out + off, in + off, n, key, nonce, counter);
        }
        counter += (uint32_t)(chunk / 64);
    }
    mac_finish(&mac, tag, aad_len, len);
}

/* The ChaCha20 and Poly1305 rows in effect, looked up once: every chunk of a message
 * uses the same pair. */
static void chacha20_poly1305(int open, uint8_t *out, uint8_t tag[16], const uint8_t *in,
                              size_t len, const uint8_t *aad, size_t aad_len,
                              const uint32_t key[8], const uint32_t nonce[3])
{
    const poly1305_kernel *poly = ac_poly1305_kernel();

    if (len <= AEAD_ONEPASS_MAX)
        ac_aead_onepass(open, ac_chacha20_kernel(64 + len), poly, out, tag, in, len, aad,
                        aad_len, key, nonce);
    else
        ac_aead_compose(open, ac_chacha20_kernel(len), poly, AEAD_CHUNK, out, tag, in, len,
                        aad, aad_len, key, nonce);
}

static void composed_seal(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                          const uint8_t *aad, size_t aad_len,
                          const uint32_t key[8], const uint32_t nonce[3])
{
    chacha20_poly1305(0, out, tag, in, len, aad, aad_len, key, nonce);
}

static void composed_open(uint8_t *out, uint8_t tag[16], const uint8_t *in, size_t len,
                          const uint8_t *aad, size_t aad_len,
                          const uint32_t key[8], const uint32_t nonce[3])
{
    chacha20_poly1305(1, out, tag, in, len, aad, aad_len, key, nonce);
}

const aead_kernel archcrypt_chacha20_poly1305_composed = {
    .seal = composed_seal,
    .open = composed_open,
};
