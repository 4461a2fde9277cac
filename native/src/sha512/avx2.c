/* SHA-512 compression, AVX2 + BMI2: message schedule four qwords per ymm, split between the scalar rorx rounds (inline asm), W+K parked on the stack a group ahead (FIPS 180-4 section 6.4.2). */
#if !defined(__AVX2__) || !defined(__BMI2__)
#error "sha512/avx2.c needs -mavx2 -mbmi2 (ISA_FLAGS_avx2 in native/Makefile)"
#endif

#include <immintrin.h>

#include "common.h"
#include "sha512/sha512.h"

/* Section 4.2.3. */
static const uint64_t K[80] __attribute__((aligned(32))) = {
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
    0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
    0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
    0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
    0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
    0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
    0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
    0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

/* One round of section 6.4.2 step 3 with the names rotated instead of moved: it
 * writes d (the new e) and h (the new a). 22 ALU instructions, 6 of them rorx:
 *   T1 = h + W+K + Ch(e,f,g) + Sigma1(e), Ch = ((f ^ g) & e) ^ g;
 *   Maj(a,b,c) = b ^ ((a^b) & (b^c)), where b^c is the previous round's a^b: bc comes
 *   in, ab goes out, and the caller swaps the two names every round;
 *   Sigma0(a) goes out in s0 and is added to the new a at the start of the next
 *   round, which keeps it off the path from T1 to the new a (the caller adds the
 *   last one after round 79; s0 = 0 before round 0).
 * Why asm: the instruction order decides the speed on the 4-ALU cores this row is
 * for (2 of the ALUs rotate), and gcc's own order of the same C was 7 % slower here
 * (Zen 3: 4.33 against 4.03 c/B at 64 KiB). Volatile makes gcc's scheduler keep the
 * vector schedule steps where RND4S puts them, between rounds. */
#define RND(a, b, c, d, e, f, g, h, wk, bc, ab)                                   \
    do {                                                                          \
        uint64_t t0_, t4_;                                                        \
        __asm__ __volatile__("mov %[o_f],%[o_t4]\n\t"                             \
                             "xor %[o_g],%[o_t4]\n\t"                             \
                             "rorx $41,%[o_e],%[o_t0]\n\t"                        \
                             "rorx $18,%[o_e],%[o_ab]\n\t"                        \
                             "and %[o_e],%[o_t4]\n\t"                             \
                             "add %[o_w],%[o_h]\n\t"                              \
                             "xor %[o_ab],%[o_t0]\n\t"                            \
                             "rorx $14,%[o_e],%[o_ab]\n\t"                        \
                             "xor %[o_g],%[o_t4]\n\t"         /* Ch */            \
                             "lea (%[o_a],%[o_s0]),%[o_a]\n\t" /* a complete */   \
                             "xor %[o_ab],%[o_t0]\n\t"        /* Sigma1(e) */     \
                             "add %[o_t4],%[o_h]\n\t"                             \
                             "mov %[o_a],%[o_ab]\n\t"                             \
                             "rorx $39,%[o_a],%[o_t4]\n\t"                        \
                             "xor %[o_b],%[o_ab]\n\t"         /* a ^ b */         \
                             "add %[o_t0],%[o_h]\n\t"         /* T1 */            \
                             "rorx $34,%[o_a],%[o_s0]\n\t"                        \
                             "add %[o_h],%[o_d]\n\t"          /* new e */         \
                             "and %[o_ab],%[o_bc]\n\t"                            \
                             "rorx $28,%[o_a],%[o_t0]\n\t"                        \
                             "xor %[o_t4],%[o_s0]\n\t"                            \
                             "xor %[o_b],%[o_bc]\n\t"         /* Maj */           \
                             "add %[o_bc],%[o_h]\n\t"         /* new a - S0 */    \
                             "xor %[o_t0],%[o_s0]"            /* Sigma0(a) */     \
                             : [o_a] "+r"(a), [o_d] "+r"(d), [o_h] "+r"(h),       \
                               [o_s0] "+r"(s0), [o_bc] "+r"(bc), [o_ab] "=&r"(ab), \
                               [o_t0] "=&r"(t0_), [o_t4] "=&r"(t4_)               \
                             : [o_b] "r"(b), [o_e] "r"(e), [o_f] "r"(f),          \
                               [o_g] "r"(g), [o_w] "m"(wk)                        \
                             : "cc");                                             \
    } while (0)

#define RND4(a, b, c, d, e, f, g, h, wk)                                          \
    do {                                                                          \
        RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                             \
        RND(h, a, b, c, d, e, f, g, (wk)[1], ab, bc);                             \
        RND(g, h, a, b, c, d, e, f, (wk)[2], bc, ab);                             \
        RND(f, g, h, a, b, c, d, e, (wk)[3], ab, bc);                             \
    } while (0)

/* AVX2 has no 64-bit rotate: shift both ways; the parts are disjoint, so XOR them. */
#define ROR_PARTS(x, n) _mm256_xor_si256(_mm256_srli_epi64((x), (n)), _mm256_slli_epi64((x), 64 - (n)))

/* sigma0 and sigma1 (section 4.1.3) of each qword; the rotate by 8 is a byte shuffle. */
static inline __m256i sigma0(__m256i x, __m256i ror8)
{
    return _mm256_xor_si256(ROR_PARTS(x, 1),
                            _mm256_xor_si256(_mm256_shuffle_epi8(x, ror8), _mm256_srli_epi64(x, 7)));
}

static inline __m256i sigma1(__m256i x)
{
    return _mm256_xor_si256(_mm256_xor_si256(ROR_PARTS(x, 19), ROR_PARTS(x, 61)),
                            _mm256_srli_epi64(x, 6));
}

/* W+K of group g (rounds 4g..4g+3) into wk[4g..4g+3]. */
#define STORE_WK(x, g)                                                                    \
    _mm256_store_si256((__m256i *)(wk + 4 * (g)),                                         \
                       _mm256_add_epi64((x), _mm256_load_si256((const __m256i *)(K + 4 * (g)))))

/* Four rounds from wk[0..3], and between them step 1 of the schedule for group g:
 * x0 = W[t-16..t-13] becomes W[t..t+3] from x1 = W[t-12..], x2 = W[t-8..],
 * x3 = W[t-4..t-1]. sigma1 needs W[t-2], W[t-1] for the low pair and the new W[t],
 * W[t+1] for the high pair, so it runs twice, each time on a vector whose other half
 * is zero (sigma1(0) = 0). */
#define RND4S(a, b, c, d, e, f, g, h, wk, x0, x1, x2, x3, grp)                        \
    do {                                                                              \
        __m256i w15_, w7_, t_, u_;                                                    \
        RND(a, b, c, d, e, f, g, h, (wk)[0], bc, ab);                                 \
        w15_ = _mm256_alignr_epi8(_mm256_permute2x128_si256((x0), (x1), 0x21), (x0), 8); \
        w7_ = _mm256_alignr_epi8(_mm256_permute2x128_si256((x2), (x3), 0x21), (x2), 8);  \
        t_ = _mm256_add_epi64((x0), w7_);                                             \
        u_ = _mm256_permute2x128_si256((x3), (x3), 0x81);                             \
        RND(h, a, b, c, d, e, f, g, (wk)[1], ab, bc);                                 \
        t_ = _mm256_add_epi64(t_, sigma0(w15_, ror8));                                \
        RND(g, h, a, b, c, d, e, f, (wk)[2], bc, ab);                                 \
        t_ = _mm256_add_epi64(t_, sigma1(u_));                                        \
        u_ = _mm256_permute2x128_si256(t_, t_, 0x08);                                 \
        RND(f, g, h, a, b, c, d, e, (wk)[3], ab, bc);                                 \
        (x0) = _mm256_add_epi64(t_, sigma1(u_));                                      \
        STORE_WK(x0, grp);                                                            \
    } while (0)

static void sha512_compress_avx2(uint64_t H[8], const uint8_t *in, size_t nblocks)
{
    uint64_t wk[80] __attribute__((aligned(32)));
    /* Big-endian qwords to little-endian lanes, and a rotate right by 8 bits. */
    const __m256i bswap = _mm256_setr_epi8(
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    const __m256i ror8 = _mm256_setr_epi8(
        1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8,
        1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8);
    uint64_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];

    while (nblocks--) {
        __m256i x0 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 0)), bswap);
        __m256i x1 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 32)), bswap);
        __m256i x2 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 64)), bswap);
        __m256i x3 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + 96)), bswap);
        uint64_t bc = b ^ c, ab, s0 = 0;

        /* Each group's W+K is stored four groups before its rounds read it. */
        STORE_WK(x0, 0);
        STORE_WK(x1, 1);
        STORE_WK(x2, 2);
        STORE_WK(x3, 3);
        for (int j = 0; j < 16; j += 4) {
            RND4S(a, b, c, d, e, f, g, h, wk + 4 * j, x0, x1, x2, x3, j + 4);
            RND4S(e, f, g, h, a, b, c, d, wk + 4 * j + 4, x1, x2, x3, x0, j + 5);
            RND4S(a, b, c, d, e, f, g, h, wk + 4 * j + 8, x2, x3, x0, x1, j + 6);
            RND4S(e, f, g, h, a, b, c, d, wk + 4 * j + 12, x3, x0, x1, x2, j + 7);
        }
        RND4(a, b, c, d, e, f, g, h, wk + 64);
        RND4(e, f, g, h, a, b, c, d, wk + 68);
        RND4(a, b, c, d, e, f, g, h, wk + 72);
        RND4(e, f, g, h, a, b, c, d, wk + 76);
        a += s0;

        a = H[0] += a; b = H[1] += b; c = H[2] += c; d = H[3] += d;
        e = H[4] += e; f = H[5] += f; g = H[6] += g; h = H[7] += h;
        in += 128;
    }

    /* The schedule is message material, and HMAC's first block is the key. Volatile
     * vector stores rather than ac_wipe, which gcc turns into a rep stosq whose
     * start-up cost shows on one-block calls. */
    volatile __m256i *vwk = (volatile __m256i *)wk;
    for (size_t i = 0; i < sizeof(wk) / 32; i++)
        vwk[i] = _mm256_setzero_si256();
}

const sha512_kernel archcrypt_sha512_avx2 = {
    .compress = sha512_compress_avx2,
};
