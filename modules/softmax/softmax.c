/*
 * modules/softmax/softmax.c - the SoftMax layer (TensorRT's
 * ISoftMaxLayer) and the RaggedSoftMax layer (IRaggedSoftMaxLayer):
 * creators, layer ops and the CPU references.
 *
 * SoftMax: one input of rank >= 1, float32 or float16, one output of
 * its shape and type; `axis` (default max(0, rank - 3), TensorRT's
 * default) in 0..rank-1.
 *
 * RaggedSoftMax: x of rank 2 [rows, len] (or 3, [1, rows, len], as
 * TensorRT's operator reference allows), bounds int32 of x's rank with
 * the last dimension 1 ([rows, 1]): row r is a softmax over its first
 * bounds[r] elements; the elements past the bound are 0 (a bound <= 0
 * gives a row of zeros, one past len counts as len).
 *
 * The references compute in double: the row's maximum first, then the
 * sum of exp(x - max), then each exp(x - max) / sum.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "softmax.h"

static const mica_field_schema_t softmax_fields[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL,
     "the axis of the softmax (default max(0, rank - 3))"},
};

typedef struct softmax_layer {
    mica_kit_layer_t base;
    int64_t axis; /* -1: the default */
} softmax_layer_t;

/* ---- shared pieces ----------------------------------------------------- */

static int float_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

