/*
 * core/formats.c - memory formats (mica_format_t): which tensors lie in
 * channels last (NHWC, NDHWC) rather than linear, negotiated with each
 * layer through supports_format, as TensorRT chooses its formats.
 *
 * Once the network is built (in float16 where it was asked for), the
 * layers are walked in execution order.  A layer is asked about a
 * channels-last format only when its implementation was built against
 * headers that have them (its ops table reaches the members appended
 * with them: mica/types.h), it runs on the device alone, outside loops
 * and conditionals, as an ordinary layer.  It prefers channels last when
 * an input it reads as data already is (so that no reorder is needed),
 * or when it has a 4-D or 5-D float16 tensor (where channels-last kernels
 * do best), or a float32 one where its device's table entry names its
 * implementation (cl_float32: the CPU's "onednn", whose convolutions and
 * pooling run NHWC as it is, other layouts only through reorders; for
 * that reason alone its inputs are reordered into channels last rather
 * than every tensor left linear).  Then each of its tensors, inputs
 * first, takes the first
 * format its implementation accepts, given the formats before it: an
 * input its current format, else the other; an output the format a
 * later layer would read it in (the one asked for, for a network
 * output), else the other, whether the layer prefers channels last or
 * not (one that accepts making an output in channels last from linear
 * inputs does the reorder's work itself, in the same pass).  Every implementation supports
 * linear, so linear is always left.
 *
 * Where the format a layer reads differs from the one its input was made
 * in, an Identity reorder is inserted ("reorder:t@hwc", one per tensor
 * and format, shared by every reader).  A tensor whose two layouts are
 * the same bytes (one channel, or one spatial position: a per-channel
 * constant [1, C, 1, 1], a global pooling's output) is made in channels
 * last wherever a later layer reads it so and its producer can, so that
 * it needs no reorder.  The network is then rewritten and
 * built again, every layer told its formats (mica__net_layer_t.formats).
 * Network inputs and outputs are linear unless mica_network_set_format
 * asks otherwise (a network output's producer must make it in that
 * format).  Tensors read on the host (shape tensors) stay linear.
 */
#include <config.h>

#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIN MICA_FORMAT_LINEAR

static const char *const names[] = {"linear", "hwc", "dhwc"};

/* The channels-last format of a tensor of rank r, LIN if none. */
static uint32_t channels_last(int32_t r)
{
    return r == 4 ? MICA_FORMAT_HWC : r == 5 ? MICA_FORMAT_DHWC : LIN;
}

/* Whether an implementation knows formats other than linear. */
static int aware(const mica_layer_ops_t *ops)
{
    return ops->struct_size > offsetof(mica_layer_ops_t, set_tactic);
}

/* Whether tensor t may be in channels last at all. */
static int eligible(const mica__tensor_t *t)
{
    return t->need_e && !t->need_s && !t->is_shape_input &&
           !t->is_shape_output && channels_last(t->shape.nb_dims) != LIN;
}

typedef struct plan {
    const mica_engine_t *e;
    const mica_network_t *net;
    uint32_t *fmt;           /* per tensor: the format it is made in */
    uint32_t *want;          /* per tensor: a network output's format */
    uint32_t *io;            /* per layer, per input then output */
    int32_t *first;          /* per layer: index into io */
    uint8_t *reorder;        /* per tensor and format: a reorder to it */
    int32_t changed;         /* tensors or reads not linear */
} plan_t;

/* Whether layer s may be asked about formats at all (see the file's
 * comment). */
static int negotiable(const mica__layer_t *l)
{
    return aware(l->instance->ops) && l->run_device && !l->run_host &&
           l->construct < 0 && l->info.role == MICA_ROLE_NONE &&
           l->nb_inputs + l->nb_outputs <= 128;
}

/* Whether a layer after step s that reads tensor t as data takes it in
 * channels last (asked with its other tensors linear): a reason to make
 * t so. */
