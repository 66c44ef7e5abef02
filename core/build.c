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
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small name -> index map --------------------------------------- */

typedef mica__name_map_t name_map_t;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int map_init(name_map_t *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 1)
        m->cap *= 2;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->values = calloc(m->cap, sizeof *m->values);
    return m->keys && m->values ? 0 : -1;
}

static void map_free(name_map_t *m)
{
    free(m->keys);
    free(m->values);
}

/* The slot of key: where it is, or the empty slot where it would go. */
static size_t map_slot(const name_map_t *m, const char *key)
{
    size_t i = (size_t)hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int32_t map_get(const name_map_t *m, const char *key)
{
    size_t i = map_slot(m, key);
    return m->keys[i] ? m->values[i] : -1;
}

/* The map is sized for every name up front, so it never fills. */
static void map_put(name_map_t *m, const char *key, int32_t value)
{
    size_t i = map_slot(m, key);
    m->keys[i] = key;
    m->values[i] = value;
}

/* ---- the build state ------------------------------------------------- */

typedef mica__build_t build_t;

int32_t mica__tensor_of(const mica__build_t *b, const char *name)
{
    return map_get(&b->names, name);
}

/* Whether input j of network layer i is a Recurrence's back edge. */
static int back_edge(const build_t *b, int32_t i, int32_t j)
{
    return j == 1 && b->role[i] == MICA_ROLE_RECURRENCE;
}

static const char *layer_at(const mica__net_layer_t *l, char *buf, size_t n)
{
    return mica__at(l->origin, buf, n);
}

/* Collect tensors: inputs, then each layer's outputs; no name twice. */
static mica_status_t define_tensors(build_t *b)
{
    mica_network_t *net = b->net;
    mica_engine_t *e = b->e;
    int32_t i, j, n = net->nb_inputs;
    char at[512];

    for (i = 0; i < net->nb_layers; i++)
        n += net->layers[i].nb_outputs;
    e->tensors = calloc((size_t)(n > 0 ? n : 1), sizeof *e->tensors);
    b->def_layer = calloc((size_t)(n > 0 ? n : 1), sizeof *b->def_layer);
    b->def_slot = calloc((size_t)(n > 0 ? n : 1), sizeof *b->def_slot);
    if (!e->tensors || !b->def_layer || !b->def_slot ||
        map_init(&b->names, (size_t)n) != 0)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");

    for (i = 0; i < net->nb_inputs; i++) {
        const mica__net_input_t *in = &net->inputs[i];
        int32_t prev = map_get(&b->names, in->name);
        if (prev >= 0)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%stensor '%s' is defined twice: network input "
                              "'%s' is declared twice",
                              mica__at(in->origin, at, sizeof at), in->name,
                              in->name);
        map_put(&b->names, in->name, e->nb_tensors);
        b->def_layer[e->nb_tensors] = -1;
        b->def_slot[e->nb_tensors] = i;
        e->nb_tensors++;
    }
    for (i = 0; i < net->nb_layers; i++) {
        const mica__net_layer_t *l = &net->layers[i];
        for (j = 0; j < l->nb_outputs; j++) {
            int32_t prev = map_get(&b->names, l->outputs[j]);
            if (prev >= 0) {
                int32_t dl = b->def_layer[prev];
                char also[512];
                if (dl < 0)
                    snprintf(also, sizeof also, "a network input");
                else
                    snprintf(also, sizeof also, "an output of layer '%s'%s%s",
                             net->layers[dl].name,
                             net->layers[dl].origin ? " at " : "",
                             net->layers[dl].origin ? net->layers[dl].origin
                                                    : "");
                return mica__fail(b->ctx, MICA_ERR_INVALID,
                                  "%slayer '%s': tensor '%s' is defined "
                                  "twice: it is also %s",
                                  layer_at(l, at, sizeof at), l->name,
                                  l->outputs[j], also);
            }
            map_put(&b->names, l->outputs[j], e->nb_tensors);
            b->def_layer[e->nb_tensors] = i;
            b->def_slot[e->nb_tensors] = j;
            e->nb_tensors++;
        }
    }
    return MICA_OK;
}

/*
 * Describe a cycle among the layers Kahn's algorithm could not order.  Each
 * of them has an input produced by another of them, so walking from one to
 * the producer of such an input must come back to a layer already seen.
 */
