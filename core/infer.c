/*
 * core/infer.c - what every tensor is: execution tensor, shape tensor or
 * both (TensorRT's E/S rules), its type, and its shape as expressions of
 * the network's runtime dimensions and of values known only at run time.
 *
 * Kinds flow backwards from what is read: network outputs are E, outputs
 * for shapes are S, an input a layer reads as MICA_INPUT_SHAPE is S, and a
 * layer whose output is E (or S) needs its data inputs as E (or S).  A
 * layer with an S output runs in phase 1 on the host; one with an E output
 * runs on the device; a layer with both runs in both phases.
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The range of a runtime dimension (values: 0) or of a shape-input value
 * (values: 1) over every profile; [lo, hi] = [-1, -1] if none gives it.
 */
static void input_range(const mica_network_t *net, int32_t input,
                        int32_t axis, int values, int64_t *lo, int64_t *hi)
{
    int32_t k;
    *lo = *hi = -1;
    for (k = 0; k < net->nb_profiles; k++) {
        const mica__range_t *r;
        int64_t a, z;
        if (net->profiles[k].nb_ranges <= input)
            continue;
        r = &net->profiles[k].ranges[input];
        if (!r->set || (values && axis >= r->nb_values))
            continue;
        a = values ? r->vmin[axis] : r->min.d[axis];
        z = values ? r->vmax[axis] : r->max.d[axis];
        if (*lo == -1 && *hi == -1) {
            *lo = a;
            *hi = z;
        } else {
            *lo = a < *lo ? a : *lo;
            *hi = z > *hi ? z : *hi;
        }
    }
}

const mica_expr_t *mica__add_symbol(mica__build_t *b,
                                    mica__symbol_kind_t kind, int32_t input,
                                    int32_t tensor, int32_t axis,
                                    const char *name, const char *meaning)
{
    mica_engine_t *e = b->e;
    int32_t n = e->nb_symbols;
    mica__symbol_t *sym;

    /* The array doubles at 0, 4, 8, 16...: a shape input may have 65536
     * values, each a symbol, and growing by one each time copied the
     * array quadratically (seconds, gigabytes of copying). */
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        mica__symbol_t *grown = realloc(e->symbols, sizeof *grown *
                                        (size_t)(n ? 2 * n : 4));
        if (!grown)
            return NULL;
        e->symbols = grown;
    }
    sym = &e->symbols[n];
    memset(sym, 0, sizeof *sym);
    sym->kind = kind;
    sym->input = input;
    sym->tensor = tensor;
    sym->axis = axis;
    sym->name = mica__strdup(name);
    sym->meaning = mica__strdup(meaning);
    if (!sym->name || !sym->meaning) {
        free(sym->name);
        free(sym->meaning);
        return NULL;
    }
    e->nb_symbols++;
    if (kind == MICA__SYM_INPUT_DIM || kind == MICA__SYM_INPUT_VALUE) {
        int64_t lo, hi;
        input_range(b->net, input, axis, kind == MICA__SYM_INPUT_VALUE, &lo, &hi);
        if (lo != -1 || hi != -1)
            return mica__expr_symbol_range(e->eb, e->nb_symbols - 1, name, lo,
                                           hi);
        if (kind == MICA__SYM_INPUT_DIM) /* no profile yet: still a size */
            return mica__expr_symbol_range(e->eb, e->nb_symbols - 1, name, 0,
                                           (int64_t)1 << 40);
    }
    return mica__expr_symbol(e->eb, e->nb_symbols - 1, name);
}

/* The name of the n-th runtime dimension: N, M, K, ... then D14, ... */
static void dim_name(int32_t n, char *buf, size_t len)
{
    static const char letters[] = "NMKLPQRTUVWXYZ";
    if (n < (int32_t)(sizeof letters - 1))
        snprintf(buf, len, "%c", letters[n]);
    else
        snprintf(buf, len, "D%d", (int)n);
}

void mica__value_name(const char *tensor, int32_t k, int32_t rank,
                      char *buf, size_t len)
{
    if (rank == 0)
        snprintf(buf, len, "%s", tensor);
    else
        snprintf(buf, len, "%s[%d]", tensor, (int)k);
}

mica_status_t mica__describe_shape(mica__build_t *b, mica__tensor_t *t)
{
    char text[512], d[256];
    size_t pos;
    int32_t i;

    pos = (size_t)snprintf(text, sizeof text, "[");
    t->dims.nb_dims = t->shape.nb_dims;
    for (i = 0; i < t->shape.nb_dims; i++) {
        if (pos < sizeof text)
            pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s%s",
                                    i ? ", " : "",
                                    mica__expr_print(t->shape.d[i], d, sizeof d));
        t->dims.d[i] = mica__expr_is_constant(t->shape.d[i])
                           ? mica__expr_constant_value(t->shape.d[i]) : -1;
    }
    if (pos < sizeof text)
        snprintf(text + pos, sizeof text - pos, "]");
    free(t->shape_text);
    t->shape_text = mica__strdup(text);
    return t->shape_text ? MICA_OK
                         : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
}

