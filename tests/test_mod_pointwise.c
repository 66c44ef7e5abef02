/*
 * tests/test_mod_pointwise.c - the Pointwise module: programs against
 * values computed here (double arithmetic, broadcasting done
 * independently): chains, broadcasting of a scalar, a row and a channel,
 * several classes of outputs, float16, integers that wrap and saturate,
 * bool logic and Select, casts (truncation, saturation, NaN), Scale in
 * its three modes, NaN and infinities, an input as an output, empty
 * tensors, tensors of several blocks, runtime dimensions; each on the CPU
 * and on CUDA against the CPU (harness.h), and channels last on CUDA.
 * The CPU's float16 and bfloat16 conversions bit for bit against the
 * kit's (tests/test_pointwise_portable.sh: again without F16C).
 * Then the errors: the program's syntax, names, types, operand counts
 * and params, inner broadcasts and Scale's counts at build time and at
 * run time.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mica/kit_half.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define I32 MICA_INT32
#define I8 MICA_INT8
#define BOOL MICA_BOOL

/* Fields of a program of n lines and m results (NULL-terminated lists
 * given inline). */
static th_fields_t *prog(const char *const *lines, const char *const *res)
{
    int n = 0, m = 0;
    while (lines[n])
        n++;
    while (res[m])
        m++;
    return th_f_strs(th_f_strs(th_fields(), "program", n, lines), "results",
                     m, res);
}

#define LINES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Element i of t broadcast to dims od (rank r). */
static double at(const th_tensor_t *t, const int64_t *od, int r, int64_t i)
{
    int64_t off = 0, s = 1;
    int k;
    for (k = r - 1; k >= 0; k--) {
        int64_t c = i % od[k];
        i /= od[k];
        if (t->dims.d[k] != 1)
            off += c * s;
        s *= t->dims.d[k];
    }
    return th_get(t, off);
}

static double lrelu(double x, double a) { return x >= 0 ? x : a * x; }

