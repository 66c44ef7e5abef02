/*
 * modules/convolution/fused_conv.c - the FusedConvolution layer
 * (fused_conv.h): params, the folding of scale and shift into the
 * weights, shapes, and its implementations.
 *
 * A FusedConvolution is a Convolution layer (mica__conv_layer_t, first in
 * its struct) whose params are the folded ones, so that Convolution's own
 * code runs it: its shapes, its runtime checks, its CUDA state
 * (conv_gpu.c: weights, cuDNN's algorithm kept in the engine, workspace,
 * clones) through Convolution's ops tables (conv_layer.c).  What it adds
 * is the epilogue (addends, ReLU): on the host, or fused_cuda.cu's kernel,
 * or, for "cudnn", cuDNN's fused engine doing it all where it can.
 *
 * Implementations: "reference" (CPU, 0: Convolution's reference on the
 * folded weights, then the epilogue), "onednn" (CPU, 5, with oneDNN:
 * in float32 with at most one addend of the output's shape, one
 * convolution primitive with the sum as its post-op, then the ReLU
 * (conv_onednn.c); else Convolution's oneDNN primitive, then the
 * epilogue on the host), "cuda" (CUDA, 10:
 * Convolution's kernel, then the epilogue kernel) and "cudnn" (CUDA, 20,
 * with cuDNN: cudnnConvolutionBiasActivationForward, else Convolution's
 * cuDNN algorithm and the epilogue kernel).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "conv_layer.h"
#include "fused_conv.h"
#include "kit_nn.h"
#ifdef MICA_HAVE_ONEDNN
#include "kit_onednn.h"
#endif

typedef struct fused {
    mica__conv_layer_t conv;   /* first: its p holds the folded weights */
    mica_weights_t kernel, bias;
    float *kv, *bv;            /* the folded values, NULL if none */
    int32_t act;               /* MICA__FUSED_ACT_* */
    int32_t has_bn;            /* scale or shift given */
    int32_t fused_off;         /* cudnn: cuDNN's fused engine refused */
    int32_t fused_said;        /* cudnn: its first fused run was logged */
} fused_t;

/* ---- the epilogue on the host -------------------------------------------- */

void mica__fused_epilogue_ref(void *y, mica_dtype_t dtype, int64_t n,
                              const mica_kit_bcast_t *v,
                              const void *const *a, int32_t act)
{
    int64_t i, off[MICA_KIT_BCAST_MAX_IN];
    int32_t k, nb = v ? v->nb_in : 0;

    for (i = 0; i < n; i++) {
        double s = mica__nn_get(y, dtype, i);
        if (nb)
            mica_kit_broadcast_offsets(v, i, off);
        for (k = 0; k < nb; k++)
            s += mica__nn_get(a[k], dtype, off[k]);
        if (act == MICA__FUSED_ACT_RELU && s < 0.0)
            s = 0.0; /* Activation's relu: NaN stays NaN */
        mica__nn_put(y, dtype, i, s);
    }
}

/* ---- params and folding --------------------------------------------------- */

/* scale or shift: NULL, or float weights of 1 or m values. */
static mica_status_t check_coef(const mica_weights_t *w, const char *name,
                                int64_t m, mica_error_t *err)
{
    if (!w)
        return MICA_OK;
    if (w->dtype != MICA_FLOAT32 && w->dtype != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "%s is %s: give float32 or float16 "
                             "weights", name,
                             mica_kit_host->dtype_name(w->dtype));
    if (w->count != 1 && w->count != m)
        return MICA_KIT_FAIL(err, "%s has %lld values: give 1 or "
                             "num_output_maps (%lld)", name,
                             (long long)w->count, (long long)m);
    return MICA_OK;
}

/* Coefficient o of w (1 or m values), `dflt` without w. */
static float coef(const mica_weights_t *w, int64_t o, float dflt)
{
    return w ? mica__conv_weight(w, w->count == 1 ? 0 : o) : dflt;
}

