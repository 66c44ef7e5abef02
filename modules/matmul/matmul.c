/*
 * modules/matmul/matmul.c - the MatrixMultiply layer (TensorRT's
 * IMatrixMultiplyLayer): C = op_a(A) * op_b(B).
 *
 * op (TensorRT's MatrixOperation): none, the last two dims are a matrix
 * (rank >= 2); transpose, the same, transposed; vector, the last dim is a
 * vector (rank >= 1), and that side's matrix dimension disappears from the
 * output: matrix*matrix -> matrix, matrix*vector -> vector, vector*matrix
 * -> vector, vector*vector -> scalar.  The other dims are batch dims: both
 * inputs must have the same number of them, and each pair is equal or one
 * of them is 1 (broadcast).  Output: the broadcast batch dims, then M (if
 * A is not a vector), then N (if B is not a vector).
 *
 * Types: float32 and float16, both inputs the same; the output has their
 * type.  The reference accumulates in double and rounds once; an empty
 * inner dimension (K = 0) gives zeros.  CPU implementation "onednn"
 * (priority 5, when built with oneDNN): see matmul_onednn.c; CUDA
 * implementation "cublas": see matmul_cublas.c.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "mica/kit.h"
#include "kit_nn.h"
#include "matmul.h"

enum { OP_NONE = 0, OP_TRANSPOSE = 1, OP_VECTOR = 2 };

typedef struct matmul_layer {
    mica_kit_layer_t base;
    int32_t op[2];
    void *handle; /* CUDA: the cuBLAS handle */
    mica__mm_dnnl_t *dnnl; /* onednn: the primitive of the last shapes */
} matmul_layer_t;

static const char *const matmul_ops[] = {"none", "transpose", "vector", NULL};
static const int64_t default_none = OP_NONE;

static const mica_field_schema_t matmul_fields[] = {
    {"op_a", MICA_FIELD_ENUM, 1, 0, 1, &default_none, matmul_ops,
     "how to treat input 0: none, transpose, vector"},
    {"op_b", MICA_FIELD_ENUM, 1, 0, 1, &default_none, matmul_ops,
     "how to treat input 1: none, transpose, vector"},
};

/* Number of matrix (or vector) dims of an operand. */
static int32_t mat_rank(int32_t op)
{
    return op == OP_VECTOR ? 1 : 2;
}

/* ---- shapes ------------------------------------------------------------- */

static mica_status_t matmul_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    (void)layer;
    if (nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 2 inputs, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

#define IS_C(e) mica_kit_host->expr_is_constant(e)
#define C_VAL(e) mica_kit_host->expr_constant_value(e)

static mica_status_t matmul_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const matmul_layer_t *l = (const matmul_layer_t *)layer;
    int32_t ra, rb, nba, nbb, i, n = 0;
    const mica_expr_t *ka, *kb;
    const mica_shape_expr_t *A = &in[0], *B = &in[1];

    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err, "takes 2 inputs and has 1 output");
    ra = A->nb_dims;
    rb = B->nb_dims;
    if (ra < mat_rank(l->op[0]))
        return MICA_KIT_FAIL(err,
                             "input 0 has rank %d but op_a '%s' needs rank "
                             ">= %d",
                             (int)ra, matmul_ops[l->op[0]],
                             (int)mat_rank(l->op[0]));
    if (rb < mat_rank(l->op[1]))
        return MICA_KIT_FAIL(err,
                             "input 1 has rank %d but op_b '%s' needs rank "
                             ">= %d",
                             (int)rb, matmul_ops[l->op[1]],
                             (int)mat_rank(l->op[1]));
    nba = ra - mat_rank(l->op[0]);
    nbb = rb - mat_rank(l->op[1]);
    if (nba != nbb)
        return MICA_KIT_FAIL(err,
                             "input 0 has %d batch dimensions (rank %d, op_a "
                             "'%s') but input 1 has %d (rank %d, op_b '%s')",
                             (int)nba, (int)ra, matmul_ops[l->op[0]], (int)nbb,
                             (int)rb, matmul_ops[l->op[1]]);
    ka = l->op[0] == OP_TRANSPOSE ? A->d[ra - 2] : A->d[ra - 1];
    kb = l->op[1] == OP_NONE ? B->d[rb - 2] : B->d[rb - 1];
    if (IS_C(ka) && IS_C(kb) && C_VAL(ka) != C_VAL(kb))
        return MICA_KIT_FAIL(err, "inner dimensions differ: input 0 has %lld "
                             "(op_a '%s') but input 1 has %lld (op_b '%s')",
                             (long long)C_VAL(ka), matmul_ops[l->op[0]],
                             (long long)C_VAL(kb), matmul_ops[l->op[1]]);
    for (i = 0; i < nba; i++) {
        const mica_expr_t *a = A->d[i], *b = B->d[i];
        if (IS_C(a) && IS_C(b)) {
            int64_t x = C_VAL(a), y = C_VAL(b);
            if (x != y && x != 1 && y != 1)
                return MICA_KIT_FAIL(err, "batch dimension %d differs: %lld in "
                                     "input 0, %lld in input 1 (equal or 1 to "
                                     "broadcast)", (int)i, (long long)x,
                                     (long long)y);
            out->d[n++] = x == 1 ? b : a;
        } else if (IS_C(a) && C_VAL(a) == 1) {
            out->d[n++] = b;
        } else if (IS_C(b) && C_VAL(b) == 1) {
            out->d[n++] = a;
        } else {
            out->d[n] = mica_kit_host->expr_operation(eb, MICA_EXPR_MAX, a, b);
            if (!out->d[n++])
                return MICA_KIT_FAIL(err, "out of host memory");
        }
    }
    if (l->op[0] != OP_VECTOR)
        out->d[n++] = l->op[0] == OP_NONE ? A->d[ra - 2] : A->d[ra - 1];
    if (l->op[1] != OP_VECTOR)
        out->d[n++] = l->op[1] == OP_NONE ? B->d[rb - 1] : B->d[rb - 2];
    out->nb_dims = n;
    return MICA_OK;
}

