/*
 * core/format/exprs.c - the expressions of an engine's shapes in its file
 * (format 3): every node the tensors' dimensions and values use, once,
 * operands before the nodes that use them, so that a loader makes them
 * again in one pass, as they were, without simplifying anything.
 */
#include <config.h>

#include "format.h"
#include "graph.h"

#include <stdlib.h>
#include <string.h>

struct mica__expr_table {
    const mica_expr_t **keys;   /* open addressing: node -> id + 1 */
    uint32_t *ids;
    size_t cap;
    const mica_expr_t **nodes;  /* by id, operands first */
    uint32_t n, nodes_cap;
};

static size_t slot_of(const mica__expr_table_t *t, const mica_expr_t *x)
{
    size_t h = (size_t)(uintptr_t)x;
    h ^= h >> 17;
    h *= (size_t)0x9e3779b97f4a7c15ull;
    return (h ^ (h >> 29)) & (t->cap - 1);
}

uint32_t mica__expr_table_id(const mica__expr_table_t *t,
                             const mica_expr_t *x)
{
    size_t i;
    if (!t->cap)
        return UINT32_MAX;
    i = slot_of(t, x);
    while (t->keys[i] && t->keys[i] != x)
        i = (i + 1) & (t->cap - 1);
    return t->keys[i] ? t->ids[i] : UINT32_MAX;
}

/* Number x (its operands already numbered); 0 or -1 (memory). */
static int add(mica__expr_table_t *t, const mica_expr_t *x)
{
    size_t i;

    if (2 * ((size_t)t->n + 1) > t->cap) {
        mica__expr_table_t grown = *t;
        uint32_t k;
        grown.cap = t->cap ? 2 * t->cap : 64;
        grown.keys = calloc(grown.cap, sizeof *grown.keys);
        grown.ids = calloc(grown.cap, sizeof *grown.ids);
        if (!grown.keys || !grown.ids) {
            free(grown.keys);
            free(grown.ids);
            return -1;
        }
        for (k = 0; k < t->n; k++) {
            i = slot_of(&grown, t->nodes[k]);
            while (grown.keys[i])
                i = (i + 1) & (grown.cap - 1);
            grown.keys[i] = t->nodes[k];
            grown.ids[i] = k;
        }
        free(t->keys);
        free(t->ids);
        *t = grown;
    }
    if (t->n == t->nodes_cap) {
        uint32_t cap = t->nodes_cap ? 2 * t->nodes_cap : 64;
        const mica_expr_t **nodes = realloc(t->nodes, sizeof *nodes * cap);
        if (!nodes)
            return -1;
        t->nodes = nodes;
        t->nodes_cap = cap;
    }
    i = slot_of(t, x);
    while (t->keys[i])
        i = (i + 1) & (t->cap - 1);
    t->keys[i] = x;
    t->ids[i] = t->n;
    t->nodes[t->n++] = x;
    return 0;
}

/*
 * Number x and every node under it, operands first, without recursion
 * (an explicit stack of the nodes whose operands are being numbered).
 * 0, -1 (memory) or -2 (deeper than MAX_EXPR_DEPTH).
 */
static int walk(mica__expr_table_t *t, const mica_expr_t *x)
{
    const mica_expr_t *stack[MAX_EXPR_DEPTH + 1];
    int32_t top = 0;

    if (mica__expr_table_id(t, x) != UINT32_MAX)
        return 0;
    stack[top++] = x;
    while (top > 0) {
        const mica_expr_t *y = stack[top - 1];
        mica__expr_node_t n;
        mica__expr_inspect(y, &n);
        if (n.a && mica__expr_table_id(t, n.a) == UINT32_MAX) {
            if (top == MAX_EXPR_DEPTH)
                return -2;
            stack[top++] = n.a;
        } else if (n.b && mica__expr_table_id(t, n.b) == UINT32_MAX) {
            if (top == MAX_EXPR_DEPTH)
                return -2;
            stack[top++] = n.b;
        } else {
            top--;
            if (mica__expr_table_id(t, y) == UINT32_MAX && add(t, y) != 0)
                return -1;
        }
    }
    return 0;
}

