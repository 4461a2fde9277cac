/* Plain-C emulation of the AVX-512 F/VL/BW/DQ/IFMA and GFNI intrinsics that
 * src/chacha20/avx512.c, src/poly1305/avx512ifma.c, src/camellia/gfni_avx512.c,
 * src/sha512/avx512.c and src/sha256/sha_ni_avx512.c use (src/aead/avx512.c runs the
 * first two), after Intel's Intrinsics Guide and SDM pseudo-code. Test only
 * (make emu-check, README.md): force-included (-include) into those unmodified files so
 * that they build and run on a machine without AVX-512 or GFNI.
 *
 * It includes the real <immintrin.h> first, with the AVX-512 macros undefined so that GCC
 * keeps its own AVX-512 intrinsics behind a target pragma (declared, never called), then
 * defines __AVX512F__/VL/BW/DQ/IFMA and __GFNI__ (what the kernels #error on) and maps
 * every AVX-512 name they use, and the __m512i/__mmask8/__mmask64/_MM_PERM_ENUM types, to emu_ ones.
 * SSE/AVX2 intrinsics stay the real ones. An AVX-512 name used by a kernel and missing
 * here reaches GCC's own intrinsic and fails to compile (target mismatch, and a __m512i of
 * another type), never a silent fallback.
 *
 * Element i of a vector is bits [32i+31:32i] (epi32) or [64i+63:64i] (epi64), i.e. memory
 * order on little-endian x86; a mask bit j governs element j.
 *
 * Beyond the instructions, two checks of the kernels' own contracts abort with a message
 * (the hardware would silently compute something else):
 *   - vpmadd52luq/huq with an input >= 2^52 (the hardware uses bits 51:0 only), and an
 *     accumulator that wraps past 2^64 (the kernel's bound analysis says it never does);
 *   - _mm512_load_si512/_mm512_store_si512 on an address not 64-byte aligned (#GP).
 * Masked loads and stores touch only the selected bytes, like the hardware's fault
 * suppression, so ASan sees any byte a kernel would really access and no other.
 *
 * EMU_BREAK_<NAME> (-D) deliberately breaks one intrinsic, so the tests can show they fail
 * (tests/cross/test_emulated_avx512.py): MADD52HI, MADD52LO, ROL_EPI32, SHUFFLE_I32X4,
 * SHUFFLE_EPI32, TERNARYLOGIC, PERMUTEX2VAR, MASKZ_LOADU_EPI8 (reads past the mask: only
 * ASan or a guard page sees it), GF2P8AFFINE (matrix rows read from the wrong end of the
 * qword), GF2P8AFFINEINV (inverse taken after the affine map instead of before),
 * ROR_EPI64 (rotates left), ALIGNR_EPI64 (a and b swapped), SHUFFLE_EPI8 (every lane
 * indexes lane 0), SRLI_EPI32 (shifts in copies of the sign bit). */
#ifndef ARCHCRYPT_EMU512_H
#define ARCHCRYPT_EMU512_H

#if !defined(__x86_64__)
#error "tests/emu/emu512.h emulates AVX-512 on x86-64 only"
#endif

#undef __AVX512F__
#undef __AVX512VL__
#undef __AVX512BW__
#undef __AVX512DQ__
#undef __AVX512IFMA__
#undef __GFNI__
#include <immintrin.h>
#define __AVX512F__ 1
#define __AVX512VL__ 1
#define __AVX512BW__ 1
#define __AVX512DQ__ 1
#define __AVX512IFMA__ 1
#define __GFNI__ 1

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMU_ARCHCRYPT_AVX512 1 /* lets a test tell that it was built against this file */

typedef union {
    _Alignas(64) uint8_t b[64];
    uint32_t d[16];
    uint64_t q[8];
} emu_m512i;
typedef uint8_t emu_mmask8;
typedef uint64_t emu_mmask64;
typedef unsigned int emu_mm_perm_enum;

#define __m512i emu_m512i
#define __mmask8 emu_mmask8
#define __mmask64 emu_mmask64
#undef _MM_PERM_ENUM
#define _MM_PERM_ENUM emu_mm_perm_enum

/* Out of line: inlined, the 16-lane loops of every step of the unrolled ChaCha20 rounds
 * make one function too large for GCC to compile in reasonable time. */
