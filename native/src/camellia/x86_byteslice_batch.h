/* One Camellia batch, byte-sliced, for BS_W = 128 (16 blocks, xmm) or 256 (32 blocks per state, ymm); included twice by x86_byteslice.h. */

#if BS_W == 256
#define VT __m256i
#define V_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_STOREU(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define V_LOADA(p) _mm256_load_si256((const __m256i *)(const void *)(p))
#define V_STOREA(p, v) _mm256_store_si256((__m256i *)(void *)(p), (v))
#define V_LOADK(p) _mm256_broadcastsi128_si256(_mm_load_si128(p))
#define V_XOR _mm256_xor_si256
#define V_AND _mm256_and_si256
#define V_OR _mm256_or_si256
#define V_ADD8 _mm256_add_epi8
#define V_SUB8 _mm256_sub_epi8
#define V_CMPGT8 _mm256_cmpgt_epi8
#define V_SRL16 _mm256_srli_epi16
#define V_SHUF _mm256_shuffle_epi8
#define V_UNPLO _mm256_unpacklo_epi8
#define V_UNPHI _mm256_unpackhi_epi8
#define V_ZERO _mm256_setzero_si256
#define V_AESE(x) CAMELLIA_AESENCLAST256(x)
#define V_AESD(x) CAMELLIA_AESDECLAST256(x)
#define SFX(name) name##256
#elif BS_W == 128
#define VT __m128i
#define V_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define V_LOADA(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define V_STOREA(p, v) _mm_store_si128((__m128i *)(void *)(p), (v))
#define V_LOADK(p) _mm_load_si128(p)
#define V_XOR _mm_xor_si128
#define V_AND _mm_and_si128
#define V_OR _mm_or_si128
#define V_ADD8 _mm_add_epi8
#define V_SUB8 _mm_sub_epi8
#define V_CMPGT8 _mm_cmpgt_epi8
#define V_SRL16 _mm_srli_epi16
#define V_SHUF _mm_shuffle_epi8
#define V_UNPLO _mm_unpacklo_epi8
#define V_UNPHI _mm_unpackhi_epi8
#define V_ZERO _mm_setzero_si128
#define V_AESE(x) _mm_aesenclast_si128((x), _mm_setzero_si128())
#define V_AESD(x) _mm_aesdeclast_si128((x), _mm_setzero_si128())
#define SFX(name) name##128
#else
#error "BS_W must be 128 or 256"
#endif

/* Key-table entries are 16 bytes (both lanes of a ymm get the same); constants are 32. */
#define KEY(e) V_LOADK(&(e))
#define CONST(i) V_LOADA(camellia_x86_consts[i])

/* An affine map of every byte: lo[x & 15] ^ hi[x >> 4]. */
AC_INLINE VT SFX(affine_)(VT x, VT lo, VT hi, VT m)
{
    return V_XOR(V_SHUF(lo, V_AND(x, m)), V_SHUF(hi, V_AND(V_SRL16(x, 4), m)));
}

/*
 * d ^= F(s, k) on byte-sliced halves in memory (section 2.4.1). Bytes 1..8 of F use s1
 * s2 s3 s4 s2 s3 s4 s1. rk holds the pre maps' low tables with the subkey folded in; dec
 * picks aesdeclast and the D maps (source D2). In stages, all eight pre maps, then the
 * AES instructions, then the post maps, so the scheduler always has independent work;
 * the P-function is 16 in-place XORs after which t0..t3 hold y5..y8 and t4..t7 y1..y4.
 * The halves stay in memory: sixteen vectors and the temporaries do not fit in sixteen
 * registers, and this way the spills are the eight loads and stores of each round.
 */
