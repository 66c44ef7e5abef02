/*
 * modules/constant/constant.c - the Constant layer (TensorRT's
 * IConstantLayer): no inputs, one output holding the `weights` values in
 * the shape `shape` (default: the weights' own shape).
 *
 * The output type is the weights' type; any element type is accepted.  A
 * Constant whose type is int32 or int64 can feed shape inputs, so the layer
 * also answers output_values with its values as constant expressions.
 *
 * The values stay where the fields keep them (shared by an instance and
 * its clones; in place in the engine's bytes for a loaded engine), and
 * the layer says where (constant_output): the core binds every reader of
 * the output to them, on the CPU in place, on a device to one copy per
 * engine, and never runs the layer.  Where it still runs (its output is
 * a network output: the caller may bind its own memory there), CUDA:
 * each execution context's clone uploads the values to device memory
 * once, in initialize (or on the first enqueue of an instance that was
 * never initialized), and every enqueue is one device-to-device
 * cudaMemcpyAsync.  The builder's instance, which never runs, uploads
 * nothing.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "mica/kit.h"
#include "constant.h"

typedef struct constant_layer {
    mica_kit_layer_t base;
    const mica_weights_t *w; /* inside base.fields */
    mica_dims_t dims;        /* the output's dimensions */
    void *dev;               /* CUDA: the values on the device */
} constant_layer_t;

static const mica_field_schema_t constant_fields[] = {
    {"weights", MICA_FIELD_WEIGHTS, 1, 1, 0, NULL, NULL,
     "the values, row-major"},
    {"shape", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "output dimensions (default: the weights' dimensions)"},
};

/* The output dims from the fields, checked. */
static mica_status_t constant_dims(const mica_fields_t *f, mica_dims_t *dims,
                                   mica_error_t *err)
{
    const mica_weights_t *w = mica_kit_weights(f, "weights");
    const int64_t *shape = mica_kit_ints(f, "shape");
    int32_t i, n = mica_kit_count(f, "shape");
    int64_t vol = 1;
    char text[256];

    memset(dims, 0, sizeof *dims); /* w: required, of a known type */
    if (!shape) {
        if (w->dims.nb_dims == 0 && w->count != 1) {
            /* no declared shape: a 1-D tensor of the values */
            dims->nb_dims = 1;
            dims->d[0] = w->count;
            return MICA_OK;
        }
        shape = w->dims.d;
        n = w->dims.nb_dims;
    }
    if (n > MICA_MAX_DIMS)
        return MICA_KIT_FAIL(err, "'shape' has %d dimensions, more than %d",
                             (int)n, MICA_MAX_DIMS);
    for (i = 0; i < n; i++) {
        if (shape[i] < 0)
            return MICA_KIT_FAIL(err, "'shape' %s has a negative dimension",
                                 mica_kit_ints_text(shape, n, text,
                                                    sizeof text));
        dims->d[i] = shape[i];
    }
    dims->nb_dims = n;
    if (mica_dims_volume_checked(dims, &vol) != 0)
        return MICA_KIT_FAIL(err, "'shape' %s has more than 2^63 elements",
                             mica_kit_ints_text(shape, n, text, sizeof text));
    if (vol != w->count)
        return MICA_KIT_FAIL(err,
                             "'shape' %s has volume %lld but the weights have "
                             "%lld values",
                             mica_kit_ints_text(shape, n, text, sizeof text),
                             (long long)vol, (long long)w->count);
    return MICA_OK;
}

