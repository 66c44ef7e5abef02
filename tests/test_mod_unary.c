/*
 * tests/test_mod_unary.c - the Unary module: every op against the C
 * library in double, round half to even, isinf / isnan, the integer ops
 * with their edge cases, not, scalars, empty tensors, long rows (the CUDA
 * vector path with a tail) and the error messages.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define I8 MICA_INT8
#define I32 MICA_INT32
#define BOOL MICA_BOOL

/* Round half to even, written out (not rint). */
static double half_even(double x)
{
    double f = floor(x), d = x - f;
    if (d > 0.5)
        return f + 1;
    if (d < 0.5)
        return f;
    return fmod(f, 2) == 0 ? f : f + 1;
}

static double sign(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : x;
}

static double recip(double x) { return 1 / x; }
static double neg(double x) { return -x; }

typedef struct un_case {
    const char *op;
    double (*fn)(double);
    const double *in; /* 8 values */
} un_case_t;

static const double general[] = {-2.5, -1.25, -0.5, 0, 0.75, 1.5, 3, 2.5};
static const double positive[] = {0.125, 0.5, 1, 2, 7.5, 100, 3, 0.25};
static const double unit[] = {-0.9, -0.5, -0.1, 0, 0.3, 0.75, 0.5, -0.25};
static const double ge1[] = {1, 1.5, 2, 10, 100, 1.25, 3, 4};

static const un_case_t cases[] = {
    {"exp", exp, general},     {"log", log, positive},
    {"sqrt", sqrt, positive},  {"recip", recip, general},
    {"abs", fabs, general},    {"neg", neg, general},
    {"sin", sin, general},     {"cos", cos, general},
    {"tan", tan, general},     {"sinh", sinh, general},
    {"cosh", cosh, general},   {"asin", asin, unit},
    {"acos", acos, unit},      {"atan", atan, general},
    {"asinh", asinh, general}, {"acosh", acosh, ge1},
    {"atanh", atanh, unit},    {"ceil", ceil, general},
    {"floor", floor, general}, {"erf", erf, general},
    {"sign", sign, general},   {"round", half_even, general},
};

/* op on x (type t, dims) against fn in double. */
static void check(const char *op, double (*fn)(double), mica_dtype_t t,
                  int nd, const int64_t *d, const double *x, const char *what)
{
    th_tensor_t in = th_tensor(t, nd, d, x);
    th_tensor_t want = th_tensor(t, nd, d, NULL);
    char label[256];
    int64_t i;

    for (i = 0; i < th_volume(&in); i++)
        th_set(&want, i, fn(th_get(&in, i)));
    snprintf(label, sizeof label, "%s %s %s", op, mica_dtype_name(t), what);
    th_check(label, "Unary", th_f_str(th_fields(), "op", op), 1, &in, 1,
             &want, t == F16 ? 1e-3 : t == F32 ? 1e-5 : 0);
    th_free(&in);
    th_free(&want);
}

/* A literal case: op on x ([n], type t) gives want (type tw). */
static void literal(const char *op, mica_dtype_t t, mica_dtype_t tw, int n,
                    const double *x, const double *w, const char *what)
{
    int64_t d = n;
    th_tensor_t in = th_tensor(t, 1, &d, x);
    th_tensor_t want = th_tensor(tw, 1, &d, w);
    char label[256];

    snprintf(label, sizeof label, "%s %s %s", op, mica_dtype_name(t), what);
    th_check(label, "Unary", th_f_str(th_fields(), "op", op), 1, &in, 1,
             &want, 0);
    th_free(&in);
    th_free(&want);
}

static void fails(const char *label, const char *op, mica_dtype_t t,
                  int nb_in, const char *needle)
{
    int64_t d = 3;
    th_tensor_t in[2];
    th_fields_t *f = th_fields();

    in[0] = th_tensor(t, 1, &d, NULL);
    in[1] = th_tensor(t, 1, &d, NULL);
    if (op)
        th_f_str(f, "op", op);
    th_check_error(label, "Unary", f, nb_in, in, 1, needle);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void float_ops(void)
{
    static const int64_t d24[] = {2, 4};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        check(cases[i].op, cases[i].fn, F32, 2, d24, cases[i].in, "[2,4]");
        check(cases[i].op, cases[i].fn, F16, 2, d24, cases[i].in, "[2,4]");
    }
}

/* op on x (n elements of float64) on the CPU alone gives want (type tw);
 * CUDA refuses float64. */
static void literal_cpu64(const char *op, mica_dtype_t tw, int n,
                          const double *x, const double *w, const char *what)
{
    int64_t d = n;
    th_tensor_t in = th_tensor(MICA_FLOAT64, 1, &d, x);
    th_tensor_t want = th_tensor(tw, 1, &d, w);
    char label[256];

    snprintf(label, sizeof label, "%s float64 %s", op, what);
    th_check_cpu(label, "Unary", th_f_str(th_fields(), "op", op), 1, &in,
                 &want, 0, 0);
    th_free(&in);
    th_free(&want);
}

/* op on x ([2,4] float64) on the CPU alone against fn in double (the
 * reference computes with the same C library: within 1e-15). */
static void check_f64(const char *op, double (*fn)(double), const double *x)
{
    static const int64_t d24[] = {2, 4};
    th_tensor_t in = th_tensor(MICA_FLOAT64, 2, d24, x);
    th_tensor_t want = th_tensor(MICA_FLOAT64, 2, d24, NULL);
    char label[256];
    int64_t i;

    for (i = 0; i < th_volume(&in); i++)
        th_set(&want, i, fn(th_get(&in, i)));
    snprintf(label, sizeof label, "%s float64 [2,4]", op);
    th_check_cpu(label, "Unary", th_f_str(th_fields(), "op", op), 1, &in,
                 &want, 1e-15, 1e-300);
    th_free(&in);
    th_free(&want);
}

