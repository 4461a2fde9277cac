/* ChaCha20 rows, fastest first (the order is the policy); see dispatch.h for the format. */
AC_ROW(avx512, "avx512f,avx512vl,avx512bw,avx512dq")
AC_ROW(avx2, "avx2,bmi2")
AC_ROW(ssse3, "ssse3")
/* vec_crypto: vpermxor. power10 adds lxvp/stxvp to power8's 4 blocks. */
AC_ROW(power10, "vsx,arch_3_1,vec_crypto,mma")
AC_ROW(power8, "vsx,arch_2_07,vec_crypto")
/* sve2: xar rotates, as many blocks as the vector has 32-bit lanes. Below 256 bytes a
 * whole iteration (~830 instructions at any vector length) costs more than neon's
 * row-form blocks (measured under qemu: 17.1 against 8.2 instructions/B at 64 B, 8.9
 * against 7.0 at 128 B, 3.9 against 5.7 at 256 B). */
AC_ROW_MIN_LEN(sve2, "sve,sve2", 256)
/* neon: chacha20/simd128.h over NEON, 4 blocks vertically; 1-2 block tails as rows. */
AC_ROW(neon, "asimd")
AC_ROW(vx, "vx")
AC_ROW(portable, "")
