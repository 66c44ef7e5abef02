/*
 * modules/common/kit_vec.c - the element drivers of the CPU `vec`
 * implementations (kit_vec.h): conversions, the map, and the broadcast
 * walk in memory order.
 */
#include <config.h>

#include <string.h>

#include "mica/kit_half.h"
#include "kit_cpu.h"
#include "kit_vec.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define VEC_F16C 1
#endif

/* ---- conversions ---------------------------------------------------- */

#ifdef VEC_F16C
__attribute__((target("f16c,avx"))) static void h2f_f16c(float *d,
                                                          const uint16_t *s,
                                                          int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                    (const __m128i *)(const void *)(s + i))));
    for (; i < n; i++)
        d[i] = mica_kit_half_to_float(s[i]);
}

__attribute__((target("f16c,avx"))) static void f2h_f16c(uint16_t *d,
                                                          const float *s,
                                                          int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i),
                                         _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++)
        d[i] = mica_kit_float_to_half(s[i]);
}

static int has_f16c(void)
{
    return mica__cpu_has_f16c();
}
#endif

void mica__vec_to_f32(float *d, mica_dtype_t from, const void *src,
                      int64_t n)
{
    int64_t i;
    switch (from) {
    case MICA_FLOAT32:
        memcpy(d, src, (size_t)n * sizeof *d);
        return;
    case MICA_FLOAT16:
#ifdef VEC_F16C
        if (has_f16c()) {
            h2f_f16c(d, src, n);
            return;
        }
#endif
        for (i = 0; i < n; i++)
            d[i] = mica_kit_half_to_float(((const uint16_t *)src)[i]);
        return;
    case MICA_BOOL:
    case MICA_UINT8:
        for (i = 0; i < n; i++)
            d[i] = (float)((const uint8_t *)src)[i];
        return;
    case MICA_INT8:
        for (i = 0; i < n; i++)
            d[i] = (float)((const int8_t *)src)[i];
        return;
    case MICA_INT32:
        for (i = 0; i < n; i++)
            d[i] = (float)((const int32_t *)src)[i];
        return;
    case MICA_INT64:
        for (i = 0; i < n; i++)
            d[i] = (float)((const int64_t *)src)[i];
        return;
    default:
        memset(d, 0, (size_t)n * sizeof *d);
        return;
    }
}

