/*
 * core/infer_layer.c - one layer at build time, in execution order: its
 * output types and the format combination, its output shapes as
 * expressions (and the values of shape tensors it computes), an
 * Assertion checked where it can be, and, when its implementation
 * refuses the types, the next one that takes them (core/infer.c says
 * what each tensor is).
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values of shape tensor t (output `index` of layer `step`). */
static mica_status_t infer_values(mica__build_t *b, int32_t step,
                                  int32_t index, mica__tensor_t *t,
                                  const mica_shape_expr_t *in, int32_t nin)
{
    mica_engine_t *e = b->e;
    const mica_layer_ops_t *ops = e->layers[step].instance->ops;
    int32_t j, n = (int32_t)mica_dims_volume(&t->dims);
    char name[300], meaning[300];
    mica_error_t err;

    t->values = calloc((size_t)(n + 1), sizeof *t->values);
    if (!t->values)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    mica__error_clear(&err);
    if (ops->output_values &&
        ops->output_values(e->layers[step].instance, index, in, nin, e->eb,
                           t->values, n, &err) == MICA_OK) {
        for (j = 0; j < n && t->values[j]; j++)
            ;
        if (j == n)
            goto done;
    }
    t->first_symbol = e->nb_symbols;
    for (j = 0; j < n; j++) {
        mica__value_name(t->name, j, t->dims.nb_dims, name, sizeof name);
        snprintf(meaning, sizeof meaning, "value %d of %s, computed at run "
                 "time", (int)j, t->name);
        t->values[j] = mica__add_symbol(b, MICA__SYM_COMPUTED, -1,
                                  (int32_t)(t - e->tensors), j, name, meaning);
        if (!t->values[j])
            return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
done:
    t->shape.values = t->values;
    t->shape.nb_values = n;
    return MICA_OK;
}

/* The layer asking for data-dependent sizes (mica_host_t's expr_size). */
typedef struct sizer {
    mica__build_t *b;
    int32_t step;
} sizer_t;

/* The symbol of output `out`'s value, a data-dependent size of layer
 * sz->step bounded by `upper` (made the first time it is asked for). */
static const mica_expr_t *make_size(void *user, int32_t out,
                                    const mica_expr_t *upper)
{
    sizer_t *sz = user;
    mica_engine_t *e = sz->b->e;
    const mica__layer_t *l = &e->layers[sz->step];
    mica__expr_node_t bound;
    char meaning[600], text[256];
    int32_t t, k;

    if (out < 0 || out >= l->nb_outputs)
        return NULL;
    t = l->outputs[out];
    for (k = 0; k < e->nb_symbols; k++)
        if (e->symbols[k].kind == MICA__SYM_SIZE && e->symbols[k].tensor == t)
            break;
    if (k == e->nb_symbols) {
        snprintf(meaning, sizeof meaning, "the value of %s, read once layer "
                 "'%s' has run (at most %s)", e->tensors[t].name, l->name,
                 mica__expr_print(upper, text, sizeof text));
        if (!mica__add_symbol(sz->b, MICA__SYM_SIZE, -1, t, 0,
                              e->tensors[t].name, meaning))
            return NULL;
    }
    e->symbols[k].upper = upper;
    mica__expr_inspect(upper, &bound);
    return mica__expr_symbol_range(e->eb, k, e->symbols[k].name, 0,
                                   bound.hi > 0 ? bound.hi : 0);
}

/* Checks of an Assertion whose condition is known at build time. */
static mica_status_t check_assertion(mica__build_t *b, int32_t step)
{
    const mica__layer_t *l = &b->e->layers[step];
    const mica__tensor_t *t;
    const mica_field_t *msg;
    char at[512];
    int32_t j;

    if (l->info.role != MICA_ROLE_ASSERTION || l->nb_inputs < 1 ||
        l->inputs[0] < 0)
        return MICA_OK;
    t = &b->e->tensors[l->inputs[0]];
    for (j = 0; j < t->shape.nb_values; j++)
        if (!mica__expr_is_constant(t->shape.values[j]))
            return MICA_OK;
    for (j = 0; j < t->shape.nb_values; j++)
        if (mica__expr_constant_value(t->shape.values[j]) == 0) {
            msg = l->params ? mica_fields_find(l->params, "message") : NULL;
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (Assertion): %s (element %d of "
                              "'%s' is false at build time)",
                              mica__at(l->origin, at, sizeof at), l->name,
                              msg && msg->type == MICA_FIELD_STRING && msg->count
                                  ? ((const char *const *)msg->data)[0]
                                  : "assertion failed",
                              (int)j, t->name);
        }
    return MICA_OK;
}

/*
 * The size of output t of layer nl, its dimensions known at build time
 * (a runtime one counted as 1): at most the largest tensor, so that the
 * layers that read it multiply its known dimensions without overflow.
 * Fails with one line ("FILE:LINE: layer 'l': output 'y': shape [...]
 * has more than 2^63 elements").
 */
static mica_status_t check_size(mica__build_t *b, const mica__net_layer_t *nl,
                                const mica__tensor_t *t)
{
    mica_dims_t d = t->dims;
    char at[512], what[1024];
    int64_t bytes;
    int32_t j, runtime = 0;

    for (j = 0; j < d.nb_dims; j++)
        if (!mica__expr_is_constant(t->shape.d[j])) {
            d.d[j] = 1;
            runtime = 1;
        }
    if (runtime)
        snprintf(what, sizeof what, "%slayer '%s': output '%s' of shape %s "
                 "(its runtime dimensions counted as 1)",
                 mica__at(nl->origin, at, sizeof at), nl->name, t->name,
                 t->shape_text);
    else
        snprintf(what, sizeof what, "%slayer '%s': output '%s'",
                 mica__at(nl->origin, at, sizeof at), nl->name, t->name);
    return mica__tensor_bytes(b->ctx, what, &d, t->dtype, &bytes);
}

/*
 * Types, shapes and the format check of layer `step` with its current
 * instance.  A format the implementation refuses is MICA_ERR_UNSUPPORTED,
 * so that the caller can try another implementation.
 */
static mica_status_t infer_once(mica__build_t *b, int32_t step)
{
    mica_engine_t *e = b->e;
    mica__layer_t *l = &e->layers[step];
    const mica__net_layer_t *nl = mica__net_layer(b, step);
    const mica_layer_ops_t *ops = l->instance->ops;
    mica_dtype_t in_types[64], out_types[64];
    mica_shape_expr_t in_shapes[64];
    mica_tensor_desc_t io[128];
    mica_error_t err;
    char at[512];
    int32_t i, nin = l->nb_inputs, nout = l->nb_outputs;

    mica__at(nl->origin, at, sizeof at);
    if (nin > 64 || nout > 64)
        return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                          "%slayer '%s': more than 64 inputs or outputs", at,
                          nl->name);
    memset(in_shapes, 0, sizeof in_shapes);
    for (i = 0; i < nin; i++) {
        /* A back edge is not known yet: the layer sees its initial value
         * there (mica__control_check compares the two afterwards). */
        int32_t ti = mica__back_edge(l, i) ? l->inputs[0] : l->inputs[i];
        const mica__tensor_t *t = ti >= 0 ? &e->tensors[ti] : NULL;
        in_types[i] = t ? t->dtype : MICA_FLOAT32;
        if (t)
            in_shapes[i] = t->shape;
        else
            in_shapes[i].nb_dims = -1; /* an optional input left out */
    }
    mica__error_clear(&err);
    if (ops->output_dtypes(l->instance, in_types, nin, out_types, nout, &err) !=
        MICA_OK)
        return mica__layer_fail(b, step, &err, "output types rejected");
    /* Formats: those a rewritten network's layers name (core/formats.c),
     * else linear; a tensor's is its producer's, or its input's. */
    for (i = 0; i < nin + nout; i++) {
        int32_t t = i < nin ? l->inputs[i] : l->outputs[i - nin];
        uint32_t f = nl->formats ? nl->formats[i] : MICA_FORMAT_LINEAR;
        if (t < 0)
            continue;
        if (i >= nin)
            e->tensors[t].format = f;
        else if (!mica__back_edge(l, i) && e->tensors[t].format != f)
            return mica__fail(b->ctx, MICA_ERR_INTERNAL, "%slayer '%s': "
                              "input '%s' is in format %u, the layer reads "
                              "%u", at, nl->name, e->tensors[t].name,
                              (unsigned)e->tensors[t].format, (unsigned)f);
    }
    for (i = 0; i < nout; i++) {
        mica__tensor_t *t = &e->tensors[l->outputs[i]];
        sizer_t sz = {b, step};
        mica_status_t st;
        t->dtype = out_types[i];
        t->first_symbol = -1;
        mica__error_clear(&err);
        mica__expr_set_sizer(e->eb, make_size, &sz);
        st = ops->output_dims(l->instance, i, in_shapes, nin, e->eb,
                              &t->shape, &err);
        mica__expr_set_sizer(e->eb, NULL, NULL);
        if (st != MICA_OK)
            return mica__layer_fail(b, step, &err, "output shape rejected");
        t->shape.values = NULL;
        t->shape.nb_values = 0;
        if (t->shape.nb_dims < 0 || t->shape.nb_dims > MICA_MAX_DIMS)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): output %d has rank %d", at,
                              nl->name, nl->type, (int)i,
                              (int)t->shape.nb_dims);
        if (mica__describe_shape(b, t) != MICA_OK)
            return MICA_ERR_NOMEM;
        if (check_size(b, nl, t) != MICA_OK)
            return MICA_ERR_INVALID;
        if (t->is_shape_output && t->dtype != MICA_INT32)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s': '%s' is an output for shapes, so "
                              "it must be int32, but it is %s", at, nl->name,
                              t->name, mica_dtype_name(t->dtype));
        if (!t->need_s)
            continue;
        if (t->shape.nb_dims > 1 ||
            (t->shape.nb_dims == 1 && t->dims.d[0] < 0))
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): '%s' is used as a shape "
                              "tensor, but its shape %s is not a build-time "
                              "constant of rank 0 or 1", at, nl->name,
                              nl->type, t->name, t->shape_text);
        if (t->shape.nb_dims == 1 && t->dims.d[0] > MICA__MAX_SHAPE_VALUES)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): '%s' is used as a shape "
                              "tensor, but its %lld values are more than "
                              "the %d a shape tensor may have", at, nl->name,
                              nl->type, t->name, (long long)t->dims.d[0],
                              MICA__MAX_SHAPE_VALUES);
        if ((t->dtype == MICA_INT32 || t->dtype == MICA_INT64 ||
             t->dtype == MICA_BOOL || t->dtype == MICA_INT8 ||
             t->dtype == MICA_UINT8) &&
            infer_values(b, step, i, t, in_shapes, nin) != MICA_OK)
            return MICA_ERR_NOMEM;
    }
    memset(io, 0, sizeof io);
    for (i = 0; i < nin + nout; i++) {
        int32_t t = i < nin ? (mica__back_edge(l, i) ? l->inputs[0]
                                                      : l->inputs[i])
                            : l->outputs[i - nin];
        io[i].format = t >= 0 ? (mica_format_t)e->tensors[t].format
                              : MICA_FORMAT_LINEAR;
        io[i].scale = 1.0f;
        io[i].dtype = t >= 0 ? e->tensors[t].dtype : MICA_FLOAT32;
        if (t >= 0) {
            io[i].dims = e->tensors[t].dims;
            io[i].scale = e->tensors[t].scale;
        }
    }
    for (i = 0; i < nin + nout; i++) {
        const mica__tensor_t *t;
        if (i < nin && l->inputs[i] < 0)
            continue;
        if (ops->supports_format(l->instance, i, io, nin, nout))
            continue;
        t = &e->tensors[i < nin ? l->inputs[i] : l->outputs[i - nin]];
        return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                          "%slayer '%s' (%s): %s %d ('%s') of type %s%s is "
                          "not supported by implementation '%s'%s", at,
                          nl->name, nl->type, i < nin ? "input" : "output",
                          (int)(i < nin ? i : i - nin), t->name,
                          mica_dtype_name(t->dtype),
                          t->format == MICA_FORMAT_HWC    ? " (hwc)"
                          : t->format == MICA_FORMAT_DHWC ? " (dhwc)"
                                                          : "",
                          l->info.implementation,
                          i < nin ? "" : " (with its inputs' types)");
    }
    return check_assertion(b, step);
}

