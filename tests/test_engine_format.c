/*
 * tests/test_engine_format.c - engine files of every format load and run
 * as the networks they were built from: the checked-in files of format 1
 * (examples/hello.yaml) and format 2 (tests/manifests/control/
 * dynamic_rows.yaml: a loop over a runtime number of rows, shape tensors
 * on the host; examples/dynamic.yaml: two profiles), and what this
 * library writes now.  A loaded engine describes itself (layers,
 * implementations, tensors, shapes, symbols, profiles) as the engine
 * built from the manifest does (one of format 4, restored rather than
 * rebuilt, down to tensor indices and arena placement), and computes the
 * same outputs, bit for bit.  Every manifest of tests/manifests/ that
 * builds is restored exactly too.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

/* Append printf output to a growing string. */
static void say(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char line[1024];
    char *grown;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        bail("vsnprintf");
    grown = realloc(*s, *len + (size_t)n + 1);
    if (!grown)
        bail("out of memory");
    memcpy(grown + *len, line, (size_t)n + 1);
    *s = grown;
    *len += (size_t)n;
}

/* The name of tensor t of e, "~" for none. */
static const char *tname(const mica_engine_t *e, int32_t t)
{
    static mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    memset(&ti, 0, sizeof ti);
    ti.struct_size = sizeof ti;
    return t >= 0 && mica_engine_tensor(e, t, &ti) == MICA_OK ? ti.name
                                                               : "~";
}

/* qsort of lines */
static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tensor lines of description s in name order (an engine of an older
 * format, rebuilt when it loads, numbers its tensors in its own order). */
static char *sort_tensors(char *s)
{
    char **lines = NULL, *out = NULL, *p, *next;
    size_t n = 0, len = 0, i, first = (size_t)-1;

    for (p = s; *p; p = next) {
        next = strchr(p, '\n');
        next = next ? next + 1 : p + strlen(p);
        lines = realloc(lines, sizeof *lines * (n + 1));
        if (!lines)
            bail("out of memory");
        lines[n] = strndup(p, (size_t)(next - p));
        if (strncmp(p, "tensor ", 7) == 0 && first == (size_t)-1)
            first = n;
        n++;
    }
    for (i = first; i < n && strncmp(lines[i], "tensor ", 7) == 0; i++)
        ;
    if (first != (size_t)-1)
        qsort(lines + first, i - first, sizeof *lines, by_text);
    for (i = 0; i < n; i++) {
        say(&out, &len, "%s", lines[i]);
        free(lines[i]);
    }
    free(lines);
    free(s);
    return out;
}

/* Everything an engine says about itself, one line per item; tensors by
 * name, not index, unless `exact`. */
/* Whether describe() leaves out why each implementation was chosen: a
 * restored engine (format 3) keeps the text it was saved with where the
 * deploy-time choice equals its saved implementation, while a build
 * says "the deploy-time choice". */
static int no_choice;