#ifndef EMU_FN
#define EMU_FN static __attribute__((noinline, unused))
#endif

__attribute__((noreturn, cold)) static inline void emu_fail(const char *what)
{
    fprintf(stderr, "emu512: %s\n", what);
    fflush(stderr);
    abort();
}

/* ---- set, load, store ------------------------------------------------------------ */

EMU_FN emu_m512i emu_setzero_si512(void)
{
    emu_m512i r;
    memset(&r, 0, sizeof r);
    return r;
}

/* FOR j := 0 to 15: dst[j] := a */
EMU_FN emu_m512i emu_set1_epi32(int a)
{
    emu_m512i r;
    for (int j = 0; j < 16; j++)
        r.d[j] = (uint32_t)a;
    return r;
}

EMU_FN emu_m512i emu_set1_epi64(long long a)
{
    emu_m512i r;
    for (int j = 0; j < 8; j++)
        r.q[j] = (uint64_t)a;
    return r;
}

/* setr: the first argument is element 0. */
EMU_FN emu_m512i emu_setr_epi32(int e0, int e1, int e2, int e3, int e4, int e5, int e6, int e7,
                                int e8, int e9, int e10, int e11, int e12, int e13, int e14,
                                int e15)
{
    const int e[16] = {e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12, e13, e14, e15};
    emu_m512i r;
    for (int j = 0; j < 16; j++)
        r.d[j] = (uint32_t)e[j];
    return r;
}

EMU_FN emu_m512i emu_setr_epi64(long long e0, long long e1, long long e2, long long e3,
                                long long e4, long long e5, long long e6, long long e7)
{
    const long long e[8] = {e0, e1, e2, e3, e4, e5, e6, e7};
    emu_m512i r;
    for (int j = 0; j < 8; j++)
        r.q[j] = (uint64_t)e[j];
    return r;
}

/* FOR j := 0 to 3: dst[128j+127:128j] := a[127:0] */
EMU_FN emu_m512i emu_broadcast_i32x4(__m128i a)
{
    emu_m512i r;
    for (int j = 0; j < 4; j++)
        _mm_storeu_si128((__m128i *)(void *)(r.b + 16 * j), a);
    return r;
}

EMU_FN emu_m512i emu_loadu_si512(const void *p)
{
    emu_m512i r;
    memcpy(r.b, p, 64);
    return r;
}

/* "mem_addr must be aligned on a 64-byte boundary or a general-protection exception may be
 * generated." */
EMU_FN emu_m512i emu_load_si512(const void *p)
{
    if ((uintptr_t)p % 64 != 0)
        emu_fail("_mm512_load_si512: address not 64-byte aligned (#GP)");
    return emu_loadu_si512(p);
}

EMU_FN void emu_storeu_si512(void *p, emu_m512i a)
{
    memcpy(p, a.b, 64);
}

EMU_FN void emu_store_si512(void *p, emu_m512i a)
{
    if ((uintptr_t)p % 64 != 0)
        emu_fail("_mm512_store_si512: address not 64-byte aligned (#GP)");
    emu_storeu_si512(p, a);
}

/* FOR j := 0 to 63: IF k[j] dst.byte[j] := MEM[mem_addr+j] ELSE dst.byte[j] := 0.
 * Masked-out bytes are not accessed (fault suppression). */
EMU_FN emu_m512i emu_maskz_loadu_epi8(emu_mmask64 k, const void *p)
{
    const uint8_t *s = (const uint8_t *)p;
    emu_m512i r = emu_setzero_si512();
#ifdef EMU_BREAK_MASKZ_LOADU_EPI8
    /* broken: reads all 64 bytes, then zeroes the masked-out ones */
    memcpy(r.b, s, 64);
    for (int j = 0; j < 64; j++)
        if (!((k >> j) & 1))
            r.b[j] = 0;
#else
    for (int j = 0; j < 64; j++)
        if ((k >> j) & 1)
            r.b[j] = s[j];
#endif
    return r;
}