static int32_t matmul_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
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

/* The problem from run-time descriptors (shapes already checked). */
static void make_problem(const matmul_layer_t *l,
                         const mica_tensor_desc_t *in, mica__mm_problem_t *p)
{
    const mica_dims_t *A = &in[0].dims, *B = &in[1].dims;
    int32_t ra = A->nb_dims, rb = B->nb_dims, i;

    memset(p, 0, sizeof *p);
    p->dtype = in[0].dtype;
    p->nb = ra - mat_rank(l->op[0]);
    for (i = 0; i < p->nb; i++) {
        p->ba[i] = A->d[i];
        p->bb[i] = B->d[i];
        p->bo[i] = A->d[i] == 1 ? B->d[i] : A->d[i];
    }
    switch (l->op[0]) {
    case OP_NONE: p->M = A->d[ra - 2]; p->K = A->d[ra - 1]; break;
    case OP_TRANSPOSE:
        p->M = A->d[ra - 1]; p->K = A->d[ra - 2]; p->trans_a = 1;
        break;
    default: p->M = 1; p->K = A->d[ra - 1]; break;
    }
    switch (l->op[1]) {
    case OP_NONE: p->N = B->d[rb - 1]; break;
    case OP_TRANSPOSE: p->N = B->d[rb - 2]; p->trans_b = 1; break;
    default: p->N = 1; break;
    }
}

/* ---- the CPU reference -------------------------------------------------- */

static mica_status_t matmul_enqueue_cpu(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs, void *workspace,
                                        void *stream, mica_error_t *err)
{
    const matmul_layer_t *l = (const matmul_layer_t *)layer;
    mica__mm_problem_t p;
    int64_t astr[MICA_MAX_DIMS], bstr[MICA_MAX_DIMS], x, y, batch = 1;
    int64_t bi, m, n, k;
    int32_t i;
    (void)nb_in; (void)out; (void)nb_out; (void)workspace; (void)stream;
    (void)err;

    make_problem(l, in, &p);
    x = p.M * p.K;
    y = p.K * p.N;
    for (i = p.nb - 1; i >= 0; i--) {
        astr[i] = p.ba[i] == 1 ? 0 : x;
        bstr[i] = p.bb[i] == 1 ? 0 : y;
        x *= p.ba[i];
        y *= p.bb[i];
        batch *= p.bo[i];
    }
    for (bi = 0; bi < batch; bi++) {
        int64_t rest = bi, aoff = 0, boff = 0, coff = bi * p.M * p.N;
        for (i = p.nb - 1; i >= 0; i--) {
            int64_t c = rest % p.bo[i];
            rest /= p.bo[i];
            aoff += c * astr[i];
            boff += c * bstr[i];
        }
        for (m = 0; m < p.M; m++)
            for (n = 0; n < p.N; n++) {
                double acc = 0.0;
                for (k = 0; k < p.K; k++) {
                    int64_t ia = aoff + (p.trans_a ? k * p.M + m : m * p.K + k);
                    int64_t ib = boff + (p.trans_b ? n * p.K + k : k * p.N + n);
                    acc += mica__nn_get(inputs[0], p.dtype, ia) *
                           mica__nn_get(inputs[1], p.dtype, ib);
                }
                mica__nn_put(outputs[0], p.dtype, coff + m * p.N + n, acc);
            }
    }
    return MICA_OK;
}

/* The ops of both implementations: the enqueue, maybe more, then these. */
#define MATMUL_OPS(...)                                                      \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,             \
                 .output_dtypes = matmul_output_dtypes,                      \
                 .output_dims = matmul_output_dims,                          \
                 .supports_format = matmul_supports_format)

