/* Internal dispatch interface: algorithm ids, table rows, and the hot-path lookup. */
#ifndef ARCHCRYPT_DISPATCH_H
#define ARCHCRYPT_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    AC_ALG_CHACHA20 = 0,
    AC_ALG_POLY1305,
    AC_ALG_CHACHA20_POLY1305,
    AC_ALG_SHA256,          /* also serves SHA-224 */
    AC_ALG_SHA512,          /* also serves SHA-384 */
    AC_ALG_CAMELLIA,
    AC_ALG_COUNT
} ac_alg_id;

/* One row of a dispatch table. `requires` names CPU features (cpu.h) separated by
 * commas; rows are ordered fastest first, portable (requires "") last. */
typedef struct {
    const char *name;
    const char *requires;
    const void *kernel;     /* points at the algorithm's kernel struct (<alg>/<alg>.h) */
} ac_impl_row;

/* The kernel in effect for the calling thread: its override, else the process choice.
 * Callers cast to the algorithm's kernel type. Initialises the library if needed. */
const void *ac_kernel(ac_alg_id alg);

#endif
