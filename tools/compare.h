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

#include "inputs.h"
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

/*
 * One side of a comparison: a mica run (exec set), or the outputs of a
 * reference runner held in host memory: onnxruntime's (read once, all
 * of them) or saved .npy files (outputs=DIR: DIR/NAME.npy, NAME
 * percent-encoded as `mica run` writes it, read when first asked for).
 */
typedef struct compare_side {
    const char *which;          /* "A" or "B" */
    mica_exec_t *exec;          /* a mica run, else NULL */
    const char *dir;            /* outputs=DIR, else NULL */
    int nb, cap;                /* the tensors in hand */
    char **names;
    mica_tensor_desc_t *descs;
    void **data;
} compare_side_t;

/* Tensor `name` of side s: *d and *data (valid while s lives).  CLI_OK
 * or CLI_ERROR after a message naming the side. */
int compare_get(mica_context_t *ctx, compare_side_t *s, const char *name,
                mica_tensor_desc_t *d, const void **data);

/* Take ownership of `data` (malloc'd) as tensor `name` of s.  CLI_OK or
 * CLI_ERROR (out of memory, said; data freed). */
int compare_side_add(compare_side_t *s, const char *name,
                     const mica_tensor_desc_t *d, void *data);

void compare_side_free(compare_side_t *s);

/* ---- tools/compare_ort.c ---- */

/*
 * Run ONNX model `model` once in ONNX Runtime on the inputs `in` (given
 * or generated for the mica engine: int32 and int64 converted to the
 * model's own input types) and keep every output of the model in s.
 * `lib`: the library file or its folder (onnxruntime=PATH), else NULL:
 * $MICA_ONNXRUNTIME, libonnxruntime.so on the loader's path, then the
 * onnxruntime Python wheel's (capi/libonnxruntime.so.*, the wheel found
 * by ${MICA_PYTHON:-python3}).  `threads` > 0: ONNX Runtime's intra-op
 * threads.  Prints "NAME: onnxruntime VERSION (LIBRARY)".  CLI_OK, or
 * CLI_ERROR after one line (the library absent: where it was looked for
 * and how to give it).
 */
int compare_ort_run(const char *which, const char *lib, const char *model,
                    const cli_inputs_t *in, int threads, compare_side_t *s);

/* ---- tools/compare_layers.c ---- */

/*
 * Where the layers of an imported ONNX model come from: layer name ->
 * "OP 'NODE'", read from the comments the importer writes before each
 * node's layers (the layers after a comment, up to the next, are that
 * node's).
 */
typedef struct compare_origin {
    int nb;
    char **layer, **node;
} compare_origin_t;

/* Import `path` again and read the origins into o.  CLI_OK or CLI_ERROR
 * (said). */
int compare_origin_read(mica_context_t *ctx, const char *path,
                        compare_origin_t *o);
/* "OP 'NODE'" of `layer`, or NULL. */
const char *compare_origin_of(const compare_origin_t *o, const char *layer);
void compare_origin_free(compare_origin_t *o);

/* --all-layers: mark every tensor that a top-level layer of `probe` (the
 * model built without marks) computes on the device as an output of m's
 * network; *nb_marked gets how many.  CLI_OK or CLI_ERROR (said). */
int compare_mark_all(mica_context_t *ctx, mica_manifest_t *m,
                     mica_engine_t *probe, int *nb_marked);

/* Compare tensor `name` of sides s[0] (A) and s[1] (B) into d (*da:
 * A's descriptor).  CLI_OK or CLI_ERROR (said). */
int compare_named(mica_context_t *ctx, compare_side_t s[2],
                  const char *name, double atol, double rtol,
                  mica_tensor_desc_t *da, diff_t *d);

/* The layers whose implementation differs between A and B, on stdout. */
void compare_print_choices(mica_engine_t *const e[2]);

/* --all-layers: every marked tensor in the execution order of A's layers,
 * one line each, then the first layer whose output diverges (*failed
 * set) and, for an ONNX model (origin not NULL), the ONNX node it comes
 * from.  CLI_OK or CLI_ERROR (said). */
int compare_layers(mica_context_t *ctx, mica_engine_t *const e[2],
                   compare_side_t s[2], const compare_origin_t *origin,
                   double atol, double rtol, int *failed);

#endif /* MICA_CLI_COMPARE_H */
