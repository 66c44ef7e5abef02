/*
 * modules/unary/unary.c - the Unary layer (TensorRT's IUnaryLayer):
 * creators, layer ops and the CPU reference.
 *
 * One input, one output of the same shape.  Types, per TensorRT: not takes
 * bool; abs, neg and sign take float32, float16, int8 and int32; isinf and
 * isnan take float32 and float16 and give bool; every other op takes
 * float32 and float16.  The output type is the input's except for isinf
 * and isnan.  The arithmetic is in unary.h, shared with the CUDA kernels.
 * float64 (ONNX's double), on the CPU reference alone: every op that
 * takes float32 takes it too, computed in double; CUDA refuses it.
 * On integer shape tensors with known values, neg, abs, sign and not
 * give their results as expressions (output_values).
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "unary.h"

static const char *const op_names[] = {
    "exp", "log", "sqrt", "recip", "abs", "neg", "sin", "cos", "tan",
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "ceil", "floor", "erf", "not", "sign", "round", "isinf", "isnan", NULL,
};

static const mica_field_schema_t un_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, op_names,
     "the unary operation (TensorRT's UnaryOperation)"},
};

typedef struct un_layer {
    mica_kit_layer_t base;
    int op;
} un_layer_t;

/* ---- types ------------------------------------------------------------ */

static int is_float(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

static int takes_int(int op)
{
    return op == MICA__UN_ABS || op == MICA__UN_NEG || op == MICA__UN_SIGN;
}

static int gives_bool(int op)
{
    return op == MICA__UN_ISINF || op == MICA__UN_ISNAN;
}

static int input_ok(int op, mica_dtype_t t)
{
    if (op == MICA__UN_NOT)
        return t == MICA_BOOL;
    if (takes_int(op))
        return is_float(t) || t == MICA_FLOAT64 || t == MICA_INT8 ||
               t == MICA_INT32;
    return is_float(t) || t == MICA_FLOAT64;
}

static const char *accepted(int op)
{
    if (op == MICA__UN_NOT)
        return "bool";
    if (takes_int(op))
        return "float32, float16, float64 (on the CPU), int8 or int32";
    return "float32, float16 or float64 (on the CPU)";
}

static mica_dtype_t output_type(int op, mica_dtype_t in)
{
    return gives_bool(op) ? MICA_BOOL : in;
}

static mica_status_t un_output_dtypes(const mica_layer_t *layer,
                                      const mica_dtype_t *in, int32_t nb_in,
                                      mica_dtype_t *out, int32_t nb_out,
                                      mica_error_t *err)
{
    const un_layer_t *l = (const un_layer_t *)layer;

    if (nb_in != 1)
        return MICA_KIT_FAIL(err, "Unary takes 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "Unary has 1 output, got %d", (int)nb_out);
    if (!input_ok(l->op, in[0]))
        return MICA_KIT_FAIL(err, "op '%s' takes %s input, got %s",
                             op_names[l->op], accepted(l->op),
                             mica_kit_host->dtype_name(in[0]));
    out[0] = output_type(l->op, in[0]);
    return MICA_OK;
}

/*
 * The values of an integer shape tensor: neg as 0 - x, abs as
 * max(x, 0 - x), sign as (0 < x) - (x < 0), not (bool's 0/1) as 1 - x.
 * Other ops are unsupported.
 */
static mica_status_t un_output_values(const mica_layer_t *layer,
                                      int32_t index,
                                      const mica_shape_expr_t *in,
                                      int32_t nb_in, mica_expr_builder_t *eb,
                                      const mica_expr_t **values,
                                      int32_t nb_values, mica_error_t *err)
{
    const un_layer_t *l = (const un_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    const mica_expr_t *zero, *x, *v;
    int32_t i;

    if (index != 0 || nb_in != 1 || !in[0].values ||
        in[0].nb_values != nb_values ||
        (l->op != MICA__UN_NEG && l->op != MICA__UN_ABS &&
         l->op != MICA__UN_SIGN && l->op != MICA__UN_NOT))
        return MICA_ERR_UNSUPPORTED;
    zero = h->expr_constant(eb, 0);
    for (i = 0; i < nb_values; i++) {
        x = in[0].values[i];
        switch (l->op) {
        case MICA__UN_NEG:
            v = h->expr_operation(eb, MICA_EXPR_SUB, zero, x);
            break;
        case MICA__UN_ABS:
            v = h->expr_operation(eb, MICA_EXPR_MAX, x,
                                  h->expr_operation(eb, MICA_EXPR_SUB, zero,
                                                    x));
            break;
        case MICA__UN_SIGN:
            v = h->expr_operation(eb, MICA_EXPR_SUB,
                                  h->expr_operation(eb, MICA_EXPR_LESS, zero,
                                                    x),
                                  h->expr_operation(eb, MICA_EXPR_LESS, x,
                                                    zero));
            break;
        default: /* not */
            v = h->expr_operation(eb, MICA_EXPR_SUB,
                                  h->expr_constant(eb, 1), x);
            break;
        }
        if (!v)
            return MICA_KIT_FAIL(err, "out of host memory");
        values[i] = v;
    }
    return MICA_OK;
}

static int32_t un_supports_format(const mica_layer_t *layer, int32_t pos,
                                  const mica_tensor_desc_t *io, int32_t nb_in,
                                  int32_t nb_out)
{
    const un_layer_t *l = (const un_layer_t *)layer;

    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1 ||
        !mica_kit_linear(io, pos))
        return 0;
    if (io[0].dtype == MICA_FLOAT64 &&
        !(l->base.creator->devices & MICA_DEVICE_CPU))
        return 0;
    if (pos == 0)
        return input_ok(l->op, io[0].dtype);
    return io[1].dtype == output_type(l->op, io[0].dtype);
}

/* vec: float inputs element by element in any format (linear or
 * channels last), the output in the input's; other types as the
 * reference. */
static int32_t un_supports_format_vec(const mica_layer_t *layer,
                                      int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    const un_layer_t *l = (const un_layer_t *)layer;

    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1)
        return 0;
    if (io[0].dtype != MICA_FLOAT32 && io[0].dtype != MICA_FLOAT16)
        return un_supports_format(layer, pos, io, nb_in, nb_out);
    if (!mica_kit_linear(io, pos) &&
        io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims))
        return 0;
    if (pos == 0)
        return input_ok(l->op, io[0].dtype);
    return io[1].format == io[0].format &&
           io[1].dtype == output_type(l->op, io[0].dtype);
}

