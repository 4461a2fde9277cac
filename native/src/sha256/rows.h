/* SHA-256 (and SHA-224) rows, fastest first (the order is the policy); see dispatch.h for
 * the format. Batches (archcrypt_hash_many, HMAC batches): sha_ni interleaves two messages'
 * chains, avx2 runs eight messages, one per 32-bit lane. */
/* sha_ni_avx512: sha_ni's compress for one message, sixteen zmm lanes for batches
 * (estimated ~0.5 c/B per message on Zen 5 against 1.38 measured for sha_ni's two chains). */
AC_ROW(sha_ni_avx512, "sha_ni,sse4_1,ssse3,avx512f,avx512vl,avx512bw")
AC_ROW(sha_ni, "sha_ni,sse4_1,ssse3")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
AC_ROW(armv8_crypto, "asimd,aes,pmull,sha2")
/* cpacf: KIMD where the query reports SHA-256 (not under qemu 7.2); vx: software with
 * a vector schedule. */
AC_ROW(cpacf, "msa,kimd_sha256")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
