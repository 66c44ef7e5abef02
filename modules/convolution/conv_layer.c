/*
 * modules/convolution/conv_layer.c - the layer instance of Convolution and
 * Deconvolution: shapes, and the ops of each implementation.
 *
 * The cudnn implementation's state is its fields alone: the cuDNN
 * algorithm is its tactic (conv.h), which the engine stores and the core
 * tells every instance made from saved state and every clone.
 */
#include <config.h>

#include <string.h>

#include "conv_layer.h"
#include "kit_nn.h"
#ifdef MICA_HAVE_ONEDNN
#include "kit_onednn.h"
#endif

/* ---- shapes ------------------------------------------------------------- */

/*
 * A kernel given as input 1 (dims d, rank r) against the params: rank
 * nd + 2, kernel_size, M maps ([M, C/groups, k...]; Deconvolution's
 * [C, M/groups, k...]); *c the input channels it is made for.  With
 * `x_c` >= 0 the input's channels are checked against them; a bias
 * (b_n >= 0 values) must have M.
 */
static mica_status_t kernel_check(const mica__conv_params_t *p,
                                  const int64_t *d, int32_t r, int64_t x_c,
                                  int64_t b_n, mica_error_t *err)
{
    const char *type = p->deconv ? "Deconvolution" : "Convolution";
    int32_t nd = p->win.nd, i;
    int64_t c;

    if (r != nd + 2)
        return MICA_KIT_FAIL(err, "the kernel (input 1) has rank %d but a "
                             "%dD %s takes a kernel of rank %d", (int)r,
                             (int)nd, type, (int)(nd + 2));
    for (i = 0; i < nd; i++)
        if (d[2 + i] != p->win.k[3 - nd + i])
            return MICA_KIT_FAIL(err, "dimension %d of the kernel (input 1) "
                                 "is %lld but kernel_size says %lld",
                                 (int)(2 + i), (long long)d[2 + i],
                                 (long long)p->win.k[3 - nd + i]);
    if (p->deconv ? d[1] * p->groups != p->m : d[0] != p->m)
        return MICA_KIT_FAIL(err, "the kernel (input 1) is made for %lld "
                             "output maps but num_output_maps is %lld (%s "
                             "takes %s)",
                             (long long)(p->deconv ? d[1] * p->groups : d[0]),
                             (long long)p->m, type,
                             p->deconv ? "[C, M/groups, kernel...]"
                                       : "[M, C/groups, kernel...]");
    c = p->deconv ? d[0] : d[1] * p->groups;
    if (x_c >= 0 && x_c != c)
        return MICA_KIT_FAIL(err, "input has %lld channels but the kernel "
                             "(input 1) is made for %lld with groups %lld",
                             (long long)x_c, (long long)c,
                             (long long)p->groups);
    if (b_n >= 0 && b_n != p->m)
        return MICA_KIT_FAIL(err, "the bias (input 2) has %lld values but "
                             "num_output_maps is %lld", (long long)b_n,
                             (long long)p->m);
    return MICA_OK;
}

/* kernel_check on the shape expressions, where they are constants. */
static mica_status_t inputs_check(const mica__conv_params_t *p,
                                  const mica_shape_expr_t *in, int32_t nb_in,
                                  mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int64_t d[MICA_MAX_DIMS], x_c = -1, b_n = -1;
    int32_t i, r = in[1].nb_dims, cdim = in[0].nb_dims - p->win.nd - 1;

    for (i = 0; i < r && i < MICA_MAX_DIMS; i++) {
        if (!h->expr_is_constant(in[1].d[i]))
            return MICA_OK; /* configure checks it */
        d[i] = h->expr_constant_value(in[1].d[i]);
    }
    if (cdim >= 0 && h->expr_is_constant(in[0].d[cdim]))
        x_c = h->expr_constant_value(in[0].d[cdim]);
    if (nb_in > 2) {
        if (in[2].nb_dims != 1)
            return MICA_KIT_FAIL(err, "the bias (input 2) has rank %d: give "
                                 "M values, rank 1", (int)in[2].nb_dims);
        if (h->expr_is_constant(in[2].d[0]))
            b_n = h->expr_constant_value(in[2].d[0]);
    }
    return kernel_check(p, d, r, x_c, b_n, err);
}

