/*
 * modules/pooling/pooling.c - the Pooling layer (TensorRT's
 * IPoolingLayer): params, shapes, the CPU reference and the creators.
 *
 * One input [..., (D,) H, W] (float32 or float16, rank >= 3 for 2D, 4 for
 * 3D: the dimensions before the spatial ones are planes pooled on their
 * own), one output of its type.  window_size (2 or 3 values) decides 2D
 * or 3D; stride defaults to 1, padding to 0.
 *
 * Each output element pools the window's positions inside the input:
 *   max      their maximum; -inf when the window lies wholly in the
 *            padding (as the seed says);
 *   average  their sum divided by their count with
 *            average_count_excludes_padding (the default; a window wholly
 *            in the padding gives 0), else by the window's size (the
 *            padded positions count as zeros);
 *   max_average_blend  (1 - blend_factor) * max + blend_factor * average
 *            (the max term left out when blend_factor is 1).
 * The reference sums in double and rounds once.
 *
 * Implementations: "reference" (CPU, 0), "onednn" (CPU, 5), "cuda" (CUDA,
 * 10, pool_cuda.cu) and "cudnn" (CUDA, 20: cuDNN where it computes the
 * same, else the cuda kernel).  The CUDA ones also take 2D input in
 * channels last (NHWC, see pooling.h).
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "kit_nn.h"
#include "pooling.h"

typedef struct pool_layer {
    mica_kit_layer_t base;
    mica__pool_params_t p;
    mica__pool_dnnl_t *dnnl;
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__pool_dnn_t *dnn;   /* cudnn: made by the first run */
#endif
} pool_layer_t;

static const char *const pool_types[] = {"max", "average",
                                         "max_average_blend", NULL};
static const double zero = 0.0;
static const int64_t yes = 1;

static const mica_field_schema_t pool_fields[] = {
    {"type", MICA_FIELD_ENUM, 1, 1, 0, NULL, pool_types,
     "max, average or max_average_blend"},
    MICA__WINDOW_FIELDS("window_size", "window: 2 values (2D) or 3 (3D)"),
    {"blend_factor", MICA_FIELD_FLOAT, 1, 0, 1, &zero, NULL,
     "max_average_blend: (1 - f) * max + f * average, f in [0, 1]"},
    {"average_count_excludes_padding", MICA_FIELD_BOOL, 1, 0, 1, &yes, NULL,
     "average over the window's positions inside the input (default true) "
     "or over the whole window"},
    MICA__WINDOW_FIELD("dilation", "spacing of the window's positions per "
                       "spatial dimension (default 1; beyond TensorRT, for "
                       "ONNX)"),
};

/* ---- the problem and the reference -------------------------------------- */

void mica__pool_problem(const mica__pool_params_t *p,
                        const mica_tensor_desc_t *xd,
                        mica__pool_problem_t *pb)
{
    const mica_dims_t *x = &xd->dims;
    int32_t r = x->nb_dims, nd = p->win.nd, i;

    memset(pb, 0, sizeof *pb);
    pb->p = p;
    pb->dtype = xd->dtype;
    /* [N, C, spatial...] by mica__window_formats */
    pb->chans = mica__window_channels(xd) ? x->d[1] : 1;
    pb->planes = 1;
    for (i = 0; i < r - nd; i++)
        pb->planes *= x->d[i];
    for (i = 0; i < 3; i++)
        pb->in[i] = pb->out[i] = 1;
    for (i = 0; i < nd; i++) {
        pb->in[3 - nd + i] = x->d[r - nd + i];
        pb->out[3 - nd + i] =
            mica__window_out(&p->win, 3 - nd + i, x->d[r - nd + i]);
    }
}

int mica__pool_has_empty_window(const mica__pool_problem_t *pb)
{
    const mica__window_t *w = &pb->p->win;
    int i;
    /* Only the first or the last window along a dimension can. */
    for (i = 0; i < 3; i++)
        if (pb->out[i] > 0 &&
            (w->pre[i] >= mica__window_extent(w, i) ||
             (pb->out[i] - 1) * w->stride[i] - w->pre[i] >= pb->in[i]))
            return 1;
    return 0;
}

/* The offset of the element of plane `plane` at pos[3] in a tensor of
 * spatial sizes s[3]: planes one after the other, or in channels last
 * (pb->chans > 1) [N, (D,) H, W, C] with plane n * C + c. */
static int64_t offset(const mica__pool_problem_t *pb, const int64_t *s,
                      int64_t plane, const int64_t *pos)
{
    int64_t c = pb->chans, sp = (pos[0] * s[1] + pos[1]) * s[2] + pos[2];
    if (c <= 1)
        return plane * s[0] * s[1] * s[2] + sp;
    return ((plane / c) * s[0] * s[1] * s[2] + sp) * c + plane % c;
}

