/*
 * core/onnx/ir.c - the manifest an import writes: an arena for
 * everything it allocates, errors, values, layers and their params,
 * network inputs and outputs (names.c has the name sets, weights.c the
 * weights entries).
 *
 * Allocation failures are sticky: they set x->st, and every function
 * here does nothing once x->st is set, so a mapping may build a few
 * layers and check x->st once at its end.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

/* ---- arena -------------------------------------------------------------- */

struct mica__ox_block {
    struct mica__ox_block *next;
    size_t used, size;
    max_align_t data[];
};

void *mica__ox_arena_alloc(mica__ox_arena_t *a, size_t n)
{
    struct mica__ox_block *b = a->blocks;
    size_t need = (n + 15) & ~(size_t)15;
    if (n > SIZE_MAX / 2)
        return NULL;
    if (!b || b->size - b->used < need) {
        size_t size = need > 65536 ? need : 65536;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->used = 0;
        b->size = size;
        /* A big block goes behind the current one, which keeps its room. */
        if (a->blocks && need > 65536) {
            b->next = a->blocks->next;
            a->blocks->next = b;
        } else {
            b->next = a->blocks;
            a->blocks = b;
        }
    }
    b->used += need;
    return memset((char *)b->data + b->used - need, 0, need);
}

void mica__ox_arena_free(mica__ox_arena_t *a)
{
    while (a->blocks) {
        struct mica__ox_block *next = a->blocks->next;
        free(a->blocks);
        a->blocks = next;
    }
}

void *mica__ox_alloc(mica__ox_t *x, size_t n)
{
    void *p;
    if (x->st != MICA_OK)
        return NULL;
    p = mica__ox_arena_alloc(&x->arena, n ? n : 1);
    if (!p)
        x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
    return p;
}

char *mica__ox_strdup(mica__ox_t *x, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *p = mica__ox_alloc(x, n);
    if (p)
        memcpy(p, s ? s : "", n);
    return p;
}

char *mica__ox_printf(mica__ox_t *x, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *p;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(p = mica__ox_alloc(x, (size_t)n + 1)))
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---- errors ------------------------------------------------------------- */

mica_status_t mica__ox_fail(mica__ox_t *x, const mica__ox_node_t *n,
                            mica_status_t st, const char *fmt, ...)
{
    char msg[MICA_ERROR_MAX];
    va_list ap;
    if (x->st != MICA_OK)
        return x->st;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) {
        const Onnx__NodeProto *p = n->proto;
        const char *dom = p->domain && *p->domain ? p->domain : NULL;
        x->st = mica__fail(x->ctx, st, "%s: node '%s' (%s%s%s, opset %lld): "
                           "%s", x->model->path, n->name, dom ? dom : "",
                           dom ? "." : "", p->op_type, (long long)n->opset,
                           msg);
    } else {
        x->st = mica__fail(x->ctx, st, "%s: %s", x->model->path, msg);
    }
    return x->st;
}

/* ---- values ------------------------------------------------------------- */

mica__ox_value_t *mica__ox_value_new(mica__ox_t *x, const char *onnx_name)
{
    mica__ox_value_t *v = mica__ox_alloc(x, sizeof *v);
    if (!v)
        return NULL;
    v->name = onnx_name ? mica__ox_strdup(x, onnx_name) : "";
    v->input = -1;
    v->rank = 0;
    return x->st == MICA_OK ? v : NULL;
}

mica__ox_value_t *mica__ox_lookup(mica__ox_t *x, const char *onnx_name)
{
    mica__ox_scope_t *s;
    for (s = x->scope; s; s = s->parent) {
        mica__ox_value_t *v = mica__ox_names_get(&s->values, onnx_name);
        if (v)
            return v;
    }
    return NULL;
}

mica_status_t mica__ox_bind(mica__ox_t *x, const char *onnx_name,
                            mica__ox_value_t *v)
{
    const char *key;
    if (x->st != MICA_OK)
        return x->st;
    key = mica__ox_strdup(x, onnx_name);
    if (key && mica__ox_names_put(&x->scope->values, key, v) != 0)
        x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
    return x->st;
}

int64_t mica__ox_volume(const mica__ox_value_t *v)
{
    return mica__ox_dims_count(v->d, v->rank);
}

