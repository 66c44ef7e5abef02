/*
 * modules/resize/resize.c - the Resize layer (TensorRT's IResizeLayer):
 * creators, layer ops and the CPU reference.
 *
 * Input x (rank 1 or more) and an optional int32 shape tensor (input 1)
 * giving the output shape.  The output shape comes from exactly one of:
 * the `output_shape` param, input 1, or `scales` (one positive float per
 * dimension: the output length is floor(length * scale), the scale read
 * as the simplest fraction p/q, q <= 1000, whose float32 value it is,
 * else as its exact binary value, so that 10 * 0.7 gives 7 as ONNX
 * Runtime's float product does, and the same rule holds for runtime
 * lengths).  `nearest` resizes any of the dimensions (TensorRT: the 8
 * innermost, all of them here); `linear` at most the 3 innermost, the
 * others keeping their lengths.  The coordinate arithmetic (resize.h) is
 * ONNX Resize's, opset 11 and later.
 *
 * Types: nearest moves float32, float16, int8 and int32; linear takes
 * float32 and float16 (float32 arithmetic, rounded once).
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "resize.h"

static const char *const mode_names[] = {"nearest", "linear", NULL};
static const char *const coord_names[] = {"align_corners", "asymmetric",
                                          "half_pixel", NULL};
static const char *const round_names[] = {"half_down", "half_up", "floor",
                                          "ceil", NULL};
static const char *const selector_names[] = {"formula", "upper_left", NULL};
static const int64_t d_nearest[] = {MICA__RZ_NEAREST};
static const int64_t d_coord[] = {MICA__RZ_ASYMMETRIC};
static const int64_t d_round[] = {MICA__RZ_FLOOR};
static const int64_t d_selector[] = {MICA__RZ_FORMULA};

static const mica_field_schema_t resize_fields[] = {
    {"mode", MICA_FIELD_ENUM, 1, 0, 1, d_nearest, mode_names,
     "interpolation (TensorRT's InterpolationMode)"},
    {"output_shape", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "the output dimensions (or input 1, or scales)"},
    {"scales", MICA_FIELD_FLOAT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "output length / input length per dimension"},
    {"coordinate_transformation", MICA_FIELD_ENUM, 1, 0, 1, d_coord,
     coord_names, "how output coordinates map to input coordinates"},
    {"nearest_rounding", MICA_FIELD_ENUM, 1, 0, 1, d_round, round_names,
     "how mode nearest rounds a coordinate"},
    {"selector_for_single_pixel", MICA_FIELD_ENUM, 1, 0, 1, d_selector,
     selector_names, "the coordinate of an output of length 1"},
};

typedef struct resize_layer {
    mica_kit_layer_t base;
    int32_t mode, coord, round, selector;
    int32_t nshape;          /* output_shape values, -1 if absent */
    int64_t shape[MICA_MAX_DIMS];
    int32_t nscales;         /* scales values, -1 if absent */
    float scales[MICA_MAX_DIMS];
    int64_t p[MICA_MAX_DIMS], q[MICA_MAX_DIMS]; /* scale k as p/q */
} resize_layer_t;

static int type_ok(int mode, mica_dtype_t t)
{
    if (t == MICA_FLOAT32 || t == MICA_FLOAT16)
        return 1;
    return mode == MICA__RZ_NEAREST && (t == MICA_INT8 || t == MICA_INT32);
}

/* ---- types ------------------------------------------------------------ */

