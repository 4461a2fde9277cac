/* SHA-512 (and SHA-384) rows, fastest first (the order is the policy); see dispatch.h for
 * the format. */
AC_ROW(avx512, "avx512f,avx512vl,avx512bw,avx512dq,bmi2")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
/* armv8_sha512: the SHA512 instructions (max); neon: scalar rounds, vector schedule. */
AC_ROW(armv8_sha512, "asimd,aes,pmull,sha2,sha3,sha512")
AC_ROW(neon, "asimd")
AC_ROW(cpacf, "msa,kimd_sha512")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
