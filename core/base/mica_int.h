/*
 * core/base/mica_int.h - the base of libmica, shared by everything above
 * it (registry/, core/, core/manifest/): the context (its error slot,
 * logger, load problems), small utilities, and through fields.h the
 * validator.  Not installed.  Names: mica__ for internal non-static
 * symbols.
 */
#ifndef MICA_INT_H
#define MICA_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"
#include "mica/module.h"

#include "fields.h"

#define MICA_ERROR_MAX 1024

/* The error slot of one module call (mica_error_t of the ABI). */
struct mica_error {
    int set;
    char msg[MICA_ERROR_MAX];
};

/* ---- context (core/base/context.c) ----------------------------------------- */

/* The error slot of one thread on one context (core/base/context.c). */
typedef struct mica__error_slot {
    pthread_t thread;
    char msg[MICA_ERROR_MAX];
    struct mica__error_slot *next;
} mica__error_slot_t;

struct mica_context {
    /* Error slots, one per thread that failed on this context: the
     * execution contexts of one engine run on several threads, and their
     * failures must not race on one buffer (issue 15). */
    pthread_mutex_t error_lock;
    mica__error_slot_t *errors;
    mica_log_fn log_fn;
    void *log_user;
    mica_log_level_t log_max;
    /* The registry's (registry/), made when a first module loads; its
     * own function frees it. */
    struct mica__registry *registry;
    void (*registry_free)(struct mica__registry *registry);
    char **problems;
    int32_t nb_problems;
    char *prefer;            /* deploy-time choices, "Type=impl,..." */
    int32_t manifest_modules; /* manifests may load modules themselves */
    char **folders;          /* real paths a model's files may also be in */
    int32_t nb_folders;
};

/*
 * Record `fmt` as the context's error and return `status`.  Use as
 * `return mica__fail(ctx, MICA_ERR_INVALID, "layer '%s': ...", name);`
 */
mica_status_t mica__fail(mica_context_t *ctx, mica_status_t status,
                         const char *fmt, ...) MICA_PRINTF(3, 4);
mica_status_t mica__vfail(mica_context_t *ctx, mica_status_t status,
                          const char *fmt, va_list ap);

/* Log through the context's logger (ctx may be NULL: stderr). */
void mica__log(mica_context_t *ctx, mica_log_level_t level, const char *fmt,
               ...) MICA_PRINTF(3, 4);

/* Log a module-load problem as a warning and keep it for the listing. */
void mica__problem(mica_context_t *ctx, const char *fmt, ...)
    MICA_PRINTF(2, 3);

/*
 * The level named by $MICA_LOG_LEVEL ("error", "warning", "info", "debug"
 * or a digit 0..3), or `dflt` when it is unset or not understood (a
 * context refuses to be made then).
 */
int mica__log_level_env(int dflt);

/* "error: ", "warning: ", "" (info), "debug: ". */
const char *mica__log_prefix(mica_log_level_t level);

/* Reset a module call's error slot. */
static inline void mica__error_clear(mica_error_t *err)
{
    err->set = 0;
    err->msg[0] = '\0';
}

/* A module call's message, or `fallback` if it set none. */
static inline const char *mica__error_msg(const mica_error_t *err,
                                          const char *fallback)
{
    return err->set && err->msg[0] ? err->msg : fallback;
}

/* ---- small utilities (core/base/util.c) ---------------------------------- */

/* strdup that returns NULL for NULL. */
/* The CPU thread count of the run in progress on this thread (0: not
 * set), and setting it around a run: enter returns the value to restore
 * (core/base/threads.c). */
int32_t mica__threads_current(void);
int32_t mica__threads_enter(int32_t threads);

char *mica__strdup(const char *s);
/* "ORIGIN: " (or "" for a NULL or empty origin) into buf, for messages. */
const char *mica__at(const char *origin, char *buf, size_t len);
/* Whether open file f is a directory: fopen opens one for reading, and
 * reading it fails later with a less helpful message. */
int mica__is_dir(FILE *f);
/* snprintf into a fresh heap string. */
char *mica__asprintf(const char *fmt, ...) MICA_PRINTF(1, 2);

/*
 * Give the caller an output struct the library filled: `full`, of the
 * library's `full_size` bytes, starts with its uint32_t struct_size, as
 * does the caller's `dst`.  Only the bytes the caller's struct_size
 * declares are written (0, or anything smaller than `oldest`: the
 * struct's first layout, `oldest` bytes; more than full_size: full_size),
 * so that an application built against an older header never gets bytes
 * written past its struct; dst->struct_size is then set to the bytes
 * written.
 */
void mica__fill_out(void *dst, const void *full, size_t full_size,
                    size_t oldest);

/* ---- checked sizes (core/base/size.c) ---------------------------------- */

/* The most values a shape tensor may hold (one symbol each at build). */
#define MICA__MAX_SHAPE_VALUES 65536

/* "[2, 3]" into buf. */
const char *mica__dims_str(const mica_dims_t *d, char *buf, size_t len);

/*
 * The bytes of a tensor of dims and dtype into *bytes, at most
 * MICA_MAX_TENSOR_BYTES.  Fails on ctx (MICA_ERR_INVALID) with one line
 * starting with `what` ("input 'x'", "weights 'w'", "layer 'l': output
 * 0") and naming the shape: a negative dimension, more than 2^63
 * elements, more than the largest tensor.
 */
mica_status_t mica__tensor_bytes(mica_context_t *ctx, const char *what,
                                 const mica_dims_t *dims, mica_dtype_t dtype,
                                 int64_t *bytes);

/*
 * The bytes of network input `name` as declared (`dims` may hold -1 for
 * a runtime dimension, counted as 1), checked as mica__tensor_bytes does
 * ("ORIGIN: input 'x': ...").
 */
mica_status_t mica__declared_bytes(mica_context_t *ctx, const char *origin,
                                   const char *name, const mica_dims_t *dims,
                                   mica_dtype_t dtype);

/* a + b and a * b of non-negative sizes into *out: 0, or -1 (and *out
 * untouched) on overflow of int64 or a negative operand. */
static inline int mica__size_add(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || a > INT64_MAX - b)
        return -1;
    *out = a + b;
    return 0;
}

static inline int mica__size_mul(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || (b && a > INT64_MAX / b))
        return -1;
    *out = a * b;
    return 0;
}

/* ---- a name index (core/base/index.c) ----------------------------------- */

/*
 * Borrowed, NUL-terminated names to int32 values (a hash table that
 * grows).  Zero-initialize one (`mica__index_t ix = {0}`); the names must
 * outlive it.  Every operation is O(1) on average.
 */
typedef struct mica__index {
    const char **keys;
    int32_t *values;
    size_t cap, nb;
} mica__index_t;

/* Room for n names without growing: 0, or -1 when memory is exhausted. */
int mica__index_reserve(mica__index_t *ix, size_t n);
/* Map key to value (replacing its value if present): 0 or -1 (memory). */
int mica__index_put(mica__index_t *ix, const char *key, int32_t value);
/* The value of key, or -1 when absent (or key is NULL). */
int32_t mica__index_get(const mica__index_t *ix, const char *key);
/* Free the table (not the names); the index is empty and reusable. */
void mica__index_free(mica__index_t *ix);

#endif /* MICA_INT_H */
