/*
 * tests/modules/bad_creators.c - one good creator (Cog) among broken
 * ones; each broken one is a problem line of its own, Cog registers.
 */
#include <config.h>

#include "fake.h"

static const char *const no_values[] = {NULL};
static const mica_field_schema_t enum_empty[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, no_values, NULL},
};
static const mica_field_schema_t twice[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL, NULL},
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL, NULL},
};

static const mica_layer_creator_t cog =
    FAKE_CREATOR("Cog", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t cog_v0 =
    FAKE_CREATOR("Cog", 0, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t cog_enum = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "Cog", .version = 2,
    .ns = "", .implementation = "reference", .devices = MICA_DEVICE_CPU,
    .role = MICA_ROLE_NONE, .fields = enum_empty, .nb_fields = 1,
    .create = fake_create};
static const mica_layer_creator_t cog_twice = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "Cog", .version = 3,
    .ns = "", .implementation = "reference", .devices = MICA_DEVICE_CPU,
    .role = MICA_ROLE_NONE, .fields = twice, .nb_fields = 2,
    .create = fake_create};
static const mica_layer_creator_t cog_nodev =
    FAKE_CREATOR("Cog", 4, 0, "", "reference", 0);
static const mica_layer_creator_t untyped =
    FAKE_CREATOR("", 1, 0, "", "reference", MICA_DEVICE_CPU);
static const mica_layer_creator_t cog_nocreate = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "Cog", .version = 5,
    .ns = "", .implementation = "reference", .devices = MICA_DEVICE_CPU,
    .role = MICA_ROLE_NONE};

static const mica_layer_creator_t *const creators[] = {
    &cog_v0, &cog_enum, &cog_twice, &cog_nodev, NULL, &untyped,
    &cog_nocreate, &cog,
};
static const mica_module_desc_t desc =
    FAKE_DESC("bad_creators", creators, NULL);

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)err;
    fake_host = host;
    *out = &desc;
    return MICA_OK;
}
