/*
 * core/onnx/import.c - an ONNX graph into the manifest: inputs (their
 * runtime dimensions and the profile from the options), initializers as
 * constants, the nodes in order (each through its operator's mapping, or
 * onto a registered layer type of the same name), the outputs, and which
 * inputs are shape tensors (those whose values a layer reads as a shape,
 * found by walking back from every shape input of every layer).
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
        OX_UNSUP(x, n, "%s (input %d, '%s') must be a constant: mica needs "
                 "its values when the network is built", what, (int)i,
                 v->name);
        return NULL;
    }
    out = mica__ox_alloc(x, 8 * (size_t)(v->cst->count + 1));
    for (k = 0; out && k < v->cst->count; k++)
        out[k] = mica__ox_data_int(v->cst, k);
    *count = (int32_t)v->cst->count;
    return out;
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
        mica__ox_value_t *v = mica__ox_value_new(x, t->name);
        mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
        char what[300];
        int32_t k;
        if (!v || !d)
            break;
        snprintf(what, sizeof what, "initializer '%s'", t->name);
        x->st = mica__ox_tensor_data(x->model, &x->arena, t, what, d);
        if (x->st != MICA_OK)
            break;
        v->type = d->type;
        if (mica__ox_type_mica(d->type, &v->dtype) != 0) {
            /* As TensorRT's parser: double weights become float32, other
             * integers int32 (checked when they are written). */
            if (d->type == OX_DOUBLE)
                v->type = OX_FLOAT, v->dtype = MICA_FLOAT32;
            else if (d->type == OX_INT16 || d->type == OX_UINT16
                     || d->type == OX_UINT32 || d->type == OX_UINT64)
                v->type = OX_INT32, v->dtype = MICA_INT32;
            else
                return mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED,
                                     "%s is of type %s, which mica does not "
                                     "support", what,
                                     mica__ox_type_name(d->type));
        }
        v->rank = d->dims.nb_dims;
        for (k = 0; k < v->rank; k++)
            v->d[k] = d->dims.d[k];
        v->cst = d;
        mica__ox_bind(x, t->name, v);
    }
    return x->st;
}

/* ---- nodes ---------------------------------------------------------------- */

const mica__ox_op_t *mica__ox_find_op(const char *domain, const char *type)
{
    static const mica__ox_op_t *const tables[] = {
        mica__ox_ops_elementwise, mica__ox_ops_tensor, mica__ox_ops_nn,
        mica__ox_ops_reduce, mica__ox_ops_control, mica__ox_ops_rnn,
    };
    size_t t;
    int32_t k;
    if (domain && *domain && strcmp(domain, "ai.onnx"))
        return NULL;
    for (t = 0; t < sizeof tables / sizeof *tables; t++)
        for (k = 0; tables[t][k].name; k++)
            if (!strcmp(tables[t][k].name, type))
                return &tables[t][k];
    return NULL;
}

/* A registered creator of (ns, type), as third-party operators map. */
static int find_creator(mica_context_t *ctx, const char *ns, const char *type,
                        mica_creator_info_t *info)
{
    int32_t i, nb = mica_registry_count(ctx);
    for (i = 0; i < nb; i++) {
        memset(info, 0, sizeof *info);
        info->struct_size = sizeof *info;
        if (mica_registry_get(ctx, i, info) == MICA_OK
            && !strcmp(info->type, type)
            && !strcmp(info->ns ? info->ns : "", ns))
            return 1;
    }
    return 0;
}

static mica_status_t node(mica__ox_t *x, const Onnx__NodeProto *p)
{
    mica__ox_node_t n;
    const char *domain = p->domain ? p->domain : "";
    int def = !*domain || !strcmp(domain, "ai.onnx");
    const mica__ox_op_t *op;
    mica_creator_info_t info;
    size_t i;

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
    }
    /* Empty trailing inputs count as absent. */
    while (n.nb_in > 0 && !n.in[n.nb_in - 1])
        n.nb_in--;
    op = def ? mica__ox_find_op(domain, p->op_type) : NULL;
    if (op)
        op->fn(x, &n);
    else if (find_creator(x->ctx, def ? "" : domain, p->op_type, &info))
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

