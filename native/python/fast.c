/* archcrypt._fast: the per-message one-shot calls (AEAD seal and open, SHA-2, HMAC, Poly1305,
 * ChaCha20, Camellia-ECB) as a hand-written CPython extension, beside the cffi binding.
 *
 * Why a second binding. Through cffi, a 64-byte seal cost ~520 ns in the call alone (the
 * kernel ~290 ns, cffi converting seven arguments the rest), ~150 ns to allocate C memory for
 * the result and ~100-170 ns to copy it into a bytes object: 1.4-2.1x pyca/cryptography and
 * hashlib, which build their result bytes in C and have the kernel fill it. Here every call
 * takes its arguments as a vector (METH_FASTCALL), reads bytes without a conversion and any
 * other contiguous buffer through the buffer protocol, allocates the result bytes once
 * (PyBytes_FromStringAndSize(NULL, n)) and has the kernel write into it: no C-side output, no
 * copy, no wipe of a copy left behind. pyca/cryptography moved its primitives off cffi to a
 * compiled extension (PyO3, `_rust.abi3.so`) for the same per-call costs; its cffi OpenSSL
 * binding lives on only for what is seldom called. So does archcrypt._native here:
 * introspection, dispatch control, streaming contexts and batches stay on cffi.
 *
 * One library, two modules. This file is linked into the same shared object as cffi's module
 * (native/build_ffi.py's build_extension(), one recipe and one build record), which exports
 * PyInit__fast beside PyInit__native; crypto/_lib.py loads it from that file (PEP 489:
 * several modules in one library). So there is one copy of libarchcrypt's dispatch state in
 * the process: ARCHCRYPT_FORCE, ARCHCRYPT_DISABLE_CPU_FEATURES, archcrypt_force() and the
 * per-thread override set through cffi choose the row these calls run, as they do for cffi's.
 * A second .so linking libarchcrypt.a again would hold a second, unforced copy.
 *
 * The GIL is kept for inputs shorter than GIL_RELEASE_MIN bytes. Releasing and retaking it
 * costs ~50-110 ns of the caller's CPU time even when no other thread wants it (~410
 * instructions, among them the lock's atomics), 10-50 % of a 1 KiB call and up to 12 % of a
 * 4 KiB one; from 16 KiB on it is at most ~5 % for every kernel, and the kernel runs long
 * enough (3-40 us) for another thread to wake and use the time; below it the call keeps the
 * GIL for under a thousandth of the 5 ms switch interval (BENCHMARKS.md, "Python facade per
 * call"). A non-bytes input stays exported while the GIL is released, so a bytearray
 * cannot be resized under the kernel.
 *
 * Errors are the facade's (archcrypt.crypto.errors), with the facade's messages: this module
 * is private and crypto/ its only caller, which has already checked the algorithm name.
 * Stable ABI (Py_LIMITED_API 3.11: the buffer protocol joined it then), as cffi's module is,
 * so one file serves every CPython >= 3.11 of the target. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "archcrypt.h"

#ifndef ARCHCRYPT_FFI_BUILD
#error "archcrypt._fast is compiled by native/build_ffi.py's build_extension(), nothing else"
#endif

/* Shortest input (bytes read by the kernel) that runs with the GIL released. */
#define GIL_RELEASE_MIN 16384

#define CAPSULE_CAMELLIA "archcrypt._fast.camellia_key"

/* ---- module state: the facade's exception classes --------------------------------------- */

/* By -status: ARCHCRYPT_ERR_INVALID_ARGUMENT (-1) .. ARCHCRYPT_ERR_CONFIG (-10). */
#define STATUS_COUNT 10

typedef struct {
    PyObject *by_status[STATUS_COUNT + 1];  /* [0]: any other status (ArchcryptError) */
} fast_state;

