/*
 * core/exec_graph.c - CUDA graphs of an execution context's enqueue
 * (mica_exec_set_cuda_graph): a small cache of instantiated graphs, one
 * per key, each the whole program of one enqueue captured on the
 * context's stream and replayed with one launch.
 *
 * The key is what the recorded launches depend on: the profile, the
 * arena, every input's dims, the values of shape-tensor inputs, every
 * bound pointer and every pointer handed to a layer (the arena's offsets,
 * the host copies of shape tensors).  Every tensor's dims follow from the
 * profile, the input dims and the shape values (phase 1), so they need
 * no place of their own.  The key changes only when phase 1 runs again
 * (x->shapes_gen), so a steady enqueue looks nothing up.
 *
 * A key's first enqueue runs layer by layer: modules load libraries,
 * allocate and pick algorithms on first use, none of which may happen
 * while capturing.  Its second is captured (thread-local mode: another
 * thread's work is not affected) and launched; later ones are replayed.
 * A capture that fails (a layer waits for the host, allocates, or fails
 * for any reason) is ended, its error cleared, and the key marked to run
 * layer by layer from then on with the reason; that enqueue then runs
 * layer by layer, so a failed capture never costs a result.  Every graph
 * is forgotten when layers are configured for another profile or told
 * new shapes (exec_run.c): either may move memory of their own.
 *
 * Loops and conditionals are recorded as CUDA's conditional nodes
 * (core/flow.c): a while node per loop, if nodes for a conditional and
 * for a while predicate, steered by tiny kernels that read the trip
 * count, predicate or condition in device memory, so that no trip waits
 * for the host.  That needs the device's conditional nodes and, from
 * every boundary layer of a loop but its TripLimit, its steps with the
 * trip in device memory (mica_layer_ops_t.device_steps).  What never
 * runs as a graph is known from the engine (a loop or conditional that
 * cannot be recorded so, and why; data-dependent sizes, read back) or
 * from the timing asked for (a marker after every layer); such enqueues
 * run layer by layer.
 */
#include <config.h>

#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE 8 /* graphs kept per context */

enum { NEW, WARM, READY, FALLBACK };

typedef struct entry {
    unsigned char *key;
    size_t key_len;
    uint64_t hash;
    void *graph;            /* READY: the instantiated graph */
    int32_t state;
    uint64_t used;          /* LRU: the tick of its last enqueue */
    char why[512];          /* FALLBACK: the reason */
} entry_t;

typedef struct mica__graphs {
    int32_t on;
    char fixed_why[512];    /* a reason of the engine's, "" if none */
    entry_t e[CACHE];
    int32_t n;
    int32_t last;           /* the entry of the last enqueue, -1 none */
    uint64_t gen;           /* x->shapes_gen when `last` was looked up */
    int32_t looked;         /* gen is valid */
    unsigned char *scratch; /* the key being built */
    size_t scratch_cap, scratch_len;
    uint64_t tick;
    mica_cuda_graph_counts_t counts;
} mica__graphs_t;

/* ---- the key ---------------------------------------------------------- */

static int put(mica__graphs_t *g, const void *p, size_t n)
{
    if (g->scratch_len + n > g->scratch_cap) {
        size_t cap = g->scratch_cap ? g->scratch_cap : 1024;
        unsigned char *grown;
        while (cap < g->scratch_len + n)
            cap *= 2;
        if (!(grown = realloc(g->scratch, cap)))
            return 0;
        g->scratch = grown;
        g->scratch_cap = cap;
    }
    if (n)
        memcpy(g->scratch + g->scratch_len, p, n);
    g->scratch_len += n;
    return 1;
}

