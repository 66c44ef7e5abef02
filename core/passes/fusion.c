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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"

/* Whether rule r's struct_size covers appended member m. */
#define RULE_HAS(r, m) \
    ((r)->struct_size >= offsetof(mica_fusion_rule_t, m) + sizeof((r)->m))

/* Whether rule r is a DAG pattern (links). */
#define IS_DAG(r) (RULE_HAS(r, nb_links) && (r)->nb_links > 0)

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
    /* DAG patterns: every reader of a tensor, and its producer */
    mica__index_t rhead;      /* tensor name -> its last reader entry */
    int32_t *r_layer, *r_input, *r_next; /* reader entries, -1 ends */
    mica__index_t producer;   /* tensor name -> layer * MAX_IO + output */
    /* types and ranks: the facts of the pass driver (mica__pass_tensor),
     * built on first need */
    mica__pass_run_t *p;
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
    if (!f) {
        /* "" among the values: a param not given meets it too */
        for (i = 0; i < c->nb_values; i++)
            if (c->values[i] && !c->values[i][0])
                return 1;
        return 0;
    }
    if (field_text(nl, f, text, sizeof text) != 0)
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

static int tensors_ok(fuse_t *x, const mica_fusion_rule_t *r,
                      const int32_t *at, int32_t n);

/* Match rule r at layer li: the layers of each step into `at`. */
static int match(fuse_t *x, const mica_fusion_rule_t *r, int32_t li,
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
    return tensors_ok(x, r, at, r->nb_steps);
}

/* ---- DAG patterns, tensor tests, params from constants ---------------- */

/* Whether tensor `t` is an output of one of the steps at[0..n). */
static int made_inside(const fuse_t *x, const int32_t *at, int32_t n,
                       const char *t)
{
    int32_t v = t ? mica__index_get(&x->producer, t) : -1, k;
    for (k = 0; v >= 0 && k < n; k++)
        if (at[k] == v / MAX_IO)
            return 1;
    return 0;
}

/* The tensor `t` (mica_fusion_tensor_cond_t's) of the layer of step k,
 * or NULL; n steps are matched so far. */
static const char *step_tensor(const fuse_t *x, const mica_fusion_rule_t *r,
                               const int32_t *at, int32_t n, int32_t k,
                               int32_t t)
{
    const mica__net_layer_t *nl = &x->net->layers[at[k]];
    if (t >= 0)
        return t < nl->nb_inputs ? nl->inputs[t] : NULL;
    if (t == MICA_FUSION_OTHER_INPUT) {
        int in0, in1;
        if (nl->nb_inputs != 2)
            return NULL;
        if (!IS_DAG(r)) {
            const char *fed = k > 0 ? x->net->layers[at[k - 1]].outputs[0]
                                    : NULL;
            if (!fed)
                return NULL;
            return nl->inputs[0] && strcmp(nl->inputs[0], fed) == 0
                       ? nl->inputs[1] : nl->inputs[0];
        }
        in0 = made_inside(x, at, n, nl->inputs[0]);
        in1 = made_inside(x, at, n, nl->inputs[1]);
        return in0 == in1 ? NULL : in0 ? nl->inputs[1] : nl->inputs[0];
    }
    t = MICA_FUSION_OUTPUT(0) - t;
    return t >= 0 && t < nl->nb_outputs ? nl->outputs[t] : NULL;
}

/* The values of tensor t where a Constant layer makes it: its weights,
 * or NULL. */
static const mica_weights_t *constant_of(const fuse_t *x, const char *t)
{
    int32_t v = t ? mica__index_get(&x->producer, t) : -1;
    const mica__net_layer_t *nl;
    const mica_field_t *f;
    if (v < 0)
        return NULL;
    nl = &x->net->layers[v / MAX_IO];
    if (strcmp(nl->type, "Constant") != 0 || (nl->ns && nl->ns[0]) ||
        field_of(nl, "shape") != NULL)
        return NULL;
    f = field_of(nl, "weights");
    return f && f->type == MICA_FIELD_WEIGHTS && f->count == 1 && f->data
               ? (const mica_weights_t *)f->data : NULL;
}

