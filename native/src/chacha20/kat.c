/* ChaCha20 and HChaCha20 known answers through the public API (RFC 8439 2.4.2 and A.2; draft-irtf-cfrg-xchacha 2.2.1). */
#include "common.h"
#include "kat.h"

#define KAT_MAX 384

typedef struct {
    const char *key;
    const char *nonce;
    uint32_t counter;
    const char *plaintext;
    const char *ciphertext;
} chacha20_vector;

static const chacha20_vector vectors[] = {
    /* RFC 8439 2.4.2: the sunscreen text, counter 1 */
    {
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        "000000000000004a00000000",
        1u,
        "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
        "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
        "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
        "637265656e20776f756c642062652069742e",
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d",
    },
    /* RFC 8439 A.2 #1: all zero, counter 0 */
    {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000",
        0u,
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
    },
    /* RFC 8439 A.2 #2: counter 1, 375 bytes */
    {
        "0000000000000000000000000000000000000000000000000000000000000001",
        "000000000000000000000002",
        1u,
        "416e79207375626d697373696f6e20746f20746865204945544620696e74656e"
        "6465642062792074686520436f6e7472696275746f7220666f72207075626c69"
        "636174696f6e20617320616c6c206f722070617274206f6620616e2049455446"
        "20496e7465726e65742d4472616674206f722052464320616e6420616e792073"
        "746174656d656e74206d6164652077697468696e2074686520636f6e74657874"
        "206f6620616e204945544620616374697669747920697320636f6e7369646572"
        "656420616e20224945544620436f6e747269627574696f6e222e205375636820"
        "73746174656d656e747320696e636c756465206f72616c2073746174656d656e"
        "747320696e20494554462073657373696f6e732c2061732077656c6c20617320"
        "7772697474656e20616e6420656c656374726f6e696320636f6d6d756e696361"
        "74696f6e73206d61646520617420616e792074696d65206f7220706c6163652c"
        "207768696368206172652061646472657373656420746f",
        "a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec"
        "2a97948bd3722915c8f3d337f7d370050e9e96d647b7c39f56e031ca5eb6250d"
        "4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e527950"
        "42bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85a"
        "d00f8449ed8f72d0d662ab052691ca66424bc86d2df80ea41f43abf937d3259d"
        "c4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b"
        "0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6c"
        "cc3aaf9f3979c92b3720fc88dc95ed84a1be059c6499b9fda236e7e818b04b0b"
        "c39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f"
        "5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e6"
        "98ced759c3ff9b6477338f3da4f9cd8514ea9982ccafb341b2384dd902f3d1ab"
        "7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221",
    },
    /* RFC 8439 A.2 #3: counter 42, 127 bytes */
    {
        "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
        "000000000000000000000002",
        42u,
        "2754776173206272696c6c69672c20616e642074686520736c6974687920746f"
        "7665730a446964206779726520616e642067696d626c6520696e207468652077"
        "6162653a0a416c6c206d696d737920776572652074686520626f726f676f7665"
        "732c0a416e6420746865206d6f6d65207261746873206f757467726162652e",
        "62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf"
        "166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb"
        "f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77"
        "04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1",
    },
    /* The last legal block, counter 2^32 - 1 (cryptography_vectors
     * ChaCha20/counter-overflow.txt #0; one block, so the 64/64 split there is moot) */
    {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000",
        0xffffffffu,
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "ace4cd09e294d1912d4ad205d06f95d9c2f2bfcf453e8753f128765b62215f4d"
        "92c74f2f626c6a640c0b1284d839ec81f1696281dafc3e684593937023b58b1d",
    },
};

/* Out of place and in place, each must give the published ciphertext. */
static int check_vector(const chacha20_vector *v)
{
    uint8_t key[32], nonce[12], pt[KAT_MAX] = {0}, ct[KAT_MAX], out[KAT_MAX];
    size_t len;

    if (ac_unhex(key, sizeof key, v->key) != sizeof key || ac_unhex(nonce, sizeof nonce, v->nonce) != sizeof nonce)
        return 0;
    len = ac_unhex(pt, sizeof pt, v->plaintext);
    if (ac_unhex(ct, sizeof ct, v->ciphertext) != len)
        return 0;

    if (archcrypt_chacha20_xor(out, pt, len, key, nonce, v->counter) != ARCHCRYPT_OK ||
        memcmp(out, ct, len) != 0)
        return 0;
    memcpy(out, pt, len);
    if (archcrypt_chacha20_xor(out, out, len, key, nonce, v->counter) != ARCHCRYPT_OK ||
        memcmp(out, ct, len) != 0)
        return 0;
    return 1;
}

/* RFC 8439 2.4: the block counter is 32 bits, so a call that would need block
 * 2^32 is refused whole, before anything is written. */
static int check_counter_limit(void)
{
    static const uint8_t key[32], nonce[12];
    uint8_t buf[129];

    memset(buf, 0xa5, sizeof buf);
    if (archcrypt_chacha20_xor(buf, buf, 65, key, nonce, 0xffffffffu) != ARCHCRYPT_ERR_MESSAGE_TOO_LONG)
        return 0;
    if (archcrypt_chacha20_xor(buf, buf, 129, key, nonce, 0xfffffffeu) != ARCHCRYPT_ERR_MESSAGE_TOO_LONG)
        return 0;
    for (size_t i = 0; i < sizeof buf; i++)
        if (buf[i] != 0xa5)
            return 0;
    /* The last two blocks exactly, and nothing at all, are both legal. */
    if (archcrypt_chacha20_xor(buf, buf, 128, key, nonce, 0xfffffffeu) != ARCHCRYPT_OK)
        return 0;
    if (archcrypt_chacha20_xor(NULL, NULL, 0, key, nonce, 0xffffffffu) != ARCHCRYPT_OK)
        return 0;
    return 1;
}

/* draft-irtf-cfrg-xchacha 2.2.1 */
static int check_hchacha20(void)
{
    uint8_t key[32], nonce[16], expected[32], out[32];

    ac_unhex(key, sizeof key, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    ac_unhex(nonce, sizeof nonce, "000000090000004a0000000031415927");
    ac_unhex(expected, sizeof expected, "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc");
    archcrypt_hchacha20(out, key, nonce);
    return memcmp(out, expected, sizeof out) == 0;
}

int ac_kat_chacha20(void)
{
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++)
        if (!check_vector(&vectors[i]))
            return ARCHCRYPT_ERR_SELFTEST;
    if (!check_counter_limit() || !check_hchacha20())
        return ARCHCRYPT_ERR_SELFTEST;
    return ARCHCRYPT_OK;
}
