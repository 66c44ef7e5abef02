/*
 * modules/activation/gelu_rules.c - the fusion rules that make an
 * Activation gelu_erf of the GELU PyTorch's TorchScript exporter writes
 * out (F.gelu before ONNX's Gelu operator, opset 20):
 *
 *     y = x * (1 + erf(x / sqrt 2)) * 0.5
 *
 * as ElementWise div by a constant sqrt 2 (or prod by 1 / sqrt 2), Unary
 * erf, ElementWise sum with a constant 1, prod with x, prod with a
 * constant 0.5: a DAG (x read by the first and the fourth step).
 */
#include <config.h>

#include "mica/kit.h"

#include "activation.h"

static const char *const div_[] = {"div"}, *const prod[] = {"prod"};
static const char *const sum[] = {"sum"}, *const erf_[] = {"erf"};
static const mica_fusion_cond_t is_div[] = {{"op", div_, 1, 0}};
static const mica_fusion_cond_t is_prod[] = {{"op", prod, 1, 0}};
static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_erf[] = {{"op", erf_, 1, 0}};

#define TAIL                                                                \
    MICA_KIT_FUSION_STEP("Unary", 0, is_erf),                               \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum),                     \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod),                    \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod)
static const mica_fusion_step_t by_div[] = {
    MICA_KIT_FUSION_STEP("ElementWise", 0, is_div), TAIL};
static const mica_fusion_step_t by_prod[] = {
    MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod), TAIL};

static const mica_fusion_link_t links[] = {
    {0, 0, MICA_FUSION_OUTER, 0},                  /* x / sqrt 2 */
    {1, 0, 0, 0},                                  /* erf */
    {2, MICA_FUSION_ANY_INPUT, 1, 0},              /* + 1 */
    {3, MICA_FUSION_ANY_INPUT, 2, 0},              /* * x */
    {3, MICA_FUSION_ANY_INPUT, MICA_FUSION_OUTER, 0},
    {4, MICA_FUSION_ANY_INPUT, 3, 0},              /* * 0.5 */
};

#define FLOATS ((1u << MICA_FLOAT32) | (1u << MICA_FLOAT16))
#define TESTS(name_, c0)                                                    \
    static const mica_fusion_tensor_cond_t name_[] = {                      \
        {0, 0, FLOATS, -1, -1, MICA_FUSION_ANY_TENSOR, 0, 0},               \
        {0, 1, 0, -1, -1, MICA_FUSION_SPLAT, c0, 1e-4},                     \
        {2, MICA_FUSION_OTHER_INPUT, 0, -1, -1, MICA_FUSION_SPLAT, 1.0, 0}, \
        {4, MICA_FUSION_OTHER_INPUT, 0, -1, -1, MICA_FUSION_SPLAT, 0.5, 0}}
TESTS(div_tests, 1.4142135623730951);
TESTS(prod_tests, 0.7071067811865476);

static const mica_fusion_ref_t ins[] = {{0, 0}};
static const char *const gelu_erf[] = {"gelu_erf"};
static const mica_field_t type_erf[] = {
    {"type", MICA_FIELD_STRING, 1, gelu_erf}};

#define RULE(name_, steps_, tests_)                                         \
    static const mica_fusion_rule_t name_ = MICA_KIT_FUSION_RULE_WITH(      \
        #name_, "Activation", steps_, ins, .nb_constants = 1,               \
        .constants = type_erf, .links = links,                              \
        .nb_links = MICA_KIT_COUNT(links), .tensor_conds = tests_,          \
        .nb_tensor_conds = MICA_KIT_COUNT(tests_))

RULE(gelu_erf_div, by_div, div_tests);
RULE(gelu_erf_prod, by_prod, prod_tests);

const mica_fusion_rule_t *const mica__gelu_rules[MICA__GELU_NB_RULES] = {
    &gelu_erf_div, &gelu_erf_prod};
