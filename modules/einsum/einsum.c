/*
 * modules/einsum/einsum.c - the Einsum layer (TensorRT's IEinsumLayer):
 * creators, layer ops and the CPU reference.
 *
 * Inputs: one or more tensors (up to 16), all float32 or all float16 (or,
 * on the CPU reference, all float64);
 * one output of their type.  Field `equation` (required), parsed when
 * the layer is made: a malformed one is refused then, with the position
 * of the problem (einsum_parse.c).  Beyond TensorRT: ellipses,
 * diagonals (a label repeated in one term), more than two inputs, and
 * size-1 dimensions broadcast against the other occurrences of their
 * label.
 *
 * The reference is the definition itself: one loop over every
 * combination of label values, multiplying the inputs' elements and
 * adding the product to the output element, in double.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "einsum.h"

static const mica_field_schema_t einsum_fields[] = {
    {"equation", MICA_FIELD_STRING, 1, 1, 0, NULL, NULL,
     "the summation in Einstein notation, e.g. \"bij,bjk->bik\""},
};

typedef struct einsum_layer {
    mica_kit_layer_t base;
    mica__ein_eq_t eq;
#if MICA_KIT_CUDA
    void *handle;            /* cuBLAS */
    int has_order;
    mica__ein_order_t order; /* fixed by configure, for the workspace */
#endif
} einsum_layer_t;

/* float64 (ONNX's double) on the CPU reference alone. */
static int float_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_FLOAT64;
}