static mica_status_t resize_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;

    if (nb_in < 1 || nb_in > 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Resize has 1 or 2 inputs (x, output "
                             "shape) and 1 output, got %d and %d",
                             (int)nb_in, (int)nb_out);
    if (!type_ok(l->mode, in[0]))
        return MICA_KIT_FAIL(err, "mode '%s' takes %s input, got %s",
                             mode_names[l->mode],
                             l->mode == MICA__RZ_NEAREST
                                 ? "float32, float16, int8 or int32"
                                 : "float32 or float16",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static int32_t resize_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;

    if (nb_in < 1 || nb_in > 2 || nb_out != 1 || pos < 0 || pos > nb_in ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return type_ok(l->mode, io[0].dtype);
    if (pos < nb_in)
        return io[pos].dtype == MICA_INT32;
    return io[pos].dtype == io[0].dtype;
}

static int32_t resize_input_kind(const mica_layer_t *layer, int32_t index,
                                 int32_t nb_inputs)
{
    (void)layer;
    (void)nb_inputs;
    return index == 1 ? MICA_INPUT_SHAPE : MICA_INPUT_DATA;
}

/* ---- shapes ----------------------------------------------------------- */

/*
 * Check the lengths of dimension k (each -1 where not known yet): a
 * length of 0 cannot grow, and linear leaves all but the 3 innermost
 * dimensions alone.
 */
static mica_status_t check_dim(const resize_layer_t *l, int32_t r, int32_t k,
                               int64_t in, int64_t out, mica_error_t *err)
{
    if (in == 0 && out > 0)
        return MICA_KIT_FAIL(err, "dimension %d has length 0 and cannot be "
                             "resized to %lld", (int)k, (long long)out);
    if (l->mode != MICA__RZ_LINEAR || k >= r - MICA__RZ_LINEAR_DIMS)
        return MICA_OK;
    if (l->nscales >= 0 && l->scales[k] != 1.0f)
        return MICA_KIT_FAIL(err, "mode 'linear' resizes at most the %d "
                             "innermost dimensions, but 'scales' value %d "
                             "is %g", MICA__RZ_LINEAR_DIMS, (int)k,
                             (double)l->scales[k]);
    if (in >= 0 && out >= 0 && in != out)
        return MICA_KIT_FAIL(err, "mode 'linear' resizes at most the %d "
                             "innermost dimensions, but dimension %d changes "
                             "from %lld to %lld", MICA__RZ_LINEAR_DIMS,
                             (int)k, (long long)in, (long long)out);
    return MICA_OK;
}

/* The value of e, or -1 when it is not a build-time constant. */
static int64_t known(const mica_expr_t *e)
{
    return mica_kit_host->expr_is_constant(e)
               ? mica_kit_host->expr_constant_value(e)
               : -1;
}

/* floor(d * p / q) as an expression. */
static const mica_expr_t *scaled(mica_expr_builder_t *eb,
                                 const mica_expr_t *d, int64_t p, int64_t q)
{
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *pe = h->expr_constant(eb, p);
    const mica_expr_t *qe = h->expr_constant(eb, q);
    const mica_expr_t *prod;

    if (!pe || !qe)
        return NULL;
    if (p == q)
        return d;
    prod = h->expr_operation(eb, MICA_EXPR_PROD, d, pe);
    return prod ? h->expr_operation(eb, MICA_EXPR_FLOOR_DIV, prod, qe) : NULL;
}

static mica_status_t resize_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t r = in[0].nb_dims, k;
    int by_input = nb_in > 1 && in[1].nb_dims >= 0;
    int sources = (l->nshape >= 0) + by_input + (l->nscales >= 0);
    mica_status_t st;

    if (index != 0 || nb_in < 1)
        return MICA_KIT_FAIL(err, "Resize has 1 or 2 inputs and 1 output");
    if (r < 1)
        return MICA_KIT_FAIL(err, "Resize takes input 0 of rank 1 or more, "
                             "got rank 0");
    if (sources != 1)
        return MICA_KIT_FAIL(err, "the output shape must come from exactly "
                             "one of 'output_shape', input 1 and 'scales', "
                             "got %d", sources);
    if (l->nshape >= 0 && l->nshape != r)
        return MICA_KIT_FAIL(err, "'output_shape' has %d values but input 0 "
                             "has rank %d", (int)l->nshape, (int)r);
    if (l->nscales >= 0 && l->nscales != r)
        return MICA_KIT_FAIL(err, "'scales' has %d values but input 0 has "
                             "rank %d", (int)l->nscales, (int)r);
    if (by_input && (in[1].nb_dims != 1 || !in[1].values))
        return MICA_KIT_FAIL(err, "input 1 (output shape) must be a 1-D "
                             "shape tensor");
    if (by_input && in[1].nb_values != r)
        return MICA_KIT_FAIL(err, "input 1 (output shape) has %d values but "
                             "input 0 has rank %d", (int)in[1].nb_values,
                             (int)r);
    out->nb_dims = r;
    for (k = 0; k < r; k++) {
        if (l->nshape >= 0)
            out->d[k] = h->expr_constant(eb, l->shape[k]);
        else if (by_input)
            out->d[k] = in[1].values[k];
        else
            out->d[k] = scaled(eb, in[0].d[k], l->p[k], l->q[k]);
        if (!out->d[k])
            return MICA_KIT_FAIL(err, "out of host memory");
        st = check_dim(l, r, k, known(in[0].d[k]), known(out->d[k]), err);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

/* ---- running ---------------------------------------------------------- */

/* The run for the actual shapes, checked. */
static mica_status_t resize_run(const resize_layer_t *l,
                                const mica_tensor_desc_t *in,
                                const mica_tensor_desc_t *out,
                                mica__resize_t *run, mica_error_t *err)
{
    int32_t r = in[0].dims.nb_dims, k;
    mica_status_t st;

    memset(run, 0, sizeof *run);
    run->rank = r;
    run->mode = l->mode;
    run->coord = l->coord;
    run->round = l->round;
    run->selector = l->selector;
    for (k = 0; k < r; k++) {
        run->in[k] = in[0].dims.d[k];
        run->out[k] = out[0].dims.d[k];
        if ((st = check_dim(l, r, k, run->in[k], run->out[k], err)) !=
            MICA_OK)
            return st;
        if (l->nscales >= 0)
            run->scale[k] = l->scales[k];
        else if (run->in[k] > 0)
            run->scale[k] = (float)run->out[k] / (float)run->in[k];
        else
            run->scale[k] = 1.0f;
        run->resized[k] = run->in[k] != run->out[k] || run->scale[k] != 1.0f;
    }
    return MICA_OK;
}

static float ld_f(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static MICA_KIT_ENQUEUE(resize_enqueue_cpu)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;
    const size_t es = mica_dtype_size(in[0].dtype);
    int64_t stride[MICA_MAX_DIMS], c[MICA_MAX_DIMS], n, i, acc = 1;
    int32_t k, r = in[0].dims.nb_dims;
    mica__resize_t run;
    mica_status_t st;

    if ((st = resize_run(l, in, out, &run, err)) != MICA_OK)
        return st;
    for (k = r - 1; k >= 0; k--) {
        stride[k] = acc;
        acc *= run.in[k];
    }
    n = mica_dims_volume(&out[0].dims);
    for (i = 0; i < n; i++) {
        int64_t rem = i, src = 0;
        for (k = r - 1; k >= 0; k--) {
            c[k] = rem % run.out[k];
            rem /= run.out[k];
        }
        if (run.mode == MICA__RZ_NEAREST) {
            for (k = 0; k < r; k++)
                src += stride[k] *
                       (run.resized[k]
                            ? mica__resize_nearest(
                                  &run, k, mica__resize_coord(&run, k, c[k]))
                            : c[k]);
            memcpy((char *)outputs[0] + i * es,
                   (const char *)inputs[0] + src * es, es);
        } else {
            /* every corner of the box around the coordinate */
            int64_t i0[MICA_MAX_DIMS], i1[MICA_MAX_DIMS];
            float w0[MICA_MAX_DIMS], w1[MICA_MAX_DIMS], y = 0.0f;
            int32_t corner, lin[MICA_MAX_DIMS], m = 0;
            /* innermost first, as the CUDA kernel sums */
            for (k = r - 1; k >= 0; k--) {
                if (!run.resized[k]) {
                    src += stride[k] * c[k];
                    continue;
                }
                mica__resize_taps(&run, k, mica__resize_coord(&run, k, c[k]),
                                  &i0[k], &i1[k], &w0[k], &w1[k]);
                lin[m++] = k;
            }
            for (corner = 0; corner < (1 << m); corner++) {
                int64_t off = src;
                float w = 1.0f;
                int32_t j;
                for (j = 0; j < m; j++) {
                    int hi = (corner >> j) & 1;
                    k = lin[j];
                    off += stride[k] * (hi ? i1[k] : i0[k]);
                    w *= hi ? w1[k] : w0[k];
                }
                y += w * ld_f(in[0].dtype, inputs[0], off);
            }
            if (in[0].dtype == MICA_FLOAT16)
                ((uint16_t *)outputs[0])[i] = mica_kit_float_to_half(y);
            else
                ((float *)outputs[0])[i] = y;
        }
    }
    return MICA_OK;
}

/* vec: tables per dimension, any format (resize_vec.c). */
static MICA_KIT_ENQUEUE(resize_enqueue_vec)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;
    mica__resize_t run;
    mica_status_t st;

    (void)nb_in; (void)nb_out; (void)workspace; (void)stream;
    if ((st = resize_run(l, in, out, &run, err)) != MICA_OK)
        return st;
    return mica__resize_vec(&run, &in[0], &out[0], inputs[0], outputs[0],
                            err);
}

/* vec: x and y linear or channels last, each its own; the shape input
 * linear (a shape tensor). */
static int32_t resize_supports_format_vec(const mica_layer_t *layer,
                                          int32_t pos,
                                          const mica_tensor_desc_t *io,
                                          int32_t nb_in, int32_t nb_out)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;

    if (nb_in < 1 || nb_in > 2 || nb_out != 1 || pos < 0 || pos > nb_in)
        return 0;
    if (pos > 0 && pos < nb_in)
        return mica_kit_linear(io, pos) && io[pos].dtype == MICA_INT32;
    if (!mica_kit_linear(io, pos) &&
        io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims))
        return 0;
    if (pos == 0)
        return type_ok(l->mode, io[0].dtype);
    return io[pos].dtype == io[0].dtype;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(resize_enqueue_cuda)
{
    const resize_layer_t *l = (const resize_layer_t *)layer;
    int64_t n = mica_dims_volume(&out[0].dims);
    mica__resize_t run;
    mica_status_t st;

    if ((st = resize_run(l, in, out, &run, err)) != MICA_OK)
        return st;
    if (n == 0)
        return MICA_OK;
    return mica__resize_cuda(&run, n, in[0].dtype, inputs[0], outputs[0],
                             stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

/* Scale s as p/q: the simplest fraction (q <= 1000) whose float32 value
 * is s, else s's exact binary value.  0 if s is too small for that. */
static int fraction(float s, int64_t *p, int64_t *q)
{
    int exp;
    double m;

    for (*q = 1; *q <= 1000; (*q)++) {
        *p = llround((double)s * (double)*q);
        if (*p > 0 && (float)((double)*p / (double)*q) == s)
            return 1;
    }
    m = frexp((double)s, &exp); /* s = m 2^exp, m in [0.5, 1) */
    *p = (int64_t)ldexp(m, 24);
    exp -= 24;
    if (exp >= 0) { /* s >= 2^24: beyond the limit checked by the caller */
        *p <<= exp;
        *q = 1;
        return 1;
    }
    if (exp < -40)
        return 0;
    *q = (int64_t)1 << -exp;
    return 1;
}

static mica_layer_t *resize_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    const mica_field_t *sf = mica_fields_find(fields, "scales");
    int32_t nshape = mica_kit_count(fields, "output_shape");
    int32_t nscales = sf ? sf->count : -1, k;
    const int64_t *shape = mica_kit_ints(fields, "output_shape");
    resize_layer_t *l;

    if (nshape > MICA_MAX_DIMS || nscales > MICA_MAX_DIMS) {
        h->set_error(err, "'%s' has %d values, more than %d",
                     nshape > MICA_MAX_DIMS ? "output_shape" : "scales",
                     (int)(nshape > MICA_MAX_DIMS ? nshape : nscales),
                     MICA_MAX_DIMS);
        return NULL;
    }
    for (k = 0; k < nshape; k++)
        if (shape[k] < 0) {
            h->set_error(err, "'output_shape' value %d is %lld: lengths "
                         "cannot be negative", (int)k, (long long)shape[k]);
            return NULL;
        }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->mode = (int32_t)mica_kit_int(fields, "mode", MICA__RZ_NEAREST);
    l->coord = (int32_t)mica_kit_int(fields, "coordinate_transformation",
                                     MICA__RZ_ASYMMETRIC);
    l->round = (int32_t)mica_kit_int(fields, "nearest_rounding",
                                     MICA__RZ_FLOOR);
    l->selector = (int32_t)mica_kit_int(fields, "selector_for_single_pixel",
                                        MICA__RZ_FORMULA);
    l->nshape = nshape;
    for (k = 0; k < nshape; k++)
        l->shape[k] = shape[k];
    l->nscales = nscales;
    for (k = 0; k < nscales; k++) {
        double v = ((const double *)sf->data)[k]; /* a FLOAT field */
        l->scales[k] = (float)v;
        if (!(v >= 1.0 / 65536) || v > 65536.0 ||
            !fraction(l->scales[k], &l->p[k], &l->q[k])) {
            h->set_error(err, "'scales' value %d is %g: scales must lie in "
                         "[2^-16, 2^16]", (int)k, v);
            mica_kit_layer_destroy(&l->base.layer);
            return NULL;
        }
    }
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(resize, "Resize", resize_fields,
                    MICA_KIT_COUNT(resize_fields), resize_create,
                    resize_enqueue_cpu, resize_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = resize_output_dtypes,
                    .output_dims = resize_output_dims,
                    .supports_format = resize_supports_format,
                    .input_kind = resize_input_kind)

static const mica_layer_ops_t resize_ops_vec = MICA_KIT_OPS(
    resize_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = resize_output_dtypes, .output_dims = resize_output_dims,
    .supports_format = resize_supports_format_vec,
    .input_kind = resize_input_kind);
static const mica_layer_creator_t resize_creator_vec = MICA_KIT_CREATOR(
    "Resize", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, resize_fields,
    MICA_KIT_COUNT(resize_fields), resize_create, &resize_ops_vec);

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(resize),
                                                       &resize_creator_vec};

MICA_KIT_ENTRY("resize", PACKAGE_VERSION, "MIT",
               "Resize: nearest and linear resizing, ONNX Resize's arithmetic",
               creators)
