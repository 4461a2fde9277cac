/* Self-check of the AVX-512 emulation (emu512.h): each emulated intrinsic against real
 * SSE2/SSSE3/AVX2 instructions, 128-bit lane by lane, where this machine has an equivalent
 * (pshufb for vpshufb, palignr for valignq's lanes); against Intel's pseudo-code written
 * out a second, independent way plus worked examples where it has none (cross-lane
 * permutes, IFMA); GFNI against GF(2^8) arithmetic written
 * another way and the AES S-box from real AES-NI (gf2p8affineinvqb with AES's affine map
 * is SubBytes, a published identity); masked accesses against guard pages; the
 * contract traps (IFMA input >= 2^52, misaligned aligned load/store) in child processes.
 * Built and run by `make emu-check` before the library self-test. */
#include "emu512.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#ifndef EMU_ARCHCRYPT_AVX512
#error "selfcheck.c checks tests/emu/emu512.h"
#endif

static unsigned long checks, failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        checks++;                                                                         \
        if (!(cond)) {                                                                    \
            if (failures++ < 30) {                                                        \
                fprintf(stderr, "emu512 self-check FAIL (line %d): ", __LINE__);          \
                fprintf(stderr, __VA_ARGS__);                                             \
                fputc('\n', stderr);                                                      \
            }                                                                             \
        }                                                                                 \
    } while (0)

static uint64_t rng = 0x243f6a8885a308d3u;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static emu_m512i rnd512(void)
{
    emu_m512i v;
    for (int j = 0; j < 8; j++)
        v.q[j] = rnd();
    /* sometimes extreme words, where carries and sign bits matter */
    if (rnd() % 4 == 0)
        v.q[rnd() % 8] = ~UINT64_C(0);
    if (rnd() % 4 == 0)
        v.d[rnd() % 16] = 0x80000000u;
    return v;
}

static __m128i lane(emu_m512i v, int l)
{
    return _mm_loadu_si128((const __m128i *)(const void *)(v.b + 16 * l));
}

static int lane_eq(emu_m512i got, int l, __m128i want)
{
    uint8_t w[16];
    _mm_storeu_si128((__m128i *)(void *)w, want);
    return memcmp(got.b + 16 * l, w, 16) == 0;
}

/* got equals the four lanes want[0..3] */
static int lanes_eq(emu_m512i got, const __m128i want[4])
{
    return lane_eq(got, 0, want[0]) && lane_eq(got, 1, want[1]) && lane_eq(got, 2, want[2]) &&
           lane_eq(got, 3, want[3]);
}

/* ---- element-wise and in-lane operations against SSE2, four lanes at a time ------------- */

#define LANEWISE2(emu_call, sse_expr, name)                                               \
    do {                                                                                  \
        for (int it = 0; it < 200; it++) {                                                \
            emu_m512i a = rnd512(), b = rnd512();                                         \
            __m128i want[4];                                                              \
            for (int l = 0; l < 4; l++) {                                                 \
                __m128i x = lane(a, l), y = lane(b, l);                                   \
                want[l] = (sse_expr);                                                     \
            }                                                                             \
            CHECK(lanes_eq(emu_call, want), "%s", name);                                  \
        }                                                                                 \
    } while (0)

static void check_lanewise(void)
{
    LANEWISE2(_mm512_add_epi32(a, b), _mm_add_epi32(x, y), "add_epi32");
    LANEWISE2(_mm512_add_epi64(a, b), _mm_add_epi64(x, y), "add_epi64");
    LANEWISE2(_mm512_sub_epi64(a, b), _mm_sub_epi64(x, y), "sub_epi64");
    LANEWISE2(_mm512_and_si512(a, b), _mm_and_si128(x, y), "and_si512");
    LANEWISE2(_mm512_or_si512(a, b), _mm_or_si128(x, y), "or_si512");
    LANEWISE2(_mm512_xor_si512(a, b), _mm_xor_si128(x, y), "xor_si512");
    LANEWISE2(_mm512_unpacklo_epi32(a, b), _mm_unpacklo_epi32(x, y), "unpacklo_epi32");
    LANEWISE2(_mm512_unpackhi_epi32(a, b), _mm_unpackhi_epi32(x, y), "unpackhi_epi32");
    LANEWISE2(_mm512_unpacklo_epi64(a, b), _mm_unpacklo_epi64(x, y), "unpacklo_epi64");
    LANEWISE2(_mm512_unpackhi_epi64(a, b), _mm_unpackhi_epi64(x, y), "unpackhi_epi64");
    LANEWISE2(_mm512_add_epi8(a, b), _mm_add_epi8(x, y), "add_epi8");
    LANEWISE2(_mm512_unpacklo_epi8(a, b), _mm_unpacklo_epi8(x, y), "unpacklo_epi8");
    LANEWISE2(_mm512_unpackhi_epi8(a, b), _mm_unpackhi_epi8(x, y), "unpackhi_epi8");
    (void)0;
}

/* Shift and rotate counts: every count an 8-bit immediate can hold. SSE2 psllq/psrlq with
 * a register count give 0 from 64 on, as vpsllq does. rol against sll | srl (32-bit); ror
 * (64-bit, count mod 64) against srl | sll and against the scalar rotate, whose left count
 * -r & 63 keeps r = 0 defined without the emulation's special case. */
