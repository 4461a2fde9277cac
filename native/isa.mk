# The ISA registry: the one statement of each ISA slug (included by native/Makefile).
#
#   ISA_ARCH_<slug>      where src/<algorithm>/<slug>.c is built: the first word of the
#                        target triple (x86_64, aarch64, powerpc64le, s390x), a list of
#                        them, or `any`
#   ISA_FLAGS_<slug>     the compile flags of those files (the only ISA flags in the build)
#   ISA_FEATURES_<slug>  the CPU features (names of src/cpu/cpu.c) that code built with
#                        those flags may use: every feature a flag enables, up to what
#                        cpu.c's `requires` implies (avx2 implies avx, sse4_1, ssse3)
#
# The Makefile derives from it which files a target builds and with which flags, and
# writes build/<triple>/gen/archcrypt_isa.h: per slug AC_ISA_BUILT_<slug> (0 or 1 on this
# target) and AC_ISA_FEATURES_<slug>. A row of src/<algorithm>/rows.h exists only where
# its slug is built, and must require every feature of its slug: the build refuses a row
# that requires less (tools/check-rows.awk), and so does archcrypt_init(). A new slug is
# three lines here; never -march=native (an image must run on every node of its arch).

# ---- no ISA: plain C, the same everywhere -----------------------------------------
ISA_ARCH_portable      := any
ISA_FLAGS_portable     :=
ISA_FEATURES_portable  :=
ISA_ARCH_composed      := any
ISA_FLAGS_composed     :=
ISA_FEATURES_composed  :=
# 64-bit limbs with unsigned __int128 products: every 64-bit target this project builds.
ISA_ARCH_scalar64      := x86_64 aarch64 powerpc64le s390x
ISA_FLAGS_scalar64     :=
ISA_FEATURES_scalar64  :=

# ---- amd64 -------------------------------------------------------------------------
ISA_ARCH_ssse3         := x86_64
ISA_FLAGS_ssse3        := -mssse3
ISA_FEATURES_ssse3     := ssse3
# bmi2: mulx/shrx/rorx in the scalar halves (Poly1305, the stitched AEAD, SHA-2).
ISA_ARCH_avx2          := x86_64
ISA_FLAGS_avx2         := -mavx2 -mbmi2
ISA_FEATURES_avx2      := avx2 bmi2
ISA_ARCH_avx512        := x86_64
ISA_FLAGS_avx512       := -mavx512f -mavx512vl -mavx512bw -mavx512dq
ISA_FEATURES_avx512    := avx512f avx512vl avx512bw avx512dq
ISA_ARCH_avx512ifma    := x86_64
ISA_FLAGS_avx512ifma   := -mavx512f -mavx512vl -mavx512ifma
ISA_FEATURES_avx512ifma := avx512f avx512vl avx512ifma
# ssse3: pshufb for the byte swap; sse4_1: pblendw for the ABEF/CDGH state.
ISA_ARCH_sha_ni        := x86_64
ISA_FLAGS_sha_ni       := -mssse3 -msse4.1 -msha
ISA_FEATURES_sha_ni    := ssse3 sse4_1 sha_ni
# One message on SHA-NI, batches on sixteen zmm lanes (sha256/sha_ni_avx512.c).
ISA_ARCH_sha_ni_avx512 := x86_64
ISA_FLAGS_sha_ni_avx512 := -mssse3 -msse4.1 -msha -mavx512f -mavx512vl -mavx512bw
ISA_FEATURES_sha_ni_avx512 := ssse3 sse4_1 sha_ni avx512f avx512vl avx512bw
ISA_ARCH_aesni_avx2    := x86_64
ISA_FLAGS_aesni_avx2   := -mavx2 -maes
ISA_FEATURES_aesni_avx2 := avx2 aesni
ISA_ARCH_vaes_avx2     := x86_64
ISA_FLAGS_vaes_avx2    := -mavx2 -maes -mvaes
ISA_FEATURES_vaes_avx2 := avx2 aesni vaes
ISA_ARCH_gfni_avx512   := x86_64
ISA_FLAGS_gfni_avx512  := -mavx512f -mavx512vl -mavx512bw -mgfni
ISA_FEATURES_gfni_avx512 := avx512f avx512vl avx512bw gfni

# ---- arm64 -------------------------------------------------------------------------
ISA_ARCH_neon          := aarch64
ISA_FLAGS_neon         := -march=armv8-a
ISA_FEATURES_neon      := asimd
# +crypto: AES, PMULL and SHA-256 (gcc 12 inlines the SHA-256 intrinsics only with it).
ISA_ARCH_armv8_crypto  := aarch64
ISA_FLAGS_armv8_crypto := -march=armv8-a+crypto
ISA_FEATURES_armv8_crypto := asimd aes pmull sha2
ISA_ARCH_armv8_sha512  := aarch64
ISA_FLAGS_armv8_sha512 := -march=armv8.2-a+crypto+sha3
ISA_FEATURES_armv8_sha512 := asimd aes pmull sha2 sha3 sha512
ISA_ARCH_sve2          := aarch64
ISA_FLAGS_sve2         := -march=armv8-a+sve2
ISA_FEATURES_sve2      := sve2

# ---- ppc64le (POWER8 is the ABI floor) -----------------------------------------------
ISA_ARCH_power8        := powerpc64le
ISA_FLAGS_power8       := -mcpu=power8 -mvsx -mcrypto
ISA_FEATURES_power8    := vsx arch_2_07 vec_crypto
# -mcpu=power9 keeps -mcrypto on.
ISA_ARCH_power9        := powerpc64le
ISA_FLAGS_power9       := -mcpu=power9
ISA_FEATURES_power9    := vsx arch_3_00 vec_crypto
# -mcpu=power10 turns -mmma on, and gcc 12 needs it for __vector_pair (the lxvp/stxvp
# operands of chacha20/power10.c), so the rows require mma: a kernel that does not save
# MMA state does not advertise it (AT_HWCAP2).
ISA_ARCH_power10       := powerpc64le
ISA_FLAGS_power10      := -mcpu=power10
ISA_FEATURES_power10   := vsx arch_3_1 vec_crypto mma

# ---- s390x (big-endian) ------------------------------------------------------------
ISA_ARCH_vx            := s390x
ISA_FLAGS_vx           := -march=z13 -mzvector
ISA_FEATURES_vx        := vx
ISA_ARCH_vxe           := s390x
ISA_FLAGS_vxe          := -march=z14 -mzvector
ISA_FEATURES_vxe       := vxe
# z15: vector-enhancements facility 2 (vlbr/vstbr byte-reversed loads and stores, vsld).
ISA_ARCH_vxe2          := s390x
ISA_FLAGS_vxe2         := -march=z15 -mzvector
ISA_FEATURES_vxe2      := vxe2
# CPACF instructions in inline asm; each row names the KIMD functions it needs.
ISA_ARCH_cpacf         := s390x
ISA_FLAGS_cpacf        :=
ISA_FEATURES_cpacf     := msa