/* The facade's class for each status (crypto/errors.py): the one status -> exception table. */
static const char *const status_class[STATUS_COUNT + 1] = {
    [0] = "ArchcryptError",
    [-ARCHCRYPT_ERR_INVALID_ARGUMENT] = "InvalidInputError",
    [-ARCHCRYPT_ERR_AUTHENTICATION] = "AuthenticationError",
    [-ARCHCRYPT_ERR_MESSAGE_TOO_LONG] = "MessageTooLongError",
    [-ARCHCRYPT_ERR_UNKNOWN_ALGORITHM] = "UnknownAlgorithmError",
    [-ARCHCRYPT_ERR_UNKNOWN_IMPLEMENTATION] = "UnknownImplementationError",
    [-ARCHCRYPT_ERR_UNSUPPORTED] = "UnsupportedImplementationError",
    [-ARCHCRYPT_ERR_SELFTEST] = "ArchcryptError",
    [-ARCHCRYPT_ERR_NO_MEMORY] = NULL,  /* MemoryError */
    [-ARCHCRYPT_ERR_STATE] = "ArchcryptError",
    [-ARCHCRYPT_ERR_CONFIG] = "ConfigurationError",
};

static PyObject *error_class(PyObject *module, int status)
{
    fast_state *st = PyModule_GetState(module);
    int index = status < 0 && status >= -STATUS_COUNT ? -status : 0;
    return st->by_status[index];
}

/* Raise the facade's exception for a failing status: "<context>: <archcrypt_strerror>". */
static PyObject *raise_status(PyObject *module, int status, const char *context)
{
    PyErr_Format(error_class(module, status), "%s: %s", context, archcrypt_strerror(status));
    return NULL;
}

static PyObject *invalid_input(PyObject *module)
{
    return error_class(module, ARCHCRYPT_ERR_INVALID_ARGUMENT);
}

static PyObject *length_error(PyObject *module, const char *name, Py_ssize_t expected,
                              Py_ssize_t got)
{
    PyErr_Format(invalid_input(module), "%s must be %zd bytes, got %zd", name, expected, got);
    return NULL;
}

/* archcrypt_init() once: a malformed ARCHCRYPT_FORCE or ARCHCRYPT_DISABLE_CPU_FEATURES is a
 * ConfigurationError before any kernel runs, as the facade's init() raises it. The GIL
 * guards `ready`. */
static int ready;

static int ensure_ready(PyObject *module)
{
    int status = archcrypt_init();
    if (status != ARCHCRYPT_OK) {
        const char *reason = archcrypt_last_error();
        PyErr_SetString(error_class(module, ARCHCRYPT_ERR_CONFIG),
                        reason[0] ? reason : archcrypt_strerror(status));
        return -1;
    }
    ready = 1;
    return 0;
}

#define REQUIRE_READY(module)                   \
    do {                                        \
        if (!ready && ensure_ready(module) < 0) \
            return NULL;                        \
    } while (0)

/* ---- arguments -------------------------------------------------------------------------- */

/* A read-only byte input: bytes as they are, any other contiguous buffer exported for the
 * call (released by input_release). */
typedef struct {
    const uint8_t *ptr;
    Py_ssize_t len;
    Py_buffer view;  /* view.obj is NULL for bytes */
} input;

static const uint8_t no_bytes[1];

static int input_get(PyObject *obj, const char *name, input *in)
{
    if (PyBytes_CheckExact(obj)) {
        in->ptr = (const uint8_t *)PyBytes_AsString(obj);
        in->len = PyBytes_Size(obj);
        in->view.obj = NULL;
        return 0;
    }
    if (PyObject_GetBuffer(obj, &in->view, PyBUF_SIMPLE) == 0) {
        /* An exporter may hand out NULL for an empty buffer; the C API wants a pointer. */
        in->ptr = in->view.buf != NULL ? (const uint8_t *)in->view.buf : no_bytes;
        in->len = in->view.len;
        return 0;
    }
    in->view.obj = NULL;
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        PyObject *type_name = PyType_GetName(Py_TYPE(obj));
        if (type_name == NULL)
            return -1;
        PyErr_Format(PyExc_TypeError,
                     "%s must be a contiguous bytes-like object "
                     "(bytes, bytearray, memoryview), not %U",
                     name, type_name);
        Py_DECREF(type_name);
    }
    return -1;
}

static void input_release(input *in)
{
    if (in->view.obj != NULL)
        PyBuffer_Release(&in->view);
}

