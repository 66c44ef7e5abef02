/*
 * tests/test_vec.c - the CPU's `vec` implementations (ElementWise,
 * Activation, Unary, ParametricReLU, Scale, Select, Identity) against
 * their references, on values that find the corners: NaN, infinities,
 * signed zeros, denormals, the limits of exp's range, and a ramp; every
 * pair of them for the binary ops; broadcasts of a scalar, a row and a
 * channel; channels last; float16; and tensors large enough to be split
 * between threads (the runs use 1 and 2 threads: mica_exec_set_threads
 * through MICA_TEST_THREADS is not needed, the default is every CPU).
 *
 * Exact operations must give the reference's bits (NaN: any NaN; a zero
 * with its sign); sigmoid, tanh and exp within 4 ulp, the same
 * infinities, NaN and signed zeros.
 */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

static const float specials[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f,
    FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 0.5f, -0.5f,
    2.0f, -2.5f, 88.72f, 89.0f, -87.5f, -103.0f, -104.0f, 20.0f, -20.0f,
    1e-5f, -1e-5f, 0.624f, 0.626f, 9.0f, -9.1f, 100.0f, -100.0f, 3.0f,
};
#define NS ((int64_t)(sizeof specials / sizeof specials[0]))

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Whether got matches want: exactly (ulps 0) or within ulps. */
static int same(float want, float got, int ulps)
{
    int64_t a, b;
    if (want != want)
        return got != got;
    if (isinf(want) || want == 0.0f || ulps == 0)
        return bits(want) == bits(got) ||
               (ulps > 0 && want == 0.0f && fabsf(got) < 1e-37f &&
                signbit(got) == signbit(want));
    if (got != got || isinf(got) || signbit(got) != signbit(want))
        return 0;
    a = bits(fabsf(want));
    b = bits(fabsf(got));
    return llabs(a - b) <= ulps;
}

/* One TAP result: implementation vec against the reference. */
static void check(const char *label, const char *type, th_fields_t *f,
                  int nb_in, const th_tensor_t *in, int ulps)
{
    th_tensor_t ref, got;
    int64_t i, n;
    int good = 1;
    char why[256] = "";

    if (!th_has_impl(type, MICA_DEVICE_CPU, "vec")) {
        th_fields_free(f);
        skip("%s: no vec implementation in this build", label);
        return;
    }
    th_pin("reference", NULL);
    if (th_run(MICA_DEVICE_CPU, type, f, nb_in, in, 1, &ref) != MICA_OK)
        bail("%s: reference: %s", label, th_error());
    th_pin("vec", NULL);
    if (th_run(MICA_DEVICE_CPU, type, f, nb_in, in, 1, &got) != MICA_OK) {
        ok(0, "%s: vec: %s", label, th_error());
        th_pin(NULL, NULL);
        th_free(&ref);
        th_fields_free(f);
        return;
    }
    th_pin(NULL, NULL);
    n = th_volume(&ref);
    for (i = 0; good && i < n; i++) {
        float w = (float)th_get(&ref, i), g = (float)th_get(&got, i);
        if (ref.dtype == F32) {
            memcpy(&w, (const float *)ref.data + i, sizeof w);
            memcpy(&g, (const float *)got.data + i, sizeof g);
        }
        if (!same(w, g, ulps)) {
            snprintf(why, sizeof why, "element %lld: %a (0x%08x), "
                     "reference %a (0x%08x)", (long long)i, g, bits(g), w,
                     bits(w));
            good = 0;
        }
    }
    if (!good)
        diag("%s: %s", label, why);
    ok(good, "%s: vec matches the reference", label);
    th_free(&ref);
    th_free(&got);
    th_fields_free(f);
}

/* A tensor of n values: the specials, then a ramp over [-30, 30). */
static th_tensor_t values(mica_dtype_t t, int r, const int64_t *d,
                          int64_t shift)
{
    th_tensor_t x = th_tensor(t, r, d, NULL);
    int64_t i, n = th_volume(&x);
    for (i = 0; i < n; i++) {
        int64_t k = i + shift;
        th_set(&x, i, k % 97 < NS ? specials[k % 97]
                                  : (double)((k * 7919) % 6000 - 3000) /
                                        100.0);
    }
    return x;
}

static const char *const ew_ops[] = {
    "sum", "prod", "max", "min", "sub", "div", "pow", "floor_div", "equal",
    "greater", "less",
};

