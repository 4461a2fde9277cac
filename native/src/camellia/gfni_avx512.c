/* Camellia ECB, AVX-512 + GFNI: 64 blocks byte-sliced into 16 zmm (two such batches side by side), kept in an affine domain where an S-box is one vgf2p8affineinvqb (RFC 3713 2.3-2.4). */
#if !defined(__AVX512F__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || !defined(__GFNI__)
#error "camellia/gfni_avx512.c needs -mavx512f -mavx512vl -mavx512bw -mgfni (ISA_FLAGS_gfni_avx512 in native/isa.mk)"
#endif

#include <immintrin.h>

#include "common.h"
#include "camellia/camellia.h"

/*
 * S-boxes. Camellia's s1 is GF(2^8) inversion between two affine maps, and so is AES's;
 * inversion in one representation of GF(2^8) is inversion in another composed with a
 * linear field isomorphism, so
 *     s1(x) = B(I(A(x))),   I = inversion in the AES field (x^8 + x^4 + x^3 + x + 1),
 * with A, B affine over GF(2)^8. vgf2p8affineqb computes M x ^ c per byte and
 * vgf2p8affineinvqb M I(x) ^ c, so an S-box is those two instructions: A, then I and B.
 * The rotations of the other S-boxes fold into the maps:
 *     s2(x) = s1(x) <<< 1  -> B2 = rotl1 o B      s4(x) = s1(x <<< 1) -> A4 = A o rotl1
 *     s3(x) = s1(x) >>> 1  -> B3 = rotr1 o B
 *
 * How A and B were found (offline, a throwaway script; re-derivable from this comment):
 *  1. Guess x0 = A^-1(0) (256 choices). With S'(x) = s1(x ^ x0) ^ s1(x0) the maps become
 *     linear: S' = M2 o I o M1 (I(0) = 0).
 *  2. I(l y) = l^-1 I(y) for any field element l, so M1 can be scaled: WLOG M1(1) = 1.
 *     Guess M1(2).
 *  3. Propagate (linear equivalence, Biryukov et al., EUROCRYPT 2003): M1 known on a span
 *     X gives M2 on the span of I(M1 X), since M2(I(M1 x)) = S'(x); M2 known on a span Y
 *     gives M1 on S'^-1(M2 Y), since M1(S'^-1(M2 y)) = I(y). Repeat until both are known
 *     on all 256 inputs (check) or contradict themselves (next guess).
 *  4. A(x) = M1 x ^ M1 x0, B(y) = M2 y ^ s1(x0).
 * Trying x0, then M1(2), in increasing order, the first solution has x0 = 0xc5,
 * s1(x0) = 0x6e (the constants of Camellia's own definition of s1, a sanity check) and
 * M1(2) = 0x19. All four S-box compositions below were then checked against RFC 3713's
 * SBOX1 table on all 256 inputs; the differential self-test against portable.c checks
 * them again.
 *
 * Matrix encoding (Intel SDM, GF2P8AFFINEQB): output bit i = parity(M.byte[7 - i] & x)
 * ^ c.bit[i], i.e. row i of the 8x8 bit matrix (the input bits that feed output bit i)
 * is byte 7 - i of the qword. Check: AES's own affine map is 0xf1e3c78f1f3e7cf8, 0x63.
 * The kernel no longer runs these maps as they stand (see the domain below); they are
 * what its constants were derived from.
 */
#define PRE1_M  0xff38108aa65cc0bcULL /* A */
#define PRE4_M  0xff1c0845532e605eULL /* A o rotl1 */
#define PRE_C   0x08                  /* A(0) = M1 0xc5, both */
#define POST1_M 0xeb36241e33d3b1b7ULL /* B, for s1 and s4 */
#define POST1_C 0x6e
#define POST2_M 0xb7eb36241e33d3b1ULL /* rotl1 o B: rows rotate, so bytes rotate */
#define POST2_C 0xdc
#define POST3_M 0x36241e33d3b1b7ebULL /* rotr1 o B */
#define POST3_C 0x37
/* output bit 0 = input bit 7: the per-byte x >> 7 that vpsrlb would be, if it existed */
#define SHR7_M  0x8000000000000000ULL
/* output bit i = input bit i - 1: x << 1 */
#define SHL1_M  0x0001020408102040ULL