/* ---- third-party operators ---------------------------------------------- */

/* Attribute a as the value of field f of layer l. */
static void third_attr(mica__ox_t *x, mica__ox_node_t *n, mica__ox_layer_t *l,
                       const mica_field_schema_t *f,
                       const Onnx__AttributeProto *a)
{
    int list = f->count != 1;
    size_t k, cnt;
    switch (f->type) {
    case MICA_FIELD_INT:
    case MICA_FIELD_BOOL:
        if (a->n_ints || !a->has_i) {
            if (list)
                mica__ox_p_ints(x, l, f->name, a->ints, (int32_t)a->n_ints);
            else
                OX_BAD(x, n, "attribute '%s' is a list; field '%s' of %s "
                       "takes one value", a->name, f->name, l->type);
        } else if (f->type == MICA_FIELD_BOOL) {
            mica__ox_p_bool(x, l, f->name, a->i != 0);
        } else if (list) {
            mica__ox_p_ints(x, l, f->name, &a->i, 1);
        } else {
            mica__ox_p_int(x, l, f->name, a->i);
        }
        return;
    case MICA_FIELD_FLOAT: {
        double *v;
        cnt = a->n_floats ? a->n_floats : a->n_ints ? a->n_ints : 1;
        v = mica__ox_alloc(x, sizeof *v * cnt);
        for (k = 0; v && k < cnt; k++)
            v[k] = a->n_floats ? a->floats[k] : a->n_ints
                   ? (double)a->ints[k] : a->has_f ? a->f : (double)a->i;
        if (!v)
            return;
        if (list)
            mica__ox_p_floats(x, l, f->name, v, (int32_t)cnt);
        else
            mica__ox_p_float(x, l, f->name, v[0]);
        return;
    }
    case MICA_FIELD_STRING:
    case MICA_FIELD_ENUM:
    case MICA_FIELD_DTYPE: {
        const char **v;
        cnt = a->n_strings ? a->n_strings : 1;
        v = mica__ox_alloc(x, sizeof *v * cnt);
        for (k = 0; v && k < cnt; k++) {
            const ProtobufCBinaryData *b = a->n_strings ? &a->strings[k]
                                                        : &a->s;
            char *s = mica__ox_alloc(x, b->len + 1);
            if (s && b->len)
                memcpy(s, b->data, b->len);
            v[k] = s;
        }
        if (v && f->type == MICA_FIELD_DTYPE && !a->has_s && a->has_i) {
            mica_dtype_t dt;
            if (mica__ox_type_mica((int32_t)a->i, &dt) != 0) {
                OX_UNSUP(x, n, "attribute '%s': type %s", a->name,
                         mica__ox_type_name((int32_t)a->i));
                return;
            }
            v[0] = mica_dtype_name(dt);
        }
        if (x->st != MICA_OK)
            return;
        if (list) {
            mica__ox_param_t *p;
            mica__ox_p_str(x, l, f->name, v[0]);
            p = &l->p[l->nb_p - 1];
            p->list = 1;
            p->n = (int32_t)cnt;
            p->s = v;
        } else {
            mica__ox_p_str(x, l, f->name, v[0]);
        }
        return;
    }
    case MICA_FIELD_WEIGHTS: {
        mica__ox_data_t d;
        const char *w;
        char what[300];
        mica_dtype_t dt;
        if (!a->t) {
            OX_BAD(x, n, "attribute '%s' is not a tensor; field '%s' of %s "
                   "takes weights", a->name, f->name, l->type);
            return;
        }
        snprintf(what, sizeof what, "attribute '%s'", a->name);
        if ((x->st = mica__ox_tensor_data(x->model, &x->arena, a->t, what,
                                          &d)) != MICA_OK)
            return;
        if (mica__ox_type_mica(d.type, &dt) != 0) {
            OX_UNSUP(x, n, "attribute '%s': %s tensors", a->name,
                     mica__ox_type_name(d.type));
            return;
        }
        w = mica__ox_weights_add(x, n, mica__ox_printf(x, "%s.%s", n->name,
                                                       a->name),
                                 &d, dt, &d.dims, what);
        if (w)
            mica__ox_p_weights(x, l, f->name, &w, 1, list);
        return;
    }
    default:
        OX_UNSUP(x, n, "field '%s' of %s has a type the importer cannot "
                 "fill", f->name, l->type);
    }
}