void mica__vec_from_f32(void *dst, mica_dtype_t to, const float *s,
                        int64_t n)
{
    int64_t i;
    switch (to) {
    case MICA_FLOAT32:
        memcpy(dst, s, (size_t)n * sizeof *s);
        return;
    case MICA_FLOAT16:
#ifdef VEC_F16C
        if (has_f16c()) {
            f2h_f16c(dst, s, n);
            return;
        }
#endif
        for (i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = mica_kit_float_to_half(s[i]);
        return;
    default: /* bool */
        for (i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = s[i] != 0.0f;
        return;
    }
}

int mica__vec_float(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

/* ---- the map -------------------------------------------------------- */

typedef struct map_job {
    mica__vec_map_fn *fn;
    const void *ctx;
    mica_dtype_t tx, ty;
    const void *x;
    void *y;
} map_job_t;

static void map_range(void *data, int64_t begin, int64_t end)
{
    const map_job_t *j = data;
    size_t sx = j->tx == MICA_FLOAT16 ? 2 : 4;
    size_t sy = j->ty == MICA_FLOAT16 ? 2 : j->ty == MICA_BOOL ? 1 : 4;
    float bx[MICA__VEC_BLOCK], by[MICA__VEC_BLOCK];
    int64_t i, n;

    if (j->tx == MICA_FLOAT32 && j->ty == MICA_FLOAT32) {
        for (i = begin; i < end; i += n) {
            n = end - i < MICA__VEC_BLOCK ? end - i : MICA__VEC_BLOCK;
            j->fn(j->ctx, (const float *)j->x + i, (float *)j->y + i, n);
        }
        return;
    }
    for (i = begin; i < end; i += n) {
        const float *x = bx;
        float *y = j->ty == MICA_FLOAT32 ? (float *)j->y + i : by;
        n = end - i < MICA__VEC_BLOCK ? end - i : MICA__VEC_BLOCK;
        if (j->tx == MICA_FLOAT32)
            x = (const float *)j->x + i;
        else
            mica__vec_to_f32(bx, j->tx, (const char *)j->x + (size_t)i * sx,
                             n);
        j->fn(j->ctx, x, y, n);
        if (y == by)
            mica__vec_from_f32((char *)j->y + (size_t)i * sy, j->ty, by, n);
    }
}

void mica__vec_map(mica__vec_map_fn *fn, const void *ctx, int64_t n,
                   mica_dtype_t tx, const void *x, mica_dtype_t ty, void *y)
{
    map_job_t j;
    j.fn = fn;
    j.ctx = ctx;
    j.tx = tx;
    j.ty = ty;
    j.x = x;
    j.y = y;
    mica__cpu_for(n, MICA__CPU_GRAIN, map_range, &j);
}

/* ---- the broadcast walk --------------------------------------------- */

#define NIN 3

typedef struct walk {
    int32_t rank, nin;
    int64_t period;                   /* > 0: the inner run is rows of
                                       * `period` merged (plan_rows) */
    int32_t rep[NIN];                 /* input j repeats one row there
                                       * (its inner stride is then 0) */
    int64_t d[MICA_MAX_DIMS];         /* output dims, memory order */
    int64_t s[NIN][MICA_MAX_DIMS];    /* input strides in that order */
    mica_dtype_t t[NIN], ty;
    const char *p[NIN];
    char *y;
    mica__vec_bin_fn *bin;
    mica__vec_ter_fn *ter;
    const void *ctx;
} walk_t;

static size_t dsize(mica_dtype_t t)
{
    return t == MICA_FLOAT16 ? 2 : t == MICA_BOOL ? 1 : 4;
}

/*
 * Short rows (a channel broadcast in channels last: runs of C elements)
 * cost a call each.  Where the inner run is short and every input is
 * either contiguous across rows or the same row for every row (stride 0
 * along the row dimension), k rows are merged into one run: the
 * repeated row is staged k times (run_in), so that the kernels see runs
 * of about MICA__VEC_BLOCK / 2 elements.
 */
static void plan_rows(walk_t *w)
{
    int32_t r = w->rank, j;
    int64_t inner, rows, k;

    w->period = 0;
    for (j = 0; j < w->nin; j++)
        w->rep[j] = 0;
    if (r < 2 || (inner = w->d[r - 1]) >= 128)
        return;
    rows = w->d[r - 2];
    for (j = 0; j < w->nin; j++) {
        int64_t a = w->s[j][r - 2], b = w->s[j][r - 1];
        if (!((b == 1 && a == inner) || (a == 0 && (b == 0 || b == 1))))
            return;
    }
    for (k = (MICA__VEC_BLOCK / 2) / inner; k > 1 && rows % k; k--)
        ;
    if (k < 2)
        return;
    w->period = inner;
    w->d[r - 2] = rows / k;
    w->d[r - 1] = inner * k;
    for (j = 0; j < w->nin; j++) {
        if (w->s[j][r - 2] == 0) {
            /* the same row again: contiguous (a row repeated) or one
             * value (stride 0 stays 0) */
            if (w->s[j][r - 1] == 1) {
                w->rep[j] = 1;
                w->s[j][r - 1] = 0;
            }
        } else {
            w->s[j][r - 2] *= k;
        }
    }
}

/*
 * The walk of inputs in[] into output y: dims in y's memory order (its
 * strides decreasing), broadcast strides 0, adjacent dims merged where
 * every tensor allows.  0 for a format mica_kit_strides does not know.
 */
static int plan_walk(walk_t *w, const mica_tensor_desc_t *in, int32_t nin,
                     const mica_tensor_desc_t *y)
{
    int64_t sy[MICA_MAX_DIMS], si[NIN][MICA_MAX_DIMS], ord_s[MICA_MAX_DIMS];
    int32_t r = y->dims.nb_dims, k, j, m, ord[MICA_MAX_DIMS];

    if (!mica_kit_strides(y, sy))
        return 0;
    for (j = 0; j < nin; j++) {
        if (!mica_kit_strides(&in[j], si[j]) || in[j].dims.nb_dims != r)
            return 0;
        for (k = 0; k < r; k++)
            if (in[j].dims.d[k] == 1 && y->dims.d[k] != 1)
                si[j][k] = 0;
    }
    /* y's dims by decreasing stride (a stable insertion sort; dims of
     * length 1 are dropped: they move nothing) */
    m = 0;
    for (k = 0; k < r; k++) {
        int32_t at;
        if (y->dims.d[k] == 1)
            continue;
        for (at = m; at > 0 && ord_s[at - 1] < sy[k]; at--) {
            ord[at] = ord[at - 1];
            ord_s[at] = ord_s[at - 1];
        }
        ord[at] = k;
        ord_s[at] = sy[k];
        m++;
    }
    w->rank = 0;
    w->nin = nin;
    for (k = 0; k < m; k++) {
        int32_t o = ord[k], q = w->rank - 1, merge = q >= 0;
        /* merge into the previous dim when, in every tensor, stepping
         * the previous dim is stepping this one d times */
        if (merge && ord_s[k] * y->dims.d[o] != sy[ord[k - 1]])
            merge = 0;
        for (j = 0; merge && j < nin; j++)
            if (si[j][o] * y->dims.d[o] != w->s[j][q])
                merge = 0;
        if (merge) {
            w->d[q] *= y->dims.d[o];
            for (j = 0; j < nin; j++)
                w->s[j][q] = si[j][o];
            continue;
        }
        w->d[w->rank] = y->dims.d[o];
        for (j = 0; j < nin; j++)
            w->s[j][w->rank] = si[j][o];
        w->rank++;
    }
    if (w->rank == 0) { /* one element */
        w->rank = 1;
        w->d[0] = 1;
        for (j = 0; j < nin; j++)
            w->s[j][0] = 0;
    }
    plan_rows(w);
    return 1;
}

/* Input j's run of n elements from element offset `off` as float32 with
 * a stride of 0 or 1: the data itself where it can be, else staged into
 * buf. */
static const float *run_in(const walk_t *w, int32_t j, int64_t off,
                           int64_t at, int64_t n, float *buf,
                           int64_t *stride)
{
    int64_t s = w->s[j][w->rank - 1], i;
    size_t es = dsize(w->t[j]);

    if (w->rep[j]) { /* a row of `period` repeated, from position at */
        int64_t p = w->period, first = at % p, done = 0;
        *stride = 1;
        while (done < n) {
            int64_t m = p - first < n - done ? p - first : n - done;
            mica__vec_to_f32(buf + done, w->t[j],
                             w->p[j] + (size_t)(off + first) * es, m);
            done += m;
            first = 0;
        }
        return buf;
    }
    if (s == 0) {
        mica__vec_to_f32(buf, w->t[j], w->p[j] + (size_t)off * es, 1);
        *stride = 0;
        return buf;
    }
    *stride = 1;
    if (s == 1 && w->t[j] == MICA_FLOAT32)
        return (const float *)(const void *)w->p[j] + off;
    if (s == 1) {
        mica__vec_to_f32(buf, w->t[j], w->p[j] + (size_t)off * es, n);
        return buf;
    }
    for (i = 0; i < n; i++) /* formats that disagree: gather */
        mica__vec_to_f32(buf + i, w->t[j],
                         w->p[j] + (size_t)(off + i * s) * es, 1);
    return buf;
}

static void walk_range(void *data, int64_t begin, int64_t end)
{
    const walk_t *w = data;
    int32_t r = w->rank, k, j;
    int64_t idx[MICA_MAX_DIMS], off[NIN], inner = w->d[r - 1], pos = begin;
    float buf[NIN][MICA__VEC_BLOCK], by[MICA__VEC_BLOCK];
    size_t ey = dsize(w->ty);

    /* the position of `begin`, and each input's offset there: once */
    {
        int64_t rest = begin;
        for (k = r - 1; k >= 0; k--) {
            idx[k] = rest % w->d[k];
            rest /= w->d[k];
        }
        for (j = 0; j < w->nin; j++) {
            off[j] = 0;
            for (k = 0; k < r; k++)
                off[j] += idx[k] * w->s[j][k];
        }
    }
    while (pos < end) {
        int64_t n = inner - idx[r - 1];
        const float *x[NIN];
        int64_t sx[NIN];
        float *y;
        if (n > end - pos)
            n = end - pos;
        if (n > MICA__VEC_BLOCK)
            n = MICA__VEC_BLOCK;
        for (j = 0; j < w->nin; j++)
            x[j] = run_in(w, j, off[j], idx[r - 1], n, buf[j], &sx[j]);
        y = w->ty == MICA_FLOAT32 ? (float *)(void *)w->y + pos : by;
        if (w->nin == 2)
            w->bin(w->ctx, x[0], sx[0], x[1], sx[1], y, n);
        else
            w->ter(w->ctx, x[0], sx[0], x[1], sx[1], x[2], sx[2], y, n);
        if (y == by)
            mica__vec_from_f32(w->y + (size_t)pos * ey, w->ty, by, n);
        pos += n;
        /* step the odometer by n along the run, carrying outward */
        idx[r - 1] += n;
        for (j = 0; j < w->nin; j++)
            off[j] += n * w->s[j][r - 1];
        for (k = r - 1; k > 0 && idx[k] == w->d[k]; k--) {
            idx[k] = 0;
            idx[k - 1]++;
            for (j = 0; j < w->nin; j++)
                off[j] += w->s[j][k - 1] - w->d[k] * w->s[j][k];
        }
    }
}

static mica_status_t walk_run(walk_t *w, const mica_tensor_desc_t *in,
                              int32_t nin, const void *const *p,
                              const mica_tensor_desc_t *y, void *py,
                              mica_error_t *err)
{
    int32_t j;
    if (!plan_walk(w, in, nin, y)) {
        mica_kit_host->set_error(err, "element kernels take linear and "
                                 "channels-last tensors of one rank, got "
                                 "format %d", (int)y->format);
        return MICA_ERR_UNSUPPORTED;
    }
    for (j = 0; j < nin; j++) {
        w->t[j] = in[j].dtype;
        w->p[j] = p[j];
    }
    w->ty = y->dtype;
    w->y = py;
    mica__cpu_for(mica_dims_volume(&y->dims), MICA__CPU_GRAIN, walk_range,
                  w);
    return MICA_OK;
}

mica_status_t mica__vec_binary(mica__vec_bin_fn *fn, const void *ctx,
                               const mica_tensor_desc_t *a, const void *pa,
                               const mica_tensor_desc_t *b, const void *pb,
                               const mica_tensor_desc_t *y, void *py,
                               mica_error_t *err)
{
    mica_tensor_desc_t in[2];
    const void *p[2];
    walk_t w;

    memset(&w, 0, sizeof w);
    in[0] = *a;
    in[1] = *b;
    p[0] = pa;
    p[1] = pb;
    w.bin = fn;
    w.ctx = ctx;
    return walk_run(&w, in, 2, p, y, py, err);
}

mica_status_t mica__vec_ternary(mica__vec_ter_fn *fn, const void *ctx,
                                const mica_tensor_desc_t *c, const void *pc,
                                const mica_tensor_desc_t *a, const void *pa,
                                const mica_tensor_desc_t *b, const void *pb,
                                const mica_tensor_desc_t *y, void *py,
                                mica_error_t *err)
{
    mica_tensor_desc_t in[3];
    const void *p[3];
    walk_t w;

    memset(&w, 0, sizeof w);
    in[0] = *c;
    in[1] = *a;
    in[2] = *b;
    p[0] = pc;
    p[1] = pa;
    p[2] = pb;
    w.ter = fn;
    w.ctx = ctx;
    return walk_run(&w, in, 3, p, y, py, err);
}
