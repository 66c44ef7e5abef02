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

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    r = in[0].nb_dims;
    cdim = r - p->win.nd - 1;
    c = cdim >= 0 ? in[0].d[cdim] : NULL;
    st = mica__conv_check_input(
        p, r, c ? mica_kit_host->expr_constant_value(c) : 0,
        c && mica_kit_host->expr_is_constant(c), err);
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
                                    const mica_dyn_desc_t *x,
                                    mica_error_t *err)
{
    int32_t r = x->desc.dims.nb_dims, cdim = r - l->p.win.nd - 1;
    mica_status_t st;

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
    (void)nb_in; (void)out; (void)nb_out;
    return conv_check_dyn((const mica__conv_layer_t *)layer, &in[0], err);
}

/* ---- the reference and oneDNN ------------------------------------------- */

static MICA_KIT_ENQUEUE(conv_enqueue_ref)
{
    const mica__conv_layer_t *l = (const mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;

    mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    mica__conv_reference(&pb, inputs[0], outputs[0]);
    return MICA_OK;
}

#define CONV_OPS(enqueue_, formats_, ...)                                   \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = mica__nn_float_dtypes,                       \
                 .output_dims = conv_output_dims,                           \
                 .supports_format = (formats_), __VA_ARGS__)

const mica_layer_ops_t mica__conv_ops_ref = CONV_OPS(
    conv_enqueue_ref, mica_kit_float_linear, .configure = conv_configure);

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
    (void)nb_in; (void)out; (void)nb_out;

    if ((st = conv_check_dyn(l, &in[0], err)) != MICA_OK)
        return st;
    l->io_dtype = in[0].desc.dtype;
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
    return mica__conv_gpu_init(l->gpu, &l->p, l->io_dtype, err);
}

static MICA_KIT_ENQUEUE(conv_enqueue_gpu)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;
    mica_status_t st;

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
