/*
 * core/autotune.c - choosing among implementations and their tactics by
 * timing them (mica build --autotune), and a layer's tactic without
 * timing (the first it offers).
 *
 * A layer is tunable when it runs on the device and reads every input as
 * data, and either pinned no implementation (nor did a preference name
 * one) and has others for the device, or offers several tactics.  Each
 * candidate, an implementation that accepts the layer's types with each
 * tactic it offers (or none), is configured for the first profile, given
 * buffers of the opt shapes filled with a fixed non-zero pattern, run
 * twice to warm up, then timed over a few runs (host clock around
 * enqueue and a stream sync); the median wins, and the layer keeps the
 * winner's instance, told its tactic.  The others are destroyed.
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
                             mica_layer_t *inst, int32_t tactic)
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
    if ((tactic && ops->set_tactic(inst, tactic, &err) != MICA_OK) ||
        (ops->configure &&
         ops->configure(inst, dyn, nin, dyn + nin, l->nb_outputs, &err) !=
             MICA_OK))
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

/*
 * The tactics instance `inst` of layer `step` offers once configured for
 * profile 0, into ids (at most MICA_MAX_TACTICS); *n gets their number
 * (0: none, one way of running).  Fails naming the layer when the
 * instance says more than the most, a tactic that is not positive, or
 * offers tactics without set_tactic.
 */
static mica_status_t offered(mica_engine_t *e, int32_t step,
                             mica_layer_t *inst, int32_t *ids, int32_t *n)
{
    const mica__layer_t *l = &e->layers[step];
    const mica_layer_ops_t *ops = inst->ops;
    mica_dyn_desc_t dyn[128];
    mica_error_t err;
    int32_t i;

    *n = 0;
    if (!MICA__HAS_OP(ops, tactics))
        return MICA_OK;
    mica__layer_dyn_descs(e, l, 0, dyn);
    mica__error_clear(&err);
    if (ops->configure &&
        ops->configure(inst, dyn, l->nb_inputs, dyn + l->nb_inputs,
                       l->nb_outputs, &err) != MICA_OK)
        return mica__engine_layer_fail(e, step, &err, "configure failed");
    *n = ops->tactics(inst, ids, MICA_MAX_TACTICS);
    if (*n < 0 || *n > MICA_MAX_TACTICS)
        return mica__engine_layer_fail(e, step, NULL, "it offers a number "
                                       "of tactics out of 0..64");
    for (i = 0; i < *n; i++)
        if (ids[i] <= 0)
            return mica__engine_layer_fail(e, step, NULL, "it offers a "
                                           "tactic id that is not positive");
    if (*n > 0 && !MICA__HAS_OP(ops, set_tactic))
        return mica__engine_layer_fail(e, step, NULL, "it offers tactics "
                                       "but has no set_tactic");
    return MICA_OK;
}

/* Tell layer `step`'s instance its tactic, remembered in the layer. */
static mica_status_t tell(mica_engine_t *e, int32_t step, int32_t tactic)
{
    mica__layer_t *l = &e->layers[step];
    mica_error_t err;

    mica__error_clear(&err);
    if (tactic && l->instance->ops->set_tactic(l->instance, tactic, &err) !=
                      MICA_OK)
        return mica__engine_layer_fail(e, step, &err, "set_tactic failed");
    l->tactic = tactic;
    return MICA_OK;
}

mica_status_t mica__default_tactics(mica_engine_t *e)
{
    int32_t s, ids[MICA_MAX_TACTICS], n;
    mica_status_t st;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        if (!l->run_device || l->tactic)
            continue;
        if ((st = offered(e, s, l->instance, ids, &n)) != MICA_OK ||
            (n > 0 && (st = tell(e, s, ids[0])) != MICA_OK))
            return st;
    }
    return MICA_OK;
}

/* Time every tactic of candidate `inst` (implementation `impl`); keep the
 * fastest so far in *best (its instance, tactic and time), adding each
 * time measured to why. */
