/*
 * modules/attention/attn_rules.c - the fusion rules that make an
 * Attention of the scaled dot-product attention PyTorch's exporters
 * write out (F.scaled_dot_product_attention by the dynamo and
 * TorchScript exporters, and the eager attention of older models), on
 * q, k, v of rank 4 [B, H, S, D]:
 *
 *     s = (q * a) @ (k * b)^T          ElementWise prod by a constant on
 *                                      q and on k, MatrixMultiply op_b
 *                                      transpose (scale a * b), or
 *     s = (q @ k^T) / c, (q @ k^T) * c (scale 1 / c, c)
 *     s = s + mask                     ElementWise sum (optional)
 *     p = softmax(s, last axis)        SoftMax
 *     p = where(isnan(p), 0, p)        Unary isnan, Select (optional: the
 *                                      rows every key of which is masked
 *                                      give zeros, as Attention's do)
 *     y = p @ v                        MatrixMultiply
 *
 * The transpose of k is transpose-folding's work: a Shuffle of k's heads
 * that ends in a swap of the last two axes becomes the product's op_b.
 * The mask is the additive one of rank 4 (float, of the scores' type),
 * which Attention reads broadcast as the sum did.  One rule per form: 3
 * ways to scale, with and without a mask, with and without the guard.
 */
#include <config.h>

#include "mica/kit.h"

#include "attention.h"

static const char *const prod[] = {"prod"}, *const div_[] = {"div"};
static const char *const sum[] = {"sum"}, *const isnan_[] = {"isnan"};
static const char *const none[] = {"", "none"}, *const tr[] = {"transpose"};
static const char *const last[] = {"3", "-1"};

static const mica_fusion_cond_t is_prod[] = {{"op", prod, 1, 0}};
static const mica_fusion_cond_t is_div[] = {{"op", div_, 1, 0}};
static const mica_fusion_cond_t is_sum[] = {{"op", sum, 1, 0}};
static const mica_fusion_cond_t is_isnan[] = {{"op", isnan_, 1, 0}};
static const mica_fusion_cond_t qk_mm[] = {{"op_a", none, 2, 0},
                                           {"op_b", tr, 1, 0}};
static const mica_fusion_cond_t pv_mm[] = {{"op_a", none, 2, 0},
                                           {"op_b", none, 2, 0}};
static const mica_fusion_cond_t soft[] = {{"axis", last, 2, 0}};

#define FLOATS                                                              \
    ((1u << MICA_FLOAT32) | (1u << MICA_FLOAT16) | (1u << MICA_BFLOAT16))

/*
 * The steps of each form, the head first: QK (q and k scaled: q's
 * product, the scores' product, k's product, found as what the scores'
 * product reads) or MM (the scores' product, then a div or a prod), then
 * the mask's sum (M), the softmax, the guard (G), the product by v.
 */
#define S_QK                                                                \
    MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod),                        \
        MICA_KIT_FUSION_STEP("MatrixMultiply", 0, qk_mm),                   \
        MICA_KIT_FUSION_STEP("ElementWise", 0, is_prod)
#define S_MM(cond) MICA_KIT_FUSION_STEP("MatrixMultiply", 0, qk_mm),       \
        MICA_KIT_FUSION_STEP("ElementWise", 0, cond)
#define S_M MICA_KIT_FUSION_STEP("ElementWise", 0, is_sum)
#define S_SOFT MICA_KIT_FUSION_STEP("SoftMax", 0, soft)
#define S_G                                                                 \
    MICA_KIT_FUSION_STEP("Unary", 0, is_isnan),                             \
        MICA_KIT_FUSION_STEP_ANY("Select", 0)
#define S_PV MICA_KIT_FUSION_STEP("MatrixMultiply", 0, pv_mm)

/* Steps: the scores at step 2 (QK) or 1 (MM); with a mask its sum next,
 * then the softmax at `sm`; with the guard, isnan and select; last the
 * product by v. */
static const mica_fusion_step_t st_qk[] = {S_QK, S_SOFT, S_PV};
static const mica_fusion_step_t st_qk_m[] = {S_QK, S_M, S_SOFT, S_PV};
static const mica_fusion_step_t st_qk_g[] = {S_QK, S_SOFT, S_G, S_PV};
static const mica_fusion_step_t st_qk_mg[] = {S_QK, S_M, S_SOFT, S_G, S_PV};
#define MM_STEPS(name_, cond)                                               \
    static const mica_fusion_step_t st_##name_[] = {S_MM(cond), S_SOFT,     \
                                                    S_PV};                  \
    static const mica_fusion_step_t st_##name_##_m[] = {S_MM(cond), S_M,    \
                                                        S_SOFT, S_PV};      \
    static const mica_fusion_step_t st_##name_##_g[] = {S_MM(cond), S_SOFT, \
                                                        S_G, S_PV};         \
    static const mica_fusion_step_t st_##name_##_mg[] = {                   \
        S_MM(cond), S_M, S_SOFT, S_G, S_PV};