/*
 * The state is kept in the M domain, M the linear part of A (PRE1_M): a byte x is stored as
 * M x (plus a key-only offset, see "Subkeys"). Then A's own vgf2p8affineqb disappears from
 * s1, s2 and s3: its linear part is the storage and its constant joins the offset. s4's
 * pre-map A o rotl1 becomes R4 = M o rotl1 o M^-1 (constant PRE_C), and the post-maps
 * become M o B: the S-box outputs come out in the domain too, and the P-network, XORs of
 * whole bytes, commutes with M. 10 vgf2p8affine* a round instead of 16, on port 0 alone
 * here (measured: 1 a cycle, latency 3). Derived offline from the matrices above (M^-1 by
 * inverting M's table; the others as compositions) and checked on all 256 inputs of every
 * S-box against RFC 3713's SBOX1 for several key bytes; the self-test checks them again.
 */
#define DOM_M    PRE1_M                  /* M: into the domain */
#define DOM_MINV 0x2f721ee604e0dc9cULL   /* M^-1: out of it */
#define R4_M     0x01fce6ed856a3c52ULL   /* M o rotl1 o M^-1, constant PRE_C */
#define INV1_M   0x01fe339f76b8066dULL   /* M o B, for s1 and s4 */
#define INV1_C   0xf1                    /* M applied to POST1_C */
#define INV2_M   0x01091e7e5fdf628eULL   /* M o rotl1 o B */
#define INV2_C   0x05
#define INV3_M   0x0151d3fc60495ca4ULL   /* M o rotr1 o B */
#define INV3_C   0x9d
/* byte j of the offset an S-box input needs on top of M k: PRE_C but for the s4 bytes 3, 6 */
#define NEED_C   0x0808080008080008ULL

/*
 * Layout. A state is 64 blocks in 16 zmm: vector j holds byte j of every block (j = 0 the
 * RFC's first, most significant byte), so D1 = x[0..7] and D2 = x[8..15]. Loading 64
 * contiguous bytes per register (blocks 4r..4r+3) and transposing each 128-bit lane on its
 * own puts blocks l, l + 4, l + 8, ... in lane l; the inverse transpose undoes it. Unlike
 * the AES-NI rows, GFNI works on each byte alone (no ShiftRows to route around), and
 * 16 state vectors plus the temporaries fit in AVX-512's 32 registers, so a batch runs
 * from load to store without touching memory but for the key bytes (batch128, two batches
 * at once, keeps half of each state in memory).
 *
 * Subkeys and offsets. A stored byte is M x ^ o, o a known key-only offset per byte of
 * each half. The round key cannot fold into the S-box (the affine constants are
 * immediates), and XORing it into the eight S-box inputs would cost 8 instructions a
 * round. Instead a round adds a constant to the half it writes so that when that half
 * next enters the S-boxes its offset is exactly what they need (M k ^ PRE_C, or M k for
 * s4: need()): the S-boxes read the state as it is. The constants ride in the P-network
 * for free: 8 of its 20 instructions (w0..w3, d4..d7) are two-input XORs that become
 * three-input vpternlogq with a broadcast key qword, and these 8 slots reach the 8
 * output bytes through an invertible map (build_keys). The FL layer is linear in the
 * domain but for a key-only constant (fl_matrices), so it carries an offset along too.
 * In: M before the transpose and one XOR on D1 (D2's offset is M kw2); out: M^-1, and one
 * XOR on D2 (the last round gives D1 the offset M kw4, which M^-1 turns into kw4 itself).
 * The key table holds every constant byte repeated over a qword and every matrix once,
 * read as embedded {1to8} broadcasts: load ports only, no shuffle.
 *
 * Instructions per 64 blocks, 18 rounds, and what they measured (c/B, 64 KiB, 128-bit
 * keys; interleaved on the Intel AVX-512 host; 256-bit keys alike, 0.934 -> 0.762):
 *   plain S-boxes, key XORed into their inputs: 16 + 28 a round, 1032 in all    0.735
 *   offsets, the key in the P-network:          16 + 20 a round,  888 in all    0.674
 *   the M domain:                               10 + 20 a round,  796 in all    0.575
 *   two batches side by side (batch128):        the same, and 8 stores a round  0.525
 * (vgf2p8affine* + the rest). The rounds are a latency chain: every input byte of a
 * round depends on every S-box of the previous one, and all vgf2p8affine* share port 0;
 * 10 of them a round, not 16, is most of the third step, a second chain the fourth.
 *
 * Tail. 1..63 blocks run as one batch with masked loads and stores (AVX512BW byte masks;
 * masked-out bytes are neither read nor written, nor does their fault matter): no stack
 * copy and never portable.c, whose S-boxes are secret-indexed tables. One batch is a
 * latency chain of 18 or 24 rounds (measured ~23 cycles a round here), so a short tail
 * costs about what a full one does: 64 B measured 148 ns against libgcrypt 1.12's 160.
 *
 * Constant time: no branch or address depends on key or data; masks and branches depend
 * on the block count only. A per-call key table is wiped before returning, and so are
 * batch128's halves in memory (the last state and the output would give away whitening
 * constants; once a call: 2 KiB 0.516 -> 0.532 c/B, 16 KiB and up unchanged).
 */


