/*
 * tests/choice/choice.c - a test module with three CPU implementations of
 * one layer type, "Twin" (a copy of its one input), so that the tests can
 * see which implementation a build chose: "reference" (priority 0),
 * "alt" (priority 1) and "fast" (priority 5, float32 only).  For the
 * autotuner's test their speeds are the other way round: "fast" takes at
 * least 3 ms a run, "reference" 1 ms, "alt" no time.
 */
#include <config.h>

#include <string.h>
#include <time.h>

#include "mica/kit.h"

static int32_t twin_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

static mica_status_t twin_output_dtypes(const mica_layer_t *layer,
                                        const mica_dtype_t *in, int32_t nb_in,
                                        mica_dtype_t *out, int32_t nb_out,
                                        mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Twin takes 1 input and gives 1 output");
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t twin_output_dims(const mica_layer_t *layer, int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out, mica_error_t *err)
{
    int32_t i;
    (void)layer;
    (void)index;
    (void)nb_in;
    (void)eb;
    (void)err;
    out->nb_dims = in[0].nb_dims;
    for (i = 0; i < in[0].nb_dims; i++)
        out->d[i] = in[0].d[i];
    return MICA_OK;
}

static int32_t twin_supports_format(const mica_layer_t *layer, int32_t pos,
                                    const mica_tensor_desc_t *io,
                                    int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) && io[pos].dtype == io[0].dtype;
}

/* "fast" takes float32 only: float16 must go to another implementation. */
static int32_t fast_supports_format(const mica_layer_t *layer, int32_t pos,
                                    const mica_tensor_desc_t *io,
                                    int32_t nb_in, int32_t nb_out)
{
    return io[pos].dtype == MICA_FLOAT32 &&
           twin_supports_format(layer, pos, io, nb_in, nb_out);
}

/* Busy for at least `ms` milliseconds. */
static void spin(double ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e3 +
               (double)(b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
}

static mica_status_t twin_enqueue(mica_layer_t *layer,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const mica_tensor_desc_t *out,
                                  int32_t nb_out, const void *const *inputs,
                                  void *const *outputs, void *workspace,
                                  void *stream, mica_error_t *err)
{
    (void)out;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    (void)err;
    memcpy(outputs[0], inputs[0],
           (size_t)mica_dims_volume(&in[0].dims) * mica_dtype_size(in[0].dtype));
    if (strcmp(((const mica_kit_layer_t *)layer)->creator->implementation,
               "fast") == 0)
        spin(3.0);
    else if (strcmp(((const mica_kit_layer_t *)layer)->creator->implementation,
                    "reference") == 0)
        spin(1.0);
    return MICA_OK;
}

/* Lifecycle counts, read by the test through dlsym. */
MICA_EXPORT int choice_initialized, choice_terminated;

static mica_status_t twin_initialize(mica_layer_t *layer, void *stream,
                                     mica_error_t *err)
{
    (void)layer;
    (void)stream;
    (void)err;
    choice_initialized++;
    return MICA_OK;
}

static void twin_terminate(mica_layer_t *layer)
{
    (void)layer;
    choice_terminated++;
}

static const mica_layer_ops_t twin_ops = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = twin_nb_outputs,
    .output_dtypes = twin_output_dtypes,
    .output_dims = twin_output_dims,
    .supports_format = twin_supports_format,
    .enqueue = twin_enqueue,
    .serialize = mica_kit_layer_serialize,
    .clone = mica_kit_layer_clone,
    .destroy = mica_kit_layer_destroy,
    .initialize = twin_initialize,
    .terminate = twin_terminate,
};

static const mica_layer_ops_t fast_ops = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = twin_nb_outputs,
    .output_dtypes = twin_output_dtypes,
    .output_dims = twin_output_dims,
    .supports_format = fast_supports_format,
    .enqueue = twin_enqueue,
    .serialize = mica_kit_layer_serialize,
    .clone = mica_kit_layer_clone,
    .destroy = mica_kit_layer_destroy,
    .initialize = twin_initialize,
    .terminate = twin_terminate,
};

/*
 * "Dequant": int8 in, float32 out, real = stored * the input's scale (the
 * scale comes from the tensor descriptor, as TensorRT's int8 I/O scales),
 * divided by the output's scale.
 */
static mica_status_t dq_output_dtypes(const mica_layer_t *layer,
                                      const mica_dtype_t *in, int32_t nb_in,
                                      mica_dtype_t *out, int32_t nb_out,
                                      mica_error_t *err)
{
    (void)layer;
    (void)in;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Dequant takes 1 input and gives 1 output");
    out[0] = MICA_FLOAT32;
    return MICA_OK;
}

static int32_t dq_supports_format(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io, int32_t nb_in,
                                  int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return io[pos].dtype == (pos == 0 ? MICA_INT8 : MICA_FLOAT32);
}

static mica_status_t dq_enqueue(mica_layer_t *layer,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const mica_tensor_desc_t *out, int32_t nb_out,
                                const void *const *inputs, void *const *outputs,
                                void *workspace, void *stream,
                                mica_error_t *err)
{
    int64_t i, n = mica_dims_volume(&in[0].dims);
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    (void)err;
    for (i = 0; i < n; i++)
        ((float *)outputs[0])[i] =
            (float)((const int8_t *)inputs[0])[i] * in[0].scale / out[0].scale;
    return MICA_OK;
}

static const mica_layer_ops_t dq_ops = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = twin_nb_outputs,
    .output_dtypes = dq_output_dtypes,
    .output_dims = twin_output_dims,
    .supports_format = dq_supports_format,
    .enqueue = dq_enqueue,
    .serialize = mica_kit_layer_serialize,
    .clone = mica_kit_layer_clone,
    .destroy = mica_kit_layer_destroy,
};

static const mica_layer_creator_t dequant =
    MICA_KIT_CREATOR("Dequant", "reference", MICA_DEVICE_CPU, 0,
                     MICA_ROLE_NONE, NULL, 0, mica_kit_layer_create,
                     &dq_ops);

static const mica_layer_creator_t reference =
    MICA_KIT_CREATOR("Twin", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE,
                     NULL, 0, mica_kit_layer_create, &twin_ops);
static const mica_layer_creator_t alt =
    MICA_KIT_CREATOR("Twin", "alt", MICA_DEVICE_CPU, 1, MICA_ROLE_NONE,
                     NULL, 0, mica_kit_layer_create, &twin_ops);
static const mica_layer_creator_t fast =
    MICA_KIT_CREATOR("Twin", "fast", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE,
                     NULL, 0, mica_kit_layer_create, &fast_ops);

static const mica_layer_creator_t *const creators[] = {&reference, &alt,
                                                       &fast, &dequant};

MICA_KIT_ENTRY("choice", PACKAGE_VERSION, "MIT",
               "three CPU implementations of Twin, for tests",
               creators)
