/*
 * modules/gather/gather.c - the Gather layer (TensorRT's IGatherLayer):
 * creators, layer ops and the CPU reference.
 *
 * Inputs: data (rank r >= 1, any element type of 1, 2, 4 or 8 bytes) and
 * indices (int32, rank q).  Params: axis (default 0, in [0, r)), mode
 * (default, nd, element), num_elementwise_dims e (0 or 1, default 0).
 *   default  output dims = data.d[:axis] + indices.d + data.d[axis+1:];
 *            with e = 1 the first dimension of data and of indices is
 *            elementwise: it broadcasts (equal, or one of them 1), comes
 *            first in the output, and axis must be >= 1;
 *   element  q == r, e == 0; output dims = indices dims, and each of them
 *            other than axis at most data's; output[c] = data[c with
 *            c[axis] = indices[c]];
 *   nd       the last dimension K of indices is a build-time constant in
 *            [1, r - e]; output dims = indices.d[:q-1] + data.d[e+K:];
 *            each K-tuple of indices addresses data.d[e:e+K]; with e = 1
 *            the first dimensions of data and indices are the batch and
 *            must be equal.  axis is not used.
 * An index below 0 counts from the end of its axis; an index still outside
 * the axis is invalid and gives zeros (the element, or the whole slice in
 * nd mode), on the CPU and on CUDA alike.
 *
 * output_values gives the values of a 1-D integer data shape tensor picked
 * by constant indices (e == 0; in nd mode K == 1).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "gather.h"

static const char *const mode_names[] = {"default", "nd", "element", NULL};

static const int64_t zero = 0;

static const mica_field_schema_t gather_fields[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 1, &zero, NULL,
     "the data axis to gather on (default and element modes; default 0)"},
    {"mode", MICA_FIELD_ENUM, 1, 0, 1, &zero, mode_names,
     "default, nd or element (TensorRT's GatherMode)"},
    {"num_elementwise_dims", MICA_FIELD_INT, 1, 0, 1, &zero, NULL,
     "leading dimensions handled elementwise: 0 or 1 (default 0)"},
};

typedef struct gather_layer {
    mica_kit_layer_t base;
    int mode;
    int32_t axis;
    int32_t e;
} gather_layer_t;

#define EXPR_C(v) mica_kit_host->expr_constant(eb, (v))
#define EXPR_OP(op, a, b) mica_kit_host->expr_operation(eb, (op), (a), (b))
#define IS_C(e) mica_kit_host->expr_is_constant(e)
#define C_VAL(e) mica_kit_host->expr_constant_value(e)

static mica_status_t gather_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 2 inputs (data, indices) and gives 1 "
                             "output, got %d and %d", (int)nb_in, (int)nb_out);
    if (in[1] != MICA_INT32)
        return MICA_KIT_FAIL(err, "indices (input 1) must be int32, got %s",
                             mica_kit_host->dtype_name(in[1]));
    out[0] = in[0];
    return MICA_OK;
}

/* The elementwise output dimension: the one of a and b that is not 1. */
static mica_status_t batch_dim(mica_expr_builder_t *eb, const mica_expr_t *a,
                               const mica_expr_t *b, const mica_expr_t **out,
                               mica_error_t *err)
{
    const mica_expr_t *one, *is_one, *diff;

    if (a == b || (IS_C(a) && C_VAL(a) == 1)) {
        *out = b;
    } else if (IS_C(b) && C_VAL(b) == 1) {
        *out = a;
    } else if (IS_C(a) && IS_C(b)) {
        if (C_VAL(a) != C_VAL(b))
            return MICA_KIT_FAIL(err,
                                 "elementwise dimension 0 is %lld in data "
                                 "and %lld in indices: they must be equal or "
                                 "one "
                                 "of them 1",
                                 (long long)C_VAL(a), (long long)C_VAL(b));
        *out = a;
    } else {
        /* a == 1 ? b : a, as a + (a == 1) * (b - a). */
        one = EXPR_C(1);
        is_one = one ? EXPR_OP(MICA_EXPR_EQUAL, a, one) : NULL;
        diff = EXPR_OP(MICA_EXPR_SUB, b, a);
        diff = is_one && diff ? EXPR_OP(MICA_EXPR_PROD, is_one, diff) : NULL;
        *out = diff ? EXPR_OP(MICA_EXPR_SUM, a, diff) : NULL;
    }
    if (!*out)
        return MICA_KIT_FAIL(err, "out of host memory");
    return MICA_OK;
}