typedef struct {
    uint64_t rk[24][8];    /* round r's constants for w0..w3, d4..d7, each byte times 0x01..01 */
    uint64_t fl[3][24];    /* FL layer l: G, H, Q matrices (fl_fwd) for FL, then for FL^-1 */
    uint64_t kw[16];       /* the offset fixes after M on the way in (D1), before M^-1 out (D2) */
    unsigned rounds;       /* 18 or 24 */
} __attribute__((aligned(64))) camellia_gfni_keys;

_Static_assert(2 * sizeof(camellia_gfni_keys) <= CAMELLIA_CACHE_BYTES, "camellia cache too small");
_Static_assert(CAMELLIA_CACHE_ALIGN % _Alignof(camellia_gfni_keys) == 0, "camellia cache misaligned");

/* vgf2p8affineqb on one byte, constant 0 (matrix encoding above); parity by folding */
static uint8_t aff(uint64_t m, unsigned x)
{
    unsigned r = 0;

    for (unsigned i = 0; i < 8; i++) {
        unsigned p = (unsigned)(m >> (8 * (7 - i))) & x & 0xff;
        p ^= p >> 4;
        p ^= p >> 2;
        p ^= p >> 1;
        r |= (p & 1) << i;
    }
    return (uint8_t)r;
}

/* aff on every byte of a half */
static uint64_t aff64(uint64_t m, uint64_t w)
{
    uint64_t r = 0;

    for (unsigned j = 0; j < 64; j += 8)
        r |= (uint64_t)aff(m, (unsigned)(w >> j) & 0xff) << j;
    return r;
}

/* the matrix of a o b (b first), from the images of the unit bytes */
static uint64_t mat_mul(uint64_t a, uint64_t b)
{
    uint64_t q = 0;

    for (unsigned c = 0; c < 8; c++) {
        unsigned y = aff(a, aff(b, 1u << c));
        for (unsigned i = 0; i < 8; i++)
            q |= (uint64_t)((y >> i) & 1) << (8 * (7 - i) + c);
    }
    return q;
}

/* x & k as a matrix */
static uint64_t mat_and(unsigned k)
{
    uint64_t q = 0;

    for (unsigned i = 0; i < 8; i++)
        q |= (uint64_t)((k >> i) & 1) << (8 * (7 - i) + i);
    return q;
}

/* Byte j of a half (0 = most significant). */
static unsigned byte_of(uint64_t w, unsigned j)
{
    return (unsigned)(w >> (56 - 8 * j)) & 0xff;
}

/* Byte j of w in every byte of a qword. */
static uint64_t rep(uint64_t w, unsigned j)
{
    return byte_of(w, j) * 0x0101010101010101ULL;
}

/*
 * The FL layer in the domain (section 2.4.2 with kl = KE >> 32, kr = KE's low half): x1 =
 * bytes 0..3 of a half, x2 = bytes 4..7, and byte j of (x1 & kl) <<< 1 is
 * ((x1_j & kl_j) << 1) ^ ((x1_{j+1} & kl_{j+1}) >> 7), j + 1 mod 4. In the domain each
 * term is one linear map of one stored byte: G_j = M o shl1 o and kl_j o M^-1 and
 * H_j = M o shr7 o and kl_j o M^-1; and x2 | kr = (x2 & ~kr) ^ kr, so Q_j = M o and ~kr_j
 * o M^-1 (the constant kr joins the offset). m[0..3] = G, m[4..7] = H, m[8..11] = Q.
 */
static void fl_matrices(uint64_t *m, uint64_t ke)
{
    for (unsigned j = 0; j < 4; j++) {
        const uint64_t andl = mat_mul(mat_and(byte_of(ke, j)), DOM_MINV);

        m[j] = mat_mul(DOM_M, mat_mul(SHL1_M, andl));
        m[4 + j] = mat_mul(DOM_M, mat_mul(SHR7_M, andl));
        m[8 + j] = mat_mul(DOM_M, mat_mul(mat_and(~byte_of(ke, 4 + j) & 0xff), DOM_MINV));
    }
}

