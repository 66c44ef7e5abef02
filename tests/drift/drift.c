/*
 * tests/drift/drift.c - a test module for `mica compare`: one layer type,
 * "Drift" (float32 in, float32 out, the input's shape), with two CPU
 * implementations that disagree on purpose: "reference" (priority 0)
 * copies its input; "skewed" (priority -1, so chosen only when preferred)
 * adds 0.001 * (k % 3) to element k, so a third of the elements are
 * exact, a third off by 0.001 and a third by 0.002.
 */
#include <config.h>

#include <string.h>

#include "mica/kit.h"

static mica_status_t copy_enqueue(mica_layer_t *layer,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const mica_tensor_desc_t *out,
                                  int32_t nb_out, const void *const *inputs,
                                  void *const *outputs, void *workspace,
                                  void *stream, mica_error_t *err)
{
    (void)layer;
    (void)out;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    (void)err;
    memcpy(outputs[0], inputs[0],
           (size_t)mica_dims_volume(&in[0].dims) * sizeof(float));
    return MICA_OK;
}

static mica_status_t skewed_enqueue(mica_layer_t *layer,
                                    const mica_tensor_desc_t *in,
                                    int32_t nb_in,
                                    const mica_tensor_desc_t *out,
                                    int32_t nb_out, const void *const *inputs,
                                    void *const *outputs, void *workspace,
                                    void *stream, mica_error_t *err)
{
    int64_t k, n = mica_dims_volume(&in[0].dims);
    (void)layer;
    (void)out;
    (void)nb_in;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    (void)err;
    for (k = 0; k < n; k++)
        ((float *)outputs[0])[k] =
            ((const float *)inputs[0])[k] + 0.001f * (float)(k % 3);
    return MICA_OK;
}

/* float32 only: float16 runs would differ for another reason. */
static int32_t drift_supports_format(const mica_layer_t *layer, int32_t pos,
                                     const mica_tensor_desc_t *io,
                                     int32_t nb_in, int32_t nb_out)
{
    return io[pos].dtype == MICA_FLOAT32 &&
           mica_kit_float_linear(layer, pos, io, nb_in, nb_out);
}

static const mica_layer_ops_t copy_ops =
    MICA_KIT_OPS(copy_enqueue, .nb_outputs = mica_kit_one_output,
                 .output_dtypes = mica_kit_same_dtypes,
                 .output_dims = mica_kit_same_dims,
                 .supports_format = drift_supports_format);
static const mica_layer_ops_t skewed_ops =
    MICA_KIT_OPS(skewed_enqueue, .nb_outputs = mica_kit_one_output,
                 .output_dtypes = mica_kit_same_dtypes,
                 .output_dims = mica_kit_same_dims,
                 .supports_format = drift_supports_format);

static const mica_layer_creator_t reference =
    MICA_KIT_CREATOR("Drift", "reference", MICA_DEVICE_CPU, 0,
                     MICA_ROLE_NONE, NULL, 0, mica_kit_layer_create,
                     &copy_ops);
static const mica_layer_creator_t skewed =
    MICA_KIT_CREATOR("Drift", "skewed", MICA_DEVICE_CPU, -1, MICA_ROLE_NONE,
                     NULL, 0, mica_kit_layer_create, &skewed_ops);

static const mica_layer_creator_t *const creators[] = {&reference, &skewed};

MICA_KIT_ENTRY("drift", PACKAGE_VERSION, "MIT",
               "two CPU implementations of Drift that disagree, for the "
               "tests of mica compare",
               creators)
