/* Camellia rows, fastest first (the order is the policy); see dispatch.h for the format. */
AC_ROW(gfni_avx512, "avx512f,avx512vl,avx512bw,gfni")
AC_ROW(vaes_avx2, "vaes,avx2,aesni")
AC_ROW(aesni_avx2, "aesni,avx2")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
/* aese/aesd as the S-box core; +crypto also brings pmull and sha2 (isa.mk). */
AC_ROW(armv8_crypto, "asimd,aes,pmull,sha2")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