/* What fl_fwd (inv = 0) or fl_back (inv = 1) does to a half w in the domain: a linear map,
 * so it carries an offset o to itself applied to o. fl_back undoes fl_fwd with the same m. */
static uint64_t fl_ops(uint64_t w, const uint64_t *m, int inv)
{
    unsigned x[8];
    uint64_t r = 0;

    for (unsigned j = 0; j < 8; j++)
        x[j] = byte_of(w, j);
    for (int step = 0; step < 2; step++) {
        if (step == inv) {
            unsigned t[4];
            for (unsigned j = 0; j < 4; j++)
                t[j] = aff(m[j], x[j]) ^ aff(m[4 + (j + 1) % 4], x[(j + 1) % 4]);
            for (unsigned j = 0; j < 4; j++)
                x[4 + j] ^= t[j];
        } else {
            for (unsigned j = 0; j < 4; j++)
                x[j] ^= aff(m[8 + j], x[4 + j]);
        }
    }
    for (unsigned j = 0; j < 8; j++)
        r |= (uint64_t)x[j] << (56 - 8 * j);
    return r;
}

/* The offset round r's S-box input must carry: M k ^ PRE_C (s4 bytes: M k, see R4_M). */
static uint64_t need(uint64_t k)
{
    return aff64(DOM_M, k) ^ NEED_C;
}

static void build_keys(camellia_gfni_keys *kt, const camellia_subkeys *ks, int decrypt)
{
    const unsigned nk = ac_camellia_rounds(ks);
    const uint64_t *kw_pre = ac_camellia_kw(ks, decrypt, 0);
    const uint64_t *kw_post = ac_camellia_kw(ks, decrypt, 1);
#define K(i) ac_camellia_k(ks, decrypt, (i))
#define KE(i) ac_camellia_ke(ks, decrypt, (i))
    /* o[0], o[1]: stored L and R minus M applied to the true ones (see "Subkeys") */
    uint64_t o[2] = { need(K(1)), aff64(DOM_M, kw_pre[1]) };
    const uint64_t in_fix = aff64(DOM_M, kw_pre[0]) ^ o[0];

    kt->rounds = nk;
    for (unsigned l = 0; l + 1 < nk / 6; l++) {
        fl_matrices(&kt->fl[l][0], KE(2 * l + 1));
        fl_matrices(&kt->fl[l][12], KE(2 * l + 2));
    }
    for (unsigned r = 0; r < nk; r++) {
        /* round r (0-based) reads half r & 1, whose offset is need(K(r + 1)), and writes
         * the other, which it leaves with the offset the next use wants */
        uint64_t *od = &o[(r + 1) & 1];
        const unsigned l = (r + 1) / 6 - 1;     /* FL layer after this round, if any */
        const int fl_next = r + 1 < nk && (r + 1) % 6 == 0;
        uint64_t want, c;

        if (r + 1 == nk)    /* L, which M^-1 then maps to exactly D1 ^ kw_post[1] */
            want = aff64(DOM_M, kw_post[1]);
        else if (fl_next)   /* fl_fwd maps offset x to fl_ops(x) ^ M FL(0); then need(K(r + 2)) */
            want = fl_ops(need(K(r + 2)) ^ aff64(DOM_M, ac_camellia_fl(0, KE(2 * l + 1))), kt->fl[l], 1);
        else
            want = need(K(r + 2));
        c = *od ^ want;
        *od = want;
        /* byte i of c to output i of P: w3, w0, w1, w2 reach outputs (0, 7), (1, 4),
         * (2, 5), (3, 6); d4..d7 the rest */
        kt->rk[r][0] = rep(c, 1);
        kt->rk[r][1] = rep(c, 2);
        kt->rk[r][2] = rep(c, 3);
        kt->rk[r][3] = rep(c, 0);
        for (unsigned j = 4; j < 8; j++)
            kt->rk[r][j] = rep(c, j) ^ rep(c, (j - 3) & 3);
        if (fl_next) {
            o[0] = fl_ops(o[0], kt->fl[l], 0) ^ aff64(DOM_M, ac_camellia_fl(0, KE(2 * l + 1)));
            o[1] = fl_ops(o[1], &kt->fl[l][12], 1) ^ aff64(DOM_M, ac_camellia_flinv(0, KE(2 * l + 2)));
        }
    }
    for (unsigned j = 0; j < 8; j++) {
        kt->kw[j] = rep(in_fix, j);
        kt->kw[8 + j] = rep(aff64(DOM_MINV, o[1]) ^ kw_post[0], j);
    }
    ac_wipe(o, sizeof o);
#undef K
#undef KE
}

