/*
 * core/onnx/op_control.c - If and Loop onto mica's conditionals and loops
 * (TensorRT's IIfConditional and ILoop, as its parser maps them).
 *
 * If: a constant condition inlines the branch taken; otherwise a
 * Condition layer, each branch's nodes mapped in a scope of their own
 * where every tensor from outside comes in through an IfConditionalInput
 * (made on first use, shared by both branches), and one
 * IfConditionalOutput per output.
 *
 * Loop: the loop-carried values are Recurrences (their next values
 * patched in once the body is mapped), the iteration number a Recurrence
 * counting from 0, the trip limit a count TripLimit on M, or a while
 * TripLimit on the condition's Recurrence (and'ed with i < M when both
 * bound the loop; a loop has one TripLimit).  Final values are
 * last_value LoopOutputs of the Recurrences, scan outputs concatenate
 * LoopOutputs whose length is M.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* A graph attribute of n, or NULL after a failure. */
static const Onnx__GraphProto *graph_attr(mica__ox_t *x, mica__ox_node_t *n,
                                          const char *name)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, name);
    if (!a || !a->g) {
        OX_BAD(x, n, "no graph attribute '%s'", name);
        return NULL;
    }
    return a->g;
}

static mica__ox_scope_t *scope_push(mica__ox_t *x, const char *loop)
{
    mica__ox_scope_t *s = mica__ox_alloc(x, sizeof *s);
    if (!s)
        return NULL;
    s->parent = x->scope;
    s->cond = x->cond;
    s->loop = loop ? loop : x->scope->loop;
    x->scope = s;
    return s;
}

static void scope_pop(mica__ox_t *x)
{
    mica__ox_scope_t *s = x->scope;
    x->scope = s->parent;
    mica__ox_names_free(&s->values);
}

/* The values of g's outputs after its nodes are mapped (in scope). */
static mica__ox_value_t *graph_out(mica__ox_t *x, mica__ox_node_t *n,
                                   const Onnx__GraphProto *g, size_t i)
{
    mica__ox_value_t *v = mica__ox_lookup(x, g->output[i]->name);
    if (!v)
        OX_BAD(x, n, "subgraph output '%s' is computed by no node",
               g->output[i]->name);
    if (v && v->bad) {
        /* Checking: a node of the subgraph was refused (and said so). */
        x->skip_node = 1;
        x->st = MICA_ERR_UNSUPPORTED;
        return NULL;
    }
    return v;
}

/* ---- If -------------------------------------------------------------------- */

static mica_status_t inline_branch(mica__ox_t *x, mica__ox_node_t *n,
                                   const Onnx__GraphProto *g)
{
    size_t i;
    mica__ox_value_t **outs;
    if ((int32_t)g->n_output != n->nb_out)
        return OX_BAD(x, n, "the branch has %zu outputs, the node %d",
                      g->n_output, (int)n->nb_out);
    outs = mica__ox_alloc(x, sizeof *outs * (g->n_output + 1));
    if (!outs || !scope_push(x, NULL))
        return x->st;
    if (mica__ox_initializers(x, g) == MICA_OK
        && mica__ox_graph_nodes(x, g) == MICA_OK)
        for (i = 0; i < g->n_output && x->st == MICA_OK; i++)
            outs[i] = graph_out(x, n, g, i);
    scope_pop(x);
    for (i = 0; i < g->n_output && x->st == MICA_OK; i++)
        mica__ox_set_out(x, n, (int32_t)i, outs[i]);
    return x->st;
}

/* Map branch g inside conditional c; the tensors of its outputs. */
static const char **branch(mica__ox_t *x, mica__ox_node_t *n,
                           mica__ox_cond_t *c, const Onnx__GraphProto *g,
                           mica__ox_value_t **vals)
{
    const char **t = mica__ox_alloc(x, sizeof *t * (g->n_output + 1));
    mica__ox_cond_t *outer = x->cond;
    size_t i;
    if (!t || !scope_push(x, NULL))
        return NULL;
    x->cond = c;
    x->scope->cond = c;
    if (mica__ox_initializers(x, g) == MICA_OK
        && mica__ox_graph_nodes(x, g) == MICA_OK)
        for (i = 0; i < g->n_output && x->st == MICA_OK; i++) {
            vals[i] = graph_out(x, n, g, i);
            t[i] = vals[i] ? mica__ox_tensor(x, n, vals[i]) : NULL;
        }
    x->cond = outer;
    scope_pop(x);
    return x->st == MICA_OK ? t : NULL;
}

