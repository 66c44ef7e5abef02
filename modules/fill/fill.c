/*
 * modules/fill/fill.c - the Fill layer (TensorRT's IFillLayer): creators,
 * layer ops and the CPU reference.
 *
 * Inputs, each optional: 0 the output's dimensions (a 1-D int32 shape
 * tensor, read on the host before execution), 1 alpha (one element),
 * 2 beta (linspace: one element per output axis; random_uniform: one).
 * Alpha and beta are both inputs or both params, as in TensorRT.
 * Params: `op` (linspace, random_uniform), `shape` (the dimensions when
 * input 0 is absent), `alpha` (default 0), `beta` (default 1; for
 * linspace a list, one value per output axis, where a single value is the
 * list [b] and so fits a 1-D output), `dtype` (default float32).
 *
 *   linspace:        out[i_0, ..., i_n-1] = alpha + sum_k beta[k] * i_k
 *   random_uniform:  out[i] uniform in [alpha, beta)
 *
 * Types: linspace gives float32, float16 or int32 (int32 needs integral
 * alpha and beta params, or int32 alpha and beta inputs); random_uniform
 * gives float32 or float16.  Alpha and beta inputs of a float output are
 * float32 or float16.  random_uniform is deterministic: element i always
 * gets the same value, on the CPU and on CUDA (see fill.h); there is no
 * seed to set, as in TensorRT.
 *
 * An int32 linspace can be a shape tensor: output_values then gives its
 * values as expressions when the dimensions and alpha/beta are known.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "fill.h"

static const char *const op_names[] = {"linspace", "random_uniform", NULL};
static const int64_t default_float32 = MICA_FLOAT32;

static const mica_field_schema_t fill_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, op_names,
     "linspace or random_uniform (TensorRT's FillOperation)"},
    {"shape", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "output dimensions when input 0 is absent"},
    {"alpha", MICA_FIELD_FLOAT, 1, 0, 0, NULL, NULL,
     "linspace: the start; random_uniform: the minimum (default 0)"},
    {"beta", MICA_FIELD_FLOAT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "linspace: the step per axis; random_uniform: the maximum "
     "(default 1)"},
    {"dtype", MICA_FIELD_DTYPE, 1, 0, 1, &default_float32, NULL,
     "output type (default float32)"},
};

typedef struct fill_layer {
    mica_kit_layer_t base;
    int32_t op;
    mica_dtype_t dtype;
    int32_t nshape; /* -1: no 'shape' param */
    int64_t shape[MICA_MAX_DIMS];
    int32_t nbeta;  /* values in beta[] */
    double alpha, beta[MICA_MAX_DIMS];
} fill_layer_t;