/* FOR j := 0 to 7: IF k[j] dst[j] := MEM[mem_addr+64j] ELSE 0 (no fault on masked-out) */
EMU_FN emu_m512i emu_maskz_loadu_epi64(emu_mmask8 k, const void *p)
{
    const uint8_t *s = (const uint8_t *)p;
    emu_m512i r = emu_setzero_si512();
    for (int j = 0; j < 8; j++)
        if ((k >> j) & 1)
            memcpy(&r.q[j], s + 8 * j, 8);
    return r;
}

/* FOR j := 0 to 63: IF k[j] MEM[mem_addr+j] := a.byte[j] (others untouched) */
EMU_FN void emu_mask_storeu_epi8(void *p, emu_mmask64 k, emu_m512i a)
{
    uint8_t *d = (uint8_t *)p;
    for (int j = 0; j < 64; j++)
        if ((k >> j) & 1)
            d[j] = a.b[j];
}

/* ---- integer arithmetic and logic -------------------------------------------------- */

EMU_FN emu_m512i emu_add_epi32(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 16; j++)
        a.d[j] += b.d[j];
    return a;
}

EMU_FN emu_m512i emu_add_epi64(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        a.q[j] += b.q[j];
    return a;
}

EMU_FN emu_m512i emu_sub_epi64(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        a.q[j] -= b.q[j];
    return a;
}

/* FOR j := 0 to 7: IF k[j] dst[j] := a[j] + b[j] ELSE dst[j] := src[j] */
EMU_FN emu_m512i emu_mask_add_epi64(emu_m512i src, emu_mmask8 k, emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        if ((k >> j) & 1)
            src.q[j] = a.q[j] + b.q[j];
    return src;
}

/* FOR j := 0 to 7: IF k[j] dst[j] := a[j] ELSE dst[j] := 0 */
EMU_FN emu_m512i emu_maskz_mov_epi64(emu_mmask8 k, emu_m512i a)
{
    for (int j = 0; j < 8; j++)
        if (!((k >> j) & 1))
            a.q[j] = 0;
    return a;
}

EMU_FN emu_m512i emu_and_si512(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        a.q[j] &= b.q[j];
    return a;
}

EMU_FN emu_m512i emu_or_si512(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        a.q[j] |= b.q[j];
    return a;
}

EMU_FN emu_m512i emu_xor_si512(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 8; j++)
        a.q[j] ^= b.q[j];
    return a;
}

/* IF imm8[7:0] > 63 dst[j] := 0 ELSE dst[j] := ZeroExtend64(a[j] << imm8[7:0]) */
EMU_FN emu_m512i emu_slli_epi64(emu_m512i a, unsigned int imm8)
{
    unsigned n = imm8 & 0xff;
    for (int j = 0; j < 8; j++)
        a.q[j] = n > 63 ? 0 : a.q[j] << n;
    return a;
}

EMU_FN emu_m512i emu_srli_epi64(emu_m512i a, unsigned int imm8)
{
    unsigned n = imm8 & 0xff;
    for (int j = 0; j < 8; j++)
        a.q[j] = n > 63 ? 0 : a.q[j] >> n;
    return a;
}

/* IF imm8[7:0] > 31 dst[j] := 0 ELSE dst[j] := ZeroExtend32(a[j] >> imm8[7:0]) (vpsrld) */
EMU_FN emu_m512i emu_srli_epi32(emu_m512i a, unsigned int imm8)
{
    unsigned n = imm8 & 0xff;
    for (int j = 0; j < 16; j++) {
#ifdef EMU_BREAK_SRLI_EPI32
        a.d[j] = n > 31 ? 0 : (uint32_t)((int32_t)a.d[j] >> n); /* broken: arithmetic shift */
#else
        a.d[j] = n > 31 ? 0 : a.d[j] >> n;
#endif
    }
    return a;
}

/* LEFT_ROTATE_DWORDS(src, count_src): count := count_src % 32;
 * RETURN (src << count) OR (src >> (32 - count)); for each element, count_src = imm8. */
EMU_FN emu_m512i emu_rol_epi32(emu_m512i a, int imm8)
{
    unsigned n = (unsigned)imm8 % 32;
    for (int j = 0; j < 16; j++) {
        uint32_t x = a.d[j];
#ifdef EMU_BREAK_ROL_EPI32
        a.d[j] = n ? (x >> n) | (x << (32 - n)) : x; /* broken: rotates right */
#else
        a.d[j] = n ? (x << n) | (x >> (32 - n)) : x;
#endif
    }
    return a;
}

