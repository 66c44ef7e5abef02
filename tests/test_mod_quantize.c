/*
 * tests/test_mod_quantize.c - the Quantize and Dequantize layers: hand
 * values for rounding half to even, saturation, zero points, NaN and
 * infinities; per-tensor and per-channel scales along every axis, float16
 * on the float side, runtime dimensions, empty tensors and the errors.
 * Generic cases are checked against the definition computed here: a
 * float32 division, rint in double, the zero point added, a clamp.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define I8 MICA_INT8

#define NO_AXIS (-1000)

/* The axis param, none for NO_AXIS. */
static th_fields_t *axis_f(int axis)
{
    return axis == NO_AXIS ? NULL : th_f_int(th_fields(), "axis", axis);
}

static double q_ref(double x, double s, double z)
{
    float v = (float)x / (float)s;
    double r;
    if (isnan(v))
        return z;
    r = rint((double)v) + z;
    return r < -128 ? -128 : r > 127 ? 127 : r;
}

/*
 * Quantize (dq 0) or Dequantize (dq 1) of x with dims d: per channel
 * along `axis` (-1: per tensor through a scalar scale, < -100: no axis
 * param and a [1] scale), zero points when zp, float types xt (the float
 * side of x) and st (the scale).
 */
static void check(const char *what, int dq, int n, const int64_t *d,
                  int axis, int zp, mica_dtype_t xt, mica_dtype_t st,
                  unsigned runtime)
{
    th_tensor_t in[3], y;
    int64_t k = 1, inner = 1, i, m;
    char label[200];
    int j;

    if (axis >= 0) {
        k = d[axis];
        for (j = axis + 1; j < n; j++)
            inner *= d[j];
    }
    in[0] = th_tensor(dq ? I8 : xt, n, d, NULL);
    in[1] = axis >= 0 ? th_t(st, NULL, 1, (int)k)
            : axis < -100 ? th_t(st, NULL, 1, 1)
                          : th_tensor(st, 0, NULL, NULL);
    in[2] = !zp ? th_none()
            : axis >= 0 ? th_t(I8, NULL, 1, (int)k)
            : axis < -100 ? th_t(I8, NULL, 1, 1)
                          : th_tensor(I8, 0, NULL, NULL);
    for (i = 0; i < k; i++) {
        th_set(&in[1], i, (double[]){0.5, 0.25, 0.3, 2, 0.0625, 1.5}[i % 6]);
        if (zp)
            th_set(&in[2], i, (double)((i * 37) % 41) - 20);
    }
    m = th_volume(&in[0]);
    y = th_tensor(dq ? st : I8, n, d, NULL);
    for (i = 0; i < m; i++) {
        int64_t c = (i / inner) % k;
        double s = th_get(&in[1], c), z = zp ? th_get(&in[2], c) : 0;
        if (dq) {
            th_set(&in[0], i, (double)((i * 29) % 256) - 128);
            th_set(&y, i, (th_get(&in[0], i) - z) * s);
        } else {
            th_set(&in[0], i, 0.37 * (double)((i * 13) % 101) - 18.5);
            th_set(&y, i, q_ref(th_get(&in[0], i), s, z));
        }
    }
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    snprintf(label, sizeof label, "%s %s: axis %d, zero point %d, %s/%s",
             dq ? "Dequantize" : "Quantize", what, axis, zp,
             mica_dtype_name(xt), mica_dtype_name(st));
    th_check(label, dq ? "Dequantize" : "Quantize",
             axis_f(axis >= 0 ? axis : NO_AXIS), zp ? 3 : 2,
             in, 1, &y, dq && st == F16 ? 1e-3 : 0);
    for (j = 0; j < 3; j++)
        th_free(&in[j]);
    th_free(&y);
}

/* x [2, 3] of xt with a scale of shape sd (sn dims) and a zero point of
 * shape zd (zn dims, -1: none); the axis param (NO_AXIS: none). */
