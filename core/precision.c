/*
 * core/precision.c - running layers in float16 (TensorRT's precision
 * choice, manifest `precision`, mica build --fp16).
 *
 * The network is first built as written (float32).  Then a layer runs in
 * float16 when float16 is allowed for it (by the build configuration, or
 * by its own `precision: float16`; `precision: float32` keeps it), every
 * float32 execution tensor it reads or writes as data can be float16 for
 * its implementation (supports_format), and it computes no shape tensor.
 * The network is rewritten accordingly and built again: such a layer
 * reads and writes "T@float16" tensors, and Identity casts are inserted
 * where a float32 tensor meets a float16 reader, or a float16 one a
 * float32 reader or a network output (outputs keep their declared type).
 * A float32 Constant read in float16 alone has its values clamped to
 * float16's range (copy_constant).
 */
#include <config.h>

#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(dt) (1u << (unsigned)(dt))

/* Whether tensor t of the float32 engine may change precision. */
static int convertible(const mica__tensor_t *t)
{
    return t->dtype == MICA_FLOAT32 && t->need_e && !t->need_s;
}

/*
 * Whether layer l of engine e takes float16 wherever it has a convertible
 * tensor as data; *any says whether it has one at all.
 */
static int takes_half(const mica_engine_t *e, const mica__layer_t *l, int *any)
{
    mica_tensor_desc_t io[128];
    int32_t i, nin = l->nb_inputs, n = nin + l->nb_outputs;

    *any = 0;
    if (n > 128 || l->run_host)
        return 0;
    memset(io, 0, sizeof io);
    for (i = 0; i < n; i++) {
        int32_t t = i < nin ? l->inputs[i] : l->outputs[i - nin];
        io[i].format = MICA_FORMAT_LINEAR;
        io[i].scale = 1.0f;
        io[i].dtype = t >= 0 ? e->tensors[t].dtype : MICA_FLOAT32;
        if (t >= 0)
            io[i].dims = e->tensors[t].dims;
        if (t >= 0 && convertible(&e->tensors[t]) &&
            (i >= nin || l->input_kinds[i] == MICA_INPUT_DATA)) {
            io[i].dtype = MICA_FLOAT16;
            *any = 1;
        }
    }
    for (i = 0; i < n; i++)
        if ((i >= nin || l->inputs[i] >= 0) &&
            !l->instance->ops->supports_format(l->instance, i, io, nin,
                                               l->nb_outputs))
            return 0;
    return 1;
}

/* The layer of net named `name`. */
static const mica__net_layer_t *net_layer(const mica_network_t *net,
                                          const char *name)
{
    int32_t i;
    for (i = 0; i < net->nb_layers; i++)
        if (strcmp(net->layers[i].name, name) == 0)
            return &net->layers[i];
    return NULL;
}

typedef struct plan {
    const mica_engine_t *e;
    char *half;         /* per engine layer: runs in float16 */
    char *need32;       /* per tensor: a float32 reader or network output */
    char *need16;       /* per tensor: a float16 reader */
    char *made16;       /* per tensor: produced in float16 */
} plan_t;

static char *half_name(const char *t)
{
    return mica__asprintf("%s@float16", t);
}

/* Add Identity `name` casting `from` to `to` (dtype `dt`). */
static mica_status_t add_cast(mica_network_t *out, const char *from,
                              const char *to, const char *dt)
{
    char *name = mica__asprintf("cast:%s", to);
    mica_status_t st;

    if (!name)
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    st = mica__rewrite_identity(out, name, from, to, dt, NULL,
                                "a cast inserted for float16");
    free(name);
    return st;
}

/* Copy network layer nl into out, its tensors renamed as the plan says;
 * with its own fields, or `fields` where not NULL, and `note` for inspect
 * (NULL: "runs in float16" where half, else its own). */
static mica_status_t copy_layer(const plan_t *p, mica_network_t *out,
                                const mica__net_layer_t *nl,
                                const mica__layer_t *l, int half,
                                const mica_fields_t *fields, const char *note)
{
    const mica_engine_t *e = p->e;
    char **names = calloc((size_t)(nl->nb_inputs + nl->nb_outputs + 1),
                          sizeof *names);
    int32_t i;
    mica_status_t st = MICA_OK;

    if (!names)
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < nl->nb_inputs + nl->nb_outputs && st == MICA_OK; i++) {
        int32_t t = i < nl->nb_inputs ? l->inputs[i]
                                      : l->outputs[i - nl->nb_inputs];
        const char *orig = i < nl->nb_inputs ? nl->inputs[i]
                                             : nl->outputs[i - nl->nb_inputs];
        int data = i >= nl->nb_inputs || l->input_kinds[i] == MICA_INPUT_DATA;
        if (!orig)
            continue;
        names[i] = half && t >= 0 && data && convertible(&e->tensors[t])
                       ? half_name(orig) : mica__strdup(orig);
        if (!names[i])
            st = mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if (st == MICA_OK)
        st = mica__rewrite_layer(out, nl, (const char *const *)names, fields,
                                 NULL, note ? note
                                            : half ? "runs in float16" : NULL);
    for (i = 0; i < nl->nb_inputs + nl->nb_outputs; i++)
        free(names[i]);
    free(names);
    return st;
}

/*
 * A float32 Constant read in float16 alone: copied with its finite values
 * beyond float16's range (65504) clamped to it, as TensorRT clamps
 * weights it converts to FP16, so that a mask such as (1 - m) * -3.4e38
 * does not become 0 * -inf = NaN.  Other layers: copy_layer as they are.
 */
