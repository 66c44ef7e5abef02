/*
 * core/base/fields.c - params checked against a creator's schema.
 *
 * The one place that decides whether a layer's params are acceptable and
 * converts them: unknown names, values given twice, wrong counts, wrong
 * types, enum names, dtypes, missing required params, defaults.  The C
 * API (mica_network_add_layer), the manifest loader (loose values with
 * their positions) and the builder (another implementation's schema)
 * all come through here, so every layer type, third-party ones included,
 * gets the same checks and the same messages.
 */
#include <config.h>

#include "fields.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- owned copies ------------------------------------------------------- */

/* Allocation owned by out, zeroed. */
static void *own(mica__fields_t *out, size_t n)
{
    void **grown = realloc(out->owned,
                           sizeof *grown * (size_t)(out->nb_owned + 1));
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

/* ---- one check ---------------------------------------------------------- */

typedef struct check {
    const mica__fields_src_t *src;
    const mica_layer_creator_t *c;
    mica__fields_t *out;
    char *err;
    size_t errlen;
    mica_status_t st;
} check_t;

/*
 * Fail with "ORIGIN: layer 'NAME': MESSAGE" (origin NULL: the layer's);
 * returns -1.
 */
static int fail(check_t *k, const char *origin, const char *fmt, ...)
    MICA_PRINTF(3, 4);
static int fail(check_t *k, const char *origin, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!origin)
        origin = k->src->origin;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(k->err, k->errlen, "%s%s%s%s%s%s", origin && *origin ? origin : "",
             origin && *origin ? ": " : "", k->src->layer ? "layer '" : "",
             k->src->layer ? k->src->layer : "", k->src->layer ? "': " : "",
             msg);
    k->st = MICA_ERR_INVALID;
    return -1;
}

static int nomem(check_t *k, const char *name)
{
    snprintf(k->err, k->errlen, "out of host memory copying param '%s'",
             name);
    k->st = MICA_ERR_NOMEM;
    return -1;
}

/* 'abc', a list, a map, null: a loose value in messages. */
static const char *describe(const mica__loose_t *v, char *buf, size_t len)
{
    if (v->kind == MICA__LOOSE_LIST)
        return "a list";
    if (v->kind == MICA__LOOSE_MAP)
        return "a map";
    if (mica__text_is_null(v->text, v->plain))
        return "null";
    if (strlen(v->text) > 40)
        snprintf(buf, len, "'%.37s...'", v->text);
    else
        snprintf(buf, len, "'%s'", v->text);
    return buf;
}

/* Weights into slot i of data: borrowed, or copied into out. */
static int put_weights(check_t *k, const mica_field_schema_t *s,
                       const mica_weights_t *w, const char *origin,
                       mica_weights_t *data, int32_t i)
{
    size_t size = mica_dtype_size(w->dtype), bytes;
    void *copy;

    if (!size || w->count < 0 || (w->count > 0 && !w->values))
        return fail(k, origin, "param '%s': malformed weights", s->name);
    data[i] = *w;
    if (k->src->borrow_weights)
        return 0;
    if ((size_t)w->count > ((size_t)-1) / size)
        return fail(k, origin, "param '%s': weights of %lld elements are too "
                    "large", s->name, (long long)w->count);
    bytes = (size_t)w->count * size;
    if (!(copy = own(k->out, bytes)))
        return nomem(k, s->name);
    if (bytes)
        memcpy(copy, w->values, bytes);
    data[i].values = copy;
    return 0;
}

