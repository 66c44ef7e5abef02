/*
 * registry/host.c - the host service table handed to every module.
 *
 * One static table for the whole process: a module has no context, so
 * its log lines go to stderr, "mica: ORIGIN: warning: MESSAGE", for
 * errors and warnings, or down to the level $MICA_LOG_LEVEL names
 * ("error", "warning", "info", "debug" or 0..3).  The expression services
 * forward to core/base/expr.c.  New services are appended at the end of
 * mica_host_t, never inserted (see mica/module.h).
 */
#include <config.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "expr.h"

static void host_log(mica_log_level_t level, const char *origin,
                     const char *fmt, ...) MICA_PRINTF(3, 4);
static void host_log(mica_log_level_t level, const char *origin,
                     const char *fmt, ...)
{
    /* Read once: the variable is meant for the whole process. */
    static int max = -1;
    char buf[MICA_ERROR_MAX];
    va_list ap;

    if (max < 0)
        max = mica__log_level_env(MICA_LOG_WARNING);
    if ((int)level > max || !fmt)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (origin && origin[0])
        fprintf(stderr, "mica: %s: %s%s\n", origin, mica__log_prefix(level),
                buf);
    else
        fprintf(stderr, "mica: %s%s\n", mica__log_prefix(level), buf);
}

/* One line in the slot: a trailing newline (or anything after one) goes. */
static void host_set_error(mica_error_t *err, const char *fmt, ...)
    MICA_PRINTF(2, 3);
static void host_set_error(mica_error_t *err, const char *fmt, ...)
{
    va_list ap;
    char *nl;

    if (!err || !fmt)
        return;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    nl = strchr(err->msg, '\n');
    if (nl)
        *nl = '\0';
    err->set = 1;
}

static const mica_host_t host_table = {
    sizeof(mica_host_t),
    MICA_ABI_VERSION,
    host_log,
    host_set_error,
    mica__expr_constant,
    mica__expr_operation,
    mica__expr_is_constant,
    mica__expr_constant_value,
    mica_dtype_name,
    mica_status_name,
    mica__expr_size,
    mica__threads_current,
};

const mica_host_t *mica__host(void)
{
    return &host_table;
}
