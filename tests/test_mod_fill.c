/*
 * tests/test_mod_fill.c - the Fill layer: linspace on float32, float16
 * and int32 (TensorRT's examples), random_uniform on float32 and float16
 * (values from the documented hash, range [alpha, beta)), alpha and beta
 * as params and as inputs, the dimensions as a param and as a shape-tensor
 * input, empty outputs, and the validation errors.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"

/* linspace by coordinates: alpha + sum_k beta[k] * i_k. */
static th_tensor_t linspace_ref(mica_dtype_t t, int rank, const int64_t *dims,
                                double alpha, const double *beta)
{
    th_tensor_t e = th_tensor(t, rank, dims, NULL);
    int64_t i, n = th_volume(&e);
    for (i = 0; i < n; i++) {
        int64_t rem = i;
        double v = alpha;
        int k;
        for (k = rank - 1; k >= 0; k--) {
            v += beta[k] * (double)(rem % dims[k]);
            rem /= dims[k];
        }
        th_set(&e, i, v);
    }
    return e;
}

/* The documented generator: splitmix64 of seed + i * golden ratio. */
static double unit_ref(int64_t i)
{
    uint64_t x = 0x6d6963612d66696cull + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0;
}

static th_tensor_t uniform_ref(mica_dtype_t t, int rank, const int64_t *dims,
                               double lo, double hi)
{
    th_tensor_t e = th_tensor(t, rank, dims, NULL);
    int64_t i, n = th_volume(&e);
    for (i = 0; i < n; i++)
        th_set(&e, i, lo + (hi - lo) * unit_ref(i));
    return e;
}

static th_fields_t *op_f(const char *op, const char *dtype)
{
    th_fields_t *f = th_f_str(th_fields(), "op", op);
    return dtype ? th_f_str(f, "dtype", dtype) : f;
}

/* Every element of the output in [lo, hi), and not all equal. */
static void check_range(const char *label, th_fields_t *f, int nb_in,
                        const th_tensor_t *in, double lo, double hi)
{
    th_tensor_t out;
    int64_t i, n;
    int good;

    if (th_run(MICA_DEVICE_CPU, "Fill", f, nb_in, in, 1, &out) != MICA_OK) {
        ok(0, "%s", label);
        diag("%s", th_error());
        th_fields_free(f);
        return;
    }
    n = th_volume(&out);
    good = 0;
    for (i = 1; i < n; i++)
        good |= th_get(&out, i) != th_get(&out, 0);
    if (!good)
        diag("all %lld values are equal", (long long)n);
    for (i = 0; i < n && good; i++) {
        double v = th_get(&out, i);
        if (!(v >= lo && v < hi)) {
            diag("element %lld is %.9g, outside [%g, %g)", (long long)i, v,
                 lo, hi);
            good = 0;
        }
    }
    ok(good, "%s", label);
    th_free(&out);
    th_fields_free(f);
}

