/*
 * modules/normalization/normalization.c - the Normalization layer
 * (TensorRT's INormalizationLayer; ONNX LayerNormalization,
 * GroupNormalization, InstanceNormalization, MeanVarianceNormalization
 * and RMSNormalization map onto it): creators, layer ops, the plain-C
 * reference and a vectorized CPU implementation.
 *
 * Inputs: x (rank >= 1, float32, float16 or bfloat16), scale and
 * optionally bias, both of x's type and rank, each dimension x's or 1
 * (TensorRT's broadcast).  One output of x's shape and type.  Params:
 * `axes` (required), a bitmask of the normalized axes (bit k: axis k);
 * `epsilon` (default 1e-5); `num_groups` (default 1): with G > 1 the
 * channel axis 1 is split into G groups normalized apart (group
 * normalization; axis 1 must then not be in `axes` and G must divide
 * it); `compute_precision` (float32 or float16: the statistics are
 * accumulated in float32 at least either way); `rms` (default false):
 * ONNX's RMSNormalization, x / sqrt(mean(x^2) + eps) without the mean.
 * The formulas are in normalization.h.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "normalization.h"

static const double eps_default[] = {1e-5};
static const int64_t one[] = {1};
static const int64_t no[] = {0};

static const mica_field_schema_t norm_fields[] = {
    {"axes", MICA_FIELD_INT, 1, 1, 0, NULL, NULL,
     "bitmask of the normalized axes (bit k: axis k)"},
    {"epsilon", MICA_FIELD_FLOAT, 1, 0, 1, eps_default, NULL,
     "added to the variance (default 1e-5)"},
    {"num_groups", MICA_FIELD_INT, 1, 0, 1, one, NULL,
     "groups of the channel axis 1 normalized apart (default 1)"},
    {"compute_precision", MICA_FIELD_DTYPE, 1, 0, 0, NULL, NULL,
     "float32 or float16; statistics accumulate in float32 either way"},
    {"rms", MICA_FIELD_BOOL, 1, 0, 1, no, NULL,
     "root mean square normalization (ONNX RMSNormalization): no mean"},
};

typedef struct norm_layer {
    mica_kit_layer_t base;
    uint32_t axes;
    int64_t groups;
    float eps;
    int rms;
} norm_layer_t;

static int float_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_BFLOAT16;
}

/* ---- types and shapes ---------------------------------------------------- */

