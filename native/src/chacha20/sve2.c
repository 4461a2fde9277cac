/* ChaCha20, SVE2: one block per 32-bit lane, as many blocks per iteration as the vector has lanes (4 at 128 bits), xar for every rotate (xor and rotate in one: 8 instructions per quarter round), 4x4 word transposes per 128-bit segment and 64-bit gathers/scatters to the blocks' places; the last partial iteration through a stack buffer (RFC 8439 2.3-2.4). */
#if !defined(__aarch64__) || !defined(__ARM_FEATURE_SVE2) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "chacha20/sve2.c needs little-endian -march=armv8-a+sve2 (ISA_FLAGS_sve2 in native/isa.mk)"
#endif

#include <arm_sve.h>

#include "common.h"
#include "chacha20/chacha20.h"

/* "expand 32-byte k" as little-endian words (RFC 8439 2.3). */
#define C0 0x61707865
#define C1 0x3320646e
#define C2 0x79622d32
#define C3 0x6b206574

/* The vector length is whatever the CPU has (128 to 2048 bits, a multiple of 128): the
 * code never assumes one. A 2048-bit iteration is 64 blocks, so the tail buffer is 4 KiB. */
#define MAX_LANES 64

/* Left rotates as xar's right rotates: ror(d ^ a, 32 - n). */
#define QR(a, b, c, d)                     \
    do {                                   \
        a = svadd_u32_x(pg, a, b);         \
        d = svxar_n_u32(d, a, 16);         \
        c = svadd_u32_x(pg, c, d);         \
        b = svxar_n_u32(b, c, 20);         \
        a = svadd_u32_x(pg, a, b);         \
        d = svxar_n_u32(d, a, 24);         \
        c = svadd_u32_x(pg, c, d);         \
        b = svxar_n_u32(b, c, 25);         \
    } while (0)

/* Where transposed vector 4g + r goes: byte offset 64 r + 16 g, plus `off` per 64-bit
 * element (see iteration). */
#define PLACE(g, r) (64 * (r) + 16 * (g))

/*
 * One iteration: lane i of x_w = word w of block counter + i; then 4x4 transposes inside
 * each 128-bit segment (trn at 32, then 64 bits) make segment s of vector 4g + r hold words
 * 4g..4g+3 of block 4s + r, whose bytes belong at 64 (4s + r) + 16 g + 8 h (h the 64-bit
 * half of the segment): where the gathers and scatters with `off` (256 s + 8 h) put them.
 * With xor, out = in ^ keystream; without, out = keystream (in unused). SVE vectors are
 * sizeless (no arrays of them), hence one function that computes and stores.
 */
