/* Camellia portable kernel (RFC 3713 sections 2.3-2.4): one block at a time, S-boxes as a table.
 *
 * This is the specification the SIMD kernels are tested against, written with the
 * RFC's names: F, FL, FLINV, SBOX1..SBOX4, k1..k24, ke1..ke6, kw1..kw4, D1/D2.
 *
 * NOT CONSTANT TIME. The S-boxes are a 256-byte table (RFC 3713 defines them as
 * lookup tables) indexed by key-dependent data, so cache timing can leak the key to a
 * co-located attacker. The SIMD kernels compute the S-boxes without secret-indexed
 * memory access (camellia.h) and are preferred wherever the CPU has them; this path is
 * the fallback and the reference. The key schedule does not use the indexed lookup: it
 * goes through ac_camellia_f_ct below, which reads the whole table every time.
 *
 * Subkeys are 64-bit values (camellia.h); blocks are read and written big-endian, the
 * RFC's byte order, so the code is the same on s390x and on little-endian hosts. */

#include "camellia.h"
#include "common.h"

/* RFC 3713 section 2.4: the table of SBOX1; SBOX2..SBOX4 are rotations of it. */
static const uint8_t sbox1_table[256] = {
    112, 130,  44, 236, 179,  39, 192, 229, 228, 133,  87,  53, 234,  12, 174,  65,
     35, 239, 107, 147,  69,  25, 165,  33, 237,  14,  79,  78,  29, 101, 146, 189,
    134, 184, 175, 143, 124, 235,  31, 206,  62,  48, 220,  95,  94, 197,  11,  26,
    166, 225,  57, 202, 213,  71,  93,  61, 217,   1,  90, 214,  81,  86, 108,  77,
    139,  13, 154, 102, 251, 204, 176,  45, 116,  18,  43,  32, 240, 177, 132, 153,
    223,  76, 203, 194,  52, 126, 118,   5, 109, 183, 169,  49, 209,  23,   4, 215,
     20,  88,  58,  97, 222,  27,  17,  28,  50,  15, 156,  22,  83,  24, 242,  34,
    254,  68, 207, 178, 195, 181, 122, 145,  36,   8, 232, 168,  96, 252, 105,  80,
    170, 208, 160, 125, 161, 137,  98, 151,  84,  91,  30, 149, 224, 255, 100, 210,
     16, 196,   0,  72, 163, 247, 117, 219, 138,   3, 230, 218,   9,  63, 221, 148,
    135,  92, 131,   2, 205,  74, 144,  51, 115, 103, 246, 243, 157, 127, 191, 226,
     82, 155, 216,  38, 200,  55, 198,  59, 129, 150, 111,  75,  19, 190,  99,  46,
    233, 121, 167, 140, 159, 110, 188, 142,  41, 245, 249, 182,  47, 253, 180,  89,
    120, 152,   6, 106, 231,  70, 113, 186, 212,  37, 171,  66, 136, 162, 141, 250,
    114,   7, 185,  85, 248, 238, 172,  10,  54,  73,  42, 104,  60,  56, 241, 164,
     64,  40, 211, 123, 187, 201,  67, 193,  21, 227, 173, 244, 119, 199, 128, 158,
};

static inline uint8_t rotl8(uint8_t x, unsigned n)   /* 1 <= n <= 7 */
{
    return (uint8_t)((x << n) | (x >> (8 - n)));
}

static inline uint8_t SBOX1(uint8_t x) { return sbox1_table[x]; }
static inline uint8_t SBOX2(uint8_t x) { return rotl8(sbox1_table[x], 1); }
static inline uint8_t SBOX3(uint8_t x) { return rotl8(sbox1_table[x], 7); }
static inline uint8_t SBOX4(uint8_t x) { return sbox1_table[rotl8(x, 1)]; }

/* The P-function half of F (section 2.4.1): t1..t8 are the S-box outputs, t1 the
 * most significant byte; returns F_OUT = y1 || ... || y8. */
static inline uint64_t P(uint8_t t1, uint8_t t2, uint8_t t3, uint8_t t4,
                         uint8_t t5, uint8_t t6, uint8_t t7, uint8_t t8)
{
    uint8_t y1 = t1 ^ t3 ^ t4 ^ t6 ^ t7 ^ t8;
    uint8_t y2 = t1 ^ t2 ^ t4 ^ t5 ^ t7 ^ t8;
    uint8_t y3 = t1 ^ t2 ^ t3 ^ t5 ^ t6 ^ t8;
    uint8_t y4 = t2 ^ t3 ^ t4 ^ t5 ^ t6 ^ t7;
    uint8_t y5 = t1 ^ t2 ^ t6 ^ t7 ^ t8;
    uint8_t y6 = t2 ^ t3 ^ t5 ^ t7 ^ t8;
    uint8_t y7 = t3 ^ t4 ^ t5 ^ t6 ^ t8;
    uint8_t y8 = t1 ^ t4 ^ t5 ^ t6 ^ t7;

    return ((uint64_t)y1 << 56) | ((uint64_t)y2 << 48) | ((uint64_t)y3 << 40) |
           ((uint64_t)y4 << 32) | ((uint64_t)y5 << 24) | ((uint64_t)y6 << 16) |
           ((uint64_t)y7 << 8) | (uint64_t)y8;
}

