/*
 * core/autotune.c - choosing among implementations and their tactics by
 * timing them (on by default on CUDA, as TensorRT does; mica build
 * --autotune, --no-autotune), and a layer's tactic without timing (the
 * first it offers).
 *
 * A layer is tunable when it runs on the device and reads every input as
 * data, and either pinned no implementation (nor did a preference name
 * one) and has others for the device, or offers several tactics.  Each
 * candidate, an implementation that accepts the layer's types with each
 * tactic it offers (or none), is configured for the first profile, given
 * buffers of the opt shapes filled with a fixed non-zero pattern, run
 * twice to warm up, then timed: on a device with graphs (CUDA), R
 * enqueues captured into one graph, whose replays are timed with the
 * device's markers (GPU time alone, as TensorRT times tactics; R so that
 * a replay lasts about 2 ms, at most 20); elsewhere, or where the layer
 * cannot be captured, the host clock around enqueue and a stream sync.
 * The median of the trials wins, and the layer keeps the winner's
 * instance, told its tactic.  The others are destroyed.  A candidate
 * whose warm-up alone takes far longer than the best time so far is
 * not timed further (its choice shows ">" and the warm-up's time).
 *
 * The timing cache (timing_cache.c) keeps each layer's result by its
 * signature and the device: a layer found there is given the cached
 * winner, without timing, where that implementation still exists and
 * still offers the tactic.
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 2
#define TIMED 7
#define GRAPH_TRIALS 5     /* timed replays of the captured graph */
#define GRAPH_MAX_RUNS 20  /* enqueues captured into it, at most */
#define GRAPH_TARGET 2e-3  /* seconds a replay should last */
#define SLOW_FACTOR 8      /* a candidate this much slower than the best */
#define SLOW_MARGIN 1e-3   /* (plus this, s) is not timed further */

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

/* One enqueue of inst on bn's buffers. */
static mica_status_t enqueue(mica_layer_t *inst, const mica_tensor_desc_t *io,
                             int32_t nin, int32_t nout, bench_t *bn,
                             mica_error_t *err)
{
    return inst->ops->enqueue(inst, io, nin, io + nin, nout,
                              (const void *const *)bn->ptr, bn->ptr + nin,
                              bn->ws, bn->stream, err);
}

/*
 * Median seconds of one enqueue of inst from graph replays (see the
 * file's comment), `one` the host time of a warm-up run; negative where
 * the device has no graphs or the layer cannot be captured (the host
 * clock times it then).
 */
static double time_graph(mica__build_t *b, mica_layer_t *inst,
                         const mica_tensor_desc_t *io, int32_t nin,
                         int32_t nout, bench_t *bn, double one)
{
    const mica__device_t *dev = b->e->dev;
    void *graph = NULL, *m0 = NULL, *m1 = NULL;
    double t[GRAPH_TRIALS], result = -1, ms;
    int32_t runs = GRAPH_MAX_RUNS, r, ok = 1;
    mica_error_t err;

    if (!dev->capture_begin || !dev->marker_create)
        return -1;
    if (one > 0 && one * runs > GRAPH_TARGET)
        runs = (int32_t)(GRAPH_TARGET / one) > 1
                   ? (int32_t)(GRAPH_TARGET / one) : 1;
    mica__error_clear(&err);
    if (dev->capture_begin(b->ctx, bn->stream) != MICA_OK)
        goto done;
    for (r = 0; r < runs && ok; r++)
        ok = enqueue(inst, io, nin, nout, bn, &err) == MICA_OK &&
             dev->capture_ok(bn->stream);
    if (dev->capture_end(b->ctx, bn->stream, &graph) != MICA_OK || !ok)
        goto done;
    if (dev->marker_create(b->ctx, &m0) != MICA_OK ||
        dev->marker_create(b->ctx, &m1) != MICA_OK ||
        dev->graph_launch(b->ctx, graph, bn->stream) != MICA_OK ||
        dev->sync(b->ctx, bn->stream) != MICA_OK)
        goto done;
    for (r = 0; r < GRAPH_TRIALS; r++) {
        if (dev->marker_record(b->ctx, m0, bn->stream) != MICA_OK ||
            dev->graph_launch(b->ctx, graph, bn->stream) != MICA_OK ||
            dev->marker_record(b->ctx, m1, bn->stream) != MICA_OK ||
            dev->marker_elapsed(b->ctx, m0, m1, &ms) != MICA_OK)
            goto done;
        t[r] = 1e-3 * ms / runs;
    }
    qsort(t, GRAPH_TRIALS, sizeof *t, cmp_double);
    result = t[GRAPH_TRIALS / 2];
done:
    if (graph)
        dev->graph_destroy(graph);
    if (m0)
        dev->marker_destroy(m0);
    if (m1)
        dev->marker_destroy(m1);
    return result;
}

/*
 * Median seconds of one run of `inst` on profile 0's opt shapes, or a
 * negative value if it refuses the types or fails (not an error: the
 * candidate is just out).  `best`: the fastest time measured so far for
 * the layer (0: none); a candidate whose warm-up run takes more than
 * SLOW_FACTOR times that plus SLOW_MARGIN seconds is not timed further
 * (its warm-up time is returned, *rough set): it cannot win, and timing
 * it costs the build a second or more at large batches.
 */
