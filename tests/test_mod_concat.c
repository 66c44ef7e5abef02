/*
 * tests/test_mod_concat.c - the Concatenation layer: every axis of 2-D and
 * 3-D inputs, TensorRT's default axis, one to five inputs, every element
 * type, widths that defeat wide copies, empty inputs, 1-D int32 shape
 * tensors, and errors.  Expected values come from a plain index loop.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Input k's element i is 1000*(k+1) + i, reduced to fit small types. */
static double value(mica_dtype_t t, int k, int64_t i)
{
    double v = 1000.0 * (k + 1) + (double)i;
    if (t == MICA_BOOL)
        return (double)((i + k) % 3 == 0);
    if (t == MICA_INT8)
        return (double)(((int64_t)v % 251) - 125);
    if (t == MICA_FLOAT16)
        return (double)(((int64_t)v % 2001) - 1000) / 4.0;
    return v;
}

/*
 * Concatenate n inputs of rank r (dims[k][...]) of type t along `axis`
 * with the CPU and CUDA, against an index-loop reference.  axis < 0: no
 * param (TensorRT's default), `ref_axis` is what the reference uses.
 */
static void check_concat(const char *label, mica_dtype_t t, int n, int r,
                         const int64_t dims[][MICA_MAX_DIMS], int axis,
                         int ref_axis)
{
    th_tensor_t in[16], e;
    int64_t od[MICA_MAX_DIMS], outer = 1, inner = 1, o, j, off = 0;
    int k, d;
    th_fields_t *f = th_fields();

    for (d = 0; d < r; d++)
        od[d] = dims[0][d];
    od[ref_axis] = 0;
    for (k = 0; k < n; k++) {
        in[k] = th_tensor(t, r, dims[k], NULL);
        for (j = 0; j < th_volume(&in[k]); j++)
            th_set(&in[k], j, value(t, k, j));
        od[ref_axis] += dims[k][ref_axis];
    }
    e = th_tensor(t, r, od, NULL);
    for (d = 0; d < ref_axis; d++)
        outer *= od[d];
    for (d = ref_axis + 1; d < r; d++)
        inner *= od[d];
    for (k = 0; k < n; k++) {
        int64_t row = dims[k][ref_axis] * inner, orow = od[ref_axis] * inner;
        for (o = 0; o < outer; o++)
            for (j = 0; j < row; j++)
                th_set(&e, o * orow + off + j, th_get(&in[k], o * row + j));
        off += row;
    }
    if (axis >= 0)
        th_f_int(f, "axis", axis);
    th_check(label, "Concatenation", f, n, in, 1, &e, 0);
    for (k = 0; k < n; k++)
        th_free(&in[k]);
    th_free(&e);
}

