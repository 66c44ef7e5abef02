/*
 * core/graph_order.c - the structure of a network being built: every
 * tensor defined once (a name -> index map), every reference resolved,
 * the layers in a topological order (Kahn's, stable), a cycle described
 * by the layers on it.
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

void mica__name_map_free(mica__name_map_t *m)
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

/* ---- tensors and order ----------------------------------------------- */

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

mica_status_t mica__define_tensors(mica__build_t *b)
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

mica_status_t mica__order_layers(mica__build_t *b)
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