mica_status_t mica__ox_third_party(mica__ox_t *x, mica__ox_node_t *n,
                                   const mica_creator_info_t *info)
{
    const mica_layer_creator_t *c = info->creator;
    mica__ox_layer_t *l = mica__ox_layer(x, n, info->type, NULL);
    const Onnx__GraphProto *g = NULL;
    size_t i;
    int32_t k;

    if (!l)
        return x->st;
    l->type = mica__ox_strdup(x, info->type);
    l->ns = info->ns && *info->ns ? mica__ox_strdup(x, info->ns) : NULL;
    for (k = 0; k < n->nb_in; k++)
        mica__ox_in(x, l, n->in[k] ? mica__ox_tensor(x, n, n->in[k]) : NULL);
    for (i = 0; i < n->proto->n_attribute && x->st == MICA_OK; i++) {
        const Onnx__AttributeProto *a = n->proto->attribute[i];
        const mica_field_schema_t *f = NULL;
        for (k = 0; k < c->nb_fields; k++)
            if (!strcmp(c->fields[k].name, a->name))
                f = &c->fields[k];
        if (!f)
            return OX_UNSUP(x, n, "attribute '%s' is not a field of layer "
                            "type '%s' (see 'mica modules --fields')",
                            a->name, info->type);
        third_attr(x, n, l, f, a);
    }
    /* Output types and shapes come from the graph's value_info where it
     * has them; else the type of input 0 and an unknown rank. */
    for (g = x->model->proto->graph, i = 0; i < n->proto->n_output; i++) {
        const char *name = mica__ox_out_name(n, (int32_t)i);
        const Onnx__ValueInfoProto *vi = NULL;
        mica__ox_value_t *v, *known = NULL;
        size_t j;
        for (j = 0; name && j < g->n_value_info && !vi; j++)
            if (!strcmp(g->value_info[j]->name, name))
                vi = g->value_info[j];
        for (j = 0; name && j < g->n_output && !vi; j++)
            if (!strcmp(g->output[j]->name, name))
                vi = g->output[j];
        if (vi)
            known = mica__ox_value_info(x, vi, "output");
        v = mica__ox_out(x, l, name,
                         known ? known->dtype
                               : n->nb_in && n->in[0] ? n->in[0]->dtype
                                                      : MICA_FLOAT32,
                         known ? known->rank : -1, known ? known->d : NULL);
        if (v && known)
            v->type = known->type;
        if (v)
            mica__ox_set_out(x, n, (int32_t)i, v);
    }
    return x->st;
}

/* ---- options: profile shapes -------------------------------------------- */