/* FOR j := 0 to 7: FOR h := 0 to 63: tmp := (a[j][h] << 2) OR (b[j][h] << 1) OR c[j][h];
 * dst[j][h] := imm8[tmp]. Computed a whole qword at a time: dst is the OR, over every
 * index m whose imm8 bit is set, of the bits where (a, b, c) spell m (its minterm). The
 * pseudo-code's bit-by-bit loop, 64 times slower, was most of the emulated self-test's
 * time once the multi-buffer SHA-2 rows used it; selfcheck.c compares this with that
 * loop and with an SSE2 expansion, at every immediate. */
EMU_FN emu_m512i emu_ternarylogic_epi64(emu_m512i a, emu_m512i b, emu_m512i c, int imm8)
{
    emu_m512i r;
    for (int j = 0; j < 8; j++) {
#ifdef EMU_BREAK_TERNARYLOGIC
        const uint64_t x = c.q[j], z = a.q[j]; /* broken: operand order reversed */
#else
        const uint64_t x = a.q[j], z = c.q[j];
#endif
        const uint64_t y = b.q[j];
        uint64_t v = 0;
        for (unsigned m = 0; m < 8; m++)
            if (((unsigned)imm8 >> m) & 1)
                v |= ((m & 4) ? x : ~x) & ((m & 2) ? y : ~y) & ((m & 1) ? z : ~z);
        r.q[j] = v;
    }
    return r;
}

/* FOR j := 0 to 7: tmp[127:0] := ZeroExtend64(b[j][51:0]) * ZeroExtend64(c[j][51:0]);
 * lo: dst[j] := a[j] + ZeroExtend64(tmp[51:0]); hi: dst[j] := a[j] + ZeroExtend64(tmp[103:52]) */
__extension__ typedef unsigned __int128 emu_u128;

EMU_FN void emu_madd52_check(uint64_t a, uint64_t b, uint64_t c, uint64_t add)
{
    if ((b >> 52) != 0 || (c >> 52) != 0)
        emu_fail("vpmadd52: multiplicand >= 2^52 (the hardware would use bits 51:0 only)");
    if (a + add < a)
        emu_fail("vpmadd52: accumulator wrapped past 2^64");
}

EMU_FN emu_m512i emu_madd52lo_epu64(emu_m512i a, emu_m512i b, emu_m512i c)
{
    const uint64_t m52 = (UINT64_C(1) << 52) - 1;
    for (int j = 0; j < 8; j++) {
        emu_u128 t = (emu_u128)(b.q[j] & m52) * (c.q[j] & m52);
#ifdef EMU_BREAK_MADD52LO
        uint64_t add = (uint64_t)t & (m52 >> 1); /* broken: tmp[50:0] */
#else
        uint64_t add = (uint64_t)t & m52;
#endif
        emu_madd52_check(a.q[j], b.q[j], c.q[j], add);
        a.q[j] += add;
    }
    return a;
}

EMU_FN emu_m512i emu_madd52hi_epu64(emu_m512i a, emu_m512i b, emu_m512i c)
{
    const uint64_t m52 = (UINT64_C(1) << 52) - 1;
    for (int j = 0; j < 8; j++) {
#ifdef EMU_BREAK_MADD52HI
        /* broken: the high half of a product truncated to 64 bits */
        uint64_t add = ((b.q[j] & m52) * (c.q[j] & m52)) >> 52;
#else
        emu_u128 t = (emu_u128)(b.q[j] & m52) * (c.q[j] & m52);
        uint64_t add = (uint64_t)(t >> 52) & m52;
#endif
        emu_madd52_check(a.q[j], b.q[j], c.q[j], add);
        a.q[j] += add;
    }
    return a;
}

/* Sum of the 8 elements, modulo 2^64. */
EMU_FN long long emu_reduce_add_epi64(emu_m512i a)
{
    uint64_t s = 0;
    for (int j = 0; j < 8; j++)
        s += a.q[j];
    return (long long)s;
}

/* ---- shuffles and permutes ------------------------------------------------------------ */

