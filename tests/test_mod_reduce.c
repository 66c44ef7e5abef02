/*
 * tests/test_mod_reduce.c - the Reduce layer: every op over contiguous
 * and non-contiguous axes, keep_dims, float32, float16, int32, int8, the
 * empty-set identities of TensorRT, a large reduced extent, and errors.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const ops[] = {"sum", "prod", "max", "min", "avg"};

/* Expected reduction of a [2,3,2] tensor over axes 0 and 2 -> [3]. */
static void ref_02(const double *x, int op, double *out)
{
    int i, j, k;
    for (j = 0; j < 3; j++) {
        double acc = op == 1 ? 1 : op == 2 ? -INFINITY : op == 3 ? INFINITY : 0;
        for (i = 0; i < 2; i++)
            for (k = 0; k < 2; k++) {
                double v = x[i * 6 + j * 2 + k];
                if (op == 1) acc *= v;
                else if (op == 2) acc = v > acc ? v : acc;
                else if (op == 3) acc = v < acc ? v : acc;
                else acc += v;
            }
        out[j] = op == 4 ? acc / 4 : acc;
    }
}

static th_fields_t *rf(const char *op, int n, const int64_t *axes, int keep)
{
    th_fields_t *f = th_f_str(th_fields(), "op", op);
    th_f_ints(f, "axes", n, axes);
    if (keep >= 0)
        th_f_bool(f, "keep_dims", keep);
    return f;
}

/* float64 on the CPU alone: every op over axes 0 and 2 of a [2,3,2]
 * tensor whose values float32 cannot hold, exactly; CUDA's Reduce
 * refuses it (its supports_format, asked without a GPU). */
static void float64_ops(const double *x12)
{
    static const int64_t ax[] = {0, 2};
    static const int64_t d3 = 3;
    double x[12], want[3];
    char label[64];
    int op, i;

    for (i = 0; i < 12; i++)
        x[i] = x12[i] * 1e200 + (i == 5 ? 1e-300 : 0);
    for (op = 0; op < 5; op++) {
        th_tensor_t in = th_t(MICA_FLOAT64, x, 3, 2, 3, 2);
        th_tensor_t w;
        ref_02(x, op, want);
        w = th_tensor(MICA_FLOAT64, 1, &d3, want);
        snprintf(label, sizeof label, "%s float64 over axes 0, 2", ops[op]);
        th_check_cpu(label, "Reduce", rf(ops[op], 2, ax, -1), 1, &in, &w,
                     1e-15, 0);
        th_free(&in);
        th_free(&w);
    }
    th_refused("float64 on cuda", "Reduce", MICA_DEVICE_CUDA, "cuda",
               rf("sum", 2, ax, -1), MICA_FLOAT64, 1);
}

