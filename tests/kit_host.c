/*
 * tests/kit_host.c - a host table for tests without libmica (see
 * kit_host.h).
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kit_host.h"

static void host_log(mica_log_level_t level, const char *origin,
                     const char *fmt, ...) MICA_PRINTF(3, 4);
static void host_log(mica_log_level_t level, const char *origin,
                     const char *fmt, ...)
{
    va_list ap;

    printf("# log %d %s: ", (int)level, origin ? origin : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static void host_set_error(mica_error_t *err, const char *fmt, ...)
    MICA_PRINTF(2, 3);
static void host_set_error(mica_error_t *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* Expressions are not built here: the tests make their own. */
static const mica_expr_t *host_constant(mica_expr_builder_t *eb, int64_t v)
{
    (void)eb;
    (void)v;
    return NULL;
}

static const mica_expr_t *host_operation(mica_expr_builder_t *eb,
                                         mica_expr_op_t op,
                                         const mica_expr_t *a,
                                         const mica_expr_t *b)
{
    (void)eb; (void)op; (void)a; (void)b;
    return NULL;
}

static int32_t host_is_constant(const mica_expr_t *e)
{
    return e && e->constant;
}

static int64_t host_constant_value(const mica_expr_t *e)
{
    return e ? e->value : 0;
}

static const char *host_dtype_name(mica_dtype_t t)
{
    static const char *const names[] = {"float32", "float16", "int8",
                                        "int32", "bool", "int64", "uint8",
                                        "bfloat16"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static const char *host_status_name(mica_status_t st)
{
    return st == MICA_OK ? "ok" : "error";
}

static const mica_host_t host = {
    sizeof(mica_host_t), MICA_ABI_VERSION, host_log, host_set_error,
    host_constant, host_operation, host_is_constant, host_constant_value,
    host_dtype_name, host_status_name,
    NULL, /* expr_size: no data-dependent sizes here */
    NULL, /* cpu_threads: OpenMP's default */
};

const mica_host_t *kit_test_host(void)
{
    return &host;
}
