/*
 * core/onnx/thirdparty.c - an ONNX operator the importer does not map,
 * whose op type (and domain, as namespace) names a registered layer type,
 * becomes a layer of that type, as TensorRT's parser falls back to
 * plugins: its inputs in order, its attributes as fields by the type's
 * schema, output types and shapes from the graph's value_info.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "onnx_int.h"

/* A registered creator of (ns, type), as third-party operators map. */
int mica__ox_find_creator(mica_context_t *ctx, const char *ns, const char *type,
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