/*
 * A condition computed on the host from inputs whose values the profile
 * fixes (a sample rate given once, with constants and shape arithmetic):
 * ask for the import again with those inputs as constants, the branch
 * then chosen here (docs/onnx.md, "If").  MICA_OK when it is not such a
 * condition, or on the second try.
 */
static mica_status_t host_condition(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *cond)
{
    return mica__ox_want_fixed(x, n, cond, NULL);
}

/* What an If's condition depends on that the profile does not fix. */
static const char *cond_why(mica__ox_t *x, const char *t)
{
    const char *why = NULL;
    if (t)
        mica__ox_fixed_sources(x, t, NULL, 0, &why);
    return why ? why : "values known only at run time";
}

static mica_status_t op_if(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__GraphProto *gt = graph_attr(x, n, "then_branch"),
                           *ge = graph_attr(x, n, "else_branch");
    mica__ox_value_t *cond = IN(0), **vt, **vf;
    mica__ox_cond_t *c;
    mica__ox_layer_t *l;
    const char **tt, **tf;
    int32_t i, k;

    if (!gt || !ge)
        return x->st;
    if (!cond)
        return OX_BAD(x, n, "no condition");
    if (mica__ox_volume(cond) != 1)
        return OX_BAD(x, n, "the condition must hold one element");
    if (cond->cst)
        return inline_branch(x, n, mica__ox_data_int(cond->cst, 0) ? gt : ge);
    if (host_condition(x, n, cond) != MICA_OK)
        return x->st;
    if ((int32_t)gt->n_output != n->nb_out
        || (int32_t)ge->n_output != n->nb_out)
        return OX_BAD(x, n, "the branches have %zu and %zu outputs, the node "
                      "%d", gt->n_output, ge->n_output, (int)n->nb_out);
    if (cond->rank != 0)
        cond = mica__ox_reshape(x, n, cond, NULL, 0, NULL);
    c = mica__ox_alloc(x, sizeof *c);
    if (!c || !cond)
        return x->st;
    if (x->nb_cond_list == x->cap_cond_list) {
        int32_t cap = x->cap_cond_list ? 2 * x->cap_cond_list : 8;
        mica__ox_cond_t **g = mica__ox_alloc(x, sizeof *g * (size_t)cap);
        if (!g)
            return x->st;
        if (x->nb_cond_list)
            memcpy(g, x->conds, sizeof *g * (size_t)x->nb_cond_list);
        x->conds = g;
        x->cap_cond_list = cap;
    }
    x->conds[x->nb_cond_list++] = c;
    c->parent = x->cond;
    c->name = mica__ox_printf(x, "%s", n->name);
    l = mica__ox_layer(x, n, "Condition", NULL);
    if (!l)
        return x->st;
    l->cond = c->name;
    mica__ox_in(x, l, mica__ox_tensor(x, n, cond));
    vt = mica__ox_alloc(x, sizeof *vt * (size_t)(n->nb_out + 1));
    vf = mica__ox_alloc(x, sizeof *vf * (size_t)(n->nb_out + 1));
    if (!vt || !vf)
        return x->st;
    tt = branch(x, n, c, gt, vt);
    tf = tt ? branch(x, n, c, ge, vf) : NULL;
    for (i = 0; tf && i < n->nb_out && x->st == MICA_OK; i++) {
        mica__ox_value_t *o;
        int64_t od[MICA_MAX_DIMS];
        if (vt[i]->rank != vf[i]->rank || vt[i]->dtype != vf[i]->dtype)
            return OX_UNSUP(x, n, "output %d is %s of rank %d in one branch "
                            "and %s of rank %d in the other, and the "
                            "condition depends on %s (mica chooses such a "
                            "branch when the network is built: give the "
                            "inputs it depends on one value each in the "
                            "profile)", (int)i,
                            mica_dtype_name(vt[i]->dtype), (int)vt[i]->rank,
                            mica_dtype_name(vf[i]->dtype), (int)vf[i]->rank,
                            cond_why(x, cond->tensor));
        for (k = 0; k < vt[i]->rank; k++)
            od[k] = vt[i]->d[k] == vf[i]->d[k] ? vt[i]->d[k] : -1;
        l = mica__ox_layer(x, n, "IfConditionalOutput", "cond_out");
        if (!l)
            return x->st;
        l->cond = c->name;
        mica__ox_in(x, l, tt[i]);
        mica__ox_in(x, l, tf[i]);
        o = mica__ox_out(x, l, OUT(i), vt[i]->dtype, vt[i]->rank, od);
        if (o)
            o->type = vt[i]->type;
        mica__ox_set_out(x, n, i, o);
    }
    return x->st;
}