MM_STEPS(div, is_div)
MM_STEPS(mul, is_prod)

/*
 * Links.  QK: q * a (step 0, q its input 0), the scores (step 1) read it
 * as their input 0 and k * b (step 2) as input 1; MM: the scaling (step
 * 1) reads the scores (step 0), as its input 0 for a div, either for a
 * prod.  The scaled scores are step 1's output; the steps after them
 * start at n (3 for QK, 2 for MM): the mask's sum (M), the softmax, the
 * guard's isnan and select (G: the select reads isnan as its condition
 * and the softmax as its else), the product by v reading the last of
 * them as its input 0.
 */
#define L_QK                                                                \
    {0, 0, MICA_FUSION_OUTER, 0}, {1, 0, 0, 0}, {1, 1, 2, 0},               \
        {2, 0, MICA_FUSION_OUTER, 1}
#define L_DIV {1, 0, 0, 0}
#define L_MUL {1, MICA_FUSION_ANY_INPUT, 0, 0}
#define T_PLAIN(n) {(n), 0, 1, 0}, {(n) + 1, 0, (n), 0}
#define T_MASK(n)                                                           \
    {(n), MICA_FUSION_ANY_INPUT, 1, 0}, {(n) + 1, 0, (n), 0},               \
        {(n) + 2, 0, (n) + 1, 0}
#define T_GUARD(n)                                                          \
    {(n), 0, 1, 0}, {(n) + 1, 0, (n), 0}, {(n) + 2, 0, (n) + 1, 0},         \
        {(n) + 2, 2, (n), 0}, {(n) + 3, 0, (n) + 2, 0}
#define T_MASK_GUARD(n)                                                     \
    {(n), MICA_FUSION_ANY_INPUT, 1, 0}, {(n) + 1, 0, (n), 0},               \
        {(n) + 2, 0, (n) + 1, 0}, {(n) + 3, 0, (n) + 2, 0},                 \
        {(n) + 3, 2, (n) + 1, 0}, {(n) + 4, 0, (n) + 3, 0}

static const mica_fusion_link_t ln_qk[] = {L_QK, T_PLAIN(3)};
static const mica_fusion_link_t ln_qk_m[] = {L_QK, T_MASK(3)};
static const mica_fusion_link_t ln_qk_g[] = {L_QK, T_GUARD(3)};
static const mica_fusion_link_t ln_qk_mg[] = {L_QK, T_MASK_GUARD(3)};
#define MM_LINKS(name_, head)                                               \
    static const mica_fusion_link_t ln_##name_[] = {head, T_PLAIN(2)};      \
    static const mica_fusion_link_t ln_##name_##_m[] = {head, T_MASK(2)};   \
    static const mica_fusion_link_t ln_##name_##_g[] = {head, T_GUARD(2)};  \
    static const mica_fusion_link_t ln_##name_##_mg[] = {head,              \
                                                         T_MASK_GUARD(2)};
MM_LINKS(div, L_DIV)
MM_LINKS(mul, L_MUL)

/*
 * Tensor tests: q, k (and v) float of rank 4 (k as scaled: what
 * transpose-folding left of k's Shuffle may be an alias the builder's
 * facts do not name), the scale a constant (one value: its const param
 * checks), the mask of rank 4, the guard's 0.
 * The product by v is the last step `pv`; the select at `sel`.
 */
#define T_QK                                                                \
    {0, 0, FLOATS, 4, 4, MICA_FUSION_ANY_TENSOR, 0, 0},                     \
        {0, 1, 0, -1, -1, MICA_FUSION_CONSTANT, 0, 0},                      \
        {2, MICA_FUSION_OUTPUT(0), FLOATS, 4, 4, MICA_FUSION_ANY_TENSOR, 0, \
         0},                                                                \
        {2, 1, 0, -1, -1, MICA_FUSION_CONSTANT, 0, 0}
#define T_MM                                                                \
    {0, 0, FLOATS, 4, 4, MICA_FUSION_ANY_TENSOR, 0, 0},                     \
        {0, 1, FLOATS, 4, 4, MICA_FUSION_ANY_TENSOR, 0, 0},                 \
        {1, MICA_FUSION_OTHER_INPUT, 0, -1, -1, MICA_FUSION_CONSTANT, 0, 0}
#define T_M(m) {(m), MICA_FUSION_OTHER_INPUT, FLOATS, 4, 4,                 \
                MICA_FUSION_ANY_TENSOR, 0, 0}
#define T_G(sel) {(sel), 1, 0, -1, -1, MICA_FUSION_SPLAT, 0.0, 0.0}
#define T_PV(pv) {(pv), 1, FLOATS, 4, 4, MICA_FUSION_ANY_TENSOR, 0, 0}