static mica_status_t copy_constant(const plan_t *p, mica_network_t *out,
                                   const mica__net_layer_t *nl,
                                   const mica__layer_t *l)
{
    const mica_fields_t *v = &nl->fields.view;
    mica_field_t *f = NULL;
    mica_weights_t w;
    float *vals = NULL;
    int32_t t = l->nb_outputs == 1 ? l->outputs[0] : -1, i, k = -1;
    int64_t j, over = 0;
    mica_fields_t fields;
    mica_status_t st;

    if (t < 0 || strcmp(nl->type, "Constant") || (nl->ns && *nl->ns)
        || !convertible(&p->e->tensors[t]) || !p->need16[t] || p->need32[t])
        return copy_layer(p, out, nl, l, 0, NULL, NULL);
    for (i = 0; i < v->nb_fields; i++)
        if (v->fields[i].type == MICA_FIELD_WEIGHTS
            && v->fields[i].count == 1)
            k = i;
    if (k < 0)
        return copy_layer(p, out, nl, l, 0, NULL, NULL);
    w = *(const mica_weights_t *)v->fields[k].data;
    for (j = 0; w.dtype == MICA_FLOAT32 && j < w.count; j++) {
        float x = ((const float *)w.values)[j];
        over += isfinite(x) && fabsf(x) > 65504.0f;
    }
    if (!over)
        return copy_layer(p, out, nl, l, 0, NULL, NULL);
    vals = malloc((size_t)w.count * sizeof *vals);
    f = malloc((size_t)v->nb_fields * sizeof *f);
    if (!vals || !f) {
        free(vals);
        free(f);
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    for (j = 0; j < w.count; j++) {
        float x = ((const float *)w.values)[j];
        vals[j] = !isfinite(x) ? x : x > 65504.0f ? 65504.0f
                  : x < -65504.0f ? -65504.0f : x;
    }
    memcpy(f, v->fields, (size_t)v->nb_fields * sizeof *f);
    w.values = vals;
    f[k].data = &w;
    fields.nb_fields = v->nb_fields;
    fields.fields = f;
    st = copy_layer(p, out, nl, l, 0, &fields,
                    "float32 weights clamped to float16's range for its "
                    "float16 readers");
    free(vals);
    free(f);
    return st;
}

/* Decide which layers run in float16; fills p->half. */
static mica_status_t decide(plan_t *p, const mica_network_t *net,
                            uint32_t allowed, int32_t *count)
{
    const mica_engine_t *e = p->e;
    int32_t s, i;
    char at[512];

    *count = 0;
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica__net_layer_t *nl = net_layer(net, l->name);
        int want = nl->precision ? nl->precision - 1 == MICA_FLOAT16
                                 : (allowed & BIT(MICA_FLOAT16)) != 0;
        int any, ok = want && takes_half(e, l, &any) && any;
        if (nl->precision - 1 == MICA_FLOAT16 && !ok)
            return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED,
                              "%slayer '%s' (%s): precision float16 is asked "
                              "for, but implementation '%s' does not run it "
                              "in float16", mica__at(nl->origin, at, sizeof at),
                              nl->name, nl->type, l->info.implementation);
        p->half[s] = (char)ok;
        *count += ok;
    }
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        for (i = 0; i < l->nb_inputs; i++) {
            int32_t t = l->inputs[i];
            if (t < 0 || !convertible(&e->tensors[t]))
                continue;
            if (p->half[s] && l->input_kinds[i] == MICA_INPUT_DATA)
                p->need16[t] = 1;
            else
                p->need32[t] = 1;
        }
        for (i = 0; i < l->nb_outputs; i++)
            p->made16[l->outputs[i]] = p->half[s];
    }
    for (i = 0; i < e->nb_outputs; i++)
        p->need32[e->output_index[i]] = 1;
    return MICA_OK;
}

mica_status_t mica__precision_rewrite(mica_network_t *net,
                                      const mica_engine_t *e,
                                      uint32_t allowed, mica_network_t **out)
{
    plan_t p;
    mica_network_t *o = NULL;
    int32_t s, t, count = 0;
    mica_status_t st;

    *out = NULL;
    memset(&p, 0, sizeof p);
    p.e = e;
    p.half = calloc((size_t)e->nb_layers + 1, 1);
    p.need32 = calloc((size_t)e->nb_tensors + 1, 1);
    p.need16 = calloc((size_t)e->nb_tensors + 1, 1);
    p.made16 = calloc((size_t)e->nb_tensors + 1, 1);
    if (!p.half || !p.need32 || !p.need16 || !p.made16) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    if ((st = decide(&p, net, allowed, &count)) != MICA_OK || count == 0)
        goto done;
    if ((st = mica_network_create(net->ctx, &o)) != MICA_OK ||
        (st = mica__rewrite_frame(net, o)) != MICA_OK)
        goto done;
    for (s = 0; s < e->nb_layers && st == MICA_OK; s++)
        st = p.half[s] ? copy_layer(&p, o, net_layer(net, e->layers[s].name),
                                    &e->layers[s], 1, NULL, NULL)
                       : copy_constant(&p, o,
                                       net_layer(net, e->layers[s].name),
                                       &e->layers[s]);
    /* The casts where the two precisions of a tensor meet. */
    for (t = 0; t < e->nb_tensors && st == MICA_OK; t++) {
        char *h;
        if (!convertible(&e->tensors[t]) ||
            !(p.made16[t] ? p.need32[t] : p.need16[t]))
            continue;
        if (!(h = half_name(e->tensors[t].name))) {
            st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
            break;
        }
        st = p.made16[t] ? add_cast(o, h, e->tensors[t].name, "float32")
                         : add_cast(o, e->tensors[t].name, h, "float16");
        free(h);
    }
done:
    free(p.half);
    free(p.need32);
    free(p.need16);
    free(p.made16);
    if (st != MICA_OK || count == 0) {
        mica_network_destroy(o);
        o = NULL;
    }
    *out = o;
    return st;
}