static int dtype_ok(int32_t op, mica_dtype_t t)
{
    if (op == MICA__FILL_LINSPACE)
        return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT32;
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

/* Whether an alpha or beta input of type t suits output type out. */
static int param_type_ok(mica_dtype_t out, mica_dtype_t t)
{
    if (out == MICA_INT32)
        return t == MICA_INT32;
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

/* ---- types and shapes --------------------------------------------------- */

static mica_status_t fill_output_dtypes(const mica_layer_t *layer,
                                        const mica_dtype_t *in, int32_t nb_in,
                                        mica_dtype_t *out, int32_t nb_out,
                                        mica_error_t *err)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    (void)in;
    if (nb_in < 0 || nb_in > 3)
        return MICA_KIT_FAIL(err,
                             "takes at most 3 inputs (shape, alpha, beta), "
                             "got %d",
                             (int)nb_in);
    if (nb_in == 2)
        return MICA_KIT_FAIL(err, "input 1 (alpha) is given without input 2 "
                             "(beta): give both or neither");
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = l->dtype;
    return MICA_OK;
}

/* Whether the shape input is present in output_dims' view (an omitted
 * input has nb_dims -1). */
static int shape_given(const mica_shape_expr_t *in, int32_t nb_in)
{
    return nb_in > 0 && in[0].nb_dims >= 0;
}

static mica_status_t fill_output_dims(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out,
                                      mica_error_t *err)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t i, rank;

    if (index != 0)
        return MICA_KIT_FAIL(err, "has no output %d", (int)index);
    if (shape_given(in, nb_in)) {
        if (l->nshape >= 0)
            return MICA_KIT_FAIL(err, "the dimensions are given twice: by the "
                                 "'shape' param and by input 0");
        if (in[0].nb_dims != 1)
            return MICA_KIT_FAIL(err,
                                 "input 0 (dimensions) must be 1-D, got rank "
                                 "%d",
                                 (int)in[0].nb_dims);
        if (!in[0].values)
            return MICA_KIT_FAIL(err, "input 0 (dimensions) has no values: it "
                                 "must be a shape tensor");
        rank = in[0].nb_values;
        if (rank > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err,
                                 "input 0 (dimensions) has %d values, more "
                                 "than %d",
                                 (int)rank, MICA_MAX_DIMS);
        for (i = 0; i < rank; i++) {
            const mica_expr_t *v = in[0].values[i];
            if (h->expr_is_constant(v) && h->expr_constant_value(v) < 0)
                return MICA_KIT_FAIL(err,
                                     "input 0 (dimensions): value %d is %lld, "
                                     "a negative dimension",
                                     (int)i,
                                     (long long)h->expr_constant_value(v));
            out->d[i] = v;
        }
    } else {
        if (l->nshape < 0)
            return MICA_KIT_FAIL(err, "no output dimensions: give the 'shape' "
                                 "param or input 0");
        rank = l->nshape;
        for (i = 0; i < rank; i++) {
            out->d[i] = h->expr_constant(eb, l->shape[i]);
            if (!out->d[i])
                return MICA_KIT_FAIL(err, "out of host memory");
        }
    }
    out->nb_dims = rank;
    if (l->op == MICA__FILL_LINSPACE && nb_in < 3 && l->nbeta != rank &&
        !(l->nbeta == 1 && rank == 0))
        return MICA_KIT_FAIL(err,
                             "linspace: 'beta' has %d values but the output "
                             "has rank %d: give one step per axis",
                             (int)l->nbeta, (int)rank);
    if (nb_in == 3 && in[2].nb_dims > 1)
        return MICA_KIT_FAIL(err, "input 2 (beta) must be a scalar or 1-D, got "
                             "rank %d", (int)in[2].nb_dims);
    if (nb_in == 3 && in[2].nb_dims == 1 && h->expr_is_constant(in[2].d[0])) {
        int64_t n = h->expr_constant_value(in[2].d[0]);
        int64_t want = l->op == MICA__FILL_LINSPACE ? rank : 1;
        if (n != want && !(l->op == MICA__FILL_LINSPACE && n == 1 &&
                           rank == 0))
            return MICA_KIT_FAIL(err, "input 2 (beta) has %lld values but %s "
                                 "takes %lld", (long long)n, op_names[l->op],
                                 (long long)want);
    }
    if (nb_in >= 2 && in[1].nb_dims > 1)
        return MICA_KIT_FAIL(err,
                             "input 1 (alpha) must be a scalar, got rank %d",
                             (int)in[1].nb_dims);
    return MICA_OK;
}

static int32_t fill_supports_format(const mica_layer_t *layer, int32_t pos,
                                    const mica_tensor_desc_t *io,
                                    int32_t nb_in, int32_t nb_out)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    (void)nb_out;
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == nb_in)
        return io[pos].dtype == l->dtype;
    if (pos == 0)
        return io[0].dtype == MICA_INT32 || io[0].dtype == MICA_INT64;
    return pos < nb_in && param_type_ok(l->dtype, io[pos].dtype);
}

static int32_t fill_input_kind(const mica_layer_t *layer, int32_t index,
                               int32_t nb_inputs)
{
    (void)layer;
    (void)nb_inputs;
    return index == 0 ? MICA_INPUT_SHAPE : MICA_INPUT_DATA;
}

/*
 * The values of an int32 linspace: alpha + sum_k beta[k] * i_k over the
 * coordinates, as expressions.  Needs constant dimensions (to walk the
 * coordinates) and, with alpha/beta inputs, their values.
 */