static const mica_fusion_tensor_cond_t ts_qk[] = {T_QK, T_PV(4)};
static const mica_fusion_tensor_cond_t ts_qk_m[] = {T_QK, T_M(3), T_PV(5)};
static const mica_fusion_tensor_cond_t ts_qk_g[] = {T_QK, T_G(5), T_PV(6)};
static const mica_fusion_tensor_cond_t ts_qk_mg[] = {T_QK, T_M(3), T_G(6),
                                                     T_PV(7)};
static const mica_fusion_tensor_cond_t ts_mm[] = {T_MM, T_PV(3)};
static const mica_fusion_tensor_cond_t ts_mm_m[] = {T_MM, T_M(2), T_PV(4)};
static const mica_fusion_tensor_cond_t ts_mm_g[] = {T_MM, T_G(4), T_PV(5)};
static const mica_fusion_tensor_cond_t ts_mm_mg[] = {T_MM, T_M(2), T_G(5),
                                                     T_PV(6)};

/* The scale: a * b (QK), 1 / c (div), c (mul). */
static const mica_fusion_const_param_t sc_qk[] = {
    {"scale", 0, 1, MICA_FUSION_VALUE, 0},
    {"scale", 2, 1, MICA_FUSION_PRODUCT, 0}};
static const mica_fusion_const_param_t sc_div[] = {
    {"scale", 1, MICA_FUSION_OTHER_INPUT, MICA_FUSION_RECIPROCAL, 0}};
static const mica_fusion_const_param_t sc_mul[] = {
    {"scale", 1, MICA_FUSION_OTHER_INPUT, MICA_FUSION_VALUE, 0}};

/* The fused layer's inputs: q, k, v (the last step's input 1), the
 * mask (the sum's other input). */
static const mica_fusion_ref_t in_qk[] = {{0, 0}, {2, 0}, {4, 1}};
static const mica_fusion_ref_t in_qk_m[] = {
    {0, 0}, {2, 0}, {5, 1}, {3, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_qk_g[] = {{0, 0}, {2, 0}, {6, 1}};
static const mica_fusion_ref_t in_qk_mg[] = {
    {0, 0}, {2, 0}, {7, 1}, {3, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_mm[] = {{0, 0}, {0, 1}, {3, 1}};
static const mica_fusion_ref_t in_mm_m[] = {
    {0, 0}, {0, 1}, {4, 1}, {2, MICA_FUSION_OTHER_INPUT}};
static const mica_fusion_ref_t in_mm_g[] = {{0, 0}, {0, 1}, {5, 1}};
static const mica_fusion_ref_t in_mm_mg[] = {
    {0, 0}, {0, 1}, {6, 1}, {2, MICA_FUSION_OTHER_INPUT}};

#define RULE(name_, steps_, links_, form, sc)                               \
    static const mica_fusion_rule_t name_ = MICA_KIT_FUSION_RULE_WITH(      \
        #name_, "Attention", steps_, in_##form, .links = links_,            \
        .nb_links = MICA_KIT_COUNT(links_), .tensor_conds = ts_##form,      \
        .nb_tensor_conds = MICA_KIT_COUNT(ts_##form), .const_params = sc,   \
        .nb_const_params = MICA_KIT_COUNT(sc))

RULE(sdpa_qk, st_qk, ln_qk, qk, sc_qk);
RULE(sdpa_qk_mask, st_qk_m, ln_qk_m, qk_m, sc_qk);
RULE(sdpa_qk_guard, st_qk_g, ln_qk_g, qk_g, sc_qk);
RULE(sdpa_qk_mask_guard, st_qk_mg, ln_qk_mg, qk_mg, sc_qk);
RULE(attn_div, st_div, ln_div, mm, sc_div);
RULE(attn_div_mask, st_div_m, ln_div_m, mm_m, sc_div);
RULE(attn_div_guard, st_div_g, ln_div_g, mm_g, sc_div);
RULE(attn_div_mask_guard, st_div_mg, ln_div_mg, mm_mg, sc_div);
RULE(attn_mul, st_mul, ln_mul, mm, sc_mul);
RULE(attn_mul_mask, st_mul_m, ln_mul_m, mm_m, sc_mul);
RULE(attn_mul_guard, st_mul_g, ln_mul_g, mm_g, sc_mul);
RULE(attn_mul_mask_guard, st_mul_mg, ln_mul_mg, mm_mg, sc_mul);

const mica_fusion_rule_t *const mica__attn_rules[MICA__ATTN_NB_RULES] = {
    &sdpa_qk, &sdpa_qk_mask, &sdpa_qk_guard, &sdpa_qk_mask_guard,
    &attn_div, &attn_div_mask, &attn_div_guard, &attn_div_mask_guard,
    &attn_mul, &attn_mul_mask, &attn_mul_guard, &attn_mul_mask_guard};