/* Build the key of the inputs as phase 1 left them in g->scratch. */
static mica_status_t build_key(mica_exec_t *x, mica__graphs_t *g)
{
    const mica_engine_t *e = x->e;
    int32_t i, total = 0;
    int ok;

    for (i = 0; i < e->nb_layers; i++)
        total += e->layers[i].nb_inputs + e->layers[i].nb_outputs;
    g->scratch_len = 0;
    ok = put(g, &x->profile, sizeof x->profile) &&
         put(g, &x->arena, sizeof x->arena);
    for (i = 0; ok && i < e->nb_inputs; i++) {
        const mica_dims_t *d = &x->in_dims[i];
        int32_t t = e->input_index[i];
        ok = put(g, &d->nb_dims, sizeof d->nb_dims) &&
             put(g, d->d, sizeof d->d[0] * (size_t)d->nb_dims);
        if (ok && e->tensors[t].is_shape_input && x->shapes.host[t])
            ok = put(g, x->shapes.host[t],
                     sizeof(int32_t) * (size_t)mica_dims_volume(d));
    }
    ok = ok && put(g, x->bound, sizeof *x->bound * (size_t)e->nb_tensors) &&
         put(g, x->ptrs, sizeof *x->ptrs * (size_t)total) &&
         put(g, x->skip, sizeof *x->skip * (size_t)e->nb_layers);
    return ok ? MICA_OK
              : mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
}

/* FNV-1a over the key. */
static uint64_t hash(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void drop(mica_exec_t *x, entry_t *en)
{
    if (en->graph)
        x->dev->graph_destroy(en->graph); /* in flight: freed when done */
    free(en->key);
    memset(en, 0, sizeof *en);
}

/* The entry of the key now: found, or made NEW in place of the least
 * recently used one. */
static mica_status_t lookup(mica_exec_t *x, mica__graphs_t *g, entry_t **out)
{
    entry_t *en = NULL;
    uint64_t h;
    int32_t i, victim = 0;
    mica_status_t st;

    if (g->looked && g->gen == x->shapes_gen && g->last >= 0) {
        *out = &g->e[g->last];
        return MICA_OK;
    }
    if ((st = build_key(x, g)) != MICA_OK)
        return st;
    h = hash(g->scratch, g->scratch_len);
    for (i = 0; i < g->n && !en; i++)
        if (g->e[i].hash == h && g->e[i].key_len == g->scratch_len &&
            memcmp(g->e[i].key, g->scratch, g->scratch_len) == 0)
            en = &g->e[i];
    if (!en) {
        /* The key's copy first: a failure leaves the cache as it was. */
        unsigned char *key = malloc(g->scratch_len ? g->scratch_len : 1);
        if (!key)
            return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        if (g->n < CACHE) {
            victim = g->n++;
        } else {
            for (i = 1; i < CACHE; i++)
                if (g->e[i].used < g->e[victim].used)
                    victim = i;
            if (g->e[victim].graph)
                g->counts.evictions++;
            drop(x, &g->e[victim]);
        }
        en = &g->e[victim];
        memcpy(key, g->scratch, g->scratch_len);
        en->key = key;
        en->key_len = g->scratch_len;
        en->hash = h;
        en->state = NEW;
    }
    g->last = (int32_t)(en - g->e);
    g->gen = x->shapes_gen;
    g->looked = 1;
    *out = en;
    return MICA_OK;
}

/* ---- why not ---------------------------------------------------------- */

/* Whether layer s, a loop's boundary layer other than its TripLimit,
 * takes its steps with the trip in device memory (device_steps). */
static int device_steps(const mica_exec_t *x, int32_t s)
{
    const mica_layer_t *inst = x->instances[s];
    return !x->e->layers[s].run_device ||
           (inst && MICA__HAS_OP(inst->ops, device_steps) &&
            inst->ops->device_steps(inst));
}

/* Whether each of n steps takes device steps; else the first that does
 * not, in *bad. */
static int all_device_steps(const mica_exec_t *x, const int32_t *steps,
                            int32_t n, int32_t *bad)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (!device_steps(x, steps[i])) {
            *bad = steps[i];
            return 0;
        }
    return 1;
}

