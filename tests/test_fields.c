/*
 * tests/test_fields.c - the validator (core/base/fields.c) on its own: params
 * given loose, as a manifest writes them (text with positions), and
 * typed, as the C API gives them, against one schema; the same message
 * for the same mistake whichever way it came, at the value's position;
 * defaults; the params given kept apart from the defaults; when two
 * schemas are the same.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "tap.h"

static const char *const ops[] = {"sum", "prod", NULL};
static const double alpha_default = 0.5;
static const mica_field_schema_t schema[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, ops, NULL},
    {"axes", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL, NULL},
    {"alpha", MICA_FIELD_FLOAT, 1, 0, 1, &alpha_default, NULL, NULL},
    {"pair", MICA_FIELD_INT, 2, 0, 0, NULL, NULL, NULL},
    {"keep", MICA_FIELD_BOOL, 1, 0, 0, NULL, NULL, NULL},
    {"dtype", MICA_FIELD_DTYPE, 1, 0, 0, NULL, NULL, NULL},
    {"label", MICA_FIELD_STRING, 1, 0, 0, NULL, NULL, NULL},
};
static mica_layer_creator_t creator;

static mica__fields_src_t src;
static mica__fields_t out;
static char err[1024];

/* A loose scalar written at line 3, column `col`. */
static mica__loose_t scalar(const char *text, int plain, const char *origin)
{
    mica__loose_t v;
    memset(&v, 0, sizeof v);
    v.kind = MICA__LOOSE_SCALAR;
    v.text = text;
    v.plain = plain;
    v.origin = origin;
    return v;
}

/* Check one loose param `name` = v; the status. */
static mica_status_t one(const char *name, const mica__loose_t *v)
{
    mica__given_t g[2];
    mica__loose_t op = scalar("sum", 1, "m.yaml:3:10");
    int32_t n = 1;

    memset(g, 0, sizeof g);
    g[0].name = name;
    g[0].origin = "m.yaml:3:2";
    g[0].loose = v;
    if (strcmp(name, "op") != 0) { /* op is required */
        g[1].name = "op";
        g[1].origin = "m.yaml:3:6";
        g[1].loose = &op;
        n = 2;
    }
    mica__fields_free(&out);
    err[0] = '\0';
    return mica__fields_validate(&src, &creator, g, n, &out, err, sizeof err);
}

static const mica_field_t *field(const char *name)
{
    int32_t i;
    for (i = 0; i < out.view.nb_fields; i++)
        if (strcmp(out.items[i].name, name) == 0)
            return &out.items[i];
    return NULL;
}

static void loose_values(void)
{
    mica__loose_t items[3], list, v;
    const mica_field_t *f;

    items[0] = scalar("1", 1, "m.yaml:3:20");
    items[1] = scalar("-2", 1, "m.yaml:3:23");
    items[2] = scalar("0x10", 1, "m.yaml:3:27");
    memset(&list, 0, sizeof list);
    list.kind = MICA__LOOSE_LIST;
    list.items = items;
    list.nb_items = 3;
    list.origin = "m.yaml:3:19";
    ok(one("axes", &list) == MICA_OK, "a list of ints");
    f = field("axes");
    ok(f && f->count == 3 && ((const int64_t *)f->data)[2] == 16,
       "  converted (0x10 is 16)");
    f = field("alpha");
    ok(f && ((const double *)f->data)[0] == 0.5, "  the default applied");
    ok(out.view.nb_fields == 3 && out.given[0] && out.given[1] &&
       !out.given[2], "  given and default told apart");

    items[1] = scalar("abc", 1, "m.yaml:3:23");
    one("axes", &list);
    is_string("m.yaml:3:23: layer 'l': param 'axes': expected int, got 'abc'",
              err, "a bad element is reported at its own position");
    v = scalar("summ", 1, "m.yaml:3:10");
    one("op", &v);
    is_string("m.yaml:3:10: layer 'l': param 'op': 'summ' is not one of sum, "
              "prod", err, "an enum name not in the list");
    v = scalar("~", 1, "m.yaml:3:30");
    one("alpha", &v);
    is_string("m.yaml:3:30: layer 'l': param 'alpha': no value", err,
              "null is no value");
    v = scalar("~", 0, "m.yaml:3:30");
    one("label", &v);
    ok(field("label") && !strcmp(*(const char *const *)field("label")->data,
                                 "~"), "a quoted ~ is a string");
    v = scalar("yes", 1, "m.yaml:3:30");
    one("keep", &v);
    is_string("m.yaml:3:30: layer 'l': param 'keep': expected bool (true or "
              "false), got 'yes'", err, "bool");
    v = scalar("float33", 1, "m.yaml:3:30");
    one("dtype", &v);
    contains(err, "param 'dtype': 'float33' is not a dtype (one of float32, "
             "float16", "dtype names listed");
    one("pair", &list);
    is_string("m.yaml:3:19: layer 'l': param 'pair': expected a list of 2 "
              "int values, got 3", err, "a list of the wrong length");
    v = scalar("3", 1, "m.yaml:3:30");
    one("pair", &v);
    is_string("m.yaml:3:30: layer 'l': param 'pair': expected a list of 2 "
              "int values, got '3'", err, "a scalar for a list");
    one("alpha", &list);
    is_string("m.yaml:3:19: layer 'l': param 'alpha': expected one float, "
              "got a list of 3", err, "a list for a scalar");
    v = scalar("1", 1, "m.yaml:3:30");
    one("bogus", &v);
    is_string("m.yaml:3:2: layer 'l': unknown param 'bogus' (Thing takes op, "
              "axes, alpha, pair, keep, dtype, label)", err,
              "an unknown name at the name's position");
    mica__fields_free(&out);
    err[0] = '\0';
    mica__fields_validate(&src, &creator, NULL, 0, &out, err, sizeof err);
    is_string("m.yaml:3:1: layer 'l': missing param 'op' (enum, required by "
              "Thing)", err, "a missing param where the params are");
}

