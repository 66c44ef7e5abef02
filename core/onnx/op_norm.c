/*
 * core/onnx/op_norm.c - BatchNormalization (inference: a per-channel
 * scale and shift, folded at import where the statistics are constants),
 * InstanceNormalization and LayerNormalization as Normalization layers
 * (LayerNormalization's Mean and InvStdDev as Reduce, ElementWise and Unary
 * layers).
 */
#include <config.h>

#include <math.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- normalizations ----------------------------------------------------- */

/* A per-channel value [C] reshaped to [C, 1, ...] for rank r (axis 1). */
static mica__ox_value_t *per_channel(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *c, int32_t r)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t i;
    if (!c)
        return NULL;
    if (c->rank != 1) {
        OX_BAD(x, n, "a per-channel input of rank %d", (int)c->rank);
        return NULL;
    }
    d[0] = c->d[0];
    for (i = 1; i < r - 1; i++)
        d[i] = 1;
    return mica__ox_reshape(x, n, c, d, r - 1, NULL);
}

/* BatchNormalization (inference): y = x * s + b, folded where scale, bias,
 * mean and variance are constants, else computed as written. */
static mica_status_t op_batch_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *sc, *bi, *me, *va, *s, *b, *y;
    double eps = mica__ox_attr_f(n, "epsilon", 1e-5);
    int64_t c, i;
    if (mica__ox_need(x, n, 5) != MICA_OK)
        return x->st;
    if (mica__ox_attr_i(n, "training_mode", 0) || OUT(1) || OUT(2))
        return OX_UNSUP(x, n, "training mode (only inference)");
    v = IN(0);
    sc = IN(1);
    bi = IN(2);
    me = IN(3);
    va = IN(4);
    if (v->rank < 2)
        return OX_BAD(x, n, "an input of rank %d", (int)v->rank);
    c = sc->rank == 1 ? sc->d[0] : -1;
    if (sc->cst && bi->cst && me->cst && va->cst && c >= 0
        && bi->cst->count == c && me->cst->count == c && va->cst->count == c) {
        double *ws = mica__ox_alloc(x, 8 * (size_t)(c + 1)),
               *wb = mica__ox_alloc(x, 8 * (size_t)(c + 1));
        for (i = 0; ws && wb && i < c; i++) {
            ws[i] = mica__ox_data_f(sc->cst, i) /
                    sqrt(mica__ox_data_f(va->cst, i) + eps);
            wb[i] = mica__ox_data_f(bi->cst, i) -
                    mica__ox_data_f(me->cst, i) * ws[i];
        }
        s = ws ? mica__ox_const_f(x, v->type, ws, 1, &c) : NULL;
        b = wb ? mica__ox_const_f(x, v->type, wb, 1, &c) : NULL;
        if (s)
            s->name = mica__ox_printf(x, "%s.scale", n->name);
        if (b)
            b->name = mica__ox_printf(x, "%s.shift", n->name);
        s = per_channel(x, n, s, v->rank);
        b = per_channel(x, n, b, v->rank);
        y = s && b ? mica__ox_ew(x, n, "prod", v, s, NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "sum", y, b, OUT(0)) : NULL;
    } else {
        mica__ox_value_t *den;
        den = mica__ox_ew(x, n, "sum", per_channel(x, n, va, v->rank),
                          mica__ox_scalar_like(x, v, eps), NULL);
        den = den ? mica__ox_unary(x, n, "sqrt", den, NULL) : NULL;
        y = den ? mica__ox_ew(x, n, "sub", v,
                              per_channel(x, n, me, v->rank), NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "div", y, den, NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "prod", y, per_channel(x, n, sc, v->rank),
                            NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "sum", y, per_channel(x, n, bi, v->rank),
                            OUT(0)) : NULL;
    }
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* (v - mean) / sqrt(var + eps) over `axes`; mean and 1/std if asked. */
static mica__ox_value_t *normalize(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *axes,
                                   int32_t nb, double eps,
                                   mica__ox_value_t **mean,
                                   mica__ox_value_t **inv)
{
    mica__ox_value_t *m, *d, *var, *is;
    m = mica__ox_reduce(x, n, "avg", v, axes, nb, 1, NULL);
    d = m ? mica__ox_ew(x, n, "sub", v, m, NULL) : NULL;
    var = d ? mica__ox_ew(x, n, "prod", d, d, NULL) : NULL;
    var = var ? mica__ox_reduce(x, n, "avg", var, axes, nb, 1, NULL) : NULL;
    var = var ? mica__ox_ew(x, n, "sum", var, mica__ox_scalar_like(x, v, eps),
                            NULL) : NULL;
    var = var ? mica__ox_unary(x, n, "sqrt", var, NULL) : NULL;
    is = var ? mica__ox_unary(x, n, "recip", var, NULL) : NULL;
    if (mean)
        *mean = m;
    if (inv)
        *inv = is;
    return is ? mica__ox_ew(x, n, "prod", d, is, NULL) : NULL;
}

