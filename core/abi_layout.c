/*
 * core/abi_layout.c - the frozen layouts of ABI version 1.
 *
 * Modules built against version 1 rely on these offsets and sizes (LP64).
 * A change that trips one of these assertions breaks every module built
 * earlier: grow structs at the end only, and only those with struct_size.
 */
#include <config.h>

#include <assert.h>
#include <stddef.h>

#include "mica/module.h"
#include "mica/mica.h"

/* Element types: values frozen, new ones appended. */
static_assert(MICA_BFLOAT16 == 7, "the dtypes of version 1 are frozen");
static_assert(MICA_FLOAT64 == 8 && MICA_INT16 == 12 && MICA_FP8E4M3 == 13 &&
              MICA_INT4 == 15 && MICA_FP8E8M0 == 20,
              "dtypes appended 2026-11-28");
static_assert(MICA_DTYPE_COUNT_ <= 32,
              "a fusion rule's dtypes is a mask of 32 bits");

#if defined(__x86_64__) || defined(__aarch64__)
static_assert(sizeof(mica_dims_t) == 72, "mica_dims_t is frozen");
static_assert(offsetof(mica_dims_t, d) == 8, "mica_dims_t is frozen");
static_assert(sizeof(mica_tensor_desc_t) == 112, "mica_tensor_desc_t is frozen");
static_assert(offsetof(mica_tensor_desc_t, dims) == 8, "mica_tensor_desc_t is frozen");
static_assert(offsetof(mica_tensor_desc_t, scale) == 80, "mica_tensor_desc_t is frozen");
static_assert(sizeof(mica_dyn_desc_t) == 256, "mica_dyn_desc_t is frozen");
static_assert(sizeof(mica_weights_t) == 96, "mica_weights_t is frozen");
static_assert(offsetof(mica_weights_t, values) == 16, "mica_weights_t is frozen");
static_assert(sizeof(mica_field_schema_t) == 48, "mica_field_schema_t is frozen");
static_assert(offsetof(mica_field_schema_t, enum_values) == 32, "mica_field_schema_t is frozen");
static_assert(sizeof(mica_field_t) == 24, "mica_field_t is frozen");
static_assert(sizeof(mica_fields_t) == 16, "mica_fields_t is frozen");
static_assert(sizeof(mica_shape_expr_t) == 96, "mica_shape_expr_t is frozen");
static_assert(offsetof(mica_shape_expr_t, values) == 72, "mica_shape_expr_t is frozen");
static_assert(sizeof(mica_layer_t) == 8, "mica_layer_t is frozen");

/* Structs that grow: members of version 1 stay where they are. */
static_assert(offsetof(mica_layer_ops_t, nb_outputs) == 8, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, enqueue) == 56, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, output_values) == 88, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, input_kind) == 96, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, initialize) == 104, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, terminate) == 112, "layer ops v1");
static_assert(offsetof(mica_layer_ops_t, enqueue_boundary) == 120, "layer ops v1");
static_assert(sizeof(mica_layer_ops_t) >= 128, "layer ops v1");
/* Appended later: after every member of version 1, in this order. */
static_assert(offsetof(mica_layer_ops_t, tactics) == 128,
              "layer ops: tactics appended");
static_assert(offsetof(mica_layer_ops_t, set_tactic) == 136,
              "layer ops: set_tactic appended");
static_assert(offsetof(mica_layer_ops_t, aliased_input) == 144,
              "layer ops: aliased_input appended");
static_assert(offsetof(mica_layer_ops_t, shape_change) == 152,
              "layer ops: shape_change appended");
static_assert(offsetof(mica_layer_ops_t, constant_output) == 160,
              "layer ops: constant_output appended");
static_assert(offsetof(mica_layer_ops_t, device_steps) == 168,
              "layer ops: device_steps appended");
static_assert(sizeof(mica_step_t) == 72, "mica_step_t is frozen");
static_assert(offsetof(mica_step_t, value) == 32, "mica_step_t is frozen");
static_assert(offsetof(mica_step_t, device_iteration) == 40,
              "mica_step_t: device_iteration in a reserved slot");
static_assert(offsetof(mica_step_t, device_trip_count) == 48,
              "mica_step_t: device_trip_count in a reserved slot");
static_assert(offsetof(mica_layer_creator_t, type) == 8, "creator v1");
static_assert(offsetof(mica_layer_creator_t, fields) == 48, "creator v1");
static_assert(offsetof(mica_layer_creator_t, create) == 64, "creator v1");
static_assert(offsetof(mica_layer_creator_t, user_data) == 80, "creator v1");
/* Appended later: after every member of version 1. */
static_assert(offsetof(mica_layer_creator_t, deserialize_ex) == 88,
              "creator: deserialize_ex appended");
