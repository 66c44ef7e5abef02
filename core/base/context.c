/*
 * core/base/context.c - the context: its error slot, its logger, the list of
 * module-load problems, and the names of the ABI's enum values.
 *
 * Logging.  A context starts with the default logger, which writes
 * "mica: warning: MESSAGE" (or "error:", "info:", "debug:") lines to
 * stderr for every message at or above its level.  The level starts at
 * MICA_LOG_WARNING, or at what the variable MICA_LOG_LEVEL says
 * ("error", "warning", "info", "debug" or 0..3).  mica_context_set_logger()
 * replaces both.
 *
 * Errors.  mica__fail() formats one line into the calling thread's error
 * slot of ctx and returns the status it was given; it does not log (the
 * caller decides whether the failure is worth a log line: the `mica`
 * command prints it and exits).  mica_context_error() reads the calling
 * thread's slot: execution contexts of one engine failing at the same
 * time on several threads each keep their own message.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica_int.h"

/*
 * A new context with no modules loaded, logging warnings (or what
 * $MICA_LOG_LEVEL says) to stderr.  A $MICA_LOG_LEVEL that names no
 * level is refused, said on stderr.
 */
mica_status_t mica_context_create(mica_context_t **out)
{
    mica_context_t *ctx;
    const char *s = getenv("MICA_LOG_LEVEL");

    if (!out)
        return MICA_ERR_INVALID;
    *out = NULL;
    if (mica__log_level_env(-1) < 0 && s && s[0]) {
        fprintf(stderr, "mica: error: MICA_LOG_LEVEL '%s' is not a log level "
                "(error, warning, info, debug, or 0 to 3)\n", s);
        return MICA_ERR_INVALID;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return MICA_ERR_NOMEM;
    ctx->log_max = (mica_log_level_t)mica__log_level_env(MICA_LOG_WARNING);
    if (pthread_mutex_init(&ctx->error_lock, NULL) != 0) {
        free(ctx);
        return MICA_ERR_NOMEM;
    }
    *out = ctx;
    return MICA_OK;
}

/* Unload every module (calling its fini) and free the context. */
void mica_context_destroy(mica_context_t *ctx)
{
    int32_t i;

    if (!ctx)
        return;
    if (ctx->registry_free)
        ctx->registry_free(ctx->registry);
    for (i = 0; i < ctx->nb_problems; i++)
        free(ctx->problems[i]);
    free(ctx->problems);
    free(ctx->prefer);
    for (i = 0; i < ctx->nb_folders; i++)
        free(ctx->folders[i]);
    free(ctx->folders);
    while (ctx->errors) {
        mica__error_slot_t *next = ctx->errors->next;
        free(ctx->errors);
        ctx->errors = next;
    }
    pthread_mutex_destroy(&ctx->error_lock);
    free(ctx);
}

MICA_EXPORT void mica_context_allow_manifest_modules(mica_context_t *ctx,
                                                     int32_t allow)
{
    if (ctx)
        ctx->manifest_modules = allow != 0;
}

MICA_EXPORT mica_status_t mica_context_allow_folder(mica_context_t *ctx,
                                                   const char *dir)
{
    char *real, **grown;
    if (!ctx)
        return MICA_ERR_INVALID;
    if (!dir || !dir[0])
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_context_allow_folder: no folder given");
    if (!(real = realpath(dir, NULL)))
        return mica__fail(ctx, errno == ENOENT ? MICA_ERR_NOT_FOUND
                          : MICA_ERR_IO, "allowed folder '%s': %s", dir,
                          strerror(errno));
    grown = realloc(ctx->folders, sizeof *grown * (size_t)(ctx->nb_folders
                                                           + 1));
    if (!grown) {
        free(real);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
    }
    ctx->folders = grown;
    ctx->folders[ctx->nb_folders++] = real;
    return MICA_OK;
}

/* Deploy-time implementation choices for this context ("Type=impl,..."). */
mica_status_t mica_context_set_prefer(mica_context_t *ctx, const char *spec)
{
    const char *p = spec;
    char *copy;

    while (p && *p) { /* each item is Type=impl */
        const char *end = strchr(p, ','), *eq = strchr(p, '=');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!eq || eq >= p + n || eq == p || eq == p + n - 1)
            return mica__fail(ctx, MICA_ERR_INVALID, "implementation choice "
                              "'%.*s' is not Type=implementation", (int)n, p);
        p = end ? end + 1 : NULL;
    }
    copy = spec && *spec ? mica__strdup(spec) : NULL;
    if (spec && *spec && !copy)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    free(ctx->prefer);
    ctx->prefer = copy;
    return MICA_OK;
}

