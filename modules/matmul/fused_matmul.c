/*
 * modules/matmul/fused_matmul.c - the FusedMatrixMultiply layer: a
 * product by constant weights with its bias, a residual sum and an
 * activation, what the fusion rules of fused_rules.c make of a
 * MatrixMultiply by a Constant and the ElementWise and Activation layers
 * after it (a transformer's linear layers; ONNX Runtime's MatMul + Add +
 * activation fusions, TensorRT's fused GEMM epilogues):
 *
 *     y[..., m, n] = act(sum_k x[..., m, k] w[k, n] + bias[n] + r[..., m, n])
 *
 * x [..., M, K] (float32 or float16, rank 2 or more), the optional
 * residual r of y's shape and type; y [..., M, N] of x's type.  Params:
 * `weights` (K * N float32 values, [K, N] row-major, or [N, K] with
 * `op_b: transpose`; N is their count over K), `bias` (optional, N
 * values or one, float32), `activation` (none, relu, gelu_erf,
 * gelu_tanh).  The reference sums in double and rounds once; "onednn"
 * (float32) runs oneDNN's matmul, then the epilogue over the rows while
 * they are in cache.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "mica/kit.h"
#include "kit_cpu.h"
#include "kit_nn.h"
#include "matmul.h"

enum { ACT_NONE = 0, ACT_RELU, ACT_GELU_ERF, ACT_GELU_TANH };

static const char *const act_names[] = {"none", "relu", "gelu_erf",
                                        "gelu_tanh", NULL};
static const char *const opb_names[] = {"none", "transpose", NULL};
static const int64_t zero = 0;

static const mica_field_schema_t fmm_fields[] = {
    {"weights", MICA_FIELD_WEIGHTS, 1, 1, 0, NULL, NULL,
     "[K, N] (or [N, K] with op_b: transpose), float32"},
    {"bias", MICA_FIELD_WEIGHTS, 1, 0, 0, NULL, NULL,
     "N values (or one) added to each row, float32 (optional)"},
    {"op_b", MICA_FIELD_ENUM, 1, 0, 1, &zero, opb_names,
     "none: weights [K, N]; transpose: [N, K]"},
    {"activation", MICA_FIELD_ENUM, 1, 0, 1, &zero, act_names,
     "applied last: none, relu, gelu_erf, gelu_tanh"},
};

typedef struct fmm_layer {
    mica_kit_layer_t base;
    const mica_weights_t *w, *bias;
    int32_t trans_b, act;
    mica__mm_dnnl_t *dnnl;
} fmm_layer_t;

/* The product's inner size K of input x (its last dimension), checked
 * against the weights: N, or -1 with the error set. */
static int64_t outputs_of(const fmm_layer_t *l, int64_t k, mica_error_t *err)
{
    if (k <= 0 || l->w->count % k != 0) {
        mica_kit_host->set_error(err, "the %lld weights are no whole "
                                 "number of rows of x's %lld values",
                                 (long long)l->w->count, (long long)k);
        return -1;
    }
    if (l->bias && l->bias->count != 1 &&
        l->bias->count != l->w->count / k) {
        mica_kit_host->set_error(err, "the bias has %lld values, neither 1 "
                                 "nor the %lld outputs",
                                 (long long)l->bias->count,
                                 (long long)(l->w->count / k));
        return -1;
    }
    return l->w->count / k;
}

/* ---- types and shapes ---------------------------------------------------- */