static void chains(void)
{
    double a[6] = {-2, -0.5, 0, 0.5, 1.5, 3}, b[6] = {1, 1, -1, 2, -4, 0.25};
    th_tensor_t in[4], want[2];
    int64_t i, od[3] = {2, 3, 4};

    /* sum, prod, leaky_relu over one shape */
    in[0] = th_t(F32, a, 2, 2, 3);
    in[1] = th_t(F32, b, 2, 2, 3);
    want[0] = th_t(F32, NULL, 2, 2, 3);
    for (i = 0; i < 6; i++)
        th_set(&want[0], i, lrelu((a[i] + b[i]) * b[i], 0.125));
    th_check("chain float32", "Pointwise",
             prog(LINES("t0 = sum(in0, in1)", "t1 = prod(t0, in1)",
                        "t2 = leaky_relu(t1, alpha=0.125)"),
                  LINES("t2")),
             2, in, 1, want, 1e-6);
    th_free(&want[0]);
    /* the same in float16 */
    th_free(&in[0]);
    th_free(&in[1]);
    in[0] = th_t(F16, a, 2, 2, 3);
    in[1] = th_t(F16, b, 2, 2, 3);
    want[0] = th_t(F16, NULL, 2, 2, 3);
    for (i = 0; i < 6; i++)
        th_set(&want[0], i, lrelu((a[i] + b[i]) * b[i], 0.125));
    th_check("chain float16", "Pointwise",
             prog(LINES("t0 = sum(in0, in1)", "t1 = prod(t0, in1)",
                        "t2 = leaky_relu(t1, alpha=0.125)"),
                  LINES("t2")),
             2, in, 1, want, 1e-3);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want[0]);

    /* broadcasting: a channel, a scalar and a row against [2, 3, 4] */
    in[0] = th_tensor(F32, 3, od, NULL);
    in[1] = th_tensor(F32, 3, (int64_t[]){1, 3, 1}, NULL);
    in[2] = th_tensor(F32, 3, (int64_t[]){1, 1, 1}, NULL);
    in[3] = th_tensor(F32, 3, (int64_t[]){1, 1, 4}, NULL);
    for (i = 0; i < 24; i++)
        th_set(&in[0], i, (double)(i % 7) - 3);
    for (i = 0; i < 3; i++)
        th_set(&in[1], i, 0.5 * (double)(i + 1));
    th_set(&in[2], 0, 4);
    for (i = 0; i < 4; i++)
        th_set(&in[3], i, (double)i - 1.5);
    want[0] = th_tensor(F32, 3, od, NULL);
    for (i = 0; i < 24; i++)
        th_set(&want[0], i,
               (at(&in[0], od, 3, i) - at(&in[1], od, 3, i)) /
                       at(&in[2], od, 3, i) +
                   at(&in[3], od, 3, i));
    th_check("channel, scalar and row broadcast", "Pointwise",
             prog(LINES("t0 = sub(in0, in1)", "t1 = div(t0, in2)",
                        "t2 = sum(t1, in3)"),
                  LINES("t2")),
             4, in, 1, want, 1e-6);
    th_free(&want[0]);

    /* two classes: |row| alone, and the full shape; the row first */
    want[0] = th_tensor(F32, 3, (int64_t[]){1, 1, 4}, NULL);
    want[1] = th_tensor(F32, 3, od, NULL);
    for (i = 0; i < 4; i++)
        th_set(&want[0], i, fabs((double)i - 1.5));
    for (i = 0; i < 24; i++)
        th_set(&want[1], i, at(&in[0], od, 3, i) * at(&want[0], od, 3, i));
    th_check("two classes of outputs", "Pointwise",
             prog(LINES("t0 = abs(in3)", "t1 = prod(in0, t0)"),
                  LINES("t0", "t1")),
             4, in, 2, want, 1e-6);
    th_free(&want[0]);
    th_free(&want[1]);
    /* an input as an output, beside a computed one */
    want[0] = th_tensor(F32, 3, (int64_t[]){1, 3, 1}, NULL);
    want[1] = th_tensor(F32, 3, (int64_t[]){1, 3, 1}, NULL);
    for (i = 0; i < 3; i++) {
        th_set(&want[0], i, th_get(&in[1], i));
        th_set(&want[1], i, exp(th_get(&in[1], i)));
    }
    th_check("an input as an output", "Pointwise",
             prog(LINES("e = exp(in1)"), LINES("in1", "e")), 2, in + 0, 2,
             want, 1e-6);
    th_free(&want[0]);
    th_free(&want[1]);
    for (i = 0; i < 4; i++)
        th_free(&in[i]);
}