/* ---- Loop ------------------------------------------------------------------ */

/* A Recurrence of loop L from `init`; its next input is patched later. */
static mica__ox_layer_t *recurrence(mica__ox_t *x, mica__ox_node_t *n,
                                    const char *loop, mica__ox_value_t *init,
                                    const char *name, const char *tag,
                                    mica__ox_value_t **out)
{
    mica__ox_layer_t *l = mica__ox_layer(x, n, "Recurrence", tag);
    if (!l)
        return NULL;
    l->loop = loop;
    mica__ox_in(x, l, mica__ox_tensor(x, n, init));
    mica__ox_in(x, l, NULL);
    *out = mica__ox_out(x, l, name, init->dtype, init->rank, init->d);
    if (*out)
        (*out)->type = init->type;
    return x->st == MICA_OK ? l : NULL;
}

/* Whether a node of g (or of its subgraphs) reads `name`. */
static int reads(const Onnx__GraphProto *g, const char *name)
{
    size_t i, j, k;
    for (i = 0; i < g->n_output; i++)
        if (!strcmp(g->output[i]->name, name))
            return 1;
    for (i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        for (j = 0; j < nd->n_input; j++)
            if (!strcmp(nd->input[j], name))
                return 1;
        for (j = 0; j < nd->n_attribute; j++) {
            if (nd->attribute[j]->g && reads(nd->attribute[j]->g, name))
                return 1;
            for (k = 0; k < nd->attribute[j]->n_graphs; k++)
                if (reads(nd->attribute[j]->graphs[k], name))
                    return 1;
        }
    }
    return 0;
}

/* Whether the body gives the condition back unchanged (directly, through
 * an Identity, or as a constant true): then a constant true condition
 * never stops the loop. */
static int cond_kept(const Onnx__GraphProto *g)
{
    const char *out = g->output[0]->name, *in = g->input[1]->name;
    size_t i;
    if (!strcmp(out, in))
        return 1;
    for (i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (nd->n_output < 1 || strcmp(nd->output[0], out))
            continue;
        if (!strcmp(nd->op_type, "Identity") && nd->n_input == 1
            && !strcmp(nd->input[0], in))
            return 1;
        if (!strcmp(nd->op_type, "Constant") && nd->n_attribute == 1
            && nd->attribute[0]->t && nd->attribute[0]->t->has_raw_data
            && nd->attribute[0]->t->raw_data.len == 1
            && nd->attribute[0]->t->raw_data.data[0] == 1)
            return 1;
    }
    return 0;
}

