/*
 * core/onnx/op_act.c - ONNX's activations and normalizations that are a
 * few of mica's layers, as their ONNX definitions (function bodies)
 * compute them:
 *   HardSwish(x)        x * hard_sigmoid(x; 1/6, 1/2)
 *   Swish(x; alpha)     x * sigmoid(alpha x)
 *   Mish(x)             x * tanh(softplus(x))
 *   Celu(x; alpha)      alpha * elu(x / alpha; 1)
 *   LpNormalization     x / ||x||_p along `axis` (p 1 or 2), a Reduce
 *                       kept to broadcast
 * Activation, ElementWise, Unary and Reduce layers, so each runs where
 * those run (CPU and CUDA).
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

mica__ox_value_t *mica__ox_act(mica__ox_t *x, mica__ox_node_t *n,
                               const char *type, mica__ox_value_t *v,
                               int has_a, double alpha, int has_b,
                               double beta, const char *name)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *t;
    if (!v || x->st != MICA_OK)
        return NULL;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Activation", type);
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "type", type);
    if (has_a)
        mica__ox_p_float(x, l, "alpha", alpha);
    if (has_b)
        mica__ox_p_float(x, l, "beta", beta);
    o = mica__ox_out(x, l, name, v->dtype, v->rank, v->d);
    if (o)
        o->type = v->type;
    return o;
}

/* x * g, the result named as the node's output. */
static mica_status_t times(mica__ox_t *x, mica__ox_node_t *n,
                           mica__ox_value_t *g)
{
    if (g)
        mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, "prod", IN(0), g,
                                              OUT(0)));
    return x->st;
}

static mica_status_t op_hard_swish(mica__ox_t *x, mica__ox_node_t *n)
{
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    return times(x, n, mica__ox_act(x, n, "hard_sigmoid", IN(0), 1, 1.0 / 6.0, 1, 0.5,
                           NULL));
}

static mica_status_t op_swish(mica__ox_t *x, mica__ox_node_t *n)
{
    double alpha = mica__ox_attr_f(n, "alpha", 1.0);
    mica__ox_value_t *v;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (alpha != 1.0)
        v = mica__ox_ew(x, n, "prod", v, mica__ox_scalar_like(x, v, alpha),
                        NULL);
    return times(x, n, mica__ox_act(x, n, "sigmoid", v, 0, 0, 0, 0, NULL));
}

static mica_status_t op_mish(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = mica__ox_act(x, n, "softplus", IN(0), 1, 1.0, 1, 1.0, NULL);
    return times(x, n, mica__ox_act(x, n, "tanh", v, 0, 0, 0, 0, NULL));
}

static mica_status_t op_celu(mica__ox_t *x, mica__ox_node_t *n)
{
    double alpha = mica__ox_attr_f(n, "alpha", 1.0);
    mica__ox_value_t *v;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (alpha == 0.0)
        return OX_BAD(x, n, "alpha 0 (Celu divides by it)");
    v = IN(0);
    v = mica__ox_ew(x, n, "div", v, mica__ox_scalar_like(x, v, alpha), NULL);
    v = mica__ox_act(x, n, "elu", v, 1, 1.0, 0, 0, NULL);
    v = v ? mica__ox_ew(x, n, "prod", v, mica__ox_scalar_like(x, v, alpha),
                        OUT(0)) : NULL;
    if (v)
        mica__ox_set_out(x, n, 0, v);
    return x->st;
}

static mica_status_t op_lp_normalization(mica__ox_t *x, mica__ox_node_t *n)
{
    int64_t p = mica__ox_attr_i(n, "p", 2), axis;
    mica__ox_value_t *v, *norm;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (p != 1 && p != 2)
        return OX_BAD(x, n, "p %lld (1 or 2)", (long long)p);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis %lld is out of range for rank %d",
                      (long long)mica__ox_attr_i(n, "axis", -1),
                      (int)v->rank);
    if (p == 1) {
        norm = mica__ox_unary(x, n, "abs", v, NULL);
        norm = norm ? mica__ox_reduce(x, n, "sum", norm, &axis, 1, 1, NULL)
                    : NULL;
    } else {
        norm = mica__ox_ew(x, n, "prod", v, v, NULL);
        norm = norm ? mica__ox_reduce(x, n, "sum", norm, &axis, 1, 1, NULL)
                    : NULL;
        norm = norm ? mica__ox_unary(x, n, "sqrt", norm, NULL) : NULL;
    }
    if (norm)
        mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, "div", v, norm, OUT(0)));
    return x->st;
}

const mica__ox_op_t mica__ox_ops_act[] = {
    {"HardSwish", op_hard_swish, "Activation, ElementWise"},
    {"Swish", op_swish, "Activation, ElementWise"},
    {"Mish", op_mish, "Activation, ElementWise"},
    {"Celu", op_celu, "Activation, ElementWise"},
    {"LpNormalization", op_lp_normalization, "Unary, Reduce, ElementWise"},
    {NULL, NULL, NULL},
};
