/*
 * modules/reduce/reduce.c - the Reduce layer (TensorRT's IReduceLayer):
 * sum, prod, max, min or avg over `axes`, keeping them as 1s with
 * `keep_dims`.
 *
 * Axes: a list (TensorRT's bit mask, as the manifest spec says), each in
 * [0, rank); negative or repeated axes are errors.  An empty list reduces
 * nothing (the output is a copy).
 *
 * Types: float32, float16, int32, int8; the output has the input's type.
 * Reducing an empty set gives TensorRT's identities:
 *            float32/float16   int32      int8
 *     sum    0                 0          0
 *     prod   1                 1          1
 *     max    -inf              INT32_MIN  -128
 *     min    +inf              INT32_MAX  127
 *     avg    NaN               0          -128
 * Arithmetic: floating types accumulate in double here (float on CUDA)
 * and round once; max and min skip NaN elements (fmax and fmin; an
 * all-NaN set gives the identity, -inf or +inf).  Integers accumulate in int64: int32 sum and prod wrap as
 * two's complement, int8 results saturate to [-128, 127]; an integer avg
 * truncates toward zero.  On a 1-D integer shape tensor with known
 * values, output_values folds them as expressions.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "reduce.h"

typedef struct reduce_layer {
    mica_kit_layer_t base;
    int32_t op;
    uint32_t mask;    /* bit k: axis k is reduced */
    int32_t max_axis; /* highest axis named, -1 for none */
    int keep_dims;
} reduce_layer_t;

static const char *const reduce_ops[] = {"sum", "prod", "max", "min", "avg",
                                         NULL};
static const int64_t default_false = 0;

static const mica_field_schema_t reduce_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, reduce_ops,
     "the reduction: sum, prod, max, min, avg"},
    {"axes", MICA_FIELD_INT, MICA_COUNT_ANY, 1, 0, NULL, NULL,
     "the axes to reduce, each in [0, rank)"},
    {"keep_dims", MICA_FIELD_BOOL, 1, 0, 1, &default_false, NULL,
     "keep reduced axes as 1s (default: false)"},
};

/* float64 (ONNX's double) on the CPU reference alone. */
static int type_ok(mica_dtype_t t, int cpu)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT32 ||
           t == MICA_INT8 || (t == MICA_FLOAT64 && cpu);
}

/* ---- shapes ------------------------------------------------------------- */

static mica_status_t reduce_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t reduce_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const reduce_layer_t *l = (const reduce_layer_t *)layer;
    int32_t i, n = 0, r;

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    r = in[0].nb_dims;
    if (l->max_axis >= r)
        return MICA_KIT_FAIL(err,
                             "axis %d is out of range for input 0 of rank %d "
                             "(axes are in [0, %d))",
                             (int)l->max_axis, (int)r, (int)r);
    for (i = 0; i < r; i++) {
        if (!(l->mask & (1u << i)))
            out->d[n++] = in[0].d[i];
        else if (l->keep_dims) {
            out->d[n] = mica_kit_host->expr_constant(eb, 1);
            if (!out->d[n++])
                return MICA_KIT_FAIL(err, "out of host memory");
        }
    }
    out->nb_dims = n;
    return MICA_OK;
}

static int32_t reduce_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    (void)nb_out;
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return type_ok(io[0].dtype, (((const mica_kit_layer_t *)layer)
                                         ->creator->devices &
                                     MICA_DEVICE_CPU) != 0);
    return pos == nb_in && io[pos].dtype == io[0].dtype;
}

/* vec: float tensors in linear or channels last, the input and the
 * output each in its own (reduce_vec.c); other types as the reference. */
