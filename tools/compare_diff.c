/*
 * tools/compare_diff.c - the errors between two tensors for `mica
 * compare` (compare.h): absolute and relative error per element, their
 * max, mean, median and 99th percentile, and the elements beyond both
 * tolerances, as Polygraphy's elementwise check counts them.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"

static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static double bfloat_value(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Element k of data as a double; 0 with *ok 0 for an unknown dtype. */
static double value(mica_dtype_t dtype, const void *data, int64_t k, int *ok)
{
    switch (dtype) {
    case MICA_FLOAT32: return ((const float *)data)[k];
    case MICA_FLOAT16: return half_value(((const uint16_t *)data)[k]);
    case MICA_BFLOAT16: return bfloat_value(((const uint16_t *)data)[k]);
    case MICA_INT8: return ((const int8_t *)data)[k];
    case MICA_UINT8: case MICA_BOOL: return ((const uint8_t *)data)[k];
    case MICA_INT32: return ((const int32_t *)data)[k];
    case MICA_INT64: return (double)((const int64_t *)data)[k];
    default: *ok = 0; return 0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and 99th percentile (nearest rank) of v, sorted in place. */
static void order_stats(double *v, int64_t n, double *median, double *p99)
{
    int64_t k;
    if (n <= 0) {
        *median = *p99 = 0;
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    k = (int64_t)ceil(0.99 * (double)n) - 1;
    *p99 = v[k < 0 ? 0 : k];
}

int diff_tensors(const mica_tensor_desc_t *da, const void *a,
                 const mica_tensor_desc_t *db, const void *b, double atol,
                 double rtol, diff_t *d)
{
    int64_t n = mica_dims_volume(&da->dims), k;
    double *abs_v = NULL, *rel_v = NULL, abs_sum = 0, rel_sum = 0;
    int ok = 1;

    memset(d, 0, sizeof *d);
    d->worst = -1;
    if (da->dims.nb_dims != db->dims.nb_dims ||
        memcmp(da->dims.d, db->dims.d,
               (size_t)da->dims.nb_dims * sizeof da->dims.d[0]) != 0) {
        d->mismatch = "the shapes differ";
        return CLI_OK;
    }
    abs_v = malloc((size_t)(n > 0 ? n : 1) * sizeof *abs_v);
    rel_v = malloc((size_t)(n > 0 ? n : 1) * sizeof *rel_v);
    if (!abs_v || !rel_v) {
        free(abs_v);
        free(rel_v);
        return cli_error("out of memory comparing %lld elements",
                         (long long)n);
    }
    for (k = 0; k < n; k++) {
        double x = value(da->dtype, a, k, &ok), y = value(db->dtype, b, k, &ok);
        double e, r;
        if (isnan(x) || isnan(y))
            e = isnan(x) && isnan(y) ? 0 : INFINITY;
        else if (isinf(x) || isinf(y))
            e = x == y ? 0 : INFINITY;
        else
            e = fabs(x - y);
        r = e == 0 ? 0 : x == 0 || isnan(x) || isinf(x) ? INFINITY
                                                        : e / fabs(x);
        if (e > atol && r > rtol)
            d->nb_fail++;
        if (d->worst < 0 || e > d->abs_max) {
            d->abs_max = e;
            d->worst = k;
            d->worst_a = x;
            d->worst_b = y;
        }
        if (r > d->rel_max)
            d->rel_max = r;
        abs_sum += e;
        rel_sum += r;
        abs_v[k] = e;
        rel_v[k] = r;
    }
    if (!ok) {
        free(abs_v);
        free(rel_v);
        return cli_error("cannot compare %s with %s values",
                         mica_dtype_name(da->dtype), mica_dtype_name(db->dtype));
    }
    d->n = n;
    d->abs_mean = n ? abs_sum / (double)n : 0;
    d->rel_mean = n ? rel_sum / (double)n : 0;
    order_stats(abs_v, n, &d->abs_median, &d->abs_p99);
    order_stats(rel_v, n, &d->rel_median, &d->rel_p99);
    free(abs_v);
    free(rel_v);
    return CLI_OK;
}

int diff_failed(const diff_t *d)
{
    return d->mismatch || d->nb_fail > 0;
}

/* "[1, 2]": flat index k of dims, into buf. */
static const char *index_str(const mica_dims_t *dims, int64_t k, char *buf,
                             size_t len)
{
    mica_dims_t at;
    int32_t i;
    at.nb_dims = dims->nb_dims;
    for (i = dims->nb_dims - 1; i >= 0; i--) {
        at.d[i] = dims->d[i] ? k % dims->d[i] : 0;
        k = dims->d[i] ? k / dims->d[i] : 0;
    }
    return cli_dims_str(&at, buf, len);
}

void diff_print(FILE *f, const char *what, const char *name,
                const mica_tensor_desc_t *da, const diff_t *d, double atol,
                double rtol)
{
    char dims[128], at[128];

    fprintf(f, "%s '%s' %s %s:\n", what, name, mica_dtype_name(da->dtype),
            cli_dims_str(&da->dims, dims, sizeof dims));
    if (d->mismatch) {
        fprintf(f, "  FAIL: %s\n", d->mismatch);
        return;
    }
    fprintf(f, "  absolute error: max = %.6g, mean = %.6g, median = %.6g, "
               "p99 = %.6g\n", d->abs_max, d->abs_mean, d->abs_median,
            d->abs_p99);
    fprintf(f, "  relative error: max = %.6g, mean = %.6g, median = %.6g, "
               "p99 = %.6g\n", d->rel_max, d->rel_mean, d->rel_median,
            d->rel_p99);
    if (!d->nb_fail) {
        fprintf(f, "  PASS: no element beyond both atol %g and rtol %g (%lld "
                   "elements)\n", atol, rtol, (long long)d->n);
        return;
    }
    fprintf(f, "  FAIL: %lld of %lld elements (%.3g%%) beyond both atol %g "
               "and rtol %g; the largest error at %s: A %.9g, B %.9g\n",
            (long long)d->nb_fail, (long long)d->n,
            100.0 * (double)d->nb_fail / (double)d->n, atol, rtol,
            index_str(&da->dims, d->worst, at, sizeof at), d->worst_a,
            d->worst_b);
}

void diff_print_short(FILE *f, const char *name, const char *layer,
                      const diff_t *d)
{
    fprintf(f, "  tensor '%s' (layer '%s'): ", name, layer);
    if (d->mismatch)
        fprintf(f, "FAIL: %s\n", d->mismatch);
    else
        fprintf(f, "max abs %.3g, max rel %.3g: %s", d->abs_max, d->rel_max,
                d->nb_fail ? "" : "ok\n");
    if (!d->mismatch && d->nb_fail)
        fprintf(f, "FAIL (%lld of %lld elements)\n", (long long)d->nb_fail,
                (long long)d->n);
}