/* Within each 128-bit lane: INTERLEAVE_DWORDS(a, b) = a0 b0 a1 b1; _HIGH_: a2 b2 a3 b3 */
EMU_FN emu_m512i emu_unpacklo_epi32(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++) {
        r.d[4 * l + 0] = a.d[4 * l + 0];
        r.d[4 * l + 1] = b.d[4 * l + 0];
        r.d[4 * l + 2] = a.d[4 * l + 1];
        r.d[4 * l + 3] = b.d[4 * l + 1];
    }
    return r;
}

EMU_FN emu_m512i emu_unpackhi_epi32(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++) {
        r.d[4 * l + 0] = a.d[4 * l + 2];
        r.d[4 * l + 1] = b.d[4 * l + 2];
        r.d[4 * l + 2] = a.d[4 * l + 3];
        r.d[4 * l + 3] = b.d[4 * l + 3];
    }
    return r;
}

/* Within each 128-bit lane: INTERLEAVE_QWORDS(a, b) = a0 b0; _HIGH_: a1 b1 */
EMU_FN emu_m512i emu_unpacklo_epi64(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++) {
        r.q[2 * l + 0] = a.q[2 * l + 0];
        r.q[2 * l + 1] = b.q[2 * l + 0];
    }
    return r;
}

EMU_FN emu_m512i emu_unpackhi_epi64(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++) {
        r.q[2 * l + 0] = a.q[2 * l + 1];
        r.q[2 * l + 1] = b.q[2 * l + 1];
    }
    return r;
}

/* Within each 128-bit lane l: dst.dword[i] := a.dword[imm8[2i+1:2i]] (vpshufd) */
EMU_FN emu_m512i emu_shuffle_epi32(emu_m512i a, emu_mm_perm_enum imm8)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++)
        for (int i = 0; i < 4; i++) {
#ifdef EMU_BREAK_SHUFFLE_EPI32
            unsigned sel = (imm8 >> (2 * (3 - i))) & 3; /* broken: fields read in reverse */
#else
            unsigned sel = (imm8 >> (2 * i)) & 3;
#endif
            r.d[4 * l + i] = a.d[4 * l + sel];
        }
    return r;
}

/* dst.lane[0] := a.lane[imm8[1:0]]; dst.lane[1] := a.lane[imm8[3:2]];
 * dst.lane[2] := b.lane[imm8[5:4]]; dst.lane[3] := b.lane[imm8[7:6]] (128-bit lanes) */
EMU_FN emu_m512i emu_shuffle_i32x4(emu_m512i a, emu_m512i b, int imm8)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++) {
        unsigned sel = ((unsigned)imm8 >> (2 * l)) & 3;
#ifdef EMU_BREAK_SHUFFLE_I32X4
        const emu_m512i *src = &a; /* broken: the upper lanes come from a too */
        (void)b;
#else
        const emu_m512i *src = l < 2 ? &a : &b;
#endif
        memcpy(r.b + 16 * l, src->b + 16 * sel, 16);
    }
    return r;
}

/* FOR j := 0 to 7: dst[j] := a[idx[j][2:0]] */
EMU_FN emu_m512i emu_permutexvar_epi64(emu_m512i idx, emu_m512i a)
{
    emu_m512i r;
    for (int j = 0; j < 8; j++)
        r.q[j] = a.q[idx.q[j] & 7];
    return r;
}

/* FOR j := 0 to 7: off := idx[j][2:0];
 * IF k[j] dst[j] := idx[j][3] ? b[off] : a[off] ELSE dst[j] := 0 */
EMU_FN emu_m512i emu_maskz_permutex2var_epi64(emu_mmask8 k, emu_m512i a, emu_m512i idx,
                                              emu_m512i b)
{
    emu_m512i r;
    for (int j = 0; j < 8; j++) {
        unsigned off = (unsigned)(idx.q[j] & 7);
#ifdef EMU_BREAK_PERMUTEX2VAR
        int from_b = (idx.q[j] >> 4) & 1; /* broken: table bit 4 instead of 3 */
#else
        int from_b = (idx.q[j] >> 3) & 1;
#endif
        r.q[j] = ((k >> j) & 1) ? (from_b ? b.q[off] : a.q[off]) : 0;
    }
    return r;
}

/* ---- byte operations (AVX512BW) ------------------------------------------------------- */

