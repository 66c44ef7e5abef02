/*
 * modules/elementwise/elementwise.c - the ElementWise layer (TensorRT's
 * IElementWiseLayer): creators, layer ops and the CPU reference.
 *
 * Two inputs of one rank and one type; each pair of dimensions is equal or
 * one of them is 1 (broadcast; 1 against 0 gives 0).  Types, per TensorRT's
 * table: sum, prod, max, min, sub, div, pow and floor_div take float32,
 * float16, int8 and int32 and give the same type; and, or and xor take
 * bool; equal takes all five types, greater and less the four numeric
 * ones, and comparisons give bool.  Beyond TensorRT, for ONNX, the CPU
 * reference alone also takes float64 (in double), uint8, uint16, uint32,
 * uint64, int16 and int64 (in 64-bit integers, wrapping to the type's
 * width as numpy does; division by zero gives 0).  The arithmetic of each type (int32
 * wraps, int8 saturates, integer division by zero gives 0) is in
 * elementwise.h, shared with the CUDA kernels.
 *
 * On integer shape tensors whose values the builder knows, output_values
 * gives the results as expressions (see value_op).
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "elementwise.h"

static const char *const op_names[] = {
    "sum", "prod", "max", "min", "sub", "div", "pow", "floor_div",
    "and", "or", "xor", "equal", "greater", "less", "bitwise_and",
    "bitwise_or", "bitwise_xor", "shift_left", "shift_right", NULL,
};

static const mica_field_schema_t ew_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, op_names,
     "the binary operation (TensorRT's ElementWiseOperation)"},
};

typedef struct ew_layer {
    mica_kit_layer_t base;
    int op;
#ifdef MICA_HAVE_ONEDNN
    mica__ew_dnnl_t *dnnl; /* onednn: the primitive of the last problem */
#endif
} ew_layer_t;

/* ---- types ------------------------------------------------------------ */

static int is_logic(int op)
{
    return op == MICA__EW_AND || op == MICA__EW_OR || op == MICA__EW_XOR;
}

/* The ops on the bits of integers, on the CPU alone. */
static int is_bitwise(int op)
{
    return op >= MICA__EW_BITWISE_AND && op <= MICA__EW_SHIFT_RIGHT;
}

static int is_shift(int op)
{
    return op == MICA__EW_SHIFT_LEFT || op == MICA__EW_SHIFT_RIGHT;
}

static int is_unsigned(mica_dtype_t t)
{
    return t == MICA_UINT8 || t == MICA_UINT16 || t == MICA_UINT32 ||
           t == MICA_UINT64;
}

static int is_compare(int op)
{
    return op == MICA__EW_EQUAL || op == MICA__EW_GREATER ||
           op == MICA__EW_LESS;
}

/* The types only the CPU reference computes (ONNX's, beyond TensorRT's
 * table): float64 in double; the unsigned integers, int16 and int64 in
 * 64-bit integers, the result wrapping to the type's width. */
static int is_wide(mica_dtype_t t)
{
    return t == MICA_FLOAT64 || t == MICA_UINT8 || t == MICA_UINT16 ||
           t == MICA_UINT32 || t == MICA_UINT64 || t == MICA_INT16 ||
           t == MICA_INT64;
}

/* Whether op accepts inputs of type t (on some device). */
static int input_ok(int op, mica_dtype_t t)
{
    int numeric = t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT8 ||
                  t == MICA_INT32 || is_wide(t);
    if (is_logic(op))
        return t == MICA_BOOL;
    if (is_shift(op))
        return is_unsigned(t);
    if (is_bitwise(op))
        return is_unsigned(t) || t == MICA_INT8 || t == MICA_INT16 ||
               t == MICA_INT32 || t == MICA_INT64;
    if (op == MICA__EW_EQUAL)
        return numeric || t == MICA_BOOL;
    return numeric;
}

static mica_dtype_t output_type(int op, mica_dtype_t in)
{
    return is_logic(op) || is_compare(op) ? MICA_BOOL : in;
}