static mica_status_t report_cycle(build_t *b, const int32_t *indegree)
{
    mica_network_t *net = b->net;
    int32_t n = net->nb_layers, cur = -1, len = 0, first, i, j;
    int32_t *seen = calloc((size_t)n, sizeof *seen); /* trail index + 1 */
    int32_t *trail = calloc((size_t)n, sizeof *trail);
    char path[1024], at[512];
    size_t pos;
    mica_status_t st;

    for (i = 0; i < n && cur < 0; i++)
        if (indegree[i] > 0)
            cur = i;
    if (!seen || !trail || cur < 0) {
        free(seen);
        free(trail);
        return mica__fail(b->ctx, MICA_ERR_INVALID, "the network has a cycle");
    }
    while (!seen[cur]) {
        const mica__net_layer_t *l = &net->layers[cur];
        trail[len] = cur;
        seen[cur] = ++len;
        for (j = 0; j < l->nb_inputs; j++) {
            int32_t t = l->inputs[j] ? map_get(&b->names, l->inputs[j]) : -1;
            int32_t p = t >= 0 ? b->def_layer[t] : -1;
            if (p >= 0 && indegree[p] > 0) {
                cur = p;
                break;
            }
        }
    }
    /* The loop is trail[first..len-1], each fed by the next: print it in
     * the direction data flows, back to where it starts. */
    first = seen[cur] - 1;
    pos = (size_t)snprintf(path, sizeof path, "%s", net->layers[cur].name);
    for (i = len - 1; i >= first && pos < sizeof path; i--)
        pos += (size_t)snprintf(path + pos, sizeof path - pos, " -> %s",
                                net->layers[trail[i]].name);
    st = mica__fail(b->ctx, MICA_ERR_INVALID,
                    "%slayer '%s': the network has a cycle: %s",
                    layer_at(&net->layers[cur], at, sizeof at),
                    net->layers[cur].name, path);
    free(seen);
    free(trail);
    return st;
}

/* Resolve references and order the layers (Kahn, stable). */
static mica_status_t order_layers(build_t *b)
{
    mica_network_t *net = b->net;
    int32_t i, j, k, n = net->nb_layers, head = 0, tail = 0;
    int32_t *indegree = calloc((size_t)(n > 0 ? n : 1), sizeof *indegree);
    int32_t *queue = calloc((size_t)(n > 0 ? n : 1), sizeof *queue);
    mica_status_t st = MICA_OK;
    char at[512];

    b->order = queue;
    if (!indegree || !queue) {
        free(indegree);
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    for (i = 0; i < n && st == MICA_OK; i++) {
        const mica__net_layer_t *l = &net->layers[i];
        for (j = 0; j < l->nb_inputs; j++) {
            int32_t t;
            if (!l->inputs[j])
                continue;
            t = map_get(&b->names, l->inputs[j]);
            if (t < 0) {
                const char *o = l->input_origins && l->input_origins[j]
                                    ? l->input_origins[j] : l->origin;
                st = mica__fail(b->ctx, MICA_ERR_INVALID,
                                "%slayer '%s': input '%s' is not defined (not "
                                "a network input nor any layer's output)",
                                mica__at(o, at, sizeof at), l->name,
                                l->inputs[j]);
                break;
            }
            if (b->def_layer[t] >= 0 && !back_edge(b, i, j))
                indegree[i]++;
        }
    }
    for (i = 0; i < net->nb_outputs && st == MICA_OK; i++)
        if (map_get(&b->names, net->outputs[i]) < 0)
            st = mica__fail(b->ctx, MICA_ERR_INVALID,
                            "%soutput '%s' is not defined (not a network "
                            "input nor any layer's output)",
                            mica__at(net->output_origins[i], at, sizeof at),
                            net->outputs[i]);
    for (i = 0; i < net->nb_shape_outputs && st == MICA_OK; i++)
        if (map_get(&b->names, net->shape_outputs[i]) < 0)
            st = mica__fail(b->ctx, MICA_ERR_INVALID,
                            "%sshape output '%s' is not defined (not a "
                            "network input nor any layer's output)",
                            mica__at(net->shape_output_origins[i], at,
                                     sizeof at), net->shape_outputs[i]);
    if (st != MICA_OK)
        goto done;
    for (i = 0; i < n; i++)
        if (indegree[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        const mica__net_layer_t *l = &net->layers[queue[head++]];
        /* Each consumer edge of each output: decrement. O(L * E) is fine
         * for the network sizes of manifests; a consumer index would do
         * better for very large graphs. */
        for (j = 0; j < l->nb_outputs; j++)
            for (k = 0; k < n; k++) {
                const mica__net_layer_t *c = &net->layers[k];
                int32_t m;
                for (m = 0; m < c->nb_inputs; m++)
                    if (c->inputs[m] && !back_edge(b, k, m) &&
                        strcmp(c->inputs[m], l->outputs[j]) == 0 &&
                        --indegree[k] == 0)
                        queue[tail++] = k;
            }
    }
    if (tail < n)
        st = report_cycle(b, indegree);
done:
    free(indegree);
    return st;
}

/* ---- per layer ------------------------------------------------------- */

mica_status_t mica__layer_fail(mica__build_t *b, int32_t step,
                               const mica_error_t *err, const char *fallback)
{
    const mica__net_layer_t *nl = mica__net_layer(b, step);
    char at[512];
    return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                      layer_at(nl, at, sizeof at), nl->name, nl->type,
                      mica__error_msg(err, fallback));
}

/* The implementation `list` ("Type=impl,...") names for `type`, or NULL. */
static const char *named_in(const char *list, const char *type, char *buf,
                            size_t len)
{
    size_t tl = strlen(type);

    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > tl + 1 && strncmp(list, type, tl) == 0 && list[tl] == '=') {
            snprintf(buf, len, "%.*s", (int)(n - tl - 1), list + tl + 1);
            return buf;
        }
        list = end ? end + 1 : NULL;
    }
    return NULL;
}