AC_INLINE __m512i kb(uint64_t k)
{
    return _mm512_set1_epi64((long long)k);
}

/* vpternlogq immediates, from A = 0xf0, B = 0xcc, C = 0xaa */
#define XOR3 0x96      /* A ^ B ^ C */
#define XOR_OR 0x1e    /* A ^ (B | C) */

/* Half a state in memory (batch128), and the fence that keeps it there: after
 * in_memory(m) gcc must read m back from memory instead of from a register it kept. */
typedef struct {
    __m512i v[8];
} half_mem;

AC_INLINE void in_memory(half_mem *m)
{
    __asm__("" : "+m"(*m));
}

/* x[0..7] into m, kept there (in_memory); and back. */
AC_INLINE void half_out(half_mem *m, const __m512i *x)
{
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        _mm512_store_si512(&m->v[j], x[j]);
    in_memory(m);
}

AC_INLINE void half_in(__m512i *x, const half_mem *m)
{
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        x[j] = _mm512_load_si512(&m->v[j]);
}

/*
 * out = d ^ F(s, k) on byte-sliced halves (section 2.4.1), s already carrying k (see
 * "Subkeys"; rk: this round's offset constants); out may be d or s. With dm (a constant
 * at each call), d is read from *dm instead, by the last vpternlogq of each byte, and s
 * is saved to *save once the S-boxes have read it. Bytes 1..8 of F use
 * s1 s2 s3 s4 s2 s3 s4 s1. The P-function is the XOR network of the AVX2 rows
 * (x86_byteslice_batch.h) with its second layer computed from the S-box outputs directly
 * and its last layer merged into the XOR into d, each pair of XORs one vpternlogq: 20
 * instructions, depth 3.
 */
AC_INLINE void round_core(__m512i *s, __m512i *d, __m512i *out, const uint64_t *rk,
                           const half_mem *dm, half_mem *save)
{
    const __m512i r4 = kb(R4_M), i1 = kb(INV1_M), i2 = kb(INV2_M), i3 = kb(INV3_M);

    __m512i t0 = _mm512_gf2p8affineinv_epi64_epi8(s[0], i1, INV1_C);
    __m512i t1 = _mm512_gf2p8affineinv_epi64_epi8(s[1], i2, INV2_C);
    __m512i t2 = _mm512_gf2p8affineinv_epi64_epi8(s[2], i3, INV3_C);
    __m512i t3 = _mm512_gf2p8affineinv_epi64_epi8(_mm512_gf2p8affine_epi64_epi8(s[3], r4, PRE_C),
                                                  i1, INV1_C);
    __m512i t4 = _mm512_gf2p8affineinv_epi64_epi8(s[4], i2, INV2_C);
    __m512i t5 = _mm512_gf2p8affineinv_epi64_epi8(s[5], i3, INV3_C);
    __m512i t6 = _mm512_gf2p8affineinv_epi64_epi8(_mm512_gf2p8affine_epi64_epi8(s[6], r4, PRE_C),
                                                  i1, INV1_C);
    __m512i t7 = _mm512_gf2p8affineinv_epi64_epi8(s[7], i1, INV1_C);

    if (dm) {
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            _mm512_store_si512(&save->v[j], s[j]);
        in_memory(save);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            d[j] = _mm512_load_si512(&dm->v[j]);
    }
    const __m512i u0 = _mm512_xor_si512(t0, t5), u1 = _mm512_xor_si512(t1, t6);
    const __m512i u2 = _mm512_xor_si512(t2, t7), u3 = _mm512_xor_si512(t3, t4);
    const __m512i v4 = _mm512_ternarylogic_epi64(t4, t2, t7, XOR3);
    const __m512i v5 = _mm512_ternarylogic_epi64(t5, t3, t4, XOR3);
    const __m512i v6 = _mm512_ternarylogic_epi64(t6, t0, t5, XOR3);
    const __m512i v7 = _mm512_ternarylogic_epi64(t7, t1, t6, XOR3);
    const __m512i w0 = _mm512_ternarylogic_epi64(u0, v7, kb(rk[0]), XOR3);
    const __m512i w1 = _mm512_ternarylogic_epi64(u1, v4, kb(rk[1]), XOR3);
    const __m512i w2 = _mm512_ternarylogic_epi64(u2, v5, kb(rk[2]), XOR3);
    const __m512i w3 = _mm512_ternarylogic_epi64(u3, v6, kb(rk[3]), XOR3);
    out[0] = _mm512_ternarylogic_epi64(d[0], v4, w3, XOR3);
    out[1] = _mm512_ternarylogic_epi64(d[1], v5, w0, XOR3);
    out[2] = _mm512_ternarylogic_epi64(d[2], v6, w1, XOR3);
    out[3] = _mm512_ternarylogic_epi64(d[3], v7, w2, XOR3);
    out[4] = _mm512_ternarylogic_epi64(d[4], w0, kb(rk[4]), XOR3);
    out[5] = _mm512_ternarylogic_epi64(d[5], w1, kb(rk[5]), XOR3);
    out[6] = _mm512_ternarylogic_epi64(d[6], w2, kb(rk[6]), XOR3);
    out[7] = _mm512_ternarylogic_epi64(d[7], w3, kb(rk[7]), XOR3);
}

