/*
 * tests/test_engine_load.c - loading engines without copying them: what
 * creators are told about the state bytes (MICA_STATE_PERSISTENT only
 * when the bytes outlive the engine; deserialize for a creator built
 * before deserialize_ex), states and weights at multiples of 64 bytes in
 * the file, weights used in place, a loaded file that outlives its name,
 * an engine file of format 1, and the refusals of mica_engine_load.
 *
 * The network: Probe -> p, ProbeOld -> q (tests/probe/probe.c: int64 [3]
 * = flags, state address, which call made it), Constant -> c (64 floats).
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

enum { NC = 64 };

static mica_context_t *ctx;
static float weights[NC];

typedef struct outs {
    int64_t p[3], q[3];
    float c[NC];
} outs_t;

static const char *err(void)
{
    return mica_context_error(ctx);
}

static void add(mica_network_t *net, const char *name, const char *type,
                const char *out, const mica_fields_t *fields)
{
    mica_layer_spec_t spec;
    const char *outs[1];

    outs[0] = out;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = fields;
    if (mica_network_add_layer(net, &spec) != MICA_OK ||
        mica_network_mark_output(net, out, NULL) != MICA_OK)
        bail("%s: %s", name, err());
}

static mica_engine_t *build(void)
{
    mica_network_t *net = NULL;
    mica_weights_t wt;
    mica_field_t f = {"weights", MICA_FIELD_WEIGHTS, 1, &wt};
    mica_fields_t fields = {1, &f};
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    int i;

    for (i = 0; i < NC; i++)
        weights[i] = 0.25f * (float)i - 3.0f;
    memset(&wt, 0, sizeof wt);
    wt.dtype = MICA_FLOAT32;
    wt.count = NC;
    wt.values = weights;
    wt.dims.nb_dims = 1;
    wt.dims.d[0] = NC;
    if (mica_network_create(ctx, &net) != MICA_OK)
        bail("network: %s", err());
    add(net, "probe", "Probe", "p", NULL);
    add(net, "probe_old", "ProbeOld", "q", NULL);
    add(net, "const", "Constant", "c", &fields);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    mica_network_destroy(net);
    return e;
}

/* Output `name` of a run of x copied into dst (bytes). 1 on success. */
static int output(mica_exec_t *x, const char *name, void *dst, size_t bytes)
{
    mica_tensor_desc_t desc;
    const void *p;
    if (mica_exec_get_output(x, name, &desc, &p) != MICA_OK)
        return 0;
    memcpy(dst, p, bytes);
    return 1;
}

/* A run of e in a new execution context. 1 on success. */
static int run(mica_engine_t *e, outs_t *o)
{
    mica_exec_t *x = NULL;
    int good;

    memset(o, 0, sizeof *o);
    good = e && mica_exec_create(e, &x) == MICA_OK && mica_exec_run(x) ==
           MICA_OK && output(x, "p", o->p, sizeof o->p) &&
           output(x, "q", o->q, sizeof o->q) &&
           output(x, "c", o->c, sizeof o->c);
    if (!good)
        diag("run: %s", err());
    mica_exec_destroy(x);
    return good;
}

static int weights_ok(const outs_t *o)
{
    return memcmp(o->c, weights, sizeof weights) == 0;
}

/* Whether address a lies within [p, p + n). */
static int within(int64_t a, const void *p, size_t n)
{
    return (uintptr_t)a >= (uintptr_t)p && (uintptr_t)a < (uintptr_t)p + n;
}

uint64_t mica__checksum(const unsigned char *p, size_t n);

/* The file's layout: format 4, states and weights at multiples of 64. */
static void test_layout(const unsigned char *data, size_t size)
{
    uint32_t format;
    size_t i, states = 0, aligned = 0, w = 0;
    const unsigned char *hit = NULL;

    memcpy(&format, data + 8, 4);
    is_int(4, format, "an engine is saved in format 4");
    for (i = 32; i + 8 <= size; i++)
        if (memcmp(data + i, "PROBEST", 8) == 0) {
            states++;
            aligned += i % 64 == 0;
        }
    ok(states == 2 && aligned == 2, "both probes' states start at a "
       "multiple of 64 in the file (%zu of %zu)", aligned, states);
    for (i = 32; i + sizeof weights <= size && !hit; i++)
        if (memcmp(data + i, weights, sizeof weights) == 0)
            hit = data + (w = i);
    ok(hit && w % 64 == 0, "the Constant's weights too (offset %zu)", w);
}

