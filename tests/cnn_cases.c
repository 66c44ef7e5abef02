/*
 * tests/cnn_cases.c - the generated cases of tests/gen/ through the
 * harness (see cnn_cases.h).
 */
#include <config.h>

#include "cnn_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

th_fields_t *gc_fields(const gen_case_t *c)
{
    th_fields_t *f = th_fields();
    int i;

    for (i = 0; i < c->nb_fields; i++) {
        const gen_field_t *g = &c->fields[i];
        switch (g->kind) {
        case GEN_INTS: th_f_ints(f, g->name, g->n, g->ints); break;
        case GEN_INT: th_f_int(f, g->name, (int64_t)g->f); break;
        case GEN_FLOAT: th_f_float(f, g->name, g->f); break;
        case GEN_BOOL: th_f_bool(f, g->name, g->f != 0); break;
        case GEN_STR: th_f_str(f, g->name, g->s); break;
        case GEN_WEIGHTS: {
            th_tensor_t w = th_tensor(MICA_FLOAT32, g->n, g->ints, NULL);
            int64_t k;
            for (k = 0; k < th_volume(&w); k++)
                th_set(&w, k, g->w[k]);
            th_f_weights(f, g->name, &w);
            th_free(&w);
            break;
        }
        default: bail("gen case '%s': bad field kind %d", c->label, g->kind);
        }
    }
    return f;
}

static th_tensor_t from(int rank, const int64_t *dims, const float *v,
                        mica_dtype_t dtype)
{
    th_tensor_t t = th_tensor(dtype, rank, dims, NULL);
    int64_t k;
    for (k = 0; k < th_volume(&t); k++)
        th_set(&t, k, v[k]);
    return t;
}

th_tensor_t gc_x(const gen_case_t *c, mica_dtype_t dtype)
{
    return from(c->x_rank, c->x_dims, c->x, dtype);
}

th_tensor_t gc_y(const gen_case_t *c, mica_dtype_t dtype)
{
    return from(c->y_rank, c->y_dims, c->y, dtype);
}

