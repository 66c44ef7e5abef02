/*
 * modules/activation/activation.c - the Activation layer (TensorRT's
 * IActivationLayer): creators, layer ops and the CPU reference.
 *
 * One input, one output of the same shape and type.  Fields: `type`
 * (required), `alpha` and `beta` (floats, default 0 as on a new TensorRT
 * layer: TensorRT makes the user set them for the types that use them;
 * they must be finite).  Types: float32 and float16 for every activation,
 * int8 and int32 for relu too.  The formulas are in activation.h, shared
 * with the CUDA kernels.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "modkit.h"
#include "activation.h"

static const char *const type_names[] = {
    "relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "softsign",
    "softplus", "clip", "hard_sigmoid", "scaled_tanh", "thresholded_relu",
    NULL,
};

static const double zero[] = {0.0};

static const mica_field_schema_t act_fields[] = {
    {"type", MICA_FIELD_ENUM, 1, 1, 0, NULL, type_names,
     "the activation function (TensorRT's ActivationType)"},
    {"alpha", MICA_FIELD_FLOAT, 1, 0, 1, zero, NULL,
     "alpha of leaky_relu, elu, selu, softplus, clip, hard_sigmoid, "
     "scaled_tanh, thresholded_relu"},
    {"beta", MICA_FIELD_FLOAT, 1, 0, 1, zero, NULL,
     "beta of selu, softplus, clip, hard_sigmoid, scaled_tanh"},
};

typedef struct act_layer {
    mica__mod_layer_t base;
    int type;
    float alpha, beta;
} act_layer_t;

/* ---- types ------------------------------------------------------------ */

static int input_ok(int type, mica_dtype_t t)
{
    if (t == MICA_FLOAT32 || t == MICA_FLOAT16)
        return 1;
    return type == MICA__ACT_RELU && (t == MICA_INT8 || t == MICA_INT32);
}

static int32_t act_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

static mica_status_t act_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    const act_layer_t *l = (const act_layer_t *)layer;

    if (nb_in != 1)
        return MOD_FAIL(err, "Activation takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MOD_FAIL(err, "Activation has 1 output, got %d", (int)nb_out);
    if (!input_ok(l->type, in[0]))
        return MOD_FAIL(err, "type '%s' takes %s input, got %s",
                        type_names[l->type],
                        l->type == MICA__ACT_RELU
                            ? "float32, float16, int8 or int32"
                            : "float32 or float16",
                        mica__mod_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t act_output_dims(const mica_layer_t *layer,
                                     int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out, mica_error_t *err)
{
    int32_t k;

    (void)layer;
    (void)eb;
    if (index != 0 || nb_in != 1)
        return MOD_FAIL(err, "Activation has 1 input and 1 output, asked for "
                        "output %d of %d inputs", (int)index, (int)nb_in);
    out->nb_dims = in[0].nb_dims;
    for (k = 0; k < in[0].nb_dims; k++)
        out->d[k] = in[0].d[k];
    return MICA_OK;
}

static int32_t act_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    const act_layer_t *l = (const act_layer_t *)layer;

    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        !mica__mod_linear(io, pos))
        return 0;
    if (pos == 0)
        return input_ok(l->type, io[0].dtype);
    return io[1].dtype == io[0].dtype;
}

/* ---- the CPU reference ------------------------------------------------ */

static mica_status_t act_enqueue_cpu(mica_layer_t *layer,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    const act_layer_t *l = (const act_layer_t *)layer;
    int64_t n = mica_dims_volume(&out[0].dims), i;
    const void *x = inputs[0];
    void *y = outputs[0];

    (void)workspace;
    (void)stream;
    if (nb_in != 1 || nb_out != 1)
        return MOD_FAIL(err, "Activation has 1 input and 1 output");
    for (i = 0; i < n; i++) {
        switch (in[0].dtype) {
        case MICA_FLOAT32:
            ((float *)y)[i] =
                mica__act_f(l->type, ((const float *)x)[i], l->alpha, l->beta);
            break;
        case MICA_FLOAT16:
            ((uint16_t *)y)[i] = mica__float_to_half(mica__act_f(
                l->type, mica__half_to_float(((const uint16_t *)x)[i]),
                l->alpha, l->beta));
            break;
        case MICA_INT8: /* relu only */
            ((int8_t *)y)[i] = ((const int8_t *)x)[i] < 0 ? 0
                                                           : ((const int8_t *)x)[i];
            break;
        case MICA_INT32: /* relu only */
            ((int32_t *)y)[i] = ((const int32_t *)x)[i] < 0
                                    ? 0
                                    : ((const int32_t *)x)[i];
            break;
        default:
            return MOD_FAIL(err, "Activation cannot run on type %s",
                            mica__mod_host->dtype_name(in[0].dtype));
        }
    }
    return MICA_OK;
}