static mica_status_t fill_output_values(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        const mica_expr_t **values,
                                        int32_t nb_values, mica_error_t *err)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *alpha, *beta[MICA_MAX_DIMS];
    int64_t dims[MICA_MAX_DIMS], vol = 1, i;
    int32_t k, rank;

    if (index != 0 || l->op != MICA__FILL_LINSPACE ||
        l->dtype != MICA_INT32)
        return MICA_ERR_UNSUPPORTED;
    if (shape_given(in, nb_in)) {
        if (!in[0].values || in[0].nb_values > MICA_MAX_DIMS)
            return MICA_ERR_UNSUPPORTED;
        rank = in[0].nb_values;
        for (k = 0; k < rank; k++) {
            if (!h->expr_is_constant(in[0].values[k]))
                return MICA_ERR_UNSUPPORTED;
            dims[k] = h->expr_constant_value(in[0].values[k]);
        }
    } else {
        rank = l->nshape;
        for (k = 0; k < rank; k++)
            dims[k] = l->shape[k];
    }
    for (k = 0; k < rank; k++) {
        if (dims[k] < 0 || (dims[k] && vol > INT64_MAX / dims[k]))
            return MICA_ERR_UNSUPPORTED; /* no such tensor: no values */
        vol *= dims[k];
    }
    if (vol != nb_values)
        return MICA_ERR_UNSUPPORTED;
    if (nb_in == 3) {
        if (!in[1].values || in[1].nb_values != 1 || !in[2].values ||
            in[2].nb_values < rank)
            return MICA_ERR_UNSUPPORTED;
        alpha = in[1].values[0];
        for (k = 0; k < rank; k++)
            beta[k] = in[2].values[k];
    } else {
        alpha = h->expr_constant(eb, (int64_t)l->alpha);
        for (k = 0; k < rank; k++)
            beta[k] = h->expr_constant(eb, (int64_t)l->beta[k]);
    }
    for (i = 0; i < nb_values; i++) {
        const mica_expr_t *acc = alpha;
        int64_t rem = i, c;
        for (k = rank - 1; k >= 0 && acc; k--) {
            c = rem % dims[k];
            rem /= dims[k];
            if (c)
                acc = h->expr_operation(
                    eb, MICA_EXPR_SUM, acc,
                    h->expr_operation(eb, MICA_EXPR_PROD, beta[k],
                                      h->expr_constant(eb, c)));
        }
        if (!acc)
            return MICA_KIT_FAIL(err, "out of host memory");
        values[i] = acc;
    }
    return MICA_OK;
}

/* ---- running ------------------------------------------------------------ */

/*
 * The run's arguments from the layer, the output and the alpha/beta
 * inputs' descriptors (checked: both present or both omitted, alpha one
 * element, beta one per axis for linspace and one for random_uniform).
 * *dyn is set when alpha and beta come from the inputs.
 */
static mica_status_t make_args(const fill_layer_t *l,
                               const mica_tensor_desc_t *in, int32_t nb_in,
                               const mica_tensor_desc_t *out,
                               mica__fill_args_t *a, int *dyn,
                               mica_error_t *err)
{
    int64_t na = nb_in > 1 ? mica_dims_volume(&in[1].dims) : 0;
    int64_t nbeta = nb_in > 2 ? mica_dims_volume(&in[2].dims) : 0;
    int64_t want;
    int32_t k;

    memset(a, 0, sizeof *a);
    a->op = l->op;
    a->dtype = out[0].dtype;
    a->rank = out[0].dims.nb_dims;
    for (k = 0; k < a->rank; k++)
        a->dims[k] = out[0].dims.d[k];
    *dyn = na > 0 || nbeta > 0;
    if (*dyn) {
        want = l->op == MICA__FILL_LINSPACE ? a->rank : 1;
        if (na == 0 || nbeta == 0)
            return MICA_KIT_FAIL(err, "input %d (%s) is given without input %d "
                                 "(%s): give both or neither", na ? 1 : 2,
                                 na ? "alpha" : "beta", na ? 2 : 1,
                                 na ? "beta" : "alpha");
        if (na != 1)
            return MICA_KIT_FAIL(err,
                                 "input 1 (alpha) has %lld elements, not 1",
                                 (long long)na);
        if (nbeta != want && !(nbeta == 1 && want == 0))
            return MICA_KIT_FAIL(err,
                                 "input 2 (beta) has %lld elements but %s "
                                 "of rank %d takes %lld",
                                 (long long)nbeta, op_names[l->op],
                                 (int)a->rank, (long long)want);
        return MICA_OK;
    }
    if (l->op == MICA__FILL_LINSPACE && l->nbeta != a->rank &&
        !(l->nbeta == 1 && a->rank == 0))
        return MICA_KIT_FAIL(err,
                             "linspace: 'beta' has %d values but the output "
                             "has rank %d: give one step per axis",
                             (int)l->nbeta, (int)a->rank);
    /* an int32 output's params are int32 values (fill_parse); a float
     * output's may be any double, which no int64 holds */
    a->alpha = l->alpha;
    if (a->dtype == MICA_INT32)
        a->ialpha = (int64_t)l->alpha;
    for (k = 0; k < l->nbeta; k++) {
        a->beta[k] = l->beta[k];
        if (a->dtype == MICA_INT32)
            a->ibeta[k] = (int64_t)l->beta[k];
    }
    return MICA_OK;
}