/* One output element of plane `plane` at z[3]. */
static double pool_at(const mica__pool_problem_t *pb, const void *x,
                      int64_t plane, const int64_t *z)
{
    const mica__pool_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    int64_t a[3], pos[3], valid = 0;
    double mx = -INFINITY, sum = 0.0, avg, size = 1.0;
    int d;

    /* in double: three window lengths (each below 2^31) may multiply
     * past 64 bits */
    for (d = 0; d < 3; d++)
        size *= (double)w->k[d];
    for (a[0] = 0; a[0] < w->k[0]; a[0]++)
        for (a[1] = 0; a[1] < w->k[1]; a[1]++)
            for (a[2] = 0; a[2] < w->k[2]; a[2]++) {
                int inside = 1;
                double v;
                for (d = 0; d < 3; d++) {
                    pos[d] = z[d] * w->stride[d] - w->pre[d] +
                             a[d] * w->dil[d];
                    inside &= pos[d] >= 0 && pos[d] < pb->in[d];
                }
                if (!inside)
                    continue;
                v = mica__nn_get(x, pb->dtype,
                                 offset(pb, pb->in, plane, pos));
                mx = v > mx ? v : mx;
                sum += v;
                valid++;
            }
    if (p->exclude_pad)
        avg = valid ? sum / (double)valid : 0.0;
    else
        avg = sum / size;
    switch (p->type) {
    case MICA__POOL_MAX: return mx;
    case MICA__POOL_AVERAGE: return avg;
    default:
        return (p->blend == 1.0f ? 0.0 : (1.0 - p->blend) * mx) +
               p->blend * avg;
    }
}

void mica__pool_reference(const mica__pool_problem_t *pb, const void *x,
                          void *y)
{
    int64_t plane, z[3];

    for (plane = 0; plane < pb->planes; plane++)
        for (z[0] = 0; z[0] < pb->out[0]; z[0]++)
            for (z[1] = 0; z[1] < pb->out[1]; z[1]++)
                for (z[2] = 0; z[2] < pb->out[2]; z[2]++)
                    mica__nn_put(y, pb->dtype, offset(pb, pb->out, plane, z),
                                 pool_at(pb, x, plane, z));
}

/* ---- shapes ------------------------------------------------------------- */

static mica_status_t pool_output_dims(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      mica_shape_expr_t *out,
                                      mica_error_t *err)
{
    const pool_layer_t *l = (const pool_layer_t *)layer;
    int32_t r = in[0].nb_dims, nd = l->p.win.nd, i;

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    if (r < nd + 1)
        return MICA_KIT_FAIL(err, "input has rank %d but a %dD Pooling needs "
                             "rank >= %d", (int)r, (int)nd, (int)(nd + 1));
    for (i = 0; i < r - nd; i++)
        out->d[i] = in[0].d[i];
    out->nb_dims = r;
    return mica__window_dims(&l->p.win, &in[0], r - nd, eb, out, err);
}

static mica_status_t pool_configure(mica_layer_t *layer,
                                    const mica_dyn_desc_t *in, int32_t nb_in,
                                    const mica_dyn_desc_t *out,
                                    int32_t nb_out, mica_error_t *err)
{
    const pool_layer_t *l = (const pool_layer_t *)layer;
    (void)nb_in; (void)out; (void)nb_out;
    return mica__window_check(&l->p.win, &in[0].min,
                              in[0].desc.dims.nb_dims - l->p.win.nd, err);
}

/* ---- enqueues ----------------------------------------------------------- */

static MICA_KIT_ENQUEUE(pool_enqueue_ref)
{
    const pool_layer_t *l = (const pool_layer_t *)layer;
    mica__pool_problem_t pb;

    mica__pool_problem(&l->p, &in[0], &pb);
    mica__pool_reference(&pb, inputs[0], outputs[0]);
    return MICA_OK;
}

#ifdef MICA_HAVE_ONEDNN
static MICA_KIT_ENQUEUE(pool_enqueue_dnnl)
{
    pool_layer_t *l = (pool_layer_t *)layer;
    mica__pool_problem_t pb;

    mica__pool_problem(&l->p, &in[0], &pb);
    return mica__pool_dnnl_run(&l->dnnl, &pb, inputs[0], outputs[0], err);
}
#endif

#if MICA_KIT_CUDA || defined(MICA_HAVE_ONEDNN)
/* Linear, and channels last (NHWC) for 2D pooling of [N, C, H, W]: the
 * kernel's and cuDNN's NHWC, oneDNN's nhwc (where a window lies wholly
 * in the padding, the reference's, which takes either layout); 3D stays
 * linear (docs/manifest.md). */