/* float64: every op on the CPU, in double; CUDA's Unary refuses it (its
 * supports_format, asked without a GPU). */
static void float64_ops(void)
{
    static const double big[] = {1e300, -1e300, 0.5, 2, 1e-300, 3, 4, 5};
    static const double nan_inf[] = {0, 1, 0, 1};
    double x[4] = {1.0, 0.0, -2.5, 0.0};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof *cases; i++)
        check_f64(cases[i].op, cases[i].fn, cases[i].in);
    /* values float32 cannot hold: exp(1e300) is inf, 1e-300 stays */
    check_f64("neg", neg, big);
    check_f64("recip", recip, big);
    x[1] = INFINITY;
    x[3] = -INFINITY;
    literal_cpu64("isinf", MICA_BOOL, 4, x, nan_inf, "inf");
    x[1] = NAN;
    x[3] = -NAN;
    literal_cpu64("isnan", MICA_BOOL, 4, x, nan_inf, "NaN");
    /* (th_instance takes the enum as its value: 0 is exp) */
    th_refused("float64 exp on cuda", "Unary", MICA_DEVICE_CUDA, "cuda",
               th_f_int(th_fields(), "op", 0), MICA_FLOAT64, 1);
}

static void special_values(void)
{
    static const double r[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2};
    static const double rw[] = {-2, -2, -0.0, 0, 2, 2, 4, -3};
    static const double x[] = {INFINITY, -INFINITY, NAN, 0, -1e30, 65504};
    static const double inf[] = {1, 1, 0, 0, 0, 0};
    static const double nan[] = {0, 0, 1, 0, 0, 0};
    static const double inf16[] = {1, 1, 0, 0, 1, 0}; /* -1e30 is -inf */

    literal("round", F32, F32, 8, r, rw, "half to even");
    literal("round", F16, F16, 8, r, rw, "half to even");
    literal("isinf", F32, BOOL, 6, x, inf, "");
    literal("isnan", F32, BOOL, 6, x, nan, "");
    literal("isinf", F16, BOOL, 6, x, inf16, "");
    literal("isnan", F16, BOOL, 6, x, nan, "");
}

static void integer_ops(void)
{
    static const double x32[] = {-2147483647 - 1.0, -5, 0, 7, 2147483647};
    static const double abs32[] = {-2147483647 - 1.0, 5, 0, 7, 2147483647};
    static const double neg32[] = {-2147483647 - 1.0, 5, 0, -7, -2147483647};
    static const double sgn32[] = {-1, -1, 0, 1, 1};
    static const double x8[] = {-128, -5, 0, 7, 127};
    static const double abs8[] = {127, 5, 0, 7, 127};
    static const double neg8[] = {127, 5, 0, -7, -127};
    static const double b[] = {0, 1, 1, 0};
    static const double nb[] = {1, 0, 0, 1};

    literal("abs", I32, I32, 5, x32, abs32, "wraps at -2^31");
    literal("neg", I32, I32, 5, x32, neg32, "wraps at -2^31");
    literal("sign", I32, I32, 5, x32, sgn32, "");
    literal("abs", I8, I8, 5, x8, abs8, "saturates");
    literal("neg", I8, I8, 5, x8, neg8, "saturates");
    literal("sign", I8, I8, 5, x8, sgn32, "");
    literal("not", BOOL, BOOL, 4, b, nb, "");
}

static void shapes(void)
{
    static const double four = 4;
    static const int64_t d02[] = {0, 2}, d30[] = {3, 0};
    static double x[1003];
    int64_t n = 1003;
    int i;

    for (i = 0; i < 1003; i++)
        x[i] = (i % 61) * 0.125 - 3.75;
    check("sqrt", sqrt, F32, 0, NULL, &four, "scalar");
    check("exp", exp, F32, 2, d02, NULL, "empty [0,2]");
    check("abs", fabs, I32, 2, d30, NULL, "empty [3,0]");
    check("exp", exp, F32, 1, &n, x, "1003 elements");
    check("sin", sin, F16, 1, &n, x, "1003 elements");
    check("floor", floor, F16, 1, &n, x, "1003 elements");
    check("neg", neg, I32, 1, &n, x, "1003 elements");
    check("sign", sign, I8, 1, &n, x, "1003 elements");
}

static void errors(void)
{
    fails("not on float32", "not", F32, 1,
          "op 'not' takes bool input, got float32");
    fails("exp on int32", "exp", I32, 1,
          "op 'exp' takes float32, float16 or float64 (on the CPU) input, "
          "got int32");
    fails("isnan on int32", "isnan", I32, 1,
          "op 'isnan' takes float32, float16 or float64 (on the CPU) "
          "input, got int32");
    fails("abs on bool", "abs", BOOL, 1,
          "op 'abs' takes float32, float16, float64 (on the CPU), int8 or "
          "int32 input, got bool");
    fails("two inputs", "exp", F32, 2, "Unary takes 1 input, got 2");
    fails("unknown op", "cube", F32, 1, "is not one");
    fails("missing op", NULL, F32, 1, "missing required param 'op'");
}

int main(void)
{
    plan_lazy();
    th_context();
    float_ops();
    float64_ops();
    special_values();
    integer_ops();
    shapes();
    errors();
    return exit_status();
}
