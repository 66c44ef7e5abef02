/*
 * core/base/expr.c - dimension expressions (see expr.h).
 *
 * Nodes are hash-consed: building the same expression twice gives the
 * same pointer, so structural equality is pointer equality, which the
 * simplifier uses (max(x, x) = x, x - x = 0).  Commutative operations put
 * their operands in a canonical order (constants last).
 *
 * Every node also carries the interval its value lies in, from the ranges
 * of its symbols (a runtime dimension lies within its profiles' min..max,
 * and run time refuses anything outside).  Comparisons, max and min whose
 * answer the intervals decide fold to it: eq(N, 0) is 0 once N >= 1, so a
 * reshape written for "0 copies a dimension" prints as plain N.
 */
#include <config.h>

#include "expr_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mica__expr_set_sizer(mica_expr_builder_t *eb, mica__sizer_fn fn,
                          void *user)
{
    eb->sizer = fn;
    eb->sizer_user = user;
}

const mica_expr_t *mica__expr_size(mica_expr_builder_t *eb,
                                   int32_t size_output,
                                   const mica_expr_t *upper)
{
    if (!eb || !eb->sizer || !upper)
        return NULL;
    return eb->sizer(eb->sizer_user, size_output, upper);
}

mica_status_t mica__expr_builder_create(mica_expr_builder_t **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? MICA_OK : MICA_ERR_NOMEM;
}

