/*
 * modules/concat/concat.c - the Concatenation layer (TensorRT's
 * IConcatenationLayer): one or more inputs of one type and rank, joined
 * along `axis`.
 *
 * Params: `axis`, in [0, rank).  Absent, it is TensorRT's default: rank
 * minus 3, or 0 for a rank below 3 (C of NCHW).  Inputs must agree on
 * every dimension but the axis; the output's axis is their sum, as an
 * expression, so runtime dimensions stay symbolic.  Where two inputs give
 * different constants for another dimension the build fails; where one is
 * symbolic the check happens at run time (enqueue refuses dimensions that
 * disagree).  0-D inputs have no axis and are refused.
 *
 * Any element type (only bytes move); the output has the inputs' type.
 * Formats: every tensor linear, or every one channels last (the rows
 * copied are then those of the memory order: N, the spatial dims, C).
 *
 * Empty inputs are allowed: a zero length along the axis contributes
 * nothing; a zero elsewhere makes the output empty (never enqueued).
 *
 * For 1-D integer shape tensors, output_values concatenates the inputs'
 * value expressions, so Concatenation of Shape outputs stays symbolic.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "concat.h"

typedef struct concat_layer {
    mica_kit_layer_t base;
    int64_t axis; /* -1: TensorRT's default, max(0, rank - 3) */
} concat_layer_t;

static const mica_field_schema_t concat_fields[] = {
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL,
     "the axis to join along (default: rank - 3, or 0 below rank 3)"},
};

/* The axis for inputs of rank r. */
static int64_t axis_for(const concat_layer_t *l, int32_t r)
{
    if (l->axis >= 0)
        return l->axis;
    return r > 3 ? r - 3 : 0;
}

/* ---- types and shapes --------------------------------------------------- */

