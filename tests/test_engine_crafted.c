/*
 * tests/test_engine_crafted.c - engine files crafted to pass the checksum
 * (tests/craft.h) and break one field each: the loader refuses each with
 * one line naming what is wrong, and never crashes, allocates what the
 * file cannot hold, or runs anything.  The engine crafted from is
 * tests/manifests/control/dynamic_rows.yaml's (a loop over a runtime
 * number of rows: symbols, expressions, shape tensors on the host,
 * weights); then every byte of it changed in turn.  Then the engine of
 * tests/manifests/fusion/fusion.yaml, where fusion rules fired: its
 * fusion records broken, then left out (as files of format 3 written
 * before fusion hold none), its records of the graph passes broken and
 * left out (format 3), and every byte of it changed in turn.
 *
 * Issue 15's reproducers are among them: a saved field's count that asks
 * for 206 GB (refused by the host before any module reads it, and by
 * the module kit's own reader), and a field of the wrong type in a Slice
 * (refused by the one validator, as a manifest's would be).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "craft.h"
#include "harness.h"

static mica_context_t *ctx;
static unsigned char *orig;
static size_t size;
static craft_map_t map;

static const char *err(void)
{
    return mica_context_error(ctx);
}

/* A fresh copy of the engine to change. */
static unsigned char *copy(void)
{
    unsigned char *c = malloc(size);
    if (!c)
        bail("out of memory");
    memcpy(c, orig, size);
    return c;
}

/* Reseal c, load it: refused with `want` in one line. */
static void refused(unsigned char *c, const char *want, const char *what)
{
    mica_engine_t *e = NULL;
    mica_status_t st;

    craft_reseal(c, size);
    st = mica_engine_deserialize(ctx, c, size, &e);
    ok(st != MICA_OK && !e && !strchr(err(), '\n'), "%s: refused", what);
    contains(err(), want, "  saying '%s'", want);
    mica_engine_destroy(e);
    free(c);
}

/* The layer whose saved state holds `field` (a fields' byte form), and
 * where the field's name lies in the file; -1 if none. */
static int32_t layer_with(const char *field, size_t *at)
{
    uint32_t s;
    size_t n = strlen(field);
    for (s = 0; s < map.nb_layers && s < CRAFT_MAX; s++) {
        size_t from = map.layer_state_data[s];
        size_t len = craft_get_u32(orig, map.layer_state[s]);
        size_t i = craft_find(orig, from + len, field, n, from);
        if (len && i != SIZE_MAX && craft_get_u32(orig, i - 4) == n) {
            *at = i;
            return (int32_t)s;
        }
    }
    return -1;
}

static void test_fields(void)
{
    size_t at;
    unsigned char *c;
    int32_t s;

    /* Issue 15: a weights field whose count asks for 206 GB. */
    if ((s = layer_with("weights", &at)) < 0)
        bail("no layer with weights");
    c = copy();
    craft_put_u32(c, at + 7 + 4, 0x7fffffffu); /* after name, type */
    refused(c, "saved state: field values longer than the state",
            "a saved weights count of 2^31 (206 GB of descriptions)");
    /* Issue 15: a Slice whose `start` is saved as floats. */
    if ((s = layer_with("start", &at)) < 0)
        bail("no layer with start");
    c = copy();
    craft_put_u32(c, at + 5, MICA_FIELD_FLOAT);
    refused(c, "layer 'rows' (Slice, implementation 'vec'): saved "
            "state: param 'start': expected int, got float",
            "a Slice's int field saved as a float");
    c = copy();
    craft_put_u32(c, at + 5, MICA_FIELD_STRING);
    refused(c, "saved state:", "the same field saved as a string");
    c = copy();
    craft_put_u32(c, at + 5, 77);
    refused(c, "saved state: malformed field",
            "the same field of an unknown type");
    /* A field the schema does not know. */
    c = copy();
    memcpy(c + at, "stout", 5);
    refused(c, "param 'stout'", "a field the Slice does not take");
}

/* The module kit's own reader, as a module calls it: the same count
 * fails there too, without asking for the memory. */
static void test_kit_reader(void)
{
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica_layer_t *inst;
    mica_error_t *e = NULL;
    unsigned char *c;
    size_t at, len;
    int32_t s;

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if ((s = layer_with("weights", &at)) < 0 ||
        mica_registry_find(ctx, NULL, "Constant", 0, "reference", 0,
                           &info) != MICA_OK)
        bail("no Constant");
    c = copy();
    craft_put_u32(c, at + 7 + 4, 0x7fffffffu);
    len = craft_get_u32(c, map.layer_state[s]);
    inst = info.creator->deserialize(info.creator, "zero_c",
                                     c + map.layer_state_data[s], len, e);
    ok(!inst, "the kit's deserialize refuses the 206 GB count itself");
    if (inst)
        inst->ops->destroy(inst);
    free(c);
}

