/* Poly1305 known answers through the public API, one-shot, verify and streaming (RFC 8439 2.5.2 and A.3). */
#include "common.h"
#include "dispatch.h"
#include "kat.h"
#include "poly1305/poly1305.h"

#define KAT_MAX 384

typedef struct {
    const char *key;
    const char *msg;
    const char *tag;
} poly1305_vector;

static const poly1305_vector vectors[] = {
    /* RFC 8439 2.5.2 */
    {
        "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
        "43727970746f6772617068696320466f72756d2052657365617263682047726f"
        "7570",
        "a8061dc1305136c6c22b8baf0c0127a9",
    },
    /* RFC 8439 A.3 #1 */
    {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "00000000000000000000000000000000",
    },
    /* RFC 8439 A.3 #2 */
    {
        "0000000000000000000000000000000036e5f6b5c5e06070f0efca96227a863e",
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
        "36e5f6b5c5e06070f0efca96227a863e",
    },
    /* RFC 8439 A.3 #3 */
    {
        "36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000",
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
        "f3477e7cd95417af89a6b8794c310cf0",
    },
    /* RFC 8439 A.3 #4 */
    {
        "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
        "2754776173206272696c6c69672c20616e642074686520736c6974687920746f"
        "7665730a446964206779726520616e642067696d626c6520696e207468652077"
        "6162653a0a416c6c206d696d737920776572652074686520626f726f676f7665"
        "732c0a416e6420746865206d6f6d65207261746873206f757467726162652e",
        "4541669a7eaaee61e708dc7cbcc5eb62",
    },
    /* RFC 8439 A.3 #5 (h >= p before the final reduction: r = 2, m = ff..ff) */
    {
        "0200000000000000000000000000000000000000000000000000000000000000",
        "ffffffffffffffffffffffffffffffff",
        "03000000000000000000000000000000",
    },
    /* RFC 8439 A.3 #6 */
    {
        "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
        "02000000000000000000000000000000",
        "03000000000000000000000000000000",
    },
    /* RFC 8439 A.3 #7 */
    {
        "0100000000000000000000000000000000000000000000000000000000000000",
        "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff"
        "11000000000000000000000000000000",
        "05000000000000000000000000000000",
    },
    /* RFC 8439 A.3 #8 */
    {
        "0100000000000000000000000000000000000000000000000000000000000000",
        "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe"
        "01010101010101010101010101010101",
        "00000000000000000000000000000000",
    },
    /* RFC 8439 A.3 #9 */
    {
        "0200000000000000000000000000000000000000000000000000000000000000",
        "fdffffffffffffffffffffffffffffff",
        "faffffffffffffffffffffffffffffff",
    },
    /* RFC 8439 A.3 #10 */
    {
        "0100000000000000040000000000000000000000000000000000000000000000",
        "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
        "0000000000000000000000000000000001000000000000000000000000000000",
        "14000000000000005500000000000000",
    },
    /* RFC 8439 A.3 #11 */
    {
        "0100000000000000040000000000000000000000000000000000000000000000",
        "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
        "00000000000000000000000000000000",
        "13000000000000000000000000000000",
    },
};

/* Three uneven pieces, so that the buffering front joins partial blocks. */
static int check_streaming(const uint8_t *key, const uint8_t *msg, size_t len, const uint8_t *expected)
{
    archcrypt_poly1305_ctx *ctx = archcrypt_poly1305_new(key);
    uint8_t tag[16];
    size_t a = len / 3, b = len - len / 5;
    int ok;

    if (ctx == NULL)
        return 0;
    ok = archcrypt_poly1305_update(ctx, msg, a) == ARCHCRYPT_OK &&
         archcrypt_poly1305_update(ctx, msg + a, b - a) == ARCHCRYPT_OK &&
         archcrypt_poly1305_update(ctx, msg + b, len - b) == ARCHCRYPT_OK &&
         archcrypt_poly1305_final(ctx, tag) == ARCHCRYPT_OK &&
         memcmp(tag, expected, sizeof tag) == 0 &&
         /* a finished context refuses more work */
         archcrypt_poly1305_update(ctx, msg, len) == ARCHCRYPT_ERR_STATE &&
         archcrypt_poly1305_final(ctx, tag) == ARCHCRYPT_ERR_STATE;
    archcrypt_poly1305_free(ctx);
    return ok;
}

static int check_vector(const poly1305_vector *v)
{
    uint8_t key[32], msg[KAT_MAX] = {0}, expected[16], tag[16];
    size_t len;

    if (ac_unhex(key, sizeof key, v->key) != sizeof key || ac_unhex(expected, sizeof expected, v->tag) != sizeof expected)
        return 0;
    len = ac_unhex(msg, sizeof msg, v->msg);

    if (archcrypt_poly1305(tag, msg, len, key) != ARCHCRYPT_OK || memcmp(tag, expected, sizeof tag) != 0)
        return 0;
    if (archcrypt_poly1305_verify(expected, msg, len, key) != 1)
        return 0;
    expected[15] ^= 0x80;
    if (archcrypt_poly1305_verify(expected, msg, len, key) != 0)
        return 0;
    expected[15] ^= 0x80;
    return check_streaming(key, msg, len, expected);
}

/* The kernel's `used` must cover every byte its init and blocks wrote, or the front
 * would leave key-derived bytes behind: from a zeroed state, nothing past `used` may
 * have changed, for calls short of any vector table and long enough to build one. */
static int check_footprint(void)
{
    const poly1305_kernel *k = ac_poly1305_kernel();
    static const size_t lens[] = {16, 64, 256, 1024, 4096};
    static uint8_t msg[4096];
    uint8_t key[32], tag[16];
    poly1305_state st;

    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(0xa5 ^ (i * 29));
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 131 + 7);
    for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
        memset(&st, 0, sizeof st);
        k->init(&st, key);
        k->blocks(&st, msg, lens[j], 1);
        size_t used = k->used(&st);
        k->finish(&st, tag);
        if (used > sizeof st.opaque)
            return 0;
        for (size_t b = used; b < sizeof st.opaque; b++)
            if (st.opaque[b] != 0)
                return 0;
        ac_wipe(&st, sizeof st);
    }
    return 1;
}

int ac_kat_poly1305(void)
{
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++)
        if (!check_vector(&vectors[i]))
            return ARCHCRYPT_ERR_SELFTEST;
    return check_footprint() ? ARCHCRYPT_OK : ARCHCRYPT_ERR_SELFTEST;
}