static mica_status_t op_loop(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__GraphProto *g = graph_attr(x, n, "body");
    mica__ox_value_t *m = IN(0), *cond = IN(1), *iter = NULL, *crec = NULL,
                     **carried, **outs, *one, *zero, *tru;
    mica__ox_layer_t *l, *iter_rec = NULL, *cond_rec = NULL, **rec;
    const char *loop, *iter_name, *cond_name;
    int32_t nb_carried, nb_scan, i;
    int64_t v1 = 1, v0 = 0;
    int use_cond, kept;

    if (!g)
        return x->st;
    if (g->n_input < 2 || g->n_output < 1)
        return OX_BAD(x, n, "the body needs at least 2 inputs and 1 output");
    nb_carried = (int32_t)g->n_input - 2;
    nb_scan = (int32_t)g->n_output - 1 - nb_carried;
    if (nb_scan < 0 || n->nb_in - 2 > nb_carried
        || n->nb_out > nb_carried + nb_scan)
        return OX_BAD(x, n, "inputs, outputs and the body's do not agree");
    for (i = 0; i < nb_carried; i++)
        if (!IN(2 + i))
            return OX_BAD(x, n, "loop-carried input %d is missing", (int)i);
    /* M beyond int32 means "no bound" (exporters write INT64_MAX). */
    if (m && m->cst && mica__ox_data_int(m->cst, 0) > INT32_MAX)
        m = NULL;
    if (m && m->rank != 0)
        m = mica__ox_reshape(x, n, m, NULL, 0, NULL);
    if (cond && cond->rank != 0)
        cond = mica__ox_reshape(x, n, cond, NULL, 0, NULL);
    if (x->st != MICA_OK)
        return x->st;
    if (cond && cond->cst && !mica__ox_data_int(cond->cst, 0))
        return OX_UNSUP(x, n, "a loop whose condition is false from the "
                        "start");
    /* A condition the body gives back unchanged is a Recurrence of no
     * use: the while predicate reads it as it came in (a constant true
     * one is no bound at all). */
    kept = cond && cond_kept(g);
    use_cond = cond && !(kept && cond->cst);
    if (kept && use_cond && !m)
        return OX_UNSUP(x, n, "a loop bounded by nothing but a condition "
                        "its body gives back unchanged");
    if (!use_cond && !m)
        return OX_UNSUP(x, n, "a loop with neither a trip count nor a "
                        "condition that can stop it");
    if (nb_scan && (!m || use_cond))
        return OX_UNSUP(x, n, "scan outputs need a trip count M and no "
                        "condition that stops the loop early (mica sets "
                        "their length before the loop runs)");
    iter_name = g->input[0]->name;
    cond_name = g->input[1]->name;
    loop = mica__ox_unique(x, &x->lnames, mica__ox_printf(x, "%s.loop",
                                                          n->name));
    one = mica__ox_const_i(x, OX_INT64, &v1, 0, NULL);
    zero = mica__ox_const_i(x, OX_INT64, &v0, 0, NULL);
    tru = mica__ox_const_i(x, OX_BOOL, &v1, 0, NULL);
    carried = mica__ox_alloc(x, sizeof *carried * (size_t)(nb_carried + 1));
    rec = mica__ox_alloc(x, sizeof *rec * (size_t)(nb_carried + 1));
    outs = mica__ox_alloc(x, sizeof *outs * (size_t)(n->nb_out + 1));
    if (x->st != MICA_OK || !scope_push(x, loop))
        return x->st;

    /* The body's inputs: iteration number, condition, carried values. */
    if ((*iter_name && reads(g, iter_name)) || (use_cond && m)) {
        iter_rec = recurrence(x, n, loop, zero, *iter_name ? iter_name
                              : NULL, "iteration", &iter);
        if (iter && *iter_name)
            mica__ox_bind(x, iter_name, iter);
    }
    if (use_cond && !kept)
        cond_rec = recurrence(x, n, loop, cond, *cond_name ? cond_name
                              : NULL, "condition", &crec);
    else if (use_cond)
        crec = cond;
    if (*cond_name)
        mica__ox_bind(x, cond_name, use_cond ? crec : tru);
    for (i = 0; i < nb_carried && x->st == MICA_OK; i++) {
        rec[i] = recurrence(x, n, loop, IN(2 + i), g->input[2 + i]->name,
                            "carried", &carried[i]);
        if (rec[i])
            mica__ox_bind(x, g->input[2 + i]->name, carried[i]);
    }
    if (x->st == MICA_OK && mica__ox_initializers(x, g) == MICA_OK)
        mica__ox_graph_nodes(x, g);

    /* Next values: the iteration number + 1, the body's condition and
     * carried values (a Recurrence's own output as a next value goes
     * through an Identity: mica refuses a direct swap). */
    if (x->st == MICA_OK && iter_rec)
        iter_rec->in[1] = mica__ox_tensor(x, n, mica__ox_ew(x, n, "sum",
                                                            iter, one, NULL));
    for (i = -1; i < nb_carried && x->st == MICA_OK; i++) {
        mica__ox_layer_t *r = i < 0 ? cond_rec : rec[i];
        mica__ox_value_t *v;
        int32_t k;
        if (!r)
            continue;
        v = graph_out(x, n, g, (size_t)(1 + i));
        /* ONNX takes a condition of one element in any rank: 0-D here. */
        if (v && i < 0 && v->rank != 0 && mica__ox_volume(v) == 1)
            v = mica__ox_reshape(x, n, v, NULL, 0, NULL);
        for (k = -1; v && k < nb_carried; k++) {
            mica__ox_value_t *c = k < 0 ? crec : carried[k];
            if (c && v->tensor && !strcmp(v->tensor, c->tensor)) {
                v = mica__ox_identity(x, n, v, NULL);
                break;
            }
        }
        if (v)
            r->in[1] = mica__ox_tensor(x, n, v);
    }

    /* The trip limit: while (cond [and i < M]), or count M. */
    if (x->st == MICA_OK) {
        mica__ox_value_t *lim = m;
        l = mica__ox_layer(x, n, "TripLimit", use_cond ? "while" : "count");
        if (use_cond) {
            lim = crec;
            if (m)
                lim = mica__ox_ew(x, n, "and", crec,
                                  mica__ox_ew(x, n, "less", iter, m, NULL),
                                  NULL);
        }
        if (l && lim) {
            l->loop = loop;
            mica__ox_in(x, l, mica__ox_tensor(x, n, lim));
            mica__ox_p_str(x, l, "kind", use_cond ? "while" : "count");
        }
    }

    /* Outputs: the final carried values, then the scan outputs. */
    for (i = 0; i < n->nb_out && x->st == MICA_OK; i++) {
        mica__ox_value_t *v, *o;
        int64_t od[MICA_MAX_DIMS];
        int32_t k, scan = i >= nb_carried;
        if (!OUT(i))
            continue;
        v = scan ? graph_out(x, n, g, (size_t)(1 + i)) : carried[i];
        if (!v)
            break;
        if (scan && v->rank + 1 > MICA_MAX_DIMS) {
            OX_UNSUP(x, n, "scan output %d has too many dimensions", (int)i);
            break;
        }
        l = mica__ox_layer(x, n, "LoopOutput", scan ? "scan" : "final");
        if (!l)
            break;
        l->loop = loop;
        mica__ox_in(x, l, mica__ox_tensor(x, n, v));
        if (scan) {
            mica__ox_in(x, l, mica__ox_tensor(x, n, m));
            mica__ox_p_str(x, l, "kind", "concatenate");
            mica__ox_p_int(x, l, "axis", 0);
            od[0] = m->cst ? mica__ox_data_int(m->cst, 0) : -1;
            for (k = 0; k < v->rank; k++)
                od[k + 1] = v->d[k];
        } else {
            mica__ox_p_str(x, l, "kind", "last_value");
            for (k = 0; k < v->rank; k++)
                od[k] = v->d[k];
        }
        o = mica__ox_out(x, l, OUT(i), v->dtype, v->rank + scan, od);
        if (o)
            o->type = v->type;
        outs[i] = o;
    }
    scope_pop(x);
    for (i = 0; i < n->nb_out && x->st == MICA_OK; i++)
        if (outs[i])
            mica__ox_set_out(x, n, i, outs[i]);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_control[] = {
    {"If", op_if, "Condition, IfConditionalInput, IfConditionalOutput"},
    {"Loop", op_loop, "TripLimit, Recurrence, LoopOutput"},
    {NULL, NULL, NULL},
};
