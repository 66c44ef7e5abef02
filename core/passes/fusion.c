/*
 * core/passes/fusion.c - the pass "fusion": the fusion rules of the
 * loaded modules (mica/module.h, registry/rules.c) applied to a network
 * before its first build.
 *
 * The rules whose type has an implementation for the build's device are
 * tried longest first (then in load order), each at every layer in the
 * network's order: a match is a chain of layers, each the one reader of
 * the single output of the one before (not a network output), of the
 * steps' types (default namespace), inputs and param conditions, none of
 * them pinned to an implementation, of a type the build prefers an
 * implementation for (--prefer) or already in another match, all in the
 * same loop and conditional.  The rewritten network (core/rewrite.c)
 * has one layer of the rule's type in place of each match: named as its
 * last layer, with its outputs, the inputs and params the rule maps, and
 * the record of what it replaced (`fused`), which the engine keeps.
 *
 * Fusion never fails a build: where the fused layer's params do not pass
 * its schema, it says so as a warning and the network is built as it is
 * (and core/build.c builds it as it is where the fused one fails).
 */
#include <config.h>

#include "passes.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most inputs a layer has (the builder's limit): a reader's index
 * value is layer * MAX_IO + input. */
#define MAX_IO 64

typedef struct fuse {
    mica_network_t *net;
    const mica_build_config_t *cfg; /* its preferences, may be NULL */
    const mica_fusion_rule_t **rules; /* usable ones, in the order tried */
    int32_t nb_rules;
    mica__index_t reads;      /* tensor name -> how many inputs read it */
    mica__index_t reader;     /* tensor name -> its first reader */
    mica__index_t outputs;    /* network (shape) outputs */
    int32_t *match_of;        /* per layer: the match it is in, -1 */
    int32_t **steps;          /* per match: the layer of each step */
    const mica_fusion_rule_t **rule; /* per match: its rule */
    int32_t nb_matches;
} fuse_t;

static int same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The field `name` of network layer nl, or NULL. */
static const mica_field_t *field_of(const mica__net_layer_t *nl,
                                    const char *name)
{
    return mica_fields_find(&nl->fields.view, name);
}

/* The enum names of field `name` in the schema nl was checked with. */
static const char *const *enum_names(const mica__net_layer_t *nl,
                                     const char *name)
{
    const mica_layer_creator_t *c = nl->checked_with;
    int32_t i;
    for (i = 0; c && i < c->nb_fields; i++)
        if (strcmp(c->fields[i].name, name) == 0)
            return c->fields[i].enum_values;
    return NULL;
}

/* Field f of nl (one value) as text into buf; 0, or -1 if it has none. */
static int field_text(const mica__net_layer_t *nl, const mica_field_t *f,
                      char *buf, size_t len)
{
    const char *const *names;
    int64_t v;

    if (f->count != 1 || !f->data)
        return -1;
    switch (f->type) {
    case MICA_FIELD_INT: case MICA_FIELD_BOOL: case MICA_FIELD_DTYPE:
        snprintf(buf, len, "%lld", (long long)*(const int64_t *)f->data);
        return 0;
    case MICA_FIELD_FLOAT:
        snprintf(buf, len, "%.17g", *(const double *)f->data);
        return 0;
    case MICA_FIELD_STRING:
        snprintf(buf, len, "%s", *(const char *const *)f->data);
        return 0;
    case MICA_FIELD_ENUM:
        names = enum_names(nl, f->name);
        v = *(const int64_t *)f->data;
        for (; names && *names && v > 0; v--)
            names++;
        if (!names || !*names)
            return -1;
        snprintf(buf, len, "%s", *names);
        return 0;
    default:
        return -1;
    }
}

/* Whether nl meets condition c. */
static int meets(const mica__net_layer_t *nl, const mica_fusion_cond_t *c)
{
    const mica_field_t *f = field_of(nl, c->field);
    char text[128];
    int32_t i;

    if (c->nb_values == 0)
        return f == NULL;
    if (!f || field_text(nl, f, text, sizeof text) != 0)
        return 0;
    for (i = 0; i < c->nb_values; i++)
        if (strcmp(text, c->values[i]) == 0)
            return 1;
    return 0;
}

/* Whether the build prefers an implementation for `type` (modules.prefer,
 * --prefer, $MICA_PREFER): its layers are then built as they are. */
static int preferred(const fuse_t *x, const char *type)
{
    char buf[128];
    int32_t i;
    for (i = 0; x->cfg && i < x->cfg->nb_prefer; i++)
        if (strcmp(x->cfg->prefer_types[i], type) == 0)
            return 1;
    return mica__deploy_choice(x->net->ctx, type, buf, sizeof buf) != NULL;
}