static int read_in_cl(const mica_engine_t *e, int32_t s, int32_t t)
{
    mica_tensor_desc_t io[128];
    int32_t r, i, j;

    for (r = s + 1; r < e->nb_layers; r++) {
        const mica__layer_t *l = &e->layers[r];
        int32_t n = l->nb_inputs + l->nb_outputs;
        for (i = 0; i < l->nb_inputs; i++) {
            if (l->inputs[i] != t || l->input_kinds[i] != MICA_INPUT_DATA ||
                !negotiable(l))
                continue;
            memset(io, 0, sizeof io);
            for (j = 0; j < n; j++) {
                int32_t u = j < l->nb_inputs ? l->inputs[j]
                                             : l->outputs[j - l->nb_inputs];
                io[j].scale = 1.0f;
                io[j].dtype = u >= 0 ? e->tensors[u].dtype : MICA_FLOAT32;
                if (u >= 0)
                    io[j].dims = e->tensors[u].dims;
            }
            io[i].format = (mica_format_t)channels_last(
                e->tensors[t].shape.nb_dims);
            if (l->instance->ops->supports_format(l->instance, i, io,
                                                  l->nb_inputs, l->nb_outputs))
                return 1;
            /* or with its other tensors in channels last too (a layer
             * that takes one input as its output is, as a residual) */
            for (j = 0; j < n; j++) {
                int32_t u = j < l->nb_inputs ? l->inputs[j]
                                             : l->outputs[j - l->nb_inputs];
                if (u >= 0 && eligible(&e->tensors[u]))
                    io[j].format = (mica_format_t)channels_last(
                        e->tensors[u].shape.nb_dims);
            }
            if (l->instance->ops->supports_format(l->instance, i, io,
                                                  l->nb_inputs, l->nb_outputs))
                return 1;
        }
    }
    return 0;
}

/* The formats of layer s's tensors into the plan, its inputs as they are
 * made (cl 0 and 1) or in channels last, reordered where need be (cl 2),
 * its outputs in channels last where they will be read so; or 0 if its
 * implementation takes none of the candidates at some position. */
static int try_mode(plan_t *p, int32_t s, int cl)
{
    const mica_engine_t *e = p->e;
    const mica__layer_t *l = &e->layers[s];
    int32_t i, c, nin = l->nb_inputs, n = nin + l->nb_outputs;
    mica_tensor_desc_t io[128];
    uint32_t *out = p->io + p->first[s];

    memset(io, 0, sizeof io);
    for (i = 0; i < n; i++) {
        int32_t t = i < nin ? l->inputs[i] : l->outputs[i - nin];
        io[i].scale = 1.0f;
        io[i].dtype = t >= 0 ? e->tensors[t].dtype : MICA_FLOAT32;
        if (t >= 0) {
            io[i].dims = e->tensors[t].dims;
            io[i].scale = e->tensors[t].scale;
        }
    }
    for (i = 0; i < n; i++) {
        int32_t t = i < nin ? l->inputs[i] : l->outputs[i - nin];
        uint32_t cand[2], other;
        int32_t nc = 2;
        if (t < 0) {
            out[i] = LIN;
            continue;
        }
        other = channels_last(e->tensors[t].shape.nb_dims);
        if (!eligible(&e->tensors[t]) ||
            (i < nin && l->input_kinds[i] != MICA_INPUT_DATA)) {
            cand[0] = LIN;
            nc = 1;
        } else if (i < nin && cl == 2) { /* channels last, reordered */
            cand[0] = other;
            cand[1] = LIN;
        } else if (i < nin) {     /* as it is made, else the other */
            cand[0] = p->fmt[t];
            cand[1] = cand[0] == LIN ? other : LIN;
        } else if (e->tensors[t].is_output) { /* as it is asked for */
            cand[0] = p->want[t];
            nc = 1;
        } else if (read_in_cl(e, s, t)) {
            /* made as it will be read, whatever the layer prefers: a
             * layer that accepts making it so (a tensor whose two
             * layouts are the same bytes, a Shuffle that writes any
             * format as cheaply) saves the reorder after it */
            cand[0] = other;
            cand[1] = LIN;
        } else {     /* nothing would read it in channels last */
            cand[0] = LIN;
            cand[1] = other;
        }
        for (c = 0; c < nc; c++) {
            io[i].format = (mica_format_t)cand[c];
            if (l->instance->ops->supports_format(l->instance, i, io, nin,
                                                  l->nb_outputs))
                break;
        }
        if (c == nc)
            return 0;
        out[i] = cand[c];
    }
    return 1;
}

/* Whether layer s prefers channels last (see the file's comment): 1 for
 * a reason of its tensors, 2 for its device's float32 preference alone
 * (its implementation named in the table's cl_float32), 0 if neither. */
static int prefers(const plan_t *p, int32_t s)
{
    const mica_engine_t *e = p->e;
    const mica__layer_t *l = &e->layers[s];
    const mica__device_desc_t *d = mica__device_desc(e->device);
    int f32 = d && d->cl_float32 && l->info.implementation &&
              strcmp(l->info.implementation, d->cl_float32) == 0;
    int32_t i, dev = 0;
    for (i = 0; i < l->nb_inputs + l->nb_outputs; i++) {
        int32_t t = i < l->nb_inputs ? l->inputs[i]
                                     : l->outputs[i - l->nb_inputs];
        if (t < 0 || !eligible(&e->tensors[t]))
            continue;
        if ((i < l->nb_inputs && p->fmt[t] != LIN) ||
            e->tensors[t].dtype == MICA_FLOAT16 ||
            (i >= l->nb_inputs && e->tensors[t].is_output && p->want[t] != LIN))
            return 1;
        dev |= f32 && e->tensors[t].dtype == MICA_FLOAT32;
    }
    return dev ? 2 : 0;
}