void mica__expr_builder_destroy(mica_expr_builder_t *eb)
{
    int i;
    if (!eb)
        return;
    for (i = 0; i < NB_BUCKETS; i++) {
        struct mica_expr *n = eb->buckets[i];
        while (n) {
            struct mica_expr *next = n->next;
            free((char *)n->name);
            free(n);
            n = next;
        }
    }
    free(eb);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

const mica_expr_t *mica__expr_intern(mica_expr_builder_t *eb, int32_t kind,
                                     int32_t sym, int64_t value,
                                     const mica_expr_t *a,
                                     const mica_expr_t *b, const char *name)
{
    uint64_t h = mix(mix(mix(mix((uint64_t)kind, (uint64_t)sym),
                             (uint64_t)value), (uint64_t)(uintptr_t)a),
                     (uint64_t)(uintptr_t)b);
    struct mica_expr **slot = &eb->buckets[h % NB_BUCKETS], *n;

    for (n = *slot; n; n = n->next)
        if (n->hash == h && n->kind == kind && n->sym == sym &&
            n->value == value && n->a == a && n->b == b)
            return n;
    n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->sym = sym;
    n->value = value;
    n->a = a;
    n->b = b;
    n->hash = h;
    n->lo = kind == NODE_CONST ? value : -BIG;
    n->hi = kind == NODE_CONST ? value : BIG;
    if (name) {
        size_t len = strlen(name) + 1;
        char *copy = malloc(len);
        if (copy)
            memcpy(copy, name, len);
        n->name = copy;
        if (!n->name) {
            free(n);
            return NULL;
        }
    }
    n->next = *slot;
    *slot = n;
    return n;
}

const mica_expr_t *mica__expr_constant(mica_expr_builder_t *eb, int64_t v)
{
    return mica__expr_intern(eb, NODE_CONST, 0, v, NULL, NULL, NULL);
}

const mica_expr_t *mica__expr_symbol(mica_expr_builder_t *eb, int32_t id,
                                     const char *name)
{
    return mica__expr_symbol_range(eb, id, name, -BIG, BIG);
}

const mica_expr_t *mica__expr_symbol_range(mica_expr_builder_t *eb,
                                           int32_t id, const char *name,
                                           int64_t lo, int64_t hi)
{
    struct mica_expr *n =
        (struct mica_expr *)mica__expr_intern(eb, NODE_SYMBOL, id, 0, NULL,
                                              NULL, name);
    if (n) {
        n->lo = mica__expr_clamp(lo);
        n->hi = mica__expr_clamp(hi);
    }
    return n;
}

int32_t mica__expr_is_constant(const mica_expr_t *e)
{
    return e && e->kind == NODE_CONST;
}

int64_t mica__expr_constant_value(const mica_expr_t *e)
{
    return e && e->kind == NODE_CONST ? e->value : 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* a op b on constants; -1 if undefined (division by zero) or beyond 64
 * bits (the value of a huge shape: its size check then names it). */
static int fold(mica_expr_op_t op, int64_t a, int64_t b, int64_t *out)
{
    switch (op) {
    case MICA_EXPR_SUM: return __builtin_add_overflow(a, b, out) ? -1 : 0;
    case MICA_EXPR_PROD: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
    case MICA_EXPR_MAX: *out = a > b ? a : b; return 0;
    case MICA_EXPR_MIN: *out = a < b ? a : b; return 0;
    case MICA_EXPR_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
    case MICA_EXPR_EQUAL: *out = a == b; return 0;
    case MICA_EXPR_LESS: *out = a < b; return 0;
    case MICA_EXPR_FLOOR_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return -1;
        *out = floor_div(a, b);
        return 0;
    case MICA_EXPR_CEIL_DIV:
        if (b == 0 || a == INT64_MIN || (a == INT64_MAX && b == -1))
            return -1;
        *out = -floor_div(-a, b);
        return 0;
    }
    return -1;
}

static int commutative(mica_expr_op_t op)
{
    return op == MICA_EXPR_SUM || op == MICA_EXPR_PROD ||
           op == MICA_EXPR_MAX || op == MICA_EXPR_MIN ||
           op == MICA_EXPR_EQUAL;
}

/* a*b for bounds within +-BIG, saturated to +-BIG. */
static int64_t mul_big(int64_t a, int64_t b)
{
    double p = (double)a * (double)b;
    return p >= (double)BIG ? BIG : p <= -(double)BIG ? -BIG : a * b;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a < b ? a : b, n = c < d ? c : d;
    return m < n ? m : n;
}

static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a > b ? a : b, n = c > d ? c : d;
    return m > n ? m : n;
}

/*
 * Fold a op b when the operands' intervals decide it; otherwise make the
 * node with its interval.
 */
static const mica_expr_t *with_interval(mica_expr_builder_t *eb,
                                        mica_expr_op_t op,
                                        const mica_expr_t *a,
                                        const mica_expr_t *b)
{
    struct mica_expr *n;
    int64_t lo = -BIG, hi = BIG;

    switch (op) {
    case MICA_EXPR_LESS:
        if (a->hi < b->lo)
            return mica__expr_constant(eb, 1);
        if (a->lo >= b->hi)
            return mica__expr_constant(eb, 0);
        lo = 0, hi = 1;
        break;
    case MICA_EXPR_EQUAL:
        if (a->hi < b->lo || b->hi < a->lo)
            return mica__expr_constant(eb, 0);
        lo = 0, hi = 1;
        break;
    case MICA_EXPR_MAX:
        if (a->lo >= b->hi)
            return a;
        if (b->lo >= a->hi)
            return b;
        lo = a->lo > b->lo ? a->lo : b->lo;
        hi = a->hi > b->hi ? a->hi : b->hi;
        break;
    case MICA_EXPR_MIN:
        if (a->hi <= b->lo)
            return a;
        if (b->hi <= a->lo)
            return b;
        lo = a->lo < b->lo ? a->lo : b->lo;
        hi = a->hi < b->hi ? a->hi : b->hi;
        break;
    case MICA_EXPR_SUM:
        lo = mica__expr_clamp(a->lo + b->lo);
        hi = mica__expr_clamp(a->hi + b->hi);
        break;
    case MICA_EXPR_SUB:
        lo = mica__expr_clamp(a->lo - b->hi);
        hi = mica__expr_clamp(a->hi - b->lo);
        break;
    case MICA_EXPR_PROD:
        if ((a->lo == 0 && a->hi == 0) || (b->lo == 0 && b->hi == 0))
            return mica__expr_constant(eb, 0);
        lo = mica__expr_clamp(min4(mul_big(a->lo, b->lo), mul_big(a->lo, b->hi),
                            mul_big(a->hi, b->lo), mul_big(a->hi, b->hi)));
        hi = mica__expr_clamp(max4(mul_big(a->lo, b->lo), mul_big(a->lo, b->hi),
                            mul_big(a->hi, b->lo), mul_big(a->hi, b->hi)));
        break;
    case MICA_EXPR_FLOOR_DIV: case MICA_EXPR_CEIL_DIV:
        if (b->lo > 0 && a->lo >= 0) { /* the common case: sizes */
            lo = 0;
            hi = op == MICA_EXPR_FLOOR_DIV ? a->hi / b->lo
                                           : (a->hi + b->lo - 1) / b->lo;
        }
        break;
    }
    if (lo == hi && lo > -BIG && hi < BIG)
        return mica__expr_constant(eb, lo);
    n = (struct mica_expr *)mica__expr_intern(eb, (int32_t)op, 0, 0, a, b,
                                              NULL);
    if (n) {
        n->lo = lo;
        n->hi = hi;
    }
    return n;
}

const mica_expr_t *mica__expr_operation(mica_expr_builder_t *eb,
                                        mica_expr_op_t op,
                                        const mica_expr_t *a,
                                        const mica_expr_t *b)
{
    int64_t v;
    int ca, cb;

    if (!a || !b || (unsigned)op > MICA_EXPR_CEIL_DIV)
        return NULL;
    ca = a->kind == NODE_CONST;
    cb = b->kind == NODE_CONST;
    if (ca && cb && fold(op, a->value, b->value, &v) == 0)
        return mica__expr_constant(eb, v);
    if (commutative(op) && (ca || (!cb && (uintptr_t)a > (uintptr_t)b))) {
        const mica_expr_t *t = a; /* constants last, then by address */
        a = b;
        b = t;
        ca = a->kind == NODE_CONST;
        cb = b->kind == NODE_CONST;
    }
    switch (op) {
    case MICA_EXPR_SUM:
        if (cb && b->value == 0)
            return a;
        /* (x + c1) + c2 = x + (c1 + c2) */
        if (cb && a->kind == MICA_EXPR_SUM && a->b->kind == NODE_CONST &&
            fold(op, a->b->value, b->value, &v) == 0)
            return mica__expr_operation(eb, op, a->a,
                                        mica__expr_constant(eb, v));
        break;
    case MICA_EXPR_PROD:
        if (cb && b->value == 1)
            return a;
        if (cb && b->value == 0)
            return b;
        if (cb && a->kind == MICA_EXPR_PROD && a->b->kind == NODE_CONST &&
            fold(op, a->b->value, b->value, &v) == 0)
            return mica__expr_operation(eb, op, a->a,
                                        mica__expr_constant(eb, v));
        break;
    case MICA_EXPR_MAX: case MICA_EXPR_MIN:
        if (a == b)
            return a;
        break;
    case MICA_EXPR_SUB:
        if (cb && b->value == 0)
            return a;
        if (a == b)
            return mica__expr_constant(eb, 0);
        /* (x + y) - y = x */
        if (a->kind == MICA_EXPR_SUM && a->b == b)
            return a->a;
        if (a->kind == MICA_EXPR_SUM && a->a == b)
            return a->b;
        break;
    case MICA_EXPR_EQUAL:
        if (a == b)
            return mica__expr_constant(eb, 1);
        break;
    case MICA_EXPR_LESS:
        if (a == b)
            return mica__expr_constant(eb, 0);
        break;
    case MICA_EXPR_FLOOR_DIV: case MICA_EXPR_CEIL_DIV:
        if (cb && b->value == 1)
            return a;
        /* (x * c) / c = x */
        if (cb && b->value != 0 && a->kind == MICA_EXPR_PROD && a->b == b)
            return a->a;
        break;
    }
    return with_interval(eb, op, a, b);
}

/*
 * The values of the nodes one evaluation has computed, by node: nodes
 * are shared (hash-consed), and the shape arithmetic of a transformer
 * (every layer's Shape, Gather, Concat, Reshape over the one before)
 * makes expressions whose tree, walked without it, is exponentially
 * larger than their nodes.  Open addressing; `cap` a power of two.
 */
typedef struct eval_memo {
    const mica_expr_t **key;
    int64_t *val;
    size_t cap, nb;
} eval_memo_t;

static int memo_find(const eval_memo_t *m, const mica_expr_t *e, size_t *at)
{
    size_t i = ((uintptr_t)e >> 4) * 0x9E3779B97F4A7C15ull & (m->cap - 1);
    while (m->key[i] && m->key[i] != e)
        i = (i + 1) & (m->cap - 1);
    *at = i;
    return m->key[i] == e;
}

/* Remember e = v; -1 when out of memory (the walk goes on without). */
static int memo_put(eval_memo_t *m, const mica_expr_t *e, int64_t v)
{
    size_t at, i;
    if (2 * (m->nb + 1) > m->cap) {
        eval_memo_t g;
        g.cap = m->cap ? 2 * m->cap : 64;
        g.nb = 0;
        g.key = calloc(g.cap, sizeof *g.key);
        g.val = malloc(g.cap * sizeof *g.val);
        if (!g.key || !g.val) {
            free(g.key);
            free(g.val);
            return -1;
        }
        for (i = 0; i < m->cap; i++)
            if (m->key[i]) {
                memo_find(&g, m->key[i], &at);
                g.key[at] = m->key[i];
                g.val[at] = m->val[i];
                g.nb++;
            }
        free(m->key);
        free(m->val);
        *m = g;
    }
    memo_find(m, e, &at);
    m->key[at] = e;
    m->val[at] = v;
    m->nb++;
    return 0;
}

static mica_status_t eval_rec(const mica_expr_t *e, const int64_t *symbols,
                              int32_t nb_symbols, eval_memo_t *m,
                              int64_t *out)
{
    int64_t a, b;
    mica_status_t st;
    size_t at;

    if (!e)
        return MICA_ERR_INVALID;
    if (e->kind == NODE_CONST) {
        *out = e->value;
        return MICA_OK;
    }
    if (e->kind == NODE_SYMBOL) {
        if (e->sym < 0 || e->sym >= nb_symbols)
            return MICA_ERR_INVALID;
        *out = symbols[e->sym];
        return MICA_OK;
    }
    if (m->cap && memo_find(m, e, &at)) {
        *out = m->val[at];
        return MICA_OK;
    }
    if ((st = eval_rec(e->a, symbols, nb_symbols, m, &a)) != MICA_OK ||
        (st = eval_rec(e->b, symbols, nb_symbols, m, &b)) != MICA_OK)
        return st;
    if (fold((mica_expr_op_t)e->kind, a, b, out) != 0)
        return MICA_ERR_INVALID;
    memo_put(m, e, *out);
    return MICA_OK;
}

mica_status_t mica__expr_eval(const mica_expr_t *e, const int64_t *symbols,
                              int32_t nb_symbols, int64_t *out)
{
    eval_memo_t m = {NULL, NULL, 0, 0};
    mica_status_t st;
    /* A node of two leaves needs no memory. */
    if (e && e->kind != NODE_CONST && e->kind != NODE_SYMBOL
        && e->a && e->b && e->a->a == NULL && e->b->a == NULL) {
        int64_t a, b;
        if ((st = eval_rec(e->a, symbols, nb_symbols, &m, &a)) != MICA_OK ||
            (st = eval_rec(e->b, symbols, nb_symbols, &m, &b)) != MICA_OK)
            return st;
        return fold((mica_expr_op_t)e->kind, a, b, out) == 0
               ? MICA_OK : MICA_ERR_INVALID;
    }
    st = eval_rec(e, symbols, nb_symbols, &m, out);
    free(m.key);
    free(m.val);
    return st;
}