mica__ox_value_t *mica__ox_const_data(mica__ox_t *x, const char *name,
                                      int32_t type, mica__ox_data_t *d)
{
    mica__ox_value_t *v;
    int32_t k;
    if (x->st != MICA_OK)
        return NULL;
    if (mica__ox_dims_count(d->dims.d, d->dims.nb_dims) != d->count) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "constant '%s': %lld "
                           "values for its dimensions", name ? name : "",
                           (long long)d->count);
        return NULL;
    }
    v = mica__ox_value_new(x, name);
    if (!v)
        return NULL;
    v->type = type;
    if (mica__ox_type_mica(type, &v->dtype) != 0) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "constant of type %s",
                           mica__ox_type_name(type));
        return NULL;
    }
    v->rank = d->dims.nb_dims;
    for (k = 0; k < v->rank; k++)
        v->d[k] = d->dims.d[k];
    v->cst = d;
    v->cond = x->cond;
    return v;
}

int mica__ox_cst_ok(const mica__ox_value_t *v)
{
    int32_t k;
    if (!v->cst || v->rank != v->cst->dims.nb_dims
        || mica__ox_dims_count(v->cst->dims.d, v->cst->dims.nb_dims)
           != v->cst->count)
        return 0;
    for (k = 0; k < v->rank; k++)
        if (v->d[k] != v->cst->dims.d[k])
            return 0;
    return 1;
}

int mica__ox_dims_known(const mica__ox_value_t *v)
{
    return mica__ox_volume(v) >= 0;
}

/* ---- layers ------------------------------------------------------------- */

mica__ox_layer_t *mica__ox_layer(mica__ox_t *x, mica__ox_node_t *n,
                                 const char *type, const char *tag)
{
    mica__ox_layer_t *l = mica__ox_alloc(x, sizeof *l);
    const char *base;
    if (!l)
        return NULL;
    if (n && n->nb_layers == 0)
        base = n->name;
    else if (n)
        base = mica__ox_printf(x, "%s/%s", n->name, tag ? tag : type);
    else
        base = tag ? tag : type;
    l->name = mica__ox_unique(x, &x->lnames, base);
    l->type = type;
    l->comment = n ? n->comment : NULL;
    if (n)
        n->nb_layers++;
    if (x->st != MICA_OK)
        return NULL;
    if (x->last)
        x->last->next = l;
    else
        x->first = l;
    x->last = l;
    x->nb_layers++;
    return l;
}

static int grow(mica__ox_t *x, const char ***arr, int32_t *cap, int32_t nb)
{
    const char **g;
    if (nb < *cap)
        return 0;
    g = mica__ox_alloc(x, sizeof *g * (size_t)(*cap ? 2 * *cap : 4));
    if (!g)
        return -1;
    if (nb)
        memcpy(g, *arr, sizeof *g * (size_t)nb);
    *arr = g;
    *cap = *cap ? 2 * *cap : 4;
    return 0;
}

void mica__ox_in(mica__ox_t *x, mica__ox_layer_t *l, const char *tensor)
{
    if (!l || x->st != MICA_OK || grow(x, &l->in, &l->cap_in, l->nb_in))
        return;
    l->in[l->nb_in++] = tensor;
}

mica__ox_value_t *mica__ox_out(mica__ox_t *x, mica__ox_layer_t *l,
                               const char *name, mica_dtype_t dtype,
                               int32_t rank, const int64_t *dims)
{
    mica__ox_value_t *v;
    const char *t;
    int32_t i;
    if (!l || x->st != MICA_OK || grow(x, &l->out, &l->cap_out, l->nb_out))
        return NULL;
    t = mica__ox_tensor_name(x, name, l->name, l->nb_out);
    v = mica__ox_value_new(x, name ? name : t);
    if (!v)
        return NULL;
    v->tensor = t;
    v->cond = x->cond;
    v->layer = l;
    v->slot = l->nb_out;
    v->gen = name == NULL;
    v->dtype = dtype;
    switch (dtype) {
    case MICA_FLOAT32: v->type = OX_FLOAT; break;
    case MICA_FLOAT16: v->type = OX_FLOAT16; break;
    case MICA_BFLOAT16: v->type = OX_BFLOAT16; break;
    case MICA_INT8: v->type = OX_INT8; break;
    case MICA_UINT8: v->type = OX_UINT8; break;
    case MICA_BOOL: v->type = OX_BOOL; break;
    default: v->type = OX_INT32; break;
    }
    v->rank = rank;
    for (i = 0; i < rank && i < MICA_MAX_DIMS; i++)
        v->d[i] = dims ? dims[i] : -1;
    l->out[l->nb_out++] = t;
    return v;
}

