/*
 * modules/lrn/lrn.c - the LRN layer (TensorRT's ILRNLayer): local
 * response normalization across channels.  Params, shapes, the CPU
 * reference and the creators.
 *
 * One input [..., C, H, W] (float32 or float16, rank >= 3), one output
 * of its shape and type:
 *   y[c] = x[c] / (k + alpha / window * sum of x[c']^2) ^ beta
 * over the channels c' from c - (window-1)/2 to c + (window-1)/2 that
 * exist (the convention of TensorRT's ONNX parser and cuDNN).  TensorRT's
 * ranges: window odd in 1..15, alpha in [-1e20, 1e20], beta in [0.01,
 * 1e5], k in [1e-5, 1e10].  Defaults (ONNX's): alpha 1e-4, beta 0.75,
 * k 1.  The reference computes in double and rounds once.
 *
 * Implementations: "reference" (CPU, 0), "onednn" (CPU, 5; also a 4-D
 * x and y both channels last, as oneDNN's nhwc), "cuda" (CUDA,
 * 10, lrn_cuda.cu), "cudnn" (CUDA, 20; the kernel for params cuDNN
 * refuses, decided at configure time: lrn_cudnn.c).
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "kit_nn.h"
#include "lrn.h"

typedef struct lrn_layer {
    mica_kit_layer_t base;
    mica__lrn_params_t p;
    mica__lrn_exact_t exact; /* the params as written, for cuDNN */
    mica__lrn_dnnl_t *dnnl;
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__lrn_dnn_t *dnn;    /* cudnn: made by configure */
#endif
} lrn_layer_t;

static const double d_alpha = 1e-4, d_beta = 0.75, d_k = 1.0;

static const mica_field_schema_t lrn_fields[] = {
    {"window", MICA_FIELD_INT, 1, 1, 0, NULL, NULL,
     "channels summed: odd, 1 to 15"},
    {"alpha", MICA_FIELD_FLOAT, 1, 0, 1, &d_alpha, NULL,
     "scale of the sum of squares, [-1e20, 1e20] (default 1e-4)"},
    {"beta", MICA_FIELD_FLOAT, 1, 0, 1, &d_beta, NULL,
     "exponent, [0.01, 1e5] (default 0.75)"},
    {"k", MICA_FIELD_FLOAT, 1, 0, 1, &d_k, NULL,
     "offset, [1e-5, 1e10] (default 1)"},
};

static void problem(const lrn_layer_t *l, const mica_tensor_desc_t *x,
                    mica__lrn_problem_t *pb)
{
    int32_t r = x->dims.nb_dims, i;

    memset(pb, 0, sizeof *pb);
    pb->p = l->p;
    pb->dtype = x->dtype;
    pb->n = 1;
    for (i = 0; i < r - 3; i++)
        pb->n *= x->dims.d[i];
    pb->c = x->dims.d[r - 3];
    pb->hw = x->dims.d[r - 2] * x->dims.d[r - 1];
    pb->cl = x->format == MICA_FORMAT_HWC;
}

#ifdef MICA_HAVE_ONEDNN
/* onednn's formats: as the others', or x and y both channels last (4-D
 * only: oneDNN's nhwc LRN, no reorder). */
static int32_t lrn_formats_dnnl(const mica_layer_t *layer, int32_t pos,
                                const mica_tensor_desc_t *io, int32_t nb_in,
                                int32_t nb_out)
{
    if (nb_in == 1 && nb_out == 1 && (pos == 0 || pos == 1) &&
        io[pos].format == MICA_FORMAT_HWC && io[pos].dims.nb_dims == 4 &&
        (io[pos].dtype == MICA_FLOAT32 || io[pos].dtype == MICA_FLOAT16))
        return pos == 0 || (io[1].dtype == io[0].dtype &&
                            io[0].format == MICA_FORMAT_HWC);
    if (pos == 1 && io[0].format != MICA_FORMAT_LINEAR)
        return 0; /* x and y in one layout */
    return mica_kit_float_linear(layer, pos, io, nb_in, nb_out);
}
#endif

static void lrn_reference(const mica__lrn_problem_t *pb, const void *x,
                          void *y)
{
    int64_t half = (pb->p.window - 1) / 2, n, c, s, j;

    for (n = 0; n < pb->n; n++)
        for (c = 0; c < pb->c; c++)
            for (s = 0; s < pb->hw; s++) {
                int64_t at = (n * pb->c + c) * pb->hw + s;
                double sum = 0.0, v;
                for (j = c - half; j <= c + half; j++)
                    if (j >= 0 && j < pb->c) {
                        double e = mica__nn_get(
                            x, pb->dtype, (n * pb->c + j) * pb->hw + s);
                        sum += e * e;
                    }
                v = mica__nn_get(x, pb->dtype, at) /
                    pow((double)pb->p.k +
                            (double)pb->p.alpha / pb->p.window * sum,
                        (double)pb->p.beta);
                mica__nn_put(y, pb->dtype, at, v);
            }
}

