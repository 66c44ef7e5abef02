/*
 * modules/pointwise/pw_view.c - a Pointwise layer's shapes at run time:
 * every value's (TensorRT's broadcast, Scale's coefficient counts, each
 * checked as its layer checks them) and, for each class of outputs, the
 * view through which an output element reads each leaf.
 *
 * A view walks the output in the order of its memory (linear, or
 * channels last), so that output element i is at offset i; each leaf's
 * strides are those of its own memory format, 0 along the dimensions it
 * is broadcast over.  Dimensions of length 1 are dropped and neighbours
 * that every leaf walks contiguously are merged: a class whose leaves are
 * all of the output's shape and format, or scalars, has rank 1 (or 0),
 * and a per-channel bias over [N, C, H, W] becomes [N, C, H*W].
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"

#include "pointwise.h"

/* Broadcast shape a with b (the shapes of operands ia, ib of line i)
 * into a. */
static mica_status_t broadcast(const pw_prog_t *p, int32_t i, int32_t ia,
                               mica_dims_t *a, int32_t ib,
                               const mica_dims_t *b, mica_error_t *err)
{
    int32_t k;

    if (b->nb_dims < 0) /* a const: one value, for any shape */
        return MICA_OK;
    if (a->nb_dims < 0) {
        *a = *b;
        return MICA_OK;
    }
    if (a->nb_dims != b->nb_dims)
        return MICA_KIT_FAIL(err, "program line %d (%s): operand %d has rank "
                             "%d but operand %d has rank %d", (int)i + 1,
                             p->name[i], (int)ib, (int)b->nb_dims, (int)ia,
                             (int)a->nb_dims);
    for (k = 0; k < a->nb_dims; k++) {
        if (a->d[k] == b->d[k] || b->d[k] == 1)
            continue;
        if (a->d[k] != 1)
            return MICA_KIT_FAIL(err, "program line %d (%s): dimension %d "
                                 "of operand %d is %lld and of operand %d is "
                                 "%lld: they must be equal or one of them 1",
                                 (int)i + 1, p->name[i], (int)k, (int)ia,
                                 (long long)a->d[k], (int)ib,
                                 (long long)b->d[k]);
        a->d[k] = b->d[k];
    }
    return MICA_OK;
}

/* Scale line i's coefficient count against its input's shape x (Scale's
 * own check). */
static mica_status_t scale_check(const pw_prog_t *p, int32_t i,
                                 const mica_dims_t *x, mica_error_t *err)
{
    const pw_ins_t *ins = &p->ins[i];
    int64_t need = 1;
    int32_t k;

    if (ins->k == 0 || ins->op == PW_UNIFORM)
        return MICA_OK;
    if (x->nb_dims < 0 && ins->k != 1) /* a const is one value */
        return MICA_KIT_FAIL(err, "program line %d (%s): mode '%s' on a "
                             "const needs 1 coefficient, the weights have "
                             "%lld", (int)i + 1, p->name[i],
                             ins->op == PW_CHANNEL ? "channel"
                                                   : "elementwise",
                             (long long)ins->k);
    if (x->nb_dims < 0)
        return MICA_OK;
    if (ins->axis >= x->nb_dims)
        return MICA_KIT_FAIL(err, "program line %d (%s): channel_axis %d is "
                             "out of range for an input of rank %d",
                             (int)i + 1, p->name[i], (int)ins->axis,
                             (int)x->nb_dims);
    if (ins->op == PW_CHANNEL)
        need = x->d[ins->axis];
    else
        for (k = ins->axis; k < x->nb_dims; k++)
            need *= x->d[k]; /* the core refuses larger tensors first */
    if (need != ins->k)
        return MICA_KIT_FAIL(err, "program line %d (%s): mode '%s' with "
                             "channel_axis %d needs %lld coefficients but "
                             "the weights have %lld", (int)i + 1, p->name[i],
                             ins->op == PW_CHANNEL ? "channel" : "elementwise",
                             (int)ins->axis, (long long)need,
                             (long long)ins->k);
    return MICA_OK;
}

