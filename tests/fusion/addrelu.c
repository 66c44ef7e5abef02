/*
 * tests/fusion/addrelu.c - a third party's module with a fusion rule of
 * its own, for tests/test_cli_fusion.sh: the layer type "AddRelu"
 * (y = max(a + b, 0), float32, broadcast as ElementWise does; CPU only)
 * and the rule "add_relu" that puts it in place of an ElementWise sum
 * read by an Activation relu alone.  Written with the module kit only,
 * as an out-of-tree module would be.
 */
#include <config.h>

#include "mica/kit.h"

static mica_status_t addrelu_dtypes(const mica_layer_t *layer,
                                    const mica_dtype_t *in, int32_t nb_in,
                                    mica_dtype_t *out, int32_t nb_out,
                                    mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2 || nb_out != 1 || in[0] != MICA_FLOAT32 ||
        in[1] != MICA_FLOAT32)
        return MICA_KIT_FAIL(err, "AddRelu takes 2 float32 inputs and has 1 "
                             "output");
    out[0] = MICA_FLOAT32;
    return MICA_OK;
}

static mica_status_t addrelu_dims(const mica_layer_t *layer, int32_t index,
                                  const mica_shape_expr_t *in, int32_t nb_in,
                                  mica_expr_builder_t *eb,
                                  mica_shape_expr_t *out, mica_error_t *err)
{
    (void)layer;
    (void)index;
    return mica_kit_broadcast_dims(in, nb_in, eb, out, err);
}

static int32_t addrelu_formats(const mica_layer_t *layer, int32_t pos,
                               const mica_tensor_desc_t *io, int32_t nb_in,
                               int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) && io[pos].dtype == MICA_FLOAT32;
}

static MICA_KIT_ENQUEUE(addrelu_enqueue)
{
    const float *a = inputs[0], *b = inputs[1];
    float *y = outputs[0];
    int64_t i, n = mica_dims_volume(&out[0].dims), off[2];
    mica_kit_bcast_t v;
    mica_status_t st;

    if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 1, &v, err)) !=
        MICA_OK)
        return st;
    for (i = 0; i < n; i++) {
        float s;
        mica_kit_broadcast_offsets(&v, i, off);
        s = a[off[0]] + b[off[1]];
        y[i] = s < 0.0f ? 0.0f : s;
    }
    return MICA_OK;
}

static const mica_layer_ops_t addrelu_ops = MICA_KIT_OPS(
    addrelu_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = addrelu_dtypes, .output_dims = addrelu_dims,
    .supports_format = addrelu_formats);

static const mica_layer_creator_t addrelu_creator = MICA_KIT_CREATOR(
    "AddRelu", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &addrelu_ops);

static const mica_layer_creator_t *const creators[] = {&addrelu_creator};

/* The rule: ElementWise sum (2 inputs) -> Activation relu (its input 0);
 * AddRelu reads the sum's two inputs. */
static const char *const sum[] = {"sum"};
static const char *const relu[] = {"relu"};
static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_relu[] = {{"type", relu, 1, 0}};
static const mica_fusion_step_t add_relu_steps[] = {
    MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum),
    MICA_KIT_FUSION_STEP("Activation", 0, is_relu)};
static const mica_fusion_ref_t add_relu_inputs[] = {{0, 0}, {0, 1}};
static const mica_fusion_rule_t add_relu = MICA_KIT_FUSION_RULE(
    "add_relu", "AddRelu", add_relu_steps, add_relu_inputs);
static const mica_fusion_rule_t *const rules[] = {&add_relu};

MICA_KIT_ENTRY_FUSION("addrelu", "1.0.0", "MIT",
                      "AddRelu and its fusion rule (a test module)",
                      creators, rules)
