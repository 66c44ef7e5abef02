/*
 * core/passes/affine.c - the pass "affine-scale": an ElementWise that
 * multiplies, divides, adds or subtracts a Constant holding one value per
 * channel (or one value) becomes a Scale (TensorRT's IScaleLayer, mode
 * channel or uniform), and a multiply then an add by such Constants one
 * Scale (x * scale + shift): what an ONNX BatchNormalization, or any
 * per-channel affine a front end writes as arithmetic, is in the
 * vocabulary of the fusion rules (a Convolution then a Scale is a
 * FusedConvolution).  docs/passes.md.
 *
 * The Constant c has x's rank, every dimension 1 but at most one, the
 * channel axis a, where it has x's length (fixed by every profile); x is
 * float32 or float16 of rank 3 or more, c float32 or of x's type, and
 * the output has x's shape.  Only where the fusion rules take a Scale:
 * the channel axis is 1 (a batch norm's), or c is one value and x a
 * convolution's output (or a Scale this pass made).  x * c and c * x:
 * scale c; x / c: scale 1 / c (within a rounding of the division); x + c,
 * c + x: shift c; x - c: shift -c; c - x: scale -1, shift c.  A Scale of
 * a scale alone followed (as the one reader of its output, no network
 * output) by one of a shift alone, on the same axis, is one Scale.  A
 * Constant nothing reads any more goes.  Values beyond float16's range
 * (an attention mask's -3.4e38) stay Constants, which a float16 build
 * clamps.
 */
#include <config.h>

#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_SUM = 0, OP_PROD = 1, OP_SUB = 4, OP_DIV = 5 };

/* What a layer became: y = x * scale + shift, per channel of `axis` (-1:
 * uniform), k values each (NULL: that coefficient is absent). */
typedef struct affine {
    const char *x;
    int32_t axis;
    int64_t k;
    mica_dtype_t dtype;        /* of the coefficients */
    const void *scale, *shift;
} affine_t;

typedef struct aff {
    mica__pass_run_t *p;
    const mica_network_t *net;
    mica__pass_graph_t g;
    int32_t *order;
    affine_t **to;             /* per network layer: its Scale, or NULL */
    uint8_t *drop;             /* per network layer */
    int32_t *reads;            /* per network layer (Constants): reads
                                  left */
    mica_network_t *out;       /* keeps what this pass allocates */
    mica_status_t st;
    int64_t scales, merged, constants;
} aff_t;

static mica_status_t nomem(aff_t *a)
{
    return mica__fail(a->p->ctx, MICA_ERR_NOMEM, "out of host memory");
}

/* The weights of a Constant layer making `name`, its layer into *li. */
static const mica_weights_t *constant_of(aff_t *a, const char *name,
                                         int32_t *li)
{
    const mica__net_layer_t *nl;
    const mica_field_t *f;

    *li = mica__pass_producer(&a->g, name, NULL);
    if (*li < 0)
        return NULL;
    nl = &a->net->layers[*li];
    if (strcmp(nl->type, "Constant") || (nl->ns && nl->ns[0]) ||
        nl->from_state || nl->loop || nl->conditional)
        return NULL;
    f = mica_fields_find(&nl->fields.view, "weights");
    return f && f->type == MICA_FIELD_WEIGHTS && f->count == 1 && f->data
               ? (const mica_weights_t *)f->data : NULL;
}

/* Whether c (tensor facts tc) broadcasts over x (tx) as one value per
 * channel of one axis (*axis) or one value (*axis -1), and the output has
 * x's shape. */
static int per_channel(const mica__tensor_t *tx, const mica__tensor_t *tc,
                       int32_t *axis)
{
    int32_t i;
    *axis = -1;
    if (tx->shape.nb_dims != tc->shape.nb_dims || tx->shape.nb_dims < 0)
        return 0;
    for (i = 0; i < tc->shape.nb_dims; i++) {
        int64_t c, x;
        if (!mica__pass_fixed(tc->shape.d[i], &c))
            return 0;
        if (c == 1)
            continue;
        if (*axis >= 0 || !mica__pass_fixed(tx->shape.d[i], &x) || x != c)
            return 0;
        *axis = i;
    }
    return 1;
}

/* A copy of n values of type dt: each v -> -v (neg) or 1 / v (recip),
 * kept by the rewritten network. */
static const void *transformed(aff_t *a, const void *v, int64_t n,
                               mica_dtype_t dt, int recip)
{
    float *out = malloc(sizeof *out * (size_t)(n > 0 ? n : 1));
    int64_t i;

    if (!out) {
        a->st = nomem(a);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        float x = ((const float *)v)[i];
        out[i] = recip ? 1.0f / x : -x;
    }
    (void)dt; /* float32 only (checked) */
    if ((a->st = mica__network_keep(a->out, out)) != MICA_OK)
        return NULL;
    return out;
}

/* n copies of `value` (float32), kept by the rewritten network. */
static const void *filled(aff_t *a, int64_t n, float value)
{
    float *out = malloc(sizeof *out * (size_t)(n > 0 ? n : 1));
    int64_t i;
    if (!out) {
        a->st = nomem(a);
        return NULL;
    }
    for (i = 0; i < n; i++)
        out[i] = value;
    if ((a->st = mica__network_keep(a->out, out)) != MICA_OK)
        return NULL;
    return out;
}