static void integers(void)
{
    double a[4] = {2147483647, -2147483647 - 1.0, 7, -7};
    double b[4] = {1, 1, 2, 2};
    double w0[4] = {-2147483647 - 1.0, 2147483647, -5, 2};
    double w1[4] = {-2147483647 - 1.0, 2147483647, -4, 2};
    double c8[4] = {100, -100, 127, -128}, d8[4] = {100, 100, -1, 1};
    th_tensor_t in[2], want[2];

    /* int32 wraps after each line: the sum, the neg of INT32_MIN; div
     * truncates, floor_div floors */
    in[0] = th_t(I32, a, 1, 4);
    in[1] = th_t(I32, b, 1, 4);
    want[0] = th_t(I32, w0, 1, 4);
    want[1] = th_t(I32, w1, 1, 4);
    th_check("int32 wraps", "Pointwise",
             prog(LINES("t0 = sum(in0, in1)", "t1 = neg(t0)",
                        "t2 = floor_div(t1, in1)", "t3 = div(t1, in1)"),
                  LINES("t2", "t3")),
             2, in, 2, want, 0);
    th_free(&want[1]);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want[0]);
    /* int8 saturates after each line */
    in[0] = th_t(I8, c8, 1, 4);
    in[1] = th_t(I8, d8, 1, 4);
    want[0] = th_t(I8, (double[]){27, -100, 127, -128}, 1, 4);
    th_check("int8 saturates", "Pointwise",
             prog(LINES("t0 = sum(in0, in1)", "t1 = sub(t0, in1)"),
                  LINES("t1")),
             2, in, 1, want, 0);
    th_free(&want[0]);
    /* ...relu and abs on int8: abs(-128) is 127 */
    want[0] = th_t(I8, (double[]){100, 100, 127, 127}, 1, 4);
    th_check("int8 abs and relu", "Pointwise",
             prog(LINES("t0 = abs(in0)", "t1 = relu(t0)"), LINES("t1")), 2,
             in, 1, want, 0);
    th_free(&want[0]);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void logic_and_casts(void)
{
    double x[6] = {-1.5, 0.5, NAN, INFINITY, 2.7, -2.7};
    double y[6] = {0, 1, 0, 1, 3, -3};
    th_tensor_t in[2], want[3];
    int i;

    /* greater, not, select: the smaller of the two; and/or/xor */
    in[0] = th_t(F32, x, 1, 6);
    in[1] = th_t(F32, y, 1, 6);
    want[0] = th_t(F32, NULL, 1, 6);
    want[1] = th_t(BOOL, NULL, 1, 6);
    for (i = 0; i < 6; i++) {
        int g = x[i] > y[i];
        th_set(&want[0], i, !g ? x[i] : y[i]);
        th_set(&want[1], i, (g && !isnan(x[i])) != (x[i] < y[i]));
    }
    th_check("compare, not, select, xor", "Pointwise",
             prog(LINES("g = greater(in0, in1)", "n = not(g)",
                        "s = select(n, in0, in1)", "l = less(in0, in1)",
                        "q = isnan(in0)", "nq = not(q)", "gq = and(g, nq)",
                        "x = xor(gq, l)"),
                  LINES("s", "x")),
             2, in, 2, want, 0);
    th_free(&want[0]);
    th_free(&want[1]);
    /* casts: float32 to int32 truncates, NaN 0, inf saturates; to int8
     * saturates; to bool is x != 0 (NaN true); back to float16 */
    want[0] = th_t(I32, (double[]){-1, 0, 0, 2147483647, 2, -2}, 1, 6);
    want[1] = th_t(I8, (double[]){-1, 0, 0, 127, 2, -2}, 1, 6);
    want[2] = th_t(F16, (double[]){1, 1, 1, 1, 1, 1}, 1, 6);
    th_check("casts", "Pointwise",
             prog(LINES("i = cast(in0, dtype=int32)",
                        "b = cast(in0, dtype=int8)",
                        "t = cast(in0, dtype=bool)",
                        "h = cast(t, dtype=float16)"),
                  LINES("i", "b", "h")),
             2, in, 3, want, 0);
    for (i = 0; i < 3; i++)
        th_free(&want[i]);
    /* NaN and infinities through max, relu, isinf, sign */
    want[0] = th_t(F32, (double[]){0, 1, 0, INFINITY, 3, 0}, 1, 6);
    want[1] = th_t(BOOL, (double[]){0, 0, 0, 1, 0, 0}, 1, 6);
    want[2] = th_t(F32, (double[]){-1, 1, NAN, 1, 1, -1}, 1, 6);
    th_check("NaN and infinities", "Pointwise",
             prog(LINES("m = max(in0, in1)", "r = relu(m)",
                        "f = isinf(in0)", "s = sign(in0)"),
                  LINES("r", "f", "s")),
             2, in, 3, want, 0);
    for (i = 0; i < 3; i++)
        th_free(&want[i]);
    th_free(&in[0]);
    th_free(&in[1]);
}