static mica_status_t norm_dtypes(const mica_layer_t *layer,
                                 const mica_dtype_t *in, int32_t nb_in,
                                 mica_dtype_t *out, int32_t nb_out,
                                 mica_error_t *err)
{
    (void)layer;
    if (nb_in < 2 || nb_in > 3 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 2 or 3 inputs (x, scale, bias) and "
                             "gives 1 output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!float_type(in[0]))
        return MICA_KIT_FAIL(err, "x must be float32, float16 or bfloat16, "
                             "got %s", mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

/* Whether expression e is a build-time constant other than 1 and v. */
static int bad_len(const mica_expr_t *e, const mica_expr_t *x)
{
    const mica_host_t *h = mica_kit_host;
    int64_t v;
    if (!h->expr_is_constant(e))
        return 0;
    v = h->expr_constant_value(e);
    return v != 1 && h->expr_is_constant(x) && v != h->expr_constant_value(x);
}

static mica_status_t check_axes(const norm_layer_t *l, int32_t rank,
                                const int64_t *c_len, mica_error_t *err)
{
    if (l->axes == 0 || (rank < 32 && (l->axes >> rank) != 0))
        return MICA_KIT_FAIL(err, "axes 0x%x names no axis or one past "
                             "rank %d", (unsigned)l->axes, (int)rank);
    if (l->groups > 1) {
        if (rank < 2)
            return MICA_KIT_FAIL(err, "num_groups %lld needs a channel axis "
                                 "1, but x has rank %d",
                                 (long long)l->groups, (int)rank);
        if (l->axes & 2u)
            return MICA_KIT_FAIL(err, "with num_groups %lld the channel "
                                 "axis 1 is split into groups and cannot be "
                                 "in axes (0x%x)", (long long)l->groups,
                                 (unsigned)l->axes);
        if (c_len && *c_len % l->groups != 0)
            return MICA_KIT_FAIL(err, "num_groups %lld does not divide the "
                                 "%lld channels of axis 1",
                                 (long long)l->groups, (long long)*c_len);
    }
    return MICA_OK;
}

static mica_status_t norm_dims(const mica_layer_t *layer, int32_t index,
                               const mica_shape_expr_t *in, int32_t nb_in,
                               mica_expr_builder_t *eb,
                               mica_shape_expr_t *out, mica_error_t *err)
{
    const norm_layer_t *l = (const norm_layer_t *)layer;
    const mica_host_t *h = mica_kit_host;
    int32_t r = in[0].nb_dims, k, i;
    int64_t c;
    mica_status_t st;

    if (r < 1)
        return MICA_KIT_FAIL(err, "x must have rank >= 1, got 0");
    c = r >= 2 && h->expr_is_constant(in[0].d[1])
            ? h->expr_constant_value(in[0].d[1]) : 0;
    if ((st = check_axes(l, r, r >= 2 && h->expr_is_constant(in[0].d[1])
                                   ? &c : NULL, err)) != MICA_OK)
        return st;
    for (k = 1; k < nb_in && k < 3; k++) {
        if (in[k].nb_dims < 0)
            continue; /* bias omitted */
        if (in[k].nb_dims != r)
            return MICA_KIT_FAIL(err, "input %d (%s) has rank %d but x has "
                                 "rank %d", (int)k, k == 1 ? "scale" : "bias",
                                 (int)in[k].nb_dims, (int)r);
        for (i = 0; i < r; i++)
            if (bad_len(in[k].d[i], in[0].d[i]))
                return MICA_KIT_FAIL(err, "dimension %d of input %d (%s) is "
                                     "%lld, which does not broadcast to x's "
                                     "%lld", (int)i, (int)k,
                                     k == 1 ? "scale" : "bias",
                                     (long long)h->expr_constant_value(
                                         in[k].d[i]),
                                     (long long)h->expr_constant_value(
                                         in[0].d[i]));
    }
    return mica_kit_same_dims(layer, index, in, nb_in, eb, out, err);
}

static int32_t norm_formats(const mica_layer_t *layer, int32_t pos,
                            const mica_tensor_desc_t *io, int32_t nb_in,
                            int32_t nb_out)
{
    (void)layer;
    if (nb_in < 2 || nb_in > 3 || nb_out != 1 || pos < 0 || pos > nb_in ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return float_type(io[0].dtype);
    return io[pos].dtype == io[0].dtype;
}

/* ---- the plan of a run ---------------------------------------------------- */

/* Contiguous strides of dims d (rank r) into s. */
static void strides_of(const int64_t *d, int32_t r, int64_t *s)
{
    int64_t acc = 1;
    int32_t i;
    for (i = r - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= d[i];
    }
}

/*
 * The plan of a run from the actual descriptors: checks what only the
 * run knows (runtime lengths), splits the groups, sorts the axes into
 * kept and reduced ones and merges neighbours that every tensor walks
 * contiguously.
 */
static mica_status_t plan_of(const norm_layer_t *l,
                             const mica_tensor_desc_t *in, int32_t nb_in,
                             const void *bias, mica__norm_plan_t *p,
                             mica_error_t *err)
{
    int64_t d[MICA__NORM_AXES], s[3][MICA_MAX_DIMS], t[MICA_MAX_DIMS];
    int64_t ps[3][MICA__NORM_AXES];
    int red[MICA__NORM_AXES];
    int32_t r = in[0].dims.nb_dims, n, i, k, a;
    mica_status_t st;

    memset(p, 0, sizeof *p);
    p->rms = l->rms;
    p->eps = l->eps;
    p->has_bias = bias != NULL && nb_in > 2;
    if ((st = check_axes(l, r, r >= 2 ? &in[0].dims.d[1] : NULL, err)) !=
        MICA_OK)
        return st;
    memset(s, 0, sizeof s);
    /* x's strides; scale's and bias's with 0 along their broadcast axes */
    strides_of(in[0].dims.d, r, t);
    for (k = 1; k <= 2; k++) {
        const mica_tensor_desc_t *v = &in[k];
        int64_t vs[MICA_MAX_DIMS];
        if (k == 2 && !p->has_bias)
            continue;
        if (v->dims.nb_dims != r)
            return MICA_KIT_FAIL(err, "input %d has rank %d but x has rank "
                                 "%d", (int)k, (int)v->dims.nb_dims, (int)r);
        strides_of(v->dims.d, r, vs);
        for (i = 0; i < r; i++) {
            if (v->dims.d[i] != 1 && v->dims.d[i] != in[0].dims.d[i])
                return MICA_KIT_FAIL(err, "dimension %d of input %d is %lld, "
                                     "which does not broadcast to x's %lld",
                                     (int)i, (int)k,
                                     (long long)v->dims.d[i],
                                     (long long)in[0].dims.d[i]);
            vs[i] = v->dims.d[i] == 1 ? 0 : vs[i];
        }
        memcpy(s[k], vs, sizeof vs);
    }
    memcpy(s[0], t, sizeof t);
    /* the axes, axis 1 split into [G, C / G] when grouped */
    for (i = 0, n = 0; i < r; i++) {
        if (i == 1 && l->groups > 1) {
            int64_t cg = in[0].dims.d[1] / l->groups;
            d[n] = l->groups;
            for (k = 0; k < 3; k++)
                ps[k][n] = s[k][1] * cg;
            red[n++] = 0;
            d[n] = cg;
            for (k = 0; k < 3; k++)
                ps[k][n] = s[k][1];
            red[n++] = 1;
            continue;
        }
        d[n] = in[0].dims.d[i];
        for (k = 0; k < 3; k++)
            ps[k][n] = s[k][i];
        red[n++] = (l->axes >> i) & 1u;
    }
    p->rows = p->len = 1;
    for (i = 0; i < n; i++) {
        int64_t *cnt = red[i] ? &p->len : &p->rows;
        int32_t *na = red[i] ? &p->nr : &p->nk;
        int64_t *dd = red[i] ? p->rd : p->kd;
        int64_t(*ss)[MICA__NORM_AXES] = red[i] ? p->rs : p->ks;
        *cnt *= d[i];
        if (d[i] == 1)
            continue;
        a = *na;
        /* merged with the last axis of its kind where every tensor
         * walks the two as one */
        if (a > 0 && ss[0][a - 1] == ps[0][i] * d[i] &&
            ss[1][a - 1] == ps[1][i] * d[i] &&
            ss[2][a - 1] == ps[2][i] * d[i]) {
            dd[a - 1] *= d[i];
            for (k = 0; k < 3; k++)
                ss[k][a - 1] = ps[k][i];
            continue;
        }
        dd[a] = d[i];
        for (k = 0; k < 3; k++)
            ss[k][a] = ps[k][i];
        (*na)++;
    }
    /* contiguous rows: every reduced axis after every kept one in x */
    p->contig = (p->nr == 0 || (p->nr == 1 && p->rs[0][0] == 1)) &&
                (p->nk == 0 || (p->nk == 1 && p->ks[0][0] == p->len));
    return MICA_OK;
}

/* ---- the CPU reference ------------------------------------------------------ */

static double get(mica_dtype_t t, const void *p, int64_t i)
{
    switch (t) {
    case MICA_FLOAT16: return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    case MICA_BFLOAT16: return mica_kit_bf16_to_float(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static void put(mica_dtype_t t, void *p, int64_t i, double v)
{
    switch (t) {
    case MICA_FLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_half((float)v);
        break;
    case MICA_BFLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_bf16((float)v);
        break;
    default:
        ((float *)p)[i] = (float)v;
    }
}

/* The reference: every row in double, two passes over it for the
 * statistics, one to write. */
static MICA_KIT_ENQUEUE(norm_cpu)
{
    const norm_layer_t *l = (const norm_layer_t *)layer;
    const void *bias = nb_in > 2 ? inputs[2] : NULL;
    mica_dtype_t t = in[0].dtype;
    mica__norm_plan_t p;
    int64_t i, j, row[3], off[3];
    mica_status_t st = plan_of(l, in, nb_in, bias, &p, err);

    if (st != MICA_OK)
        return st;
    for (i = 0; i < p.rows && p.len > 0; i++) {
        double mean = 0.0, var = 0.0, inv;
        mica__norm_row(&p, i, row);
        if (!p.rms) {
            for (j = 0; j < p.len; j++) {
                mica__norm_elem(&p, j, row, off);
                mean += get(t, inputs[0], off[0]);
            }
            mean /= (double)p.len;
        }
        for (j = 0; j < p.len; j++) {
            double v;
            mica__norm_elem(&p, j, row, off);
            v = get(t, inputs[0], off[0]) - mean;
            var += v * v;
        }
        inv = 1.0 / sqrt(var / (double)p.len + (double)p.eps);
        for (j = 0; j < p.len; j++) {
            double v;
            mica__norm_elem(&p, j, row, off);
            v = (get(t, inputs[0], off[0]) - mean) * inv *
                get(t, inputs[1], off[1]);
            if (p.has_bias)
                v += get(t, bias, off[2]);
            put(t, outputs[0], off[0], v);
        }
    }
    return MICA_OK;
}

/* ---- the vectorized CPU implementation ------------------------------------ */

#define LANES 16

/* Sum of x[0..n) and of its squares around m, in LANES float lanes. */
static void row_stats(const float *x, int64_t n, float m, float *sum,
                      float *sq)
{
    float a[LANES] = {0}, b[LANES] = {0};
    int64_t i = 0;
    int j;
    for (; i + LANES <= n; i += LANES)
        for (j = 0; j < LANES; j++) {
            float v = x[i + j] - m;
            a[j] += v;
            b[j] += v * v;
        }
    for (; i < n; i++) {
        float v = x[i] - m;
        a[0] += v;
        b[0] += v * v;
    }
    *sum = *sq = 0.0f;
    for (j = 0; j < LANES; j++) {
        *sum += a[j];
        *sq += b[j];
    }
}

/*
 * float32 rows that lie contiguously: the statistics in float lanes
 * (shifted by the row's first element, so that the variance keeps its
 * digits when the mean is large), then one pass to write.  Scale and
 * bias either run along the row (contiguous) or are one per row.
 */
static void rows_f32(const mica__norm_plan_t *p, const float *x,
                     const float *scale, const float *bias, float *y)
{
    int64_t i, j, row[3];
    int s_along = p->nr == 1 && p->rs[1][0] == 1;
    int b_along = p->nr == 1 && p->rs[2][0] == 1;

    for (i = 0; i < p->rows; i++) {
        const float *xr = x + i * p->len;
        float *yr = y + i * p->len;
        float shift = p->rms ? 0.0f : xr[0], sum, sq, mean, var, inv;
        mica__norm_row(p, i, row);
        row_stats(xr, p->len, shift, &sum, &sq);
        mean = sum / (float)p->len; /* of x - shift */
        var = p->rms ? sq / (float)p->len
                     : fmaxf(sq / (float)p->len - mean * mean, 0.0f);
        inv = 1.0f / sqrtf(var + p->eps);
        if (p->rms)
            mean = 0.0f;
        {
            const float *sr = scale + row[1], *br = bias ? bias + row[2] : NULL;
            if (s_along && (!br || b_along)) {
                for (j = 0; j < p->len; j++)
                    yr[j] = ((xr[j] - shift) - mean) * inv * sr[j] +
                            (br ? br[j] : 0.0f);
            } else {
                float s0 = s_along ? 0.0f : sr[0];
                float b0 = br && !b_along ? br[0] : 0.0f;
                for (j = 0; j < p->len; j++)
                    yr[j] = ((xr[j] - shift) - mean) * inv *
                                (s_along ? sr[j] : s0) +
                            (br ? (b_along ? br[j] : b0) : 0.0f);
            }
        }
    }
}

static MICA_KIT_ENQUEUE(norm_vector)
{
    const norm_layer_t *l = (const norm_layer_t *)layer;
    const void *bias = nb_in > 2 ? inputs[2] : NULL;
    mica__norm_plan_t p;
    mica_status_t st = plan_of(l, in, nb_in, bias, &p, err);
    int rowwise;

    if (st != MICA_OK)
        return st;
    /* scale and bias each along the row (stride 1) or one per row */
    rowwise = p.nr <= 1 && (p.nr == 0 || ((p.rs[1][0] == 1 ||
                                           p.rs[1][0] == 0) &&
                                          (p.rs[2][0] == 1 ||
                                           p.rs[2][0] == 0)));
    if (in[0].dtype != MICA_FLOAT32 || !p.contig || !rowwise || p.len == 0)
        return norm_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                        workspace, stream, err);
    rows_f32(&p, (const float *)inputs[0], (const float *)inputs[1],
             p.has_bias ? (const float *)bias : NULL, (float *)outputs[0]);
    return MICA_OK;
}

#if MICA_KIT_CUDA
static MICA_KIT_ENQUEUE(norm_cuda)
{
    const norm_layer_t *l = (const norm_layer_t *)layer;
    const void *bias = nb_in > 2 ? inputs[2] : NULL;
    mica__norm_plan_t p;
    mica_status_t st = plan_of(l, in, nb_in, bias, &p, err);

    if (st != MICA_OK)
        return st;
    if (p.rows * p.len == 0)
        return MICA_OK;
    return mica__normalization_cuda(in[0].dtype, &p, inputs[0], inputs[1],
                                    p.has_bias ? bias : NULL, outputs[0],
                                    stream, err);
}
#endif

/* ---- creators --------------------------------------------------------------- */

static mica_layer_t *norm_create(const mica_layer_creator_t *creator,
                                 const char *name,
                                 const mica_fields_t *fields,
                                 mica_error_t *err)
{
    int64_t axes = mica_kit_int(fields, "axes", 0);
    int64_t groups = mica_kit_int(fields, "num_groups", 1);
    double eps = mica_kit_float(fields, "epsilon", 1e-5);
    int64_t prec = mica_kit_int(fields, "compute_precision", MICA_FLOAT32);
    norm_layer_t *l;

    if (axes <= 0 || axes >= (1 << MICA_MAX_DIMS)) {
        mica_kit_host->set_error(err, "axes must be a bitmask of axes 0 to "
                                 "%d (1 to %d), got %lld", MICA_MAX_DIMS - 1,
                                 (1 << MICA_MAX_DIMS) - 1, (long long)axes);
        return NULL;
    }
    if (groups < 1) {
        mica_kit_host->set_error(err, "num_groups must be 1 or more, got "
                                 "%lld", (long long)groups);
        return NULL;
    }
    if (!(eps >= 0.0) || !isfinite(eps) || eps > 3.4028234663852886e38) {
        mica_kit_host->set_error(err, "epsilon must be a finite float32 of "
                                 "0 or more, got %g", eps);
        return NULL;
    }
    if (prec != MICA_FLOAT32 && prec != MICA_FLOAT16) {
        mica_kit_host->set_error(err, "compute_precision must be float32 or "
                                 "float16, got %s",
                                 mica_kit_host->dtype_name(
                                     (mica_dtype_t)prec));
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->axes = (uint32_t)axes;
    l->groups = groups;
    l->eps = (float)eps;
    l->rms = mica_kit_int(fields, "rms", 0) != 0;
    return &l->base.layer;
}

#define NORM_OPS                                                           \
    .nb_outputs = mica_kit_one_output, .output_dtypes = norm_dtypes,       \
    .output_dims = norm_dims, .supports_format = norm_formats

MICA_KIT_LAYER_PAIR(norm, "Normalization", norm_fields,
                    MICA_KIT_COUNT(norm_fields), norm_create, norm_cpu,
                    norm_cuda, NORM_OPS)

static const mica_layer_ops_t norm_ops_vector =
    MICA_KIT_OPS(norm_vector, NORM_OPS);
static const mica_layer_creator_t norm_creator_vector =
    MICA_KIT_CREATOR("Normalization", "vectorized", MICA_DEVICE_CPU, 5,
                     MICA_ROLE_NONE, norm_fields, MICA_KIT_COUNT(norm_fields),
                     norm_create, &norm_ops_vector);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(norm), &norm_creator_vector};

MICA_KIT_ENTRY_FUSION("normalization", PACKAGE_VERSION, "MIT",
                      "Normalization: layer, group, instance and RMS "
                      "normalization, and the rules of decomposed ones",
                      creators, mica__norm_rules)
