/*
 * modules/matmul/fused_rules.c - the fusion rules that make a
 * FusedMatrixMultiply (fused_matmul.c) of a product by constant weights
 * and what follows it, as exporters write a linear layer:
 *
 *     y = x @ W                 MatrixMultiply, W a float32 Constant
 *                               (op_a none; op_b none or transpose; the
 *                               importer's [1, K, N] of a [B, S, K] x)
 *     y = y + b                 ElementWise sum with a float32 Constant
 *                               (the bias, [1, 1, N]), then optionally
 *     y = act(y)                Activation relu, gelu_erf or gelu_tanh, or
 *     y = y + r                 ElementWise sum with another tensor (the
 *                               residual of a transformer block)
 *
 * and the product by constant weights alone.  The Constants become the
 * fused layer's weights params, and go where nothing else reads them.
 */
#include <config.h>

#include "mica/kit.h"

#include "matmul.h"

static const char *const sum[] = {"sum"}, *const none[] = {"", "none"};
static const char *const nt[] = {"", "none", "transpose"};
static const char *const acts[] = {"relu", "gelu_erf", "gelu_tanh"};

static const mica_fusion_cond_t mm[] = {{"op_a", none, 2, 0},
                                        {"op_b", nt, 3, 0}};
static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_act[] = {{"type", acts, 3, 0}};

static const mica_fusion_step_t st_w[] = {
    MICA_KIT_FUSION_STEP("MatrixMultiply", 0, mm)};
static const mica_fusion_step_t st_b[] = {
    MICA_KIT_FUSION_STEP("MatrixMultiply", 0, mm),
    MICA_KIT_FUSION_STEP("ElementWise", MICA_FUSION_ANY_INPUT, is_sum)};
static const mica_fusion_step_t st_ba[] = {
    MICA_KIT_FUSION_STEP("MatrixMultiply", 0, mm),
    MICA_KIT_FUSION_STEP("ElementWise", MICA_FUSION_ANY_INPUT, is_sum),
    MICA_KIT_FUSION_STEP("Activation", 0, is_act)};
static const mica_fusion_step_t st_br[] = {
    MICA_KIT_FUSION_STEP("MatrixMultiply", 0, mm),
    MICA_KIT_FUSION_STEP("ElementWise", MICA_FUSION_ANY_INPUT, is_sum),
    MICA_KIT_FUSION_STEP("ElementWise", MICA_FUSION_ANY_INPUT, is_sum)};

#define F32 (1u << MICA_FLOAT32)
#define FLOATS ((1u << MICA_FLOAT32) | (1u << MICA_FLOAT16))
/* x float of rank 2 or more, W and the bias float32 Constants (the
 * layer refuses weights with a batch dimension of more than 1 and a
 * bias of more than one row: the fusion then keeps the network as it
 * is), the residual float */
#define T_X {0, 0, FLOATS, 2, -1, MICA_FUSION_ANY_TENSOR, 0, 0}
#define T_W {0, 1, F32, 2, -1, MICA_FUSION_CONSTANT, 0, 0}
#define T_B {1, MICA_FUSION_OTHER_INPUT, F32, 1, -1, MICA_FUSION_CONSTANT, 0, 0}
#define T_R {2, MICA_FUSION_OTHER_INPUT, FLOATS, 2, -1,                     \
             MICA_FUSION_ANY_TENSOR, 0, 0}
static const mica_fusion_tensor_cond_t ts_w[] = {T_X, T_W};
static const mica_fusion_tensor_cond_t ts_b[] = {T_X, T_W, T_B};
static const mica_fusion_tensor_cond_t ts_br[] = {T_X, T_W, T_B, T_R};

static const mica_fusion_weight_param_t w_only[] = {{"weights", 0, 1}};
static const mica_fusion_weight_param_t w_bias[] = {
    {"weights", 0, 1}, {"bias", 1, MICA_FUSION_OTHER_INPUT}};

static const mica_fusion_ref_t in_x[] = {{0, 0}};
static const mica_fusion_ref_t in_xr[] = {{0, 0}, {2, MICA_FUSION_OTHER_INPUT}};

static const mica_fusion_param_t p_op[] = {{"op_b", 0, 0, "op_b"}};
static const mica_fusion_param_t p_act[] = {{"op_b", 0, 0, "op_b"},
                                            {"activation", 2, 0, "type"}};

#define RULE(name_, steps_, ins_, params_, tests_, weights_)                \
    static const mica_fusion_rule_t name_ = MICA_KIT_FUSION_RULE_WITH(      \
        #name_, "FusedMatrixMultiply", steps_, ins_, .params = params_,     \
        .nb_params = MICA_KIT_COUNT(params_), .tensor_conds = tests_,       \
        .nb_tensor_conds = MICA_KIT_COUNT(tests_),                          \
        .weight_params = weights_,                                          \
        .nb_weight_params = MICA_KIT_COUNT(weights_))

RULE(matmul_weights, st_w, in_x, p_op, ts_w, w_only);
RULE(matmul_bias, st_b, in_x, p_op, ts_b, w_bias);
RULE(matmul_bias_act, st_ba, in_x, p_act, ts_b, w_bias);
RULE(matmul_bias_residual, st_br, in_xr, p_op, ts_br, w_bias);

const mica_fusion_rule_t *const mica__fmm_rules[MICA__FMM_NB_RULES] = {
    &matmul_weights, &matmul_bias, &matmul_bias_act, &matmul_bias_residual};
