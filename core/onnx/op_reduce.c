/*
 * core/onnx/op_reduce.c - the Reduce* operators: Reduce layers, with the
 * element-wise steps around them that TensorRT's parser adds (L1: abs
 * first; L2 and SumSquare: squares; LogSum: log after; LogSumExp: exp
 * before, log after).  Axes come from the attribute, or from a constant
 * input where the opset says so (ReduceSum from 13); none means all.
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

enum { PRE_NONE, PRE_ABS, PRE_SQUARE, PRE_EXP };
enum { POST_NONE, POST_SQRT, POST_LOG };

static mica_status_t reduce(mica__ox_t *x, mica__ox_node_t *n,
                            const char *op, int pre, int post)
{
    mica__ox_value_t *v, *r;
    int64_t keep = mica__ox_attr_i(n, "keepdims", 1), *axes = NULL,
            all[MICA_MAX_DIMS];
    int32_t k = -1, i;
    int axes_input = !strcmp(n->proto->op_type, "ReduceSum")
                     ? n->opset >= 13 : n->opset >= 18;

    if (!IN(0))
        return OX_BAD(x, n, "input 0 is missing");
    v = IN(0);
    if (v->rank < 0)
        return OX_UNSUP(x, n, "an input of unknown rank");
    if (axes_input) {
        if (IN(1))
            axes = mica__ox_const_ints(x, n, 1, "axes", &k);
        if (x->st != MICA_OK)
            return x->st;
    } else {
        const int64_t *a;
        k = mica__ox_attr_ints(n, "axes", &a);
        if (k >= 0) {
            axes = mica__ox_alloc(x, 8 * (size_t)(k + 1));
            if (axes && k)
                memcpy(axes, a, 8 * (size_t)k);
        }
    }
    if (k <= 0) {
        if (axes_input && mica__ox_attr_i(n, "noop_with_empty_axes", 0)) {
            mica__ox_set_out(x, n, 0, v);
            return x->st;
        }
        for (i = 0; i < v->rank; i++)
            all[i] = i;
        axes = all;
        k = v->rank;
    }
    r = v;
    if (pre == PRE_ABS)
        r = mica__ox_unary(x, n, "abs", r, NULL);
    else if (pre == PRE_SQUARE)
        r = mica__ox_ew(x, n, "prod", r, r, NULL);
    else if (pre == PRE_EXP)
        r = mica__ox_unary(x, n, "exp", r, NULL);
    if (r && k == 0)
        r = mica__ox_identity(x, n, r, post ? NULL : OUT(0));
    else if (r)
        r = mica__ox_reduce(x, n, op, r, axes, k, keep != 0,
                            post ? NULL : OUT(0));
    if (r && post)
        r = mica__ox_unary(x, n, post == POST_SQRT ? "sqrt" : "log", r,
                           OUT(0));
    if (r)
        mica__ox_set_out(x, n, 0, r);
    return x->st;
}

#define RED(fn, op, pre, post) \
    static mica_status_t fn(mica__ox_t *x, mica__ox_node_t *n) \
    { return reduce(x, n, op, pre, post); }
RED(op_reduce_sum, "sum", PRE_NONE, POST_NONE)
RED(op_reduce_mean, "avg", PRE_NONE, POST_NONE)
RED(op_reduce_max, "max", PRE_NONE, POST_NONE)
RED(op_reduce_min, "min", PRE_NONE, POST_NONE)
RED(op_reduce_prod, "prod", PRE_NONE, POST_NONE)
RED(op_reduce_l1, "sum", PRE_ABS, POST_NONE)
RED(op_reduce_l2, "sum", PRE_SQUARE, POST_SQRT)
RED(op_reduce_log_sum, "sum", PRE_NONE, POST_LOG)
RED(op_reduce_log_sum_exp, "sum", PRE_EXP, POST_LOG)
RED(op_reduce_sum_square, "sum", PRE_SQUARE, POST_NONE)

/* GlobalAveragePool and GlobalMaxPool: a Reduce over the spatial axes. */
static mica_status_t global_pool(mica__ox_t *x, mica__ox_node_t *n,
                                 const char *op)
{
    mica__ox_value_t *v = IN(0);
    int64_t axes[MICA_MAX_DIMS];
    int32_t i;
    if (!v || v->rank < 3)
        return OX_BAD(x, n, "the input must be N, C and spatial axes");
    for (i = 2; i < v->rank; i++)
        axes[i - 2] = i;
    mica__ox_set_out(x, n, 0, mica__ox_reduce(x, n, op, v, axes,
                                              v->rank - 2, 1, OUT(0)));
    return x->st;
}

static mica_status_t op_global_avg(mica__ox_t *x, mica__ox_node_t *n)
{
    return global_pool(x, n, "avg");
}

static mica_status_t op_global_max(mica__ox_t *x, mica__ox_node_t *n)
{
    return global_pool(x, n, "max");
}

const mica__ox_op_t mica__ox_ops_reduce[] = {
    {"ReduceSum", op_reduce_sum, "Reduce"},
    {"ReduceMean", op_reduce_mean, "Reduce"},
    {"ReduceMax", op_reduce_max, "Reduce"},
    {"ReduceMin", op_reduce_min, "Reduce"},
    {"ReduceProd", op_reduce_prod, "Reduce"},
    {"ReduceL1", op_reduce_l1, "Unary, Reduce"},
    {"ReduceL2", op_reduce_l2, "ElementWise, Reduce, Unary"},
    {"ReduceLogSum", op_reduce_log_sum, "Reduce, Unary"},
    {"ReduceLogSumExp", op_reduce_log_sum_exp, "Unary, Reduce"},
    {"ReduceSumSquare", op_reduce_sum_square, "ElementWise, Reduce"},
    {"GlobalAveragePool", op_global_avg, "Reduce"},
    {"GlobalMaxPool", op_global_max, "Reduce"},
    {NULL, NULL, NULL},
};