static mica_status_t constant_output_dtypes(const mica_layer_t *layer,
                                            const mica_dtype_t *in,
                                            int32_t nb_in, mica_dtype_t *out,
                                            int32_t nb_out, mica_error_t *err)
{
    const constant_layer_t *l = (const constant_layer_t *)layer;
    (void)in;
    if (nb_in != 0)
        return MICA_KIT_FAIL(err, "takes no inputs, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = l->w->dtype;
    return MICA_OK;
}

static mica_status_t constant_output_dims(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          mica_shape_expr_t *out,
                                          mica_error_t *err)
{
    const constant_layer_t *l = (const constant_layer_t *)layer;
    int32_t i;
    (void)in;
    (void)nb_in;
    if (index != 0)
        return MICA_KIT_FAIL(err, "has no output %d", (int)index);
    out->nb_dims = l->dims.nb_dims;
    for (i = 0; i < l->dims.nb_dims; i++) {
        out->d[i] = mica_kit_host->expr_constant(eb, l->dims.d[i]);
        if (!out->d[i])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

/*
 * Linear; also channels last where that is the same bytes: one channel,
 * or a single spatial position ([1, C, 1, 1], a per-channel constant),
 * so that a reader in channels last takes it with no reorder.
 */
static int32_t constant_supports_format(const mica_layer_t *layer,
                                        int32_t pos,
                                        const mica_tensor_desc_t *io,
                                        int32_t nb_in, int32_t nb_out)
{
    const constant_layer_t *l = (const constant_layer_t *)layer;
    const mica_dims_t *d = &io[pos].dims;
    int64_t sp = 1;
    int32_t k;
    (void)nb_out;
    if (pos != nb_in || io[pos].dtype != l->w->dtype)
        return 0;
    if (mica_kit_linear(io, pos))
        return 1;
    if (io[pos].format != mica_kit_channels_last(d->nb_dims))
        return 0;
    for (k = 2; k < d->nb_dims; k++)
        sp *= d->d[k];
    return d->d[1] == 1 || sp == 1;
}

static mica_status_t constant_output_values(const mica_layer_t *layer,
                                            int32_t index,
                                            const mica_shape_expr_t *in,
                                            int32_t nb_in,
                                            mica_expr_builder_t *eb,
                                            const mica_expr_t **values,
                                            int32_t nb_values,
                                            mica_error_t *err)
{
    const constant_layer_t *l = (const constant_layer_t *)layer;
    int32_t i;
    (void)in;
    (void)nb_in;
    if (index != 0 || nb_values != l->w->count)
        return MICA_ERR_UNSUPPORTED;
    for (i = 0; i < nb_values; i++) {
        int64_t v;
        switch (l->w->dtype) {
        case MICA_INT32: v = ((const int32_t *)l->w->values)[i]; break;
        case MICA_INT64: v = ((const int64_t *)l->w->values)[i]; break;
        case MICA_INT8: v = ((const int8_t *)l->w->values)[i]; break;
        case MICA_UINT8: v = ((const uint8_t *)l->w->values)[i]; break;
        case MICA_BOOL: v = ((const uint8_t *)l->w->values)[i] != 0; break;
        default: return MICA_ERR_UNSUPPORTED; /* floats are not sizes */
        }
        values[i] = mica_kit_host->expr_constant(eb, v);
        if (!values[i])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

static size_t constant_bytes(const constant_layer_t *l)
{
    return (size_t)l->w->count * mica_dtype_size(l->w->dtype);
}

/* The values, where the fields keep them: the core binds readers to
 * them instead of running the layer. */
static const void *constant_constant_output(const mica_layer_t *layer,
                                            int32_t index, size_t *bytes)
{
    const constant_layer_t *l = (const constant_layer_t *)layer;
    if (index != 0)
        return NULL;
    *bytes = constant_bytes(l);
    return l->w->values;
}

static mica_status_t constant_enqueue_cpu(mica_layer_t *layer,
                                          const mica_tensor_desc_t *in,
                                          int32_t nb_in,
                                          const mica_tensor_desc_t *out,
                                          int32_t nb_out,
                                          const void *const *inputs,
                                          void *const *outputs,
                                          void *workspace, void *stream,
                                          mica_error_t *err)
{
    constant_layer_t *l = (constant_layer_t *)layer;
    (void)in; (void)nb_in; (void)out; (void)nb_out; (void)inputs;
    (void)workspace; (void)stream; (void)err;
    if (constant_bytes(l))
        memcpy(outputs[0], l->w->values, constant_bytes(l));
    return MICA_OK;
}

/* The ops of both implementations: the enqueue, maybe more, then these. */
#define CONSTANT_OPS(...)                                                    \
    MICA_KIT_OPS(__VA_ARGS__, .nb_outputs = mica_kit_one_output,             \
                 .output_dtypes = constant_output_dtypes,                    \
                 .output_dims = constant_output_dims,                        \
                 .supports_format = constant_supports_format,                \
                 .output_values = constant_output_values,                    \
                 .constant_output = constant_constant_output)

static const mica_layer_ops_t constant_ops_cpu =
    CONSTANT_OPS(constant_enqueue_cpu);

#if MICA_KIT_CUDA
static mica_status_t constant_upload(constant_layer_t *l, mica_error_t *err)
{
    if (l->dev)
        return MICA_OK;
    return mica__constant_cuda_upload(l->w->values, constant_bytes(l),
                                      &l->dev, err);
}

static mica_status_t constant_initialize_cuda(mica_layer_t *layer,
                                              void *stream, mica_error_t *err)
{
    (void)stream;
    return constant_upload((constant_layer_t *)layer, err);
}

static mica_status_t constant_enqueue_cuda(mica_layer_t *layer,
                                           const mica_tensor_desc_t *in,
                                           int32_t nb_in,
                                           const mica_tensor_desc_t *out,
                                           int32_t nb_out,
                                           const void *const *inputs,
                                           void *const *outputs,
                                           void *workspace, void *stream,
                                           mica_error_t *err)
{
    constant_layer_t *l = (constant_layer_t *)layer;
    mica_status_t st;
    (void)in; (void)nb_in; (void)out; (void)nb_out; (void)inputs;
    (void)workspace;
    if ((st = constant_upload(l, err)) != MICA_OK)
        return st;
    return mica__constant_cuda_copy(outputs[0], l->dev, constant_bytes(l),
                                    stream, err);
}

static const mica_layer_ops_t constant_ops_cuda =
    CONSTANT_OPS(constant_enqueue_cuda, .initialize = constant_initialize_cuda);

static void constant_fini(mica_kit_layer_t *self)
{
    constant_layer_t *l = (constant_layer_t *)self;
    mica__constant_cuda_free(l->dev);
    l->dev = NULL;
}
#endif

static mica_layer_t *constant_create(const mica_layer_creator_t *creator,
                                     const char *name,
                                     const mica_fields_t *fields,
                                     mica_error_t *err)
{
    constant_layer_t *l;
    mica_dims_t dims;

    if (constant_dims(fields, &dims, err) != MICA_OK)
        return NULL;
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->w = mica_kit_weights(mica_kit_fields_view(l->base.fields), "weights");
    l->dims = dims;
#if MICA_KIT_CUDA
    l->base.fini = constant_fini;
#endif
    return &l->base.layer;
}

MICA_KIT_CREATOR_PAIR(constant, "Constant", constant_fields, 2,
                      constant_create, &constant_ops_cpu, &constant_ops_cuda)

static const mica_layer_creator_t *const constant_creators[] = {
    MICA_KIT_PAIR(constant)};

MICA_KIT_ENTRY("constant", PACKAGE_VERSION, "MIT",
               "Constant: a tensor of fixed values",
               constant_creators)