/* Loose element `it` into slot i of data. */
static int loose_element(check_t *k, const mica_field_schema_t *s,
                         const mica__loose_t *it, void *data, int32_t i)
{
    const char *t = it->text, *o = it->origin;
    char d[64], list[512];
    int32_t e, m;
    int b;

    if (s->type != MICA_FIELD_WEIGHTS && it->kind != MICA__LOOSE_SCALAR)
        return fail(k, o, "param '%s': expected %s, got %s", s->name,
                    mica__field_type_name(s->type), describe(it, d, sizeof d));
    switch (s->type) {
    case MICA_FIELD_INT:
        if (!mica__text_to_int(t, it->plain, &((int64_t *)data)[i]))
            return fail(k, o, "param '%s': expected int, got %s", s->name,
                        describe(it, d, sizeof d));
        return 0;
    case MICA_FIELD_FLOAT:
        if (!mica__text_to_float(t, it->plain, &((double *)data)[i]))
            return fail(k, o, "param '%s': expected float, got %s", s->name,
                        describe(it, d, sizeof d));
        return 0;
    case MICA_FIELD_BOOL:
        if (!mica__text_to_bool(t, &b))
            return fail(k, o, "param '%s': expected bool (true or false), "
                        "got %s", s->name, describe(it, d, sizeof d));
        ((int64_t *)data)[i] = b;
        return 0;
    case MICA_FIELD_STRING:
        if (mica__text_is_null(t, it->plain))
            return fail(k, o, "param '%s': expected string, got null",
                        s->name);
        if (!(((const char **)data)[i] = own_str(k->out, t)))
            return nomem(k, s->name);
        return 0;
    case MICA_FIELD_ENUM:
        m = mica__enum_count(s->enum_values);
        for (e = 0; e < m; e++)
            if (strcmp(s->enum_values[e], t) == 0)
                break;
        if (e == m) {
            mica__enum_names(s->enum_values, list, sizeof list);
            return fail(k, o, "param '%s': %s is not one of %s", s->name,
                        describe(it, d, sizeof d), list);
        }
        ((int64_t *)data)[i] = e;
        return 0;
    case MICA_FIELD_DTYPE: {
        mica_dtype_t dt;
        if (mica__text_is_null(t, it->plain) ||
            mica_dtype_parse(t, &dt) != MICA_OK) {
            mica__dtype_names(list, sizeof list);
            return fail(k, o, "param '%s': %s is not a dtype (one of %s)",
                        s->name, describe(it, d, sizeof d), list);
        }
        ((int64_t *)data)[i] = dt;
        return 0;
    }
    case MICA_FIELD_WEIGHTS: {
        mica_weights_t w;
        char what[512];
        mica_status_t st;
        if (!k->src->weights)
            return fail(k, o, "param '%s': expected weights, got %s",
                        s->name, describe(it, d, sizeof d));
        snprintf(what, sizeof what, "%s%s%sparam '%s'",
                 k->src->layer ? "layer '" : "",
                 k->src->layer ? k->src->layer : "",
                 k->src->layer ? "': " : "", s->name);
        st = k->src->weights(k->src->user, it, what, &w, k->err, k->errlen);
        if (st != MICA_OK) {
            k->st = st;
            return -1;
        }
        return put_weights(k, s, &w, o, data, i);
    }
    }
    return fail(k, o, "param '%s': field type %d is not supported", s->name,
                (int)s->type);
}

/* Typed element i of g (a value of the C API, or a default). */
static int typed_element(check_t *k, const mica_field_schema_t *s,
                         const mica_field_t *g, void *data, int32_t i)
{
    char list[512];
    int64_t v;

    switch (s->type) {
    case MICA_FIELD_INT: case MICA_FIELD_BOOL: case MICA_FIELD_ENUM:
    case MICA_FIELD_DTYPE:
        if (g->type == MICA_FIELD_STRING &&
            (s->type == MICA_FIELD_ENUM || s->type == MICA_FIELD_DTYPE)) {
            const char *name = ((const char *const *)g->data)[i];
            mica__loose_t it;
            memset(&it, 0, sizeof it);
            it.text = name;
            return loose_element(k, s, &it, data, i);
        }
        if (!(g->type == s->type ||
              (g->type == MICA_FIELD_INT && s->type == MICA_FIELD_BOOL) ||
              (g->type == MICA_FIELD_BOOL && s->type == MICA_FIELD_INT)))
            break;
        v = ((const int64_t *)g->data)[i];
        if (s->type == MICA_FIELD_BOOL && v != 0 && v != 1)
            break;
        if (s->type == MICA_FIELD_ENUM &&
            (v < 0 || v >= mica__enum_count(s->enum_values))) {
            mica__enum_names(s->enum_values, list, sizeof list);
            return fail(k, NULL, "param '%s': enum index %lld out of range "
                        "(%s)", s->name, (long long)v, list);
        }
        if (s->type == MICA_FIELD_DTYPE && (v < 0 || v >= MICA_DTYPE_COUNT_))
            break;
        ((int64_t *)data)[i] = v;
        return 0;
    case MICA_FIELD_FLOAT:
        if (g->type == MICA_FIELD_FLOAT)
            ((double *)data)[i] = ((const double *)g->data)[i];
        else if (g->type == MICA_FIELD_INT)
            ((double *)data)[i] = (double)((const int64_t *)g->data)[i];
        else
            break;
        return 0;
    case MICA_FIELD_STRING:
        if (g->type != MICA_FIELD_STRING)
            break;
        if (!(((const char **)data)[i] =
                  own_str(k->out, ((const char *const *)g->data)[i])))
            return nomem(k, s->name);
        return 0;
    case MICA_FIELD_WEIGHTS:
        if (g->type != MICA_FIELD_WEIGHTS)
            break;
        return put_weights(k, s, &((const mica_weights_t *)g->data)[i], NULL,
                           data, i);
    }
    return fail(k, NULL, "param '%s': expected %s, got %s", s->name,
                s->type == MICA_FIELD_BOOL ? "bool (true or false)"
                                           : mica__field_type_name(s->type),
                mica__field_type_name(g->type));
}

