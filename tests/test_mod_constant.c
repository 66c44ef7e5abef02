/*
 * tests/test_mod_constant.c - the Constant layer: values and shapes of
 * every element type, the shape param, an empty constant, and errors.
 */
#include <config.h>

#include <stdlib.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A Constant of `w`, shape param (n >= 0) or none (n < 0), one output
 * compared with `want`. */
static void check(const char *label, th_tensor_t w, int n,
                  const int64_t *shape, th_tensor_t want)
{
    th_fields_t *f = th_f_weights(th_fields(), "weights", &w);
    if (n >= 0)
        th_f_ints(f, "shape", n, shape);
    th_check(label, "Constant", f, 0, NULL, 1, &want, 0);
    th_free(&w);
    th_free(&want);
}

int main(void)
{
    static const double v6[] = {1, -2, 3.5, 4, 5, -6.25};
    static const double b6[] = {1, 0, 0, 1, 1, 0};
    static const double i6[] = {7, -8, 2147483647, -2147483648.0, 0, 1};
    static const double s1[] = {-5};

    plan_lazy();
    th_context();

    check("float32 [2,3]", th_t(MICA_FLOAT32, v6, 2, 2, 3), -1, NULL,
          th_t(MICA_FLOAT32, v6, 2, 2, 3));
    {
        static const int64_t sh[] = {3, 2};
        check("float32 with shape [3,2]", th_t(MICA_FLOAT32, v6, 2, 2, 3), 2,
              sh, th_t(MICA_FLOAT32, v6, 2, 3, 2));
    }
    {
        static const int64_t sh[] = {6};
        check("int32 reshaped to [6]", th_t(MICA_INT32, i6, 2, 3, 2), 1, sh,
              th_t(MICA_INT32, i6, 1, 6));
    }
    check("float16 [6]", th_t(MICA_FLOAT16, v6, 1, 6), -1, NULL,
          th_t(MICA_FLOAT16, v6, 1, 6));
    check("bool [2,3]", th_t(MICA_BOOL, b6, 2, 2, 3), -1, NULL,
          th_t(MICA_BOOL, b6, 2, 2, 3));
    check("int8 scalar", th_t(MICA_INT8, s1, 0), -1, NULL,
          th_t(MICA_INT8, s1, 0));
    {
        static const int64_t sh[] = {1, 1, 1};
        check("int8 scalar as [1,1,1]", th_t(MICA_INT8, s1, 0), 3, sh,
              th_t(MICA_INT8, s1, 3, 1, 1, 1));
    }
    check("int64 [2,3]", th_t(MICA_INT64, i6, 2, 2, 3), -1, NULL,
          th_t(MICA_INT64, i6, 2, 2, 3));
    {
        static const int64_t sh[] = {0, 3};
        check("empty float32 [0,3]", th_t(MICA_FLOAT32, NULL, 1, 0), 2, sh,
              th_t(MICA_FLOAT32, NULL, 2, 0, 3));
    }

    /* errors */
    {
        static const int64_t sh[] = {4, 2};
        th_tensor_t w = th_t(MICA_FLOAT32, v6, 2, 2, 3);
        th_check_error("shape volume differs", "Constant",
                       th_f_ints(th_f_weights(th_fields(), "weights", &w),
                                 "shape", 2, sh),
                       0, NULL, 1, "has volume 8 but the weights have 6");
        th_free(&w);
    }
    {
        static const int64_t sh[] = {-2, -3};
        th_tensor_t w = th_t(MICA_FLOAT32, v6, 2, 2, 3);
        th_check_error("negative shape", "Constant",
                       th_f_ints(th_f_weights(th_fields(), "weights", &w),
                                 "shape", 2, sh),
                       0, NULL, 1, "negative dimension");
        th_free(&w);
    }
    {
        th_tensor_t w = th_t(MICA_FLOAT32, v6, 2, 2, 3);
        th_tensor_t x = th_t(MICA_FLOAT32, v6, 1, 6);
        th_check_error("an input given", "Constant",
                       th_f_weights(th_fields(), "weights", &w), 1, &x, 1,
                       "takes no inputs");
        th_free(&w);
        th_free(&x);
    }
    th_check_error("no weights", "Constant", th_fields(), 0, NULL, 1,
                   "weights");
    return exit_status();
}
