/*
 * modules/convolution/fused_rules.c - the fusion rules that make a
 * FusedConvolution (fused_conv.h) of a Convolution and what follows it:
 *
 *     Convolution [-> Scale] [-> ElementWise sum [-> ElementWise sum]]
 *                 [-> Activation relu]
 *
 * (at least one layer after the Convolution; the core tries the longest
 * rule first).  The Scale is a batch norm: mode channel (channel_axis 1)
 * or uniform, no power; each ElementWise sum adds the tensor its other
 * input reads (a bias, a residual), which becomes an input of the fused
 * layer.  The Convolution's params are copied as they are, the Scale's
 * scale and shift as `scale` and `shift`.
 */
#include <config.h>

#include "fused_conv.h"

static const char *const sum[] = {"sum"};
static const char *const relu[] = {"relu"};
static const char *const modes[] = {"channel", "uniform"};
static const char *const one[] = {"1"};

static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_relu[] = {{"type", relu, 1, 0}};
static const mica_fusion_cond_t is_bn[] = {{"mode", modes, 2, 0},
                                           {"channel_axis", one, 1, 0},
                                           {"power", NULL, 0, 0}};

/* A Convolution whose kernel is an input (two or three inputs) is not
 * fused: FusedConvolution takes its kernel as weights. */
#define CONV {.type = "Convolution", .input = 0, .nb_inputs = 1}
#define SCALE MICA_KIT_FUSION_STEP("Scale", 0, is_bn)
#define ADD                                                                 \
    {.type = "ElementWise", .input = MICA_FUSION_ANY_INPUT, .nb_inputs = 2, \
     .conds = is_sum, .nb_conds = 1}
#define RELU MICA_KIT_FUSION_STEP("Activation", 0, is_relu)

/* Convolution's params (step 0), then the Scale's (step 1). */
#define CONV_PARAMS                                                         \
    {"num_output_maps", 0, 0, "num_output_maps"},                           \
        {"kernel_size", 0, 0, "kernel_size"}, {"stride", 0, 0, "stride"},   \
        {"padding", 0, 0, "padding"},                                       \
        {"pre_padding", 0, 0, "pre_padding"},                               \
        {"post_padding", 0, 0, "post_padding"},                             \
        {"dilation", 0, 0, "dilation"}, {"groups", 0, 0, "groups"},         \
        {"kernel", 0, 0, "kernel"}, {"bias", 0, 0, "bias"}
static const mica_fusion_param_t plain[] = {CONV_PARAMS};
static const mica_fusion_param_t scaled[] = {
    CONV_PARAMS, {"scale", 1, 0, "scale"}, {"shift", 1, 0, "shift"}};

static const char *const relu_name[] = {"relu"};
static const mica_field_t act_relu[] = {
    {"activation", MICA_FIELD_STRING, 1, relu_name}};

/* The fused layer's inputs: x, then the other input of each sum. */
static const mica_fusion_ref_t in_x[] = {{0, 0}};
static const mica_fusion_ref_t in_1[] = {{0, 0}, {1, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_2[] = {{0, 0}, {2, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_12[] = {
    {0, 0}, {1, MICA_FUSION_OTHER_INPUT}, {2, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_23[] = {
    {0, 0}, {2, MICA_FUSION_OTHER_INPUT}, {3, MICA_FUSION_OTHER_INPUT}};

#define RULE(name_, steps_, inputs_, params_, relu_)                        \
    static const mica_fusion_rule_t name_ = MICA_KIT_FUSION_RULE_WITH(      \
        #name_, "FusedConvolution", steps_, inputs_, .params = params_,     \
        .nb_params = MICA_KIT_COUNT(params_),                               \
        .nb_constants = (relu_) ? 1 : 0,                                    \
        .constants = (relu_) ? act_relu : NULL)

static const mica_fusion_step_t s_sbbr[] = {CONV, SCALE, ADD, ADD, RELU};
static const mica_fusion_step_t s_bbr[] = {CONV, ADD, ADD, RELU};
static const mica_fusion_step_t s_sbr[] = {CONV, SCALE, ADD, RELU};
static const mica_fusion_step_t s_br[] = {CONV, ADD, RELU};
static const mica_fusion_step_t s_sr[] = {CONV, SCALE, RELU};
static const mica_fusion_step_t s_r[] = {CONV, RELU};
static const mica_fusion_step_t s_sb[] = {CONV, SCALE, ADD};
static const mica_fusion_step_t s_b[] = {CONV, ADD};
static const mica_fusion_step_t s_s[] = {CONV, SCALE};

RULE(conv_scale_add_add_relu, s_sbbr, in_23, scaled, 1);
RULE(conv_add_add_relu, s_bbr, in_12, plain, 1);
RULE(conv_scale_add_relu, s_sbr, in_2, scaled, 1);
RULE(conv_add_relu, s_br, in_1, plain, 1);
RULE(conv_scale_relu, s_sr, in_x, scaled, 1);
RULE(conv_relu, s_r, in_x, plain, 1);
RULE(conv_scale_add, s_sb, in_2, scaled, 0);
RULE(conv_add, s_b, in_1, plain, 0);
RULE(conv_scale, s_s, in_x, scaled, 0);

const mica_fusion_rule_t *const mica__fused_conv_rules[] = {
    &conv_scale_add_add_relu, &conv_add_add_relu, &conv_scale_add_relu,
    &conv_add_relu, &conv_scale_relu, &conv_relu, &conv_scale_add,
    &conv_add, &conv_scale};
