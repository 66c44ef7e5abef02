/*
 * tests/tap.c - the TAP producer declared in tests/tap.h.
 *
 * Output is TAP that automake's tap-driver.sh reads: a plan "1..N" (first,
 * or last with plan_lazy()), one "ok N - description" or
 * "not ok N - description" per test, "ok N # SKIP reason" for a skipped
 * test, "1..0 # SKIP reason" for a skipped program, and "# ..." comments.
 * Every line is flushed at once so that a crash loses nothing printed.
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int tap_planned = -1; /* -1: no plan yet */
static int tap_lazy;         /* plan printed at the end */
static int tap_plan_printed;
static int tap_run;
static int tap_failed;
static int tap_done;         /* the lazy plan has been printed */

/* Print the lazy plan, or report a broken plan, when the program ends. */
static void tap_finish(void)
{
    if (tap_lazy && !tap_done) {
        tap_done = 1;
        printf("1..%d\n", tap_run);
    }
    if (tap_planned >= 0 && !tap_lazy && tap_run != tap_planned)
        printf("# planned %d tests but ran %d\n", tap_planned, tap_run);
    if (tap_failed > 0)
        printf("# failed %d of %d tests\n", tap_failed, tap_run);
    fflush(stdout);
}

static void tap_atexit_once(void)
{
    static int registered;
    if (!registered) {
        registered = 1;
        atexit(tap_finish);
    }
}

void plan(int n)
{
    tap_atexit_once();
    tap_planned = n;
    tap_plan_printed = 1;
    printf("1..%d\n", n);
    fflush(stdout);
}

void plan_lazy(void)
{
    tap_atexit_once();
    tap_lazy = 1;
}

/* Write `fmt` formatted into a description: newlines become spaces and '#'
 * is escaped so that no description reads as a TAP directive. */
static void tap_print_desc(const char *fmt, va_list ap)
{
    char buf[1024];
    int n;

    if (fmt == NULL || fmt[0] == '\0')
        return;
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n <= 0)
        return;
    fputs(" - ", stdout);
    for (const char *p = buf; *p != '\0'; p++) {
        if (*p == '\n' || *p == '\r')
            putchar(' ');
        else if (*p == '#')
            fputs("\\#", stdout);
        else
            putchar(*p);
    }
}

/* One test line; returns cond as 0 or 1. */
static int tap_vresult(int cond, const char *fmt, va_list ap)
{
    tap_atexit_once();
    tap_run++;
    if (!cond)
        tap_failed++;
    printf("%sok %d", cond ? "" : "not ", tap_run);
    tap_print_desc(fmt, ap);
    putchar('\n');
    fflush(stdout);
    return cond ? 1 : 0;
}

int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = tap_vresult(cond, fmt, ap);
    va_end(ap);
    return r;
}

int is_int(int64_t want, int64_t got, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = tap_vresult(want == got, fmt, ap);
    va_end(ap);
    if (!r)
        diag("    want: %lld\n     got: %lld", (long long)want,
             (long long)got);
    return r;
}

int is_double(double want, double got, double tol, const char *fmt, ...)
{
    va_list ap;
    int same, r;

    if (isnan(want) || isnan(got))
        same = isnan(want) && isnan(got);
    else if (isinf(want) || isinf(got))
        same = want == got;
    else
        same = fabs(want - got) <= tol;
    va_start(ap, fmt);
    r = tap_vresult(same, fmt, ap);
    va_end(ap);
    if (!r)
        diag("    want: %.9g (within %g)\n     got: %.9g", want, tol, got);
    return r;
}

int is_string(const char *want, const char *got, const char *fmt, ...)
{
    va_list ap;
    int same, r;

    if (want == NULL || got == NULL)
        same = want == got;
    else
        same = strcmp(want, got) == 0;
    va_start(ap, fmt);
    r = tap_vresult(same, fmt, ap);
    va_end(ap);
    if (!r)
        diag("    want: %s%s%s\n     got: %s%s%s", want ? "'" : "",
             want ? want : "(null)", want ? "'" : "", got ? "'" : "",
             got ? got : "(null)", got ? "'" : "");
    return r;
}

int contains(const char *hay, const char *needle, const char *fmt, ...)
{
    va_list ap;
    int found, r;

    found = hay != NULL && needle != NULL && strstr(hay, needle) != NULL;
    va_start(ap, fmt);
    r = tap_vresult(found, fmt, ap);
    va_end(ap);
    if (!r)
        diag("    looked for: %s%s%s\n            in: %s%s%s",
             needle ? "'" : "", needle ? needle : "(null)",
             needle ? "'" : "", hay ? "'" : "", hay ? hay : "(null)",
             hay ? "'" : "");
    return r;
}

/* One "ok N # SKIP reason" line. */
static void tap_vskip(const char *fmt, va_list ap)
{
    char buf[1024];

    tap_atexit_once();
    tap_run++;
    buf[0] = '\0';
    if (fmt != NULL)
        vsnprintf(buf, sizeof buf, fmt, ap);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    printf("ok %d # SKIP%s%s\n", tap_run, buf[0] ? " " : "", buf);
    fflush(stdout);
}

void skip(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    tap_vskip(fmt, ap);
    va_end(ap);
}

void skip_block(int n, const char *fmt, ...)
{
    va_list ap;

    for (int i = 0; i < n; i++) {
        va_start(ap, fmt);
        tap_vskip(fmt, ap);
        va_end(ap);
    }
}

void skip_all(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    buf[0] = '\0';
    va_start(ap, fmt);
    if (fmt != NULL)
        vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (tap_plan_printed || tap_run > 0) {
        /* Too late for a skip plan: skip what remains of the plan. */
        while (tap_planned > tap_run)
            skip("%s", buf);
    } else {
        printf("1..0 # SKIP%s%s\n", buf[0] ? " " : "", buf);
        tap_lazy = 0;
        tap_planned = -1;
        tap_failed = 0;
    }
    fflush(stdout);
    exit(tap_failed > 0 ? 1 : 0);
}

void bail(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    buf[0] = '\0';
    va_start(ap, fmt);
    if (fmt != NULL)
        vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fflush(stdout);
    printf("Bail out! %s\n", buf);
    fflush(stdout);
    tap_lazy = 0;
    tap_planned = -1;
    exit(1);
}

void diag(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    const char *line;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* One "# " per line, so multi-line messages stay comments. */
    line = buf;
    for (;;) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        printf("# %.*s\n", len, line);
        if (nl == NULL || nl[1] == '\0')
            break;
        line = nl + 1;
    }
    fflush(stdout);
}

int exit_status(void)
{
    if (tap_lazy && !tap_done) {
        tap_done = 1;
        printf("1..%d\n", tap_run);
        fflush(stdout);
    }
    if (tap_failed > 0)
        return 1;
    if (tap_planned >= 0 && !tap_lazy && tap_run != tap_planned)
        return 1;
    if (tap_planned < 0 && !tap_lazy)
        return 1; /* no plan at all */
    return 0;
}