/* Element i of weights w as a double; NAN for a type it cannot read. */
static double weight_at(const mica_weights_t *w, int64_t i)
{
    switch (w->dtype) {
    case MICA_FLOAT32: return ((const float *)w->values)[i];
    case MICA_FLOAT16:
        return mica_kit_half_to_float(((const uint16_t *)w->values)[i]);
    case MICA_BFLOAT16:
        return mica_kit_bf16_to_float(((const uint16_t *)w->values)[i]);
    case MICA_INT32: return ((const int32_t *)w->values)[i];
    case MICA_INT8: return ((const int8_t *)w->values)[i];
    default: return NAN;
    }
}

/* The one value of every element of constant t (*v), 0; -1 if t is no
 * such constant. */
static int splat_value(const fuse_t *x, const char *t, double *v)
{
    const mica_weights_t *w = constant_of(x, t);
    int64_t i;
    if (!w || w->count < 1 || !w->values)
        return -1;
    *v = weight_at(w, 0);
    for (i = 1; i < w->count; i++)
        if (weight_at(w, i) != *v)
            return -1;
    return isnan(*v) ? -1 : 0;
}

/* Whether tensor test c holds for the n steps matched so far (a test of
 * a later step holds until that step is matched). */
static int tensor_ok(fuse_t *x, const mica_fusion_rule_t *r,
                     const int32_t *at, int32_t n,
                     const mica_fusion_tensor_cond_t *c)
{
    const char *t;
    double v;
    if (c->step >= n)
        return 1;
    if (!(t = step_tensor(x, r, at, n, c->step, c->tensor)))
        return 0;
    if (c->constant == MICA_FUSION_CONSTANT && !constant_of(x, t))
        return 0;
    if (c->constant == MICA_FUSION_SPLAT &&
        (splat_value(x, t, &v) != 0 ||
         fabs(v - c->value) > c->rtol * fabs(c->value)))
        return 0;
    if (c->dtypes || c->min_rank >= 0 || c->max_rank >= 0) {
        const mica__tensor_t *tt = mica__pass_tensor(x->p, t);
        int32_t rank;
        if (!tt)
            return 0;
        rank = tt->shape.nb_dims;
        if ((c->dtypes && !(c->dtypes & (1u << tt->dtype))) ||
            (c->min_rank >= 0 && rank < c->min_rank) ||
            (c->max_rank >= 0 && rank > c->max_rank))
            return 0;
    }
    return 1;
}

/* Whether every tensor test of r holds for the n steps matched. */
static int tensors_ok(fuse_t *x, const mica_fusion_rule_t *r,
                      const int32_t *at, int32_t n)
{
    int32_t k;
    if (!RULE_HAS(r, nb_tensor_conds) || !RULE_HAS(r, tensor_conds))
        return 1;
    for (k = 0; k < r->nb_tensor_conds; k++)
        if (!tensor_ok(x, r, at, n, &r->tensor_conds[k]))
            return 0;
    if (RULE_HAS(r, nb_weight_params) && RULE_HAS(r, weight_params))
        for (k = 0; k < r->nb_weight_params; k++) {
            const mica_fusion_weight_param_t *w = &r->weight_params[k];
            if (w->step < n &&
                !constant_of(x, step_tensor(x, r, at, n, w->step,
                                            w->tensor)))
                return 0;
        }
    if (RULE_HAS(r, nb_const_params) && RULE_HAS(r, const_params) &&
        n == r->nb_steps)
        for (k = 0; k < r->nb_const_params; k++) {
            const mica_fusion_const_param_t *p = &r->const_params[k];
            double v;
            if (splat_value(x, step_tensor(x, r, at, n, p->step, p->tensor),
                            &v) != 0 ||
                (p->op == MICA_FUSION_RECIPROCAL && v == 0.0))
                return 0;
        }
    return 1;
}

/* Whether layer li's input `input` (any input: MICA_FUSION_ANY_INPUT)
 * reads tensor t. */
