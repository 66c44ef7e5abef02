/*
 * tools/triton/util.c - what every part of the backend uses: errors (a
 * TRITONSERVER_Error from a message or a failed mica call), the server's
 * log, mica contexts with their modules, the clock.
 */
#include <config.h>

#include "backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Triton's error codes for mica's statuses. */
static TRITONSERVER_Error_Code code_of(mica_status_t st)
{
    switch (st) {
    case MICA_ERR_INVALID: return TRITONSERVER_ERROR_INVALID_ARG;
    case MICA_ERR_NOT_FOUND: return TRITONSERVER_ERROR_NOT_FOUND;
    case MICA_ERR_UNSUPPORTED: return TRITONSERVER_ERROR_UNSUPPORTED;
    case MICA_ERR_DEVICE: return TRITONSERVER_ERROR_UNAVAILABLE;
    default: return TRITONSERVER_ERROR_INTERNAL;
    }
}

TRITONSERVER_Error *mica__tb_error(TRITONSERVER_Error_Code code,
                                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return TRITONSERVER_ErrorNew(code, msg);
}

TRITONSERVER_Error *mica__tb_mica_error(mica_context_t *ctx,
                                        mica_status_t status,
                                        const char *fmt, ...)
{
    char msg[1024];
    const char *why = ctx ? mica_context_error(ctx) : "";
    va_list ap;
    int k;

    va_start(ap, fmt);
    k = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < sizeof msg)
        snprintf(msg + k, sizeof msg - (size_t)k, ": %s",
                 why[0] ? why : mica_status_name(status));
    return TRITONSERVER_ErrorNew(code_of(status), msg);
}

void mica__tb_log(TRITONSERVER_LogLevel level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    TRITONSERVER_Error *err;

    if (!TRITONSERVER_LogIsEnabled(level))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((err = TRITONSERVER_LogMessage(level, __FILE__, __LINE__, msg)))
        TRITONSERVER_ErrorDelete(err);
}

void mica__tb_log_error(TRITONSERVER_Error *err, const char *what)
{
    if (!err)
        return;
    mica__tb_log(TRITONSERVER_LOG_WARN, "mica: %s: %s", what,
                 TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
}

/* mica's log lines into the server's log: errors and warnings as such,
 * the rest (a module registered, a layer's choice: dozens of lines per
 * model load) at the verbose level (tritonserver --log-verbose=1). */
static void log_to_server(void *user, mica_log_level_t level,
                          const char *message)
{
    TRITONSERVER_LogLevel l = level == MICA_LOG_ERROR ? TRITONSERVER_LOG_ERROR
                              : level == MICA_LOG_WARNING ? TRITONSERVER_LOG_WARN
                              : TRITONSERVER_LOG_VERBOSE;
    (void)user;
    mica__tb_log(l, "mica: %s", message);
}

TRITONSERVER_Error *mica__tb_context(const mica__tb_backend_t *backend,
                                     mica_context_t **out)
{
    mica_context_t *ctx = NULL;
    mica_status_t st;
    TRITONSERVER_Error *err = NULL;

    if ((st = mica_context_create(&ctx)) != MICA_OK)
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                              "cannot create a mica context: %s",
                              mica_status_name(st));
    mica_context_set_logger(ctx, log_to_server, NULL,
                            TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE)
                                ? MICA_LOG_DEBUG : MICA_LOG_WARNING);
    if ((st = mica_context_load_default_modules(ctx)) != MICA_OK) {
        err = mica__tb_mica_error(ctx, st, "loading mica's modules");
        goto done;
    }
    if (backend->module_dir &&
        (st = mica_context_load_dir(ctx, backend->module_dir)) != MICA_OK) {
        err = mica__tb_mica_error(ctx, st, "loading the modules of "
                                  "module-dir '%s'", backend->module_dir);
        goto done;
    }
    if (mica_registry_count(ctx) == 0)
        err = mica__tb_error(TRITONSERVER_ERROR_NOT_FOUND,
                             "no mica module found: set MICA_MODULE_DIR or "
                             "--backend-config=mica,module-dir=DIR");
done:
    if (err)
        mica_context_destroy(ctx);
    else
        *out = ctx;
    return err;
}

uint64_t mica__tb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TRITONSERVER_Error *mica__tb_strdup(const char *s, char **out)
{
    if (!(*out = strdup(s)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    return NULL;
}