static void test_structure(void)
{
    unsigned char *c;
    uint32_t i, s = 0;

    c = copy();
    craft_put_u32(c, map.counts, 0x7fffffffu);
    refused(c, "is corrupt: bad counts", "a tensor count past the end");
    c = copy();
    craft_put_u32(c, map.tensor_dtype[0], 99);
    refused(c, "is corrupt: bad tensor, number 0", "a tensor of dtype 99");
    c = copy();
    craft_put_u32(c, map.tensor_dtype[0] + 4, 0x100);
    refused(c, "is corrupt: bad tensor", "a tensor flag no format has");
    c = copy();
    craft_put_u32(c, map.symbol_axis[0], 7);
    refused(c, "is corrupt: bad symbol, 'N'", "a symbol of an axis the "
            "input lacks");
    for (i = 0; i < map.nb_exprs && i < CRAFT_MAX; i++)
        if (craft_get_u32(orig, map.expr_kind[i]) == 101)
            break;
    c = copy();
    craft_put_u32(c, map.expr_kind[i] + 4, map.nb_symbols);
    refused(c, "is corrupt: bad shape expressions", "an expression of a "
            "symbol that does not exist");
    c = copy();
    craft_put_u32(c, map.tensor_rank[0] + 4, map.nb_exprs);
    refused(c, "is corrupt: bad tensor", "a dimension past the "
            "expressions");
    c = copy();
    craft_put_u32(c, map.layer_flags[0], 0x100);
    refused(c, "is corrupt: bad layer, number 0", "a layer flag no format "
            "has");
    c = copy();
    craft_put_u32(c, map.layer_state[0], 0x7fffffffu);
    refused(c, "is corrupt: bad layer", "a state longer than the file");
    /* Layer 'shape' reads x; make it read what the last layer makes. */
    for (s = 0; s < map.nb_layers; s++)
        if (craft_get_u32(orig, map.layer_inputs[s]) == 1)
            break;
    c = copy();
    craft_put_u32(c, map.layer_inputs[s] + 4, map.nb_tensors - 1);
    refused(c, "reads a tensor before it is made", "a layer reading a "
            "tensor made after it");
    c = copy();
    craft_put_u32(c, map.layer_inputs[s] + 8, 7);
    refused(c, "is corrupt: bad layer", "an input kind of 7");
    c = copy();
    craft_put_u32(c, map.construct_begin[0] + 4, map.nb_layers + 1);
    refused(c, "is corrupt: bad loop or conditional",
            "a loop that ends past the last layer");
}

/*
 * Issue 25: the Shape layer's saved output [2] (x is [N, 3]) made [1],
 * checksum intact.  It loaded, and the run wrote x's 2 dimensions into a
 * buffer of one (ASan: heap-buffer-overflow): every restored layer's
 * output shapes are now derived again and compared with the file's.
 * $MICA_CRAFT_OUT, if set, names a folder the crafted file is written to
 * (fuzz/regress/engine/ holds it).
 */
static void test_shapes_derived(void)
{
    unsigned char *c;
    uint32_t t, k, one = UINT32_MAX, xs = UINT32_MAX;
    const char *out = getenv("MICA_CRAFT_OUT");

    for (k = 0; k < map.nb_exprs && k < CRAFT_MAX; k++)
        if (craft_get_u32(orig, map.expr_kind[k]) == 100 &&
            craft_get_i64(orig, map.expr_kind[k] + 4) == 1)
            one = k;
    for (t = 0; t < map.nb_tensors && t < CRAFT_MAX; t++) {
        uint32_t d0 = craft_get_u32(orig, map.tensor_rank[t] + 4);
        if (craft_get_u32(orig, map.tensor_rank[t]) == 1 && d0 < CRAFT_MAX &&
            craft_get_u32(orig, map.expr_kind[d0]) == 100 &&
            craft_get_i64(orig, map.expr_kind[d0] + 4) == 2)
            xs = t;
    }
    if (one == UINT32_MAX || xs == UINT32_MAX)
        bail("dynamic_rows: no constant 1 or no [2] tensor to craft from");
    c = copy();
    craft_put_u32(c, map.tensor_rank[xs] + 4, one);
    if (out) {
        char path[4096];
        FILE *f;
        craft_reseal(c, size);
        snprintf(path, sizeof path, "%s/shape-output-shorter-than-rank.mica",
                 out);
        if (!(f = fopen(path, "wb")) || fwrite(c, 1, size, f) != size ||
            fclose(f))
            bail("cannot write %s", path);
    }
    refused(c, "bad layer, 'shape': dimension 0 of output 0 ('xs') is 1 in "
            "the file, the layer makes 2", "a Shape layer's output shorter "
            "than its input's rank");
}

