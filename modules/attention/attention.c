/*
 * modules/attention/attention.c - the Attention layer (TensorRT 10's
 * IAttention, with ONNX Attention's scale, softcap and grouped-query
 * heads): creators, layer ops, the plain-C reference and a vectorized
 * CPU implementation.
 *
 * Inputs q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] of
 * one type (float32, float16, bfloat16) and an optional mask of rank 4,
 * bool (true: attend) or of q's type (added to the scores), each of its
 * dimensions B, Hq, Sq or 1 and its last Skv or less (keys past it are
 * masked, as ONNX pads a short mask).  Output y [B, Hq, Sq, Dv] of q's
 * type.  Params: `causal` (default false), `causal_align` (upper_left:
 * query i sees keys j <= i, PyTorch's is_causal; lower_right: j <= i +
 * Skv - Sq, a query block at the end of the keys, as with a key cache),
 * `scale` (default 1 / sqrt(D)), `softcap` (default 0: none).  The
 * formulas are in attention.h.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "attention.h"
#include "kit_cpu.h"

static const char *const align_names[] = {"upper_left", "lower_right", NULL};
static const int64_t no[] = {0};
static const double zero[] = {0.0};

static const mica_field_schema_t attn_fields[] = {
    {"causal", MICA_FIELD_BOOL, 1, 0, 1, no, NULL,
     "mask the keys after each query (default false)"},
    {"causal_align", MICA_FIELD_ENUM, 1, 0, 1, no, align_names,
     "upper_left: query i sees keys 0..i; lower_right: 0..i+Skv-Sq"},
    {"scale", MICA_FIELD_FLOAT, 1, 0, 0, NULL, NULL,
     "the factor of q.k (default 1 / sqrt(D))"},
    {"softcap", MICA_FIELD_FLOAT, 1, 0, 1, zero, NULL,
     "scores become softcap * tanh(s / softcap) when > 0 (default 0)"},
};

typedef struct attn_layer {
    mica_kit_layer_t base;
    int causal, lower_right, has_scale;
    float scale, softcap;
} attn_layer_t;

static int float_type(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16 || t == MICA_BFLOAT16;
}

static const char *const in_names[] = {"q", "k", "v", "mask"};

/* ---- types and shapes ---------------------------------------------------- */

static mica_status_t attn_dtypes(const mica_layer_t *layer,
                                 const mica_dtype_t *in, int32_t nb_in,
                                 mica_dtype_t *out, int32_t nb_out,
                                 mica_error_t *err)
{
    int32_t i;
    (void)layer;
    if (nb_in < 3 || nb_in > 4 || nb_out != 1)
        return MICA_KIT_FAIL(err, "takes 3 or 4 inputs (q, k, v, mask) and "
                             "gives 1 output, got %d and %d", (int)nb_in,
                             (int)nb_out);
    if (!float_type(in[0]))
        return MICA_KIT_FAIL(err, "q must be float32, float16 or bfloat16, "
                             "got %s", mica_kit_host->dtype_name(in[0]));
    for (i = 1; i < 3; i++)
        if (in[i] != in[0])
            return MICA_KIT_FAIL(err, "%s is %s but q is %s", in_names[i],
                                 mica_kit_host->dtype_name(in[i]),
                                 mica_kit_host->dtype_name(in[0]));
    out[0] = in[0];
    return MICA_OK;
}

/* Build-time lengths: value, or -1 where known only at run time. */
static int64_t len_of(const mica_expr_t *e)
{
    return mica_kit_host->expr_is_constant(e)
               ? mica_kit_host->expr_constant_value(e) : -1;
}

