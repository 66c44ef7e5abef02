/*
 * modules/resize/resize_vec.c - Resize's fast path on the CPU
 * (implementation "vec"): the coordinate arithmetic of resize.h done once
 * per output coordinate of each dimension (tables), not once per output
 * element; the output walked in its memory order, so that the input and
 * the output may be linear or channels last (each its own: offsets come
 * from mica_kit_strides); on several threads for large outputs.  nearest
 * copies elements of any size; linear sums the same corners in the same
 * order with the same weights as the reference, so its results are the
 * reference's bits.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"
#include "resize.h"
#include "kit_cpu.h"

typedef struct job {
    const mica__resize_t *run;
    int32_t r, order[MICA_MAX_DIMS];   /* output dims in memory order */
    int64_t sin[MICA_MAX_DIMS], sout[MICA_MAX_DIMS];
    int64_t *i0[MICA_MAX_DIMS], *i1[MICA_MAX_DIMS]; /* per output coord */
    float *w0[MICA_MAX_DIMS], *w1[MICA_MAX_DIMS];
    mica_dtype_t dtype;
    size_t es;
    const char *x;
    char *y;
} job_t;

static float ld(mica_dtype_t t, const char *p, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)(const void *)p)[i]);
    return ((const float *)(const void *)p)[i];
}

/* nearest along the innermost dimension (in memory order) of one output
 * row: n elements from input row `src` (t: the table, or NULL where the
 * dimension is not resized) into `dst`. */
static void nearest_row(const job_t *j, int32_t k, int64_t c0, int64_t n,
                        int64_t src, int64_t dst)
{
    const int64_t *t = j->i0[k], si = j->sin[k], so = j->sout[k];
    int64_t c;

    if (j->es == 4) {
        const uint32_t *x = (const uint32_t *)(const void *)j->x + src;
        uint32_t *y = (uint32_t *)(void *)j->y + dst;
        for (c = 0; c < n; c++)
            y[c * so] = x[(t ? t[c0 + c] : c0 + c) * si];
    } else if (j->es == 2) {
        const uint16_t *x = (const uint16_t *)(const void *)j->x + src;
        uint16_t *y = (uint16_t *)(void *)j->y + dst;
        for (c = 0; c < n; c++)
            y[c * so] = x[(t ? t[c0 + c] : c0 + c) * si];
    } else {
        for (c = 0; c < n; c++)
            memcpy(j->y + (size_t)(dst + c * so) * j->es,
                   j->x + (size_t)(src + (t ? t[c0 + c] : c0 + c) * si) *
                              j->es,
                   j->es);
    }
}

/* Output elements [begin, end) in the output's memory order: row by row
 * along the innermost dimension, the input offset of the other
 * dimensions computed once per row. */