static void check_shifts(void)
{
    for (unsigned n = 0; n < 256; n++) {
        emu_m512i a = rnd512();
        __m128i cnt = _mm_cvtsi32_si128((int)n), want_l[4], want_r[4];
        for (int l = 0; l < 4; l++) {
            want_l[l] = _mm_sll_epi64(lane(a, l), cnt);
            want_r[l] = _mm_srl_epi64(lane(a, l), cnt);
        }
        CHECK(lanes_eq(_mm512_slli_epi64(a, n), want_l), "slli_epi64 by %u", n);
        CHECK(lanes_eq(_mm512_srli_epi64(a, n), want_r), "srli_epi64 by %u", n);
        for (int l = 0; l < 4; l++)
            want_r[l] = _mm_srl_epi32(lane(a, l), cnt);
        CHECK(lanes_eq(_mm512_srli_epi32(a, n), want_r), "srli_epi32 by %u", n);

        unsigned r = n % 32;
        __m128i cl = _mm_cvtsi32_si128((int)r), cr = _mm_cvtsi32_si128((int)(32 - r)), want[4];
        for (int l = 0; l < 4; l++)
            want[l] = _mm_or_si128(_mm_sll_epi32(lane(a, l), cl), _mm_srl_epi32(lane(a, l), cr));
        CHECK(lanes_eq(_mm512_rol_epi32(a, (int)n), want), "rol_epi32 by %u", n);

        unsigned q = n % 64;
        __m128i qr = _mm_cvtsi32_si128((int)q), ql = _mm_cvtsi32_si128((int)(64 - q));
        for (int l = 0; l < 4; l++)
            want[l] = _mm_or_si128(_mm_srl_epi64(lane(a, l), qr), _mm_sll_epi64(lane(a, l), ql));
        emu_m512i ror = _mm512_ror_epi64(a, (int)n);
        CHECK(lanes_eq(ror, want), "ror_epi64 by %u", n);
        int ok = 1;
        for (int j = 0; j < 8; j++)
            ok &= ror.q[j] == ((a.q[j] >> q) | (a.q[j] << (-q & 63)));
        CHECK(ok, "ror_epi64 by %u against the scalar rotate", n);
    }
    /* worked examples: the low bit wraps to the top; bytes move down one place */
    CHECK(_mm512_ror_epi64(_mm512_set1_epi64(1), 1).q[4] == UINT64_C(1) << 63, "ror_epi64 1 by 1");
    CHECK(_mm512_srli_epi32(_mm512_set1_epi32((int)0x80000001u), 3).d[9] == 0x10000000u,
          "srli_epi32: no bit crosses into the next dword");
    CHECK(_mm512_ror_epi64(_mm512_set1_epi64(0x0102030405060708), 8).q[1] == 0x0801020304050607,
          "ror_epi64 by 8");
}

/* vpshufd: every immediate, against SSE2 pshufd (which needs a constant immediate). */
static __m128i pshufd(__m128i x, unsigned imm)
{
    switch (imm) {
#define SH1(i)                                                                            \
    case (i):                                                                             \
        return _mm_shuffle_epi32(x, (i));
#define SH4(i) SH1(i) SH1((i) + 1) SH1((i) + 2) SH1((i) + 3)
#define SH16(i) SH4(i) SH4((i) + 4) SH4((i) + 8) SH4((i) + 12)
#define SH64(i) SH16(i) SH16((i) + 16) SH16((i) + 32) SH16((i) + 48)
        SH64(0) SH64(64) SH64(128) SH64(192)
#undef SH64
#undef SH16
#undef SH4
#undef SH1
    }
    return _mm_setzero_si128();
}

static void check_shuffle_epi32(void)
{
    for (unsigned imm = 0; imm < 256; imm++) {
        emu_m512i a = rnd512();
        __m128i want[4];
        for (int l = 0; l < 4; l++)
            want[l] = pshufd(lane(a, l), imm);
        CHECK(lanes_eq(_mm512_shuffle_epi32(a, (_MM_PERM_ENUM)imm), want), "shuffle_epi32 %#x",
              imm);
    }
}

/* vpshufb: each 128-bit lane against SSSE3 pshufb (a scalar per-lane table lookup on a CPU
 * without SSSE3). Random indices have the zeroing bit 7 set half the time and junk in bits
 * 6:4, which both instructions ignore; then indices without bit 7, and all-zeroing ones. */
__attribute__((target("ssse3"))) static __m128i pshufb_ssse3(__m128i x, __m128i idx)
{
    return _mm_shuffle_epi8(x, idx);
}

static __m128i pshufb_scalar(__m128i x, __m128i idx)
{
    uint8_t t[16], i[16], r[16];
    _mm_storeu_si128((__m128i *)(void *)t, x);
    _mm_storeu_si128((__m128i *)(void *)i, idx);
    for (int j = 0; j < 16; j++)
        r[j] = i[j] >= 0x80 ? 0 : t[i[j] % 16];
    return _mm_loadu_si128((const __m128i *)(const void *)r);
}

