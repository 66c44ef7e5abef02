/*
 * core/onnx/import.c - an ONNX graph into the manifest: attributes,
 * inputs, initializers as constants, the nodes in order (each through its
 * operator's mapping in the tables of the op_*.c files, or onto a
 * registered layer type of the same name: thirdparty.c), the outputs;
 * then which inputs are shape tensors and their profile (profile.c).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

/* ---- attributes ----------------------------------------------------------- */

const Onnx__AttributeProto *mica__ox_attr(const mica__ox_node_t *n,
                                          const char *name)
{
    size_t i;
    for (i = 0; i < n->proto->n_attribute; i++)
        if (!strcmp(n->proto->attribute[i]->name, name))
            return n->proto->attribute[i];
    return NULL;
}

int64_t mica__ox_attr_i(const mica__ox_node_t *n, const char *name,
                        int64_t dflt)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, name);
    return a && a->has_i ? a->i : dflt;
}

double mica__ox_attr_f(const mica__ox_node_t *n, const char *name,
                       double dflt)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, name);
    if (a && a->has_f)
        return a->f;
    return a && a->has_i ? (double)a->i : dflt;
}

const char *mica__ox_attr_s(mica__ox_t *x, const mica__ox_node_t *n,
                            const char *name, const char *dflt)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, name);
    char *s;
    if (!a || !a->has_s)
        return dflt;
    s = mica__ox_alloc(x, a->s.len + 1);
    if (s && a->s.len)
        memcpy(s, a->s.data, a->s.len);
    return s ? s : dflt;
}

int32_t mica__ox_attr_ints(const mica__ox_node_t *n, const char *name,
                           const int64_t **out)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, name);
    if (!a || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))
        return -1;
    *out = a->ints;
    return (int32_t)a->n_ints;
}

mica_status_t mica__ox_want_fixed(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, const char **why)
{
    const char *names[16];
    int32_t k, i, j, fresh = 0;
    if (!v->tensor)
        return MICA_OK;
    k = mica__ox_fixed_sources(x, v->tensor, names, 16, why);
    for (i = 0; i < k; i++) {
        for (j = 0; j < x->nb_fixed && strcmp(x->fixed[j], names[i]); j++)
            ;
        fresh += j == x->nb_fixed;
    }
    if (k <= 0 || !fresh)
        return MICA_OK;
    /* the inputs taken as constants so far, and these */
    x->want_fixed = mica__ox_alloc(x, sizeof *x->want_fixed
                                   * (size_t)(k + x->nb_fixed));
    if (!x->want_fixed)
        return x->st;
    for (j = 0; j < x->nb_fixed; j++)
        x->want_fixed[j] = x->fixed[j];
    for (i = 0; i < k; i++) {
        int32_t m;
        for (m = 0; m < j && strcmp(x->want_fixed[m], names[i]); m++)
            ;
        if (m == j)
            x->want_fixed[j++] = names[i];
    }
    x->nb_want_fixed = j;
    return OX_UNSUP(x, n, "'%s' depends on input '%s', whose values the "
                    "profile fixes: imported again with them as constants",
                    v->name, names[0]);
}

int64_t *mica__ox_const_ints(mica__ox_t *x, mica__ox_node_t *n, int32_t i,
                             const char *what, int32_t *count)
{
    mica__ox_value_t *v = i < n->nb_in ? n->in[i] : NULL;
    int64_t *out, k;
    if (x->st != MICA_OK)
        return NULL;
    if (!v) {
        OX_BAD(x, n, "%s (input %d) is missing", what, (int)i);
        return NULL;
    }
    if (!v->cst) {
        const char *why = NULL;
        if (mica__ox_want_fixed(x, n, v, &why) != MICA_OK)
            return NULL;
        OX_UNSUP(x, n, "%s (input %d, '%s') must be a constant: mica needs "
                 "its values when the network is built, and it depends on "
                 "%s (give the inputs it depends on one value each in the "
                 "profile)", what, (int)i, v->name,
                 why ? why : "values known only at run time");
        return NULL;
    }
    out = mica__ox_alloc(x, 8 * (size_t)(v->cst->count + 1));
    for (k = 0; out && k < v->cst->count; k++)
        out[k] = mica__ox_data_int(v->cst, k);
    *count = (int32_t)v->cst->count;
    return out;
}