/* d ^= F(s, k), all in registers */
AC_INLINE void round_f(__m512i *s, __m512i *d, const uint64_t *rk)
{
    round_core(s, d, d, rk, NULL, NULL);
}

/* round_f with d in memory: s (registers) is saved to *save, where it is the next round's
 * d, and becomes d ^ F(s, k), d read from *dm. */
AC_INLINE void round_m(__m512i *s, const half_mem *dm, half_mem *save, const uint64_t *rk)
{
    __m512i d[8];

    round_core(s, d, s, rk, dm, save);
}

/* FL (section 2.4.2) on a half h[0..7] in the domain, matrices m from fl_matrices:
 * x2 ^= (x1 & kl) <<< 1, then x1 ^= x2 | kr. */
AC_INLINE void fl_fwd(__m512i *h, const uint64_t *m)
{
    __m512i g[4], hh[4];

#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        g[j] = _mm512_gf2p8affine_epi64_epi8(h[j], kb(m[j]), 0);
        hh[j] = _mm512_gf2p8affine_epi64_epi8(h[j], kb(m[4 + j]), 0);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        h[4 + j] = _mm512_ternarylogic_epi64(h[4 + j], g[j], hh[(j + 1) & 3], XOR3);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        h[j] = _mm512_xor_si512(h[j], _mm512_gf2p8affine_epi64_epi8(h[4 + j], kb(m[8 + j]), 0));
}

/* FL^-1: the same two steps in the other order. */
AC_INLINE void fl_back(__m512i *h, const uint64_t *m)
{
    __m512i g[4], hh[4];

#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        h[j] = _mm512_xor_si512(h[j], _mm512_gf2p8affine_epi64_epi8(h[4 + j], kb(m[8 + j]), 0));
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        g[j] = _mm512_gf2p8affine_epi64_epi8(h[j], kb(m[j]), 0);
        hh[j] = _mm512_gf2p8affine_epi64_epi8(h[j], kb(m[4 + j]), 0);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        h[4 + j] = _mm512_ternarylogic_epi64(h[4 + j], g[j], hh[(j + 1) & 3], XOR3);
}

/* 16x16 byte transpose in each 128-bit lane: four rounds of "vector k with vector k+8,
 * interleaved low and high" into vectors 2k and 2k+1. Each round rotates the 8-bit address
 * (vector : byte) left by one bit, so four swap its nibbles. Self-inverse. */
AC_INLINE void transpose(__m512i *x)
{
#pragma GCC unroll 4
    for (int round = 0; round < 4; round++) {
        __m512i y[16];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            y[2 * k] = _mm512_unpacklo_epi8(x[k], x[k + 8]);
            y[2 * k + 1] = _mm512_unpackhi_epi8(x[k], x[k + 8]);
        }
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++)
            x[k] = y[k];
    }
}

/* Bytes of register r that hold one of the first nblocks blocks. */
AC_INLINE __mmask64 reg_mask(size_t nblocks, int r)
{
    const size_t first = 4 * (size_t)r;

    if (nblocks >= first + 4)
        return ~(__mmask64)0;
    return nblocks > first ? ((__mmask64)1 << (16 * (nblocks - first))) - 1 : 0;
}