mica_status_t mica__ox_parse_shapes(mica__ox_t *x, const char *spec,
                                    int bit, const char *option)
{
    const char *p = spec;
    while (*p && x->st == MICA_OK) {
        const char *end = strchr(p, ','), *colon = NULL, *q;
        size_t len;
        char *name;
        int64_t vals[MICA_MAX_DIMS * 8];
        int32_t nb = 0, k;
        mica__ox_range_t *r = NULL;
        if (*p == '\'') {
            /* 'name:with:colons':1x2 */
            q = strchr(p + 1, '\'');
            if (!q || q[1] != ':')
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%s': an "
                                  "unclosed quote", option, spec);
            name = mica__ox_printf(x, "%.*s", (int)(q - p - 1), p + 1);
            colon = q + 1;
            end = strchr(colon, ',');
        } else {
            if (!end)
                end = p + strlen(p);
            for (q = p; q < end; q++)
                if (*q == ':')
                    colon = q;
            if (!colon)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%.*s': "
                                  "expected NAME:AxBxC", option,
                                  (int)(end - p), p);
            name = mica__ox_printf(x, "%.*s", (int)(colon - p), p);
        }
        if (!end)
            end = colon + strlen(colon);
        if (!name)
            return x->st;
        for (q = colon + 1; q < end;) {
            char *e;
            long long v;
            errno = 0;
            v = strtoll(q, &e, 10);
            if (e == q || errno || (e < end && *e != 'x')
                || nb == (int32_t)(sizeof vals / sizeof *vals))
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s '%.*s': "
                                  "expected NAME:AxBxC with integers",
                                  option, (int)(end - p), p);
            vals[nb++] = v;
            q = e < end ? e + 1 : e;
        }
        len = (size_t)nb;
        for (k = 0; k < x->nb_ranges; k++)
            if (!strcmp(x->ranges[k].name, name))
                r = &x->ranges[k];
        if (!r) {
            mica__ox_range_t *g = mica__ox_alloc(x, sizeof *g *
                                                 (size_t)(x->nb_ranges + 1));
            if (!g)
                return x->st;
            if (x->nb_ranges)
                memcpy(g, x->ranges, sizeof *g * (size_t)x->nb_ranges);
            x->ranges = g;
            r = &x->ranges[x->nb_ranges++];
            r->name = name;
            r->n = (int32_t)len;
        }
        if (r->n != (int32_t)len || len > MICA_MAX_DIMS)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s' "
                              "has %d values here and %d in another option"
                              "%s", option, name, (int)len, (int)r->n,
                              len > MICA_MAX_DIMS ? " (or too many)" : "");
        for (k = 0; k < nb; k++) {
            if (bit & 1) r->min[k] = vals[k];
            if (bit & 2) r->opt[k] = vals[k];
            if (bit & 4) r->max[k] = vals[k];
        }
        r->have |= bit;
        p = *end ? end + 1 : end;
    }
    return x->st;
}

/* A range from the input the caller will run with: its dims, or its
 * values for a shape tensor; NULL if none is given. */
static mica__ox_range_t *given_input(mica__ox_t *x, const mica__ox_input_t *in)
{
    const mica_onnx_options_t *o = x->opt;
    mica__ox_range_t *r;
    int32_t i, k;
    if (!o || o->struct_size < sizeof *o)
        return NULL;
    for (i = 0; i < o->nb_inputs; i++)
        if (o->input_names && o->input_names[i]
            ? !strcmp(o->input_names[i], in->v->name) : i == in->v->input)
            break;
    if (i == o->nb_inputs)
        return NULL;
    {
        mica__ox_range_t *g = mica__ox_alloc(x, sizeof *g *
                                             (size_t)(x->nb_ranges + 1));
        if (!g)
            return NULL;
        if (x->nb_ranges)
            memcpy(g, x->ranges, sizeof *g * (size_t)x->nb_ranges);
        x->ranges = g;
        r = &x->ranges[x->nb_ranges++];
    }
    r->name = in->v->name;
    r->have = 7;
    if (in->shape_tensor) {
        const mica_tensor_desc_t *d = &o->input_descs[i];
        int64_t cnt = mica_dims_volume(&d->dims);
        if ((d->dtype != MICA_INT32 && d->dtype != MICA_INT64)
            || cnt > MICA_MAX_DIMS) {
            mica__ox_fail(x, NULL, MICA_ERR_INVALID, "input '%s' is a shape "
                          "tensor: its data must be int32 or int64, at most "
                          "%d values", in->v->name, MICA_MAX_DIMS);
            return NULL;
        }
        r->n = (int32_t)cnt;
        for (k = 0; k < r->n; k++)
            r->min[k] = r->opt[k] = r->max[k] = d->dtype == MICA_INT64
                ? ((const int64_t *)o->input_data[i])[k]
                : ((const int32_t *)o->input_data[i])[k];
    } else {
        r->n = o->input_descs[i].dims.nb_dims;
        for (k = 0; k < r->n; k++)
            r->min[k] = r->opt[k] = r->max[k] = o->input_descs[i].dims.d[k];
    }
    return r;
}

