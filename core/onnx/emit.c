/*
 * core/onnx/emit.c - the YAML text of an imported model: the manifest
 * format of docs (inputs, profiles, weights in one raw file, one layer per
 * line in flow style after a comment naming the ONNX node it comes from).
 * Names are written plain when YAML reads them back as the same string,
 * else double-quoted with escapes.
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

typedef struct buf {
    char *p;
    size_t len, cap;
    int failed;
} buf_t;

static void put(buf_t *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *g;
        while (cap < b->len + n + 1)
            cap *= 2;
        g = realloc(b->p, cap);
        if (!g) {
            b->failed = 1;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

#define PUTS(b, lit) put((b), (lit), sizeof(lit) - 1)

static void putf(buf_t *b, const char *fmt, ...) MICA_PRINTF(2, 3);
static void putf(buf_t *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
    } else if ((size_t)n < sizeof tmp) {
        put(b, tmp, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) {
            b->failed = 1;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        put(b, big, (size_t)n);
        free(big);
    }
}

/* Whether YAML reads `s` back, plain, as this same string. */
static int plain_ok(const char *s)
{
    static const char *const special[] = {
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", NULL,
    };
    const char *p;
    int i;
    if (!*s)
        return 0;
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '/' || *p == '-'))
            return 0;
    for (i = 0; special[i]; i++) {
        const char *a = s, *c = special[i];
        while (*a && *c && (*a | 0x20) == *c) {
            a++;
            c++;
        }
        if (!*a && !*c)
            return 0;
    }
    return 1;
}

static void name(buf_t *b, const char *s)
{
    const unsigned char *p;
    if (plain_ok(s)) {
        put(b, s, strlen(s));
        return;
    }
    PUTS(b, "\"");
    for (p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            putf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            putf(b, "\\x%02x", *p);
        else
            put(b, (const char *)p, 1);
    }
    PUTS(b, "\"");
}

static void real(buf_t *b, double v)
{
    if (isnan(v))
        PUTS(b, ".nan");
    else if (isinf(v))
        put(b, v < 0 ? "-.inf" : ".inf", strlen(v < 0 ? "-.inf" : ".inf"));
    else {
        char tmp[64];
        int k = snprintf(tmp, sizeof tmp, "%.17g", v);
        /* A float that prints as an integer still reads as a float. */
        if (!strpbrk(tmp, ".e"))
            k += snprintf(tmp + k, sizeof tmp - (size_t)k, ".0");
        put(b, tmp, (size_t)k);
    }
}

static void ints(buf_t *b, const int64_t *v, int32_t n)
{
    int32_t i;
    PUTS(b, "[");
    for (i = 0; i < n; i++)
        putf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
    PUTS(b, "]");
}

static void dims(buf_t *b, const int64_t *d, int32_t n)
{
    ints(b, d, n);
}

static void names(buf_t *b, const char *const *v, int32_t n)
{
    int32_t i;
    PUTS(b, "[");
    for (i = 0; i < n; i++) {
        if (i)
            PUTS(b, ", ");
        if (v[i])
            name(b, v[i]);
        else
            PUTS(b, "~");
    }
    PUTS(b, "]");
}

static void param(buf_t *b, const mica__ox_param_t *p)
{
    int32_t i;
    put(b, p->name, strlen(p->name));
    PUTS(b, ": ");
    if (p->list)
        PUTS(b, "[");
    for (i = 0; i < p->n; i++) {
        if (i)
            PUTS(b, ", ");
        switch (p->kind) {
        case OX_P_INT: putf(b, "%lld", (long long)p->i[i]); break;
        case OX_P_FLOAT: real(b, p->f[i]); break;
        case OX_P_STR:
            if (!strcmp(p->s[i], "true") || !strcmp(p->s[i], "false"))
                put(b, p->s[i], strlen(p->s[i]));
            else
                name(b, p->s[i]);
            break;
        default: name(b, p->s[i]); break;
        }
    }
    if (p->list)
        PUTS(b, "]");
}

static void layer(buf_t *b, const mica__ox_layer_t *l)
{
    int32_t i;
    if (l->comment) {
        const char *c;
        PUTS(b, "  # ");
        for (c = l->comment; *c; c++)
            put(b, *c == '\n' || *c == '\r' ? " " : c, 1);
        PUTS(b, "\n");
    }
    PUTS(b, "  - {name: ");
    name(b, l->name);
    PUTS(b, ", type: ");
    name(b, l->type);
    if (l->ns && *l->ns) {
        PUTS(b, ", namespace: ");
        name(b, l->ns);
    }
    if (l->loop) {
        PUTS(b, ", loop: ");
        name(b, l->loop);
    }
    if (l->cond) {
        PUTS(b, ", conditional: ");
        name(b, l->cond);
    }
    PUTS(b, ", inputs: ");
    names(b, l->in, l->nb_in);
    if (l->nb_out) {
        PUTS(b, ", outputs: ");
        names(b, l->out, l->nb_out);
    }
    if (l->nb_p) {
        PUTS(b, ", params: {");
        for (i = 0; i < l->nb_p; i++) {
            if (i)
                PUTS(b, ", ");
            param(b, &l->p[i]);
        }
        PUTS(b, "}");
    }
    PUTS(b, "}\n");
}