int main(void)
{
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_INT8, MICA_INT32, MICA_BOOL,
                                         MICA_INT64};
    static const char *const tnames[] = {"float32", "float16", "int8",
                                         "int32", "bool", "int64"};
    char label[160];
    int i;

    plan_lazy();
    th_context();

    {
        /* a small case spelled out */
        static const double a[] = {1, 2, 3, 4, 5, 6};
        static const double b[] = {7, 8, 9};
        static const double w0[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        static const double c[] = {10, 20};
        static const double w1[] = {1, 2, 3, 10, 4, 5, 6, 20};
        th_tensor_t in[2], e;
        in[0] = th_t(MICA_FLOAT32, a, 2, 2, 3);
        in[1] = th_t(MICA_FLOAT32, b, 2, 1, 3);
        e = th_t(MICA_FLOAT32, w0, 2, 3, 3);
        th_check("[2,3] and [1,3] on axis 0", "Concatenation",
                 th_f_int(th_fields(), "axis", 0), 2, in, 1, &e, 0);
        th_free(&in[1]);
        th_free(&e);
        in[1] = th_t(MICA_FLOAT32, c, 2, 2, 1);
        e = th_t(MICA_FLOAT32, w1, 2, 2, 4);
        th_check("[2,3] and [2,1] on axis 1", "Concatenation",
                 th_f_int(th_fields(), "axis", 1), 2, in, 1, &e, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&e);
    }
    for (i = 0; i < LEN(types); i++) {
        static const int64_t d0[][MICA_MAX_DIMS] = {{2, 3, 4}, {1, 3, 4},
                                                    {3, 3, 4}};
        static const int64_t d1[][MICA_MAX_DIMS] = {{2, 1, 4}, {2, 3, 4},
                                                    {2, 2, 4}};
        static const int64_t d2[][MICA_MAX_DIMS] = {{2, 3, 1}, {2, 3, 2},
                                                    {2, 3, 5}};
        snprintf(label, sizeof label, "%s: three [_,3,4] on axis 0",
                 tnames[i]);
        check_concat(label, types[i], 3, 3, d0, 0, 0);
        snprintf(label, sizeof label, "%s: three [2,_,4] on axis 1",
                 tnames[i]);
        check_concat(label, types[i], 3, 3, d1, 1, 1);
        snprintf(label, sizeof label, "%s: three [2,3,_] on axis 2",
                 tnames[i]);
        check_concat(label, types[i], 3, 3, d2, 2, 2);
    }
    {
        static const int64_t d[][MICA_MAX_DIMS] = {{5, 4}};
        check_concat("one input: a copy", MICA_FLOAT32, 1, 2, d, 1, 1);
    }
    {
        static const int64_t d[][MICA_MAX_DIMS] = {
            {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}};
        check_concat("five inputs on the last axis", MICA_INT32, 5, 2, d, 1,
                     1);
    }
    {
        /* TensorRT's default axis: rank - 3 (C of NCHW), 0 below rank 3 */
        static const int64_t d4[][MICA_MAX_DIMS] = {{2, 1, 3, 2},
                                                    {2, 3, 3, 2}};
        static const int64_t d3[][MICA_MAX_DIMS] = {{1, 2, 2}, {2, 2, 2}};
        static const int64_t d2[][MICA_MAX_DIMS] = {{1, 3}, {2, 3}};
        check_concat("default axis of rank 4 is 1", MICA_FLOAT32, 2, 4, d4,
                     -1, 1);
        check_concat("default axis of rank 3 is 0", MICA_FLOAT32, 2, 3, d3,
                     -1, 0);
        check_concat("default axis of rank 2 is 0", MICA_FLOAT32, 2, 2, d2,
                     -1, 0);
    }
    {
        /* odd byte widths (1-byte copies) and larger, multi-block copies */
        static const int64_t d8[][MICA_MAX_DIMS] = {{7, 3}, {7, 5}, {7, 1}};
        static const int64_t dl[][MICA_MAX_DIMS] = {{300, 33}, {300, 31},
                                                    {300, 64}};
        static const int64_t dh[][MICA_MAX_DIMS] = {{4, 3, 3}, {4, 2, 3}};
        check_concat("int8 rows of 3, 5 and 1 bytes", MICA_INT8, 3, 2, d8, 1,
                     1);
        check_concat("float32 [300, 33+31+64]", MICA_FLOAT32, 3, 2, dl, 1, 1);
        check_concat("float16 rows of 18 and 12 bytes", MICA_FLOAT16, 2, 3,
                     dh, 1, 1);
    }
    {
        /* empty tensors */
        static const int64_t da[][MICA_MAX_DIMS] = {{2, 0}, {2, 3}, {2, 0}};
        static const int64_t db[][MICA_MAX_DIMS] = {{0, 3}, {0, 2}};
        static const int64_t dc[][MICA_MAX_DIMS] = {{2, 0}, {2, 0}};
        static const int64_t dd[][MICA_MAX_DIMS] = {{0, 4}, {3, 4}};
        check_concat("empty inputs along the axis", MICA_FLOAT32, 3, 2, da, 1,
                     1);
        check_concat("empty along another axis: empty output", MICA_FLOAT32,
                     2, 2, db, 1, 1);
        check_concat("all inputs empty along the axis", MICA_INT32, 2, 2, dc,
                     1, 1);
        check_concat("an empty first input on axis 0", MICA_INT8, 2, 2, dd, 0,
                     0);
    }
    {
        /* 1-D int32 shape tensors, as Concatenation of dims */
        static const double a[] = {2, 3};
        static const double b[] = {4};
        static const double w[] = {2, 3, 4};
        th_tensor_t in[2], e;
        in[0] = th_shape(th_t(MICA_INT32, a, 1, 2));
        in[1] = th_shape(th_t(MICA_INT32, b, 1, 1));
        e = th_t(MICA_INT32, w, 1, 3);
        th_check("1-D int32 shape tensors", "Concatenation", NULL, 2, in, 1,
                 &e, 0);
        th_free(&in[0]);
        th_free(&in[1]);
        th_free(&e);
    }
    {
        th_tensor_t in[2];
        in[0] = th_t(MICA_FLOAT32, NULL, 2, 2, 3);
        in[1] = th_t(MICA_FLOAT32, NULL, 2, 3, 3);
        th_check_error("other dims differ", "Concatenation",
                       th_f_int(th_fields(), "axis", 1), 2, in, 1,
                       "dimension 0 of input 1 is 3");
        th_check_error("axis beyond the rank", "Concatenation",
                       th_f_int(th_fields(), "axis", 2), 2, in, 1,
                       "axis 2 is out of range");
        th_check_error("negative axis", "Concatenation",
                       th_f_int(th_fields(), "axis", -1), 2, in, 1,
                       "'axis' is -1");
        th_free(&in[1]);
        in[1] = th_t(MICA_INT32, NULL, 2, 3, 3);
        th_check_error("types differ", "Concatenation", NULL, 2, in, 1,
                       "input 1 has type int32");
        th_free(&in[1]);
        in[1] = th_t(MICA_FLOAT32, NULL, 1, 3);
        th_check_error("ranks differ", "Concatenation", NULL, 2, in, 1,
                       "input 1 has rank 1");
        th_free(&in[0]);
        th_free(&in[1]);
        in[0] = th_t(MICA_FLOAT32, NULL, 0);
        th_check_error("0-D input", "Concatenation", NULL, 1, in, 1,
                       "0-D");
        th_free(&in[0]);
    }
    return exit_status();
}