/* Acquire inputs in order; on failure release those already held. */
static int inputs_get(PyObject *const *args, const char *const *names, input *in, int count)
{
    for (int i = 0; i < count; i++) {
        if (input_get(args[i], names[i], &in[i]) < 0) {
            while (i-- > 0)
                input_release(&in[i]);
            return -1;
        }
    }
    return 0;
}

static void inputs_release(input *in, int count)
{
    for (int i = 0; i < count; i++)
        input_release(&in[i]);
}

static int check_nargs(const char *function, Py_ssize_t nargs, Py_ssize_t expected)
{
    if (nargs == expected)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments, got %zd", function,
                 expected, nargs);
    return -1;
}

/* A bytes object of `size` bytes for the kernel to fill (its contents are undefined until
 * then; it is not seen by Python before). */
static PyObject *new_output(Py_ssize_t size, uint8_t **out)
{
    PyObject *result = PyBytes_FromStringAndSize(NULL, size);
    if (result != NULL)
        *out = (uint8_t *)PyBytes_AsString(result);
    return result;
}

/* Drop the result of a failed call, wiped first: whatever the kernel wrote before it
 * failed (a failed open has wiped its output already) is not left in freed memory. */
static void discard_output(PyObject **result)
{
    archcrypt_wipe(PyBytes_AsString(*result), (size_t)PyBytes_Size(*result));
    Py_CLEAR(*result);
}

/* Run `call` with the GIL released when `length` bytes make it worth it. */
#define RUN(length, call)                  \
    do {                                   \
        if ((length) >= GIL_RELEASE_MIN) { \
            Py_BEGIN_ALLOW_THREADS         \
            call;                          \
            Py_END_ALLOW_THREADS           \
        } else {                           \
            call;                          \
        }                                  \
    } while (0)

/* ---- AEAD: ChaCha20-Poly1305 and XChaCha20-Poly1305 ------------------------------------- */

typedef int (*aead_fn)(uint8_t *out, const uint8_t *in, size_t len, const uint8_t *aad,
                       size_t aad_len, const uint8_t *key32, const uint8_t *nonce);

typedef struct {
    const char *seal_context, *open_context;  /* "<algorithm> seal" / "... open" */
    aead_fn seal, open;
    Py_ssize_t nonce_size;
} aead_alg;

static const aead_alg CHACHA20_POLY1305 = {
    "chacha20-poly1305 seal", "chacha20-poly1305 open",
    archcrypt_chacha20poly1305_seal, archcrypt_chacha20poly1305_open,
    ARCHCRYPT_CHACHA20POLY1305_NONCE_SIZE,
};
static const aead_alg XCHACHA20_POLY1305 = {
    "xchacha20-poly1305 seal", "xchacha20-poly1305 open",
    archcrypt_xchacha20poly1305_seal, archcrypt_xchacha20poly1305_open,
    ARCHCRYPT_XCHACHA20POLY1305_NONCE_SIZE,
};

enum { KEY, NONCE, DATA, AAD, AEAD_ARGS };

/* (key, nonce, then count - 2 more inputs) of a ChaCha20-based call, checked in the
 * facade's order: the key, its length, the nonce, its length, then the rest. */
_Static_assert(ARCHCRYPT_AEAD_KEY_SIZE == ARCHCRYPT_CHACHA20_KEY_SIZE,
               "the AEAD key is the ChaCha20 key");

static int keyed_args(PyObject *module, PyObject *const *args, const char *const *names,
                      int count, Py_ssize_t nonce_size, input *in)
{
    if (inputs_get(args, names, in, 1) < 0)
        return -1;
    if (in[KEY].len != ARCHCRYPT_CHACHA20_KEY_SIZE) {
        length_error(module, "key", ARCHCRYPT_CHACHA20_KEY_SIZE, in[KEY].len);
        inputs_release(in, 1);
        return -1;
    }
    if (inputs_get(args + NONCE, names + NONCE, in + NONCE, 1) < 0) {
        inputs_release(in, 1);
        return -1;
    }
    if (in[NONCE].len != nonce_size) {
        length_error(module, "nonce", nonce_size, in[NONCE].len);
        inputs_release(in, 2);
        return -1;
    }
    if (inputs_get(args + DATA, names + DATA, in + DATA, count - DATA) < 0) {
        inputs_release(in, 2);
        return -1;
    }
    return 0;
}