/* Whether layer s reads its input 0 (a trip count, a predicate, a
 * condition) in device memory, where a kernel can. */
static int reads_device(const mica_exec_t *x, int32_t s)
{
    const mica__layer_t *l = &x->e->layers[s];
    return l->run_device && l->nb_inputs >= 1 && l->inputs[0] >= 0 &&
           l->input_kinds[0] == MICA_INPUT_DATA &&
           x->e->tensors[l->inputs[0]].need_e;
}

/*
 * The reason of the engine's, if any: a live loop or conditional that
 * cannot become conditional nodes (the device has none, a boundary
 * layer cannot take the trip on the device, a value the host reads),
 * else the first layer that makes a data-dependent size; "" when none.
 * *depth gets the deepest nesting of live constructs (1 for one level).
 */
static void fixed_reason(const mica_exec_t *x, char *buf, size_t len,
                         int32_t *depth)
{
    const mica_engine_t *e = x->e;
    int32_t k, s, bad = -1;

    buf[0] = '\0';
    *depth = 0;
    for (k = 0; k < e->nb_constructs; k++) {
        const mica__construct_t *c = &e->constructs[k];
        int32_t d = 0, p;
        if (!c->live)
            continue;
        for (p = k; p >= 0; p = e->constructs[p].parent)
            d++;
        if (d > *depth)
            *depth = d;
        if (buf[0])
            continue;
        if (!x->dev->cond_node) {
            snprintf(buf, len, "the network has a %s ('%s'), and the "
                     "device has no conditional graph nodes",
                     c->kind == MICA_CONSTRUCT_CONDITIONAL ? "conditional"
                                                           : "loop",
                     c->name);
        } else if (c->kind == MICA_CONSTRUCT_CONDITIONAL) {
            if (!reads_device(x, c->condition))
                snprintf(buf, len, "conditional '%s': its condition (layer "
                         "'%s') is not in device memory: read on the host",
                         c->name, e->layers[c->condition].name);
        } else if (c->trip_limit >= 0 && !reads_device(x, c->trip_limit)) {
            snprintf(buf, len, "loop '%s': its trip limit (layer '%s') is "
                     "not in device memory: read on the host", c->name,
                     e->layers[c->trip_limit].name);
        } else if (!all_device_steps(x, c->heads, c->nb_heads, &bad) ||
                   !all_device_steps(x, c->iterators, c->nb_iterators,
                                     &bad) ||
                   !all_device_steps(x, c->exits, c->nb_exits, &bad)) {
            snprintf(buf, len, "loop '%s': its boundary layer '%s' (%s, "
                     "implementation %s) cannot take the trip from device "
                     "memory (no device_steps): the loop runs on the host",
                     c->name, e->layers[bad].name, e->layers[bad].info.type,
                     e->layers[bad].info.implementation);
        }
    }
    if (buf[0])
        return;
    for (s = 0; s < e->nb_layers; s++)
        if (e->layers[s].makes_sizes && e->layers[s].run_device) {
            snprintf(buf, len, "layer '%s' (%s) makes a data-dependent "
                     "output size, read back on the host",
                     e->layers[s].name, e->layers[s].info.type);
            return;
        }
}

/* Free the state of loops in graphs (a capture may still use it: only
 * when every graph is gone). */
static void loops_free(mica_exec_t *x)
{
    int32_t i;
    for (i = 0; i < x->nb_body_streams; i++)
        if (x->body_streams[i])
            x->dev->stream_destroy(x->body_streams[i]);
    free(x->body_streams);
    if (x->loop_state)
        x->dev->free(x->loop_state);
    x->body_streams = NULL;
    x->nb_body_streams = 0;
    x->loop_state = NULL;
    x->device_loops = 0;
}

/* The state of `depth` levels of loops and conditionals in graphs: the
 * trips' memory and two body streams a level (a while node and the if
 * node of its predicate). */