int main(void)
{
    static const double x6[] = {1, -2, 3, 4, 0.5, -6};
    static const double x12[] = {1, 2, -3, 0.5, 4, -1, 2, 2, -0.25, 3, 1, 5};
    char label[128];
    int op;

    plan_lazy();
    th_context();

    {
        static const int64_t ax[] = {1};
        static const double want[] = {2, -1.5};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 1, 2);
        th_tensor_t ek = th_t(MICA_FLOAT32, want, 2, 2, 1);
        th_check("sum over axis 1 of [2,3]", "Reduce", rf("sum", 1, ax, -1),
                 1, &x, 1, &e, 1e-5);
        th_check("sum over axis 1, keep_dims", "Reduce", rf("sum", 1, ax, 1),
                 1, &x, 1, &ek, 1e-5);
        th_free(&x);
        th_free(&e);
        th_free(&ek);
    }
    {
        static const int64_t ax[] = {0, 1};
        static const double want[] = {-6};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 0);
        th_check("min over all axes: a scalar", "Reduce", rf("min", 2, ax, 0),
                 1, &x, 1, &e, 1e-5);
        th_free(&x);
        th_free(&e);
    }
    for (op = 0; op < 5; op++) {
        static const int64_t ax[] = {2, 0}; /* order does not matter */
        double want[3];
        th_tensor_t x, e, xh, eh;
        ref_02(x12, op, want);
        x = th_t(MICA_FLOAT32, x12, 3, 2, 3, 2);
        e = th_t(MICA_FLOAT32, want, 3, 1, 3, 1);
        snprintf(label, sizeof label, "%s over axes 0,2 of [2,3,2], keep",
                 ops[op]);
        th_check(label, "Reduce", rf(ops[op], 2, ax, 1), 1, &x, 1, &e, 1e-5);
        xh = th_t(MICA_FLOAT16, x12, 3, 2, 3, 2);
        eh = th_t(MICA_FLOAT16, want, 1, 3);
        snprintf(label, sizeof label, "%s over axes 0,2, float16", ops[op]);
        th_check(label, "Reduce", rf(ops[op], 2, ax, 0), 1, &xh, 1, &eh,
                 1e-3);
        th_free(&x);
        th_free(&e);
        th_free(&xh);
        th_free(&eh);
    }
    {
        static const double xi[] = {-7, 2, 5, 3, -4, 6};
        static const int64_t ax[] = {1};
        static const double want[5][2] = {{0, 5}, {-70, -72}, {5, 6},
                                          {-7, -4}, {0, 1}};
        for (op = 0; op < 5; op++) {
            th_tensor_t x = th_t(MICA_INT32, xi, 2, 2, 3);
            th_tensor_t e = th_t(MICA_INT32, want[op], 1, 2);
            snprintf(label, sizeof label, "int32 %s over axis 1", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
        }
    }
    {
        /* int8: avg truncates toward zero (-7/2 = -3), sums saturate */
        static const double xi[] = {-7, 0, 100, 100, -100, -100};
        static const int64_t ax[] = {1};
        static const double want[5][3] = {{-7, 127, -128}, {0, 127, 127},
                                          {0, 100, -100}, {-7, 100, -100},
                                          {-3, 100, -100}};
        for (op = 0; op < 5; op++) {
            th_tensor_t x = th_t(MICA_INT8, xi, 2, 3, 2);
            th_tensor_t e = th_t(MICA_INT8, want[op], 1, 3);
            snprintf(label, sizeof label, "int8 %s over axis 1", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
        }
    }
    {
        /* reducing an empty set: TensorRT's identities */
        static const int64_t ax[] = {1};
        static const double wf[5] = {0, 1, -INFINITY, INFINITY, NAN};
        static const double wi[5] = {0, 1, -2147483648.0, 2147483647.0, 0};
        static const double w8[5] = {0, 1, -128, 127, -128};
        for (op = 0; op < 5; op++) {
            double f2[2], i2[2], b2[2];
            th_tensor_t x, e;
            f2[0] = f2[1] = wf[op];
            i2[0] = i2[1] = wi[op];
            b2[0] = b2[1] = w8[op];
            x = th_t(MICA_FLOAT32, NULL, 2, 2, 0);
            e = th_t(MICA_FLOAT32, f2, 1, 2);
            snprintf(label, sizeof label, "empty float32 %s", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
            x = th_t(MICA_FLOAT16, NULL, 2, 2, 0);
            e = th_t(MICA_FLOAT16, f2, 1, 2);
            snprintf(label, sizeof label, "empty float16 %s", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
            x = th_t(MICA_INT32, NULL, 2, 2, 0);
            e = th_t(MICA_INT32, i2, 1, 2);
            snprintf(label, sizeof label, "empty int32 %s", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
            x = th_t(MICA_INT8, NULL, 2, 2, 0);
            e = th_t(MICA_INT8, b2, 1, 2);
            snprintf(label, sizeof label, "empty int8 %s", ops[op]);
            th_check(label, "Reduce", rf(ops[op], 1, ax, 0), 1, &x, 1, &e, 0);
            th_free(&x);
            th_free(&e);
        }
    }
    {
        static const int64_t ax[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 1, 0);
        th_check("empty output [0]", "Reduce", rf("sum", 1, ax, 0), 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        /* a large reduced extent (one block per output on CUDA), exact */
        static const int64_t ax[] = {1};
        double *v = malloc(sizeof *v * 3 * 1000), want[3], mx[3];
        th_tensor_t x, e;
        int i, j;
        for (i = 0; i < 3; i++) {
            want[i] = 0;
            mx[i] = -INFINITY;
            for (j = 0; j < 1000; j++) {
                v[i * 1000 + j] = (i * 1000 + j) % 7 - 3 + i;
                want[i] += v[i * 1000 + j];
                if (v[i * 1000 + j] > mx[i])
                    mx[i] = v[i * 1000 + j];
            }
        }
        x = th_t(MICA_FLOAT32, v, 2, 3, 1000);
        e = th_t(MICA_FLOAT32, want, 1, 3);
        th_check("sum over 1000 elements", "Reduce", rf("sum", 1, ax, 0), 1,
                 &x, 1, &e, 1e-5);
        th_free(&e);
        e = th_t(MICA_FLOAT32, mx, 1, 3);
        th_check("max over 1000 elements", "Reduce", rf("max", 1, ax, 0), 1,
                 &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
        x = th_t(MICA_INT32, v, 2, 3, 1000);
        e = th_t(MICA_INT32, want, 1, 3);
        th_check("int32 sum over 1000 elements", "Reduce", rf("sum", 1, ax, 0),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
        free(v);
    }
    {
        /* reduce the leading axis: strided reads */
        static const int64_t ax[] = {0};
        static const double want[] = {5, -1.5, -3};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 1, 3);
        th_check("sum over axis 0 of [2,3]", "Reduce", rf("sum", 1, ax, 0), 1,
                 &x, 1, &e, 1e-5);
        th_free(&x);
        th_free(&e);
    }

    {
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_check("no axes: a copy", "Reduce", rf("max", 0, NULL, 0), 1, &x,
                 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        /* the middle axis of a rank-4 tensor, strided on both sides */
        static const int64_t ax[] = {1, 3};
        double v[2 * 3 * 2 * 2], want[2 * 2];
        int i, j, k, l;
        th_tensor_t x, e;
        for (i = 0; i < 24; i++)
            v[i] = (i * 5) % 13 - 6;
        for (i = 0; i < 2; i++)
            for (k = 0; k < 2; k++) {
                want[i * 2 + k] = 1;
                for (j = 0; j < 3; j++)
                    for (l = 0; l < 2; l++)
                        want[i * 2 + k] *= v[((i * 3 + j) * 2 + k) * 2 + l];
            }
        x = th_t(MICA_INT32, v, 4, 2, 3, 2, 2);
        e = th_t(MICA_INT32, want, 2, 2, 2);
        th_check("int32 prod over axes 1,3 of [2,3,2,2]", "Reduce",
                 rf("prod", 2, ax, 0), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }

    /* errors */
    {
        static const int64_t ax[] = {2};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_check_error("axis out of range", "Reduce", rf("sum", 1, ax, 0), 1,
                       &x, 1, "axis 2 is out of range for input 0 of rank 2");
        th_free(&x);
    }
    {
        static const int64_t ax[] = {-1};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_check_error("negative axis", "Reduce", rf("sum", 1, ax, 0), 1, &x,
                       1, "axes count from 0");
        th_free(&x);
    }
    {
        static const int64_t ax[] = {1, 1};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_check_error("repeated axis", "Reduce", rf("sum", 2, ax, 0), 1, &x,
                       1, "names axis 1 twice");
        th_free(&x);
    }
    {
        static const int64_t ax[] = {1};
        th_tensor_t x = th_t(MICA_BOOL, x6, 2, 2, 3);
        th_check_error("bool input", "Reduce", rf("sum", 1, ax, 0), 1, &x, 1,
                       "of type bool is not supported");
        th_free(&x);
    }
    {
        static const int64_t ax[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, x6, 2, 2, 3);
        th_check_error("unknown op", "Reduce", rf("mean", 1, ax, 0), 1, &x, 1,
                       "mean");
        th_free(&x);
    }
    float64_ops(x12);
    return exit_status();
}
