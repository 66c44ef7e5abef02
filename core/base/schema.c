/*
 * core/base/schema.c - what a creator's schema says: type names, a field
 * by name, element sizes, enum lengths, the lists messages name, and
 * whether two schemas are the same (so that fields checked for one serve
 * the other).
 */
#include <config.h>

#include "fields.h"

#include <stdio.h>
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

size_t mica__field_slot_size(mica_field_type_t t)
{
    switch (t) {
    case MICA_FIELD_FLOAT: return sizeof(double);
    case MICA_FIELD_STRING: return sizeof(const char *);
    case MICA_FIELD_WEIGHTS: return sizeof(mica_weights_t);
    default: return sizeof(int64_t);
    }
}

int32_t mica__enum_count(const char *const *values)
{
    int32_t n = 0;
    while (values && values[n])
        n++;
    return n;
}

/* "x, y, z": the names of an enum. */
void mica__enum_names(const char *const *values, char *buf, size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; values && values[i] && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                values[i]);
}

/* "float32, float16, ...": every dtype. */
void mica__dtype_names(char *buf, size_t len)
{
    size_t pos = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < MICA_DTYPE_COUNT_ && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                mica_dtype_name((mica_dtype_t)i));
}

/* "a, b, c": the params a creator takes. */
void mica__field_names(const mica_layer_creator_t *c, char *buf, size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; i < c->nb_fields && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                c->fields[i].name);
}

/* Whether two default values (count n of type t) are the same. */
static int same_values(mica_field_type_t t, const void *a, const void *b,
                       int32_t n)
{
    int32_t i;
    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    if (t == MICA_FIELD_STRING) {
        for (i = 0; i < n; i++)
            if (strcmp(((const char *const *)a)[i],
                       ((const char *const *)b)[i]) != 0)
                return 0;
        return 1;
    }
    if (t == MICA_FIELD_WEIGHTS)
        return 0;
    return memcmp(a, b, mica__field_slot_size(t) * (size_t)n) == 0;
}

int mica__schema_same(const mica_layer_creator_t *a,
                      const mica_layer_creator_t *b)
{
    int32_t i, j;

    if (a == b || (a->fields == b->fields && a->nb_fields == b->nb_fields))
        return 1;
    if (a->nb_fields != b->nb_fields)
        return 0;
    for (i = 0; i < a->nb_fields; i++) {
        const mica_field_schema_t *x = &a->fields[i], *y = &b->fields[i];
        int32_t m = mica__enum_count(x->enum_values);
        if (strcmp(x->name, y->name) != 0 || x->type != y->type ||
            x->count != y->count || !x->required != !y->required ||
            m != mica__enum_count(y->enum_values) ||
            x->nb_default != y->nb_default ||
            !same_values(x->type, x->default_value, y->default_value,
                         x->nb_default))
            return 0;
        for (j = 0; j < m; j++)
            if (strcmp(x->enum_values[j], y->enum_values[j]) != 0)
                return 0;
    }
    return 1;
}
