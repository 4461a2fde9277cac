/* ChaCha20 rows, fastest first (the order is the policy); see dispatch.h for the format. */
AC_ROW(avx512, "avx512f,avx512vl,avx512bw,avx512dq")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(ssse3, "ssse3")
/* vec_crypto: vpermxor. power10 adds lxvp/stxvp to power8's 4 blocks. */
AC_ROW(power10, "vsx,arch_3_1,vec_crypto,mma")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