/* Whether `x` is made by a convolution, or by a layer this pass made a
 * Scale of. */
static int after_conv(aff_t *a, const char *x)
{
    int32_t li = mica__pass_producer(&a->g, x, NULL);
    const char *t;
    if (li < 0)
        return 0;
    t = a->net->layers[li].type;
    return a->to[li] || !strcmp(t, "Convolution") ||
           !strcmp(t, "Deconvolution") || !strcmp(t, "FusedConvolution");
}

/* ElementWise network layer li: the affine it is, into *f; 0 if none. */
static int affine_of(aff_t *a, int32_t li, affine_t *f, int32_t *cl)
{
    const mica__net_layer_t *nl = &a->net->layers[li];
    const mica_field_t *opf = mica_fields_find(&nl->fields.view, "op");
    const mica__tensor_t *t0, *t1, *tx, *tc, *ty;
    const mica_weights_t *w;
    int64_t op;
    int32_t c, axis, l0, l1;

    if (nl->nb_inputs != 2 || nl->nb_outputs != 1 || !nl->inputs[0] ||
        !nl->inputs[1] || !opf || opf->type != MICA_FIELD_ENUM)
        return 0;
    op = *(const int64_t *)opf->data;
    if (op != OP_SUM && op != OP_PROD && op != OP_SUB && op != OP_DIV)
        return 0;
    /* which input is the Constant */
    if ((w = constant_of(a, nl->inputs[1], &l1)) != NULL)
        c = 1;
    else if ((w = constant_of(a, nl->inputs[0], &l0)) != NULL && op != OP_DIV)
        c = 0, l1 = l0;
    else
        return 0;
    t0 = mica__pass_tensor(a->p, nl->inputs[0]);
    t1 = mica__pass_tensor(a->p, nl->inputs[1]);
    ty = mica__pass_tensor(a->p, nl->outputs[0]);
    if (!t0 || !t1 || !ty)
        return 0;
    tx = c ? t0 : t1;
    tc = c ? t1 : t0;
    if ((tx->dtype != MICA_FLOAT32 && tx->dtype != MICA_FLOAT16) ||
        (w->dtype != MICA_FLOAT32 && w->dtype != tx->dtype) ||
        ((op == OP_SUB || op == OP_DIV) && w->dtype != MICA_FLOAT32) ||
        ty->dtype != tx->dtype || !per_channel(tx, tc, &axis) ||
        w->count != (axis < 0 ? 1 : w->count) || w->count < 1 ||
        tx->shape.nb_dims < 3)
        return 0;
    /* Where the fusion rules take a Scale: channels on axis 1 (the batch
     * norm's, TensorRT's Scale's), one value after a convolution (or a
     * Scale this pass made); elsewhere (a transformer's last axis, its
     * scalars) the ElementWise stays, for the rules that match those. */
    if (axis != 1 && (axis >= 0 || !after_conv(a, nl->inputs[1 - c])))
        return 0;
    /* Values beyond float16's range stay a Constant's: a float16 build
     * clamps those (core/precision.c), not a Scale's coefficients. */
    if (w->dtype == MICA_FLOAT32) {
        int64_t i;
        for (i = 0; i < w->count; i++) {
            float v = ((const float *)w->values)[i];
            if (v > 65504.0f || v < -65504.0f)
                return 0;
        }
    }
    memset(f, 0, sizeof *f);
    f->x = nl->inputs[1 - c];
    f->axis = axis;
    f->k = w->count;
    f->dtype = w->dtype;
    switch (op) {
    case OP_PROD:
        f->scale = w->values;
        break;
    case OP_DIV:
        f->scale = transformed(a, w->values, w->count, w->dtype, 1);
        break;
    case OP_SUM:
        f->shift = w->values;
        break;
    default: /* OP_SUB */
        if (c) {
            f->shift = transformed(a, w->values, w->count, w->dtype, 0);
        } else {
            f->shift = w->values;
            f->scale = filled(a, w->count, -1.0f);
        }
    }
    *cl = l1;
    return (f->scale || f->shift) && a->st == MICA_OK;
}