mica_status_t mica__ox_need(mica__ox_t *x, mica__ox_node_t *n, int32_t k)
{
    int32_t i;
    if (n->nb_in < k)
        return OX_BAD(x, n, "%d input%s needed, %d given", (int)k,
                      k > 1 ? "s" : "", (int)n->nb_in);
    for (i = 0; i < k; i++)
        if (!n->in[i])
            return OX_BAD(x, n, "input %d is missing", (int)i);
    for (i = 0; i < n->nb_in; i++)
        if (n->in[i] && n->in[i]->rank < 0)
            return OX_UNSUP(x, n, "input %d ('%s') has an unknown rank",
                            (int)i, n->in[i]->name);
    return MICA_OK;
}

/* A 1-D value of length r from an ONNX shape/index input (int64). */
int mica__ox_vec_ok(mica__ox_t *x, mica__ox_node_t *n,
                    mica__ox_value_t *v, const char *what)
{
    if (v->rank != 1 || v->d[0] < 0)
        return OX_UNSUP(x, n, "%s must be 1-D of a known length", what), 0;
    if (v->type != OX_INT64 && v->type != OX_INT32)
        return OX_BAD(x, n, "%s must be int64 or int32, not %s", what,
                      mica__ox_type_name(v->type)), 0;
    return 1;
}

/* ---- values from the graph -------------------------------------------------- */

mica__ox_value_t *mica__ox_value_info(mica__ox_t *x,
                                      const Onnx__ValueInfoProto *vi,
                                      const char *what)
{
    mica__ox_value_t *v = mica__ox_value_new(x, vi->name);
    const Onnx__TypeProto__Tensor *tt;
    size_t i;
    if (!v)
        return NULL;
    if (!vi->type || vi->type->value_case
        != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type) {
        mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED, "%s '%s' is not a "
                      "tensor: sequence, map, optional and sparse types are "
                      "not supported", what, vi->name);
        return NULL;
    }
    tt = vi->type->tensor_type;
    v->type = tt->has_elem_type ? tt->elem_type : OX_UNDEFINED;
    if (mica__ox_type_mica(v->type, &v->dtype) != 0) {
        mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED, "%s '%s' is of type "
                      "%s, which mica does not support", what, vi->name,
                      mica__ox_type_name(v->type));
        return NULL;
    }
    if (!tt->shape) {
        v->rank = -1;
        return v;
    }
    if (tt->shape->n_dim > MICA_MAX_DIMS) {
        mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED, "%s '%s' has %zu "
                      "dimensions; mica takes at most %d", what, vi->name,
                      tt->shape->n_dim, MICA_MAX_DIMS);
        return NULL;
    }
    v->rank = (int32_t)tt->shape->n_dim;
    for (i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        v->d[i] = d->value_case
                  == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                  && d->dim_value >= 0 ? d->dim_value : -1;
    }
    return v;
}

mica_status_t mica__ox_initializers(mica__ox_t *x, const Onnx__GraphProto *g)
{
    size_t i;
    for (i = 0; i < g->n_initializer && x->st == MICA_OK; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        mica__ox_value_t *v;
        mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
        mica_dtype_t dt;
        int32_t type;
        char what[300];
        if (!d)
            break;
        snprintf(what, sizeof what, "initializer '%s'", t->name);
        x->st = mica__ox_tensor_data(x->model, &x->arena, t, what, d);
        if (x->st != MICA_OK)
            break;
        type = mica__ox_weight_type(d->type);
        if (mica__ox_type_mica(type, &dt) != 0)
            return mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED,
                                 "%s is of type %s, which mica does not "
                                 "support", what,
                                 mica__ox_type_name(d->type));
        v = mica__ox_const_data(x, t->name, type, d);
        if (v)
            v->cond = NULL;
        mica__ox_bind(x, t->name, v);
    }
    return x->st;
}