/* Read l's params from its own fields and fold scale and shift; with
 * `bias`, a bias of zeros where there is none (cuDNN's fused engine
 * needs one). */
static mica_status_t read_params(fused_t *l, int bias, mica_error_t *err)
{
    const mica_fields_t *f = mica_kit_fields_view(l->conv.base.fields);
    const mica_weights_t *sc = mica_kit_weights(f, "scale");
    const mica_weights_t *sh = mica_kit_weights(f, "shift");
    mica__conv_params_t *p = &l->conv.p;
    int64_t o, i, per;
    mica_status_t st;

    if ((st = mica__conv_params_read(f, 0, p, err)) != MICA_OK)
        return st;
    if (!p->kernel)
        return MICA_KIT_FAIL(err, "no kernel: FusedConvolution takes its "
                             "kernel as weights");
    if ((st = check_coef(sc, "scale", p->m, err)) != MICA_OK ||
        (st = check_coef(sh, "shift", p->m, err)) != MICA_OK)
        return st;
    l->act = (int32_t)mica_kit_int(f, "activation", MICA__FUSED_ACT_NONE);
    l->has_bn = sc || sh;
    if (!l->has_bn && (p->bias || !bias))
        return MICA_OK;
    /* kernel [M, C/G, k...]: map o's weights are one run of `per` */
    per = p->kernel->count / p->m;
    l->kv = malloc(sizeof *l->kv * (size_t)(p->kernel->count + 1));
    l->bv = malloc(sizeof *l->bv * (size_t)p->m);
    if (!l->kv || !l->bv) {
        mica_kit_host->set_error(err, "out of host memory");
        return MICA_ERR_NOMEM;
    }
    for (o = 0; o < p->m; o++) {
        float s = coef(sc, o, 1.0f);
        for (i = 0; i < per; i++)
            l->kv[o * per + i] = mica__conv_weight(p->kernel, o * per + i) * s;
        l->bv[o] = coef(p->bias, o, 0.0f) * s + coef(sh, o, 0.0f);
    }
    l->kernel = *p->kernel;
    l->kernel.dtype = MICA_FLOAT32;
    l->kernel.values = l->kv;
    memset(&l->bias, 0, sizeof l->bias);
    l->bias.dtype = MICA_FLOAT32;
    l->bias.count = p->m;
    l->bias.values = l->bv;
    l->bias.dims.nb_dims = 1;
    l->bias.dims.d[0] = p->m;
    p->kernel = &l->kernel;
    p->bias = &l->bias;
    return MICA_OK;
}

/* ---- shapes --------------------------------------------------------------- */

static mica_status_t fused_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in,
                                         int32_t nb_in, mica_dtype_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    int32_t k;
    (void)layer;
    if (nb_in < 1 || nb_in > 3 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 to 3 inputs and has 1 output, "
                             "got %d and %d", (int)nb_in, (int)nb_out);
    if (in[0] != MICA_FLOAT32 && in[0] != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "takes float32 or float16 input, got %s",
                             mica_kit_host->dtype_name(in[0]));
    for (k = 1; k < nb_in; k++)
        if (in[k] != in[0])
            return MICA_KIT_FAIL(err, "input %d is %s but input 0 is %s",
                                 (int)k, mica_kit_host->dtype_name(in[k]),
                                 mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

/* Whether build-time lengths a (an addend's) and y (the output's) fit. */
static int fits(const mica_expr_t *a, const mica_expr_t *y)
{
    int64_t av, yv;
    if (!mica_kit_host->expr_is_constant(a) ||
        !mica_kit_host->expr_is_constant(y))
        return 1; /* checked when it runs (mica_kit_broadcast_view) */
    av = mica_kit_host->expr_constant_value(a);
    yv = mica_kit_host->expr_constant_value(y);
    return av == yv || av == 1;
}

static mica_status_t fused_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    const fused_t *l = (const fused_t *)layer;
    int32_t r = in[0].nb_dims, i, k;
    mica_status_t st;

    /* Convolution's output, from x alone */
    if ((st = mica__conv_ops_ref.output_dims(layer, index, in, 1, eb, out,
                                             err)) != MICA_OK)
        return st;
    if (l->has_bn && r != l->conv.p.win.nd + 2)
        return MICA_KIT_FAIL(err, "scale and shift apply along axis 1: the "
                             "input needs rank %d, got %d",
                             (int)(l->conv.p.win.nd + 2), (int)r);
    for (k = 1; k < nb_in; k++) {
        if (in[k].nb_dims != r)
            return MICA_KIT_FAIL(err, "input %d has rank %d but the output "
                                 "has rank %d", (int)k, (int)in[k].nb_dims,
                                 (int)r);
        for (i = 0; i < r; i++)
            if (!fits(in[k].d[i], out->d[i]))
                return MICA_KIT_FAIL(err, "dimension %d of input %d is "
                                     "%lld, which does not broadcast to the "
                                     "output's %lld", (int)i, (int)k,
                                     (long long)mica_kit_host
                                         ->expr_constant_value(in[k].d[i]),
                                     (long long)mica_kit_host
                                         ->expr_constant_value(out->d[i]));
    }
    return MICA_OK;
}