static mica_status_t gather_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const gather_layer_t *l = (const gather_layer_t *)layer;
    const mica_shape_expr_t *d = &in[0], *x = &in[1];
    int32_t r, q, n = 0, j, k, e = l->e;
    mica_status_t st;

    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 2 inputs and has 1 output, asked for "
                             "output %d of %d inputs", (int)index, (int)nb_in);
    r = d->nb_dims;
    q = x->nb_dims;
    if (r < 1)
        return MICA_KIT_FAIL(err, "data (input 0) must have rank >= 1, got 0");
    if (l->mode != MICA__GATHER_ND && l->axis >= r)
        return MICA_KIT_FAIL(err,
                             "axis %d is outside [0, %d), the rank of data",
                             (int)l->axis, (int)r);
    switch (l->mode) {
    case MICA__GATHER_ELEMENT:
        if (q != r)
            return MICA_KIT_FAIL(err, "mode element: indices have rank %d but "
                                 "data has rank %d", (int)q, (int)r);
        for (j = 0; j < r; j++) {
            if (j != l->axis && IS_C(x->d[j]) && IS_C(d->d[j]) &&
                C_VAL(x->d[j]) > C_VAL(d->d[j]))
                return MICA_KIT_FAIL(err,
                                     "mode element: indices dimension %d is "
                                     "%lld, more than data's %lld",
                                     (int)j, (long long)C_VAL(x->d[j]),
                                     (long long)C_VAL(d->d[j]));
            out->d[n++] = x->d[j];
        }
        break;
    case MICA__GATHER_ND:
        if (q < 1 + e)
            return MICA_KIT_FAIL(err,
                                 "mode nd: indices need rank >= %d, got %d",
                                 1 + e, (int)q);
        if (!IS_C(x->d[q - 1]))
            return MICA_KIT_FAIL(err, "mode nd: the last dimension of indices "
                                 "must be a build-time constant");
        k = (int32_t)C_VAL(x->d[q - 1]);
        if (k < 1 || k > r - e)
            return MICA_KIT_FAIL(err,
                                 "mode nd: the last dimension of indices is "
                                 "%d, outside [1, %d] (data rank %d less %d "
                                 "elementwise)",
                                 (int)k, (int)(r - e), (int)r, (int)e);
        if (e && IS_C(x->d[0]) && IS_C(d->d[0]) &&
            C_VAL(x->d[0]) != C_VAL(d->d[0]))
            return MICA_KIT_FAIL(err,
                                 "mode nd: elementwise dimension 0 is %lld "
                                 "in data and %lld in indices: they must be "
                                 "equal",
                                 (long long)C_VAL(d->d[0]),
                                 (long long)C_VAL(x->d[0]));
        if (q - 1 + r - e - k > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err,
                                 "the output would have rank %d, more than "
                                 "%d",
                                 (int)(q - 1 + r - e - k), MICA_MAX_DIMS);
        for (j = 0; j < q - 1; j++)
            out->d[n++] = x->d[j];
        for (j = e + k; j < r; j++)
            out->d[n++] = d->d[j];
        break;
    default:
        if (e && l->axis < 1)
            return MICA_KIT_FAIL(err, "num_elementwise_dims 1 needs axis >= 1, "
                                 "got axis %d", (int)l->axis);
        if (q < e)
            return MICA_KIT_FAIL(err, "num_elementwise_dims 1 needs indices of "
                                 "rank >= 1, got rank 0");
        if (r - 1 + q - e > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err,
                                 "the output would have rank %d, more than "
                                 "%d",
                                 (int)(r - 1 + q - e), MICA_MAX_DIMS);
        if (e && (st = batch_dim(eb, d->d[0], x->d[0], &out->d[n++], err)) !=
                     MICA_OK)
            return st;
        for (j = e; j < l->axis; j++)
            out->d[n++] = d->d[j];
        for (j = e; j < q; j++)
            out->d[n++] = x->d[j];
        for (j = l->axis + 1; j < r; j++)
            out->d[n++] = d->d[j];
        break;
    }
    out->nb_dims = n;
    return MICA_OK;
}

