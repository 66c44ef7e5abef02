/*
 * core/base/expr_nodes.c - what a dimension expression is made of: the
 * symbols it uses, each node as engine files keep it and made again as
 * it was, and its readable form ("N*6", "max(N, 3)").
 */
#include <config.h>

#include "expr_int.h"

#include <stdio.h>
#include <string.h>

int mica__expr_uses(const mica_expr_t *e, const uint8_t *uses, int32_t n)
{
    if (!e)
        return 0;
    if (e->kind == NODE_SYMBOL)
        return e->sym >= 0 && e->sym < n && uses[e->sym];
    if (e->kind == NODE_CONST)
        return 0;
    return mica__expr_uses(e->a, uses, n) || mica__expr_uses(e->b, uses, n);
}

void mica__expr_inspect(const mica_expr_t *e, mica__expr_node_t *out)
{
    out->kind = e->kind;
    out->sym = e->sym;
    out->value = e->value;
    out->a = e->a;
    out->b = e->b;
    out->lo = e->lo;
    out->hi = e->hi;
}

const mica_expr_t *mica__expr_restore(mica_expr_builder_t *eb,
                                      const mica__expr_node_t *n,
                                      const char *name)
{
    struct mica_expr *e;
    int op = n->kind >= MICA_EXPR_SUM && n->kind <= MICA_EXPR_CEIL_DIV;

    if (n->lo > n->hi || (op && (!n->a || !n->b)) ||
        (!op && (n->a || n->b)) ||
        (n->kind == NODE_SYMBOL && (n->sym < 0 || !name)) ||
        (!op && n->kind != NODE_CONST && n->kind != NODE_SYMBOL))
        return NULL;
    if (n->kind == NODE_CONST)
        return mica__expr_constant(eb, n->value);
    if (n->kind == NODE_SYMBOL)
        return mica__expr_symbol_range(eb, n->sym, name, n->lo, n->hi);
    e = (struct mica_expr *)mica__expr_intern(eb, n->kind, 0, 0, n->a, n->b,
                                              NULL);
    if (e) {
        e->lo = mica__expr_clamp(n->lo);
        e->hi = mica__expr_clamp(n->hi);
    }
    return e;
}

/* Binding strength for parentheses: sums 1, products 2, atoms 3. */
static int strength(const mica_expr_t *e)
{
    switch (e->kind) {
    case MICA_EXPR_SUM: case MICA_EXPR_SUB: return 1;
    case MICA_EXPR_PROD: case MICA_EXPR_FLOOR_DIV: return 2;
    default: return 3;
    }
}

typedef struct out_buf {
    char *p;
    size_t len, pos;
} out_buf_t;

static void emit(out_buf_t *o, const char *s)
{
    while (*s) {
        if (o->pos + 1 < o->len)
            o->p[o->pos] = *s;
        o->pos++;
        s++;
    }
    if (o->len)
        o->p[o->pos < o->len ? o->pos : o->len - 1] = '\0';
}

static void print_rec(const mica_expr_t *e, out_buf_t *o, int min_strength)
{
    static const char *const fn[] = {"", "", "max", "min", "", "eq", "lt",
                                     "", "ceil_div"};
    char num[32];
    int s = strength(e), paren = s < min_strength;

    /* The buffer is full: the rest of the walk would print nothing (an
     * expression of shared subexpressions, as a transformer's shape
     * arithmetic makes, is a DAG whose tree is exponentially large). */
    if (o->pos + 1 >= o->len)
        return;
    if (e->kind == NODE_CONST) {
        snprintf(num, sizeof num, "%lld", (long long)e->value);
        emit(o, num);
        return;
    }
    if (e->kind == NODE_SYMBOL) {
        emit(o, e->name ? e->name : "?");
        return;
    }
    if (paren)
        emit(o, "(");
    switch (e->kind) {
    case MICA_EXPR_SUM: case MICA_EXPR_SUB:
        print_rec(e->a, o, 1);
        emit(o, e->kind == MICA_EXPR_SUM ? "+" : "-");
        print_rec(e->b, o, 2);
        break;
    case MICA_EXPR_PROD: case MICA_EXPR_FLOOR_DIV:
        print_rec(e->a, o, 2);
        emit(o, e->kind == MICA_EXPR_PROD ? "*" : "/");
        print_rec(e->b, o, 3);
        break;
    default:
        emit(o, fn[e->kind]);
        emit(o, "(");
        print_rec(e->a, o, 0);
        emit(o, ", ");
        print_rec(e->b, o, 0);
        emit(o, ")");
        break;
    }
    if (paren)
        emit(o, ")");
}

char *mica__expr_print(const mica_expr_t *e, char *buf, size_t len)
{
    out_buf_t o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    if (e)
        print_rec(e, &o, 0);
    else
        emit(&o, "?");
    return buf;
}
