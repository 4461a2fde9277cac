/* The 64 rounds of FIPS 180-4 section 6.2.2 in the order sha_ni.c issues them, for one chain and for several. */
#ifndef ARCHCRYPT_SHA256_SHA_NI_ROUNDS_H
#define ARCHCRYPT_SHA256_SHA_NI_ROUNDS_H

/* Sixteen groups of four rounds over the rotating schedule groups w0..w3 (W[0..15] on
 * entry); from the fifth group on, SCHED makes the next four words first. The including
 * file defines RNDS4(w, g) (four rounds with schedule group w and K group g) and
 * SCHED(w0, w1, w2, w3) (W[t..t+3] into w0 from the previous sixteen words): one chain
 * or several side by side, the order is the same. */
#define SHA_NI_ROUNDS(w0, w1, w2, w3)                          \
    do {                                                       \
        RNDS4(w0, 0);                                          \
        RNDS4(w1, 1);                                          \
        RNDS4(w2, 2);                                          \
        RNDS4(w3, 3);                                          \
        SCHED(w0, w1, w2, w3); RNDS4(w0, 4);                   \
        SCHED(w1, w2, w3, w0); RNDS4(w1, 5);                   \
        SCHED(w2, w3, w0, w1); RNDS4(w2, 6);                   \
        SCHED(w3, w0, w1, w2); RNDS4(w3, 7);                   \
        SCHED(w0, w1, w2, w3); RNDS4(w0, 8);                   \
        SCHED(w1, w2, w3, w0); RNDS4(w1, 9);                   \
        SCHED(w2, w3, w0, w1); RNDS4(w2, 10);                  \
        SCHED(w3, w0, w1, w2); RNDS4(w3, 11);                  \
        SCHED(w0, w1, w2, w3); RNDS4(w0, 12);                  \
        SCHED(w1, w2, w3, w0); RNDS4(w1, 13);                  \
        SCHED(w2, w3, w0, w1); RNDS4(w2, 14);                  \
        SCHED(w3, w0, w1, w2); RNDS4(w3, 15);                  \
    } while (0)

#endif
