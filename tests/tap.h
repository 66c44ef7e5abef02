/*
 * tests/tap.h - a small TAP producer in the style of c-tap-harness.
 *
 *     plan(3);
 *     ok(x == 1, "x is one");
 *     is_int(2, y, "y is two");
 *     is_string("a", s, "s is a");
 *     return exit_status();
 *
 * skip_all() prints "1..0 # SKIP reason" and exits 0; bail() prints
 * "Bail out!" and exits 1.  diag() writes "# ..." lines to stdout.
 */
#ifndef MICA_TAP_H
#define MICA_TAP_H

#include <stdint.h>

#if defined(__GNUC__)
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN __attribute__((noreturn))
#else
#define TAP_PRINTF(f, a)
#define TAP_NORETURN
#endif

void plan(int n);
/* For tests whose count is only known at the end: prints 1..N then. */
void plan_lazy(void);
int ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);
int is_int(int64_t want, int64_t got, const char *fmt, ...) TAP_PRINTF(3, 4);
int is_double(double want, double got, double tol, const char *fmt, ...)
    TAP_PRINTF(4, 5);
int is_string(const char *want, const char *got, const char *fmt, ...)
    TAP_PRINTF(3, 4);
/* ok if `needle` occurs in `hay` (both may be NULL: then not ok). */
int contains(const char *hay, const char *needle, const char *fmt, ...)
    TAP_PRINTF(3, 4);
void skip(const char *fmt, ...) TAP_PRINTF(1, 2);
void skip_block(int n, const char *fmt, ...) TAP_PRINTF(2, 3);
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
void bail(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* 0 if every test passed and the plan was met, 1 otherwise. */
int exit_status(void);

#endif