/* The checks of the four shapes (lengths -1 where unknown). */
static mica_status_t check_shapes(const int64_t q[4], const int64_t k[4],
                                  const int64_t v[4], const int64_t *m,
                                  mica_error_t *err)
{
    int32_t i;
#define KNOWN2(a, b) ((a) >= 0 && (b) >= 0)
    if (KNOWN2(q[0], k[0]) && q[0] != k[0])
        return MICA_KIT_FAIL(err, "k's batch is %lld but q's is %lld",
                             (long long)k[0], (long long)q[0]);
    if (KNOWN2(v[0], k[0]) && v[0] != k[0])
        return MICA_KIT_FAIL(err, "v's batch is %lld but k's is %lld",
                             (long long)v[0], (long long)k[0]);
    if (KNOWN2(v[1], k[1]) && v[1] != k[1])
        return MICA_KIT_FAIL(err, "v has %lld heads but k has %lld",
                             (long long)v[1], (long long)k[1]);
    if (KNOWN2(q[1], k[1]) && (k[1] == 0 ? q[1] != 0 : q[1] % k[1] != 0))
        return MICA_KIT_FAIL(err, "q's %lld heads are not a multiple of k's "
                             "%lld", (long long)q[1], (long long)k[1]);
    if (KNOWN2(v[2], k[2]) && v[2] != k[2])
        return MICA_KIT_FAIL(err, "v has %lld keys but k has %lld",
                             (long long)v[2], (long long)k[2]);
    if (KNOWN2(q[3], k[3]) && q[3] != k[3])
        return MICA_KIT_FAIL(err, "k's head size is %lld but q's is %lld",
                             (long long)k[3], (long long)q[3]);
    if (!m)
        return MICA_OK;
    for (i = 0; i < 3; i++)
        if (KNOWN2(m[i], q[i]) && m[i] != 1 && m[i] != q[i])
            return MICA_KIT_FAIL(err, "dimension %d of the mask is %lld, "
                                 "which is neither 1 nor q's %lld", (int)i,
                                 (long long)m[i], (long long)q[i]);
    if (KNOWN2(m[3], k[2]) && m[3] > k[2])
        return MICA_KIT_FAIL(err, "the mask's last dimension %lld is past "
                             "the %lld keys", (long long)m[3],
                             (long long)k[2]);
#undef KNOWN2
    return MICA_OK;
}

static mica_status_t attn_dims(const mica_layer_t *layer, int32_t index,
                               const mica_shape_expr_t *in, int32_t nb_in,
                               mica_expr_builder_t *eb,
                               mica_shape_expr_t *out, mica_error_t *err)
{
    int64_t s[4][4];
    int32_t i, j, has_mask = nb_in > 3 && in[3].nb_dims >= 0;
    mica_status_t st;

    (void)layer;
    (void)eb;
    (void)index;
    for (i = 0; i < 3 + has_mask; i++) {
        if (in[i].nb_dims != 4)
            return MICA_KIT_FAIL(err, "%s must have rank 4 [batch, heads, "
                                 "sequence, size], got %d", in_names[i],
                                 (int)in[i].nb_dims);
        for (j = 0; j < 4; j++)
            s[i][j] = len_of(in[i].d[j]);
    }
    if ((st = check_shapes(s[0], s[1], s[2], has_mask ? s[3] : NULL,
                           err)) != MICA_OK)
        return st;
    out->nb_dims = 4;
    out->d[0] = in[0].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = in[0].d[2];
    out->d[3] = in[2].d[3];
    return MICA_OK;
}

static int32_t attn_formats(const mica_layer_t *layer, int32_t pos,
                            const mica_tensor_desc_t *io, int32_t nb_in,
                            int32_t nb_out)
{
    (void)layer;
    if (nb_in < 3 || nb_in > 4 || nb_out != 1 || pos < 0 || pos > nb_in ||
        !mica_kit_linear(io, pos))
        return 0;
    if (pos == 0)
        return float_type(io[0].dtype);
    if (pos == 3 && nb_in == 4)
        return io[3].dtype == MICA_BOOL || io[3].dtype == io[0].dtype;
    return io[pos].dtype == io[0].dtype;
}

/* ---- the plan of a run ---------------------------------------------------- */