/* Every input and the output of one type (float32 or float16) and one
 * format: linear, or with `channels_last` (the CUDA implementations of a
 * 2D FusedConvolution, as Convolution's; onednn's where it has input
 * channels) channels last (HWC) at rank 4. */
static int32_t formats(const mica_layer_t *layer, int channels_last,
                       int32_t pos, const mica_tensor_desc_t *io)
{
    const mica__conv_params_t *p = &((const fused_t *)layer)->conv.p;
    const mica_tensor_desc_t *d = &io[pos];

    if ((io[0].dtype != MICA_FLOAT32 && io[0].dtype != MICA_FLOAT16) ||
        d->dtype != io[0].dtype || d->format != io[0].format)
        return 0;
    return d->format == MICA_FORMAT_LINEAR ||
           (channels_last && p->win.nd == 2 && d->dims.nb_dims == 4 &&
            d->format == mica_kit_channels_last(4));
}

static int32_t fused_formats(const mica_layer_t *layer, int32_t pos,
                             const mica_tensor_desc_t *io, int32_t nb_in,
                             int32_t nb_out)
{
    (void)nb_in; (void)nb_out;
    return formats(layer, 0, pos, io);
}

/* Convolution's runtime checks (x alone). */
static mica_status_t fused_configure(mica_layer_t *layer,
                                     const mica_dyn_desc_t *in, int32_t nb_in,
                                     const mica_dyn_desc_t *out,
                                     int32_t nb_out, mica_error_t *err)
{
    (void)nb_in;
    return mica__conv_ops_ref.configure(layer, in, 1, out, nb_out, err);
}

/* d's dims [N, C, H, W] in memory order [N, H, W, C] (channels last). */
static void to_hwc(mica_dims_t *d)
{
    int64_t c = d->d[1];
    d->d[1] = d->d[2];
    d->d[2] = d->d[3];
    d->d[3] = c;
}

/* The addends' view against the output (none: v->nb_in 0), in memory
 * order: channels last, every tensor in it (formats()), is a row-major
 * [N, H, W, C], broadcast as its dims permuted so. */
static mica_status_t addends(const mica_tensor_desc_t *in, int32_t nb_in,
                             const mica_tensor_desc_t *out,
                             mica_kit_bcast_t *v, mica_error_t *err)
{
    mica_tensor_desc_t a[2];
    mica_dims_t y = out[0].dims;
    int32_t k;

    memset(v, 0, sizeof *v);
    if (nb_in < 2)
        return MICA_OK;
    if (out[0].format == MICA_FORMAT_LINEAR)
        return mica_kit_broadcast_view(in + 1, nb_in - 1, &y, 1, v, err);
    for (k = 1; k < nb_in; k++) {
        a[k - 1] = in[k];
        to_hwc(&a[k - 1].dims);
    }
    to_hwc(&y);
    return mica_kit_broadcast_view(a, nb_in - 1, &y, 1, v, err);
}