/* const values: float (hexadecimal, NaN), float16 rounded, integer */
static void consts(void)
{
    th_tensor_t in[2], want[3];
    int i;

    in[0] = th_t(F32, (double[]){-1.5, 0, 2, 3.25}, 2, 2, 2);
    in[1] = th_t(MICA_INT32, (double[]){7, -7, 100, 0}, 2, 2, 2);
    want[0] = th_t(F32, NULL, 2, 2, 2);
    want[1] = th_t(F16, NULL, 2, 2, 2);
    want[2] = th_t(MICA_INT32, NULL, 2, 2, 2);
    for (i = 0; i < 4; i++) {
        double x = th_get(&in[0], i);
        th_set(&want[0], i, fmax(x * 0.75, NAN));
        /* 0.1 as a float16 is 0.0999755859375 */
        th_set(&want[1], i, x + 0.0999755859375);
        th_set(&want[2], i, th_get(&in[1], i) * -3);
    }
    th_check("const values", "Pointwise",
             prog(LINES("a = const(value=0x1.8p-1, dtype=float32)",
                        "n = const(value=nan, dtype=float32)",
                        "p = prod(in0, a)", "y = max(p, n)",
                        "h = cast(in0, dtype=float16)",
                        "c = const(value=0.1, dtype=float16)",
                        "z = sum(h, c)",
                        "k = const(value=-3, dtype=int32)",
                        "w = prod(in1, k)"),
                  LINES("y", "z", "w")),
             2, in, 3, want, 1e-6);
    for (i = 0; i < 3; i++)
        th_free(&want[i]);
    th_free(&in[0]);
    th_free(&in[1]);
}

static void scales(void)
{
    th_tensor_t in[1], want, w[3];
    int64_t od[3] = {2, 3, 2}, i;
    th_fields_t *f;

    in[0] = th_tensor(F32, 3, od, NULL);
    for (i = 0; i < 12; i++)
        th_set(&in[0], i, (double)i * 0.25 - 1);
    w[0] = th_t(F32, (double[]){1, 2, 3}, 1, 3);        /* shift */
    w[1] = th_t(F16, (double[]){0.5, -1, 2}, 1, 3);     /* scale */
    w[2] = th_t(F32, (double[]){2, 1, 3}, 1, 3);        /* power */
    want = th_tensor(F32, 3, od, NULL);
    for (i = 0; i < 12; i++) {
        int64_t c = (i / 2) % 3;
        double v = th_get(&in[0], i) * th_get(&w[1], c) + th_get(&w[0], c);
        th_set(&want, i, pow(v, th_get(&w[2], c)) * 2.0);
    }
    f = prog(LINES("t0 = scale(in0, mode=channel, axis=1, shift=w0, "
                   "scale=w1, power=w2)",
                   "t1 = scale(t0, scale=w3)"),
             LINES("t1"));
    {
        th_tensor_t all[4] = {w[0], w[1], w[2],
                              th_t(F32, (double[]){2}, 1, 1)};
        th_f_weights_list(f, "weights", 4, all);
        th_free(&all[3]);
    }
    th_check("scale channel with power, then uniform", "Pointwise", f, 1, in,
             1, &want, 1e-5);
    th_free(&want);
    /* elementwise from axis 1: 6 coefficients */
    want = th_tensor(F32, 3, od, NULL);
    for (i = 0; i < 12; i++)
        th_set(&want, i, th_get(&in[0], i) + (double)(i % 6));
    f = prog(LINES("t0 = scale(in0, mode=elementwise, axis=1, shift=w0)"),
             LINES("t0"));
    {
        th_tensor_t s = th_t(F32, (double[]){0, 1, 2, 3, 4, 5}, 1, 6);
        th_f_weights_list(f, "weights", 1, &s);
        th_free(&s);
    }
    th_check("scale elementwise", "Pointwise", f, 1, in, 1, &want, 1e-6);
    th_free(&want);
    /* a count that does not fit the input: refused at build time */
    f = prog(LINES("t0 = scale(in0, mode=channel, axis=2, shift=w0)"),
             LINES("t0"));
    th_f_weights_list(f, "weights", 1, w);
    th_check_error("scale count at build", "Pointwise", f, 1, in, 1,
                   "needs 2 coefficients but the weights have 3");
    for (i = 0; i < 3; i++)
        th_free(&w[i]);
    th_free(&in[0]);
}