static void fail(const char *what, const char *type, mica_dtype_t xt,
                 mica_dtype_t st, int sn, const int64_t *sd, int zn,
                 const int64_t *zd, mica_dtype_t zt, int axis,
                 unsigned runtime, const char *needle)
{
    th_tensor_t in[3];
    in[0] = th_t(xt, NULL, 2, 2, 3);
    in[1] = th_tensor(st, sn, sd, NULL);
    in[2] = zn < 0 ? th_none() : th_tensor(zt, zn, zd, NULL);
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    th_check_error(what, type, axis_f(axis), zn < 0 ? 2 : 3, in, 1, needle);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&in[2]);
}

static mica_status_t add_layer(mica_network_t *net, const char *type,
                               int nin, const char **ins, const char *out,
                               th_fields_t *f)
{
    mica_layer_spec_t s;
    mica_status_t st;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.name = out;
    s.type = type;
    s.nb_inputs = nin;
    s.inputs = ins;
    s.nb_outputs = 1;
    s.outputs = &out;
    s.fields = th_fields_view(f);
    st = mica_network_add_layer(net, &s);
    th_fields_free(f);
    return st;
}

/*
 * A Q/DQ pair as networks have it: Constants for the per-channel scale
 * and zero point, x [2, 3] -> Quantize -> Dequantize -> y on `device`;
 * y (6 floats) into yv.
 */
static mica_status_t qdq_pair(uint32_t device, const float *xv, float *yv)
{
    static const double sv[] = {0.5, 0.25, 2}, zv[] = {1, -3, 0};
    th_tensor_t st = th_t(F32, sv, 1, 3), zt = th_t(I8, zv, 1, 3);
    const char *qi[3] = {"x", "s", "z"}, *di[3] = {"q", "s", "z"};
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_dims_t dx = {2, 0, {2, 3}};
    mica_build_config_t cfg;
    mica_tensor_desc_t desc;
    const void *data;
    mica_status_t rc;

    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if ((rc = mica_network_create(ctx, &net)) != MICA_OK ||
        (rc = mica_network_add_input(net, "x", F32, &dx, NULL)) != MICA_OK ||
        (rc = add_layer(net, "Constant", 0, NULL, "s",
                        th_f_weights(th_fields(), "weights", &st))) !=
            MICA_OK ||
        (rc = add_layer(net, "Constant", 0, NULL, "z",
                        th_f_weights(th_fields(), "weights", &zt))) !=
            MICA_OK ||
        (rc = add_layer(net, "Quantize", 3, qi, "q", axis_f(1))) != MICA_OK ||
        (rc = add_layer(net, "Dequantize", 3, di, "y", axis_f(1))) !=
            MICA_OK ||
        (rc = mica_network_mark_output(net, "y", NULL)) != MICA_OK ||
        (rc = mica_engine_build(net, &cfg, &e)) != MICA_OK ||
        (rc = mica_exec_create(e, &x)) != MICA_OK ||
        (rc = mica_exec_set_input(x, "x", &dx, xv)) != MICA_OK ||
        (rc = mica_exec_run(x)) != MICA_OK ||
        (rc = mica_exec_get_output(x, "y", &desc, &data)) != MICA_OK)
        diag("Q/DQ pair: %s", mica_context_error(ctx));
    else
        memcpy(yv, data, 6 * sizeof *yv);
    th_free(&st);
    th_free(&zt);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return rc;
}

