/*
 * tests/test_mod_identity.c - the Identity layer: copies, and casts among
 * float32, float16, int8, int32, bool, int64, uint8 with TensorRT's rules
 * (truncation toward zero, saturation, NaN to 0, x != 0 to bool).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Cast a 1-D tensor of `n` values from `from` to `to` (NULL: no dtype
 * param), expecting `want`. */
static void cast(const char *label, mica_dtype_t from, const char *to,
                 mica_dtype_t to_type, const double *in, const double *want,
                 int n)
{
    th_tensor_t x = th_t(from, in, 1, n);
    th_tensor_t e = th_t(to_type, want, 1, n);
    th_fields_t *f = th_fields();
    if (to)
        th_f_str(f, "dtype", to);
    th_check(label, "Identity", f, 1, &x, 1, &e, 0);
    th_free(&x);
    th_free(&e);
}

int main(void)
{
    plan_lazy();
    th_context();

    {
        static const double v[] = {1.5, -2, 0, 3e38, -1e-30, 7};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 2, 2, 3);
        th_check("copy float32 [2,3]", "Identity", th_fields(), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double v[] = {1, 0, 1, 1};
        cast("copy bool", MICA_BOOL, NULL, MICA_BOOL, v, v, LEN(v));
    }
    {
        static const double v[] = {-3, 2147483647, -2147483648.0};
        cast("int32 to int32 (explicit)", MICA_INT32, "int32", MICA_INT32, v,
             v, LEN(v));
    }
    {
        static const double in[] = {1.2, -1.7, 2.5, -2.5, 5.6, 3e9, -3e9,
                                    NAN, INFINITY, -INFINITY};
        static const double want[] = {1, -1, 2, -2, 5, 2147483647.0,
                                      -2147483648.0, 0, 2147483647.0,
                                      -2147483648.0};
        cast("float32 to int32: truncate, saturate, NaN to 0", MICA_FLOAT32,
             "int32", MICA_INT32, in, want, LEN(in));
    }
    {
        static const double in[] = {127.9, 128.5, -129, -0.5, 300, -128.9};
        static const double want[] = {127, 127, -128, 0, 127, -128};
        cast("float32 to int8 saturates", MICA_FLOAT32, "int8", MICA_INT8, in,
             want, LEN(in));
    }
    {
        static const double in[] = {0, -0.0, 0.5, NAN, -3, 1e-40};
        static const double want[] = {0, 0, 1, 1, 1, 1};
        cast("float32 to bool", MICA_FLOAT32, "bool", MICA_BOOL, in, want,
             LEN(in));
    }
    {
        static const double in[] = {1, 0, 1};
        cast("bool to float32", MICA_BOOL, "float32", MICA_FLOAT32, in, in,
             LEN(in));
        cast("bool to int32", MICA_BOOL, "int32", MICA_INT32, in, in,
             LEN(in));
        cast("bool to float16", MICA_BOOL, "float16", MICA_FLOAT16, in, in,
             LEN(in));
    }
    {
        /* 2049 ties to even (2048); 70000 overflows float16 to inf */
        static const double in[] = {1, 2049, 65504, 70000, -3, -70000};
        static const double want[] = {1, 2048, 65504, INFINITY, -3,
                                      -INFINITY};
        cast("int32 to float16 rounds to nearest even", MICA_INT32,
             "float16", MICA_FLOAT16, in, want, LEN(in));
    }
    {
        /* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1 */
        static const double in[] = {0.5, -2, 1024, 1.00048828125,
                                    1.000732421875, 1e-8};
        static const double want[] = {0.5, -2, 1024, 1, 1.0009765625, 0};
        cast("float32 to float16", MICA_FLOAT32, "float16", MICA_FLOAT16, in,
             want, LEN(in));
    }
    {
        static const double in[] = {0.5, -2, 1024, 65504, -0.0009765625};
        cast("float16 to float32", MICA_FLOAT16, "float32", MICA_FLOAT32, in,
             in, LEN(in));
    }
    {
        static const double in[] = {-2.75, 3.99, 0, 200};
        static const double want[] = {-2, 3, 0, 127};
        cast("float16 to int8", MICA_FLOAT16, "int8", MICA_INT8, in, want,
             LEN(in));
    }
    {
        static const double in[] = {300, -300, 5, -128, 127};
        static const double want[] = {127, -128, 5, -128, 127};
        cast("int32 to int8 saturates", MICA_INT32, "int8", MICA_INT8, in,
             want, LEN(in));
    }
    {
        static const double in[] = {-5, 0, 2, -128, 127};
        cast("int8 to int32", MICA_INT8, "int32", MICA_INT32, in, in,
             LEN(in));
        cast("int8 to float32", MICA_INT8, "float32", MICA_FLOAT32, in, in,
             LEN(in));
    }
    {
        static const double in[] = {0, 3, -2};
        static const double want[] = {0, 1, 1};
        cast("int32 to bool", MICA_INT32, "bool", MICA_BOOL, in, want,
             LEN(in));
    }
    {
        static const double in[] = {16777217, -7, 123456789};
        static const double want[] = {16777216, -7, 123456792};
        cast("int32 to float32 rounds", MICA_INT32, "float32", MICA_FLOAT32,
             in, want, LEN(in));
    }
    {
        static const double in[] = {5e9, -5e9, 42};
        static const double want[] = {2147483647.0, -2147483648.0, 42};
        cast("int64 to int32 saturates", MICA_INT64, "int32", MICA_INT32, in,
             want, LEN(in));
    }
    {
        static const double in[] = {-7, 2147483647};
        cast("int32 to int64", MICA_INT32, "int64", MICA_INT64, in, in,
             LEN(in));
    }
    {
        static const double in[] = {-5, 300, 7.9};
        static const double want[] = {0, 255, 7};
        cast("float32 to uint8 saturates", MICA_FLOAT32, "uint8", MICA_UINT8,
             in, want, LEN(in));
    }
    {
        /* bfloat16 keeps 8 bits: 1 + 2^-8 ties to 1, 257 to 256 */
        static const double in[] = {1.00390625, 257, -3.5, 1e39};
        static const double want[] = {1, 256, -3.5, INFINITY};
        cast("float32 to bfloat16", MICA_FLOAT32, "bfloat16", MICA_BFLOAT16,
             in, want, 3);
        cast("int32 to bfloat16", MICA_INT32, "bfloat16", MICA_BFLOAT16,
             in + 1, want + 1, 1);
        cast("bfloat16 to int8", MICA_BFLOAT16, "int8", MICA_INT8, want + 2,
             want + 2, 1);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 4);
        th_tensor_t e = th_t(MICA_INT32, NULL, 2, 0, 4);
        th_check("empty [0,4] float32 to int32", "Identity",
                 th_f_str(th_fields(), "dtype", "int32"), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double v[] = {2.5};
        static const double w[] = {2};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 0);
        th_tensor_t e = th_t(MICA_INT32, w, 0);
        th_check("scalar float32 to int32", "Identity",
                 th_f_str(th_fields(), "dtype", "int32"), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }

    /* errors */
    {
        static const double v[] = {1, 2};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, v, 1, 2);
        x[1] = th_t(MICA_FLOAT32, v, 1, 2);
        th_check_error("two inputs", "Identity", th_fields(), 2, x, 1,
                       "takes 1 input, got 2");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    {
        static const double v[] = {1, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 1, 2);
        th_check_error("unknown dtype", "Identity",
                       th_f_str(th_fields(), "dtype", "float7"), 1, &x, 1,
                       "float7");
        th_free(&x);
    }
    return exit_status();
}