/* Each "device:name" of impls against the reference. */
static void each_impl(const char *label, const gen_case_t *c,
                      const th_tensor_t *x, const char *const *impls,
                      double tol)
{
    int i;
    for (i = 0; impls && impls[i]; i++) {
        const char *colon = strchr(impls[i], ':');
        uint32_t dev = strncmp(impls[i], "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                          : MICA_DEVICE_CPU;
        th_check_impl(label, c->type, gc_fields(c), 1, x, 1, dev,
                      colon ? colon + 1 : impls[i], tol);
    }
}

void gc_run(const gen_case_t *c, const char *const *impls, double tol,
            double tol16)
{
    char label[256];
    th_tensor_t x, y;

    th_pin("reference", NULL);
    x = gc_x(c, MICA_FLOAT32);
    y = gc_y(c, MICA_FLOAT32);
    snprintf(label, sizeof label, "%s %s", c->type, c->label);
    th_check(label, c->type, gc_fields(c), 1, &x, 1, &y, 1e-5);
    each_impl(label, c, &x, impls, tol);
    th_free(&x);
    th_free(&y);

    x = gc_x(c, MICA_FLOAT16);
    y = gc_y(c, MICA_FLOAT16);
    snprintf(label, sizeof label, "%s %s, float16", c->type, c->label);
    th_check(label, c->type, gc_fields(c), 1, &x, 1, &y, 2e-3);
    each_impl(label, c, &x, impls, tol16);
    th_free(&x);
    th_free(&y);
    th_pin(NULL, NULL);
}

void gc_dynamic(const gen_case_t *c, int fixed, const int *spatial,
                int nb_spatial, const char *const *impls, double tol)
{
    int64_t lo[MICA_MAX_DIMS], hi[MICA_MAX_DIMS];
    char label[256];
    th_tensor_t x, y;
    int i;

    for (i = 0; i < c->x_rank; i++) {
        lo[i] = hi[i] = c->x_dims[i];
        if (i < c->x_rank - fixed) {
            lo[i] = 1;
            hi[i] = 2 * c->x_dims[i];
        }
        if (c->x_dims[i] == 0)
            return;
    }
    for (i = 0; i < nb_spatial; i++)
        hi[c->x_rank - 1 - spatial[i]] *= 2;
    th_pin("reference", NULL);
    th_dynamic(0, c->x_rank, lo, hi);
    x = gc_x(c, MICA_FLOAT32);
    y = gc_y(c, MICA_FLOAT32);
    snprintf(label, sizeof label, "%s %s, runtime dims", c->type, c->label);
    th_check(label, c->type, gc_fields(c), 1, &x, 1, &y, 1e-5);
    each_impl(label, c, &x, impls, tol);
    th_free(&x);
    th_free(&y);
    th_dynamic(-1, 0, NULL, NULL);
    th_pin(NULL, NULL);
}

/* A tensor of eighths in [-1, 1] in a fixed pattern. */
static th_tensor_t pattern(mica_dtype_t dtype, int rank, const int64_t *dims)
{
    th_tensor_t t = th_tensor(dtype, rank, dims, NULL);
    int64_t k;
    for (k = 0; k < th_volume(&t); k++)
        th_set(&t, k, (double)((k * 5 + 3) % 17 - 8) / 8);
    return t;
}

/* Whether impl exists and device is usable; else one skip per result. */
static int usable(const char *label, const char *type, uint32_t device,
                  const char *impl, int results)
{
    const char *why = NULL;
    if (device == MICA_DEVICE_CUDA && !th_cuda())
        why = "no usable GPU";
    else if (!th_has_impl(type, device, impl))
        why = "not in this build";
    if (why)
        skip_block(results, "%s: %s: %s", label, impl, why);
    return why == NULL;
}

/* What the next builds add to their config (gc_every_tactic): float16
 * allowed, a timing cache. */
static int build_half;
static const char *build_cache;

/* Build the one-layer network of input in0 (dims d, -1 where lo and hi
 * differ) into an engine on device with impl pinned. */
static mica_status_t build(const char *type, th_fields_t *fields,
                           uint32_t device, const char *impl, int rank,
                           const int64_t *lo, const int64_t *opt,
                           const int64_t *hi, int autotune,
                           mica_engine_t **engine)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    mica_dims_t d, l, o, h;
    const char *in_names[1] = {"in0"}, *out_names[1] = {"out0"};
    int32_t profile;
    mica_status_t st;
    int i, dynamic = 0;

    memset(&d, 0, sizeof d);
    d.nb_dims = rank;
    l = o = h = d;
    for (i = 0; i < rank; i++) {
        l.d[i] = lo[i];
        o.d[i] = opt[i];
        h.d[i] = hi[i];
        d.d[i] = lo[i] == hi[i] ? lo[i] : -1;
        dynamic |= lo[i] != hi[i];
    }
    if ((st = mica_network_create(ctx, &net)) != MICA_OK ||
        (st = mica_network_add_input(net, "in0", MICA_FLOAT32, &d, NULL)) !=
            MICA_OK)
        goto done;
    if (dynamic &&
        ((st = mica_network_add_profile(net, &profile)) != MICA_OK ||
         (st = mica_network_set_profile_dims(net, profile, "in0", &l, &o, &h,
                                             NULL)) != MICA_OK))
        goto done;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "layer";
    spec.type = type;
    spec.implementation = impl;
    spec.nb_inputs = 1;
    spec.inputs = in_names;
    spec.nb_outputs = 1;
    spec.outputs = out_names;
    spec.fields = th_fields_view(fields);
    if ((st = mica_network_add_layer(net, &spec)) != MICA_OK ||
        (st = mica_network_mark_output(net, "out0", NULL)) != MICA_OK)
        goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.autotune = autotune;
    cfg.timing_cache = build_cache;
    if (build_half)
        cfg.precisions = 1u << MICA_FLOAT16;
    st = mica_engine_build(net, &cfg, engine);
done:
    if (st != MICA_OK)
        diag("%s", mica_context_error(ctx));
    mica_network_destroy(net);
    return st;
}