/* The profile of every input with runtime dimensions or shape values. */
static mica_status_t profiles(mica__ox_t *x)
{
    int32_t i, k;
    char list[512];
    size_t n = 0;
    list[0] = '\0';
    for (i = 0; i < x->nb_inputs; i++)
        if (n < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                  i ? ", " : "", x->inputs[i].v->name);
    for (k = 0; k < x->nb_ranges; k++) {
        mica__ox_range_t *r = &x->ranges[k];
        const mica__ox_input_t *in = NULL;
        for (i = 0; i < x->nb_inputs; i++)
            if (!strcmp(x->inputs[i].v->name, r->name))
                in = &x->inputs[i];
        if (!in)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: the shapes "
                              "given name '%s', which is not an input of "
                              "the model (its inputs: %s)", x->model->path,
                              r->name, x->nb_inputs ? list : "none");
        /* What is missing of min, opt and max is what is given. */
        for (i = 0; i < r->n; i++) {
            int64_t any = r->have & 2 ? r->opt[i] : r->have & 4 ? r->max[i]
                                                                : r->min[i];
            if (!(r->have & 1)) r->min[i] = any;
            if (!(r->have & 2)) r->opt[i] = any;
            if (!(r->have & 4)) r->max[i] = any;
        }
    }
    for (i = 0; i < x->nb_inputs; i++) {
        mica__ox_input_t *in = &x->inputs[i];
        const mica__ox_value_t *v = in->v;
        mica__ox_range_t *r = NULL;
        int dyn = in->shape_tensor || !mica__ox_dims_known(v);
        char ds[128];
        size_t m = 0;
        int32_t d;
        for (k = 0; k < x->nb_ranges; k++)
            if (!strcmp(x->ranges[k].name, v->name))
                r = &x->ranges[k];
        ds[0] = '\0';
        for (d = 0; d < v->rank && m < sizeof ds; d++)
            m += (size_t)snprintf(ds + m, sizeof ds - m, "%s%lld",
                                  d ? "x" : "", (long long)v->d[d]);
        if (!r && dyn && (r = given_input(x, in)) == NULL
            && x->st != MICA_OK)
            return x->st;
        if (!r) {
            if (!dyn)
                continue;
            if (in->shape_tensor)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                  "'%s' is a shape tensor: give its values "
                                  "with --shapes %s:V1xV2... (or "
                                  "--min/--opt/--max-shapes)",
                                  x->model->path, v->name, v->name);
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s' has "
                              "runtime dimensions (%s, -1 unknown): give its "
                              "shapes with --shapes %s:AxBx... (or "
                              "--min/--opt/--max-shapes)", x->model->path,
                              v->name, ds, v->name);
        }
        if (in->shape_tensor) {
            int64_t want = v->rank == 0 ? 1 : v->d[0];
            if (r->n != want)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s'"
                                  " is a shape tensor of %lld values; the "
                                  "shapes given have %d", x->model->path,
                                  v->name, (long long)want, (int)r->n);
        } else {
            if (r->n != v->rank)
                return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input '%s'"
                                  " has rank %d (%s), the shapes given %d "
                                  "dimensions", x->model->path, v->name,
                                  (int)v->rank, ds, (int)r->n);
            for (d = 0; d < v->rank; d++) {
                if (r->min[d] < 0 || r->min[d] > r->opt[d]
                    || r->opt[d] > r->max[d])
                    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                      "'%s': dimension %d needs 0 <= min <= "
                                      "opt <= max, got %lld, %lld, %lld",
                                      x->model->path, v->name, (int)d,
                                      (long long)r->min[d],
                                      (long long)r->opt[d],
                                      (long long)r->max[d]);
                if (v->d[d] >= 0 && (r->min[d] != v->d[d]
                                     || r->max[d] != v->d[d]))
                    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: input "
                                      "'%s' is %s; the shapes given differ "
                                      "in dimension %d", x->model->path,
                                      v->name, ds, (int)d);
            }
        }
        r->used = dyn;
    }
    return MICA_OK;
}

