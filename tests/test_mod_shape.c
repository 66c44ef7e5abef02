/*
 * tests/test_mod_shape.c - the Shape layer: the dimensions of inputs of
 * every rank (0 to 8) and several types as int32, empty inputs, and
 * errors.
 */
#include <config.h>

#include <stdio.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Check Shape of a zero-filled `dtype` tensor of dims `d` (rank r). */
static void check_dims(const char *label, mica_dtype_t dtype, int r,
                       const int64_t *d)
{
    double want[MICA_MAX_DIMS];
    int64_t len = r;
    th_tensor_t x = th_tensor(dtype, r, d, NULL);
    th_tensor_t e;
    int i;

    for (i = 0; i < r; i++)
        want[i] = (double)d[i];
    e = th_tensor(MICA_INT32, 1, &len, want);
    th_check(label, "Shape", NULL, 1, &x, 1, &e, 0);
    th_free(&x);
    th_free(&e);
}

int main(void)
{
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_INT8, MICA_INT32, MICA_BOOL,
                                         MICA_INT64};
    static const char *const tnames[] = {"float32", "float16", "int8",
                                         "int32", "bool", "int64"};
    char label[128];
    int i;

    plan_lazy();
    th_context();

    {
        static const int64_t d[] = {2, 3, 4};
        for (i = 0; i < LEN(types); i++) {
            snprintf(label, sizeof label, "shape of a %s [2,3,4]", tnames[i]);
            check_dims(label, types[i], 3, d);
        }
    }
    {
        static const int64_t d[] = {7};
        check_dims("shape of a 1-D [7]", MICA_FLOAT32, 1, d);
    }
    {
        static const int64_t d[] = {1, 2, 1, 3, 1, 2, 2, 1};
        check_dims("shape of a rank-8 tensor", MICA_INT8, 8, d);
    }
    check_dims("shape of a 0-D scalar is an empty [0]", MICA_FLOAT32, 0,
               NULL);
    {
        static const int64_t d[] = {0, 5};
        check_dims("shape of an empty [0,5]", MICA_FLOAT32, 2, d);
    }
    {
        static const int64_t d[] = {3, 0, 0};
        check_dims("shape of an empty [3,0,0]", MICA_INT32, 3, d);
    }
    {
        static const int64_t d[] = {100000, 3};
        check_dims("shape of a large [100000,3]", MICA_INT8, 2, d);
    }
    {
        /* a shape-tensor input: Shape of it is its length */
        static const double v[] = {4, 5, 6};
        static const double want[] = {3};
        th_tensor_t x = th_shape(th_t(MICA_INT32, v, 1, 3));
        th_tensor_t e = th_t(MICA_INT32, want, 1, 1);
        th_check("shape of a shape-tensor input", "Shape", NULL, 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, NULL, 1, 2);
        x[1] = th_t(MICA_FLOAT32, NULL, 1, 2);
        th_check_error("two inputs", "Shape", NULL, 2, x, 1,
                       "takes 1 input");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    return exit_status();
}