/* The creators are told what the host knows about the bytes. */
static void test_flags(mica_engine_t *built, const unsigned char *data,
                       size_t size)
{
    mica_engine_t *e = NULL;
    unsigned char *copy = malloc(size), *al, *w0;
    size_t cap = (size + 63) / 64 * 64;
    const float poke = 1234.5f;
    outs_t o;

    ok(run(built, &o) && o.p[0] == -1 && o.p[2] == 0 && weights_ok(&o),
       "built: the probe was made by create");
    if (!copy)
        bail("out of memory");
    memcpy(copy, data, size);
    ok(mica_engine_deserialize(ctx, copy, size, &e) == MICA_OK,
       "deserialize: loads");
    memset(copy, 0, size);
    free(copy);
    ok(run(e, &o) && o.p[2] == 2 && o.p[0] == 0,
       "  deserialize_ex told no flags (the bytes die with the call)");
    ok(o.q[2] == 1 && o.q[0] == -2,
       "  a creator that predates deserialize_ex gets deserialize");
    ok(weights_ok(&o), "  the weights were copied: the bytes are freed");
    mica_engine_destroy(e);
    e = NULL;

    al = aligned_alloc(64, cap);
    if (!al)
        bail("out of memory");
    memcpy(al, data, size);
    ok(mica_engine_deserialize_borrow(ctx, al, size, &e) == MICA_OK,
       "deserialize_borrow: loads");
    ok(run(e, &o) && o.p[2] == 2 && o.p[0] == MICA_STATE_PERSISTENT,
       "  deserialize_ex told MICA_STATE_PERSISTENT");
    ok(within(o.p[1], al, size) && o.p[1] % 64 == 0,
       "  its state lies in the caller's bytes, 64-byte aligned");
    ok(o.q[2] == 1 && weights_ok(&o),
       "  the old creator still gets deserialize; the weights are right");
    /* The contract says the bytes stay unchanged; the test breaks it on
     * purpose to see the weights being read in place. */
    w0 = memmem(al, size, weights, sizeof weights);
    if (w0)
        memcpy(w0, &poke, sizeof poke);
    ok(w0 && run(e, &o) && o.c[0] == poke,
       "  the Constant (a context's clone of it) reads its weights in place");
    mica_engine_destroy(e);
    free(al);
}

/* mica_engine_load reads the file into memory of its own: the engine
 * outlives the file's name, and the file's contents. */