mica_status_t mica__infer_inputs(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t i, j, nb_runtime = 0;
    char name[64], meaning[300];

    e->nb_inputs = b->net->nb_inputs;
    e->input_index = calloc((size_t)(e->nb_inputs + 1), sizeof *e->input_index);
    if (!e->input_index)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < b->net->nb_inputs; i++) {
        const mica__net_input_t *in = &b->net->inputs[i];
        mica__tensor_t *t = &e->tensors[i];
        e->input_index[i] = i;
        t->dtype = in->dtype;
        t->format = b->net->formats_set ? mica__network_format(b->net, in->name)
                                        : MICA_FORMAT_LINEAR;
        t->is_input = 1;
        t->is_shape_input = in->is_shape;
        t->producer = -1;
        t->shape.nb_dims = in->dims.nb_dims;
        for (j = 0; j < in->dims.nb_dims; j++) {
            if (in->dims.d[j] >= 0) {
                t->shape.d[j] = mica__expr_constant(e->eb, in->dims.d[j]);
            } else {
                dim_name(nb_runtime++, name, sizeof name);
                snprintf(meaning, sizeof meaning, "%s[%d]", in->name, (int)j);
                t->shape.d[j] = mica__add_symbol(b, MICA__SYM_INPUT_DIM, i, i, j,
                                           name, meaning);
            }
            if (!t->shape.d[j])
                return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
        }
        if (in->is_shape) {
            int32_t n = (int32_t)mica_dims_volume(&in->dims);
            t->values = calloc((size_t)(n + 1), sizeof *t->values);
            if (!t->values)
                return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
            for (j = 0; j < n; j++) {
                mica__value_name(in->name, j, in->dims.nb_dims, name, sizeof name);
                snprintf(meaning, sizeof meaning, "value %d of shape input %s",
                         (int)j, in->name);
                t->values[j] = mica__add_symbol(b, MICA__SYM_INPUT_VALUE, i, i, j,
                                          name, meaning);
                if (!t->values[j])
                    return mica__fail(b->ctx, MICA_ERR_NOMEM,
                                      "out of host memory");
            }
            t->shape.values = t->values;
            t->shape.nb_values = n;
        }
        if (mica__describe_shape(b, t) != MICA_OK)
            return MICA_ERR_NOMEM;
    }
    return MICA_OK;
}

/* The first layer (and its input slot) that reads tensor t as `kind`. */
static int32_t reader(const mica_engine_t *e, int32_t t, int32_t kind,
                      int32_t *slot)
{
    int32_t s, i;
    for (s = 0; s < e->nb_layers; s++)
        for (i = 0; i < e->layers[s].nb_inputs; i++)
            if (e->layers[s].inputs[i] == t &&
                e->layers[s].input_kinds[i] == kind) {
                *slot = i;
                return s;
            }
    return -1;
}

static int mark_needs(mica_engine_t *e);

mica_status_t mica__infer_kinds(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t s, i;

    for (s = 0; s < e->nb_layers; s++) {
        mica__layer_t *l = &e->layers[s];
        const mica_layer_ops_t *ops = l->instance->ops;
        int has = MICA__HAS_OP(ops, input_kind);
        for (i = 0; i < l->nb_inputs; i++) {
            int32_t k = has ? ops->input_kind(l->instance, i, l->nb_inputs)
                            : MICA_INPUT_DATA;
            l->input_kinds[i] = k >= MICA_INPUT_DATA && k <= MICA_INPUT_DIMS
                                    ? k : MICA_INPUT_DATA;
        }
    }
    for (i = 0; i < e->nb_outputs; i++)
        e->tensors[e->output_index[i]].need_e = 1;
    for (i = 0; i < e->nb_shape_outputs; i++)
        e->tensors[e->shape_output_index[i]].need_s = 1;
    /* Consumers come later in execution order, but for a Recurrence's
     * back edge and for what a construct's TripLimit or Condition reads
     * once something inside it runs: backward passes until nothing
     * changes. */
    while (mark_needs(e))
        ;
    /* A layer that runs writes every output, read or not (TopK's values
     * where only its indices are used): each gets memory. */
    for (s = 0; s < e->nb_layers; s++)
        if (e->layers[s].run_device)
            for (i = 0; i < e->layers[s].nb_outputs; i++)
                e->tensors[e->layers[s].outputs[i]].need_e = 1;
    return MICA_OK;
}

/* Whether some layer of construct k other than its TripLimit or
 * Condition runs on the device. */
static int construct_live(const mica_engine_t *e, int32_t k)
{
    int32_t s;
    for (s = e->constructs[k].begin; s < e->constructs[k].end; s++)
        if (e->layers[s].run_device &&
            e->layers[s].info.role != MICA_ROLE_TRIP_LIMIT &&
            e->layers[s].info.role != MICA_ROLE_CONDITION)
            return 1;
    return 0;
}