static const char *accepted(int op)
{
    if (is_logic(op))
        return "bool";
    if (is_shift(op))
        return "uint8, uint16, uint32 or uint64 (on the CPU)";
    if (is_bitwise(op))
        return "int8, int16, int32, int64, uint8, uint16, uint32 or uint64 "
               "(on the CPU)";
    if (op == MICA__EW_EQUAL)
        return "float32, float16, int8, int32, bool or (on the CPU) float64, "
               "uint8, uint16, uint32, uint64, int16, int64";
    return "float32, float16, int8, int32 or (on the CPU) float64, uint8, "
           "uint16, uint32, uint64, int16, int64";
}

static mica_status_t ew_output_dtypes(const mica_layer_t *layer,
                                      const mica_dtype_t *in, int32_t nb_in,
                                      mica_dtype_t *out, int32_t nb_out,
                                      mica_error_t *err)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;

    if (nb_in != 2)
        return MICA_KIT_FAIL(err, "ElementWise takes 2 inputs, got %d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "ElementWise has 1 output, got %d",
                             (int)nb_out);
    if (!input_ok(l->op, in[0]))
        return MICA_KIT_FAIL(err, "op '%s' takes %s inputs, got %s",
                             op_names[l->op], accepted(l->op),
                             h->dtype_name(in[0]));
    if (in[1] != in[0])
        return MICA_KIT_FAIL(err, "input 1 has type %s but input 0 has type %s",
                             h->dtype_name(in[1]), h->dtype_name(in[0]));
    out[0] = output_type(l->op, in[0]);
    return MICA_OK;
}

/* ---- shapes ----------------------------------------------------------- */

static int is_const(const mica_expr_t *e, int64_t *v)
{
    if (!mica_kit_host->expr_is_constant(e))
        return 0;
    *v = mica_kit_host->expr_constant_value(e);
    return 1;
}

static mica_status_t ew_output_dims(const mica_layer_t *layer, int32_t index,
                                    const mica_shape_expr_t *in, int32_t nb_in,
                                    mica_expr_builder_t *eb,
                                    mica_shape_expr_t *out, mica_error_t *err)
{
    (void)layer;
    if (index != 0 || nb_in != 2)
        return MICA_KIT_FAIL(err,
                             "ElementWise has 2 inputs and 1 output, asked "
                             "for output %d of %d inputs",
                             (int)index, (int)nb_in);
    return mica_kit_broadcast_dims(in, 2, eb, out, err);
}

/* Whether tensor d has dims known and equal to io[0]'s. */
static int same_known_dims(const mica_tensor_desc_t *d,
                           const mica_tensor_desc_t *io)
{
    int32_t i;
    if (d->dims.nb_dims != io[0].dims.nb_dims)
        return 0;
    for (i = 0; i < d->dims.nb_dims; i++)
        if (d->dims.d[i] < 0 || d->dims.d[i] != io[0].dims.d[i])
            return 0;
    return 1;
}

/*
 * Linear; on the CPU also channels last where no input is broadcast
 * (every tensor of the same known dims and format: then element i of
 * each lies at the same place, and the reference's and oneDNN's
 * element-by-element work reads them as they are), so that an
 * ElementWise in a channels-last chain needs no reorder.
 */
static int32_t ew_supports_format(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io, int32_t nb_in,
                                  int32_t nb_out)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    int cpu = (l->base.creator->devices & MICA_DEVICE_CPU) != 0;

    if (nb_in != 2 || nb_out != 1 || pos < 0 || pos > 2 ||
        io[pos].format != io[0].format)
        return 0;
    if (!mica_kit_linear(io, pos) &&
        (!cpu ||
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims) ||
         !same_known_dims(&io[pos], io)))
        return 0;
    if ((is_wide(io[0].dtype) || is_bitwise(l->op)) && !cpu)
        return 0;
    if (pos == 0)
        return input_ok(l->op, io[0].dtype);
    if (pos == 1)
        return io[1].dtype == io[0].dtype;
    return io[2].dtype == output_type(l->op, io[0].dtype);
}

/*
 * vec: float tensors in any format each (linear, or channels last where
 * the rank has it), broadcast or not: the kit's walk reads every tensor
 * in its own layout, so a [1, C, 1, 1] constant stays linear beside a
 * channels-last activation.  Other types as the reference.
 */
