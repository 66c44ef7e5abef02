/*
 * tests/test_mod_normalization.c - the Normalization layer: every case on
 * the CPU (the reference, then the vectorized implementation) against
 * values computed here in long double by a direct reading of the
 * definition (each element's statistics gathered by its key, the
 * coordinates of the axes not normalized), then on CUDA against the CPU
 * (skipped without a GPU).
 *
 * Covered: layer normalization over the last axis and the last two,
 * scale and bias along the row or broadcast, instance normalization
 * (per-channel scale), group normalization (2 and 4 groups), axes that
 * are not trailing ({1} of a rank-3 tensor, {0, 2}), bias omitted, RMS,
 * a large mean (1e4) with a small spread, rows long enough for the CUDA
 * block path (5000) and short ones (1, 3, 33), float16 and bfloat16,
 * runtime dimensions; the errors (axes, groups, shapes, epsilon).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define BF16 MICA_BFLOAT16

typedef struct ncase {
    const char *label;
    int rank;
    int64_t d[6];
    unsigned axes;
    int groups;
    int rms;
    double eps;
    int64_t sd[6]; /* scale's dims (rank `rank`) */
    int64_t bd[6]; /* bias's; bd[0] == -1: omitted */
    double base;   /* added to every x */
} ncase_t;

static double xval(int64_t i, double base)
{
    return base + (double)((i * 7919 + 13) % 1009) / 97.0 - 5.0;
}

static double sval(int64_t i) { return 0.5 + (double)(i % 7) / 5.0; }
static double bval(int64_t i) { return (double)(i % 5) / 3.0 - 0.6; }

/* Row-major coordinates of element i of dims d (rank r). */
static void coords(int64_t i, const int64_t *d, int r, int64_t *c)
{
    int k;
    for (k = r - 1; k >= 0; k--) {
        c[k] = i % d[k];
        i /= d[k];
    }
}

/* The element of a broadcast tensor of dims bd at coordinates c. */
static int64_t bidx(const int64_t *bd, int r, const int64_t *c)
{
    int64_t o = 0;
    int k;
    for (k = 0; k < r; k++)
        o = o * bd[k] + (bd[k] == 1 ? 0 : c[k]);
    return o;
}

/* The key of the statistics of the element at c: the kept coordinates
 * (the channel's group in place of the channel). */
static int64_t key(const ncase_t *n, const int64_t *c)
{
    int64_t k = 0;
    int a;
    for (a = 0; a < n->rank; a++) {
        if ((n->axes >> a) & 1u)
            continue;
        if (a == 1 && n->groups > 1)
            k = k * n->groups + c[1] / (n->d[1] / n->groups);
        else
            k = k * n->d[a] + c[a];
    }
    return k;
}

static int64_t vol(const int64_t *d, int r)
{
    int64_t v = 1;
    int k;
    for (k = 0; k < r; k++)
        v *= d[k];
    return v;
}

static void run_case(const ncase_t *n, mica_dtype_t dt, int runtime)
{
    int64_t nx = vol(n->d, n->rank), ns = vol(n->sd, n->rank), i, c[6];
    int has_bias = n->bd[0] >= 0;
    int64_t nb = has_bias ? vol(n->bd, n->rank) : 0;
    long double *sum = calloc((size_t)nx, sizeof *sum),
                *sq = calloc((size_t)nx, sizeof *sq),
                *cnt = calloc((size_t)nx, sizeof *cnt);
    double *xv = malloc(sizeof(double) * (size_t)nx),
           *yv = malloc(sizeof(double) * (size_t)nx),
           *sv = malloc(sizeof(double) * (size_t)ns),
           *bv = malloc(sizeof(double) * (size_t)(nb + 1));
    th_tensor_t in[3], y;
    char label[200];
    double tol = dt == F32 ? 2e-5 : dt == F16 ? 4e-3 : 3e-2;
    int impl;

    for (i = 0; i < nx; i++)
        xv[i] = xval(i, n->base);
    for (i = 0; i < ns; i++)
        sv[i] = sval(i);
    for (i = 0; i < nb; i++)
        bv[i] = bval(i);
    in[0] = th_tensor(dt, n->rank, n->d, xv);
    in[1] = th_tensor(dt, n->rank, n->sd, sv);
    in[2] = has_bias ? th_tensor(dt, n->rank, n->bd, bv) : th_none();
    /* the expected values, from the inputs as the layer reads them */
    for (i = 0; i < nx; i++) {
        int64_t k;
        long double v = th_get(&in[0], i);
        coords(i, n->d, n->rank, c);
        k = key(n, c);
        sum[k] += v;
        cnt[k] += 1;
    }
    for (i = 0; i < nx; i++) {
        int64_t k;
        long double v = th_get(&in[0], i), m;
        coords(i, n->d, n->rank, c);
        k = key(n, c);
        m = n->rms ? 0 : sum[k] / cnt[k];
        sq[k] += (v - m) * (v - m);
    }
    for (i = 0; i < nx; i++) {
        int64_t k;
        long double v = th_get(&in[0], i), m, r;
        coords(i, n->d, n->rank, c);
        k = key(n, c);
        m = n->rms ? 0 : sum[k] / cnt[k];
        r = (v - m) / sqrtl(sq[k] / cnt[k] + n->eps) *
            th_get(&in[1], bidx(n->sd, n->rank, c));
        if (has_bias)
            r += th_get(&in[2], bidx(n->bd, n->rank, c));
        yv[i] = (double)r;
    }
    y = th_tensor(dt, n->rank, n->d, yv);
    if (runtime)
        in[0] = th_runtime(in[0], TH_ALL_DIMS);
    for (impl = 0; impl < 2; impl++) {
        th_fields_t *f = th_fields();
        th_f_int(f, "axes", n->axes);
        if (n->groups != 1)
            th_f_int(f, "num_groups", n->groups);
        if (n->rms)
            th_f_bool(f, "rms", 1);
        th_f_float(f, "epsilon", n->eps);
        th_pin(impl ? "vectorized" : "reference", NULL);
        snprintf(label, sizeof label, "%s, %s, %s%s", n->label,
                 mica_dtype_name(dt), impl ? "vectorized" : "reference",
                 runtime ? ", runtime dimensions" : "");
        th_check(label, "Normalization", f, has_bias ? 3 : 2, in, 1, &y,
                 tol);
    }
    th_pin(NULL, NULL);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&in[2]);
    th_free(&y);
    free(sum);
    free(sq);
    free(cnt);
    free(xv);
    free(yv);
    free(sv);
    free(bv);
}

