/*
 * tests/test_abi_tactics.c - tactics (mica/layer.h): a layer offers
 * several ways of running, the builder tells it the first without
 * autotuning and the fastest with it (timed across implementations as
 * before), the engine file keeps the choice, and every instance made
 * from the engine (a loaded one, each execution context's clone) is told
 * it; mica_layer_info_t shows it.  The layer is tests/abi2's TacticAdd,
 * y = x + its tactic, which never serializes its tactic itself.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "craft.h"
#include "harness.h"

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

/* The timing cache file of the next builds, NULL: none. */
static const char *cache_file;

/* x[4] -> TacticAdd (implementation `impl`, NULL: any) -> y, built with
 * or without autotuning. */
static mica_engine_t *build(const char *impl, int autotune)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    mica_engine_t *e = NULL;
    mica_dims_t d;
    const char *in[1] = {"x"}, *out[1] = {"y"};

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "add";
    spec.type = "TacticAdd";
    spec.implementation = impl;
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.autotune = autotune;
    cfg.timing_cache = cache_file;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_add_layer(net, &spec) != MICA_OK ||
        mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    mica_network_destroy(net);
    return e;
}

/* What y - x is after a run of a new execution context of e, -1 if the
 * run fails or y - x differs between elements. */
static float added(mica_engine_t *e)
{
    static const float x[4] = {1, 2, 3, 4};
    mica_exec_t *ex = NULL;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    const float *y;
    float a = -1;
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    if (mica_exec_create(e, &ex) != MICA_OK ||
        mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, "y", &desc, (const void **)&y) != MICA_OK) {
        diag("run: %s", err());
    } else {
        a = y[0] - x[0];
        for (i = 1; i < 4; i++)
            if (y[i] - x[i] != a)
                a = -1;
    }
    mica_exec_destroy(ex);
    return a;
}

static void info(mica_engine_t *e, mica_layer_info_t *li)
{
    memset(li, 0, sizeof *li);
    li->struct_size = sizeof *li;
    if (mica_engine_layer(e, 0, li) != MICA_OK)
        bail("layer info: %s", err());
}

/* e through bytes (and its bytes kept for crafting). */
static mica_engine_t *reload(mica_engine_t *e, unsigned char **bytes,
                             size_t *size)
{
    mica_engine_t *back = NULL;
    if (mica_engine_serialize(e, (void **)bytes, size) != MICA_OK ||
        mica_engine_deserialize(ctx, *bytes, *size, &back) != MICA_OK)
        bail("reload: %s", err());
    return back;
}

static void test_pinned(void)
{
    mica_engine_t *e = build("reference", 0), *back;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    unsigned char *bytes;
    size_t size;
    craft_map_t map;
    size_t at;
    int loaded, swept;

    info(e, &li);
    is_int(2, li.tactic, "without autotuning: the first tactic offered");
    ok(added(e) == 2, "  an execution context's clone runs it (x + 2)");
    mica_engine_destroy(e);

    e = build("reference", 1);
    info(e, &li);
    is_int(1, li.tactic, "autotuned: the fastest tactic");
    contains(li.choice, "pinned by the layer; the fastest tactic measured: "
             "tactic 2 ", "  the choice says so, with the times");
    contains(li.choice, ", tactic 1 ", "  of both tactics");
    ok(added(e) == 1, "  and the clone runs it (x + 1)");
    back = reload(e, &bytes, &size);
    info(back, &li);
    is_int(1, li.tactic, "loaded: the saved tactic");
    ok(added(back) == 1 && added(back) == 1, "  told to the loaded instance "
       "and to each context's clone (x + 1, twice)");
    mica_engine_destroy(back);
    swept = craft_sweep(ctx, bytes, size, &loaded);
    ok(swept, "  each of its %zu bytes "
       "changed behind a valid checksum: an engine or one line (%d loaded)",
       size - CRAFT_HEADER, loaded);

    /* A tactic the layer does not have, behind a valid checksum. */
    if (craft_map(bytes, size, &map) != 0)
        bail("the engine does not walk");
    at = map.layer_flags[0] + 4;                 /* why */
    at += 4 + craft_get_u32(bytes, at) + 8;      /* construct, branch */
    craft_put_u32(bytes, at, 7);
    craft_reseal(bytes, size);
    ok(mica_engine_deserialize(ctx, bytes, size, &back) != MICA_OK && !back,
       "an engine file choosing tactic 7: refused");
    contains(err(), "layer 'add' (TacticAdd): tactic 7: TacticAdd has "
             "tactics 1 and 2, not 7", "  with the layer's own words");
    mica_free(bytes);
    mica_engine_destroy(e);
}

