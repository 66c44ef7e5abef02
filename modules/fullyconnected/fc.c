/*
 * modules/fullyconnected/fc.c - the FullyConnected layer (TensorRT's
 * IFullyConnectedLayer): params, shapes, the CPU reference and the
 * creators.
 *
 * One input of rank >= 3 (float32 or float16): its last three dimensions
 * [C, H, W] are flattened into C*H*W values, the dimensions before them
 * are batch dimensions; the output [..., K, 1, 1] of its type, with K =
 * num_outputs:  y[..., j] = bias[j] + sum_v x[..., v] * kernel[j, v].
 * kernel holds K*C*H*W values ([K, C*H*W] row-major, any declared
 * shape), bias K (optional); both float32 or float16.  With C*H*W = 0
 * the sums are empty: the output is the bias, zeros without one.  The
 * reference sums in double and rounds once.
 *
 * Implementations: "reference" (CPU, 0), "onednn" (CPU, 5), "cublas"
 * (CUDA, 20, fc_cublas.c).
 */
#include <config.h>

#include <string.h>

#include "kit_nn.h"
#include "fc.h"

typedef struct fc_layer {
    mica_kit_layer_t base;
    int64_t k;
    const mica_weights_t *kernel, *bias;
    mica__fc_dnnl_t *dnnl;
    mica__fc_gpu_t *gpu;
    mica_dtype_t io_dtype; /* cublas: the I/O type configured */
} fc_layer_t;

static const mica_field_schema_t fc_fields[] = {
    {"num_outputs", MICA_FIELD_INT, 1, 1, 0, NULL, NULL, "outputs K"},
    {"kernel", MICA_FIELD_WEIGHTS, 1, 1, 0, NULL, NULL,
     "weights [K, C*H*W], float32 or float16"},
    {"bias", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "K values added to the outputs (optional)"},
};

static void problem(const fc_layer_t *l, const mica_tensor_desc_t *x,
                    mica__fc_problem_t *pb)
{
    int32_t r = x->dims.nb_dims, i;

    memset(pb, 0, sizeof *pb);
    pb->dtype = x->dtype;
    pb->rows = 1;
    for (i = 0; i < r - 3; i++)
        pb->rows *= x->dims.d[i];
    pb->cols = x->dims.d[r - 3] * x->dims.d[r - 2] * x->dims.d[r - 1];
    pb->k = l->k;
    pb->kernel = l->kernel;
    pb->bias = l->bias;
}

static MICA_KIT_ENQUEUE(fc_enqueue_ref)
{
    mica__fc_problem_t pb;
    int64_t r, j, v;

    problem((const fc_layer_t *)layer, &in[0], &pb);
    for (r = 0; r < pb.rows; r++)
        for (j = 0; j < pb.k; j++) {
            double acc =
                pb.bias ? mica__nn_get(pb.bias->values, pb.bias->dtype, j) : 0;
            for (v = 0; v < pb.cols; v++)
                acc += mica__nn_get(inputs[0], pb.dtype, r * pb.cols + v) *
                       mica__nn_get(pb.kernel->values, pb.kernel->dtype,
                                    j * pb.cols + v);
            mica__nn_put(outputs[0], pb.dtype, r * pb.k + j, acc);
        }
    return MICA_OK;
}

/* ---- shapes ------------------------------------------------------------- */

/* The kernel against the input's last three dimensions d (C, H, W):
 * it must have num_outputs x C*H*W values.  Both products are checked,
 * a product past 64 bits being refused (no kernel has that many). */
static mica_status_t check_cols(const fc_layer_t *l, const int64_t *d,
                                mica_error_t *err)
{
    int64_t cols, want;

    if (__builtin_mul_overflow(d[0], d[1], &cols) ||
        __builtin_mul_overflow(cols, d[2], &cols))
        return MICA_KIT_FAIL(err, "the input's C*H*W (%lld x %lld x %lld) is "
                             "more than 2^63 - 1 values",
                             (long long)d[0], (long long)d[1],
                             (long long)d[2]);
    if (__builtin_mul_overflow(cols, l->k, &want))
        return MICA_KIT_FAIL(err, "kernel has %lld values but num_outputs "
                             "(%lld) x C*H*W of the input (%lld) is more "
                             "than 2^63 - 1",
                             (long long)l->kernel->count, (long long)l->k,
                             (long long)cols);
    if (want != l->kernel->count)
        return MICA_KIT_FAIL(err, "kernel has %lld values but num_outputs "
                             "(%lld) x C*H*W of the input (%lld) is %lld",
                             (long long)l->kernel->count, (long long)l->k,
                             (long long)cols, (long long)want);
    return MICA_OK;
}

