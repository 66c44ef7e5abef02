/*
 * core/passes/passes.c - the table of graph passes, the selection of a
 * build's (mica_build_config_t.passes, no_passes), the driver that runs
 * them in order, and what the passes share: the facts of a network,
 * tensors by name, renamed tensors, copied layers, fresh names.
 *
 * The order is deliberate (docs/passes.md): constant folding first, so
 * that what every later pass sees of weights is weights; elimination
 * next, removing what folding left dead and what does nothing; then the
 * rewrites that make layers the fusion rules recognize (transposes into
 * MatrixMultiply's operand options and into weights, per-channel affine
 * ElementWise into Scale); the modules' fusion rules, on the simplest
 * network; pointwise fusion last, on what the rules left of the
 * element-by-element layers.
 */
#include <config.h>

#include "passes.h"
#include "fields.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const mica__pass_t mica__passes[] = {
    /* name, title, function, keeps_tensors */
    {"constant-folding", "constant folding", mica__pass_fold, 1},
    {"elimination", "elimination", mica__pass_eliminate, 1},
    {"transpose-folding", "transpose folding", mica__pass_transpose, 1},
    {"affine-scale", "affine to Scale", mica__pass_affine, 1},
    {"fusion", "fusion rules", mica__pass_fusion, 0},
    {"pointwise", "pointwise fusion", mica__pass_pointwise, 0},
};
const int32_t mica__nb_passes =
    (int32_t)(sizeof mica__passes / sizeof mica__passes[0]);

const char *mica_pass_name(int32_t index)
{
    return index >= 0 && index < mica__nb_passes ? mica__passes[index].name
                                                 : NULL;
}

/* ---- selection ---------------------------------------------------------- */

/* "constant-folding, elimination, ...": every pass's name, into buf. */
static void pass_names(char *buf, size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; i < mica__nb_passes && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                mica__passes[i].name);
}

/* Set on[i] to `value` for every pass `list` names ("all" every one,
 * "none" none); `what` names the list for messages. */
static mica_status_t mark(mica_context_t *ctx, const char *list,
                          const char *what, uint8_t value, uint8_t *on)
{
    const char *p = list;
    char names[512];
    int32_t i;

    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        int found = 0;
        while (n && (*p == ' ')) {
            p++;
            n--;
        }
        while (n && p[n - 1] == ' ')
            n--;
        if (n == 3 && !strncmp(p, "all", 3)) {
            memset(on, value, (size_t)mica__nb_passes);
            found = 1;
        } else if (n == 4 && !strncmp(p, "none", 4)) {
            memset(on, !value, (size_t)mica__nb_passes);
            found = 1;
        }
        for (i = 0; i < mica__nb_passes && !found; i++)
            if (strlen(mica__passes[i].name) == n &&
                !strncmp(mica__passes[i].name, p, n)) {
                on[i] = value;
                found = 1;
            }
        if (!found && n) {
            pass_names(names, sizeof names);
            return mica__fail(ctx, MICA_ERR_INVALID, "%s: no pass is named "
                              "'%.*s'; the passes are %s (or all, none)",
                              what, (int)n, p, names);
        }
        p = end ? end + 1 : NULL;
    }
    return MICA_OK;
}

mica_status_t mica__passes_selected(mica_context_t *ctx,
                                    const mica_build_config_t *cfg,
                                    uint8_t *on)
{
    int has = cfg && cfg->struct_size >= offsetof(mica_build_config_t,
                                                  no_passes) +
                                             sizeof cfg->no_passes;
    int32_t i;
    mica_status_t st;

    memset(on, 1, (size_t)mica__nb_passes);
    if (has && cfg->passes && cfg->passes[0]) {
        memset(on, 0, (size_t)mica__nb_passes);
        if ((st = mark(ctx, cfg->passes, "passes", 1, on)) != MICA_OK)
            return st;
    }
    if (has && (st = mark(ctx, cfg->no_passes, "no_passes", 0, on)) !=
                   MICA_OK)
        return st;
    if (cfg && cfg->struct_size >= offsetof(mica_build_config_t, no_fusion) +
                                       sizeof cfg->no_fusion &&
        cfg->no_fusion)
        for (i = 0; i < mica__nb_passes; i++)
            if (!strcmp(mica__passes[i].name, "fusion") ||
                !strcmp(mica__passes[i].name, "pointwise"))
                on[i] = 0;
    return MICA_OK;
}