static int32_t ew_supports_format_vec(const mica_layer_t *layer,
                                      int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;

    if (nb_in != 2 || nb_out != 1 || pos < 0 || pos > 2)
        return 0;
    if (!mica__ew_vec_takes(l->op, io[0].dtype))
        return ew_supports_format(layer, pos, io, nb_in, nb_out);
    if (!mica_kit_linear(io, pos) &&
        io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims))
        return 0;
    if (pos == 0)
        return input_ok(l->op, io[0].dtype);
    if (pos == 1)
        return io[1].dtype == io[0].dtype;
    return io[2].dtype == output_type(l->op, io[0].dtype);
}

/* ---- values of integer shape tensors ---------------------------------- */

/*
 * Element j of an input with n values broadcast to the output's
 * nb_values (same rank, 0-D or 1-D): NULL if it does not broadcast.
 */
static const mica_expr_t *value_at(const mica_shape_expr_t *s, int32_t j,
                                   int32_t nb_values)
{
    if (s->nb_values == nb_values)
        return s->values[j];
    return s->nb_values == 1 ? s->values[0] : NULL;
}

/*
 * a op b on the values of integer shape tensors.  Both constant: the
 * layer's own int32 arithmetic (so div, pow and division by zero give
 * what enqueue gives).  Otherwise sum, prod, max, min, sub, floor_div
 * (a divisor of 0 gives 0), the comparisons and, on bool's 0/1 values,
 * and/or/xor; div and pow clear *ok.  NULL with *ok set: out of memory.
 */
static const mica_expr_t *value_op(mica_expr_builder_t *eb, int op,
                                   const mica_expr_t *a, const mica_expr_t *b,
                                   int *ok)
{
    const mica_host_t *h = mica_kit_host;
    int64_t va = 0, vb = 0;
    int ca = is_const(a, &va), cb = is_const(b, &vb);
    const mica_expr_t *z, *q;

    if (ca && cb)
        return h->expr_constant(eb, mica__ew_wrap32(mica__ew_i(op, va, vb,
                                                               0)));
    switch (op) {
    case MICA__EW_SUM: return h->expr_operation(eb, MICA_EXPR_SUM, a, b);
    case MICA__EW_PROD: return h->expr_operation(eb, MICA_EXPR_PROD, a, b);
    case MICA__EW_MAX: case MICA__EW_OR:
        return h->expr_operation(eb, MICA_EXPR_MAX, a, b);
    case MICA__EW_MIN: case MICA__EW_AND:
        return h->expr_operation(eb, MICA_EXPR_MIN, a, b);
    case MICA__EW_SUB: return h->expr_operation(eb, MICA_EXPR_SUB, a, b);
    case MICA__EW_FLOOR_DIV:
        if (cb)
            return vb == 0 ? h->expr_constant(eb, 0)
                           : h->expr_operation(eb, MICA_EXPR_FLOOR_DIV, a, b);
        /* b may be 0 at run time, which gives 0 (as enqueue does):
         * floor_div(a, b + (b == 0)) * (1 - (b == 0)) */
        z = h->expr_operation(eb, MICA_EXPR_EQUAL, b, h->expr_constant(eb, 0));
        q = h->expr_operation(eb, MICA_EXPR_FLOOR_DIV, a,
                              h->expr_operation(eb, MICA_EXPR_SUM, b, z));
        return h->expr_operation(
            eb, MICA_EXPR_PROD, q,
            h->expr_operation(eb, MICA_EXPR_SUB, h->expr_constant(eb, 1), z));
    case MICA__EW_EQUAL: return h->expr_operation(eb, MICA_EXPR_EQUAL, a, b);
    case MICA__EW_LESS: return h->expr_operation(eb, MICA_EXPR_LESS, a, b);
    case MICA__EW_GREATER:
        return h->expr_operation(eb, MICA_EXPR_LESS, b, a);
    case MICA__EW_XOR: /* |a - b| on 0/1 */
        return h->expr_operation(eb, MICA_EXPR_SUB,
                                 h->expr_operation(eb, MICA_EXPR_MAX, a, b),
                                 h->expr_operation(eb, MICA_EXPR_MIN, a, b));
    default: break;
    }
    *ok = 0;
    return NULL;
}

