/* Poly1305 rows, fastest first (the order is the policy); see dispatch.h for the format. */
AC_ROW(avx512ifma, "avx512f,avx512vl,avx512ifma")
AC_ROW(avx2, "avx2,bmi2")
/* power9: vmsumudm (ISA 3.0); power8: scalar, addc/adde (see poly1305/power8.c). */
AC_ROW(power9, "vsx,arch_3_00,vec_crypto")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
/* neon: radix 2^26, 8 blocks a step; adds/adcs scalar for short calls. */
AC_ROW(neon, "asimd")
/* vxe: radix 2^44 in vmslg (z14); vx: radix 2^26 in vmalef/vmalof lanes, gathering 2 KiB
 * when streamed (poly1305/vx.c). */
AC_ROW(vxe, "vxe")
AC_ROW(vx, "vx")
/* Plain C with 64-bit limbs, wherever the compiler has unsigned __int128. */
AC_ROW(scalar64, "")
AC_ROW(portable, "")