/* ---- the CPU reference ------------------------------------------------ */

/* mica__unary_f's formulas in double, for float64 (host only: the CUDA
 * kernels take no float64). */
static double unary_d(int op, double x)
{
    switch (op) {
    case MICA__UN_EXP: return exp(x);
    case MICA__UN_LOG: return log(x);
    case MICA__UN_SQRT: return sqrt(x);
    case MICA__UN_RECIP: return 1.0 / x;
    case MICA__UN_ABS: return fabs(x);
    case MICA__UN_NEG: return -x;
    case MICA__UN_SIN: return sin(x);
    case MICA__UN_COS: return cos(x);
    case MICA__UN_TAN: return tan(x);
    case MICA__UN_SINH: return sinh(x);
    case MICA__UN_COSH: return cosh(x);
    case MICA__UN_ASIN: return asin(x);
    case MICA__UN_ACOS: return acos(x);
    case MICA__UN_ATAN: return atan(x);
    case MICA__UN_ASINH: return asinh(x);
    case MICA__UN_ACOSH: return acosh(x);
    case MICA__UN_ATANH: return atanh(x);
    case MICA__UN_CEIL: return ceil(x);
    case MICA__UN_FLOOR: return floor(x);
    case MICA__UN_ERF: return erf(x);
    case MICA__UN_SIGN: return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x;
    case MICA__UN_ROUND: return rint(x);
    case MICA__UN_ISINF: return fabs(x) > DBL_MAX ? 1.0 : 0.0;
    case MICA__UN_ISNAN: return x != x ? 1.0 : 0.0;
    default: return 0.0;
    }
}