/*
 * The implementation preferred for `type` and where the preference comes
 * from: the build configuration (the manifest's modules.prefer), then the
 * deploy-time choice (the context's, else $MICA_PREFER).  A loaded engine
 * has no build configuration.
 */
static const char *preferred(const build_t *b, const char *type, char *buf,
                             size_t len, const char **source)
{
    const char *impl;
    int32_t i;

    for (i = 0; b->cfg && i < b->cfg->nb_prefer; i++)
        if (strcmp(b->cfg->prefer_types[i], type) == 0) {
            *source = "modules.prefer";
            return b->cfg->prefer_impls[i];
        }
    *source = b->ctx->prefer ? "the deploy-time choice" : "MICA_PREFER";
    impl = mica__deploy_choice(b->ctx, type, buf, len);
    return impl;
}

const char *mica__deploy_choice(const mica_context_t *ctx, const char *type,
                                char *buf, size_t len)
{
    return named_in(ctx->prefer ? ctx->prefer : getenv("MICA_PREFER"), type,
                    buf, len);
}

/*
 * Record why layer l got its implementation (a phrase for inspect), with
 * the network layer's note if it has one.
 */
static mica_status_t because_of(build_t *b, const mica__net_layer_t *nl,
                                mica__layer_t *l, int pinned, const char *fmt,
                                const char *arg)
{
    char *why = mica__asprintf(fmt, arg);
    free(l->why);
    l->why = why && nl->note ? mica__asprintf("%s; %s", why, nl->note) : why;
    if (l->why != why)
        free(why);
    l->pinned = pinned;
    return l->why ? MICA_OK
                  : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
}

#define because(b, l, pinned, fmt, arg) \
    because_of((b), nl, (l), (pinned), (fmt), (arg))