static void check_shuffle_epi8(void)
{
    const int ssse3 = __builtin_cpu_supports("ssse3");
    for (int it = 0; it < 600; it++) {
        emu_m512i a = rnd512(), b = rnd512();
        if (it % 3 == 1)
            b = _mm512_and_si512(b, _mm512_set1_epi64(0x7f7f7f7f7f7f7f7f));
        else if (it % 3 == 2)
            b = _mm512_or_si512(b, _mm512_set1_epi64((long long)0x8080808080808080ULL));
        __m128i want[4];
        for (int l = 0; l < 4; l++)
            want[l] = ssse3 ? pshufb_ssse3(lane(a, l), lane(b, l))
                            : pshufb_scalar(lane(a, l), lane(b, l));
        CHECK(lanes_eq(_mm512_shuffle_epi8(a, b), want), "shuffle_epi8");
    }
    /* sha512/avx512.c's use: a byte swap of every qword */
    emu_m512i x = rnd512();
    const emu_m512i bswap = _mm512_setr_epi64(0x0001020304050607, 0x08090a0b0c0d0e0f,
                                              0x0001020304050607, 0x08090a0b0c0d0e0f,
                                              0x0001020304050607, 0x08090a0b0c0d0e0f,
                                              0x0001020304050607, 0x08090a0b0c0d0e0f);
    emu_m512i s = _mm512_shuffle_epi8(x, bswap);
    for (int j = 0; j < 8; j++)
        CHECK(s.q[j] == __builtin_bswap64(x.q[j]), "shuffle_epi8 qword byte swap, qword %d", j);
}

/* vpternlogq: every immediate, against its minterm expansion in SSE2 and/andnot/or. */
static void check_ternarylogic(void)
{
    const __m128i ones = _mm_set1_epi32(-1);
    for (unsigned imm = 0; imm < 256; imm++) {
        emu_m512i a = rnd512(), b = rnd512(), c = rnd512();
        __m128i want[4];
        for (int l = 0; l < 4; l++) {
            __m128i x = lane(a, l), y = lane(b, l), z = lane(c, l), acc = _mm_setzero_si128();
            for (unsigned m = 0; m < 8; m++) {
                if (!((imm >> m) & 1))
                    continue;
                __m128i tx = (m & 4) ? x : _mm_xor_si128(x, ones);
                __m128i ty = (m & 2) ? y : _mm_xor_si128(y, ones);
                __m128i tz = (m & 1) ? z : _mm_xor_si128(z, ones);
                acc = _mm_or_si128(acc, _mm_and_si128(tx, _mm_and_si128(ty, tz)));
            }
            want[l] = acc;
        }
        emu_m512i got = _mm512_ternarylogic_epi64(a, b, c, (int)imm);
        CHECK(lanes_eq(got, want), "ternarylogic_epi64 %#x", imm);
        /* and the SDM's loop, bit by bit: dst[h] := imm8[a[h] << 2 | b[h] << 1 | c[h]] */
        int ok = 1;
        for (int j = 0; j < 8; j++)
            for (int h = 0; h < 64; h++) {
                unsigned idx = (unsigned)((a.q[j] >> h) & 1) << 2 |
                               (unsigned)((b.q[j] >> h) & 1) << 1 | (unsigned)((c.q[j] >> h) & 1);
                ok &= ((got.q[j] >> h) & 1) == ((imm >> idx) & 1);
            }
        CHECK(ok, "ternarylogic_epi64 %#x against the bit-by-bit pseudo-code", imm);
    }
    /* the kernel's immediate, by its meaning: 0xa8 = (A | B) & C */
    emu_m512i a = rnd512(), b = rnd512(), c = rnd512(), r = _mm512_ternarylogic_epi64(a, b, c, 0xa8);
    for (int j = 0; j < 8; j++)
        CHECK(r.q[j] == ((a.q[j] | b.q[j]) & c.q[j]), "ternarylogic 0xa8 is (A | B) & C");
}

/* mask_add / maskz_mov against SSE2 blends with qword masks built from the bits. */
static __m128i qmask(unsigned k, int l)
{
    return _mm_set_epi64x(-(long long)((k >> (2 * l + 1)) & 1), -(long long)((k >> (2 * l)) & 1));
}

static void check_masked_arith(void)
{
    for (unsigned k = 0; k < 256; k++) {
        emu_m512i s = rnd512(), a = rnd512(), b = rnd512();
        __m128i wadd[4], wmov[4];
        for (int l = 0; l < 4; l++) {
            __m128i m = qmask(k, l);
            wadd[l] = _mm_or_si128(_mm_and_si128(m, _mm_add_epi64(lane(a, l), lane(b, l))),
                                   _mm_andnot_si128(m, lane(s, l)));
            wmov[l] = _mm_and_si128(m, lane(a, l));
        }
        CHECK(lanes_eq(_mm512_mask_add_epi64(s, (__mmask8)k, a, b), wadd), "mask_add_epi64 k=%#x",
              k);
        CHECK(lanes_eq(_mm512_maskz_mov_epi64((__mmask8)k, a), wmov), "maskz_mov_epi64 k=%#x", k);
    }
}

