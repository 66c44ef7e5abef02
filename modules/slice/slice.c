/*
 * modules/slice/slice.c - the Slice layer (TensorRT's ISliceLayer):
 * creators, layer ops and the CPU reference.
 *
 * Inputs: x, then optional start, size, stride (1-D int32 or int64 shape
 * tensors of length rank(x), MICA_INPUT_SHAPE) and an optional fill value
 * (a 0-D tensor of x's type, mode fill only).  Each of start, size and
 * stride comes from its input when given, else from the param of the same
 * name; start defaults to zeros and stride to ones, size has no default.
 *
 * Output dims = size.  Element i along axis a reads x at start[a] +
 * i * stride[a] (strides may be negative or 0), mapped by the mode:
 *   default  the coordinate must lie inside the axis: an error at build
 *            time when everything is constant, at run time otherwise;
 *   wrap     modulo the axis length;
 *   clamp    clamped to [0, d - 1];
 *   fill     outside the axis the element is the fill value (input 4, or
 *            the `fill_value` param, default 0);
 *   reflect  mirrored about the edge elements (see slice.h).
 * A size of 0 needs no check.  A non-zero size on an axis of length 0 is
 * an error, except in fill mode, where every element is the fill value.
 *
 * Formats: linear; on the CPU, x and the output also channels last
 * (each its own: offsets through their strides), so that a split of an
 * NHWC feature map along its channels needs no reorder.
 *
 * Implementations on the CPU: the reference (element by element), and
 * vec (priority 6), one strided gather where the window lies inside x.
 *
 * Any element type of 1, 2 or 4 bytes (float32, float16, int8, int32,
 * bool...), and on the CPU of 8 (float64, int64, uint64); the output has
 * x's type.  output_values gives the values of a
 * 1-D integer shape tensor when x's values are known and start, size and
 * stride are constants.
 */
#include <config.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "kit_vec.h"
#include "slice.h"

static const char *const mode_names[] = {
    "default", "wrap", "clamp", "fill", "reflect", NULL,
};

static const int64_t default_mode = MICA__SLICE_DEFAULT;

static const mica_field_schema_t slice_fields[] = {
    {"start", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "first coordinate per axis, when input 1 is absent (default: zeros)"},
    {"size", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "output dimensions, when input 2 is absent"},
    {"stride", MICA_FIELD_INT, MICA_COUNT_ANY, 0, 0, NULL, NULL,
     "step per axis, when input 3 is absent (default: ones)"},
    {"mode", MICA_FIELD_ENUM, 1, 0, 1, &default_mode, mode_names,
     "out-of-bounds handling: default, wrap, clamp, fill, reflect"},
    {"fill_value", MICA_FIELD_FLOAT, 1, 0, 0, NULL, NULL,
     "the value outside the input in mode fill, when input 4 is absent "
     "(default: 0)"},
};

/* Which param or input holds what. */
enum { P_START = 0, P_SIZE = 1, P_STRIDE = 2 };
static const char *const param_names[] = {"start", "size", "stride"};

typedef struct slice_layer {
    mica_kit_layer_t base;
    int mode;
    int32_t count[3]; /* per param; -1: absent */
    int64_t param[3][MICA_MAX_DIMS];
    double fill_value;
} slice_layer_t;

#define EXPR_C(v) mica_kit_host->expr_constant(eb, (v))
#define IS_C(e) mica_kit_host->expr_is_constant(e)
#define C_VAL(e) mica_kit_host->expr_constant_value(e)

static int32_t slice_input_kind(const mica_layer_t *layer, int32_t index,
                                int32_t nb_inputs)
{
    (void)layer;
    (void)nb_inputs;
    return index >= 1 && index <= 3 ? MICA_INPUT_SHAPE : MICA_INPUT_DATA;
}

static mica_status_t check_nb_inputs(int32_t nb_in, mica_error_t *err)
{
    if (nb_in < 1 || nb_in > 5)
        return MICA_KIT_FAIL(err,
                             "takes 1 to 5 inputs (x, start, size, stride, "
                             "fill value), got %d",
                             (int)nb_in);
    return MICA_OK;
}