static mica_status_t loops_alloc(mica_exec_t *x, int32_t depth)
{
    int32_t i, n = 2 * depth;
    mica_status_t st;

    if (!(x->body_streams = calloc((size_t)n, sizeof *x->body_streams)))
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    x->nb_body_streams = n;
    for (i = 0; i < n; i++)
        if ((st = x->dev->stream_create(x->ctx, &x->body_streams[i])) !=
            MICA_OK)
            return st;
    if ((st = x->dev->alloc(x->ctx,
                            sizeof(int64_t) * 2 *
                                (size_t)x->e->nb_constructs,
                            (void **)&x->loop_state)) != MICA_OK)
        return st;
    x->device_loops = 1;
    return MICA_OK;
}

/* Why enqueues cannot use graphs whatever the key, or NULL. */
static const char *always_why(const mica_exec_t *x)
{
    const mica__graphs_t *g = x->graphs;
    if (g->fixed_why[0])
        return g->fixed_why;
    if (mica__timing_layers(x))
        return "per-layer timing is on";
    return NULL;
}

const char *mica_exec_cuda_graph_why(const mica_exec_t *x)
{
    const mica__graphs_t *g = x->graphs;
    const char *why;

    if (!x->dev->capture_begin)
        return x->e->device == MICA_DEVICE_CPU
                   ? "the engine runs on the CPU"
                   : "the engine's device has no CUDA graphs";
    if (!g || !g->on)
        return "CUDA graphs are off";
    if ((why = always_why(x)) != NULL)
        return why;
    if (g->last >= 0 && g->e[g->last].state == FALLBACK)
        return g->e[g->last].why;
    return NULL;
}

/* ---- on, off, counts -------------------------------------------------- */

void mica__graph_forget(mica_exec_t *x)
{
    mica__graphs_t *g = x->graphs;
    int32_t i;

    if (!g)
        return;
    for (i = 0; i < g->n; i++)
        drop(x, &g->e[i]);
    g->n = 0;
    g->last = -1;
    g->looked = 0;
}

void mica__graph_free(mica_exec_t *x)
{
    if (!x->graphs)
        return;
    mica__graph_forget(x);
    if (x->loop_state || x->body_streams)
        x->dev->sync(x->ctx, x->stream); /* a replay may still use them */
    loops_free(x);
    free(x->graphs->scratch);
    free(x->graphs);
    x->graphs = NULL;
}

mica_status_t mica_exec_set_cuda_graph(mica_exec_t *x, int32_t on)
{
    mica__graphs_t *g = x->graphs;

    if (!on) {
        mica__graph_forget(x);
        if (g)
            g->on = 0;
        return MICA_OK;
    }
    if (!x->dev->capture_begin)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "CUDA graphs are for an "
                          "engine on the cuda device; this one runs on the "
                          "%s", mica__device_desc(x->e->device)->title);
    if (!g) {
        int32_t depth = 0;
        mica_status_t st;
        if (!(g = calloc(1, sizeof *g)))
            return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        g->last = -1;
        g->counts.struct_size = sizeof g->counts;
        x->graphs = g;
        fixed_reason(x, g->fixed_why, sizeof g->fixed_why, &depth);
        /* Loops and conditionals as conditional nodes: their memory and
         * streams now, never while capturing. */
        if (!g->fixed_why[0] && depth > 0 &&
            (st = loops_alloc(x, depth)) != MICA_OK) {
            mica__graph_free(x);
            return st;
        }
    }
    g->on = 1;
    return MICA_OK;
}

mica_status_t mica_exec_cuda_graph_counts(const mica_exec_t *x,
                                          mica_cuda_graph_counts_t *out)
{
    mica_cuda_graph_counts_t r;

    if (!out)
        return mica__fail(x->ctx, MICA_ERR_INVALID,
                          "mica_exec_cuda_graph_counts: no struct given");
    memset(&r, 0, sizeof r);
    if (x->graphs)
        r = x->graphs->counts;
    r.struct_size = sizeof r;
    r.cached = 0;
    if (x->graphs) {
        int32_t i;
        for (i = 0; i < x->graphs->n; i++)
            r.cached += x->graphs->e[i].graph != NULL;
    }
    mica__fill_out(out, &r, sizeof r, sizeof r);
    return MICA_OK;
}

