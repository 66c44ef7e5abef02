/*
 * tests/test_mod_activation.c - the Activation module: every type with
 * alpha and beta set, against the formulas in double; the defaults (0);
 * integer relu; numerically hard inputs; scalars, empty tensors, long rows
 * (the CUDA vector path with a tail), the formats it takes and a run in
 * channels last, and the error messages.
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

/* Each formula as TensorRT's ActivationType documents it. */
static double ref(const char *type, double x, double a, double b)
{
    if (!strcmp(type, "relu")) return x > 0 ? x : 0;
    if (!strcmp(type, "sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(type, "tanh")) return tanh(x);
    if (!strcmp(type, "leaky_relu")) return x >= 0 ? x : a * x;
    if (!strcmp(type, "elu")) return x >= 0 ? x : a * (exp(x) - 1);
    if (!strcmp(type, "selu")) return x > 0 ? b * x : b * (a * exp(x) - a);
    if (!strcmp(type, "softsign")) return x / (1 + fabs(x));
    if (!strcmp(type, "softplus")) return a * log(exp(b * x) + 1);
    if (!strcmp(type, "clip")) return fmax(a, fmin(b, x));
    if (!strcmp(type, "hard_sigmoid")) return fmax(0, fmin(1, a * x + b));
    if (!strcmp(type, "scaled_tanh")) return a * tanh(b * x);
    if (!strcmp(type, "thresholded_relu")) return x > a ? x : 0;
    if (!strcmp(type, "gelu_erf")) return x / 2 * (1 + erf(x / sqrt(2)));
    if (!strcmp(type, "gelu_tanh"))
        return x / 2 * (1 + tanh(0.7978845608028654 *
                                   (x + 0.044715 * x * x * x)));
    return NAN;
}

typedef struct act_case {
    const char *type;
    double alpha, beta;
} act_case_t;

static const act_case_t cases[] = {
    {"relu", 0, 0},
    {"sigmoid", 0, 0},
    {"tanh", 0, 0},
    {"leaky_relu", 0.1, 0},
    {"elu", 1.5, 0},
    {"selu", 1.6732632423543772, 1.0507009873554805},
    {"softsign", 0, 0},
    {"softplus", 2, 0.5},
    {"clip", -1, 2},
    {"hard_sigmoid", 0.2, 0.5},
    {"scaled_tanh", 1.7159, 0.6666667},
    {"thresholded_relu", 0.5, 0},
    {"gelu_erf", 0, 0},
    {"gelu_tanh", 0, 0},
};

/* type on x (t, dims); params: 0 none, 1 alpha, 2 both. */
static void check(const char *type, double a, double b, int params,
                  mica_dtype_t t, int nd, const int64_t *d, const double *x,
                  const char *what)
{
    th_tensor_t in = th_tensor(t, nd, d, x);
    th_tensor_t want = th_tensor(t, nd, d, NULL);
    th_fields_t *f = th_f_str(th_fields(), "type", type);
    char label[256];
    int64_t i;

    if (params >= 1)
        th_f_float(f, "alpha", a);
    if (params >= 2)
        th_f_float(f, "beta", b);
    for (i = 0; i < th_volume(&in); i++)
        th_set(&want, i, ref(type, th_get(&in, i), a, b));
    snprintf(label, sizeof label, "%s %s %s", type, mica_dtype_name(t), what);
    th_check(label, "Activation", f, 1, &in, 1, &want,
             t == F16 ? 1e-3 : t == F32 ? 1e-5 : 0);
    th_free(&in);
    th_free(&want);
}

static void fails(const char *label, const char *type, mica_dtype_t t,
                  int nb_in, double alpha, const char *needle)
{
    int64_t d = 3;
    th_tensor_t in[2];
    th_fields_t *f = th_fields();

    in[0] = th_tensor(t, 1, &d, NULL);
    in[1] = th_tensor(t, 1, &d, NULL);
    if (type)
        th_f_str(f, "type", type);
    if (alpha != 0)
        th_f_float(f, "alpha", alpha);
    th_check_error(label, "Activation", f, nb_in, in, 1, needle);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void every_type(void)
{
    static const double x[] = {-3, -1, -0.25, 0, 0.5, 2, 4, 0.75};
    static const int64_t d24[] = {2, 4};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        check(cases[i].type, cases[i].alpha, cases[i].beta, 2, F32, 2, d24, x,
              "[2,4]");
        check(cases[i].type, cases[i].alpha, cases[i].beta, 2, F16, 2, d24, x,
              "[2,4]");
    }
}

static void defaults_and_edges(void)
{
    static const double x[] = {-3, -1, -0.25, 0, 0.5, 2, 4, 0.75};
    static const double hard[] = {-100, 100, -30, 30, 88, -88};
    static const double ix[] = {-128, -5, 0, 7, 127};
    int64_t n8 = 8, n6 = 6, n5 = 5;

    check("leaky_relu", 0, 0, 0, F32, 1, &n8, x, "alpha defaults to 0");
    check("clip", 0, 0, 0, F32, 1, &n8, x, "alpha and beta default to 0");
    check("hard_sigmoid", 0.25, 0, 1, F32, 1, &n8, x, "beta defaults to 0");
    check("softplus", 1, 1, 2, F32, 1, &n6, hard, "large inputs");
    check("sigmoid", 0, 0, 0, F32, 1, &n6, hard, "large inputs");
    check("elu", 1, 0, 1, F32, 1, &n6, hard, "large inputs");
    check("relu", 0, 0, 0, I32, 1, &n5, ix, "int32");
    check("relu", 0, 0, 0, I8, 1, &n5, ix, "int8");
}

static void shapes(void)
{
    static const double v = -2;
    static const int64_t d02[] = {0, 2};
    static double x[1003];
    int64_t n = 1003;
    int i;

    for (i = 0; i < 1003; i++)
        x[i] = (i % 71) * 0.125 - 4.5;
    check("elu", 0.5, 0, 1, F32, 0, NULL, &v, "scalar");
    check("sigmoid", 0, 0, 0, F32, 2, d02, NULL, "empty [0,2]");
    check("relu", 0, 0, 0, I32, 2, d02, NULL, "empty [0,2]");
    check("tanh", 0, 0, 0, F32, 1, &n, x, "1003 elements");
    check("leaky_relu", 0.125, 0, 1, F16, 1, &n, x, "1003 elements");
    check("scaled_tanh", 2, 0.5, 2, F16, 1, &n, x, "1003 elements");
    check("relu", 0, 0, 0, I8, 1, &n, x, "1003 elements");
    check("relu", 0, 0, 0, F32, 1, &n, x, "1003 elements");
}

/* float32 relu on NaN and infinities (a block of 16 and a tail): NaN
 * stays NaN, -inf gives 0. */
static void relu_special(void)
{
    double x[21], want[21];
    int64_t n = 21;
    th_tensor_t in, e;
    int i;

    for (i = 0; i < 21; i++) {
        x[i] = i % 5 == 0 ? NAN : i % 5 == 1 ? -INFINITY
               : i % 5 == 2 ? INFINITY : i % 5 == 3 ? -0.5 * i : 0.25 * i;
        want[i] = isnan(x[i]) ? NAN : x[i] < 0 ? 0 : x[i];
    }
    in = th_tensor(F32, 1, &n, x);
    e = th_tensor(F32, 1, &n, want);
    th_check("relu float32 NaN and infinities", "Activation",
             th_f_str(th_fields(), "type", "relu"), 1, &in, 1, &e, 0);
    th_free(&in);
    th_free(&e);
}

/*
 * Formats: element by element, Activation takes any layout with the
 * output in the input's (asked of the instances without a GPU); on CUDA
 * it runs in channels last against the reference, 4-D (HWC) and 5-D
 * (DHWC), float32 and float16 (skipped without a GPU).
 */
static void formats(void)
{
    static const int64_t x4[] = {2, 3, 4, 5}, x5[] = {2, 3, 2, 4, 5};
    static const int64_t x3[] = {3, 4, 5};
    const uint32_t L = MICA_FORMAT_LINEAR, H = MICA_FORMAT_HWC,
                   D = MICA_FORMAT_DHWC;
    const uint32_t devs[] = {MICA_DEVICE_CUDA, MICA_DEVICE_CPU};
    const char *const impls[] = {"cuda", "reference"};
    const char *a = "Activation";
    int k, t;

    for (k = 0; k < 2; k++) {
        uint32_t d = devs[k];
        const char *i = impls[k];
#define RELU th_f_str(th_fields(), "type", "relu")
        th_check_formats("4-D", a, d, i, RELU, F16, 4, x4, H, H, 1);
        th_check_formats("4-D", a, d, i, RELU, F32, 4, x4, H, H, 1);
        th_check_formats("4-D int8", a, d, i, RELU, I8, 4, x4, H, H, 1);
        th_check_formats("4-D", a, d, i, RELU, F16, 4, x4, L, L, 1);
        th_check_formats("5-D", a, d, i, RELU, F16, 5, x5, D, D, 1);
        th_check_formats("formats differ", a, d, i, RELU, F16, 4, x4, H, L,
                         0);
        th_check_formats("formats differ", a, d, i, RELU, F16, 4, x4, L, H,
                         0);
        th_check_formats("5-D format on 4-D", a, d, i, RELU, F16, 4, x4, D,
                         D, 0);
        th_check_formats("4-D format on 5-D", a, d, i, RELU, F16, 5, x5, H,
                         H, 0);
        th_check_formats("4-D format on 3-D", a, d, i, RELU, F16, 3, x3, H,
                         H, 0);
#undef RELU
    }
    th_channels_last(1);
    for (t = 0; t < 2; t++) {
        mica_dtype_t dt = t ? F16 : F32;
        th_tensor_t x4t = th_tensor(dt, 4, x4, NULL);
        th_tensor_t x5t = th_tensor(dt, 5, x5, NULL);
        char label[128];
        int64_t i;
        for (i = 0; i < th_volume(&x4t); i++)
            th_set(&x4t, i, (double)((i * 7) % 23 - 11) / 4);
        for (i = 0; i < th_volume(&x5t); i++)
            th_set(&x5t, i, (double)((i * 5) % 19 - 9) / 4);
        snprintf(label, sizeof label, "channels last %s: hwc elu",
                 mica_dtype_name(dt));
        th_check_impl(label, a,
                      th_f_float(th_f_str(th_fields(), "type", "elu"),
                                 "alpha", 0.5),
                      1, &x4t, 1, MICA_DEVICE_CUDA, "cuda",
                      t ? 1e-3 : 1e-5);
        snprintf(label, sizeof label, "channels last %s: dhwc relu",
                 mica_dtype_name(dt));
        th_check_impl(label, a, th_f_str(th_fields(), "type", "relu"), 1,
                      &x5t, 1, MICA_DEVICE_CUDA, "cuda", 0);
        th_free(&x4t);
        th_free(&x5t);
    }
    th_channels_last(0);
}

static void errors(void)
{
    fails("sigmoid on int32", "sigmoid", I32, 1, 0,
          "type 'sigmoid' takes float32 or float16 input, got int32");
    fails("relu on bool", "relu", BOOL, 1, 0,
          "type 'relu' takes float32, float16, int8 or int32 input, got bool");
    fails("infinite alpha", "leaky_relu", F32, 1, INFINITY,
          "param 'alpha' must be a finite float32, got inf");
    fails("alpha beyond float32", "elu", F32, 1, 1e300,
          "param 'alpha' must be a finite float32");
    fails("two inputs", "relu", F32, 2, 0, "Activation takes 1 input, got 2");
    fails("unknown type", "swish", F32, 1, 0, "is not one");
    fails("missing type", NULL, F32, 1, 0, "missing required param 'type'");
}

int main(void)
{
    plan_lazy();
    th_context();
    every_type();
    defaults_and_edges();
    shapes();
    relu_special();
    formats();
    errors();
    return exit_status();
}