static mica_status_t lrn_output_dims(const mica_layer_t *layer, int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out,
                                     mica_error_t *err)
{
    if (nb_in == 1 && in[0].nb_dims < 3)
        return MICA_KIT_FAIL(err, "input has rank %d but LRN needs rank >= 3 "
                             "([..., C, H, W])", (int)in[0].nb_dims);
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

static MICA_KIT_ENQUEUE(lrn_enqueue_ref)
{
    mica__lrn_problem_t pb;
    problem((const lrn_layer_t *)layer, &in[0], &pb);
    lrn_reference(&pb, inputs[0], outputs[0]);
    return MICA_OK;
}

#ifdef MICA_HAVE_ONEDNN
static MICA_KIT_ENQUEUE(lrn_enqueue_dnnl)
{
    lrn_layer_t *l = (lrn_layer_t *)layer;
    mica__lrn_problem_t pb;
    problem(l, &in[0], &pb);
    return mica__lrn_dnnl_run(&l->dnnl, &pb, inputs[0], outputs[0], err);
}
#endif

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(lrn_enqueue_cuda)
{
    mica__lrn_problem_t pb;
    problem((const lrn_layer_t *)layer, &in[0], &pb);
    return mica__lrn_cuda(&pb, inputs[0], outputs[0], stream, err);
}
#endif

#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
/* cudnn: whether cuDNN takes the params is decided here, once. */
static mica_status_t lrn_configure_cudnn(mica_layer_t *layer,
                                         const mica_dyn_desc_t *in,
                                         int32_t nb_in,
                                         const mica_dyn_desc_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    lrn_layer_t *l = (lrn_layer_t *)layer;
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return mica__lrn_dnn_configure(&l->dnn, &l->exact, err);
}

static MICA_KIT_ENQUEUE(lrn_enqueue_cudnn)
{
    lrn_layer_t *l = (lrn_layer_t *)layer;
    mica__lrn_problem_t pb;
    mica_status_t st;

    /* Configured already, unless run without configure. */
    if ((st = mica__lrn_dnn_configure(&l->dnn, &l->exact, err)) != MICA_OK)
        return st;
    problem(l, &in[0], &pb);
    return mica__lrn_cudnn(l->dnn, &pb, inputs[0], outputs[0], stream, err);
}
#endif

static void lrn_fini(mica_kit_layer_t *self)
{
    lrn_layer_t *l = (lrn_layer_t *)self;
#ifdef MICA_HAVE_ONEDNN
    mica__lrn_dnnl_free(l->dnnl);
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
    mica__lrn_dnn_free(l->dnn);
    l->dnn = NULL;
#endif
    l->dnnl = NULL;
}

/* Whether v lies in [lo, hi]; else the one-line refusal. */
static mica_status_t in_range(const char *name, double v, double lo,
                              double hi, mica_error_t *err)
{
    if (v >= lo && v <= hi)
        return MICA_OK;
    return MICA_KIT_FAIL(err, "%s is %g: it must be in [%g, %g]", name, v, lo,
                         hi);
}

static mica_layer_t *lrn_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    int64_t window = mica_kit_int(fields, "window", 0);
    double alpha = mica_kit_float(fields, "alpha", d_alpha);
    double beta = mica_kit_float(fields, "beta", d_beta);
    double k = mica_kit_float(fields, "k", d_k);
    lrn_layer_t *l;

    if (window < 1 || window > 15 || window % 2 == 0) {
        mica_kit_host->set_error(err, "window is %lld: it must be odd, from "
                                 "1 to 15", (long long)window);
        return NULL;
    }
    if (in_range("alpha", alpha, -1e20, 1e20, err) != MICA_OK ||
        in_range("beta", beta, 0.01, 1e5, err) != MICA_OK ||
        in_range("k", k, 1e-5, 1e10, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->p.window = (int32_t)window;
    l->p.alpha = (float)alpha;
    l->p.beta = (float)beta;
    l->p.k = (float)k;
    l->exact.window = (int32_t)window;
    l->exact.alpha = alpha;
    l->exact.beta = beta;
    l->exact.k = k;
    l->base.fini = lrn_fini;
    return &l->base.layer;
}

/* One implementation: its ops ops_<id_> (the enqueue and any other
 * members after it) and its creator creator_<id_>. */
#define LRN_IMPL(id_, impl_, dev_, prio_, formats_, ...)                    \
    static const mica_layer_ops_t ops_##id_ =                               \
        MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,        \
                     .output_dtypes = mica__nn_float_dtypes,                \
                     .output_dims = lrn_output_dims,                        \
                     .supports_format = formats_);                          \
    static const mica_layer_creator_t creator_##id_ = MICA_KIT_CREATOR(     \
        "LRN", impl_, dev_, prio_, MICA_ROLE_NONE, lrn_fields,              \
        MICA_KIT_COUNT(lrn_fields), lrn_create, &ops_##id_)

LRN_IMPL(ref, "reference", MICA_DEVICE_CPU, 0, mica_kit_float_linear,
         lrn_enqueue_ref);
#ifdef MICA_HAVE_ONEDNN
LRN_IMPL(dnnl, "onednn", MICA_DEVICE_CPU, 5, lrn_formats_dnnl,
         lrn_enqueue_dnnl);
#define DNNL_CREATOR , &creator_dnnl
#else
#define DNNL_CREATOR
#endif
#if MICA_KIT_CUDA
LRN_IMPL(cuda, "cuda", MICA_DEVICE_CUDA, 10, mica_kit_float_linear,
         lrn_enqueue_cuda);
#define CUDA_CREATOR , &creator_cuda
#else
#define CUDA_CREATOR
#endif
#if MICA_KIT_CUDA && defined(MICA_HAVE_CUDNN)
LRN_IMPL(cudnn, "cudnn", MICA_DEVICE_CUDA, 20, mica_kit_float_linear,
         lrn_enqueue_cudnn,
         .configure = lrn_configure_cudnn);
#define CUDNN_CREATOR , &creator_cudnn
#else
#define CUDNN_CREATOR
#endif

static const mica_layer_creator_t *const lrn_creators[] = {
    &creator_ref DNNL_CREATOR CUDA_CREATOR CUDNN_CREATOR};

MICA_KIT_ENTRY("lrn", PACKAGE_VERSION, "MIT",
               "LRN: local response normalization across channels",
               lrn_creators)