static mica_status_t slice_output_dtypes(const mica_layer_t *layer,
                                         const mica_dtype_t *in,
                                         int32_t nb_in, mica_dtype_t *out,
                                         int32_t nb_out, mica_error_t *err)
{
    mica_status_t st;
    (void)layer;
    if ((st = check_nb_inputs(nb_in, err)) != MICA_OK)
        return st;
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    out[0] = in[0];
    return MICA_OK;
}

/* Whether input k is given in output_dims' view (an omitted input has
 * nb_dims -1). */
static int given(const mica_shape_expr_t *in, int32_t nb_in, int32_t k)
{
    return k < nb_in && in[k].nb_dims >= 0;
}

/*
 * Axis expressions of start, size or stride (`which`) for rank r: from
 * input which+1 when given (it must be 1-D of length r with values), else
 * the param (of length r), else the default.
 */
static mica_status_t axis_exprs(const slice_layer_t *l, int which,
                                const mica_shape_expr_t *in, int32_t nb_in,
                                int32_t r, mica_expr_builder_t *eb,
                                const mica_expr_t **e, mica_error_t *err)
{
    int32_t a, k = which + 1;
    const char *name = param_names[which];

    if (given(in, nb_in, k)) {
        if (in[k].nb_dims != 1 || !IS_C(in[k].d[0]) ||
            C_VAL(in[k].d[0]) != r)
            return MICA_KIT_FAIL(err,
                                 "input %d (%s) must be a 1-D tensor of "
                                 "length %d (the rank of x), got rank %d%s",
                                 (int)k, name, (int)r, (int)in[k].nb_dims,
                                 in[k].nb_dims == 1 ? " with another length"
                                                    : "");
        if (!in[k].values || in[k].nb_values != r)
            return MICA_KIT_FAIL(err,
                                 "input %d (%s) must be a shape tensor: its "
                                 "values are not known before execution",
                                 (int)k, name);
        for (a = 0; a < r; a++)
            e[a] = in[k].values[a];
        return MICA_OK;
    }
    if (l->count[which] >= 0 && l->count[which] != r)
        return MICA_KIT_FAIL(err, "'%s' has %d entries but x has rank %d", name,
                             (int)l->count[which], (int)r);
    if (l->count[which] < 0 && which == P_SIZE && r > 0)
        return MICA_KIT_FAIL(err, "no size: give the 'size' param or input 2");
    for (a = 0; a < r; a++) {
        int64_t v = l->count[which] >= 0 ? l->param[which][a]
                                         : which == P_STRIDE ? 1 : 0;
        if (!(e[a] = EXPR_C(v)))
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

/*
 * Check one axis of length d against the mode; `fail` is the status to
 * return (invalid at build time, runtime at run time).
 */
static mica_status_t check_axis(int mode, int32_t a, int64_t d, int64_t start,
                                int64_t size, int64_t stride,
                                mica_status_t fail, mica_error_t *err)
{
    int64_t last;

    if (size < 0) {
        mica_kit_host->set_error(err, "axis %d: size %lld is negative",
                                 (int)a, (long long)size);
        return fail;
    }
    if (size == 0)
        return MICA_OK;
    /* start + i * stride for i < size, in every mode: its ends in 64 bits
     * (the values between lie between them) */
    if (__builtin_mul_overflow(size - 1, stride, &last) ||
        __builtin_add_overflow(start, last, &last)) {
        mica_kit_host->set_error(err, "axis %d: start %lld + (size %lld - 1) "
                                 "* stride %lld is beyond 64 bits",
                                 (int)a, (long long)start, (long long)size,
                                 (long long)stride);
        return fail;
    }
    if (mode == MICA__SLICE_FILL)
        return MICA_OK;
    if (d == 0) {
        mica_kit_host->set_error(err, "axis %d: size %lld on an input axis "
                                 "of length 0 (mode %s; only fill allows it)",
                                 (int)a, (long long)size, mode_names[mode]);
        return fail;
    }
    if (mode != MICA__SLICE_DEFAULT)
        return MICA_OK;
    if (start < 0 || start >= d || last < 0 || last >= d) {
        mica_kit_host->set_error(err,
                                 "axis %d: start %lld, size %lld, stride %lld "
                                 "reads index "
                                 "%lld, outside [0, %lld) of the input (mode "
                                 "default; wrap, "
                                 "clamp, fill or reflect allow it)",
                                 (int)a, (long long)start, (long long)size,
                                 (long long)stride,
                                 (long long)(start < 0 || start >= d ? start
                                                                     : last),
                                 (long long)d);
        return fail;
    }
    return MICA_OK;
}

static mica_status_t slice_output_dims(const mica_layer_t *layer,
                                       int32_t index,
                                       const mica_shape_expr_t *in,
                                       int32_t nb_in, mica_expr_builder_t *eb,
                                       mica_shape_expr_t *out,
                                       mica_error_t *err)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    const mica_expr_t *e[3][MICA_MAX_DIMS];
    int32_t a, w, r;
    mica_status_t st;

    if ((st = check_nb_inputs(nb_in, err)) != MICA_OK)
        return st;
    if (index != 0)
        return MICA_KIT_FAIL(err, "has no output %d", (int)index);
    r = in[0].nb_dims;
    for (w = 0; w < 3; w++)
        if ((st = axis_exprs(l, w, in, nb_in, r, eb, e[w], err)) != MICA_OK)
            return st;
    for (a = 0; a < r; a++) {
        const mica_expr_t *d = in[0].d[a];
        if (IS_C(e[P_SIZE][a]) && C_VAL(e[P_SIZE][a]) < 0)
            return MICA_KIT_FAIL(err, "axis %d: size %lld is negative", (int)a,
                                 (long long)C_VAL(e[P_SIZE][a]));
        if (IS_C(d) && IS_C(e[P_START][a]) && IS_C(e[P_SIZE][a]) &&
            IS_C(e[P_STRIDE][a]) &&
            (st = check_axis(l->mode, a, C_VAL(d), C_VAL(e[P_START][a]),
                             C_VAL(e[P_SIZE][a]), C_VAL(e[P_STRIDE][a]),
                             MICA_ERR_INVALID, err)) != MICA_OK)
            return st;
        out->d[a] = e[P_SIZE][a];
    }
    out->nb_dims = r;
    return MICA_OK;
}

/* The fill value `v` as the bits of one element of type t (in the low
 * bytes). */
static uint64_t fill_bits_of(mica_dtype_t t, double v)
{
    uint64_t bits = 0;
    float f = (float)v;
    double c;
    switch (t) {
    case MICA_FLOAT64:
        memcpy(&bits, &v, sizeof v);
        break;
    case MICA_INT64: case MICA_UINT64:
        c = isnan(v) ? 0 : nearbyint(v);
        if (t == MICA_UINT64)
            bits = c <= 0 ? 0 : c >= 18446744073709551615.0
                                    ? UINT64_MAX : (uint64_t)c;
        else
            bits = (uint64_t)(c <= -9223372036854775808.0 ? INT64_MIN
                              : c >= 9223372036854775807.0
                                  ? INT64_MAX : (int64_t)c);
        break;
    case MICA_FLOAT32:
        memcpy(&bits, &f, sizeof f);
        break;
    case MICA_FLOAT16:
        bits = mica_kit_float_to_half(f);
        break;
    case MICA_BOOL:
        bits = v != 0;
        break;
    case MICA_INT8: case MICA_UINT8: case MICA_INT32: {
        int64_t lo = t == MICA_INT8 ? -128 : t == MICA_UINT8 ? 0 : INT32_MIN;
        int64_t hi = t == MICA_INT8 ? 127 : t == MICA_UINT8 ? 255 : INT32_MAX;
        c = isnan(v) ? 0 : nearbyint(v);
        c = c < (double)lo ? (double)lo : c > (double)hi ? (double)hi : c;
        if (t == MICA_INT32) {
            int32_t x = (int32_t)c;
            memcpy(&bits, &x, sizeof x);
        } else {
            bits = (uint8_t)(int64_t)c; /* two's complement for int8 */
        }
        break;
    }
    default: /* other 2-byte types: through float16's neighbour, bf16 */
        memcpy(&bits, &f, sizeof f);
        bits >>= 16;
        break;
    }
    return bits;
}

/* fill_value as an int32 fill writes it (rounded, saturated, NaN 0). */
static int32_t fill_int32(double v)
{
    uint32_t bits = fill_bits_of(MICA_INT32, v);
    int32_t x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/*
 * Values of a 1-D integer shape-tensor output: x's values picked by
 * constant start/size/stride.  Unsupported when anything is unknown.
 */
static mica_status_t slice_output_values(const mica_layer_t *layer,
                                         int32_t index,
                                         const mica_shape_expr_t *in,
                                         int32_t nb_in,
                                         mica_expr_builder_t *eb,
                                         const mica_expr_t **values,
                                         int32_t nb_values, mica_error_t *err)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    const mica_expr_t *e[3][MICA_MAX_DIMS], *fill = NULL;
    int64_t d, start, size, stride, i;
    int32_t w;
    mica_status_t st;

    if (index != 0 || nb_in < 1 || nb_in > 5 || in[0].nb_dims != 1 ||
        !in[0].values || !IS_C(in[0].d[0]))
        return MICA_ERR_UNSUPPORTED;
    d = C_VAL(in[0].d[0]);
    if (in[0].nb_values != d)
        return MICA_ERR_UNSUPPORTED;
    for (w = 0; w < 3; w++) {
        if ((st = axis_exprs(l, w, in, nb_in, 1, eb, e[w], err)) != MICA_OK)
            return st;
        if (!IS_C(e[w][0]))
            return MICA_ERR_UNSUPPORTED;
    }
    start = C_VAL(e[P_START][0]);
    size = C_VAL(e[P_SIZE][0]);
    stride = C_VAL(e[P_STRIDE][0]);
    if (size != nb_values ||
        check_axis(l->mode, 0, d, start, size, stride, MICA_ERR_INVALID,
                   err) != MICA_OK)
        return MICA_ERR_UNSUPPORTED;
    if (l->mode == MICA__SLICE_FILL) {
        if (nb_in > 4 && given(in, nb_in, 4)) {
            if (!in[4].values || in[4].nb_values != 1)
                return MICA_ERR_UNSUPPORTED;
            fill = in[4].values[0];
        } else if (!(fill = EXPR_C(fill_int32(l->fill_value)))) {
            return MICA_KIT_FAIL(err, "out of host memory");
        }
    }
    for (i = 0; i < size; i++) {
        int64_t k = mica__slice_map(start + i * stride, d, l->mode);
        values[i] = k < 0 ? fill : in[0].values[k];
        if (!values[i])
            return MICA_ERR_UNSUPPORTED;
    }
    return MICA_OK;
}

static int32_t slice_supports_format(const mica_layer_t *layer, int32_t pos,
                                     const mica_tensor_desc_t *io,
                                     int32_t nb_in, int32_t nb_out)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    size_t s;

    int cpu = (l->base.creator->devices & MICA_DEVICE_CPU) != 0;

    if (nb_out != 1 || pos < 0 || pos > nb_in)
        return 0;
    /* x and the output: linear, or on the CPU channels last too (the
     * reference reads and writes through each one's strides); the
     * shape inputs linear */
    if (!mica_kit_linear(io, pos) &&
        (!cpu || (pos != 0 && pos != nb_in) ||
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    if (pos == 0) {
        s = mica_dtype_size(io[0].dtype);
        return s == 1 || s == 2 || s == 4 || (s == 8 && cpu);
    }
    if (pos == nb_in)
        return io[pos].dtype == io[0].dtype;
    if (pos <= 3)
        return io[pos].dtype == MICA_INT32 || io[pos].dtype == MICA_INT64;
    /* the fill value: mode fill, x's type */
    return pos == 4 && l->mode == MICA__SLICE_FILL &&
           io[4].dtype == io[0].dtype;
}

/* ---- running ---------------------------------------------------------- */

static int64_t read_int(const void *p, mica_dtype_t t, int32_t i)
{
    if (t == MICA_INT64)
        return ((const int64_t *)p)[i];
    return ((const int32_t *)p)[i];
}

/*
 * The view of one run, with the run-time checks.  vals[k] (k = 1..3) is
 * input k in host memory, or NULL where the input is absent (the param or
 * the default applies).
 */
static mica_status_t make_view(const slice_layer_t *l,
                               const mica_tensor_desc_t *in, int32_t nb_in,
                               const mica_tensor_desc_t *out,
                               const void *const *vals,
                               mica__slice_view_t *v, mica_error_t *err)
{
    int64_t stride = 1;
    int32_t a, w, r = in[0].dims.nb_dims;
    mica_status_t st;

    memset(v, 0, sizeof *v);
    if (r > MICA_MAX_DIMS || out[0].dims.nb_dims != r) {
        mica_kit_host->set_error(err, "output has rank %d but x has rank %d",
                                 (int)out[0].dims.nb_dims, (int)r);
        return MICA_ERR_INTERNAL;
    }
    v->rank = r;
    v->mode = l->mode;
    for (a = r - 1; a >= 0; a--) {
        v->in_dims[a] = in[0].dims.d[a];
        v->in_strides[a] = stride;
        stride *= in[0].dims.d[a];
        v->out_dims[a] = out[0].dims.d[a];
    }
    for (w = 0; w < 3; w++) {
        int32_t k = w + 1;
        for (a = 0; a < r; a++) {
            int64_t x;
            if (k < nb_in && vals[k])
                x = read_int(vals[k], in[k].dtype, a);
            else if (l->count[w] >= 0)
                x = l->param[w][a];
            else
                x = w == P_STRIDE ? 1 : 0;
            if (w == P_START)
                v->start[a] = x;
            else if (w == P_STRIDE)
                v->stride[a] = x;
            else if (x != v->out_dims[a]) {
                mica_kit_host->set_error(err, "axis %d: size %lld but the "
                                         "output has length %lld", (int)a,
                                         (long long)x,
                                         (long long)v->out_dims[a]);
                return MICA_ERR_INTERNAL;
            }
        }
    }
    for (a = 0; a < r; a++)
        if ((st = check_axis(l->mode, a, v->in_dims[a], v->start[a],
                             v->out_dims[a], v->stride[a], MICA_ERR_RUNTIME,
                             err)) != MICA_OK)
            return st;
    return MICA_OK;
}

static mica_status_t slice_enqueue_cpu(mica_layer_t *layer,
                                       const mica_tensor_desc_t *in,
                                       int32_t nb_in,
                                       const mica_tensor_desc_t *out,
                                       int32_t nb_out,
                                       const void *const *inputs,
                                       void *const *outputs, void *workspace,
                                       void *stream, mica_error_t *err)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    const unsigned char *src = inputs[0];
    unsigned char *dst = outputs[0], fill[8];
    int64_t *map[MICA_MAX_DIMS], c[MICA_MAX_DIMS], total = 0, n, i, off;
    int64_t *table = NULL, ostride[MICA_MAX_DIMS];
    uint64_t bits;
    mica__slice_view_t v;
    mica_status_t st;
    size_t es = mica_dtype_size(in[0].dtype);
    int32_t a, k, bad;
    (void)nb_out; (void)workspace; (void)stream;

    if ((st = make_view(l, in, nb_in, out, inputs, &v, err)) != MICA_OK)
        return st;
    n = mica_dims_volume(&out[0].dims);
    if (n <= 0)
        return MICA_OK;
    if (nb_in > 4 && inputs[4]) {
        memcpy(fill, inputs[4], es);
    } else {
        bits = fill_bits_of(in[0].dtype, l->fill_value);
        memcpy(fill, &bits, es); /* little-endian: the low bytes */
    }
    /* Per axis, the input index each output coordinate reads (-1: fill). */
    for (a = 0; a < v.rank; a++)
        total += v.out_dims[a];
    table = malloc(sizeof *table * (size_t)(total > 0 ? total : 1));
    if (!table) {
        mica_kit_host->set_error(err, "out of host memory (%lld indices)",
                                 (long long)total);
        return MICA_ERR_NOMEM;
    }
    total = 0;
    for (a = 0; a < v.rank; a++) {
        map[a] = table + total;
        for (i = 0; i < v.out_dims[a]; i++)
            map[a][i] = mica__slice_map(v.start[a] + i * v.stride[a],
                                        v.in_dims[a], v.mode);
        total += v.out_dims[a];
        c[a] = 0;
    }
    /* x and the output in their formats (linear, or channels last) */
    mica_kit_strides(&in[0], v.in_strides);
    mica_kit_strides(&out[0], ostride);
    for (i = 0; i < n; i++) {
        int64_t o = 0;
        off = 0;
        bad = 0;
        for (a = 0; a < v.rank; a++) {
            o += c[a] * ostride[a];
            if (map[a][c[a]] < 0)
                bad = 1;
            else
                off += map[a][c[a]] * v.in_strides[a];
        }
        memcpy(dst + (size_t)o * es, bad ? fill : src + (size_t)off * es, es);
        for (k = v.rank - 1; k >= 0; k--) { /* odometer */
            if (++c[k] < v.out_dims[k])
                break;
            c[k] = 0;
        }
    }
    free(table);
    return MICA_OK;
}

/*
 * vec: where every index it reads lies inside x (in mode default always;
 * in the other modes where the window stays inside), one strided gather
 * through the formats' strides (kit_gather.c: rows copied whole, several
 * threads); else the reference's loop.
 */
static MICA_KIT_ENQUEUE(slice_enqueue_vec)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    int64_t is[MICA_MAX_DIMS], os[MICA_MAX_DIMS], gd[MICA_MAX_DIMS];
    int64_t gs[MICA_MAX_DIMS], base = 0;
    int32_t order[MICA_MAX_DIMS], a, i;
    size_t es = mica_dtype_size(in[0].dtype);
    mica__slice_view_t v;
    mica_status_t st;

    if ((st = make_view(l, in, nb_in, out, inputs, &v, err)) != MICA_OK)
        return st;
    if (mica_dims_volume(&out[0].dims) <= 0)
        return MICA_OK;
    for (a = 0; a < v.rank; a++) {
        int64_t last = v.start[a] + (v.out_dims[a] - 1) * v.stride[a];
        if (v.start[a] < 0 || v.start[a] >= v.in_dims[a] || last < 0 ||
            last >= v.in_dims[a])
            return slice_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs,
                                     outputs, workspace, stream, err);
    }
    if (!mica_kit_strides(&in[0], is) || !mica_kit_strides(&out[0], os))
        return MICA_KIT_FAIL(err, "a format that does not apply to rank %d",
                             (int)v.rank);
    /* the output's axes in its memory order (strides descending) */
    for (a = 0; a < v.rank; a++) {
        base += v.start[a] * is[a];
        for (i = a; i > 0 && os[order[i - 1]] < os[a]; i--)
            order[i] = order[i - 1];
        order[i] = a;
    }
    for (a = 0; a < v.rank; a++) {
        gd[a] = v.out_dims[order[a]];
        gs[a] = v.stride[order[a]] * is[order[a]];
    }
    mica__vec_gather((const unsigned char *)inputs[0] +
                         base * (ptrdiff_t)es,
                     v.rank, gd, gs, outputs[0], es);
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t slice_enqueue_cuda(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs,
                                        void *workspace, void *stream,
                                        mica_error_t *err)
{
    const slice_layer_t *l = (const slice_layer_t *)layer;
    mica__slice_view_t v;
    mica_status_t st;
    int64_t n;
    (void)nb_out; (void)workspace;

    /* start, size, stride are shape tensors: host memory, as the core
     * passes MICA_INPUT_SHAPE inputs to every implementation. */
    if ((st = make_view(l, in, nb_in, out, inputs, &v, err)) != MICA_OK)
        return st;
    n = mica_dims_volume(&out[0].dims);
    if (n <= 0)
        return MICA_OK;
    return mica__slice_cuda(inputs[0], outputs[0], n,
                            mica_dtype_size(in[0].dtype), &v,
                            nb_in > 4 ? inputs[4] : NULL,
                            (uint32_t)fill_bits_of(in[0].dtype,
                                                   l->fill_value), stream,
                            err);
}
#endif

