/*
 * bench/bench_util.h - shared pieces of the benchmarks: a wall clock,
 * medians, and a builder for chains of one-input or two-input layers.
 * Benchmarks print one result table to stdout; they assert nothing.
 */
#ifndef MICA_BENCH_UTIL_H
#define MICA_BENCH_UTIL_H

#include <stdint.h>

#include "mica/mica.h"

/* Seconds on a monotonic clock. */
double bench_now(void);

/* Median of n values (sorts them). */
double bench_median(double *v, int n);

/* Print the context's error and exit 1 when st is not MICA_OK. */
void bench_check(mica_context_t *ctx, mica_status_t st, const char *what);

/* A context with the default modules loaded. */
mica_context_t *bench_context(void);

/*
 * A network: input "x" (and "y" when `binary`) of `dtype` and `dims`, then
 * a chain of `layers` layers of `type` with one enum field key=value; a
 * binary layer takes (previous, y).  The last tensor is the output "out".
 */
mica_network_t *bench_chain(mica_context_t *ctx, const char *type,
                            const char *key, const char *value, int binary,
                            int layers, mica_dtype_t dtype,
                            const mica_dims_t *dims);

/* Build for `device`, or exit with the error. */
mica_engine_t *bench_build(mica_context_t *ctx, mica_network_t *net,
                           uint32_t device);

#endif