int mica__ox_out_tensor(mica__ox_t *x, mica__ox_layer_t *l, const char *t)
{
    if (!l || !t || x->st != MICA_OK
        || grow(x, &l->out, &l->cap_out, l->nb_out))
        return -1;
    l->out[l->nb_out++] = t;
    return 0;
}

static mica__ox_param_t *param(mica__ox_t *x, mica__ox_layer_t *l,
                               const char *name, int kind, int list,
                               int32_t n)
{
    mica__ox_param_t *p;
    if (!l || x->st != MICA_OK)
        return NULL;
    if (l->nb_p == MICA__OX_MAX_PARAMS) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "layer '%s': more "
                           "than %d params", l->name, MICA__OX_MAX_PARAMS);
        return NULL;
    }
    p = &l->p[l->nb_p];
    p->name = name;
    p->kind = kind;
    p->list = list;
    p->n = n;
    if (kind == OX_P_INT)
        p->i = mica__ox_alloc(x, sizeof *p->i * (size_t)(n ? n : 1));
    else if (kind == OX_P_FLOAT)
        p->f = mica__ox_alloc(x, sizeof *p->f * (size_t)(n ? n : 1));
    else
        p->s = mica__ox_alloc(x, sizeof *p->s * (size_t)(n ? n : 1));
    if (x->st != MICA_OK)
        return NULL;
    l->nb_p++;
    return p;
}

void mica__ox_p_int(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                    int64_t v)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_INT, 0, 1);
    if (p)
        p->i[0] = v;
}

void mica__ox_p_ints(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                     const int64_t *v, int32_t n)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_INT, 1, n);
    if (p && n)
        memcpy(p->i, v, sizeof *v * (size_t)n);
}

void mica__ox_p_float(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                      double v)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_FLOAT, 0, 1);
    if (p)
        p->f[0] = v;
}

void mica__ox_p_floats(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                       const double *v, int32_t n)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_FLOAT, 1, n);
    if (p && n)
        memcpy(p->f, v, sizeof *v * (size_t)n);
}

void mica__ox_p_str(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                    const char *v)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_STR, 0, 1);
    if (p)
        p->s[0] = v;
}

void mica__ox_p_bool(mica__ox_t *x, mica__ox_layer_t *l, const char *name,
                     int v)
{
    mica__ox_p_str(x, l, name, v ? "true" : "false");
}

void mica__ox_p_weights(mica__ox_t *x, mica__ox_layer_t *l,
                        const char *name, const char *const *w, int32_t n,
                        int list)
{
    mica__ox_param_t *p = param(x, l, name, OX_P_WEIGHTS, list, n);
    if (p && n)
        memcpy(p->s, w, sizeof *w * (size_t)n);
}

/* ---- inputs and outputs --------------------------------------------------- */

void mica__ox_add_input(mica__ox_t *x, mica__ox_value_t *v)
{
    if (x->st != MICA_OK)
        return;
    if (x->nb_inputs == x->cap_inputs) {
        int32_t cap = x->cap_inputs ? 2 * x->cap_inputs : 16;
        mica__ox_input_t *g = mica__ox_alloc(x, sizeof *g * (size_t)cap);
        if (!g)
            return;
        if (x->nb_inputs)
            memcpy(g, x->inputs, sizeof *g * (size_t)x->nb_inputs);
        x->inputs = g;
        x->cap_inputs = cap;
    }
    v->input = x->nb_inputs;
    x->inputs[x->nb_inputs].v = v;
    x->inputs[x->nb_inputs++].shape_tensor = 0;
}

void mica__ox_add_output(mica__ox_t *x, const char *tensor)
{
    if (x->st != MICA_OK
        || grow(x, &x->outputs, &x->cap_outputs, x->nb_outputs))
        return;
    x->outputs[x->nb_outputs++] = tensor;
}