static mica_layer_t *slice_create(const mica_layer_creator_t *creator,
                                  const char *name,
                                  const mica_fields_t *fields,
                                  mica_error_t *err)
{
    slice_layer_t tmp, *l;
    int32_t w, a;

    memset(&tmp, 0, sizeof tmp);
    tmp.mode = (int)mica_kit_int(fields, "mode", MICA__SLICE_DEFAULT);
    for (w = 0; w < 3; w++) {
        const int64_t *v = mica_kit_ints(fields, param_names[w]);
        int32_t n = mica_kit_count(fields, param_names[w]);
        tmp.count[w] = -1;
        if (n < 0)
            continue;
        if (n > MICA_MAX_DIMS) {
            mica_kit_host->set_error(err, "'%s' has %d entries, more than "
                                     "%d", param_names[w], (int)n,
                                     MICA_MAX_DIMS);
            return NULL;
        }
        for (a = 0; a < n; a++) {
            if (w == P_SIZE && v[a] < 0) {
                mica_kit_host->set_error(err, "'size' entry %d is %lld: "
                                         "sizes are >= 0", (int)a,
                                         (long long)v[a]);
                return NULL;
            }
            tmp.param[w][a] = v[a];
        }
        tmp.count[w] = n;
    }
    if (mica_kit_count(fields, "fill_value") > 0) {
        if (tmp.mode != MICA__SLICE_FILL) {
            mica_kit_host->set_error(err, "'fill_value' is only used in "
                                     "mode fill, mode is %s",
                                     mode_names[tmp.mode]);
            return NULL;
        }
        tmp.fill_value = mica_kit_float(fields, "fill_value", 0);
    }
    l = mica_kit_layer_new(sizeof *l,
                           (const mica_layer_ops_t *)creator->user_data,
                           creator, name, fields, err);
    if (!l)
        return NULL;
    tmp.base = l->base;
    *l = tmp;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(slice, "Slice", slice_fields, MICA_KIT_COUNT(slice_fields),
                    slice_create, slice_enqueue_cpu, slice_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = slice_output_dtypes,
                    .output_dims = slice_output_dims,
                    .supports_format = slice_supports_format,
                    .output_values = slice_output_values,
                    .input_kind = slice_input_kind)

static const mica_layer_ops_t slice_ops_vec = MICA_KIT_OPS(
    slice_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = slice_output_dtypes,
    .output_dims = slice_output_dims,
    .supports_format = slice_supports_format,
    .output_values = slice_output_values,
    .input_kind = slice_input_kind);
static const mica_layer_creator_t slice_creator_vec = MICA_KIT_CREATOR(
    "Slice", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, slice_fields,
    MICA_KIT_COUNT(slice_fields), slice_create, &slice_ops_vec);

static const mica_layer_creator_t *const slice_creators[] = {
    MICA_KIT_PAIR(slice), &slice_creator_vec};

MICA_KIT_ENTRY("slice", PACKAGE_VERSION, "MIT",
               "Slice: strided windows with sample modes",
               slice_creators)