/* ---- nodes ---------------------------------------------------------------- */

const mica__ox_op_t *const mica__ox_op_tables[] = {
    mica__ox_ops_elementwise, mica__ox_ops_tensor, mica__ox_ops_slice,
    mica__ox_ops_shape, mica__ox_ops_gather, mica__ox_ops_conv,
    mica__ox_ops_nn, mica__ox_ops_norm, mica__ox_ops_resize,
    mica__ox_ops_reduce, mica__ox_ops_control, mica__ox_ops_rnn,
    mica__ox_ops_index, mica__ox_ops_loss, mica__ox_ops_math,
    mica__ox_ops_xformer, mica__ox_ops_quant, mica__ox_ops_act, NULL,
};

const mica__ox_op_t *mica__ox_find_op(const char *domain, const char *type)
{
    size_t t;
    int32_t k;
    if (domain && *domain && strcmp(domain, "ai.onnx"))
        return NULL;
    for (t = 0; mica__ox_op_tables[t]; t++)
        for (k = 0; mica__ox_op_tables[t][k].name; k++)
            if (!strcmp(mica__ox_op_tables[t][k].name, type))
                return &mica__ox_op_tables[t][k];
    return NULL;
}

static mica_status_t map_node(mica__ox_t *x, const Onnx__NodeProto *p);

/* Checking: the outputs of node p are bad values (it was refused, or
 * reads one). */
static void poison(mica__ox_t *x, const Onnx__NodeProto *p)
{
    size_t i;
    for (i = 0; i < p->n_output && x->st == MICA_OK; i++) {
        mica__ox_value_t *v;
        if (!*p->output[i])
            continue;
        v = mica__ox_value_new(x, p->output[i]);
        if (v) {
            v->rank = -1;
            v->bad = 1;
            mica__ox_bind(x, p->output[i], v);
        }
    }
}

/* Checking: the failure of node p as a line of the report, the import
 * going on.  MICA_OK, or the failure when it is one to stop at. */
static mica_status_t refused(mica__ox_t *x, const Onnx__NodeProto *p)
{
    const char *msg = mica_context_error(x->ctx);
    size_t plen = strlen(x->model->path), len;
    char *grown;
    if (x->st == MICA_ERR_NOMEM)
        return x->st;
    if (x->skip_node) {
        x->nb_skipped++;
    } else {
        if (!strncmp(msg, x->model->path, plen) && !strncmp(msg + plen, ": ",
                                                            2))
            msg += plen + 2;
        len = strlen(msg);
        grown = realloc(x->report, x->report_len + len + 2);
        if (!grown)
            return x->st = mica__fail(x->ctx, MICA_ERR_NOMEM,
                                      "out of memory");
        x->report = grown;
        memcpy(x->report + x->report_len, msg, len);
        x->report_len += len;
        x->report[x->report_len++] = '\n';
        x->report[x->report_len] = '\0';
        x->nb_refused++;
    }
    x->skip_node = 0;
    x->st = MICA_OK;
    poison(x, p);
    return x->st;
}

static mica_status_t node(mica__ox_t *x, const Onnx__NodeProto *p)
{
    mica_status_t st = map_node(x, p);
    if (st != MICA_OK && x->check)
        return refused(x, p);
    return st;
}