static char *describe(const mica_engine_t *e, int exact)
{
    char *s = NULL;
    size_t len = 0;
    int32_t i, k;

    say(&s, &len, "device %u, %d profiles\n", (unsigned)mica_engine_device(e),
        (int)mica_engine_nb_profiles(e));
    for (i = 0; i < mica_engine_nb_layers(e); i++) {
        mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        if (mica_engine_layer(e, i, &li) != MICA_OK)
            bail("layer %d: %s", (int)i, err());
        say(&s, &len, "layer %s %s v%d %s role %u construct %d branch %d "
            "workspace %lld (%s):", li.name, li.type, (int)li.version,
            li.implementation, (unsigned)li.role, (int)li.construct,
            (int)li.branch, (long long)li.workspace,
            no_choice ? "-" : li.choice);
        for (k = 0; k < li.nb_inputs; k++)
            if (exact)
                say(&s, &len, " %d", (int)li.inputs[k]);
            else
                say(&s, &len, " %s", tname(e, li.inputs[k]));
        say(&s, &len, " ->");
        for (k = 0; k < li.nb_outputs; k++)
            if (exact)
                say(&s, &len, " %d", (int)li.outputs[k]);
            else
                say(&s, &len, " %s", tname(e, li.outputs[k]));
        say(&s, &len, "\n");
    }
    for (i = 0; i < mica_engine_nb_tensors(e); i++) {
        mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (mica_engine_tensor(e, i, &ti) != MICA_OK)
            bail("tensor %d: %s", (int)i, err());
        say(&s, &len, "tensor %s %s %s kind %d in %d out %d shape-out %d "
            "producer %d", ti.name, mica_dtype_name(ti.dtype), ti.shape,
            (int)ti.kind, (int)ti.is_input, (int)ti.is_output,
            (int)ti.is_shape_output, (int)ti.producer);
        if (exact)
            say(&s, &len, " at %lld+%lld", (long long)ti.offset,
                (long long)ti.bytes);
        say(&s, &len, "\n");
    }
    for (i = 0; i < mica_engine_nb_symbols(e); i++) {
        const char *name, *meaning;
        if (mica_engine_symbol(e, i, &name, &meaning) != MICA_OK)
            bail("symbol %d: %s", (int)i, err());
        say(&s, &len, "symbol %s = %s\n", name, meaning);
    }
    for (i = 0; i < mica_engine_nb_constructs(e); i++) {
        mica_construct_info_t ci = {
            .struct_size = sizeof(mica_construct_info_t)};
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        if (mica_engine_construct(e, i, &ci) != MICA_OK)
            bail("construct %d: %s", (int)i, err());
        say(&s, &len, "construct %s kind %u parent %d layers %d-%d branch "
            "%d\n", ci.name, (unsigned)ci.kind, (int)ci.parent,
            (int)ci.first_layer, (int)ci.end_layer, (int)ci.branch);
    }
    for (k = 0; k < (mica_engine_nb_profiles(e) ? mica_engine_nb_profiles(e)
                                                : 1); k++)
        say(&s, &len, "profile %d arena %lld\n", (int)k,
            (long long)mica_engine_profile_arena_bytes(e, k));
    for (i = 0; exact && i < mica_engine_nb_passes(e); i++) {
        mica_pass_info_t pi;
        memset(&pi, 0, sizeof pi);
        pi.struct_size = sizeof pi;
        if (mica_engine_pass(e, i, &pi) != MICA_OK)
            bail("pass %d: %s", (int)i, err());
        say(&s, &len, "pass %s: %s (%lld)\n", pi.name, pi.summary,
            (long long)pi.changed);
    }
    return exact ? s : sort_tensors(s);
}

/* The first line where a and b differ, as a diagnostic. */
static void show_difference(const char *a, const char *b)
{
    while (*a && *a == *b) {
        const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');
        if (!na || !nb || na - a != nb - b ||
            memcmp(a, b, (size_t)(na - a)) != 0)
            break;
        a = na + 1;
        b = nb + 1;
    }
    diag("built:  %.*s", (int)strcspn(a, "\n"), a);
    diag("loaded: %.*s", (int)strcspn(b, "\n"), b);
}

/* Run e with x given n rows of 3 (n 0: no input); outputs into a string. */
static char *outputs(mica_engine_t *e, int64_t n)
{
    mica_exec_t *x = NULL;
    float in[3 * 32];
    mica_dims_t d;
    char *s = NULL;
    size_t len = 0;
    int32_t i, t;
    int64_t k;

    for (k = 0; k < 3 * 32; k++)
        in[k] = (float)((k * 7) % 11) - 4.5f;
    if (mica_exec_create(e, &x) != MICA_OK)
        bail("exec: %s", err());
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = n;
    d.d[1] = 3;
    if (n && mica_exec_set_input(x, "x", &d, in) != MICA_OK)
        bail("input: %s", err());
    if (mica_exec_run(x) != MICA_OK) {
        say(&s, &len, "run failed: %s", err());
        mica_exec_destroy(x);
        return s;
    }
    for (i = 0; i < mica_engine_nb_outputs(e); i++) {
        mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
        mica_tensor_desc_t desc;
        const void *data;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        t = mica_engine_output(e, i);
        if (mica_engine_tensor(e, t, &ti) != MICA_OK ||
            mica_exec_get_output(x, ti.name, &desc, &data) != MICA_OK)
            bail("output %d: %s", (int)i, err());
        say(&s, &len, "%s %s [", ti.name, mica_dtype_name(desc.dtype));
        for (k = 0; k < desc.dims.nb_dims; k++)
            say(&s, &len, "%s%lld", k ? ", " : "", (long long)desc.dims.d[k]);
        say(&s, &len, "]:");
        for (k = 0; k < mica_dims_volume(&desc.dims); k++)
            say(&s, &len, " %a", (double)((const float *)data)[k]);
        say(&s, &len, "\n");
    }
    mica_exec_destroy(x);
    return s;
}

