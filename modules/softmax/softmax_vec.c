/*
 * modules/softmax/softmax_vec.c - SoftMax on the CPU with vectors
 * (implementation "vec"): float32 and float16, linear.  Along a
 * contiguous axis (the last) each row is one vector pass for its
 * maximum, one for exp(x - max) and its sum, one for the division;
 * along another axis, `inner` columns are done at once, each lane one
 * column.  float32 arithmetic (the kit's exp, float sums), as ONNX
 * Runtime computes: within a relative 2e-5 of the reference's double
 * arithmetic (x - max rounds in float32);
 * NaN and infinities give what the reference gives (fmaxf skips NaN in
 * the maximum; a NaN or an infinite maximum makes the row NaN).  Rows
 * are split between threads for large tensors.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "softmax.h"
#include "kit_vec.h"

#define COLS 256 /* columns at once along a strided axis */

typedef struct job {
    mica_dtype_t t;
    const char *x;
    char *y;
    int64_t len, inner, blocks; /* blocks of columns per outer index */
} job_t;

/* One row of n contiguous floats, in place in b. */
static void row(float *b, int64_t n)
{
    mica__vf vm = mica__v_set1(-INFINITY), vs = mica__v_set1(0.0f);
    float m = -INFINITY, s = 0.0f, lanes[MICA__VL];
    int64_t i;
    int k;

    for (i = 0; i + MICA__VL <= n; i += MICA__VL)
        vm = mica__v_max(vm, mica__v_load(b + i));
    mica__v_store(lanes, vm);
    for (k = 0; k < MICA__VL; k++)
        m = fmaxf(m, lanes[k]);
    for (; i < n; i++)
        m = fmaxf(m, b[i]);
    for (i = 0; i + MICA__VL <= n; i += MICA__VL) {
        mica__vf e = mica__v_exp(mica__v_load(b + i) - m);
        mica__v_store(b + i, e);
        vs += e;
    }
    for (; i < n; i++) {
        float t[MICA__VL] = {0};
        mica__vf e;
        t[0] = b[i] - m;
        e = mica__v_exp(mica__v_load(t));
        mica__v_store(t, e);
        b[i] = t[0];
        s += t[0];
    }
    mica__v_store(lanes, vs);
    for (k = 0; k < MICA__VL; k++)
        s += lanes[k];
    for (i = 0; i + MICA__VL <= n; i += MICA__VL)
        mica__v_store(b + i, mica__v_load(b + i) / s);
    for (; i < n; i++)
        b[i] = b[i] / s;
}

static void rows_range(void *data, int64_t begin, int64_t end)
{
    const job_t *j = data;
    size_t es = j->t == MICA_FLOAT16 ? 2 : 4;
    float buf[MICA__VEC_BLOCK];
    int64_t o;

    for (o = begin; o < end; o++) {
        const char *x = j->x + (size_t)(o * j->len) * es;
        char *y = j->y + (size_t)(o * j->len) * es;
        if (j->t == MICA_FLOAT32) {
            if (x != y)
                memcpy(y, x, (size_t)j->len * es);
            row((float *)(void *)y, j->len);
        } else { /* float16 rows fit the block (the caller checked) */
            mica__vec_to_f32(buf, j->t, x, j->len);
            row(buf, j->len);
            mica__vec_from_f32(y, j->t, buf, j->len);
        }
    }
}

/* Columns: block b of outer index o, lanes across columns. */
static void cols_range(void *data, int64_t begin, int64_t end)
{
    const job_t *j = data;
    size_t es = j->t == MICA_FLOAT16 ? 2 : 4;
    float m[COLS], s[COLS], v[COLS];
    int64_t it, r, c;

    for (it = begin; it < end; it++) {
        int64_t o = it / j->blocks, c0 = (it % j->blocks) * COLS;
        int64_t n = j->inner - c0 < COLS ? j->inner - c0 : COLS;
        size_t base = (size_t)(o * j->len * j->inner + c0);
        for (c = 0; c < n; c++) {
            m[c] = -INFINITY;
            s[c] = 0.0f;
        }
        for (r = 0; r < j->len; r++) {
            mica__vec_to_f32(v, j->t, j->x + (base + (size_t)(r * j->inner))
                                             * es, n);
            for (c = 0; c + MICA__VL <= n; c += MICA__VL)
                mica__v_store(m + c, mica__v_max(mica__v_load(m + c),
                                                 mica__v_load(v + c)));
            for (; c < n; c++)
                m[c] = fmaxf(m[c], v[c]);
        }
        for (r = 0; r < j->len; r++) {
            mica__vec_to_f32(v, j->t, j->x + (base + (size_t)(r * j->inner))
                                             * es, n);
            for (c = 0; c < n; c += MICA__VL) {
                /* (the padded tail lanes compute garbage, unused) */
                mica__vf e = mica__v_exp(mica__v_load(v + c) -
                                         mica__v_load(m + c));
                mica__v_store(s + c, mica__v_load(s + c) + e);
                mica__v_store(v + c, e);
            }
            mica__vec_from_f32(j->y + (base + (size_t)(r * j->inner)) * es,
                               j->t, v, n);
        }
        for (r = 0; r < j->len; r++) {
            char *p = j->y + (base + (size_t)(r * j->inner)) * es;
            mica__vec_to_f32(v, j->t, p, n);
            for (c = 0; c < n; c += MICA__VL)
                mica__v_store(v + c, mica__v_load(v + c) /
                                         mica__v_load(s + c));
            mica__vec_from_f32(p, j->t, v, n);
        }
    }
}

int mica__softmax_vec(mica_dtype_t t, int64_t outer, int64_t len,
                      int64_t inner, const void *x, void *y)
{
    job_t j;
    if ((t != MICA_FLOAT32 && t != MICA_FLOAT16) ||
        (inner == 1 && t == MICA_FLOAT16 && len > MICA__VEC_BLOCK))
        return 0;
    j.t = t;
    j.x = x;
    j.y = y;
    j.len = len;
    j.inner = inner;
    if (inner == 1) {
        mica__cpu_for(outer, MICA__CPU_GRAIN / (len + 1) + 1, rows_range,
                      &j);
    } else {
        j.blocks = (inner + COLS - 1) / COLS;
        mica__cpu_for(outer * j.blocks,
                      MICA__CPU_GRAIN / (len * COLS) + 1, cols_range, &j);
    }
    return 1;
}
