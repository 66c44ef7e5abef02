/*
 * modules/identity/identity.c - the Identity layer (TensorRT's
 * IIdentityLayer, and ICastLayer when `dtype` is given): the output is the
 * input, converted to `dtype` if that param is present.
 *
 * Types: float32, float16, bfloat16, int8, uint8, int32, int64, bool, in
 * any combination (TensorRT's Cast accepts all conversions among them).
 * Conversion rules (TensorRT's Cast: its documented example truncates
 * 5.6 to 5; NaN casts to 0 and +inf to INT32_MAX in TensorRT 10):
 *   - float to integer: truncation toward zero, saturated to the target's
 *     range; NaN gives 0;
 *   - integer to integer: saturated to the target's range;
 *   - anything to bool: x != 0 gives 1 (NaN gives 1); bool reads as 0 or 1;
 *   - to float32, float16, bfloat16: round to nearest even; values beyond
 *     the range become infinity.
 * Every element goes through a double (exact for every source type but
 * int64 beyond 2^53, which then rounds to nearest); same-type copies are
 * plain copies.  On an integer shape tensor with known values, an
 * integer or bool cast keeps them (output_values).
 *
 * Formats: its input and output may each be LINEAR or, for 4-D and 5-D
 * tensors, channels last (MICA_FORMAT_HWC, MICA_FORMAT_DHWC): an Identity
 * whose formats differ is a reorder (TensorRT's reformatting), with its
 * cast if it has one; the builder inserts such Identities where a tensor
 * made in one format is read in another.
 *
 * Implementation "vec" (the CPU's default): reorders as tiled transposes
 * and float32 <-> float16 casts as vector conversions, on several
 * threads for large tensors (identity_vec.c); the rest as the reference.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "identity.h"

typedef struct identity_layer {
    mica_kit_layer_t base;
    int has_dtype;
    mica_dtype_t dtype;
    int saturate;
} identity_layer_t;

static const mica_field_schema_t identity_fields[] = {
    {"dtype", MICA_FIELD_DTYPE, 1, 0, 0, NULL, NULL,
     "output type (default: the input's type)"},
    {"saturate", MICA_FIELD_BOOL, 1, 0, 0, NULL, NULL,
     "casts to float8: out of range saturates (1, the default) or becomes "
     "infinity or NaN (0)"},
};

/* ---- layer ops ---------------------------------------------------------- */

static mica_status_t identity_output_dtypes(const mica_layer_t *layer,
                                            const mica_dtype_t *in,
                                            int32_t nb_in, mica_dtype_t *out,
                                            int32_t nb_out, mica_error_t *err)
{
    const identity_layer_t *l = (const identity_layer_t *)layer;
    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = l->has_dtype ? l->dtype : in[0];
    return MICA_OK;
}

static mica_status_t identity_output_dims(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          mica_shape_expr_t *out,
                                          mica_error_t *err)
{
    int32_t i;
    (void)layer;
    (void)eb;
    if (index != 0 || nb_in != 1)
        return MICA_KIT_FAIL(err, "takes 1 input and has 1 output");
    out->nb_dims = in[0].nb_dims;
    for (i = 0; i < in[0].nb_dims; i++)
        out->d[i] = in[0].d[i];
    return MICA_OK;
}

/* Every type of mica converts to every other (identity.h). */
static int identity_type(mica_dtype_t t)
{
    return (unsigned)t < MICA_DTYPE_COUNT_;
}