/* One backward pass of the needs; whether anything changed. */
static int mark_needs(mica_engine_t *e)
{
    int32_t s, i, k;
    int changed = 0;

    for (k = 0; k < e->nb_constructs; k++)
        e->constructs[k].live = construct_live(e, k);
    for (s = e->nb_layers - 1; s >= 0; s--) {
        mica__layer_t *l = &e->layers[s];
        uint32_t role = l->info.role;
        int reads = role == MICA_ROLE_TRIP_LIMIT || role == MICA_ROLE_CONDITION;
        /* A layer with no output is a check, run on the host; a
         * TripLimit or Condition is read on the device when its construct
         * runs at all. */
        int need_s = l->nb_outputs == 0 && !reads;
        int need_e = reads && l->construct >= 0 &&
                     e->constructs[l->construct].live;
        for (i = 0; i < l->nb_outputs; i++) {
            need_s |= e->tensors[l->outputs[i]].need_s;
            need_e |= e->tensors[l->outputs[i]].need_e;
        }
        changed |= l->run_host != need_s || l->run_device != need_e;
        l->run_host = need_s;
        l->run_device = need_e;
        for (i = 0; i < l->nb_inputs; i++) {
            mica__tensor_t *t;
            if (l->inputs[i] < 0)
                continue;
            t = &e->tensors[l->inputs[i]];
            if (need_s || need_e)
                t->need_dims = 1;
            if (l->input_kinds[i] == MICA_INPUT_SHAPE) {
                changed |= (need_s || need_e) && !t->need_s;
                if (need_s || need_e)
                    t->need_s = 1;
            } else if (l->input_kinds[i] == MICA_INPUT_DATA) {
                changed |= (need_e && !t->need_e) || (need_s && !t->need_s);
                t->need_e |= need_e;
                t->need_s |= need_s;
            }
            if (need_e && l->input_kinds[i] == MICA_INPUT_DATA &&
                t->last_use < s)
                t->last_use = s;
        }
    }
    return changed;
}

/*
 * Every network input read as a shape tensor is declared as one.  Checked
 * after types and shapes, so that an output for shapes of the wrong type
 * is reported as such rather than through the inputs it reaches.
 */
mica_status_t mica__infer_check_inputs(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t i, slot;
    char at[512];

    for (i = 0; i < e->nb_inputs; i++) {
        const mica__tensor_t *t = &e->tensors[e->input_index[i]];
        int32_t r;
        if (!t->need_s || t->is_shape_input)
            continue;
        r = reader(e, e->input_index[i], MICA_INPUT_SHAPE, &slot);
        if (r < 0)
            r = reader(e, e->input_index[i], MICA_INPUT_DATA, &slot);
        return mica__fail(b->ctx, MICA_ERR_INVALID,
                          "%sinput '%s' is used as a shape tensor%s%s%s but "
                          "is not declared as one (shape_tensor: true, int32)",
                          mica__at(b->net->inputs[i].origin, at, sizeof at),
                          t->name, r >= 0 ? " by layer '" : "",
                          r >= 0 ? e->layers[r].name : "", r >= 0 ? "'" : "");
    }
    return MICA_OK;
}

mica_status_t mica__infer_host_instances(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t s, i;
    char at[512], msg[MICA_ERROR_MAX];

    for (s = 0; s < e->nb_layers; s++) {
        mica__layer_t *l = &e->layers[s];
        const mica__net_layer_t *nl = mica__net_layer(b, s);
        const mica_fields_t *params;
        mica_error_t err;
        if (!l->run_host)
            continue;
        if (l->info.devices & MICA_DEVICE_CPU) {
            l->host_info = l->info;
            l->host_instance = l->instance;
            continue;
        }
        if (mica_registry_find(b->ctx, l->info.ns, l->info.type,
                               l->info.version,
                               nl->from_state ? nl->host_impl : NULL,
                               MICA_DEVICE_CPU, &l->host_info) != MICA_OK) {
            const char *what = "its check";
            snprintf(msg, sizeof msg, "%s", mica_context_error(b->ctx));
            for (i = 0; i < l->nb_outputs; i++)
                if (e->tensors[l->outputs[i]].need_s)
                    what = e->tensors[l->outputs[i]].name;
            return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                              "%slayer '%s' (%s): shape tensor '%s' must be "
                              "computed on the host, but %s",
                              mica__at(nl->origin, at, sizeof at), nl->name,
                              nl->type, what, msg);
        }
        mica__error_clear(&err);
        if (nl->from_state)
            l->host_instance = mica__from_state(l->host_info.creator, nl, 1,
                                                &err);
        else if (mica__net_layer_params(b->net, (mica__net_layer_t *)nl,
                                        l->host_info.creator,
                                        &params) != MICA_OK)
            return MICA_ERR_INVALID;
        else
            l->host_instance = l->host_info.creator->create(
                l->host_info.creator, nl->name, params, &err);
        if (!l->host_instance)
            return mica__layer_fail(b, s, &err, "create failed");
        if (mica__instance_check(b->ctx, l->host_info.creator, nl,
                                 &l->host_instance,
                                 nl->from_state ? "deserialize" : "create")
            != MICA_OK)
            return MICA_ERR_INVALID;
    }
    return MICA_OK;
}