/* All nk rounds and the FL layers between them, as a loop over groups of six rounds: the
 * state indices are constants within the body, so it stays in registers. The loop halves
 * the code against 24 unrolled rounds (~8 KiB instead of ~15) and measured 1-2% faster
 * (64 B to 64 KiB, 128- and 256-bit keys, interleaved). */
AC_INLINE void rounds(__m512i *x, const camellia_gfni_keys *kt)
{
    const uint64_t (*rk)[8] = kt->rk;
    const uint64_t (*fl)[24] = kt->fl;

    for (unsigned r = 0;; r += 6, rk += 6, fl++) {
        round_f(x, x + 8, rk[0]);
        round_f(x + 8, x, rk[1]);
        round_f(x, x + 8, rk[2]);
        round_f(x + 8, x, rk[3]);
        round_f(x, x + 8, rk[4]);
        round_f(x + 8, x, rk[5]);
        if (r + 6 == kt->rounds)
            break;
        fl_fwd(x, fl[0]);
        fl_back(x + 8, fl[0] + 12);
    }
}

/* 16 loaded registers into the domain, byte-sliced, D1's offset fixed (see "Subkeys"). */
AC_INLINE void enter(__m512i *x, const camellia_gfni_keys *kt)
{
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        x[r] = _mm512_gf2p8affine_epi64_epi8(x[r], kb(DOM_M), 0);
    transpose(x);
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        x[j] = _mm512_xor_si512(x[j], kb(kt->kw[j]));
}

/* The halves after the last round out of the domain with postwhitening, as D2 || D1, into
 * 16 registers to store. */
AC_INLINE void leave(__m512i *y, const __m512i *d1, const __m512i *d2,
                     const camellia_gfni_keys *kt)
{
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        y[j] = _mm512_xor_si512(_mm512_gf2p8affine_epi64_epi8(d2[j], kb(DOM_MINV), 0),
                                kb(kt->kw[8 + j]));
        y[8 + j] = _mm512_gf2p8affine_epi64_epi8(d1[j], kb(DOM_MINV), 0);
    }
    transpose(y);
}

/*
 * nblocks (1..64) blocks from in to out (out == in allowed: all of them are loaded before
 * anything is stored). Out of line, one copy for every key size and block count.
 */
static __attribute__((noinline)) void batch64(const camellia_gfni_keys *kt, uint8_t *out,
                                              const uint8_t *in, size_t nblocks)
{
    __m512i x[16];

    if (nblocks == 64) {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++)
            x[r] = _mm512_loadu_si512(in + 64 * r);
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++) {
            const __mmask64 m = reg_mask(nblocks, r);
            x[r] = m ? _mm512_maskz_loadu_epi8(m, in + 64 * r) : _mm512_setzero_si512();
        }
    }
    enter(x, kt);
    rounds(x, kt);
    __m512i y[16];
    leave(y, x, x + 8, kt);
    if (nblocks == 64) {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++)
            _mm512_storeu_si512(out + 64 * r, y[r]);
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < 16; r++) {
            const __mmask64 m = reg_mask(nblocks, r);
            if (m)
                _mm512_mask_storeu_epi8(out + 64 * r, m, y[r]);
        }
    }
}

/*
 * 128 blocks (in == out allowed) as two independent batches a and b, round by round. One
 * batch's rounds are a chain: every S-box input depends on every S-box of the round
 * before, and a round measured ~23 cycles against the 15 its 30 instructions need on the
 * two 512-bit ports. Two chains side by side let one's P-network run while the other's
 * S-boxes occupy port 0. Both states do not fit the 32 registers with the temporaries, so
 * the half that a round only XORs into (d) lives in memory, read by its last vpternlogq:
 * 8 stores a round, port 0 and 5 untouched. Against batch64 alone (interleaved, two runs
 * of 31 rounds, before the FL change below): 128-bit keys 2-64 KiB 0.587-0.605 ->
 * 0.559-0.567 c/B (-5 to -7%), 256-bit 0.752-0.763 -> 0.729-0.745 (-2 to -4%: its third
 * FL layer, 24 GFNI a batch on port 0, gains little from a second chain). Leaving both
 * whole states to gcc's register allocator (it spills on its own) measured +3% at 128-bit
 * and -3% at 256-bit against this (2-64 KiB, final code); this form is kept for the
 * 128-bit keys of the benchmarks and because its memory is ours to wipe.
 */
