/* Shared static-inline helpers: explicit-endian loads/stores, rotates, wiping,
 * constant-time comparison, AC_INLINE. No pointer casts for byte order: s390x is big-endian. */
#ifndef ARCHCRYPT_COMMON_H
#define ARCHCRYPT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "archcrypt.h"

#if defined(__GNUC__)
#define AC_UNUSED __attribute__((unused))
#define AC_LIKELY(x) __builtin_expect(!!(x), 1)
#define AC_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For the small helpers of a kernel's inner loop: inlined even where gcc's size
 * heuristics would keep a call (they count the intrinsics, not the instructions). */
#define AC_INLINE static inline __attribute__((always_inline))
#else
#define AC_UNUSED
#define AC_LIKELY(x) (x)
#define AC_UNLIKELY(x) (x)
#define AC_INLINE static inline
#endif

static inline uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint32_t load32_be(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t load64_le(const uint8_t *p)
{
    return (uint64_t)load32_le(p) | ((uint64_t)load32_le(p + 4) << 32);
}

static inline uint64_t load64_be(const uint8_t *p)
{
    return ((uint64_t)load32_be(p) << 32) | (uint64_t)load32_be(p + 4);
}

static inline void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void store32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void store64_le(uint8_t *p, uint64_t v)
{
    store32_le(p, (uint32_t)v);
    store32_le(p + 4, (uint32_t)(v >> 32));
}

static inline void store64_be(uint8_t *p, uint64_t v)
{
    store32_be(p, (uint32_t)(v >> 32));
    store32_be(p + 4, (uint32_t)v);
}

static inline uint32_t rotl32(uint32_t x, unsigned n)
{
    return (x << (n & 31)) | (x >> ((32 - n) & 31));
}

static inline uint32_t rotr32(uint32_t x, unsigned n)
{
    return (x >> (n & 31)) | (x << ((32 - n) & 31));
}

static inline uint64_t rotl64(uint64_t x, unsigned n)
{
    return (x << (n & 63)) | (x >> ((64 - n) & 63));
}

static inline uint64_t rotr64(uint64_t x, unsigned n)
{
    return (x >> (n & 63)) | (x << ((64 - n) & 63));
}

/* Zero secrets in a way the optimiser may not drop (a dead store before free or return):
 * the empty asm takes the pointer and clobbers memory, so the stores must happen. memset
 * of a small constant size becomes a few stores; for a variable size it is libc's. */
static inline void ac_wipe(void *p, size_t n)
{
#if defined(__GNUC__)
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
#else
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (n--)
        *v++ = 0;
#endif
}

/* The same for n a multiple of 8 at an 8-byte aligned p, as 64-bit stores that the
 * compiler may merge into its widest vector stores but never turns into a memset call:
 * for tables wiped on every call (a Poly1305 key's powers, a Camellia key's byte-sliced
 * tables), where memset of a variable size is a libc call and, on AMD cores, `rep stosq`
 * with ~100 cycles of start-up. The barrier every 32 bytes keeps the loop a loop;
 * unrolled, a 640-byte table costs its 20 ymm stores and little more. */
static inline void ac_wipe_words(void *p, size_t n)
{
#if defined(__GNUC__)
    typedef uint64_t __attribute__((may_alias)) ac_word;
    ac_word *w = (ac_word *)p;

    _Pragma("GCC unroll 8") for (size_t quads = n / 32; quads > 0; quads--, w += 4) {
        w[0] = 0;
        w[1] = 0;
        w[2] = 0;
        w[3] = 0;
        __asm__ __volatile__("" : : : "memory");
    }
    for (size_t rest = n / 8 % 4; rest > 0; rest--, w++) {
        w[0] = 0;
        __asm__ __volatile__("" : : : "memory");
    }
    __asm__ __volatile__("" : : "r"(p) : "memory");
#else
    ac_wipe(p, n);
#endif
}

#if defined(__AVX512F__)
#include <immintrin.h>
/* The same in 64-byte stores, for the AVX-512 rows' lane buffers (n a multiple of 64 at a
 * 64-byte aligned p): a 16-lane SHA-256 batch wipes 3.5 KiB of schedule, transposes and
 * state a call, and ac_wipe's memset of it is `rep stosq`, whose start-up showed on
 * one-block calls. Volatile stores: never merged away, never a libc call. */
static inline void ac_wipe_zmm(void *p, size_t n)
{
    volatile __m512i *v = (volatile __m512i *)p;

    for (size_t i = 0; i < n / 64; i++)
        v[i] = _mm512_setzero_si512();
}
#endif

/* The one way a secret-derived value becomes public: the accept/reject bit of a tag check
 * is what the API answers, so branching on it once computed (to wipe a failed open's
 * output) tells nothing more. The constant-time check (tests/ct: valgrind memcheck with the
 * secrets marked undefined) builds with ARCHCRYPT_CTGRIND, where this marks the value
 * defined; in every other build it is nothing. */
#ifdef ARCHCRYPT_CTGRIND
#include <valgrind/memcheck.h>
#define AC_DECLASSIFY(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define AC_DECLASSIFY(p, n) ((void)(p), (void)(n))
#endif

/* 1 when equal, 0 otherwise; time depends only on n. */
static inline int ac_ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (uint32_t)(a[i] ^ b[i]);
    /* d is 0..255: (d - 1) >> 8 is all-ones only for d == 0. */
    return (int)(((d - 1) >> 8) & 1);
}

#endif