/*
 * The calling thread's slot of ctx; made when `make` (NULL without
 * memory or when not made).  Only its thread writes a slot, and slots
 * are freed with the context, so a slot is used outside the lock.
 */
static mica__error_slot_t *slot_of(const mica_context_t *ctx, int make)
{
    mica_context_t *c = (mica_context_t *)ctx;
    pthread_t self = pthread_self();
    mica__error_slot_t *s;

    pthread_mutex_lock(&c->error_lock);
    for (s = c->errors; s && !pthread_equal(s->thread, self); s = s->next)
        ;
    if (!s && make && (s = calloc(1, sizeof *s)) != NULL) {
        s->thread = self;
        s->next = c->errors;
        c->errors = s;
    }
    pthread_mutex_unlock(&c->error_lock);
    return s;
}

/* The message of the calling thread's last failure on ctx; "" if none or
 * ctx is NULL. */
const char *mica_context_error(const mica_context_t *ctx)
{
    const mica__error_slot_t *s = ctx ? slot_of(ctx, 0) : NULL;
    return s ? s->msg : "";
}

/* Replace the logger; fn NULL restores the default (stderr). */
void mica_context_set_logger(mica_context_t *ctx, mica_log_fn fn, void *user,
                             mica_log_level_t max_level)
{
    if (!ctx)
        return;
    ctx->log_fn = fn;
    ctx->log_user = fn ? user : NULL;
    ctx->log_max = max_level;
}

/* ---- errors and logging ------------------------------------------------ */

/* Format into the thread's slot (safe when an argument is that slot). */
/* The length of the valid UTF-8 sequence at p (1 to 4), 0 if none. */
static int utf8_len(const unsigned char *p)
{
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2
            : p[0] >= 0xe0 && p[0] <= 0xef ? 3
            : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0, i;
    for (i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* msg as printable text into out: control characters and bytes that are
 * not UTF-8 written \xHH (a name from a file is anything; issue 25). */
static void printable(const char *msg, char *out, size_t len)
{
    const unsigned char *p = (const unsigned char *)msg;
    size_t o = 0;
    int n;

    while (*p && o + 5 < len) {
        if (*p >= 0x20 && *p < 0x7f) {
            out[o++] = (char)*p++;
        } else if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
            if (o + (size_t)n >= len)
                break;
            memcpy(out + o, p, (size_t)n);
            o += (size_t)n;
            p += n;
        } else {
            o += (size_t)snprintf(out + o, len - o, "\\x%02x", *p++);
        }
    }
    out[o] = '\0';
}

mica_status_t mica__vfail(mica_context_t *ctx, mica_status_t status,
                          const char *fmt, va_list ap)
{
    char buf[MICA_ERROR_MAX];
    mica__error_slot_t *s;
    char *nl;

    if (!ctx)
        return status;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    /* One line: anything after a newline is dropped. */
    nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    s = slot_of(ctx, 1);
    if (s)
        printable(buf, s->msg, sizeof s->msg);
    return status;
}

mica_status_t mica__fail(mica_context_t *ctx, mica_status_t status,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mica__vfail(ctx, status, fmt, ap);
    va_end(ap);
    return status;
}

int mica__log_level_env(int dflt)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *s = getenv("MICA_LOG_LEVEL");
    int i;

    if (!s || !s[0])
        return dflt;
    if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
        return s[0] - '0';
    for (i = 0; i < 4; i++) {
        const char *a = s, *b = names[i];
        while (*a && *b && tolower((unsigned char)*a) == *b) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return i;
    }
    return dflt;
}

/* The prefix the default loggers put after "mica: ". */
const char *mica__log_prefix(mica_log_level_t level)
{
    switch (level) {
    case MICA_LOG_ERROR: return "error: ";
    case MICA_LOG_WARNING: return "warning: ";
    case MICA_LOG_INFO: return "";
    default: return "debug: ";
    }
}