static int32_t reduce_supports_format_vec(const mica_layer_t *layer,
                                          int32_t pos,
                                          const mica_tensor_desc_t *io,
                                          int32_t nb_in, int32_t nb_out)
{
    if (io[0].dtype != MICA_FLOAT32 && io[0].dtype != MICA_FLOAT16)
        return reduce_supports_format(layer, pos, io, nb_in, nb_out);
    if (!mica_kit_linear(io, pos) &&
        io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims))
        return 0;
    if (pos == 0)
        return 1;
    return pos == nb_in && io[pos].dtype == io[0].dtype;
}

/*
 * The values of a reduced integer shape tensor (0-D or 1-D): no axes
 * keeps them; axis 0 of a 1-D tensor folds them with sum, prod, max or
 * min (an empty set gives the int32 identity of the table above); avg
 * only when the sum is a constant (truncated toward zero, 0 for an
 * empty set).
 */
static mica_status_t reduce_output_values(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          const mica_expr_t **values,
                                          int32_t nb_values,
                                          mica_error_t *err)
{
    const reduce_layer_t *l = (const reduce_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *acc;
    mica_expr_op_t eop;
    int64_t init;
    int32_t i, n;

    if (index != 0 || nb_in != 1 || !in[0].values || in[0].nb_dims > 1)
        return MICA_ERR_UNSUPPORTED;
    n = in[0].nb_values;
    if (l->mask == 0) {
        if (n != nb_values)
            return MICA_ERR_UNSUPPORTED;
        for (i = 0; i < n; i++)
            values[i] = in[0].values[i];
        return MICA_OK;
    }
    if (l->mask != 1u || in[0].nb_dims != 1 || nb_values != 1)
        return MICA_ERR_UNSUPPORTED;
    switch (l->op) {
    case MICA_REDUCE_PROD: eop = MICA_EXPR_PROD; init = 1; break;
    case MICA_REDUCE_MAX: eop = MICA_EXPR_MAX; init = INT32_MIN; break;
    case MICA_REDUCE_MIN: eop = MICA_EXPR_MIN; init = INT32_MAX; break;
    default: eop = MICA_EXPR_SUM; init = 0; break; /* sum, avg */
    }
    acc = n > 0 ? in[0].values[0] : h->expr_constant(eb, init);
    for (i = 1; i < n && acc; i++)
        acc = h->expr_operation(eb, eop, acc, in[0].values[i]);
    if (!acc)
        return MICA_KIT_FAIL(err, "out of host memory");
    if (l->op == MICA_REDUCE_AVG) {
        if (!h->expr_is_constant(acc))
            return MICA_ERR_UNSUPPORTED;
        acc = h->expr_constant(eb, n ? h->expr_constant_value(acc) / n : 0);
        if (!acc)
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    values[0] = acc;
    return MICA_OK;
}

/* ---- the CPU reference -------------------------------------------------- */

static double load_f(const void *p, mica_dtype_t t, int64_t i)
{
    return t == MICA_FLOAT16   ? mica_kit_half_to_float(((const uint16_t *)p)[i])
           : t == MICA_FLOAT64 ? ((const double *)p)[i]
                               : ((const float *)p)[i];
}

static int64_t load_i(const void *p, mica_dtype_t t, int64_t i)
{
    return t == MICA_INT8 ? ((const int8_t *)p)[i] : ((const int32_t *)p)[i];
}

typedef struct reduce_view {
    int32_t nk, nr;
    int64_t kdims[MICA_MAX_DIMS], kstr[MICA_MAX_DIMS];
    int64_t rdims[MICA_MAX_DIMS], rstr[MICA_MAX_DIMS];
    int64_t nout, R;
} reduce_view_t;

static void make_view(const mica_dims_t *d, uint32_t mask, reduce_view_t *v)
{
    int64_t stride[MICA_MAX_DIMS], s = 1;
    int32_t k;

    memset(v, 0, sizeof *v);
    for (k = d->nb_dims - 1; k >= 0; k--) {
        stride[k] = s;
        s *= d->d[k];
    }
    v->nout = v->R = 1;
    for (k = 0; k < d->nb_dims; k++) {
        if (mask & (1u << k)) {
            v->rdims[v->nr] = d->d[k];
            v->rstr[v->nr++] = stride[k];
            v->R *= d->d[k];
        } else {
            v->kdims[v->nk] = d->d[k];
            v->kstr[v->nk++] = stride[k];
            v->nout *= d->d[k];
        }
    }
}

static int64_t offset_of(int64_t i, int32_t n, const int64_t *dims,
                         const int64_t *str)
{
    int64_t off = 0;
    int32_t k;
    for (k = n - 1; k >= 0; k--) {
        off += (i % dims[k]) * str[k];
        i /= dims[k];
    }
    return off;
}

static double reduce_float(const void *src, mica_dtype_t t, int32_t op,
                           int64_t base, const reduce_view_t *v)
{
    double acc = op == MICA_REDUCE_PROD ? 1.0
                 : op == MICA_REDUCE_MAX ? -INFINITY
                 : op == MICA_REDUCE_MIN ? INFINITY : 0.0;
    int64_t r;

    for (r = 0; r < v->R; r++) {
        double x = load_f(src, t, base + offset_of(r, v->nr, v->rdims,
                                                   v->rstr));
        switch (op) {
        case MICA_REDUCE_PROD: acc *= x; break;
        case MICA_REDUCE_MAX: acc = fmax(acc, x); break;
        case MICA_REDUCE_MIN: acc = fmin(acc, x); break;
        default: acc += x; break;
        }
    }
    if (op == MICA_REDUCE_AVG)
        acc = v->R ? acc / (double)v->R : NAN;
    return acc;
}

static int64_t reduce_int(const void *src, mica_dtype_t t, int32_t op,
                          int64_t base, const reduce_view_t *v)
{
    int64_t lo = t == MICA_INT8 ? -128 : INT32_MIN;
    int64_t hi = t == MICA_INT8 ? 127 : INT32_MAX;
    int64_t acc = op == MICA_REDUCE_PROD ? 1
                  : op == MICA_REDUCE_MAX ? lo
                  : op == MICA_REDUCE_MIN ? hi : 0;
    int64_t r;

    for (r = 0; r < v->R; r++) {
        int64_t x = load_i(src, t, base + offset_of(r, v->nr, v->rdims,
                                                    v->rstr));
        switch (op) {
        case MICA_REDUCE_PROD:
            acc = (int64_t)((uint64_t)acc * (uint64_t)x);
            break;
        case MICA_REDUCE_MAX: acc = acc > x ? acc : x; break;
        case MICA_REDUCE_MIN: acc = acc < x ? acc : x; break;
        default: acc = (int64_t)((uint64_t)acc + (uint64_t)x); break;
        }
    }
    if (op == MICA_REDUCE_AVG)
        acc = v->R ? acc / v->R : (t == MICA_INT8 ? -128 : 0);
    return acc;
}

static mica_status_t reduce_enqueue_cpu(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs, void *workspace,
                                        void *stream, mica_error_t *err)
{
    const reduce_layer_t *l = (const reduce_layer_t *)layer;
    mica_dtype_t t = in[0].dtype;
    reduce_view_t v;
    int64_t o;
    (void)nb_in; (void)out; (void)nb_out; (void)workspace; (void)stream;
    (void)err;

    make_view(&in[0].dims, l->mask, &v);
    for (o = 0; o < v.nout; o++) {
        int64_t base = offset_of(o, v.nk, v.kdims, v.kstr);
        if (t == MICA_FLOAT32) {
            ((float *)outputs[0])[o] =
                (float)reduce_float(inputs[0], t, l->op, base, &v);
        } else if (t == MICA_FLOAT16) {
            ((uint16_t *)outputs[0])[o] = mica_kit_float_to_half(
                (float)reduce_float(inputs[0], t, l->op, base, &v));
        } else if (t == MICA_FLOAT64) {
            ((double *)outputs[0])[o] =
                reduce_float(inputs[0], t, l->op, base, &v);
        } else if (t == MICA_INT32) {
            ((int32_t *)outputs[0])[o] = (int32_t)(uint32_t)(uint64_t)
                reduce_int(inputs[0], t, l->op, base, &v);
        } else {
            int64_t x = reduce_int(inputs[0], t, l->op, base, &v);
            ((int8_t *)outputs[0])[o] =
                (int8_t)(x < -128 ? -128 : x > 127 ? 127 : x);
        }
    }
    return MICA_OK;
}

/* The fast path for float tensors, else the reference. */
static MICA_KIT_ENQUEUE(reduce_enqueue_vec)
{
    const reduce_layer_t *l = (const reduce_layer_t *)layer;
    mica_status_t st;
    int taken = 0;

    if (nb_in == 1 && nb_out == 1 &&
        ((st = mica__reduce_vec(l->op, l->mask, l->keep_dims, &in[0],
                                &out[0], inputs[0], outputs[0], &taken,
                                err)) != MICA_OK ||
         taken))
        return taken ? MICA_OK : st;
    return reduce_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                              workspace, stream, err);
}

#if MICA_KIT_CUDA
static mica_status_t reduce_enqueue_cuda(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    const reduce_layer_t *l = (const reduce_layer_t *)layer;
    (void)nb_in; (void)out; (void)nb_out; (void)workspace;
    return mica__reduce_cuda(inputs[0], outputs[0], in[0].dtype, l->op,
                             in[0].dims.nb_dims, in[0].dims.d, l->mask,
                             stream, err);
}
#endif

static mica_layer_t *reduce_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    reduce_layer_t *l;
    const int64_t *axes = mica_kit_ints(fields, "axes");
    int32_t i, n = mica_kit_count(fields, "axes"), max_axis = -1;
    int64_t op = mica_kit_int(fields, "op", 0); /* required, as axes */
    uint32_t mask = 0;

    for (i = 0; i < n; i++) {
        if (axes[i] < 0 || axes[i] >= MICA_MAX_DIMS) {
            mica_kit_host->set_error(err, "'axes' entry %d is %lld: axes "
                                     "count from 0 and are below the rank "
                                     "(at most %d)", (int)i,
                                     (long long)axes[i], MICA_MAX_DIMS);
            return NULL;
        }
        if (mask & (1u << axes[i])) {
            mica_kit_host->set_error(err, "'axes' names axis %lld twice",
                                     (long long)axes[i]);
            return NULL;
        }
        mask |= 1u << axes[i];
        if (axes[i] > max_axis)
            max_axis = (int32_t)axes[i];
    }
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->op = (int32_t)op;
    l->mask = mask;
    l->max_axis = max_axis;
    l->keep_dims = mica_kit_int(fields, "keep_dims", 0) != 0;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(reduce, "Reduce", reduce_fields, 3,
                    reduce_create, reduce_enqueue_cpu, reduce_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = reduce_output_dtypes,
                    .output_dims = reduce_output_dims,
                    .supports_format = reduce_supports_format,
                    .output_values = reduce_output_values)

static const mica_layer_ops_t reduce_ops_vec = MICA_KIT_OPS(
    reduce_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = reduce_output_dtypes,
    .output_dims = reduce_output_dims,
    .supports_format = reduce_supports_format_vec,
    .output_values = reduce_output_values);
static const mica_layer_creator_t reduce_creator_vec = MICA_KIT_CREATOR(
    "Reduce", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, reduce_fields, 3,
    reduce_create, &reduce_ops_vec);

static const mica_layer_creator_t *const reduce_creators[] = {
    MICA_KIT_PAIR(reduce), &reduce_creator_vec};

MICA_KIT_ENTRY("reduce", PACKAGE_VERSION, "MIT",
               "Reduce: sum, prod, max, min, avg over axes",
               reduce_creators)