EMU_FN emu_m512i emu_add_epi8(emu_m512i a, emu_m512i b)
{
    for (int j = 0; j < 64; j++)
        a.b[j] = (uint8_t)(a.b[j] + b.b[j]);
    return a;
}

/* Within each 128-bit lane: INTERLEAVE_BYTES(a, b) = a0 b0 a1 b1 .. a7 b7;
 * _HIGH_: a8 b8 .. a15 b15 */
EMU_FN emu_m512i emu_unpacklo_epi8(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++)
        for (int i = 0; i < 8; i++) {
            r.b[16 * l + 2 * i] = a.b[16 * l + i];
            r.b[16 * l + 2 * i + 1] = b.b[16 * l + i];
        }
    return r;
}

EMU_FN emu_m512i emu_unpackhi_epi8(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int l = 0; l < 4; l++)
        for (int i = 0; i < 8; i++) {
            r.b[16 * l + 2 * i] = a.b[16 * l + 8 + i];
            r.b[16 * l + 2 * i + 1] = b.b[16 * l + 8 + i];
        }
    return r;
}

/* ---- GFNI (Intel SDM vol. 2: GF2P8AFFINEQB, GF2P8AFFINEINVQB) --------------------------- */

/* "inverse(x)": the multiplicative inverse in GF(2^8) with reduction polynomial
 * x^8 + x^4 + x^3 + x + 1, inverse(0) = 0. A table filled at load time by searching for
 * the y with x * y = 1 (selfcheck.c checks it against x^254 computed another way). */
static uint8_t emu_gf_inverse[256];

static __attribute__((unused)) uint8_t emu_gf_mul(uint8_t a, uint8_t b)
{
    unsigned r = 0, x = a;
    for (int i = 0; i < 8; i++) {
        if ((b >> i) & 1)
            r ^= x;
        x <<= 1;
        if (x & 0x100)
            x ^= 0x11b;
    }
    return (uint8_t)r;
}

__attribute__((constructor, unused)) static void emu_gf_init(void)
{
    for (unsigned x = 1; x < 256; x++)
        for (unsigned y = 1; y < 256; y++)
            if (emu_gf_mul((uint8_t)x, (uint8_t)y) == 1) {
                emu_gf_inverse[x] = (uint8_t)y;
                break;
            }
}

/* affine_byte(tsrc2qw, src1byte, imm): FOR i := 0 to 7:
 *     retbyte.bit[i] := parity(tsrc2qw.byte[7-i] AND src1byte) XOR imm8.bit[i] */
static __attribute__((unused)) uint8_t emu_affine_byte(uint64_t m, uint8_t x, uint8_t imm, int mirrored)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t row = (uint8_t)(m >> (8 * (mirrored ? i : 7 - i)));
        r |= (uint8_t)(__builtin_parity(row & x) << i);
    }
    return r ^ imm;
}

/* FOR j := 0 to 7: FOR b := 0 to 7:
 *     dst.qword[j].byte[b] := affine_byte(A.qword[j], x.qword[j].byte[b], b_imm) */
EMU_FN emu_m512i emu_gf2p8affine_epi64_epi8(emu_m512i x, emu_m512i A, int b)
{
#ifdef EMU_BREAK_GF2P8AFFINE
    const int mirrored = 1; /* broken: row i read from byte i, not 7 - i */
#else
    const int mirrored = 0;
#endif
    for (int j = 0; j < 64; j++)
        x.b[j] = emu_affine_byte(A.q[j / 8], x.b[j], (uint8_t)b, mirrored);
    return x;
}

/* The same with affine_inverse_byte: parity(tsrc2qw.byte[7-i] AND inverse(src1byte)). */
EMU_FN emu_m512i emu_gf2p8affineinv_epi64_epi8(emu_m512i x, emu_m512i A, int b)
{
    for (int j = 0; j < 64; j++) {
#ifdef EMU_BREAK_GF2P8AFFINEINV
        /* broken: the inverse taken after the affine map */
        x.b[j] = emu_gf_inverse[emu_affine_byte(A.q[j / 8], x.b[j], (uint8_t)b, 0)];
#else
        x.b[j] = emu_affine_byte(A.q[j / 8], emu_gf_inverse[x.b[j]], (uint8_t)b, 0);
#endif
    }
    return x;
}