static int32_t pool_formats_cl(const mica_layer_t *layer, int32_t pos,
                               const mica_tensor_desc_t *io, int32_t nb_in,
                               int32_t nb_out)
{
    const mica__window_t *w = &((const pool_layer_t *)layer)->p.win;
    return mica__window_formats(w, w->nd == 2, io, pos, nb_in, nb_out);
}
#endif

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(pool_enqueue_cuda)
{
    const pool_layer_t *l = (const pool_layer_t *)layer;
    mica__pool_problem_t pb;

    mica__pool_problem(&l->p, &in[0], &pb);
    return mica__pool_cuda(&pb, inputs[0], outputs[0], stream, err);
}
#endif

#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
static MICA_KIT_ENQUEUE(pool_enqueue_cudnn)
{
    pool_layer_t *l = (pool_layer_t *)layer;
    mica__pool_problem_t pb;

    mica__pool_problem(&l->p, &in[0], &pb);
    if (!mica__pool_cudnn_takes(&pb))
        return mica__pool_cuda(&pb, inputs[0], outputs[0], stream, err);
    return mica__pool_cudnn(&l->dnn, &pb, inputs[0], outputs[0], stream,
                            err);
}
#endif

/* ---- create and the creators -------------------------------------------- */

static void pool_fini(mica_kit_layer_t *self)
{
    pool_layer_t *l = (pool_layer_t *)self;
#ifdef MICA_HAVE_ONEDNN
    mica__pool_dnnl_free(l->dnnl);
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__pool_dnn_free(l->dnn);
    l->dnn = NULL;
#endif
    l->dnnl = NULL;
}

static mica_status_t read_params(const mica_fields_t *f,
                                 mica__pool_params_t *p, mica_error_t *err)
{
    double blend = mica_kit_float(f, "blend_factor", 0.0);

    memset(p, 0, sizeof *p);
    p->type = (int32_t)mica_kit_int(f, "type", MICA__POOL_MAX);
    p->exclude_pad =
        mica_kit_int(f, "average_count_excludes_padding", 1) != 0;
    if (!(blend >= 0.0 && blend <= 1.0))
        return MICA_KIT_FAIL(err, "blend_factor is %g: it must be in [0, 1]",
                             blend);
    p->blend = (float)blend;
    return mica__window_read(f, "window_size", 1, 0, &p->win, err);
}

static mica_layer_t *pool_create(const mica_layer_creator_t *creator,
                                 const char *name,
                                 const mica_fields_t *fields,
                                 mica_error_t *err)
{
    mica__pool_params_t p;
    pool_layer_t *l;

    if (read_params(fields, &p, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->p = p;
    l->base.fini = pool_fini;
    return &l->base.layer;
}

#define POOL_OPS(enqueue_, formats_)                                        \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = mica__nn_float_dtypes,                    \
                 .output_dims = pool_output_dims,                           \
                 .supports_format = (formats_),                             \
                 .configure = pool_configure)
/* One implementation: its ops ops_<id_> and its creator creator_<id_>. */
#define POOL_IMPL(id_, impl_, dev_, prio_, enqueue_, formats_)              \
    static const mica_layer_ops_t ops_##id_ = POOL_OPS(enqueue_, formats_); \
    static const mica_layer_creator_t creator_##id_ = MICA_KIT_CREATOR(     \
        "Pooling", impl_, dev_, prio_, MICA_ROLE_NONE, pool_fields,         \
        MICA_KIT_COUNT(pool_fields), pool_create, &ops_##id_)

POOL_IMPL(ref, "reference", MICA_DEVICE_CPU, 0, pool_enqueue_ref,
          mica_kit_float_linear);
#ifdef MICA_HAVE_ONEDNN
POOL_IMPL(dnnl, "onednn", MICA_DEVICE_CPU, 5, pool_enqueue_dnnl,
          pool_formats_cl);
#define DNNL_CREATOR , &creator_dnnl
#else
#define DNNL_CREATOR
#endif
#if MICA_KIT_CUDA
POOL_IMPL(cuda, "cuda", MICA_DEVICE_CUDA, 10, pool_enqueue_cuda,
          pool_formats_cl);
#define CUDA_CREATOR , &creator_cuda
#else
#define CUDA_CREATOR
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
POOL_IMPL(cudnn, "cudnn", MICA_DEVICE_CUDA, 20, pool_enqueue_cudnn,
          pool_formats_cl);
#define CUDNN_CREATOR , &creator_cudnn
#else
#define CUDNN_CREATOR
#endif

static const mica_layer_creator_t *const pool_creators[] = {
    &creator_ref DNNL_CREATOR CUDA_CREATOR CUDNN_CREATOR};

MICA_KIT_ENTRY("pooling", PACKAGE_VERSION, "MIT",
               "Pooling: max, average and their blend, 2D and 3D",
               pool_creators)
