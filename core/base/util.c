/*
 * core/base/util.c - small string helpers shared by the core and the registry.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mica_int.h"

/* A heap copy of `s`; NULL if `s` is NULL or memory is exhausted. */
char *mica__strdup(const char *s)
{
    size_t n;
    char *copy;

    if (!s)
        return NULL;
    n = strlen(s) + 1;
    copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/*
 * The printf-style expansion of `fmt` in a fresh heap string the caller
 * frees; NULL on a formatting error or when memory is exhausted.
 */
char *mica__asprintf(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* "ORIGIN: " for messages, "" without an origin; into buf. */
const char *mica__at(const char *origin, char *buf, size_t len)
{
    if (!origin || !*origin)
        buf[0] = '\0';
    else
        snprintf(buf, len, "%s: ", origin);
    return buf;
}

/* Whether open file f is a directory (fopen takes one for reading). */
int mica__is_dir(FILE *f)
{
    struct stat sb;
    return fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode);
}

void mica__fill_out(void *dst, const void *full, size_t full_size,
                    size_t oldest)
{
    uint32_t asked, n;

    memcpy(&asked, dst, sizeof asked);
    n = asked < oldest ? (uint32_t)oldest : asked;
    if (n > full_size)
        n = (uint32_t)full_size;
    memcpy(dst, full, n);
    memcpy(dst, &n, sizeof n);
}