/* ---- the reference and oneDNN ------------------------------------------- */

/* The epilogue on the host after Convolution's part. */
static mica_status_t epilogue_host(const fused_t *l,
                                   const mica_tensor_desc_t *in,
                                   int32_t nb_in,
                                   const mica_tensor_desc_t *out,
                                   const void *const *inputs, void *y,
                                   mica_error_t *err)
{
    mica_kit_bcast_t v;
    mica_status_t st;

    if ((st = addends(in, nb_in, out, &v, err)) != MICA_OK)
        return st;
    if (v.nb_in || l->act != MICA__FUSED_ACT_NONE)
        mica__fused_epilogue_ref(y, out[0].dtype,
                                 mica_dims_volume(&out[0].dims), &v,
                                 inputs + 1, l->act);
    return MICA_OK;
}

static MICA_KIT_ENQUEUE(fused_enqueue_ref)
{
    mica_status_t st = mica__conv_ops_ref.enqueue(
        layer, in, 1, out, nb_out, inputs, outputs, workspace, stream, err);
    return st != MICA_OK ? st
                         : epilogue_host((const fused_t *)layer, in, nb_in,
                                         out, inputs, outputs[0], err);
}

#define FUSED_OPS(enqueue_, formats_)                                       \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = fused_output_dtypes,                      \
                 .output_dims = fused_output_dims,                          \
                 .supports_format = (formats_),                             \
                 .configure = fused_configure)

static const mica_layer_ops_t ops_ref =
    FUSED_OPS(fused_enqueue_ref, fused_formats);

#ifdef MICA_HAVE_ONEDNN
/* Whether addend `a` is y's shape, type and format: what oneDNN's sum
 * post-op adds (no broadcast). */
static int same_as_output(const mica_tensor_desc_t *a,
                          const mica_tensor_desc_t *y)
{
    int32_t i;
    if (a->dtype != y->dtype || a->format != y->format ||
        a->dims.nb_dims != y->dims.nb_dims)
        return 0;
    for (i = 0; i < a->dims.nb_dims; i++)
        if (a->dims.d[i] != y->dims.d[i])
            return 0;
    return 1;
}

/* oneDNN's primitive with its sum post-op where it takes the problem,
 * float32 with at most one addend of the output's shape (the ReLU
 * after it); else oneDNN's convolution and the epilogue on the host. */
static MICA_KIT_ENQUEUE(fused_enqueue_dnnl)
{
    fused_t *l = (fused_t *)layer;
    mica__conv_problem_t pb;
    mica_status_t st;

    mica__conv_problem(&l->conv.p, in[0].dtype, &in[0].dims, &pb);
    if (mica__conv_dnnl_post_takes(&pb) &&
        (nb_in == 1 || (nb_in == 2 && same_as_output(&in[1], &out[0]))))
        return mica__conv_dnnl_run_post(
            &l->conv.dnnl, &pb, mica__window_channels(&in[0]), inputs[0],
            nb_in == 2 ? inputs[1] : NULL, l->act == MICA__FUSED_ACT_RELU,
            outputs[0], err);
    st = mica__conv_ops_dnnl.enqueue(layer, in, 1, out, nb_out, inputs,
                                     outputs, workspace, stream, err);
    return st != MICA_OK ? st
                         : epilogue_host((const fused_t *)layer, in, nb_in,
                                         out, inputs, outputs[0], err);
}

static int32_t fused_formats_dnnl(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io,
                                  int32_t nb_in, int32_t nb_out)
{
    const mica__conv_params_t *p = &((const fused_t *)layer)->conv.p;
    (void)nb_in; (void)nb_out;
    return formats(layer, mica__conv_dnnl_cl(p), pos, io);
}

