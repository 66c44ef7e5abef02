/*
 * modules/prelu/prelu.c - the ParametricReLU layer (TensorRT's
 * IParametricReLULayer): creators, layer ops and the CPU reference.
 *
 * y = x where x >= 0, else slope * x.  x and slope have one rank and one
 * type (float32 or float16) and broadcast against each other both ways,
 * as ElementWise's inputs do (the kit's mica_kit_broadcast_*): the
 * output takes the broadcast shape.  float16 computes in float32 and
 * rounds once.
 *
 * Implementation "vec" (the CPU's default): the same formula as vectors
 * through the kit's broadcast walk (kit_vec.h), each tensor in its own
 * format (linear or channels last), on several threads for large
 * tensors.
 */
#include <config.h>

#include <stdint.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "prelu.h"
#include "kit_vec.h"

static int type_ok(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

static mica_status_t prelu_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in,
                                         int32_t nb_in, mica_dtype_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;

    (void)layer;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "ParametricReLU has 2 inputs (x, slope) "
                             "and 1 output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!type_ok(in[0]))
        return MICA_KIT_FAIL(err, "input 0 (x) must be float32 or float16, "
                             "got %s", h->dtype_name(in[0]));
    if (in[1] != in[0])
        return MICA_KIT_FAIL(err, "input 1 (slope) has type %s but input 0 "
                             "(x) has type %s", h->dtype_name(in[1]),
                             h->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t prelu_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    (void)layer;
    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err, "ParametricReLU has 2 inputs and 1 output");
    return mica_kit_broadcast_dims(in, 2, eb, out, err);
}

static int32_t prelu_supports_format(const mica_layer_t *layer, int32_t pos,
                                     const mica_tensor_desc_t *io,
                                     int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1 || pos < 0 || pos > 2 ||
        !mica_kit_linear(io, pos))
        return 0;
    return pos == 0 ? type_ok(io[0].dtype) : io[pos].dtype == io[0].dtype;
}

static float ld(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static MICA_KIT_ENQUEUE(prelu_enqueue_cpu)
{
    mica_dtype_t t = in[0].dtype;
    int64_t n = mica_dims_volume(&out[0].dims), i, off[2];
    mica_kit_bcast_t v;
    mica_status_t st;

    if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 0, &v, err)) !=
        MICA_OK)
        return st;
    for (i = 0; i < n; i++) {
        float y;
        mica_kit_broadcast_offsets(&v, i, off);
        y = mica__prelu(ld(t, inputs[0], off[0]), ld(t, inputs[1], off[1]));
        if (t == MICA_FLOAT16)
            ((uint16_t *)outputs[0])[i] = mica_kit_float_to_half(y);
        else
            ((float *)outputs[0])[i] = y;
    }
    return MICA_OK;
}

/* x >= 0 or NaN: x; else slope * x (mica__prelu, lane by lane). */
#define V_PRELU(x, s) mica__v_sel(((x) >= 0.0f) | ((x) != (x)), (x), (s) * (x))
MICA__VEC_BIN_KERNEL(prelu_kernel, V_PRELU)

static int32_t prelu_supports_format_vec(const mica_layer_t *layer,
                                         int32_t pos,
                                         const mica_tensor_desc_t *io,
                                         int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1 || pos < 0 || pos > 2 ||
        (!mica_kit_linear(io, pos) &&
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    return pos == 0 ? type_ok(io[0].dtype) : io[pos].dtype == io[0].dtype;
}

static MICA_KIT_ENQUEUE(prelu_enqueue_vec)
{
    mica_kit_bcast_t v;
    mica_status_t st;

    (void)layer;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 0, &v, err)) !=
        MICA_OK)
        return st;
    return mica__vec_binary(prelu_kernel, NULL, &in[0], inputs[0], &in[1],
                            inputs[1], &out[0], outputs[0], err);
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(prelu_enqueue_cuda)
{
    int64_t n = mica_dims_volume(&out[0].dims);
    mica_kit_bcast_t v;
    mica_status_t st;

    if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 1, &v, err)) !=
        MICA_OK)
        return st;
    if (n == 0)
        return MICA_OK;
    return mica__prelu_cuda(in[0].dtype, &v, n, inputs[0], inputs[1],
                            outputs[0], stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(prelu, "ParametricReLU", NULL, 0, mica_kit_layer_create,
                    prelu_enqueue_cpu, prelu_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = prelu_output_dtypes,
                    .output_dims = prelu_output_dims,
                    .supports_format = prelu_supports_format)

static const mica_layer_ops_t prelu_ops_vec = MICA_KIT_OPS(
    prelu_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = prelu_output_dtypes, .output_dims = prelu_output_dims,
    .supports_format = prelu_supports_format_vec);
static const mica_layer_creator_t prelu_creator_vec = MICA_KIT_CREATOR(
    "ParametricReLU", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &prelu_ops_vec);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(prelu), &prelu_creator_vec};

MICA_KIT_ENTRY("prelu", PACKAGE_VERSION, "MIT",
               "ParametricReLU: leaky ReLU with a broadcast slope tensor",
               creators)