/* The same, of an operation (empty_shuffle.yaml's N*3). */
static void test_operation(void)
{
    unsigned char *c;
    uint32_t i;

    for (i = 0; i < map.nb_exprs && i < CRAFT_MAX; i++)
        if (craft_get_u32(orig, map.expr_kind[i]) < 100)
            break;
    if (i == map.nb_exprs || i == CRAFT_MAX)
        bail("no operation among the expressions");
    c = copy();
    craft_put_u32(c, map.expr_kind[i] + 4, i); /* its own operand */
    refused(c, "is corrupt: bad shape expressions", "an expression that is "
            "its own operand");
    c = copy();
    craft_put_u32(c, map.expr_kind[i], 42);
    refused(c, "is corrupt: bad shape expressions", "an operation of kind "
            "42");
    c = copy();
    craft_put_i64(c, map.expr_kind[i] + 12, 5);   /* lo 5 > hi */
    craft_put_i64(c, map.expr_kind[i] + 20, 4);
    refused(c, "is corrupt: bad shape expressions", "an interval whose low "
            "end is above its high end");
}

static void test_program_and_plan(void)
{
    unsigned char *c;
    uint32_t i;

    for (i = 0; i < map.nb_prog; i++)
        if (craft_get_u32(orig, map.prog[i]) == 1) /* LOOP_ENTER */
            break;
    c = copy();
    craft_put_u32(c, map.prog[i] + 8, 0);
    refused(c, "is corrupt: bad program", "a loop's entry jumping back");
    c = copy();
    craft_put_u32(c, map.prog[i], 77);
    refused(c, "is corrupt: bad program", "an instruction of kind 77");
    c = copy();
    craft_put_u32(c, map.prog[map.nb_prog - 1] + 4, 9999);
    refused(c, "is corrupt: bad program", "an instruction naming a loop "
            "that does not exist");
    c = copy();
    craft_put_i64(c, map.arena, craft_get_i64(orig, map.arena) - 256);
    refused(c, "is corrupt: bad memory plan, profile 0", "an arena smaller "
            "than its plan");
    for (i = 0; i < map.nb_tensors; i++)
        if (craft_get_i64(orig, map.plan_bytes[i]) > 0)
            break;
    c = copy();
    craft_put_i64(c, map.plan_bytes[i] + 8, 1);
    refused(c, "is corrupt: bad memory plan", "a tensor at an unaligned "
            "offset");
    c = copy();
    craft_put_i64(c, map.plan_bytes[i], INT64_MAX - 8);
    refused(c, "is corrupt: bad memory plan", "a tensor of 2^63 bytes");
    c = copy();
    craft_put_i64(c, map.profile_range[0] + 8, 100); /* min.d[0] */
    refused(c, "is corrupt: bad profile, 0, input 'x'", "a profile whose "
            "min is above its max");
}

/* Every byte changed in turn, resealed: an engine or one line. */
static void test_every_byte(void)
{
    unsigned char *c = copy();
    size_t i;
    int survived = 1, one_line = 1, loaded = 0;

    for (i = CRAFT_HEADER; i < size; i++) {
        mica_engine_t *e = NULL;
        memcpy(c, orig, size);
        c[i] = (unsigned char)(c[i] + 0x81);
        craft_reseal(c, size);
        if (mica_engine_deserialize(ctx, c, size, &e) == MICA_OK) {
            loaded++;
            mica_engine_destroy(e);
        } else if (!err()[0]) {
            survived = 0;
        } else if (strchr(err(), '\n')) {
            one_line = 0;
        }
    }
    ok(survived && one_line, "each of %zu bytes changed behind a valid "
       "checksum: an engine or one line, never a crash (%d loaded)",
       size - CRAFT_HEADER, loaded);
    free(c);
}

/*
 * The fusion records of an engine where fusion rules fired (format.h):
 * each checked; a file without them, as written before fusion existed,
 * loads, with no layer saying it was fused.
 */
