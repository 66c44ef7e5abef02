/*
 * tests/test_threads.c - many execution contexts of one engine on many
 * threads at once (issue 15), run by the ThreadSanitizer leg of .ci/run:
 * each thread runs its own context, and every other run it gives an
 * input of a shape the engine refuses, so that contexts fail on several
 * threads at the same time.  Each thread must read back its own message
 * (the context keeps one error slot per thread) and its own results.
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mica/mica.h"
#include "tap.h"

#define THREADS 8
#define RUNS 50

static mica_context_t *ctx;

typedef struct worker {
    mica_exec_t *x;
    int rows;      /* its good shape: [rows, 4] */
    int good;      /* runs that computed what they should */
    int own;       /* failures that read back their own message */
    char first[512];
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    float in[8 * 4], want;
    const float *out;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    char msg[64];
    int r, i, right;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[1] = 4;
    for (r = 0; r < RUNS; r++) {
        for (i = 0; i < 8 * 4; i++)
            in[i] = (float)((r + i + w->rows) % 7) - 3.0f;
        /* a rank this thread alone uses: its message names it */
        d.nb_dims = 3 + w->rows;
        if (mica_exec_set_input(w->x, "x", &d, in) == MICA_OK)
            continue;
        snprintf(msg, sizeof msg, "shape of rank %d does not match",
                 3 + w->rows);
        if (strstr(mica_context_error(ctx), msg))
            w->own++;
        else if (!w->first[0])
            snprintf(w->first, sizeof w->first, "%s",
                     mica_context_error(ctx));
        d.nb_dims = 2;
        d.d[0] = w->rows;
        if (mica_exec_set_input(w->x, "x", &d, in) != MICA_OK ||
            mica_exec_run(w->x) != MICA_OK ||
            mica_exec_get_output(w->x, "y", &desc, (const void **)&out) !=
                MICA_OK)
            continue;
        right = desc.dims.d[0] == w->rows;
        for (i = 0; right && i < w->rows * 4; i++) {
            want = in[i] > 0 ? in[i] : 0.0f;
            right = out[i] == want;
        }
        w->good += right;
    }
    return NULL;
}

int main(void)
{
    static const char *const ins[] = {"x"}, *const outs[] = {"y"};
    static const int64_t relu = 0;
    mica_dims_t dims = {2, 0, {-1, 4}}, lo = {2, 0, {1, 4}},
                hi = {2, 0, {8, 4}};
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_layer_spec_t spec;
    mica_field_t f = {"type", MICA_FIELD_ENUM, 1, &relu};
    mica_fields_t fields = {1, &f};
    worker_t w[THREADS];
    pthread_t th[THREADS];
    int i, started = 0, good = 1, own = 1;
    int32_t k = 0;

    plan_lazy();
    if (mica_context_create(&ctx) != MICA_OK)
        bail("cannot create a context");
    mica_context_set_logger(ctx, NULL, NULL, MICA_LOG_ERROR);
    mica_context_load_default_modules(ctx);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "relu";
    spec.type = "Activation";
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &dims, NULL) !=
            MICA_OK ||
        mica_network_add_layer(net, &spec) != MICA_OK ||
        mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_network_add_profile(net, &k) != MICA_OK ||
        mica_network_set_profile_dims(net, k, "x", &lo, &hi, &hi, NULL) !=
            MICA_OK ||
        mica_engine_build(net, NULL, &e) != MICA_OK)
        skip_all("no engine: %s", mica_context_error(ctx));
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        w[i].rows = 1 + i % 8;
        if (mica_exec_create(e, &w[i].x) != MICA_OK)
            bail("exec: %s", mica_context_error(ctx));
    }
    for (i = 0; i < THREADS; i++)
        started += pthread_create(&th[i], NULL, work, &w[i]) == 0;
    for (i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < THREADS; i++) {
        good &= w[i].good == RUNS;
        own &= w[i].own == RUNS;
        if (w[i].first[0])
            diag("thread %d read: %s", i, w[i].first);
    }
    is_int(THREADS, started, "%d threads started", THREADS);
    ok(good, "%d contexts of one engine, %d runs each on its thread: every "
       "result right", THREADS, RUNS);
    ok(own, "failing at the same time, each thread reads its own message");
    for (i = 0; i < THREADS; i++)
        mica_exec_destroy(w[i].x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    mica_context_destroy(ctx);
    return exit_status();
}