static mica_status_t map_node(mica__ox_t *x, const Onnx__NodeProto *p)
{
    mica__ox_node_t n;
    const char *domain = p->domain ? p->domain : "";
    int def = !*domain || !strcmp(domain, "ai.onnx");
    const mica__ox_op_t *op;
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    size_t i;
    int reads_bad = 0;

    memset(&n, 0, sizeof n);
    n.proto = p;
    n.opset = mica__ox_opset(x->model, domain);
    n.name = p->name && *p->name ? p->name
             : mica__ox_printf(x, "%s_%d", p->op_type, (int)x->nb_nodes++);
    n.comment = p->name && *p->name
                ? mica__ox_printf(x, "ONNX %s%s%s '%s'", def ? "" : domain,
                                  def ? "" : ".", p->op_type, p->name)
                : mica__ox_printf(x, "ONNX %s%s%s", def ? "" : domain,
                                  def ? "" : ".", p->op_type);
    n.nb_in = (int32_t)p->n_input;
    n.nb_out = (int32_t)p->n_output;
    n.in = mica__ox_alloc(x, sizeof *n.in * (p->n_input + 1));
    if (x->st != MICA_OK)
        return x->st;
    for (i = 0; i < p->n_input; i++) {
        if (!*p->input[i])
            continue;
        n.in[i] = mica__ox_lookup(x, p->input[i]);
        if (!n.in[i])
            return OX_BAD(x, &n, "input %zu '%s' is not defined before "
                          "this node (nodes must be in topological order)",
                          i, p->input[i]);
        reads_bad |= n.in[i]->bad;
    }
    /* Empty trailing inputs count as absent. */
    while (n.nb_in > 0 && !n.in[n.nb_in - 1])
        n.nb_in--;
    op = def ? mica__ox_find_op(domain, p->op_type) : NULL;
    if (reads_bad && (op || mica__ox_find_creator(x->ctx, def ? "" : domain,
                                                  p->op_type, &info))) {
        /* Checking: it reads the output of a refused node (an operator
         * that is not mapped at all is still said). */
        x->skip_node = 1;
        return x->st = MICA_ERR_UNSUPPORTED;
    }
    if (op)
        op->fn(x, &n);
    else if (mica__ox_find_creator(x->ctx, def ? "" : domain, p->op_type, &info))
        mica__ox_third_party(x, &n, &info);
    else
        return OX_UNSUP(x, &n, "the operator is not supported ('mica "
                        "import --list-ops' lists those that are) and no "
                        "layer type '%s'%s%s%s is registered",
                        p->op_type, def ? "" : " in namespace '",
                        def ? "" : domain, def ? "" : "'");
    if (x->st != MICA_OK)
        return x->st;
    for (i = 0; i < p->n_output; i++)
        if (*p->output[i] && !mica__ox_names_get(&x->scope->values,
                                                 p->output[i]))
            return OX_UNSUP(x, &n, "output %zu ('%s') is not supported", i,
                            p->output[i]);
    return MICA_OK;
}

mica_status_t mica__ox_graph_nodes(mica__ox_t *x, const Onnx__GraphProto *g)
{
    size_t i;
    for (i = 0; i < g->n_node && x->st == MICA_OK; i++)
        node(x, g->node[i]);
    return x->st;
}

/* ---- the whole ---------------------------------------------------------- */

/* Reserve every value name of g and its subgraphs. */
static void reserve(mica__ox_t *x, const Onnx__GraphProto *g)
{
    size_t i, j, k;
#define RES(s) do { if ((s) && *(s) && \
        mica__ox_names_put(&x->reserved, (s), (void *)(s))) \
        x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory"); \
    } while (0)
    for (i = 0; i < g->n_input; i++)
        RES(g->input[i]->name);
    for (i = 0; i < g->n_initializer; i++)
        RES(g->initializer[i]->name);
    for (i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (j = 0; j < n->n_output; j++)
            RES(n->output[j]);
        for (j = 0; j < n->n_attribute; j++) {
            if (n->attribute[j]->g)
                reserve(x, n->attribute[j]->g);
            for (k = 0; k < n->attribute[j]->n_graphs; k++)
                reserve(x, n->attribute[j]->graphs[k]);
        }
    }
#undef RES
}