typedef enum { SEAL, OPEN } aead_direction;

/* Seal: plaintext -> ciphertext || tag. Open: ciphertext || tag -> plaintext, or the
 * facade's AuthenticationError with nothing released. */
static PyObject *fast_aead(PyObject *module, const aead_alg *alg, aead_direction direction,
                           const char *function, PyObject *const *args, Py_ssize_t nargs)
{
    input in[AEAD_ARGS];
    uint8_t *out;
    int status;

    if (check_nargs(function, nargs, AEAD_ARGS) < 0)
        return NULL;
    REQUIRE_READY(module);
    const char *const names[AEAD_ARGS] = {
        "key", "nonce", direction == SEAL ? "plaintext" : "ciphertext", "aad"};
    if (keyed_args(module, args, names, AEAD_ARGS, alg->nonce_size, in) < 0)
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t len = in[DATA].len;
    Py_ssize_t size;
    if (direction == OPEN) {
        if (len < ARCHCRYPT_AEAD_TAG_SIZE) {
            PyErr_Format(invalid_input(module),
                         "ciphertext must include the %d-byte tag, got %zd bytes",
                         ARCHCRYPT_AEAD_TAG_SIZE, len);
            goto done;
        }
        size = len - ARCHCRYPT_AEAD_TAG_SIZE;
    } else {
        if (len > PY_SSIZE_T_MAX - ARCHCRYPT_AEAD_TAG_SIZE) {
            PyErr_NoMemory();
            goto done;
        }
        size = len + ARCHCRYPT_AEAD_TAG_SIZE;
    }
    result = new_output(size, &out);
    if (result == NULL)
        goto done;
    const aead_fn run = direction == SEAL ? alg->seal : alg->open;
    RUN(len + in[AAD].len, status = run(out, in[DATA].ptr, (size_t)len, in[AAD].ptr,
                                        (size_t)in[AAD].len, in[KEY].ptr, in[NONCE].ptr));
    if (status != ARCHCRYPT_OK) {
        /* A failed open has wiped the output in the library already: nothing decrypted
         * under a forged tag is released or freed with it. */
        discard_output(&result);
        raise_status(module, status, direction == SEAL ? alg->seal_context : alg->open_context);
    }
done:
    inputs_release(in, AEAD_ARGS);
    return result;
}

/* ---- raw ChaCha20 (RFC 8439, 32-bit counter) -------------------------------------------- */

