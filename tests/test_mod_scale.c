/*
 * tests/test_mod_scale.c - the Scale module: TensorRT's example by hand;
 * modes uniform, channel (several axes) and elementwise with every subset
 * of shift, scale and power against values computed here in double;
 * float16 inputs and weights, runtime dimensions, empty tensors and the
 * errors.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

enum { SHIFT = 1, SCALE = 2, POWER = 4 };

/* Coefficient j (0 shift, 1 scale, 2 power) number c, as the test sets
 * them: powers stay in {1, 2, 0.5, 3} on positive bases. */
static double coef(int j, int64_t c)
{
    if (j == 0)
        return 0.5 * (double)(c % 5) - 1.0;
    if (j == 1)
        return 0.25 * (double)(c % 7) + 0.5;
    return (double[]){1, 2, 0.5, 3}[c % 4];
}

/*
 * Scale of x (dims d, rank n) in `mode` with axis `ax`, the weights in
 * `which` given with k values each, in wtype.
 */
static void check(const char *what, mica_dtype_t type, int n,
                  const int64_t *d, const char *mode, int ax, int which,
                  mica_dtype_t wtype, unsigned runtime)
{
    static const char *const names[3] = {"shift", "scale", "power"};
    th_tensor_t x = th_tensor(type, n, d, NULL), y, w[3];
    th_fields_t *f = th_f_str(th_fields(), "mode", mode);
    int64_t k = 1, inner = 1, i, total = th_volume(&x);
    char label[200];
    int j, a;

    for (a = ax; a < n && strcmp(mode, "uniform"); a++) {
        if (a == ax || !strcmp(mode, "elementwise"))
            k *= d[a];
        else
            inner *= d[a];
    }
    if (ax != 1)
        th_f_int(f, "channel_axis", ax);
    for (j = 0; j < 3; j++) {
        w[j] = th_t(wtype, NULL, 1, (int)k);
        for (i = 0; i < k; i++)
            th_set(&w[j], i, coef(j, i));
        if (which & (1 << j))
            th_f_weights(f, names[j], &w[j]);
    }
    y = th_tensor(type, n, d, NULL);
    for (i = 0; i < total; i++) {
        int64_t c = (i / inner) % k;
        double v = (double)(i % 11) * 0.375 + 0.25, r;
        th_set(&x, i, v);
        v = th_get(&x, i);
        r = v * (which & SCALE ? th_get(&w[1], c) : 1) +
            (which & SHIFT ? th_get(&w[0], c) : 0);
        if (which & POWER)
            r = pow(r, th_get(&w[2], c));
        th_set(&y, i, r);
    }
    if (runtime)
        x = th_runtime(x, runtime);
    snprintf(label, sizeof label, "%s: %s, axis %d, weights %d, %s/%s", what,
             mode, ax, which, mica_dtype_name(type), mica_dtype_name(wtype));
    th_check(label, "Scale", f, 1, &x, 1, &y, type == F16 ? 2e-3 : 1e-5);
    th_free(&x);
    th_free(&y);
    for (j = 0; j < 3; j++)
        th_free(&w[j]);
}

static void fail(const char *what, int n, const int64_t *d, const char *mode,
                 int ax, int64_t ks, int64_t kc, mica_dtype_t xt,
                 mica_dtype_t wt, unsigned runtime, const char *needle)
{
    th_tensor_t x = th_tensor(xt, n, d, NULL);
    th_tensor_t s = th_t(wt, NULL, 1, (int)ks), sh = th_t(wt, NULL, 1,
                                                           (int)kc);
    th_fields_t *f = th_f_str(th_fields(), "mode", mode);

    th_f_int(f, "channel_axis", ax);
    th_f_weights(f, "scale", &s);
    th_f_weights(f, "shift", &sh);
    if (runtime)
        x = th_runtime(x, runtime);
    th_check_error(what, "Scale", f, 1, &x, 1, needle);
    th_free(&x);
    th_free(&s);
    th_free(&sh);
}

