/*
 * modules/select/select.c - the Select layer (TensorRT's ISelectLayer):
 * out = cond ? then : else, element by element, like numpy.where.
 *
 * Inputs: cond (bool), then, else (one type, any; the output has it).
 * The three share one rank; along each axis their lengths are equal or 1
 * (broadcast), and the output takes the length that is not 1 (1 against 0
 * gives 0).  Constant lengths are checked at build time, symbolic ones at
 * run time; a symbolic output length is the expression
 * a + (a == 1) * (b - a) folded over the three inputs.
 *
 * For integer shape tensors (0-D or 1-D with known values), output_values
 * expresses each value as else + cond * (then - else), or picks directly
 * where cond is a constant.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "select.h"
#include "kit_vec.h"

static const char *const input_names[] = {"cond", "then", "else"};

/* ---- types and shapes --------------------------------------------------- */

static int elem_ok(mica_dtype_t t)
{
    size_t s = mica_dtype_size(t);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

static mica_status_t select_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    (void)layer;

    if (nb_in != 3)
        return MICA_KIT_FAIL(err, "takes 3 inputs (cond, then, else), got %d",
                             (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    if (in[0] != MICA_BOOL)
        return MICA_KIT_FAIL(err, "input 0 (cond) has type %s but must be bool",
                             h->dtype_name(in[0]));
    if (!elem_ok(in[1]))
        return MICA_KIT_FAIL(err, "input 1 (then) has unsupported type %s",
                             h->dtype_name(in[1]));
    if (in[2] != in[1])
        return MICA_KIT_FAIL(err,
                             "input 2 (else) has type %s but input 1 (then) "
                             "has type %s",
                             h->dtype_name(in[2]), h->dtype_name(in[1]));
    out[0] = in[1];
    return MICA_OK;
}

/* Broadcast of two lengths: the one that is not 1 (a symbolic pair gives
 * a + (a == 1) * (b - a)).  NULL when out of memory. */
static const mica_expr_t *broadcast2(mica_expr_builder_t *eb,
                                     const mica_expr_t *a,
                                     const mica_expr_t *b)
{
    const mica_host_t *h = mica_kit_host;
    int ca = h->expr_is_constant(a), cb = h->expr_is_constant(b);
    const mica_expr_t *one, *is_one, *diff;

    if (a == b || (ca && h->expr_constant_value(a) == 1))
        return b;
    if (cb && h->expr_constant_value(b) == 1)
        return a;
    if (ca && cb) /* equal (checked by the caller) */
        return a;
    one = h->expr_constant(eb, 1);
    is_one = one ? h->expr_operation(eb, MICA_EXPR_EQUAL, a, one) : NULL;
    diff = h->expr_operation(eb, MICA_EXPR_SUB, b, a);
    diff = is_one && diff ? h->expr_operation(eb, MICA_EXPR_PROD, is_one, diff)
                          : NULL;
    return diff ? h->expr_operation(eb, MICA_EXPR_SUM, a, diff) : NULL;
}

static mica_status_t select_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t i, j, k, r;
    (void)layer;

    if (index != 0 || nb_in != 3)
        return MICA_KIT_FAIL(err,
                             "has 3 inputs and 1 output, asked for output %d "
                             "of %d inputs",
                             (int)index, (int)nb_in);
    r = in[0].nb_dims;
    for (i = 1; i < 3; i++)
        if (in[i].nb_dims != r)
            return MICA_KIT_FAIL(err, "input %d (%s) has rank %d but input 0 "
                                 "(cond) has rank %d", (int)i, input_names[i],
                                 (int)in[i].nb_dims, (int)r);
    out->nb_dims = r;
    for (k = 0; k < r; k++) {
        /* Constant lengths other than 1 must agree pairwise. */
        for (i = 0; i < 3; i++)
            for (j = i + 1; j < 3; j++) {
                int64_t a, b;
                if (!h->expr_is_constant(in[i].d[k]) ||
                    !h->expr_is_constant(in[j].d[k]))
                    continue;
                a = h->expr_constant_value(in[i].d[k]);
                b = h->expr_constant_value(in[j].d[k]);
                if (a != b && a != 1 && b != 1)
                    return MICA_KIT_FAIL(err,
                                         "dimension %d of input %d (%s) is "
                                         "%lld and of input %d (%s) is %lld: "
                                         "they "
                                         "must be equal or one of them 1",
                                         (int)k, (int)i, input_names[i],
                                         (long long)a, (int)j, input_names[j],
                                         (long long)b);
            }
        out->d[k] = broadcast2(eb, in[0].d[k], in[1].d[k]);
        if (out->d[k])
            out->d[k] = broadcast2(eb, out->d[k], in[2].d[k]);
        if (!out->d[k])
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    return MICA_OK;
}

/*
 * Values of a Select of shape tensors: each input has one value
 * (broadcast) or nb_values of them.  Unsupported where any input's values
 * are unknown (float shape tensors, say).
 */
static mica_status_t select_output_values(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          const mica_expr_t **values,
                                          int32_t nb_values,
                                          mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t i, k;
    (void)layer;

    if (index != 0 || nb_in != 3)
        return MICA_ERR_UNSUPPORTED;
    for (k = 0; k < 3; k++)
        if (!in[k].values ||
            (in[k].nb_values != 1 && in[k].nb_values != nb_values))
            return MICA_ERR_UNSUPPORTED;
    for (i = 0; i < nb_values; i++) {
        const mica_expr_t *c = in[0].values[in[0].nb_values == 1 ? 0 : i];
        const mica_expr_t *t = in[1].values[in[1].nb_values == 1 ? 0 : i];
        const mica_expr_t *e = in[2].values[in[2].nb_values == 1 ? 0 : i];
        const mica_expr_t *v;
        if (h->expr_is_constant(c)) {
            v = h->expr_constant_value(c) ? t : e;
        } else if (t == e) {
            v = t;
        } else {
            v = h->expr_operation(eb, MICA_EXPR_SUB, t, e);
            v = v ? h->expr_operation(eb, MICA_EXPR_PROD, c, v) : NULL;
            v = v ? h->expr_operation(eb, MICA_EXPR_SUM, e, v) : NULL;
        }
        if (!v)
            return MICA_KIT_FAIL(err, "out of host memory");
        values[i] = v;
    }
    return MICA_OK;
}

static int32_t select_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in != 3 || nb_out != 1 || pos < 0 || pos > 3 ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return io[0].dtype == MICA_BOOL;
    if (pos == 1)
        return elem_ok(io[1].dtype);
    return io[pos].dtype == io[1].dtype;
}

/* ---- running ------------------------------------------------------------ */

/*
 * Element strides of input `i` against the output dims, 0 along broadcast
 * axes.  Fails where the actual lengths do not broadcast (symbolic ones
 * are only checked now).
 */
static mica_status_t strides(const mica_tensor_desc_t *in, int32_t i,
                             const mica_dims_t *od, int64_t *s,
                             mica_error_t *err)
{
    const mica_dims_t *d = &in[i].dims;
    int64_t acc = 1;
    int32_t k;

    if (d->nb_dims != od->nb_dims)
        return MICA_KIT_FAIL(err,
                             "input %d (%s) has rank %d but the output has "
                             "rank %d",
                             (int)i, input_names[i], (int)d->nb_dims,
                             (int)od->nb_dims);
    for (k = d->nb_dims - 1; k >= 0; k--) {
        if (d->d[k] != od->d[k] && d->d[k] != 1)
            return MICA_KIT_FAIL(err, "dimension %d of input %d (%s) is %lld, "
                                 "which does not broadcast to %lld", (int)k,
                                 (int)i, input_names[i], (long long)d->d[k],
                                 (long long)od->d[k]);
        s[k] = d->d[k] == 1 ? 0 : acc;
        acc *= d->d[k];
    }
    return MICA_OK;
}

static mica_status_t select_enqueue_cpu(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs, void *workspace,
                                        void *stream, mica_error_t *err)
{
    const mica_dims_t *od = &out[0].dims;
    int64_t s[3][MICA_MAX_DIMS], n = mica_dims_volume(od), i;
    size_t es = mica_dtype_size(out[0].dtype);
    const uint8_t *cond = inputs[0];
    const unsigned char *a = inputs[1], *b = inputs[2];
    unsigned char *dst = outputs[0];
    int32_t j, k;
    mica_status_t st;
    (void)layer; (void)nb_in; (void)nb_out; (void)workspace; (void)stream;

    for (j = 0; j < 3; j++)
        if ((st = strides(in, j, od, s[j], err)) != MICA_OK)
            return st;
    for (i = 0; i < n; i++) {
        int64_t rest = i, off[3] = {0, 0, 0};
        for (k = od->nb_dims - 1; k >= 0; k--) {
            int64_t c = rest % od->d[k];
            rest /= od->d[k];
            for (j = 0; j < 3; j++)
                off[j] += c * s[j][k];
        }
        memcpy(dst + (size_t)i * es,
               cond[off[0]] ? a + (size_t)off[1] * es
                            : b + (size_t)off[2] * es, es);
    }
    return MICA_OK;
}

/* cond != 0 ? then : else, lane by lane (the values' bits copied). */
static void select_kernel(const void *ctx, const float *c, int64_t sc,
                          const float *a, int64_t sa, const float *b,
                          int64_t sb, float *y, int64_t n)
{
    int64_t i = 0;
    (void)ctx;
    if (sc && sa && sb)
        for (; i + MICA__VL <= n; i += MICA__VL)
            mica__v_store(y + i, mica__v_sel(mica__v_load(c + i) != 0.0f,
                                               mica__v_load(a + i),
                                               mica__v_load(b + i)));
    for (; i < n; i++)
        memcpy(y + i, c[i * sc] != 0.0f ? a + i * sa : b + i * sb,
               sizeof *y);
}

/* vec: float32 and float16 values through the kit's broadcast walk
 * (kit_vec.h), on several threads for large tensors; other types as
 * the reference. */
static MICA_KIT_ENQUEUE(select_enqueue_vec)
{
    int64_t s[MICA_MAX_DIMS];
    int32_t j;
    mica_status_t st;

    if (nb_in == 3 && nb_out == 1 && mica__vec_float(out[0].dtype)) {
        for (j = 0; j < 3; j++)
            if ((st = strides(in, j, &out[0].dims, s, err)) != MICA_OK)
                return st;
        return mica__vec_ternary(select_kernel, NULL, &in[0], inputs[0],
                                 &in[1], inputs[1], &in[2], inputs[2],
                                 &out[0], outputs[0], err);
    }
    return select_enqueue_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                              workspace, stream, err);
}

