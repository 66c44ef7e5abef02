/*
 * core/build.c - from a network to an engine.
 *
 * Steps, each reporting the first problem with the layer's name and
 * origin: define every tensor once; resolve every reference; order the
 * layers topologically (refusing cycles); for each layer in order choose
 * an implementation for the device, create the instance, infer output
 * types and check the format combination, infer output shapes as
 * expressions and evaluate them; configure; size workspaces; plan memory.
 * mica_network_validate runs the same steps without a device.
 * The graph's structure is core/graph_order.c's, the choice of each
 * implementation core/choose.c's, the device core/device_pick.c's.
 */
#include <config.h>

#include "build.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef mica__build_t build_t;

/* ---- per layer ------------------------------------------------------- */

/* Name every tensor, lay out the engine's layers in execution order. */
static mica_status_t setup_layers(build_t *b)
{
    mica_engine_t *e = b->e;
    mica_network_t *net = b->net;
    int32_t s, i, t;

    for (t = 0; t < e->nb_tensors; t++) {
        int32_t dl = b->def_layer[t];
        const char *name = dl < 0 ? net->inputs[b->def_slot[t]].name
                                  : net->layers[dl].outputs[b->def_slot[t]];
        e->tensors[t].name = mica__strdup(name);
        e->tensors[t].last_use = -1;
        e->tensors[t].alias = -1;
        e->tensors[t].first_symbol = -1;
        if (!e->tensors[t].name)
            return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    e->layers = calloc((size_t)(net->nb_layers + 1), sizeof *e->layers);
    if (!e->layers)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    e->nb_layers = net->nb_layers;
    for (s = 0; s < net->nb_layers; s++) {
        const mica__net_layer_t *nl = &net->layers[b->order[s]];
        mica__layer_t *l = &e->layers[s];
        l->info.struct_size = l->host_info.struct_size = sizeof l->info;
        l->name = mica__strdup(nl->name);
        l->origin = mica__strdup(nl->origin);
        l->construct = b->step_construct[s];
        if (nl->fused && !(l->fused = mica__strdup(nl->fused)))
            return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
        l->branch = b->step_branch[s];
        l->nb_inputs = nl->nb_inputs;
        l->nb_outputs = nl->nb_outputs;
        l->inputs = calloc((size_t)(nl->nb_inputs + 1), sizeof *l->inputs);
        l->outputs = calloc((size_t)(nl->nb_outputs + 1), sizeof *l->outputs);
        l->input_kinds = calloc((size_t)(nl->nb_inputs + 1),
                                sizeof *l->input_kinds);
        if (!l->name || !l->inputs || !l->outputs || !l->input_kinds)
            return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
        for (i = 0; i < nl->nb_inputs; i++)
            l->inputs[i] = nl->inputs[i] ? mica__tensor_of(b, nl->inputs[i]) : -1;
        for (i = 0; i < nl->nb_outputs; i++) {
            l->outputs[i] = mica__tensor_of(b, nl->outputs[i]);
            e->tensors[l->outputs[i]].producer = s;
        }
    }
    e->nb_outputs = net->nb_outputs;
    e->output_index = calloc((size_t)(net->nb_outputs + 1), sizeof *e->output_index);
    if (!e->output_index)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < net->nb_outputs; i++) {
        e->output_index[i] = mica__tensor_of(b, net->outputs[i]);
        e->tensors[e->output_index[i]].is_output = 1;
    }
    for (t = 0; t < e->nb_tensors; t++)
        e->tensors[t].scale = 1.0f;
    for (i = 0; i < net->nb_scales; i++) {
        char at[512];
        t = mica__tensor_of(b, net->scale_names[i]);
        if (t < 0)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%sscale of '%s': no such tensor",
                              mica__at(net->scale_origins[i], at, sizeof at),
                              net->scale_names[i]);
        e->tensors[t].scale = net->scales[i];
    }
    e->nb_shape_outputs = net->nb_shape_outputs;
    e->shape_output_index = calloc((size_t)(net->nb_shape_outputs + 1),
                                   sizeof *e->shape_output_index);
    if (!e->shape_output_index)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < net->nb_shape_outputs; i++) {
        e->shape_output_index[i] = mica__tensor_of(b, net->shape_outputs[i]);
        e->tensors[e->shape_output_index[i]].is_shape_output = 1;
    }
    return MICA_OK;
}