static mica_status_t plan_of(const attn_layer_t *l,
                             const mica_tensor_desc_t *in, int32_t nb_in,
                             const void *mask, mica__attn_plan_t *p,
                             mica_error_t *err)
{
    const int64_t *q = in[0].dims.d, *k = in[1].dims.d, *v = in[2].dims.d;
    const int64_t *m = NULL;
    mica_status_t st;
    int32_t i;

    memset(p, 0, sizeof *p);
    if (mask && nb_in > 3) {
        if (in[3].dims.nb_dims != 4)
            return MICA_KIT_FAIL(err, "the mask must have rank 4, got %d",
                                 (int)in[3].dims.nb_dims);
        m = in[3].dims.d;
    }
    if ((st = check_shapes(q, k, v, m, err)) != MICA_OK)
        return st;
    p->b = q[0];
    p->hq = q[1];
    p->hkv = k[1];
    p->sq = q[2];
    p->skv = k[2];
    p->d = q[3];
    p->dv = v[3];
    if (m) {
        int64_t acc = 1;
        p->mask = in[3].dtype == MICA_BOOL ? MICA__ATTN_BOOL_MASK
                                           : MICA__ATTN_ADD_MASK;
        for (i = 3; i >= 0; i--) {
            p->ms[i] = m[i] == 1 && i < 3 ? 0 : acc;
            acc *= m[i];
        }
        p->mlen = m[3];
        if (m[3] == 1 && p->skv > 1)
            p->ms[3] = 0, p->mlen = p->skv; /* broadcast along the keys */
    }
    p->causal = l->causal;
    p->causal_off = l->lower_right ? p->skv - p->sq : 0;
    p->scale = l->has_scale ? l->scale
                            : (p->d > 0 ? (float)(1.0 / sqrt((double)p->d))
                                        : 1.0f);
    p->softcap = l->softcap;
    return MICA_OK;
}

/* ---- the CPU reference ------------------------------------------------------ */

static mica_status_t nomem(int64_t n, mica_error_t *err)
{
    mica_kit_host->set_error(err, "out of host memory for a row of %lld "
                             "scores", (long long)n);
    return MICA_ERR_NOMEM;
}

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

/* The bias of (n, h, i, j) read from the mask of type t. */
static float bias_of(const mica__attn_plan_t *p, mica_dtype_t t,
                     const void *mask, int64_t n, int64_t h, int64_t i,
                     int64_t j)
{
    float madd = 0.0f;
    if (p->mask == MICA__ATTN_ADD_MASK && j < p->mlen)
        madd = (float)get(t, mask, mica__attn_moff(p, n, h, i, j));
    return mica__attn_bias(p, n, h, i, j, (const uint8_t *)mask, madd);
}

/* The reference: each query's row of scores in double, then its
 * softmax and the weighted sum of v. */
static MICA_KIT_ENQUEUE(attn_cpu)
{
    const attn_layer_t *l = (const attn_layer_t *)layer;
    const void *mask = nb_in > 3 ? inputs[3] : NULL;
    mica_dtype_t t = in[0].dtype, mt = mask ? in[3].dtype : t;
    mica__attn_plan_t p;
    int64_t n, h, i, j, c, group;
    double *s, *acc;
    mica_status_t st = plan_of(l, in, nb_in, mask, &p, err);

    if (st != MICA_OK)
        return st;
    if (p.b * p.hq * p.sq * p.dv == 0)
        return MICA_OK;
    s = malloc(sizeof *s * (size_t)(p.skv + 1));
    acc = malloc(sizeof *acc * (size_t)(p.dv + 1));
    if (!s || !acc) {
        free(s);
        free(acc);
        return nomem(p.skv, err);
    }
    group = p.hq / p.hkv;
    for (n = 0; n < p.b; n++)
        for (h = 0; h < p.hq; h++)
            for (i = 0; i < p.sq; i++) {
                int64_t qo = ((n * p.hq + h) * p.sq + i) * p.d;
                int64_t kvh = n * p.hkv + h / group;
                double m = -INFINITY, sum = 0.0;
                for (j = 0; j < p.skv; j++) {
                    int64_t ko = (kvh * p.skv + j) * p.d;
                    double dot = 0.0, b = bias_of(&p, mt, mask, n, h, i, j);
                    double sc;
                    for (c = 0; c < p.d; c++)
                        dot += get(t, inputs[0], qo + c) *
                               get(t, inputs[1], ko + c);
                    sc = dot * (double)p.scale + b;
                    if (p.softcap > 0.0f)
                        sc = (double)p.softcap * tanh(sc / (double)p.softcap);
                    s[j] = sc;
                    m = sc > m ? sc : m;
                }
                for (c = 0; c < p.dv; c++)
                    acc[c] = 0.0;
                for (j = 0; j < p.skv && m > -INFINITY; j++) {
                    int64_t vo = (kvh * p.skv + j) * p.dv;
                    double e = exp(s[j] - m);
                    sum += e;
                    for (c = 0; c < p.dv; c++)
                        acc[c] += e * get(t, inputs[2], vo + c);
                }
                for (c = 0; c < p.dv; c++)
                    put(t, outputs[0], ((n * p.hq + h) * p.sq + i) * p.dv + c,
                        sum > 0.0 ? acc[c] / sum : 0.0);
            }
    free(s);
    free(acc);
    return MICA_OK;
}