/* The engine of `manifest` on the CPU, with the graph passes `passes`
 * (NULL: every one). */
static mica_engine_t *build_with(const char *manifest, const char *passes)
{
    mica_manifest_t *m = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;

    if (mica_manifest_load(ctx, manifest, &m) != MICA_OK)
        bail("%s: %s", manifest, err());
    cfg = *mica_manifest_config(m);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.passes = passes;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK)
        bail("%s: %s", manifest, err());
    mica_manifest_destroy(m);
    return e;
}

static mica_engine_t *build(const char *manifest)
{
    return build_with(manifest, NULL);
}

/* Loaded engine b against built engine a: description (exact: tensor
 * indices and arena placement too), then outputs for each of the nb row
 * counts of rows (a count of 0: no inputs). */
static void compare(const char *what, mica_engine_t *a, mica_engine_t *b,
                    int exact, const int64_t *rows, int nb)
{
    char *da = describe(a, exact), *db = describe(b, exact);
    int same = strcmp(da, db) == 0;
    int i;

    ok(same, "%s: describes itself as the built engine does", what);
    if (!same)
        show_difference(da, db);
    free(da);
    free(db);
    for (i = 0; i < nb; i++) {
        char *oa = outputs(a, rows[i]), *ob = outputs(b, rows[i]);
        same = strcmp(oa, ob) == 0 && !strstr(oa, "run failed");
        ok(same, "%s: %lld rows: the outputs of the built engine", what,
           (long long)rows[i]);
        if (!same)
            show_difference(oa, ob);
        free(oa);
        free(ob);
    }
}

/* A checked-in file of an older format against its manifest. */
static void old_file(const char *file, const char *manifest,
                     const int64_t *rows, int nb_runs)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    char path[4096], mpath[4096];
    mica_engine_t *built, *loaded = NULL;

    if (!top) {
        skip_block(2 + nb_runs, "MICA_TOP_SRCDIR not set");
        return;
    }
    snprintf(path, sizeof path, "%s/tests/engines/%s", top, file);
    snprintf(mpath, sizeof mpath, "%s/%s", top, manifest);
    /* The files were built when the reference was the CPU's only
     * implementation of these types: the built engine and the loaded one
     * take it alike, by a deploy-time choice (which replaces a loaded
     * engine's); and before graph passes existed: the manifest is built
     * without. */
    if (mica_context_set_prefer(ctx, "ElementWise=reference,"
                                "Activation=reference,Unary=reference,"
                                "Scale=reference,Identity=reference,"
                                "Reduce=reference,Select=reference,"
                                "ParametricReLU=reference,"
                                "RNNv2=reference,Shuffle=reference,"
                                "Resize=reference,SoftMax=reference,"
                                "Slice=reference") !=
        MICA_OK)
        bail("prefer: %s", err());
    built = build_with(mpath, "none");
    ok(mica_engine_load(ctx, path, &loaded) == MICA_OK, "%s loads", file);
    if (!loaded) {
        diag("%s", err());
        skip_block(1 + nb_runs, "not loaded");
    } else {
        no_choice = strstr(file, "-v3.") != NULL;
        compare(file, built, loaded, 0, rows, nb_runs);
        no_choice = 0;
    }
    mica_engine_destroy(loaded);
    mica_engine_destroy(built);
    mica_context_set_prefer(ctx, NULL);
}