/* Whether the formats of layer s in the plan have channels last. */
static int has_cl(const plan_t *p, int32_t s)
{
    const mica__layer_t *l = &p->e->layers[s];
    int32_t i;
    for (i = 0; i < l->nb_inputs + l->nb_outputs; i++)
        if (p->io[p->first[s] + i] != LIN)
            return 1;
    return 0;
}

/* Decide every layer's formats and what needs a reorder. */
static mica_status_t decide(plan_t *p)
{
    const mica_engine_t *e = p->e;
    int32_t s, i, t;
    char at[512];

    for (i = 0; i < e->nb_inputs + e->nb_outputs; i++) {
        t = i < e->nb_inputs ? e->input_index[i]
                             : e->output_index[i - e->nb_inputs];
        p->want[t] = mica__network_format(p->net, e->tensors[t].name);
        if (p->want[t] != LIN &&
            (p->want[t] != channels_last(e->tensors[t].shape.nb_dims) ||
             !eligible(&e->tensors[t])))
            return mica__fail(e->ctx, MICA_ERR_INVALID, "%s is asked for "
                              "'%s' %s, but it fits only a %s tensor that "
                              "runs on the device", names[p->want[t]],
                              e->tensors[t].name, e->tensors[t].shape_text,
                              p->want[t] == MICA_FORMAT_HWC ? "4-D" : "5-D");
        if (i < e->nb_inputs)
            p->fmt[t] = p->want[t];
    }
    for (i = 0; i < p->net->nb_formats; i++)
        if ((t = mica_engine_find_tensor(e, p->net->format_names[i])) < 0 ||
            (!e->tensors[t].is_input && !e->tensors[t].is_output))
            return mica__fail(e->ctx, MICA_ERR_INVALID, "%sformat of '%s': "
                              "not a network input or output",
                              mica__at(p->net->format_origins[i], at,
                                       sizeof at), p->net->format_names[i]);
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int ok = 0, pref = negotiable(l) ? prefers(p, s) : 0;
        /* The device's preference alone reorders the inputs rather than
         * leave every tensor linear. */
        if (negotiable(l))
            ok = (pref && ((try_mode(p, s, 1) &&
                            (pref == 1 || has_cl(p, s))) ||
                           try_mode(p, s, 2))) ||
                 try_mode(p, s, 0);
        for (i = 0; !ok && i < l->nb_inputs + l->nb_outputs; i++)
            p->io[p->first[s] + i] = LIN;
        for (i = 0; i < l->nb_outputs; i++)
            p->fmt[l->outputs[i]] = p->io[p->first[s] + l->nb_inputs + i];
        for (i = 0; i < l->nb_inputs + l->nb_outputs; i++)
            p->changed += p->io[p->first[s] + i] != LIN;
        for (i = 0; i < l->nb_inputs; i++)
            if ((t = l->inputs[i]) >= 0 &&
                p->io[p->first[s] + i] != p->fmt[t])
                p->reorder[3 * t + p->io[p->first[s] + i]] = 1;
    }
    for (i = 0; i < e->nb_tensors; i++)
        p->changed += p->fmt[i] != LIN;
    for (i = 0; i < e->nb_outputs; i++) {
        const mica__layer_t *l;
        t = e->output_index[i];
        if (p->fmt[t] == p->want[t])
            continue;
        l = &e->layers[e->tensors[t].producer];
        return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED, "%soutput '%s' is "
                          "asked for in %s, but layer '%s' (%s, "
                          "implementation '%s') does not make it so",
                          mica__at(l->origin, at, sizeof at),
                          e->tensors[t].name, names[p->want[t]], l->name,
                          l->info.type, l->info.implementation);
    }
    return MICA_OK;
}

/* "t@hwc": t in another format (NULL: out of memory). */
static char *in_format(const char *t, uint32_t f)
{
    return mica__asprintf("%s@%s", t, names[f]);
}

/* The network layer named `name`. */
static const mica__net_layer_t *net_layer(const mica_network_t *net,
                                          const char *name)
{
    int32_t i;
    for (i = 0; i < net->nb_layers; i++)
        if (strcmp(net->layers[i].name, name) == 0)
            return &net->layers[i];
    return NULL;
}