static mica_status_t decide(aff_t *a)
{
    int32_t s, li, cl, first;
    affine_t f;

    for (s = 0; s < a->net->nb_layers && a->st == MICA_OK &&
                a->p->st == MICA_OK; s++) {
        const mica__net_layer_t *nl;
        li = a->order[s];
        nl = &a->net->layers[li];
        if (strcmp(nl->type, "ElementWise") || !mica__pass_free(a->p, nl) ||
            nl->loop || nl->conditional || nl->formats ||
            !affine_of(a, li, &f, &cl))
            continue;
        /* a scale alone, then a shift alone on the same axis: one */
        first = mica__pass_producer(&a->g, f.x, NULL);
        if (first >= 0 && a->to[first] && !a->drop[first] && f.shift &&
            !f.scale && a->to[first]->scale && !a->to[first]->shift &&
            a->to[first]->axis == f.axis && a->to[first]->k == f.k &&
            a->to[first]->dtype == f.dtype &&
            mica__pass_reads(&a->g, f.x) == 1 &&
            !mica__pass_is_output(&a->g, f.x)) {
            f.scale = a->to[first]->scale;
            f.x = a->to[first]->x;
            a->drop[first] = 1;
            a->merged++;
        }
        if (!(a->to[li] = malloc(sizeof *a->to[li])))
            return nomem(a);
        *a->to[li] = f;
        a->scales++;
        a->reads[cl]--;
    }
    /* Constants nothing reads any more */
    for (li = 0; li < a->net->nb_layers; li++) {
        const mica__net_layer_t *nl = &a->net->layers[li];
        if (!strcmp(nl->type, "Constant") && a->reads[li] == 0 &&
            !mica__pass_is_output(&a->g, nl->outputs[0]) &&
            mica__pass_reads(&a->g, nl->outputs[0]) > 0) {
            a->drop[li] = 1;
            a->constants++;
        }
    }
    return a->st;
}

/* The Scale of network layer li. */
static mica_status_t put_scale(aff_t *a, int32_t li)
{
    const mica__net_layer_t *nl = &a->net->layers[li];
    const affine_t *f = a->to[li];
    const char *mode = f->axis < 0 ? "uniform" : "channel";
    int64_t axis = f->axis < 0 ? 1 : f->axis;
    mica_weights_t ws, wh;
    mica_field_t fld[4];
    mica_fields_t fields = {0, fld};
    mica_layer_spec_t spec;
    const char *in[1] = {f->x};

    memset(&ws, 0, sizeof ws);
    ws.dtype = f->dtype;
    ws.count = f->k;
    ws.dims.nb_dims = 1;
    ws.dims.d[0] = f->k;
    wh = ws;
    ws.values = f->scale;
    wh.values = f->shift;
    fld[fields.nb_fields++] = (mica_field_t){"mode", MICA_FIELD_STRING, 1,
                                             &mode};
    if (f->axis >= 0)
        fld[fields.nb_fields++] = (mica_field_t){"channel_axis",
                                                 MICA_FIELD_INT, 1, &axis};
    if (f->scale)
        fld[fields.nb_fields++] = (mica_field_t){"scale", MICA_FIELD_WEIGHTS,
                                                 1, &ws};
    if (f->shift)
        fld[fields.nb_fields++] = (mica_field_t){"shift", MICA_FIELD_WEIGHTS,
                                                 1, &wh};
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = nl->name;
    spec.type = "Scale";
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = (const char *const *)nl->outputs;
    spec.origin = nl->origin;
    spec.fields = &fields;
    /* the coefficients live in the networks, which outlive the build */
    if (mica__network_add_borrowed(a->out, &spec) != MICA_OK)
        return MICA_ERR_INVALID;
    a->out->layers[a->out->nb_layers - 1].precision = nl->precision;
    return MICA_OK;
}

mica_status_t mica__pass_affine(mica__pass_run_t *p)
{
    aff_t a;
    mica_status_t st;
    int32_t li, i;

    memset(&a, 0, sizeof a);
    a.p = p;
    a.net = p->net;
    a.to = calloc((size_t)a.net->nb_layers + 1, sizeof *a.to);
    a.drop = calloc((size_t)a.net->nb_layers + 1, 1);
    a.reads = calloc((size_t)a.net->nb_layers + 1, sizeof *a.reads);
    if (!a.to || !a.drop || !a.reads) {
        st = nomem(&a);
        goto done;
    }
    if ((st = mica_network_create(p->ctx, &a.out)) != MICA_OK ||
        (st = mica__pass_graph_make(a.net, &a.g)) != MICA_OK ||
        (st = mica__pass_order(a.net, &a.g, &a.order)) != MICA_OK)
        goto done;
    for (li = 0; li < a.net->nb_layers; li++)
        for (i = 0; i < a.net->layers[li].nb_outputs; i++)
            a.reads[li] += mica__pass_reads(&a.g,
                                            a.net->layers[li].outputs[i]);
    if ((st = decide(&a)) != MICA_OK || !a.scales)
        goto done;
    st = mica__rewrite_frame(a.net, a.out);
    for (li = 0; li < a.net->nb_layers && st == MICA_OK; li++)
        if (!a.drop[li])
            st = a.to[li] ? put_scale(&a, li)
                          : mica__pass_copy_layer(a.out, &a.net->layers[li],
                                                  NULL, NULL);
    if (st == MICA_OK) {
        p->out = a.out;
        a.out = NULL;
        p->changed = a.scales;
        snprintf(p->summary, sizeof p->summary, "%lld ElementWise layers "
                 "made %lld Scales, %lld Constants unread",
                 (long long)a.scales, (long long)(a.scales - a.merged),
                 (long long)a.constants);
    }
done:
    for (li = 0; a.to && li < a.net->nb_layers; li++)
        free(a.to[li]);
    free(a.to);
    free(a.drop);
    free(a.reads);
    free(a.order);
    mica__pass_graph_free(&a.g);
    mica_network_destroy(a.out);
    return st;
}
