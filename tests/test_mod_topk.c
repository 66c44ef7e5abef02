/*
 * tests/test_mod_topk.c - the TopK layer: every case on the CPU reference
 * against independently computed values (NumPy cases from
 * tests/gen/layers.py; large rows against a counting selection done here),
 * then on CUDA against the CPU (skipped without a GPU).
 *
 * Covered: max and min, ties (lower index first, -0 equal to +0), NaN and
 * infinities, k = 1 and k = the axis length, k = 3840, every CUDA kernel
 * (short rows, argmax by warp and by block, with and without 16-byte
 * loads; radix select gathering after one or two passes, and with more
 * equal keys at the k-th place than it gathers at once), a strided
 * axis, float16, int32, runtime dimensions, empty outer dimensions, and
 * the errors (k too large at build and at run time, k past 3840, a bad
 * axis, a bad type).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "gen/gen_th.h"
#include "gen/topk_cases.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define I32 MICA_INT32

static th_fields_t *topk_f(const char *op, int64_t k, int64_t axis)
{
    th_fields_t *f = th_f_int(th_f_str(th_fields(), "op", op), "k", k);
    return axis >= 0 ? th_f_int(f, "axis", axis) : f;
}

static void fixtures(void)
{
    char label[160];
    int c;

    for (c = 0; c < GEN_COUNT(topk_cases); c++) {
        const gen_case_t *g = &topk_cases[c];
        th_tensor_t x = gen_th(&g->in[0]), want[2];
        gen_ths(g->out, 2, want);
        th_check(g->label, "TopK", topk_f(g->text, g->p0, g->p1), 1, &x, 2,
                 want, 0);
        snprintf(label, sizeof label, "%s, runtime dimensions", g->label);
        x = th_runtime(x, TH_ALL_DIMS);
        th_check(label, "TopK", topk_f(g->text, g->p0, g->p1), 1, &x, 2,
                 want, 0);
        th_free(&x);
        gen_free(want, 2);
    }
}

/* Integers 0..999 in a scrambled order, each value several times. */
static double big_x(int64_t i)
{
    return (double)((i * 7919) % 1000);
}

/* Mostly 3s, with a few larger values and NaNs between them: more equal
 * keys at the k-th place than the radix select gathers at once. */
static double flat_x(int64_t i)
{
    if (i % 389 == 0)
        return NAN;
    return i % 97 == 0 ? (double)(999 - i % 5) : 3.0;
}

/* Whether v is the value of rank `level` (0 the best) for max or min:
 * NaN above 999, then 999 down to 0. */
static int at_level(double v, int64_t level, int is_max)
{
    int64_t l = is_max ? level : 1000 - level;
    return l == 0 ? isnan(v) : v == (double)(1000 - l);
}

/*
 * x [outer, len, inner] of xf (integers 0..999 or NaN), TopK along axis
 * 1 against a counting selection: for each value from the best down,
 * the positions holding it in increasing order, until k are taken.
 */
static void big_case_of(const char *label, mica_dtype_t dtype, int is_max,
                        int64_t outer, int64_t len, int64_t inner, int32_t k,
                        int runtime, double (*xf)(int64_t))
{
    int64_t dims[3] = {outer, len, inner}, odims[3] = {outer, k, inner};
    int64_t o, i, j, n, v;
    th_tensor_t x = th_tensor(dtype, 3, dims, NULL), want[2];

    for (j = 0; j < outer * len * inner; j++)
        th_set(&x, j, xf(j));
    want[0] = th_tensor(dtype, 3, odims, NULL);
    want[1] = th_tensor(I32, 3, odims, NULL);
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            n = 0;
            for (v = 0; v <= 1000 && n < k; v++)
                for (j = 0; j < len && n < k; j++) {
                    int64_t at = (o * len + j) * inner + i;
                    if (at_level(th_get(&x, at), v, is_max)) {
                        int64_t to = (o * k + n) * inner + i;
                        th_set(&want[0], to, th_get(&x, at));
                        th_set(&want[1], to, (double)j);
                        n++;
                    }
                }
        }
    if (runtime)
        x = th_runtime(x, TH_ALL_DIMS);
    th_check(label, "TopK", topk_f(is_max ? "max" : "min", k, 1), 1, &x, 2,
             want, 0);
    th_free(&x);
    gen_free(want, 2);
}

static void big_case(const char *label, mica_dtype_t dtype, int is_max,
                     int64_t outer, int64_t len, int64_t inner, int32_t k,
                     int runtime)
{
    big_case_of(label, dtype, is_max, outer, len, inner, k, runtime, big_x);
}

