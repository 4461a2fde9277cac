/* archcrypt: public C header. The declarations live in archcrypt_api.h so that
 * cffi can read them verbatim; this wrapper adds what a C compiler needs. */
#ifndef ARCHCRYPT_H
#define ARCHCRYPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "archcrypt_api.h"

#define ARCHCRYPT_NO_INDEX ((size_t)-1)

#ifdef __cplusplus
}
#endif

#endif