static void check_set_and_reduce(void)
{
    for (int it = 0; it < 100; it++) {
        uint64_t v[16];
        for (int j = 0; j < 16; j++)
            v[j] = rnd();
        int e[16];
        for (int j = 0; j < 16; j++)
            e[j] = (int)(uint32_t)v[j];
        __m128i w32[4], w64[4], s32[4], s64[4], bc[4];
        for (int l = 0; l < 4; l++) {
            w32[l] = _mm_setr_epi32(e[4 * l], e[4 * l + 1], e[4 * l + 2], e[4 * l + 3]);
            w64[l] = _mm_set_epi64x((long long)v[2 * l + 1], (long long)v[2 * l]);
            s32[l] = _mm_set1_epi32(e[0]);
            s64[l] = _mm_set1_epi64x((long long)v[0]);
            bc[l] = w32[0];
        }
        CHECK(lanes_eq(_mm512_setr_epi32(e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9],
                                         e[10], e[11], e[12], e[13], e[14], e[15]),
                       w32),
              "setr_epi32");
        CHECK(lanes_eq(_mm512_setr_epi64((long long)v[0], (long long)v[1], (long long)v[2],
                                         (long long)v[3], (long long)v[4], (long long)v[5],
                                         (long long)v[6], (long long)v[7]),
                       w64),
              "setr_epi64");
        CHECK(lanes_eq(_mm512_set1_epi32(e[0]), s32), "set1_epi32");
        CHECK(lanes_eq(_mm512_set1_epi64((long long)v[0]), s64), "set1_epi64");
        CHECK(lanes_eq(_mm512_broadcast_i32x4(w32[0]), bc), "broadcast_i32x4");

        emu_m512i a = rnd512();
        __m128i sum = _mm_add_epi64(_mm_add_epi64(lane(a, 0), lane(a, 1)),
                                    _mm_add_epi64(lane(a, 2), lane(a, 3)));
        sum = _mm_add_epi64(sum, _mm_unpackhi_epi64(sum, sum));
        CHECK((uint64_t)_mm512_reduce_add_epi64(a) == (uint64_t)_mm_cvtsi128_si64(sum),
              "reduce_add_epi64");
    }
    emu_m512i z = _mm512_setzero_si512();
    for (int j = 0; j < 8; j++)
        CHECK(z.q[j] == 0, "setzero_si512");
}

/* ---- memory: masked accesses against SSE2/AVX2 and guard pages ----------------------------- */

static __m128i bytemask(uint64_t k, int l)
{
    uint8_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = ((k >> (16 * l + i)) & 1) ? 0xff : 0;
    return _mm_loadu_si128((const __m128i *)(const void *)m);
}

static uint64_t rnd_mask64(void)
{
    switch (rnd() % 5) {
    case 0: return 0;
    case 1: return ~UINT64_C(0);
    case 2: return (UINT64_C(1) << (rnd() % 64)) - 1; /* the kernel's prefix masks */
    default: return rnd();
    }
}

__attribute__((target("avx2"))) static void maskload64_avx2(__m128i out[4], const void *p,
                                                            unsigned k)
{
    for (int h = 0; h < 2; h++) {
        __m256i m = _mm256_set_epi64x(-(long long)((k >> (4 * h + 3)) & 1),
                                      -(long long)((k >> (4 * h + 2)) & 1),
                                      -(long long)((k >> (4 * h + 1)) & 1),
                                      -(long long)((k >> (4 * h)) & 1));
        __m256i v = _mm256_maskload_epi64((const long long *)p + 4 * h, m);
        out[2 * h] = _mm256_castsi256_si128(v);
        out[2 * h + 1] = _mm256_extracti128_si256(v, 1);
    }
}

static void check_memory(void)
{
    _Alignas(64) uint8_t src[64 + 64], dst[64 + 64], ref[64 + 64];
    const int avx2 = __builtin_cpu_supports("avx2");

    for (int it = 0; it < 400; it++) {
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = (uint8_t)rnd();
        size_t off = (size_t)(rnd() % 64);
        uint64_t k = rnd_mask64();
        emu_m512i a = rnd512();

        /* loadu/storeu/load/store */
        emu_m512i v = _mm512_loadu_si512(src + off);
        CHECK(memcmp(v.b, src + off, 64) == 0, "loadu_si512");
        _mm512_storeu_si512(dst + off, a);
        CHECK(memcmp(dst + off, a.b, 64) == 0, "storeu_si512");
        v = _mm512_load_si512(src);
        CHECK(memcmp(v.b, src, 64) == 0, "load_si512");
        _mm512_store_si512(dst + 64, a);
        CHECK(memcmp(dst + 64, a.b, 64) == 0, "store_si512");

        /* maskz_loadu_epi8 against a full load and a byte mask */
        __m128i want[4];
        for (int l = 0; l < 4; l++)
            want[l] = _mm_and_si128(bytemask(k, l),
                                    _mm_loadu_si128((const __m128i *)(const void *)(src + off + 16 * l)));
        CHECK(lanes_eq(_mm512_maskz_loadu_epi8(k, src + off), want), "maskz_loadu_epi8 k=%#llx",
              (unsigned long long)k);

        /* maskz_loadu_epi64 against AVX2 vpmaskmovq (or SSE2 and-mask without AVX2) */
        unsigned k8 = (unsigned)(k & 0xff);
        if (avx2) {
            maskload64_avx2(want, src + off, k8);
        } else {
            for (int l = 0; l < 4; l++)
                want[l] = _mm_and_si128(qmask(k8, l),
                                        _mm_loadu_si128((const __m128i *)(const void *)(src + off + 16 * l)));
        }
        CHECK(lanes_eq(_mm512_maskz_loadu_epi64((__mmask8)k8, src + off), want),
              "maskz_loadu_epi64 k=%#x", k8);

        /* mask_storeu_epi8 against SSE2 maskmovdqu, on identical backgrounds */
        for (size_t i = 0; i < sizeof dst; i++)
            dst[i] = ref[i] = (uint8_t)rnd();
        _mm512_mask_storeu_epi8(dst + off, k, a);
        for (int l = 0; l < 4; l++)
            _mm_maskmoveu_si128(lane(a, l), bytemask(k, l), (char *)(ref + off + 16 * l));
        CHECK(memcmp(dst, ref, sizeof dst) == 0, "mask_storeu_epi8 k=%#llx", (unsigned long long)k);
    }
}

