/*
 * core/mica_int.h - internals shared by core/, registry/ and the manifest
 * loader.  Not installed.  Names: mica__ for internal non-static symbols.
 */
#ifndef MICA_INT_H
#define MICA_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"
#include "mica/module.h"

#include "fields.h"

#define MICA_ERROR_MAX 1024

/* The error slot of one module call (mica_error_t of the ABI). */
struct mica_error {
    int set;
    char msg[MICA_ERROR_MAX];
};

/* ---- registry (registry/registry.c) --------------------------------- */

typedef struct mica__module {
    char *path;              /* as loaded (real path) */
    void *handle;            /* dlopen handle */
    const mica_module_desc_t *desc;
} mica__module_t;

typedef struct mica__entry {
    const mica_layer_creator_t *creator;
    mica__module_t *module;
} mica__entry_t;

typedef struct mica__registry {
    mica__module_t **modules;
    int32_t nb_modules;
    mica__entry_t *entries;  /* sorted by (ns, type, version, implementation) */
    int32_t nb_entries;
} mica__registry_t;

/* Free every entry, call each module's fini and dlclose it. */
void mica__registry_fini(mica__registry_t *reg);

/* ---- context (core/context.c) ----------------------------------------- */

struct mica_context {
    char error[MICA_ERROR_MAX];
    mica_log_fn log_fn;
    void *log_user;
    mica_log_level_t log_max;
    mica__registry_t registry;
    char **problems;
    int32_t nb_problems;
    char *prefer;            /* deploy-time choices, "Type=impl,..." */
};

/* The host service table handed to every module (registry/host.c). */
const mica_host_t *mica__host(void);

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

/* ---- small utilities (core/util.c) ---------------------------------- */

/* strdup that returns NULL for NULL. */
char *mica__strdup(const char *s);
/* snprintf into a fresh heap string. */
char *mica__asprintf(const char *fmt, ...) MICA_PRINTF(1, 2);

#endif /* MICA_INT_H */