/* Output structs of the application API grow at their end too; the
 * library writes only what the caller's struct_size declares. */
static_assert(offsetof(mica_layer_info_t, choice) == 88,
              "layer info: first layout");
static_assert(offsetof(mica_layer_info_t, fused) == 112,
              "layer info: fused appended");
static_assert(offsetof(mica_fusion_rule_info_t, module_file) == 32,
              "fusion rule info v1");
static_assert(offsetof(mica_build_config_t, no_fusion) == 40,
              "build config: no_fusion appended");
static_assert(offsetof(mica_build_config_t, passes) == 48,
              "build config: passes appended");
static_assert(offsetof(mica_build_config_t, no_passes) == 56,
              "build config: no_passes appended");
static_assert(offsetof(mica_build_config_t, timing_cache) == 64,
              "build config: timing_cache appended");
static_assert(sizeof(mica_pass_info_t) == 32, "pass info: first layout");
static_assert(offsetof(mica_pass_info_t, changed) == 24,
              "pass info: first layout");
static_assert(offsetof(mica_layer_info_t, tactic) == 104,
              "layer info: tactic appended");
static_assert(offsetof(mica_creator_info_t, module_license) == 80,
              "creator info: first layout");
static_assert(offsetof(mica_tensor_info_t, is_shape_output) == 128,
              "tensor info: first layout");
static_assert(offsetof(mica_tensor_info_t, alias) == 136,
              "tensor info: alias and format appended");
static_assert(offsetof(mica_tensor_info_t, constant) == 144,
              "tensor info: constant appended");
static_assert(sizeof(mica_cuda_graph_counts_t) == 56,
              "cuda graph counts: first layout");
static_assert(offsetof(mica_cuda_graph_counts_t, evictions) == 48,
              "cuda graph counts: first layout");
static_assert(offsetof(mica_host_t, log) == 8, "host v1");
static_assert(offsetof(mica_host_t, expr_constant) == 24, "host v1");
static_assert(offsetof(mica_host_t, status_name) == 64, "host v1");
static_assert(offsetof(mica_host_t, expr_size) == 72,
              "host: expr_size appended");
static_assert(offsetof(mica_host_t, cpu_threads) == 80,
              "host: cpu_threads appended");
static_assert(offsetof(mica_module_desc_t, name) == 8, "module desc v1");
static_assert(offsetof(mica_module_desc_t, creators) == 40, "module desc v1");
static_assert(offsetof(mica_module_desc_t, fini) == 56, "module desc v1");
static_assert(offsetof(mica_module_desc_t, fusion_rules) == 96,
              "module desc: fusion rules appended");
static_assert(offsetof(mica_module_desc_t, nb_fusion_rules) == 104,
              "module desc: fusion rules appended");
static_assert(sizeof(mica_fusion_cond_t) == 24, "mica_fusion_cond_t is frozen");
static_assert(sizeof(mica_fusion_step_t) == 32, "mica_fusion_step_t is frozen");
static_assert(offsetof(mica_fusion_step_t, conds) == 16,
              "mica_fusion_step_t is frozen");
static_assert(sizeof(mica_fusion_ref_t) == 8, "mica_fusion_ref_t is frozen");
static_assert(sizeof(mica_fusion_param_t) == 24,
              "mica_fusion_param_t is frozen");
static_assert(offsetof(mica_fusion_rule_t, steps) == 24, "fusion rule v1");
static_assert(offsetof(mica_fusion_rule_t, inputs) == 40, "fusion rule v1");
static_assert(offsetof(mica_fusion_rule_t, params) == 48, "fusion rule v1");
static_assert(offsetof(mica_fusion_rule_t, constants) == 64, "fusion rule v1");
static_assert(offsetof(mica_fusion_rule_t, links) == 88,
              "fusion rule: links appended");
static_assert(offsetof(mica_fusion_rule_t, tensor_conds) == 104,
              "fusion rule: tensor tests appended");
static_assert(offsetof(mica_fusion_rule_t, const_params) == 112,
              "fusion rule: const params appended");
static_assert(offsetof(mica_fusion_rule_t, weight_params) == 128,
              "fusion rule: weights params appended");
static_assert(sizeof(mica_fusion_rule_t) == 144, "fusion rule v3");
static_assert(sizeof(mica_fusion_weight_param_t) == 16,
              "mica_fusion_weight_param_t is frozen");
static_assert(sizeof(mica_fusion_link_t) == 16, "mica_fusion_link_t is frozen");
static_assert(sizeof(mica_fusion_tensor_cond_t) == 40,
              "mica_fusion_tensor_cond_t is frozen");
static_assert(sizeof(mica_fusion_const_param_t) == 24,
              "mica_fusion_const_param_t is frozen");
#endif

/* Gives the translation unit an external definition (ISO C wants one). */
int mica__abi_layout_checked;