static int reads(const mica__net_layer_t *nl, int32_t input, const char *t)
{
    int32_t i;
    for (i = 0; i < nl->nb_inputs; i++)
        if ((input < 0 || i == input) && nl->inputs[i] &&
            strcmp(nl->inputs[i], t) == 0)
            return 1;
    return 0;
}

/* Whether the links into step k hold with layer li in it (at[0..k)
 * matched), and those from step k into earlier steps; outer tensors are
 * checked once every step is matched. */
static int links_ok(const fuse_t *x, const mica_fusion_rule_t *r,
                    const int32_t *at, int32_t k, int32_t li)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    int32_t j;
    for (j = 0; j < r->nb_links; j++) {
        const mica_fusion_link_t *l = &r->links[j];
        const mica__net_layer_t *from;
        if (l->from == k && l->step < k) {
            /* li makes what the earlier step reads */
            if (l->output >= nl->nb_outputs ||
                !reads(&x->net->layers[at[l->step]], l->input,
                       nl->outputs[l->output]))
                return 0;
            continue;
        }
        if (l->step != k || l->from < 0 || l->from > k)
            continue;
        from = &x->net->layers[at[l->from]];
        if (l->output >= from->nb_outputs ||
            !reads(nl, l->input, from->outputs[l->output]))
            return 0;
    }
    return 1;
}

/* The one candidate for step k of rule r where no earlier step feeds it
 * but an earlier one reads it (a link from k into a step before k): the
 * layer that makes that input, or -1. */
static int32_t producer_step(const fuse_t *x, const mica_fusion_rule_t *r,
                             const int32_t *at, int32_t k)
{
    int32_t j, i;
    for (j = 0; j < r->nb_links; j++) {
        const mica_fusion_link_t *l = &r->links[j];
        const mica__net_layer_t *rd;
        if (l->from != k || l->step >= k)
            continue;
        rd = &x->net->layers[at[l->step]];
        for (i = 0; i < rd->nb_inputs; i++) {
            int32_t v;
            if ((l->input >= 0 && i != l->input) || !rd->inputs[i] ||
                (v = mica__index_get(&x->producer, rd->inputs[i])) < 0 ||
                v % MAX_IO != l->output)
                continue;
            /* with any input, the first made by a layer of the step's
             * type: links_ok and fits decide */
            if (l->input >= 0 ||
                strcmp(x->net->layers[v / MAX_IO].type,
                       r->steps[k].type) == 0)
                return v / MAX_IO;
        }
        return -1;
    }
    return -1;
}

/* The outer tensor of link l in a full match, or NULL. */
static const char *outer_of(const fuse_t *x, const mica_fusion_rule_t *r,
                            const int32_t *at, const mica_fusion_link_t *l)
{
    const mica__net_layer_t *nl = &x->net->layers[at[l->step]];
    int32_t i;
    if (l->input >= 0)
        return l->input < nl->nb_inputs &&
                       !made_inside(x, at, r->nb_steps, nl->inputs[l->input])
                   ? nl->inputs[l->input] : NULL;
    for (i = 0; i < nl->nb_inputs; i++)
        if (nl->inputs[i] && !made_inside(x, at, r->nb_steps, nl->inputs[i]))
            return nl->inputs[i];
    return NULL;
}

/* Whether a full DAG match is closed: the outer links agree, and every
 * output of a step but the last is read by steps of the match alone. */
