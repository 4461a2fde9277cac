/* archcrypt_wipe: ac_wipe for callers outside the library (a binding's reused output buffers). */
#include "archcrypt.h"
#include "common.h"

void archcrypt_wipe(void *buf, size_t len)
{
    ac_wipe(buf, len);
}