/* Convert given param g (or a default) to schema entry s, into dst. */
static int convert(check_t *k, const mica_field_schema_t *s,
                   const mica__given_t *g, mica_field_t *dst)
{
    const mica__loose_t *v = g->loose;
    const char *o = v ? v->origin : NULL;
    char d[64];
    int32_t n, i;
    void *data;

    if (v) {
        if (v->kind == MICA__LOOSE_SCALAR && mica__text_is_null(v->text,
                                                                v->plain))
            return fail(k, o, "param '%s': no value", s->name);
        n = v->kind == MICA__LOOSE_LIST ? v->nb_items : 1;
        if (s->count > 1 && v->kind != MICA__LOOSE_LIST)
            return fail(k, o, "param '%s': expected a list of %d %s values, "
                        "got %s", s->name, (int)s->count,
                        mica__field_type_name(s->type),
                        describe(v, d, sizeof d));
        if (s->count == 1 && v->kind == MICA__LOOSE_LIST)
            return fail(k, o, "param '%s': expected one %s, got a list of %d",
                        s->name, mica__field_type_name(s->type), (int)n);
    } else {
        n = g->typed->count;
        if (n < 0 || (n > 0 && !g->typed->data))
            return fail(k, NULL, "param '%s': malformed (%d values, %s)",
                        s->name, (int)n, g->typed->data ? "data" : "no data");
        if (s->count == 1 && n != 1)
            return fail(k, NULL, "param '%s': expected one %s, got a list of "
                        "%d", s->name, mica__field_type_name(s->type),
                        (int)n);
    }
    if (s->count > 1 && n != s->count)
        return fail(k, o, "param '%s': expected a list of %d %s values, got "
                    "%d", s->name, (int)s->count,
                    mica__field_type_name(s->type), (int)n);
    if (!(data = own(k->out, mica__field_slot_size(s->type) * (size_t)n)))
        return nomem(k, s->name);
    dst->name = s->name;
    dst->type = s->type;
    dst->count = n;
    dst->data = data;
    for (i = 0; i < n; i++)
        if ((v ? loose_element(k, s,
                               v->kind == MICA__LOOSE_LIST ? &v->items[i] : v,
                               data, i)
               : typed_element(k, s, g->typed, data, i)) != 0)
            return -1;
    return 0;
}

/* Whether param g is one of the schema's and given once (its index). */
static int known(check_t *k, const mica__given_t *given, int32_t i,
                 int32_t *at)
{
    const mica_layer_creator_t *c = k->c;
    const mica__given_t *g = &given[i];
    const mica_field_schema_t *s = mica__schema_find(c, g->name);
    char list[512];
    int32_t j;

    if (!s) {
        if (c->nb_fields == 0)
            return fail(k, g->origin, "unknown param '%s' (%s takes no "
                        "params)", g->name, c->type);
        mica__field_names(c, list, sizeof list);
        return fail(k, g->origin, "unknown param '%s' (%s takes %s)",
                    g->name, c->type, list);
    }
    for (j = 0; j < i; j++)
        if (strcmp(given[j].name, g->name) == 0)
            return fail(k, g->origin, "param '%s' is given twice", g->name);
    *at = (int32_t)(s - c->fields);
    return 0;
}

/*
 * Every given param: known, once, converted.  A manifest's are taken in
 * the order written, each checked whole before the next; the C API's
 * names are all checked before any value.
 */
static int given_params(check_t *k, const mica__given_t *given, int32_t n,
                        mica_field_t *slot, uint8_t *set)
{
    int32_t i, at;

    for (i = 0; !k->src->manifest && i < n; i++)
        if (known(k, given, i, &at) != 0)
            return -1;
    for (i = 0; i < n; i++) {
        if (known(k, given, i, &at) != 0 ||
            convert(k, &k->c->fields[at], &given[i], &slot[at]) != 0)
            return -1;
        set[at] = 1;
    }
    return 0;
}

