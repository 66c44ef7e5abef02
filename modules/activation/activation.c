/*
 * modules/activation/activation.c - the Activation layer (TensorRT's
 * IActivationLayer): creators, layer ops and the CPU reference.
 *
 * One input, one output of the same shape and type.  Fields: `type`
 * (required), `alpha` and `beta` (floats, default 0 as on a new TensorRT
 * layer: TensorRT makes the user set them for the types that use them;
 * they must be finite).  Types: float32 and float16 for every activation,
 * int8 and int32 for relu too.  The formulas are in activation.h, shared
 * with the CUDA kernels.  Any memory format, the output in the input's
 * (act_supports_format): a channels-last chain of the CNN layers needs
 * no reorder around an Activation.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "activation.h"
#include "kit_nn.h"

static const char *const type_names[] = {
    "relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "softsign",
    "softplus", "clip", "hard_sigmoid", "scaled_tanh", "thresholded_relu",
    "gelu_erf", "gelu_tanh", NULL,
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
    mica_kit_layer_t base;
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

static mica_status_t act_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    const act_layer_t *l = (const act_layer_t *)layer;

    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "Activation takes 1 input, got %d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "Activation has 1 output, got %d",
                             (int)nb_out);
    if (!input_ok(l->type, in[0]))
        return MICA_KIT_FAIL(err, "type '%s' takes %s input, got %s",
                             type_names[l->type],
                             l->type == MICA__ACT_RELU
                                 ? "float32, float16, int8 or int32"
                                 : "float32 or float16",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

/*
 * Element by element, so any layout the input has: linear, or channels
 * last (HWC for a 4-D tensor, DHWC for a 5-D one), the output in the
 * input's format.  The builder asks only where a tensor is on the
 * device and could be channels last.
 */
static int32_t act_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    const act_layer_t *l = (const act_layer_t *)layer;

    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        (!mica_kit_linear(io, pos) &&
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    if (pos == 0)
        return input_ok(l->type, io[0].dtype);
    return io[1].dtype == io[0].dtype && io[1].format == io[0].format;
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
        return MICA_KIT_FAIL(err, "Activation has 1 input and 1 output");
    if (in[0].dtype == MICA_FLOAT32 && l->type == MICA__ACT_RELU) {
        mica__nn_relu_f32(y, x, n); /* the same, vectorized */
        return MICA_OK;
    }
    for (i = 0; i < n; i++) {
        switch (in[0].dtype) {
        case MICA_FLOAT32:
            ((float *)y)[i] =
                mica__act_f(l->type, ((const float *)x)[i], l->alpha, l->beta);
            break;
        case MICA_FLOAT16:
            ((uint16_t *)y)[i] = mica_kit_float_to_half(mica__act_f(
                l->type, mica_kit_half_to_float(((const uint16_t *)x)[i]),
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
            return MICA_KIT_FAIL(err, "Activation cannot run on type %s",
                                 mica_kit_host->dtype_name(in[0].dtype));
        }
    }
    return MICA_OK;
}

/* The vector kernels for float tensors, else the reference. */
static MICA_KIT_ENQUEUE(act_enqueue_vec)
{
    const act_layer_t *l = (const act_layer_t *)layer;

    if (nb_in == 1 && nb_out == 1 &&
        mica__act_vec(l->type, l->alpha, l->beta, in[0].dtype,
                      mica_dims_volume(&out[0].dims), inputs[0],
                      outputs[0]))
        return MICA_OK;
    return act_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                           workspace, stream, err);
}

#if MICA_KIT_CUDA
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
        return MICA_KIT_FAIL(err, "Activation has 1 input and 1 output");
    if (n == 0)
        return MICA_OK;
    return mica__activation_cuda(l->type, in[0].dtype, n, l->alpha, l->beta,
                                 inputs[0], outputs[0], stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

/* A finite float param, as TensorRT's setAlpha / setBeta require. */
static int finite_param(const mica_fields_t *fields, const char *name,
                        float *out, mica_error_t *err)
{
    double v = mica_kit_float(fields, name, 0.0);
    if (!isfinite(v) || fabs(v) > 3.4028234663852886e38) {
        mica_kit_host->set_error(err, "param '%s' must be a finite float32, "
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
    float alpha, beta;
    act_layer_t *l;

    if (!finite_param(fields, "alpha", &alpha, err) ||
        !finite_param(fields, "beta", &beta, err))
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->type = (int)mica_kit_int(fields, "type", 0); /* required */
    l->alpha = alpha;
    l->beta = beta;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(act, "Activation", act_fields, MICA_KIT_COUNT(act_fields),
                    act_create, act_enqueue_cpu, act_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = act_output_dtypes,
                    .output_dims = mica_kit_same_dims,
                    .supports_format = act_supports_format)

static const mica_layer_ops_t act_ops_vec = MICA_KIT_OPS(
    act_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = act_output_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = act_supports_format);
static const mica_layer_creator_t act_creator_vec = MICA_KIT_CREATOR(
    "Activation", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, act_fields,
    MICA_KIT_COUNT(act_fields), act_create, &act_ops_vec);

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(act),
                                                       &act_creator_vec};

MICA_KIT_ENTRY_FUSION("activation", PACKAGE_VERSION, "MIT",
                      "Activation: relu, sigmoid, tanh, GELU and the "
                      "parametric activations",
                      creators, mica__gelu_rules)
