/*
 * core/onnx/op_elementwise.c - element-wise ONNX operators: binary
 * arithmetic, comparison and logic (ElementWise, inputs unsqueezed to one
 * rank as TensorRT's parser does), variadic Sum/Mean/Max/Min (a chain),
 * unary math (Unary), activations (Activation, or ElementWise where the
 * bounds of a Clip are tensors or the type is an integer) and Where
 * (Select).
 */
#include <config.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- binary ---------------------------------------------------------------- */

static mica_status_t binary(mica__ox_t *x, mica__ox_node_t *n,
                            const char *op)
{
    mica__ox_value_t *a, *b;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    a = IN(0);
    b = IN(1);
    /* Pow's exponent may have another type: it takes the base's. */
    if (!strcmp(op, "pow") && a->type != b->type)
        b = mica__ox_cast(x, n, b, a->type, NULL);
    if (b)
        mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, op, a, b, OUT(0)));
    return x->st;
}

#define BIN(fn, op) \
    static mica_status_t fn(mica__ox_t *x, mica__ox_node_t *n) \
    { return binary(x, n, op); }
BIN(op_add, "sum")
BIN(op_sub, "sub")
BIN(op_mul, "prod")
BIN(op_div, "div")
BIN(op_pow, "pow")
BIN(op_and, "and")
BIN(op_or, "or")
BIN(op_xor, "xor")
BIN(op_equal, "equal")
BIN(op_greater, "greater")
BIN(op_less, "less")
BIN(op_bitwise_and, "bitwise_and")
BIN(op_bitwise_or, "bitwise_or")
BIN(op_bitwise_xor, "bitwise_xor")

/* BitwiseNot: bitwise_xor with every bit set (-1 for a signed type, the
 * type's largest value for an unsigned one; uint64's as -1's bits). */
static mica_status_t op_bitwise_not(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    double ones;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    ones = v->type == OX_UINT8    ? 255.0
           : v->type == OX_UINT16 ? 65535.0
           : v->type == OX_UINT32 ? 4294967295.0 : -1.0;
    mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, "bitwise_xor", v,
                                          mica__ox_scalar_like(x, v, ones),
                                          OUT(0)));
    return x->st;
}

/* BitShift: direction LEFT or RIGHT. */
static mica_status_t op_bit_shift(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *dir = mica__ox_attr_s(x, n, "direction", "");
    if (!strcmp(dir, "LEFT"))
        return binary(x, n, "shift_left");
    if (!strcmp(dir, "RIGHT"))
        return binary(x, n, "shift_right");
    return OX_BAD(x, n, "direction '%s' (LEFT or RIGHT)", dir);
}

/* a >= b is not (a < b); a <= b is not (a > b). */
static mica_status_t not_of(mica__ox_t *x, mica__ox_node_t *n, const char *op)
{
    mica__ox_value_t *c;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    c = mica__ox_ew(x, n, op, IN(0), IN(1), NULL);
    if (c)
        mica__ox_set_out(x, n, 0, mica__ox_unary(x, n, "not", c, OUT(0)));
    return x->st;
}

static mica_status_t op_greater_equal(mica__ox_t *x, mica__ox_node_t *n)
{
    return not_of(x, n, "less");
}

static mica_status_t op_less_equal(mica__ox_t *x, mica__ox_node_t *n)
{
    return not_of(x, n, "greater");
}

/* Sum, Max, Min of any number of inputs; Mean divides the sum. */
static mica_status_t variadic(mica__ox_t *x, mica__ox_node_t *n,
                              const char *op, int mean)
{
    mica__ox_value_t *acc;
    int32_t i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    acc = IN(0);
    for (i = 1; i < n->nb_in && acc; i++) {
        if (!n->in[i])
            return OX_BAD(x, n, "input %d is missing", (int)i);
        acc = mica__ox_ew(x, n, op, acc, n->in[i],
                          i == n->nb_in - 1 && !mean ? OUT(0) : NULL);
    }
    if (acc && mean)
        acc = mica__ox_ew(x, n, "div", acc,
                          mica__ox_scalar_like(x, acc, n->nb_in), OUT(0));
    else if (acc && n->nb_in == 1)
        acc = mica__ox_identity(x, n, acc, OUT(0));
    if (acc)
        mica__ox_set_out(x, n, 0, acc);
    return x->st;
}