AC_INLINE void SFX(round_)(const VT *s, VT *d, const __m128i *rk, int dec)
{
    const VT m = CONST(C_MASK0F);
    const VT p1 = CONST(dec ? C_PRE1_D_HI : C_PRE1_E_HI), p4 = CONST(dec ? C_PRE4_D_HI : C_PRE4_E_HI);
    const unsigned q1 = dec ? C_POST1_D_HI : C_POST1_E_HI, q2 = dec ? C_POST2_D_HI : C_POST2_E_HI;
    const unsigned q3 = dec ? C_POST3_D_HI : C_POST3_E_HI;

    __asm__("" ::: "memory");
    VT t0 = SFX(affine_)(V_LOADA(&s[0]), KEY(rk[0]), p1, m);
    VT t1 = SFX(affine_)(V_LOADA(&s[1]), KEY(rk[1]), p1, m);
    VT t2 = SFX(affine_)(V_LOADA(&s[2]), KEY(rk[2]), p1, m);
    VT t3 = SFX(affine_)(V_LOADA(&s[3]), KEY(rk[3]), p4, m);
    VT t4 = SFX(affine_)(V_LOADA(&s[4]), KEY(rk[4]), p1, m);
    VT t5 = SFX(affine_)(V_LOADA(&s[5]), KEY(rk[5]), p1, m);
    VT t6 = SFX(affine_)(V_LOADA(&s[6]), KEY(rk[6]), p4, m);
    VT t7 = SFX(affine_)(V_LOADA(&s[7]), KEY(rk[7]), p1, m);
    if (dec) {
        t0 = V_AESD(t0); t1 = V_AESD(t1); t2 = V_AESD(t2); t3 = V_AESD(t3);
        t4 = V_AESD(t4); t5 = V_AESD(t5); t6 = V_AESD(t6); t7 = V_AESD(t7);
    } else {
        t0 = V_AESE(t0); t1 = V_AESE(t1); t2 = V_AESE(t2); t3 = V_AESE(t3);
        t4 = V_AESE(t4); t5 = V_AESE(t5); t6 = V_AESE(t6); t7 = V_AESE(t7);
    }
    /* post tables sit as HI, LO pairs */
    t0 = SFX(affine_)(t0, CONST(q1 + 1), CONST(q1), m);
    t1 = SFX(affine_)(t1, CONST(q2 + 1), CONST(q2), m);
    t2 = SFX(affine_)(t2, CONST(q3 + 1), CONST(q3), m);
    t3 = SFX(affine_)(t3, CONST(q1 + 1), CONST(q1), m);
    t4 = SFX(affine_)(t4, CONST(q2 + 1), CONST(q2), m);
    t5 = SFX(affine_)(t5, CONST(q3 + 1), CONST(q3), m);
    t6 = SFX(affine_)(t6, CONST(q1 + 1), CONST(q1), m);
    t7 = SFX(affine_)(t7, CONST(q1 + 1), CONST(q1), m);

    t0 = V_XOR(t0, t5); t1 = V_XOR(t1, t6); t2 = V_XOR(t2, t7); t3 = V_XOR(t3, t4);
    t4 = V_XOR(t4, t2); t5 = V_XOR(t5, t3); t6 = V_XOR(t6, t0); t7 = V_XOR(t7, t1);
    t0 = V_XOR(t0, t7); t1 = V_XOR(t1, t4); t2 = V_XOR(t2, t5); t3 = V_XOR(t3, t6);
    t4 = V_XOR(t4, t3); t5 = V_XOR(t5, t0); t6 = V_XOR(t6, t1); t7 = V_XOR(t7, t2);
    V_STOREA(&d[0], V_XOR(V_LOADA(&d[0]), t4));
    V_STOREA(&d[1], V_XOR(V_LOADA(&d[1]), t5));
    V_STOREA(&d[2], V_XOR(V_LOADA(&d[2]), t6));
    V_STOREA(&d[3], V_XOR(V_LOADA(&d[3]), t7));
    V_STOREA(&d[4], V_XOR(V_LOADA(&d[4]), t0));
    V_STOREA(&d[5], V_XOR(V_LOADA(&d[5]), t1));
    V_STOREA(&d[6], V_XOR(V_LOADA(&d[6]), t2));
    V_STOREA(&d[7], V_XOR(V_LOADA(&d[7]), t3));
    __asm__("" ::: "memory");
}

/* (a <<< 1) over the 32-bit word a0..a3 (a0 most significant), byte by byte: a + a has
 * a zero low bit, and subtracting (b < 0 ? -1 : 0) sets it to the top bit of b. */
