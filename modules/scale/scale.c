/*
 * modules/scale/scale.c - the Scale layer (TensorRT's IScaleLayer):
 * creators, layer ops and the CPU reference.
 *
 * y = (x * scale + shift) ^ power, with coefficients per tensor
 * (`uniform`), per channel (`channel`: indexed by the coordinate along
 * `channel_axis`) or per element (`elementwise`: indexed by the
 * coordinates from `channel_axis` to the last axis).  Each of the
 * weights `shift`, `scale`, `power` may be left out (or empty): its
 * default is then 0, 1 and 1, as TensorRT's.  The weights given have one
 * count: 1 for uniform, the channel length for channel, the volume of
 * the axes from channel_axis on for elementwise.  channel_axis defaults
 * to 1, TensorRT's channel axis in a network with an explicit batch
 * dimension.
 *
 * Types: float32 and float16 (computed in float32, rounded once);
 * weights float32 or float16, converted to float32 when the layer is
 * created.  TensorRT requires rank 4 or more; mica takes any rank that
 * has the channel axis (any rank for uniform).  A count that does not
 * match the input is refused at build time when the dimensions are known
 * then, at run time otherwise.
 *
 * CUDA: each instance uploads its coefficients once, in initialize (or
 * on its first enqueue), as 3 k floats.
 *
 * Implementation "vec" (the CPU's default): x * scale + shift as vectors
 * through the kit's broadcast walk (kit_vec.h), the coefficients seen as
 * a tensor broadcast against x, so that x may be in any format (linear
 * or channels last) and a per-channel scale costs no index arithmetic
 * per element; on several threads for large tensors.  A layer with a
 * power other than 1 runs the reference's code (linear only).
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "scale.h"
#include "kit_vec.h"

enum { UNIFORM, CHANNEL, ELEMENTWISE };

static const char *const mode_names[] = {"uniform", "channel", "elementwise",
                                         NULL};
static const char *const coef_names[3] = {"shift", "scale", "power"};
static const float coef_default[3] = {0.0f, 1.0f, 1.0f};
static const int64_t one[] = {1};

static const mica_field_schema_t scale_fields[] = {
    {"mode", MICA_FIELD_ENUM, 1, 1, 0, NULL, mode_names,
     "how coefficients are applied (TensorRT's ScaleMode)"},
    {"shift", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "added after scaling (default 0)"},
    {"scale", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "multiplies the input (default 1)"},
    {"power", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "exponent of the result (default 1)"},
    {"channel_axis", MICA_FIELD_INT, 1, 0, 1, one, NULL,
     "the channel axis of modes channel and elementwise"},
};

typedef struct scale_layer {
    mica_kit_layer_t base;
    int mode;
    int use_power;
    int32_t axis;
    int64_t k;   /* coefficients per weights given; 0 if none is */
    float *coef; /* 3 max(k, 1): shifts, scales, powers */
    float *dev;  /* CUDA: coef on the device */
} scale_layer_t;