static void sizes(void)
{
    th_tensor_t in[2], want[1];
    int64_t i, n = 1003, big[2] = {17, 59}, row[2] = {1, 59};

    /* several blocks, with a tail, flat */
    in[0] = th_tensor(F32, 1, &n, NULL);
    want[0] = th_tensor(F32, 1, &n, NULL);
    for (i = 0; i < n; i++) {
        double v = (double)(i % 37) * 0.1 - 1.7;
        th_set(&in[0], i, v);
        th_set(&want[0], i, tanh(v) * 2);
    }
    th_check("1003 elements", "Pointwise",
             prog(LINES("t = tanh(in0)", "u = sum(t, t)", "w = isnan(in0)",
                        "r = select(w, in0, u)",
                        "v = cast(r, dtype=float32)"),
                  LINES("v")),
             1, in, 1, want, 1e-5);
    th_free(&in[0]);
    th_free(&want[0]);
    /* several blocks, broadcast rows */
    in[0] = th_tensor(F32, 2, big, NULL);
    in[1] = th_tensor(F32, 2, row, NULL);
    want[0] = th_tensor(F32, 2, big, NULL);
    for (i = 0; i < 59; i++)
        th_set(&in[1], i, (double)i * 0.01);
    for (i = 0; i < 17 * 59; i++) {
        th_set(&in[0], i, (double)(i % 11));
        th_set(&want[0], i, (double)(i % 11) * ((double)(i % 59) * 0.01));
    }
    th_check("broadcast rows over blocks", "Pointwise",
             prog(LINES("p = prod(in0, in1)"), LINES("p")), 2, in, 1, want,
             1e-6);
    /* the same with runtime dimensions */
    in[0] = th_runtime(in[0], TH_ALL_DIMS);
    in[1] = th_runtime(in[1], 2);
    th_check("runtime dimensions", "Pointwise",
             prog(LINES("p = prod(in0, in1)"), LINES("p")), 2, in, 1, want,
             1e-6);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want[0]);
    /* empty */
    in[0] = th_tensor(F32, 2, (int64_t[]){0, 3}, NULL);
    in[1] = th_tensor(F32, 2, (int64_t[]){1, 3}, NULL);
    want[0] = th_tensor(F32, 2, (int64_t[]){0, 3}, NULL);
    th_check("empty", "Pointwise", prog(LINES("s = sum(in0, in1)"),
                                        LINES("s")),
             2, in, 1, want, 0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want[0]);
}

static void channels_last(void)
{
    th_tensor_t in[2], want;
    int64_t d[4] = {2, 3, 2, 2}, c[4] = {1, 3, 1, 1}, i;

    in[0] = th_tensor(F16, 4, d, NULL);
    in[1] = th_tensor(F16, 4, c, NULL);
    want = th_tensor(F16, 4, d, NULL);
    for (i = 0; i < 3; i++)
        th_set(&in[1], i, (double)i + 1);
    for (i = 0; i < 24; i++) {
        th_set(&in[0], i, (double)(i % 5) - 2);
        th_set(&want, i, ((double)(i % 5) - 2) * ((double)((i / 4) % 3) + 1));
    }
    th_channels_last(1);
    th_check("channels last (CUDA)", "Pointwise",
             prog(LINES("p = prod(in0, in1)"), LINES("p")), 2, in, 1, &want,
             1e-3);
    th_channels_last(0);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&want);
}

/* Run program `line` (one line, result y) on input x; 1 if the output's
 * raw bits are want's, with the first difference said otherwise. */