static mica_status_t fmm_dtypes(const mica_layer_t *layer,
                                const mica_dtype_t *in, int32_t nb_in,
                                mica_dtype_t *out, int32_t nb_out,
                                mica_error_t *err)
{
    (void)layer;
    if (nb_in < 1 || nb_in > 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 1 or 2 inputs (x, residual) and "
                             "gives 1 output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (in[0] != MICA_FLOAT32 && in[0] != MICA_FLOAT16)
        return MICA_KIT_FAIL(err, "x must be float32 or float16, got %s",
                             mica_kit_host->dtype_name(in[0]));
    if (nb_in == 2 && in[1] != in[0])
        return MICA_KIT_FAIL(err, "the residual is %s but x is %s",
                             mica_kit_host->dtype_name(in[1]),
                             mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t fmm_dims(const mica_layer_t *layer, int32_t index,
                              const mica_shape_expr_t *in, int32_t nb_in,
                              mica_expr_builder_t *eb,
                              mica_shape_expr_t *out, mica_error_t *err)
{
    const fmm_layer_t *l = (const fmm_layer_t *)layer;
    const mica_expr_t *k;
    int64_t n;
    int32_t r = in[0].nb_dims, i;

    (void)index;
    if (r < 2)
        return MICA_KIT_FAIL(err, "x must have rank 2 or more, got %d",
                             (int)r);
    k = in[0].d[r - 1];
    if (!mica_kit_host->expr_is_constant(k))
        return MICA_KIT_FAIL(err, "x's last dimension (the product's inner "
                             "size) must be known when the engine is "
                             "built");
    if ((n = outputs_of(l, mica_kit_host->expr_constant_value(k), err)) < 0)
        return MICA_ERR_INVALID;
    *out = in[0];
    if (!(out->d[r - 1] = mica_kit_host->expr_constant(eb, n)))
        return MICA_KIT_FAIL(err, "out of host memory");
    if (nb_in == 2) {
        if (in[1].nb_dims != r)
            return MICA_KIT_FAIL(err, "the residual has rank %d but y has "
                                 "%d", (int)in[1].nb_dims, (int)r);
        for (i = 0; i < r; i++) {
            const mica_expr_t *a = in[1].d[i], *b = out->d[i];
            if (mica_kit_host->expr_is_constant(a) &&
                mica_kit_host->expr_is_constant(b) &&
                mica_kit_host->expr_constant_value(a) !=
                    mica_kit_host->expr_constant_value(b))
                return MICA_KIT_FAIL(err, "dimension %d of the residual is "
                                     "%lld but y's is %lld", (int)i,
                                     (long long)mica_kit_host
                                         ->expr_constant_value(a),
                                     (long long)mica_kit_host
                                         ->expr_constant_value(b));
        }
    }
    return MICA_OK;
}

static int32_t fmm_formats(const mica_layer_t *layer, int32_t pos,
                           const mica_tensor_desc_t *io, int32_t nb_in,
                           int32_t nb_out)
{
    (void)layer;
    (void)nb_in;
    (void)nb_out;
    if (!mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return io[0].dtype == MICA_FLOAT32 || io[0].dtype == MICA_FLOAT16;
    return io[pos].dtype == io[0].dtype;
}

/* oneDNN's: float32 alone. */
static int32_t fmm_formats_f32(const mica_layer_t *layer, int32_t pos,
                               const mica_tensor_desc_t *io, int32_t nb_in,
                               int32_t nb_out)
{
    return fmm_formats(layer, pos, io, nb_in, nb_out) &&
           io[pos].dtype == MICA_FLOAT32;
}

/* ---- the epilogue --------------------------------------------------------- */

static double act_of(int32_t act, double v)
{
    switch (act) {
    case ACT_RELU: return v > 0.0 ? v : 0.0;
    case ACT_GELU_ERF: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752));
    case ACT_GELU_TANH:
        return 0.5 * v *
               (1.0 + tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    default: return v;
    }
}

static float act_of_f(int32_t act, float v)
{
    switch (act) {
    case ACT_RELU: return v > 0.0f ? v : 0.0f;
    case ACT_GELU_ERF:
        return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case ACT_GELU_TANH:
        return 0.5f * v *
               (1.0f + tanhf(0.79788456080286536f *
                             (v + 0.044715f * v * v * v)));
    default: return v;
    }
}

static float weight_f(const mica_weights_t *w, int64_t i)
{
    return w->count == 1 ? ((const float *)w->values)[0]
                         : ((const float *)w->values)[i];
}

/* ---- the CPU reference ------------------------------------------------------ */

static MICA_KIT_ENQUEUE(fmm_cpu)
{
    const fmm_layer_t *l = (const fmm_layer_t *)layer;
    const mica_dims_t *d = &in[0].dims;
    const float *w = (const float *)l->w->values;
    int64_t k = d->d[d->nb_dims - 1], rows = 1, n, r, j, c;
    int32_t i;

    (void)out;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if ((n = outputs_of(l, k, err)) < 0)
        return MICA_ERR_INVALID;
    for (i = 0; i < d->nb_dims - 1; i++)
        rows *= d->d[i];
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++) {
            double acc = 0.0;
            for (c = 0; c < k; c++)
                acc += mica__nn_get(inputs[0], in[0].dtype, r * k + c) *
                       (double)w[l->trans_b ? j * k + c : c * n + j];
            if (l->bias)
                acc += weight_f(l->bias, j);
            if (nb_in == 2)
                acc += mica__nn_get(inputs[1], in[0].dtype, r * n + j);
            mica__nn_put(outputs[0], in[0].dtype, r * n + j,
                         act_of(l->act, acc));
        }
    return MICA_OK;
}

#ifdef MICA_HAVE_ONEDNN
typedef struct epilogue {
    const fmm_layer_t *l;
    float *y;
    const float *res;
    int64_t n;
} epilogue_t;

/* Bias, residual and activation of rows [begin, end) of y (float32). */
static void epilogue_rows(void *ctx, int64_t begin, int64_t end)
{
    const epilogue_t *e = ctx;
    const fmm_layer_t *l = e->l;
    int64_t n = e->n, r, j;

    for (r = begin; r < end; r++) {
        float *yr = e->y + r * n;
        const float *rr = e->res ? e->res + r * n : NULL;
        if (l->bias && l->bias->count == n) {
            const float *b = (const float *)l->bias->values;
            for (j = 0; j < n; j++)
                yr[j] += b[j];
        } else if (l->bias) {
            float b = ((const float *)l->bias->values)[0];
            for (j = 0; j < n; j++)
                yr[j] += b;
        }
        if (rr)
            for (j = 0; j < n; j++)
                yr[j] += rr[j];
        if (l->act == ACT_RELU)
            for (j = 0; j < n; j++)
                yr[j] = yr[j] > 0.0f ? yr[j] : 0.0f;
        else if (l->act != ACT_NONE)
            for (j = 0; j < n; j++)
                yr[j] = act_of_f(l->act, yr[j]);
    }
}

/* oneDNN's product into y, then bias, residual and activation on the
 * layer's threads, row by row (float32). */
static MICA_KIT_ENQUEUE(fmm_dnnl)
{
    fmm_layer_t *l = (fmm_layer_t *)layer;
    const mica_dims_t *d = &in[0].dims;
    const float *res = nb_in == 2 ? (const float *)inputs[1] : NULL;
    float *y = (float *)outputs[0];
    int64_t k = d->d[d->nb_dims - 1], rows = 1, n;
    mica__mm_problem_t p;
    epilogue_t jb;
    mica_status_t st;
    int32_t i;

    (void)out;
    (void)nb_out;
    (void)workspace;
    (void)stream;
    if ((n = outputs_of(l, k, err)) < 0)
        return MICA_ERR_INVALID;
    for (i = 0; i < d->nb_dims - 1; i++)
        rows *= d->d[i];
    memset(&p, 0, sizeof p);
    p.dtype = MICA_FLOAT32;
    p.M = rows;
    p.N = n;
    p.K = k;
    p.trans_b = l->trans_b;
    if ((st = mica__matmul_dnnl_run(&l->dnnl, &p, inputs[0], l->w->values,
                                    y, err)) != MICA_OK)
        return st;
    if (!l->bias && !res && l->act == ACT_NONE)
        return MICA_OK;
    memset(&jb, 0, sizeof jb);
    jb.l = l;
    jb.y = y;
    jb.res = res;
    jb.n = n;
    mica__cpu_for(rows, MICA__CPU_GRAIN / (n + 1) + 1, epilogue_rows, &jb);
    return MICA_OK;
}
#endif

/* ---- creators ----------------------------------------------------------------- */

static void fmm_fini(mica_kit_layer_t *self)
{
#ifdef MICA_HAVE_ONEDNN
    fmm_layer_t *l = (fmm_layer_t *)self;
    mica__matmul_dnnl_free(l->dnnl);
    l->dnnl = NULL;
#else
    (void)self;
#endif
}

/* Whether every dimension of d but its last `keep` is 1 (no dims: yes). */
static int ones_before(const mica_dims_t *d, int32_t keep)
{
    int32_t i;
    for (i = 0; i < d->nb_dims - keep; i++)
        if (d->d[i] != 1)
            return 0;
    return 1;
}

static mica_layer_t *fmm_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    const mica_weights_t *w = mica_kit_weights(fields, "weights");
    const mica_weights_t *b = mica_kit_weights(fields, "bias");
    fmm_layer_t *l;

    if (!w || w->dtype != MICA_FLOAT32 || w->count < 1 || !w->values) {
        mica_kit_host->set_error(err, "weights must be float32 values");
        return NULL;
    }
    if (b && (b->dtype != MICA_FLOAT32 || b->count < 1 || !b->values)) {
        mica_kit_host->set_error(err, "the bias must be float32 values");
        return NULL;
    }
    if (!ones_before(&w->dims, 2) || (b && !ones_before(&b->dims, 1))) {
        mica_kit_host->set_error(err, "the weights must be one matrix and "
                                 "the bias one row (dimensions of 1 before "
                                 "them)");
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->w = w;
    l->bias = b;
    l->trans_b = mica_kit_int(fields, "op_b", 0) == 1;
    l->act = (int32_t)mica_kit_int(fields, "activation", ACT_NONE);
    l->base.fini = fmm_fini;
    return &l->base.layer;
}

#define FMM_OPS(fmt, ...)                                                   \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,            \
                 .output_dtypes = fmm_dtypes, .output_dims = fmm_dims,      \
                 .supports_format = fmt)

static const mica_layer_ops_t fmm_ops_cpu = FMM_OPS(fmm_formats, fmm_cpu);
const mica_layer_creator_t mica__fmm_reference = MICA_KIT_CREATOR(
    "FusedMatrixMultiply", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE,
    fmm_fields, MICA_KIT_COUNT(fmm_fields), fmm_create, &fmm_ops_cpu);
#ifdef MICA_HAVE_ONEDNN
static const mica_layer_ops_t fmm_ops_dnnl =
    FMM_OPS(fmm_formats_f32, fmm_dnnl);
const mica_layer_creator_t mica__fmm_onednn = MICA_KIT_CREATOR(
    "FusedMatrixMultiply", "onednn", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE,
    fmm_fields, MICA_KIT_COUNT(fmm_fields), fmm_create, &fmm_ops_dnnl);
#endif