/* Copy engine layer s into o with its formats, renaming what it reads in
 * another format than it is made in. */
static mica_status_t copy_layer(plan_t *p, mica_network_t *o, int32_t s)
{
    const mica_engine_t *e = p->e;
    const mica__layer_t *l = &e->layers[s];
    const mica__net_layer_t *nl = net_layer(p->net, l->name);
    int32_t i, n = l->nb_inputs + l->nb_outputs;
    char **v = calloc((size_t)n + 1, sizeof *v);
    const uint32_t *f = p->io + p->first[s];
    mica_status_t st = MICA_OK;

    if (!v || !nl) {
        free(v);
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    for (i = 0; i < n && st == MICA_OK; i++) {
        const char *name = i < nl->nb_inputs ? nl->inputs[i]
                                             : nl->outputs[i - nl->nb_inputs];
        if (!name)
            continue;
        v[i] = i < l->nb_inputs && f[i] != p->fmt[l->inputs[i]]
                   ? in_format(name, f[i]) : mica__strdup(name);
        if (!v[i])
            st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if (st == MICA_OK)
        st = mica__rewrite_layer(o, nl, (const char *const *)v, NULL, f,
                                 NULL);
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return st;
}

/* A reorder of tensor `from` (format ff) into `to` (format tf). */
static mica_status_t add_reorder(mica_network_t *o, const char *from,
                                 uint32_t ff, const char *to, uint32_t tf)
{
    uint32_t f[2];
    char *name = mica__asprintf("reorder:%s", to);
    mica_status_t st;

    if (!name)
        return mica__fail(o->ctx, MICA_ERR_NOMEM, "out of host memory");
    f[0] = ff;
    f[1] = tf;
    st = mica__rewrite_identity(o, name, from, to, NULL, f,
                                "a reorder inserted between formats");
    free(name);
    return st;
}

/* Every reorder the plan needs, into o. */
static mica_status_t reorders(plan_t *p, mica_network_t *o)
{
    const mica_engine_t *e = p->e;
    mica_status_t st = MICA_OK;
    int32_t t;
    uint32_t f;

    for (t = 0; t < e->nb_tensors && st == MICA_OK; t++)
        for (f = 0; f < 3 && st == MICA_OK; f++) {
            char *x;
            if (!p->reorder[3 * t + f])
                continue;
            if (!(x = in_format(e->tensors[t].name, f)))
                return mica__fail(e->ctx, MICA_ERR_NOMEM,
                                  "out of host memory");
            st = add_reorder(o, e->tensors[t].name, p->fmt[t], x, f);
            free(x);
        }
    return st;
}

mica_status_t mica__formats_rewrite(mica_network_t *net,
                                    const mica_engine_t *e,
                                    mica_network_t **out)
{
    plan_t p;
    mica_network_t *o = NULL;
    int32_t s, total = 0;
    mica_status_t st;

    *out = NULL;
    memset(&p, 0, sizeof p);
    p.e = e;
    p.net = net;
    for (s = 0; s < e->nb_layers; s++)
        total += e->layers[s].nb_inputs + e->layers[s].nb_outputs;
    p.fmt = calloc((size_t)e->nb_tensors + 1, sizeof *p.fmt);
    p.want = calloc((size_t)e->nb_tensors + 1, sizeof *p.want);
    p.io = calloc((size_t)total + 1, sizeof *p.io);
    p.first = calloc((size_t)e->nb_layers + 1, sizeof *p.first);
    p.reorder = calloc(3 * (size_t)e->nb_tensors + 1, 1);
    if (!p.fmt || !p.want || !p.io || !p.first || !p.reorder) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (s = total = 0; s < e->nb_layers; s++) {
        p.first[s] = total;
        total += e->layers[s].nb_inputs + e->layers[s].nb_outputs;
    }
    if ((st = decide(&p)) != MICA_OK || p.changed == 0)
        goto done;
    if ((st = mica_network_create(net->ctx, &o)) != MICA_OK ||
        (st = mica__rewrite_frame(net, o)) != MICA_OK)
        goto done;
    o->formats_set = 1;
    for (s = 0; s < e->nb_layers && st == MICA_OK; s++)
        st = copy_layer(&p, o, s);
    if (st == MICA_OK)
        st = reorders(&p, o);
done:
    free(p.fmt);
    free(p.want);
    free(p.io);
    free(p.first);
    free(p.reorder);
    if (st != MICA_OK || p.changed == 0) {
        mica_network_destroy(o);
        o = NULL;
    }
    *out = o;
    return st;
}
