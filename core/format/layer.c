/*
 * core/format/layer.c - one layer's record in an engine file, in every
 * format (mica__saved_layer_t):
 *
 *   name, origin, ns, type, i32 version, implementation, u32 flags
 *   (MICA__SAVED_*; formats 1 and 2: bit 0 only), why it was chosen,
 *   formats 2: the loop and the conditional of a boundary layer ("" if
 *   none); format 3: i32 construct, i32 branch, i32 tactic (0: none),
 *   u32 nb_in, then per input: formats 1, 2: its tensor's name ("" for
 *   an omitted input); format 3: i32 tensor (-1 omitted), u32 kind,
 *   u32 nb_out, then per output: formats 1, 2: name; format 3: i32 tensor,
 *   state, host implementation ("" if none), host state (empty if none).
 */
#include <config.h>

#include "format.h"
#include "graph.h"

#include <stdlib.h>
#include <string.h>

/* The most inputs or outputs a layer may have (the builder's limit). */
#define MAX_IO 64

void mica__saved_layer_free(mica__saved_layer_t *s)
{
    int32_t i;
    free(s->name);
    free(s->origin);
    free(s->ns);
    free(s->type);
    free(s->implementation);
    free(s->why);
    free(s->loop);
    free(s->conditional);
    free(s->host_impl);
    for (i = 0; s->input_names && i < s->nb_inputs; i++)
        free(s->input_names[i]);
    for (i = 0; s->output_names && i < s->nb_outputs; i++)
        free(s->output_names[i]);
    free(s->input_names);
    free(s->output_names);
    free(s->inputs);
    free(s->input_kinds);
    free(s->outputs);
    memset(s, 0, sizeof *s);
}

/* Formats 1 and 2: n names ("" read as NULL where `omit`). */
static char **read_names(mica__in_t *r, int32_t n, int omit)
{
    char **v = calloc((size_t)n + 1, sizeof *v);
    int32_t i;

    for (i = 0; v && i < n && !r->bad; i++) {
        if (!(v[i] = mica__in_str(r)))
            r->bad = 1;
        else if (omit && !v[i][0]) {
            free(v[i]);
            v[i] = NULL;
        }
    }
    if (!v)
        r->bad = 1;
    return v;
}

/* Format 3: a layer's tensors (and input kinds). */
static void read_tensors(mica__in_t *r, mica__saved_layer_t *s,
                         int32_t nb_tensors, int inputs)
{
    int32_t i, n = inputs ? s->nb_inputs : s->nb_outputs;
    int32_t *v = calloc((size_t)n + 1, sizeof *v);

    if (!v) {
        r->bad = 1;
        return;
    }
    if (inputs) {
        s->inputs = v;
        if (!(s->input_kinds = calloc((size_t)n + 1, sizeof(int32_t)))) {
            r->bad = 1;
            return;
        }
    } else {
        s->outputs = v;
    }
    for (i = 0; i < n && !r->bad; i++) {
        v[i] = mica__in_index(r, nb_tensors, inputs);
        if (inputs) {
            uint32_t k = mica__in_u32(r);
            if (k > MICA_INPUT_DIMS)
                r->bad = 1;
            s->input_kinds[i] = (int32_t)k;
        }
    }
}

mica_status_t mica__saved_layer_read(mica__in_t *r, int32_t nb_tensors,
                                     int32_t nb_constructs,
                                     mica__saved_layer_t *s)
{
    uint32_t version, nb;

    memset(s, 0, sizeof *s);
    s->name = mica__in_str(r);
    s->origin = mica__in_str(r);
    s->ns = mica__in_str(r);
    s->type = mica__in_str(r);
    version = mica__in_u32(r);
    s->implementation = mica__in_str(r);
    s->flags = mica__in_u32(r);
    s->why = mica__in_str(r);
    s->construct = s->branch = -1;
    if (r->format == 2) {
        s->loop = mica__in_str(r);
        s->conditional = mica__in_str(r);
    } else if (r->format >= 3) {
        s->construct = mica__in_index(r, nb_constructs, 1);
        s->branch = mica__in_index(r, 2, 1);
        s->tactic = mica__in_index(r, INT32_MAX, 0);
    }
    if (r->format < 3 && !r->bad && (!s->loop || !s->conditional)) {
        free(s->loop);
        free(s->conditional);
        s->loop = calloc(1, 1);
        s->conditional = calloc(1, 1);
    }
    if (r->bad || !s->name || !s->origin || !s->ns || !s->type ||
        !s->implementation || !s->why || !s->loop != (r->format >= 3) ||
        !s->conditional != (r->format >= 3) || !s->name[0] || !s->type[0] ||
        !s->implementation[0] || version < 1 || version > INT32_MAX ||
        (s->flags & ~(r->format >= 3 ? MICA__SAVED_FLAGS
                                     : MICA__SAVED_FLAGS_V2)))
        return MICA_ERR_INVALID;
    s->version = (int32_t)version;
    nb = mica__in_count(r, 4);
    if (r->bad || nb > MAX_IO)
        return MICA_ERR_INVALID;
    s->nb_inputs = (int32_t)nb;
    if (r->format >= 3)
        read_tensors(r, s, nb_tensors, 1);
    else
        s->input_names = read_names(r, s->nb_inputs, 1);
    nb = mica__in_count(r, 4);
    if (r->bad || nb > MAX_IO)
        return MICA_ERR_INVALID;
    s->nb_outputs = (int32_t)nb;
    if (r->format >= 3)
        read_tensors(r, s, nb_tensors, 0);
    else
        s->output_names = read_names(r, s->nb_outputs, 0);
    s->state = mica__in_state(r, &s->state_size);
    s->host_impl = mica__in_str(r);
    s->host_state = mica__in_state(r, &s->host_state_size);
    if (r->bad || !s->host_impl || (!s->host_impl[0] && s->host_state_size))
        return MICA_ERR_INVALID;
    return MICA_OK;
}