/* InstanceNormalization: a Normalization over the spatial axes with a
 * per-channel scale and bias (op_xformer.c). */
static mica_status_t op_instance_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *y, *sc, *bi;
    int32_t i;
    uint32_t axes = 0;
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->rank < 3)
        return OX_BAD(x, n, "an input of rank %d", (int)v->rank);
    for (i = 2; i < v->rank; i++)
        axes |= 1u << i;
    sc = per_channel(x, n, IN(1), v->rank);
    bi = sc ? per_channel(x, n, IN(2), v->rank) : NULL;
    y = bi ? mica__ox_normalization(x, n, v, sc, bi, axes,
                                    mica__ox_attr_f(n, "epsilon", 1e-5), 1,
                                    0, OUT(0))
           : NULL;
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* LayerNormalization: a Normalization over the axes from `axis` on; with
 * its training outputs Mean and InvStdDev asked for, as Reduce,
 * ElementWise and Unary layers that compute them too. */
static mica_status_t op_layer_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *y, *mean = NULL, *inv = NULL;
    int64_t axis, axes[MICA_MAX_DIMS];
    uint32_t mask = 0;
    int32_t i;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    for (i = (int32_t)axis; i < v->rank; i++) {
        axes[i - axis] = i;
        mask |= 1u << i;
    }
    if (!OUT(1) && !OUT(2) && (v->dtype == MICA_FLOAT32 ||
                              v->dtype == MICA_FLOAT16 ||
                              v->dtype == MICA_BFLOAT16)) {
        y = mica__ox_normalization(x, n, v, IN(1), IN(2), mask,
                                   mica__ox_attr_f(n, "epsilon", 1e-5), 1, 0,
                                   OUT(0));
        if (y)
            mica__ox_set_out(x, n, 0, y);
        return x->st;
    }
    y = normalize(x, n, v, axes, v->rank - (int32_t)axis,
                  mica__ox_attr_f(n, "epsilon", 1e-5), &mean, &inv);
    y = y ? mica__ox_ew(x, n, "prod", y, IN(1), IN(2) ? NULL : OUT(0)) : NULL;
    if (y && IN(2))
        y = mica__ox_ew(x, n, "sum", y, IN(2), OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    if (y && OUT(1))
        mica__ox_set_out(x, n, 1, mica__ox_identity(x, n, mean, OUT(1)));
    if (y && OUT(2))
        mica__ox_set_out(x, n, 2, mica__ox_identity(x, n, inv, OUT(2)));
    return x->st;
}

const mica__ox_op_t mica__ox_ops_norm[] = {
    {"BatchNormalization", op_batch_norm, "ElementWise"},
    {"InstanceNormalization", op_instance_norm, "Normalization"},
    {"LayerNormalization", op_layer_norm,
     "Normalization (Reduce, ElementWise, Unary for Mean and InvStdDev)"},
    {NULL, NULL, NULL},
};