/* ---- the driver --------------------------------------------------------- */

void mica__pass_records_free(mica__pass_record_t *r, int32_t n)
{
    int32_t i;
    for (i = 0; r && i < n; i++) {
        free(r[i].name);
        free(r[i].summary);
    }
    free(r);
}

void mica__passes_chain_free(mica__passes_chain_t *chain)
{
    int32_t i;
    for (i = chain->n - 1; i >= 0; i--)
        mica_network_destroy(chain->nets[i]);
    free(chain->nets);
    chain->nets = NULL;
    chain->n = 0;
}

/* Forget the facts (the network changed beyond what they say). */
static void forget_facts(mica__pass_run_t *p)
{
    mica_engine_destroy(p->facts);
    p->facts = NULL;
    p->facts_stale = 0;
    p->facts_failed = 0;
    mica__index_free(&p->facts_ix);
}

/* Forget stale facts during a pass: the tensors they gave the pass stay
 * valid until it ends (the driver destroys them then).  Facts go stale
 * only between passes, so a pass retires them once at most. */
static void retire_facts(mica__pass_run_t *p)
{
    assert(!p->facts_retired);
    p->facts_retired = p->facts;
    p->facts = NULL;
    forget_facts(p);
}

mica_status_t mica__pass_facts(mica__pass_run_t *p, const mica_engine_t **e)
{
    mica_status_t st;

    *e = NULL;
    if (p->facts_stale)
        retire_facts(p);
    if (p->facts_failed)
        return MICA_ERR_UNSUPPORTED;
    if (!p->facts) {
        st = mica__build_facts(p->net, p->cfg, p->device, p->dev, &p->facts);
        if (st == MICA_ERR_NOMEM)
            return st;
        if (st != MICA_OK) {
            mica__log(p->ctx, MICA_LOG_DEBUG, "passes: the network does "
                      "not build (%s): no pass changes it",
                      mica_context_error(p->ctx));
            p->facts_failed = 1;
            return MICA_ERR_UNSUPPORTED;
        }
    }
    *e = p->facts;
    return MICA_OK;
}

const mica__tensor_t *mica__pass_tensor(mica__pass_run_t *p,
                                        const char *name)
{
    const mica_engine_t *e = p->facts;
    mica_status_t st;
    int32_t t;

    if (!e && !p->facts_failed) {
        st = mica__pass_facts(p, &e);
        if (st != MICA_OK && st != MICA_ERR_UNSUPPORTED)
            p->st = st;
        if (st != MICA_OK || !e)
            return NULL;
    }
    if (!e || !name)
        return NULL;
    if (!p->facts_ix.nb)
        for (t = 0; t < e->nb_tensors; t++)
            if (mica__index_put(&p->facts_ix, e->tensors[t].name, t) != 0) {
                mica__index_free(&p->facts_ix);
                p->st = mica__fail(p->ctx, MICA_ERR_NOMEM,
                                   "out of host memory");
                return NULL;
            }
    t = mica__index_get(&p->facts_ix, name);
    if (t < 0 && p->facts_stale) {
        /* a tensor a pass that kept the others made (transpose-folding's
         * "/t"): the facts of the network as it is now.  The old ones
         * stay until the pass ends: it may hold tensors they gave. */
        retire_facts(p);
        return mica__pass_tensor(p, name);
    }
    return t >= 0 ? &e->tensors[t] : NULL;
}

int mica__pass_fixed(const mica_expr_t *x, int64_t *v)
{
    mica__expr_node_t n;
    if (!x)
        return 0;
    if (mica__expr_is_constant(x)) {
        *v = mica__expr_constant_value(x);
        return 1;
    }
    /* an interval of one value, not the "unknown" bounds (2^40) */
    mica__expr_inspect(x, &n);
    if (n.lo != n.hi || n.lo <= -((int64_t)1 << 40) ||
        n.hi >= ((int64_t)1 << 40))
        return 0;
    *v = n.lo;
    return 1;
}

int mica__pass_fixed_dims(const mica__tensor_t *t, mica_dims_t *d)
{
    int32_t i;
    memset(d, 0, sizeof *d);
    if (!t || t->shape.nb_dims < 0 || t->shape.nb_dims > MICA_MAX_DIMS)
        return 0;
    d->nb_dims = t->shape.nb_dims;
    for (i = 0; i < d->nb_dims; i++)
        if (!mica__pass_fixed(t->shape.d[i], &d->d[i]) || d->d[i] < 0)
            return 0;
    return 1;
}