/* Whether layer li may be step k of a match (not counting its input). */
static int fits(const fuse_t *x, int32_t li, const mica_fusion_step_t *s,
                const mica__net_layer_t *head)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    int32_t i;

    if (x->match_of[li] >= 0 || strcmp(nl->type, s->type) != 0 ||
        (nl->ns && nl->ns[0]) || nl->implementation || nl->from_state ||
        (s->nb_inputs && nl->nb_inputs != s->nb_inputs) ||
        !same(nl->loop, head->loop) ||
        !same(nl->conditional, head->conditional) || preferred(x, nl->type))
        return 0;
    for (i = 0; i < s->nb_conds; i++)
        if (!meets(nl, &s->conds[i]))
            return 0;
    return 1;
}

/* The one layer that reads tensor `name` (at its one input *slot), or -1
 * when it is read by none or several, or is a network output. */
static int32_t one_reader(const fuse_t *x, const char *name, int32_t *slot)
{
    int32_t v;

    if (mica__index_get(&x->reads, name) != 1 ||
        mica__index_get(&x->outputs, name) >= 0 ||
        (v = mica__index_get(&x->reader, name)) < 0)
        return -1;
    *slot = v % MAX_IO;
    return v / MAX_IO;
}

/* Match rule r at layer li: the layers of each step into `at`. */
static int match(const fuse_t *x, const mica_fusion_rule_t *r, int32_t li,
                 int32_t *at)
{
    const mica__net_layer_t *head = &x->net->layers[li];
    int32_t k, slot;

    if (!fits(x, li, &r->steps[0], head))
        return 0;
    at[0] = li;
    for (k = 1; k < r->nb_steps; k++) {
        const mica__net_layer_t *prev = &x->net->layers[at[k - 1]];
        int32_t next;
        if (prev->nb_outputs != 1 ||
            (next = one_reader(x, prev->outputs[0], &slot)) < 0 ||
            (r->steps[k].input >= 0 && r->steps[k].input != slot) ||
            !fits(x, next, &r->steps[k], head))
            return 0;
        at[k] = next;
    }
    /* every input the rule maps exists */
    for (k = 0; k < r->nb_inputs; k++) {
        const mica__net_layer_t *nl = &x->net->layers[at[r->inputs[k].step]];
        if (r->inputs[k].input == MICA_FUSION_OTHER_INPUT
                ? nl->nb_inputs != 2
                : r->inputs[k].input >= nl->nb_inputs)
            return 0;
    }
    return 1;
}

/* The name of the input of step k that the step before feeds (k > 0). */
static const char *fed_by_prev(const fuse_t *x, const int32_t *at, int32_t k)
{
    return x->net->layers[at[k - 1]].outputs[0];
}

/* Input ref f of a match, as a tensor name (NULL: omitted). */
static const char *input_name(const fuse_t *x, const int32_t *at,
                              const mica_fusion_ref_t *f)
{
    const mica__net_layer_t *nl = &x->net->layers[at[f->step]];
    if (f->input == MICA_FUSION_OTHER_INPUT) {
        const char *fed = fed_by_prev(x, at, f->step);
        return nl->inputs[0] && strcmp(nl->inputs[0], fed) == 0
                   ? nl->inputs[1] : nl->inputs[0];
    }
    return nl->inputs[f->input];
}

/* The record of a match: "RULE: NAME (TYPE), ...". */
static char *record(const fuse_t *x, const mica_fusion_rule_t *r,
                    const int32_t *at)
{
    size_t len = strlen(r->name) + 3;
    char *s;
    int32_t k;

    for (k = 0; k < r->nb_steps; k++)
        len += strlen(x->net->layers[at[k]].name) +
               strlen(x->net->layers[at[k]].type) + 6;
    if (!(s = malloc(len)))
        return NULL;
    strcpy(s, r->name);
    strcat(s, ":");
    for (k = 0; k < r->nb_steps; k++) {
        strcat(s, k ? ", " : " ");
        strcat(s, x->net->layers[at[k]].name);
        strcat(s, " (");
        strcat(s, x->net->layers[at[k]].type);
        strcat(s, ")");
    }
    return s;
}

