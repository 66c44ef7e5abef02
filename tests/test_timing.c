/*
 * tests/test_timing.c - timing of runs (mica_exec_set_timing,
 * mica_exec_times, mica_exec_layer_times, mica_engine_host_alloc), on the
 * CPU and on CUDA where a GPU is usable.  No time is asserted, only the
 * structure: the refusals while timing is off, the stages in order, a
 * layer inside a loop counted once per trip, layers that did not run at
 * zero, outputs still right with pinned host copies, timing off again.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;

/* tests/manifests/control/for_loop.yaml: i = j; n times i += k; i_last
 * is i after the n trips. */
static mica_engine_t *build(uint32_t device)
{
    char path[4096];
    const char *dir = getenv("MICA_TOP_SRCDIR");
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;

    snprintf(path, sizeof path, "%s/tests/manifests/control/for_loop.yaml",
             dir);
    if (mica_manifest_load(ctx, path, &m) != MICA_OK) {
        diag("%s", mica_context_error(ctx));
        return NULL;
    }
    cfg = *mica_manifest_config(m);
    cfg.device = device;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK)
        diag("%s", mica_context_error(ctx));
    mica_manifest_destroy(m);
    return e;
}

static int32_t layer_named(mica_engine_t *e, const char *name)
{
    int32_t i;
    for (i = 0; i < mica_engine_nb_layers(e); i++) {
        mica_layer_info_t l;
        memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        if (mica_engine_layer(e, i, &l) == MICA_OK && !strcmp(l.name, name))
            return i;
    }
    return -1;
}

/* Set the inputs (n trips) and run once. */
static mica_status_t run(mica_exec_t *x, int32_t n)
{
    static const float j[2] = {1, 2}, k[2] = {10, 20};
    mica_dims_t d2 = {.nb_dims = 1, .d = {2}}, d0 = {.nb_dims = 0};
    mica_status_t st;
    if ((st = mica_exec_set_input(x, "j", &d2, j)) != MICA_OK ||
        (st = mica_exec_set_input(x, "k", &d2, k)) != MICA_OK ||
        (st = mica_exec_set_input(x, "n", &d0, &n)) != MICA_OK)
        return st;
    return mica_exec_run(x);
}

static void test_device(uint32_t device, const char *dn)
{
    mica_engine_t *e = build(device);
    mica_exec_t *x = NULL;
    mica_exec_times_t t;
    mica_tensor_desc_t desc;
    const void *data;
    double *ms;
    int32_t *runs, nb, step, trip, i, zero = 1;
    void *host = NULL;

    if (!e || mica_exec_create(e, &x) != MICA_OK) {
        ok(0, "%s: for_loop builds", dn);
        mica_engine_destroy(e);
        return;
    }
    nb = mica_engine_nb_layers(e);
    ms = calloc((size_t)nb, sizeof *ms);
    runs = calloc((size_t)nb, sizeof *runs);
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    ok(run(x, 3) == MICA_OK, "%s: a run without timing", dn);
    is_int(MICA_ERR_INVALID, mica_exec_times(x, &t),
           "%s: mica_exec_times while timing is off is refused", dn);
    contains(mica_context_error(ctx), "timing is off", "%s:   saying so", dn);
    is_int(MICA_ERR_INVALID, mica_exec_layer_times(x, ms, runs, nb),
           "%s: mica_exec_layer_times while timing is off is refused", dn);
    is_int(MICA_ERR_INVALID, mica_exec_set_timing(x, 4),
           "%s: an unknown timing bit is refused", dn);

    is_int(MICA_OK, mica_exec_set_timing(x, MICA_TIMING_STAGES),
           "%s: stage timing on", dn);
    is_int(MICA_ERR_INVALID, mica_exec_layer_times(x, ms, runs, nb),
           "%s: layer times need MICA_TIMING_LAYERS", dn);
    ok(run(x, 3) == MICA_OK, "%s: a timed run", dn);
    is_int(MICA_OK, mica_exec_times(x, &t), "%s: its times", dn);
    is_int(MICA_TIMING_STAGES, t.what, "%s:   what was timed", dn);
    ok(t.upload_start >= 0 && t.upload_start <= t.upload_end &&
           t.upload_end <= t.enqueue_start &&
           t.enqueue_start <= t.enqueue_end &&
           t.enqueue_end <= t.download_start &&
           t.download_start <= t.download_end,
       "%s:   upload, enqueue, download in order (%g %g %g %g %g %g)", dn,
       t.upload_start, t.upload_end, t.enqueue_start, t.enqueue_end,
       t.download_start, t.download_end);
    ok(mica_exec_get_output(x, "i_last", &desc, &data) == MICA_OK &&
           ((const float *)data)[0] == 31 && ((const float *)data)[1] == 62,
       "%s:   the output is right in pinned memory (1 + 3 x 10: 31, 62)",
       dn);

    is_int(MICA_OK, mica_exec_set_timing(x, MICA_TIMING_STAGES |
                                                MICA_TIMING_LAYERS),
           "%s: layer timing on", dn);
    ok(run(x, 5) == MICA_OK, "%s: a run of 5 trips", dn);
    is_int(MICA_ERR_INVALID, mica_exec_layer_times(x, ms, runs, nb - 1),
           "%s: room for too few layers is refused", dn);
    is_int(MICA_OK, mica_exec_layer_times(x, ms, runs, nb),
           "%s: the layers' times", dn);
    step = layer_named(e, "step");
    trip = layer_named(e, "trip");
    is_int(5, step >= 0 ? runs[step] : -1,
           "%s:   the body layer ran once per trip", dn);
    ok(trip >= 0 && runs[trip] >= 1, "%s:   the trip limit was read", dn);
    for (i = 0; i < nb; i++)
        if (ms[i] < 0 || (runs[i] == 0 && ms[i] != 0))
            zero = 0;
    ok(zero, "%s:   no negative time, 0 for a layer that did not run", dn);
    ok(run(x, 0) == MICA_OK &&
           mica_exec_layer_times(x, ms, runs, nb) == MICA_OK &&
           step >= 0 && runs[step] == 0 && ms[step] == 0,
       "%s:   0 trips: the body did not run", dn);

    is_int(MICA_OK, mica_exec_set_timing(x, 0), "%s: timing off", dn);
    ok(run(x, 2) == MICA_OK &&
           mica_exec_get_output(x, "i_last", &desc, &data) == MICA_OK &&
           ((const float *)data)[0] == 21,
       "%s:   runs on, outputs right (1 + 2 x 10: 21)", dn);
    is_int(MICA_ERR_INVALID, mica_exec_times(x, &t),
           "%s:   and times are refused again", dn);

    ok(mica_engine_host_alloc(e, 1 << 20, &host) == MICA_OK && host,
       "%s: mica_engine_host_alloc of 1 MiB", dn);
    if (host)
        memset(host, 0x5a, 1 << 20);
    mica_engine_host_free(e, host);
    mica_engine_host_free(e, NULL);

    free(ms);
    free(runs);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

int main(void)
{
    if (!getenv("MICA_TOP_SRCDIR"))
        skip_all("MICA_TOP_SRCDIR is not set (run through make check)");
    plan_lazy();
    ctx = th_context();
    test_device(MICA_DEVICE_CPU, "cpu");
    if (th_cuda())
        test_device(MICA_DEVICE_CUDA, "cuda");
    else
        skip("cuda: no usable GPU");
    return exit_status();
}