static double load(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void store(mica_dtype_t t, void *p, int64_t i, double v)
{
    if (t == MICA_FLOAT16)
        ((uint16_t *)p)[i] = mica_kit_float_to_half((float)v);
    else
        ((float *)p)[i] = (float)v;
}

/*
 * The softmax of n elements of x, `step` apart from x[base], into y at
 * the same places; only the first `active` take part, the others get 0.
 */
static void softmax_row(mica_dtype_t t, const void *x, void *y, int64_t base,
                        int64_t step, int64_t n, int64_t active)
{
    double m = -INFINITY, s = 0.0;
    int64_t j;

    for (j = 0; j < active; j++)
        m = fmax(m, load(t, x, base + j * step));
    for (j = 0; j < active; j++)
        s += exp(load(t, x, base + j * step) - m);
    for (j = 0; j < n; j++)
        store(t, y, base + j * step,
              j < active ? exp(load(t, x, base + j * step) - m) / s : 0.0);
}

/* ---- SoftMax ----------------------------------------------------------- */

static int64_t softmax_axis(const softmax_layer_t *l, int32_t rank)
{
    if (l->axis >= 0)
        return l->axis;
    return rank > 3 ? rank - 3 : 0;
}

static mica_status_t softmax_dtypes(const mica_layer_t *layer,
                                    const mica_dtype_t *in, int32_t nb_in,
                                    mica_dtype_t *out, int32_t nb_out,
                                    mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and gives 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    if (!float_type(in[0]))
        return MICA_KIT_FAIL(err, "x must be float32 or float16, got %s",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t softmax_dims(const mica_layer_t *layer, int32_t index,
                                  const mica_shape_expr_t *in, int32_t nb_in,
                                  mica_expr_builder_t *eb,
                                  mica_shape_expr_t *out, mica_error_t *err)
{
    const softmax_layer_t *l = (const softmax_layer_t *)layer;

    if (in[0].nb_dims < 1)
        return MICA_KIT_FAIL(err, "x must have rank >= 1, got 0");
    if (l->axis >= in[0].nb_dims)
        return MICA_KIT_FAIL(err, "axis %lld is out of range for rank %d "
                             "(0 to %d)", (long long)l->axis,
                             (int)in[0].nb_dims, (int)in[0].nb_dims - 1);
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

/* outer, len, inner of a SoftMax over `dims`. */
static void softmax_split(const softmax_layer_t *l, const mica_dims_t *dims,
                          int64_t *outer, int64_t *len, int64_t *inner)
{
    int64_t axis = softmax_axis(l, dims->nb_dims);
    int32_t i;

    *outer = *inner = 1;
    *len = dims->d[axis];
    for (i = 0; i < axis; i++)
        *outer *= dims->d[i];
    for (i = (int32_t)axis + 1; i < dims->nb_dims; i++)
        *inner *= dims->d[i];
}

static MICA_KIT_ENQUEUE(softmax_cpu)
{
    const softmax_layer_t *l = (const softmax_layer_t *)layer;
    int64_t outer, len, inner, o, i;

    softmax_split(l, &in[0].dims, &outer, &len, &inner);
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++)
            softmax_row(in[0].dtype, inputs[0], outputs[0],
                        o * len * inner + i, inner, len, len);
    return MICA_OK;
}

/* vec: the vector kernels, else the reference. */
static MICA_KIT_ENQUEUE(softmax_vec)
{
    const softmax_layer_t *l = (const softmax_layer_t *)layer;
    int64_t outer, len, inner;

    softmax_split(l, &in[0].dims, &outer, &len, &inner);
    if (mica__softmax_vec(in[0].dtype, outer, len, inner, inputs[0],
                          outputs[0]))
        return MICA_OK;
    return softmax_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                       workspace, stream, err);
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(softmax_cuda)
{
    const softmax_layer_t *l = (const softmax_layer_t *)layer;
    int64_t outer, len, inner;

    softmax_split(l, &in[0].dims, &outer, &len, &inner);
    if (outer * len * inner == 0)
        return MICA_OK;
    return mica__softmax_cuda(in[0].dtype, outer, len, inner, inputs[0],
                              outputs[0], stream, err);
}
#endif

static mica_layer_t *softmax_create(const mica_layer_creator_t *creator,
                                    const char *name,
                                    const mica_fields_t *fields,
                                    mica_error_t *err)
{
    softmax_layer_t *l;
    int64_t axis = mica_kit_int(fields, "axis", -1);

    if (mica_kit_count(fields, "axis") > 0 &&
        (axis < 0 || axis >= MICA_MAX_DIMS)) {
        mica_kit_host->set_error(err, "axis must be 0 or more (less than "
                                 "the rank), got %lld", (long long)axis);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->axis = mica_kit_count(fields, "axis") > 0 ? axis : -1;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(softmax, "SoftMax", softmax_fields,
                    MICA_KIT_COUNT(softmax_fields), softmax_create,
                    softmax_cpu, softmax_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = softmax_dtypes,
                    .output_dims = softmax_dims,
                    .supports_format = mica_kit_float_linear)

/* ---- RaggedSoftMax ----------------------------------------------------- */

static mica_status_t ragged_dtypes(const mica_layer_t *layer,
                                   const mica_dtype_t *in, int32_t nb_in,
                                   mica_dtype_t *out, int32_t nb_out,
                                   mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 2 inputs (x, bounds) and gives 1 "
                             "output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!float_type(in[0]))
        return MICA_KIT_FAIL(err, "x must be float32 or float16, got %s",
                             mica_kit_host->dtype_name(in[0]));
    if (in[1] != MICA_INT32)
        return MICA_KIT_FAIL(err, "bounds must be int32, got %s",
                             mica_kit_host->dtype_name(in[1]));
    out[0] = in[0];
    return MICA_OK;
}

/* Whether two dimension expressions are build-time constants that
 * differ. */
static int differ(const mica_expr_t *a, const mica_expr_t *b)
{
    return mica_kit_host->expr_is_constant(a) &&
           mica_kit_host->expr_is_constant(b) &&
           mica_kit_host->expr_constant_value(a) !=
               mica_kit_host->expr_constant_value(b);
}

static mica_status_t ragged_dims(const mica_layer_t *layer, int32_t index,
                                 const mica_shape_expr_t *in, int32_t nb_in,
                                 mica_expr_builder_t *eb,
                                 mica_shape_expr_t *out, mica_error_t *err)
{
    int32_t r = in[0].nb_dims, i;
    const mica_expr_t *last;

    if (r != 2 && r != 3)
        return MICA_KIT_FAIL(err, "x must have rank 2 [rows, len] or 3, "
                             "got %d", (int)r);
    if (in[1].nb_dims != r)
        return MICA_KIT_FAIL(err, "bounds must have rank %d (as x), got %d",
                             (int)r, (int)in[1].nb_dims);
    last = in[1].d[r - 1];
    if (mica_kit_host->expr_is_constant(last) &&
        mica_kit_host->expr_constant_value(last) != 1)
        return MICA_KIT_FAIL(err, "bounds must have 1 as last dimension, "
                             "got %lld", (long long)
                             mica_kit_host->expr_constant_value(last));
    for (i = 0; i < r - 1; i++)
        if (differ(in[0].d[i], in[1].d[i]))
            return MICA_KIT_FAIL(err, "bounds dimension %d is %lld but x's "
                                 "is %lld", (int)i, (long long)
                                 mica_kit_host->expr_constant_value(
                                     in[1].d[i]),
                                 (long long)mica_kit_host->expr_constant_value(
                                     in[0].d[i]));
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

/* The run-time shape check (runtime dimensions); rows and len. */
static mica_status_t ragged_split(const mica_tensor_desc_t *in,
                                  int64_t *rows, int64_t *len,
                                  mica_error_t *err)
{
    int32_t r = in[0].dims.nb_dims, i;

    *rows = 1;
    for (i = 0; i < r - 1; i++) {
        if (in[1].dims.d[i] != in[0].dims.d[i])
            return MICA_KIT_FAIL(err, "bounds dimension %d is %lld but x's "
                                 "is %lld", (int)i,
                                 (long long)in[1].dims.d[i],
                                 (long long)in[0].dims.d[i]);
        *rows *= in[0].dims.d[i];
    }
    if (in[1].dims.d[r - 1] != 1)
        return MICA_KIT_FAIL(err, "bounds must have 1 as last dimension, "
                             "got %lld", (long long)in[1].dims.d[r - 1]);
    *len = in[0].dims.d[r - 1];
    return MICA_OK;
}

static int32_t ragged_formats(const mica_layer_t *layer, int32_t pos,
                              const mica_tensor_desc_t *io, int32_t nb_in,
                              int32_t nb_out)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1 || !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return float_type(io[0].dtype);
    if (pos == 1)
        return io[1].dtype == MICA_INT32;
    return io[2].dtype == io[0].dtype;
}

static MICA_KIT_ENQUEUE(ragged_cpu)
{
    const int32_t *bounds = (const int32_t *)inputs[1];
    int64_t rows, len, r, b;
    mica_status_t st = ragged_split(in, &rows, &len, err);

    if (st != MICA_OK)
        return st;
    for (r = 0; r < rows; r++) {
        b = bounds[r] < 0 ? 0 : bounds[r] > len ? len : bounds[r];
        softmax_row(in[0].dtype, inputs[0], outputs[0], r * len, 1, len, b);
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(ragged_cuda)
{
    int64_t rows, len;
    mica_status_t st = ragged_split(in, &rows, &len, err);

    if (st != MICA_OK)
        return st;
    if (rows * len == 0)
        return MICA_OK;
    return mica__ragged_softmax_cuda(in[0].dtype, rows, len, inputs[0],
                                     (const int32_t *)inputs[1], outputs[0],
                                     stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(ragged, "RaggedSoftMax", NULL, 0, mica_kit_layer_create,
                    ragged_cpu, ragged_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = ragged_dtypes,
                    .output_dims = ragged_dims,
                    .supports_format = ragged_formats)

static const mica_layer_ops_t softmax_ops_vec = MICA_KIT_OPS(
    softmax_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = softmax_dtypes, .output_dims = softmax_dims,
    .supports_format = mica_kit_float_linear);
static const mica_layer_creator_t softmax_creator_vec = MICA_KIT_CREATOR(
    "SoftMax", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, softmax_fields,
    MICA_KIT_COUNT(softmax_fields), softmax_create, &softmax_ops_vec);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(softmax), &softmax_creator_vec, MICA_KIT_PAIR(ragged)};

MICA_KIT_ENTRY("softmax", PACKAGE_VERSION, "MIT",
               "SoftMax and RaggedSoftMax: normalized exponentials", creators)