static void linspace_tests(void)
{
    {
        /* TensorRT's example: [3,4], alpha 1, beta [100, 10]. */
        static const int64_t d[] = {3, 4}, b[] = {100, 10};
        static const double bd[] = {100, 10};
        th_tensor_t e = linspace_ref(MICA_INT32, 2, d, 1, bd);
        th_check("linspace int32 [3,4] alpha 1 beta [100,10]", "Fill",
                 th_f_ints(th_f_float(th_f_ints(op_f("linspace", "int32"),
                                                "shape", 2, d),
                                      "alpha", 1),
                           "beta", 2, b),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
    {
        static const int64_t d[] = {6};
        static const double bd[] = {1};
        th_tensor_t e = linspace_ref(MICA_FLOAT32, 1, d, 0, bd);
        th_check("linspace float32 [6], default alpha 0 and beta 1", "Fill",
                 th_f_ints(op_f("linspace", NULL), "shape", 1, d), 0, NULL, 1,
                 &e, 0);
        th_free(&e);
    }
    {
        /* params beyond int64 (an int64 copy of them would be undefined) */
        static const int64_t d[] = {3};
        static const double bd[] = {-3e19};
        th_tensor_t e = linspace_ref(MICA_FLOAT32, 1, d, 1e20, bd);
        th_check("linspace float32 [3] alpha 1e20 beta -3e19", "Fill",
                 th_f_float(th_f_float(th_f_ints(op_f("linspace", NULL),
                                                 "shape", 1, d),
                                       "alpha", 1e20),
                            "beta", -3e19),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
    {
        static const int64_t d[] = {5};
        static const double bd[] = {-0.25};
        th_tensor_t e = linspace_ref(MICA_FLOAT16, 1, d, 1.5, bd);
        th_check("linspace float16 [5] alpha 1.5 beta -0.25", "Fill",
                 th_f_float(th_f_float(th_f_ints(op_f("linspace", "float16"),
                                                 "shape", 1, d),
                                       "alpha", 1.5),
                            "beta", -0.25),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
    {
        /* TensorRT's example with inputs: alpha 0, beta [3, 1] on [2,3]. */
        static const int64_t d[] = {2, 3};
        static const double a[] = {0}, bd[] = {3, 1};
        th_tensor_t in[3];
        th_tensor_t e = linspace_ref(MICA_FLOAT32, 2, d, 0, bd);
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        in[2] = th_t(MICA_FLOAT32, bd, 1, 2);
        th_check("linspace float32 [2,3], alpha and beta inputs", "Fill",
                 th_f_ints(op_f("linspace", NULL), "shape", 2, d), 3, in, 1,
                 &e, 0);
        th_free(&in[1]);
        th_free(&in[2]);
        th_free(&e);
    }
    {
        static const int64_t d[] = {2, 2, 3};
        static const double a[] = {0.5}, bd[] = {-1.5, 0.25, 0.125};
        th_tensor_t in[3];
        th_tensor_t e = linspace_ref(MICA_FLOAT16, 3, d, 0.5, bd);
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT16, a, 0);
        in[2] = th_t(MICA_FLOAT32, bd, 1, 3);
        th_check("linspace float16 [2,2,3], float16 alpha, float32 beta",
                 "Fill", th_f_ints(op_f("linspace", "float16"), "shape", 3, d),
                 3, in, 1, &e, 0);
        th_free(&in[1]);
        th_free(&in[2]);
        th_free(&e);
    }
    {
        static const int64_t d[] = {4, 2};
        static const double a[] = {-7}, bd[] = {5, -3};
        th_tensor_t in[3];
        th_tensor_t e = linspace_ref(MICA_INT32, 2, d, -7, bd);
        in[0] = th_none();
        in[1] = th_t(MICA_INT32, a, 0);
        in[2] = th_t(MICA_INT32, bd, 1, 2);
        th_check("linspace int32 [4,2], int32 alpha and beta inputs", "Fill",
                 th_f_ints(op_f("linspace", "int32"), "shape", 2, d), 3, in,
                 1, &e, 0);
        th_free(&in[1]);
        th_free(&in[2]);
        th_free(&e);
    }
    {
        static const double bd[] = {1};
        th_tensor_t e = linspace_ref(MICA_FLOAT32, 0, NULL, 2.5, bd);
        th_check("linspace float32 scalar output: alpha", "Fill",
                 th_f_float(th_f_ints(op_f("linspace", NULL), "shape", 0,
                                      NULL),
                            "alpha", 2.5),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
}

static void uniform_tests(void)
{
    {
        static const int64_t d[] = {4, 250};
        th_tensor_t e = uniform_ref(MICA_FLOAT32, 2, d, 0, 1);
        th_check("random_uniform float32 [4,250] in [0,1)", "Fill",
                 th_f_ints(op_f("random_uniform", NULL), "shape", 2, d), 0,
                 NULL, 1, &e, 1e-7);
        th_free(&e);
        check_range("random_uniform float32 [4,250]: every value in [0,1)",
                    th_f_ints(op_f("random_uniform", NULL), "shape", 2, d), 0,
                    NULL, 0, 1);
    }
    {
        static const int64_t d[] = {3, 7, 11};
        th_tensor_t e = uniform_ref(MICA_FLOAT16, 3, d, -2, 6);
        th_check("random_uniform float16 [3,7,11] in [-2,6)", "Fill",
                 th_f_float(th_f_float(th_f_ints(op_f("random_uniform",
                                                      "float16"),
                                                 "shape", 3, d),
                                       "alpha", -2),
                            "beta", 6),
                 0, NULL, 1, &e, 4e-3);
        th_free(&e);
        check_range("random_uniform float16: every value in [-2,6)",
                    th_f_float(th_f_float(th_f_ints(op_f("random_uniform",
                                                         "float16"),
                                                    "shape", 3, d),
                                          "alpha", -2),
                               "beta", 6),
                    0, NULL, -2, 6);
    }
    {
        /* A narrow float16 range: most values round to an end and the
         * ones that reach beta are kept below it. */
        static const int64_t d[] = {512};
        th_tensor_t in[3];
        static const double a[] = {1000}, b[] = {1001};
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        in[2] = th_t(MICA_FLOAT32, b, 0);
        check_range("random_uniform float16 in [1000,1001): beta excluded",
                    th_f_ints(op_f("random_uniform", "float16"), "shape", 1,
                              d),
                    3, in, 1000, 1001);
        th_check("random_uniform float16 in [1000,1001): cuda as cpu",
                 "Fill", th_f_ints(op_f("random_uniform", "float16"),
                                   "shape", 1, d),
                 3, in, 1, NULL, 0);
        th_free(&in[1]);
        th_free(&in[2]);
    }
    {
        static const int64_t d[] = {100};
        static const double a[] = {-3}, b[] = {-1};
        th_tensor_t in[3];
        th_tensor_t e = uniform_ref(MICA_FLOAT32, 1, d, -3, -1);
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        in[2] = th_t(MICA_FLOAT32, b, 1, 1);
        th_check("random_uniform float32 [100], alpha and beta inputs",
                 "Fill", th_f_ints(op_f("random_uniform", NULL), "shape", 1,
                                   d),
                 3, in, 1, &e, 1e-6);
        th_free(&in[1]);
        th_free(&in[2]);
        th_free(&e);
    }
}

static void shape_input_tests(void)
{
    {
        static const double s[] = {2, 3};
        static const int64_t d[] = {2, 3}, b[] = {10, 1};
        static const double bd[] = {10, 1};
        th_tensor_t in = th_shape(th_t(MICA_INT32, s, 1, 2));
        th_tensor_t e = linspace_ref(MICA_INT32, 2, d, 4, bd);
        th_check("linspace int32, dims from a shape-tensor input [2,3]",
                 "Fill", th_f_ints(th_f_float(op_f("linspace", "int32"),
                                              "alpha", 4),
                                   "beta", 2, b),
                 1, &in, 1, &e, 0);
        th_free(&in);
        th_free(&e);
    }
    {
        static const double s[] = {5, 4};
        static const int64_t d[] = {5, 4};
        th_tensor_t in = th_shape(th_t(MICA_INT32, s, 1, 2));
        th_tensor_t e = uniform_ref(MICA_FLOAT32, 2, d, 0, 1);
        th_check("random_uniform, dims from a shape-tensor input [5,4]",
                 "Fill", op_f("random_uniform", NULL), 1, &in, 1, &e, 1e-7);
        th_free(&in);
        th_free(&e);
    }
    {
        static const double s[] = {3, 0};
        static const int64_t b[] = {1, 1};
        th_tensor_t in = th_shape(th_t(MICA_INT32, s, 1, 2));
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 3, 0);
        th_check("linspace, shape-tensor input [3,0]: empty output", "Fill",
                 th_f_ints(op_f("linspace", NULL), "beta", 2, b), 1, &in, 1,
                 &e, 0);
        th_free(&in);
        th_free(&e);
    }
}

static void empty_and_error_tests(void)
{
    {
        static const int64_t d[] = {0, 3}, b[] = {1, 1};
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_check("linspace [0,3]: empty output", "Fill",
                 th_f_ints(th_f_ints(op_f("linspace", NULL), "shape", 2, d),
                           "beta", 2, b),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
    {
        static const int64_t d[] = {4, 0};
        th_tensor_t e = th_t(MICA_FLOAT16, NULL, 2, 4, 0);
        th_check("random_uniform [4,0]: empty output", "Fill",
                 th_f_ints(op_f("random_uniform", "float16"), "shape", 2, d),
                 0, NULL, 1, &e, 0);
        th_free(&e);
    }
    th_check_error("no dimensions", "Fill", op_f("linspace", NULL), 0, NULL,
                   1, "give the 'shape' param or input 0");
    th_check_error("no op", "Fill", th_fields(), 0, NULL, 1, "op");
    {
        static const int64_t d[] = {2, 3};
        th_check_error("linspace [2,3] with the default single beta", "Fill",
                       th_f_ints(op_f("linspace", NULL), "shape", 2, d), 0,
                       NULL, 1, "'beta' has 1 values but the output has "
                       "rank 2");
        th_check_error("random_uniform int32", "Fill",
                       th_f_ints(op_f("random_uniform", "int32"), "shape", 2,
                                 d),
                       0, NULL, 1, "random_uniform does not give int32");
        th_check_error("linspace bool", "Fill",
                       th_f_ints(op_f("linspace", "bool"), "shape", 2, d), 0,
                       NULL, 1, "linspace does not give bool");
    }
    {
        static const int64_t d[] = {3}, b[] = {0, 1};
        th_check_error("random_uniform with two betas", "Fill",
                       th_f_ints(th_f_ints(op_f("random_uniform", NULL),
                                           "shape", 1, d),
                                 "beta", 2, b),
                       0, NULL, 1, "has 2 values, not 1");
    }
    {
        static const int64_t d[] = {3};
        th_check_error("int32 linspace with alpha 0.5", "Fill",
                       th_f_float(th_f_ints(op_f("linspace", "int32"),
                                            "shape", 1, d),
                                  "alpha", 0.5),
                       0, NULL, 1, "'alpha' 0.5 is not an int32 value");
    }
    {
        static const int64_t d[] = {2, -1};
        th_check_error("negative dimension", "Fill",
                       th_f_ints(op_f("random_uniform", NULL), "shape", 2, d),
                       0, NULL, 1, "'shape' [2, -1] has a negative dimension");
    }
    {
        static const int64_t d[] = {3};
        static const double a[] = {1};
        th_tensor_t in[2];
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        th_check_error("alpha input without beta", "Fill",
                       th_f_ints(op_f("linspace", NULL), "shape", 1, d), 2,
                       in, 1, "input 1 (alpha) is given without input 2");
        th_free(&in[1]);
    }
    {
        static const int64_t d[] = {2, 3};
        static const double a[] = {1}, b[] = {1, 2, 3};
        th_tensor_t in[3];
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        in[2] = th_t(MICA_FLOAT32, b, 1, 3);
        th_check_error("linspace [2,3] with 3 beta inputs", "Fill",
                       th_f_ints(op_f("linspace", NULL), "shape", 2, d), 3,
                       in, 1, "input 2 (beta) has 3 values but linspace "
                       "takes 2");
        th_free(&in[1]);
        th_free(&in[2]);
    }
    {
        static const int64_t d[] = {2, 3};
        th_tensor_t in[3];
        in[0] = th_none();
        in[1] = th_none();
        in[2] = th_none();
        th_check_error("linspace [2,3], single beta, inputs left out",
                       "Fill", th_f_ints(op_f("linspace", NULL), "shape", 2,
                                         d),
                       3, in, 1, "'beta' has 1 values but the output has "
                       "rank 2");
        th_check_error("random_uniform with an empty beta list", "Fill",
                       th_f_ints(th_f_ints(op_f("random_uniform", NULL),
                                           "shape", 2, d),
                                 "beta", 0, NULL),
                       0, NULL, 1, "has 0 values, not 1");
    }
    {
        static const int64_t d[] = {2};
        static const double a[] = {1}, b[] = {2};
        th_tensor_t in[3];
        in[0] = th_none();
        in[1] = th_t(MICA_FLOAT32, a, 0);
        in[2] = th_t(MICA_FLOAT32, b, 1, 1);
        th_check_error("int32 linspace with float32 alpha/beta inputs",
                       "Fill", th_f_ints(op_f("linspace", "int32"), "shape",
                                         1, d),
                       3, in, 1, "not supported");
        th_free(&in[1]);
        th_free(&in[2]);
    }
    {
        static const int64_t d[] = {2}, b[] = {1};
        static const double s[] = {2};
        th_tensor_t in = th_shape(th_t(MICA_INT32, s, 1, 1));
        th_check_error("dimensions by param and by input", "Fill",
                       th_f_ints(th_f_ints(op_f("linspace", NULL), "shape", 1,
                                           d),
                                 "beta", 1, b),
                       1, &in, 1, "the dimensions are given twice");
        th_free(&in);
    }
}

int main(void)
{
    plan_lazy();
    th_context();
    linspace_tests();
    uniform_tests();
    shape_input_tests();
    empty_and_error_tests();
    return 0;
}