#define ROTL1(a, b) V_SUB8(V_ADD8(a, a), V_CMPGT8(V_ZERO(), b))

/* Section 2.4.2 on a byte-sliced half h[0..7] in memory: kl = KE >> 32 in k[0..3], kr in
 * k[4..7]. FL: x2 ^= (x1 & kl) <<< 1, then x1 ^= x2 | kr. FL^-1: the same two steps in
 * the other order. */
AC_INLINE void SFX(fl_left_)(VT *h, const __m128i *k)
{
    VT a0 = V_AND(V_LOADA(&h[0]), KEY(k[0])), a1 = V_AND(V_LOADA(&h[1]), KEY(k[1]));
    VT a2 = V_AND(V_LOADA(&h[2]), KEY(k[2])), a3 = V_AND(V_LOADA(&h[3]), KEY(k[3]));
    V_STOREA(&h[4], V_XOR(V_LOADA(&h[4]), ROTL1(a0, a1)));
    V_STOREA(&h[5], V_XOR(V_LOADA(&h[5]), ROTL1(a1, a2)));
    V_STOREA(&h[6], V_XOR(V_LOADA(&h[6]), ROTL1(a2, a3)));
    V_STOREA(&h[7], V_XOR(V_LOADA(&h[7]), ROTL1(a3, a0)));
}

AC_INLINE void SFX(fl_right_)(VT *h, const __m128i *k)
{
    for (int j = 0; j < 4; j++)
        V_STOREA(&h[j], V_XOR(V_LOADA(&h[j]), V_OR(V_LOADA(&h[4 + j]), KEY(k[4 + j]))));
}

#undef ROTL1

/* FL on D1 and FL^-1 on D2 of a state. */
AC_INLINE void SFX(fl_layer_)(VT *st, const __m128i *fl)
{
    __asm__("" ::: "memory");
    SFX(fl_left_)(st, fl);
    SFX(fl_right_)(st, fl);
    SFX(fl_right_)(st + 8, fl + 8);
    SFX(fl_left_)(st + 8, fl + 8);
    __asm__("" ::: "memory");
}

/*
 * 16x16 byte transpose in each 128-bit lane: four rounds of "vector k with vector k+8,
 * interleaved low and high" into vectors 2k and 2k+1. Each round rotates the 8-bit
 * address (vector : byte) left by one bit, so four swap its nibbles. Self-inverse.
 */
AC_INLINE void SFX(transpose_)(VT *x)
{
#pragma GCC unroll 4
    for (int round = 0; round < 4; round++) {
        VT y0 = V_UNPLO(x[0], x[8]), y1 = V_UNPHI(x[0], x[8]);
        VT y2 = V_UNPLO(x[1], x[9]), y3 = V_UNPHI(x[1], x[9]);
        VT y4 = V_UNPLO(x[2], x[10]), y5 = V_UNPHI(x[2], x[10]);
        VT y6 = V_UNPLO(x[3], x[11]), y7 = V_UNPHI(x[3], x[11]);
        VT y8 = V_UNPLO(x[4], x[12]), y9 = V_UNPHI(x[4], x[12]);
        VT y10 = V_UNPLO(x[5], x[13]), y11 = V_UNPHI(x[5], x[13]);
        VT y12 = V_UNPLO(x[6], x[14]), y13 = V_UNPHI(x[6], x[14]);
        VT y14 = V_UNPLO(x[7], x[15]), y15 = V_UNPHI(x[7], x[15]);
        x[0] = y0; x[1] = y1; x[2] = y2; x[3] = y3; x[4] = y4; x[5] = y5; x[6] = y6; x[7] = y7;
        x[8] = y8; x[9] = y9; x[10] = y10; x[11] = y11; x[12] = y12; x[13] = y13; x[14] = y14;
        x[15] = y15;
    }
}

/* Load BS_W / 8 blocks into a byte-sliced state: transpose, D2 into ShiftRows order,
 * prewhitening. */
