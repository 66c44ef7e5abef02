/*
 * core/manifest/params.c - a layer's `params` map converted to typed
 * fields by the schema its creator declares.  Every problem names the
 * param's position: unknown names (listing the accepted ones), values of
 * the wrong type, wrong counts, enum names not in the list, missing
 * required params.  Defaults are applied later by the core.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

/* A field type as the messages name it. */
static const char *type_name(mica_field_type_t t)
{
    static const char *const names[] = {"int", "float", "bool", "string",
                                        "enum", "dtype", "weights"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* The schema entry `name` of a creator, NULL if none. */
static const mica_field_schema_t *schema_find(const mica_layer_creator_t *c,
                                              const char *name)
{
    int32_t i;
    for (i = 0; i < c->nb_fields; i++)
        if (!strcmp(c->fields[i].name, name))
            return &c->fields[i];
    return NULL;
}

/* "a, b, c": the params a creator takes. */
static void field_names(const mica_layer_creator_t *c, char *buf, size_t len)
{
    size_t n = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; i < c->nb_fields && n + 1 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                              c->fields[i].name);
}

/* "x, y, z": the names of an enum. */
static void enum_names(const char *const *v, char *buf, size_t len)
{
    size_t n = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; v && v[i] && n + 1 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", v[i]);
}

/* Convert one element into slot i of data. */
static mica_status_t element(mica__mf_t *mf, yaml_node_t *it,
                             const char *what,
                             const mica_field_schema_t *s, void *data,
                             int32_t i)
{
    char d[64], list[512];
    const char *str;
    int64_t v;
    double f;
    int b;
    int k;
    mica_dtype_t dt;

    if (s->type != MICA_FIELD_WEIGHTS && it->type != YAML_SCALAR_NODE)
        return mica__mf_fail(mf, it, "%s: expected %s, got %s", what,
                             type_name(s->type),
                             mica__mf_describe(it, d, sizeof(d)));
    switch (s->type) {
    case MICA_FIELD_INT:
        if (!mica__mf_to_int(it, &v))
            return mica__mf_fail(mf, it, "%s: expected int, got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
        ((int64_t *)data)[i] = v;
        return MICA_OK;
    case MICA_FIELD_FLOAT:
        if (!mica__mf_to_float(it, &f))
            return mica__mf_fail(mf, it, "%s: expected float, got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
        ((double *)data)[i] = f;
        return MICA_OK;
    case MICA_FIELD_BOOL:
        if (!mica__mf_to_bool(it, &b))
            return mica__mf_fail(mf, it, "%s: expected bool (true or "
                                 "false), got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
        ((int64_t *)data)[i] = b;
        return MICA_OK;
    case MICA_FIELD_STRING:
        if (mica__mf_is_null(it))
            return mica__mf_fail(mf, it, "%s: expected string, got null",
                                 what);
        ((const char **)data)[i] = mica__mf_scalar(it);
        return MICA_OK;
    case MICA_FIELD_ENUM:
        str = mica__mf_scalar(it);
        for (k = 0; s->enum_values && s->enum_values[k]; k++)
            if (!strcmp(s->enum_values[k], str))
                break;
        if (!s->enum_values || !s->enum_values[k]) {
            enum_names(s->enum_values, list, sizeof(list));
            return mica__mf_fail(mf, it, "%s: %s is not one of %s", what,
                                 mica__mf_describe(it, d, sizeof(d)), list);
        }
        ((int64_t *)data)[i] = k;
        return MICA_OK;
    case MICA_FIELD_DTYPE:
        if (mica__mf_dtype(mf, it, what, &dt) != MICA_OK)
            return MICA_ERR_INVALID;
        ((int64_t *)data)[i] = dt;
        return MICA_OK;
    case MICA_FIELD_WEIGHTS: {
        const mica__mf_weights_t *w = NULL;
        if (it->type == YAML_MAPPING_NODE) {
            mica_status_t st = mica__mf_weights_blob(mf, it, NULL, what, &w);
            if (st != MICA_OK)
                return st;
        } else if (it->type == YAML_SCALAR_NODE && !mica__mf_is_null(it)) {
            w = mica__mf_weights_find(mf->m, mica__mf_scalar(it));
            if (!w)
                return mica__mf_fail(mf, it, "%s: no weights named '%s'",
                                     what, mica__mf_scalar(it));
        } else {
            return mica__mf_fail(mf, it, "%s: expected the name of a "
                                 "weights entry or a blob {dtype, shape, "
                                 "data}, got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
        }
        ((mica_weights_t *)data)[i] = w->w;
        return MICA_OK;
    }
    }
    return mica__mf_fail(mf, it, "%s: field type %d is not supported", what,
                         (int)s->type);
}

/* Bytes of one element of a field of type t. */
static size_t slot_size(mica_field_type_t t)
{
    switch (t) {
    case MICA_FIELD_FLOAT: return sizeof(double);
    case MICA_FIELD_STRING: return sizeof(const char *);
    case MICA_FIELD_WEIGHTS: return sizeof(mica_weights_t);
    default: return sizeof(int64_t);
    }
}

/* One param value (a scalar, a list, or a weights blob) into *out. */
static mica_status_t convert(mica__mf_t *mf, yaml_node_t *val,
                             const char *what, const mica_field_schema_t *s,
                             mica_field_t *out)
{
    int32_t n, i;
    int is_list;
    void *data;
    char d[64];
    mica_status_t st;

    /* A weights blob is a map: a single value, not a list. */
    is_list = val->type == YAML_SEQUENCE_NODE;
    if (mica__mf_is_null(val))
        return mica__mf_fail(mf, val, "%s: no value", what);
    if (s->count == 1 && is_list)
        return mica__mf_fail(mf, val, "%s: expected one %s, got a list",
                             what, type_name(s->type));
    if (s->count > 1 && !is_list)
        return mica__mf_fail(mf, val, "%s: expected a list of %d %s values, "
                             "got %s", what, (int)s->count,
                             type_name(s->type),
                             mica__mf_describe(val, d, sizeof(d)));
    n = is_list ? mica__mf_seq_len(val) : 1;
    if (s->count > 1 && n != s->count)
        return mica__mf_fail(mf, val, "%s: expected %d values, got %d", what,
                             (int)s->count, (int)n);
    data = calloc((size_t)(n ? n : 1), slot_size(s->type));
    if (!data)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    out->name = s->name;
    out->type = s->type;
    out->count = n;
    out->data = data;
    for (i = 0; i < n; i++) {
        st = element(mf, is_list ? mica__mf_seq_item(mf, val, i) : val, what,
                     s, data, i);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

mica_status_t mica__mf_params(mica__mf_t *mf, yaml_node_t *node,
                              yaml_node_t *layer_node, const char *layer,
                              const mica_layer_creator_t *creator,
                              mica__mf_params_t *out)
{
    yaml_node_pair_t *p;
    char what[256], list[512];
    mica_status_t st;
    int32_t n, i;

    memset(out, 0, sizeof(*out));
    if (node && mica__mf_is_null(node))
        node = NULL;
    if (node) {
        snprintf(what, sizeof(what), "layer '%s': params", layer);
        st = mica__mf_check_map(mf, node, NULL, what);
        if (st != MICA_OK)
            return st;
        n = (int32_t)(node->data.mapping.pairs.top
                      - node->data.mapping.pairs.start);
        out->items = calloc((size_t)(n ? n : 1), sizeof(*out->items));
        if (!out->items)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        for (p = node->data.mapping.pairs.start;
             p < node->data.mapping.pairs.top; p++) {
            yaml_node_t *k = mica__mf_node(mf, p->key);
            const char *name = mica__mf_scalar(k);
            const mica_field_schema_t *s = schema_find(creator, name);
            if (!s) {
                if (creator->nb_fields == 0)
                    return mica__mf_fail(mf, k, "layer '%s': unknown param "
                                         "'%s' (%s takes no params)", layer,
                                         name, creator->type);
                field_names(creator, list, sizeof(list));
                return mica__mf_fail(mf, k, "layer '%s': unknown param '%s' "
                                     "(%s takes %s)", layer, name,
                                     creator->type, list);
            }
            snprintf(what, sizeof(what), "layer '%s': param '%s'", layer,
                     name);
            st = convert(mf, mica__mf_node(mf, p->value), what, s,
                         &out->items[out->nb_items]);
            if (out->items[out->nb_items].data)
                out->nb_items++;
            if (st != MICA_OK)
                return st;
        }
    }
    for (i = 0; i < creator->nb_fields; i++) {
        const mica_field_schema_t *s = &creator->fields[i];
        int32_t j;
        if (!s->required)
            continue;
        for (j = 0; j < out->nb_items; j++)
            if (!strcmp(out->items[j].name, s->name))
                break;
        if (j == out->nb_items)
            return mica__mf_fail(mf, node ? node : layer_node,
                                 "layer '%s': missing param '%s' (%s, "
                                 "required by %s)", layer, s->name,
                                 type_name(s->type), creator->type);
    }
    out->view.nb_fields = out->nb_items;
    out->view.fields = out->items;
    return MICA_OK;
}

void mica__mf_params_free(mica__mf_params_t *p)
{
    int32_t i;
    for (i = 0; i < p->nb_items; i++)
        free((void *)p->items[i].data);
    free(p->items);
    memset(p, 0, sizeof(*p));
}