static mica_status_t ew_output_values(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      const mica_expr_t **values,
                                      int32_t nb_values, mica_error_t *err)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    int32_t j;
    int ok = 1;

    if (index != 0 || nb_in != 2 || !in[0].values || !in[1].values)
        return MICA_ERR_UNSUPPORTED;
    for (j = 0; j < nb_values; j++) {
        const mica_expr_t *a = value_at(&in[0], j, nb_values);
        const mica_expr_t *b = value_at(&in[1], j, nb_values);
        if (!a || !b)
            return MICA_ERR_UNSUPPORTED;
        values[j] = value_op(eb, l->op, a, b, &ok);
        if (!ok)
            return MICA_ERR_UNSUPPORTED;
        if (!values[j])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

/* ---- the CPU reference ------------------------------------------------ */

static float ld_f(mica_dtype_t t, const void *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static int64_t ld_i(mica_dtype_t t, const void *p, int64_t i)
{
    switch (t) {
    case MICA_INT8: return ((const int8_t *)p)[i];
    case MICA_INT32: return ((const int32_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0; /* bool */
    }
}

static void st_f(mica_dtype_t t, void *p, int64_t i, float v)
{
    if (t == MICA_FLOAT16)
        ((uint16_t *)p)[i] = mica_kit_float_to_half(v);
    else
        ((float *)p)[i] = v;
}

static void st_i(mica_dtype_t t, void *p, int64_t i, int64_t v)
{
    switch (t) {
    case MICA_INT8: ((int8_t *)p)[i] = mica__ew_sat8(v); break;
    case MICA_INT32: ((int32_t *)p)[i] = mica__ew_wrap32(v); break;
    default: ((uint8_t *)p)[i] = v != 0; break; /* bool */
    }
}

/* Element i of p, of a wide integer type, as 64 bits (unsigned ones
 * zero-extended). */
static uint64_t ld_w(mica_dtype_t t, const void *p, int64_t i)
{
    switch (t) {
    case MICA_UINT8: return ((const uint8_t *)p)[i];
    case MICA_UINT16: return ((const uint16_t *)p)[i];
    case MICA_UINT32: return ((const uint32_t *)p)[i];
    case MICA_UINT64: return ((const uint64_t *)p)[i];
    case MICA_INT16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
    default: return (uint64_t)((const int64_t *)p)[i]; /* int64 */
    }
}

/* v stored as element i of p, of a wide integer type: wraps. */
static void st_w(mica_dtype_t t, void *p, int64_t i, uint64_t v)
{
    switch (t) {
    case MICA_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MICA_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case MICA_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case MICA_UINT64: ((uint64_t *)p)[i] = v; break;
    case MICA_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; break;
    default: ((int64_t *)p)[i] = (int64_t)v; break; /* int64 */
    }
}

/* One op on a wide integer type, in 64 bits (modulo 2^64 where it
 * overflows; the store wraps to the type); comparisons give 1 or 0. */
static uint64_t wide_i(int op, mica_dtype_t t, uint64_t a, uint64_t b)
{
    int sgn = t == MICA_INT16 || t == MICA_INT64;
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    uint64_t r = 1;
    switch (op) {
    case MICA__EW_SUM: return a + b;
    case MICA__EW_PROD: return a * b;
    case MICA__EW_SUB: return a - b;
    case MICA__EW_MAX: return (sgn ? sa > sb : a > b) ? a : b;
    case MICA__EW_MIN: return (sgn ? sa < sb : a < b) ? a : b;
    case MICA__EW_EQUAL: return a == b;
    case MICA__EW_GREATER: return sgn ? sa > sb : a > b;
    case MICA__EW_LESS: return sgn ? sa < sb : a < b;
    case MICA__EW_DIV: case MICA__EW_FLOOR_DIV:
        if (b == 0)
            return 0;
        if (!sgn)
            return a / b;
        if (sb == -1)
            return 0 - a; /* INT64_MIN / -1 wraps */
        return (uint64_t)mica__ew_i(op, sa, sb, 0);
    case MICA__EW_POW:
        if (sgn && sb < 0)
            return (uint64_t)mica__ew_ipow(sa, sb, 0);
        while (b) {
            if (b & 1)
                r *= a;
            b >>= 1;
            a *= a;
        }
        return r;
    case MICA__EW_BITWISE_AND: return a & b;
    case MICA__EW_BITWISE_OR: return a | b;
    case MICA__EW_BITWISE_XOR: return a ^ b;
    case MICA__EW_SHIFT_LEFT: /* unsigned types: a zero-extended */
        return b >= 8 * (uint64_t)mica_dtype_size(t) ? 0 : a << b;
    case MICA__EW_SHIFT_RIGHT:
        return b >= 8 * (uint64_t)mica_dtype_size(t) ? 0 : a >> b;
    default: return 0;
    }
}

/* One op on float64; comparisons give 1 or 0. */
static double wide_f(int op, double a, double b)
{
    switch (op) {
    case MICA__EW_SUM: return a + b;
    case MICA__EW_PROD: return a * b;
    case MICA__EW_MAX:
        return b != b ? a : a == b ? (signbit(a) ? b : a) : a > b ? a : b;
    case MICA__EW_MIN:
        return b != b ? a : a == b ? (signbit(a) ? a : b) : a < b ? a : b;
    case MICA__EW_SUB: return a - b;
    case MICA__EW_DIV: return a / b;
    case MICA__EW_POW: return pow(a, b);
    case MICA__EW_FLOOR_DIV: return floor(a / b);
    case MICA__EW_EQUAL: return a == b;
    case MICA__EW_GREATER: return a > b;
    case MICA__EW_LESS: return a < b;
    default: return 0.0;
    }
}

/* Element i of the output from elements ia, ib of the inputs, of a wide
 * type ti. */
static void wide_one(int op, mica_dtype_t ti, mica_dtype_t to,
                     const void *const *inputs, int64_t ia, int64_t ib,
                     void *out, int64_t i)
{
    if (ti == MICA_FLOAT64) {
        double r = wide_f(op, ((const double *)inputs[0])[ia],
                          ((const double *)inputs[1])[ib]);
        if (to == MICA_BOOL)
            ((uint8_t *)out)[i] = r != 0.0;
        else
            ((double *)out)[i] = r;
    } else {
        uint64_t r = wide_i(op, ti, ld_w(ti, inputs[0], ia),
                            ld_w(ti, inputs[1], ib));
        if (to == MICA_BOOL)
            ((uint8_t *)out)[i] = r != 0;
        else
            st_w(to, out, i, r);
    }
}

static mica_status_t ew_enqueue_cpu(mica_layer_t *layer,
                                    const mica_tensor_desc_t *in, int32_t nb_in,
                                    const mica_tensor_desc_t *out,
                                    int32_t nb_out, const void *const *inputs,
                                    void *const *outputs, void *workspace,
                                    void *stream, mica_error_t *err)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    const mica_dims_t *od = &out[0].dims;
    mica_dtype_t ti = in[0].dtype, to = out[0].dtype;
    mica_kit_bcast_t v;
    int64_t n, i, off[2];
    mica_status_t st;
    int fl = ti == MICA_FLOAT32 || ti == MICA_FLOAT16, sat = ti == MICA_INT8;

    (void)workspace;
    (void)stream;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "ElementWise has 2 inputs and 1 output");
    if ((st = mica_kit_broadcast_view(in, 2, od, 0, &v, err)) != MICA_OK)
        return st;
    n = mica_dims_volume(od);
    for (i = 0; i < n; i++) {
        int64_t ia, ib;
        mica_kit_broadcast_offsets(&v, i, off);
        ia = off[0];
        ib = off[1];
        if (is_wide(ti)) {
            wide_one(l->op, ti, to, inputs, ia, ib, outputs[0], i);
        } else if (fl) {
            float r = mica__ew_f(l->op, ld_f(ti, inputs[0], ia),
                                 ld_f(ti, inputs[1], ib));
            if (to == MICA_BOOL)
                st_i(to, outputs[0], i, r != 0.0f);
            else
                st_f(to, outputs[0], i, r);
        } else {
            st_i(to, outputs[0], i,
                 mica__ew_i(l->op, ld_i(ti, inputs[0], ia),
                            ld_i(ti, inputs[1], ib), sat));
        }
    }
    return MICA_OK;
}

/* The vector kernels for float tensors, else the reference. */
static MICA_KIT_ENQUEUE(ew_enqueue_vec)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    mica_kit_bcast_t v;
    mica_status_t st;

    if (nb_in == 2 && nb_out == 1 && mica__ew_vec_takes(l->op, in[0].dtype)) {
        /* the dims checked as the reference checks them */
        if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 0, &v,
                                          err)) != MICA_OK)
            return st;
        return mica__ew_vec_run(l->op, in, out, inputs, outputs[0], err);
    }
    return ew_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                          workspace, stream, err);
}