AC_INLINE void SFX(load_state_)(VT *st, const camellia_x86_keys *kt, const uint8_t *in, size_t nvec)
{
    VT x[16];

    /* The empty asm keeps each vector a register value: without it gcc turns these
     * loads (and the stores in store_state_) into a memcpy through a stack array.
     * Only the first nvec vectors are read (nvec < 16 only for the xmm batch). */
    for (int r = 0; r < 16; r++) {
        x[r] = (size_t)r < nvec ? V_LOADU(in + r * (BS_W / 8)) : V_ZERO();
        __asm__("" : "+x"(x[r]));
    }
    SFX(transpose_)(x);       /* x[j]: byte j of every block; D1 = x[0..7], D2 = x[8..15] */
    for (int j = 0; j < 8; j++) {
        V_STOREA(&st[j], V_XOR(x[j], KEY(kt->kw[j])));
        V_STOREA(&st[j + 8], V_XOR(V_SHUF(x[j + 8], CONST(C_SHIFTROWS)), KEY(kt->kw[j + 8])));
    }
}

/* Postwhitening, D2 back into block order, and out as D2 || D1. */
AC_INLINE void SFX(store_state_)(uint8_t *out, const camellia_x86_keys *kt, const VT *st, size_t nvec)
{
    VT y[16];

    __asm__("" ::: "memory");
    for (int j = 0; j < 8; j++) {
        y[j] = V_SHUF(V_XOR(V_LOADA(&st[j + 8]), KEY(kt->kw[16 + j])), CONST(C_INV_SHIFTROWS));
        y[j + 8] = V_XOR(V_LOADA(&st[j]), KEY(kt->kw[24 + j]));
    }
    SFX(transpose_)(y);
    for (int r = 0; r < 16; r++) {
        __asm__("" : "+x"(y[r]));
        if ((size_t)r < nvec)
            V_STOREU(out + r * (BS_W / 8), y[r]);
    }
}

/*
 * nstate independent states of BS_W / 8 blocks each, from in to out (out == in allowed:
 * each state is loaded before anything is stored); the first state reads and writes only
 * its first nvec vectors (16: all of them), in scratch (32-byte aligned, 1 KiB,
 * the caller wipes it). Two states run round by round side by side: a round depends on
 * the whole previous one, so one state alone leaves the execution units waiting on
 * latency at every round boundary (measured: ~1150 cycles per ymm state alone, ~915 each
 * for two).
 */
AC_INLINE void SFX(batch_)(const camellia_x86_keys *kt, void *scratch, uint8_t *out, const uint8_t *in,
                       const int nstate, size_t nvec)
{
    VT *a = (VT *)scratch, *b = a + 16;

    SFX(load_state_)(a, kt, in, nvec);
    if (nstate == 2)
        SFX(load_state_)(b, kt, in + 16 * BS_W / 8, 16);
    for (unsigned r = 0; r < kt->rounds; r += 6) {
        if (r > 0) {
            SFX(fl_layer_)(a, kt->fl[r / 6 - 1]);
            if (nstate == 2)
                SFX(fl_layer_)(b, kt->fl[r / 6 - 1]);
        }
        for (unsigned q = r; q < r + 6; q += 2) {
            SFX(round_)(a, a + 8, kt->rk[q], 0);
            if (nstate == 2)
                SFX(round_)(b, b + 8, kt->rk[q], 0);
            SFX(round_)(a + 8, a, kt->rk[q + 1], 1);
            if (nstate == 2)
                SFX(round_)(b + 8, b, kt->rk[q + 1], 1);
        }
    }
    SFX(store_state_)(out, kt, a, nvec);
    if (nstate == 2)
        SFX(store_state_)(out + 16 * BS_W / 8, kt, b, 16);
}

#undef KEY
#undef CONST
#undef VT
#undef V_LOADU
#undef V_STOREU
#undef V_LOADA
#undef V_STOREA
#undef V_LOADK
#undef V_XOR
#undef V_AND
#undef V_OR
#undef V_ADD8
#undef V_SUB8
#undef V_CMPGT8
#undef V_SRL16
#undef V_SHUF
#undef V_UNPLO
#undef V_UNPHI
#undef V_ZERO
#undef V_AESE
#undef V_AESD
#undef SFX