/* Run x through engine into *y (allocated). */
static mica_status_t run_engine(mica_engine_t *engine, mica_exec_t *exec,
                                const th_tensor_t *x, th_tensor_t *y)
{
    mica_tensor_desc_t d;
    const void *data;
    mica_status_t st;
    (void)engine;

    if ((st = mica_exec_set_input(exec, "in0", &x->dims, x->data)) !=
            MICA_OK ||
        (st = mica_exec_run(exec)) != MICA_OK ||
        (st = mica_exec_get_output(exec, "out0", &d, &data)) != MICA_OK) {
        diag("%s", mica_context_error(th_context()));
        return st;
    }
    *y = th_tensor(d.dtype, d.dims.nb_dims, d.dims.d, NULL);
    memcpy(y->data, data, (size_t)th_volume(y) * mica_dtype_size(d.dtype));
    return MICA_OK;
}

/* The reference's output for x, static shapes; MICA_OK or a diag. */
static mica_status_t reference(const char *type, th_fields_t *fields,
                               const th_tensor_t *x, th_tensor_t *y)
{
    mica_status_t st;
    th_pin("reference", NULL);
    st = th_run(MICA_DEVICE_CPU, type, fields, 1, x, 1, y);
    th_pin(NULL, NULL);
    if (st != MICA_OK)
        diag("reference: %s", th_error());
    return st;
}

void gc_shapes(const char *label, const char *type,
               th_fields_t *(*fields)(void), uint32_t device,
               const char *impl, int rank, const int64_t *lo,
               const int64_t *hi, int nb,
               const int64_t (*shapes)[MICA_MAX_DIMS], double tol)
{
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    th_fields_t *f;
    char why[512];
    int s;

    if (!usable(label, type, device, impl, nb))
        return;
    f = fields();
    if (build(type, f, device, impl, rank, lo, shapes[0], hi, 0, &engine) !=
            MICA_OK ||
        mica_exec_create(engine, &exec) != MICA_OK) {
        for (s = 0; s < nb; s++)
            ok(0, "%s: %s: shape %d (no engine)", label, impl, s);
        goto done;
    }
    for (s = 0; s < nb; s++) {
        th_tensor_t x = pattern(MICA_FLOAT32, rank, shapes[s]), y, want;
        th_fields_t *rf = fields();
        int good = reference(type, rf, &x, &want) == MICA_OK;
        if (good && run_engine(engine, exec, &x, &y) != MICA_OK) {
            good = 0;
            th_free(&want);
        } else if (good) {
            good = th_same(&want, &y, tol, tol, why, sizeof why);
            if (!good)
                diag("%s: %s", label, why);
            th_free(&want);
            th_free(&y);
        }
        ok(good, "%s: %s: shape %d of %d", label, impl, s + 1, nb);
        th_fields_free(rf);
        th_free(&x);
    }
done:
    mica_exec_destroy(exec);
    mica_engine_destroy(engine);
    th_fields_free(f);
}

/* The info of the engine's layer "layer" into *info; 0 if none. */
static int layer_info(const mica_engine_t *engine, mica_layer_info_t *info)
{
    int32_t i;

    for (i = 0; i < mica_engine_nb_layers(engine); i++) {
        memset(info, 0, sizeof *info);
        info->struct_size = sizeof *info;
        if (mica_engine_layer(engine, i, info) == MICA_OK &&
            strcmp(info->name, "layer") == 0)
            return 1;
    }
    return 0;
}

/* The tactic of the engine's layer "layer" (0: none; -1: no such
 * layer). */
static int32_t layer_tactic(const mica_engine_t *engine)
{
    mica_layer_info_t info;
    return layer_info(engine, &info) ? info.tactic : -1;
}