static mica_status_t op_sum(mica__ox_t *x, mica__ox_node_t *n)
{
    return variadic(x, n, "sum", 0);
}

static mica_status_t op_mean(mica__ox_t *x, mica__ox_node_t *n)
{
    return variadic(x, n, "sum", 1);
}

static mica_status_t op_max(mica__ox_t *x, mica__ox_node_t *n)
{
    return variadic(x, n, "max", 0);
}

static mica_status_t op_min(mica__ox_t *x, mica__ox_node_t *n)
{
    return variadic(x, n, "min", 0);
}

/* ---- unary ----------------------------------------------------------------- */

static mica_status_t unary(mica__ox_t *x, mica__ox_node_t *n, const char *op)
{
    if (mica__ox_need(x, n, 1) == MICA_OK)
        mica__ox_set_out(x, n, 0, mica__ox_unary(x, n, op, IN(0), OUT(0)));
    return x->st;
}

#define UN(fn, op) \
    static mica_status_t fn(mica__ox_t *x, mica__ox_node_t *n) \
    { return unary(x, n, op); }
UN(op_abs, "abs")
UN(op_neg, "neg")
UN(op_exp, "exp")
UN(op_log, "log")
UN(op_sqrt, "sqrt")
UN(op_recip, "recip")
UN(op_sin, "sin")
UN(op_cos, "cos")
UN(op_tan, "tan")
UN(op_sinh, "sinh")
UN(op_cosh, "cosh")
UN(op_asin, "asin")
UN(op_acos, "acos")
UN(op_atan, "atan")
UN(op_asinh, "asinh")
UN(op_acosh, "acosh")
UN(op_atanh, "atanh")
UN(op_ceil, "ceil")
UN(op_floor, "floor")
UN(op_erf, "erf")
UN(op_sign, "sign")
UN(op_round, "round")
UN(op_not, "not")
UN(op_isnan, "isnan")

/* IsInf: both signs by default; one sign is isinf(x) and x > 0 (or < 0). */
static mica_status_t op_isinf(mica__ox_t *x, mica__ox_node_t *n)
{
    int64_t pos = mica__ox_attr_i(n, "detect_positive", 1),
            neg = mica__ox_attr_i(n, "detect_negative", 1);
    mica__ox_value_t *inf, *sign;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (pos && neg)
        return unary(x, n, "isinf");
    if (!pos && !neg) {
        /* Never: x != x is false for non-NaN... use isinf and not isinf. */
        inf = mica__ox_unary(x, n, "isinf", IN(0), NULL);
        sign = inf ? mica__ox_unary(x, n, "not", inf, NULL) : NULL;
        if (sign)
            mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, "and", inf, sign,
                                                  OUT(0)));
        return x->st;
    }
    inf = mica__ox_unary(x, n, "isinf", IN(0), NULL);
    sign = mica__ox_ew(x, n, pos ? "greater" : "less", IN(0),
                       mica__ox_scalar_like(x, IN(0), 0), NULL);
    if (inf && sign)
        mica__ox_set_out(x, n, 0, mica__ox_ew(x, n, "and", inf, sign,
                                              OUT(0)));
    return x->st;
}

/* ---- activations ---------------------------------------------------------- */

static mica_status_t activation(mica__ox_t *x, mica__ox_node_t *n,
                                const char *type, int has_a, double alpha,
                                int has_b, double beta)
{
    mica__ox_layer_t *l;
    const char *t;
    mica__ox_value_t *v;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Activation", NULL);
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "type", type);
    if (has_a)
        mica__ox_p_float(x, l, "alpha", alpha);
    if (has_b)
        mica__ox_p_float(x, l, "beta", beta);
    mica__ox_set_out(x, n, 0, mica__ox_out(x, l, OUT(0), v->dtype, v->rank,
                                           v->d));
    return x->st;
}

static mica_status_t op_relu(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "relu", 0, 0, 0, 0);
}

static mica_status_t op_sigmoid(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "sigmoid", 0, 0, 0, 0);
}

