/*
 * core/autotune.c - choosing among implementations by timing them
 * (mica build --autotune).
 *
 * A layer is tunable when it runs on the device, pinned no implementation
 * (nor did a preference name one), reads every input as data, and has
 * other implementations for the device.  Each candidate that accepts the
 * layer's types is configured for the first profile, given buffers of the
 * opt shapes filled with a fixed non-zero pattern, run twice to warm up,
 * then timed over a few runs (host clock around enqueue and a stream
 * sync); the median wins.  The others are destroyed.
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 2
#define TIMED 7

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether layer l can be tuned (see the file's comment). */
static int tunable(const mica__layer_t *l)
{
    int32_t i;
    if (!l->run_device || l->run_host || l->pinned)
        return 0;
    for (i = 0; i < l->nb_inputs; i++)
        if (l->input_kinds[i] != MICA_INPUT_DATA)
            return 0;
    return 1;
}

/* Device buffers for one layer's io at opt shapes, and a workspace. */
typedef struct bench {
    void *ptr[128];
    void *ws;
    void *stream;
} bench_t;

static void bench_free(const mica__device_t *dev, bench_t *bn, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (bn->ptr[i])
            dev->free(bn->ptr[i]);
    if (bn->ws)
        dev->free(bn->ws);
    if (bn->stream)
        dev->stream_destroy(bn->stream);
}

static mica_status_t bench_alloc(mica__build_t *b, const mica_tensor_desc_t *io,
                                 int32_t n, int32_t nin, bench_t *bn)
{
    const mica__device_t *dev = b->e->dev;
    unsigned char *pattern = NULL;
    size_t most = 0, bytes;
    int32_t i;
    mica_status_t st;

    memset(bn, 0, sizeof *bn);
    if ((st = dev->stream_create(b->ctx, &bn->stream)) != MICA_OK)
        return st;
    for (i = 0; i < n; i++) {
        bytes = (size_t)mica_dims_volume(&io[i].dims) *
                mica_dtype_size(io[i].dtype);
        most = bytes > most ? bytes : most;
    }
    pattern = malloc(most ? most : 1);
    if (!pattern)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    /* Small values of every type: 0x3c..0x3f bytes read as floats ~1.2,
     * halves ~1.1, ints, bools (non-zero). */
    for (bytes = 0; bytes < most; bytes++)
        pattern[bytes] = (unsigned char)(0x3c + bytes % 4);
    for (i = 0; i < n && st == MICA_OK; i++) {
        bytes = (size_t)mica_dims_volume(&io[i].dims) *
                mica_dtype_size(io[i].dtype);
        if (!bytes)
            continue;
        st = dev->alloc(b->ctx, bytes, &bn->ptr[i]);
        if (st == MICA_OK && i < nin)
            st = dev->upload(b->ctx, bn->ptr[i], pattern, bytes, bn->stream);
    }
    free(pattern);
    return st;
}

/*
 * Median seconds of one run of `inst` on profile 0's opt shapes, or a
 * negative value if it refuses the types or fails (not an error: the
 * candidate is just out).
 */
static double time_candidate(mica__build_t *b, int32_t step,
                             mica_layer_t *inst)
{
    mica_engine_t *e = b->e;
    const mica__layer_t *l = &e->layers[step];
    const mica_layer_ops_t *ops = inst->ops;
    int32_t i, nin = l->nb_inputs, n = nin + l->nb_outputs;
    mica_tensor_desc_t io[128];
    mica_dyn_desc_t dyn[128];
    double t[TIMED], result = -1;
    size_t ws = 0;
    bench_t bn;
    mica_error_t err;
    int r;

    mica__layer_dyn_descs(e, l, 0, dyn);
    for (i = 0; i < n; i++) {
        io[i] = dyn[i].desc;
        if (!ops->supports_format(inst, i, io, nin, l->nb_outputs))
            return -1;
    }
    mica__error_clear(&err);
    if (ops->configure &&
        ops->configure(inst, dyn, nin, dyn + nin, l->nb_outputs, &err) != MICA_OK)
        return -1;
    if (ops->workspace_size)
        ws = ops->workspace_size(inst, dyn, nin, dyn + nin, l->nb_outputs);
    if (bench_alloc(b, io, n, nin, &bn) != MICA_OK ||
        (ws && e->dev->alloc(b->ctx, ws, &bn.ws) != MICA_OK))
        goto done;
    for (r = -WARMUP; r < TIMED; r++) {
        double t0 = now();
        if (ops->enqueue(inst, io, nin, io + nin, l->nb_outputs,
                         (const void *const *)bn.ptr, bn.ptr + nin, bn.ws,
                         bn.stream, &err) != MICA_OK ||
            e->dev->sync(b->ctx, bn.stream) != MICA_OK)
            goto done;
        if (r >= 0)
            t[r] = now() - t0;
    }
    qsort(t, TIMED, sizeof *t, cmp_double);
    result = t[TIMED / 2];
done:
    bench_free(e->dev, &bn, n);
    return result;
}

/* Tune layer `step`: keep the fastest candidate, say why. */
static mica_status_t tune(mica__build_t *b, int32_t step)
{
    mica__layer_t *l = &b->e->layers[step];
    mica_creator_info_t *alt;
    char why[512];
    size_t pos;
    double best, tm;
    int32_t i, n, won = -1;

    alt = mica__alternatives(b, l, &n);
    if (!alt)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    if (n == 0) {
        free(alt);
        return MICA_OK;
    }
    best = time_candidate(b, step, l->instance);
    pos = (size_t)snprintf(why, sizeof why, "the fastest measured: %s %.1f us",
                           l->info.implementation, 1e6 * best);
    for (i = 0; i < n; i++) {
        mica_layer_t *inst = mica__instance_of(b, step, alt[i].creator);
        if (!inst)
            continue;
        tm = time_candidate(b, step, inst);
        if (tm >= 0 && pos < sizeof why)
            pos += (size_t)snprintf(why + pos, sizeof why - pos, ", %s %.1f us",
                                    alt[i].implementation, 1e6 * tm);
        if (tm >= 0 && (best < 0 || tm < best)) {
            best = tm;
            won = i;
            l->instance->ops->destroy(l->instance);
            l->instance = inst;
        } else {
            inst->ops->destroy(inst);
        }
    }
    if (won >= 0)
        l->info = alt[won];
    free(alt);
    if (best < 0)
        return MICA_OK; /* nothing could be timed: keep the priority's */
    free(l->why);
    l->why = mica__strdup(why);
    return l->why ? MICA_OK
                  : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
}

mica_status_t mica__autotune(mica__build_t *b)
{
    int32_t s;
    mica_status_t st;

    for (s = 0; s < b->e->nb_layers; s++)
        if (tunable(&b->e->layers[s]) && (st = tune(b, s)) != MICA_OK)
            return st;
    return MICA_OK;
}
