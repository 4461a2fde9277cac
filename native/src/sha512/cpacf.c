/* SHA-512 through CPACF: KIMD function 3 over whole blocks, reissued while it reports partial completion (qemu: every 64 blocks); the parameter block is the chaining value h itself, big-endian doublewords on s390x (FIPS 180-4 6.4; z/Architecture PoO, COMPUTE INTERMEDIATE MESSAGE DIGEST). */
#if !defined(__s390x__)
#error "sha512/cpacf.c is for s390x (ISA_ARCH_cpacf in native/isa.mk)"
#endif

#include "cpu/s390x_cpacf.h"
#include "sha512/sha512.h"

static void sha512_cpacf_compress(uint64_t h[8], const uint8_t *in, size_t nblocks)
{
    ac_kimd(AC_KIMD_SHA512, h, in, nblocks * 128);
}

const sha512_kernel archcrypt_sha512_cpacf = {
    .compress = sha512_cpacf_compress,
};
