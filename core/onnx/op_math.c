/*
 * core/onnx/op_math.c - operators that are formulas over ElementWise,
 * Unary, Activation and Select layers, as their ONNX function bodies:
 * Gelu, Mod, Shrink.
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/*
 * Gelu (opset 20): Activation gelu_erf (approximate "none", x/2 (1 +
 * erf(x / sqrt 2))) or gelu_tanh ("tanh", x/2 (1 + tanh(sqrt(2/pi) (x +
 * 0.044715 x^3)))).
 */
static mica_status_t op_gelu(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *ap = mica__ox_attr_s(x, n, "approximate", "none");
    mica__ox_value_t *v, *t;
    mica__ox_layer_t *l;
    int tanh_ = !strcmp(ap, "tanh");
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (!tanh_ && strcmp(ap, "none"))
        return OX_BAD(x, n, "approximate '%s' (none or tanh)", ap);
    v = IN(0);
    l = mica__ox_layer(x, n, "Activation", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_str(x, l, "type", tanh_ ? "gelu_tanh" : "gelu_erf");
    t = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, v->d);
    if (t) {
        t->type = v->type;
        mica__ox_set_out(x, n, 0, t);
    }
    return x->st;
}

/*
 * Mod: a - q b with q = floor_div(a, b) (fmod 0, integers: the result
 * takes the divisor's sign) or q = a / b truncated (fmod 1, C's fmod:
 * integer div truncates; for floats trunc q = sign(q) floor |q|).
 */
static mica_status_t op_mod(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b, *q;
    int fm = mica__ox_attr_i(n, "fmod", 0) != 0, is_int;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    a = IN(0);
    b = IN(1);
    is_int = mica__ox_is_int(a->type);
    if (!fm && !is_int)
        return OX_BAD(x, n, "fmod 0 on %s (floats need fmod 1)",
                      mica__ox_type_name(a->type));
    q = mica__ox_ew(x, n, fm ? "div" : "floor_div", a, b, NULL);
    if (fm && !is_int)
        q = mica__ox_ew(x, n, "prod", mica__ox_unary(x, n, "sign", q, NULL),
                        mica__ox_unary(x, n, "floor",
                                       mica__ox_unary(x, n, "abs", q, NULL),
                                       NULL), NULL);
    q = mica__ox_ew(x, n, "sub", a, mica__ox_ew(x, n, "prod", q, b, NULL),
                    OUT(0));
    if (q)
        mica__ox_set_out(x, n, 0, q);
    return x->st;
}

/* Select(cond, a, b), the three unsqueezed to one rank. */
static mica__ox_value_t *pick(mica__ox_t *x, mica__ox_node_t *n,
                              mica__ox_value_t *cond, mica__ox_value_t *a,
                              mica__ox_value_t *b, const char *name)
{
    static const int64_t lead[MICA_MAX_DIMS] = {0, 1, 2, 3, 4, 5, 6, 7};
    mica__ox_value_t *v[3];
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    int32_t r = 0, i;
    v[0] = cond;
    v[1] = a;
    v[2] = b;
    for (i = 0; i < 3; i++) {
        if (!v[i])
            return NULL;
        r = v[i]->rank > r ? v[i]->rank : r;
    }
    for (i = 0; i < 3; i++)
        if (v[i] && v[i]->rank < r)
            v[i] = mica__ox_unsqueeze(x, n, v[i], lead, r - v[i]->rank, NULL);
    if (x->st != MICA_OK)
        return NULL;
    l = mica__ox_layer(x, n, "Select", NULL);
    for (i = 0; i < 3; i++)
        mica__ox_in(x, l, mica__ox_tensor(x, n, v[i]));
    o = mica__ox_out(x, l, name, a->dtype, a->rank, a->d);
    if (o)
        o->type = a->type;
    return o;
}

/* Shrink: x + bias below -lambd, x - bias above lambd, else 0. */
static mica_status_t op_shrink(mica__ox_t *x, mica__ox_node_t *n)
{
    double bias = mica__ox_attr_f(n, "bias", 0),
           lambd = mica__ox_attr_f(n, "lambd", 0.5);
    mica__ox_value_t *v, *lo, *hi, *y;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    lo = mica__ox_ew(x, n, "less", v, mica__ox_scalar_like(x, v, -lambd),
                     NULL);
    hi = mica__ox_ew(x, n, "greater", v, mica__ox_scalar_like(x, v, lambd),
                     NULL);
    y = pick(x, n, hi, mica__ox_ew(x, n, "sub", v,
                                   mica__ox_scalar_like(x, v, bias), NULL),
             mica__ox_scalar_like(x, v, 0), NULL);
    y = pick(x, n, lo, mica__ox_ew(x, n, "sum", v,
                                   mica__ox_scalar_like(x, v, bias), NULL),
             y, OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_math[] = {
    {"Gelu", op_gelu, "Activation"},
    {"Mod", op_mod, "ElementWise (and Unary)"},
    {"Shrink", op_shrink, "ElementWise, Select"},
    {NULL, NULL, NULL},
};
