/*
 * tools/compare.h - what `mica compare` (tools/cmd_compare.c: the two
 * configurations, builds and runs) shares with its arithmetic
 * (tools/compare_diff.c: the errors between two tensors, as Polygraphy
 * reports them).
 */
#ifndef MICA_CLI_COMPARE_H
#define MICA_CLI_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"

/*
 * The differences between tensor A (the reference) and tensor B.  Per
 * element: abs = |a - b|, rel = abs / |a| (0 where both are 0, infinite
 * where only a is); an element fails only when abs > atol and rel > rtol
 * both hold, as Polygraphy's elementwise check does.  A NaN matches only
 * a NaN; an infinity only the same infinity.
 */
typedef struct diff {
    int64_t n;                  /* elements compared */
    int64_t nb_fail;            /* beyond both tolerances */
    double abs_max, abs_mean, abs_median, abs_p99;
    double rel_max, rel_mean, rel_median, rel_p99;
    int64_t worst;              /* index of the largest abs error, -1 */
    double worst_a, worst_b;
    const char *mismatch;       /* dtype or shape differ: why, else NULL */
} diff_t;

/* Compare; CLI_OK, or CLI_ERROR after a message (out of memory, or a
 * dtype without values). */
int diff_tensors(const mica_tensor_desc_t *da, const void *a,
                 const mica_tensor_desc_t *db, const void *b, double atol,
                 double rtol, diff_t *d);

/* Whether d holds a mismatch. */
int diff_failed(const diff_t *d);

/* The report of one tensor: "output 'y' float32 [2, 3]:" then its error
 * lines and verdict, each line starting with indent. */
void diff_print(FILE *f, const char *what, const char *name,
                const mica_tensor_desc_t *da, const diff_t *d, double atol,
                double rtol);

/* One line: "tensor 'x' (layer 'l'): max abs ..., max rel ...: ok". */
void diff_print_short(FILE *f, const char *name, const char *layer,
                      const diff_t *d);

/* ---- tools/compare_layers.c ---- */

/* --all-layers: mark every tensor that a top-level layer of `probe` (the
 * model built without marks) computes on the device as an output of m's
 * network; *nb_marked gets how many.  CLI_OK or CLI_ERROR (said). */
int compare_mark_all(mica_context_t *ctx, mica_manifest_t *m,
                     mica_engine_t *probe, int *nb_marked);

/* Compare output `name` of the runs x[0] (A) and x[1] (B) into d (*da:
 * A's descriptor).  CLI_OK or CLI_ERROR (said). */
int compare_named(mica_context_t *ctx, mica_exec_t *const x[2],
                  const char *name, double atol, double rtol,
                  mica_tensor_desc_t *da, diff_t *d);

/* The layers whose implementation differs between A and B, on stdout. */
void compare_print_choices(mica_engine_t *const e[2]);

/* --all-layers: every marked tensor in the execution order of A's layers,
 * one line each, then the first layer whose output diverges (*failed
 * set).  CLI_OK or CLI_ERROR (said). */
int compare_layers(mica_context_t *ctx, mica_engine_t *const e[2],
                   mica_exec_t *const x[2], double atol, double rtol,
                   int *failed);

#endif /* MICA_CLI_COMPARE_H */
