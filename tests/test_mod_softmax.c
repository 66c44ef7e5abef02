/*
 * tests/test_mod_softmax.c - the SoftMax and RaggedSoftMax layers: every
 * case on the CPU reference against NumPy's values (tests/gen/layers.py),
 * then on CUDA against the CPU (skipped without a GPU).
 *
 * Covered: the default axis for ranks 1 to 4, every axis of a rank-4
 * tensor, |x| up to 400, -inf entries, float16, runtime dimensions,
 * empty tensors, and rows long enough for each CUDA kernel (warp,
 * block, two-pass; strided axes short and long) against values computed
 * here in long double; RaggedSoftMax's bounds (0, negative, past the
 * row) and the zeros past a bound; the errors.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "gen/gen_th.h"
#include "gen/ragged_cases.h"
#include "gen/softmax_cases.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

static th_fields_t *axis_f(int64_t axis)
{
    th_fields_t *f = th_fields();
    return axis >= 0 ? th_f_int(f, "axis", axis) : f;
}

static void fixtures(void)
{
    int c;
    char label[160];

    for (c = 0; c < GEN_COUNT(softmax_cases); c++) {
        const gen_case_t *g = &softmax_cases[c];
        th_tensor_t x = gen_th(&g->in[0]), y = gen_th(&g->out[0]);
        double tol = g->in[0].dtype == F16 ? 2e-3 : 1e-6;
        th_check(g->label, "SoftMax", axis_f(g->p0), 1, &x, 1, &y, tol);
        snprintf(label, sizeof label, "%s, runtime dimensions", g->label);
        x = th_runtime(x, TH_ALL_DIMS);
        th_check(label, "SoftMax", axis_f(g->p0), 1, &x, 1, &y, tol);
        th_free(&x);
        th_free(&y);
    }
    for (c = 0; c < GEN_COUNT(ragged_cases); c++) {
        const gen_case_t *g = &ragged_cases[c];
        th_tensor_t in[2], y = gen_th(&g->out[0]);
        double tol = g->in[0].dtype == F16 ? 2e-3 : 1e-6;
        gen_ths(g->in, 2, in);
        th_check(g->label, "RaggedSoftMax", NULL, 2, in, 1, &y, tol);
        snprintf(label, sizeof label, "RaggedSoftMax %s, runtime dimensions",
                 g->label);
        in[0] = th_runtime(in[0], TH_ALL_DIMS);
        in[1] = th_runtime(in[1], TH_ALL_DIMS);
        th_check(label, "RaggedSoftMax", NULL, 2, in, 1, &y, tol);
        gen_free(in, 2);
        th_free(&y);
    }
}

/* x[i] of the generated long cases: values in [-30, 30), repeating;
 * with `special`, runs of -inf (whole parts of rows) and a NaN now and
 * then. */
static int special;

static double long_x(int64_t i)
{
    if (special && i % 4099 == 17)
        return NAN;
    if (special && (i / 300) % 3 == 1)
        return -INFINITY;
    return (double)((i * 7919) % 6007) / 100.0 - 30.0;
}

/*
 * [outer, len, inner] of `dtype` along axis 1, with values from long_x,
 * against softmax computed here in long double: the CPU within 1e-6 (2e-3
 * for float16), CUDA against the CPU.
 */
static void long_case(const char *label, mica_dtype_t dtype, int64_t outer,
                      int64_t len, int64_t inner)
{
    int64_t dims[3] = {outer, len, inner}, o, j, i;
    th_tensor_t x = th_tensor(dtype, 3, dims, NULL), y;

    for (j = 0; j < outer * len * inner; j++)
        th_set(&x, j, long_x(j));
    y = th_tensor(dtype, 3, dims, NULL);
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            long double m = -INFINITY, s = 0;
            for (j = 0; j < len; j++)
                if (th_get(&x, (o * len + j) * inner + i) > m)
                    m = th_get(&x, (o * len + j) * inner + i);
            for (j = 0; j < len; j++)
                s += expl(th_get(&x, (o * len + j) * inner + i) - m);
            if (m == -INFINITY) /* all -inf (or NaN): NaN, as the layer */
                s = NAN;
            for (j = 0; j < len; j++)
                th_set(&y, (o * len + j) * inner + i,
                       (double)(expl(th_get(&x, (o * len + j) * inner + i) -
                                     m) / s));
        }
    th_check(label, "SoftMax", axis_f(1), 1, &x, 1, &y,
             dtype == F16 ? 2e-3 : 1e-6);
    th_free(&x);
    th_free(&y);
}