static int dag_closed(const fuse_t *x, const mica_fusion_rule_t *r,
                      const int32_t *at)
{
    int32_t j, k, o, s;
    for (j = 0; j < r->nb_links; j++) {
        const mica_fusion_link_t *a = &r->links[j];
        const char *ta;
        if (a->from != MICA_FUSION_OUTER)
            continue;
        if (!(ta = outer_of(x, r, at, a)))
            return 0;
        for (k = j + 1; k < r->nb_links; k++) {
            const mica_fusion_link_t *b = &r->links[k];
            const char *tb;
            if (b->from != MICA_FUSION_OUTER || b->output != a->output)
                continue;
            if (!(tb = outer_of(x, r, at, b)) || strcmp(ta, tb) != 0)
                return 0;
        }
    }
    for (s = 0; s < r->nb_steps - 1; s++) {
        const mica__net_layer_t *nl = &x->net->layers[at[s]];
        for (o = 0; o < nl->nb_outputs; o++) {
            const char *t = nl->outputs[o];
            int32_t inside = 0, i;
            if (mica__index_get(&x->outputs, t) >= 0)
                return 0;
            for (k = 0; k < r->nb_steps; k++) {
                const mica__net_layer_t *rd = &x->net->layers[at[k]];
                for (i = 0; i < rd->nb_inputs; i++)
                    inside += rd->inputs[i] && strcmp(rd->inputs[i], t) == 0;
            }
            if (mica__index_get(&x->reads, t) != inside)
                return 0;
        }
    }
    return 1;
}

/* Match steps k.. of DAG rule r (steps 0..k-1 in at). */
static int dag_from(fuse_t *x, const mica_fusion_rule_t *r, int32_t *at,
                    int32_t k)
{
    const mica__net_layer_t *head = &x->net->layers[at[0]];
    const mica_fusion_link_t *l = NULL;
    const char *t;
    int32_t j, e;

    if (k == r->nb_steps)
        return dag_closed(x, r, at) && tensors_ok(x, r, at, k);
    for (j = 0; j < r->nb_links && !l; j++)
        if (r->links[j].step == k && r->links[j].from >= 0 &&
            r->links[j].from < k)
            l = &r->links[j];
    if (!l) {
        /* made for an earlier step: one candidate, its producer */
        int32_t li = producer_step(x, r, at, k), m, dup = 0;
        for (m = 0; li >= 0 && m < k; m++)
            dup |= at[m] == li;
        if (li < 0 || dup || !fits(x, li, &r->steps[k], head) ||
            !links_ok(x, r, at, k, li))
            return 0;
        at[k] = li;
        return tensors_ok(x, r, at, k + 1) && dag_from(x, r, at, k + 1);
    }
    if (l->output >= x->net->layers[at[l->from]].nb_outputs)
        return 0;
    t = x->net->layers[at[l->from]].outputs[l->output];
    for (e = mica__index_get(&x->rhead, t); e >= 0; e = x->r_next[e]) {
        int32_t li = x->r_layer[e], m, dup = 0;
        for (m = 0; m < k; m++)
            dup |= at[m] == li;
        if (dup || (l->input >= 0 && x->r_input[e] != l->input) ||
            !fits(x, li, &r->steps[k], head) || !links_ok(x, r, at, k, li))
            continue;
        at[k] = li;
        if (tensors_ok(x, r, at, k + 1) && dag_from(x, r, at, k + 1))
            return 1;
    }
    return 0;
}

/* Match DAG rule r with step 0 at layer li. */
static int dag_match(fuse_t *x, const mica_fusion_rule_t *r, int32_t li,
                     int32_t *at)
{
    int32_t k;
    if (!fits(x, li, &r->steps[0], &x->net->layers[li]))
        return 0;
    at[0] = li;
    if (!tensors_ok(x, r, at, 1) || !dag_from(x, r, at, 1))
        return 0;
    for (k = 0; k < r->nb_inputs; k++)
        if (!step_tensor(x, r, at, r->nb_steps, r->inputs[k].step,
                         r->inputs[k].input) &&
            r->inputs[k].input == MICA_FUSION_OTHER_INPUT)
            return 0;
    return 1;
}

/* The name of the input of step k that the step before feeds (k > 0). */
static const char *fed_by_prev(const fuse_t *x, const int32_t *at, int32_t k)
{
    return x->net->layers[at[k - 1]].outputs[0];
}