#ifdef MICA_HAVE_ONEDNN
/* oneDNN where it computes the same, else the reference. */
static MICA_KIT_ENQUEUE(ew_enqueue_dnnl)
{
    ew_layer_t *l = (ew_layer_t *)layer;
    mica_status_t st;
    int taken = 0;

    if (nb_in == 2 && nb_out == 1) {
        st = mica__ew_dnnl_run(&l->dnnl, l->base.name, l->op, in, out,
                               inputs, outputs[0], &taken, err);
        if (st != MICA_OK || taken)
            return st;
    }
    return ew_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                          workspace, stream, err);
}
#endif

#if MICA_KIT_CUDA
static mica_status_t ew_enqueue_cuda(mica_layer_t *layer,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    const ew_layer_t *l = (const ew_layer_t *)layer;
    mica_kit_bcast_t v;
    mica_status_t st;
    (void)workspace;
    if (nb_in != 2 || nb_out != 1)
        return MICA_KIT_FAIL(err, "ElementWise has 2 inputs and 1 output");
    /* runtime lengths are checked here, before the kernels fold them */
    if ((st = mica_kit_broadcast_view(in, 2, &out[0].dims, 0, &v, err)) !=
        MICA_OK)
        return st;
    if (mica_dims_volume(&out[0].dims) == 0)
        return MICA_OK;
    return mica__elementwise_cuda(l->op, &in[0], &in[1], &out[0], inputs[0],
                                  inputs[1], outputs[0], stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

#ifdef MICA_HAVE_ONEDNN
static void ew_fini(mica_kit_layer_t *self)
{
    ew_layer_t *l = (ew_layer_t *)self;
    mica__ew_dnnl_free(l->dnnl);
    l->dnnl = NULL;
}
#endif

/* Create a layer; the creator carries the ops of its device. */
static mica_layer_t *ew_create(const mica_layer_creator_t *creator,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    ew_layer_t *l = mica_kit_layer_new(sizeof *l, creator->user_data,
                                       creator, name, fields, err);
    if (!l)
        return NULL;
    l->op = (int)mica_kit_int(fields, "op", 0); /* required */
#ifdef MICA_HAVE_ONEDNN
    l->base.fini = ew_fini;
#endif
    return &l->base.layer;
}

#define EW_OPS_MEMBERS                                                      \
    .nb_outputs = mica_kit_one_output, .output_dtypes = ew_output_dtypes,   \
    .output_dims = ew_output_dims, .supports_format = ew_supports_format,   \
    .output_values = ew_output_values

MICA_KIT_LAYER_PAIR(ew, "ElementWise", ew_fields, MICA_KIT_COUNT(ew_fields),
                    ew_create, ew_enqueue_cpu, ew_enqueue_cuda,
                    EW_OPS_MEMBERS)

#ifdef MICA_HAVE_ONEDNN
static const mica_layer_ops_t ew_ops_dnnl =
    MICA_KIT_OPS(ew_enqueue_dnnl, EW_OPS_MEMBERS);
static const mica_layer_creator_t ew_creator_dnnl = MICA_KIT_CREATOR(
    "ElementWise", "onednn", MICA_DEVICE_CPU, 5, MICA_ROLE_NONE, ew_fields,
    MICA_KIT_COUNT(ew_fields), ew_create, &ew_ops_dnnl);
#define EW_DNNL_CREATOR , &ew_creator_dnnl
#else
#define EW_DNNL_CREATOR
#endif

static const mica_layer_ops_t ew_ops_vec =
    MICA_KIT_OPS(ew_enqueue_vec, .nb_outputs = mica_kit_one_output,
                 .output_dtypes = ew_output_dtypes,
                 .output_dims = ew_output_dims,
                 .supports_format = ew_supports_format_vec,
                 .output_values = ew_output_values);
static const mica_layer_creator_t ew_creator_vec = MICA_KIT_CREATOR(
    "ElementWise", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, ew_fields,
    MICA_KIT_COUNT(ew_fields), ew_create, &ew_ops_vec);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(ew), &ew_creator_vec EW_DNNL_CREATOR};

MICA_KIT_ENTRY("elementwise", PACKAGE_VERSION, "MIT",
               "ElementWise: binary operations with broadcasting",
               creators)