static mica_status_t conv_output_dims(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out,
                                      mica_error_t *err)
{
    const mica__conv_layer_t *l = (const mica__conv_layer_t *)layer;
    const mica__conv_params_t *p = &l->p;
    int32_t r, cdim, i;
    const mica_expr_t *c;
    mica_status_t st;

    if (index != 0 || nb_in != (p->kernel ? 1 : nb_in < 3 ? 2 : 3))
        return MICA_KIT_FAIL(err, p->kernel ? "takes 1 input (the kernel is "
                             "weights) and has 1 output"
                             : "takes 2 or 3 inputs (x, the kernel, a bias) "
                               "and has 1 output");
    r = in[0].nb_dims;
    cdim = r - p->win.nd - 1;
    c = cdim >= 0 ? in[0].d[cdim] : NULL;
    st = mica__conv_check_input(
        p, r, c ? mica_kit_host->expr_constant_value(c) : 0,
        c && mica_kit_host->expr_is_constant(c), err);
    if (st == MICA_OK && !p->kernel)
        st = inputs_check(p, in, nb_in, err);
    if (st != MICA_OK)
        return st;
    for (i = 0; i < cdim; i++)
        out->d[i] = in[0].d[i];
    out->d[cdim] = mica_kit_host->expr_constant(eb, p->m);
    if (!out->d[cdim])
        return MICA_KIT_FAIL(err, "out of host memory");
    out->nb_dims = r;
    return mica__window_dims(&p->win, &in[0], cdim + 1, eb, out, err);
}

/* The runtime checks of configure: the channels, the smallest sizes. */
static mica_status_t conv_check_dyn(const mica__conv_layer_t *l,
                                    const mica_dyn_desc_t *x, int32_t nb_in,
                                    mica_error_t *err)
{
    int32_t r = x->desc.dims.nb_dims, cdim = r - l->p.win.nd - 1;
    mica_status_t st;

    if (!l->p.kernel) {
        /* the kernel and bias inputs, at both ends of their profiles */
        const mica_dyn_desc_t *k = &x[1], *b = nb_in > 2 ? &x[2] : NULL;
        if ((st = kernel_check(&l->p, k->min.d, k->min.nb_dims,
                               x->min.d[cdim], b ? b->min.d[0] : -1,
                               err)) != MICA_OK ||
            (st = kernel_check(&l->p, k->max.d, k->max.nb_dims,
                               x->max.d[cdim], b ? b->max.d[0] : -1,
                               err)) != MICA_OK)
            return st;
        return mica__window_check(&l->p.win, &x->min, cdim + 1, err);
    }
    if ((st = mica__conv_check_input(&l->p, r, x->min.d[cdim], 1, err)) !=
            MICA_OK ||
        (st = mica__conv_check_input(&l->p, r, x->max.d[cdim], 1, err)) !=
            MICA_OK)
        return st;
    return mica__window_check(&l->p.win, &x->min, cdim + 1, err);
}

static mica_status_t conv_configure(mica_layer_t *layer,
                                    const mica_dyn_desc_t *in, int32_t nb_in,
                                    const mica_dyn_desc_t *out,
                                    int32_t nb_out, mica_error_t *err)
{
    (void)out; (void)nb_out;
    return conv_check_dyn((const mica__conv_layer_t *)layer, in, nb_in, err);
}

/* ---- the reference and oneDNN ------------------------------------------- */

/* The params of a run whose kernel (and bias) are inputs: l's, with q's
 * kernel and bias weights over those inputs' values (host or device
 * addresses, as the implementation reads them). */