/* (key, nonce12, data, counter): the facade has checked counter's type and range. */
static PyObject *fast_chacha20_xor(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const char *const names[3] = {"key", "nonce", "data"};
    input in[3];
    uint8_t *out;
    int status;

    if (check_nargs("chacha20_xor", nargs, 4) < 0)
        return NULL;
    unsigned long counter = PyLong_AsUnsignedLong(args[3]);
    if (counter == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (counter > UINT32_MAX) {
        PyErr_Format(invalid_input(module), "counter must be in 0..2**32-1, got %lu", counter);
        return NULL;
    }
    REQUIRE_READY(module);
    if (keyed_args(module, args, names, 3, ARCHCRYPT_CHACHA20_NONCE_SIZE, in) < 0)
        return NULL;
    PyObject *result = new_output(in[2].len, &out);
    if (result != NULL) {
        RUN(in[2].len, status = archcrypt_chacha20_xor(out, in[2].ptr, (size_t)in[2].len,
                                                       in[0].ptr, in[1].ptr, (uint32_t)counter));
        if (status == ARCHCRYPT_ERR_MESSAGE_TOO_LONG) {
            discard_output(&result);
            size_t blocks = ((size_t)in[2].len + ARCHCRYPT_CHACHA20_BLOCK_SIZE - 1)
                            / ARCHCRYPT_CHACHA20_BLOCK_SIZE;
            PyErr_Format(error_class(module, status),
                         "chacha20: %zu blocks from counter %lu would wrap the 32-bit block "
                         "counter",
                         blocks, counter);
        } else if (status != ARCHCRYPT_OK) {
            discard_output(&result);
            raise_status(module, status, "chacha20");
        }
    }
    inputs_release(in, 3);
    return result;
}

/* ---- SHA-2 ------------------------------------------------------------------------------ */

static PyObject *fast_hash(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           const char *name, int hash_id, Py_ssize_t size)
{
    static const char *const names[1] = {"data"};
    input data;
    uint8_t *out;
    int status;

    if (check_nargs(name, nargs, 1) < 0)
        return NULL;
    REQUIRE_READY(module);
    if (inputs_get(args, names, &data, 1) < 0)
        return NULL;
    PyObject *result = new_output(size, &out);
    if (result != NULL) {
        RUN(data.len, status = archcrypt_hash(hash_id, out, data.ptr, (size_t)data.len));
        if (status != ARCHCRYPT_OK) {
            discard_output(&result);
            raise_status(module, status, name);
        }
    }
    input_release(&data);
    return result;
}

#define HASH_ENTRY(name, ID, SIZE)                                                          \
    static PyObject *fast_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs) \
    {                                                                                       \
        return fast_hash(module, args, nargs, #name, ID, SIZE);                             \
    }
HASH_ENTRY(sha224, ARCHCRYPT_SHA224, ARCHCRYPT_SHA224_DIGEST_SIZE)
HASH_ENTRY(sha256, ARCHCRYPT_SHA256, ARCHCRYPT_SHA256_DIGEST_SIZE)
HASH_ENTRY(sha384, ARCHCRYPT_SHA384, ARCHCRYPT_SHA384_DIGEST_SIZE)
HASH_ENTRY(sha512, ARCHCRYPT_SHA512, ARCHCRYPT_SHA512_DIGEST_SIZE)

/* ---- MACs: HMAC-SHA-2 and Poly1305 ------------------------------------------------------ */

typedef struct {
    const char *name;        /* the MAC's name, the context of its errors */
    int hash_id;             /* HMAC; -1 for Poly1305 */
    Py_ssize_t tag_size;
} mac_alg;

static const mac_alg HMAC_SHA224 = {"hmac-sha224", ARCHCRYPT_SHA224, ARCHCRYPT_SHA224_DIGEST_SIZE};
static const mac_alg HMAC_SHA256 = {"hmac-sha256", ARCHCRYPT_SHA256, ARCHCRYPT_SHA256_DIGEST_SIZE};
static const mac_alg HMAC_SHA384 = {"hmac-sha384", ARCHCRYPT_SHA384, ARCHCRYPT_SHA384_DIGEST_SIZE};
static const mac_alg HMAC_SHA512 = {"hmac-sha512", ARCHCRYPT_SHA512, ARCHCRYPT_SHA512_DIGEST_SIZE};
static const mac_alg POLY1305 = {"poly1305", -1, ARCHCRYPT_POLY1305_TAG_SIZE};

/* (key, data) -> tag. HMAC keys have any length; Poly1305 takes a 32-byte one-time key. */
static PyObject *fast_mac(PyObject *module, const mac_alg *alg, PyObject *const *args,
                          Py_ssize_t nargs)
{
    static const char *const names[2] = {"key", "data"};
    input in[2];
    uint8_t *out;
    int status;

    if (check_nargs(alg->name, nargs, 2) < 0)
        return NULL;
    REQUIRE_READY(module);
    if (inputs_get(args, names, in, 2) < 0)
        return NULL;
    PyObject *result = NULL;
    if (alg->hash_id < 0 && in[0].len != ARCHCRYPT_POLY1305_KEY_SIZE) {
        length_error(module, "key", ARCHCRYPT_POLY1305_KEY_SIZE, in[0].len);
        goto done;
    }
    result = new_output(alg->tag_size, &out);
    if (result == NULL)
        goto done;
    if (alg->hash_id < 0)
        RUN(in[1].len, status = archcrypt_poly1305(out, in[1].ptr, (size_t)in[1].len, in[0].ptr));
    else
        RUN(in[1].len, status = archcrypt_hmac(alg->hash_id, out, in[0].ptr, (size_t)in[0].len,
                                               in[1].ptr, (size_t)in[1].len));
    if (status != ARCHCRYPT_OK) {
        discard_output(&result);
        raise_status(module, status, alg->name);
    }
done:
    inputs_release(in, 2);
    return result;
}

/* (key, data, tag) -> bool, compared in constant time by the library. A tag of any other
 * length than the MAC's is an error, not a mismatch. Checked in the facade's order: the
 * tag, its length, the key, the data, then Poly1305's key length. */
static PyObject *fast_mac_verify(PyObject *module, const mac_alg *alg,
                                 PyObject *const *args, Py_ssize_t nargs)
{
    static const char *const names[3] = {"tag", "key", "data"};
    input in[3];  /* tag, key, data */
    int result;

    if (check_nargs(alg->name, nargs, 3) < 0)
        return NULL;
    REQUIRE_READY(module);
    PyObject *const ordered[3] = {args[2], args[0], args[1]};
    if (inputs_get(ordered, names, in, 1) < 0)
        return NULL;
    if (in[0].len != alg->tag_size) {
        inputs_release(in, 1);
        return length_error(module, "tag", alg->tag_size, in[0].len);
    }
    if (inputs_get(ordered + 1, names + 1, in + 1, 2) < 0) {
        inputs_release(in, 1);
        return NULL;
    }
    if (alg->hash_id < 0 && in[1].len != ARCHCRYPT_POLY1305_KEY_SIZE) {
        inputs_release(in, 3);
        return length_error(module, "key", ARCHCRYPT_POLY1305_KEY_SIZE, in[1].len);
    }
    if (alg->hash_id < 0)
        RUN(in[2].len, result = archcrypt_poly1305_verify(in[0].ptr, in[2].ptr,
                                                          (size_t)in[2].len, in[1].ptr));
    else
        RUN(in[2].len, result = archcrypt_hmac_verify(alg->hash_id, in[0].ptr,
                                                      (size_t)in[0].len, in[1].ptr,
                                                      (size_t)in[1].len, in[2].ptr,
                                                      (size_t)in[2].len));
    inputs_release(in, 3);
    if (result < 0) {
        char context[32];
        PyOS_snprintf(context, sizeof context, "%s verify", alg->name);
        return raise_status(module, result, context);
    }
    return PyBool_FromLong(result == 1);
}

#define MAC_ENTRIES(name, ALG)                                                              \
    static PyObject *fast_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs) \
    {                                                                                       \
        return fast_mac(module, &ALG, args, nargs);                                         \
    }                                                                                       \
    static PyObject *fast_##name##_verify(PyObject *module, PyObject *const *args,          \
                                          Py_ssize_t nargs)                                 \
    {                                                                                       \
        return fast_mac_verify(module, &ALG, args, nargs);                                  \
    }
