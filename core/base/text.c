/*
 * core/base/text.c - scalars as a manifest writes them: null, integers
 * (decimal or 0x), decimals (with .inf and .nan), booleans.  The one
 * reading of scalar text, for params (core/base/fields.c) and for the
 * manifest loader's own keys alike.
 */
#include <config.h>

#include "fields.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int mica__text_is_null(const char *s, int plain)
{
    if (!s || !plain)
        return 0;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null")
           || !strcmp(s, "NULL");
}

int mica__text_to_int(const char *s, int plain, int64_t *out)
{
    char *end;
    long long v;
    int neg = 0;
    const char *p;
    if (!s || !*s || mica__text_is_null(s, plain))
        return 0;
    p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        errno = 0;
        v = (long long)strtoull(p + 2, &end, 16);
        if (neg)
            v = -v;
    } else {
        errno = 0;
        v = strtoll(s, &end, 10);
    }
    if (errno || *end || end == s || !(*p >= '0' && *p <= '9'))
        return 0;
    *out = (int64_t)v;
    return 1;
}

int mica__text_to_float(const char *s, int plain, double *out)
{
    char *end;
    const char *p;
    int neg = 0;
    if (!s || !*s || mica__text_is_null(s, plain))
        return 0;
    p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")
        || !strcmp(p, "inf")) {
        *out = neg ? -HUGE_VAL : HUGE_VAL;
        return 1;
    }
    if (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN")
        || !strcmp(p, "nan")) {
        *out = NAN;
        return 1;
    }
    if (!((*p >= '0' && *p <= '9') || *p == '.'))
        return 0;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && end != s;
}

int mica__text_to_bool(const char *s, int *out)
{
    if (!s)
        return 0;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
        *out = 1;
        return 1;
    }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
        *out = 0;
        return 1;
    }
    return 0;
}