static void input_params(const mica__conv_layer_t *l,
                         const mica_tensor_desc_t *in, int32_t nb_in,
                         const void *const *inputs, mica__conv_params_t *q,
                         mica_weights_t *kw, mica_weights_t *bw)
{
    int32_t i;

    *q = l->p;
    memset(kw, 0, sizeof *kw);
    kw->dtype = in[1].dtype;
    kw->dims = in[1].dims;
    kw->values = inputs[1];
    kw->count = 1;
    for (i = 0; i < in[1].dims.nb_dims; i++)
        kw->count *= in[1].dims.d[i];
    q->kernel = kw;
    q->c = l->p.deconv ? in[1].dims.d[0] : in[1].dims.d[1] * l->p.groups;
    if (nb_in > 2 && inputs[2]) {
        memset(bw, 0, sizeof *bw);
        bw->dtype = in[2].dtype;
        bw->dims = in[2].dims;
        bw->values = inputs[2];
        bw->count = in[2].dims.d[0];
        q->bias = bw;
    }
}

static MICA_KIT_ENQUEUE(conv_enqueue_ref)
{
    const mica__conv_layer_t *l = (const mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;
    mica__conv_params_t q;
    mica_weights_t kw, bw;

    if (!l->p.kernel) {
        input_params(l, in, nb_in, inputs, &q, &kw, &bw);
        mica__conv_problem(&q, in[0].dtype, &in[0].dims, &pb);
    } else {
        mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    }
    mica__conv_reference(&pb, inputs[0], outputs[0]);
    return MICA_OK;
}

/* Linear float32 or float16, every input and the output of one type:
 * the formats of the implementations that take the kernel as an input. */
static int32_t conv_formats_inputs(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    const mica__conv_params_t *p = &((const mica__conv_layer_t *)layer)->p;

    if (p->kernel)
        return mica_kit_float_linear(layer, pos, io, nb_in, nb_out);
    if (nb_in < 2 || nb_in > 3 || nb_out != 1 || pos < 0 ||
        pos > nb_in || !mica_kit_linear(io, pos))
        return 0;
    if (pos > 0)
        return io[pos].dtype == io[0].dtype;
    return io[0].dtype == MICA_FLOAT32 || io[0].dtype == MICA_FLOAT16;
}

/* The output's type: the input's (float32 or float16); a kernel and bias
 * given as inputs of that type too. */
static mica_status_t conv_output_dtypes(const mica_layer_t *layer,
                                        const mica_dtype_t *in,
                                        int32_t nb_in, mica_dtype_t *out,
                                        int32_t nb_out, mica_error_t *err)
{
    const mica__conv_params_t *p = &((const mica__conv_layer_t *)layer)->p;
    int32_t i;

    if (p->kernel || nb_in < 2)
        return mica__nn_float_dtypes(layer, in, nb_in, out, nb_out, err);
    if (nb_in > 3 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 2 or 3 inputs (x, the kernel, a "
                             "bias) and has 1 output, got %d and %d",
                             (int)nb_in, (int)nb_out);
    for (i = 1; i < nb_in; i++)
        if (in[i] != in[0])
            return MICA_KIT_FAIL(err, "the %s (input %d) is %s but the input "
                                 "is %s: give them one type",
                                 i == 1 ? "kernel" : "bias", (int)i,
                                 mica_kit_host->dtype_name(in[i]),
                                 mica_kit_host->dtype_name(in[0]));
    return mica__nn_float_dtypes(layer, in, 1, out, nb_out, err);
}

#define CONV_OPS(enqueue_, formats_, ...)                                   \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = conv_output_dtypes,                       \
                 .output_dims = conv_output_dims,                           \
                 .supports_format = (formats_), __VA_ARGS__)

const mica_layer_ops_t mica__conv_ops_ref = CONV_OPS(
    conv_enqueue_ref, conv_formats_inputs, .configure = conv_configure);

#ifdef MICA_HAVE_ONEDNN
int mica__conv_dnnl_cl(const mica__conv_params_t *p)
{
    return !p->deconv && p->win.nd == 2 && p->c > 0;
}

/* Linear, and channels last (NHWC) for a 2D Convolution with input
 * channels: oneDNN's nhwc (conv_onednn.c). */
static int32_t conv_formats_dnnl(const mica_layer_t *layer, int32_t pos,
                                 const mica_tensor_desc_t *io, int32_t nb_in,
                                 int32_t nb_out)
{
    const mica__conv_params_t *p = &((const mica__conv_layer_t *)layer)->p;
    return mica__window_formats(&p->win, mica__conv_dnnl_cl(p), io, pos,
                                nb_in, nb_out);
}

static MICA_KIT_ENQUEUE(conv_enqueue_dnnl)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;

    mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    return mica__conv_dnnl_run(&l->dnnl, &pb,
                               mica__window_channels(&in[0]), inputs[0],
                               outputs[0], err);
}