/*
 * Values of a 1-D integer data shape tensor at constant indices: every
 * mode then reads data.values[indices[j]] for each index j in order
 * (invalid indices give 0).  Unsupported when anything is unknown.
 */
static mica_status_t gather_output_values(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          const mica_expr_t **values,
                                          int32_t nb_values,
                                          mica_error_t *err)
{
    const gather_layer_t *l = (const gather_layer_t *)layer;
    int64_t d, k;
    int32_t j;

    if (index != 0 || nb_in != 2 || l->e != 0 || in[0].nb_dims != 1 ||
        !in[0].values || !IS_C(in[0].d[0]) || !in[1].values ||
        in[1].nb_values != nb_values)
        return MICA_ERR_UNSUPPORTED;
    d = C_VAL(in[0].d[0]);
    if (in[0].nb_values != d)
        return MICA_ERR_UNSUPPORTED;
    for (j = 0; j < nb_values; j++)
        if (!in[1].values[j] || !IS_C(in[1].values[j]))
            return MICA_ERR_UNSUPPORTED;
    for (j = 0; j < nb_values; j++) {
        k = mica__gather_norm(C_VAL(in[1].values[j]), d);
        values[j] = k < 0 ? EXPR_C(0) : in[0].values[k];
        if (!values[j])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

static int32_t gather_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    size_t s;
    (void)layer;
    if (nb_in != 2 || nb_out != 1 || pos < 0 || pos > 2 ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0) {
        s = mica_dtype_size(io[0].dtype);
        return s == 1 || s == 2 || s == 4 || s == 8;
    }
    if (pos == 1)
        return io[1].dtype == MICA_INT32;
    return io[2].dtype == io[0].dtype;
}

/* ---- running ---------------------------------------------------------- */

static int64_t prod(const mica_dims_t *d, int32_t from, int32_t to)
{
    int64_t v = 1;
    int32_t i;
    for (i = from; i < to; i++)
        v *= d->d[i];
    return v;
}

/* The view of one run, with the run-time checks of the shapes. */
static mica_status_t make_view(const gather_layer_t *l,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out,
                               mica__gather_view_t *v, mica_error_t *err)
{
    const mica_dims_t *d = &in[0].dims, *x = &in[1].dims;
    int32_t r = d->nb_dims, q = x->nb_dims, j, e = l->e;
    int64_t stride = 1;

    memset(v, 0, sizeof *v);
    v->mode = l->mode;
    v->axis = l->axis;
    v->rank = r;
    for (j = r - 1; j >= 0; j--) {
        v->dstrides[j] = stride;
        v->ddims[j] = d->d[j];
        stride *= d->d[j];
    }
    switch (l->mode) {
    case MICA__GATHER_ELEMENT:
        for (j = 0; j < r; j++) {
            if (j != l->axis && x->d[j] > d->d[j]) {
                mica_kit_host->set_error(err, "mode element: indices "
                                         "dimension %d is %lld, more than "
                                         "data's %lld", (int)j,
                                         (long long)x->d[j],
                                         (long long)d->d[j]);
                return MICA_ERR_RUNTIME;
            }
            v->odims[j] = x->d[j];
        }
        break;
    case MICA__GATHER_ND:
        v->k = (int32_t)x->d[q - 1];
        if (e && x->d[0] != d->d[0]) {
            mica_kit_host->set_error(err, "mode nd: elementwise dimension "
                                     "0 is %lld in data and %lld in "
                                     "indices: they must be equal",
                                     (long long)d->d[0], (long long)x->d[0]);
            return MICA_ERR_RUNTIME;
        }
        v->m = prod(x, e, q - 1);
        v->inner = prod(d, e + v->k, r);
        v->data_b = e ? prod(d, 1, r) : 0;
        for (j = 0; j < v->k; j++) { /* the addressed axes, from 0 */
            v->ddims[j] = d->d[e + j];
            v->dstrides[j] = v->dstrides[e + j];
        }
        break;
    default:
        if (e && d->d[0] != x->d[0] && d->d[0] != 1 && x->d[0] != 1) {
            mica_kit_host->set_error(err, "elementwise dimension 0 is %lld "
                                     "in data and %lld in indices: they "
                                     "must be equal or one of them 1",
                                     (long long)d->d[0], (long long)x->d[0]);
            return MICA_ERR_RUNTIME;
        }
        v->outer = prod(d, e, l->axis);
        v->nidx = prod(x, e, q);
        v->inner = prod(d, l->axis + 1, r);
        v->da = d->d[l->axis];
        v->data_b = e && d->d[0] != 1 ? prod(d, 1, r) : 0;
        v->idx_b = e && x->d[0] != 1 ? prod(x, 1, q) : 0;
        break;
    }
    (void)out;
    return MICA_OK;
}

static mica_status_t gather_enqueue_cpu(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs,
                                        void *workspace, void *stream,
                                        mica_error_t *err)
{
    const gather_layer_t *l = (const gather_layer_t *)layer;
    const unsigned char *src = inputs[0];
    unsigned char *dst = outputs[0];
    size_t es = mica_dtype_size(in[0].dtype);
    mica__gather_view_t v;
    mica_status_t st;
    int64_t n = mica_dims_volume(&out[0].dims), i, k;
    (void)nb_in; (void)nb_out; (void)workspace; (void)stream;

    if ((st = make_view(l, in, out, &v, err)) != MICA_OK)
        return st;
    for (i = 0; i < n; i++) {
        k = mica__gather_src(&v, (const int32_t *)inputs[1], i);
        if (k < 0)
            memset(dst + (size_t)i * es, 0, es);
        else
            memcpy(dst + (size_t)i * es, src + (size_t)k * es, es);
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t gather_enqueue_cuda(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    const gather_layer_t *l = (const gather_layer_t *)layer;
    mica__gather_view_t v;
    mica_status_t st;
    (void)nb_in; (void)nb_out; (void)workspace;

    if ((st = make_view(l, in, out, &v, err)) != MICA_OK)
        return st;
    return mica__gather_cuda(inputs[0], (const int32_t *)inputs[1],
                             outputs[0], mica_dims_volume(&out[0].dims),
                             mica_dtype_size(in[0].dtype), &v, stream, err);
}
#endif

static mica_layer_t *gather_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    gather_layer_t *l;
    int64_t mode = mica_kit_int(fields, "mode", MICA__GATHER_DEFAULT);
    int64_t axis = mica_kit_int(fields, "axis", 0);
    int64_t e = mica_kit_int(fields, "num_elementwise_dims", 0);

    if (axis < 0 || axis >= MICA_MAX_DIMS) {
        mica_kit_host->set_error(err, "'axis' is %lld, outside [0, %d)",
                                 (long long)axis, MICA_MAX_DIMS);
        return NULL;
    }
    if (e != 0 && e != 1) {
        mica_kit_host->set_error(err, "'num_elementwise_dims' is %lld: it "
                                 "is 0 or 1", (long long)e);
        return NULL;
    }
    if (e && mode == MICA__GATHER_ELEMENT) {
        mica_kit_host->set_error(err, "'num_elementwise_dims' 1 is for "
                                 "modes default and nd, mode is element");
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l,
                           (const mica_layer_ops_t *)creator->user_data,
                           creator, name, fields, err);
    if (!l)
        return NULL;
    l->mode = (int)mode;
    l->axis = (int32_t)axis;
    l->e = (int32_t)e;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(gather, "Gather", gather_fields,
                    MICA_KIT_COUNT(gather_fields),
                    gather_create, gather_enqueue_cpu, gather_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = gather_output_dtypes,
                    .output_dims = gather_output_dims,
                    .supports_format = gather_supports_format,
                    .output_values = gather_output_values)

static const mica_layer_creator_t *const gather_creators[] = {
    MICA_KIT_PAIR(gather)};

MICA_KIT_ENTRY("gather", PACKAGE_VERSION, "MIT",
               "Gather: default, nd and element modes",
               gather_creators)