/* ---- SHA-512 schedule (src/sha512/avx512.c) --------------------------------------------
 * Breaks: ROR_EPI64 (rotates left), ALIGNR_EPI64 (a and b swapped), SHUFFLE_EPI8 (every
 * lane indexes lane 0). _mm512_shuffle_i64x2 and _mm512_permutex2var_epi64 are the
 * unmasked forms of emulations above, so SHUFFLE_I32X4 and PERMUTEX2VAR break them too. */

/* RIGHT_ROTATE_QWORDS(src, count_src): count := count_src % 64;
 * RETURN (src >> count) OR (src << (64 - count)); for each element, count_src = imm8. */
EMU_FN emu_m512i emu_ror_epi64(emu_m512i a, int imm8)
{
    unsigned n = (unsigned)imm8 % 64;
    for (int j = 0; j < 8; j++) {
        uint64_t x = a.q[j];
#ifdef EMU_BREAK_ROR_EPI64
        a.q[j] = n ? (x << n) | (x >> (64 - n)) : x; /* broken: rotates left */
#else
        a.q[j] = n ? (x >> n) | (x << (64 - n)) : x;
#endif
    }
    return a;
}

/* temp[1023:512] := a; temp[511:0] := b; temp := temp >> (64 * imm8[2:0]);
 * dst := temp[511:0] (valignq) */
EMU_FN emu_m512i emu_alignr_epi64(emu_m512i a, emu_m512i b, int imm8)
{
    uint64_t temp[16];
    emu_m512i r;
#ifdef EMU_BREAK_ALIGNR_EPI64
    memcpy(temp, a.q, 64); /* broken: a is the low half */
    memcpy(temp + 8, b.q, 64);
#else
    memcpy(temp, b.q, 64);
    memcpy(temp + 8, a.q, 64);
#endif
    for (int j = 0; j < 8; j++)
        r.q[j] = temp[j + ((unsigned)imm8 & 7)];
    return r;
}

/* FOR j := 0 to 63: IF b.byte[j][7] dst.byte[j] := 0
 * ELSE index[5:0] := b.byte[j][3:0] + (j & 0x30); dst.byte[j] := a.byte[index] (vpshufb) */
EMU_FN emu_m512i emu_shuffle_epi8(emu_m512i a, emu_m512i b)
{
    emu_m512i r;
    for (int j = 0; j < 64; j++) {
#ifdef EMU_BREAK_SHUFFLE_EPI8
        unsigned index = b.b[j] & 0x0f; /* broken: the lane offset left out */
#else
        unsigned index = (b.b[j] & 0x0fu) + ((unsigned)j & 0x30);
#endif
        r.b[j] = (b.b[j] & 0x80) ? 0 : a.b[index];
    }
    return r;
}

/* vpermt2q without a mask: every k[j] = 1. */
EMU_FN emu_m512i emu_permutex2var_epi64(emu_m512i a, emu_m512i idx, emu_m512i b)
{
    return emu_maskz_permutex2var_epi64(0xff, a, idx, b);
}

#undef _mm512_ror_epi64
#undef _mm512_alignr_epi64
#undef _mm512_shuffle_epi8
#undef _mm512_permutex2var_epi64
#undef _mm512_shuffle_i64x2
#define _mm512_ror_epi64 emu_ror_epi64
#define _mm512_alignr_epi64 emu_alignr_epi64
#define _mm512_shuffle_epi8 emu_shuffle_epi8
#define _mm512_permutex2var_epi64 emu_permutex2var_epi64
/* vshufi64x2 and vshufi32x4 select the same 128-bit lanes; they differ only in masking. */
#define _mm512_shuffle_i64x2 emu_shuffle_i32x4

/* ---- the names the kernels use ---------------------------------------------------- */