static mica_status_t einsum_dtypes(const mica_layer_t *layer,
                                   const mica_dtype_t *in, int32_t nb_in,
                                   mica_dtype_t *out, int32_t nb_out,
                                   mica_error_t *err)
{
    const einsum_layer_t *l = (const einsum_layer_t *)layer;
    int32_t i;

    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "gives 1 output, asked for %d",
                             (int)nb_out);
    if (nb_in != l->eq.nb_terms)
        return MICA_KIT_FAIL(err, "the equation has %d term%s but the layer "
                             "has %d input%s", (int)l->eq.nb_terms,
                             l->eq.nb_terms == 1 ? "" : "s", (int)nb_in,
                             nb_in == 1 ? "" : "s");
    for (i = 0; i < nb_in; i++)
        if (!float_type(in[i]) || in[i] != in[0])
            return MICA_KIT_FAIL(err, "inputs must all be float32, all "
                                 "float16 or (on the CPU) all float64, "
                                 "input %d is %s", (int)i,
                                 mica_kit_host->dtype_name(in[i]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t einsum_dims(const mica_layer_t *layer, int32_t index,
                                 const mica_shape_expr_t *in, int32_t nb_in,
                                 mica_expr_builder_t *eb,
                                 mica_shape_expr_t *out, mica_error_t *err)
{
    const einsum_layer_t *l = (const einsum_layer_t *)layer;
    int32_t ranks[MICA__EIN_MAX_IN], t, d, j;
    int64_t dims[MICA__EIN_MAX_IN][MICA_MAX_DIMS], size[MICA__EIN_LABELS];
    mica__ein_bind_t b;
    mica_status_t st;

    (void)index;
    if (nb_in > MICA__EIN_MAX_IN)
        return MICA_KIT_FAIL(err, "takes at most %d inputs, got %d",
                             MICA__EIN_MAX_IN, (int)nb_in);
    for (t = 0; t < nb_in; t++) {
        ranks[t] = in[t].nb_dims;
        for (d = 0; d < in[t].nb_dims; d++)
            dims[t][d] = mica_kit_host->expr_is_constant(in[t].d[d])
                             ? mica_kit_host->expr_constant_value(in[t].d[d])
                             : -1;
    }
    if ((st = mica__ein_bind(&l->eq, nb_in, ranks, &b, err)) != MICA_OK ||
        (st = mica__ein_sizes(&b, (const int64_t(*)[MICA_MAX_DIMS])dims, size,
                              err)) != MICA_OK)
        return st;
    out->nb_dims = b.out_rank;
    for (j = 0; j < b.out_rank; j++) {
        /* The occurrences of the label that are not a constant 1; their
         * maximum (equal at run time, or 1 and broadcast). */
        const mica_expr_t *e = NULL;
        for (t = 0; t < nb_in; t++)
            for (d = 0; d < b.rank[t]; d++) {
                if (b.lab[t][d] != b.out[j] || dims[t][d] == 1)
                    continue;
                if (!e)
                    e = in[t].d[d];
                else if (dims[t][d] < 0 || !mica_kit_host->expr_is_constant(e))
                    e = mica_kit_host->expr_operation(eb, MICA_EXPR_MAX, e,
                                                      in[t].d[d]);
            }
        out->d[j] = e ? e : mica_kit_host->expr_constant(eb, 1);
        if (!out->d[j])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

static int32_t einsum_formats(const mica_layer_t *layer, int32_t pos,
                              const mica_tensor_desc_t *io, int32_t nb_in,
                              int32_t nb_out)
{
    if (nb_out != 1 || pos > nb_in || !mica_kit_linear(io, pos))
        return 0;
    if (io[pos].dtype == MICA_FLOAT64 &&
        !(((const mica_kit_layer_t *)layer)->creator->devices &
          MICA_DEVICE_CPU))
        return 0;
    return float_type(io[pos].dtype) && io[pos].dtype == io[0].dtype;
}

/* Bind the equation to the run's inputs and size every label. */
static mica_status_t bind_run(const einsum_layer_t *l,
                              const mica_tensor_desc_t *in, int32_t nb_in,
                              mica__ein_bind_t *b,
                              int64_t (*dims)[MICA_MAX_DIMS], int64_t *size,
                              mica_error_t *err)
{
    int32_t ranks[MICA__EIN_MAX_IN], t, d;
    mica_status_t st;

    for (t = 0; t < nb_in; t++) {
        ranks[t] = in[t].dims.nb_dims;
        for (d = 0; d < ranks[t]; d++)
            dims[t][d] = in[t].dims.d[d];
    }
    if ((st = mica__ein_bind(&l->eq, nb_in, ranks, b, err)) != MICA_OK)
        return st;
    return mica__ein_sizes(b, (const int64_t(*)[MICA_MAX_DIMS])dims, size,
                           err);
}

/* ---- the CPU reference ------------------------------------------------- */

static double load(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    if (t == MICA_FLOAT64)
        return ((const double *)p)[i];
    return ((const float *)p)[i];
}

/* Element strides of each label in a tensor of `rank` dims with labels
 * lab: the sum of the strides of its dimensions (a diagonal), 0 for a
 * dimension of size 1 (a broadcast). */
static void label_strides(int32_t rank, const int8_t *lab,
                          const int64_t *dims, int64_t *st)
{
    int64_t s = 1;
    int32_t d;

    memset(st, 0, MICA__EIN_LABELS * sizeof *st);
    for (d = rank - 1; d >= 0; d--) {
        if (dims[d] != 1)
            st[lab[d]] += s;
        s *= dims[d];
    }
}

static MICA_KIT_ENQUEUE(einsum_cpu)
{
    const einsum_layer_t *l = (const einsum_layer_t *)layer;
    int64_t dims[MICA__EIN_MAX_IN][MICA_MAX_DIMS], size[MICA__EIN_LABELS];
    int64_t odims[MICA_MAX_DIMS], coord[MICA__EIN_LABELS], n, i, total = 1;
    int32_t used[MICA__EIN_LABELS], nu = 0, t, u;
    mica__ein_bind_t b;
    double *acc;
    mica_status_t st = bind_run(l, in, nb_in, &b, dims, size, err);

    if (st != MICA_OK)
        return st;
    {
        int64_t lst[MICA__EIN_MAX_IN + 1][MICA__EIN_LABELS];
        for (t = 0; t < nb_in; t++)
            label_strides(b.rank[t], b.lab[t], dims[t], lst[t]);
        for (i = 0; i < b.out_rank; i++)
            odims[i] = size[b.out[i]];
        label_strides(b.out_rank, b.out, odims, lst[nb_in]);
        n = mica_dims_volume(&out[0].dims);
        acc = calloc((size_t)(n > 0 ? n : 1), sizeof *acc);
        if (!acc)
            return MICA_KIT_FAIL(err, "out of host memory");
        for (u = 0; u < MICA__EIN_LABELS; u++)
            if (size[u] >= 0) {
                used[nu++] = u;
                total *= size[u];
                coord[u] = 0;
            }
        for (i = 0; i < total; i++) {
            double p = 1.0;
            int64_t o = 0;
            for (t = 0; t < nb_in; t++) {
                int64_t off = 0;
                for (u = 0; u < nu; u++)
                    off += coord[used[u]] * lst[t][used[u]];
                p *= load(in[t].dtype, inputs[t], off);
            }
            for (u = 0; u < nu; u++)
                o += coord[used[u]] * lst[nb_in][used[u]];
            acc[o] += p;
            for (u = nu - 1; u >= 0; u--) { /* the next combination */
                if (++coord[used[u]] < size[used[u]])
                    break;
                coord[used[u]] = 0;
            }
        }
        for (i = 0; i < n; i++) {
            if (out[0].dtype == MICA_FLOAT16)
                ((uint16_t *)outputs[0])[i] =
                    mica_kit_float_to_half((float)acc[i]);
            else if (out[0].dtype == MICA_FLOAT64)
                ((double *)outputs[0])[i] = acc[i];
            else
                ((float *)outputs[0])[i] = (float)acc[i];
        }
        free(acc);
    }
    return MICA_OK;
}

/* ---- CUDA -------------------------------------------------------------- */

#if MICA_KIT_CUDA
/*
 * Bind to the profile's largest dimensions: the sizes the order and the
 * workspace are made for, each label's the largest of its occurrences
 * (not checked against each other: a run checks its own sizes).
 */
static mica_status_t bind_max(const einsum_layer_t *l,
                              const mica_dyn_desc_t *in, int32_t nb_in,
                              mica__ein_bind_t *b, int64_t *size,
                              mica_error_t *err)
{
    int32_t ranks[MICA__EIN_MAX_IN] = {0}, t, d;
    mica_status_t st;

    if (nb_in > MICA__EIN_MAX_IN)
        return MICA_KIT_FAIL(err, "takes at most %d inputs, got %d",
                             MICA__EIN_MAX_IN, (int)nb_in);
    for (t = 0; t < nb_in; t++)
        ranks[t] = in[t].max.nb_dims;
    if ((st = mica__ein_bind(&l->eq, nb_in, ranks, b, err)) != MICA_OK)
        return st;
    for (d = 0; d < MICA__EIN_LABELS; d++)
        size[d] = -1;
    for (t = 0; t < nb_in; t++)
        for (d = 0; d < ranks[t]; d++)
            if (in[t].max.d[d] > size[b->lab[t][d]])
                size[b->lab[t][d]] = in[t].max.d[d];
    return MICA_OK;
}

static mica_status_t einsum_configure(mica_layer_t *layer,
                                      const mica_dyn_desc_t *in,
                                      int32_t nb_in,
                                      const mica_dyn_desc_t *out,
                                      int32_t nb_out, mica_error_t *err)
{
    einsum_layer_t *l = (einsum_layer_t *)layer;
    int64_t size[MICA__EIN_LABELS];
    mica__ein_bind_t b;
    mica_status_t st;

    (void)out;
    (void)nb_out;
    if ((st = bind_max(l, in, nb_in, &b, size, err)) != MICA_OK)
        return st;
    mica__ein_choose_order(&b, size, &l->order);
    l->has_order = 1;
    return mica__ein_cublas_handle(&l->handle, err);
}

static size_t einsum_workspace(const mica_layer_t *layer,
                               const mica_dyn_desc_t *in, int32_t nb_in,
                               const mica_dyn_desc_t *out, int32_t nb_out)
{
    const einsum_layer_t *l = (const einsum_layer_t *)layer;
    int64_t size[MICA__EIN_LABELS];
    mica__ein_bind_t b;
    mica__ein_order_t order;

    (void)out;
    (void)nb_out;
    /* A failure here is reported by configure with the same inputs. */
    if (bind_max(l, in, nb_in, &b, size, NULL) != MICA_OK)
        return 0;
    mica__ein_choose_order(&b, size, &order);
    return mica__ein_workspace(&b, &order, size, in[0].desc.dtype);
}

static MICA_KIT_ENQUEUE(einsum_cuda)
{
    einsum_layer_t *l = (einsum_layer_t *)layer;
    int64_t dims[MICA__EIN_MAX_IN][MICA_MAX_DIMS], size[MICA__EIN_LABELS];
    mica__ein_bind_t b;
    mica_status_t st = bind_run(l, in, nb_in, &b, dims, size, err);

    if (st != MICA_OK)
        return st;
    if ((st = mica__ein_cublas_handle(&l->handle, err)) != MICA_OK)
        return st;
    if (!l->has_order) {
        mica__ein_choose_order(&b, size, &l->order);
        l->has_order = 1;
    }
    return mica__ein_run(&b, &l->order, size,
                         (const int64_t(*)[MICA_MAX_DIMS])dims, in[0].dtype,
                         inputs, outputs[0], workspace,
                         mica__ein_workspace(&b, &l->order, size,
                                             in[0].dtype),
                         l->handle, stream, err);
}

static void einsum_fini(mica_kit_layer_t *self)
{
    einsum_layer_t *l = (einsum_layer_t *)self;
    mica__ein_cublas_destroy(l->handle);
    l->handle = NULL;
}
#endif

static mica_layer_t *einsum_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    einsum_layer_t *l;
    mica__ein_eq_t eq;
    const char *text = mica_kit_string(fields, "equation"); /* required */

    if (!text || mica__ein_parse(text, &eq, err) != MICA_OK) {
        if (!text)
            mica_kit_host->set_error(err, "param 'equation' is missing");
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->eq = eq;
#if MICA_KIT_CUDA
    l->base.fini = einsum_fini;
#endif
    return &l->base.layer;
}

#define EINSUM_OPS(...)                                                      \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,             \
                 .output_dtypes = einsum_dtypes, .output_dims = einsum_dims, \
                 .supports_format = einsum_formats)

static const mica_layer_ops_t einsum_ops_cpu = EINSUM_OPS(einsum_cpu);
static const mica_layer_creator_t einsum_reference = MICA_KIT_CREATOR(
    "Einsum", "reference", MICA_DEVICE_CPU, 0, MICA_ROLE_NONE, einsum_fields,
    MICA_KIT_COUNT(einsum_fields), einsum_create, &einsum_ops_cpu);

#if MICA_KIT_CUDA
/* Batched GEMMs through cuBLAS plus gather kernels: "cublas". */
static const mica_layer_ops_t einsum_ops_cuda =
    EINSUM_OPS(einsum_cuda, .configure = einsum_configure,
               .workspace_size = einsum_workspace);
static const mica_layer_creator_t einsum_cublas = MICA_KIT_CREATOR(
    "Einsum", "cublas", MICA_DEVICE_CUDA, 10, MICA_ROLE_NONE, einsum_fields,
    MICA_KIT_COUNT(einsum_fields), einsum_create, &einsum_ops_cuda);
#endif

static const mica_layer_creator_t *const creators[] = {
    &einsum_reference MICA_KIT_IF_CUDA(, &einsum_cublas)};

MICA_KIT_ENTRY("einsum", PACKAGE_VERSION, "MIT",
               "Einsum: sums of products in Einstein notation", creators)