static const mica_layer_ops_t ops_dnnl =
    FUSED_OPS(fused_enqueue_dnnl, fused_formats_dnnl);
#endif

/* ---- CUDA: cuda and cudnn -------------------------------------------------- */

#if MICA_KIT_CUDA
/* Whether dims a and b are the same. */
static int same_dims(const mica_dims_t *a, const mica_dims_t *b)
{
    int32_t i;
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* Whether an addend has the output's dims at every size of the range. */
static int same_dyn(const mica_dyn_desc_t *a, const mica_dyn_desc_t *y)
{
    return same_dims(&a->desc.dims, &y->desc.dims) &&
           same_dims(&a->min, &y->min) && same_dims(&a->max, &y->max) &&
           a->desc.format == y->desc.format;
}

/* Whether dims d are [1, m, 1...] of rank `rank`: a per-map addend (a
 * bias tensor), the same bytes in every format. */
static int per_map(const mica_dims_t *d, int32_t rank, int64_t m)
{
    int32_t i;
    if (d->nb_dims != rank || rank < 2 || d->d[1] != m)
        return 0;
    for (i = 0; i < rank; i++)
        if (i != 1 && d->d[i] != 1)
            return 0;
    return 1;
}

enum { ADD_OTHER = 0, ADD_FULL = 1, ADD_MAP = 2 };

/* What cuDNN's graph may add of each addend (inputs 1 and 2): its index
 * as z (of the output's shape) in *z and as a (per map) in *a, -1 for
 * none; 0 where an addend is neither, or two are of one kind (the
 * epilogue kernel then adds them). */
static int graph_addends(const int *kind, int32_t nb_in, int32_t *z,
                         int32_t *a)
{
    int32_t k;
    *z = *a = -1;
    for (k = 1; k < nb_in; k++) {
        int32_t *slot = kind[k] == ADD_FULL ? z : kind[k] == ADD_MAP ? a
                                                                   : NULL;
        if (!slot || *slot >= 0)
            return 0;
        *slot = k;
    }
    return 1;
}

static int32_t fused_formats_gpu(const mica_layer_t *layer, int32_t pos,
                                 const mica_tensor_desc_t *io, int32_t nb_in,
                                 int32_t nb_out)
{
    (void)nb_in; (void)nb_out;
    return formats(layer, 1, pos, io);
}

/* Convolution's CUDA ops on the Convolution inside (x alone): its
 * checks, algorithm and workspace, weights uploaded, and for cudnn its
 * tactics, cuDNN's algorithms (conv_layer.c). */
static mica_status_t fused_configure_gpu(mica_layer_t *layer,
                                         const mica_dyn_desc_t *in,
                                         int32_t nb_in,
                                         const mica_dyn_desc_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    fused_t *l = (fused_t *)layer;
    int32_t epi = l->conv.p.bias ? MICA__CG_BIAS : 0, k, z, a;
    int kind[3] = {ADD_OTHER, ADD_OTHER, ADD_OTHER};

    /* What cuDNN's graph API fuses (cudnn, with its bias): one addend of
     * the output's shape (at every size) and one per map, then the
     * ReLU. */
    for (k = 1; k < nb_in && k < 3 && nb_out == 1; k++) {
        int32_t r = out[0].desc.dims.nb_dims;
        if (same_dyn(&in[k], &out[0]))
            kind[k] = ADD_FULL;
        else if (per_map(&in[k].desc.dims, r, l->conv.p.m) &&
                 per_map(&in[k].min, r, l->conv.p.m) &&
                 per_map(&in[k].max, r, l->conv.p.m))
            kind[k] = ADD_MAP;
    }
    if (l->conv.impl->kind == MICA__CONV_CUDNN && nb_in <= 3 &&
        graph_addends(kind, nb_in, &z, &a))
        epi |= (z >= 0 ? MICA__CG_Z : 0) | (a >= 0 ? MICA__CG_A : 0) |
               (l->act == MICA__FUSED_ACT_RELU ? MICA__CG_RELU : 0);
    mica__conv_gpu_set_epilogue(l->conv.gpu, epi);
    return mica__conv_ops_gpu.configure(layer, in, 1, out, nb_out, err);
}

static size_t fused_workspace_gpu(const mica_layer_t *layer,
                                  const mica_dyn_desc_t *in, int32_t nb_in,
                                  const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)nb_in;
    return mica__conv_ops_gpu.workspace_size(layer, in, 1, out, nb_out);
}

