/* ChaCha20 and HChaCha20, portable: one 64-byte block at a time on 32-bit words (RFC 8439 2.1-2.4; draft-irtf-cfrg-xchacha 2.2). */
#include "common.h"
#include "chacha20/chacha20.h"

/* "expand 32-byte k" read as four little-endian words (RFC 8439 2.3). */
#define CHACHA_C0 0x61707865u
#define CHACHA_C1 0x3320646eu
#define CHACHA_C2 0x79622d32u
#define CHACHA_C3 0x6b206574u

/* RFC 8439 2.1 and 2.2: the quarter round on four words of the state. */
static inline void quarter_round(uint32_t x[16], int a, int b, int c, int d)
{
    AC_CHACHA20_QR(x[a], x[b], x[c], x[d]);
}

/* The 20 rounds of RFC 8439 2.3 as 10 "double rounds": a column round then a
 * diagonal round. Shared by the block function and HChaCha20. */
static void inner_block_x10(uint32_t x[16])
{
    for (int i = 0; i < 10; i++) {
        quarter_round(x, 0, 4, 8, 12);
        quarter_round(x, 1, 5, 9, 13);
        quarter_round(x, 2, 6, 10, 14);
        quarter_round(x, 3, 7, 11, 15);
        quarter_round(x, 0, 5, 10, 15);
        quarter_round(x, 1, 6, 11, 12);
        quarter_round(x, 2, 7, 8, 13);
        quarter_round(x, 3, 4, 9, 14);
    }
}

/* State layout of RFC 8439 2.3: cccccccc kkkkkkkk kkkkkkkk bnnn.
 * HChaCha20 puts a 128-bit nonce in words 12..15 instead of counter || nonce. */
static void setup_state(uint32_t state[16], const uint32_t key[8])
{
    state[0] = CHACHA_C0;
    state[1] = CHACHA_C1;
    state[2] = CHACHA_C2;
    state[3] = CHACHA_C3;
    for (int i = 0; i < 8; i++)
        state[4 + i] = key[i];
}

/* RFC 8439 2.3: the ChaCha20 block function, serialized little-endian. */
static void chacha20_block(const uint32_t state[16], uint8_t keystream[64])
{
    uint32_t working_state[16];

    memcpy(working_state, state, sizeof working_state);
    inner_block_x10(working_state);
    for (int i = 0; i < 16; i++)
        store32_le(keystream + 4 * i, working_state[i] + state[i]);
    ac_wipe(working_state, sizeof working_state);
}

/* RFC 8439 2.4: XOR with successive blocks; a short last block uses only the
 * keystream bytes it needs. Reading in[i] before writing out[i] makes out == in safe. */
static void chacha20_xor_stream(uint8_t *out, const uint8_t *in, size_t len,
                                const uint32_t key[8], const uint32_t nonce[3], uint32_t counter)
{
    uint32_t state[16];
    uint8_t keystream[64];

    setup_state(state, key);
    state[12] = counter;
    state[13] = nonce[0];
    state[14] = nonce[1];
    state[15] = nonce[2];

    while (len > 0) {
        size_t n = len < 64 ? len : 64;

        chacha20_block(state, keystream);
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)(in[i] ^ keystream[i]);
        /* The caller guarantees the counter does not wrap while a block remains;
         * the increment after the last block may wrap and is never used. */
        state[12]++;
        out += n;
        in += n;
        len -= n;
    }
    ac_wipe(state, sizeof state);
    ac_wipe(keystream, sizeof keystream);
}

const chacha20_kernel archcrypt_chacha20_portable = {
    .xor_stream = chacha20_xor_stream,
};

/* draft-irtf-cfrg-xchacha 2.2: the ChaCha20 rounds without the final addition of
 * the input state. The subkey is words 0..3 and 12..15, where the input is public
 * (constants, nonce): they are ChaCha20's block output minus known values, and no
 * word that the key was added to is ever revealed. */
void ac_hchacha20(uint32_t out[8], const uint32_t key[8], const uint32_t nonce[4])
{
    uint32_t state[16];

    setup_state(state, key);
    for (int i = 0; i < 4; i++)
        state[12 + i] = nonce[i];
    inner_block_x10(state);
    for (int i = 0; i < 4; i++) {
        out[i] = state[i];
        out[4 + i] = state[12 + i];
    }
    ac_wipe(state, sizeof state);
}