typedef struct best {
    mica_layer_t *inst;
    int32_t tactic;
    double time;
    char why[1024];
    size_t pos;
} best_t;

static mica_status_t try_candidate(mica__build_t *b, int32_t step,
                                   mica_layer_t *inst, const char *impl,
                                   int name_impl, best_t *best)
{
    int32_t ids[MICA_MAX_TACTICS], n, i;
    mica_status_t st = offered(b->e, step, inst, ids, &n);

    if (st != MICA_OK)
        return st;
    if (n == 0)
        ids[n++] = 0;
    for (i = 0; i < n; i++) {
        double tm = time_candidate(b, step, inst, ids[i]);
        char name[256];
        if (tm < 0)
            continue;
        snprintf(name, sizeof name, "%s%s", name_impl ? impl : "",
                 name_impl && ids[i] ? " " : "");
        if (ids[i])
            snprintf(name + strlen(name), sizeof name - strlen(name),
                     "tactic %d", (int)ids[i]);
        if (best->pos < sizeof best->why)
            best->pos += (size_t)snprintf(best->why + best->pos,
                                          sizeof best->why - best->pos,
                                          "%s%s %.1f us",
                                          best->pos ? ", " : "", name,
                                          1e6 * tm);
        if (!best->inst || tm < best->time) {
            best->inst = inst;
            best->tactic = ids[i];
            best->time = tm;
        }
    }
    return MICA_OK;
}

/* Tune layer `step`: keep the fastest candidate, say why. */
static mica_status_t tune(mica__build_t *b, int32_t step)
{
    mica__layer_t *l = &b->e->layers[step];
    mica_creator_info_t *alt = NULL, won = l->info;
    mica_layer_t **made = NULL;
    int32_t i, n = 0, ids[MICA_MAX_TACTICS], nt;
    best_t best;
    mica_status_t st;
    char *why;

    memset(&best, 0, sizeof best);
    if ((st = offered(b->e, step, l->instance, ids, &nt)) != MICA_OK)
        return st;
    if (!l->pinned && !(alt = mica__alternatives(b, l, &n)))
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    if (n == 0 && nt <= 1) { /* nothing to choose from */
        free(alt);
        return MICA_OK;
    }
    if (n > 0 && !(made = calloc((size_t)n, sizeof *made))) {
        free(alt);
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    st = try_candidate(b, step, l->instance, l->info.implementation, n > 0,
                       &best);
    for (i = 0; i < n && st == MICA_OK; i++)
        if ((made[i] = mica__instance_of(b, step, alt[i].creator)) != NULL)
            st = try_candidate(b, step, made[i], alt[i].implementation, 1,
                               &best);
    for (i = 0; i < n; i++) {
        if (made[i] && made[i] == best.inst)
            won = alt[i];
        else if (made[i])
            made[i]->ops->destroy(made[i]);
    }
    if (best.inst && best.inst != l->instance) {
        l->instance->ops->destroy(l->instance);
        l->instance = best.inst;
        l->info = won;
    }
    free(made);
    free(alt);
    if (st != MICA_OK || !best.inst || best.pos == 0)
        return st; /* nothing could be timed: keep the priority's */
    if ((st = tell(b->e, step, best.tactic)) != MICA_OK)
        return st;
    why = n > 0 ? mica__asprintf("the fastest measured: %s", best.why)
                : mica__asprintf("%s; the fastest tactic measured: %s",
                                 l->why ? l->why : "", best.why);
    if (!why)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    free(l->why);
    l->why = why;
    return MICA_OK;
}

/* Whether layer l may be tuned (see the file's comment); its tactics
 * are counted in tune(). */
static int tunable(const mica__layer_t *l)
{
    int32_t i;
    if (!l->run_device || l->run_host)
        return 0;
    for (i = 0; i < l->nb_inputs; i++)
        if (l->input_kinds[i] != MICA_INPUT_DATA)
            return 0;
    return !l->pinned || MICA__HAS_OP(l->instance->ops, tactics);
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