mica_status_t mica__pass_order(const mica_network_t *net,
                               const mica__pass_graph_t *g, int32_t **order)
{
    int32_t n = net->nb_layers, li, i, head = 0, tail = 0;
    int32_t *waits = calloc((size_t)n + 1, sizeof *waits);
    int32_t *q = malloc(sizeof *q * ((size_t)n + 1));
    int32_t *first = malloc(sizeof *first * ((size_t)n + 1));
    int32_t *next = NULL, *edges = NULL, nb_edges = 0;
    uint8_t *done = calloc((size_t)n + 1, 1);
    mica_status_t st = MICA_OK;

    *order = NULL;
    for (li = 0; li < n; li++)
        nb_edges += net->layers[li].nb_inputs;
    next = malloc(sizeof *next * ((size_t)nb_edges + 1));
    edges = malloc(sizeof *edges * ((size_t)nb_edges + 1));
    if (!waits || !q || !first || !next || !edges || !done) {
        st = mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto out;
    }
    /* per producer, the list of its readers (one entry per input) */
    for (li = 0; li < n; li++)
        first[li] = -1;
    nb_edges = 0;
    for (li = 0; li < n; li++) {
        const mica__net_layer_t *nl = &net->layers[li];
        for (i = 0; i < nl->nb_inputs; i++) {
            int32_t pr = mica__pass_producer(g, nl->inputs[i], NULL);
            if (pr < 0 || pr == li ||
                (i == 1 && mica__pass_role(nl) == MICA_ROLE_RECURRENCE))
                continue;
            edges[nb_edges] = li;
            next[nb_edges] = first[pr];
            first[pr] = nb_edges++;
            waits[li]++;
        }
    }
    for (li = 0; li < n; li++)
        if (!waits[li])
            q[tail++] = li;
    /* Kahn; then whatever a cycle left, in the network's order */
    for (;;) {
        while (head < tail) {
            int32_t k;
            li = q[head++];
            done[li] = 1;
            for (k = first[li]; k >= 0; k = next[k])
                if (--waits[edges[k]] == 0)
                    q[tail++] = edges[k];
        }
        for (li = 0; li < n && (done[li] || waits[li] <= 0); li++)
            ;
        if (li == n)
            break;
        waits[li] = 0;
        q[tail++] = li;
    }
    *order = q;
    q = NULL;
out:
    free(waits);
    free(q);
    free(first);
    free(next);
    free(edges);
    free(done);
    return st;
}

/* Milliseconds of a monotonic clock. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Append a record of pass i (its summary in p) to *records. */
static mica_status_t record(mica__pass_run_t *p, int32_t i,
                            mica__pass_record_t *records, int32_t *n)
{
    mica__pass_record_t *r = &records[(*n)++];
    r->name = mica__strdup(mica__passes[i].name);
    r->summary = mica__strdup(p->summary[0] ? p->summary : "nothing changed");
    r->changed = p->changed;
    if (!r->name || !r->summary)
        return mica__fail(p->ctx, MICA_ERR_NOMEM, "out of host memory");
    return MICA_OK;
}

