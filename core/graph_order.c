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

/* ---- tensors and order ----------------------------------------------- */

typedef mica__build_t build_t;

int32_t mica__tensor_of(const mica__build_t *b, const char *name)
{
    return mica__index_get(&b->names, name);
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
        mica__index_reserve(&b->names, (size_t)n) != 0)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");

    for (i = 0; i < net->nb_inputs; i++) {
        const mica__net_input_t *in = &net->inputs[i];
        int32_t prev = mica__index_get(&b->names, in->name);
        if (prev >= 0)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%stensor '%s' is defined twice: network input "
                              "'%s' is declared twice",
                              mica__at(in->origin, at, sizeof at), in->name,
                              in->name);
        /* reserved for every name above: cannot fail */
        (void)mica__index_put(&b->names, in->name, e->nb_tensors);
        b->def_layer[e->nb_tensors] = -1;
        b->def_slot[e->nb_tensors] = i;
        e->nb_tensors++;
    }
    for (i = 0; i < net->nb_layers; i++) {
        const mica__net_layer_t *l = &net->layers[i];
        for (j = 0; j < l->nb_outputs; j++) {
            int32_t prev = mica__index_get(&b->names, l->outputs[j]);
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
            (void)mica__index_put(&b->names, l->outputs[j],
                                  e->nb_tensors);
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
            int32_t t = l->inputs[j] ? mica__index_get(&b->names, l->inputs[j]) : -1;
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

/*
 * The consumers of every tensor as one array (compressed rows): edges
 * first[t]..first[t+1]-1 of *edges name the layers reading tensor t, in
 * layer order and once per input slot (a layer reading t twice is listed
 * twice), back edges of Recurrences left out.  Inputs must be resolved.
 */
static int consumers(const build_t *b, int32_t **first, int32_t **edges)
{
    const mica_network_t *net = b->net;
    int32_t nt = b->e->nb_tensors, i, j, t;
    int32_t *f = calloc((size_t)nt + 1, sizeof *f), *ed, *fill;
    size_t total = 0;

    if (!f)
        return -1;
    for (i = 0; i < net->nb_layers; i++)
        for (j = 0; j < net->layers[i].nb_inputs; j++)
            if (net->layers[i].inputs[j] && !back_edge(b, i, j)) {
                f[mica__index_get(&b->names, net->layers[i].inputs[j]) + 1]++;
                total++;
            }
    for (t = 0; t < nt; t++)
        f[t + 1] += f[t];
    ed = calloc(total ? total : 1, sizeof *ed);
    fill = calloc((size_t)nt + 1, sizeof *fill);
    if (!ed || !fill) {
        free(f);
        free(ed);
        free(fill);
        return -1;
    }
    for (i = 0; i < net->nb_layers; i++)
        for (j = 0; j < net->layers[i].nb_inputs; j++)
            if (net->layers[i].inputs[j] && !back_edge(b, i, j)) {
                t = mica__index_get(&b->names, net->layers[i].inputs[j]);
                ed[f[t] + fill[t]++] = i;
            }
    free(fill);
    *first = f;
    *edges = ed;
    return 0;
}

mica_status_t mica__order_layers(mica__build_t *b)
{
    mica_network_t *net = b->net;
    int32_t i, j, k, n = net->nb_layers, head = 0, tail = 0;
    int32_t *indegree = calloc((size_t)(n > 0 ? n : 1), sizeof *indegree);
    int32_t *queue = calloc((size_t)(n > 0 ? n : 1), sizeof *queue);
    int32_t *first = NULL, *edges = NULL;
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
            t = mica__index_get(&b->names, l->inputs[j]);
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
        if (mica__index_get(&b->names, net->outputs[i]) < 0)
            st = mica__fail(b->ctx, MICA_ERR_INVALID,
                            "%soutput '%s' is not defined (not a network "
                            "input nor any layer's output)",
                            mica__at(net->output_origins[i], at, sizeof at),
                            net->outputs[i]);
    for (i = 0; i < net->nb_shape_outputs && st == MICA_OK; i++)
        if (mica__index_get(&b->names, net->shape_outputs[i]) < 0)
            st = mica__fail(b->ctx, MICA_ERR_INVALID,
                            "%sshape output '%s' is not defined (not a "
                            "network input nor any layer's output)",
                            mica__at(net->shape_output_origins[i], at,
                                     sizeof at), net->shape_outputs[i]);
    if (st != MICA_OK)
        goto done;
    if (consumers(b, &first, &edges) != 0) {
        st = mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (i = 0; i < n; i++)
        if (indegree[i] == 0)
            queue[tail++] = i;
    /* Kahn's: each layer taken in turn releases the consumers of its
     * outputs, in layer order; the order is stable and O(layers + edges). */
    while (head < tail) {
        const mica__net_layer_t *l = &net->layers[queue[head++]];
        for (j = 0; j < l->nb_outputs; j++) {
            int32_t t = mica__index_get(&b->names, l->outputs[j]);
            for (k = first[t]; k < first[t + 1]; k++)
                if (--indegree[edges[k]] == 0)
                    queue[tail++] = edges[k];
        }
    }
    if (tail < n)
        st = report_cycle(b, indegree);
done:
    free(first);
    free(edges);
    free(indegree);
    return st;
}
