/*
 * tests/odd/odd.c - a module whose strings need escaping and whose
 * fields have a default of every kind, for the views of `mica modules`
 * (tests/test_cli_modules.sh): a quote, a backslash, a tab, a newline, a
 * control byte, UTF-8 and a byte that is not UTF-8 in its descriptor,
 * and int, float (infinite), bool, string, enum, dtype, weights and empty
 * list fields.  Its creator only needs to exist: create() refuses.
 */
#include <config.h>

#include <math.h>

#include "modules/fake.h"

static const double ratio_default[] = {INFINITY};
static const int64_t sizes_default[] = {3, -4};
static const char *const label_default[] = {"say \"hi\""};
static const char *const kinds[] = {"plain", "with \"quotes\"", NULL};
static const int64_t kind_default[] = {1};
static const int64_t flag_default[] = {1};
static const int64_t dtype_default[] = {MICA_FLOAT16};
static const int64_t none[] = {0};

static const mica_field_schema_t odd_fields[] = {
    {"ratio", MICA_FIELD_FLOAT, 1, 0, 1, ratio_default, NULL,
     "a \"ratio\" \\ with a backslash"},
    {"sizes", MICA_FIELD_INT, 2, 0, 2, sizes_default, NULL, NULL},
    {"label", MICA_FIELD_STRING, 1, 0, 1, label_default, NULL, "a label"},
    {"kind", MICA_FIELD_ENUM, 1, 0, 1, kind_default, kinds, "a kind"},
    {"flag", MICA_FIELD_BOOL, 1, 0, 1, flag_default, NULL, NULL},
    {"dtype", MICA_FIELD_DTYPE, 1, 0, 1, dtype_default, NULL, NULL},
    {"w", MICA_FIELD_WEIGHTS, 1, 1, 0, NULL, NULL, "the weights"},
    {"extra", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, none, NULL,
     "line one\nline two\tand a bell \a"},
};

static const mica_layer_creator_t odd = {
    .struct_size = sizeof(mica_layer_creator_t), .type = "Odd\"Type\\",
    .version = 1, .ns = "", .implementation = "reference",
    .devices = MICA_DEVICE_CPU, .role = MICA_ROLE_NONE,
    .fields = odd_fields,
    .nb_fields = (int32_t)(sizeof(odd_fields) / sizeof(odd_fields[0])),
    .create = fake_create};

static const mica_layer_creator_t *const creators[] = {&odd};

static const mica_module_desc_t desc = {
    .struct_size = sizeof(mica_module_desc_t),
    .abi_version = MICA_ABI_VERSION,
    .name = "odd",
    .version = "1.0",
    .license = "MIT \"or\" Apache\\2",
    .description = "caf\xc3\xa9, tab\there,\nnew line, bad \xff byte, "
                   "control \x01 byte",
    .creators = creators,
    .nb_creators = 1,
};

MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *host,
                                           const mica_module_desc_t **out,
                                           mica_error_t *err)
{
    (void)err;
    fake_host = host;
    *out = &desc;
    return MICA_OK;
}
