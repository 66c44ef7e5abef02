/*
 * core/onnx/op_loss.c - NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (its LogSoftmax, then the same loss), as their
 * function bodies in ONNX compute them: the target's entries picked by a
 * Gather (element mode along the class axis), the class weights by a
 * Gather (default mode), an ignore_index as a mask (Select), and the
 * reduction (Reduce sum, or the sum over the sum of the weights).
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* A Gather of `mode` (element or default) along `axis`, output dims od. */
static mica__ox_value_t *gather(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *data, mica__ox_value_t *idx,
                                const char *mode, int64_t axis, int32_t rank,
                                const int64_t *od)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *td = mica__ox_tensor(x, n, data);
    const char *ti = mica__ox_tensor(x, n, idx);
    if (x->st != MICA_OK)
        return NULL;
    l = mica__ox_layer(x, n, "Gather", NULL);
    mica__ox_in(x, l, td);
    mica__ox_in(x, l, ti);
    mica__ox_p_int(x, l, "axis", axis);
    if (strcmp(mode, "default"))
        mica__ox_p_str(x, l, "mode", mode);
    o = mica__ox_out(x, l, NULL, data->dtype, rank, od);
    if (o)
        o->type = data->type;
    return o;
}

/* Select(cond, a, b) with b a 0-D constant (unsqueezed to a's rank). */
static mica__ox_value_t *pick(mica__ox_t *x, mica__ox_node_t *n,
                              mica__ox_value_t *cond, mica__ox_value_t *a,
                              mica__ox_value_t *b)
{
    static const int64_t axes[MICA_MAX_DIMS] = {0, 1, 2, 3, 4, 5, 6, 7};
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    if (x->st != MICA_OK || !cond || !a || !b)
        return NULL;
    if (b->rank < a->rank)
        b = mica__ox_unsqueeze(x, n, b, axes, a->rank - b->rank, NULL);
    if (!b)
        return NULL;
    l = mica__ox_layer(x, n, "Select", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, cond));
    mica__ox_in(x, l, mica__ox_tensor(x, n, a));
    mica__ox_in(x, l, mica__ox_tensor(x, n, b));
    o = mica__ox_out(x, l, NULL, a->dtype, a->rank, a->d);
    if (o)
        o->type = a->type;
    return o;
}

/* All the axes of v, reduced by `op` to a 0-D value named `name`. */
static mica__ox_value_t *reduce_all(mica__ox_t *x, mica__ox_node_t *n,
                                    const char *op, mica__ox_value_t *v,
                                    const char *name)
{
    static const int64_t axes[MICA_MAX_DIMS] = {0, 1, 2, 3, 4, 5, 6, 7};
    return v ? mica__ox_reduce(x, n, op, v, axes, v->rank, 0, name) : NULL;
}

/*
 * The loss of log-probabilities `in` [N, C, d...] for classes `target`
 * [N, d...] with class weights `weight` [C] (or NULL): -in[n, t, d] *
 * weight[t], 0 where t is ignore_index (when `has_ii`), reduced as `red`
 * says.  The result is named `name`.
 */
