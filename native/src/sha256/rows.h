/* SHA-256 (and SHA-224) rows, fastest first (the order is the policy); see dispatch.h for
 * the format. Batches (archcrypt_hash_many): sha_ni interleaves two messages' chains, avx2
 * runs eight messages, one per 32-bit lane. */
AC_ROW(sha_ni, "sha_ni,sse4_1,ssse3")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
/* cpacf: KIMD where the query reports SHA-256 (not under qemu 7.2); vx: software with
 * a vector schedule. */
AC_ROW(cpacf, "msa,kimd_sha256")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