int main(void)
{
    static const int64_t d3[] = {2, 3, 4}, d1[] = {7}, e3[] = {2, 0, 4},
                         d4[] = {3, 5, 2, 33};
    int dq, a, zp;

    plan_lazy();
    th_context();

    /* Quantize by hand: scale 0.5, ties to even, saturation, zero point. */
    {
        static const double xv[] = {0,  0.25,   0.75, 1.25, -1.25, 1.0,
                                    63.5, 64, 100, -64.25, -70, 0.2,
                                    NAN, INFINITY, -INFINITY};
        static const double y0[] = {0, 0, 2, 2, -2, 2, 127, 127, 127, -128,
                                    -128, 0, 0, 127, -128};
        static const double y3[] = {3, 3, 5, 5, 1, 5, 127, 127, 127, -125,
                                    -128, 3, 3, 127, -128};
        static const double half[] = {0.5}, three[] = {3};
        th_tensor_t in[3], y;
        in[0] = th_t(F32, xv, 1, 15);
        in[1] = th_tensor(F32, 0, NULL, half);
        in[2] = th_tensor(I8, 0, NULL, three);
        y = th_t(I8, y0, 1, 15);
        th_check("Quantize by hand", "Quantize", NULL, 2, in, 1, &y, 0);
        th_free(&y);
        y = th_t(I8, y3, 1, 15);
        th_check("Quantize by hand, zero point 3", "Quantize", NULL, 3, in, 1,
                 &y, 0);
        th_free(&y);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&in[2]);
    }
    /* Dequantize by hand: scale 0.25, zero point -2, per channel. */
    {
        static const double xv[] = {-128, -2, 0, 127, 5, -7};
        static const double sv[] = {0.25, 2}, zv[] = {-2, 1};
        static const double yv[] = {-31.5, 0, 0.5, 252, 8, -16};
        th_tensor_t in[3], y;
        in[0] = th_t(I8, xv, 2, 2, 3);
        in[1] = th_t(F32, sv, 1, 2);
        in[2] = th_t(I8, zv, 1, 2);
        y = th_t(F32, yv, 2, 2, 3);
        th_check("Dequantize by hand, per channel", "Dequantize", axis_f(0),
                 3, in, 1, &y, 0);
        th_free(&y);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&in[2]);
    }
    for (dq = 0; dq < 2; dq++)
        for (zp = 0; zp < 2; zp++) {
            check("rank 3 per tensor", dq, 3, d3, -1, zp, F32, F32, 0);
            check("rank 3 per tensor, [1] scale", dq, 3, d3, -1000, zp, F32,
                  F32, 0);
            for (a = 0; a < 3; a++)
                check("rank 3 per channel", dq, 3, d3, a, zp, F32, F32, 0);
            check("rank 1 per channel", dq, 1, d1, 0, zp, F32, F32, 0);
            check("rank 4, long rows", dq, 4, d4, 1, zp, F32, F32, 0);
            check("float16 scale", dq, 3, d3, 1, zp, F32, F16, 0);
            check("empty", dq, 3, e3, 2, zp, F32, F32, 0);
            check("runtime dims", dq, 3, d3, 2, zp, F32, F32, 7u);
        }
    check("float16 x", 0, 3, d3, 1, 1, F16, F32, 0);
    check("float16 x and scale", 0, 3, d3, -1, 1, F16, F16, 0);
    check("float16 x and scale, per channel", 0, 4, d4, 3, 0, F16, F16, 0);
    /* an axis given with a scalar scale: per tensor */
    {
        static const double xv[] = {1, -1, 3}, yv[] = {4, -4, 12};
        static const double sv[] = {0.25};
        th_tensor_t in[2], y;
        in[0] = th_t(F32, xv, 1, 3);
        in[1] = th_tensor(F32, 0, NULL, sv);
        y = th_t(I8, yv, 1, 3);
        th_check("axis with a scalar scale", "Quantize", axis_f(0), 2, in, 1,
                 &y, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&y);
    }

    /* A Q/DQ pair with Constant scales: channel scales 0.5, 0.25, 2 and
     * zero points 1, -3, 0 snap x to its grid: 1.3 -> q 4 -> 1.5; 0.3 ->
     * q -2 -> 0.25; 5 -> q 2 (2.5, a tie, to even) -> 4; -0.3 -> q 0 ->
     * -0.5; 40 -> q 127 (157 saturated) -> 32.5; -2.9 -> q -1 -> -2. */
    {
        static const float xv[] = {1.3f, 0.3f, 5, -0.3f, 40, -2.9f};
        static const float want[] = {1.5f, 0.25f, 4, -0.5f, 32.5f, -2};
        float cpu[6], gpu[6];
        int good = qdq_pair(MICA_DEVICE_CPU, xv, cpu) == MICA_OK;
        int i;
        for (i = 0; good && i < 6; i++)
            if (cpu[i] != want[i]) {
                diag("element %d is %g, expected %g", i, cpu[i], want[i]);
                good = 0;
            }
        ok(good, "Q/DQ pair with Constant scales: cpu");
        if (!th_cuda()) {
            skip("Q/DQ pair with Constant scales: cuda: no usable GPU");
        } else {
            good = qdq_pair(MICA_DEVICE_CUDA, xv, gpu) == MICA_OK &&
                   !memcmp(cpu, gpu, sizeof cpu);
            ok(good, "Q/DQ pair with Constant scales: cuda");
        }
    }

    /* Errors. */
    {
        static const int64_t s1[] = {1}, s2[] = {2}, s3[] = {3}, s4[] = {4},
                             s23[] = {2, 3};
        fail("axis out of range", "Quantize", F32, F32, 1, s3, -1, NULL, I8,
             2, 0, "axis 2 is out of range for input 0 of rank 2");
        fail("negative axis", "Dequantize", I8, F32, 1, s3, -1, NULL, I8, -1,
             0, "axis -1 is out of range for input 0 of rank 2");
        fail("scale of 4 without axis", "Quantize", F32, F32, 1, s4, -1,
             NULL, I8, NO_AXIS, 0,
             "input 1 (scale) has shape [4]: without 'axis' it must be one "
             "value ([] or [1])");
        fail("scale of the wrong length", "Quantize", F32, F32, 1, s2, -1,
             NULL, I8, 1, 0,
             "input 1 (scale) has shape [2] but input 0 has length 3 along "
             "axis 1: the scale must be [3] or a scalar");
        fail("[1] scale with an axis of 3", "Dequantize", I8, F32, 1, s1, -1,
             NULL, I8, 1, 0, "input 1 (scale) has shape [1] but input 0 has "
             "length 3 along axis 1");
        fail("scale of rank 2", "Quantize", F32, F32, 2, s23, -1, NULL, I8,
             1, 0, "input 1 (scale) must have rank 0 or 1, got shape [2, 3]");
        fail("zero point of another shape", "Quantize", F32, F32, 1, s3, 0,
             NULL, I8, 1, 0, "input 2 (zero_point) has shape [] but input 1 "
             "(scale) has shape [3]");
        fail("int32 zero point", "Quantize", F32, F32, 1, s3, 1, s3,
             MICA_INT32, 1, 0, "input 2 (zero_point) must be int8, got int32");
        fail("float32 zero point", "Quantize", F32, F32, 1, s3, 1, s3, F32,
             1, 0, "input 2 ('in2') of type float32 is not supported");
        fail("int32 x", "Quantize", MICA_INT32, F32, 1, s3, -1, NULL, I8, 1,
             0, "Quantize takes float32 or float16 input 0 (x), got int32");
        fail("float x", "Dequantize", F32, F32, 1, s3, -1, NULL, I8, 1, 0,
             "Dequantize takes int8 input 0 (x), got float32");
        fail("int8 scale", "Dequantize", I8, I8, 1, s3, -1, NULL, I8, 1, 0,
             "input 1 (scale) must be float32 or float16, got int8");
        fail("runtime length against the scale", "Quantize", F32, F32, 1, s4,
             -1, NULL, I8, 1, 2u,
             "input 1 (scale) has shape [4] but input 0 has length 3 along "
             "axis 1");
    }
    return exit_status();
}