/* Keep network n in the chain (taken over, also on failure). */
static mica_status_t keep(mica_context_t *ctx, mica__passes_chain_t *chain,
                          mica_network_t *n)
{
    mica_network_t **grown = realloc(chain->nets, sizeof *grown *
                                     ((size_t)chain->n + 1));
    if (!grown) {
        mica_network_destroy(n);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    chain->nets = grown;
    chain->nets[chain->n++] = n;
    return MICA_OK;
}

mica_status_t mica__passes_run(mica_network_t *net,
                               const mica_build_config_t *cfg,
                               uint32_t device, const mica__device_t *dev,
                               mica_network_t **out,
                               mica__passes_chain_t *chain,
                               mica__pass_record_t **records,
                               int32_t *nb_records)
{
    mica__pass_run_t p;
    mica__pass_record_t *rec;
    uint8_t on[64];
    mica_status_t st;
    int32_t i, n = 0;

    *out = NULL;
    *records = NULL;
    *nb_records = 0;
    memset(&p, 0, sizeof p);
    p.net = net;
    p.ctx = net->ctx;
    p.cfg = cfg;
    p.device = device;
    p.dev = dev;
    if ((st = mica__passes_selected(net->ctx, cfg, on)) != MICA_OK)
        return st;
    if (!(rec = calloc((size_t)mica__nb_passes + 1, sizeof *rec)))
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < mica__nb_passes; i++) {
        if (!on[i])
            continue;
        double t0 = now_ms();
        p.out = NULL;
        p.changed = 0;
        p.summary[0] = '\0';
        p.st = MICA_OK;
        st = mica__passes[i].run(&p);
        if (st == MICA_OK && p.st != MICA_OK) {
            mica_network_destroy(p.out);
            p.out = NULL;
            st = p.st;
        }
        mica_engine_destroy(p.facts_retired);
        p.facts_retired = NULL;
        mica__log(net->ctx, MICA_LOG_DEBUG, "build: pass %s: %.2f ms",
                  mica__passes[i].name, now_ms() - t0);
        if (st == MICA_ERR_NOMEM)
            break;
        if (st != MICA_OK) {
            /* A pass never fails a build: it changes nothing instead. */
            mica__log(net->ctx, MICA_LOG_WARNING, "%s: %s; the pass is "
                      "skipped", mica__passes[i].title,
                      mica_context_error(net->ctx));
            mica_network_destroy(p.out);
            p.out = NULL;
            snprintf(p.summary, sizeof p.summary, "skipped (it failed)");
            p.changed = 0;
            st = MICA_OK;
        }
        if (p.out) {
            if ((st = keep(net->ctx, chain, p.out)) != MICA_OK)
                break;
            p.net = p.out;
            if (mica__passes[i].keeps_tensors && p.facts)
                p.facts_stale = 1;
            else
                forget_facts(&p);
        }
        mica__log(net->ctx, MICA_LOG_INFO, "%s: %s", mica__passes[i].title,
                  p.summary[0] ? p.summary : "nothing changed");
        if ((st = record(&p, i, rec, &n)) != MICA_OK)
            break;
    }
    mica_engine_destroy(p.facts_retired);
    forget_facts(&p);
    if (st != MICA_OK) {
        mica__pass_records_free(rec, n);
        return st;
    }
    *out = p.net != net ? p.net : NULL;
    *records = rec;
    *nb_records = n;
    return MICA_OK;
}

int mica__pass_preferred(const mica__pass_run_t *p, const char *type)
{
    const mica_build_config_t *cfg = p->cfg;
    char buf[128];
    int32_t i;

    if (cfg && cfg->struct_size < offsetof(mica_build_config_t,
                                           prefer_impls) +
                                      sizeof cfg->prefer_impls)
        cfg = NULL;
    for (i = 0; cfg && i < cfg->nb_prefer; i++)
        if (cfg->prefer_types[i] && !strcmp(cfg->prefer_types[i], type))
            return 1;
    return mica__deploy_choice(p->ctx, type, buf, sizeof buf) != NULL;
}

/* ---- layers that compute from their inputs alone ------------------------ */

/* mica's own types without side effects, random values or data-dependent
 * output shapes (NonZero's size is read at run time; Fill draws random
 * values unless its op is linspace; Assertion checks). */
static const char *const pure_types[] = {
    "Activation", "Concatenation", "Constant", "Convolution",
    "Deconvolution", "Dequantize", "Einsum", "ElementWise", "Fill",
    "FullyConnected", "FusedConvolution", "Gather", "Identity", "LRN",
    "MatrixMultiply", "Padding", "ParametricReLU", "Pooling", "Quantize",
    "Pointwise", "Reduce", "Resize", "Scale", "Scatter", "Select", "Shape",
    "Shuffle", "Slice", "SoftMax", "TopK", "Unary", NULL};

int mica__pass_pure(const mica__net_layer_t *nl)
{
    const mica_field_t *op;
    int32_t i;

    if ((nl->ns && nl->ns[0]) || nl->from_state)
        return 0;
    for (i = 0; pure_types[i] && strcmp(pure_types[i], nl->type); i++)
        ;
    if (!pure_types[i])
        return 0;
    op = mica_fields_find(&nl->fields.view, "op");
    return strcmp(nl->type, "Fill") != 0 ||
           (op && op->type == MICA_FIELD_ENUM && op->count == 1 &&
            *(const int64_t *)op->data == 0); /* linspace */
}