static int type_ok(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

static mica_status_t scale_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in,
                                         int32_t nb_in, mica_dtype_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Scale has 1 input and 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    if (!type_ok(in[0]))
        return MICA_KIT_FAIL(err, "Scale takes float32 or float16 input, got "
                             "%s", mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

/*
 * Check the weights' count against input dims d[0..r-1] (NULL entries:
 * unknown until run time, not checked).  *inner gets the number of
 * consecutive elements that share a coefficient when every dim is known.
 */
static mica_status_t check_count(const scale_layer_t *l, int32_t r,
                                 const int64_t *d, const int *known,
                                 int64_t *inner, mica_error_t *err)
{
    int64_t need = 1, in = 1;
    int32_t k;
    int all = 1;

    if (l->mode != UNIFORM && l->axis >= r)
        return MICA_KIT_FAIL(err, "channel_axis %d is out of range for input "
                             "0 of rank %d", (int)l->axis, (int)r);
    for (k = l->mode == UNIFORM ? r : l->axis; k < r; k++) {
        all = all && known[k];
        /* checked here too, though the core refuses a tensor whose
         * non-zero dimensions multiply past 2^63 (types.h) */
        if (k == l->axis || l->mode == ELEMENTWISE
                ? __builtin_mul_overflow(need, d[k], &need)
                : __builtin_mul_overflow(in, d[k], &in))
            return MICA_KIT_FAIL(err, "dimensions %d to %d of input 0 "
                                 "multiply past 2^63 - 1: no coefficient "
                                 "layout fits", (int)l->axis, (int)(r - 1));
    }
    *inner = in;
    if (l->k == 0 || !all || need == l->k)
        return MICA_OK;
    if (l->mode == CHANNEL)
        return MICA_KIT_FAIL(err, "mode 'channel' with channel_axis %d needs "
                             "%lld coefficients (dimension %d of input 0) but "
                             "the weights have %lld", (int)l->axis,
                             (long long)need, (int)l->axis, (long long)l->k);
    return MICA_KIT_FAIL(err, "mode 'elementwise' with channel_axis %d needs "
                         "%lld coefficients (dimensions %d to %d of input 0) "
                         "but the weights have %lld", (int)l->axis,
                         (long long)need, (int)l->axis, (int)(r - 1),
                         (long long)l->k);
}

static mica_status_t scale_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    const scale_layer_t *l = (const scale_layer_t *)layer;
    int64_t d[MICA_MAX_DIMS], inner;
    int known[MICA_MAX_DIMS];
    int32_t k;

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "Scale has 1 input and 1 output");
    for (k = 0; k < in[0].nb_dims; k++) {
        known[k] = mica_kit_host->expr_is_constant(in[0].d[k]);
        d[k] = known[k] ? mica_kit_host->expr_constant_value(in[0].d[k]) : 0;
    }
    if (check_count(l, in[0].nb_dims, d, known, &inner, err) != MICA_OK)
        return MICA_ERR_INVALID;
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

/* The coefficient layout for the actual input dims. */
static mica_status_t scale_run(const scale_layer_t *l,
                               const mica_tensor_desc_t *in,
                               mica__scale_run_t *r, mica_error_t *err)
{
    int known[MICA_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    mica_status_t st;

    st = check_count(l, in[0].dims.nb_dims, in[0].dims.d, known, &r->inner,
                     err);
    if (st != MICA_OK)
        return st;
    r->k = l->k > 0 ? l->k : 1;
    if (l->k == 0 || l->mode != CHANNEL)
        r->inner = 1;
    r->use_power = l->use_power;
    r->coef = l->dev;
    return MICA_OK;
}

static MICA_KIT_ENQUEUE(scale_enqueue_cpu)
{
    const scale_layer_t *l = (const scale_layer_t *)layer;
    int64_t n = mica_dims_volume(&in[0].dims), i;
    mica__scale_run_t r;
    mica_status_t st;

    if ((st = scale_run(l, in, &r, err)) != MICA_OK)
        return st;
    for (i = 0; i < n; i++) {
        int64_t c = (i / r.inner) % r.k;
        float x, y;
        if (in[0].dtype == MICA_FLOAT16)
            x = mica_kit_half_to_float(((const uint16_t *)inputs[0])[i]);
        else
            x = ((const float *)inputs[0])[i];
        y = mica__scale(x, l->coef[c], l->coef[r.k + c],
                        l->coef[2 * r.k + c], r.use_power);
        if (in[0].dtype == MICA_FLOAT16)
            ((uint16_t *)outputs[0])[i] = mica_kit_float_to_half(y);
        else
            ((float *)outputs[0])[i] = y;
    }
    return MICA_OK;
}

/* y = x * scale + shift, lane by lane as mica__scale computes it. */
#define V_AFFINE(x, sc, sh) ((x) * (sc) + (sh))
static void affine_kernel(const void *ctx, const float *x, int64_t sx,
                          const float *sc, int64_t ss, const float *sh,
                          int64_t sb, float *y, int64_t n)
{
    int64_t i = 0;
    (void)ctx;
    if (sx && !ss && !sb) { /* a scalar, or one channel's run */
        mica__vf a = mica__v_set1(sc[0]), b = mica__v_set1(sh[0]);
        for (; i + MICA__VL <= n; i += MICA__VL)
            mica__v_store(y + i, V_AFFINE(mica__v_load(x + i), a, b));
    } else if (sx && ss && sb) { /* channels last: a run of channels */
        for (; i + MICA__VL <= n; i += MICA__VL)
            mica__v_store(y + i, V_AFFINE(mica__v_load(x + i),
                                           mica__v_load(sc + i),
                                           mica__v_load(sh + i)));
    }
    for (; i < n; i++)
        y[i] = mica__scale(x[i * sx], sh[i * sb], sc[i * ss], 1.0f, 0);
}

/* The coefficients' tensor view for input x: dims 1 but along the
 * channel axis (channel) or the axes from it on (elementwise), linear. */
static void coef_desc(const scale_layer_t *l, const mica_tensor_desc_t *x,
                      mica_tensor_desc_t *c)
{
    int32_t k;
    *c = *x;
    c->format = MICA_FORMAT_LINEAR;
    c->dtype = MICA_FLOAT32;
    for (k = 0; k < x->dims.nb_dims; k++)
        c->dims.d[k] = l->k > 0 && ((l->mode == CHANNEL && k == l->axis) ||
                                    (l->mode == ELEMENTWISE && k >= l->axis))
                           ? x->dims.d[k]
                           : 1;
}

static MICA_KIT_ENQUEUE(scale_enqueue_vec)
{
    const scale_layer_t *l = (const scale_layer_t *)layer;
    mica__scale_run_t r;
    mica_tensor_desc_t c;
    mica_status_t st;

    if (l->use_power)
        return scale_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs,
                                 outputs, workspace, stream, err);
    if ((st = scale_run(l, in, &r, err)) != MICA_OK)
        return st;
    coef_desc(l, &in[0], &c);
    return mica__vec_ternary(affine_kernel, NULL, &in[0], inputs[0], &c,
                             l->coef + r.k, &c, l->coef, &out[0], outputs[0],
                             err);
}

/* vec: x in any format without a power (the output in x's), else linear
 * as the reference. */
static int32_t scale_supports_format_vec(const mica_layer_t *layer,
                                         int32_t pos,
                                         const mica_tensor_desc_t *io,
                                         int32_t nb_in, int32_t nb_out)
{
    const scale_layer_t *l = (const scale_layer_t *)layer;
    if (l->use_power || mica_kit_linear(io, pos))
        return mica_kit_float_linear(layer, pos, io, nb_in, nb_out);
    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims) ||
        !type_ok(io[pos].dtype))
        return 0;
    return pos == 0 || (io[1].format == io[0].format &&
                        io[1].dtype == io[0].dtype);
}