static const mica_layer_ops_t matmul_ops_cpu = MATMUL_OPS(matmul_enqueue_cpu);

#ifdef MICA_HAVE_ONEDNN
static MICA_KIT_ENQUEUE(matmul_enqueue_dnnl)
{
    matmul_layer_t *l = (matmul_layer_t *)layer;
    mica__mm_problem_t p;

    make_problem(l, in, &p);
    return mica__matmul_dnnl_run(&l->dnnl, &p, inputs[0], inputs[1],
                                 outputs[0], err);
}

static const mica_layer_ops_t matmul_ops_dnnl =
    MATMUL_OPS(matmul_enqueue_dnnl);
#endif

#if MICA_KIT_CUDA
static mica_status_t matmul_configure_cuda(mica_layer_t *layer,
                                           const mica_dyn_desc_t *in,
                                           int32_t nb_in,
                                           const mica_dyn_desc_t *out,
                                           int32_t nb_out, mica_error_t *err)
{
    matmul_layer_t *l = (matmul_layer_t *)layer;
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return mica__matmul_cuda_handle(&l->handle, err);
}

static size_t matmul_workspace_cuda(const mica_layer_t *layer,
                                    const mica_dyn_desc_t *in, int32_t nb_in,
                                    const mica_dyn_desc_t *out,
                                    int32_t nb_out)
{
    (void)layer; (void)in; (void)nb_in; (void)out; (void)nb_out;
    return MICA_MATMUL_CUBLAS_WORKSPACE;
}

static mica_status_t matmul_enqueue_cuda(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    matmul_layer_t *l = (matmul_layer_t *)layer;
    mica__mm_problem_t p;
    mica_status_t st;
    (void)nb_in; (void)out; (void)nb_out;

    if ((st = mica__matmul_cuda_handle(&l->handle, err)) != MICA_OK)
        return st;
    make_problem(l, in, &p);
    return mica__matmul_cuda(l->handle, &p, inputs[0], inputs[1], outputs[0],
                             workspace, workspace ? MICA_MATMUL_CUBLAS_WORKSPACE
                                                  : 0,
                             stream, err);
}

static const mica_layer_ops_t matmul_ops_cuda =
    MATMUL_OPS(matmul_enqueue_cuda, .configure = matmul_configure_cuda,
               .workspace_size = matmul_workspace_cuda);

#endif

static void matmul_fini(mica_kit_layer_t *self)
{
    matmul_layer_t *l = (matmul_layer_t *)self;
#if MICA_KIT_CUDA
    mica__matmul_cuda_destroy(l->handle);
#endif
#ifdef MICA_HAVE_ONEDNN
    mica__matmul_dnnl_free(l->dnnl);
#endif
    l->handle = NULL;
    l->dnnl = NULL;
}

static mica_layer_t *matmul_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    matmul_layer_t *l;
    int64_t a = mica_kit_int(fields, "op_a", OP_NONE);
    int64_t b = mica_kit_int(fields, "op_b", OP_NONE);

    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->op[0] = (int32_t)a;
    l->op[1] = (int32_t)b;
    l->base.fini = matmul_fini;
    return &l->base.layer;
}

/* The CUDA implementation is cuBLAS's: "cublas", not the pair's "cuda". */
static const mica_layer_creator_t matmul_reference = MICA_KIT_CREATOR(
    "MatrixMultiply", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE,
    matmul_fields, 2, matmul_create, &matmul_ops_cpu);
#ifdef MICA_HAVE_ONEDNN
static const mica_layer_creator_t matmul_onednn = MICA_KIT_CREATOR(
    "MatrixMultiply", "onednn", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE,
    matmul_fields, 2, matmul_create, &matmul_ops_dnnl);
#define DNNL_CREATOR , &matmul_onednn
#else
#define DNNL_CREATOR
#endif
#if MICA_KIT_CUDA
static const mica_layer_creator_t matmul_cublas = MICA_KIT_CREATOR(
    "MatrixMultiply", "cublas", MICA_DEVICE_CUDA, 10, MICA_ROLE_NONE,
    matmul_fields, 2, matmul_create, &matmul_ops_cuda);
#endif

#ifdef MICA_HAVE_ONEDNN
#define FMM_DNNL , &mica__fmm_onednn
#else
#define FMM_DNNL
#endif

static const mica_layer_creator_t *const matmul_creators[] = {
    &matmul_reference DNNL_CREATOR MICA_KIT_IF_CUDA(, &matmul_cublas),
    &mica__fmm_reference FMM_DNNL};

MICA_KIT_ENTRY_FUSION("matmul", PACKAGE_VERSION, "MIT",
                      "MatrixMultiply: batched matrix products; "
                      "FusedMatrixMultiply: by constant weights, with "
                      "bias, residual and activation, and its rules",
                      matmul_creators, mica__fmm_rules)
