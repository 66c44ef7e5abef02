/*
 * tests/test_abi_compat.c - a module built against the ABI's first
 * headers (tests/abi1: version 1's structs before any member was
 * appended, poisoned past their struct_size) loads, builds, autotunes,
 * runs, saves and loads again on today's host, beside a module that uses
 * what was appended since (tests/abi2), in one network:
 *
 *   x [N, 3] -> AbiOne (x * 2, abi1) -> TacticAdd (+ tactic, abi2) -> y
 *
 * A host that read a member the old module does not have would call a
 * poisoned pointer and crash; one that offered it a format other than
 * linear would make it abort (an input given in HWC is reordered for it).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

static void load(const char *top, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", top, rel);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
}

static void layer(mica_network_t *net, const char *name, const char *type,
                  const char *impl, const char *in, const char *out,
                  const mica_fields_t *fields)
{
    mica_layer_spec_t spec;
    const char *ins[1] = {in}, *outs[1] = {out};

    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.implementation = impl;
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = fields;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s: %s", name, err());
}

static mica_engine_t *build(int autotune)
{
    static const double two = 2.0;
    mica_field_t f = {"factor", MICA_FIELD_FLOAT, 1, &two};
    mica_fields_t fields = {1, &f};
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_dims_t d, mn, op, mx;
    int32_t k;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = -1;
    d.d[1] = 3;
    mn = op = mx = d;
    mn.d[0] = 1;
    op.d[0] = 2;
    mx.d[0] = 8;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.autotune = autotune;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_add_profile(net, &k) != MICA_OK ||
        mica_network_set_profile_dims(net, k, "x", &mn, &op, &mx, NULL) !=
            MICA_OK)
        bail("network: %s", err());
    layer(net, "one", "AbiOne", NULL, "x", "t", &fields);
    layer(net, "add", "TacticAdd", "reference", "t", "y", NULL);
    if (mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    mica_network_destroy(net);
    return e;
}

/* Whether e computes y = 2x + tactic for n rows. */
static int computes(mica_engine_t *e, int64_t n, float tactic)
{
    float x[24];
    const float *y;
    mica_exec_t *ex = NULL;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    int good = 1;
    int64_t i;

    for (i = 0; i < 3 * n; i++)
        x[i] = (float)i - 4.0f;
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = n;
    d.d[1] = 3;
    if (mica_exec_create(e, &ex) != MICA_OK ||
        mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, "y", &desc, (const void **)&y) != MICA_OK) {
        diag("run: %s", err());
        good = 0;
    }
    for (i = 0; good && i < 3 * n; i++)
        good = y[i] == 2 * x[i] + tactic;
    mica_exec_destroy(ex);
    return good;
}

/* x [1, 2, 2, 2] given in HWC -> AbiOne -> y: the old module is never
 * asked about HWC (it aborts if it is): a reorder goes before it. */
static void test_formats(void)
{
    static const double two = 2.0;
    mica_field_t f = {"factor", MICA_FIELD_FLOAT, 1, &two};
    mica_fields_t fields = {1, &f};
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *ex = NULL;
    mica_tensor_desc_t desc;
    const float *y;
    float x[8];
    mica_dims_t d;
    int i, good;

    memset(&d, 0, sizeof d);
    d.nb_dims = 4;
    d.d[0] = 1, d.d[1] = d.d[2] = d.d[3] = 2;
    for (i = 0; i < 8; i++) /* NHWC: c fastest */
        x[i] = (float)i;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_set_format(net, "x", MICA_FORMAT_HWC, NULL) != MICA_OK)
        bail("network: %s", err());
    layer(net, "one", "AbiOne", NULL, "x", "y", &fields);
    good = mica_network_mark_output(net, "y", NULL) == MICA_OK &&
           mica_engine_build(net, &cfg, &e) == MICA_OK &&
           mica_exec_create(e, &ex) == MICA_OK &&
           mica_exec_set_input(ex, "x", &d, x) == MICA_OK &&
           mica_exec_run(ex) == MICA_OK &&
           mica_exec_get_output(ex, "y", &desc, (const void **)&y) == MICA_OK;
    if (!good)
        diag("%s", err());
    /* y is linear: y[c][h][w] = 2 x[h][w][c] */
    for (i = 0; good && i < 8; i++)
        good = y[i] == 2 * x[(i / 4) + 2 * (i % 4)];
    ok(good, "an input given in HWC: reordered for it, never offered HWC");
    mica_exec_destroy(ex);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    mica_engine_t *e, *back = NULL;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    mica_creator_info_t ci = {.struct_size = sizeof(mica_creator_info_t)};
    void *data = NULL;
    size_t size = 0;

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(9);
    ctx = th_context();
    load(top, "tests/abi1/.libs/abi1.so");
    load(top, "tests/abi2/.libs/abi2.so");
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    ok(mica_registry_find(ctx, NULL, "AbiOne", 0, NULL, 0, &ci) == MICA_OK &&
       strcmp(ci.module_name, "abi1") == 0,
       "the old module registers its creator");
    e = build(0);
    ok(computes(e, 2, 2) && computes(e, 8, 2), "built: it runs beside a "
       "layer with tactics (2 and 8 rows)");
    memset(&li, 0, sizeof li);
    li.struct_size = sizeof li;
    ok(mica_engine_layer(e, 0, &li) == MICA_OK && li.tactic == 0 &&
       li.workspace == 8 * 3 * 4, "  no tactic, its workspace planned");
    ok(mica_engine_serialize(e, &data, &size) == MICA_OK &&
       mica_engine_deserialize(ctx, data, size, &back) == MICA_OK,
       "saved and loaded, its own state restored");
    if (!back)
        diag("%s", err());
    ok(back && computes(back, 5, 2), "  and it runs (5 rows)");
    mica_engine_destroy(back);
    mica_free(data);
    mica_engine_destroy(e);
    e = build(1);
    ok(e && computes(e, 3, 1), "autotuned: its layer is left alone, the "
       "other's tactic tuned");
    memset(&li, 0, sizeof li);
    li.struct_size = sizeof li;
    ok(mica_engine_layer(e, 0, &li) == MICA_OK &&
       strcmp(li.choice, "the highest priority for cpu") == 0,
       "  its choice unchanged");
    ok(mica_engine_layer(e, 1, &li) == MICA_OK && li.tactic == 1,
       "  the other's tactic 1");
    mica_engine_destroy(e);
    test_formats();
    return 0;
}