static void bits(const char *label, const char *line, int nb_in,
                 const th_tensor_t *x, const th_tensor_t *want)
{
    th_tensor_t got;
    size_t es = mica_dtype_size(want->dtype);
    int64_t i, n = th_volume(want);
    int good;
    th_fields_t *f = prog((const char *const[]){line, NULL}, LINES("y"));
    mica_status_t st = th_run(MICA_DEVICE_CPU, "Pointwise", f, nb_in, x, 1,
                              &got);

    th_fields_free(f);

    good = st == MICA_OK && got.dtype == want->dtype &&
           th_volume(&got) == n;
    for (i = 0; good && i < n; i++)
        if (memcmp((char *)got.data + i * (int64_t)es,
                   (char *)want->data + i * (int64_t)es, es)) {
            uint32_t a = 0, b = 0, in = 0;
            memcpy(&a, (char *)got.data + i * (int64_t)es, es);
            memcpy(&b, (char *)want->data + i * (int64_t)es, es);
            memcpy(&in, (char *)x[0].data + i * (int64_t)mica_dtype_size(
                                                  x[0].dtype),
                   mica_dtype_size(x[0].dtype));
            diag("element %lld (input bits 0x%x): 0x%x, expected 0x%x",
                 (long long)i, (unsigned)in, (unsigned)a, (unsigned)b);
            good = 0;
        }
    if (st != MICA_OK)
        diag("%s", th_error());
    ok(good, "%s: bit for bit as mica/kit_half.h (%lld values)", label,
       (long long)n);
    if (st == MICA_OK)
        th_free(&got);
}

/*
 * The CPU's float16 and bfloat16 conversions (F16C, or the portable ones
 * with $MICA_POINTWISE_NO_F16C) against the kit's, bit for bit: every
 * float16 value to float32; floats of every exponent, with mantissas at
 * the rounding's edges, to float16 and bfloat16; products rounded to
 * float16 over every float16 value.
 */
static void conversions(void)
{
    static const uint32_t mant[] = {
        0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x5000,
        0x7fff, 0x8000, 0x8001, 0x18000, 0x400000, 0x7fe000, 0x7ff000,
        0x7fffff, 0x123456, 0x654321};
    int64_t nh = 65536, nf = 2 * 256 * (int64_t)(sizeof mant / sizeof *mant);
    th_tensor_t h = th_tensor(F16, 1, &nh, NULL), f = th_tensor(F32, 1, &nf,
                                                                NULL);
    th_tensor_t want, two[2];
    int64_t i;

    for (i = 0; i < nh; i++)
        ((uint16_t *)h.data)[i] = (uint16_t)i;
    want = th_tensor(F32, 1, &nh, NULL);
    for (i = 0; i < nh; i++)
        ((float *)want.data)[i] = mica_kit_half_to_float((uint16_t)i);
    bits("every float16 to float32", "y = cast(in0, dtype=float32)", 1, &h,
         &want);
    th_free(&want);

    for (i = 0; i < nf; i++) {
        int64_t k = i / 2;
        uint32_t u = (uint32_t)(i % 2) << 31 |
                     (uint32_t)(k / (int64_t)(sizeof mant / sizeof *mant))
                         << 23 |
                     mant[k % (int64_t)(sizeof mant / sizeof *mant)];
        memcpy((float *)f.data + i, &u, 4);
    }
    want = th_tensor(F16, 1, &nf, NULL);
    for (i = 0; i < nf; i++)
        ((uint16_t *)want.data)[i] =
            mica_kit_float_to_half(((float *)f.data)[i]);
    bits("floats of every exponent to float16", "y = cast(in0, "
         "dtype=float16)", 1, &f, &want);
    th_free(&want);
    want = th_tensor(MICA_BFLOAT16, 1, &nf, NULL);
    for (i = 0; i < nf; i++)
        ((uint16_t *)want.data)[i] =
            mica_kit_float_to_bf16(((float *)f.data)[i]);
    bits("floats of every exponent to bfloat16", "y = cast(in0, "
         "dtype=bfloat16)", 1, &f, &want);
    th_free(&want);

    /* float16 products: every value times 1 + 2^-10 (rounding at every
     * exponent, into subnormals, overflow), then times 3 */
    two[0] = h;
    two[1] = th_tensor(F16, 1, &nh, NULL);
    want = th_tensor(F16, 1, &nh, NULL);
    for (i = 0; i < nh; i++) {
        float a = mica_kit_half_to_float((uint16_t)i);
        float b = i % 2 ? 3.0f : 1.0009765625f;
        ((uint16_t *)two[1].data)[i] = mica_kit_float_to_half(b);
        ((uint16_t *)want.data)[i] = mica_kit_float_to_half(a * b);
    }
    bits("float16 products rounded", "y = prod(in0, in1)", 2, two, &want);
    th_free(&want);
    th_free(&two[1]);
    th_free(&h);
    th_free(&f);
}