MAC_ENTRIES(hmac_sha224, HMAC_SHA224)
MAC_ENTRIES(hmac_sha256, HMAC_SHA256)
MAC_ENTRIES(hmac_sha384, HMAC_SHA384)
MAC_ENTRIES(hmac_sha512, HMAC_SHA512)
MAC_ENTRIES(poly1305, POLY1305)

#define AEAD_ENTRIES(name, ALG)                                                  \
    static PyObject *fast_##name##_seal(PyObject *module, PyObject *const *args, \
                                        Py_ssize_t nargs)                        \
    {                                                                            \
        return fast_aead(module, &ALG, SEAL, #name "_seal", args, nargs);        \
    }                                                                            \
    static PyObject *fast_##name##_open(PyObject *module, PyObject *const *args, \
                                        Py_ssize_t nargs)                        \
    {                                                                            \
        return fast_aead(module, &ALG, OPEN, #name "_open", args, nargs);        \
    }
AEAD_ENTRIES(chacha20poly1305, CHACHA20_POLY1305)
AEAD_ENTRIES(xchacha20poly1305, XCHACHA20_POLY1305)

/* ---- Camellia-ECB ----------------------------------------------------------------------- */

static void camellia_key_free(PyObject *capsule)
{
    archcrypt_camellia_free(PyCapsule_GetPointer(capsule, CAPSULE_CAMELLIA));
}

/* (key) -> an expanded key in a capsule; the library frees (and wipes) it with the capsule.
 * It is only read by the ECB calls, so threads may share it. */
static PyObject *fast_camellia_key(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *const names[1] = {"key"};
    input key;

    if (check_nargs("camellia_key", nargs, 1) < 0)
        return NULL;
    REQUIRE_READY(module);
    if (inputs_get(args, names, &key, 1) < 0)
        return NULL;
    PyObject *result = NULL;
    if (key.len != ARCHCRYPT_CAMELLIA128_KEY_SIZE && key.len != ARCHCRYPT_CAMELLIA192_KEY_SIZE
        && key.len != ARCHCRYPT_CAMELLIA256_KEY_SIZE) {
        PyErr_Format(invalid_input(module),
                     "Camellia key must be 16, 24 or 32 bytes, got %zd", key.len);
        goto done;
    }
    archcrypt_camellia_key *expanded = archcrypt_camellia_new(key.ptr, (size_t)key.len);
    if (expanded == NULL) {
        PyErr_SetString(PyExc_MemoryError, "camellia: allocation failed");
        goto done;
    }
    result = PyCapsule_New(expanded, CAPSULE_CAMELLIA, camellia_key_free);
    if (result == NULL)
        archcrypt_camellia_free(expanded);
done:
    input_release(&key);
    return result;
}

typedef int (*ecb_fn)(const archcrypt_camellia_key *key, uint8_t *out, const uint8_t *in,
                      size_t len);

/* (expanded key, data) -> data through the block function, whole 16-byte blocks only. */
static PyObject *fast_camellia_ecb(PyObject *module, ecb_fn function, const char *context,
                                   PyObject *const *args, Py_ssize_t nargs)
{
    static const char *const names[1] = {"data"};
    input data;
    uint8_t *out;
    int status;

    if (check_nargs(context, nargs, 2) < 0)
        return NULL;
    const archcrypt_camellia_key *key = PyCapsule_GetPointer(args[0], CAPSULE_CAMELLIA);
    if (key == NULL)
        return NULL;  /* not a key from camellia_key(): ValueError */
    if (inputs_get(args + 1, names, &data, 1) < 0)
        return NULL;
    PyObject *result = NULL;
    if (data.len % ARCHCRYPT_CAMELLIA_BLOCK_SIZE != 0) {
        PyErr_Format(invalid_input(module), "data must be a multiple of %d bytes, got %zd",
                     ARCHCRYPT_CAMELLIA_BLOCK_SIZE, data.len);
        goto done;
    }
    result = new_output(data.len, &out);
    if (result == NULL)
        goto done;
    RUN(data.len, status = function(key, out, data.ptr, (size_t)data.len));
    if (status != ARCHCRYPT_OK) {
        discard_output(&result);
        raise_status(module, status, context);
    }
done:
    input_release(&data);
    return result;
}

static PyObject *fast_camellia_ecb_encrypt(PyObject *module, PyObject *const *args,
                                           Py_ssize_t nargs)
{
    return fast_camellia_ecb(module, archcrypt_camellia_ecb_encrypt, "camellia encrypt", args,
                             nargs);
}

static PyObject *fast_camellia_ecb_decrypt(PyObject *module, PyObject *const *args,
                                           Py_ssize_t nargs)
{
    return fast_camellia_ecb(module, archcrypt_camellia_ecb_decrypt, "camellia decrypt", args,
                             nargs);
}

/* ---- the facade's status table ---------------------------------------------------------- */

static PyObject *fast_error_class(PyObject *module, PyObject *status)
{
    long code = PyLong_AsLong(status);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    PyObject *cls = error_class(module, code < 0 && code >= -STATUS_COUNT ? (int)code : 0);
    Py_INCREF(cls);
    return cls;
}

/* ---- the module ------------------------------------------------------------------------- */

#define FAST(name, doc) {#name, (PyCFunction)(void (*)(void))fast_##name, METH_FASTCALL, doc}

static PyMethodDef fast_methods[] = {
    FAST(chacha20poly1305_seal, "(key, nonce, plaintext, aad) -> ciphertext || tag"),
    FAST(chacha20poly1305_open, "(key, nonce, ciphertext || tag, aad) -> plaintext"),
    FAST(xchacha20poly1305_seal, "(key, nonce, plaintext, aad) -> ciphertext || tag"),
    FAST(xchacha20poly1305_open, "(key, nonce, ciphertext || tag, aad) -> plaintext"),
    FAST(chacha20_xor, "(key, nonce12, data, counter) -> data XOR keystream"),
    FAST(sha224, "(data) -> digest"),
    FAST(sha256, "(data) -> digest"),
    FAST(sha384, "(data) -> digest"),
    FAST(sha512, "(data) -> digest"),
    FAST(hmac_sha224, "(key, data) -> tag"),
    FAST(hmac_sha256, "(key, data) -> tag"),
    FAST(hmac_sha384, "(key, data) -> tag"),
    FAST(hmac_sha512, "(key, data) -> tag"),
    FAST(poly1305, "(key32, data) -> tag"),
    FAST(hmac_sha224_verify, "(key, data, tag) -> bool"),
    FAST(hmac_sha256_verify, "(key, data, tag) -> bool"),
    FAST(hmac_sha384_verify, "(key, data, tag) -> bool"),
    FAST(hmac_sha512_verify, "(key, data, tag) -> bool"),
    FAST(poly1305_verify, "(key32, data, tag) -> bool"),
    FAST(camellia_key, "(key) -> expanded key (a capsule)"),
    FAST(camellia_ecb_encrypt, "(expanded key, data) -> ciphertext"),
    FAST(camellia_ecb_decrypt, "(expanded key, data) -> plaintext"),
    {"error_class", (PyCFunction)fast_error_class, METH_O,
     "(status) -> the facade's exception class for an archcrypt_status"},
    {NULL, NULL, 0, NULL},
};

static int fast_exec(PyObject *module)
{
    fast_state *st = PyModule_GetState(module);
    PyObject *errors = PyImport_ImportModule("archcrypt.crypto.errors");
    if (errors == NULL)
        return -1;
    for (int i = 0; i <= STATUS_COUNT; i++) {
        if (status_class[i] == NULL) {
            Py_INCREF(PyExc_MemoryError);
            st->by_status[i] = PyExc_MemoryError;
        } else if ((st->by_status[i] = PyObject_GetAttrString(errors, status_class[i])) == NULL) {
            Py_DECREF(errors);
            return -1;
        }
    }
    Py_DECREF(errors);
    return PyModule_AddIntConstant(module, "GIL_RELEASE_MIN", GIL_RELEASE_MIN);
}

static int fast_traverse(PyObject *module, visitproc visit, void *arg)
{
    fast_state *st = PyModule_GetState(module);
    for (int i = 0; i <= STATUS_COUNT; i++)
        Py_VISIT(st->by_status[i]);
    return 0;
}

static int fast_clear(PyObject *module)
{
    fast_state *st = PyModule_GetState(module);
    for (int i = 0; i <= STATUS_COUNT; i++)
        Py_CLEAR(st->by_status[i]);
    return 0;
}

static void fast_free(void *module)
{
    fast_clear((PyObject *)module);
}

static PyModuleDef_Slot fast_slots[] = {
    {Py_mod_exec, (void *)fast_exec},
    {0, NULL},
};

static struct PyModuleDef fast_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "archcrypt._fast",
    .m_doc = "archcrypt's one-shot calls, compiled: private, called only by archcrypt.crypto.",
    .m_size = sizeof(fast_state),
    .m_methods = fast_methods,
    .m_slots = fast_slots,
    .m_traverse = fast_traverse,
    .m_clear = fast_clear,
    .m_free = fast_free,
};

PyMODINIT_FUNC PyInit__fast(void);

PyMODINIT_FUNC PyInit__fast(void)
{
    return PyModuleDef_Init(&fast_module);
}
