/*
 * modules/nonzero/nonzero.c - the NonZero layer (TensorRT's
 * INonZeroLayer, ONNX NonZero): the coordinates of the non-zero elements
 * of its input, a data-dependent size.
 *
 * Output 0 is int32 [rank, count], row d holding dimension d's index of
 * each non-zero element, in row-major order of the elements; output 1 is
 * count, a 0-D int32: the size output the core reads back
 * (mica_host_t's expr_size), at most the input's volume.  Memory is
 * planned for that bound; enqueue sees output 0 at [rank, volume] and
 * writes the compact [rank, count] layout (each row count long), which
 * is what the tensor is once the count is known.
 *
 * Zero is +0 and -0 for floats (NaN is not zero), 0 for integers, false
 * for bools.  The input's volume and every dimension must fit an int32.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "nonzero.h"

/* ---- types and shapes --------------------------------------------------- */

static int32_t nz_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 2;
}

/* The kind of test of an input type (nonzero_kind_t), -1 if none. */
static int32_t kind_of(mica_dtype_t t)
{
    switch (t) {
    case MICA_FLOAT32: return NONZERO_F32;
    case MICA_FLOAT16: case MICA_BFLOAT16: return NONZERO_F16;
    case MICA_INT8: case MICA_UINT8: case MICA_BOOL: return NONZERO_B8;
    case MICA_INT32: return NONZERO_I32;
    case MICA_INT64: return NONZERO_I64;
    default: return -1;
    }
}

static mica_status_t nz_output_dtypes(const mica_layer_t *layer,
                                      const mica_dtype_t *in, int32_t nb_in,
                                      mica_dtype_t *out, int32_t nb_out,
                                      mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 2)
        return MICA_KIT_FAIL(err, "takes 1 input and has 2 outputs (indices, "
                             "count), got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (kind_of(in[0]) < 0)
        return MICA_KIT_FAIL(err, "input of type %s is not supported",
                             mica_kit_host->dtype_name(in[0]));
    out[0] = out[1] = MICA_INT32;
    return MICA_OK;
}

static mica_status_t nz_output_dims(const mica_layer_t *layer, int32_t index,
                                    const mica_shape_expr_t *in,
                                    int32_t nb_in, mica_expr_builder_t *eb,
                                    mica_shape_expr_t *out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *n;
    int32_t i;

    (void)layer;
    (void)nb_in;
    if (index == 1) { /* the count */
        out->nb_dims = 0;
        return MICA_OK;
    }
    if (!MICA_HOST_HAS(h, expr_size))
        return MICA_KIT_FAIL(err, "this host has no data-dependent sizes "
                             "(expr_size): a newer mica is needed");
    n = h->expr_constant(eb, 1);
    for (i = 0; n && i < in[0].nb_dims; i++)
        n = h->expr_operation(eb, MICA_EXPR_PROD, n, in[0].d[i]);
    out->nb_dims = 2;
    out->d[0] = h->expr_constant(eb, in[0].nb_dims);
    out->d[1] = n ? h->expr_size(eb, 1, n) : NULL;
    if (!out->d[0] || !out->d[1])
        return MICA_KIT_FAIL(err, "out of host memory");
    return MICA_OK;
}

static int32_t nz_supports_format(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io, int32_t nb_in,
                                  int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 2 || pos < 0 || pos > 2 ||
        !mica_kit_linear(io, pos))
        return 0;
    return pos == 0 ? kind_of(io[0].dtype) >= 0 : io[pos].dtype == MICA_INT32;
}

/* The input's volume fits an int32 (the count and the indices). */
static mica_status_t check_input(const mica_dims_t *d, int64_t *n,
                                 mica_error_t *err)
{
    int32_t i;
    *n = 1;
    for (i = 0; i < d->nb_dims; i++)
        if (d->d[i] < 0 || d->d[i] > INT32_MAX ||
            (d->d[i] && *n > INT32_MAX / d->d[i]))
            return MICA_KIT_FAIL(err, "an input of more than %d elements "
                                 "(dimension %d is %lld)", INT32_MAX,
                                 (int)i, (long long)d->d[i]);
        else
            *n *= d->d[i];
    return MICA_OK;
}

/* ---- the CPU reference -------------------------------------------------- */

static mica_status_t nz_enqueue_cpu(mica_layer_t *layer,
                                    const mica_tensor_desc_t *in,
                                    int32_t nb_in,
                                    const mica_tensor_desc_t *out,
                                    int32_t nb_out,
                                    const void *const *inputs,
                                    void *const *outputs, void *workspace,
                                    void *stream, mica_error_t *err)
{
    const mica_dims_t *d = &in[0].dims;
    int32_t kind = kind_of(in[0].dtype), *idx = outputs[0], j;
    int64_t n, i, count = 0, k = 0;
    mica_status_t st;

    (void)layer; (void)nb_in; (void)out; (void)nb_out; (void)workspace;
    (void)stream;
    if ((st = check_input(d, &n, err)) != MICA_OK)
        return st;
    for (i = 0; i < n; i++)
        count += nonzero_at(inputs[0], kind, i);
    for (i = 0; i < n; i++) {
        int64_t rest = i;
        if (!nonzero_at(inputs[0], kind, i))
            continue;
        for (j = d->nb_dims - 1; j >= 0; j--) {
            idx[j * count + k] = (int32_t)(rest % d->d[j]);
            rest /= d->d[j];
        }
        k++;
    }
    *(int32_t *)outputs[1] = (int32_t)count;
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t nz_enqueue_cuda(mica_layer_t *layer,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out,
                                     const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    nonzero_dims_t dims;
    int64_t n;
    int32_t j;
    mica_status_t st;

    (void)layer; (void)nb_in; (void)out; (void)nb_out; (void)workspace;
    if ((st = check_input(&in[0].dims, &n, err)) != MICA_OK)
        return st;
    memset(&dims, 0, sizeof dims);
    dims.rank = in[0].dims.nb_dims;
    for (j = 0; j < dims.rank; j++)
        dims.d[j] = in[0].dims.d[j];
    return mica__nonzero_cuda(inputs[0], kind_of(in[0].dtype), n, &dims,
                              outputs[0], outputs[1], stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(nonzero, "NonZero", NULL, 0, mica_kit_layer_create,
                    nz_enqueue_cpu, nz_enqueue_cuda,
                    .nb_outputs = nz_nb_outputs,
                    .output_dtypes = nz_output_dtypes,
                    .output_dims = nz_output_dims,
                    .supports_format = nz_supports_format)

static const mica_layer_creator_t *const nonzero_creators[] = {
    MICA_KIT_PAIR(nonzero)};

MICA_KIT_ENTRY("nonzero", PACKAGE_VERSION, "MIT",
               "NonZero: the coordinates of the non-zero elements",
               nonzero_creators)