/* Run fn in a child; returns its wait status. The child's stderr goes to /dev/null. */
static int in_child(void (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        fn(arg);
        _exit(0);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

static int exited_ok(int status)
{
    return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int aborted(int status)
{
    return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* Masked accesses ending right at a PROT_NONE page: masked-out bytes must not be touched. */
static uint8_t *guard_end; /* first byte of the PROT_NONE page */

static void guarded_accesses(void *unused)
{
    (void)unused;
    emu_m512i a = rnd512();
    for (unsigned n = 0; n <= 64; n++) {
        uint8_t *p = guard_end - n;
        uint64_t k = n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
        emu_m512i v = _mm512_maskz_loadu_epi8(k, p);
        _mm512_mask_storeu_epi8(p, k, a);
        if (n % 8 == 0) {
            unsigned k8 = n == 64 ? 0xffu : (1u << (n / 8)) - 1;
            v = _mm512_or_si512(v, _mm512_maskz_loadu_epi64((__mmask8)k8, p));
        }
        (void)v;
    }
}

static void check_guard_pages(void)
{
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    if (m == MAP_FAILED)
        return;
    CHECK(mprotect(m + page, (size_t)page, PROT_NONE) == 0, "mprotect");
    guard_end = m + page;
    CHECK(exited_ok(in_child(guarded_accesses, NULL)),
          "masked load/store touched a masked-out byte past a guard page");
    munmap(m, (size_t)page * 2);
}

/* ---- cross-lane permutes: Intel's pseudo-code written out per element, and examples -------- */

static void check_shuffle_i32x4(void)
{
    for (unsigned imm = 0; imm < 256; imm++) {
        emu_m512i a = rnd512(), b = rnd512(), r = _mm512_shuffle_i32x4(a, b, (int)imm);
        int ok = 1;
        for (int i = 0; i < 16; i++) {
            unsigned l = (unsigned)i / 4, sel = (imm >> (2 * l)) & 3;
            uint32_t want = (l < 2 ? a : b).d[4 * sel + (unsigned)i % 4];
            ok &= r.d[i] == want;
        }
        CHECK(ok, "shuffle_i32x4 %#x", imm);
    }
    /* The immediates of chacha20/avx512.c, with lanes named: A0..A3, B0..B3. */
    emu_m512i A, B;
    for (int i = 0; i < 16; i++) {
        A.d[i] = 0xa0u + (unsigned)i / 4; /* lane l of A holds 0xa0 + l */
        B.d[i] = 0xb0u + (unsigned)i / 4;
    }
    static const struct {
        unsigned imm;
        uint32_t lanes[4];
    } ex[] = {
        {0x44, {0xa0, 0xa1, 0xb0, 0xb1}}, {0xee, {0xa2, 0xa3, 0xb2, 0xb3}},
        {0x88, {0xa0, 0xa2, 0xb0, 0xb2}}, {0xdd, {0xa1, 0xa3, 0xb1, 0xb3}},
        {0x00, {0xa0, 0xa0, 0xb0, 0xb0}}, {0xe4, {0xa0, 0xa1, 0xb2, 0xb3}},
    };
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
        emu_m512i r = _mm512_shuffle_i32x4(A, B, (int)ex[e].imm);
        for (int i = 0; i < 16; i++)
            CHECK(r.d[i] == ex[e].lanes[i / 4], "shuffle_i32x4 example %#x", ex[e].imm);
    }
    /* vshufi64x2 (the same function, by its own name and in qwords): sha512/avx512.c's
     * 0xee (the upper half of x, twice) and 0x44 (the lower half, twice), with a = b = x. */
    emu_m512i x = _mm512_setr_epi64(10, 11, 12, 13, 14, 15, 16, 17);
    emu_m512i hi = _mm512_shuffle_i64x2(x, x, 0xee), lo = _mm512_shuffle_i64x2(x, x, 0x44);
    for (int j = 0; j < 8; j++) {
        CHECK(hi.q[j] == 14 + (uint64_t)j % 4, "shuffle_i64x2 0xee qword %d", j);
        CHECK(lo.q[j] == 10 + (uint64_t)j % 4, "shuffle_i64x2 0x44 qword %d", j);
    }
}

/* valignq: qword j of the result is qword j + imm8[2:0] of b:a (b the low half), picked
 * element by element; and, from real SSSE3 palignr, 128-bit lane l is lanes m + 1 : m of
 * that concatenation (m = l + imm/2) shifted down by 8 bytes when imm is odd. */
__attribute__((target("ssse3"))) static __m128i palignr_qword(__m128i hi, __m128i lo, int odd)
{
    return odd ? _mm_alignr_epi8(hi, lo, 8) : _mm_alignr_epi8(hi, lo, 0);
}

static void check_alignr_epi64(void)
{
    const int ssse3 = __builtin_cpu_supports("ssse3");
    for (unsigned imm = 0; imm < 256; imm++) {
        emu_m512i a = rnd512(), b = rnd512(), r = _mm512_alignr_epi64(a, b, (int)imm);
        unsigned k = imm % 8;
        int ok = 1;
        for (unsigned j = 0; j < 8; j++)
            ok &= r.q[j] == (j + k < 8 ? b.q[j + k] : a.q[j + k - 8]);
        CHECK(ok, "alignr_epi64 %#x", imm);
        if (ssse3) {
            __m128i c[8], want[4];
            for (int l = 0; l < 4; l++) {
                c[l] = lane(b, l);
                c[4 + l] = lane(a, l);
            }
            for (unsigned l = 0; l < 4; l++)
                want[l] = palignr_qword(c[l + k / 2 + 1], c[l + k / 2], (int)(k & 1));
            CHECK(lanes_eq(r, want), "alignr_epi64 %#x against palignr", imm);
        }
    }
    /* sha512/avx512.c's imm 2, with qwords named: a = a0..a7, b = b0..b7 -> b2..b7 a0 a1 */
    emu_m512i a = _mm512_setr_epi64(0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7);
    emu_m512i b = _mm512_setr_epi64(0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7);
    emu_m512i r = _mm512_alignr_epi64(a, b, 2);
    static const uint64_t want2[8] = {0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xa0, 0xa1};
    for (int j = 0; j < 8; j++)
        CHECK(r.q[j] == want2[j], "alignr_epi64 example 2, qword %d", j);
}

static void check_permutes(void)
{
    for (int it = 0; it < 500; it++) {
        emu_m512i a = rnd512(), b = rnd512(), idx = rnd512(); /* high index bits are junk */
        unsigned k = (unsigned)(rnd() & 0xff);
        emu_m512i r1 = _mm512_permutexvar_epi64(idx, a);
        emu_m512i r2 = _mm512_maskz_permutex2var_epi64((__mmask8)k, a, idx, b);
        emu_m512i r3 = _mm512_permutex2var_epi64(a, idx, b);
        uint64_t table[16];
        memcpy(table, a.q, 64);
        memcpy(table + 8, b.q, 64);
        for (int j = 0; j < 8; j++) {
            CHECK(r1.q[j] == a.q[idx.q[j] % 8], "permutexvar_epi64");
            CHECK(r2.q[j] == (((k >> j) & 1) ? table[idx.q[j] % 16] : 0),
                  "maskz_permutex2var_epi64 k=%#x", k);
            CHECK(r3.q[j] == table[idx.q[j] % 16], "permutex2var_epi64");
        }
    }
    /* sha512/avx512.c's interleave of words 0-3 of a (indices 0-7) and b (8-15). */
    emu_m512i wa = _mm512_setr_epi64(0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7);
    emu_m512i wb = _mm512_setr_epi64(0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7);
    emu_m512i il = _mm512_permutex2var_epi64(wa, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), wb);
    for (int j = 0; j < 8; j++)
        CHECK(il.q[j] == ((j & 1) ? 0xb0u : 0xa0u) + (unsigned)j / 2,
              "permutex2var_epi64 interleave, qword %d", j);
    /* poly1305/avx512ifma.c's use: word i of (a, b) moved up by `shift`, zeros below, and the
     * broadcast of lane 0 by a zero index. */
    emu_m512i a, b;
    for (int j = 0; j < 8; j++) {
        a.q[j] = 100 + (uint64_t)j;
        b.q[j] = 108 + (uint64_t)j;
    }
    const emu_m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (unsigned shift = 2; shift <= 14; shift += 2) {
        emu_m512i sv = _mm512_set1_epi64((long long)shift);
        __mmask8 ka = (__mmask8)(shift < 8 ? 0xffu << shift : 0);
        __mmask8 kb = (__mmask8)(shift <= 8 ? 0xffu : 0xffu << (shift - 8));
        emu_m512i g0 = _mm512_maskz_permutex2var_epi64(ka, a, _mm512_sub_epi64(iota, sv), b);
        emu_m512i g1 = _mm512_maskz_permutex2var_epi64(
            kb, a, _mm512_sub_epi64(_mm512_add_epi64(iota, _mm512_set1_epi64(8)), sv), b);
        for (unsigned i = 0; i < 16; i++) {
            uint64_t got = i < 8 ? g0.q[i] : g1.q[i - 8];
            uint64_t want = i < shift ? 0 : 100 + (i - shift);
            CHECK(got == want, "permutex2var shift %u word %u", shift, i);
        }
    }
    emu_m512i bc = _mm512_permutexvar_epi64(_mm512_setzero_si512(), a);
    for (int j = 0; j < 8; j++)
        CHECK(bc.q[j] == a.q[0], "permutexvar_epi64 broadcast of lane 0");
}

/* ---- IFMA: 52x52-bit products in 26-bit halves, no 128-bit arithmetic ----------------- */

static void mul52(uint64_t x, uint64_t y, uint64_t *lo52, uint64_t *hi52)
{
    const uint64_t m26 = (UINT64_C(1) << 26) - 1, m52 = (UINT64_C(1) << 52) - 1;
    uint64_t x0 = x & m26, x1 = x >> 26, y0 = y & m26, y1 = y >> 26;
    uint64_t p00 = x0 * y0, mid = x0 * y1 + x1 * y0, p11 = x1 * y1; /* each < 2^53 */
    /* x y = p11 2^52 + mid 2^26 + p00 */
    uint64_t low = p00 + ((mid & m26) << 26); /* < 2^53 */
    *lo52 = low & m52;
    *hi52 = p11 + (mid >> 26) + (low >> 52);
}

static uint64_t rnd52(void)
{
    const uint64_t m52 = (UINT64_C(1) << 52) - 1;
    switch (rnd() % 6) {
    case 0: return m52;
    case 1: return 0;
    case 2: return UINT64_C(1) << (rnd() % 52);
    case 3: return m52 >> (rnd() % 52);
    default: return rnd() & m52;
    }
}

static void check_madd52(void)
{
    for (int it = 0; it < 2000; it++) {
        emu_m512i acc, b, c;
        for (int j = 0; j < 8; j++) {
            acc.q[j] = rnd() >> 2; /* below 2^62: no wrap */
            b.q[j] = rnd52();
            c.q[j] = rnd52();
        }
        emu_m512i lo = _mm512_madd52lo_epu64(acc, b, c), hi = _mm512_madd52hi_epu64(acc, b, c);
        for (int j = 0; j < 8; j++) {
            uint64_t l52, h52;
            mul52(b.q[j], c.q[j], &l52, &h52);
            CHECK(lo.q[j] == acc.q[j] + l52, "madd52lo %#llx * %#llx",
                  (unsigned long long)b.q[j], (unsigned long long)c.q[j]);
            CHECK(hi.q[j] == acc.q[j] + h52, "madd52hi %#llx * %#llx",
                  (unsigned long long)b.q[j], (unsigned long long)c.q[j]);
        }
    }
    /* worked examples: (2^52 - 1)^2 = 2^104 - 2^53 + 1 -> lo 1, hi 2^52 - 2; 2^51 * 2^51 ->
     * lo 0, hi 2^50 */
    const uint64_t m52 = (UINT64_C(1) << 52) - 1;
    emu_m512i z = _mm512_setzero_si512(), x = _mm512_set1_epi64((long long)m52),
              h = _mm512_set1_epi64((long long)(UINT64_C(1) << 51));
    CHECK(_mm512_madd52lo_epu64(z, x, x).q[3] == 1, "madd52lo (2^52-1)^2");
    CHECK(_mm512_madd52hi_epu64(z, x, x).q[5] == m52 - 1, "madd52hi (2^52-1)^2");
    CHECK(_mm512_madd52lo_epu64(z, h, h).q[0] == 0, "madd52lo 2^51 * 2^51");
    CHECK(_mm512_madd52hi_epu64(z, h, h).q[7] == UINT64_C(1) << 50, "madd52hi 2^51 * 2^51");
}

/* ---- GFNI: independent GF(2^8) arithmetic, the AES S-box from real AES-NI ---------------- */

/* Product in GF(2^8) the long way: a 15-bit carry-less product, then polynomial division by
 * 0x11b from the top bit down (emu512.h reduces bit by bit while it multiplies). */
static uint8_t ref_gf_mul(uint8_t a, uint8_t b)
{
    unsigned p = 0;
    for (int i = 0; i < 8; i++)
        if ((b >> i) & 1)
            p ^= (unsigned)a << i;
    for (int i = 14; i >= 8; i--)
        if ((p >> i) & 1)
            p ^= 0x11bu << (i - 8);
    return (uint8_t)p;
}

/* x^254 = x^-1 (x^255 = 1 for x != 0), and 0 -> 0, by square and multiply. */
static uint8_t ref_gf_inv(uint8_t x)
{
    uint8_t r = 1, s = x;
    for (unsigned e = 254; e; e >>= 1) {
        if (e & 1)
            r = ref_gf_mul(r, s);
        s = ref_gf_mul(s, s);
    }
    return r;
}

/* M x ^ c as a sum of columns: column b (the image of bit b) has bit i = bit b of the
 * row for output bit i, which the SDM puts in byte 7 - i. */
static uint8_t ref_affine(uint64_t m, uint8_t x, uint8_t c)
{
    uint8_t r = c;
    for (int b = 0; b < 8; b++) {
        uint8_t col = 0;
        for (int i = 0; i < 8; i++)
            col |= (uint8_t)(((m >> (8 * (7 - i) + b)) & 1) << i);
        if ((x >> b) & 1)
            r ^= col;
    }
    return r;
}

/* SubBytes(x) on real hardware: aesenclast of sixteen copies of x with a zero round key
 * (ShiftRows moves equal bytes onto equal bytes). */
__attribute__((target("aes"))) static uint8_t aesni_sbox(uint8_t x)
{
    __m128i v = _mm_aesenclast_si128(_mm_set1_epi8((char)x), _mm_setzero_si128());
    return (uint8_t)_mm_cvtsi128_si32(v);
}

/* A vector whose 64 bytes are base .. base + 63. */
static emu_m512i iota8(unsigned base)
{
    emu_m512i v;
    for (int j = 0; j < 64; j++)
        v.b[j] = (uint8_t)(base + (unsigned)j);
    return v;
}

static void check_gfni(void)
{
    const int aes = __builtin_cpu_supports("aes");
    /* FIPS-197 figure 7 entries, for machines without AES-NI */
    static const uint8_t fips_sbox[][2] = {{0x00, 0x63}, {0x01, 0x7c}, {0x53, 0xed},
                                           {0x9a, 0xb8}, {0xc9, 0xdd}, {0xff, 0x16}};
    const emu_m512i aes_m = _mm512_set1_epi64((long long)0xf1e3c78f1f3e7cf8ULL);
    const emu_m512i ident = _mm512_set1_epi64((long long)0x0102040810204080ULL);
    const emu_m512i shr7 = _mm512_set1_epi64((long long)0x8000000000000000ULL);
    uint8_t sbox[256];

    for (unsigned x = 0; x < 256; x++)
        CHECK(x == 0 ? ref_gf_inv(0) == 0 : ref_gf_mul((uint8_t)x, ref_gf_inv((uint8_t)x)) == 1,
              "reference GF(2^8) inverse of %#x", x);
    for (unsigned base = 0; base < 256; base += 64) {
        emu_m512i x = iota8(base);
        emu_m512i s = _mm512_gf2p8affineinv_epi64_epi8(x, aes_m, 0x63);
        emu_m512i inv = _mm512_gf2p8affineinv_epi64_epi8(x, ident, 0);
        emu_m512i same = _mm512_gf2p8affine_epi64_epi8(x, ident, 0);
        emu_m512i top = _mm512_gf2p8affine_epi64_epi8(x, shr7, 0);
        for (int j = 0; j < 64; j++) {
            uint8_t v = (uint8_t)(base + (unsigned)j);
            sbox[v] = s.b[j];
            CHECK(inv.b[j] == ref_gf_inv(v), "gf2p8affineinv, identity matrix: inverse of %#x",
                  v);
            CHECK(same.b[j] == v, "gf2p8affine, identity matrix, %#x", v);
            CHECK(top.b[j] == v >> 7, "gf2p8affine, 0x8000000000000000 is x >> 7, %#x", v);
            if (aes)
                CHECK(s.b[j] == aesni_sbox(v),
                      "gf2p8affineinv with AES's affine map != aesenclast's SubBytes(%#x)", v);
        }
    }
    for (size_t i = 0; i < sizeof fips_sbox / sizeof fips_sbox[0]; i++)
        CHECK(sbox[fips_sbox[i][0]] == fips_sbox[i][1], "AES S-box(%#x) from gf2p8affineinv",
              fips_sbox[i][0]);
    /* random data, a different matrix in every qword, every immediate */
    for (unsigned imm = 0; imm < 256; imm++) {
        emu_m512i x = rnd512(), m = rnd512();
        emu_m512i r1 = _mm512_gf2p8affine_epi64_epi8(x, m, (int)imm);
        emu_m512i r2 = _mm512_gf2p8affineinv_epi64_epi8(x, m, (int)imm);
        int ok1 = 1, ok2 = 1;
        for (int j = 0; j < 64; j++) {
            ok1 &= r1.b[j] == ref_affine(m.q[j / 8], x.b[j], (uint8_t)imm);
            ok2 &= r2.b[j] == ref_affine(m.q[j / 8], ref_gf_inv(x.b[j]), (uint8_t)imm);
        }
        CHECK(ok1, "gf2p8affine imm %#x", imm);
        CHECK(ok2, "gf2p8affineinv imm %#x", imm);
    }
}

/* ---- the contract traps --------------------------------------------------------------------- */

static void ifma_wide_input(void *hi)
{
    emu_m512i z = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    emu_m512i big = _mm512_set1_epi64((long long)(UINT64_C(1) << 52));
    if (hi)
        (void)_mm512_madd52hi_epu64(z, one, big);
    else
        (void)_mm512_madd52lo_epu64(z, big, one);
}

static void ifma_wrap(void *unused)
{
    (void)unused;
    emu_m512i acc = _mm512_set1_epi64(-1), x = _mm512_set1_epi64(3);
    (void)_mm512_madd52lo_epu64(acc, x, x);
}

static void misaligned(void *store)
{
    static _Alignas(64) uint8_t buf[128];
    if (store)
        _mm512_store_si512(buf + 8, _mm512_setzero_si512());
    else
        (void)_mm512_load_si512(buf + 8);
}

static void ifma_largest_ok(void *unused)
{
    (void)unused;
    emu_m512i x = _mm512_set1_epi64((long long)((UINT64_C(1) << 52) - 1));
    (void)_mm512_madd52hi_epu64(_mm512_madd52lo_epu64(_mm512_setzero_si512(), x, x), x, x);
}

static void check_traps(void)
{
    static int tag;
    CHECK(aborted(in_child(ifma_wide_input, NULL)), "madd52lo with a 2^52 input did not trap");
    CHECK(aborted(in_child(ifma_wide_input, &tag)), "madd52hi with a 2^52 input did not trap");
    CHECK(aborted(in_child(ifma_wrap, NULL)), "madd52 accumulator wrap did not trap");
    CHECK(aborted(in_child(misaligned, NULL)), "misaligned load_si512 did not trap");
    CHECK(aborted(in_child(misaligned, &tag)), "misaligned store_si512 did not trap");
    CHECK(exited_ok(in_child(ifma_largest_ok, NULL)), "madd52 with 2^52 - 1 inputs trapped");
}

int main(void)
{
    check_lanewise();
    check_shifts();
    check_shuffle_epi32();
    check_shuffle_epi8();
    check_ternarylogic();
    check_masked_arith();
    check_set_and_reduce();
    check_memory();
    check_guard_pages();
    check_shuffle_i32x4();
    check_alignr_epi64();
    check_permutes();
    check_madd52();
    check_gfni();
    check_traps();
    if (failures) {
        printf("emu512 self-check FAILED: %lu of %lu checks\n", failures, checks);
        return 1;
    }
    printf("emu512 self-check ok: %lu checks (SSE2/SSSE3/AVX2 references%s%s, Intel pseudo-code, "
           "traps)\n",
           checks, __builtin_cpu_supports("ssse3") ? "" : " without SSSE3",
           __builtin_cpu_supports("avx2") ? "" : " without AVX2");
    return 0;
}