static inline __attribute__((always_inline)) void iteration(uint8_t *out, const uint8_t *in, int xor,
                                                            svuint64_t off, const uint32_t key[8],
                                                            const uint32_t nonce[3], uint32_t counter)
{
    const svbool_t p64 = svptrue_b64();
    const svbool_t pg = svptrue_b32();
    const svuint32_t s4 = svdup_n_u32(key[0]), s5 = svdup_n_u32(key[1]), s6 = svdup_n_u32(key[2]),
                     s7 = svdup_n_u32(key[3]), s8 = svdup_n_u32(key[4]), s9 = svdup_n_u32(key[5]),
                     s10 = svdup_n_u32(key[6]), s11 = svdup_n_u32(key[7]);
    /* The caller checked the 32-bit counter does not wrap inside the call (chacha20.h). */
    const svuint32_t s12 = svindex_u32(counter, 1);
    const svuint32_t s13 = svdup_n_u32(nonce[0]), s14 = svdup_n_u32(nonce[1]),
                     s15 = svdup_n_u32(nonce[2]);
    svuint32_t x0 = svdup_n_u32(C0), x1 = svdup_n_u32(C1), x2 = svdup_n_u32(C2), x3 = svdup_n_u32(C3);
    svuint32_t x4 = s4, x5 = s5, x6 = s6, x7 = s7, x8 = s8, x9 = s9, x10 = s10, x11 = s11;
    svuint32_t x12 = s12, x13 = s13, x14 = s14, x15 = s15;

    for (int i = 0; i < 10; i++) {
        QR(x0, x4, x8, x12);
        QR(x1, x5, x9, x13);
        QR(x2, x6, x10, x14);
        QR(x3, x7, x11, x15);
        QR(x0, x5, x10, x15);
        QR(x1, x6, x11, x12);
        QR(x2, x7, x8, x13);
        QR(x3, x4, x9, x14);
    }
    x0 = svadd_n_u32_x(pg, x0, C0);
    x1 = svadd_n_u32_x(pg, x1, C1);
    x2 = svadd_n_u32_x(pg, x2, C2);
    x3 = svadd_n_u32_x(pg, x3, C3);
    x4 = svadd_u32_x(pg, x4, s4);
    x5 = svadd_u32_x(pg, x5, s5);
    x6 = svadd_u32_x(pg, x6, s6);
    x7 = svadd_u32_x(pg, x7, s7);
    x8 = svadd_u32_x(pg, x8, s8);
    x9 = svadd_u32_x(pg, x9, s9);
    x10 = svadd_u32_x(pg, x10, s10);
    x11 = svadd_u32_x(pg, x11, s11);
    x12 = svadd_u32_x(pg, x12, s12);
    x13 = svadd_u32_x(pg, x13, s13);
    x14 = svadd_u32_x(pg, x14, s14);
    x15 = svadd_u32_x(pg, x15, s15);

#define EMIT(g, r, v)                                                                       \
    do {                                                                                    \
        uint64_t *dst_ = (uint64_t *)(void *)(out + PLACE(g, r));                           \
        svuint64_t k_ = (v);                                                                \
        if (xor)                                                                            \
            k_ = sveor_u64_x(p64, k_, svld1_gather_u64offset_u64(                           \
                                          p64, (const uint64_t *)(const void *)(in + PLACE(g, r)), off)); \
        svst1_scatter_u64offset_u64(p64, dst_, off, k_);                                    \
    } while (0)
#define TRANSPOSE(g, a, b, c, d)                                                            \
    do {                                                                                    \
        const svuint64_t t0_ = svreinterpret_u64_u32(svtrn1_u32(a, b));                      \
        const svuint64_t t1_ = svreinterpret_u64_u32(svtrn2_u32(a, b));                      \
        const svuint64_t t2_ = svreinterpret_u64_u32(svtrn1_u32(c, d));                      \
        const svuint64_t t3_ = svreinterpret_u64_u32(svtrn2_u32(c, d));                      \
        EMIT(g, 0, svtrn1_u64(t0_, t2_));                                                   \
        EMIT(g, 1, svtrn1_u64(t1_, t3_));                                                   \
        EMIT(g, 2, svtrn2_u64(t0_, t2_));                                                   \
        EMIT(g, 3, svtrn2_u64(t1_, t3_));                                                   \
    } while (0)
    TRANSPOSE(0, x0, x1, x2, x3);
    TRANSPOSE(1, x4, x5, x6, x7);
    TRANSPOSE(2, x8, x9, x10, x11);
    TRANSPOSE(3, x12, x13, x14, x15);
#undef TRANSPOSE
#undef EMIT
}

static void chacha20_sve2_xor(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                              const uint32_t nonce[3], uint32_t counter)
{
    const svbool_t p64 = svptrue_b64();
    const uint64_t lanes = svcntw();
    const uint64_t stride = 64 * lanes;
    /* element e of a 64-bit vector: segment e / 2, half e % 2 */
    const svuint64_t idx = svindex_u64(0, 1);
    const svuint64_t off = svadd_u64_x(p64, svlsl_n_u64_x(p64, svlsr_n_u64_x(p64, idx, 1), 8),
                                       svlsl_n_u64_x(p64, svand_n_u64_x(p64, idx, 1), 3));

    for (; len >= stride; len -= stride, in += stride, out += stride) {
        iteration(out, in, 1, off, key, nonce, counter);
        counter += (uint32_t)lanes;
    }
    if (len > 0) {
        /* One more iteration's keystream in block order, then len bytes of it. */
        uint64_t buf[MAX_LANES * 8] __attribute__((aligned(16)));

        iteration((uint8_t *)buf, NULL, 0, off, key, nonce, counter);
        for (uint64_t i = 0; i < len; i += svcntb()) {
            const svbool_t pb = svwhilelt_b8_u64(i, len);

            svst1_u8(pb, out + i,
                     sveor_u8_x(pb, svld1_u8(pb, in + i), svld1_u8(pb, (const uint8_t *)buf + i)));
        }
        /* The keystream is as secret as the key: zero what was written. */
        for (uint64_t i = 0; i < 8 * lanes; i += svcntd())
            svst1_u64(svwhilelt_b64_u64(i, 8 * lanes), buf + i, svdup_n_u64(0));
        __asm__ __volatile__("" : : "r"(buf) : "memory");
    }
}

const chacha20_kernel archcrypt_chacha20_sve2 = {
    .xor_stream = chacha20_sve2_xor,
};