/* ---- the vectorized CPU implementation ------------------------------------ */

#define LANES 16

static float dot_f32(const float *a, const float *b, int64_t n)
{
    float lane[LANES] = {0}, r = 0.0f;
    int64_t i = 0;
    int j;
    for (; i + LANES <= n; i += LANES)
        for (j = 0; j < LANES; j++)
            lane[j] += a[i + j] * b[i + j];
    for (; i < n; i++)
        r += a[i] * b[i];
    for (j = 0; j < LANES; j++)
        r += lane[j];
    return r;
}

/* y[0..n) += a * x[0..n) */
static void axpy_f32(float *y, float a, const float *x, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* The most keys a query row of the threaded float32 path scores on the
 * stack (32 KiB); longer rows take one buffer on one thread. */
#define ROW_KEYS 8192

typedef struct attn_job {
    const mica__attn_plan_t *p;
    const float *q, *k, *v;
    float *y;
    const void *mask;
    mica_dtype_t mt;
    float *s;                     /* NULL: each part's own row on the stack */
} attn_job_t;

/* Query rows [begin, end) of the flattened (batch, head, query). */
static void attn_rows(void *ctx, int64_t begin, int64_t end)
{
    const attn_job_t *jb = ctx;
    const mica__attn_plan_t *p = jb->p;
    float row[ROW_KEYS], *s = jb->s ? jb->s : row;
    int64_t r, j, group = p->hq / p->hkv;

    for (r = begin; r < end; r++) {
        int64_t i = r % p->sq, h = (r / p->sq) % p->hq,
                n = r / (p->sq * p->hq);
        const float *kh = jb->k + (n * p->hkv + h / group) * p->skv * p->d;
        const float *vh = jb->v + (n * p->hkv + h / group) * p->skv * p->dv;
        const float *qi = jb->q + r * p->d;
        float *yi = jb->y + r * p->dv, m = -INFINITY, sum = 0.0f;
        int64_t last = p->skv;
        if (p->causal && i + p->causal_off + 1 < last && !p->softcap)
            last = i + p->causal_off + 1 < 0 ? 0 : i + p->causal_off + 1;
        for (j = 0; j < last; j++) {
            float b = p->mask || p->causal
                          ? bias_of(p, jb->mt, jb->mask, n, h, i, j) : 0.0f;
            s[j] = mica__attn_score(p, dot_f32(qi, kh + j * p->d, p->d), b);
            m = s[j] > m ? s[j] : m;
        }
        memset(yi, 0, sizeof *yi * (size_t)p->dv);
        if (m == -INFINITY)
            continue;
        for (j = 0; j < last; j++) {
            float e = expf(s[j] - m);
            sum += e;
            if (e != 0.0f)
                axpy_f32(yi, e, vh + j * p->dv, p->dv);
        }
        for (j = 0; j < p->dv; j++)
            yi[j] /= sum;
    }
}

/*
 * float32: for each query, its scores in float lanes (dot products over
 * D), the softmax, then the weighted sum of v rows into the output row;
 * no Sq x Skv tensor, one row of scores at a time, the rows on the
 * layer's threads (rows of up to ROW_KEYS keys; longer ones on one
 * thread).  Other types run the reference.
 */
static MICA_KIT_ENQUEUE(attn_vector)
{
    const attn_layer_t *l = (const attn_layer_t *)layer;
    const void *mask = nb_in > 3 ? inputs[3] : NULL;
    mica__attn_plan_t p;
    attn_job_t jb;
    int64_t rows, grain;
    mica_status_t st;

    if (in[0].dtype != MICA_FLOAT32)
        return attn_cpu(layer, in, nb_in, out, nb_out, inputs, outputs,
                        workspace, stream, err);
    if ((st = plan_of(l, in, nb_in, mask, &p, err)) != MICA_OK)
        return st;
    if (p.b * p.hq * p.sq * p.dv == 0)
        return MICA_OK;
    memset(&jb, 0, sizeof jb);
    jb.p = &p;
    jb.q = (const float *)inputs[0];
    jb.k = (const float *)inputs[1];
    jb.v = (const float *)inputs[2];
    jb.y = (float *)outputs[0];
    jb.mask = mask;
    jb.mt = mask ? in[3].dtype : in[0].dtype;
    rows = p.b * p.hq * p.sq;
    if (p.skv > ROW_KEYS) {
        if (!(jb.s = malloc(sizeof *jb.s * (size_t)(p.skv + 1))))
            return nomem(p.skv, err);
        attn_rows(&jb, 0, rows);
        free(jb.s);
        return MICA_OK;
    }
    /* a part of about MICA__CPU_GRAIN multiply-adds */
    grain = MICA__CPU_GRAIN / (p.skv * (p.d + p.dv) + 1) + 1;
    mica__cpu_for(rows, grain, attn_rows, &jb);
    return MICA_OK;
}

#if MICA_KIT_CUDA
static mica_status_t attn_cuda_run(mica_layer_t *layer,
                                   const mica_tensor_desc_t *in, int32_t nb_in,
                                   const void *const *inputs,
                                   void *const *outputs, int flash,
                                   void *stream, mica_error_t *err)
{
    const attn_layer_t *l = (const attn_layer_t *)layer;
    const void *mask = nb_in > 3 ? inputs[3] : NULL;
    mica__attn_plan_t p;
    mica_status_t st = plan_of(l, in, nb_in, mask, &p, err);

    if (st != MICA_OK)
        return st;
    if (p.b * p.hq * p.sq * p.dv == 0)
        return MICA_OK;
    return mica__attention_cuda(in[0].dtype, &p, inputs[0], inputs[1],
                                inputs[2], mask, outputs[0], flash, stream,
                                err);
}

static MICA_KIT_ENQUEUE(attn_cuda)
{
    return attn_cuda_run(layer, in, nb_in, inputs, outputs, 1, stream, err);
}
#endif

/* ---- creators --------------------------------------------------------------- */

static int finite_f32(double v)
{
    return isfinite(v) && fabs(v) <= 3.4028234663852886e38;
}

static mica_layer_t *attn_create(const mica_layer_creator_t *creator,
                                 const char *name,
                                 const mica_fields_t *fields,
                                 mica_error_t *err)
{
    double scale = mica_kit_float(fields, "scale", 1.0);
    double softcap = mica_kit_float(fields, "softcap", 0.0);
    attn_layer_t *l;

    if (!finite_f32(scale)) {
        mica_kit_host->set_error(err, "scale must be a finite float32, got "
                                 "%g", scale);
        return NULL;
    }
    if (!finite_f32(softcap) || softcap < 0.0) {
        mica_kit_host->set_error(err, "softcap must be a finite float32 of 0 "
                                 "or more, got %g", softcap);
        return NULL;
    }
    l = mica_kit_layer_new(sizeof *l, creator->user_data, creator, name,
                           fields, err);
    if (!l)
        return NULL;
    l->causal = mica_kit_int(fields, "causal", 0) != 0;
    l->lower_right = mica_kit_int(fields, "causal_align", 0) == 1;
    l->has_scale = mica_kit_count(fields, "scale") > 0;
    l->scale = (float)scale;
    l->softcap = (float)softcap;
    return &l->base.layer;
}

#define ATTN_OPS                                                           \
    .nb_outputs = mica_kit_one_output, .output_dtypes = attn_dtypes,       \
    .output_dims = attn_dims, .supports_format = attn_formats

MICA_KIT_LAYER_PAIR(attn, "Attention", attn_fields,
                    MICA_KIT_COUNT(attn_fields), attn_create, attn_cpu,
                    attn_cuda, ATTN_OPS)

static const mica_layer_ops_t attn_ops_vector =
    MICA_KIT_OPS(attn_vector, ATTN_OPS);
static const mica_layer_creator_t attn_creator_vector =
    MICA_KIT_CREATOR("Attention", "vectorized", MICA_DEVICE_CPU, 5,
                     MICA_ROLE_NONE, attn_fields, MICA_KIT_COUNT(attn_fields),
                     attn_create, &attn_ops_vector);

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(attn), &attn_creator_vector};

MICA_KIT_ENTRY_FUSION("attention", PACKAGE_VERSION, "MIT",
                      "Attention: fused scaled dot-product attention, and "
                      "the rules of attentions written out",
                      creators, mica__attn_rules)