static mica_status_t op_tanh(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "tanh", 0, 0, 0, 0);
}

static mica_status_t op_softsign(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "softsign", 0, 0, 0, 0);
}

/* TensorRT's softplus is alpha * log(exp(beta * x) + 1). */
static mica_status_t op_softplus(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "softplus", 1, 1.0, 1, 1.0);
}

static mica_status_t op_leaky_relu(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "leaky_relu", 1,
                      mica__ox_attr_f(n, "alpha", 0.01), 0, 0);
}

static mica_status_t op_elu(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "elu", 1, mica__ox_attr_f(n, "alpha", 1.0), 0, 0);
}

static mica_status_t op_selu(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "selu", 1,
                      mica__ox_attr_f(n, "alpha", 1.67326319217681884765625),
                      1,
                      mica__ox_attr_f(n, "gamma", 1.05070102214813232421875));
}

static mica_status_t op_hard_sigmoid(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "hard_sigmoid", 1,
                      mica__ox_attr_f(n, "alpha", 0.2), 1,
                      mica__ox_attr_f(n, "beta", 0.5));
}

static mica_status_t op_thresholded_relu(mica__ox_t *x, mica__ox_node_t *n)
{
    return activation(x, n, "thresholded_relu", 1,
                      mica__ox_attr_f(n, "alpha", 1.0), 0, 0);
}

/*
 * Clip: bounds from attributes (opset < 11) or optional inputs.  Constant
 * bounds of a float input are an Activation clip; tensor bounds, or an
 * integer input, are ElementWise max and min (as TensorRT's parser).
 */
static mica_status_t op_clip(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *lo = IN(1), *hi = IN(2), *r;
    int fl;
    double a = -INFINITY, b = INFINITY;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    fl = v->type == OX_FLOAT || v->type == OX_FLOAT16 ||
         v->type == OX_BFLOAT16;
    if (n->opset < 11) {
        a = mica__ox_attr_f(n, "min", -FLT_MAX);
        b = mica__ox_attr_f(n, "max", FLT_MAX);
        if (fl && isfinite(a) && isfinite(b))
            return activation(x, n, "clip", 1, a, 1, b);
        lo = mica__ox_scalar_like(x, v, a);
        hi = mica__ox_scalar_like(x, v, b);
    }
    if (fl && (!lo || (lo->cst && lo->cst->count == 1))
        && (!hi || (hi->cst && hi->cst->count == 1))) {
        if (lo)
            a = mica__ox_data_f(lo->cst, 0);
        if (hi)
            b = mica__ox_data_f(hi->cst, 0);
        /* Activation clip takes finite bounds; an infinite one (ONNX's
         * default max is +inf) bounds nothing: the other alone is an
         * ElementWise max or min, neither an identity. */
        if (isfinite(a) && isfinite(b))
            return activation(x, n, "clip", 1, a, 1, b);
        lo = isfinite(a) || isnan(a) ? mica__ox_scalar_like(x, v, a) : NULL;
        hi = isfinite(b) || isnan(b) ? mica__ox_scalar_like(x, v, b) : NULL;
        if (x->st != MICA_OK)
            return x->st;
    }
    r = v;
    if (lo)
        r = mica__ox_ew(x, n, "max", r, lo, hi ? NULL : OUT(0));
    if (r && hi)
        r = mica__ox_ew(x, n, "min", r, hi, OUT(0));
    if (r && !lo && !hi)
        r = mica__ox_identity(x, n, r, OUT(0));
    if (r)
        mica__ox_set_out(x, n, 0, r);
    return x->st;
}

