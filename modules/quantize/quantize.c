/*
 * modules/quantize/quantize.c - the Quantize and Dequantize layers
 * (TensorRT's IQuantizeLayer and IDequantizeLayer, as ONNX's
 * QuantizeLinear and DequantizeLinear): creators, layer ops and the CPU
 * reference.
 *
 * Inputs x, scale and an optional zero point.  Quantize: y = clamp(
 * round_half_even(x / scale) + zero_point, -128, 127), x float32 or
 * float16, y int8.  Dequantize: y = (x - zero_point) * scale, x int8, y
 * of the scale's type.  The scale is float32 or float16 (for Quantize
 * independently of x's type), computed in float32.
 *
 * Without `axis` the scale is one value ([] or [1]): per tensor.  With
 * `axis`, it is a scalar ([]: per tensor) or 1-D of x's length along
 * that axis: per channel.  The zero point, int8, has the scale's shape;
 * TensorRT requires it to be zero, ONNX allows any int8 value, and mica
 * takes any.  The scale is an ordinary input (a Constant in practice);
 * its shape is checked at build time where the dimensions are known
 * then, else at run time.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "quantize.h"

static const mica_field_schema_t qdq_fields[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL,
     "the axis of per-channel scales (absent: per tensor)"},
};

typedef struct qdq_layer {
    mica_kit_layer_t base;
    int dq;       /* 1 for Dequantize */
    int has_axis;
    int64_t axis;
} qdq_layer_t;

static const char *type_name(const qdq_layer_t *l)
{
    return l->dq ? "Dequantize" : "Quantize";
}

static int float_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

static int x_ok(const qdq_layer_t *l, mica_dtype_t t)
{
    return l->dq ? t == MICA_INT8 : float_type(t);
}

/* ---- types ------------------------------------------------------------ */