/* ---- writing (format 3) ------------------------------------------------ */

/* A layer instance's state, appended as a state (length, padding). */
static mica_status_t put_state(const mica_engine_t *e, mica__out_t *o,
                               const mica__layer_t *l, mica_layer_t *inst)
{
    size_t size = 0, len_at, at;
    unsigned char *buf;
    uint32_t v;

    if (!inst->ops->serialize || inst->ops->serialize(inst, NULL, &size) != MICA_OK)
        return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED,
                          "layer '%s' (%s, implementation '%s') cannot be "
                          "serialized", l->name, l->info.type,
                          l->info.implementation);
    if (size > UINT32_MAX)
        return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED, "layer '%s': its "
                          "state of %zu bytes is over the 4 GiB an engine "
                          "file holds per layer", l->name, size);
    /* Written in place: room for the length and the state, then the
     * layer fills it and the length is set to what it wrote; an empty
     * state has no padding. */
    mica__out_u32(o, 0);
    len_at = o->len - 4;
    if (size)
        mica__out_pad(o);
    at = o->len;
    mica__out_put(o, NULL, size);
    if (o->failed)
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    buf = o->p + at;
    if (inst->ops->serialize(inst, buf, &size) != MICA_OK ||
        size > o->len - at)
        return mica__fail(e->ctx, MICA_ERR_INTERNAL,
                          "layer '%s': serialize failed", l->name);
    if (!size)
        at = len_at + 4; /* wrote nothing after all: no padding either */
    o->len = at + size;
    v = (uint32_t)size;
    memcpy(o->p + len_at, &v, 4);
    return MICA_OK;
}

mica_status_t mica__saved_layer_write(const mica_engine_t *e,
                                      const struct mica__layer *l,
                                      mica__out_t *o)
{
    int twin = l->host_instance && l->host_instance != l->instance;
    uint32_t flags = (l->layer_pinned ? MICA__SAVED_LAYER_PINNED : 0) |
                     (l->pinned ? MICA__SAVED_PINNED : 0) |
                     (l->run_host ? MICA__SAVED_RUN_HOST : 0) |
                     (l->run_device ? MICA__SAVED_RUN_DEVICE : 0);
    mica_status_t st;
    int32_t i;

    mica__out_str(o, l->name);
    mica__out_str(o, l->origin);
    mica__out_str(o, l->info.ns);
    mica__out_str(o, l->info.type);
    mica__out_i32(o, l->info.version);
    mica__out_str(o, l->info.implementation);
    mica__out_u32(o, flags);
    mica__out_str(o, l->why);
    mica__out_i32(o, l->construct);
    mica__out_i32(o, l->branch);
    mica__out_i32(o, l->tactic);
    mica__out_u32(o, (uint32_t)l->nb_inputs);
    for (i = 0; i < l->nb_inputs; i++) {
        mica__out_i32(o, l->inputs[i]);
        mica__out_u32(o, (uint32_t)l->input_kinds[i]);
    }
    mica__out_u32(o, (uint32_t)l->nb_outputs);
    for (i = 0; i < l->nb_outputs; i++)
        mica__out_i32(o, l->outputs[i]);
    if ((st = put_state(e, o, l, l->instance)) != MICA_OK)
        return st;
    mica__out_str(o, twin ? l->host_info.implementation : "");
    if (twin)
        return put_state(e, o, l, l->host_instance);
    mica__out_u32(o, 0); /* an empty state */
    return MICA_OK;
}