/* Every instruction's shape into shape[]. */
static mica_status_t shapes(const pw_prog_t *p, const mica_tensor_desc_t *in,
                            mica_dims_t *shape, mica_error_t *err)
{
    int32_t i, j;
    mica_status_t st;

    for (i = 0; i < p->nb_ins; i++) {
        const pw_ins_t *ins = &p->ins[i];
        const mica_dims_t *x;
#define SHAPE(v) (PW_IS_INPUT(v) ? &in[PW_INPUT_OF(v)].dims : &shape[v])
        if (ins->kind == PW_CONST) {
            memset(&shape[i], 0, sizeof shape[i]);
            shape[i].nb_dims = -1; /* broadcasts to any shape */
            continue;
        }
        shape[i] = *SHAPE(ins->arg[0]);
        if (ins->kind == PW_EW || ins->kind == PW_SELECT)
            for (j = 1; j < ins->nb_args; j++)
                if ((st = broadcast(p, i, 0, &shape[i], j,
                                    SHAPE(ins->arg[j]), err)) != MICA_OK)
                    return st;
        x = SHAPE(ins->arg[0]);
#undef SHAPE
        if (ins->kind == PW_SCALE && (st = scale_check(p, i, x, err)) !=
                                         MICA_OK)
            return st;
    }
    return MICA_OK;
}

/* The logical strides of coefficient `leaf` (of a Scale whose input has
 * shape x) in an output of shape o. */
static void coef_strides(const pw_prog_t *p, const pw_leaf_t *leaf,
                         const mica_dims_t *x, const mica_dims_t *o,
                         int64_t *s)
{
    const pw_ins_t *ins = &p->ins[leaf->ins];
    int64_t acc = 1;
    int32_t k;

    for (k = 0; k < o->nb_dims; k++)
        s[k] = 0;
    if (x->nb_dims < 0) /* of a const: one value (uniform) */
        return;
    if (ins->op == PW_CHANNEL) {
        s[ins->axis] = 1;
    } else if (ins->op == PW_ELEMENTWISE) {
        for (k = x->nb_dims - 1; k >= ins->axis; k--) {
            s[k] = acc;
            acc *= x->d[k];
        }
    }
    for (k = 0; k < o->nb_dims; k++)
        if (x->d[k] == 1)
            s[k] = 0; /* broadcast with x (or of length 1 anyway) */
}