/* Milliseconds of a monotonic clock. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Say at debug level how long a step of a (real) build took. */
static void took(build_t *b, const char *step, double *t)
{
    double t1;
    if (b->validate_only || b->facts)
        return;
    t1 = now_ms();
    mica__log(b->ctx, MICA_LOG_DEBUG, "build: %s: %.2f ms", step, t1 - *t);
    *t = t1;
}

static mica_status_t run_build(build_t *b)
{
    mica_status_t st;
    double t = now_ms();
    int32_t s;

    if ((st = mica__expr_builder_create(&b->e->eb)) != MICA_OK)
        return mica__fail(b->ctx, st, "out of host memory");
    if ((st = mica__define_tensors(b)) != MICA_OK ||
        (st = mica__control_roles(b)) != MICA_OK ||
        (st = mica__order_layers(b)) != MICA_OK ||
        (st = mica__control_plan(b)) != MICA_OK ||
        (st = setup_layers(b)) != MICA_OK ||
        (st = mica__infer_inputs(b)) != MICA_OK)
        return st;
    took(b, "graph, order, loops and conditionals", &t);
    for (s = 0; s < b->e->nb_layers; s++)
        if ((st = mica__choose(b, mica__net_layer(b, s), &b->e->layers[s])) != MICA_OK ||
            (st = mica__instantiate(b, mica__net_layer(b, s), &b->e->layers[s])) != MICA_OK)
            return st;
    took(b, "implementations chosen, instances made", &t);
    if ((st = mica__infer_kinds(b)) != MICA_OK ||
        (st = mica__check_devices(b)) != MICA_OK ||
        (st = mica__infer_host_instances(b)) != MICA_OK)
        return st;
    for (s = 0; s < b->e->nb_layers; s++)
        if ((st = mica__infer_layer(b, s)) != MICA_OK)
            return st;
    if ((st = mica__infer_check_inputs(b)) != MICA_OK ||
        (st = mica__control_check(b)) != MICA_OK ||
        (st = mica__dds_check(b)) != MICA_OK)
        return st;
    mica__control_lifetimes(b->e);
    if (!b->validate_only && !b->facts &&
        ((st = mica__constants_find(b->e)) != MICA_OK ||
         (st = mica__inplace(b->e)) != MICA_OK))
        return st;
    took(b, "kinds, types and shapes", &t);
    st = mica__build_profiles(b);
    took(b, "profiles, configuration and memory plans", &t);
    return st;
}

void mica__engine_free(mica_engine_t *e);

/* What a build makes. */
enum { BUILD_ENGINE, BUILD_VALIDATE, BUILD_FACTS };

/*
 * Build net for the device `dev` (bit `device`), already picked and
 * opened; `mode` BUILD_VALIDATE: run the same checks without a device,
 * BUILD_FACTS: an engine that says what the passes ask
 * (mica__build_facts); again: a second build of a rewritten network,
 * which does not repeat the warnings of the first; tc: autotune with
 * this timing cache (NULL: the first tactics and the highest
 * priorities).
 */