const mica_layer_ops_t mica__conv_ops_dnnl = CONV_OPS(
    conv_enqueue_dnnl, conv_formats_dnnl, .configure = conv_configure);
#endif

/* ---- CUDA: cuda and cudnn ---------------------------------------------- */

#if MICA_KIT_CUDA
/* Linear, and channels last (NHWC) for a 2D Convolution: cuDNN's NHWC
 * descriptors, the kernel's channels-last indexing where cuDNN does not
 * run.  Deconvolution and 3D stay linear: cuDNN's NHWC backward-data and
 * NDHWC support is narrower (docs/manifest.md). */
static int32_t conv_formats_gpu(const mica_layer_t *layer, int32_t pos,
                                const mica_tensor_desc_t *io, int32_t nb_in,
                                int32_t nb_out)
{
    const mica__conv_params_t *p = &((const mica__conv_layer_t *)layer)->p;
    if (!p->kernel) /* the cuda kernel's linear layouts */
        return ((const mica__conv_layer_t *)layer)->impl->kind ==
                       MICA__CONV_CUDA &&
               conv_formats_inputs(layer, pos, io, nb_in, nb_out);
    return mica__window_formats(&p->win, !p->deconv && p->win.nd == 2, io,
                                pos, nb_in, nb_out);
}

static mica_status_t conv_configure_gpu(mica_layer_t *layer,
                                        const mica_dyn_desc_t *in,
                                        int32_t nb_in,
                                        const mica_dyn_desc_t *out,
                                        int32_t nb_out, mica_error_t *err)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    mica__conv_problem_t opt, hi;
    mica_status_t st;
    (void)out; (void)nb_out;

    if ((st = conv_check_dyn(l, in, nb_in, err)) != MICA_OK)
        return st;
    l->io_dtype = in[0].desc.dtype;
    if (!l->p.kernel)
        return MICA_OK; /* the hand-written kernel, nothing to choose */
    mica__conv_gpu_set_nhwc(l->gpu, mica__window_channels(&in[0].desc));
    mica__conv_problem(&l->p, in[0].desc.dtype, &in[0].desc.dims, &opt);
    mica__conv_problem(&l->p, in[0].desc.dtype, &in[0].max, &hi);
    return mica__conv_gpu_configure(l->gpu, &opt, &hi, err);
}

static size_t conv_workspace_gpu(const mica_layer_t *layer,
                                 const mica_dyn_desc_t *in, int32_t nb_in,
                                 const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return mica__conv_gpu_workspace(((const mica__conv_layer_t *)layer)->gpu);
}

static mica_status_t conv_initialize_gpu(mica_layer_t *layer, void *stream,
                                         mica_error_t *err)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    (void)stream;
    if (!l->p.kernel)
        return MICA_OK; /* no weights to upload */
    return mica__conv_gpu_init(l->gpu, &l->p, l->io_dtype, err);
}

