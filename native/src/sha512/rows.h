/* SHA-512 (and SHA-384) rows, fastest first (the order is the policy); see dispatch.h for
 * the format. */
AC_ROW(avx512, "avx512f,avx512vl,avx512bw,avx512dq,bmi2")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
AC_ROW(cpacf, "msa,kimd_sha512")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