#undef _mm512_setzero_si512
#undef _mm512_set1_epi32
#undef _mm512_set1_epi64
#undef _mm512_setr_epi32
#undef _mm512_setr_epi64
#undef _mm512_broadcast_i32x4
#undef _mm512_loadu_si512
#undef _mm512_load_si512
#undef _mm512_storeu_si512
#undef _mm512_store_si512
#undef _mm512_maskz_loadu_epi8
#undef _mm512_maskz_loadu_epi64
#undef _mm512_mask_storeu_epi8
#undef _mm512_add_epi32
#undef _mm512_add_epi64
#undef _mm512_sub_epi64
#undef _mm512_mask_add_epi64
#undef _mm512_maskz_mov_epi64
#undef _mm512_and_si512
#undef _mm512_or_si512
#undef _mm512_xor_si512
#undef _mm512_slli_epi64
#undef _mm512_srli_epi64
#undef _mm512_srli_epi32
#undef _mm512_rol_epi32
#undef _mm512_ternarylogic_epi64
#undef _mm512_madd52lo_epu64
#undef _mm512_madd52hi_epu64
#undef _mm512_reduce_add_epi64
#undef _mm512_unpacklo_epi32
#undef _mm512_unpackhi_epi32
#undef _mm512_unpacklo_epi64
#undef _mm512_unpackhi_epi64
#undef _mm512_shuffle_epi32
#undef _mm512_shuffle_i32x4
#undef _mm512_permutexvar_epi64
#undef _mm512_maskz_permutex2var_epi64
#undef _mm512_add_epi8
#undef _mm512_unpacklo_epi8
#undef _mm512_unpackhi_epi8
#undef _mm512_gf2p8affine_epi64_epi8
#undef _mm512_gf2p8affineinv_epi64_epi8

#define _mm512_setzero_si512 emu_setzero_si512
#define _mm512_set1_epi32 emu_set1_epi32
#define _mm512_set1_epi64 emu_set1_epi64
#define _mm512_setr_epi32 emu_setr_epi32
#define _mm512_setr_epi64 emu_setr_epi64
#define _mm512_broadcast_i32x4 emu_broadcast_i32x4
#define _mm512_loadu_si512 emu_loadu_si512
#define _mm512_load_si512 emu_load_si512
#define _mm512_storeu_si512 emu_storeu_si512
#define _mm512_store_si512 emu_store_si512
#define _mm512_maskz_loadu_epi8 emu_maskz_loadu_epi8
#define _mm512_maskz_loadu_epi64 emu_maskz_loadu_epi64
#define _mm512_mask_storeu_epi8 emu_mask_storeu_epi8
#define _mm512_add_epi32 emu_add_epi32
#define _mm512_add_epi64 emu_add_epi64
#define _mm512_sub_epi64 emu_sub_epi64
#define _mm512_mask_add_epi64 emu_mask_add_epi64
#define _mm512_maskz_mov_epi64 emu_maskz_mov_epi64
#define _mm512_and_si512 emu_and_si512
#define _mm512_or_si512 emu_or_si512
#define _mm512_xor_si512 emu_xor_si512
#define _mm512_slli_epi64 emu_slli_epi64
#define _mm512_srli_epi64 emu_srli_epi64
#define _mm512_srli_epi32 emu_srli_epi32
#define _mm512_rol_epi32 emu_rol_epi32
#define _mm512_ternarylogic_epi64 emu_ternarylogic_epi64
#define _mm512_madd52lo_epu64 emu_madd52lo_epu64
#define _mm512_madd52hi_epu64 emu_madd52hi_epu64
#define _mm512_reduce_add_epi64 emu_reduce_add_epi64
#define _mm512_unpacklo_epi32 emu_unpacklo_epi32
#define _mm512_unpackhi_epi32 emu_unpackhi_epi32
#define _mm512_unpacklo_epi64 emu_unpacklo_epi64
#define _mm512_unpackhi_epi64 emu_unpackhi_epi64
#define _mm512_shuffle_epi32 emu_shuffle_epi32
#define _mm512_shuffle_i32x4 emu_shuffle_i32x4
#define _mm512_permutexvar_epi64 emu_permutexvar_epi64
#define _mm512_maskz_permutex2var_epi64 emu_maskz_permutex2var_epi64
#define _mm512_add_epi8 emu_add_epi8
#define _mm512_unpacklo_epi8 emu_unpacklo_epi8
#define _mm512_unpackhi_epi8 emu_unpackhi_epi8
#define _mm512_gf2p8affine_epi64_epi8 emu_gf2p8affine_epi64_epi8
#define _mm512_gf2p8affineinv_epi64_epi8 emu_gf2p8affineinv_epi64_epi8

#endif
