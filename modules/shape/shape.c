/*
 * modules/shape/shape.c - the Shape layer (TensorRT's IShapeLayer): the
 * dimensions of its input as a 1-D int32 tensor of length rank.
 *
 * The input may have any type; only its dimensions are read (input kind
 * MICA_INPUT_DIMS), so it may be an execution tensor whose data never
 * exists on the host.  A 0-D input gives an empty [0] output.  The output
 * values are the input's dimension expressions (output_values), so the
 * builder follows them symbolically (`[N, 6]` stays N and 6 downstream).
 * A dimension beyond INT32_MAX cannot be written and is a run-time error.
 *
 * TensorRT 10 gives int64; mica's shape tensors are int32 (the manifest
 * spec's boundary type), so Shape gives int32.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "shape.h"

/* ---- types and shapes --------------------------------------------------- */

static mica_status_t shape_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in,
                                         int32_t nb_in, mica_dtype_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    (void)in;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = MICA_INT32;
    return MICA_OK;
}

static mica_status_t shape_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    (void)layer;
    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output, asked for "
                             "output %d of %d inputs", (int)index, (int)nb_in);
    out->nb_dims = 1;
    out->d[0] = mica_kit_host->expr_constant(eb, in[0].nb_dims);
    if (!out->d[0])
        return MICA_KIT_FAIL(err, "out of host memory");
    return MICA_OK;
}

/* The values of the output: the input's dimension expressions. */
static mica_status_t shape_output_values(const mica_layer_t *layer,
                                         int32_t index,
                                         const mica_shape_expr_t *in,
                                         int32_t nb_in,
                                         mica_expr_builder_t *eb,
                                         const mica_expr_t **values,
                                         int32_t nb_values, mica_error_t *err)
{
    int32_t i;
    (void)layer;
    (void)eb;
    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output, asked for "
                             "output %d of %d inputs", (int)index, (int)nb_in);
    if (nb_values != in[0].nb_dims)
        return MICA_KIT_FAIL(err, "asked for %d values of an input of rank %d",
                             (int)nb_values, (int)in[0].nb_dims);
    for (i = 0; i < nb_values; i++)
        values[i] = in[0].d[i];
    return MICA_OK;
}

static int32_t shape_supports_format(const mica_layer_t *layer, int32_t pos,
                                     const mica_tensor_desc_t *io,
                                     int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return mica_dtype_size(io[0].dtype) != 0;
    return io[1].dtype == MICA_INT32;
}

static int32_t shape_input_kind(const mica_layer_t *layer, int32_t index,
                                int32_t nb_inputs)
{
    (void)layer;
    (void)index;
    (void)nb_inputs;
    return MICA_INPUT_DIMS;
}

/* Refuse dimensions that an int32 cannot hold. */
static mica_status_t check_dims(const mica_dims_t *d, mica_error_t *err)
{
    int32_t i;
    for (i = 0; i < d->nb_dims; i++)
        if (d->d[i] < 0 || d->d[i] > INT32_MAX)
            return MICA_KIT_FAIL(err,
                                 "dimension %d of the input is %lld, outside "
                                 "the int32 range of the output",
                                 (int)i, (long long)d->d[i]);
    return MICA_OK;
}

/* ---- the CPU reference -------------------------------------------------- */

static mica_status_t shape_enqueue_cpu(mica_layer_t *layer,
                                       const mica_tensor_desc_t *in,
                                       int32_t nb_in,
                                       const mica_tensor_desc_t *out,
                                       int32_t nb_out,
                                       const void *const *inputs,
                                       void *const *outputs, void *workspace,
                                       void *stream, mica_error_t *err)
{
    int32_t *dst = outputs[0];
    int32_t i;
    mica_status_t st;
    (void)layer; (void)nb_in; (void)out; (void)nb_out; (void)inputs;
    (void)workspace; (void)stream;

    if ((st = check_dims(&in[0].dims, err)) != MICA_OK)
        return st;
    for (i = 0; i < in[0].dims.nb_dims; i++)
        dst[i] = (int32_t)in[0].dims.d[i];
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t shape_enqueue_cuda(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs,
                                        void *workspace, void *stream,
                                        mica_error_t *err)
{
    mica_status_t st;
    (void)layer; (void)nb_in; (void)out; (void)nb_out; (void)inputs;
    (void)workspace;

    if ((st = check_dims(&in[0].dims, err)) != MICA_OK)
        return st;
    return mica__shape_cuda(outputs[0], in[0].dims.nb_dims, in[0].dims.d,
                            stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(shape, "Shape", NULL, 0, mica_kit_layer_create,
                    shape_enqueue_cpu, shape_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = shape_output_dtypes,
                    .output_dims = shape_output_dims,
                    .supports_format = shape_supports_format,
                    .output_values = shape_output_values,
                    .input_kind = shape_input_kind)

static const mica_layer_creator_t *const shape_creators[] = {
    MICA_KIT_PAIR(shape)};

MICA_KIT_ENTRY("shape", PACKAGE_VERSION, "MIT",
               "Shape: the dimensions of a tensor as int32",
               shape_creators)