static void typed_values(void)
{
    int64_t three[3] = {1, 2, 3}, sum = 0;
    const char *summ = "summ";
    mica_field_t f[2] = {{"op", MICA_FIELD_ENUM, 1, &sum},
                         {"pair", MICA_FIELD_INT, 3, three}};
    mica_fields_t given = {2, f};
    mica__given_t *back;
    int32_t n;

    mica__fields_free(&out);
    mica__fields_check(&creator, &given, &out, err, sizeof err);
    is_string("param 'pair': expected a list of 2 int values, got 3", err,
              "typed: the same words as loose, without position or layer");
    f[0].type = MICA_FIELD_STRING;
    f[0].data = &summ;
    given.nb_fields = 1;
    mica__fields_check(&creator, &given, &out, err, sizeof err);
    is_string("param 'op': 'summ' is not one of sum, prod", err,
              "typed: an enum by name");
    f[0].name = "pair";
    f[1].name = "pair";
    f[1].count = 2;
    given.nb_fields = 2;
    mica__fields_check(&creator, &given, &out, err, sizeof err);
    is_string("param 'pair' is given twice", err, "typed: twice");
    given.nb_fields = 0;
    mica__fields_check(&creator, &given, &out, err, sizeof err);
    is_string("missing required param 'op' (enum)", err, "typed: missing");

    f[0].name = "op";
    f[0].type = MICA_FIELD_ENUM;
    f[0].data = &sum;
    given.nb_fields = 2;
    ok(mica__fields_check(&creator, &given, &out, err, sizeof err) ==
           MICA_OK, "typed: checked");
    back = mica__fields_given(&out, &n);
    ok(back && n == 2 && !strcmp(back[0].name, "op") &&
           !strcmp(back[1].name, "pair"),
       "the params given, without the defaults, for another schema");
    free(back);
    mica__fields_free(&out);
}

static void schemas(void)
{
    mica_field_schema_t copy[sizeof schema / sizeof schema[0]];
    mica_layer_creator_t other = creator;
    static const char *const ops2[] = {"sum", "max", NULL};
    static const double other_default = 0.25;

    memcpy(copy, schema, sizeof copy);
    other.fields = copy;
    ok(mica__schema_same(&creator, &other), "an equal copy is the same schema");
    copy[2].default_value = &other_default;
    ok(!mica__schema_same(&creator, &other), "another default is not");
    copy[2].default_value = &alpha_default;
    copy[0].enum_values = ops2;
    ok(!mica__schema_same(&creator, &other), "other enum names are not");
    copy[0].enum_values = ops;
    other.nb_fields--;
    ok(!mica__schema_same(&creator, &other), "fewer fields are not");
}

int main(void)
{
    plan(25);
    creator.struct_size = sizeof creator;
    creator.type = "Thing";
    creator.version = 1;
    creator.implementation = "reference";
    creator.fields = schema;
    creator.nb_fields = (int32_t)(sizeof schema / sizeof schema[0]);
    src.layer = "l";
    src.origin = "m.yaml:3:3";
    src.params_origin = "m.yaml:3:1";
    src.manifest = 1;
    loose_values();
    typed_values();
    schemas();
    mica__fields_free(&out);
    return exit_status();
}