static int32_t identity_supports_format(const mica_layer_t *layer,
                                        int32_t pos,
                                        const mica_tensor_desc_t *io,
                                        int32_t nb_in, int32_t nb_out)
{
    const identity_layer_t *l = (const identity_layer_t *)layer;
    (void)nb_out;
    if (!identity_type(io[pos].dtype) ||
        (!mica_kit_linear(io, pos) &&
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    if (pos == nb_in)
        return io[pos].dtype == (l->has_dtype ? l->dtype : io[0].dtype);
    return pos == 0;
}

/* Strides of the input and output of a reorder, by value for CUDA. */
static void reorder_strides(const mica_tensor_desc_t *in,
                            const mica_tensor_desc_t *out,
                            mica__identity_reorder_t *r)
{
    int32_t k;
    memset(r, 0, sizeof *r);
    r->rank = out->dims.nb_dims;
    for (k = 0; k < r->rank; k++)
        r->d[k] = out->dims.d[k];
    mica_kit_strides(in, r->in);
    mica_kit_strides(out, r->out);
}

/*
 * The values of an integer shape tensor after the cast: integers keep
 * their values, saturated to the target's range (int8, uint8 with
 * min/max; int32 when the value is a constant: symbolic values are
 * dimensions, in range); bool is x != 0.  Float targets: unsupported.
 */
static mica_status_t identity_output_values(const mica_layer_t *layer,
                                            int32_t index,
                                            const mica_shape_expr_t *in,
                                            int32_t nb_in,
                                            mica_expr_builder_t *eb,
                                            const mica_expr_t **values,
                                            int32_t nb_values,
                                            mica_error_t *err)
{
    const identity_layer_t *l = (const identity_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    mica_dtype_t t = l->has_dtype ? l->dtype : MICA_INT32;
    int64_t lo, hi;
    int32_t i;

    if (index != 0 || nb_in != 1 || !in[0].values ||
        in[0].nb_values != nb_values)
        return MICA_ERR_UNSUPPORTED;
    switch (t) {
    case MICA_INT8: lo = -128; hi = 127; break;
    case MICA_UINT8: lo = 0; hi = 255; break;
    case MICA_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MICA_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    case MICA_BOOL: lo = hi = 0; break;
    default: return MICA_ERR_UNSUPPORTED;
    }
    for (i = 0; i < nb_values; i++) {
        const mica_expr_t *x = in[0].values[i];
        if (!l->has_dtype) {
            values[i] = x;
            continue;
        }
        if (t == MICA_BOOL) {
            x = h->expr_operation(eb, MICA_EXPR_EQUAL, x,
                                  h->expr_constant(eb, 0));
            x = h->expr_operation(eb, MICA_EXPR_SUB, h->expr_constant(eb, 1),
                                  x);
        } else if (h->expr_is_constant(x)) {
            int64_t v = h->expr_constant_value(x);
            x = h->expr_constant(eb, v < lo ? lo : v > hi ? hi : v);
        } else if (t == MICA_INT8 || t == MICA_UINT8) {
            x = h->expr_operation(eb, MICA_EXPR_MIN, x,
                                  h->expr_constant(eb, hi));
            x = h->expr_operation(eb, MICA_EXPR_MAX, x,
                                  h->expr_constant(eb, lo));
        }
        if (!x)
            return MICA_KIT_FAIL(err, "out of host memory");
        values[i] = x;
    }
    return MICA_OK;
}

/* A reorder without a cast on the host: the elements in logical order,
 * each es bytes, the offsets stepped along the innermost dimension and
 * carried over the others (no division per element). */
static void reorder_copy(const mica__identity_reorder_t *r, size_t es,
                         const void *src, void *dst)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    int64_t idx[MICA_MAX_DIMS] = {0}, so = 0, dof = 0, j, n;
    int32_t last = r->rank - 1, k;

    if (r->rank == 0) {
        memcpy(d, s, es);
        return;
    }
    for (k = 0; k < r->rank; k++)
        if (r->d[k] == 0)
            return;
    n = r->d[last];
    for (;;) {
        const unsigned char *sp = s + (size_t)so * es;
        unsigned char *dp = d + (size_t)dof * es;
        size_t ss = (size_t)r->in[last] * es, ds = (size_t)r->out[last] * es;
        if (es == 4)
            for (j = 0; j < n; j++, sp += ss, dp += ds)
                memcpy(dp, sp, 4);
        else
            for (j = 0; j < n; j++, sp += ss, dp += ds)
                memcpy(dp, sp, es);
        for (k = last - 1; k >= 0; k--) {
            so += r->in[k];
            dof += r->out[k];
            if (++idx[k] < r->d[k])
                break;
            so -= r->in[k] * r->d[k];
            dof -= r->out[k] * r->d[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}

static mica_status_t identity_enqueue_cpu(mica_layer_t *layer,
                                          const mica_tensor_desc_t *in,
                                          int32_t nb_in,
                                          const mica_tensor_desc_t *out,
                                          int32_t nb_out,
                                          const void *const *inputs,
                                          void *const *outputs,
                                          void *workspace, void *stream,
                                          mica_error_t *err)
{
    const identity_layer_t *l = (const identity_layer_t *)layer;
    int64_t i, n = mica_dims_volume(&out[0].dims);
    (void)nb_in; (void)nb_out; (void)workspace; (void)stream;
    (void)err;
    if (in[0].format != out[0].format) {
        mica__identity_reorder_t r;
        reorder_strides(&in[0], &out[0], &r);
        if (in[0].dtype == out[0].dtype) {
            reorder_copy(&r, mica_dtype_size(in[0].dtype), inputs[0],
                         outputs[0]);
            return MICA_OK;
        }
        for (i = 0; i < n; i++) {
            int64_t src, dst;
            mica__identity_offsets(&r, i, &src, &dst);
            mica__identity_store_sat(outputs[0], out[0].dtype, dst,
                                     mica__identity_load(inputs[0],
                                                         in[0].dtype, src),
                                     l->saturate);
        }
        return MICA_OK;
    }
    if (in[0].dtype == out[0].dtype) {
        if (n > 0)
            memcpy(outputs[0], inputs[0],
                   (size_t)n * mica_dtype_size(in[0].dtype));
        return MICA_OK;
    }
    for (i = 0; i < n; i++)
        mica__identity_store_sat(outputs[0], out[0].dtype, i,
                                 mica__identity_load(inputs[0], in[0].dtype,
                                                     i),
                                 l->saturate);
    return MICA_OK;
}

/* The fast paths, else the reference. */
static MICA_KIT_ENQUEUE(identity_enqueue_vec)
{
    if (nb_in == 1 && nb_out == 1 &&
        mica__identity_vec(&in[0], &out[0], inputs[0], outputs[0]))
        return MICA_OK;
    return identity_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs,
                                outputs, workspace, stream, err);
}

#if MICA_KIT_CUDA
static mica_status_t identity_enqueue_cuda(mica_layer_t *layer,
                                           const mica_tensor_desc_t *in,
                                           int32_t nb_in,
                                           const mica_tensor_desc_t *out,
                                           int32_t nb_out,
                                           const void *const *inputs,
                                           void *const *outputs,
                                           void *workspace, void *stream,
                                           mica_error_t *err)
{
    const identity_layer_t *l = (const identity_layer_t *)layer;
    (void)nb_in; (void)nb_out; (void)workspace;
    if (in[0].format != out[0].format) {
        mica__identity_reorder_t r;
        reorder_strides(&in[0], &out[0], &r);
        return mica__identity_cuda_reorder(inputs[0], in[0].dtype, outputs[0],
                                           out[0].dtype, l->saturate, &r,
                                           mica_dims_volume(&out[0].dims),
                                           stream, err);
    }
    return mica__identity_cuda_cast(inputs[0], in[0].dtype, outputs[0],
                                    out[0].dtype, l->saturate,
                                    mica_dims_volume(&out[0].dims), stream,
                                    err);
}
#endif

static mica_layer_t *identity_create(const mica_layer_creator_t *creator,
                                     const char *name,
                                     const mica_fields_t *fields,
                                     mica_error_t *err)
{
    identity_layer_t *l;
    const int64_t *dt = mica_kit_ints(fields, "dtype");

    if (dt && !identity_type((mica_dtype_t)dt[0])) {
        mica_kit_host->set_error(err, "'dtype' %lld is not a type of mica",
                                 (long long)dt[0]);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->has_dtype = dt != NULL;
    l->dtype = dt ? (mica_dtype_t)dt[0] : MICA_FLOAT32;
    l->saturate = mica_kit_int(fields, "saturate", 1) != 0;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(identity, "Identity", identity_fields,
                    MICA_KIT_COUNT(identity_fields), identity_create,
                    identity_enqueue_cpu, identity_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = identity_output_dtypes,
                    .output_dims = identity_output_dims,
                    .supports_format = identity_supports_format,
                    .output_values = identity_output_values)

static const mica_layer_ops_t identity_ops_vec = MICA_KIT_OPS(
    identity_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = identity_output_dtypes,
    .output_dims = identity_output_dims,
    .supports_format = identity_supports_format,
    .output_values = identity_output_values);
static const mica_layer_creator_t identity_creator_vec = MICA_KIT_CREATOR(
    "Identity", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, identity_fields,
    MICA_KIT_COUNT(identity_fields), identity_create, &identity_ops_vec);

static const mica_layer_creator_t *const identity_creators[] = {
    MICA_KIT_PAIR(identity), &identity_creator_vec};

MICA_KIT_ENTRY("identity", PACKAGE_VERSION, "MIT",
               "Identity: copy, cast to another type, or reorder",
               identity_creators)