static mica_status_t outputs(mica__ox_t *x, const Onnx__GraphProto *g)
{
    size_t i;
    for (i = 0; i < g->n_output && x->st == MICA_OK; i++) {
        const char *name = g->output[i]->name;
        mica__ox_value_t *v = mica__ox_lookup(x, name);
        const char *t;
        if (!v)
            return mica__ox_fail(x, NULL, MICA_ERR_INVALID, "graph output "
                                 "'%s' is computed by no node", name);
        if (v->bad)
            continue;
        t = mica__ox_tensor(x, NULL, v);
        if (t && strcmp(t, name) && !mica__ox_names_has(&x->tensors, name)) {
            mica__ox_layer_t *l = mica__ox_layer(x, NULL, "Identity", name);
            if (l) {
                l->comment = mica__ox_printf(x, "the output '%s'", name);
                mica__ox_in(x, l, t);
                t = mica__ox_tensor_name(x, name, l->name, 0);
                mica__ox_out_tensor(x, l, t);
            }
        }
        if (t)
            mica__ox_add_output(x, t);
    }
    return x->st;
}

/* A runtime dimension that the profile fixes (min = max) is known: the
 * import computes with it as with a dimension the model gives. */
static void fixed_input(mica__ox_t *x, mica__ox_value_t *v)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t n, i;
    if (mica__ox_dims_known(v)
        || !mica__ox_profile_fixed(x, v, v->input, 0, d, &n)
        || n != v->rank)
        return;
    for (i = 0; i < v->rank; i++)
        if (v->d[i] < 0 && d[i] >= 0)
            v->d[i] = d[i];
}

/*
 * An input of x->fixed (its values fixed by the profile, and needed at
 * import: an If's condition) is bound to a constant of those values; the
 * input stays, a shape tensor whose profile holds them, so that a run
 * with other values is refused.  1 when it was so bound.
 */
static int fixed_value(mica__ox_t *x, mica__ox_value_t *v)
{
    int64_t vals[MICA_MAX_DIMS];
    int32_t i, n;
    mica__ox_value_t *c;
    for (i = 0; i < x->nb_fixed; i++)
        if (!strcmp(x->fixed[i], v->name))
            break;
    if (i == x->nb_fixed || !mica__ox_dims_known(v)
        || !mica__ox_profile_fixed(x, v, v->input, 1, vals, &n))
        return 0;
    c = mica__ox_const_i(x, v->type, vals, v->rank, v->d);
    if (!c)
        return 0;
    c->name = v->name;
    x->inputs[v->input].shape_tensor = 1;
    mica__ox_bind(x, v->name, c);
    return 1;
}

mica_status_t mica__ox_import(mica__ox_t *x)
{
    const Onnx__GraphProto *g = x->model->proto->graph;
    size_t i, j;

    x->scope = mica__ox_alloc(x, sizeof *x->scope);
    if (!x->scope)
        return x->st;
    reserve(x, g);
    x->name = g->name;
    for (i = 0; i < g->n_input && x->st == MICA_OK; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        mica__ox_value_t *v;
        int init = 0;
        for (j = 0; j < g->n_initializer; j++)
            init |= !strcmp(g->initializer[j]->name, vi->name);
        if (init)
            continue;
        v = mica__ox_value_info(x, vi, "input");
        if (!v)
            break;
        if (v->rank < 0)
            return mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED, "input '%s' "
                                 "has no shape: its rank must be known",
                                 vi->name);
        v->tensor = mica__ox_tensor_name(x, vi->name, "input", 0);
        mica__ox_add_input(x, v);
        fixed_input(x, v);
        if (x->st == MICA_OK && !fixed_value(x, v))
            mica__ox_bind(x, vi->name, v);
    }
    if (x->st == MICA_OK)
        mica__ox_initializers(x, g);
    if (x->st == MICA_OK)
        mica__ox_graph_nodes(x, g);
    if (x->st == MICA_OK)
        outputs(x, g);
    if (x->st == MICA_OK && !x->nb_outputs && !x->nb_refused)
        return mica__ox_fail(x, NULL, MICA_ERR_INVALID, "the graph has no "
                             "outputs");
    if (x->st == MICA_OK && x->nb_refused)
        return x->st;       /* checking: the rest needs the whole graph */
    if (x->st == MICA_OK)
        x->st = mica__ox_mark_shape_inputs(x);
    if (x->st == MICA_OK)
        x->st = mica__ox_profiles(x);
    return x->st;
}
