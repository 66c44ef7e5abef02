/*
 * tools/triton/backend.c - the backend's lifetime (TRITONBACKEND_Initialize,
 * TRITONBACKEND_Finalize) and what every part uses: errors, logging, mica
 * contexts, the clock.
 *
 * Backend options (--backend-config=mica,KEY=VALUE):
 *   module-dir   a folder of mica modules loaded after the default ones
 *                ($MICA_MODULE_DIR or the installed folder, then
 *                $MICA_MODULE_PATH)
 *   default-max-batch-size   (Triton's own, for every backend; 4 unless
 *                given) the largest max_batch_size that auto-complete
 *                gives a model
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

/* mica's log lines into the server's log. */
static void log_to_server(void *user, mica_log_level_t level,
                          const char *message)
{
    TRITONSERVER_LogLevel l = level == MICA_LOG_ERROR ? TRITONSERVER_LOG_ERROR
                              : level == MICA_LOG_WARNING ? TRITONSERVER_LOG_WARN
                              : level == MICA_LOG_INFO ? TRITONSERVER_LOG_INFO
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
                                ? MICA_LOG_DEBUG : MICA_LOG_INFO);
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

/* ---- the backend's entry points ------------------------------------------- */

/* The options of --backend-config=mica,KEY=VALUE. */
static TRITONSERVER_Error *read_options(TRITONBACKEND_Backend *triton,
                                        mica__tb_backend_t *b)
{
    TRITONSERVER_Message *msg = NULL;
    TRITONSERVER_Error *err;
    const char *text;
    size_t len;
    mica__json_t *doc = NULL;
    const mica__json_t *cmdline, *v;
    char why[256];

    if ((err = TRITONBACKEND_BackendConfig(triton, &msg)))
        return err;
    if ((err = TRITONSERVER_MessageSerializeToJson(msg, &text, &len)))
        goto done;
    if (mica__json_parse(text, len, &doc, why, sizeof why) != 0) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                             "the backend configuration is not JSON: %s", why);
        goto done;
    }
    cmdline = mica__json_get(doc, "cmdline");
    b->default_max_batch = 4;
    if ((v = mica__json_get(cmdline, "default-max-batch-size")) &&
        (mica__json_int(v, &b->default_max_batch) != 0 ||
         b->default_max_batch < 0)) {
        err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "backend "
                             "option default-max-batch-size is '%s', not a "
                             "count", v->text ? v->text : "");
        goto done;
    }
    if ((v = mica__json_get(cmdline, "module-dir")) && mica__json_string(v))
        err = mica__tb_strdup(mica__json_string(v), &b->module_dir);
done:
    mica__json_free(doc); /* msg is the server's */
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *triton)
{
    uint32_t major, minor;
    mica__tb_backend_t *b;
    TRITONSERVER_Error *err;

    if ((err = TRITONBACKEND_ApiVersion(&major, &minor)))
        return err;
    if (major != MICA_TRITON_API_MAJOR || minor < MICA_TRITON_API_MINOR)
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                              "the mica backend needs Triton's backend API "
                              "%d.%d or a later %d.x; this server has %u.%u",
                              MICA_TRITON_API_MAJOR, MICA_TRITON_API_MINOR,
                              MICA_TRITON_API_MAJOR, major, minor);
    if (!(b = calloc(1, sizeof *b)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    if ((err = read_options(triton, b)) ||
        (err = TRITONBACKEND_BackendSetState(triton, b))) {
        free(b->module_dir);
        free(b);
        return err;
    }
    mica__tb_log(TRITONSERVER_LOG_INFO, "mica backend: libmica %s, backend "
                 "API %u.%u, CUDA %s%s%s", mica_version(), major, minor,
                 mica__tb_have_cuda() ? "built in" : "not built in",
                 b->module_dir ? ", module-dir " : "",
                 b->module_dir ? b->module_dir : "");
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *triton)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_BackendState(triton, &state);
    mica__tb_backend_t *b = state;

    if (err)
        return err;
    if (b) {
        free(b->module_dir);
        free(b);
    }
    return NULL;
}