static mica_status_t build(mica_network_t *net, const mica_build_config_t *cfg,
                           int mode, int again, uint32_t device,
                           const mica__device_t *dev, mica__tcache_t *tc,
                           mica_engine_t **out)
{
    int validate_only = mode == BUILD_VALIDATE;
    build_t b;
    mica_status_t st;

    memset(&b, 0, sizeof b);
    b.net = net;
    b.ctx = net->ctx;
    /* Version 1's first layout ends before `autotune`. */
    b.cfg = cfg && cfg->struct_size >= offsetof(mica_build_config_t, autotune)
                ? cfg : NULL;
    b.autotune = tc != NULL && mode == BUILD_ENGINE;
    b.tcache = tc;
    b.validate_only = validate_only;
    b.facts = mode == BUILD_FACTS;
    b.again = again || b.facts;
    b.e = calloc(1, sizeof *b.e);
    if (!b.e)
        return mica__fail(b.ctx, MICA_ERR_NOMEM, "out of host memory");
    pthread_mutex_init(&b.e->const_lock, NULL);
    b.e->ctx = net->ctx;
    b.e->device = device;
    b.e->dev = dev;
    st = run_build(&b);
    mica__index_free(&b.names);
    free(b.def_layer);
    free(b.def_slot);
    free(b.order);
    free(b.role);
    free(b.step_construct);
    free(b.step_branch);
    if (st != MICA_OK || validate_only) {
        mica__engine_free(b.e);
        b.e = NULL;
    } else {
        int32_t s;
        for (s = 0; s < b.e->nb_layers; s++)
            b.e->layers[s].params = NULL; /* the network's, not ours */
        mica__engine_index(b.e);
    }
    if (out)
        *out = b.e;
    return st;
}

mica_status_t mica_network_validate(mica_network_t *net)
{
    return build(net, NULL, BUILD_VALIDATE, 0, 0, NULL, NULL, NULL);
}

/*
 * Whether cfg asks to time the implementations and tactics on `device`:
 * autotune positive, or 0 (the default) on a device with CUDA graphs
 * (CUDA, as TensorRT always times); negative never.
 */
static int wants_autotune(const mica_build_config_t *cfg,
                          const mica__device_t *dev)
{
    int32_t a = 0;
    if (cfg && cfg->struct_size >= offsetof(mica_build_config_t, autotune) +
                                       sizeof cfg->autotune)
        a = cfg->autotune;
    return a > 0 || (a == 0 && dev && dev->capture_begin);
}

/* cfg's timing cache file, or NULL. */
static const char *timing_cache(const mica_build_config_t *cfg)
{
    if (cfg && cfg->struct_size >= offsetof(mica_build_config_t,
                                            timing_cache) +
                                       sizeof cfg->timing_cache)
        return cfg->timing_cache;
    return NULL;
}

mica_status_t mica__build_facts(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                uint32_t device, const mica__device_t *dev,
                                mica_engine_t **out)
{
    return build(net, cfg, BUILD_FACTS, 1, device, dev, NULL, out);
}

/* The precisions cfg allows, as bits; float32 always. */
static uint32_t precisions(const mica_build_config_t *cfg)
{
    uint32_t bits = 1u << MICA_FLOAT32;
    if (cfg && cfg->struct_size >= offsetof(mica_build_config_t, precisions) +
                                       sizeof cfg->precisions)
        bits |= cfg->precisions;
    return bits;
}

/*
 * The builds of net for `device`: the network as it is, then rewritten
 * in float16 where allowed and asked, then for memory formats, each from
 * what the build before knows.  Only the last one autotunes (with tc):
 * the ones before it are there to be rewritten, and the last is built
 * once more, tuned, when no rewrite followed it.
 */
static mica_status_t build_all(mica_network_t *net,
                               const mica_build_config_t *cfg, int asked,
                               uint32_t device, const mica__device_t *dev,
                               mica__tcache_t *tc, mica_engine_t **out)
{
    uint32_t allowed = precisions(cfg);
    mica_network_t *half = NULL, *formats = NULL, *last;
    mica_status_t st;

    if ((st = build(net, cfg, BUILD_ENGINE, 0, device, dev, NULL, out)) !=
        MICA_OK)
        return st;
    /* Float16: rewrite the network with what the float32 build knows of
     * each implementation, then build the rewritten one. */
    if (asked || (allowed & (1u << MICA_FLOAT16)))
        st = mica__precision_rewrite(net, *out, allowed, &half);
    if (st == MICA_OK && half) {
        mica_engine_destroy(*out);
        *out = NULL;
        st = build(half, cfg, BUILD_ENGINE, 1, device, dev, NULL, out);
    }
    /* Formats: the same, from what that build knows (core/formats.c). */
    if (st == MICA_OK)
        st = mica__formats_rewrite(half ? half : net, *out, &formats);
    last = formats ? formats : half ? half : net;
    if (st == MICA_OK && (formats || tc)) {
        mica_engine_destroy(*out);
        *out = NULL;
        st = build(last, cfg, BUILD_ENGINE, 1, device, dev, tc, out);
    }
    mica_network_destroy(half);
    mica_network_destroy(formats);
    if (st != MICA_OK) {
        mica_engine_destroy(*out);
        *out = NULL;
    }
    return st;
}