void gc_roundtrip(const char *label, const char *type, th_fields_t *fields,
                  const th_tensor_t *x, uint32_t device, const char *impl,
                  double tol)
{
    mica_engine_t *engine = NULL, *loaded = NULL;
    mica_exec_t *exec = NULL;
    th_tensor_t y, want;
    void *bytes = NULL;
    size_t size = 0;
    char why[512];
    int good = 0;

    if (!usable(label, type, device, impl, 1)) {
        th_fields_free(fields);
        return;
    }
    if (reference(type, fields, x, &want) != MICA_OK)
        goto done;
    if (build(type, fields, device, impl, x->dims.nb_dims, x->dims.d,
              x->dims.d, x->dims.d, 0, &engine) != MICA_OK ||
        mica_engine_serialize(engine, &bytes, &size) != MICA_OK ||
        mica_engine_deserialize(th_context(), bytes, size, &loaded) !=
            MICA_OK ||
        mica_exec_create(loaded, &exec) != MICA_OK) {
        diag("%s", mica_context_error(th_context()));
        th_free(&want);
        goto done;
    }
    if (run_engine(loaded, exec, x, &y) == MICA_OK) {
        good = th_same(&want, &y, tol, tol, why, sizeof why);
        if (!good)
            diag("%s: %s", label, why);
        th_free(&y);
    }
    th_free(&want);
    /* The tactic is the engine's: kept by the file, told to the loaded
     * instance (cuDNN's implementations always have one). */
    if (layer_tactic(engine) != layer_tactic(loaded) ||
        (strcmp(impl, "cudnn") == 0 && layer_tactic(engine) <= 0)) {
        diag("%s: tactic %d built, %d loaded", label,
             (int)layer_tactic(engine), (int)layer_tactic(loaded));
        good = 0;
    }
done:
    ok(good, "%s: %s: saved and loaded", label, impl);
    mica_free(bytes);
    mica_exec_destroy(exec);
    mica_engine_destroy(loaded);
    mica_engine_destroy(engine);
    th_fields_free(fields);
}

/* The implementation of the engine's one layer and why, into buf. */
static const char *layer_impl(const mica_engine_t *engine, char *why,
                              size_t len)
{
    mica_layer_info_t info;

    if (layer_info(engine, &info)) {
        snprintf(why, len, "%s", info.choice ? info.choice : "");
        return info.implementation;
    }
    snprintf(why, len, "no layer 'layer'");
    return "";
}

void gc_autotune(const char *label, const char *type, th_fields_t *fields,
                 const th_tensor_t *x, double tol)
{
    mica_engine_t *engine = NULL, *loaded = NULL;
    mica_exec_t *exec = NULL;
    th_tensor_t y, want;
    char why[512], why2[512], chosen[64];
    void *bytes = NULL;
    size_t size = 0;
    int good = 0;

    if (!th_cuda()) {
        skip("%s: autotune: no usable GPU", label);
        th_fields_free(fields);
        return;
    }
    if (reference(type, fields, x, &want) != MICA_OK)
        goto done;
    if (build(type, fields, MICA_DEVICE_CUDA, NULL, x->dims.nb_dims,
              x->dims.d, x->dims.d, x->dims.d, 1, &engine) != MICA_OK ||
        mica_engine_serialize(engine, &bytes, &size) != MICA_OK ||
        mica_engine_deserialize(th_context(), bytes, size, &loaded) !=
            MICA_OK ||
        mica_exec_create(loaded, &exec) != MICA_OK) {
        diag("%s", mica_context_error(th_context()));
        th_free(&want);
        goto done;
    }
    snprintf(chosen, sizeof chosen, "%s", layer_impl(engine, why, sizeof why));
    /* Both CUDA implementations timed, cuDNN's by tactic, the winner and
     * its tactic kept by the engine. */
    good = strstr(why, "the fastest measured") && strstr(why, "cuda ") &&
           strstr(why, "cudnn tactic ") &&
           strcmp(chosen, layer_impl(loaded, why2, sizeof why2)) == 0 &&
           layer_tactic(engine) == layer_tactic(loaded) &&
           (strcmp(chosen, "cudnn") != 0 || layer_tactic(engine) > 0);
    if (!good)
        diag("%s: built with '%s' tactic %d (%s), loaded with '%s' tactic "
             "%d (%s)", label, chosen, (int)layer_tactic(engine), why,
             layer_impl(loaded, why2, sizeof why2),
             (int)layer_tactic(loaded), why2);
    if (run_engine(loaded, exec, x, &y) == MICA_OK) {
        if (!th_same(&want, &y, tol, tol, why, sizeof why)) {
            diag("%s: %s", label, why);
            good = 0;
        }
        th_free(&y);
    } else {
        good = 0;
    }
    th_free(&want);
done:
    ok(good, "%s: autotune chose among cuda and cudnn, the engine kept it",
       label);
    mica_free(bytes);
    mica_exec_destroy(exec);
    mica_engine_destroy(loaded);
    mica_engine_destroy(engine);
    th_fields_free(fields);
}