static const ncase_t cases[] = {
    {"layer norm [2, 3, 8] over the last axis", 3, {2, 3, 8}, 4, 1, 0, 1e-5,
     {1, 1, 8}, {1, 1, 8}, 0},
    {"layer norm [2, 5, 3, 4] over the last two axes", 4, {2, 5, 3, 4}, 12,
     1, 0, 1e-3, {1, 1, 3, 4}, {1, 1, 1, 4}, 0},
    {"layer norm, scalar scale, no bias", 2, {4, 33}, 2, 1, 0, 1e-5,
     {1, 1}, {-1}, 0},
    {"layer norm, rows of 1", 2, {6, 1}, 2, 1, 0, 1e-2, {1, 1}, {1, 1}, 0},
    {"layer norm, mean 1e4", 2, {3, 64}, 2, 1, 0, 1e-5, {1, 64}, {1, 64},
     1e4},
    {"layer norm, rows of 5000 (block path)", 2, {3, 5000}, 2, 1, 0, 1e-5,
     {1, 5000}, {1, 5000}, 0},
    {"instance norm [2, 3, 4, 5]", 4, {2, 3, 4, 5}, 12, 1, 0, 1e-5,
     {1, 3, 1, 1}, {1, 3, 1, 1}, 0},
    {"group norm [2, 8, 3, 3], 4 groups", 4, {2, 8, 3, 3}, 12, 4, 0, 1e-5,
     {1, 8, 1, 1}, {1, 8, 1, 1}, 0},
    {"group norm [1, 6, 7], 2 groups", 3, {1, 6, 7}, 4, 2, 0, 1e-4,
     {1, 6, 1}, {1, 6, 1}, 0},
    {"axes {1} of [2, 3, 4]", 3, {2, 3, 4}, 2, 1, 0, 1e-5, {1, 3, 4},
     {1, 3, 1}, 0},
    {"axes {0, 2} of [3, 2, 5]", 3, {3, 2, 5}, 5, 1, 0, 1e-5, {3, 1, 5},
     {-1}, 0},
    {"rms over the last axis", 3, {2, 3, 16}, 4, 1, 1, 1e-6, {1, 1, 16},
     {-1}, 0},
    {"rms with bias over the last two axes", 3, {2, 4, 6}, 6, 1, 1, 1e-5,
     {1, 4, 6}, {1, 1, 6}, 0},
};

static void errors(void)
{
    int64_t d[3] = {2, 6, 4}, s[3] = {1, 1, 4}, s2[3] = {1, 1, 3};
    th_tensor_t in[2];
    th_fields_t *f;

    in[0] = th_tensor(F32, 3, d, NULL);
    in[1] = th_tensor(F32, 3, s, NULL);
    th_check_error("axes past the rank", "Normalization",
                   th_f_int(th_fields(), "axes", 8), 2, in, 1,
                   "names no axis or one past rank 3");
    f = th_f_int(th_fields(), "axes", 6);
    th_check_error("groups with axis 1 in axes", "Normalization",
                   th_f_int(f, "num_groups", 2), 2, in, 1,
                   "cannot be in axes");
    f = th_f_int(th_fields(), "axes", 4);
    th_check_error("groups that do not divide the channels", "Normalization",
                   th_f_int(f, "num_groups", 4), 2, in, 1,
                   "does not divide the 6 channels");
    f = th_f_int(th_fields(), "axes", 4);
    th_check_error("a negative epsilon", "Normalization",
                   th_f_float(f, "epsilon", -1), 2, in, 1,
                   "epsilon must be a finite float32");
    th_free(&in[1]);
    in[1] = th_tensor(F32, 3, s2, NULL);
    th_check_error("scale that does not broadcast", "Normalization",
                   th_f_int(th_fields(), "axes", 4), 2, in, 1,
                   "does not broadcast");
    th_free(&in[1]);
    in[1] = th_tensor(F32, 2, s, NULL);
    th_check_error("scale of another rank", "Normalization",
                   th_f_int(th_fields(), "axes", 4), 2, in, 1,
                   "has rank 2 but x has rank 3");
    th_free(&in[0]);
    th_free(&in[1]);
}

int main(void)
{
    size_t c;

    plan_lazy();
    th_context();
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        run_case(&cases[c], F32, 0);
        if (cases[c].base == 0) {
            run_case(&cases[c], F16, 0);
            run_case(&cases[c], BF16, 0);
        }
    }
    run_case(&cases[0], F32, 1);
    run_case(&cases[7], F32, 1);
    errors();
    return exit_status();
}