mica_status_t mica__build_plain(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                uint32_t device, const mica__device_t *dev,
                                mica_engine_t **out)
{
    int32_t i, asked = 0;
    *out = NULL;
    for (i = 0; i < net->nb_layers; i++)
        asked |= net->layers[i].precision == MICA_FLOAT16 + 1;
    return build_all(net, cfg, asked, device, dev, NULL, out);
}

mica_status_t mica_engine_build(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                mica_engine_t **out)
{
    uint32_t device;
    const mica__device_t *dev;
    mica_network_t *passed = NULL;
    mica__passes_chain_t chain = {NULL, 0};
    mica__pass_record_t *records = NULL;
    mica_context_t *ctx = net->ctx;
    mica__tcache_t *tc = NULL;
    mica_status_t st = MICA_OK;
    int32_t i, asked = 0, nb_records = 0;
    double t0 = now_ms();

    *out = NULL;
    if ((st = mica__deploy_check(net->ctx)) != MICA_OK ||
        (st = mica__device_pick(net->ctx, cfg ? cfg->device : 0, &device,
                                &dev)) != MICA_OK)
        return st;
    for (i = 0; i < net->nb_layers; i++)
        asked |= net->layers[i].precision == MICA_FLOAT16 + 1;
    /* The graph passes first: the rest sees the rewritten network
     * (core/passes/).  A rewritten network the builder refuses (a fused
     * layer's implementation that does not take the chain's types, say)
     * is built as written: passes never fail a build that would succeed
     * without them. */
    if ((st = mica__passes_run(net, cfg, device, dev, &passed, &chain,
                               &records, &nb_records)) != MICA_OK)
        return st;
    if (wants_autotune(cfg, dev) &&
        (st = mica__tcache_open(ctx, timing_cache(cfg), &tc)) != MICA_OK) {
        mica__passes_chain_free(&chain);
        mica__pass_records_free(records, nb_records);
        return st;
    }
    if (passed) {
        st = build_all(passed, cfg, asked, device, dev, tc, out);
        if (st != MICA_OK && st != MICA_ERR_NOMEM) {
            char why[MICA_ERROR_MAX];
            snprintf(why, sizeof why, "%s", mica_context_error(ctx));
            mica__pass_records_free(records, nb_records);
            records = NULL;
            nb_records = 0;
            st = build_all(net, cfg, asked, device, dev, tc, out);
            if (st == MICA_OK)
                mica__log(ctx, MICA_LOG_WARNING, "passes: the rewritten "
                          "network does not build (%s); built without "
                          "passes", why);
        }
    } else {
        st = build_all(net, cfg, asked, device, dev, tc, out);
    }
    mica__passes_chain_free(&chain);
    /* A cache that cannot be written costs the next build its timings,
     * not this build its engine. */
    if (st == MICA_OK && mica__tcache_save(ctx, tc) != MICA_OK)
        mica__log(ctx, MICA_LOG_WARNING, "%s", mica_context_error(ctx));
    mica__tcache_free(tc);
    if (st != MICA_OK) {
        mica__pass_records_free(records, nb_records);
        return st;
    }
    (*out)->passes = records;
    (*out)->nb_passes = nb_records;
    mica__log(ctx, MICA_LOG_INFO, "engine built for %s in %.1f ms: %d "
              "layers, %d profile%s, %lld arena bytes%s",
              mica__device_desc(device)->name, now_ms() - t0,
              (int)(*out)->nb_layers, (int)(*out)->nb_profiles,
              (*out)->nb_profiles == 1 ? "" : "s",
              (long long)((*out)->nb_profiles ? (*out)->profiles[0].arena_bytes
                                              : 0),
              tc ? ", tactics timed" : "");
    return MICA_OK;
}
