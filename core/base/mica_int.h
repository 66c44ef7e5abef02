/*
 * core/base/mica_int.h - the base of libmica, shared by everything above
 * it (registry/, core/, core/manifest/): the context (its error slot,
 * logger, load problems), small utilities, and through fields.h the
 * validator.  Not installed.  Names: mica__ for internal non-static
 * symbols.
 */
#ifndef MICA_INT_H
#define MICA_INT_H

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

struct mica_context {
    char error[MICA_ERROR_MAX];
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

#endif /* MICA_INT_H */
