/*
 * tests/fusion/bad/badrules.c - a module whose fusion rules are wrong in
 * every way the registry checks (registry/rules.c), beside one good rule
 * and a good layer type, for tests/test_cli_fusion.sh: each bad rule is
 * skipped with one line naming the module and the rule, the module and
 * its good rule stay.  Its type "Twice" (y = 2x, float32, CPU) is what
 * the good rule "relu_twice" makes of an Activation relu: a wrong
 * result on purpose, so that the test sees when the rule fired.
 */
#include <config.h>

#include "mica/kit.h"

static MICA_KIT_ENQUEUE(twice_enqueue)
{
    int64_t i, n = mica_dims_volume(&out[0].dims);
    for (i = 0; i < n; i++)
        ((float *)outputs[0])[i] = 2.0f * ((const float *)inputs[0])[i];
    return MICA_OK;
}

static int32_t twice_formats(const mica_layer_t *layer, int32_t pos,
                             const mica_tensor_desc_t *io, int32_t nb_in,
                             int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    return mica_kit_linear(io, pos) && io[pos].dtype == MICA_FLOAT32;
}

static const mica_layer_ops_t twice_ops = MICA_KIT_OPS(
    twice_enqueue, .nb_outputs = mica_kit_one_output,
    .output_dtypes = mica_kit_same_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = twice_formats);

static const mica_layer_creator_t twice_creator = MICA_KIT_CREATOR(
    "Twice", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &twice_ops);

static const mica_layer_creator_t *const creators[] = {&twice_creator};

static const char *const relu[] = {"relu"};
static const mica_fusion_cond_t is_relu[] = {{"type", relu, 1, 0}};
static const mica_fusion_cond_t no_values[] = {{"type", NULL, 1, 0}};
static const mica_fusion_step_t relu_step[] = {
    MICA_KIT_FUSION_STEP("Activation", 0, is_relu)};
static const mica_fusion_step_t untyped[] = {
    MICA_KIT_FUSION_STEP_ANY(NULL, 0)};
static const mica_fusion_step_t bad_cond[] = {
    MICA_KIT_FUSION_STEP("Activation", 0, no_values)};
static const mica_fusion_ref_t x[] = {{0, 0}};
static const mica_fusion_ref_t far[] = {{3, 0}};

static const mica_fusion_rule_t good = MICA_KIT_FUSION_RULE(
    "relu_twice", "Twice", relu_step, x);
/* no steps */
static const mica_fusion_rule_t empty = {
    .struct_size = sizeof(mica_fusion_rule_t), .name = "empty",
    .type = "Twice", .inputs = x, .nb_inputs = 1};
/* a type this module does not register */
static const mica_fusion_rule_t foreign = MICA_KIT_FUSION_RULE(
    "foreign", "Convolution", relu_step, x);
/* a step without a type */
static const mica_fusion_rule_t no_type = MICA_KIT_FUSION_RULE(
    "no_type", "Twice", untyped, x);
/* an input of a step the pattern does not have */
static const mica_fusion_rule_t far_input = MICA_KIT_FUSION_RULE(
    "far_input", "Twice", relu_step, far);
/* a condition with a count but no values */
static const mica_fusion_rule_t cond_null = MICA_KIT_FUSION_RULE(
    "cond_null", "Twice", bad_cond, x);
/* the good rule's name again */
static const mica_fusion_rule_t twin = MICA_KIT_FUSION_RULE(
    "relu_twice", "Twice", relu_step, x);

static const mica_fusion_rule_t *const rules[] = {
    &empty, &foreign, &no_type, &far_input, &cond_null, &good, &twin};

MICA_KIT_ENTRY_FUSION("badrules", "1.0.0", "MIT",
                      "fusion rules that are refused (a test module)",
                      creators, rules)
