/*
 * tests/test_mod_prelu.c - the ParametricReLU module: slopes per channel,
 * per element and scalar, x broadcast against the slope and both ways,
 * float16, NaN, runtime dimensions, empty tensors and the errors, against
 * values computed here in double from each output coordinate.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

/* Element of t at output coordinate c (t's length-1 dims broadcast). */
static double at(const th_tensor_t *t, const int64_t *c)
{
    int64_t off = 0;
    int k;
    for (k = 0; k < t->dims.nb_dims; k++)
        off = off * t->dims.d[k] + (t->dims.d[k] == 1 ? 0 : c[k]);
    return th_get(t, off);
}

static void check(const char *what, mica_dtype_t type, int n,
                  const int64_t *dx, const int64_t *ds, unsigned runtime)
{
    th_tensor_t in[2], y;
    int64_t od[MICA_MAX_DIMS], c[MICA_MAX_DIMS], i, m;
    char label[160];
    int k;

    in[0] = th_tensor(type, n, dx, NULL);
    in[1] = th_tensor(type, n, ds, NULL);
    for (i = 0; i < th_volume(&in[0]); i++)
        th_set(&in[0], i, (double)((i * 7) % 23) - 11.5);
    for (i = 0; i < th_volume(&in[1]); i++)
        th_set(&in[1], i, 0.25 * (double)(i % 9) - 0.75);
    for (k = 0; k < n; k++)
        od[k] = dx[k] == 1 ? ds[k] : dx[k];
    y = th_tensor(type, n, od, NULL);
    m = th_volume(&y);
    for (i = 0; i < m; i++) {
        int64_t r = i;
        double x, s;
        for (k = n - 1; k >= 0; k--) {
            c[k] = r % od[k];
            r /= od[k];
        }
        x = at(&in[0], c);
        s = at(&in[1], c);
        th_set(&y, i, x >= 0 ? x : s * x);
    }
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    snprintf(label, sizeof label, "%s, %s", what, mica_dtype_name(type));
    th_check(label, "ParametricReLU", NULL, 2, in, 1, &y,
             type == F16 ? 1e-3 : 1e-6);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&y);
}

int main(void)
{
    static const int64_t x4[] = {2, 3, 4, 5}, c4[] = {1, 3, 1, 1},
                         one4[] = {1, 1, 1, 1}, x2[] = {2, 1, 4, 1},
                         s2[] = {1, 3, 1, 5}, w4[] = {1, 1, 1, 5},
                         big[] = {3, 37, 1111}, bigs[] = {1, 37, 1},
                         e0[] = {0, 3, 4}, es[] = {1, 3, 1};
    int t;

    plan_lazy();
    th_context();

    for (t = 0; t < 2; t++) {
        mica_dtype_t type = t ? F16 : F32;
        check("slope per channel", type, 4, x4, c4, 0);
        check("slope per element", type, 4, x4, x4, 0);
        check("one slope", type, 4, x4, one4, 0);
        check("slope along the last axis", type, 4, x4, w4, 0);
        check("x broadcast against the slope", type, 4, c4, x4, 0);
        check("both ways", type, 4, x2, s2, 0);
        check("long rows", type, 3, big, bigs, 0);
        check("empty", type, 3, e0, es, 0);
    }
    check("runtime dims", F32, 4, x4, c4, 13u);
    check("runtime dims, both ways", F32, 4, x2, s2, 5u);
    {
        static const double xv[] = {NAN, -INFINITY, INFINITY, -0.0, -2};
        static const double sv[] = {0.5};
        static const double yv[] = {NAN, -INFINITY, INFINITY, 0.0, -1};
        th_tensor_t in[2], y;
        in[0] = th_t(F32, xv, 1, 5);
        in[1] = th_t(F32, sv, 1, 1);
        y = th_t(F32, yv, 1, 5);
        th_check("NaN, infinities, -0", "ParametricReLU", NULL, 2, in, 1, &y,
                 0);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&y);
    }
    {
        th_tensor_t in[2];
        in[0] = th_t(F32, NULL, 2, 2, 3);
        in[1] = th_t(F32, NULL, 1, 3);
        th_check_error("ranks differ", "ParametricReLU", NULL, 2, in, 1,
                       "input 1 has rank 1 but input 0 has rank 2");
        th_free(&in[1]);
        in[1] = th_t(F32, NULL, 2, 2, 4);
        th_check_error("lengths differ", "ParametricReLU", NULL, 2, in, 1,
                       "dimension 1 of input 0 is 3 and of input 1 is 4: they "
                       "must be equal or one of them 1");
        th_free(&in[1]);
        in[1] = th_t(F16, NULL, 2, 1, 3);
        th_check_error("types differ", "ParametricReLU", NULL, 2, in, 1,
                       "input 1 (slope) has type float16 but input 0 (x) has "
                       "type float32");
        th_free(&in[0]);
        th_free(&in[1]);
        in[0] = th_t(MICA_INT32, NULL, 2, 2, 3);
        in[1] = th_t(MICA_INT32, NULL, 2, 1, 3);
        th_check_error("int32", "ParametricReLU", NULL, 2, in, 1,
                       "input 0 (x) must be float32 or float16, got int32");
        th_free(&in[0]);
        th_free(&in[1]);
        /* a runtime length that turns out not to broadcast */
        in[0] = th_runtime(th_t(F32, NULL, 2, 2, 4), 1u);
        in[1] = th_t(F32, NULL, 2, 3, 4);
        th_check_error("runtime lengths differ", "ParametricReLU", NULL, 2,
                       in, 1,
                       "dimension 0 of input 1 is 3, which does not "
                       "broadcast to 2");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    return exit_status();
}