static mica_status_t fused_initialize_gpu(mica_layer_t *layer, void *stream,
                                          mica_error_t *err)
{
    return mica__conv_ops_gpu.initialize(layer, stream, err);
}

#ifdef MICA_HAVE_CUDNN
static int32_t fused_tactics(const mica_layer_t *layer, int32_t *tactics,
                             int32_t max)
{
    return mica__conv_ops_cudnn.tactics(layer, tactics, max);
}

static mica_status_t fused_set_tactic(mica_layer_t *layer, int32_t tactic,
                                      mica_error_t *err)
{
    return mica__conv_ops_cudnn.set_tactic(layer, tactic, err);
}
#endif

#ifdef MICA_HAVE_CUDNN
/*
 * cudnn: the whole layer in one of cuDNN's fused engines where one takes
 * it (one addend at most, of y's shape: its z), *done set then: the
 * graph API's plan of the layer's tactic (conv_graph.c), or, with a
 * legacy algorithm, cudnnConvolutionBiasActivationForward; else nothing
 * done, and once the legacy engine refuses, never again for this
 * instance.
 */
static mica_status_t run_fused(fused_t *l, const mica__conv_problem_t *pb,
                               const mica_tensor_desc_t *in, int32_t nb_in,
                               const mica_tensor_desc_t *out,
                               const void *const *inputs, void *y,
                               void *workspace, void *stream, int *done,
                               mica_error_t *err)
{
    const void *z = NULL, *a = NULL, *w, *b;
    int kind[3] = {ADD_OTHER, ADD_OTHER, ADD_OTHER};
    int32_t k, zi = -1, ai = -1, algo;
    mica__conv_dnn_t *dnn;
    mica_status_t st;
    size_t ws;
    int nhwc;

    *done = 0;
    if (l->conv.impl->kind != MICA__CONV_CUDNN || nb_in > 3)
        return MICA_OK;
    for (k = 1; k < nb_in; k++) {
        if (same_dims(&in[k].dims, &out[0].dims) &&
            in[k].format == out[0].format)
            kind[k] = ADD_FULL;
        else if (per_map(&in[k].dims, out[0].dims.nb_dims, l->conv.p.m))
            kind[k] = ADD_MAP;
    }
    if (!graph_addends(kind, nb_in, &zi, &ai))
        return MICA_OK;
    z = zi >= 0 ? inputs[zi] : NULL;
    a = ai >= 0 ? inputs[ai] : NULL;
    if (!z && !a && l->act == MICA__FUSED_ACT_NONE)
        return MICA_OK;
    if ((st = mica__conv_gpu_run_epilogue(l->conv.gpu, pb, inputs[0], a, z,
                                          y, workspace, stream, done,
                                          err)) != MICA_OK ||
        *done) {
        if (*done && !l->fused_said) {
            l->fused_said = 1;
            mica_kit_host->log(MICA_LOG_DEBUG, l->conv.base.name,
                               "runs in one plan of cuDNN's graph API "
                               "(convolution, bias%s%s%s)",
                               a ? ", per-map addend" : "",
                               z ? ", addend" : "",
                               l->act == MICA__FUSED_ACT_RELU ? ", ReLU"
                                                              : "");
        }
        return st;
    }
    /* The legacy fused engine: a bias and one addend of y's shape. */
    if (a || nb_in > 2)
        return MICA_OK;
    if (l->fused_off)
        return MICA_OK;
    algo = mica__conv_gpu_cudnn(l->conv.gpu, pb, workspace != NULL, &dnn, &w,
                                &b, &ws, &nhwc, err);
    if (algo == MICA__CONV_DIRECT)
        return MICA_OK;
    st = mica__conv_dnn_run_fused(dnn, pb, nhwc, algo, inputs[0], w, b, z,
                                  l->act == MICA__FUSED_ACT_RELU, y,
                                  ws ? workspace : NULL, ws, stream, err);
    if (st == MICA_ERR_UNSUPPORTED) {
        l->fused_off = 1;
        mica_kit_host->log(MICA_LOG_DEBUG, l->conv.base.name,
                           "cuDNN's fused engine does not take this "
                           "convolution (algorithm %d): convolution, then "
                           "the epilogue kernel", (int)algo);
        return MICA_OK;
    }
    if (st == MICA_OK && !l->fused_said) {
        l->fused_said = 1;
        mica_kit_host->log(MICA_LOG_DEBUG, l->conv.base.name,
                           "runs in cuDNN's fused engine "
                           "(cudnnConvolutionBiasActivationForward, "
                           "algorithm %d)", (int)algo);
    }
    *done = st == MICA_OK;
    return st;
}
#endif