static mica_status_t fill_enqueue_cpu(mica_layer_t *layer,
                                      const mica_tensor_desc_t *in,
                                      int32_t nb_in,
                                      const mica_tensor_desc_t *out,
                                      int32_t nb_out,
                                      const void *const *inputs,
                                      void *const *outputs, void *workspace,
                                      void *stream, mica_error_t *err)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    mica__fill_args_t a;
    int64_t n, i, c[MICA_MAX_DIMS];
    int32_t k;
    int dyn;
    mica_status_t st;
    (void)nb_out; (void)workspace; (void)stream;

    if ((st = make_args(l, in, nb_in, out, &a, &dyn, err)) != MICA_OK)
        return st;
    if (dyn) {
        a.alpha = mica__fill_param(inputs[1], in[1].dtype, 0);
        a.ialpha = a.dtype == MICA_INT32 ? mica__fill_iparam(inputs[1],
                                                       in[1].dtype, 0) : 0;
        for (k = 0; k < (l->op == MICA__FILL_LINSPACE ? a.rank : 1); k++) {
            a.beta[k] = mica__fill_param(inputs[2], in[2].dtype, k);
            if (a.dtype == MICA_INT32)
                a.ibeta[k] = mica__fill_iparam(inputs[2], in[2].dtype, k);
        }
    }
    n = mica_dims_volume(&out[0].dims);
    for (k = 0; k < a.rank; k++)
        c[k] = 0;
    for (i = 0; i < n; i++) {
        if (a.op == MICA__FILL_LINSPACE) {
            if (a.dtype == MICA_INT32)
                ((int32_t *)outputs[0])[i] = mica__fill_linspace_i(&a, c);
            else if (a.dtype == MICA_FLOAT16)
                ((uint16_t *)outputs[0])[i] =
                    mica_kit_float_to_half((float)mica__fill_linspace(&a, c));
            else
                ((float *)outputs[0])[i] = (float)mica__fill_linspace(&a, c);
            for (k = a.rank - 1; k >= 0; k--) { /* odometer */
                if (++c[k] < a.dims[k])
                    break;
                c[k] = 0;
            }
        } else if (a.dtype == MICA_FLOAT16) {
            ((uint16_t *)outputs[0])[i] =
                mica__fill_clamp16(&a, mica__fill_uniform(&a, i));
        } else {
            ((float *)outputs[0])[i] =
                mica__fill_clamp32(&a, mica__fill_uniform(&a, i));
        }
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t fill_enqueue_cuda(mica_layer_t *layer,
                                       const mica_tensor_desc_t *in,
                                       int32_t nb_in,
                                       const mica_tensor_desc_t *out,
                                       int32_t nb_out,
                                       const void *const *inputs,
                                       void *const *outputs, void *workspace,
                                       void *stream, mica_error_t *err)
{
    const fill_layer_t *l = (const fill_layer_t *)layer;
    mica__fill_args_t a;
    int dyn;
    mica_status_t st;
    (void)nb_out; (void)workspace;

    if ((st = make_args(l, in, nb_in, out, &a, &dyn, err)) != MICA_OK)
        return st;
    if (mica_dims_volume(&out[0].dims) == 0)
        return MICA_OK;
    return mica__fill_cuda(&a, dyn ? inputs[1] : NULL,
                           dyn ? in[1].dtype : MICA_FLOAT32,
                           dyn ? inputs[2] : NULL,
                           dyn ? in[2].dtype : MICA_FLOAT32, outputs[0],
                           stream, err);
}
#endif

/* ---- creators ----------------------------------------------------------- */

/* Check the fields into tmp. */
static mica_status_t fill_parse(const mica_fields_t *f, fill_layer_t *tmp,
                                mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    const int64_t *shape = mica_kit_ints(f, "shape");
    const mica_field_t *beta = mica_fields_find(f, "beta");
    int32_t i, ns = mica_kit_count(f, "shape");
    int64_t op = mica_kit_int(f, "op", 0); /* required */
    char text[256];

    tmp->op = (int32_t)op;
    tmp->dtype = (mica_dtype_t)mica_kit_int(f, "dtype", MICA_FLOAT32);
    if (!dtype_ok(tmp->op, tmp->dtype))
        return MICA_KIT_FAIL(err, "%s does not give %s (it gives %s)",
                             op_names[op], h->dtype_name(tmp->dtype),
                             op == MICA__FILL_LINSPACE
                                 ? "float32, float16 or int32"
                                 : "float32 or float16");
    tmp->nshape = -1;
    if (shape && ns >= 0) {
        if (ns > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err, "'shape' has %d dimensions, more than %d",
                                 (int)ns, MICA_MAX_DIMS);
        for (i = 0; i < ns; i++) {
            if (shape[i] < 0)
                return MICA_KIT_FAIL(err, "'shape' %s has a negative dimension",
                                     mica_kit_ints_text(shape, ns, text,
                                                        sizeof text));
            tmp->shape[i] = shape[i];
        }
        tmp->nshape = ns;
    }
    tmp->alpha = mica_kit_float(f, "alpha", 0.0);
    if (beta) { /* an empty list suits a rank-0 linspace */
        if (beta->count > MICA_MAX_DIMS)
            return MICA_KIT_FAIL(err, "'beta' has %d values, more than %d",
                                 (int)beta->count, MICA_MAX_DIMS);
        if (op == MICA__FILL_RANDOM_UNIFORM && beta->count != 1)
            return MICA_KIT_FAIL(err,
                                 "random_uniform: 'beta' (the maximum) has "
                                 "%d values, not 1",
                                 (int)beta->count);
        for (i = 0; i < beta->count; i++)
            tmp->beta[i] = ((const double *)beta->data)[i];
        tmp->nbeta = beta->count;
    } else {
        tmp->beta[0] = 1.0;
        tmp->nbeta = 1;
    }
    if (tmp->dtype == MICA_INT32) {
        if (tmp->alpha != floor(tmp->alpha) || fabs(tmp->alpha) > 2147483647.0)
            return MICA_KIT_FAIL(err,
                                 "'alpha' %g is not an int32 value, but the "
                                 "output is int32",
                                 tmp->alpha);
        for (i = 0; i < tmp->nbeta; i++)
            if (tmp->beta[i] != floor(tmp->beta[i]) ||
                fabs(tmp->beta[i]) > 2147483647.0)
                return MICA_KIT_FAIL(err,
                                     "'beta' value %d (%g) is not an int32 "
                                     "value, but the output is int32",
                                     (int)i, tmp->beta[i]);
    }
    return MICA_OK;
}

/* Create a layer; the creator carries the ops of its device. */
static mica_layer_t *fill_create(const mica_layer_creator_t *creator,
                                 const char *name, const mica_fields_t *fields,
                                 mica_error_t *err)
{
    fill_layer_t tmp, *l;

    memset(&tmp, 0, sizeof tmp);
    if (fill_parse(fields, &tmp, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    tmp.base = l->base;
    *l = tmp;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(fill, "Fill", fill_fields, MICA_KIT_COUNT(fill_fields),
                    fill_create, fill_enqueue_cpu, fill_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = fill_output_dtypes,
                    .output_dims = fill_output_dims,
                    .supports_format = fill_supports_format,
                    .output_values = fill_output_values,
                    .input_kind = fill_input_kind)

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(fill)};

MICA_KIT_ENTRY("fill", PACKAGE_VERSION, "MIT",
               "Fill: linspace and random_uniform tensors",
               creators)