static void range(buf_t *b, const char *key, const int64_t *v, int32_t n)
{
    putf(b, "%s: ", key);
    dims(b, v, n);
}

static void weights(buf_t *b, const mica__ox_weights_t *w, const char *file)
{
    int64_t i, n = mica_dims_volume(&w->dims);
    PUTS(b, "  ");
    name(b, w->name);
    putf(b, ": {dtype: %s, shape: ", mica_dtype_name(w->dtype));
    dims(b, w->dims.d, w->dims.nb_dims);
    if (w->inline_) {
        PUTS(b, ", data: [");
        for (i = 0; i < n; i++) {
            if (w->dtype == MICA_BOOL) {
                putf(b, "%s%s", i ? ", " : "",
                     w->inline_data[i] ? "true" : "false");
            } else {
                int32_t v;
                memcpy(&v, w->inline_data + 4 * i, 4);
                putf(b, "%s%d", i ? ", " : "", (int)v);
            }
        }
        PUTS(b, "]}\n");
    } else {
        PUTS(b, ", file: ");
        name(b, file);
        putf(b, ", offset: %lld}\n", (long long)w->offset);
    }
}

char *mica__ox_emit(mica__ox_t *x, const char *source,
                    const char *weights_file, size_t *len)
{
    buf_t b;
    int32_t i, k;
    const mica__ox_layer_t *l;
    const Onnx__ModelProto *mp = x->model->proto;
    int any_profile = 0;

    memset(&b, 0, sizeof b);
    putf(&b, "# Imported by mica from %s", source);
    putf(&b, " (ONNX IR version %lld, opset %lld",
         (long long)mp->ir_version, (long long)x->model->opset);
    if (mp->producer_name && *mp->producer_name) {
        const char *c;
        PUTS(&b, ", made by ");
        for (c = mp->producer_name; *c; c++)
            put(&b, *c == '\n' || *c == '\r' ? " " : c, 1);
        if (mp->producer_version && *mp->producer_version)
            for (PUTS(&b, " "), c = mp->producer_version; *c; c++)
                put(&b, *c == '\n' || *c == '\r' ? " " : c, 1);
    }
    PUTS(&b, ").\nmica: 1\n");
    if (x->name && *x->name) {
        PUTS(&b, "name: ");
        name(&b, x->name);
        PUTS(&b, "\n");
    }
    PUTS(&b, "inputs:");
    if (!x->nb_inputs)
        PUTS(&b, " {}");
    PUTS(&b, "\n");
    for (i = 0; i < x->nb_inputs; i++) {
        const mica__ox_value_t *v = x->inputs[i].v;
        PUTS(&b, "  ");
        name(&b, v->tensor);
        putf(&b, ": {dtype: %s, shape: ", mica_dtype_name(v->dtype));
        dims(&b, v->d, v->rank);
        if (x->inputs[i].shape_tensor)
            PUTS(&b, ", shape_tensor: true");
        PUTS(&b, "}\n");
    }
    for (i = 0; i < x->nb_inputs; i++) {
        const mica__ox_value_t *v = x->inputs[i].v;
        const mica__ox_range_t *r = NULL;
        for (k = 0; k < x->nb_ranges; k++)
            if (!strcmp(x->ranges[k].name, v->name))
                r = &x->ranges[k];
        if (!r || !r->used)
            continue;
        if (any_profile)
            PUTS(&b, "    ");
        else
            PUTS(&b, "profiles:\n  - ");
        any_profile = 1;
        name(&b, v->tensor);
        PUTS(&b, ": {");
        if (x->inputs[i].shape_tensor)
            PUTS(&b, "values: {");
        range(&b, "min", r->min, r->n);
        PUTS(&b, ", ");
        range(&b, "opt", r->opt, r->n);
        PUTS(&b, ", ");
        range(&b, "max", r->max, r->n);
        if (x->inputs[i].shape_tensor)
            PUTS(&b, "}}\n");
        else
            PUTS(&b, "}\n");
    }
    if (x->nb_weights) {
        PUTS(&b, "weights:\n");
        for (i = 0; i < x->nb_weights; i++)
            weights(&b, &x->weights[i], weights_file);
    }
    PUTS(&b, "layers:");
    if (x->first)
        PUTS(&b, "\n");
    else
        PUTS(&b, " []\n");
    for (l = x->first; l; l = l->next)
        layer(&b, l);
    PUTS(&b, "outputs: ");
    names(&b, x->outputs, x->nb_outputs);
    PUTS(&b, "\n");
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