static void errors(void)
{
    th_tensor_t in[2];

    in[0] = th_t(F32, (double[]){1, 2, 3}, 1, 3);
    in[1] = th_t(I32, (double[]){1, 2, 3}, 1, 3);
#define ERR(label, lines, res, n, needle)                                   \
    th_check_error(label, "Pointwise", prog(lines, res), n, in, 1, needle)
    ERR("unknown op", LINES("t = foo(in0)"), LINES("t"), 1,
        "line 1 ('t = foo(in0)'): unknown op 'foo'");
    ERR("undefined value", LINES("t = exp(u)"), LINES("t"), 1,
        "'u' is not defined before this line");
    ERR("operand count", LINES("t = sum(in0)"), LINES("t"), 1,
        "op 'sum' takes 2 operands, got 1");
    ERR("unknown param", LINES("t = exp(in0, alpha=1)"), LINES("t"), 1,
        "op 'exp' has no param 'alpha'");
    ERR("bad float", LINES("t = elu(in0, alpha=x)"), LINES("t"), 1,
        "'alpha' must be a finite float32, got 'x'");
    ERR("missing dtype", LINES("t = cast(in0)"), LINES("t"), 1,
        "cast needs its 'dtype'");
    ERR("twice defined", LINES("t = exp(in0)", "t = log(in0)"), LINES("t"),
        1, "'t' is defined twice");
    ERR("reserved name", LINES("in3 = exp(in0)"), LINES("in3"), 1,
        "'in3' is reserved");
    ERR("trailing text", LINES("t = exp(in0) x"), LINES("t"), 1,
        "unexpected 'x' after ')'");
    ERR("no weights", LINES("t = scale(in0, scale=w0)"), LINES("t"), 1,
        "'scale' is 'w0' but param 'weights' gives none");
    ERR("unknown result", LINES("t = exp(in0)"), LINES("u"), 1,
        "param 'results': 'u' (output 0) is no value of the program");
    ERR("input beyond", LINES("t = sum(in0, in5)"), LINES("t"), 1,
        "the program reads in5 but the layer has 1 input");
    ERR("type", LINES("t = sigmoid(in1)"), LINES("t"), 2,
        "program line 1 (t): op 'sigmoid' takes float32 or float16 input, "
        "got int32");
    ERR("mixed types", LINES("t = sum(in0, in1)"), LINES("t"), 2,
        "operand 1 has type int32 but operand 0 has type float32");
    ERR("select cond", LINES("t = select(in0, in0, in0)"), LINES("t"), 1,
        "select's cond has type float32 but must be bool");
    ERR("results of consts alone", LINES("c = const(value=1, dtype=int32)"),
        LINES("c"), 1, "output 0 reads no input (only const values)");
    ERR("const out of its type", LINES("c = const(value=300, dtype=int8)",
                                       "t = cast(in0, dtype=int8)",
                                       "u = sum(t, c)"),
        LINES("u"), 1, "'value' is '300': not an integer of type int8");
    th_free(&in[1]);
    in[1] = th_t(F32, (double[]){1, 2, 3, 4}, 1, 4);
    ERR("inner broadcast", LINES("t = exp(in1)", "u = sum(in0, t)"),
        LINES("u"), 2, "must be equal or one of them 1");
#undef ERR
    th_free(&in[0]);
    th_free(&in[1]);
}

int main(void)
{
    plan_lazy();
    chains();
    integers();
    logic_and_casts();
    consts();
    scales();
    sizes();
    channels_last();
    conversions();
    errors();
    return exit_status();
}
