/*
 * tests/test_mod_nonzero.c - the NonZero layer: the coordinates of the
 * non-zero elements ([rank, count] int32, row-major order) and their
 * count, for every input type, ranks 0 to 4, an empty input, none and
 * all non-zero, -0 and NaN, runtime dimensions (the data-dependent count
 * at its bound of the profile's max), and more elements than one CUDA
 * chunk.  Each case runs on the CPU against values worked out here and
 * on CUDA against the CPU (skipped without a GPU).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define I32 MICA_INT32

/* The expected outputs for x: its coordinates where non-zero, and how
 * many. */
static void expect(const th_tensor_t *x, th_tensor_t want[2])
{
    int64_t n = th_volume(x), i, count = 0, k = 0, dims[2];
    int32_t r = x->dims.nb_dims, j;

    for (i = 0; i < n; i++)
        count += th_get(x, i) != 0 || isnan(th_get(x, i));
    dims[0] = r;
    dims[1] = count;
    want[0] = th_tensor(I32, 2, dims, NULL);
    want[1] = th_tensor(I32, 0, dims, NULL);
    th_set(&want[1], 0, (double)count);
    for (i = 0; i < n; i++) {
        int64_t rest = i;
        if (!(th_get(x, i) != 0 || isnan(th_get(x, i))))
            continue;
        for (j = r - 1; j >= 0; j--) {
            th_set(&want[0], j * count + k, (double)(rest % x->dims.d[j]));
            rest /= x->dims.d[j];
        }
        k++;
    }
}

/* One case: x's outputs, and the same with runtime dimensions. */
static void check(const char *label, th_tensor_t x)
{
    th_tensor_t want[2];
    char rt[200];

    expect(&x, want);
    th_check(label, "NonZero", NULL, 1, &x, 2, want, 0);
    if (x.dims.nb_dims > 0) {
        snprintf(rt, sizeof rt, "%s, runtime dimensions", label);
        x = th_runtime(x, TH_ALL_DIMS);
        th_check(rt, "NonZero", NULL, 1, &x, 2, want, 0);
    }
    th_free(&x);
    th_free(&want[0]);
    th_free(&want[1]);
}

static void types(void)
{
    static const double v[6] = {0, 1.5, 0, -2, 0, 7};
    static const mica_dtype_t t[] = {
        MICA_FLOAT32, MICA_FLOAT16, MICA_BFLOAT16, MICA_INT8, MICA_UINT8,
        MICA_INT32, MICA_INT64, MICA_BOOL};
    char label[64];
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        double b[6];
        int k;
        for (k = 0; k < 6; k++) /* bool and uint8 take 0 and 1 */
            b[k] = t[i] == MICA_BOOL || t[i] == MICA_UINT8 ? v[k] != 0 : v[k];
        snprintf(label, sizeof label, "%s [2, 3]", mica_dtype_name(t[i]));
        check(label, th_t(t[i], b, 2, 2, 3));
    }
}

static void shapes(void)
{
    static const double one[1] = {3}, zero[1] = {0};
    static const double all[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const double none[4] = {0, 0, 0, 0};
    static const double signs[4] = {-0.0, 0.0, NAN, -1};
    double *big = malloc(sizeof *big * 3000);
    int i;

    check("a 0-D non-zero", th_t(MICA_FLOAT32, one, 0));
    check("a 0-D zero", th_t(MICA_FLOAT32, zero, 0));
    check("rank 1", th_t(MICA_FLOAT32, all, 1, 8));
    check("rank 4, all non-zero", th_t(MICA_FLOAT32, all, 4, 2, 1, 2, 2));
    check("none non-zero", th_t(MICA_FLOAT32, none, 2, 2, 2));
    check("-0 and +0 are zero, NaN is not", th_t(MICA_FLOAT32, signs, 1, 4));
    check("an empty input", th_t(MICA_FLOAT32, NULL, 2, 0, 3));
    if (!big)
        bail("out of memory");
    for (i = 0; i < 3000; i++) /* three CUDA chunks, unevenly filled */
        big[i] = (i % 7 == 0 || (i > 1000 && i < 1100)) ? i : 0;
    check("3000 elements, more than a chunk", th_t(MICA_INT32, big, 2, 30,
                                                    100));
    free(big);
}

int main(void)
{
    th_context();
    plan(2 * 8 * 2 + 2 * 2 + 2 * 2 * 6);
    types();
    shapes();
    return 0;
}