/* Input ref f of a match, as a tensor name (NULL: omitted). */
static const char *input_name(const fuse_t *x, const mica_fusion_rule_t *r,
                              const int32_t *at, const mica_fusion_ref_t *f)
{
    const mica__net_layer_t *nl = &x->net->layers[at[f->step]];
    if (IS_DAG(r))
        return step_tensor(x, r, at, r->nb_steps, f->step, f->input);
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
    int32_t nc = RULE_HAS(r, nb_const_params) && RULE_HAS(r, const_params)
                     ? r->nb_const_params : 0;
    int32_t nw = RULE_HAS(r, nb_weight_params) &&
                         RULE_HAS(r, weight_params)
                     ? r->nb_weight_params : 0;
    int32_t nb = r->nb_constants + r->nb_params + nc + nw, n = 0, k;
    mica_field_t *f = calloc((size_t)nb + 1, sizeof *f);
    double *vals = calloc((size_t)nc + 1, sizeof *vals);
    const char **ins = calloc((size_t)r->nb_inputs + 1, sizeof *ins);
    const char **names = calloc((size_t)nb + 1, sizeof *names);
    mica_fields_t fields;
    mica_layer_spec_t spec;
    mica_status_t st;

    if (!f || !ins || !names || !vals) {
        st = mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (k = 0; k < r->nb_constants; k++)
        f[n++] = r->constants[k];
    for (k = 0; k < nc; k++) {
        const mica_fusion_const_param_t *p = &r->const_params[k];
        /* tensors_ok checked that it is a splat, not 0 for a reciprocal */
        if (splat_value(x, step_tensor(x, r, at, r->nb_steps, p->step,
                                       p->tensor), &vals[k]) != 0)
            continue;
        if (p->op == MICA_FUSION_RECIPROCAL)
            vals[k] = 1.0 / vals[k];
        if (p->op == MICA_FUSION_PRODUCT) {
            /* into the param of the same field set before */
            int32_t e;
            for (e = k - 1; e >= 0; e--)
                if (r->const_params[e].op != MICA_FUSION_PRODUCT &&
                    strcmp(r->const_params[e].field, p->field) == 0) {
                    vals[e] *= vals[k];
                    break;
                }
            if (e >= 0)
                continue;
        }
        f[n].name = p->field;
        f[n].type = MICA_FIELD_FLOAT;
        f[n].count = 1;
        f[n].data = &vals[k];
        n++;
    }
    for (k = 0; k < nw; k++) {
        const mica_fusion_weight_param_t *w = &r->weight_params[k];
        const mica_weights_t *cw = constant_of(
            x, step_tensor(x, r, at, r->nb_steps, w->step, w->tensor));
        if (!cw)
            continue; /* tensors_ok checked it is a Constant's */
        f[n].name = w->field;
        f[n].type = MICA_FIELD_WEIGHTS;
        f[n].count = 1;
        f[n].data = cw;
        n++;
    }
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
        ins[k] = input_name(x, r, at, &r->inputs[k]);
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
    free(vals);
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

    int32_t nb_in = 0, e = 0;

    for (li = 0; li < net->nb_layers; li++)
        nb_in += net->layers[li].nb_inputs;
    x->r_layer = malloc(sizeof(int32_t) * ((size_t)nb_in + 1));
    x->r_input = malloc(sizeof(int32_t) * ((size_t)nb_in + 1));
    x->r_next = malloc(sizeof(int32_t) * ((size_t)nb_in + 1));
    if (!x->r_layer || !x->r_input || !x->r_next)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (li = 0; li < net->nb_layers; li++) {
        for (i = 0; i < net->layers[li].nb_outputs; i++)
            if (li < INT32_MAX / MAX_IO - 1 && i < MAX_IO &&
                mica__index_put(&x->producer, net->layers[li].outputs[i],
                                li * MAX_IO + i) != 0)
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
        for (i = 0; i < net->layers[li].nb_inputs; i++) {
            const char *t = net->layers[li].inputs[i];
            if (!t)
                continue;
            x->r_layer[e] = li;
            x->r_input[e] = i;
            x->r_next[e] = mica__index_get(&x->rhead, t);
            if (mica__index_put(&x->rhead, t, e++) != 0)
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
        }
    }
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
            if (x->match_of[li] >= 0 ||
                !(IS_DAG(r) ? dag_match(x, r, li, at) : match(x, r, li, at)))
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

/* The tensors read after fusion: by the layers no match took and as the
 * fused layers' inputs (into `kept`, name -> 1). */
static mica_status_t kept_reads(fuse_t *x, mica__index_t *kept)
{
    mica_network_t *net = x->net;
    int32_t li, i, m;

    for (li = 0; li < net->nb_layers; li++)
        for (i = 0; x->match_of[li] < 0 && i < net->layers[li].nb_inputs;
             i++)
            if (net->layers[li].inputs[i] &&
                mica__index_put(kept, net->layers[li].inputs[i], 1) != 0)
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
    for (m = 0; m < x->nb_matches; m++)
        for (i = 0; i < x->rule[m]->nb_inputs; i++) {
            const char *t = input_name(x, x->rule[m], x->steps[m],
                                       &x->rule[m]->inputs[i]);
            if (t && mica__index_put(kept, t, 1) != 0)
                return mica__fail(net->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
        }
    return MICA_OK;
}

/* Whether layer nl is a Constant that only the matched layers read (its
 * values now a fused layer's weights param): it goes. */
static int absorbed(const fuse_t *x, const mica__index_t *kept,
                    const mica__net_layer_t *nl)
{
    int32_t i;
    if (strcmp(nl->type, "Constant") != 0 || (nl->ns && nl->ns[0]))
        return 0;
    for (i = 0; i < nl->nb_outputs; i++)
        if (mica__index_get(&x->reads, nl->outputs[i]) <= 0 ||
            mica__index_get(kept, nl->outputs[i]) >= 0 ||
            mica__index_get(&x->outputs, nl->outputs[i]) >= 0)
            return 0;
    return 1;
}

/* The rewritten network: every layer as it is but the matched ones, and
 * the Constants only they read. */
static mica_status_t rewrite(fuse_t *x, mica_network_t *out)
{
    mica_network_t *net = x->net;
    mica_status_t st = mica__rewrite_frame(net, out);
    mica__index_t kept;
    int32_t li, i;

    memset(&kept, 0, sizeof kept);
    if (st == MICA_OK)
        st = kept_reads(x, &kept);
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
        if (absorbed(x, &kept, nl))
            continue;
        names = calloc((size_t)(nl->nb_inputs + nl->nb_outputs + 1),
                       sizeof *names);
        if (!names) {
            mica__index_free(&kept);
            return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
        }
        for (i = 0; i < nl->nb_inputs; i++)
            names[i] = nl->inputs[i];
        for (i = 0; i < nl->nb_outputs; i++)
            names[nl->nb_inputs + i] = nl->outputs[i];
        st = mica__rewrite_layer(out, nl, names, NULL, nl->formats, NULL);
        free(names);
    }
    mica__index_free(&kept);
    return st;
}

static mica_status_t fusion_rewrite(mica__pass_run_t *p,
                                    mica_network_t **out,
                                    int64_t *layers, int32_t *fused)
{
    mica_network_t *net = p->net, *o = NULL;
    const mica_build_config_t *cfg = p->cfg;
    mica_status_t st;
    fuse_t x;
    int32_t m;

    *out = NULL;
    memset(&x, 0, sizeof x);
    x.net = net;
    x.p = p;
    x.cfg = cfg && cfg->struct_size >= offsetof(mica_build_config_t,
                                                prefer_impls) +
                                           sizeof cfg->prefer_impls
                ? cfg : NULL;
    if ((st = gather(&x, p->device)) != MICA_OK || x.nb_rules == 0 ||
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
    mica__index_free(&x.rhead);
    mica__index_free(&x.producer);
    free(x.r_layer);
    free(x.r_input);
    free(x.r_next);
    *out = o;
    return st;
}

mica_status_t mica__pass_fusion(mica__pass_run_t *p)
{
    int64_t layers = 0;
    int32_t fused = 0;
    mica_status_t st = fusion_rewrite(p, &p->out, &layers, &fused);
    if (st == MICA_OK && p->out) {
        p->changed = layers;
        snprintf(p->summary, sizeof p->summary, "%lld layers fused into %d",
                 (long long)layers, (int)fused);
    }
    return st;
}