static void test_load(const void *data, size_t size)
{
    char path[256];
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    FILE *f;
    outs_t o;

    snprintf(path, sizeof path, "%s/test-engine-load-%ld.mica",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        bail("cannot write %s", path);
    ok(mica_engine_load(ctx, path, &e) == MICA_OK, "load: loads");
    ok(run(e, &o) && o.p[2] == 2 && o.p[0] == MICA_STATE_PERSISTENT &&
       o.p[1] % 64 == 0, "  deserialize_ex told MICA_STATE_PERSISTENT, "
       "with 64-byte aligned state");
    ok(e && mica_exec_create(e, &x) == MICA_OK, "  a context made first");
    remove(path);
    ok(run(e, &o) && weights_ok(&o) && o.q[0] == -2,
       "  the file removed: the engine still runs, with its weights");
    ok(x && mica_exec_run(x) == MICA_OK && output(x, "c", o.c, sizeof o.c) &&
       weights_ok(&o), "  and so does the context made before");
    mica_exec_destroy(x);
    mica_engine_destroy(e);

    /* Issue 25: the file replaced in place (`cp` truncates the inode it
     * writes) while the engine serves from it: the weights were used from
     * a mapping of the file, and the next run was SIGBUS. */
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        bail("cannot write %s", path);
    e = NULL;
    ok(mica_engine_load(ctx, path, &e) == MICA_OK, "load again");
    if (truncate(path, 0) != 0)
        bail("cannot truncate %s", path);
    f = fopen(path, "r+b");
    if (!f || fwrite("MICA", 1, 4, f) != 4 || fclose(f) != 0)
        bail("cannot write %s", path);
    ok(run(e, &o) && weights_ok(&o), "  the file truncated and rewritten "
       "in place (cp over it): the engine still runs, with its weights");
    mica_engine_destroy(e);
    remove(path);
}

/* A file of format 1 (examples/hello.yaml built before format 2). */
static void test_format1(void)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    static const float r_want[6] = {1.5f, 0, 4.5f, 0, 7.5f, 0};
    static const float y_want[2] = {6, 7.5f};
    float r[6], y[2];
    char path[4096];
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;

    if (!top) {
        skip_block(2, "MICA_TOP_SRCDIR not set");
        return;
    }
    snprintf(path, sizeof path, "%s/tests/engines/hello-v1.engine", top);
    ok(mica_engine_load(ctx, path, &e) == MICA_OK,
       "an engine file of format 1 still loads");
    if (!e)
        diag("%s", err());
    ok(e && mica_exec_create(e, &x) == MICA_OK && mica_exec_run(x) ==
           MICA_OK && output(x, "r", r, sizeof r) &&
           output(x, "y", y, sizeof y) &&
           memcmp(r, r_want, sizeof r) == 0 && memcmp(y, y_want, sizeof y) == 0,
       "  and computes what examples/hello.yaml does");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* Refusals: no file, a folder, an empty file, non-zero padding. */
static void test_refusals(const unsigned char *data, size_t size)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[256];
    mica_engine_t *e = NULL;
    unsigned char *copy = malloc(size);
    size_t i, pad = 0;
    uint32_t len;
    FILE *f;

    ok(mica_engine_load(ctx, "/nonexistent/x.engine", &e) != MICA_OK && !e,
       "load: a missing file is refused");
    contains(err(), "cannot open engine file '/nonexistent/x.engine'",
             "  saying so");
    ok(mica_engine_load(ctx, tmp, &e) != MICA_OK && !e,
       "load: a folder is refused");
    contains(err(), "cannot read engine file", "  saying so");
    snprintf(path, sizeof path, "%s/test-engine-empty-%ld.mica", tmp,
             (long)getpid());
    f = fopen(path, "wb");
    if (!f || fclose(f) != 0)
        bail("cannot write %s", path);
    ok(mica_engine_load(ctx, path, &e) != MICA_OK && !e,
       "load: an empty file is refused");
    contains(err(), "is not a mica engine", "  saying so");
    remove(path);
    /* The zero byte just before a state that follows padding. */
    for (i = 36; !pad && i + 8 <= size; i++) {
        memcpy(&len, data + i - 4, 4);
        if (memcmp(data + i, "PROBEST", 8) == 0 && len != 8)
            pad = i - 1;
    }
    if (!copy || !pad) {
        skip_block(2, "no padding before a probe state");
    } else {
        memcpy(copy, data, size);
        copy[pad] = 1;
        memcpy(copy + 24, &(uint64_t){mica__checksum(copy + 32, size - 32)},
               8);
        ok(mica_engine_deserialize(ctx, copy, size, &e) != MICA_OK && !e,
           "non-zero padding behind a valid checksum: refused");
        contains(err(), "is corrupt: bad layer", "  as a corrupt layer");
    }
    free(copy);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];
    mica_engine_t *e;
    unsigned char *data = NULL;
    size_t size = 0;

    plan_lazy();
    ctx = th_context();
    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set (run through make check)");
    snprintf(path, sizeof path, "%s/tests/probe/.libs/probe.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("the probe module: %s", err());
    e = build();
    if (mica_engine_serialize(e, (void **)&data, &size) != MICA_OK)
        bail("serialize: %s", err());
    test_layout(data, size);
    test_flags(e, data, size);
    test_load(data, size);
    test_format1();
    test_refusals(data, size);
    mica_free(data);
    mica_engine_destroy(e);
    return exit_status();
}