/* The view of class c, of shape o, written as out[o0] is. */
static mica_status_t class_view(const pw_prog_t *p, const pw_cls_t *c,
                                const mica_dims_t *shape,
                                const mica_tensor_desc_t *in,
                                const mica_tensor_desc_t *o0,
                                pw_view_t *v, mica_error_t *err)
{
    const mica_dims_t *o = &o0->dims;
    int64_t os[MICA_MAX_DIMS], ls[PW_MAX_LEAVES][MICA_MAX_DIMS];
    int32_t perm[MICA_MAX_DIMS], r = o->nb_dims, k, j, l, rank = 0;

    if (!mica_kit_strides(o0, os))
        return MICA_KIT_FAIL(err, "an output of rank %d cannot be in "
                             "format %d", (int)r, (int)o0->format);
    for (l = 0; l < c->nb_leaves; l++) {
        const pw_leaf_t *leaf = &c->leaf[l];
        if (leaf->input >= 0) {
            const mica_tensor_desc_t *t = &in[leaf->input];
            if (t->dims.nb_dims != r || !mica_kit_strides(t, ls[l]))
                return MICA_KIT_FAIL(err, "input %d has rank %d but the "
                                     "output it makes has rank %d",
                                     (int)leaf->input, (int)t->dims.nb_dims,
                                     (int)r);
            for (k = 0; k < r; k++)
                if (t->dims.d[k] != o->d[k])
                    ls[l][k] = 0; /* 1, broadcast */
        } else {
            int32_t x = p->ins[leaf->ins].arg[0];
            coef_strides(p, leaf,
                         PW_IS_INPUT(x) ? &in[PW_INPUT_OF(x)].dims
                                        : &shape[x],
                         o, ls[l]);
        }
    }
    /* the output's memory order: outermost first (a dense tensor's
     * strides differ but where a length is 1, which is dropped) */
    for (k = 0; k < r; k++)
        perm[k] = k;
    for (k = 1; k < r; k++)
        for (j = k; j > 0 && os[perm[j - 1]] < os[perm[j]]; j--) {
            int32_t t = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = t;
        }
    v->nb_leaves = c->nb_leaves;
    v->n = mica_dims_volume(o);
    for (j = 0; j < r; j++) {
        int64_t n = o->d[perm[j]];
        int merge = rank > 0;
        if (n == 1)
            continue;
        for (l = 0; l < c->nb_leaves && merge; l++)
            merge = v->s[l][rank - 1] == ls[l][perm[j]] * n;
        if (merge) {
            v->d[rank - 1] *= n;
            for (l = 0; l < c->nb_leaves; l++)
                v->s[l][rank - 1] = ls[l][perm[j]];
            continue;
        }
        v->d[rank] = n;
        for (l = 0; l < c->nb_leaves; l++)
            v->s[l][rank] = ls[l][perm[j]];
        rank++;
    }
    v->rank = rank;
    return MICA_OK;
}

mica_status_t pw_shapes_check(const pw_prog_t *p,
                              const mica_tensor_desc_t *in,
                              mica_error_t *err)
{
    mica_dims_t *shape = malloc(sizeof *shape * ((size_t)p->nb_ins + 1));
    mica_status_t st;

    if (!shape)
        return MICA_KIT_FAIL(err, "out of host memory");
    st = shapes(p, in, shape, err);
    free(shape);
    return st;
}

mica_status_t pw_views(const pw_prog_t *p, const mica_tensor_desc_t *in,
                       int32_t nb_in, const mica_tensor_desc_t *out,
                       int32_t nb_out, pw_view_t *views, mica_error_t *err)
{
    mica_dims_t *shape = malloc(sizeof *shape * ((size_t)p->nb_ins + 1));
    mica_status_t st = MICA_OK;
    int32_t c, j, k;

    if (!shape)
        return MICA_KIT_FAIL(err, "out of host memory");
    if (nb_in < p->nb_inputs || nb_out != p->nb_out) {
        st = MICA_KIT_FAIL(err, "the program has %d outputs and reads %d "
                           "inputs; the layer has %d and %d",
                           (int)p->nb_out, (int)p->nb_inputs, (int)nb_out,
                           (int)nb_in);
        goto done;
    }
    if ((st = shapes(p, in, shape, err)) != MICA_OK)
        goto done;
    for (c = 0; c < p->nb_cls && st == MICA_OK; c++) {
        const pw_cls_t *cl = &p->cls[c];
        const mica_tensor_desc_t *o0 = &out[cl->out[0]];
        for (j = 0; j < cl->nb_out; j++) {
            int32_t v = p->out[cl->out[j]];
            const mica_dims_t *want = PW_IS_INPUT(v)
                                          ? &in[PW_INPUT_OF(v)].dims
                                          : &shape[v];
            const mica_tensor_desc_t *o = &out[cl->out[j]];
            int same = want->nb_dims == o->dims.nb_dims &&
                       o->format == o0->format;
            for (k = 0; same && k < want->nb_dims; k++)
                same = want->d[k] == o->dims.d[k];
            if (!same) {
                st = MICA_KIT_FAIL(err, "output %d has dims or a format "
                                   "its program does not make",
                                   (int)cl->out[j]);
                goto done;
            }
        }
        st = class_view(p, cl, shape, in, o0, &views[c], err);
    }
done:
    free(shape);
    return st;
}