/* Where(cond, a, b): Select, the three unsqueezed to one rank. */
static mica_status_t op_where(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v[3];
    mica__ox_layer_t *l;
    int64_t od[MICA_MAX_DIMS], axes[MICA_MAX_DIMS];
    int32_t r = 0, i, k;
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    for (i = 0; i < 3; i++) {
        v[i] = IN(i);
        r = v[i]->rank > r ? v[i]->rank : r;
    }
    for (k = 0; k < MICA_MAX_DIMS; k++)
        axes[k] = k;
    for (i = 0; i < 3 && x->st == MICA_OK; i++)
        if (v[i]->rank < r)
            v[i] = mica__ox_unsqueeze(x, n, v[i], axes, r - v[i]->rank, NULL);
    if (x->st != MICA_OK)
        return x->st;
    for (k = 0; k < r; k++) {
        od[k] = 1;
        for (i = 0; i < 3; i++) {
            int64_t d = v[i]->d[k];
            if (d != 1)
                od[k] = od[k] == 1 ? d : od[k] < 0 ? d : od[k];
        }
    }
    l = mica__ox_layer(x, n, "Select", NULL);
    for (i = 0; i < 3; i++)
        mica__ox_in(x, l, mica__ox_tensor(x, n, v[i]));
    {
        mica__ox_value_t *o = mica__ox_out(x, l, OUT(0), v[1]->dtype, r, od);
        if (o)
            o->type = v[1]->type;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

const mica__ox_op_t mica__ox_ops_elementwise[] = {
    {"Add", op_add, "ElementWise"},
    {"Sub", op_sub, "ElementWise"},
    {"Mul", op_mul, "ElementWise"},
    {"Div", op_div, "ElementWise"},
    {"Pow", op_pow, "ElementWise"},
    {"Sum", op_sum, "ElementWise"},
    {"Mean", op_mean, "ElementWise"},
    {"Max", op_max, "ElementWise"},
    {"Min", op_min, "ElementWise"},
    {"And", op_and, "ElementWise"},
    {"Or", op_or, "ElementWise"},
    {"Xor", op_xor, "ElementWise"},
    {"BitwiseAnd", op_bitwise_and, "ElementWise"},
    {"BitwiseOr", op_bitwise_or, "ElementWise"},
    {"BitwiseXor", op_bitwise_xor, "ElementWise"},
    {"BitShift", op_bit_shift, "ElementWise"},
    {"BitwiseNot", op_bitwise_not, "ElementWise"},
    {"Equal", op_equal, "ElementWise"},
    {"Greater", op_greater, "ElementWise"},
    {"Less", op_less, "ElementWise"},
    {"GreaterOrEqual", op_greater_equal, "ElementWise, Unary"},
    {"LessOrEqual", op_less_equal, "ElementWise, Unary"},
    {"Abs", op_abs, "Unary"},
    {"Neg", op_neg, "Unary"},
    {"Exp", op_exp, "Unary"},
    {"Log", op_log, "Unary"},
    {"Sqrt", op_sqrt, "Unary"},
    {"Reciprocal", op_recip, "Unary"},
    {"Sin", op_sin, "Unary"},
    {"Cos", op_cos, "Unary"},
    {"Tan", op_tan, "Unary"},
    {"Sinh", op_sinh, "Unary"},
    {"Cosh", op_cosh, "Unary"},
    {"Asin", op_asin, "Unary"},
    {"Acos", op_acos, "Unary"},
    {"Atan", op_atan, "Unary"},
    {"Asinh", op_asinh, "Unary"},
    {"Acosh", op_acosh, "Unary"},
    {"Atanh", op_atanh, "Unary"},
    {"Ceil", op_ceil, "Unary"},
    {"Floor", op_floor, "Unary"},
    {"Erf", op_erf, "Unary"},
    {"Sign", op_sign, "Unary"},
    {"Round", op_round, "Unary"},
    {"Not", op_not, "Unary"},
    {"IsNaN", op_isnan, "Unary"},
    {"IsInf", op_isinf, "Unary, ElementWise"},
    {"Relu", op_relu, "Activation"},
    {"LeakyRelu", op_leaky_relu, "Activation"},
    {"Elu", op_elu, "Activation"},
    {"Selu", op_selu, "Activation"},
    {"Sigmoid", op_sigmoid, "Activation"},
    {"HardSigmoid", op_hard_sigmoid, "Activation"},
    {"Tanh", op_tanh, "Activation"},
    {"Softplus", op_softplus, "Activation"},
    {"Softsign", op_softsign, "Activation"},
    {"ThresholdedRelu", op_thresholded_relu, "Activation"},
    {"Clip", op_clip, "Activation or ElementWise"},
    {"Where", op_where, "Select"},
    {NULL, NULL, NULL},
};
