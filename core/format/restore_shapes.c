/*
 * core/format/restore_shapes.c - a restored engine's shapes derived
 * again: each layer's instance is asked for its output shapes from its
 * restored input shapes, as a build asks it (core/infer_layer.c), and
 * every output's rank and dimensions must be those the file saved.  The
 * expressions are hash-consed in the engine's builder, so the same
 * expression is mostly the same node; where the nodes differ (the same
 * sum in another order), both are evaluated at fixed points (every
 * symbol 1, 2, 3, 7, then pseudo-random values up to 1000) and must
 * agree wherever both evaluate.  A dimension that differs is refused
 * with one line naming the layer.  Without this, a saved output shorter than
 * what the layer writes (a Shape layer's [2] over an input of rank 4)
 * loaded, and the run wrote past the output's buffer.
 */
#include <config.h>

#include "restore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mica_engine_t *e;
    int32_t step;
} sizer_t;

/* The saved symbol of a data-dependent size of output `out` of layer
 * sz->step (what core/infer_layer.c's make_size made at build time). */
static const mica_expr_t *saved_size(void *user, int32_t out,
                                     const mica_expr_t *upper)
{
    sizer_t *sz = user;
    mica_engine_t *e = sz->e;
    const mica__layer_t *l = &e->layers[sz->step];
    mica__expr_node_t bound;
    int32_t k, t;

    if (out < 0 || out >= l->nb_outputs)
        return NULL;
    t = l->outputs[out];
    for (k = 0; k < e->nb_symbols; k++)
        if (e->symbols[k].kind == MICA__SYM_SIZE && e->symbols[k].tensor == t)
            break;
    if (k == e->nb_symbols || e->symbols[k].upper != upper)
        return NULL;
    mica__expr_inspect(upper, &bound);
    return mica__expr_symbol_range(e->eb, k, e->symbols[k].name, 0,
                                   bound.hi > 0 ? bound.hi : 0);
}

#define NB_POINTS 12

/* Whether a derived dimension is the saved one (sym: scratch values of
 * the engine's symbols). */
static int same_dim(const mica_expr_t *a, const mica_expr_t *b,
                    int64_t *sym, int32_t nb_sym)
{
    static const int64_t fixed[] = {1, 2, 3, 7};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int32_t p, k;

    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    if (mica__expr_is_constant(a) && mica__expr_is_constant(b))
        return mica__expr_constant_value(a) == mica__expr_constant_value(b);
    for (p = 0; p < NB_POINTS; p++) {
        int64_t va, vb;
        for (k = 0; k < nb_sym; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            sym[k] = p < 4 ? fixed[p] : 1 + (int64_t)(x % 1000);
        }
        if (mica__expr_eval(a, sym, nb_sym, &va) == MICA_OK &&
            mica__expr_eval(b, sym, nb_sym, &vb) == MICA_OK && va != vb)
            return 0;
    }
    return 1;
}

static mica_status_t check_step(mica__restore_t *x, int32_t step,
                                int64_t *sym)
{
    mica_engine_t *e = x->e;
    const mica__layer_t *l = &e->layers[step];
    const mica_layer_ops_t *ops = l->instance->ops;
    mica_shape_expr_t in[64], got;
    sizer_t sz = {e, step};
    mica_error_t err;
    char a[128], b[128];
    int32_t i, j, nin = l->nb_inputs;

    if (nin > 64 || l->nb_outputs > 64)
        return mica__restore_bad(x, "layer", "'%s': more than 64 inputs or "
                                 "outputs", l->name);
    memset(in, 0, sizeof in);
    for (i = 0; i < nin; i++) {
        int32_t ti = mica__back_edge(l, i) ? l->inputs[0] : l->inputs[i];
        if (ti >= 0)
            in[i] = e->tensors[ti].shape;
        else
            in[i].nb_dims = -1;
    }
    for (i = 0; i < l->nb_outputs; i++) {
        const mica__tensor_t *t = &e->tensors[l->outputs[i]];
        mica_status_t st;
        memset(&got, 0, sizeof got);
        mica__error_clear(&err);
        mica__expr_set_sizer(e->eb, saved_size, &sz);
        st = ops->output_dims(l->instance, i, in, nin, e->eb, &got, &err);
        mica__expr_set_sizer(e->eb, NULL, NULL);
        if (st != MICA_OK)
            return mica__engine_layer_fail(e, step, &err,
                                           "output shape rejected");
        if (got.nb_dims != t->shape.nb_dims)
            return mica__restore_bad(x, "layer", "'%s': output %d ('%s') "
                                     "has rank %d in the file, the layer "
                                     "makes rank %d", l->name, (int)i,
                                     t->name, (int)t->shape.nb_dims,
                                     (int)got.nb_dims);
        for (j = 0; j < got.nb_dims; j++)
            if (!same_dim(got.d[j], t->shape.d[j], sym, e->nb_symbols))
                return mica__restore_bad(
                    x, "layer", "'%s': dimension %d of output %d ('%s') is "
                    "%s in the file, the layer makes %s", l->name, (int)j,
                    (int)i, t->name,
                    t->shape.d[j] ? mica__expr_print(t->shape.d[j], a,
                                                     sizeof a) : "?",
                    got.d[j] ? mica__expr_print(got.d[j], b, sizeof b)
                             : "?");
    }
    return MICA_OK;
}

mica_status_t mica__restore_check_shapes(mica__restore_t *x)
{
    mica_status_t st = MICA_OK;
    int64_t *sym = calloc((size_t)x->e->nb_symbols + 1, sizeof *sym);
    int32_t s;
    if (!sym)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (s = 0; s < x->e->nb_layers && st == MICA_OK; s++)
        st = check_step(x, s, sym);
    free(sym);
    return st;
}
