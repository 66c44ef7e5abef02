/*
 * modules/reduce/reduce_vec.c - Reduce's fast path on the CPU
 * (implementation "vec"): float32 and float16 tensors in any format
 * (linear or channels last, the input and the output each in its own),
 * read once in memory order.  The input's dimensions are put in its
 * memory order and merged where contiguous; each run along the innermost
 * one either folds into one output element (a reduced axis: the
 * global average pooling of NCHW, a LayerNorm-like mean over the last
 * axis) or adds into a run of them (a kept axis: the pooling of NHWC,
 * whose channels stay innermost).  The arithmetic is the reference's:
 * double accumulators rounded once, max and min as fmax and fmin (NaN
 * skipped), the same identities for empty sets.  Integer types are the
 * reference's (the caller's fallback).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"
#include "reduce.h"

static double load(const void *p, mica_dtype_t t, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static double fold(int32_t op, double acc, double x)
{
    switch (op) {
    case MICA_REDUCE_PROD: return acc * x;
    case MICA_REDUCE_MAX: return fmax(acc, x);
    case MICA_REDUCE_MIN: return fmin(acc, x);
    default: return acc + x;
    }
}

mica_status_t mica__reduce_vec(int32_t op, uint32_t mask, int keep_dims,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out, const void *x,
                               void *y, int *taken, mica_error_t *err)
{
    int64_t si[MICA_MAX_DIMS], so_out[MICA_MAX_DIMS], so[MICA_MAX_DIMS];
    int64_t d[MICA_MAX_DIMS], a[MICA_MAX_DIMS], b[MICA_MAX_DIMS];
    int64_t idx[MICA_MAX_DIMS], nout, R = 1, total, pos, oi, ob;
    int32_t r = in->dims.nb_dims, k, j, m = 0, o = 0;
    int32_t ord[MICA_MAX_DIMS];
    double *acc, init;

    *taken = 0;
    if ((in->dtype != MICA_FLOAT32 && in->dtype != MICA_FLOAT16) ||
        !mica_kit_strides(in, si) || !mica_kit_strides(out, so_out))
        return MICA_OK;
    /* each input axis's stride in the output (0 where reduced) */
    for (k = 0; k < r; k++) {
        if (mask & (1u << k)) {
            so[k] = 0;
            R *= in->dims.d[k];
            o += keep_dims;
        } else {
            so[k] = so_out[o++];
        }
    }
    nout = mica_dims_volume(&out->dims);
    total = mica_dims_volume(&in->dims);
    init = op == MICA_REDUCE_PROD ? 1.0 : op == MICA_REDUCE_MAX ? -INFINITY
           : op == MICA_REDUCE_MIN ? INFINITY : 0.0;
    if (nout < 0 || (uint64_t)nout > SIZE_MAX / sizeof *acc ||
        !(acc = malloc((size_t)(nout ? nout : 1) * sizeof *acc)))
        return MICA_KIT_FAIL(err, "out of host memory for %lld "
                             "accumulators", (long long)nout);
    for (oi = 0; oi < nout; oi++)
        acc[oi] = init;
    /* the input's axes by decreasing stride, length-1 ones dropped,
     * neighbours merged where both strides allow */
    for (k = 0; k < r; k++) {
        int32_t at;
        if (in->dims.d[k] == 1)
            continue;
        for (at = m; at > 0 && si[ord[at - 1]] < si[k]; at--)
            ord[at] = ord[at - 1];
        ord[at] = k;
        m++;
    }
    for (k = j = 0; k < m; k++) {
        int32_t q = ord[k];
        if (j > 0 && si[q] * in->dims.d[q] == a[j - 1] &&
            so[q] * in->dims.d[q] == b[j - 1]) {
            d[j - 1] *= in->dims.d[q];
            a[j - 1] = si[q];
            b[j - 1] = so[q];
            continue;
        }
        d[j] = in->dims.d[q];
        a[j] = si[q];
        b[j] = so[q];
        j++;
    }
    if (j == 0) {
        d[0] = 1;
        a[0] = b[0] = 0;
        j = 1;
    }
    memset(idx, 0, sizeof idx);
    for (pos = 0, oi = 0, ob = 0; total > 0 && pos < total;
         pos += d[j - 1]) {
        int64_t n = d[j - 1], i;
        if (b[j - 1] == 0) { /* a reduced run into one accumulator */
            double s = acc[ob];
            if (in->dtype == MICA_FLOAT32 && a[j - 1] == 1 &&
                (op == MICA_REDUCE_SUM || op == MICA_REDUCE_AVG)) {
                const float *p = (const float *)x + oi;
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (i = 0; i + 4 <= n; i += 4) {
                    s0 += p[i];
                    s1 += p[i + 1];
                    s2 += p[i + 2];
                    s3 += p[i + 3];
                }
                for (; i < n; i++)
                    s0 += p[i];
                s += (s0 + s1) + (s2 + s3);
            } else {
                for (i = 0; i < n; i++)
                    s = fold(op, s, load(x, in->dtype, oi + i * a[j - 1]));
            }
            acc[ob] = s;
        } else if (in->dtype == MICA_FLOAT32 && a[j - 1] == 1 &&
                   b[j - 1] == 1 &&
                   (op == MICA_REDUCE_SUM || op == MICA_REDUCE_AVG)) {
            /* a kept contiguous run (the channels of NHWC): the same
             * additions in the same order, in a loop that vectorizes */
            const float *p = (const float *)x + oi;
            double *q = acc + ob;
            for (i = 0; i < n; i++)
                q[i] += p[i];
        } else { /* a kept run: element by element */
            for (i = 0; i < n; i++)
                acc[ob + i * b[j - 1]] =
                    fold(op, acc[ob + i * b[j - 1]],
                         load(x, in->dtype, oi + i * a[j - 1]));
        }
        /* the next run: carry through the outer axes */
        for (k = j - 2; k >= 0; k--) {
            oi += a[k];
            ob += b[k];
            if (++idx[k] < d[k])
                break;
            oi -= a[k] * d[k];
            ob -= b[k] * d[k];
            idx[k] = 0;
        }
    }
    for (oi = 0; oi < nout; oi++) {
        double v = acc[oi];
        if (op == MICA_REDUCE_AVG)
            v = R ? v / (double)R : NAN;
        if (out->dtype == MICA_FLOAT16)
            ((uint16_t *)y)[oi] = mica_kit_float_to_half((float)v);
        else
            ((float *)y)[oi] = (float)v;
    }
    free(acc);
    *taken = 1;
    return MICA_OK;
}
