/*
 * modules/common/modkit.h - the old names of the module kit, while the
 * modules move to <mica/kit.h>.
 */
#ifndef MICA_MODKIT_H
#define MICA_MODKIT_H

#include "mica/kit.h"
#include "mica/kit_half.h"

#define mica__mod_host mica_kit_host
#define mica__mod_init mica_kit_init
#define MOD_FAIL MICA_KIT_FAIL
#define mica__mod_int mica_kit_int
#define mica__mod_float mica_kit_float
#define mica__mod_count mica_kit_count
#define mica__mod_ints mica_kit_ints
#define mica__mod_weights mica_kit_weights
#define mica__mod_string mica_kit_string
#define mica__half_to_float mica_kit_half_to_float
#define mica__float_to_half mica_kit_float_to_half
#define mica__mod_fields_t mica_kit_fields_t
#define mica__mod_fields_copy mica_kit_fields_copy
#define mica__mod_fields_view mica_kit_fields_view
#define mica__mod_fields_share mica_kit_fields_share
#define mica__mod_fields_free mica_kit_fields_free
#define mica__mod_fields_save mica_kit_fields_save
#define mica__mod_fields_load mica_kit_fields_load
#define mica__mod_layer_t mica_kit_layer_t
#define mica__mod_layer mica_kit_layer
#define mica__mod_layer_new mica_kit_layer_new
#define mica__mod_layer_create mica_kit_layer_create
#define mica__mod_layer_serialize mica_kit_layer_serialize
#define mica__mod_layer_clone mica_kit_layer_clone
#define mica__mod_layer_destroy mica_kit_layer_destroy
#define mica__mod_layer_deserialize mica_kit_layer_deserialize
#define mica__mod_layer_deserialize_ex mica_kit_layer_deserialize_ex
#define MICA__MOD_CREATOR MICA_KIT_CREATOR
#define MICA__MOD_ENTRY(name_, description_, creators_) \
    MICA_KIT_ENTRY(name_, PACKAGE_VERSION, "MIT", description_, creators_)
#define mica__mod_any_type mica_kit_any_type
#define mica__mod_one_output mica_kit_one_output
#define mica__mod_no_outputs mica_kit_no_outputs
#define mica__mod_boundary_enqueue mica_kit_boundary_enqueue
#define mica__mod_linear mica_kit_linear

#endif