/* Order candidates: highest priority first, then by implementation name. */
static int by_priority(const void *a, const void *b)
{
    const mica_creator_info_t *x = a, *y = b;
    if (x->priority != y->priority)
        return y->priority - x->priority;
    return strcmp(x->implementation, y->implementation);
}

mica_creator_info_t *mica__alternatives(mica__build_t *b,
                                        const mica__layer_t *l, int32_t *n)
{
    int32_t i, count = mica_registry_count(b->ctx);
    mica_creator_info_t *v = calloc((size_t)count + 1, sizeof *v);
    uint32_t dev = b->validate_only ? 0 : b->e->device;

    *n = 0;
    for (i = 0; v && i < count; i++) {
        mica_creator_info_t c = {.struct_size = sizeof(mica_creator_info_t)};
        if (mica_registry_get(b->ctx, i, &c) != MICA_OK ||
            strcmp(c.ns, l->info.ns) != 0 || strcmp(c.type, l->info.type) ||
            c.version != l->info.version ||
            strcmp(c.implementation, l->info.implementation) == 0 ||
            (dev && !(c.devices & dev)))
            continue;
        v[(*n)++] = c;
    }
    if (v)
        qsort(v, (size_t)*n, sizeof *v, by_priority);
    return v;
}

mica_layer_t *mica__instance_of(mica__build_t *b, int32_t step,
                                const mica_layer_creator_t *c)
{
    const mica__net_layer_t *nl = mica__net_layer(b, step);
    const mica_fields_t *params;
    mica_layer_t *inst;
    mica_error_t err;

    mica__error_clear(&err);
    if (nl->from_state)
        inst = mica__from_state(c, nl, 0, &err);
    else if (mica__net_layer_params(b->net, (mica__net_layer_t *)nl, c,
                                    &params) != MICA_OK)
        return NULL;
    else
        inst = c->create(c, nl->name, params, &err);
    if (inst)
        mica__instance_check(b->ctx, c, nl, &inst,
                             nl->from_state ? "deserialize" : "create");
    return inst;
}