static mica_status_t un_enqueue_cpu(mica_layer_t *layer,
                                    const mica_tensor_desc_t *in, int32_t nb_in,
                                    const mica_tensor_desc_t *out,
                                    int32_t nb_out, const void *const *inputs,
                                    void *const *outputs, void *workspace,
                                    void *stream, mica_error_t *err)
{
    const un_layer_t *l = (const un_layer_t *)layer;
    mica_dtype_t ti = in[0].dtype, to = out[0].dtype;
    int64_t n = mica_dims_volume(&out[0].dims), i;
    const void *x = inputs[0];
    void *y = outputs[0];

    (void)workspace;
    (void)stream;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Unary has 1 input and 1 output");
    for (i = 0; i < n; i++) {
        float f;
        switch (ti) {
        case MICA_FLOAT32:
        case MICA_FLOAT16:
            f = ti == MICA_FLOAT32
                    ? ((const float *)x)[i]
                    : mica_kit_half_to_float(((const uint16_t *)x)[i]);
            f = mica__unary_f(l->op, f);
            if (to == MICA_BOOL)
                ((uint8_t *)y)[i] = f != 0.0f;
            else if (to == MICA_FLOAT32)
                ((float *)y)[i] = f;
            else
                ((uint16_t *)y)[i] = mica_kit_float_to_half(f);
            break;
        case MICA_FLOAT64: {
            double d = unary_d(l->op, ((const double *)x)[i]);
            if (to == MICA_BOOL)
                ((uint8_t *)y)[i] = d != 0.0;
            else
                ((double *)y)[i] = d;
            break;
        }
        case MICA_INT8:
            ((int8_t *)y)[i] =
                mica__un_sat8(mica__unary_i(l->op, ((const int8_t *)x)[i]));
            break;
        case MICA_INT32:
            ((int32_t *)y)[i] =
                mica__un_wrap32(mica__unary_i(l->op, ((const int32_t *)x)[i]));
            break;
        case MICA_BOOL:
            ((uint8_t *)y)[i] =
                mica__unary_i(l->op, ((const uint8_t *)x)[i] != 0) != 0;
            break;
        default:
            return MICA_KIT_FAIL(err, "Unary cannot run on type %s",
                                 mica_kit_host->dtype_name(ti));
        }
    }
    return MICA_OK;
}

/* The vector kernels for float inputs, else the reference. */
static MICA_KIT_ENQUEUE(un_enqueue_vec)
{
    const un_layer_t *l = (const un_layer_t *)layer;

    if (nb_in == 1 && nb_out == 1 &&
        mica__unary_vec(l->op, in[0].dtype, out[0].dtype,
                        mica_dims_volume(&out[0].dims), inputs[0],
                        outputs[0]))
        return MICA_OK;
    return un_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                          workspace, stream, err);
}

#if MICA_KIT_CUDA
static mica_status_t un_enqueue_cuda(mica_layer_t *layer,
                                     const mica_tensor_desc_t *in,
                                     int32_t nb_in,
                                     const mica_tensor_desc_t *out,
                                     int32_t nb_out, const void *const *inputs,
                                     void *const *outputs, void *workspace,
                                     void *stream, mica_error_t *err)
{
    const un_layer_t *l = (const un_layer_t *)layer;
    int64_t n = mica_dims_volume(&out[0].dims);
    (void)workspace;
    if (nb_in != 1 || nb_out != 1)
        return MICA_KIT_FAIL(err, "Unary has 1 input and 1 output");
    if (n == 0)
        return MICA_OK;
    return mica__unary_cuda(l->op, in[0].dtype, n, inputs[0], outputs[0],
                            stream, err);
}
#endif

/* ---- creators --------------------------------------------------------- */

/* Create a layer; the creator carries the ops of its device. */
static mica_layer_t *un_create(const mica_layer_creator_t *creator,
                               const char *name, const mica_fields_t *fields,
                               mica_error_t *err)
{
    un_layer_t *l = mica_kit_layer_new(sizeof *l, creator->user_data,
                                       creator, name, fields, err);
    if (!l)
        return NULL;
    l->op = (int)mica_kit_int(fields, "op", 0); /* required */
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(un, "Unary", un_fields, MICA_KIT_COUNT(un_fields),
                    un_create, un_enqueue_cpu, un_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = un_output_dtypes,
                    .output_dims = mica_kit_same_dims,
                    .supports_format = un_supports_format,
                    .output_values = un_output_values)

static const mica_layer_ops_t un_ops_vec = MICA_KIT_OPS(
    un_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = un_output_dtypes, .output_dims = mica_kit_same_dims,
    .supports_format = un_supports_format_vec,
    .output_values = un_output_values);
static const mica_layer_creator_t un_creator_vec = MICA_KIT_CREATOR(
    "Unary", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, un_fields,
    MICA_KIT_COUNT(un_fields), un_create, &un_ops_vec);

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(un),
                                                       &un_creator_vec};

MICA_KIT_ENTRY("unary", PACKAGE_VERSION, "MIT",
               "Unary: one-input math, rounding and logic operations",
               creators)
