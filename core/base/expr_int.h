/*
 * core/base/expr_int.h - the nodes of dimension expressions, shared by
 * expr.c (the builder: interning, folding, simplifying, evaluating) and
 * expr_nodes.c (what a node is made of: printed, used, kept and made
 * again).
 */
#ifndef MICA_EXPR_INT_H
#define MICA_EXPR_INT_H

#include "expr.h"

/* beside mica_expr_op_t */
enum { NODE_CONST = MICA__EXPR_CONST, NODE_SYMBOL = MICA__EXPR_SYMBOL };

struct mica_expr {
    int32_t kind;            /* mica_expr_op_t, NODE_CONST or NODE_SYMBOL */
    int32_t sym;             /* NODE_SYMBOL: id */
    int64_t value;           /* NODE_CONST: value */
    const mica_expr_t *a, *b;
    int64_t lo, hi;          /* the value lies in [lo, hi] */
    const char *name;        /* NODE_SYMBOL: owned */
    uint64_t hash;
    struct mica_expr *next;  /* hash chain */
};

#define NB_BUCKETS 256

/* Bounds of "unknown": far from overflow when added or multiplied once. */
#define BIG ((int64_t)1 << 40)

struct mica_expr_builder {
    struct mica_expr *buckets[NB_BUCKETS];
    mica__sizer_fn sizer;    /* set while a layer gives its output dims */
    void *sizer_user;
};

/* v clamped to [-BIG, BIG]. */
static inline int64_t mica__expr_clamp(int64_t v)
{
    return v > BIG ? BIG : v < -BIG ? -BIG : v;
}

/* Find or make the node (kind, sym, value, a, b) with symbol name `name`
 * (NODE_SYMBOL, copied); its interval is its constant's value, else
 * unknown.  NULL when memory runs out. */
const mica_expr_t *mica__expr_intern(mica_expr_builder_t *eb, int32_t kind,
                                     int32_t sym, int64_t value,
                                     const mica_expr_t *a,
                                     const mica_expr_t *b, const char *name);

#endif