static void log_message(mica_context_t *ctx, mica_log_level_t level,
                        const char *msg)
{
    if (ctx && ctx->log_fn) {
        if (level <= ctx->log_max)
            ctx->log_fn(ctx->log_user, level, msg);
        return;
    }
    if ((int)level <= (ctx ? (int)ctx->log_max
                           : mica__log_level_env(MICA_LOG_WARNING)))
        fprintf(stderr, "mica: %s%s\n", mica__log_prefix(level), msg);
}

/* Log one line through ctx's logger; with ctx NULL, to stderr. */
void mica__log(mica_context_t *ctx, mica_log_level_t level, const char *fmt,
               ...)
{
    char buf[MICA_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    log_message(ctx, level, buf);
}

/*
 * Record a module-load problem: log it as a warning and append it to the
 * list that mica_context_load_problem() returns.  If memory runs out the
 * line is still logged.
 */
void mica__problem(mica_context_t *ctx, const char *fmt, ...)
{
    char buf[MICA_ERROR_MAX];
    char **grown;
    char *copy;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    /* one line: anything after a newline (a loader message) is dropped */
    copy = strchr(buf, '\n');
    if (copy)
        *copy = '\0';
    log_message(ctx, MICA_LOG_WARNING, buf);
    if (!ctx)
        return;
    copy = mica__strdup(buf);
    grown = realloc(ctx->problems,
                    ((size_t)ctx->nb_problems + 1) * sizeof(*grown));
    if (!copy || !grown) {
        free(copy);
        if (grown)
            ctx->problems = grown;
        return;
    }
    ctx->problems = grown;
    ctx->problems[ctx->nb_problems++] = copy;
}

/* Number of load problems recorded so far. */
int32_t mica_context_nb_load_problems(const mica_context_t *ctx)
{
    return ctx ? ctx->nb_problems : 0;
}

/* Problem `index` (0 = oldest); NULL when out of range. */
const char *mica_context_load_problem(const mica_context_t *ctx,
                                      int32_t index)
{
    if (!ctx || index < 0 || index >= ctx->nb_problems)
        return NULL;
    return ctx->problems[index];
}

/* ---- names ------------------------------------------------------------- */

static const char *const status_names[] = {
    "ok",
    "invalid argument",
    "out of memory",
    "unsupported",
    "not found",
    "I/O error",
    "ABI version mismatch",
    "device error",
    "run-time check failed",
    "internal error",
};

/* "invalid argument" for MICA_ERR_INVALID...; "?" out of range. */
const char *mica_status_name(mica_status_t status)
{
    if ((unsigned)status >= sizeof(status_names) / sizeof(status_names[0]))
        return "?";
    return status_names[status];
}

/* Indexed by mica_dtype_t; the manifest's spelling. */
static const char *const dtype_names[MICA_DTYPE_COUNT_] = {
    "float32", "float16", "int8", "int32", "bool", "int64", "uint8",
    "bfloat16", "float64", "uint16", "uint32", "uint64", "int16",
    "fp8e4m3", "fp8e5m2", "int4", "uint4", "fp4e2m1", "fp8e4m3fnuz",
    "fp8e5m2fnuz", "fp8e8m0",
};

/* "float32" for MICA_FLOAT32...; "?" out of range. */
const char *mica_dtype_name(mica_dtype_t dtype)
{
    if ((unsigned)dtype >= MICA_DTYPE_COUNT_)
        return "?";
    return dtype_names[dtype];
}

/* The dtype spelled `name` exactly ("float32"); MICA_ERR_INVALID if none. */
mica_status_t mica_dtype_parse(const char *name, mica_dtype_t *out)
{
    int i;

    if (!name || !out)
        return MICA_ERR_INVALID;
    for (i = 0; i < MICA_DTYPE_COUNT_; i++) {
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (mica_dtype_t)i;
            return MICA_OK;
        }
    }
    return MICA_ERR_INVALID;
}

/* The library's version, from configure.ac. */
const char *mica_version(void)
{
    return PACKAGE_VERSION;
}