mica_status_t mica__expr_table_make(const mica_engine_t *e,
                                    mica__expr_table_t **out)
{
    mica__expr_table_t *t = calloc(1, sizeof *t);
    int32_t i, j;
    int rc = t ? 0 : -1;

    for (i = 0; rc == 0 && i < e->nb_symbols; i++)
        if (e->symbols[i].kind == MICA__SYM_SIZE)
            rc = walk(t, e->symbols[i].upper);
    for (i = 0; rc == 0 && i < e->nb_tensors; i++) {
        const mica__tensor_t *x = &e->tensors[i];
        for (j = 0; rc == 0 && j < x->shape.nb_dims; j++)
            rc = walk(t, x->shape.d[j]);
        for (j = 0; rc == 0 && x->shape.values && j < x->shape.nb_values; j++)
            rc = walk(t, x->shape.values[j]);
        if (rc == -2) {
            mica__expr_table_free(t);
            return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED, "tensor '%s': "
                              "its shape is an expression deeper than the "
                              "%d levels an engine file holds", x->name,
                              MAX_EXPR_DEPTH);
        }
    }
    if (rc != 0) {
        mica__expr_table_free(t);
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    *out = t;
    return MICA_OK;
}

uint32_t mica__expr_table_count(const mica__expr_table_t *t)
{
    return t->n;
}

void mica__expr_table_write(const mica__expr_table_t *t, mica__out_t *o)
{
    uint32_t i;
    for (i = 0; i < t->n; i++) {
        mica__expr_node_t n;
        mica__expr_inspect(t->nodes[i], &n);
        mica__out_u32(o, (uint32_t)n.kind);
        if (n.kind == MICA__EXPR_CONST) {
            mica__out_i64(o, n.value);
        } else if (n.kind == MICA__EXPR_SYMBOL) {
            mica__out_u32(o, (uint32_t)n.sym);
        } else {
            mica__out_u32(o, mica__expr_table_id(t, n.a));
            mica__out_u32(o, mica__expr_table_id(t, n.b));
        }
        mica__out_i64(o, n.lo);
        mica__out_i64(o, n.hi);
    }
}

void mica__expr_table_free(mica__expr_table_t *t)
{
    if (!t)
        return;
    free(t->keys);
    free(t->ids);
    free(t->nodes);
    free(t);
}

int mica__expr_table_read(mica__in_t *r, mica_engine_t *e, uint32_t n,
                          const mica_expr_t **nodes)
{
    uint16_t *depth = calloc((size_t)n + 1, sizeof *depth);
    uint32_t *paths = calloc((size_t)n + 1, sizeof *paths);
    uint32_t i, a, b;

    if (!depth || !paths) {
        free(depth);
        free(paths);
        r->bad = 1;
        return -1;
    }
    for (i = 0; i < n && !r->bad; i++) {
        mica__expr_node_t x;
        const char *name = NULL;
        memset(&x, 0, sizeof x);
        x.kind = (int32_t)mica__in_u32(r);
        depth[i] = 1;
        paths[i] = 1;
        if (x.kind == MICA__EXPR_CONST) {
            x.value = mica__in_i64(r);
        } else if (x.kind == MICA__EXPR_SYMBOL) {
            x.sym = (int32_t)mica__in_index(r, e->nb_symbols, 0);
            name = r->bad ? NULL : e->symbols[x.sym].name;
        } else {
            a = mica__in_u32(r);
            b = mica__in_u32(r);
            if (a >= i || b >= i) {
                r->bad = 1;
                break;
            }
            x.a = nodes[a];
            x.b = nodes[b];
            depth[i] = (uint16_t)(1 + (depth[a] > depth[b] ? depth[a]
                                                          : depth[b]));
            /* What evaluating it visits, shared operands counted each
             * time: bounded, so that no expression takes long to
             * evaluate, however its nodes are shared. */
            paths[i] = 1 + paths[a] + paths[b];
            if (depth[i] > MAX_EXPR_DEPTH || paths[i] > MAX_EXPR_PATHS ||
                paths[a] > MAX_EXPR_PATHS || paths[b] > MAX_EXPR_PATHS)
                r->bad = 1;
        }
        x.lo = mica__in_i64(r);
        x.hi = mica__in_i64(r);
        if (!r->bad && !(nodes[i] = mica__expr_restore(e->eb, &x, name)))
            r->bad = 1; /* malformed (or out of memory) */
    }
    free(depth);
    free(paths);
    return r->bad ? -1 : 0;
}