static double time_candidate(mica__build_t *b, int32_t step,
                             mica_layer_t *inst, int32_t tactic,
                             double best, int *rough)
{
    mica_engine_t *e = b->e;
    const mica__layer_t *l = &e->layers[step];
    const mica_layer_ops_t *ops = inst->ops;
    int32_t i, nin = l->nb_inputs, n = nin + l->nb_outputs;
    mica_tensor_desc_t io[128];
    mica_dyn_desc_t dyn[128];
    double t[TIMED], result = -1, one = 0;
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
    *rough = 0;
    for (r = 0; r < WARMUP; r++) {
        double t0 = now();
        if (enqueue(inst, io, nin, l->nb_outputs, &bn, &err) != MICA_OK ||
            e->dev->sync(b->ctx, bn.stream) != MICA_OK)
            goto done;
        one = now() - t0;
        if (r > 0 && best > 0 && one > SLOW_FACTOR * best + SLOW_MARGIN) {
            result = one;
            *rough = 1;
            goto done;
        }
    }
    if ((result = time_graph(b, inst, io, nin, l->nb_outputs, &bn, one)) >=
        0)
        goto done;
    for (r = 0; r < TIMED; r++) {
        double t0 = now();
        if (enqueue(inst, io, nin, l->nb_outputs, &bn, &err) != MICA_OK ||
            e->dev->sync(b->ctx, bn.stream) != MICA_OK)
            goto done;
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
    const char *impl;
    int32_t tactic;
    double time;
    char why[4096];
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
        int rough = 0;
        double tm = time_candidate(b, step, inst, ids[i],
                                   best->inst ? best->time : 0, &rough);
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
                                          "%s%s %s%.1f us",
                                          best->pos ? ", " : "", name,
                                          rough ? ">" : "", 1e6 * tm);
        if (rough)
            continue;
        if (!best->inst || tm < best->time) {
            best->inst = inst;
            best->impl = impl;
            best->tactic = ids[i];
            best->time = tm;
        }
    }
    return MICA_OK;
}

/* ---- the timing cache's key ------------------------------------------- */

static void key_i64(mica__tkey_t *k, int64_t v)
{
    mica__tkey_add(k, &v, sizeof v);
}

static void key_dims(mica__tkey_t *k, const mica_dims_t *d)
{
    int32_t i;
    key_i64(k, d->nb_dims);
    for (i = 0; i < d->nb_dims && i < MICA_MAX_DIMS; i++)
        key_i64(k, d->d[i]);
}

/* The params: names, types and values; weights by type and shape. */
static void key_fields(mica__tkey_t *k, const mica_fields_t *f)
{
    int32_t i, j;

    key_i64(k, f ? f->nb_fields : -1);
    for (i = 0; f && i < f->nb_fields; i++) {
        const mica_field_t *x = &f->fields[i];
        mica__tkey_str(k, x->name);
        key_i64(k, x->type);
        key_i64(k, x->count);
        for (j = 0; j < x->count && x->data; j++)
            switch (x->type) {
            case MICA_FIELD_FLOAT:
                mica__tkey_add(k, (const double *)x->data + j,
                               sizeof(double));
                break;
            case MICA_FIELD_STRING:
                mica__tkey_str(k, ((const char *const *)x->data)[j]);
                break;
            case MICA_FIELD_WEIGHTS: {
                const mica_weights_t *w = (const mica_weights_t *)x->data + j;
                key_i64(k, w->dtype);
                key_i64(k, w->count);
                key_dims(k, &w->dims);
                break;
            }
            default: /* int64 values: INT, BOOL, ENUM, DTYPE */
                key_i64(k, ((const int64_t *)x->data)[j]);
            }
    }
}

/* The signature of layer `step` with its alternatives (the file's
 * comment of timing_cache.c). */
static void signature(mica__build_t *b, int32_t step,
                      const mica_creator_info_t *alt, int32_t n,
                      mica__tkey_t *k)
{
    mica_engine_t *e = b->e;
    const mica__layer_t *l = &e->layers[step];
    mica_dyn_desc_t dyn[128];
    char id[512];
    int32_t i;

    mica__tkey_init(k);
    mica__tkey_str(k, PACKAGE_VERSION);
    id[0] = '\0';
    if (e->dev->identity)
        e->dev->identity(id, sizeof id);
    mica__tkey_str(k, id);
    key_i64(k, e->device);
    mica__tkey_str(k, l->info.ns);
    mica__tkey_str(k, l->info.type);
    key_i64(k, l->info.version);
    mica__tkey_str(k, l->info.implementation);
    mica__tkey_str(k, l->info.module_version);
    for (i = 0; i < n; i++) {
        mica__tkey_str(k, alt[i].implementation);
        mica__tkey_str(k, alt[i].module_version);
    }
    key_fields(k, l->params);
    key_i64(k, l->nb_inputs);
    key_i64(k, l->nb_outputs);
    mica__layer_dyn_descs(e, l, 0, dyn);
    for (i = 0; i < l->nb_inputs + l->nb_outputs && i < 128; i++) {
        key_i64(k, dyn[i].desc.dtype);
        key_i64(k, dyn[i].desc.format);
        key_dims(k, &dyn[i].desc.dims);
        key_dims(k, &dyn[i].min);
        key_dims(k, &dyn[i].max);
    }
}