/* Put instance `inst` of creator `c` in place of layer l's instance. */
static void swap_in(mica__layer_t *l, const mica_creator_info_t *c,
                    mica_layer_t *inst)
{
    if (l->host_instance == l->instance)
        l->host_instance = (c->devices & MICA_DEVICE_CPU) ? inst : NULL;
    if (l->instance)
        l->instance->ops->destroy(l->instance);
    l->instance = inst;
    l->info = *c;
}

mica_status_t mica__infer_layer(mica__build_t *b, int32_t step)
{
    mica__layer_t *l = &b->e->layers[step];
    mica_creator_info_t *alt, first = l->info;
    char msg[MICA_ERROR_MAX];
    int32_t i, n;
    mica_status_t st = infer_once(b, step);

    /* Negotiation (supportsFormatCombination): an implementation chosen by
     * priority that refuses these types gives way to the next one. */
    if (st != MICA_ERR_UNSUPPORTED || l->pinned)
        return st;
    snprintf(msg, sizeof msg, "%s", mica_context_error(b->ctx));
    alt = mica__alternatives(b, l, &n);
    for (i = 0; alt && i < n; i++) {
        mica_layer_t *inst = mica__instance_of(b, step, alt[i].creator);
        if (!inst)
            continue;
        swap_in(l, &alt[i], inst);
        if (l->run_host && !l->host_instance)
            continue; /* it would need a CPU twin made earlier */
        st = infer_once(b, step);
        if (st == MICA_OK) {
            free(l->why);
            l->why = mica__asprintf("the highest priority accepting these "
                                    "types ('%s' refused them)",
                                    first.implementation);
            free(alt);
            return l->why ? MICA_OK
                          : mica__fail(b->ctx, MICA_ERR_NOMEM,
                                       "out of host memory");
        }
        if (st != MICA_ERR_UNSUPPORTED) {
            free(alt);
            return st;
        }
    }
    free(alt);
    return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED, "%s%s", msg,
                      n ? " (nor does any other implementation)" : "");
}