static MICA_KIT_ENQUEUE(fused_enqueue_gpu)
{
    fused_t *l = (fused_t *)layer;
    mica__conv_problem_t pb;
    mica_kit_bcast_t v;
    mica_status_t st;

    /* The layout of configure's, as Convolution's enqueue sets it. */
    mica__conv_gpu_set_nhwc(l->conv.gpu, in[0].format != MICA_FORMAT_LINEAR);
    if ((st = addends(in, nb_in, out, &v, err)) != MICA_OK ||
        (st = mica__conv_gpu_init(l->conv.gpu, &l->conv.p, in[0].dtype,
                                  err)) != MICA_OK)
        return st;
    mica__conv_problem(&l->conv.p, in[0].dtype, &in[0].dims, &pb);
#ifdef MICA_HAVE_CUDNN
    {
        int done;
        if ((st = run_fused(l, &pb, in, nb_in, out, inputs, outputs[0],
                            workspace, stream, &done, err)) != MICA_OK ||
            done)
            return st;
    }
#endif
    if ((st = mica__conv_gpu_run(l->conv.gpu, &pb, inputs[0], outputs[0],
                                 workspace, stream, err)) != MICA_OK)
        return st;
    if (!v.nb_in && l->act == MICA__FUSED_ACT_NONE)
        return MICA_OK;
    return mica__fused_epilogue_cuda(outputs[0], out[0].dtype,
                                     mica_dims_volume(&out[0].dims), &v,
                                     nb_in > 1 ? inputs[1] : NULL,
                                     nb_in > 2 ? inputs[2] : NULL, l->act,
                                     stream, err);
}

#define FUSED_OPS_GPU(...)                                                  \
    MICA_KIT_OPS(fused_enqueue_gpu, .nb_outputs = mica_kit_one_output,      \
                 .output_dtypes = fused_output_dtypes,                      \
                 .output_dims = fused_output_dims,                          \
                 .supports_format = fused_formats_gpu,                      \
                 .configure = fused_configure_gpu,                          \
                 .workspace_size = fused_workspace_gpu,                     \
                 .initialize = fused_initialize_gpu, __VA_ARGS__)

static const mica_layer_ops_t ops_gpu = FUSED_OPS_GPU(.tactics = NULL);
#ifdef MICA_HAVE_CUDNN
static const mica_layer_ops_t ops_cudnn =
    FUSED_OPS_GPU(.tactics = fused_tactics, .set_tactic = fused_set_tactic);
#endif
#endif

/* ---- create and the creators ---------------------------------------------- */