#ifdef MICA_HAVE_CUDA
static mica_status_t act_enqueue_cuda(mica_layer_t *layer,
                                      const mica_tensor_desc_t *in,
                                      int32_t nb_in,
                                      const mica_tensor_desc_t *out,
                                      int32_t nb_out,
                                      const void *const *inputs,
                                      void *const *outputs, void *workspace,
                                      void *stream, mica_error_t *err)
{
    const act_layer_t *l = (const act_layer_t *)layer;
    int64_t n = mica_dims_volume(&out[0].dims);
    (void)workspace;
    if (nb_in != 1 || nb_out != 1)
        return MOD_FAIL(err, "Activation has 1 input and 1 output");
    if (n == 0)
        return MICA_OK;
    return mica__activation_cuda(l->type, in[0].dtype, n, l->alpha, l->beta,
                                 inputs[0], outputs[0], stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

#define ACT_OPS(enqueue_fn)                                                 \
    {.struct_size = sizeof(mica_layer_ops_t),                               \
     .nb_outputs = act_nb_outputs,                                          \
     .output_dtypes = act_output_dtypes,                                    \
     .output_dims = act_output_dims,                                        \
     .supports_format = act_supports_format,                                \
     .enqueue = enqueue_fn,                                                 \
     .serialize = mica__mod_layer_serialize,                                \
     .clone = mica__mod_layer_clone,                                        \
     .destroy = mica__mod_layer_destroy}

static const mica_layer_ops_t ops_cpu = ACT_OPS(act_enqueue_cpu);
#ifdef MICA_HAVE_CUDA
static const mica_layer_ops_t ops_cuda = ACT_OPS(act_enqueue_cuda);
#endif

/* A finite float param, as TensorRT's setAlpha / setBeta require. */
static int finite_param(const mica_fields_t *fields, const char *name,
                        float *out, mica_error_t *err)
{
    double v = mica__mod_float(fields, name, 0.0);
    if (!isfinite(v) || fabs(v) > 3.4028234663852886e38) {
        mica__mod_host->set_error(err, "param '%s' must be a finite float32, "
                                  "got %g", name, v);
        return 0;
    }
    *out = (float)v;
    return 1;
}

/* Create a layer; the creator carries the ops of its device. */
static mica_layer_t *act_create(const mica_layer_creator_t *creator,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    const mica_layer_ops_t *ops = creator->user_data;
    int64_t type = mica__mod_int(fields, "type", -1);
    float alpha, beta;
    act_layer_t *l;

    if (type < 0 || type >= MICA__ACT_COUNT) {
        if (mica__mod_count(fields, "type") < 1)
            mica__mod_host->set_error(err, "param 'type' is required");
        else
            mica__mod_host->set_error(err, "param 'type' has index %lld, not "
                                      "one of the %d types", (long long)type,
                                      MICA__ACT_COUNT);
        return NULL;
    }
    if (!finite_param(fields, "alpha", &alpha, err) ||
        !finite_param(fields, "beta", &beta, err))
        return NULL;
    l = mica__mod_layer_new(sizeof *l, ops, creator, name, fields, err);
    if (!l)
        return NULL;
    l->type = (int)type;
    l->alpha = alpha;
    l->beta = beta;
    return &l->base.layer;
}

#define ACT_CREATOR(impl, prio, devices, ops)                              \
    MICA__MOD_CREATOR("Activation", impl, devices, prio, MICA_ROLE_NONE, act_fields, \
                      (int32_t)(sizeof act_fields / sizeof act_fields[0]),         \
                      act_create, ops)

static const mica_layer_creator_t creator_cpu =
    ACT_CREATOR("reference", 0, MICA_DEVICE_CPU, &ops_cpu);
#ifdef MICA_HAVE_CUDA
static const mica_layer_creator_t creator_cuda =
    ACT_CREATOR("cuda", 10, MICA_DEVICE_CUDA, &ops_cuda);
#endif

static const mica_layer_creator_t *const creators[] = {
    &creator_cpu,
#ifdef MICA_HAVE_CUDA
    &creator_cuda,
#endif
};

MICA__MOD_ENTRY("activation",
                "Activation: relu, sigmoid, tanh and the parametric activations",
                creators)
