/*
 * modules/topk/topk.c - the TopK layer (TensorRT's ITopKLayer): creators,
 * layer ops and the CPU reference.
 *
 * One input x (float32, float16 or int32) of rank >= 1, two outputs:
 * values (x's type) and indices (int32), both x's shape with the axis
 * replaced by k.  Fields: `op` (max or min), `k` (1 to 3840, TensorRT's
 * limit), `axis` (default the last).  A k larger than the axis is refused
 * at build time when the axis length is known then, else when the layer
 * runs.  The order of the outputs is in topk.h.
 *
 * The reference sorts the positions of each slice with a merge sort under
 * an explicit comparison (value, then index), and keeps the first k.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "topk.h"

static const char *const op_names[] = {"max", "min", NULL};

static const mica_field_schema_t topk_fields[] = {
    {"op", MICA_FIELD_ENUM, 1, 1, 0, NULL, op_names,
     "max: the largest first; min: the smallest first"},
    {"k", MICA_FIELD_INT, 1, 1, 0, NULL, NULL,
     "how many elements to keep (1 to 3840)"},
    {"axis", MICA_FIELD_INT, 1, 0, 0, NULL, NULL,
     "the axis to select along (default the last)"},
};

typedef struct topk_layer {
    mica_kit_layer_t base;
    int is_max;
    int32_t k;
    int64_t axis; /* -1: the last */
} topk_layer_t;

static int value_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_INT32;
}

static int32_t topk_nb_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 2;
}