static mica_status_t fc_output_dims(const mica_layer_t *layer, int32_t index,
                                    const mica_shape_expr_t *in,
                                    int32_t nb_in, mica_expr_builder_t *eb,
                                    mica_shape_expr_t *out, mica_error_t *err)
{
    const fc_layer_t *l = (const fc_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t r, i;
    int64_t d[3];
    mica_status_t st;

    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    r = in[0].nb_dims;
    if (r < 3)
        return MICA_KIT_FAIL(err, "input has rank %d but FullyConnected needs "
                             "rank >= 3 ([..., C, H, W])", (int)r);
    for (i = 0; i < 3 && h->expr_is_constant(in[0].d[r - 3 + i]); i++)
        d[i] = h->expr_constant_value(in[0].d[r - 3 + i]);
    if (i == 3 && (st = check_cols(l, d, err)) != MICA_OK)
        return st;
    for (i = 0; i < r - 3; i++)
        out->d[i] = in[0].d[i];
    out->d[r - 3] = h->expr_constant(eb, l->k);
    out->d[r - 2] = out->d[r - 1] = h->expr_constant(eb, 1);
    if (!out->d[r - 3] || !out->d[r - 1])
        return MICA_KIT_FAIL(err, "out of host memory");
    out->nb_dims = r;
    return MICA_OK;
}

static mica_status_t fc_configure(mica_layer_t *layer,
                                  const mica_dyn_desc_t *in, int32_t nb_in,
                                  const mica_dyn_desc_t *out, int32_t nb_out,
                                  mica_error_t *err)
{
    const fc_layer_t *l = (const fc_layer_t *)layer;
    const mica_dims_t *lo = &in[0].min, *hi = &in[0].max;
    int32_t r = lo->nb_dims;
    mica_status_t st;
    (void)nb_in; (void)out; (void)nb_out;

    if ((st = check_cols(l, &lo->d[r - 3], err)) != MICA_OK)
        return st;
    return check_cols(l, &hi->d[r - 3], err);
}

/* ---- oneDNN, cuBLAS ----------------------------------------------------- */

#ifdef MICA_HAVE_ONEDNN
static MICA_KIT_ENQUEUE(fc_enqueue_dnnl)
{
    fc_layer_t *l = (fc_layer_t *)layer;
    mica__fc_problem_t pb;
    problem(l, &in[0], &pb);
    return mica__fc_dnnl_run(&l->dnnl, &pb, inputs[0], outputs[0], err);
}
#endif

#if MICA_KIT_CUDA
static mica_status_t fc_configure_gpu(mica_layer_t *layer,
                                      const mica_dyn_desc_t *in,
                                      int32_t nb_in,
                                      const mica_dyn_desc_t *out,
                                      int32_t nb_out, mica_error_t *err)
{
    mica_status_t st = fc_configure(layer, in, nb_in, out, nb_out, err);
    if (st == MICA_OK)
        ((fc_layer_t *)layer)->io_dtype = in[0].desc.dtype;
    return st;
}

static mica_status_t fc_initialize_gpu(mica_layer_t *layer, void *stream,
                                       mica_error_t *err)
{
    fc_layer_t *l = (fc_layer_t *)layer;
    mica__fc_problem_t pb;
    (void)stream;

    memset(&pb, 0, sizeof pb);
    pb.dtype = l->io_dtype;
    pb.k = l->k;
    pb.kernel = l->kernel;
    pb.bias = l->bias;
    return mica__fc_gpu_init(l->gpu, &pb, err);
}

static size_t fc_workspace_gpu(const mica_layer_t *layer,
                               const mica_dyn_desc_t *in, int32_t nb_in,
                               const mica_dyn_desc_t *out, int32_t nb_out)
{
    (void)layer; (void)in; (void)nb_in; (void)out; (void)nb_out;
    return MICA__FC_CUBLAS_WORKSPACE;
}

static MICA_KIT_ENQUEUE(fc_enqueue_gpu)
{
    fc_layer_t *l = (fc_layer_t *)layer;
    mica__fc_problem_t pb;
    mica_status_t st;

    problem(l, &in[0], &pb);
    /* Uploaded by initialize, or here for a run without one (autotune's),
     * or again if the type changed. */
    if ((st = mica__fc_gpu_init(l->gpu, &pb, err)) != MICA_OK)
        return st;
    return mica__fc_gpu_run(l->gpu, &pb, inputs[0], outputs[0], workspace,
                            stream, err);
}
#endif

static void fc_fini(mica_kit_layer_t *self)
{
    fc_layer_t *l = (fc_layer_t *)self;
#ifdef MICA_HAVE_ONEDNN
    mica__fc_dnnl_free(l->dnnl);
#endif
#if MICA_KIT_CUDA
    mica__fc_gpu_free(l->gpu);
#endif
    l->dnnl = NULL;
    l->gpu = NULL;
}

static mica_layer_t *fc_create(const mica_layer_creator_t *creator,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    int64_t k = mica_kit_int(fields, "num_outputs", 0);
    const mica_weights_t *w = mica_kit_weights(fields, "kernel");
    const mica_weights_t *b = mica_kit_weights(fields, "bias");
    const mica_fields_t *own;
    fc_layer_t *l;

    if (k < 1) {
        mica_kit_host->set_error(err, "num_outputs is %lld: it must be >= 1",
                                 (long long)k);
        return NULL;
    }
    if (w->dtype != MICA_FLOAT32 && w->dtype != MICA_FLOAT16) {
        mica_kit_host->set_error(err, "kernel is %s: give float32 or float16 "
                                 "weights",
                                 mica_kit_host->dtype_name(w->dtype));
        return NULL;
    }
    if (w->count % k != 0) {
        mica_kit_host->set_error(err, "kernel has %lld values, not a multiple "
                                 "of num_outputs (%lld)", (long long)w->count,
                                 (long long)k);
        return NULL;
    }
    if (b && ((b->dtype != MICA_FLOAT32 && b->dtype != MICA_FLOAT16) ||
              b->count != k)) {
        mica_kit_host->set_error(err, "bias is %lld %s values: give %lld "
                                 "float32 or float16 values (num_outputs)",
                                 (long long)b->count,
                                 mica_kit_host->dtype_name(b->dtype),
                                 (long long)k);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    own = mica_kit_fields_view(l->base.fields);
    l->k = k;
    l->kernel = mica_kit_weights(own, "kernel");
    l->bias = mica_kit_weights(own, "bias");
    l->base.fini = fc_fini;
#if MICA_KIT_CUDA
    if (creator->devices & MICA_DEVICE_CUDA) {
        if (!(l->gpu = mica__fc_gpu_new())) {
            mica_kit_host->set_error(err, "out of host memory");
            mica_kit_layer_destroy(&l->base.layer);
            return NULL;
        }
    }
#endif
    return &l->base.layer;
}

#define FC_OPS(enqueue_, ...)                                               \
    MICA_KIT_OPS(enqueue_, .nb_outputs = mica_kit_one_output,               \
                 .output_dtypes = mica__nn_float_dtypes,                         \
                 .output_dims = fc_output_dims,                             \
                 .supports_format = mica_kit_float_linear, __VA_ARGS__)
#define FC_CREATOR(impl_, dev_, prio_, ops_)                                \
    MICA_KIT_CREATOR("FullyConnected", impl_, dev_, prio_, MICA_ROLE_NONE,  \
                     fc_fields, MICA_KIT_COUNT(fc_fields), fc_create,       \
                     &(ops_))

static const mica_layer_ops_t ops_ref =
    FC_OPS(fc_enqueue_ref, .configure = fc_configure);
static const mica_layer_creator_t creator_ref =
    FC_CREATOR("reference", MICA_DEVICE_CPU, 0, ops_ref);
#ifdef MICA_HAVE_ONEDNN
static const mica_layer_ops_t ops_dnnl =
    FC_OPS(fc_enqueue_dnnl, .configure = fc_configure);
static const mica_layer_creator_t creator_dnnl =
    FC_CREATOR("onednn", MICA_DEVICE_CPU, 5, ops_dnnl);
#define DNNL_CREATOR , &creator_dnnl
#else
#define DNNL_CREATOR
#endif
#if MICA_KIT_CUDA
static const mica_layer_ops_t ops_gpu =
    FC_OPS(fc_enqueue_gpu, .configure = fc_configure_gpu,
           .workspace_size = fc_workspace_gpu,
           .initialize = fc_initialize_gpu);
static const mica_layer_creator_t creator_gpu =
    FC_CREATOR("cublas", MICA_DEVICE_CUDA, 20, ops_gpu);
#define CUDA_CREATOR , &creator_gpu
#else
#define CUDA_CREATOR
#endif

static const mica_layer_creator_t *const fc_creators[] = {
    &creator_ref DNNL_CREATOR CUDA_CREATOR};

MICA_KIT_ENTRY("fullyconnected", PACKAGE_VERSION, "MIT",
               "FullyConnected: C*H*W to K outputs", fc_creators)
