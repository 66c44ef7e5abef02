/*
 * modules/normalization/norm_rules.c - the fusion rules that make a
 * Normalization of the layer normalization PyTorch's exporters write
 * out (LayerNorm over the last axis, torch.onnx's TorchScript exporter
 * and opsets before 17):
 *
 *     m = ReduceMean(x, last axis)     Reduce avg, keep_dims
 *     d = x - m                        ElementWise sub
 *     v = ReduceMean(d ^ 2)            ElementWise pow (a constant 2), Reduce
 *     y = d / sqrt(v + eps) * w + b    ElementWise sum (a constant eps),
 *                                      Unary sqrt, ElementWise div, prod
 *                                      (a constant w), sum (a constant b)
 *
 * a DAG (x read by the mean and the subtraction, d by the power and the
 * division).  One rule per rank 2, 3 and 4 (the reduced axis is the
 * last); x float32, float16 or bfloat16; epsilon read from its constant.
 */
#include <config.h>

#include "mica/kit.h"

#include "normalization.h"

static const char *const avg[] = {"avg"}, *const one[] = {"1"};
static const char *const sub[] = {"sub"}, *const pw[] = {"pow"};
static const char *const sum[] = {"sum"}, *const div_[] = {"div"};
static const char *const prod[] = {"prod"}, *const sqrt_[] = {"sqrt"};
static const char *const ax1[] = {"1"}, *const ax2[] = {"2"},
                         *const ax3[] = {"3"};

#define RED(ax)                                                             \
    static const mica_fusion_cond_t red_##ax[] = {                          \
        {"op", avg, 1, 0}, {"axes", ax, 1, 0}, {"keep_dims", one, 1, 0}};
RED(ax1)
RED(ax2)
RED(ax3)
static const mica_fusion_cond_t is_sub[] = {{"op", sub, 1, 0}};
static const mica_fusion_cond_t is_pow[] = {{"op", pw, 1, 0}};
static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_div[] = {{"op", div_, 1, 0}};
static const mica_fusion_cond_t is_prod[] = {{"op", prod, 1, 0}};
static const mica_fusion_cond_t is_sqrt[] = {{"op", sqrt_, 1, 0}};

#define STEPS(ax)                                                           \
    static const mica_fusion_step_t steps_##ax[] = {                        \
        MICA_KIT_FUSION_STEP("Reduce", 0, red_##ax),                        \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_sub),                     \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_pow),                     \
        MICA_KIT_FUSION_STEP("Reduce", 0, red_##ax),                        \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum),                     \
        MICA_KIT_FUSION_STEP("Unary", 0, is_sqrt),                          \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_div),                     \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod),                    \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum)};
STEPS(ax1)
STEPS(ax2)
STEPS(ax3)

static const mica_fusion_link_t links[] = {
    {0, 0, MICA_FUSION_OUTER, 0}, /* x */
    {1, 0, MICA_FUSION_OUTER, 0}, /* x - m */
    {1, 1, 0, 0},
    {2, 0, 1, 0},                 /* d ^ 2 */
    {3, 0, 2, 0},
    {4, MICA_FUSION_ANY_INPUT, 3, 0}, /* v + eps */
    {5, 0, 4, 0},
    {6, 0, 1, 0},                 /* d / sqrt */
    {6, 1, 5, 0},
    {7, MICA_FUSION_ANY_INPUT, 6, 0}, /* * w */
    {8, MICA_FUSION_ANY_INPUT, 7, 0}, /* + b */
};

#define FLOATS                                                              \
    ((1u << MICA_FLOAT32) | (1u << MICA_FLOAT16) | (1u << MICA_BFLOAT16))
#define TESTS(rank)                                                         \
    static const mica_fusion_tensor_cond_t tests_##rank[] = {               \
        {0, 0, FLOATS, rank, rank, MICA_FUSION_ANY_TENSOR, 0, 0},           \
        {2, 1, 0, -1, -1, MICA_FUSION_SPLAT, 2.0, 0.0},                     \
        {4, MICA_FUSION_OTHER_INPUT, 0, -1, -1, MICA_FUSION_CONSTANT, 0, 0}, \
        {7, MICA_FUSION_OTHER_INPUT, 0, rank, rank, MICA_FUSION_CONSTANT, 0, \
         0},                                                                \
        {8, MICA_FUSION_OTHER_INPUT, 0, rank, rank, MICA_FUSION_CONSTANT, 0, \
         0}};
TESTS(2)
TESTS(3)
TESTS(4)

static const mica_fusion_const_param_t eps[] = {
    {"epsilon", 4, MICA_FUSION_OTHER_INPUT, MICA_FUSION_VALUE, 0}};
static const mica_fusion_ref_t ins[] = {
    {0, 0}, {7, MICA_FUSION_OTHER_INPUT}, {8, MICA_FUSION_OTHER_INPUT}};

#define AXES(bit)                                                           \
    static const int64_t axes_##bit[] = {bit};                              \
    static const mica_field_t fields_##bit[] = {                            \
        {"axes", MICA_FIELD_INT, 1, axes_##bit}};
AXES(2)
AXES(4)
AXES(8)

#define RULE(name_, ax, rank, bit)                                          \
    static const mica_fusion_rule_t name_ = MICA_KIT_FUSION_RULE_WITH(      \
        #name_, "Normalization", steps_##ax, ins, .nb_constants = 1,        \
        .constants = fields_##bit, .links = links,                          \
        .nb_links = MICA_KIT_COUNT(links), .tensor_conds = tests_##rank,    \
        .nb_tensor_conds = MICA_KIT_COUNT(tests_##rank),                    \
        .const_params = eps, .nb_const_params = 1)

RULE(layer_norm_rank2, ax1, 2, 2);
RULE(layer_norm_rank3, ax2, 3, 4);
RULE(layer_norm_rank4, ax3, 4, 8);

const mica_fusion_rule_t *const mica__norm_rules[MICA__NORM_NB_RULES] = {
    &layer_norm_rank2, &layer_norm_rank3, &layer_norm_rank4};