static void long_rows(void)
{
    static const int64_t f32_lens[] = {16, 32, 64, 128, 256, 512, 1024,
                                       2048, 4096, 8192};
    static const int64_t f16_lens[] = {32, 64, 128, 256, 512, 1024, 2048,
                                       4096, 8192};
    char label[96];
    size_t i;

    /* Every group and block kernel of 16-byte loads, with a row count
     * that leaves the last block part empty. */
    for (i = 0; i < sizeof f32_lens / sizeof f32_lens[0]; i++) {
        snprintf(label, sizeof label, "rows of %lld", (long long)f32_lens[i]);
        long_case(label, F32, 8192 / f32_lens[i] * 3 + 5, f32_lens[i], 1);
    }
    for (i = 0; i < sizeof f16_lens / sizeof f16_lens[0]; i++) {
        snprintf(label, sizeof label, "float16 rows of %lld",
                 (long long)f16_lens[i]);
        long_case(label, F16, 8192 / f16_lens[i] * 3 + 5, f16_lens[i], 1);
    }
    long_case("group kernel, 128 long, many rows", F32, 3001, 128, 1);
    long_case("rows of 5 (one element a load)", F32, 1003, 5, 1);
    long_case("rows of 30 (one element a load)", F16, 301, 30, 1);
    long_case("rows of 100 (one element a load)", F32, 301, 100, 1);
    long_case("rows of 1000 (one element a load)", F32, 70, 1000, 1);
    long_case("rows of 3001 (one element a load)", F16, 7, 3001, 1);
    long_case("block kernel, 8191 long", F32, 3, 8191, 1);
    long_case("two-pass kernel, 20000 long", F32, 3, 20000, 1);
    long_case("float16 two-pass kernel, 17000 long", F16, 2, 17000, 1);
    long_case("strided, 5 long", F32, 7, 5, 33);
    long_case("strided, 32 long", F16, 3, 32, 40);
    long_case("strided tiles, 300 long", F32, 2, 300, 17);
    long_case("strided tiles, 4096 long, 100 columns", F32, 1, 4096, 100);
    long_case("float16 strided tiles, 1000 long, 3 columns", F16, 5, 1000,
              3);
    special = 1;
    long_case("-inf runs and NaN, rows of 128", F32, 40, 128, 1);
    long_case("-inf runs and NaN, float16 rows of 1024", F16, 20, 1024, 1);
    long_case("-inf runs and NaN, rows of 4096", F32, 9, 4096, 1);
    long_case("-inf runs and NaN, float16 rows of 8192", F16, 4, 8192, 1);
    long_case("-inf runs and NaN, rows of 10000", F32, 3, 10000, 1);
    long_case("-inf runs and NaN, strided tiles", F32, 2, 1000, 40);
    special = 0;
}

static void empty(void)
{
    static const int64_t d0[2] = {0, 5}, d1[2] = {3, 0};
    th_tensor_t x = th_tensor(F32, 2, d0, NULL), b;

    th_check("empty rows", "SoftMax", axis_f(1), 1, &x, 1, &x, 0);
    th_free(&x);
    x = th_tensor(F32, 2, d1, NULL);
    th_check("empty axis", "SoftMax", axis_f(1), 1, &x, 1, &x, 0);
    th_free(&x);
    x = th_tensor(F32, 2, d0, NULL);
    b = th_tensor(MICA_INT32, 2, (const int64_t[]){0, 1}, NULL);
    {
        th_tensor_t in[2] = {x, b};
        th_check("RaggedSoftMax of no rows", "RaggedSoftMax", NULL, 2, in, 1,
                 &x, 0);
    }
    th_free(&x);
    th_free(&b);
}

static void errors(void)
{
    static const double v[6] = {1, 2, 3, 4, 5, 6};
    th_tensor_t x = th_t(F32, v, 2, 2, 3), s = th_t(F32, v, 0);
    th_tensor_t xi = th_t(MICA_INT32, v, 2, 2, 3);
    th_tensor_t b = th_t(MICA_INT32, v, 2, 2, 1), in[2];

    th_check_error("axis past the rank", "SoftMax", axis_f(2), 1, &x, 1,
                   "axis 2 is out of range for rank 2 (0 to 1)");
    th_check_error("negative axis", "SoftMax",
                   th_f_int(th_fields(), "axis", -1), 1, &x, 1,
                   "axis must be 0 or more");
    th_check_error("rank 0", "SoftMax", NULL, 1, &s, 1,
                   "x must have rank >= 1, got 0");
    th_check_error("int32 input", "SoftMax", NULL, 1, &xi, 1,
                   "x must be float32 or float16, got int32");
    in[0] = x;
    in[1] = xi;
    th_check_error("bounds [2, 3]", "RaggedSoftMax", NULL, 2, in, 1,
                   "bounds must have 1 as last dimension, got 3");
    in[1] = th_t(F32, v, 2, 2, 1);
    th_check_error("float bounds", "RaggedSoftMax", NULL, 2, in, 1,
                   "bounds must be int32, got float32");
    th_free(&in[1]);
    in[1] = th_t(MICA_INT32, v, 2, 3, 1);
    th_check_error("bounds for 3 rows", "RaggedSoftMax", NULL, 2, in, 1,
                   "bounds dimension 0 is 3 but x's is 2");
    th_free(&in[1]);
    in[0] = th_t(F32, v, 1, 6);
    in[1] = b;
    th_check_error("rank 1", "RaggedSoftMax", NULL, 2, in, 1,
                   "x must have rank 2 [rows, len] or 3, got 1");
    th_free(&in[0]);
    th_free(&x);
    th_free(&s);
    th_free(&xi);
    th_free(&b);
}

int main(void)
{
    plan_lazy();
    th_context();
    fixtures();
    long_rows();
    empty();
    errors();
    return exit_status();
}
