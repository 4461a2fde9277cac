/* ChaCha20-Poly1305 rows, fastest first (the order is the policy); see dispatch.h for the
 * format. The kernels are archcrypt_chacha20_poly1305_<slug>. */
/* The avx512 ChaCha20 and avx512ifma Poly1305 kernels composed (aead/avx512.c says why
 * not stitched): at 64 KiB 0.70 c/B on Zen 5 (before ChaCha20's two-group step) and 0.77
 * on an Intel AVX-512 core, against 1.21-1.25 and 1.43 for the avx2 row below, which
 * every AVX-512 host used to run. */
AC_ROW(avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx512ifma")
/* AVX2 ChaCha20 and scalar (mulx) Poly1305 in one loop, 512 bytes a step. Below 1 KiB the
 * composed row's 2- and 4-block ChaCha20 tails win (measured). */
AC_ROW_MIN_LEN(avx2, "avx2,bmi2", 1024)
/* Whichever chacha20 and poly1305 rows are in effect, in one pass. */
AC_ROW(composed, "")