static void test_implementations(void)
{
    mica_engine_t *e = build(NULL, 0), *back;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    unsigned char *bytes;
    size_t size;

    info(e, &li);
    ok(strcmp(li.implementation, "plain") == 0 && li.tactic == 0,
       "unpinned, without autotuning: the highest priority, no tactic");
    ok(added(e) == 100, "  (x + 100)");
    mica_engine_destroy(e);

    e = build(NULL, 1);
    info(e, &li);
    ok(strcmp(li.implementation, "reference") == 0 && li.tactic == 1,
       "autotuned: the fastest implementation and tactic across both");
    contains(li.choice, "the fastest measured: plain ", "  the choice "
             "names the implementation without tactics");
    contains(li.choice, "reference tactic 2 ", "  and each tactic of the "
             "other");
    contains(li.choice, "reference tactic 1 ", "  (both)");
    ok(added(e) == 1, "  (x + 1)");
    back = reload(e, &bytes, &size);
    info(back, &li);
    ok(strcmp(li.implementation, "reference") == 0 && li.tactic == 1 &&
       added(back) == 1, "loaded: the same implementation and tactic");
    mica_engine_destroy(back);
    /* A deploy-time choice swaps the implementation: its own default. */
    if (mica_context_set_prefer(ctx, "TacticAdd=plain") != MICA_OK ||
        mica_engine_deserialize(ctx, bytes, size, &back) != MICA_OK)
        bail("prefer: %s", err());
    info(back, &li);
    ok(strcmp(li.implementation, "plain") == 0 && li.tactic == 0 &&
       added(back) == 100, "loaded with another implementation preferred: "
       "that one, without the saved tactic");
    mica_engine_destroy(back);
    mica_context_set_prefer(ctx, NULL);
    mica_free(bytes);
    mica_engine_destroy(e);
}

/* The file's text, NULL if it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = calloc(1, (size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        bail("cannot write %s", path);
}

/* The timing cache (core/timing_cache.c): written by a tuned build, its
 * result taken without timing by the next, garbage skipped. */
static void test_timing_cache(void)
{
    char path[] = "/tmp/mica-tcache-XXXXXX";
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    mica_engine_t *e;
    char *text, *p;
    int fd = mkstemp(path);

    if (fd < 0)
        bail("mkstemp");
    close(fd);
    remove(path); /* a cache that does not exist yet */
    cache_file = path;
    e = build("reference", 1);
    info(e, &li);
    is_int(1, li.tactic, "timing cache: the first build times (tactic 1)");
    mica_engine_destroy(e);
    text = slurp(path);
    ok(text && strncmp(text, "mica timing cache 1\n", 20) == 0 &&
       strstr(text, " 1 ") && strstr(text, " reference tactic 2 "),
       "  and writes the file: header, one entry, the times");
    /* Tactic 2 as the cached winner: taken without timing. */
    if (!text || !(p = strstr(text, "\n")) || !(p = strchr(p + 1, ' ')))
        bail("cache file: %s", text ? text : "(none)");
    p[1] = '2';
    spit(path, text);
    free(text);
    e = build("reference", 1);
    info(e, &li);
    is_int(2, li.tactic, "  a second build takes the cached tactic (2)");
    contains(li.choice, "(timing cache)", "  and says where it came from");
    ok(added(e) == 2, "  and runs it (x + 2)");
    mica_engine_destroy(e);
    e = build("reference", -1);
    info(e, &li);
    is_int(2, li.tactic, "  without autotuning: the first tactic, no cache");
    mica_engine_destroy(e);
    /* Garbage: skipped, timed again, the file rewritten. */
    spit(path, "mica timing cache 1\nzz 1 2 reference\n"
               "0123456789abcdef0123456789abcdef -3 1 x y\n"
               "0123456789abcdef0123456789abcdef 1 1 bad/impl y\n");
    e = build("reference", 1);
    info(e, &li);
    is_int(1, li.tactic, "  lines that are not entries are skipped: timed");
    mica_engine_destroy(e);
    text = slurp(path);
    ok(text && !strstr(text, "bad/impl") && strstr(text, " reference "),
       "  and the file rewritten with the new entry alone");
    free(text);
    spit(path, "not a cache\n");
    e = build("reference", 1);
    ok(e != NULL, "  a file that is not a cache: ignored (warned), built");
    mica_engine_destroy(e);
    remove(path);
    cache_file = "/nonexistent-dir/cache";
    e = build("reference", 1);
    ok(e != NULL, "  a cache that cannot be written costs no engine");
    mica_engine_destroy(e);
    cache_file = NULL;
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(11 + 9 + 10);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/abi2/.libs/abi2.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
    test_pinned();
    test_implementations();
    test_timing_cache();
    return 0;
}
