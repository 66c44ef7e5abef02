/*
 * core/fields.c - generic parameter checking against a creator's schema.
 *
 * The one place that decides whether a layer's params are acceptable:
 * unknown names, wrong types, wrong counts, enum values, required fields.
 * Both the C API (mica_network_add_layer) and the manifest loader come
 * through here, so every layer type, third-party ones included, gets the
 * same checks and the same messages.
 */
#include <config.h>

#include "mica_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mica__field_type_name(mica_field_type_t type)
{
    static const char *const names[] = {"int", "float", "bool", "string",
                                        "enum", "dtype", "weights"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type]
                                                           : "?";
}

const mica_field_schema_t *mica__schema_find(const mica_layer_creator_t *c,
                                             const char *name)
{
    int32_t i;
    for (i = 0; i < c->nb_fields; i++)
        if (strcmp(c->fields[i].name, name) == 0)
            return &c->fields[i];
    return NULL;
}

/* Allocation owned by out, zeroed. */
static void *own(mica__fields_t *out, size_t n)
{
    void **grown = realloc(out->owned, sizeof *grown * (size_t)(out->nb_owned + 1));
    void *p;
    if (!grown)
        return NULL;
    out->owned = grown;
    p = calloc(1, n ? n : 1);
    if (p)
        out->owned[out->nb_owned++] = p;
    return p;
}

static char *own_str(mica__fields_t *out, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = own(out, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static void list_names(const mica_layer_creator_t *c, char *buf, size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; i < c->nb_fields && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                c->fields[i].name);
    if (c->nb_fields == 0)
        snprintf(buf, len, "none");
}

static void list_enum(const char *const *values, char *buf, size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; values && values[i] && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                values[i]);
}

static int32_t enum_count(const char *const *values)
{
    int32_t n = 0;
    while (values && values[n])
        n++;
    return n;
}

/*
 * Convert one given field to the schema's type into `dst` (owned by out).
 * Returns 0, or -1 with err filled.
 */
static int convert(const mica_field_schema_t *s, const mica_field_t *g,
                   mica__fields_t *out, mica_field_t *dst, char *err,
                   size_t errlen)
{
    int32_t i, n = g->count;
    char list[512];

    if (s->count > 0 && n != s->count) {
        if (s->count == 1)
            snprintf(err, errlen, "param '%s': expected one %s, got a list of "
                     "%d", s->name, mica__field_type_name(s->type), (int)n);
        else
            snprintf(err, errlen, "param '%s': expected a list of %d %s "
                     "values, got %d", s->name, (int)s->count,
                     mica__field_type_name(s->type), (int)n);
        return -1;
    }
    dst->name = s->name;
    dst->type = s->type;
    dst->count = n;
    switch (s->type) {
    case MICA_FIELD_INT: case MICA_FIELD_BOOL: case MICA_FIELD_ENUM:
    case MICA_FIELD_DTYPE: {
        int64_t *v = own(out, sizeof *v * (size_t)n);
        if (!v)
            goto nomem;
        for (i = 0; i < n; i++) {
            if (g->type == MICA_FIELD_STRING &&
                (s->type == MICA_FIELD_ENUM || s->type == MICA_FIELD_DTYPE)) {
                const char *name = ((const char *const *)g->data)[i];
                if (s->type == MICA_FIELD_DTYPE) {
                    mica_dtype_t dt;
                    if (mica_dtype_parse(name, &dt) != MICA_OK) {
                        snprintf(err, errlen, "param '%s': '%s' is not a "
                                 "dtype (float32, float16, int8, int32, bool, "
                                 "int64, uint8, bfloat16)", s->name, name);
                        return -1;
                    }
                    v[i] = dt;
                } else {
                    int32_t k, m = enum_count(s->enum_values);
                    for (k = 0; k < m; k++)
                        if (strcmp(s->enum_values[k], name) == 0)
                            break;
                    if (k == m) {
                        list_enum(s->enum_values, list, sizeof list);
                        snprintf(err, errlen, "param '%s': '%s' is not one "
                                 "of %s", s->name, name, list);
                        return -1;
                    }
                    v[i] = k;
                }
            } else if (g->type == s->type ||
                       (g->type == MICA_FIELD_INT &&
                        s->type == MICA_FIELD_BOOL) ||
                       (g->type == MICA_FIELD_BOOL &&
                        s->type == MICA_FIELD_INT)) {
                v[i] = ((const int64_t *)g->data)[i];
                if (s->type == MICA_FIELD_BOOL && v[i] != 0 && v[i] != 1)
                    goto badtype;
                if (s->type == MICA_FIELD_ENUM &&
                    (v[i] < 0 || v[i] >= enum_count(s->enum_values))) {
                    snprintf(err, errlen, "param '%s': enum index %lld out "
                             "of range", s->name, (long long)v[i]);
                    return -1;
                }
                if (s->type == MICA_FIELD_DTYPE &&
                    (v[i] < 0 || v[i] >= MICA_DTYPE_COUNT_))
                    goto badtype;
            } else {
                goto badtype;
            }
        }
        dst->data = v;
        return 0;
    }
    case MICA_FIELD_FLOAT: {
        double *v = own(out, sizeof *v * (size_t)n);
        if (!v)
            goto nomem;
        for (i = 0; i < n; i++) {
            if (g->type == MICA_FIELD_FLOAT)
                v[i] = ((const double *)g->data)[i];
            else if (g->type == MICA_FIELD_INT)
                v[i] = (double)((const int64_t *)g->data)[i];
            else
                goto badtype;
        }
        dst->data = v;
        return 0;
    }
    case MICA_FIELD_STRING: {
        const char **v = own(out, sizeof *v * (size_t)n);
        if (g->type != MICA_FIELD_STRING)
            goto badtype;
        if (!v)
            goto nomem;
        for (i = 0; i < n; i++)
            if (!(v[i] = own_str(out, ((const char *const *)g->data)[i])))
                goto nomem;
        dst->data = v;
        return 0;
    }
    case MICA_FIELD_WEIGHTS: {
        mica_weights_t *v = own(out, sizeof *v * (size_t)n);
        if (g->type != MICA_FIELD_WEIGHTS)
            goto badtype;
        if (!v)
            goto nomem;
        for (i = 0; i < n; i++) {
            const mica_weights_t *w = &((const mica_weights_t *)g->data)[i];
            size_t bytes = (size_t)w->count * mica_dtype_size(w->dtype);
            void *copy;
            if (!mica_dtype_size(w->dtype) || w->count < 0 ||
                (w->count > 0 && !w->values)) {
                snprintf(err, errlen, "param '%s': malformed weights",
                         s->name);
                return -1;
            }
            if (!(copy = own(out, bytes)))
                goto nomem;
            if (bytes)
                memcpy(copy, w->values, bytes);
            v[i] = *w;
            v[i].values = copy;
        }
        dst->data = v;
        return 0;
    }
    }
badtype:
    snprintf(err, errlen, "param '%s': expected %s, got %s", s->name,
             mica__field_type_name(s->type), mica__field_type_name(g->type));
    return -1;
nomem:
    snprintf(err, errlen, "out of host memory copying param '%s'", s->name);
    return -1;
}