static mica__ox_value_t *nll(mica__ox_t *x, mica__ox_node_t *n,
                             mica__ox_value_t *in, mica__ox_value_t *target,
                             mica__ox_value_t *weight, const char *red,
                             int has_ii, int64_t ii, const char *name)
{
    mica__ox_value_t *t = target, *valid = NULL, *g, *loss, *w = NULL;
    int64_t one = 1, od[MICA_MAX_DIMS];
    int32_t i;

    if (in->rank < 2 || t->rank != in->rank - 1 || in->rank > MICA_MAX_DIMS
        || (weight && weight->rank != 1)) {
        OX_BAD(x, n, "input of rank %d, target of rank %d%s: the target "
               "must have one dimension less (and the weights one)",
               (int)in->rank, (int)t->rank, weight ? ", weights" : "");
        return NULL;
    }
    if (!mica__ox_is_int(t->type)) {
        OX_BAD(x, n, "the target is %s, not an integer type",
               mica__ox_type_name(t->type));
        return NULL;
    }
    if (has_ii) {
        /* Ignored entries read class 0 (any valid index) and weigh 0. */
        valid = mica__ox_unary(x, n, "not", mica__ox_ew(x, n, "equal", t,
                               mica__ox_scalar_like(x, t, (double)ii), NULL),
                               NULL);
        t = pick(x, n, valid, t, mica__ox_scalar_like(x, t, 0));
    }
    if (!t)
        return NULL;
    for (i = 0; i < in->rank; i++)
        od[i] = i == 1 ? 1 : in->d[i];
    g = gather(x, n, in, mica__ox_unsqueeze(x, n, t, &one, 1, NULL),
               "element", 1, in->rank, od);
    loss = mica__ox_unary(x, n, "neg", mica__ox_squeeze(x, n, g, &one, 1,
                                                        NULL), NULL);
    if (weight)
        w = gather(x, n, weight, t, "default", 0, t->rank, t->d);
    if (w && valid)
        w = pick(x, n, valid, w, mica__ox_scalar_like(x, in, 0));
    else if (valid)
        w = mica__ox_cast(x, n, valid, in->type, NULL);
    if (!loss || ((weight || valid) && !w))
        return NULL;
    if (w)
        loss = mica__ox_ew(x, n, "prod", loss, w,
                           strcmp(red, "none") ? NULL : name);
    else if (!strcmp(red, "none"))
        loss = mica__ox_identity(x, n, loss, name);
    if (!strcmp(red, "none"))
        return loss;
    if (!strcmp(red, "sum"))
        return reduce_all(x, n, "sum", loss, name);
    /* mean: over the weights of the targets (their count without). */
    if (!w)
        return reduce_all(x, n, "avg", loss, name);
    return mica__ox_ew(x, n, "div", reduce_all(x, n, "sum", loss, NULL),
                       reduce_all(x, n, "sum", w, NULL), name);
}

/* The reduction attribute, or NULL after a failure. */
static const char *reduction(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *red = mica__ox_attr_s(x, n, "reduction", "mean");
    if (red && strcmp(red, "none") && strcmp(red, "sum")
        && strcmp(red, "mean")) {
        OX_BAD(x, n, "reduction '%s' (none, sum or mean)", red);
        return NULL;
    }
    return red;
}

static mica_status_t op_nll(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *red;
    mica__ox_value_t *o;
    if (mica__ox_need(x, n, 2) != MICA_OK || !(red = reduction(x, n)))
        return x->st;
    o = nll(x, n, IN(0), IN(1), IN(2), red,
            mica__ox_attr(n, "ignore_index") != NULL,
            mica__ox_attr_i(n, "ignore_index", 0), OUT(0));
    if (o)
        mica__ox_set_out(x, n, 0, o);
    return x->st;
}

/* SoftmaxCrossEntropyLoss: log of the softmax over the classes (axis 1),
 * its second output when asked for, then the loss above. */
static mica_status_t op_sce(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *red;
    mica__ox_value_t *s, *lp, *o;
    mica__ox_layer_t *l;
    if (mica__ox_need(x, n, 2) != MICA_OK || !(red = reduction(x, n)))
        return x->st;
    s = IN(0);
    if (s->rank < 2)
        return OX_BAD(x, n, "scores of rank %d (at least 2)", (int)s->rank);
    l = mica__ox_layer(x, n, "SoftMax", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, s));
    mica__ox_p_int(x, l, "axis", 1);
    lp = mica__ox_out(x, l, NULL, s->dtype, s->rank, s->d);
    if (lp)
        lp->type = s->type;
    lp = mica__ox_unary(x, n, "log", lp, OUT(1));
    if (lp && OUT(1))
        mica__ox_set_out(x, n, 1, lp);
    o = lp ? nll(x, n, lp, IN(1), IN(2), red,
                 mica__ox_attr(n, "ignore_index") != NULL,
                 mica__ox_attr_i(n, "ignore_index", 0), OUT(0))
           : NULL;
    if (o)
        mica__ox_set_out(x, n, 0, o);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", op_nll,
     "Gather, ElementWise, Unary, Select, Reduce"},
    {"SoftmaxCrossEntropyLoss", op_sce,
     "SoftMax, Unary, Gather, ElementWise, Select, Reduce"},
    {NULL, NULL, NULL},
};