int main(void)
{
    static const int64_t d4[] = {2, 3, 4, 5}, d2[] = {3, 4}, d1[] = {6},
                         d0[1] = {0}, e4[] = {0, 3, 2, 2}, d5[] = {2, 3, 1,
                                                                   2, 7};
    static const char *const modes[] = {"uniform", "channel", "elementwise"};
    int m, which, ax;

    plan_lazy();
    th_context();

    /* TensorRT's example: uniform scale 2, shift 1, power 2. */
    {
        static const double xv[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        static const double yv[] = {9, 25, 49, 81, 121, 169, 225, 289, 361};
        static const double two[] = {2}, one[] = {1};
        th_tensor_t x = th_t(F32, xv, 4, 1, 1, 3, 3);
        th_tensor_t y = th_t(F32, yv, 4, 1, 1, 3, 3);
        th_tensor_t s = th_t(F32, two, 1, 1), t = th_t(F32, one, 1, 1);
        th_check("TensorRT's example", "Scale",
                 th_f_weights(th_f_weights(th_f_weights(
                                               th_f_str(th_fields(), "mode",
                                                        "uniform"),
                                               "scale", &s),
                                           "shift", &t),
                              "power", &s),
                 1, &x, 1, &y, 1e-6);
        th_free(&x);
        th_free(&y);
        th_free(&s);
        th_free(&t);
    }
    for (m = 0; m < 3; m++)
        for (which = 0; which < 8; which++)
            check("rank 4", F32, 4, d4, modes[m], 1, which, F32, 0);
    for (m = 1; m < 3; m++)
        for (ax = 0; ax < 4; ax++)
            check("every axis", F32, 4, d4, modes[m], ax, 7, F32, 0);
    for (m = 0; m < 3; m++) {
        check("float16", F16, 4, d4, modes[m], 1, 7, F32, 0);
        check("float16 weights", F32, 4, d4, modes[m], 1, 3, F16, 0);
        check("float16 both", F16, 5, d5, modes[m], 2, 7, F16, 0);
        check("rank 2", F32, 2, d2, modes[m], 1, 3, F32, 0);
        check("rank 1", F32, 1, d1, modes[m], 0, 7, F32, 0);
        check("empty", F32, 4, e4, modes[m], 1, 7, F32, 0);
        check("runtime dims", F32, 4, d4, modes[m], 1, 7, F32, 15u);
    }
    check("empty rank 1", F32, 1, d0, "uniform", 0, 3, F32, 0);
    /* a scalar: uniform takes any rank */
    {
        static const double xv[] = {3}, yv[] = {7}, two[] = {2}, one[] = {1};
        th_tensor_t x = th_tensor(F32, 0, NULL, xv), y = th_tensor(F32, 0,
                                                                   NULL, yv);
        th_tensor_t s = th_t(F32, two, 1, 1), t = th_t(F32, one, 1, 1);
        th_check("uniform scalar", "Scale",
                 th_f_weights(th_f_weights(th_f_str(th_fields(), "mode",
                                                    "uniform"),
                                           "scale", &s),
                              "shift", &t),
                 1, &x, 1, &y, 1e-6);
        th_free(&x);
        th_free(&y);
        th_free(&s);
        th_free(&t);
    }

    /* Errors. */
    {
        /* an empty tensor whose other dimensions multiply past 64 bits:
         * the core refuses it before Scale multiplies them (Scale's
         * products are checked too, for the modules' other hosts) */
        static const int64_t huge[] = {0, (int64_t)1 << 40,
                                       (int64_t)1 << 40};
        fail("elementwise over [0, 2^40, 2^40]", 3, huge, "elementwise", 1,
             4, 4, F32, F32, 0, "[0, 1099511627776, 1099511627776]: its "
             "non-zero dimensions multiply past 2^63");
        fail("channel over [0, 2^40, 2^40]", 3, huge, "channel", 0, 4, 4,
             F32, F32, 0, "[0, 1099511627776, 1099511627776]: its non-zero "
             "dimensions multiply past 2^63");
    }
    fail("channel axis beyond the rank", 2, d2, "channel", 2, 4, 4, F32, F32,
         0, "channel_axis 2 is out of range for input 0 of rank 2");
    fail("negative channel axis", 2, d2, "channel", -1, 4, 4, F32, F32, 0,
         "'channel_axis' is -1: it must lie in [0, 7]");
    fail("channel count", 4, d4, "channel", 1, 4, 4, F32, F32, 0,
         "mode 'channel' with channel_axis 1 needs 3 coefficients "
         "(dimension 1 of input 0) but the weights have 4");
    fail("elementwise count", 4, d4, "elementwise", 2, 5, 5, F32, F32, 0,
         "mode 'elementwise' with channel_axis 2 needs 20 coefficients "
         "(dimensions 2 to 3 of input 0) but the weights have 5");
    fail("uniform count", 4, d4, "uniform", 1, 3, 3, F32, F32, 0,
         "'shift' has 3 values but mode 'uniform' takes 1");
    fail("counts differ", 4, d4, "channel", 1, 3, 4, F32, F32, 0,
         "'scale' has 3 values but 'shift' has 4");
    fail("int32 weights", 4, d4, "channel", 1, 3, 3, F32, MICA_INT32, 0,
         "'shift' must be float32 or float16 weights, got int32");
    fail("int32 input", 4, d4, "channel", 1, 3, 3, MICA_INT32, F32, 0,
         "Scale takes float32 or float16 input, got int32");
    fail("runtime channel count", 4, d4, "channel", 1, 4, 4, F32, F32, 2u,
         "mode 'channel' with channel_axis 1 needs 3 coefficients");
    return exit_status();
}