/* What this library writes, read back. */
static void new_file(const char *manifest, const int64_t *rows, int nb_runs)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    char mpath[4096];
    mica_engine_t *built, *loaded = NULL;
    void *data = NULL;
    size_t size = 0;
    uint32_t format = 0;

    if (!top) {
        skip_block(3 + nb_runs, "MICA_TOP_SRCDIR not set");
        return;
    }
    snprintf(mpath, sizeof mpath, "%s/%s", top, manifest);
    built = build(mpath);
    if (mica_engine_serialize(built, &data, &size) != MICA_OK)
        bail("serialize: %s", err());
    memcpy(&format, (const char *)data + 8, 4);
    is_int(4, format, "%s: written in format 4", manifest);
    ok(mica_engine_deserialize(ctx, data, size, &loaded) == MICA_OK,
       "%s: read back", manifest);
    if (!loaded) {
        diag("%s", err());
        skip_block(1 + nb_runs, "not loaded");
    } else {
        compare(manifest, built, loaded, 1, rows, nb_runs);
    }
    mica_free(data);
    mica_engine_destroy(loaded);
    mica_engine_destroy(built);
}

/* Every manifest of the tree that builds: its engine through bytes
 * describes itself exactly as it did. */
static void every_manifest(void)
{
    static const char *const manifests[] = {
        "control/cond_in_cond.yaml", "control/for_loop.yaml",
        "control/iterate.yaml", "control/lstm.yaml",
        "control/nested_loop.yaml", "control/select_like.yaml",
        "control/simple_if.yaml", "control/sum_even.yaml",
        "control/while_loop.yaml", "dynamic/batch.yaml",
        "dynamic/classify.yaml", "dynamic/empty_concat.yaml",
        "dynamic/empty_reduce.yaml", "dynamic/empty_shuffle.yaml",
        "dynamic/empty_slice.yaml", "dynamic/fill.yaml",
        "dynamic/reshape_like.yaml", "dynamic/shape_input.yaml",
        "dynamic/slice_shape.yaml", "dynamic/two_profiles.yaml",
        "rnn/lstm_loop.yaml", "transformer/encoder.yaml"};
    const char *top = getenv("MICA_TOP_SRCDIR");
    char path[4096];
    size_t i;

    for (i = 0; i < sizeof manifests / sizeof manifests[0]; i++) {
        mica_engine_t *built, *loaded = NULL;
        void *data = NULL;
        size_t size = 0;
        char *da, *db;
        int same;
        if (!top) {
            skip_block(1, "MICA_TOP_SRCDIR not set");
            continue;
        }
        snprintf(path, sizeof path, "%s/tests/manifests/%s", top,
                 manifests[i]);
        built = build(path);
        if (mica_engine_serialize(built, &data, &size) != MICA_OK ||
            mica_engine_deserialize(ctx, data, size, &loaded) != MICA_OK)
            diag("%s: %s", manifests[i], err());
        da = describe(built, 1);
        db = loaded ? describe(loaded, 1) : NULL;
        same = db && strcmp(da, db) == 0;
        ok(same, "%s: restored exactly", manifests[i]);
        if (db && !same)
            show_difference(da, db);
        free(da);
        free(db);
        mica_free(data);
        mica_engine_destroy(loaded);
        mica_engine_destroy(built);
    }
}

int main(void)
{
    static const int64_t none[] = {0};
    static const int64_t rows[] = {1, 3, 8};
    static const int64_t batch[] = {1, 5, 8, 9, 31};

    plan(3 + 5 + 7 + 5 + 4 + 6 + 8 + 22);
    ctx = th_context();
    old_file("hello-v1.engine", "examples/hello.yaml", none, 1);
    old_file("rows-v2.engine", "tests/manifests/control/dynamic_rows.yaml",
             rows, 3);
    old_file("dynamic-v2.engine", "examples/dynamic.yaml", batch, 5);
    old_file("rows-v3.engine", "tests/manifests/control/dynamic_rows.yaml",
             rows, 3);
    new_file("examples/hello.yaml", none, 1);
    new_file("tests/manifests/control/dynamic_rows.yaml", rows, 3);
    new_file("examples/dynamic.yaml", batch, 5);
    every_manifest();
    return 0;
}
