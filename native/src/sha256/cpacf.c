/* SHA-256 through CPACF: KIMD function 2 over whole blocks, reissued while it reports partial completion; the parameter block is the chaining value h itself, big-endian words on s390x (FIPS 180-4 6.2; z/Architecture PoO, COMPUTE INTERMEDIATE MESSAGE DIGEST). */
#if !defined(__s390x__)
#error "sha256/cpacf.c is for s390x (ISA_ARCH_cpacf in native/isa.mk)"
#endif

#include "cpu/s390x_cpacf.h"
#include "sha256/sha256.h"

/* qemu 7.2 does not emulate this function (its KIMD query answers SHA-512 only), so the
 * row is gated by the query (kimd_sha256, cpu/s390x.c) and proven by review and by
 * sha512/cpacf.c, the same ac_kimd with function 3, which qemu runs. */
static void sha256_cpacf_compress(uint32_t h[8], const uint8_t *in, size_t nblocks)
{
    ac_kimd(AC_KIMD_SHA256, h, in, nblocks * 64);
}

const sha256_kernel archcrypt_sha256_cpacf = {
    .compress = sha256_cpacf_compress,
};