/* Choose the creator of network layer nl for the engine's device. */
static mica_status_t choose(build_t *b, const mica__net_layer_t *nl,
                            mica__layer_t *l)
{
    char pref_buf[128], at[512], msg[MICA_ERROR_MAX];
    const char *pref, *source = "", *name;
    mica_status_t st;
    uint32_t dev = b->validate_only ? 0 : b->e->device;
    int pinned = nl->implementation && (!nl->from_state || nl->state_pinned);

    if (!pinned &&
        (pref = preferred(b, nl->type, pref_buf, sizeof pref_buf, &source)) != NULL) {
        st = mica_registry_find(b->ctx, nl->ns, nl->type, nl->version, pref,
                                dev, &l->info);
        if (st == MICA_OK)
            return because(b, l, 1, "%s", source);
        mica__log(b->ctx, MICA_LOG_WARNING,
                  "layer '%s': implementation '%s' of %s (from %s) is not "
                  "usable (%s); using the %s", nl->name, pref, nl->type,
                  source, mica_context_error(b->ctx),
                  nl->from_state ? "saved one" : "default");
    }
    name = pinned || nl->from_state ? nl->implementation : NULL;
    st = mica_registry_find(b->ctx, nl->ns, nl->type, nl->version, name, dev,
                            &l->info);
    if (st == MICA_OK) {
        if (pinned) {
            l->layer_pinned = 1;
            return because(b, l, 1, "%s", "pinned by the layer");
        }
        if (nl->from_state)
            return because(b, l, 1, "%s", nl->saved_why && nl->saved_why[0]
                                              ? nl->saved_why
                                              : "chosen at build time");
        return because(b, l, 0, "the highest priority for %s",
                       dev ? mica__device_desc(dev)->name : "any device");
    }
    snprintf(msg, sizeof msg, "%slayer '%s': %s", layer_at(nl, at, sizeof at),
             nl->name, mica_context_error(b->ctx));
    /* A layer that only computes shape tensors (or checks them) runs on
     * the host: any implementation will do until the kinds are known. */
    if (dev != 0 && mica_registry_find(b->ctx, nl->ns, nl->type, nl->version,
                                       name, 0, &l->info) == MICA_OK) {
        l->device_error = mica__strdup(msg);
        return l->device_error
                   ? because(b, l, pinned, "%s", "runs on the host only")
                   : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    return mica__fail(b->ctx, st, "%s", msg);
}

/* Every layer that runs on the device has an implementation for it. */
static mica_status_t check_devices(build_t *b)
{
    int32_t s;
    for (s = 0; s < b->e->nb_layers; s++) {
        const mica__layer_t *l = &b->e->layers[s];
        if (l->run_device && l->device_error)
            return mica__fail(b->ctx, MICA_ERR_NOT_FOUND, "%s",
                              l->device_error);
    }
    return MICA_OK;
}

mica_layer_t *mica__from_state(const mica_layer_creator_t *c,
                               const mica__net_layer_t *nl, int host,
                               mica_error_t *err)
{
    const void *data = nl->state;
    size_t size = nl->state_size;

    if (host && nl->host_state) {
        data = nl->host_state;
        size = nl->host_state_size;
    }
    if (MICA__HAS_CREATOR_OP(c, deserialize_ex))
        return c->deserialize_ex(c, nl->name, data, size, nl->state_flags,
                                 err);
    if (c->deserialize)
        return c->deserialize(c, nl->name, data, size, err);
    mica__host()->set_error(err, "%s v%d (implementation '%s') cannot be "
                         "deserialized (no deserialize)", c->type,
                         (int)c->version, c->implementation);
    return NULL;
}

/* Create the instance and check that its output count matches. */
static mica_status_t instantiate(build_t *b, const mica__net_layer_t *nl,
                                 mica__layer_t *l)
{
    const mica_layer_creator_t *c = l->info.creator;
    mica_error_t err;
    char at[512];
    int32_t n;

    if (nl->from_state) {
        if (!c->deserialize && !MICA__HAS_CREATOR_OP(c, deserialize_ex))
            return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                              "%slayer '%s': %s v%d (implementation '%s') "
                              "cannot be deserialized (no deserialize)",
                              layer_at(nl, at, sizeof at), nl->name, c->type,
                              (int)c->version, c->implementation);
        mica__error_clear(&err);
        l->instance = mica__from_state(c, nl, 0, &err);
        if (!l->instance)
            return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                              layer_at(nl, at, sizeof at), nl->name, nl->type,
                              mica__error_msg(&err, "deserialize failed"));
        goto created;
    }
    if (mica__net_layer_params(b->net, (mica__net_layer_t *)nl, c,
                               &l->params) != MICA_OK)
        return MICA_ERR_INVALID;
    mica__error_clear(&err);
    l->instance = c->create(c, nl->name, l->params, &err);
    if (!l->instance)
        return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                          layer_at(nl, at, sizeof at), nl->name, nl->type,
                          mica__error_msg(&err, "create failed"));
created:
    n = l->instance->ops->nb_outputs(l->instance);
    if (n != nl->nb_outputs)
        return mica__fail(b->ctx, MICA_ERR_INVALID,
                          "%slayer '%s' (%s): it has %d output%s but the "
                          "layer lists %d", layer_at(nl, at, sizeof at),
                          nl->name, nl->type, (int)n, n == 1 ? "" : "s",
                          (int)nl->nb_outputs);
    return MICA_OK;
}

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
        l->name = mica__strdup(nl->name);
        l->origin = mica__strdup(nl->origin);
        l->construct = b->step_construct[s];
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
            l->inputs[i] = nl->inputs[i] ? map_get(&b->names, nl->inputs[i]) : -1;
        for (i = 0; i < nl->nb_outputs; i++) {
            l->outputs[i] = map_get(&b->names, nl->outputs[i]);
            e->tensors[l->outputs[i]].producer = s;
        }
    }
    e->nb_outputs = net->nb_outputs;
    e->output_index = calloc((size_t)(net->nb_outputs + 1), sizeof *e->output_index);
    if (!e->output_index)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < net->nb_outputs; i++) {
        e->output_index[i] = map_get(&b->names, net->outputs[i]);
        e->tensors[e->output_index[i]].is_output = 1;
    }
    for (t = 0; t < e->nb_tensors; t++)
        e->tensors[t].scale = 1.0f;
    for (i = 0; i < net->nb_scales; i++) {
        char at[512];
        t = map_get(&b->names, net->scale_names[i]);
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
        e->shape_output_index[i] = map_get(&b->names, net->shape_outputs[i]);
        e->tensors[e->shape_output_index[i]].is_shape_output = 1;
    }
    return MICA_OK;
}