static const mica_layer_ops_t scale_ops_vec = MICA_KIT_OPS(
    scale_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = scale_output_dtypes, .output_dims = scale_output_dims,
    .supports_format = scale_supports_format_vec);

#define SCALE_OPS(...)                                                      \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,            \
                 .output_dtypes = scale_output_dtypes,                      \
                 .output_dims = scale_output_dims,                          \
                 .supports_format = mica_kit_float_linear)

static const mica_layer_ops_t scale_ops_cpu = SCALE_OPS(scale_enqueue_cpu);

#if MICA_KIT_CUDA
static mica_status_t scale_upload(scale_layer_t *l, mica_error_t *err)
{
    if (l->dev)
        return MICA_OK;
    return mica__scale_cuda_upload(l->coef, l->k > 0 ? l->k : 1, &l->dev,
                                   err);
}

static mica_status_t scale_initialize_cuda(mica_layer_t *layer, void *stream,
                                           mica_error_t *err)
{
    (void)stream;
    return scale_upload((scale_layer_t *)layer, err);
}

static MICA_KIT_ENQUEUE(scale_enqueue_cuda)
{
    scale_layer_t *l = (scale_layer_t *)layer;
    int64_t n = mica_dims_volume(&in[0].dims);
    mica__scale_run_t r;
    mica_status_t st;

    if ((st = scale_upload(l, err)) != MICA_OK ||
        (st = scale_run(l, in, &r, err)) != MICA_OK)
        return st;
    if (n == 0)
        return MICA_OK;
    return mica__scale_cuda(in[0].dtype, &r, n, inputs[0], outputs[0],
                            stream, err);
}