static void fused_fini(mica_kit_layer_t *self)
{
    fused_t *l = (fused_t *)self;
#ifdef MICA_HAVE_ONEDNN
    mica__conv_dnnl_free(l->conv.dnnl);
#endif
#if MICA_KIT_CUDA
    mica__conv_gpu_free(l->conv.gpu);
#endif
    l->conv.dnnl = NULL;
    l->conv.gpu = NULL;
    free(l->kv);
    free(l->bv);
    l->kv = l->bv = NULL;
}

static mica_layer_t *fused_create(const mica_layer_creator_t *creator,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err)
{
    const mica__conv_impl_t *impl = creator->user_data;
    fused_t *l = mica_kit_layer_new(sizeof *l, impl->ops, creator, name,
                                    fields, err);

    if (!l)
        return NULL;
    l->conv.impl = impl;
    l->conv.base.fini = fused_fini;
    /* The weights must point into the layer's own fields. */
    if (read_params(l, impl->kind == MICA__CONV_CUDNN, err) != MICA_OK)
        goto fail;
#ifdef MICA_HAVE_ONEDNN
    /* oneDNN opened now: a missing library fails the build, saying so. */
    if (impl->kind == MICA__CONV_ONEDNN && mica__dnnl_open(err) != MICA_OK)
        goto fail;
#endif
#if MICA_KIT_CUDA
    if ((impl->kind == MICA__CONV_CUDA || impl->kind == MICA__CONV_CUDNN) &&
        !(l->conv.gpu = mica__conv_gpu_new(impl->kind == MICA__CONV_CUDNN))) {
        mica_kit_host->set_error(err, "out of host memory");
        goto fail;
    }
#endif
    return &l->conv.base.layer;
fail:
    mica_kit_layer_destroy(&l->conv.base.layer);
    return NULL;
}

static const int64_t one = 1;
static const char *const act_names[] = {"none", "relu", NULL};
static const int64_t act_none = MICA__FUSED_ACT_NONE;

static const mica_field_schema_t fused_fields[] = {
    MICA__CONV_FIELDS(&one, "weights [M, C/groups, (kD,) kH, kW], float32 "
                            "or float16"),
    {"scale", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "1 or M values the output maps are multiplied by, folded into the "
     "kernel and bias (a batch norm; optional)"},
    {"shift", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "1 or M values added after scale, folded into the bias (optional)"},
    {"activation", MICA_FIELD_ENUM, 1, 0, 1, &act_none, act_names,
     "the activation last: none (default) or relu"}};

#define CREATOR(id_, impl_, dev_, prio_, info_)                             \
    const mica_layer_creator_t id_ = MICA_KIT_CREATOR(                      \
        "FusedConvolution", impl_, dev_, prio_, MICA_ROLE_NONE,             \
        fused_fields, MICA_KIT_COUNT(fused_fields), fused_create, &(info_))

static const mica__conv_impl_t impl_ref = {&ops_ref, 0, MICA__CONV_REFERENCE};
CREATOR(mica__fused_creator_ref, "reference", MICA_DEVICE_CPU, 0, impl_ref);

#ifdef MICA_HAVE_ONEDNN
static const mica__conv_impl_t impl_dnnl = {&ops_dnnl, 0, MICA__CONV_ONEDNN};
CREATOR(mica__fused_creator_dnnl, "onednn", MICA_DEVICE_CPU, 5, impl_dnnl);
#endif

#if MICA_KIT_CUDA
static const mica__conv_impl_t impl_cuda = {&ops_gpu, 0, MICA__CONV_CUDA};
CREATOR(mica__fused_creator_cuda, "cuda", MICA_DEVICE_CUDA, 10, impl_cuda);
#ifdef MICA_HAVE_CUDNN
/* cuDNN's algorithms are its tactics, as Convolution's. */
static const mica__conv_impl_t impl_cudnn = {&ops_cudnn, 0,
                                             MICA__CONV_CUDNN};
CREATOR(mica__fused_creator_cudnn, "cudnn", MICA_DEVICE_CUDA, 20,
        impl_cudnn);
#endif
#endif