mica_status_t mica__fields_check(const mica_layer_creator_t *creator,
                                 const mica_fields_t *given,
                                 mica__fields_t *out, char *err,
                                 size_t errlen)
{
    int32_t i, j, nb_given = given ? given->nb_fields : 0, n = 0;
    char list[512];

    memset(out, 0, sizeof *out);
    /* Every given name must be declared, and given once. */
    for (i = 0; i < nb_given; i++) {
        const char *name = given->fields[i].name;
        if (!mica__schema_find(creator, name)) {
            list_names(creator, list, sizeof list);
            snprintf(err, errlen, "unknown param '%s' for %s (accepted: %s)",
                     name, creator->type, list);
            return MICA_ERR_INVALID;
        }
        for (j = 0; j < i; j++)
            if (strcmp(given->fields[j].name, name) == 0) {
                snprintf(err, errlen, "param '%s' is given twice", name);
                return MICA_ERR_INVALID;
            }
    }
    out->items = own(out, sizeof *out->items * (size_t)(creator->nb_fields + 1));
    if (!out->items)
        goto nomem;
    for (i = 0; i < creator->nb_fields; i++) {
        const mica_field_schema_t *s = &creator->fields[i];
        const mica_field_t *g = NULL;
        mica_field_t dflt;
        for (j = 0; j < nb_given; j++)
            if (strcmp(given->fields[j].name, s->name) == 0)
                g = &given->fields[j];
        if (!g && s->required) {
            snprintf(err, errlen, "missing required param '%s' (%s)", s->name,
                     mica__field_type_name(s->type));
            goto fail;
        }
        if (!g && !s->default_value)
            continue;
        if (!g) {
            dflt.name = s->name;
            dflt.type = s->type;
            dflt.count = s->nb_default;
            dflt.data = s->default_value;
            g = &dflt;
        }
        if (convert(s, g, out, &out->items[n], err, errlen) != 0)
            goto fail;
        n++;
    }
    out->view.nb_fields = n;
    out->view.fields = out->items;
    return MICA_OK;
nomem:
    snprintf(err, errlen, "out of host memory checking params");
fail:
    mica__fields_free(out);
    return MICA_ERR_INVALID;
}

void mica__fields_free(mica__fields_t *f)
{
    int32_t i;
    for (i = 0; i < f->nb_owned; i++)
        free(f->owned[i]);
    free(f->owned);
    memset(f, 0, sizeof *f);
}
