/*
 * core/base/expr.h - dimension expressions: hash-consed, simplified nodes owned
 * by a builder (the implementation of TensorRT's IExprBuilder for mica).
 *
 * Leaves are constants and symbols (a network input's runtime dimension,
 * named like "N" or "x.0").  Operations on constants fold; sums and
 * products with neutral elements simplify.  Evaluation takes the values of
 * the symbols.
 */
#ifndef MICA_EXPR_H
#define MICA_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

/* Create and free a builder; every expression it made dies with it. */
mica_status_t mica__expr_builder_create(mica_expr_builder_t **out);
void mica__expr_builder_destroy(mica_expr_builder_t *eb);

/* The host services (see mica_host_t).  NULL on allocation failure. */
const mica_expr_t *mica__expr_constant(mica_expr_builder_t *eb, int64_t v);
const mica_expr_t *mica__expr_operation(mica_expr_builder_t *eb,
                                        mica_expr_op_t op,
                                        const mica_expr_t *a,
                                        const mica_expr_t *b);
int32_t mica__expr_is_constant(const mica_expr_t *e);
int64_t mica__expr_constant_value(const mica_expr_t *e);

/* A symbol with index `id` (0..n-1, chosen by the caller) and a name. */
const mica_expr_t *mica__expr_symbol(mica_expr_builder_t *eb, int32_t id,
                                     const char *name);
/*
 * The same, known to lie in [lo, hi] whenever it is evaluated; the
 * simplifier folds comparisons, max and min that the range decides.
 */
const mica_expr_t *mica__expr_symbol_range(mica_expr_builder_t *eb,
                                           int32_t id, const char *name,
                                           int64_t lo, int64_t hi);

/*
 * Value of `e` given the values of the symbols (indexed by id).  Returns
 * MICA_ERR_INVALID for a division by zero or an unknown symbol.
 */
mica_status_t mica__expr_eval(const mica_expr_t *e, const int64_t *symbols,
                              int32_t nb_symbols, int64_t *out);

/*
 * Data-dependent sizes (mica_host_t's expr_size): the builder of an
 * engine sets a function that makes the symbol of layer output
 * `size_output` bounded by `upper` while it asks a layer for its output
 * dims, and clears it after (fn NULL); mica__expr_size calls it, or
 * returns NULL when none is set.
 */
typedef const mica_expr_t *(*mica__sizer_fn)(void *user, int32_t size_output,
                                             const mica_expr_t *upper);
void mica__expr_set_sizer(mica_expr_builder_t *eb, mica__sizer_fn fn,
                          void *user);
const mica_expr_t *mica__expr_size(mica_expr_builder_t *eb,
                                   int32_t size_output,
                                   const mica_expr_t *upper);

/* Whether `e` uses a symbol whose id has a non-zero entry in uses[0..n). */
int mica__expr_uses(const mica_expr_t *e, const uint8_t *uses, int32_t n);

/* Readable form ("N*6", "max(N, 3)"), written into buf; returns buf. */
char *mica__expr_print(const mica_expr_t *e, char *buf, size_t len);

/*
 * One node as engine files keep it: its kind (a mica_expr_op_t, or
 * MICA__EXPR_CONST / MICA__EXPR_SYMBOL), its value (a constant), its
 * symbol id (a symbol), its operands (an operation) and the interval its
 * value lies in.
 */
#define MICA__EXPR_CONST 100
#define MICA__EXPR_SYMBOL 101

typedef struct mica__expr_node {
    int32_t kind;
    int32_t sym;
    int64_t value;
    const mica_expr_t *a, *b;
    int64_t lo, hi;
} mica__expr_node_t;

void mica__expr_inspect(const mica_expr_t *e, mica__expr_node_t *out);

/*
 * The node n made again in eb as it was, without simplifying it (a
 * symbol gets `name`); NULL when n is malformed (an unknown kind, a
 * missing operand, a negative symbol id, lo > hi) or memory runs out.
 */
const mica_expr_t *mica__expr_restore(mica_expr_builder_t *eb,
                                      const mica__expr_node_t *n,
                                      const char *name);

#endif