static void elementwise(void)
{
    size_t k;
    int64_t sq[2] = {NS, NS}, col[2] = {NS, 1}, row[2] = {1, NS};
    int64_t big[1] = {70001}, one[1] = {1};
    int64_t d4[4] = {2, 5, 7, 9}, c4[4] = {1, 5, 1, 1};
    th_tensor_t in[2];
    int64_t i;

    for (k = 0; k < sizeof ew_ops / sizeof ew_ops[0]; k++) {
        char label[128];
        /* every pair of specials: a column against a row */
        in[0] = values(F32, 2, col, 0);
        in[1] = values(F32, 2, row, 0);
        snprintf(label, sizeof label, "ElementWise %s: every pair", ew_ops[k]);
        check(label, "ElementWise", th_f_str(th_fields(), "op", ew_ops[k]),
              2, in, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        in[0] = values(F32, 2, sq, 0);
        in[1] = values(F32, 2, sq, 5);
        snprintf(label, sizeof label, "ElementWise %s: same shapes",
                 ew_ops[k]);
        check(label, "ElementWise", th_f_str(th_fields(), "op", ew_ops[k]),
              2, in, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        in[0] = values(F16, 2, sq, 3);
        in[1] = values(F16, 2, col, 1);
        snprintf(label, sizeof label, "ElementWise %s: float16 broadcast",
                 ew_ops[k]);
        check(label, "ElementWise", th_f_str(th_fields(), "op", ew_ops[k]),
              2, in, 0);
        th_free(&in[0]);
        th_free(&in[1]);
    }
    /* large: split between threads; a scalar; a channel in NHWC */
    in[0] = values(F32, 1, big, 0);
    in[1] = values(F32, 1, one, 12);
    check("ElementWise prod: 70001 by a scalar", "ElementWise",
          th_f_str(th_fields(), "op", "prod"), 2, in, 0);
    th_free(&in[1]);
    in[1] = values(F32, 1, big, 3);
    check("ElementWise max: 70001 elements", "ElementWise",
          th_f_str(th_fields(), "op", "max"), 2, in, 0);
    th_free(&in[0]);
    th_free(&in[1]);
    in[0] = values(F32, 4, d4, 0);
    in[1] = values(F32, 4, c4, 2);
    for (i = 0; i < 2; i++) {
        th_channels_last_cpu((int)i);
        check(i ? "ElementWise sum: a channel, channels last"
                : "ElementWise sum: a channel, linear",
              "ElementWise", th_f_str(th_fields(), "op", "sum"), 2, in, 0);
    }
    th_channels_last_cpu(0);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void activation(void)
{
    static const struct {
        const char *type;
        double a, b;
        int ulps;
    } v[] = {
        {"relu", 0, 0, 0},           {"sigmoid", 0, 0, 4},
        {"tanh", 0, 0, 4},           {"leaky_relu", 0.1, 0, 0},
        {"elu", 1.5, 0, 0},          {"selu", 1.67, 1.05, 0},
        {"softsign", 0, 0, 0},       {"softplus", 1.0, 1.0, 0},
        {"clip", -2.0, 6.0, 0},      {"hard_sigmoid", 0.2, 0.5, 0},
        {"scaled_tanh", 1.7, 0.66, 4}, {"thresholded_relu", 1.0, 0, 0},
    };
    int64_t d[1] = {70003}, d4[4] = {1, 3, 5, 7};
    th_tensor_t x32 = values(F32, 1, d, 0), x16 = values(F16, 1, d, 0);
    th_tensor_t x4 = values(F32, 4, d4, 0);
    size_t k;

    for (k = 0; k < sizeof v / sizeof v[0]; k++) {
        char label[128];
        snprintf(label, sizeof label, "Activation %s: float32", v[k].type);
        check(label, "Activation",
              th_f_float(th_f_float(th_f_str(th_fields(), "type", v[k].type),
                                    "alpha", v[k].a), "beta", v[k].b),
              1, &x32, v[k].ulps);
        snprintf(label, sizeof label, "Activation %s: float16", v[k].type);
        check(label, "Activation",
              th_f_float(th_f_float(th_f_str(th_fields(), "type", v[k].type),
                                    "alpha", v[k].a), "beta", v[k].b),
              1, &x16, v[k].ulps ? 1 : 0);
    }
    th_channels_last_cpu(1);
    check("Activation sigmoid: channels last", "Activation",
          th_f_str(th_fields(), "type", "sigmoid"), 1, &x4, 4);
    th_channels_last_cpu(0);
    th_free(&x32);
    th_free(&x16);
    th_free(&x4);
}

static void unary(void)
{
    static const char *const ops[] = {"exp", "log", "sqrt", "recip", "abs",
                                      "neg", "sin", "ceil", "floor", "erf",
                                      "sign", "round", "isinf", "isnan"};
    int64_t d[1] = {70002};
    th_tensor_t x = values(F32, 1, d, 0);
    size_t k;

    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        char label[64];
        snprintf(label, sizeof label, "Unary %s", ops[k]);
        check(label, "Unary", th_f_str(th_fields(), "op", ops[k]), 1, &x,
              strcmp(ops[k], "exp") == 0 ? 4 : 0);
    }
    th_free(&x);
}

static void others(void)
{
    int64_t d4[4] = {2, 4, 9, 11}, c4[4] = {1, 4, 1, 1}, s1[4] = {1, 1, 1, 1};
    int64_t cond_d[4] = {2, 1, 9, 11};
    static const double sc[4] = {0.5, -2, 0, 3}, sh[4] = {1, -0.0, 2, -7};
    int64_t four[1] = {4};
    th_tensor_t in[3], tsc = th_tensor(F32, 1, four, sc),
                       tsh = th_tensor(F32, 1, four, sh);
    int cl;

    in[0] = values(F32, 4, d4, 0);
    in[1] = values(F32, 4, c4, 40);
    for (cl = 0; cl < 2; cl++) {
        th_channels_last_cpu(cl);
        check(cl ? "ParametricReLU: per channel, channels last"
                 : "ParametricReLU: per channel",
              "ParametricReLU", th_fields(), 2, in, 0);
        check(cl ? "Scale channel: channels last" : "Scale channel",
              "Scale",
              th_f_weights(th_f_weights(th_f_str(th_fields(), "mode",
                                                 "channel"),
                                        "scale", &tsc),
                           "shift", &tsh), 1, in, 0);
    }
    th_channels_last_cpu(0);
    th_free(&tsc);
    th_free(&tsh);
    th_free(&in[1]);
    in[1] = values(F32, 4, s1, 13);
    check("ParametricReLU: a scalar slope", "ParametricReLU", th_fields(),
          2, in, 0);
    th_free(&in[1]);
    /* Select: cond broadcast along channels */
    in[1] = values(F32, 4, d4, 7);
    in[2] = in[0];
    in[0] = th_tensor(MICA_BOOL, 4, cond_d, NULL);
    {
        int64_t i;
        for (i = 0; i < th_volume(&in[0]); i++)
            th_set(&in[0], i, (i * 13) % 7 < 3);
    }
    check("Select: float32, cond broadcast", "Select", th_fields(), 3, in,
          0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&in[2]);
}

static void resize(void)
{
    static const double up[4] = {1, 1, 2, 2}, odd[4] = {1, 1, 1.5, 0.75};
    int64_t d4[4] = {2, 3, 7, 9};
    th_tensor_t x = values(F32, 4, d4, 0);
    int cl;

    for (cl = 0; cl < 2; cl++) {
        th_channels_last_cpu(cl);
        check(cl ? "Resize nearest x2: channels last" : "Resize nearest x2",
              "Resize", th_f_floats(th_fields(), "scales", 4, up), 1, &x, 0);
        check(cl ? "Resize linear half_pixel: channels last"
                 : "Resize linear half_pixel", "Resize",
              th_f_str(th_f_str(th_f_floats(th_fields(), "scales", 4, odd),
                                "mode", "linear"),
                       "coordinate_transformation", "half_pixel"),
              1, &x, 0);
    }
    th_channels_last_cpu(0);
    th_free(&x);
}

static void softmax(void)
{
    int64_t rows[2] = {37, 19}, cols[3] = {3, 16, 301};
    th_tensor_t a = values(F32, 2, rows, 0), b = values(F32, 3, cols, 0);
    th_tensor_t c = values(F16, 2, rows, 0);
    int64_t i;

    /* finite values only in b's rows, NaN and infinities in a's */
    for (i = 0; i < th_volume(&b); i++)
        th_set(&b, i, (double)((i * 37) % 201 - 100) / 9.0);
    /* float32 arithmetic against the reference's double: x - max rounds
     * (a relative error of |x - max| * 2^-24 in exp), hence 256 ulps */
    check("SoftMax: the last axis, corner values", "SoftMax",
          th_f_int(th_fields(), "axis", 1), 1, &a, 256);
    check("SoftMax: float16, the last axis", "SoftMax",
          th_f_int(th_fields(), "axis", 1), 1, &c, 1);
    check("SoftMax: a middle axis (16 of 301 columns)", "SoftMax",
          th_f_int(th_fields(), "axis", 1), 1, &b, 256);
    th_free(&a);
    th_free(&b);
    th_free(&c);
}

static void shuffle(void)
{
    static const int64_t chan[5] = {0, 2, 1, 3, 4}, rev[5] = {4, 3, 2, 1, 0};
    int64_t d5[5] = {2, 3, 4, 5, 6};
    th_tensor_t x = values(F32, 5, d5, 0), h = values(F16, 5, d5, 3);

    check("Shuffle: a channel shuffle (rows copied)", "Shuffle",
          th_f_ints(th_fields(), "first_transpose", 5, chan), 1, &x, 0);
    check("Shuffle: every axis reversed", "Shuffle",
          th_f_ints(th_fields(), "first_transpose", 5, rev), 1, &x, 0);
    check("Shuffle: float16, both transposes", "Shuffle",
          th_f_ints(th_f_ints(th_fields(), "first_transpose", 5, chan),
                    "second_transpose", 5, rev), 1, &h, 0);
    th_free(&x);
    th_free(&h);
}

static void identity(void)
{
    int64_t d4[4] = {2, 37, 5, 41};
    th_tensor_t x = values(F32, 4, d4, 0), h = values(F16, 4, d4, 0);

    check("Identity: float32 to float16", "Identity",
          th_f_str(th_fields(), "dtype", "float16"), 1, &x, 0);
    check("Identity: float16 to float32", "Identity",
          th_f_str(th_fields(), "dtype", "float32"), 1, &h, 0);
    /* channels last in and out: a copy in that format */
    th_channels_last_cpu(1);
    check("Identity: float32 [2, 37, 5, 41], channels last", "Identity",
          th_fields(), 1, &x, 0);
    th_channels_last_cpu(0);
    th_free(&x);
    th_free(&h);
}

/*
 * The thread count of an execution context (mica_exec_set_threads):
 * a sum of 300000 elements, split between threads or not, gives the
 * same bytes with 1, 2 and 3 threads and by default; a negative count
 * is refused.
 */
static void threads(void)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;
    mica_dims_t d;
    float *x = malloc(300000 * sizeof *x), *first = NULL;
    int32_t counts[4] = {1, 2, 3, 0};
    int k, good = 1;
    int64_t i;

    if (!x)
        bail("out of memory");
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 300000;
    for (i = 0; i < d.d[0]; i++)
        x[i] = (float)(i % 1013) / 7.0f - 50.0f;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", F32, &d, NULL) != MICA_OK)
        bail("network: %s", mica_context_error(ctx));
    th_add_layer(net, "s", "Activation", "type", "sigmoid", "x", NULL, "y");
    mica_network_mark_output(net, "y", NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", mica_context_error(ctx));
    for (k = 0; k < 4; k++) {
        mica_exec_t *x_ = NULL;
        mica_tensor_desc_t desc;
        const void *out = NULL;
        if (mica_exec_create(e, &x_) != MICA_OK ||
            mica_exec_set_threads(x_, counts[k]) != MICA_OK ||
            mica_exec_set_input(x_, "x", &d, x) != MICA_OK ||
            mica_exec_run(x_) != MICA_OK ||
            mica_exec_get_output(x_, "y", &desc, &out) != MICA_OK) {
            diag("threads %d: %s", (int)counts[k], mica_context_error(ctx));
            good = 0;
        } else if (!first) {
            first = malloc((size_t)d.d[0] * sizeof *first);
            if (!first)
                bail("out of memory");
            memcpy(first, out, (size_t)d.d[0] * sizeof *first);
        } else if (memcmp(first, out, (size_t)d.d[0] * sizeof *first)) {
            diag("threads %d: other values than with 1", (int)counts[k]);
            good = 0;
        }
        if (k == 0)
            ok(mica_exec_set_threads(x_, -1) == MICA_ERR_INVALID &&
                   mica_exec_threads(x_) == 1,
               "threads: a negative count is refused, the count kept");
        mica_exec_destroy(x_);
    }
    ok(good, "threads: 1, 2, 3 and the default give the same bytes");
    free(first);
    free(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

int main(void)
{
    plan_lazy();
    th_context();
    threads(); /* first: before anything opened OpenMP */
    elementwise();
    activation();
    unary();
    others();
    identity();
    resize();
    softmax();
    shuffle();
    return exit_status();
}