/* ---- shape-tensor inputs -------------------------------------------------- */

/* Which inputs of a layer are read as shapes (a while TripLimit's
 * predicate is computed in the loop, not before it). */
static int shape_slot(const mica__ox_layer_t *l, int32_t i)
{
    const char *type = l->type;
    int32_t k;
    if (!strcmp(type, "TripLimit"))
        for (k = 0; k < l->nb_p; k++)
            if (!strcmp(l->p[k].name, "kind") && !strcmp(l->p[k].s[0],
                                                         "while"))
                return 0;
    if (!strcmp(type, "Shuffle") || !strcmp(type, "Resize"))
        return i == 1;
    if (!strcmp(type, "Slice"))
        return i >= 1 && i <= 3;
    if (!strcmp(type, "Fill"))
        return i == 0;
    if (!strcmp(type, "TripLimit"))
        return i == 0;
    if (!strcmp(type, "LoopOutput"))
        return i == 1;
    return 0;
}

static mica_status_t mark_shape_inputs(mica__ox_t *x)
{
    mica__ox_names_t producer = {0}, seen = {0};
    const char **stack = NULL;
    size_t nb = 0, cap = 0;
    mica__ox_layer_t *l;
    int32_t i;
    mica_status_t st = MICA_OK;

#define PUSH(t) do { \
        if ((t) && !mica__ox_names_has(&seen, (t))) { \
            if (mica__ox_names_put(&seen, (t), (void *)(t))) goto nomem; \
            if (nb == cap) { \
                const char **g_ = realloc(stack, sizeof *g_ * \
                                          (cap = cap ? 2 * cap : 64)); \
                if (!g_) goto nomem; \
                stack = g_; \
            } \
            stack[nb++] = (t); \
        } } while (0)

    for (l = x->first; l; l = l->next)
        for (i = 0; i < l->nb_out; i++)
            if (mica__ox_names_put(&producer, l->out[i], l))
                goto nomem;
    for (l = x->first; l; l = l->next)
        for (i = 0; i < l->nb_in; i++)
            if (shape_slot(l, i))
                PUSH(l->in[i]);
    while (nb) {
        const char *t = stack[--nb];
        mica__ox_layer_t *p = mica__ox_names_get(&producer, t);
        if (!p) {
            for (i = 0; i < x->nb_inputs; i++)
                if (!strcmp(x->inputs[i].v->tensor, t)) {
                    mica__ox_value_t *v = x->inputs[i].v;
                    if (v->dtype != MICA_INT32 || v->rank > 1
                        || (v->rank == 1 && v->d[0] < 0)) {
                        st = mica__fail(x->ctx, MICA_ERR_UNSUPPORTED, "%s: "
                                        "input '%s' is read as a shape "
                                        "tensor, which must be integer, "
                                        "0-D or 1-D of a fixed length",
                                        x->model->path, v->name);
                        goto out;
                    }
                    x->inputs[i].shape_tensor = 1;
                }
            continue;
        }
        if (!strcmp(p->type, "Shape"))
            continue;
        for (i = 0; i < p->nb_in; i++)
            PUSH(p->in[i]);
    }
#undef PUSH
    goto out;
nomem:
    st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
out:
    free(stack);
    mica__ox_names_free(&producer);
    mica__ox_names_free(&seen);
    return st;
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
        mica__ox_bind(x, vi->name, v);
    }
    if (x->st == MICA_OK)
        mica__ox_initializers(x, g);
    if (x->st == MICA_OK)
        mica__ox_graph_nodes(x, g);
    if (x->st == MICA_OK)
        outputs(x, g);
    if (x->st == MICA_OK && !x->nb_outputs)
        return mica__ox_fail(x, NULL, MICA_ERR_INVALID, "the graph has no "
                             "outputs");
    if (x->st == MICA_OK)
        x->st = mark_shape_inputs(x);
    if (x->st == MICA_OK)
        x->st = profiles(x);
    return x->st;
}