static mica_status_t concat_output_dtypes(const mica_layer_t *layer,
                                          const mica_dtype_t *in,
                                          int32_t nb_in, mica_dtype_t *out,
                                          int32_t nb_out, mica_error_t *err)
{
    const mica_host_t *h = mica_kit_host;
    int32_t i;
    (void)layer;

    if (nb_in < 1)
        return MICA_KIT_FAIL(err, "takes at least 1 input, got %d", (int)nb_in);
    if (nb_out != 1)
        return MICA_KIT_FAIL(err, "has 1 output, got %d", (int)nb_out);
    for (i = 1; i < nb_in; i++)
        if (in[i] != in[0])
            return MICA_KIT_FAIL(err,
                                 "input %d has type %s but input 0 has type "
                                 "%s",
                                 (int)i, h->dtype_name(in[i]),
                                 h->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

static mica_status_t concat_output_dims(const mica_layer_t *layer,
                                        int32_t index,
                                        const mica_shape_expr_t *in,
                                        int32_t nb_in,
                                        mica_expr_builder_t *eb,
                                        mica_shape_expr_t *out,
                                        mica_error_t *err)
{
    const concat_layer_t *l = (const concat_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t i, k, r;
    int64_t axis;

    if (index != 0 || nb_in < 1)
        return MICA_KIT_FAIL(err,
                             "has 1 output and at least 1 input, asked for "
                             "output %d of %d inputs",
                             (int)index, (int)nb_in);
    r = in[0].nb_dims;
    if (r < 1)
        return MICA_KIT_FAIL(err,
                             "input 0 is 0-D: concatenation needs rank >= 1");
    axis = axis_for(l, r);
    if (axis >= r)
        return MICA_KIT_FAIL(err,
                             "axis %lld is out of range for inputs of rank "
                             "%d (axes are in [0, %d))",
                             (long long)axis, (int)r, (int)r);
    out->nb_dims = r;
    for (k = 0; k < r; k++)
        out->d[k] = in[0].d[k];
    for (i = 1; i < nb_in; i++) {
        if (in[i].nb_dims != r)
            return MICA_KIT_FAIL(err,
                                 "input %d has rank %d but input 0 has rank "
                                 "%d",
                                 (int)i, (int)in[i].nb_dims, (int)r);
        for (k = 0; k < r; k++) {
            const mica_expr_t *a = out->d[k], *b = in[i].d[k];
            int ca = h->expr_is_constant(a), cb = h->expr_is_constant(b);
            if (k == axis) {
                out->d[k] = h->expr_operation(eb, MICA_EXPR_SUM, a, b);
                if (!out->d[k])
                    return MICA_KIT_FAIL(err, "out of host memory");
            } else if (ca && cb && h->expr_constant_value(a) !=
                                       h->expr_constant_value(b)) {
                return MICA_KIT_FAIL(err,
                                     "dimension %d of input %d is %lld but "
                                     "%lld before it: only axis %lld may "
                                     "differ",
                                     (int)k, (int)i,
                                     (long long)h->expr_constant_value(b),
                                     (long long)h->expr_constant_value(a),
                                     (long long)axis);
            } else if (cb) {
                out->d[k] = b; /* a constant says more than a symbol */
            }
        }
    }
    return MICA_OK;
}

/* The values of a 1-D concatenation: the inputs' values in order. */
static mica_status_t concat_output_values(const mica_layer_t *layer,
                                          int32_t index,
                                          const mica_shape_expr_t *in,
                                          int32_t nb_in,
                                          mica_expr_builder_t *eb,
                                          const mica_expr_t **values,
                                          int32_t nb_values,
                                          mica_error_t *err)
{
    int32_t i, j, n = 0;
    (void)layer;
    (void)eb;
    (void)err;

    if (index != 0)
        return MICA_ERR_UNSUPPORTED;
    for (i = 0; i < nb_in; i++) {
        if (in[i].nb_dims != 1 || (in[i].nb_values > 0 && !in[i].values) ||
            in[i].nb_values < 0 || n + in[i].nb_values > nb_values)
            return MICA_ERR_UNSUPPORTED;
        if (in[i].nb_values == 0 &&
            !(mica_kit_host->expr_is_constant(in[i].d[0]) &&
              mica_kit_host->expr_constant_value(in[i].d[0]) == 0))
            return MICA_ERR_UNSUPPORTED; /* values unknown, not empty */
        for (j = 0; j < in[i].nb_values; j++)
            values[n++] = in[i].values[j];
    }
    return n == nb_values ? MICA_OK : MICA_ERR_UNSUPPORTED;
}

static int32_t concat_supports_format(const mica_layer_t *layer, int32_t pos,
                                      const mica_tensor_desc_t *io,
                                      int32_t nb_in, int32_t nb_out)
{
    (void)layer;
    if (nb_in < 1 || nb_out != 1 || pos < 0 || pos > nb_in ||
        (!mica_kit_linear(io, pos) &&
         io[pos].format != mica_kit_channels_last(io[pos].dims.nb_dims)))
        return 0;
    if (pos == 0)
        return mica_dtype_size(io[0].dtype) != 0;
    /* every tensor in input 0's format */
    return io[pos].dtype == io[0].dtype && io[pos].format == io[0].format;
}

/* ---- running ------------------------------------------------------------ */

/*
 * The geometry of one run, in bytes: `outer` rows; input i contributes
 * row[i] bytes to each output row of out_row bytes.  Fails when the
 * actual dimensions disagree (symbolic dims checked only now).
 */
typedef struct concat_plan {
    int64_t outer, out_row;
} concat_plan_t;

static mica_status_t make_plan(const concat_layer_t *l,
                               const mica_tensor_desc_t *in, int32_t nb_in,
                               const mica_tensor_desc_t *out,
                               concat_plan_t *p, int64_t *row,
                               mica_error_t *err)
{
    const mica_dims_t *od = &out[0].dims;
    int32_t r = od->nb_dims, i, k;
    int64_t axis = axis_for(l, r), inner = 1, sum = 0;
    size_t es = mica_dtype_size(out[0].dtype);
    int cl = out[0].format != MICA_FORMAT_LINEAR;

    /* the dims before the axis in memory order, and after it: channels
     * last lays out N, the spatial dims, then C */
    p->outer = 1;
    for (k = 0; k < r; k++) {
        int32_t at = !cl || k == 0 ? k : k == 1 ? r - 1 : k - 1;
        int32_t ax = !cl || axis == 0 ? (int32_t)axis
                     : axis == 1 ? r - 1 : (int32_t)axis - 1;
        if (at < ax)
            p->outer *= od->d[k];
        else if (at > ax)
            inner *= od->d[k];
    }
    for (i = 0; i < nb_in; i++) {
        const mica_dims_t *d = &in[i].dims;
        if (d->nb_dims != r)
            return MICA_KIT_FAIL(err, "input %d has rank %d but the output has "
                                 "rank %d", (int)i, (int)d->nb_dims, (int)r);
        for (k = 0; k < r; k++)
            if (k != axis && d->d[k] != od->d[k])
                return MICA_KIT_FAIL(err,
                                     "dimension %d of input %d is %lld but "
                                     "the other inputs have %lld: only axis "
                                     "%lld "
                                     "may differ",
                                     (int)k, (int)i, (long long)d->d[k],
                                     (long long)od->d[k], (long long)axis);
        row[i] = d->d[axis] * inner * (int64_t)es;
        sum += d->d[axis];
    }
    if (sum != od->d[axis])
        return MICA_KIT_FAIL(err,
                             "the inputs' axis %lld lengths sum to %lld but "
                             "the output has %lld",
                             (long long)axis, (long long)sum,
                             (long long)od->d[axis]);
    p->out_row = od->d[axis] * inner * (int64_t)es;
    return MICA_OK;
}

/* Room for the row lengths of up to this many inputs on the stack. */
#define CONCAT_STACK_INPUTS 64

static mica_status_t concat_run(mica_layer_t *layer,
                                const mica_tensor_desc_t *in, int32_t nb_in,
                                const mica_tensor_desc_t *out,
                                const void *const *inputs,
                                void *const *outputs, void *stream, int cuda,
                                mica_error_t *err)
{
    const concat_layer_t *l = (const concat_layer_t *)layer;
    int64_t stack_rows[CONCAT_STACK_INPUTS], *row = stack_rows, off = 0, o;
    concat_plan_t p;
    mica_status_t st = MICA_OK;
    int32_t i;

    if (nb_in > CONCAT_STACK_INPUTS) {
        row = malloc(sizeof *row * (size_t)nb_in);
        if (!row) {
            mica_kit_host->set_error(err, "out of host memory for %d inputs",
                                     (int)nb_in);
            return MICA_ERR_NOMEM;
        }
    }
    if ((st = make_plan(l, in, nb_in, out, &p, row, err)) != MICA_OK)
        goto done;
    for (i = 0; i < nb_in; i++) {
        unsigned char *dst = (unsigned char *)outputs[0] + off;
        const unsigned char *src = inputs[i];
        if (row[i] > 0 && p.outer > 0) {
            if (cuda) {
#if MICA_KIT_CUDA
                st = mica__concat_cuda_copy(dst, src, p.outer, row[i],
                                            p.out_row, stream, err);
                if (st != MICA_OK)
                    goto done;
#endif
            } else {
                for (o = 0; o < p.outer; o++)
                    memcpy(dst + o * p.out_row, src + o * row[i],
                           (size_t)row[i]);
            }
        }
        off += row[i];
    }
done:
    if (row != stack_rows)
        free(row);
    (void)stream;
    return st;
}

static mica_status_t concat_enqueue_cpu(mica_layer_t *layer,
                                        const mica_tensor_desc_t *in,
                                        int32_t nb_in,
                                        const mica_tensor_desc_t *out,
                                        int32_t nb_out,
                                        const void *const *inputs,
                                        void *const *outputs, void *workspace,
                                        void *stream, mica_error_t *err)
{
    (void)nb_out;
    (void)workspace;
    return concat_run(layer, in, nb_in, out, inputs, outputs, stream, 0, err);
}

#if MICA_KIT_CUDA
static mica_status_t concat_enqueue_cuda(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    (void)nb_out;
    (void)workspace;
    return concat_run(layer, in, nb_in, out, inputs, outputs, stream, 1, err);
}
#endif

static mica_layer_t *concat_create(const mica_layer_creator_t *creator,
                                   const char *name,
                                   const mica_fields_t *fields,
                                   mica_error_t *err)
{
    concat_layer_t *l;
    int64_t axis = -1;

    if (mica_kit_count(fields, "axis") > 0) {
        axis = mica_kit_int(fields, "axis", 0);
        if (axis < 0 || axis >= MICA_MAX_DIMS) {
            mica_kit_host->set_error(err, "'axis' is %lld: axes count from 0 "
                                     "and are below the rank (at most %d)",
                                     (long long)axis, MICA_MAX_DIMS);
            return NULL;
        }
    }
    l = mica_kit_layer_new(sizeof *l, (const mica_layer_ops_t *)
                           creator->user_data, creator, name, fields, err);
    if (!l)
        return NULL;
    l->axis = axis;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(concat, "Concatenation", concat_fields, 1,
                    concat_create, concat_enqueue_cpu, concat_enqueue_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = concat_output_dtypes,
                    .output_dims = concat_output_dims,
                    .supports_format = concat_supports_format,
                    .output_values = concat_output_values)

static const mica_layer_creator_t *const concat_creators[] = {
    MICA_KIT_PAIR(concat)};

MICA_KIT_ENTRY("concat", PACKAGE_VERSION, "MIT",
               "Concatenation: join tensors along an axis",
               concat_creators)
