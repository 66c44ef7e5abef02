/*
 * modules/convolution/conv_layer.c - the layer instance of Convolution and
 * Deconvolution: shapes, and the ops of each implementation.
 *
 * The cudnn implementation keeps one more thing than its fields: the
 * cuDNN algorithm chosen at build time (the layer's tactic).  Its state
 * is the kit's byte form of the fields followed by a trailer of 16 bytes
 * (magic, version, algorithm, 0), which the kit's reader of the fields
 * ignores; a clone copies the algorithm.
 */
#include <config.h>

#include <string.h>

#include "conv_layer.h"
#ifdef MICA_HAVE_ONEDNN
#include "kit_onednn.h"
#endif

/* ---- shapes ------------------------------------------------------------- */

static mica_status_t conv_output_dtypes(const mica_layer_t *layer,
                                        const mica_dtype_t *in, int32_t nb_in,
                                        mica_dtype_t *out, int32_t nb_out,
                                        mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output, got %d "
                             "and %d", (int)nb_in, (int)nb_out);
    if (in[0] != MICA_FLOAT32 && in[0] != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "takes float32 or float16 input, got %s",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
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

#define CONV_OPS(enqueue_, ...)                                             \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = conv_output_dtypes,                       \
                 .output_dims = conv_output_dims,                           \
                 .supports_format = mica_kit_float_linear, __VA_ARGS__)

const mica_layer_ops_t mica__conv_ops_ref =
    CONV_OPS(conv_enqueue_ref, .configure = conv_configure);

#ifdef MICA_HAVE_ONEDNN
static MICA_KIT_ENQUEUE(conv_enqueue_dnnl)
{
    mica__conv_layer_t *l = (mica__conv_layer_t *)layer;
    mica__conv_problem_t pb;

    mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    return mica__conv_dnnl_run(&l->dnnl, &pb, inputs[0], outputs[0], err);
}

const mica_layer_ops_t mica__conv_ops_dnnl =
    CONV_OPS(conv_enqueue_dnnl, .configure = conv_configure);
#endif

/* ---- CUDA: cuda and cudnn ---------------------------------------------- */

#if MICA_KIT_CUDA
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

    /* The weights in the I/O type: uploaded by initialize, or here for a
     * run without one (autotune's), or again if the type changed. */
    if ((st = mica__conv_gpu_init(l->gpu, &l->p, in[0].dtype, err)) !=
        MICA_OK)
        return st;
    mica__conv_problem(&l->p, in[0].dtype, &in[0].dims, &pb);
    return mica__conv_gpu_run(l->gpu, &pb, inputs[0], outputs[0], workspace,
                              stream, err);
}

/* The cudnn state's trailer (see the file's comment). */
#define TRAILER_MAGIC 0x4156434du /* "MCVA" */
#define TRAILER_SIZE 16

static mica_status_t conv_serialize_gpu(const mica_layer_t *layer, void *buf,
                                        size_t *size)
{
    const mica__conv_layer_t *l = (const mica__conv_layer_t *)layer;
    uint32_t t[4] = {TRAILER_MAGIC, 1, 0, 0};
    size_t cap = buf ? *size : 0, n = 0;
    int32_t algo = mica__conv_gpu_algo(l->gpu);
    mica_status_t st;

    if (l->impl->kind != MICA__CONV_CUDNN)
        return mica_kit_layer_serialize(layer, buf, size);
    if ((st = mica_kit_layer_serialize(layer, NULL, &n)) != MICA_OK)
        return st;
    if (!buf) {
        *size = n + TRAILER_SIZE;
        return MICA_OK;
    }
    if (cap < n + TRAILER_SIZE)
        return MICA_ERR_INVALID;
    if ((st = mica_kit_layer_serialize(layer, buf, &n)) != MICA_OK)
        return st;
    memcpy(&t[2], &algo, sizeof algo);
    memcpy((char *)buf + n, t, sizeof t);
    *size = n + TRAILER_SIZE;
    return MICA_OK;
}

static mica_layer_t *conv_clone_gpu(const mica_layer_t *layer,
                                    mica_error_t *err)
{
    const mica__conv_layer_t *l = (const mica__conv_layer_t *)layer;
    mica_layer_t *copy = mica_kit_layer_clone(layer, err);

    if (copy)
        mica__conv_gpu_set_algo(((mica__conv_layer_t *)copy)->gpu,
                                mica__conv_gpu_algo(l->gpu));
    return copy;
}

mica_layer_t *mica__conv_deserialize_ex(const mica_layer_creator_t *c,
                                        const char *name, const void *data,
                                        size_t size, uint32_t flags,
                                        mica_error_t *err)
{
    mica_layer_t *layer =
        mica_kit_layer_deserialize_ex(c, name, data, size, flags, err);
    uint32_t t[4];
    int32_t algo;

    if (!layer || size < TRAILER_SIZE)
        return layer;
    memcpy(t, (const char *)data + size - TRAILER_SIZE, sizeof t);
    if (t[0] != TRAILER_MAGIC || t[1] != 1)
        return layer;
    memcpy(&algo, &t[2], sizeof algo);
    mica__conv_gpu_set_algo(((mica__conv_layer_t *)layer)->gpu, algo);
    return layer;
}

mica_layer_t *mica__conv_deserialize(const mica_layer_creator_t *c,
                                     const char *name, const void *data,
                                     size_t size, mica_error_t *err)
{
    return mica__conv_deserialize_ex(c, name, data, size, 0, err);
}

/* MICA_KIT_OPS but for serialize and clone, which keep the algorithm. */
const mica_layer_ops_t mica__conv_ops_gpu = {
    .struct_size = sizeof(mica_layer_ops_t),
    .nb_outputs = mica_kit_one_output,
    .output_dtypes = conv_output_dtypes,
    .output_dims = conv_output_dims,
    .supports_format = mica_kit_float_linear,
    .configure = conv_configure_gpu,
    .workspace_size = conv_workspace_gpu,
    .enqueue = conv_enqueue_gpu,
    .serialize = conv_serialize_gpu,
    .clone = conv_clone_gpu,
    .destroy = mica_kit_layer_destroy,
    .initialize = conv_initialize_gpu,
};
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
