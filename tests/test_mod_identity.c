/*
 * tests/test_mod_identity.c - the Identity layer: copies, and casts among
 * float32, float16, int8, int32, bool, int64, uint8 with TensorRT's rules
 * (truncation toward zero, saturation, NaN to 0, x != 0 to bool), and
 * reorders on the CPU from channels last into linear.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "../modules/identity/identity.h"

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

/*
 * A reorder on the CPU: x, a network input of `dtype` and dims d (rank
 * 4 or 5) in channels last, through an Identity to y, linear: y must be
 * x in logical order (the values are their logical indices, exact in
 * every type below).
 */
static void reorder(const char *label, mica_dtype_t dtype, int rank,
                    const int64_t *d)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_exec_t *exec = NULL;
    mica_build_config_t cfg = {.struct_size = sizeof cfg,
                               .device = MICA_DEVICE_CPU};
    mica_layer_spec_t spec = {.struct_size = sizeof spec};
    const char *xn = "x", *yn = "y";
    mica_dims_t dims = {.nb_dims = rank};
    mica_tensor_desc_t yd;
    const void *yv;
    th_tensor_t cl = th_tensor(dtype, rank, d, NULL), got;
    int64_t sp = 1, i, c = d[1], bad = -1;
    int k, good;

    for (k = 0; k < rank; k++)
        dims.d[k] = d[k];
    for (k = 2; k < rank; k++)
        sp *= d[k];
    /* logical i = (n * C + ch) * sp + s lies at (n * sp + s) * C + ch */
    for (i = 0; i < th_volume(&cl); i++) {
        int64_t s = i % sp, ch = i / sp % c, n = i / sp / c;
        th_set(&cl, (n * sp + s) * c + ch, (double)(i % 100));
    }
    spec.name = "reorder";
    spec.type = "Identity";
    spec.nb_inputs = spec.nb_outputs = 1;
    spec.inputs = &xn;
    spec.outputs = &yn;
    good = mica_network_create(ctx, &net) == MICA_OK &&
           mica_network_add_input(net, xn, dtype, &dims, NULL) == MICA_OK &&
           mica_network_set_format(net, xn,
                                   rank == 4 ? MICA_FORMAT_HWC
                                             : MICA_FORMAT_DHWC,
                                   NULL) == MICA_OK &&
           mica_network_add_layer(net, &spec) == MICA_OK &&
           mica_network_mark_output(net, yn, NULL) == MICA_OK &&
           mica_engine_build(net, &cfg, &e) == MICA_OK &&
           mica_exec_create(e, &exec) == MICA_OK &&
           mica_exec_set_input(exec, xn, &dims, cl.data) == MICA_OK &&
           mica_exec_run(exec) == MICA_OK &&
           mica_exec_get_output(exec, yn, &yd, &yv) == MICA_OK;
    if (!good)
        diag("%s: %s", label, mica_context_error(ctx));
    if (good) {
        got = th_tensor(dtype, rank, d, NULL);
        memcpy(got.data, yv,
               (size_t)th_volume(&got) * mica_dtype_size(dtype));
        for (i = 0; bad < 0 && i < th_volume(&got); i++)
            if (th_get(&got, i) != (double)(i % 100))
                bad = i;
        if (bad >= 0)
            diag("%s: element %lld is %g, not %g", label, (long long)bad,
                 th_get(&got, bad), (double)(bad % 100));
        good = bad < 0 && yd.format == MICA_FORMAT_LINEAR;
        th_free(&got);
    }
    ok(good, "%s", label);
    mica_exec_destroy(exec);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    th_free(&cl);
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
        /* float8 and float4 round to nearest even and saturate; 4-bit
         * integers wrap; e8m0 rounds up to a power of two */
        static const double in[] = {0.47892547, 1e6, -1e6, 464, 1e-7, -0.0,
                                    NAN, INFINITY};
        static const double e4[] = {0.46875, 448, -448, 448, 0, -0.0, NAN,
                                    448};
        static const double e5[] = {0.5, 57344, -57344, 448, 0, -0.0, NAN,
                                    57344};
        static const double f4in[] = {0.25, 0.75, 5, 100, -7, NAN};
        static const double f4[] = {0, 1, 4, 6, -6, 0};
        static const double i4in[] = {-9, 7.9, 8, -8.5, 15};
        static const double i4[] = {7, 7, -8, -8, -1};
        static const double u4[] = {7, 7, 8, 8, 15};
        static const double e8in[] = {1.1, 0.25, 8, 3e38};
        static const double e8[] = {2, 0.25, 8, 1.7014118346046923e38};
        cast("float32 to fp8e4m3 saturates", MICA_FLOAT32, "fp8e4m3",
             MICA_FP8E4M3, in, e4, LEN(in));
        cast("float32 to fp8e5m2 saturates", MICA_FLOAT32, "fp8e5m2",
             MICA_FP8E5M2, in, e5, LEN(in));
        cast("fp8e4m3 to float16", MICA_FP8E4M3, "float16", MICA_FLOAT16,
             e4, e4, LEN(in));
        cast("float32 to fp4e2m1", MICA_FLOAT32, "fp4e2m1", MICA_FP4E2M1,
             f4in, f4, LEN(f4in));
        cast("float32 to int4 wraps", MICA_FLOAT32, "int4", MICA_INT4, i4in,
             i4, LEN(i4in));
        cast("float32 to uint4 wraps", MICA_FLOAT32, "uint4", MICA_UINT4,
             i4in, u4, LEN(i4in));
        cast("float32 to fp8e8m0 rounds up", MICA_FLOAT32, "fp8e8m0",
             MICA_FP8E8M0, e8in, e8, LEN(e8in));
        cast("float64 to uint16 saturates", MICA_FLOAT64, "uint16",
             MICA_UINT16, in + 2, (const double[]){0, 464, 0}, 3);
    }
    {
        /* saturate false: out of range is NaN (e4m3) or infinity (e5m2) */
        static const double in[] = {1e6, 449, 480, -1e6};
        static const double e4[] = {NAN, 448, NAN, NAN};
        static const double e5[] = {INFINITY, 448, 512, -INFINITY};
        th_tensor_t x = th_t(MICA_FLOAT32, in, 1, 4);
        th_tensor_t w4 = th_t(MICA_FP8E4M3, NULL, 1, 4);
        th_tensor_t w5 = th_t(MICA_FP8E5M2, NULL, 1, 4);
        int i;
        for (i = 0; i < 4; i++) { /* th_set would saturate them */
            mica__identity_store_sat(w4.data, MICA_FP8E4M3, i, e4[i], 0);
            mica__identity_store_sat(w5.data, MICA_FP8E5M2, i, e5[i], 0);
        }
        th_check("float32 to fp8e4m3, saturate false", "Identity",
                 th_f_int(th_f_str(th_fields(), "dtype", "fp8e4m3"),
                          "saturate", 0), 1, &x, 1, &w4, 0);
        th_check("float32 to fp8e5m2, saturate false", "Identity",
                 th_f_int(th_f_str(th_fields(), "dtype", "fp8e5m2"),
                          "saturate", 0), 1, &x, 1, &w5, 0);
        th_free(&x);
        th_free(&w4);
        th_free(&w5);
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

    /* reorders (a copy of each element, no cast) */
    {
        static const int64_t d4[] = {2, 3, 4, 5}, d5[] = {2, 3, 2, 3, 4};
        static const int64_t c1[] = {1, 1, 3, 2};
        reorder("reorder float32 NHWC to NCHW [2,3,4,5]", MICA_FLOAT32, 4,
                d4);
        reorder("reorder float16 NDHWC to NCDHW [2,3,2,3,4]", MICA_FLOAT16,
                5, d5);
        reorder("reorder int8 NHWC to NCHW [2,3,4,5]", MICA_INT8, 4, d4);
        reorder("reorder int32 NHWC to NCHW [1,1,3,2]", MICA_INT32, 4, c1);
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