/* The ids of "tactic N" in an autotune choice, up to max; how many. */
static int tactics_in(const char *why, int32_t *ids, int max)
{
    const char *p = why;
    int n = 0;
    while (n < max && (p = strstr(p, "tactic ")) != NULL) {
        long v = strtol(p + 7, NULL, 10);
        int i, dup = 0;
        p += 7;
        for (i = 0; i < n; i++)
            dup |= ids[i] == v;
        if (v > 0 && !dup)
            ids[n++] = (int32_t)v;
    }
    return n;
}

/* In the cache file, the tactic of the entry whose implementation is
 * cudnn (KEY TACTIC TIME IMPL ...) replaced by t; 0 if there is none. */
static int force_tactic(const char *path, int32_t t)
{
    char text[1 << 16], out[1 << 16], *line, *save = NULL;
    size_t n, pos = 0;
    FILE *f = fopen(path, "r");
    int done = 0;

    if (!f)
        return 0;
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char key[64], impl[64], rest[4096] = "";
        long tac;
        double us;
        if (sscanf(line, "%63s %ld %lf %63s %4095[^\n]", key, &tac, &us, impl,
                   rest) >= 4 &&
            strcmp(impl, "cudnn") == 0) {
            pos += (size_t)snprintf(out + pos, sizeof out - pos,
                                    "%s %d %.3f %s %s\n", key, (int)t, us,
                                    impl, rest);
            done = 1;
        } else {
            pos += (size_t)snprintf(out + pos, sizeof out - pos, "%s\n",
                                    line);
        }
        if (pos >= sizeof out)
            return 0;
    }
    if (!done || !(f = fopen(path, "w")))
        return 0;
    fputs(out, f);
    return fclose(f) == 0;
}

void gc_every_tactic(const char *label, const char *type,
                     th_fields_t *fields, const th_tensor_t *x, int half,
                     double tol)
{
    char path[] = "/tmp/mica-tactics-XXXXXX", why[4096], diff[512];
    mica_engine_t *engine = NULL;
    int32_t ids[MICA_MAX_TACTICS];
    int n = 0, i, good = 0, graph = 0, fd;
    th_tensor_t want;

    why[0] = '\0';
    if (!usable(label, type, MICA_DEVICE_CUDA, "cudnn", 1)) {
        th_fields_free(fields);
        return;
    }
    if ((fd = mkstemp(path)) < 0)
        bail("mkstemp");
    close(fd);
    remove(path);
    build_half = half;
    build_cache = path;
    if (reference(type, fields, x, &want) != MICA_OK)
        goto done;
    if (build(type, fields, MICA_DEVICE_CUDA, "cudnn", x->dims.nb_dims,
              x->dims.d, x->dims.d, x->dims.d, 1, &engine) == MICA_OK) {
        layer_impl(engine, why, sizeof why);
        n = tactics_in(why, ids, MICA_MAX_TACTICS);
    }
    mica_engine_destroy(engine);
    engine = NULL;
    good = n > 0;
    for (i = 0; i < n && good; i++) {
        mica_exec_t *exec = NULL;
        th_tensor_t y;
        graph += ids[i] >= 0x40000000;
        good = force_tactic(path, ids[i]) &&
               build(type, fields, MICA_DEVICE_CUDA, "cudnn",
                     x->dims.nb_dims, x->dims.d, x->dims.d, x->dims.d, 1,
                     &engine) == MICA_OK &&
               layer_tactic(engine) == ids[i] &&
               mica_exec_create(engine, &exec) == MICA_OK &&
               run_engine(engine, exec, x, &y) == MICA_OK;
        if (good) {
            good = th_same(&want, &y, tol, tol, diff, sizeof diff);
            th_free(&y);
        }
        if (!good)
            diag("%s: tactic %d (built with %d): %s", label, (int)ids[i],
                 engine ? (int)layer_tactic(engine) : -1,
                 good ? "" : diff);
        mica_exec_destroy(exec);
        mica_engine_destroy(engine);
        engine = NULL;
    }
    th_free(&want);
done:
    ok(good && graph > 0, "%s: each of the %d tactics timed (%d of cuDNN's "
       "graph API) computes the reference", label, n, graph);
    if (!good || !graph)
        diag("%s: %s", label, why);
    build_half = 0;
    build_cache = NULL;
    remove(path);
    th_fields_free(fields);
}