static mica_status_t qdq_output_dtypes(const mica_layer_t *layer,
                                       const mica_dtype_t *in, int32_t nb_in,
                                       mica_dtype_t *out, int32_t nb_out,
                                       mica_error_t *err)
{
    const qdq_layer_t *l = (const qdq_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;

    if (nb_in < 2 || nb_in > 3 || nb_out != 1)
        return MICA_KIT_FAIL(err, "%s has 2 or 3 inputs (x, scale, "
                             "zero_point) and 1 output, got %d and %d",
                             type_name(l), (int)nb_in, (int)nb_out);
    if (!x_ok(l, in[0]))
        return MICA_KIT_FAIL(err, "%s takes %s input 0 (x), got %s",
                             type_name(l),
                             l->dq ? "int8" : "float32 or float16",
                             h->dtype_name(in[0]));
    if (!float_type(in[1]))
        return MICA_KIT_FAIL(err, "input 1 (scale) must be float32 or "
                             "float16, got %s", h->dtype_name(in[1]));
    /* an omitted zero point reads float32 here: supports_format decides */
    if (nb_in == 3 && in[2] != MICA_INT8 && in[2] != MICA_FLOAT32)
        return MICA_KIT_FAIL(err, "input 2 (zero_point) must be int8, got %s",
                             h->dtype_name(in[2]));
    out[0] = l->dq ? in[1] : MICA_INT8;
    return MICA_OK;
}

static int32_t qdq_supports_format(const mica_layer_t *layer, int32_t pos,
                                   const mica_tensor_desc_t *io,
                                   int32_t nb_in, int32_t nb_out)
{
    const qdq_layer_t *l = (const qdq_layer_t *)layer;

    if (nb_in < 2 || nb_in > 3 || nb_out != 1 || pos < 0 ||
        pos > nb_in || !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return x_ok(l, io[0].dtype);
    if (pos == 1)
        return float_type(io[1].dtype);
    if (pos < nb_in)
        return io[pos].dtype == MICA_INT8;
    return io[pos].dtype == (l->dq ? io[1].dtype : MICA_INT8);
}

/* ---- shapes ----------------------------------------------------------- */

/* Dimensions, each known or not (a runtime dimension at build time). */
typedef struct shape {
    int32_t n;
    int64_t d[MICA_MAX_DIMS];
    int known[MICA_MAX_DIMS];
} shape_t;

static void shape_of_exprs(const mica_shape_expr_t *e, shape_t *s)
{
    int32_t k;
    s->n = e->nb_dims;
    for (k = 0; k < e->nb_dims; k++) {
        s->known[k] = mica_kit_host->expr_is_constant(e->d[k]);
        s->d[k] = s->known[k] ? mica_kit_host->expr_constant_value(e->d[k])
                              : -1;
    }
}

static void shape_of_dims(const mica_dims_t *d, shape_t *s)
{
    int32_t k;
    s->n = d->nb_dims;
    for (k = 0; k < d->nb_dims; k++) {
        s->known[k] = 1;
        s->d[k] = d->d[k];
    }
}

static const char *shape_text(const shape_t *s, char *buf, size_t len)
{
    const char *sep = "";
    size_t pos = 0;
    int32_t k;

    buf[0] = '\0';
    pos += (size_t)snprintf(buf, len, "[");
    for (k = 0; k < s->n && pos < len; k++) {
        if (s->known[k])
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", sep,
                                    (long long)s->d[k]);
        else
            pos += (size_t)snprintf(buf + pos, len - pos, "%s?", sep);
        sep = ", ";
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

/*
 * Check the shapes of x, the scale and the zero point (zp NULL: absent)
 * and set *per_channel; what is not known yet passes.
 */
static mica_status_t check_shapes(const qdq_layer_t *l, const shape_t *x,
                                  const shape_t *s, const shape_t *zp,
                                  int *per_channel, mica_error_t *err)
{
    char a[128], b[128];
    int32_t k;

    *per_channel = 0;
    if (l->has_axis && (l->axis < 0 || l->axis >= x->n))
        return MICA_KIT_FAIL(err, "axis %lld is out of range for input 0 of "
                             "rank %d", (long long)l->axis, (int)x->n);
    if (s->n > 1)
        return MICA_KIT_FAIL(err, "input 1 (scale) must have rank 0 or 1, "
                             "got shape %s", shape_text(s, a, sizeof a));
    if (s->n == 1 && !l->has_axis && s->known[0] && s->d[0] != 1)
        return MICA_KIT_FAIL(err, "input 1 (scale) has shape %s: without "
                             "'axis' it must be one value ([] or [1])",
                             shape_text(s, a, sizeof a));
    if (s->n == 1 && l->has_axis) {
        if (s->known[0] && x->known[l->axis] && s->d[0] != x->d[l->axis])
            return MICA_KIT_FAIL(err, "input 1 (scale) has shape %s but "
                                 "input 0 has length %lld along axis %lld: "
                                 "the scale must be [%lld] or a scalar",
                                 shape_text(s, a, sizeof a),
                                 (long long)x->d[l->axis], (long long)l->axis,
                                 (long long)x->d[l->axis]);
        *per_channel = 1;
    }
    if (!zp)
        return MICA_OK;
    for (k = 0; k < zp->n && zp->n == s->n; k++)
        if (zp->known[k] && s->known[k] && zp->d[k] != s->d[k])
            break;
    if (zp->n != s->n || k < zp->n)
        return MICA_KIT_FAIL(err, "input 2 (zero_point) has shape %s but "
                             "input 1 (scale) has shape %s",
                             shape_text(zp, a, sizeof a),
                             shape_text(s, b, sizeof b));
    return MICA_OK;
}

static mica_status_t qdq_output_dims(const mica_layer_t *layer, int32_t index,
                                     const mica_shape_expr_t *in,
                                     int32_t nb_in, mica_expr_builder_t *eb,
                                     mica_shape_expr_t *out,
                                     mica_error_t *err)
{
    const qdq_layer_t *l = (const qdq_layer_t *)layer;
    shape_t x, s, zp;
    int per_channel;
    mica_status_t st;

    if (index != 0 || nb_in < 2)
        return MICA_KIT_FAIL(err, "%s has 2 or 3 inputs and 1 output",
                             type_name(l));
    shape_of_exprs(&in[0], &x);
    shape_of_exprs(&in[1], &s);
    if (nb_in > 2 && in[2].nb_dims >= 0)
        shape_of_exprs(&in[2], &zp);
    st = check_shapes(l, &x, &s, nb_in > 2 && in[2].nb_dims >= 0 ? &zp : NULL,
                      &per_channel, err);
    if (st != MICA_OK)
        return st;
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

/* ---- running ---------------------------------------------------------- */

/* The layout of this run from the actual shapes; *zp the zero point or
 * NULL. */
static mica_status_t qdq_layout(const qdq_layer_t *l,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const void *const *inputs, mica__qdq_t *q,
                                const int8_t **zp, mica_error_t *err)
{
    shape_t x, s, z;
    int per_channel, has_zp = nb_in > 2 && in[2].dtype == MICA_INT8;
    int32_t k;
    mica_status_t st;

    shape_of_dims(&in[0].dims, &x);
    shape_of_dims(&in[1].dims, &s);
    if (has_zp)
        shape_of_dims(&in[2].dims, &z);
    if ((st = check_shapes(l, &x, &s, has_zp ? &z : NULL, &per_channel,
                           err)) != MICA_OK)
        return st;
    q->n = mica_dims_volume(&in[0].dims);
    q->k = 1;
    q->inner = 1;
    if (per_channel) {
        q->k = x.d[l->axis];
        for (k = (int32_t)l->axis + 1; k < x.n; k++)
            q->inner *= x.d[k];
    }
    q->xtype = in[0].dtype;
    q->stype = in[1].dtype;
    *zp = has_zp ? (const int8_t *)inputs[2] : NULL;
    return MICA_OK;
}

static float ld_f(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static MICA_KIT_ENQUEUE(qdq_enqueue_cpu)
{
    const qdq_layer_t *l = (const qdq_layer_t *)layer;
    const int8_t *zp;
    mica__qdq_t q;
    mica_status_t st;
    int64_t i;

    if ((st = qdq_layout(l, in, nb_in, inputs, &q, &zp, err)) != MICA_OK)
        return st;
    for (i = 0; i < q.n; i++) {
        int64_t c = (i / q.inner) % q.k;
        float s = ld_f(q.stype, inputs[1], c);
        int32_t z = zp ? zp[c] : 0;
        if (!l->dq) {
            ((int8_t *)outputs[0])[i] =
                mica__quantize(ld_f(q.xtype, inputs[0], i), s, z);
        } else {
            float y = mica__dequantize(((const int8_t *)inputs[0])[i], s, z);
            if (q.stype == MICA_FLOAT16)
                ((uint16_t *)outputs[0])[i] = mica_kit_float_to_half(y);
            else
                ((float *)outputs[0])[i] = y;
        }
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(qdq_enqueue_cuda)
{
    const qdq_layer_t *l = (const qdq_layer_t *)layer;
    const int8_t *zp;
    mica__qdq_t q;
    mica_status_t st;

    if ((st = qdq_layout(l, in, nb_in, inputs, &q, &zp, err)) != MICA_OK)
        return st;
    if (q.n == 0)
        return MICA_OK;
    if (l->dq)
        return mica__dequantize_cuda(&q, inputs[0], inputs[1], zp,
                                     outputs[0], stream, err);
    return mica__quantize_cuda(&q, inputs[0], inputs[1], zp, outputs[0],
                               stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

static mica_layer_t *qdq_create(const mica_layer_creator_t *creator,
                                const char *name, const mica_fields_t *fields,
                                mica_error_t *err)
{
    qdq_layer_t *l = mica_kit_layer_new(sizeof *l, creator->user_data,
                                        creator, name, fields, err);
    if (!l)
        return NULL;
    l->dq = creator->type[0] == 'D';
    l->has_axis = mica_kit_count(fields, "axis") > 0;
    l->axis = mica_kit_int(fields, "axis", 0);
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(quantize, "Quantize", qdq_fields,
                    MICA_KIT_COUNT(qdq_fields), qdq_create, qdq_enqueue_cpu,
                    qdq_enqueue_cuda, .nb_outputs = mica_kit_one_output,
                    .output_dtypes = qdq_output_dtypes,
                    .output_dims = qdq_output_dims,
                    .supports_format = qdq_supports_format)
MICA_KIT_LAYER_PAIR(dequantize, "Dequantize", qdq_fields,
                    MICA_KIT_COUNT(qdq_fields), qdq_create, qdq_enqueue_cpu,
                    qdq_enqueue_cuda, .nb_outputs = mica_kit_one_output,
                    .output_dtypes = qdq_output_dtypes,
                    .output_dims = qdq_output_dims,
                    .supports_format = qdq_supports_format)

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(quantize), MICA_KIT_PAIR(dequantize)};

MICA_KIT_ENTRY("quantize", PACKAGE_VERSION, "MIT",
               "Quantize and Dequantize: int8 with per-tensor or per-channel "
               "scales and zero points", creators)
