/* SHA-224/256/384/512 (FIPS 180-4): initial values, buffering, padding, and the public hash API. */
#include <stdlib.h>

#include "common.h"
#include "dispatch.h"
#include "hash/hash.h"

/* Section 5.3.2: the second 32 bits of the fractional parts of the square roots
 * of the 9th through 16th primes. */
static const uint32_t H0_224[8] = {
    0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939,
    0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4,
};

/* Section 5.3.3: the first 32 bits of the fractional parts of the square roots
 * of the first 8 primes. */
static const uint32_t H0_256[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* Section 5.3.4: the first 64 bits of the fractional parts of the square roots
 * of the 9th through 16th primes. */
static const uint64_t H0_384[8] = {
    0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17, 0x152fecd8f70e5939,
    0x67332667ffc00b31, 0x8eb44a8768581511, 0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4,
};

/* Section 5.3.5: the first 64 bits of the fractional parts of the square roots
 * of the first 8 primes. */
static const uint64_t H0_512[8] = {
    0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
    0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
};

/* Indexed by archcrypt_hash_id. */
static const struct {
    uint8_t digest_size;
    uint8_t block_size;
    uint8_t wide;
    const void *h0;
} variants[] = {
    [ARCHCRYPT_SHA224] = { ARCHCRYPT_SHA224_DIGEST_SIZE, ARCHCRYPT_SHA224_BLOCK_SIZE, 0, H0_224 },
    [ARCHCRYPT_SHA256] = { ARCHCRYPT_SHA256_DIGEST_SIZE, ARCHCRYPT_SHA256_BLOCK_SIZE, 0, H0_256 },
    [ARCHCRYPT_SHA384] = { ARCHCRYPT_SHA384_DIGEST_SIZE, ARCHCRYPT_SHA384_BLOCK_SIZE, 1, H0_384 },
    [ARCHCRYPT_SHA512] = { ARCHCRYPT_SHA512_DIGEST_SIZE, ARCHCRYPT_SHA512_BLOCK_SIZE, 1, H0_512 },
};

static int known(int hash_id)
{
    return hash_id >= 0 && (size_t)hash_id < sizeof variants / sizeof variants[0];
}

size_t archcrypt_hash_digest_size(int hash_id)
{
    return known(hash_id) ? variants[hash_id].digest_size : 0;
}

size_t archcrypt_hash_block_size(int hash_id)
{
    return known(hash_id) ? variants[hash_id].block_size : 0;
}

/* Copies n bytes (up to a block or two: sized for that) with 16-byte moves, the last one
 * overlapping, or under 16 with two overlapping moves of the largest size that fits. gcc makes a variable-size memcpy a
 * rep movsq, and a fixed-size memset of the buffer a rep stosq: the start-up of those
 * (one copy, one zeroing, one wipe a call) was about 90 of the 760 cycles of a 64-byte
 * SHA-512 (bench-ab, 101 interleaved rounds: 64 B 11.89 -> 10.44 c/B, 112 B 11.10 ->
 * 10.10, 1 KiB 4.85 -> 4.80). The barrier keeps gcc from making the loop a memcpy call. */
static inline void copy_short(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n >= 16) {
        for (size_t i = 0; i + 16 < n; i += 16) {
            memcpy(dst + i, src + i, 16);
            __asm__ __volatile__("" : : : "memory");
        }
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/* ---- mode layer (hash.h) ------------------------------------------------- */

static void compress(ac_hash_ctx *ctx, const uint8_t *in, size_t nblocks)
{
    if (ctx->wide)
        ctx->k.k512->compress(ctx->h.w64, in, nblocks);
    else
        ctx->k.k256->compress(ctx->h.w32, in, nblocks);
}

/* ac_wipe_words clears whole 8-byte words. */
_Static_assert(sizeof(ac_hash_ctx) % 8 == 0, "ac_hash_ctx is not a whole number of words");

int ac_hash_init(ac_hash_ctx *ctx, int hash_id)
{
    if (!known(hash_id))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    const int wide = variants[hash_id].wide;

    ac_wipe_words(ctx, sizeof *ctx);
    if (wide) {
        ctx->k.k512 = ac_sha512_kernel();
        memcpy(ctx->h.w64, variants[hash_id].h0, sizeof ctx->h.w64);
    } else {
        ctx->k.k256 = ac_sha256_kernel();
        memcpy(ctx->h.w32, variants[hash_id].h0, sizeof ctx->h.w32);
    }
    ctx->block_size = variants[hash_id].block_size;
    ctx->digest_size = variants[hash_id].digest_size;
    ctx->wide = (uint8_t)wide;
    return ARCHCRYPT_OK;
}

int ac_hash_update(ac_hash_ctx *ctx, const uint8_t *msg, size_t len)
{
    if (ctx->finished)
        return ARCHCRYPT_ERR_STATE;
    if (len == 0)
        return ARCHCRYPT_OK;

    const size_t bs = ctx->block_size;

    ctx->count_lo += (uint64_t)len;
    ctx->count_hi += ctx->count_lo < (uint64_t)len;

    if (ctx->buf_len > 0) {
        size_t take = bs - ctx->buf_len;
        if (take > len)
            take = len;
        copy_short(ctx->buf + ctx->buf_len, msg, take);
        ctx->buf_len += take;
        msg += take;
        len -= take;
        if (ctx->buf_len < bs)
            return ARCHCRYPT_OK;
        compress(ctx, ctx->buf, 1);
        ctx->buf_len = 0;
    }

    /* Whole blocks go to the kernel straight from the caller's buffer, in one
     * call, so a multi-block kernel sees the longest run there is. */
    if (len >= bs) {
        size_t nblocks = len / bs;
        compress(ctx, msg, nblocks);
        msg += nblocks * bs;
        len -= nblocks * bs;
    }

    if (len > 0) {
        copy_short(ctx->buf, msg, len);
        ctx->buf_len = len;
    }
    return ARCHCRYPT_OK;
}

int ac_hash_final(ac_hash_ctx *ctx, uint8_t *digest)
{
    if (ctx->finished)
        return ARCHCRYPT_ERR_STATE;

    /* Section 5.1: append the bit 1, zeros, and the message length in bits as a
     * 64-bit (SHA-224/256) or 128-bit (SHA-384/512) big-endian integer. When the
     * leftover leaves no room for 0x80 and the length (55/56 bytes of 64,
     * 111/112 of 128) the padding spills into a second block; both go to the
     * kernel in one call. */
    const size_t bs = ctx->block_size;
    const size_t len_field = ctx->wide ? 16 : 8;
    _Alignas(16) uint8_t tail[2 * AC_HASH_MAX_BLOCK];
    size_t n = ctx->buf_len;
    const size_t tail_len = n + 1 + len_field <= bs ? bs : 2 * bs;

    /* No rep stosq or movsq (see copy_short): HMAC runs two finals a message. */
    ac_wipe_words(tail, tail_len);
    copy_short(tail, ctx->buf, n);
    tail[n] = 0x80;

    const uint64_t bits_hi = (ctx->count_hi << 3) | (ctx->count_lo >> 61);
    const uint64_t bits_lo = ctx->count_lo << 3;
    if (ctx->wide)
        store64_be(tail + tail_len - 16, bits_hi);
    /* SHA-224/256 are defined for messages under 2^64 bits (2^61 bytes, out of
     * any caller's reach); the length field is the count modulo 2^64. */
    store64_be(tail + tail_len - 8, bits_lo);

    compress(ctx, tail, tail_len / bs);

    if (ctx->wide) {
        for (size_t i = 0; i < (size_t)ctx->digest_size / 8; i++)
            store64_be(digest + 8 * i, ctx->h.w64[i]);
    } else {
        for (size_t i = 0; i < (size_t)ctx->digest_size / 4; i++)
            store32_be(digest + 4 * i, ctx->h.w32[i]);
    }

    ac_wipe_words(tail, bs);    /* the buffered bytes: under one block */
    ac_wipe_words(ctx, sizeof *ctx);
    ctx->finished = 1;
    return ARCHCRYPT_OK;
}

/* ---- public API (archcrypt_api.h) --------------------------------------- */

/*
 * One-shot hashing without a context: whole blocks go to the kernel straight from msg,
 * the leftover (under one block) and the padding of section 5.1 are built in a two-block
 * buffer on the stack, zeroed first with fixed-size stores (so the padding is just the
 * 0x80 and the length), and only what held message-derived data is wiped: the chaining
 * value and the first block of the buffer (the leftover is shorter than a block; the
 * rest is padding), or both blocks where SHA-384/512 copied the last whole block in with
 * it (tail512). The same result as ac_hash_init/update/final.
 */
static void oneshot256(const sha256_kernel *k, const uint32_t h0[8], size_t digest_size,
                       uint8_t *digest, const uint8_t *msg, size_t len)
{
    uint32_t h[8];
    _Alignas(16) uint8_t tail[128];
    const size_t full = len & ~(size_t)63, rem = len & 63;
    const size_t tail_len = rem + 9 <= 64 ? 64 : 128;

    memcpy(h, h0, sizeof h);
    if (full)
        k->compress(h, msg, full / 64);
    /* No rep stosq or movsq (see copy_short). */
    ac_wipe_words(tail, 64);
    if (tail_len > 64)
        ac_wipe_words(tail + 64, 64);
    copy_short(tail, msg + full, rem);
    tail[rem] = 0x80;
    /* SHA-224/256 are defined for messages under 2^64 bits; the field is the count
     * modulo 2^64, as in ac_hash_final. */
    store64_be(tail + tail_len - 8, (uint64_t)len << 3);
    k->compress(h, tail, tail_len / 64);
    for (size_t i = 0; i < digest_size / 4; i++)
        store32_be(digest + 4 * i, h[i]);
    ac_wipe_words(tail, 64);
    ac_wipe_words(h, sizeof h);
}

/* The padded tail of a SHA-384/512 one-shot: the last rem (< 128) bytes of msg, after
 * head bytes (0, or 128: the last whole block) that are copied with it. head is a
 * constant at each call, so that each case compiles to its own straight line. */
AC_INLINE void tail512(const sha512_kernel *k, uint64_t h[8], const uint8_t *msg, size_t len,
                       size_t head)
{
    _Alignas(64) uint8_t tail[256];
    const size_t rem = len & 127, start = len - rem - head;
    const size_t tail_len = head + (rem + 17 <= 128 ? 128 : 256);

    /* ac_wipe_words: stores gcc merges into movaps, never a rep stosq (see copy_short). */
    if (!head)
        ac_wipe_words(tail, 128);
    if (tail_len > 128)
        ac_wipe_words(tail + 128, 128);
    if (head)
        copy_short(tail, msg + start, head);
    copy_short(tail + head, msg + start + head, rem);
    tail[head + rem] = 0x80;
    /* The 128-bit bit count: a size_t byte count times 8, whose high half is the count's
     * top three bits (its other bytes zeroed above). */
    tail[tail_len - 9] = (uint8_t)((uint64_t)len >> 61);
    store64_be(tail + tail_len - 8, (uint64_t)len << 3);
    k->compress(h, tail, tail_len / 128);
    ac_wipe_words(tail, 128);
    if (head)
        ac_wipe_words(tail + 128, 128);
}

static void oneshot512(const sha512_kernel *k, const uint64_t h0[8], size_t digest_size,
                       uint8_t *digest, const uint8_t *msg, size_t len)
{
    uint64_t h[8];
    const size_t nfull = len / 128, rem = len & 127;

    memcpy(h, h0, sizeof h);
    /* An odd last whole block joins a one-block tail: one kernel call of two blocks
     * instead of two calls of one (a row that interleaves two blocks, as avx512 does,
     * runs a lone block at nearly the cost of a pair). */
    if ((nfull & 1) && rem + 17 <= 128) {
        if (nfull > 1)
            k->compress(h, msg, nfull - 1);
        tail512(k, h, msg, len, 128);
    } else {
        if (nfull)
            k->compress(h, msg, nfull);
        tail512(k, h, msg, len, 0);
    }
    for (size_t i = 0; i < digest_size / 8; i++)
        store64_be(digest + 8 * i, h[i]);
    ac_wipe_words(h, sizeof h);
}

int archcrypt_hash(int hash_id, uint8_t *digest, const uint8_t *msg, size_t len)
{
    if (!known(hash_id) || digest == NULL || (msg == NULL && len > 0))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    if (variants[hash_id].wide)
        oneshot512(ac_sha512_kernel(), (const uint64_t *)variants[hash_id].h0,
                   variants[hash_id].digest_size, digest, msg, len);
    else
        oneshot256(ac_sha256_kernel(), (const uint32_t *)variants[hash_id].h0,
                   variants[hash_id].digest_size, digest, msg, len);
    return ARCHCRYPT_OK;
}

/*
 * Many messages through a kernel with compress_lanes: a multi-buffer scheduler. Each
 * lane works through one message as two runs of blocks, the whole blocks straight from
 * the message, then its padded tail (section 5.1, one or two blocks) from the lane's
 * own buffer. Every step compresses all lanes by the shortest run left among them; a
 * lane whose run ends moves to its tail, or writes its digest and takes the next
 * message. So messages of any mix of lengths keep the lanes full. Once the messages run
 * out, lanes fall idle: an idle lane rides along on a busy lane's input into its own
 * scratch state while enough lanes are busy for a wide step to beat one message at a
 * time (many_batch sets how many), and below that the busy lanes finish through the
 * row's narrower lane path if it has one, else one by one on its compress. One
 * scheduler serves both word sizes (SHA-256 over 16 lanes of 32 bits, SHA-512 over 8 of
 * 64, whatever the row offers) and HMAC, whose messages start from a keyed state that
 * has absorbed one block already.
 */
#define MANY_MAX_LANES (SHA256_MAX_LANES > SHA512_MAX_LANES ? SHA256_MAX_LANES : SHA512_MAX_LANES)

typedef struct {
    const sha256_kernel *k256;  /* one of the two */
    const sha512_kernel *k512;
    /* k256's lane path for this batch: compress_lanes, or compress_lanes_narrow for a
     * batch of half the wide lanes or fewer (many_batch). */
    void (*lanes256)(uint32_t (*h)[8], const uint8_t *const *in, size_t nblocks);
    size_t lanes;
    /* k256's narrower lane path for a wide batch's last messages (narrow_lanes 0: none). */
    void (*narrow256)(uint32_t (*h)[8], const uint8_t *const *in, size_t nblocks);
    size_t narrow_lanes;
    size_t keep;                /* the wide path runs while at least this many lanes are busy */
    size_t bs;                  /* block size: 64 or 128 */
    size_t hsize;               /* bytes of one lane's state: 32 or 64 */
    const void *h_start;        /* every message's starting state */
    uint64_t prefix;            /* bytes the starting state has absorbed */
    size_t digest_size;
} many_job;

typedef struct {
    const uint8_t *p;           /* next block of the current run */
    size_t left;                /* blocks left in the current run */
    size_t msg;                 /* index of the message in this lane */
    size_t tail_blocks;         /* blocks in tail: 1 or 2, plus 1 for a copied block */
    int in_tail;                /* 0: the message's whole blocks, 1: the padded tail */
    int idle;                   /* no message: the lane's state is scratch */
    uint8_t tail[3 * AC_HASH_MAX_BLOCK];
} many_lane;

static inline __attribute__((always_inline)) void many_compress_lanes(const many_job *j, void *h,
                                                                       const uint8_t *const *ptr, size_t n)
{
    if (j->k512)
        j->k512->compress_lanes((uint64_t(*)[8])h, ptr, n);
    else
        j->lanes256((uint32_t(*)[8])h, ptr, n);
}

static inline __attribute__((always_inline)) void many_compress(const many_job *j, void *h, const uint8_t *in, size_t n)
{
    if (j->k512)
        j->k512->compress((uint64_t *)h, in, n);
    else
        j->k256->compress((uint32_t *)h, in, n);
}

static inline __attribute__((always_inline)) void many_digest(const many_job *j, uint8_t *out, const void *h)
{
    if (j->k512)
        for (size_t i = 0; i < j->digest_size / 8; i++)
            store64_be(out + 8 * i, ((const uint64_t *)h)[i]);
    else
        for (size_t i = 0; i < j->digest_size / 4; i++)
            store32_be(out + 4 * i, ((const uint32_t *)h)[i]);
}

/* A lane's message after `step` more blocks of its current run: on to its padded tail
 * when the whole blocks are done; 1 when the tail is done too (the digest is ready). */
static inline __attribute__((always_inline)) int lane_advance(const many_job *j, many_lane *ln,
                                                               size_t step)
{
    ln->p += j->bs * step;
    ln->left -= step;
    if (ln->left > 0)
        return 0;
    if (!ln->in_tail) {
        ln->p = ln->tail;
        ln->left = ln->tail_blocks;
        ln->in_tail = 1;
        return 0;
    }
    return 1;
}

/* The lane's padded tail, and its first run: the whole blocks, or the tail when there
 * are none left. A message under two blocks is copied whole into the tail buffer: one
 * run, so one multi-lane step per message instead of two (the step, not the copy, is
 * what costs at 64 bytes). */
static inline __attribute__((always_inline)) void lane_start(const many_job *j, many_lane *ln, void *h,
                                                              size_t msg, const uint8_t *data, size_t len)
{
    const size_t bs = j->bs, len_field = bs / 8;
    const size_t full = len / bs * bs, rem = len % bs;
    const size_t head = full <= bs ? full : 0;      /* whole blocks copied with the tail */
    const size_t tail_len = head + (rem + 1 + len_field <= bs ? bs : 2 * bs);
    const uint64_t total = j->prefix + (uint64_t)len;

    memcpy(h, j->h_start, j->hsize);
    /* The zeros from the 16-byte chunk the message ends in, then the message over them:
     * no rep stosq or movsq (see copy_short), whose start-up cost is a good part of a
     * 64-byte message's. */
    const size_t z = (head + rem) & ~(size_t)15;
    ac_wipe_words(ln->tail + z, tail_len - z);
    copy_short(ln->tail, data + full - head, head + rem);
    ln->tail[head + rem] = 0x80;
    /* The bit count: 64 bits for SHA-256 (modulo 2^64), 128 for SHA-512, whose high
     * half is the byte count's top three bits (zeros included above). */
    if (len_field == 16)
        store64_be(ln->tail + tail_len - 16, total >> 61);
    store64_be(ln->tail + tail_len - 8, total << 3);
    ln->tail_blocks = tail_len / bs;
    ln->msg = msg;
    if (full > head) {
        ln->p = data;
        ln->left = full / bs;
        ln->in_tail = 0;
    } else {
        ln->p = ln->tail;
        ln->left = ln->tail_blocks;
        ln->in_tail = 1;
    }
}

static inline __attribute__((always_inline)) void many_run(const many_job *j, size_t n, const uint8_t *const *msgs,
                                                            const size_t *lens, uint8_t *digests)
{
    const size_t L = j->lanes, ds = j->digest_size;
    _Alignas(64) uint8_t h[MANY_MAX_LANES * 64];
    many_lane lane[MANY_MAX_LANES];
    const uint8_t *ptr[MANY_MAX_LANES];
    size_t next = 0, active = 0;

    for (size_t l = 0; l < L; l++) {
        lane[l].idle = next >= n;
        if (!lane[l].idle) {
            lane_start(j, &lane[l], h + l * j->hsize, next, msgs[next], lens[next]);
            next++;
            active++;
        }
    }

    while (active >= j->keep) {
        size_t step = SIZE_MAX, busy = 0;
        for (size_t l = 0; l < L; l++)
            if (!lane[l].idle && lane[l].left < step) {
                step = lane[l].left;
                busy = l;
            }
        /* An idle lane reads the busy lane with the shortest run: step blocks exist there. */
        for (size_t l = 0; l < L; l++)
            ptr[l] = lane[l].idle ? lane[busy].p : lane[l].p;
        many_compress_lanes(j, h, ptr, step);
        for (size_t l = 0; l < L; l++) {
            many_lane *ln = &lane[l];
            if (ln->idle || !lane_advance(j, ln, step))
                continue;
            many_digest(j, digests + ln->msg * ds, h + l * j->hsize);
            if (next < n) {
                lane_start(j, ln, h + l * j->hsize, next, msgs[next], lens[next]);
                next++;
            } else {
                ln->idle = 1;
                active--;
            }
        }
    }

    /* Fewer than keep lanes still busy (next == n by now). With a narrower path (SHA-256
     * sha_ni_avx512: sha_ni's two chains, 1.74 c/B per message against 2.08 one at a
     * time), the busy lanes run through it two at a time, each slot taking the next
     * waiting lane as its own finishes; the slots' states sit side by side in hn. */
    const size_t NL = j->narrow_lanes;
    if (NL >= 2 && active >= NL) {
        _Alignas(64) uint8_t hn[MANY_MAX_LANES * 64];
        size_t idx[MANY_MAX_LANES], k = 0;
        for (size_t l = 0; l < L; l++)
            if (!lane[l].idle)
                idx[k++] = l;
        for (size_t s = 0; s < NL; s++)
            memcpy(hn + s * j->hsize, h + idx[s] * j->hsize, j->hsize);
        size_t wait = NL, busyc = NL;
        while (busyc == NL) {
            size_t step = SIZE_MAX;
            for (size_t s = 0; s < NL; s++) {
                if (lane[idx[s]].left < step)
                    step = lane[idx[s]].left;
                ptr[s] = lane[idx[s]].p;
            }
            j->narrow256((uint32_t(*)[8])hn, ptr, step);
            for (size_t s = 0; s < NL; s++) {
                many_lane *ln = &lane[idx[s]];
                if (!lane_advance(j, ln, step))
                    continue;
                many_digest(j, digests + ln->msg * ds, hn + s * j->hsize);
                ln->idle = 1;
                if (wait < k) {
                    idx[s] = idx[wait++];
                    memcpy(hn + s * j->hsize, h + idx[s] * j->hsize, j->hsize);
                } else {
                    busyc--;
                }
            }
        }
        /* What is left (one lane for two slots) finishes below from its own state. */
        for (size_t s = 0; s < NL; s++)
            if (!lane[idx[s]].idle)
                memcpy(h + idx[s] * j->hsize, hn + s * j->hsize, j->hsize);
        ac_wipe(hn, NL * j->hsize);
    }

    /* Fewer than keep lanes still busy (next == n by now): one by one. */
    for (size_t l = 0; l < L; l++) {
        many_lane *ln = &lane[l];
        if (ln->idle)
            continue;
        many_compress(j, h + l * j->hsize, ln->p, ln->left);
        if (!ln->in_tail)
            many_compress(j, h + l * j->hsize, ln->tail, ln->tail_blocks);
        many_digest(j, digests + ln->msg * ds, h + l * j->hsize);
    }

    /* Every lane's state (idle ones hashed other lanes' data) and the part of its tail
     * buffer this block size uses (the rest of a lane holds only pointers and counts). */
    for (size_t l = 0; l < L; l++)
        ac_wipe_words(lane[l].tail, 3 * j->bs);
    ac_wipe(h, L * j->hsize);
}

/* many_run compiled twice, with the block and state sizes constant: the scheduler's
 * work per 64-byte message is a good part of the message's cost. */
static void many_run256(const many_job *j, size_t n, const uint8_t *const *msgs,
                        const size_t *lens, uint8_t *digests)
{
    many_job c = *j;

    c.k512 = NULL;
    c.bs = 64;
    c.hsize = 32;
    many_run(&c, n, msgs, lens, digests);
}

static void many_run512(const many_job *j, size_t n, const uint8_t *const *msgs,
                        const size_t *lens, uint8_t *digests)
{
    many_job c = *j;

    c.k256 = NULL;
    c.narrow_lanes = 0;
    c.bs = 128;
    c.hsize = 64;
    many_run(&c, n, msgs, lens, digests);
}

static void many_batch(const many_job *j, size_t n, const uint8_t *const *msgs,
                       const size_t *lens, uint8_t *digests)
{
    many_job c = *j;
    if (j->k512) {
        /* A step of avx512's eight lanes costs about two one-message compresses (8 x 16
         * KiB: 1.14 c/B per message against 4.56 one at a time, natively on the Intel
         * AVX-512 host), so it pays down to three busy lanes: 12 x 16 KiB, whose last
         * four messages ran one by one, 2.28 -> 1.52 c/B per message. */
        c.keep = c.lanes / 4 + 1;
        many_run512(&c, n, msgs, lens, digests);
        return;
    }
    /* More than half the lanes: a half-idle step of sixteen lanes costs about what eight
     * messages cost through the narrow path's two chains. */
    c.keep = c.lanes / 2 + 1;
    c.lanes256 = j->k256->compress_lanes;
    if (j->k256->compress_lanes_narrow != NULL) {
        c.narrow256 = j->k256->compress_lanes_narrow;
        c.narrow_lanes = j->k256->narrow_lanes;
    }
    if (c.narrow_lanes && 2 * n <= c.lanes) {
        c.lanes256 = c.narrow256;
        c.lanes = c.narrow_lanes;
        c.keep = c.lanes / 2 + 1;
        c.narrow_lanes = 0;
    }
    many_run256(&c, n, msgs, lens, digests);
}

/* The batch scheduler for one of the two kernels, or 0 when it has no multi-lane path
 * (then the caller hashes one message at a time). */
static int many_setup(many_job *j, const sha256_kernel *k256, const sha512_kernel *k512,
                      size_t digest_size)
{
    memset(j, 0, sizeof *j);
    j->k256 = k256;
    j->k512 = k512;
    if (k512) {
        j->lanes = k512->compress_lanes ? k512->lanes : 0;
        j->bs = 128;
        j->hsize = 64;
    } else {
        j->lanes = k256->compress_lanes ? k256->lanes : 0;
        j->bs = 64;
        j->hsize = 32;
    }
    j->digest_size = digest_size;
    return j->lanes >= 2;
}

int archcrypt_hash_many(int hash_id, size_t n, const uint8_t *const *msgs, const size_t *lens,
                        uint8_t *digests)
{
    if (!known(hash_id))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    if (n == 0)
        return ARCHCRYPT_OK;
    if (msgs == NULL || lens == NULL || digests == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    /* Checked whole before any digest is written: a bad entry leaves digests untouched. */
    for (size_t i = 0; i < n; i++)
        if (msgs[i] == NULL && lens[i] > 0)
            return ARCHCRYPT_ERR_INVALID_ARGUMENT;

    const int wide = variants[hash_id].wide;
    const size_t ds = variants[hash_id].digest_size;
    const sha256_kernel *k256 = wide ? NULL : ac_sha256_kernel();
    const sha512_kernel *k512 = wide ? ac_sha512_kernel() : NULL;

    many_job j;
    if (n >= 2 && many_setup(&j, k256, k512, ds)) {
        j.h_start = variants[hash_id].h0;
        j.prefix = 0;
        many_batch(&j, n, msgs, lens, digests);
        return ARCHCRYPT_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (wide)
            oneshot512(k512, (const uint64_t *)variants[hash_id].h0, ds, digests + i * ds, msgs[i],
                       lens[i]);
        else
            oneshot256(k256, (const uint32_t *)variants[hash_id].h0, ds, digests + i * ds, msgs[i],
                       lens[i]);
    }
    return ARCHCRYPT_OK;
}

/* HMAC of many messages under one key (hmac.c): both keyed states have absorbed one
 * block; the inner hashes run as one batch, then the outer ones over the inner digests. */
int ac_hmac_many(const ac_hash_ctx *inner, const ac_hash_ctx *outer, size_t n,
                 const uint8_t *const *msgs, const size_t *lens, uint8_t *tags)
{
    const int wide = inner->wide;
    const size_t ds = inner->digest_size;
    many_job j;

    if (n < 2 || !many_setup(&j, wide ? NULL : inner->k.k256, wide ? inner->k.k512 : NULL, ds))
        return 0;
    j.prefix = inner->block_size;
    j.h_start = wide ? (const void *)inner->h.w64 : (const void *)inner->h.w32;
    /* Inner digests straight into tags, then the outer hash of each in place: the
     * scheduler reads a lane's message into its tail buffer before it writes that
     * message's digest. */
    many_batch(&j, n, msgs, lens, tags);
    const uint8_t *inner_digests[64];
    size_t dlens[64];
    for (size_t done = 0; done < n; done += 64) {
        size_t m = n - done < 64 ? n - done : 64;
        for (size_t i = 0; i < m; i++) {
            inner_digests[i] = tags + (done + i) * ds;
            dlens[i] = ds;
        }
        j.h_start = wide ? (const void *)outer->h.w64 : (const void *)outer->h.w32;
        many_batch(&j, m, inner_digests, dlens, tags + done * ds);
    }
    return 1;
}

archcrypt_hash_ctx *archcrypt_hash_new(int hash_id)
{
    ac_hash_ctx *ctx = malloc(sizeof *ctx);
    if (ctx != NULL && ac_hash_init(ctx, hash_id) != ARCHCRYPT_OK) {
        free(ctx);      /* init wrote nothing into it */
        ctx = NULL;
    }
    return ctx;
}

archcrypt_hash_ctx *archcrypt_hash_copy(const archcrypt_hash_ctx *ctx)
{
    if (ctx == NULL)
        return NULL;
    ac_hash_ctx *copy = malloc(sizeof *copy);
    if (copy != NULL)
        *copy = *ctx;
    return copy;
}

int archcrypt_hash_update(archcrypt_hash_ctx *ctx, const uint8_t *msg, size_t len)
{
    if (ctx == NULL || (msg == NULL && len > 0))
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return ac_hash_update(ctx, msg, len);
}

int archcrypt_hash_final(archcrypt_hash_ctx *ctx, uint8_t *digest)
{
    if (ctx == NULL || digest == NULL)
        return ARCHCRYPT_ERR_INVALID_ARGUMENT;
    return ac_hash_final(ctx, digest);
}

void archcrypt_hash_free(archcrypt_hash_ctx *ctx)
{
    if (ctx == NULL)
        return;
    ac_wipe(ctx, sizeof *ctx);
    free(ctx);
}