#if MICA_KIT_CUDA
static mica_status_t select_enqueue_cuda(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    const mica_dims_t *od = &out[0].dims;
    int64_t s[3][MICA_MAX_DIMS];
    int32_t j;
    mica_status_t st;
    (void)layer; (void)nb_in; (void)nb_out; (void)workspace;

    for (j = 0; j < 3; j++)
        if ((st = strides(in, j, od, s[j], err)) != MICA_OK)
            return st;
    return mica__select_cuda(outputs[0], inputs[0], inputs[1], inputs[2],
                             mica_dtype_size(out[0].dtype), od->nb_dims,
                             od->d, s[0], s[1], s[2], mica_dims_volume(od),
                             stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(select, "Select", NULL, 0, mica_kit_layer_create,
                    select_enqueue_cpu, select_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = select_output_dtypes,
                    .output_dims = select_output_dims,
                    .supports_format = select_supports_format,
                    .output_values = select_output_values)

static const mica_layer_ops_t select_ops_vec = MICA_KIT_OPS(
    select_enqueue_vec, .nb_outputs = mica_kit_one_output,
    .output_dtypes = select_output_dtypes,
    .output_dims = select_output_dims,
    .supports_format = select_supports_format,
    .output_values = select_output_values);
static const mica_layer_creator_t select_creator_vec = MICA_KIT_CREATOR(
    "Select", "vec", MICA_DEVICE_CPU, 6, MICA_ROLE_NONE, NULL, 0,
    mica_kit_layer_create, &select_ops_vec);

static const mica_layer_creator_t *const select_creators[] = {
    MICA_KIT_PAIR(select), &select_creator_vec};

MICA_KIT_ENTRY("select", PACKAGE_VERSION, "MIT",
               "Select: cond ? then : else with broadcasting",
               select_creators)