static void range(void *data, int64_t begin, int64_t end)
{
    const job_t *j = data;
    const mica__resize_t *run = j->run;
    int32_t r = j->r, t, k, kin = j->order[r - 1];
    int64_t c[MICA_MAX_DIMS], rest = begin, pos = begin;

    /* the coordinates of `begin`: once */
    for (t = r - 1; t >= 0; t--) {
        k = j->order[t];
        c[k] = rest % run->out[k];
        rest /= run->out[k];
    }
    while (pos < end) {
        int64_t n = run->out[kin] - c[kin], dst = 0, src = 0, q;
        if (n > end - pos)
            n = end - pos;
        for (k = 0; k < r; k++) {
            dst += c[k] * j->sout[k];
            if (k != kin)
                src += j->sin[k] * (j->i0[k] ? j->i0[k][c[k]] : c[k]);
        }
        if (run->mode == MICA__RZ_NEAREST) {
            nearest_row(j, kin, c[kin], n, src, dst);
        } else {
            for (q = 0; q < n; q++) {
                /* the reference's corners, innermost dimension first */
                int32_t lin[MICA_MAX_DIMS], m = 0, corner;
                int64_t base = 0;
                float y = 0.0f;
                c[kin] += q ? 1 : 0;
                for (k = r - 1; k >= 0; k--) {
                    if (!j->i0[k]) {
                        base += j->sin[k] * c[k];
                        continue;
                    }
                    lin[m++] = k;
                }
                for (corner = 0; corner < (1 << m); corner++) {
                    int64_t off = base;
                    float w = 1.0f;
                    int32_t b;
                    for (b = 0; b < m; b++) {
                        int hi = (corner >> b) & 1;
                        k = lin[b];
                        off += j->sin[k] *
                               (hi ? j->i1[k][c[k]] : j->i0[k][c[k]]);
                        w *= hi ? j->w1[k][c[k]] : j->w0[k][c[k]];
                    }
                    y += w * ld(j->dtype, j->x, off);
                }
                if (j->dtype == MICA_FLOAT16)
                    ((uint16_t *)(void *)j->y)[dst + q * j->sout[kin]] =
                        mica_kit_float_to_half(y);
                else
                    ((float *)(void *)j->y)[dst + q * j->sout[kin]] = y;
            }
            c[kin] -= n - 1;
        }
        pos += n;
        /* the next row: the innermost coordinate wraps to 0 */
        c[kin] += n;
        for (t = r - 1; t >= 0; t--) {
            k = j->order[t];
            if (c[k] < run->out[k])
                break;
            c[k] = 0;
            if (t > 0)
                c[j->order[t - 1]]++;
        }
    }
}

mica_status_t mica__resize_vec(const mica__resize_t *run,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out, const void *x,
                               void *y, mica_error_t *err)
{
    int32_t r = run->rank, k, m = 0;
    int64_t total = 0, n = mica_dims_volume(&out->dims), *ints = NULL;
    float *floats = NULL;
    size_t used = 0;
    job_t j;

    memset(&j, 0, sizeof j);
    j.run = run;
    j.r = r;
    j.dtype = in->dtype;
    j.es = mica_dtype_size(in->dtype);
    j.x = x;
    j.y = y;
    if (!mica_kit_strides(in, j.sin) || !mica_kit_strides(out, j.sout))
        return MICA_KIT_FAIL(err, "Resize takes linear and channels-last "
                             "tensors, got formats %d and %d",
                             (int)in->format, (int)out->format);
    if (n == 0)
        return MICA_OK;
    /* the output's dims by decreasing stride */
    for (k = 0; k < r; k++) {
        int32_t t;
        for (t = m; t > 0 && j.sout[j.order[t - 1]] < j.sout[k]; t--)
            j.order[t] = j.order[t - 1];
        j.order[t] = k;
        m++;
    }
    for (k = 0; k < r; k++)
        if (run->resized[k])
            total += run->out[k];
    if (total > 0 &&
        ((uint64_t)total > SIZE_MAX / (2 * sizeof *ints) ||
         !(ints = malloc((size_t)total * 2 * sizeof *ints)) ||
         !(floats = malloc((size_t)total * 2 * sizeof *floats)))) {
        free(ints);
        return MICA_KIT_FAIL(err, "out of host memory for Resize's tables");
    }
    for (k = 0; k < r; k++) {
        int64_t o;
        if (!run->resized[k])
            continue;
        j.i0[k] = ints + used;
        j.i1[k] = j.i0[k] + run->out[k];
        j.w0[k] = floats + used;
        j.w1[k] = j.w0[k] + run->out[k];
        used += 2 * (size_t)run->out[k];
        for (o = 0; o < run->out[k]; o++) {
            float cc = mica__resize_coord(run, k, o);
            if (run->mode == MICA__RZ_NEAREST)
                j.i0[k][o] = mica__resize_nearest(run, k, cc);
            else
                mica__resize_taps(run, k, cc, &j.i0[k][o], &j.i1[k][o],
                                  &j.w0[k][o], &j.w1[k][o]);
        }
    }
    mica__cpu_for(n, MICA__CPU_GRAIN / 4, range, &j);
    free(ints);
    free(floats);
    return MICA_OK;
}