static __attribute__((noinline)) void batch128(const camellia_gfni_keys *kt, uint8_t *out,
                                               const uint8_t *in, half_mem *mem)
{
    __m512i a[16], b[16], y[16];
    half_mem *ma = mem, *mb = mem + 2;    /* d: [0] after an even number of rounds, [1] odd */

#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        a[r] = _mm512_loadu_si512(in + 64 * r);
    enter(a, kt);
    half_out(&ma[0], a + 8);
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        b[r] = _mm512_loadu_si512(in + 1024 + 64 * r);
    enter(b, kt);
    half_out(&mb[0], b + 8);

    /* a[0..7] and b[0..7] hold the half a round reads, D1 after an even number of rounds */
    const uint64_t (*rk)[8] = kt->rk;
    const uint64_t (*fl)[24] = kt->fl;
    for (unsigned r = 0;; r += 6, rk += 6, fl++) {
#pragma GCC unroll 3
        for (int i = 0; i < 6; i += 2) {
            round_m(a, &ma[0], &ma[1], rk[i]);
            round_m(b, &mb[0], &mb[1], rk[i]);
            round_m(a, &ma[1], &ma[0], rk[i + 1]);
            round_m(b, &mb[1], &mb[0], rk[i + 1]);
        }
        if (r + 6 == kt->rounds)
            break;
        /* b reads the same matrices through a pointer gcc cannot see is fla: else it
         * broadcasts each into a register once for both batches and spills them (24
         * zmm a layer); as {1to8} operands they cost a load each. Measured 2-64 KiB,
         * interleaved, two runs: -4 to -6% (128-bit keys), -2 to -5% (256-bit). */
        const uint64_t *fla = fl[0], *flb = fl[0];
        __asm__("" : "+r"(flb));
        fl_fwd(a, fla);
        fl_fwd(b, flb);
        half_in(a + 8, &ma[0]);
        fl_back(a + 8, fla + 12);
        half_out(&ma[0], a + 8);
        half_in(b + 8, &mb[0]);
        fl_back(b + 8, flb + 12);
        half_out(&mb[0], b + 8);
    }

    half_in(a + 8, &ma[0]);
    leave(y, a, a + 8, kt);
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        _mm512_storeu_si512(out + 64 * r, y[r]);
    half_in(b + 8, &mb[0]);
    leave(y, b, b + 8, kt);
#pragma GCC unroll 16
    for (int r = 0; r < 16; r++)
        _mm512_storeu_si512(out + 1024 + 64 * r, y[r]);
}

/* The per-key cache (camellia.h): the encryption table, then the decryption one. */
static void camellia_gfni_prepare(const camellia_subkeys *ks, void *cache)
{
    camellia_gfni_keys *kt = (camellia_gfni_keys *)cache;

    build_keys(&kt[0], ks, 0);
    build_keys(&kt[1], ks, 1);
}

static void camellia_gfni_run(const camellia_subkeys *ks, const void *cache, int decrypt,
                              uint8_t *out, const uint8_t *in, size_t nblocks)
{
    camellia_gfni_keys local;
    const camellia_gfni_keys *kt;
    half_mem mem[4];    /* batch128's halves in memory, wiped once at the end */
    const int used = nblocks >= 128;

    if (nblocks == 0)
        return;
    if (cache != NULL) {
        kt = (const camellia_gfni_keys *)cache + decrypt;
    } else {
        build_keys(&local, ks, decrypt);
        kt = &local;
    }
    for (; nblocks >= 128; nblocks -= 128, in += 2048, out += 2048)
        batch128(kt, out, in, mem);
    if (nblocks >= 64) {
        batch64(kt, out, in, 64);
        nblocks -= 64, in += 1024, out += 1024;
    }
    if (nblocks > 0)
        batch64(kt, out, in, nblocks);
    if (used)
        ac_wipe(mem, sizeof mem);
    if (cache == NULL)
        ac_wipe(&local, sizeof local);
}

static void camellia_gfni_encrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                  const uint8_t *in, size_t nblocks)
{
    camellia_gfni_run(ks, cache, 0, out, in, nblocks);
}

static void camellia_gfni_decrypt(const camellia_subkeys *ks, const void *cache, uint8_t *out,
                                  const uint8_t *in, size_t nblocks)
{
    camellia_gfni_run(ks, cache, 1, out, in, nblocks);
}

const camellia_kernel archcrypt_camellia_gfni_avx512 = {
    camellia_gfni_encrypt,
    camellia_gfni_decrypt,
    camellia_gfni_prepare,
};
