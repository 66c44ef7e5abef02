/*
 * core/shapes.c - phase 1: from the inputs' dimensions and the values of
 * shape-tensor inputs to every tensor's dimensions, computing shape
 * tensors on the host on the way (TensorRT's two-phase execution).
 *
 * Each layer's output dims are expressions over symbols: the inputs'
 * runtime dimensions, the values of shape-tensor inputs, and values that
 * only exist once a shape tensor has been computed.  Walking the layers in
 * execution order, a symbol is always bound before the first expression
 * that uses it is evaluated.
 */
#include <config.h>

#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mica__dims_text(const mica_dims_t *d, char *buf, size_t len)
{
    mica__dims_str(d, buf, len);
}

mica_status_t mica__shapes_init(mica_engine_t *e, mica__shapes_t *s)
{
    size_t nt = (size_t)e->nb_tensors + 1;
    memset(s, 0, sizeof *s);
    s->symbols = calloc((size_t)e->nb_symbols + 1, sizeof *s->symbols);
    s->dims = calloc(nt, sizeof *s->dims);
    s->host = calloc(nt, sizeof *s->host);
    s->host_cap = calloc(nt, sizeof *s->host_cap);
    if (!s->symbols || !s->dims || !s->host || !s->host_cap) {
        mica__shapes_free(e, s);
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    return MICA_OK;
}

void mica__shapes_free(mica_engine_t *e, mica__shapes_t *s)
{
    int32_t i;
    for (i = 0; s->host && i < e->nb_tensors; i++)
        free(s->host[i]);
    free(s->host);
    free(s->host_cap);
    free(s->dims);
    free(s->symbols);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}

/* Grow a host buffer to `bytes`; 0 or -1. */
static int ensure(void **p, size_t *cap, size_t bytes)
{
    void *grown;
    if (bytes <= *cap && *p)
        return 0;
    grown = realloc(*p, bytes ? bytes : 1);
    if (!grown)
        return -1;
    *p = grown;
    *cap = bytes;
    return 0;
}

static int64_t read_int(const void *p, mica_dtype_t dtype, int32_t k)
{
    switch (dtype) {
    case MICA_INT64: return ((const int64_t *)p)[k];
    case MICA_INT8: return ((const int8_t *)p)[k];
    case MICA_UINT8: return ((const uint8_t *)p)[k];
    case MICA_BOOL: return ((const uint8_t *)p)[k] != 0;
    default: return ((const int32_t *)p)[k];
    }
}

/* Bind the symbols of inputs: runtime dims and shape-input values. */
static void bind_inputs(mica_engine_t *e, mica__shapes_t *s,
                        const mica_dims_t *input_dims)
{
    int32_t k, i;
    for (k = 0; k < e->nb_symbols; k++) {
        const mica__symbol_t *sym = &e->symbols[k];
        if (sym->kind == MICA__SYM_INPUT_DIM)
            s->symbols[k] = input_dims[sym->input].d[sym->axis];
        else if (sym->kind == MICA__SYM_INPUT_VALUE)
            s->symbols[k] = ((const int32_t *)s->host[sym->tensor])[sym->axis];
    }
    for (i = 0; i < e->nb_inputs; i++)
        s->dims[e->input_index[i]] = input_dims[i];
}

/* Evaluate the output dims of layer `step`. */
static mica_status_t eval_outputs(mica_engine_t *e, mica__shapes_t *s,
                                  int32_t step)
{
    const mica__layer_t *l = &e->layers[step];
    int32_t i, j;
    int64_t bytes;
    char at[512], text[768];

    for (i = 0; i < l->nb_outputs; i++) {
        const mica__tensor_t *t = &e->tensors[l->outputs[i]];
        mica_dims_t *d = &s->dims[l->outputs[i]];
        d->nb_dims = t->shape.nb_dims;
        for (j = 0; j < t->shape.nb_dims; j++) {
            if (mica__expr_eval(t->shape.d[j], s->symbols, e->nb_symbols,
                                &d->d[j]) != MICA_OK)
                return mica__fail(e->ctx, MICA_ERR_RUNTIME,
                                  "%slayer '%s': dimension %d of '%s' %s "
                                  "cannot be evaluated (a division by zero "
                                  "or a value beyond 64 bits)",
                                  mica__at(l->origin, at, sizeof at), l->name,
                                  (int)j, t->name, t->shape_text);
            if (d->d[j] < 0) {
                d->nb_dims = j + 1;
                mica__dims_text(d, text, sizeof text);
                return mica__fail(e->ctx, MICA_ERR_RUNTIME,
                                  "%slayer '%s': '%s' %s would have a negative "
                                  "dimension (%s...)",
                                  mica__at(l->origin, at, sizeof at), l->name,
                                  t->name, t->shape_text, text);
            }
        }
        /* every size computed later from these dims is then in range */
        snprintf(text, sizeof text, "%slayer '%s': output '%s'",
                 mica__at(l->origin, at, sizeof at), l->name, t->name);
        if (mica__tensor_bytes(e->ctx, text, d, t->dtype, &bytes) != MICA_OK)
            return MICA_ERR_RUNTIME;
    }
    return MICA_OK;
}

/* Run layer `step` on the host with its CPU implementation. */
static mica_status_t run_host(mica_engine_t *e, mica__shapes_t *s,
                              int32_t step, mica_layer_t *inst)
{
    const mica__layer_t *l = &e->layers[step];
    const mica_layer_ops_t *ops = inst->ops;
    mica_tensor_desc_t io[128];
    mica_dyn_desc_t dyn[128];
    const void *in[64];
    void *out[64];
    mica_error_t err;
    int32_t i, nin = l->nb_inputs, nout = l->nb_outputs, any = nout == 0;
    size_t ws = 0;
    char at[512];

    mica__layer_descs(e, l, s->dims, io);
    for (i = 0; i < nin; i++) {
        int32_t t = l->inputs[i];
        in[i] = t >= 0 && l->input_kinds[i] != MICA_INPUT_DIMS ? s->host[t]
                                                               : NULL;
    }
    for (i = 0; i < nout; i++) {
        int32_t t = l->outputs[i];
        /* checked by eval_outputs */
        size_t bytes = (size_t)mica_dims_volume(&s->dims[t]) *
                       mica_dtype_size(e->tensors[t].dtype);
        if (ensure(&s->host[t], &s->host_cap[t], bytes) != 0)
            return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        out[i] = s->host[t];
        any |= bytes > 0;
    }
    if (!any)
        return MICA_OK;
    if (ops->workspace_size) {
        for (i = 0; i < nin + nout; i++) {
            dyn[i].desc = io[i];
            dyn[i].min = dyn[i].max = io[i].dims;
        }
        ws = ops->workspace_size(inst, dyn, nin, dyn + nin, nout);
        if (ws > (size_t)MICA_MAX_TENSOR_BYTES)
            return mica__fail(e->ctx, MICA_ERR_RUNTIME, "%slayer '%s' (%s): "
                              "a workspace of %zu bytes, more than the 2^48 "
                              "a layer may ask for",
                              mica__at(l->origin, at, sizeof at), l->name,
                              l->info.type, ws);
        if (ensure(&s->scratch, &s->scratch_cap, ws) != 0)
            return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    mica__error_clear(&err);
    if (ops->enqueue(inst, io, nin, io + nin, nout, in, out,
                     ws ? s->scratch : NULL, NULL, &err) != MICA_OK)
        return mica__fail(e->ctx, MICA_ERR_RUNTIME, "%slayer '%s' (%s): %s",
                          mica__at(l->origin, at, sizeof at), l->name,
                          l->info.type, mica__error_msg(&err, "failed"));
    /* Bind the symbols that stand for values computed here. */
    for (i = 0; i < nout; i++) {
        const mica__tensor_t *t = &e->tensors[l->outputs[i]];
        int32_t k, n;
        if (t->first_symbol < 0)
            continue;
        n = (int32_t)mica_dims_volume(&s->dims[l->outputs[i]]);
        for (k = 0; k < n; k++)
            s->symbols[t->first_symbol + k] =
                read_int(s->host[l->outputs[i]], t->dtype, k);
    }
    return MICA_OK;
}

/* Bind the data-dependent sizes layer `step` makes to their bounds. */
static mica_status_t bind_sizes(mica_engine_t *e, mica__shapes_t *s,
                                int32_t step)
{
    const mica__layer_t *l = &e->layers[step];
    int32_t i;
    char at[512];

    for (i = 0; l->makes_sizes && i < e->nb_size_syms; i++) {
        const mica__symbol_t *k = &e->symbols[e->size_syms[i]];
        int64_t *v = &s->symbols[e->size_syms[i]];
        if (e->tensors[k->tensor].producer != step)
            continue;
        if (mica__expr_eval(k->upper, s->symbols, e->nb_symbols, v) !=
                MICA_OK || *v < 0)
            return mica__fail(e->ctx, MICA_ERR_RUNTIME, "%slayer '%s': the "
                              "bound of its data-dependent size '%s' cannot "
                              "be evaluated or is negative",
                              mica__at(l->origin, at, sizeof at), l->name,
                              k->name);
    }
    return MICA_OK;
}

mica_status_t mica__shapes_eval_from(mica_engine_t *e, mica__shapes_t *s,
                                     int32_t from, int32_t bind_from)
{
    int32_t step;
    mica_status_t st;

    for (step = from; step < e->nb_layers; step++)
        if ((step >= bind_from && (st = bind_sizes(e, s, step)) != MICA_OK) ||
            (st = eval_outputs(e, s, step)) != MICA_OK)
            return st;
    return MICA_OK;
}

mica_status_t mica__shapes_run(mica_engine_t *e, mica__shapes_t *s,
                               const mica_dims_t *input_dims, int assertions,
                               mica_layer_t *const *host)
{
    int32_t step;
    mica_status_t st;

    bind_inputs(e, s, input_dims);
    for (step = 0; step < e->nb_layers; step++) {
        const mica__layer_t *l = &e->layers[step];
        if ((st = bind_sizes(e, s, step)) != MICA_OK ||
            (st = eval_outputs(e, s, step)) != MICA_OK)
            return st;
        if (!l->run_host ||
            (!assertions && l->info.role == MICA_ROLE_ASSERTION))
            continue;
        if ((st = run_host(e, s, step,
                           host ? host[step] : l->host_instance)) != MICA_OK)
            return st;
    }
    return MICA_OK;
}

void mica__range_text(const mica_engine_t *e, int32_t k, int32_t i,
                      char *buf, size_t len)
{
    const mica__range_t *r = &e->profiles[k].ranges[i];
    size_t pos;
    int32_t j, n = r->nb_values ? r->nb_values : r->min.nb_dims;

    pos = (size_t)snprintf(buf, len, "%s[", r->nb_values ? "values " : "");
    for (j = 0; j < n && pos < len; j++) {
        int64_t lo = r->nb_values ? r->vmin[j] : r->min.d[j];
        int64_t hi = r->nb_values ? r->vmax[j] : r->max.d[j];
        if (lo == hi)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld",
                                    j ? ", " : "", (long long)lo);
        else
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld..%lld",
                                    j ? ", " : "", (long long)lo,
                                    (long long)hi);
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

int mica__profile_admits(const mica_engine_t *e, int32_t k,
                         const mica_dims_t *input_dims,
                         const mica__shapes_t *s, char *why, size_t len)
{
    int32_t i, j;
    char got[256], range[256];

    for (i = 0; i < e->nb_inputs; i++) {
        const mica__range_t *r = &e->profiles[k].ranges[i];
        int ok = 1;
        if (!r->set)
            continue;
        if (r->nb_values) {
            const int32_t *v = s->host[e->input_index[i]];
            size_t pos = (size_t)snprintf(got, sizeof got, "values [");
            for (j = 0; j < r->nb_values; j++) {
                ok &= v[j] >= r->vmin[j] && v[j] <= r->vmax[j];
                if (pos < sizeof got)
                    pos += (size_t)snprintf(got + pos, sizeof got - pos,
                                            "%s%d", j ? ", " : "", (int)v[j]);
            }
            if (pos < sizeof got)
                snprintf(got + pos, sizeof got - pos, "]");
        } else {
            for (j = 0; j < r->min.nb_dims; j++)
                ok &= input_dims[i].d[j] >= r->min.d[j] &&
                      input_dims[i].d[j] <= r->max.d[j];
            mica__dims_text(&input_dims[i], got, sizeof got);
        }
        if (!ok) {
            mica__range_text(e, k, i, range, sizeof range);
            snprintf(why, len, "input '%s' has %s%s, outside profile %d's %s",
                     e->tensors[e->input_index[i]].name,
                     r->nb_values ? "" : "shape ", got, (int)k, range);
            return 0;
        }
    }
    return 1;
}