/* Whether instance inst offers `tactic` (0: it offers none). */
static int offers(mica_engine_t *e, int32_t step, mica_layer_t *inst,
                  int32_t tactic)
{
    int32_t ids[MICA_MAX_TACTICS], n, i;
    if (offered(e, step, inst, ids, &n) != MICA_OK)
        return 0; /* timed as if it were not cached */
    if (n == 0)
        return tactic == 0;
    for (i = 0; i < n; i++)
        if (ids[i] == tactic)
            return 1;
    return 0;
}

/*
 * Give layer `step` the timing cache's winner for key k where there is
 * one that still applies (the implementation is the layer's or one of
 * alt, and offers the tactic): 1 then (*st the outcome), else 0.
 */
static int from_cache(mica__build_t *b, int32_t step,
                      const mica_creator_info_t *alt, int32_t n,
                      const mica__tkey_t *k, mica_status_t *st)
{
    mica__layer_t *l = &b->e->layers[step];
    const char *impl, *times;
    mica_layer_t *inst = NULL;
    int32_t tactic, i, pick = -1;
    double us;
    char *why;

    *st = MICA_OK;
    if (!mica__tcache_find(b->tcache, k, &impl, &tactic, &us, &times))
        return 0;
    if (strcmp(impl, l->info.implementation) != 0) {
        for (i = 0; i < n && pick < 0; i++)
            if (strcmp(impl, alt[i].implementation) == 0)
                pick = i;
        if (pick < 0 ||
            !(inst = mica__instance_of(b, step, alt[pick].creator)))
            return 0;
    }
    if (!offers(b->e, step, inst ? inst : l->instance, tactic)) {
        if (inst)
            inst->ops->destroy(inst);
        return 0;
    }
    if (inst) {
        l->instance->ops->destroy(l->instance);
        l->instance = inst;
        l->info = alt[pick];
    }
    if ((*st = tell(b->e, step, tactic)) != MICA_OK)
        return 1;
    why = n > 0 ? mica__asprintf("the fastest measured (timing cache): %s",
                                 times)
                : mica__asprintf("%s; the fastest tactic measured (timing "
                                 "cache): %s", l->why ? l->why : "", times);
    if (!why) {
        *st = mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
        return 1;
    }
    free(l->why);
    l->why = why;
    return 1;
}

/* Tune layer `step`: keep the fastest candidate, say why. */
static mica_status_t tune(mica__build_t *b, int32_t step)
{
    mica__layer_t *l = &b->e->layers[step];
    mica_creator_info_t *alt = NULL, won = l->info;
    mica_layer_t **made = NULL;
    int32_t i, n = 0, ids[MICA_MAX_TACTICS], nt;
    mica__tkey_t key;
    best_t *best;
    mica_status_t st;
    char *why;

    if ((st = offered(b->e, step, l->instance, ids, &nt)) != MICA_OK)
        return st;
    if (!l->pinned && !(alt = mica__alternatives(b, l, &n)))
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    if (n == 0 && nt <= 1) { /* nothing to choose from */
        free(alt);
        return MICA_OK;
    }
    signature(b, step, alt, n, &key);
    if (from_cache(b, step, alt, n, &key, &st)) {
        free(alt);
        return st;
    }
    best = calloc(1, sizeof *best);
    if (!best || (n > 0 && !(made = calloc((size_t)n, sizeof *made)))) {
        free(best);
        free(alt);
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    st = try_candidate(b, step, l->instance, l->info.implementation, n > 0,
                       best);
    for (i = 0; i < n && st == MICA_OK; i++)
        if ((made[i] = mica__instance_of(b, step, alt[i].creator)) != NULL)
            st = try_candidate(b, step, made[i], alt[i].implementation, 1,
                               best);
    for (i = 0; i < n; i++) {
        if (made[i] && made[i] == best->inst)
            won = alt[i];
        else if (made[i])
            made[i]->ops->destroy(made[i]);
    }
    if (best->inst && best->inst != l->instance) {
        l->instance->ops->destroy(l->instance);
        l->instance = best->inst;
        l->info = won;
    }
    free(made);
    free(alt);
    if (st != MICA_OK || !best->inst || best->pos == 0) {
        free(best);
        return st; /* nothing could be timed: keep the priority's */
    }
    if ((st = tell(b->e, step, best->tactic)) != MICA_OK ||
        (st = mica__tcache_put(b->ctx, b->tcache, &key,
                               l->info.implementation, best->tactic,
                               1e6 * best->time, best->why)) != MICA_OK) {
        free(best);
        return st;
    }
    why = n > 0 ? mica__asprintf("the fastest measured: %s", best->why)
                : mica__asprintf("%s; the fastest tactic measured: %s",
                                 l->why ? l->why : "", best->why);
    free(best);
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