/* The required params not given; the defaults of the others. */
static int missing_and_defaults(check_t *k, mica_field_t *slot, uint8_t *set)
{
    const mica_layer_creator_t *c = k->c;
    int32_t i;

    for (i = 0; i < c->nb_fields; i++) {
        const mica_field_schema_t *s = &c->fields[i];
        mica__given_t dflt_given;
        mica_field_t dflt;
        if (set[i])
            continue;
        if (s->required) {
            if (k->src->manifest)
                return fail(k, k->src->params_origin, "missing param '%s' "
                            "(%s, required by %s)", s->name,
                            mica__field_type_name(s->type), c->type);
            return fail(k, NULL, "missing required param '%s' (%s)", s->name,
                        mica__field_type_name(s->type));
        }
        if (!s->default_value)
            continue;
        dflt.name = s->name;
        dflt.type = s->type;
        dflt.count = s->nb_default;
        dflt.data = s->default_value;
        memset(&dflt_given, 0, sizeof dflt_given);
        dflt_given.name = s->name;
        dflt_given.typed = &dflt;
        if (convert(k, s, &dflt_given, &slot[i]) != 0)
            return -1;
        set[i] = 2;
    }
    return 0;
}

mica_status_t mica__fields_validate(const mica__fields_src_t *src,
                                    const mica_layer_creator_t *c,
                                    const mica__given_t *given,
                                    int32_t nb_given, mica__fields_t *out,
                                    char *err, size_t errlen)
{
    size_t nf = (size_t)c->nb_fields + 1;
    mica_field_t *slot;
    uint8_t *set;
    check_t k;
    int32_t i, n = 0;

    memset(out, 0, sizeof *out);
    memset(&k, 0, sizeof k);
    k.src = src;
    k.c = c;
    k.out = out;
    k.err = err;
    k.errlen = errlen;
    slot = own(out, sizeof *slot * nf);
    set = own(out, nf);
    out->items = own(out, sizeof *out->items * nf);
    out->given = own(out, nf);
    if (!slot || !set || !out->items || !out->given) {
        nomem(&k, "(all)");
        goto fail;
    }
    if (given_params(&k, given, nb_given, slot, set) != 0 ||
        missing_and_defaults(&k, slot, set) != 0)
        goto fail;
    for (i = 0; i < c->nb_fields; i++)
        if (set[i]) {
            out->given[n] = set[i] == 1;
            out->items[n++] = slot[i];
        }
    out->view.nb_fields = n;
    out->view.fields = out->items;
    return MICA_OK;
fail:
    mica__fields_free(out);
    return k.st ? k.st : MICA_ERR_NOMEM;
}

mica_status_t mica__fields_check(const mica_layer_creator_t *c,
                                 const mica_fields_t *given,
                                 mica__fields_t *out, char *err,
                                 size_t errlen)
{
    mica__fields_src_t src;
    mica__given_t *g = NULL;
    int32_t i, n = given ? given->nb_fields : 0;
    mica_status_t st;

    memset(&src, 0, sizeof src);
    if (n > 0 && !(g = calloc((size_t)n, sizeof *g))) {
        memset(out, 0, sizeof *out);
        snprintf(err, errlen, "out of host memory checking params");
        return MICA_ERR_NOMEM;
    }
    for (i = 0; i < n; i++) {
        g[i].name = given->fields[i].name;
        g[i].typed = &given->fields[i];
    }
    st = mica__fields_validate(&src, c, g, n, out, err, errlen);
    free(g);
    return st;
}

mica__given_t *mica__fields_given(const mica__fields_t *f, int32_t *n)
{
    mica__given_t *g = calloc((size_t)f->view.nb_fields + 1, sizeof *g);
    int32_t i;

    *n = 0;
    for (i = 0; g && i < f->view.nb_fields; i++)
        if (f->given[i]) {
            g[*n].name = f->items[i].name;
            g[(*n)++].typed = &f->items[i];
        }
    return g;
}

void mica__fields_free(mica__fields_t *f)
{
    int32_t i;
    for (i = 0; i < f->nb_owned; i++)
        free(f->owned[i]);
    free(f->owned);
    memset(f, 0, sizeof *f);
}

