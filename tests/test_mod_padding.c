/*
 * tests/test_mod_padding.c - the Padding module: TensorRT's example by
 * hand, then padding and cropping of every type and several ranks against
 * an independent reference (input elements scattered into a zeroed
 * output), runtime dimensions, empty tensors and the errors.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static th_fields_t *pad_f(int64_t t, int64_t l, int64_t b, int64_t r)
{
    int64_t pre[2], post[2];
    pre[0] = t;
    pre[1] = l;
    post[0] = b;
    post[1] = r;
    return th_f_ints(th_f_ints(th_fields(), "pre_padding", 2, pre),
                     "post_padding", 2, post);
}

/* Each input element lands at (row + t, col + l) when that is inside. */
static th_tensor_t expect(const th_tensor_t *x, int64_t t, int64_t l,
                          int64_t b, int64_t r)
{
    int32_t n = x->dims.nb_dims;
    int64_t od[MICA_MAX_DIMS], h = x->dims.d[n - 2], w = x->dims.d[n - 1];
    int64_t oh = h + t + b, ow = w + l + r, i, total = th_volume(x);
    th_tensor_t y;

    memcpy(od, x->dims.d, sizeof od);
    od[n - 2] = oh;
    od[n - 1] = ow;
    y = th_tensor(x->dtype, n, od, NULL);
    for (i = 0; i < total; i++) {
        int64_t col = i % w, row = (i / w) % h, o = i / (w * h);
        int64_t yr = row + t, yc = col + l;
        if (yr >= 0 && yr < oh && yc >= 0 && yc < ow)
            th_set(&y, (o * oh + yr) * ow + yc, th_get(x, i));
    }
    return y;
}

static void check(const char *what, mica_dtype_t type, int n,
                  const int64_t *d, int64_t t, int64_t l, int64_t b,
                  int64_t r, unsigned runtime)
{
    th_tensor_t x = th_tensor(type, n, d, NULL), y;
    char label[160];
    int64_t i;

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, type == MICA_BOOL ? (i % 3 != 0) : (double)(i % 97) - 40);
    y = expect(&x, t, l, b, r);
    if (runtime)
        x = th_runtime(x, runtime);
    snprintf(label, sizeof label, "%s, %s, pads %lld %lld %lld %lld", what,
             mica_dtype_name(type), (long long)t, (long long)l,
             (long long)b, (long long)r);
    th_check(label, "Padding", pad_f(t, l, b, r), 1, &x, 1, &y, 0);
    th_free(&x);
    th_free(&y);
}

int main(void)
{
    plan_lazy();
    th_context();

    /* TensorRT's example: [1,1,3,5], pre (-1, 3), post (3, -2). */
    {
        static const double xv[] = {-3, -2, -1, 10, -25, -4, -9, -1,
                                    10, -25, 0,  1,  2,  -2, -1};
        static const double yv[] = {0, 0, 0, -4, -9, -1, 0, 0, 0, 0, 1, 2,
                                    0, 0, 0, 0,  0,  0,  0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0,  0,  0};
        th_tensor_t x = th_t(MICA_FLOAT32, xv, 4, 1, 1, 3, 5);
        th_tensor_t y = th_t(MICA_FLOAT32, yv, 4, 1, 1, 5, 6);
        th_check("TensorRT's example", "Padding", pad_f(-1, 3, 3, -2), 1, &x,
                 1, &y, 0);
        th_free(&x);
        th_free(&y);
    }
    {
        static const mica_dtype_t types[] = {
            MICA_FLOAT32, MICA_FLOAT16, MICA_INT8, MICA_INT32, MICA_BOOL,
            MICA_INT64, MICA_UINT8, MICA_BFLOAT16};
        static const int64_t d4[] = {2, 3, 4, 5};
        int i;
        for (i = 0; i < LEN(types); i++) {
            check("rank 4", types[i], 4, d4, 1, 2, 3, 0, 0);
            check("rank 4 cropped", types[i], 4, d4, -1, -2, 0, -1, 0);
        }
    }
    {
        static const int64_t d2[] = {3, 4}, d3[] = {2, 7, 9},
                             d5[] = {2, 1, 2, 6, 33}, big[] = {3, 130, 257};
        check("rank 2", MICA_FLOAT32, 2, d2, 2, 1, 1, 2, 0);
        check("rank 3 mixed", MICA_FLOAT32, 3, d3, -3, 4, 5, -8, 0);
        check("rank 5", MICA_FLOAT16, 5, d5, 0, 0, 1, 1, 0);
        check("no padding", MICA_INT32, 3, d3, 0, 0, 0, 0, 0);
        check("crop to nothing", MICA_FLOAT32, 3, d3, -3, 0, -4, 0, 0);
        check("larger", MICA_FLOAT32, 3, big, 7, -5, 11, 3, 0);
        check("runtime dims", MICA_FLOAT32, 3, d3, 1, -2, 2, 3, 7u);
        check("runtime inner dims", MICA_INT8, 5, d5, -1, 2, 0, 1, 24u);
    }
    {
        static const int64_t e1[] = {0, 3, 4}, e2[] = {2, 0, 4};
        check("empty outer", MICA_FLOAT32, 3, e1, 1, 1, 1, 1, 0);
        check("empty rows padded", MICA_FLOAT32, 3, e2, 2, 0, 1, 0, 0);
    }
    /* Errors. */
    {
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 1, 5);
        th_check_error("rank 1", "Padding", pad_f(1, 1, 1, 1), 1, &x, 1,
                       "input 0 has rank 1, it needs 2 or more");
        th_free(&x);
        x = th_t(MICA_FLOAT32, NULL, 3, 2, 3, 4);
        th_check_error("crop below zero", "Padding", pad_f(-2, 0, -2, 0), 1,
                       &x, 1,
                       "pre_padding -2 and post_padding -2 crop dimension 1 "
                       "(length 3) below zero, to -1");
        th_check_error("crop below zero, columns", "Padding",
                       pad_f(0, -5, 0, 0), 1, &x, 1,
                       "crop dimension 2 (length 4) below zero, to -1");
        th_check_error("huge padding", "Padding",
                       pad_f((int64_t)1 << 41, 0, 0, 0), 1, &x, 1,
                       "'pre_padding' value 2199023255552 is beyond +-2^40");
        x = th_runtime(x, 2u);
        th_check_error("runtime crop below zero", "Padding",
                       pad_f(-2, 0, -2, 0), 1, &x, 1,
                       "would have a negative dimension");
        th_free(&x);
    }
    return exit_status();
}