/* ---- enqueue ---------------------------------------------------------- */

mica_status_t mica__graph_check(mica_exec_t *x, int32_t s)
{
    const mica__layer_t *l = &x->e->layers[s];
    if (x->dev->capture_ok(x->stream))
        return MICA_OK;
    return mica__fail(x->ctx, MICA_ERR_DEVICE, "layer '%s' (%s) waits for "
                      "the host or allocates memory while enqueuing",
                      l->name, l->info.type);
}

/* The capture or launch of en failed (`what`: `why`): the key runs layer
 * by layer from now on, this enqueue first. */
static mica_status_t fall_back(mica_exec_t *x, mica__graphs_t *g,
                               entry_t *en, const char *what,
                               const char *why)
{
    snprintf(en->why, sizeof en->why, "%s: %s", what, why);
    en->state = FALLBACK;
    g->counts.failures++;
    g->counts.fallbacks++;
    return mica__flow_run(x);
}

/* Launch en's graph; a launch refused (not a device fault: that fails
 * the layer-by-layer run too) drops it, and the key falls back. */
static mica_status_t launch(mica_exec_t *x, mica__graphs_t *g, entry_t *en)
{
    char why[480];

    g->counts.replays++;
    if (x->dev->graph_launch(x->ctx, en->graph, x->stream) == MICA_OK)
        return MICA_OK;
    g->counts.replays--;
    snprintf(why, sizeof why, "%s", mica_context_error(x->ctx));
    x->dev->graph_destroy(en->graph);
    en->graph = NULL;
    return fall_back(x, g, en, "the graph's launch failed", why);
}

/* Capture the program into a graph for en and launch it. */
static mica_status_t capture(mica_exec_t *x, mica__graphs_t *g, entry_t *en)
{
    char why[480];
    void *graph = NULL;
    mica_status_t st;

    if (x->dev->capture_begin(x->ctx, x->stream) != MICA_OK)
        return fall_back(x, g, en, "capture failed",
                         mica_context_error(x->ctx));
    x->capturing = 1;
    st = mica__flow_run(x);
    x->capturing = 0;
    if (st != MICA_OK) {
        /* The layer's error is the reason; the end's is not kept. */
        snprintf(why, sizeof why, "%s", mica_context_error(x->ctx));
        if (x->dev->capture_end(x->ctx, x->stream, &graph) == MICA_OK)
            x->dev->graph_destroy(graph);
        return fall_back(x, g, en, "capture failed", why);
    }
    if (x->dev->capture_end(x->ctx, x->stream, &graph) != MICA_OK) {
        snprintf(why, sizeof why, "%s", mica_context_error(x->ctx));
        return fall_back(x, g, en, "capture failed", why);
    }
    en->graph = graph;
    en->state = READY;
    g->counts.captures++;
    return launch(x, g, en);
}

mica_status_t mica__graph_enqueue(mica_exec_t *x)
{
    mica__graphs_t *g = x->graphs;
    entry_t *en = NULL;
    mica_status_t st;

    if (!g || !g->on)
        return mica__flow_run(x);
    if (always_why(x)) {
        g->counts.fallbacks++;
        return mica__flow_run(x);
    }
    if ((st = lookup(x, g, &en)) != MICA_OK)
        return st;
    en->used = ++g->tick;
    switch (en->state) {
    case READY:
        return launch(x, g, en);
    case WARM:
        return capture(x, g, en);
    case FALLBACK:
        g->counts.fallbacks++;
        return mica__flow_run(x);
    default:
        g->counts.warmups++;
        if ((st = mica__flow_run(x)) == MICA_OK)
            en->state = WARM;
        return st;
    }
}