/* Add the fused layer of match m to out. */
static mica_status_t add_fused(fuse_t *x, mica_network_t *out, int32_t m)
{
    const mica_fusion_rule_t *r = x->rule[m];
    const int32_t *at = x->steps[m];
    const mica__net_layer_t *last = &x->net->layers[at[r->nb_steps - 1]];
    int32_t nb = r->nb_constants + r->nb_params, n = 0, k;
    mica_field_t *f = calloc((size_t)nb + 1, sizeof *f);
    const char **ins = calloc((size_t)r->nb_inputs + 1, sizeof *ins);
    const char **names = calloc((size_t)nb + 1, sizeof *names);
    mica_fields_t fields;
    mica_layer_spec_t spec;
    mica_status_t st;

    if (!f || !ins || !names) {
        st = mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (k = 0; k < r->nb_constants; k++)
        f[n++] = r->constants[k];
    for (k = 0; k < r->nb_params; k++) {
        const mica__net_layer_t *nl = &x->net->layers[at[r->params[k].step]];
        const mica_field_t *g = field_of(nl, r->params[k].from);
        if (!g)
            continue;
        f[n] = *g;
        f[n].name = r->params[k].field;
        if (g->type == MICA_FIELD_ENUM) {
            /* by name: the fused layer's enum has its own indices */
            char text[128];
            if (field_text(nl, g, text, sizeof text) != 0 ||
                !(names[n] = mica__strdup(text))) {
                st = mica__fail(out->ctx, MICA_ERR_NOMEM,
                                "out of host memory");
                goto done;
            }
            f[n].type = MICA_FIELD_STRING;
            f[n].data = &names[n];
        }
        n++;
    }
    for (k = 0; k < r->nb_inputs; k++)
        ins[k] = input_name(x, at, &r->inputs[k]);
    fields.nb_fields = n;
    fields.fields = f;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = last->name;
    spec.type = r->type;
    spec.nb_inputs = r->nb_inputs;
    spec.inputs = ins;
    spec.nb_outputs = last->nb_outputs;
    spec.outputs = (const char *const *)last->outputs;
    spec.fields = &fields;
    spec.origin = last->origin;
    spec.loop = last->loop;
    spec.conditional = last->conditional;
    if ((st = mica_network_add_layer(out, &spec)) != MICA_OK)
        goto done;
    out->layers[out->nb_layers - 1].precision = last->precision;
    if (!(out->layers[out->nb_layers - 1].fused = record(x, r, at)))
        st = mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
done:
    for (k = 0; k < nb; k++)
        free((void *)names[k]);
    free(names);
    free(ins);
    free(f);
    return st;
}

/* The usable rules, longest first, then in load order. */
static mica_status_t gather(fuse_t *x, uint32_t device)
{
    const mica__registry_t *reg = mica__registry_peek(x->net->ctx);
    int32_t i, j, n = mica_registry_nb_fusion_rules(x->net->ctx), len;

    if (!(x->rules = calloc((size_t)n + 1, sizeof *x->rules)))
        return mica__fail(x->net->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (len = 16; len >= 1; len--)
        for (i = 0; reg && i < reg->nb_modules; i++)
            for (j = 0; j < reg->modules[i]->nb_rules; j++) {
                const mica_fusion_rule_t *r = reg->modules[i]->rules[j];
                mica_creator_info_t info;
                memset(&info, 0, sizeof info);
                info.struct_size = sizeof info;
                if (r->nb_steps != len ||
                    mica_registry_find(x->net->ctx, NULL, r->type, 0, NULL,
                                       device, &info) != MICA_OK)
                    continue;
                x->rules[x->nb_rules++] = r;
            }
    return MICA_OK;
}

/* The tables of tensors: producers, how often read, network outputs. */
static mica_status_t index_tensors(fuse_t *x)
{
    mica_network_t *net = x->net;
    int32_t li, i;

    for (li = 0; li < net->nb_layers; li++)
        for (i = 0; i < net->layers[li].nb_inputs; i++) {
            const char *t = net->layers[li].inputs[i];
            int32_t n = t ? mica__index_get(&x->reads, t) : 0;
            int fits_value = i < MAX_IO && li < INT32_MAX / MAX_IO - 1;
            if (!t)
                continue;
            if (mica__index_put(&x->reads, t, n < 0 ? 1 : n + 1) != 0 ||
                (n < 0 && fits_value &&
                 mica__index_put(&x->reader, t, li * MAX_IO + i) != 0))
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
        }
    for (i = 0; i < net->nb_outputs; i++)
        if (mica__index_put(&x->outputs, net->outputs[i], i) != 0)
            return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < net->nb_shape_outputs; i++)
        if (mica__index_put(&x->outputs, net->shape_outputs[i], i) != 0)
            return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    return MICA_OK;
}

/* Find every match (x->match_of, x->steps, x->rule). */
static mica_status_t find_matches(fuse_t *x)
{
    mica_network_t *net = x->net;
    int32_t li, j, k, at[16];

    x->match_of = malloc(sizeof *x->match_of * ((size_t)net->nb_layers + 1));
    x->steps = calloc((size_t)net->nb_layers + 1, sizeof *x->steps);
    x->rule = calloc((size_t)net->nb_layers + 1, sizeof *x->rule);
    if (!x->match_of || !x->steps || !x->rule)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (li = 0; li < net->nb_layers; li++)
        x->match_of[li] = -1;
    for (j = 0; j < x->nb_rules; j++)
        for (li = 0; li < net->nb_layers; li++) {
            const mica_fusion_rule_t *r = x->rules[j];
            if (x->match_of[li] >= 0 || !match(x, r, li, at))
                continue;
            x->steps[x->nb_matches] = malloc(sizeof(int32_t) *
                                             (size_t)r->nb_steps);
            if (!x->steps[x->nb_matches])
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
            memcpy(x->steps[x->nb_matches], at,
                   sizeof(int32_t) * (size_t)r->nb_steps);
            x->rule[x->nb_matches] = r;
            for (k = 0; k < r->nb_steps; k++)
                x->match_of[at[k]] = x->nb_matches;
            x->nb_matches++;
        }
    return MICA_OK;
}

/* The rewritten network: every layer as it is but the matched ones. */
static mica_status_t rewrite(fuse_t *x, mica_network_t *out)
{
    mica_network_t *net = x->net;
    mica_status_t st = mica__rewrite_frame(net, out);
    int32_t li, i;

    for (li = 0; li < net->nb_layers && st == MICA_OK; li++) {
        const mica__net_layer_t *nl = &net->layers[li];
        int32_t m = x->match_of[li];
        const char **names;
        if (m >= 0) {
            const mica_fusion_rule_t *r = x->rule[m];
            if (x->steps[m][r->nb_steps - 1] == li)
                st = add_fused(x, out, m);
            continue;
        }
        names = calloc((size_t)(nl->nb_inputs + nl->nb_outputs + 1),
                       sizeof *names);
        if (!names)
            return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
        for (i = 0; i < nl->nb_inputs; i++)
            names[i] = nl->inputs[i];
        for (i = 0; i < nl->nb_outputs; i++)
            names[nl->nb_inputs + i] = nl->outputs[i];
        st = mica__rewrite_layer(out, nl, names, NULL, nl->formats, NULL);
        free(names);
    }
    return st;
}

static mica_status_t fusion_rewrite(mica_network_t *net,
                                    const mica_build_config_t *cfg,
                                    uint32_t device, mica_network_t **out,
                                    int64_t *layers, int32_t *fused)
{
    mica_network_t *o = NULL;
    mica_status_t st;
    fuse_t x;
    int32_t m;

    *out = NULL;
    memset(&x, 0, sizeof x);
    x.net = net;
    x.cfg = cfg && cfg->struct_size >= offsetof(mica_build_config_t,
                                                prefer_impls) +
                                           sizeof cfg->prefer_impls
                ? cfg : NULL;
    if ((st = gather(&x, device)) != MICA_OK || x.nb_rules == 0 ||
        (st = index_tensors(&x)) != MICA_OK ||
        (st = find_matches(&x)) != MICA_OK || x.nb_matches == 0)
        goto done;
    if ((st = mica_network_create(net->ctx, &o)) != MICA_OK)
        goto done;
    if ((st = rewrite(&x, o)) != MICA_OK) {
        if (st == MICA_ERR_NOMEM)
            goto done;
        /* a rule that maps params its type refuses: no fusion at all */
        mica__log(net->ctx, MICA_LOG_WARNING, "fusion: %s; building "
                  "without fusion", mica_context_error(net->ctx));
        st = MICA_OK;
        mica_network_destroy(o);
        o = NULL;
        goto done;
    }
    for (m = 0; m < x.nb_matches; m++) {
        mica__log(net->ctx, MICA_LOG_INFO, "fusion: layer '%s' (%s) by rule "
                  "%s", net->layers[x.steps[m][x.rule[m]->nb_steps - 1]].name,
                  x.rule[m]->type, x.rule[m]->name);
        *layers += x.rule[m]->nb_steps;
    }
    *fused = x.nb_matches;
done:
    if (st != MICA_OK) {
        mica_network_destroy(o);
        o = NULL;
    }
    for (m = 0; m < x.nb_matches; m++)
        free(x.steps[m]);
    free(x.steps);
    free(x.rule);
    free(x.match_of);
    free(x.rules);
    mica__index_free(&x.reader);
    mica__index_free(&x.reads);
    mica__index_free(&x.outputs);
    *out = o;
    return st;
}

mica_status_t mica__pass_fusion(mica__pass_run_t *p)
{
    int64_t layers = 0;
    int32_t fused = 0;
    mica_status_t st = fusion_rewrite(p->net, p->cfg, p->device, &p->out,
                                      &layers, &fused);
    if (st == MICA_OK && p->out) {
        p->changed = layers;
        snprintf(p->summary, sizeof p->summary, "%lld layers fused into %d",
                 (long long)layers, (int)fused);
    }
    return st;
}