static void test_fusion(void)
{
    mica_engine_t *e = NULL;
    mica_status_t st;
    unsigned char *c;
    int32_t i, fused = 0;

    /* conv1's and conv2's FusedConvolution, add3 and relu3's Pointwise */
    ok(map.fusion != 0 && craft_get_u32(orig, map.fusion) == 3,
       "fusion.yaml's engine holds 3 fusion records");
    c = copy();
    craft_put_u32(c, map.fusion, map.nb_layers + 1);
    refused(c, "is corrupt: bad fusion records", "more records than layers");
    c = copy();
    craft_put_u32(c, map.fusion_layer[0], map.nb_layers);
    refused(c, "is corrupt: bad fusion records", "a record of a layer past "
            "the last");
    c = copy();
    craft_put_u32(c, map.fusion_layer[1],
                  craft_get_u32(orig, map.fusion_layer[0]));
    refused(c, "is corrupt: bad fusion records", "two records of one layer");
    c = copy();
    craft_reseal(c, map.fusion);
    st = mica_engine_deserialize(ctx, c, map.fusion, &e);
    ok(st != MICA_OK && !e, "format 4 without its fusion records: refused");
    craft_put_u32(c, 8, 3);
    craft_reseal(c, map.fusion);
    st = mica_engine_deserialize(ctx, c, map.fusion, &e);
    ok(st == MICA_OK && e, "format 3 without its fusion records: loads (%s)",
       st == MICA_OK ? "ok" : err());
    for (i = 0; e && i < mica_engine_nb_layers(e); i++) {
        mica_layer_info_t li;
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        if (mica_engine_layer(e, i, &li) == MICA_OK && li.fused)
            fused++;
    }
    ok(e && fused == 0, "  and no layer has a record (%d)", (int)fused);
    mica_engine_destroy(e);
    free(c);
}

/*
 * The records of the graph passes (format 4): each checked; a file of
 * format 3 holds none and loads with none.
 */
static void test_passes(void)
{
    mica_engine_t *e = NULL;
    mica_status_t st;
    unsigned char *c;
    uint32_t n = map.passes ? craft_get_u32(orig, map.passes) : 0;

    ok(n >= 1, "the engine records the passes that ran (%u)", (unsigned)n);
    c = copy();
    craft_put_u32(c, map.passes, 1000000);
    refused(c, "is corrupt: bad pass records", "more records than bytes");
    c = copy();
    craft_put_u32(c, map.pass_name[0], 0);
    refused(c, "is corrupt: bad pass records", "a record without a name");
    c = copy();
    craft_put_u32(c, 8, 3);
    craft_reseal(c, map.passes);
    st = mica_engine_deserialize(ctx, c, map.passes, &e);
    ok(st == MICA_OK && e && mica_engine_nb_passes(e) == 0,
       "format 3, without pass records: loads, with none (%s)",
       st == MICA_OK ? "ok" : err());
    mica_engine_destroy(e);
    free(c);
}

/* The engine of manifest `rel` (under the source tree) to craft from. */
static void use(const char *top, const char *rel)
{
    char path[4096];
    mica_manifest_t *m = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;

    mica_free(orig);
    snprintf(path, sizeof path, "%s/%s", top, rel);
    if (mica_manifest_load(ctx, path, &m) != MICA_OK)
        bail("%s", err());
    cfg = *mica_manifest_config(m);
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK ||
        mica_engine_serialize(e, (void **)&orig, &size) != MICA_OK)
        bail("%s", err());
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
    if (craft_map(orig, size, &map) != 0)
        bail("%s: the engine does not walk as format 4 (stopped at %zu of "
             "%zu)", rel, map.end, size);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_SRCDIR");

    if (!top)
        skip_all("MICA_TOP_SRCDIR not set");
    plan(2 * 5 + 1 + 2 * 11 + 2 * 7 + 2 + 1 + 2 * 3 + 1 + 2 * 3 + 3 + 1 +
         1 + 2 * 2 + 1);
    ctx = th_context();
    use(top, "tests/manifests/control/dynamic_rows.yaml");
    test_fields();
    test_kit_reader();
    test_structure();
    test_program_and_plan();
    test_shapes_derived();
    test_every_byte();
    use(top, "tests/manifests/dynamic/empty_shuffle.yaml");
    test_operation();
    use(top, "tests/manifests/fusion/fusion.yaml");
    test_fusion();
    test_passes();
    test_every_byte();
    mica_free(orig);
    return 0;
}