static mica_status_t topk_dtypes(const mica_layer_t *layer,
                                 const mica_dtype_t *in, int32_t nb_in,
                                 mica_dtype_t *out, int32_t nb_out,
                                 mica_error_t *err)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 2)
        return MICA_KIT_FAIL(err, "takes 1 input and gives 2 outputs "
                             "(values, indices), got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!value_type(in[0]))
        return MICA_KIT_FAIL(err, "x must be float32, float16 or int32, "
                             "got %s", mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    out[1] = MICA_INT32;
    return MICA_OK;
}

static int64_t topk_axis(const topk_layer_t *l, int32_t rank)
{
    return l->axis >= 0 ? l->axis : rank - 1;
}

static mica_status_t topk_dims(const mica_layer_t *layer, int32_t index,
                               const mica_shape_expr_t *in, int32_t nb_in,
                               mica_expr_builder_t *eb,
                               mica_shape_expr_t *out, mica_error_t *err)
{
    const topk_layer_t *l = (const topk_layer_t *)layer;
    int32_t r = in[0].nb_dims, i;
    int64_t axis = topk_axis(l, r);
    const mica_expr_t *len;

    (void)index;
    (void)nb_in;
    if (r < 1)
        return MICA_KIT_FAIL(err, "x must have rank >= 1, got 0");
    if (axis >= r)
        return MICA_KIT_FAIL(err, "axis %lld is out of range for rank %d "
                             "(0 to %d)", (long long)axis, (int)r,
                             (int)r - 1);
    len = in[0].d[axis];
    if (mica_kit_host->expr_is_constant(len) &&
        mica_kit_host->expr_constant_value(len) < l->k)
        return MICA_KIT_FAIL(err, "k %d is larger than axis %lld's length "
                             "%lld", (int)l->k, (long long)axis, (long long)
                             mica_kit_host->expr_constant_value(len));
    out->nb_dims = r;
    for (i = 0; i < r; i++)
        out->d[i] = in[0].d[i];
    out->d[axis] = mica_kit_host->expr_constant(eb, l->k);
    return out->d[axis] ? MICA_OK
                        : MICA_KIT_FAIL(err, "out of host memory");
}

static int32_t topk_formats(const mica_layer_t *layer, int32_t pos,
                            const mica_tensor_desc_t *io, int32_t nb_in,
                            int32_t nb_out)
{
    (void)layer;
    if (nb_in != 1 || nb_out != 2 || !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return value_type(io[0].dtype);
    if (pos == 1)
        return io[1].dtype == io[0].dtype;
    return io[2].dtype == MICA_INT32;
}

/* outer, len, inner; fails when k does not fit the axis (runtime
 * dimensions). */
static mica_status_t topk_split(const topk_layer_t *l, const mica_dims_t *d,
                                int64_t *outer, int64_t *len, int64_t *inner,
                                mica_error_t *err)
{
    int64_t axis = topk_axis(l, d->nb_dims);
    int32_t i;

    *outer = *inner = 1;
    *len = d->d[axis];
    for (i = 0; i < axis; i++)
        *outer *= d->d[i];
    for (i = (int32_t)axis + 1; i < d->nb_dims; i++)
        *inner *= d->d[i];
    if (*len < l->k)
        return MICA_KIT_FAIL(err, "k %d is larger than axis %lld's length "
                             "%lld", (int)l->k, (long long)axis,
                             (long long)*len);
    if (*len > INT32_MAX)
        return MICA_KIT_FAIL(err, "axis %lld is %lld long: indices are "
                             "int32", (long long)axis, (long long)*len);
    return MICA_OK;
}

/* ---- the CPU reference ------------------------------------------------- */

typedef struct row {
    const double *v;
    int is_max;
} row_t;

/* Whether position a comes before position b in the output. */
static int before(const row_t *r, int64_t a, int64_t b)
{
    double va = r->v[a], vb = r->v[b];
    int na = isnan(va), nb = isnan(vb);

    if (na != nb)
        return r->is_max ? na : nb; /* NaN is the largest */
    if (!na && va != vb)
        return r->is_max ? va > vb : va < vb;
    return a < b;
}

/* Sort p[0..n) by `before`, with tmp of n entries (merge sort). */
static void sort_positions(const row_t *r, int64_t *p, int64_t *tmp,
                           int64_t n)
{
    int64_t h = n / 2, i = 0, j = h, o = 0;

    if (n < 2)
        return;
    sort_positions(r, p, tmp, h);
    sort_positions(r, p + h, tmp, n - h);
    while (i < h || j < n)
        tmp[o++] = j >= n || (i < h && before(r, p[i], p[j])) ? p[i++]
                                                              : p[j++];
    for (i = 0; i < n; i++)
        p[i] = tmp[i];
}

static double load(mica_dtype_t t, const void *p, int64_t i)
{
    switch (t) {
    case MICA_FLOAT16: return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    case MICA_INT32: return ((const int32_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}

static void copy_value(mica_dtype_t t, const void *x, int64_t from, void *y,
                       int64_t to)
{
    switch (t) {
    case MICA_FLOAT16:
        ((uint16_t *)y)[to] = ((const uint16_t *)x)[from];
        break;
    case MICA_INT32:
        ((int32_t *)y)[to] = ((const int32_t *)x)[from];
        break;
    default:
        ((float *)y)[to] = ((const float *)x)[from];
    }
}

static MICA_KIT_ENQUEUE(topk_cpu)
{
    const topk_layer_t *l = (const topk_layer_t *)layer;
    int64_t outer, len, inner, o, i, j, *p = NULL, *tmp = NULL;
    double *v = NULL;
    row_t r;
    mica_status_t st = topk_split(l, &in[0].dims, &outer, &len, &inner, err);

    if (st != MICA_OK)
        return st;
    p = malloc((size_t)len * sizeof *p);
    tmp = malloc((size_t)len * sizeof *tmp);
    v = malloc((size_t)len * sizeof *v);
    if (!p || !tmp || !v) {
        st = MICA_KIT_FAIL(err, "out of host memory");
        goto done;
    }
    r.v = v;
    r.is_max = l->is_max;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            int64_t base = o * len * inner + i, obase = o * l->k * inner + i;
            for (j = 0; j < len; j++) {
                v[j] = load(in[0].dtype, inputs[0], base + j * inner);
                p[j] = j;
            }
            sort_positions(&r, p, tmp, len);
            for (j = 0; j < l->k; j++) {
                copy_value(in[0].dtype, inputs[0], base + p[j] * inner,
                           outputs[0], obase + j * inner);
                ((int32_t *)outputs[1])[obase + j * inner] = (int32_t)p[j];
            }
        }
done:
    free(p);
    free(tmp);
    free(v);
    return st;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(topk_cuda)
{
    const topk_layer_t *l = (const topk_layer_t *)layer;
    int64_t outer, len, inner;
    mica_status_t st = topk_split(l, &in[0].dims, &outer, &len, &inner, err);

    if (st != MICA_OK)
        return st;
    if (outer * inner == 0)
        return MICA_OK;
    return mica__topk_cuda(in[0].dtype, l->is_max, outer, len, inner, l->k,
                           inputs[0], outputs[0], (int32_t *)outputs[1],
                           stream, err);
}
#endif

static mica_layer_t *topk_create(const mica_layer_creator_t *creator,
                                 const char *name,
                                 const mica_fields_t *fields,
                                 mica_error_t *err)
{
    topk_layer_t *l;
    int64_t k = mica_kit_int(fields, "k", 0); /* required */
    int64_t axis = mica_kit_int(fields, "axis", -1);
    int has_axis = mica_kit_count(fields, "axis") > 0;

    if (k < 1 || k > MICA_TOPK_MAX_K) {
        mica_kit_host->set_error(err, "k must be 1 to %d, got %lld",
                                 MICA_TOPK_MAX_K, (long long)k);
        return NULL;
    }
    if (has_axis && (axis < 0 || axis >= MICA_MAX_DIMS)) {
        mica_kit_host->set_error(err, "axis must be 0 or more (less than "
                                 "the rank), got %lld", (long long)axis);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->is_max = mica_kit_int(fields, "op", 0) == 0;
    l->k = (int32_t)k;
    l->axis = has_axis ? axis : -1;
    return &l->base.layer;
}

MICA_KIT_LAYER_PAIR(topk, "TopK", topk_fields, MICA_KIT_COUNT(topk_fields),
                    topk_create, topk_cpu, topk_cuda,
                    .nb_outputs = topk_nb_outputs,
                    .output_dtypes = topk_dtypes,
                    .output_dims = topk_dims,
                    .supports_format = topk_formats)

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(topk)};

MICA_KIT_ENTRY("topk", PACKAGE_VERSION, "MIT",
               "TopK: the k largest or smallest elements and their indices",
               creators)