int mica__pass_free(const mica__pass_run_t *p, const mica__net_layer_t *nl)
{
    const mica_build_config_t *cfg = p->cfg;
    char buf[128];
    int32_t i;

    if (!mica__pass_pure(nl) || nl->implementation)
        return 0;
    if (cfg && cfg->struct_size >= offsetof(mica_build_config_t,
                                            prefer_impls) +
                                       sizeof cfg->prefer_impls)
        for (i = 0; i < cfg->nb_prefer; i++)
            if (!strcmp(cfg->prefer_types[i], nl->type))
                return 0;
    return mica__deploy_choice(p->ctx, nl->type, buf, sizeof buf) == NULL;
}

/* Whether fields a and b (of one schema) hold the same values. */
static int same_field(const mica_field_t *a, const mica_field_t *b)
{
    int32_t i;

    if (strcmp(a->name, b->name) || a->type != b->type ||
        a->count != b->count || !a->data != !b->data)
        return 0;
    if (!a->data || a->count <= 0)
        return 1;
    if (a->type == MICA_FIELD_STRING) {
        for (i = 0; i < a->count; i++) {
            const char *x = ((const char *const *)a->data)[i];
            const char *y = ((const char *const *)b->data)[i];
            if (strcmp(x ? x : "", y ? y : ""))
                return 0;
        }
        return 1;
    }
    if (a->type == MICA_FIELD_WEIGHTS) {
        for (i = 0; i < a->count; i++) {
            const mica_weights_t *x = &((const mica_weights_t *)a->data)[i];
            const mica_weights_t *y = &((const mica_weights_t *)b->data)[i];
            size_t bytes = (size_t)x->count * mica_dtype_size(x->dtype);
            if (x->dtype != y->dtype || x->count != y->count ||
                x->dims.nb_dims != y->dims.nb_dims ||
                memcmp(x->dims.d, y->dims.d,
                       sizeof x->dims.d[0] * (size_t)x->dims.nb_dims) ||
                (bytes && x->values != y->values &&
                 memcmp(x->values, y->values, bytes)))
                return 0;
        }
        return 1;
    }
    return memcmp(a->data, b->data,
                  mica__field_slot_size(a->type) * (size_t)a->count) == 0;
}

int mica__pass_same_fields(const mica__net_layer_t *a,
                           const mica__net_layer_t *b)
{
    const mica_fields_t *x = &a->fields.view, *y = &b->fields.view;
    int32_t i;

    if (a->checked_with != b->checked_with || x->nb_fields != y->nb_fields)
        return 0;
    for (i = 0; i < x->nb_fields; i++)
        if (!same_field(&x->fields[i], &y->fields[i]))
            return 0;
    return 1;
}

/* ---- tensors by name ---------------------------------------------------- */

mica_status_t mica__pass_graph_make(const mica_network_t *net,
                                    mica__pass_graph_t *g)
{
    int32_t li, i;

    memset(g, 0, sizeof *g);
    g->net = net;
    for (li = 0; li < net->nb_layers; li++) {
        const mica__net_layer_t *nl = &net->layers[li];
        for (i = 0; i < nl->nb_outputs && i < MICA__PASS_IO; i++)
            if (li < INT32_MAX / MICA__PASS_IO - 1 &&
                mica__index_put(&g->producer, nl->outputs[i],
                                li * MICA__PASS_IO + i) != 0)
                goto nomem;
        for (i = 0; i < nl->nb_inputs; i++) {
            int32_t c;
            if (!nl->inputs[i])
                continue;
            c = mica__index_get(&g->reads, nl->inputs[i]);
            if (mica__index_put(&g->reads, nl->inputs[i], c < 0 ? 1 : c + 1))
                goto nomem;
        }
    }
    for (i = 0; i < net->nb_outputs; i++)
        if (mica__index_put(&g->outputs, net->outputs[i], i) != 0)
            goto nomem;
    for (i = 0; i < net->nb_shape_outputs; i++)
        if (mica__index_put(&g->outputs, net->shape_outputs[i], i) != 0)
            goto nomem;
    for (i = 0; i < net->nb_inputs; i++)
        if (mica__index_put(&g->inputs, net->inputs[i].name, i) != 0)
            goto nomem;
    return MICA_OK;
nomem:
    mica__pass_graph_free(g);
    return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
}