static void big(void)
{
    big_case("radix select, 1 row of 32000, max k 100", F32, 1, 1, 32000, 1,
             100, 0);
    big_case("radix select, 2 rows of 32000, max k 100", F32, 1, 2, 32000, 1,
             100, 1);
    big_case("radix select, 3 rows of 5000, max k 3840", F32, 1, 3, 5000, 1,
             3840, 0);
    big_case("radix select, min k 700", F32, 0, 2, 3000, 1, 700, 0);
    big_case("radix select, strided, k 50", F32, 1, 1, 3000, 3, 50, 0);
    big_case("float16 radix select, k 64", F16, 1, 2, 5000, 1, 64, 0);
    big_case("int32 radix select, min k 9", I32, 0, 3, 777, 1, 9, 0);
    big_case("argmax by block, 40000 long", F32, 1, 4, 40000, 1, 1, 0);
    big_case("argmin by block, 40000 long", F32, 0, 4, 40000, 1, 1, 0);
    big_case("argmax by block, 40001 long (no vectors)", F32, 1, 3, 40001, 1,
             1, 0);
    big_case("float16 argmax by block, 5000 long", F16, 1, 5, 5000, 1, 1, 0);
    big_case("int32 argmin by block, 3000 long", I32, 0, 5, 3000, 1, 1, 0);
    big_case("argmax by block, strided", F32, 1, 2, 3000, 3, 1, 0);
    big_case("radix select, 256 rows of 32000, max k 100", F32, 1, 256, 32000,
             1, 100, 0);
    big_case("radix select, 3001 long (no vectors), k 300", F32, 1, 2, 3001,
             1, 300, 0);
    big_case("radix select, one pass, k 2", F32, 1, 3, 100, 1, 2, 0);
    big_case_of("radix select, NaN and 19000 equal keys, max k 1000", F32, 1,
                2, 20000, 1, 1000, 0, flat_x);
    big_case_of("radix select, NaN and 19000 equal keys, min k 3840", F32, 0,
                2, 20000, 1, 3840, 0, flat_x);
    big_case_of("float16 radix select, equal keys, strided, min k 100", F16,
                0, 1, 6000, 2, 100, 0, flat_x);
    big_case_of("argmax by block, NaN", F32, 1, 2, 20000, 1, 1, 0, flat_x);
    big_case("argmin by warp, 200 long", F32, 0, 300, 200, 1, 1, 0);
    big_case("argmax by warp, strided", F16, 1, 30, 500, 7, 1, 0);
    big_case("short rows, k 5", F32, 1, 1000, 40, 1, 5, 0);
    big_case("short rows, strided, min k 64", F32, 0, 3, 64, 5, 64, 0);
}

static void empty_and_errors(void)
{
    static const int64_t d0[2] = {0, 6}, dw[2] = {0, 2};
    static const double v[6] = {1, 2, 3, 4, 5, 6};
    th_tensor_t x = th_tensor(F32, 2, d0, NULL), want[2];

    want[0] = th_tensor(F32, 2, dw, NULL);
    want[1] = th_tensor(I32, 2, dw, NULL);
    th_check("no rows", "TopK", topk_f("max", 2, 1), 1, &x, 2, want, 0);
    th_free(&x);
    gen_free(want, 2);

    x = th_t(F32, v, 2, 2, 3);
    th_check_error("k 4 of 3", "TopK", topk_f("max", 4, 1), 1, &x, 2,
                   "k 4 is larger than axis 1's length 3");
    th_check_error("k 3 of 2 along axis 0", "TopK",
                   topk_f("max", 3, 0), 1, &x, 2,
                   "k 3 is larger than axis 0's length 2");
    th_check_error("k 3841", "TopK", topk_f("max", 3841, 1), 1, &x, 2,
                   "k must be 1 to 3840, got 3841");
    th_check_error("k 0", "TopK", topk_f("min", 0, 1), 1, &x, 2,
                   "k must be 1 to 3840, got 0");
    th_check_error("axis 2 of rank 2", "TopK", topk_f("max", 1, 2), 1, &x, 2,
                   "axis 2 is out of range for rank 2 (0 to 1)");
    th_check_error("negative axis", "TopK",
                   th_f_int(topk_f("max", 1, -1), "axis", -2), 1, &x, 2,
                   "axis must be 0 or more");
    th_check_error("unknown op", "TopK", topk_f("median", 1, 1), 1, &x, 2,
                   "median");
    x = th_runtime(x, TH_ALL_DIMS);
    th_check_error("k 4 of 3 at run time", "TopK", topk_f("max", 4, 1), 1,
                   &x, 2, "k 4 is larger than axis 1's length 3");
    th_free(&x);
    x = th_t(MICA_BOOL, v, 1, 6);
    th_check_error("bool input", "TopK", topk_f("max", 1, 0), 1, &x, 2,
                   "x must be float32, float16 or int32, got bool");
    th_free(&x);
}

int main(void)
{
    plan_lazy();
    th_context();
    fixtures();
    big();
    empty_and_errors();
    return exit_status();
}
