/* The part of chacha20/simd128.h's vocabulary that POWER8 and POWER10 share (VSX and ISA 2.07 vector crypto): lane arithmetic, vpermxor for xor+rotate by 16/8, vrlw for 12/7. */
#ifndef ARCHCRYPT_CHACHA20_SIMD128_VSX_H
#define ARCHCRYPT_CHACHA20_SIMD128_VSX_H

#include <altivec.h>

typedef __vector unsigned int v32;
typedef __vector unsigned char u8x16;
typedef __vector unsigned long long u64x2;

/* vpermxor(a, b, c) byte i = a[c_i >> 4] ^ b[c_i & 15], indices numbered big-endian
 * (byte 0 is the most significant byte of word 0). Word j is bytes 4j..4j+3, so
 * rotl16 takes byte 4j + ((k + 2) & 3) into byte 4j + k, rotl8 byte 4j + ((k + 1) & 3).
 * Written here in little-endian element order (element i is big-endian byte 15 - i);
 * the self-test checks the result against portable. The same byte permutation applied
 * to both operands commutes with the xor, so rotl(a ^ b, 16 or 8) is one instruction.
 * A lane's rotation does not depend on the element order the rows use. */
#define ROT16_CTL {0xdd, 0xcc, 0xff, 0xee, 0x99, 0x88, 0xbb, 0xaa, \
                   0x55, 0x44, 0x77, 0x66, 0x11, 0x00, 0x33, 0x22}
#define ROT8_CTL  {0xcc, 0xff, 0xee, 0xdd, 0x88, 0xbb, 0xaa, 0x99, \
                   0x44, 0x77, 0x66, 0x55, 0x00, 0x33, 0x22, 0x11}

#define V_CONSTANTS                                                \
    const u8x16 r16 = (u8x16)ROT16_CTL, r8 = (u8x16)ROT8_CTL;      \
    const v32 s12 = vec_splats(12u), s7 = vec_splats(7u)
#define V_ADD(a, b) ((a) + (b))
#define V_XOR(a, b) ((a) ^ (b))
#define V_XROTL16(a, b) ((v32)__builtin_crypto_vpermxor((u8x16)(a), (u8x16)(b), r16))
#define V_XROTL8(a, b) ((v32)__builtin_crypto_vpermxor((u8x16)(a), (u8x16)(b), r8))
#define V_XROTL12(a, b) vec_rl((a) ^ (b), s12)
#define V_XROTL7(a, b) vec_rl((a) ^ (b), s7)
#define V_DUP(x) vec_splats((unsigned int)(x))
#define V_LANES ((v32){0, 1, 2, 3})

#endif