static const mica_layer_ops_t scale_ops_cuda =
    SCALE_OPS(scale_enqueue_cuda, .initialize = scale_initialize_cuda);
#endif

static void scale_fini(mica_kit_layer_t *self)
{
    scale_layer_t *l = (scale_layer_t *)self;
#if MICA_KIT_CUDA
    mica__scale_cuda_free(l->dev);
    l->dev = NULL;
#endif
    free(l->coef);
    l->coef = NULL;
}

/* The count of the weights given (0 if none), all of one count. */
static mica_status_t weights_count(const mica_fields_t *fields, int mode,
                                   int64_t *k, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int first = -1, j;

    *k = 0;
    for (j = 0; j < 3; j++) {
        const mica_weights_t *w = mica_kit_weights(fields, coef_names[j]);
        if (!w || w->count == 0)
            continue;
        if (w->dtype != MICA_FLOAT32 && w->dtype != MICA_FLOAT16)
            return MICA_KIT_FAIL(err, "'%s' must be float32 or float16 "
                                 "weights, got %s", coef_names[j],
                                 h->dtype_name(w->dtype));
        if (mode == UNIFORM && w->count != 1)
            return MICA_KIT_FAIL(err, "'%s' has %lld values but mode "
                                 "'uniform' takes 1", coef_names[j],
                                 (long long)w->count);
        if (first >= 0 && w->count != *k)
            return MICA_KIT_FAIL(err, "'%s' has %lld values but '%s' has "
                                 "%lld", coef_names[j], (long long)w->count,
                                 coef_names[first], (long long)*k);
        if (first < 0) {
            first = j;
            *k = w->count;
        }
    }
    return MICA_OK;
}

static mica_layer_t *scale_create(const mica_layer_creator_t *creator,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err)
{
    int mode = (int)mica_kit_int(fields, "mode", UNIFORM); /* required */
    int64_t axis = mica_kit_int(fields, "channel_axis", 1), k, kk, i;
    scale_layer_t *l;
    int j;

    if (mode != UNIFORM && (axis < 0 || axis >= MICA_MAX_DIMS)) {
        mica_kit_host->set_error(err, "'channel_axis' is %lld: it must lie "
                                 "in [0, %d]", (long long)axis,
                                 MICA_MAX_DIMS - 1);
        return NULL;
    }
    if (weights_count(fields, mode, &k, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->base.fini = scale_fini;
    l->mode = mode;
    l->axis = (int32_t)(mode == UNIFORM ? 0 : axis);
    l->k = k;
    kk = k > 0 ? k : 1;
    l->coef = malloc(3 * (size_t)kk * sizeof *l->coef);
    if (!l->coef) {
        mica_kit_host->set_error(err, "out of host memory for %lld "
                                 "coefficients", (long long)(3 * kk));
        mica_kit_layer_destroy(&l->base.layer);
        return NULL;
    }
    for (j = 0; j < 3; j++) {
        const mica_weights_t *w = mica_kit_weights(
            mica_kit_fields_view(l->base.fields), coef_names[j]);
        int given = w && w->count > 0;
        for (i = 0; i < kk; i++) {
            float v = coef_default[j];
            if (given && w->dtype == MICA_FLOAT16)
                v = mica_kit_half_to_float(((const uint16_t *)w->values)[i]);
            else if (given)
                v = ((const float *)w->values)[i];
            l->coef[j * kk + i] = v;
            if (j == 2 && v != 1.0f)
                l->use_power = 1;
        }
    }
    return &l->base.layer;
}

MICA_KIT_CREATOR_PAIR(scale, "Scale", scale_fields,
                      MICA_KIT_COUNT(scale_fields), scale_create,
                      &scale_ops_cpu, &scale_ops_cuda)

static const mica_layer_creator_t scale_creator_vec = MICA_KIT_CREATOR(
    "Scale", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, scale_fields,
    MICA_KIT_COUNT(scale_fields), scale_create, &scale_ops_vec);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(scale), &scale_creator_vec};

MICA_KIT_ENTRY("scale", PACKAGE_VERSION, "MIT",
               "Scale: (x * scale + shift) ^ power per tensor, channel or "
               "element", creators)