void mica__pass_graph_free(mica__pass_graph_t *g)
{
    mica__index_free(&g->producer);
    mica__index_free(&g->reads);
    mica__index_free(&g->outputs);
    mica__index_free(&g->inputs);
}

int32_t mica__pass_producer(const mica__pass_graph_t *g, const char *name,
                            int32_t *slot)
{
    int32_t v = name ? mica__index_get(&g->producer, name) : -1;
    if (v < 0)
        return -1;
    if (slot)
        *slot = v % MICA__PASS_IO;
    return v / MICA__PASS_IO;
}

int32_t mica__pass_reads(const mica__pass_graph_t *g, const char *name)
{
    int32_t v = name ? mica__index_get(&g->reads, name) : -1;
    return v < 0 ? 0 : v;
}

int mica__pass_is_output(const mica__pass_graph_t *g, const char *name)
{
    return name && mica__index_get(&g->outputs, name) >= 0;
}

/* ---- renamed tensors ---------------------------------------------------- */

mica_status_t mica__pass_subst_put(mica_context_t *ctx,
                                   mica__pass_subst_t *s, const char *from,
                                   const char *to)
{
    int32_t k = mica__index_get(&s->ix, from);
    char *t = mica__strdup(to);

    if (!t)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    if (k >= 0) {
        free(s->to[k]);
        s->to[k] = t;
        return MICA_OK;
    }
    if (s->n == s->cap) {
        int32_t cap = s->cap ? 2 * s->cap : 16;
        char **f = realloc(s->from, sizeof *f * (size_t)cap);
        char **g = f ? realloc(s->to, sizeof *g * (size_t)cap) : NULL;
        if (f)
            s->from = f;
        if (!f || !g) {
            free(t);
            return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
        }
        s->to = g;
        s->cap = cap;
    }
    if (!(s->from[s->n] = mica__strdup(from))) {
        free(t);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    s->to[s->n] = t;
    if (mica__index_put(&s->ix, s->from[s->n], s->n) != 0) {
        free(s->from[s->n]);
        free(t);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    s->n++;
    return MICA_OK;
}

const char *mica__pass_subst_get(const mica__pass_subst_t *s,
                                 const char *name)
{
    int32_t k, hops = 0;
    while (s && name && (k = mica__index_get(&s->ix, name)) >= 0 &&
           hops++ <= s->n)
        name = s->to[k];
    return name;
}

void mica__pass_subst_free(mica__pass_subst_t *s)
{
    int32_t i;
    for (i = 0; i < s->n; i++) {
        free(s->from[i]);
        free(s->to[i]);
    }
    free(s->from);
    free(s->to);
    mica__index_free(&s->ix);
    memset(s, 0, sizeof *s);
}

/* ---- layers ------------------------------------------------------------- */

mica_status_t mica__pass_copy_layer(mica_network_t *out,
                                    const mica__net_layer_t *nl,
                                    const mica__pass_subst_t *s,
                                    const mica_fields_t *fields)
{
    const char **names = calloc((size_t)(nl->nb_inputs + nl->nb_outputs + 1),
                                sizeof *names);
    mica_status_t st;
    int32_t i;

    if (!names)
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < nl->nb_inputs; i++)
        names[i] = mica__pass_subst_get(s, nl->inputs[i]);
    for (i = 0; i < nl->nb_outputs; i++)
        names[nl->nb_inputs + i] = nl->outputs[i];
    st = mica__rewrite_layer(out, nl, names, fields, nl->formats, NULL);
    free(names);
    return st;
}

char *mica__pass_fresh_name(const mica_network_t *out,
                            const mica__pass_graph_t *g, const char *base,
                            const char *suffix)
{
    char *name = mica__asprintf("%s%s", base, suffix);
    int32_t k;

    for (k = 1; name && k < 1000000; k++) {
        if (mica__index_get(&out->layer_names, name) < 0 &&
            mica__index_get(&g->net->layer_names, name) < 0 &&
            mica__index_get(&g->producer, name) < 0 &&
            mica__index_get(&g->inputs, name) < 0)
            return name;
        free(name);
        name = mica__asprintf("%s%s_%d", base, suffix, (int)k);
    }
    free(name);
    return NULL;
}