static MICA_KIT_ENQUEUE(conv_enqueue_gpu)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;
    mica_status_t st;

    if (!l->p.kernel) {
        /* kernel and bias on the device already, in the I/O type */
        mica__conv_params_t q;
        mica_weights_t kw, bw;
        input_params(l, in, nb_in, inputs, &q, &kw, &bw);
        mica__conv_problem(&q, in[0].dtype, &in[0].dims, &pb);
        return mica__conv_cuda(&pb, 0, inputs[0], inputs[1],
                               nb_in > 2 ? inputs[2] : NULL, outputs[0],
                               stream, err);
    }
    /* The layout of configure's; the weights in the I/O type and that
     * layout: uploaded by initialize, or here for a run without one
     * (autotune's), or again if either changed. */
    mica__conv_gpu_set_nhwc(l->gpu, mica__window_channels(&in[0]));
    if ((st = mica__conv_gpu_init(l->gpu, &l->p, in[0].dtype, err)) !=
        MICA_OK)
        return st;
    mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    return mica__conv_gpu_run(l->gpu, &pb, inputs[0], outputs[0], workspace,
                              stream, err);
}

static int32_t conv_tactics(const mica_layer_t *layer, int32_t *tactics,
                            int32_t max)
{
    return mica__conv_gpu_tactics(((const mica__conv_layer_t *)layer)->gpu,
                                  tactics, max);
}

static mica_status_t conv_set_tactic(mica_layer_t *layer, int32_t tactic,
                                     mica_error_t *err)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    return mica__conv_gpu_set_tactic(l->gpu, l->p.deconv, tactic, err);
}

#define CONV_OPS_GPU(...)                                                   \
    CONV_OPS(conv_enqueue_gpu, conv_formats_gpu,                            \
             .configure = conv_configure_gpu,                               \
             .workspace_size = conv_workspace_gpu,                          \
             .initialize = conv_initialize_gpu, __VA_ARGS__)

const mica_layer_ops_t mica__conv_ops_gpu = CONV_OPS_GPU(.tactics = NULL);
/* cuDNN's algorithms are the tactics (conv.h). */
const mica_layer_ops_t mica__conv_ops_cudnn =
    CONV_OPS_GPU(.tactics = conv_tactics, .set_tactic = conv_set_tactic);
#endif

/* ---- create ------------------------------------------------------------- */

static void conv_fini(mica_kit_layer_t *self)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)self;
#ifdef MICA_HAVE_ONEDNN
    mica__conv_dnnl_free(l->dnnl);
#endif
#if MICA_KIT_CUDA
    mica__conv_gpu_free(l->gpu);
#endif
    l->dnnl = NULL;
    l->gpu = NULL;
}

mica_layer_t *mica__conv_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    const mica__conv_impl_t *impl = creator->user_data;
    mica__conv_params_t p;
    mica__conv_layer_t *l;

    if (mica__conv_params_read(fields, impl->deconv, &p, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, impl->ops, creator, name, fields, err);
    if (!l)
        return NULL;
    l->impl = impl;
    l->base.fini = conv_fini;
#ifdef MICA_HAVE_ONEDNN
    /* oneDNN opened now: a missing library fails the build, saying so. */
    if (impl->kind == MICA__CONV_ONEDNN && mica__dnnl_open(err) != MICA_OK)
        goto fail;
#endif
    /* The weights must point into the layer's own fields. */
    if (mica__conv_params_read(mica_kit_fields_view(l->base.fields),
                               impl->deconv, &l->p, err) != MICA_OK)
        goto fail;
#if MICA_KIT_CUDA
    if (impl->kind == MICA__CONV_CUDA || impl->kind == MICA__CONV_CUDNN) {
        l->gpu = mica__conv_gpu_new(impl->kind == MICA__CONV_CUDNN);
        if (!l->gpu) {
            mica_kit_host->set_error(err, "out of host memory");
            goto fail;
        }
    }
#endif
    return &l->base.layer;
fail:
    mica_kit_layer_destroy(&l->base.layer);
    return NULL;
}