/* Section 2.4.1. */
static inline uint64_t F(uint64_t F_IN, uint64_t KE)
{
    uint64_t x = F_IN ^ KE;

    return P(SBOX1((uint8_t)(x >> 56)), SBOX2((uint8_t)(x >> 48)),
             SBOX3((uint8_t)(x >> 40)), SBOX4((uint8_t)(x >> 32)),
             SBOX2((uint8_t)(x >> 24)), SBOX3((uint8_t)(x >> 16)),
             SBOX4((uint8_t)(x >> 8)), SBOX1((uint8_t)x));
}

/* Section 2.4.2 (camellia.h, shared with gfni_avx512.c's key set-up). */
#define FL ac_camellia_fl
#define FLINV ac_camellia_flinv

/* One block, sections 2.3.1 (18 rounds, 128-bit keys) and 2.3.2 (24 rounds, 192/256).
 *
 * Section 2.3.3: decryption is the same network with the subkeys in reverse order
 * (kw1<->kw3, kw2<->kw4, k1<->k18 or k24, ke1<->ke4 or ke6, ...). Rather than keep a
 * second schedule, K() and KE() read the arrays back to front when decrypting; the
 * RFC's 1-based subkey numbers map to the 0-based arrays of camellia.h. */
static void camellia_block(const camellia_subkeys *ks, int decrypt,
                           uint8_t out[16], const uint8_t in[16])
{
    const unsigned nk = ks->key_bits == 128 ? 18 : 24;   /* F rounds: k1..k18 or k1..k24 */
    const unsigned nke = nk / 3 - 2;                      /* ke1..ke4 or ke1..ke6 */
    const uint64_t *kw_pre = decrypt ? &ks->kw[2] : &ks->kw[0];
    const uint64_t *kw_post = decrypt ? &ks->kw[0] : &ks->kw[2];
#define K(i) (ks->k[decrypt ? nk - (i) : (i) - 1])
#define KE(i) (ks->ke[decrypt ? nke - (i) : (i) - 1])

    uint64_t D1 = load64_be(in);
    uint64_t D2 = load64_be(in + 8);

    /* Prewhitening. */
    D1 ^= kw_pre[0];
    D2 ^= kw_pre[1];

    /* Groups of six Feistel rounds, an FL/FLINV layer between consecutive groups. */
    for (unsigned r = 1; r <= nk; r += 6) {
        if (r > 1) {
            unsigned layer = r / 6;          /* 1, 2, 3: ke1/ke2, ke3/ke4, ke5/ke6 */
            D1 = FL(D1, KE(2 * layer - 1));
            D2 = FLINV(D2, KE(2 * layer));
        }
        D2 ^= F(D1, K(r));
        D1 ^= F(D2, K(r + 1));
        D2 ^= F(D1, K(r + 2));
        D1 ^= F(D2, K(r + 3));
        D2 ^= F(D1, K(r + 4));
        D1 ^= F(D2, K(r + 5));
    }

    /* Postwhitening; the halves swap on output. */
    D2 ^= kw_post[0];
    D1 ^= kw_post[1];

#undef K
#undef KE
    /* The whole block was read before this first store, so out == in is safe. */
    store64_be(out, D2);
    store64_be(out + 8, D1);
}

static void camellia_portable_encrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                      const uint8_t *in, size_t nblocks)
{
    (void)cache;
    for (size_t i = 0; i < nblocks; i++)
        camellia_block(ks, 0, out + 16 * i, in + 16 * i);
}

static void camellia_portable_decrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                      const uint8_t *in, size_t nblocks)
{
    (void)cache;
    for (size_t i = 0; i < nblocks; i++)
        camellia_block(ks, 1, out + 16 * i, in + 16 * i);
}

const camellia_kernel archcrypt_camellia_portable = {
    camellia_portable_encrypt,
    camellia_portable_decrypt,
    NULL,
};

/* ---- constant-time F for the key schedule (camellia.c) -------------------- */

/* SBOX1[x] with no secret-dependent address or branch: every row of the table is
 * read and the wanted one kept by a mask, then the same for its byte. */
static uint8_t SBOX1_ct(uint8_t x)
{
    const uint64_t row = x >> 3, col = x & 7;
    uint64_t word = 0, byte = 0;

    for (uint64_t i = 0; i < 32; i++) {
        /* all-ones when i == row: (i ^ row) - 1 borrows into bit 63 only from 0 */
        uint64_t mask = 0 - (((i ^ row) - 1) >> 63);
        word |= load64_le(sbox1_table + 8 * i) & mask;
    }
    for (uint64_t j = 0; j < 8; j++) {
        uint64_t mask = 0 - (((j ^ col) - 1) >> 63);
        byte |= (word >> (8 * j)) & mask;
    }
    return (uint8_t)byte;
}

/* F of section 2.4.1 via SBOX1_ct: about 300 operations per S-box instead of one
 * load, which the six F calls of a key schedule can afford. Keys are set up through
 * this whatever kernel runs the blocks, so a constant-time SIMD kernel stays so. */
uint64_t ac_camellia_f_ct(uint64_t F_IN, uint64_t KE)
{
    uint64_t x = F_IN ^ KE;

    return P(SBOX1_ct((uint8_t)(x >> 56)),
             rotl8(SBOX1_ct((uint8_t)(x >> 48)), 1),
             rotl8(SBOX1_ct((uint8_t)(x >> 40)), 7),
             SBOX1_ct(rotl8((uint8_t)(x >> 32), 1)),
             rotl8(SBOX1_ct((uint8_t)(x >> 24)), 1),
             rotl8(SBOX1_ct((uint8_t)(x >> 16)), 7),
             SBOX1_ct(rotl8((uint8_t)(x >> 8), 1)),
             SBOX1_ct((uint8_t)x));
}