static mica_status_t run_build(build_t *b)
{
    mica_status_t st;
    int32_t s;

    if ((st = mica__expr_builder_create(&b->e->eb)) != MICA_OK)
        return mica__fail(b->ctx, st, "out of host memory");
    if ((st = define_tensors(b)) != MICA_OK ||
        (st = mica__control_roles(b)) != MICA_OK ||
        (st = order_layers(b)) != MICA_OK ||
        (st = mica__control_plan(b)) != MICA_OK ||
        (st = setup_layers(b)) != MICA_OK ||
        (st = mica__infer_inputs(b)) != MICA_OK)
        return st;
    for (s = 0; s < b->e->nb_layers; s++)
        if ((st = choose(b, mica__net_layer(b, s), &b->e->layers[s])) != MICA_OK ||
            (st = instantiate(b, mica__net_layer(b, s), &b->e->layers[s])) != MICA_OK)
            return st;
    if ((st = mica__infer_kinds(b)) != MICA_OK ||
        (st = check_devices(b)) != MICA_OK ||
        (st = mica__infer_host_instances(b)) != MICA_OK)
        return st;
    for (s = 0; s < b->e->nb_layers; s++)
        if ((st = mica__infer_layer(b, s)) != MICA_OK)
            return st;
    if ((st = mica__infer_check_inputs(b)) != MICA_OK ||
        (st = mica__control_check(b)) != MICA_OK)
        return st;
    mica__control_lifetimes(b->e);
    return mica__build_profiles(b);
}

void mica__engine_free(mica_engine_t *e);

/*
 * Build net for the device `dev` (bit `device`), already picked and
 * opened; validate_only: run the same checks without a device.
 */
static mica_status_t build(mica_network_t *net, const mica_build_config_t *cfg,
                           int validate_only, uint32_t device,
                           const mica__device_t *dev, mica_engine_t **out)
{
    build_t b;
    mica_status_t st;

    memset(&b, 0, sizeof b);
    b.net = net;
    b.ctx = net->ctx;
    /* Version 1's first layout ends before `autotune`. */
    b.cfg = cfg && cfg->struct_size >= offsetof(mica_build_config_t, autotune)
                ? cfg : NULL;
    b.autotune = b.cfg && b.cfg->struct_size >=
                              offsetof(mica_build_config_t, autotune) +
                                  sizeof b.cfg->autotune &&
                 b.cfg->autotune;
    b.validate_only = validate_only;
    b.e = calloc(1, sizeof *b.e);
    if (!b.e)
        return mica__fail(b.ctx, MICA_ERR_NOMEM, "out of host memory");
    b.e->ctx = net->ctx;
    b.e->device = device;
    b.e->dev = dev;
    st = run_build(&b);
    map_free(&b.names);
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
    }
    if (out)
        *out = b.e;
    return st;
}

mica_status_t mica_network_validate(mica_network_t *net)
{
    return build(net, NULL, 1, 0, NULL, NULL);
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

mica_status_t mica_engine_build(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                mica_engine_t **out)
{
    uint32_t allowed = precisions(cfg), device;
    const mica__device_t *dev;
    mica_network_t *half = NULL;
    mica_status_t st;
    int32_t i, asked = 0;

    *out = NULL;
    if ((st = mica__device_pick(net->ctx, cfg ? cfg->device : 0, &device,
                                &dev)) != MICA_OK)
        return st;
    for (i = 0; i < net->nb_layers; i++)
        asked |= net->layers[i].precision == MICA_FLOAT16 + 1;
    if ((st = build(net, cfg, 0, device, dev, out)) != MICA_OK ||
        !(asked || (allowed & (1u << MICA_FLOAT16))))
        return st;
    /* Float16: rewrite the network with what the float32 build knows of
     * each implementation, then build the rewritten one. */
    st = mica__precision_rewrite(net, *out, allowed, &half);
    if (st == MICA_OK && half) {
        mica_engine_destroy(*out);
        *out = NULL;
        st = build(half, cfg, 0, device, dev, out);
        mica_network_destroy(half);
    }
    if (st != MICA_OK) {
        mica_engine_destroy(*out);
        *out = NULL;
    }
    return st;
}
