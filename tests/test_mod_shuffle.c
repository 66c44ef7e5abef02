/*
 * tests/test_mod_shuffle.c - the Shuffle layer: transposes, reshape with
 * 0 and -1, zero_is_placeholder, both transposes with a reshape between,
 * the reshape dimensions as a shape-tensor input (input 1),
 * several element types, empty tensors, and the validation errors.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static double seq[64];

/* Expected transpose of a row-major tensor, by coordinates. */
static void transpose_ref(const double *src, int rank, const int64_t *dims,
                          const int64_t *perm, double *dst, int64_t *odims)
{
    int64_t n = 1, i, c[8], strides[8];
    int k;
    for (k = rank - 1; k >= 0; k--) {
        strides[k] = n;
        n *= dims[k];
    }
    for (k = 0; k < rank; k++)
        odims[k] = dims[perm[k]];
    for (i = 0; i < n; i++) {
        int64_t rest = i, off = 0;
        for (k = rank - 1; k >= 0; k--) { /* output coordinates */
            c[k] = rest % odims[k];
            rest /= odims[k];
        }
        for (k = 0; k < rank; k++) /* output axis k is input axis perm[k] */
            off += c[k] * strides[perm[k]];
        dst[i] = src[off];
    }
}

static th_fields_t *perm_f(th_fields_t *f, const char *name, int n,
                           const int64_t *p)
{
    return th_f_ints(f, name, n, p);
}

/*
 * A two-layer network: shape input "s" (int32 [ns], profile values lo to
 * hi, opt val), layer "p" of `type` (inputs: nb_p of "s", "s") giving
 * "t", then Shuffle of "x" (float32 [nx]) by the values of t giving "y",
 * with zero_is_placeholder false.  Checks that y's symbolic shape uses
 * the values of s (or is `shape` when given) rather than run-time symbols
 * of t, i.e. that p's output_values worked, and that a CPU run at
 * s = val gives y the dims want.  Frees f.
 */
static void values_chain(const char *label, const char *type, th_fields_t *f,
                         int nb_p, int ns, const int32_t *lo,
                         const int32_t *hi, const int32_t *val, int64_t nx,
                         const char *shape, int nwant, const int64_t *want)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_tensor_desc_t d;
    const char *pin[2] = {"s", "s"}, *pout[1] = {"t"};
    const char *rin[2] = {"x", "t"}, *rout[1] = {"y"};
    th_fields_t *rf = th_f_bool(th_fields(), "zero_is_placeholder", 0);
    mica_dims_t sd, xd;
    const void *data;
    float xs[64] = {0};
    int32_t i, profile, good = 0;
    char text[256] = "";

    memset(&sd, 0, sizeof sd);
    memset(&xd, 0, sizeof xd);
    sd.nb_dims = 1;
    sd.d[0] = ns;
    xd.nb_dims = 1;
    xd.d[0] = nx;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_shape_input(net, "s", &sd, NULL) != MICA_OK ||
        mica_network_add_profile(net, &profile) != MICA_OK ||
        mica_network_set_profile_values(net, profile, "s", ns, lo, val, hi,
                                        NULL) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &xd, NULL) != MICA_OK)
        goto done;
    spec.name = "p";
    spec.type = type;
    spec.nb_inputs = nb_p;
    spec.inputs = pin;
    spec.nb_outputs = 1;
    spec.outputs = pout;
    spec.fields = th_fields_view(f);
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        goto done;
    spec.name = "r";
    spec.type = "Shuffle";
    spec.nb_inputs = 2;
    spec.inputs = rin;
    spec.outputs = rout;
    spec.fields = th_fields_view(rf);
    if (mica_network_add_layer(net, &spec) != MICA_OK ||
        mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_engine_build(net, &cfg, &engine) != MICA_OK)
        goto done;
    for (i = 0; i < mica_engine_nb_tensors(engine); i++) {
        info.struct_size = sizeof info;
        if (mica_engine_tensor(engine, i, &info) == MICA_OK &&
            strcmp(info.name, "y") == 0)
            snprintf(text, sizeof text, "%s", info.shape);
    }
    if (mica_exec_create(engine, &exec) != MICA_OK ||
        mica_exec_set_input(exec, "s", &sd, val) != MICA_OK ||
        mica_exec_set_input(exec, "x", &xd, xs) != MICA_OK ||
        mica_exec_run(exec) != MICA_OK ||
        mica_exec_get_output(exec, "y", &d, &data) != MICA_OK)
        goto done;
    good = shape ? strcmp(text, shape) == 0
                 : strstr(text, "s[") != NULL && strstr(text, "t[") == NULL;
    if (!good)
        diag("%s: y has the symbolic shape %s", label, text);
    good = good && d.dims.nb_dims == nwant;
    for (i = 0; good && i < nwant; i++)
        good = d.dims.d[i] == want[i];
    if (d.dims.nb_dims != nwant || !good)
        diag("%s: y has rank %d, dim 0 %lld", label, (int)d.dims.nb_dims,
             (long long)d.dims.d[0]);
done:
    if (!good && !text[0])
        diag("%s: %s", label, mica_context_error(ctx));
    ok(good, "%s", label);
    mica_exec_destroy(exec);
    mica_engine_destroy(engine);
    mica_network_destroy(net);
    th_fields_free(f);
    th_fields_free(rf);
}

/* Producers of reshape values that answer output_values. */
static void values_tests(void)
{
    static const int32_t lo[] = {1, 1}, hi[] = {4, 8}, val[] = {2, 3};
    static const int64_t w46[] = {4, 6}, w23[] = {2, 3}, w11[] = {1, 1};
    static const int64_t one[] = {1}, two[] = {2}, ax0[] = {0}, w5[] = {5};

    values_chain("ElementWise sum of s and s reshapes x", "ElementWise",
                 th_f_str(th_fields(), "op", "sum"), 2, 2, lo, hi, val, 24,
                 NULL, 2, w46);
    values_chain("ElementWise max of s and s reshapes x", "ElementWise",
                 th_f_str(th_fields(), "op", "max"), 2, 2, lo, hi, val, 6,
                 NULL, 2, w23);
    values_chain("ElementWise floor_div of s by s", "ElementWise",
                 th_f_str(th_fields(), "op", "floor_div"), 2, 2, lo, hi, val,
                 1, NULL, 2, w11);
    values_chain("Identity (int32 to int32) keeps the values", "Identity",
                 th_f_str(th_fields(), "dtype", "int32"), 1, 2, lo, hi, val,
                 6, NULL, 2, w23);
    values_chain("Reduce sum over axis 0, keep_dims", "Reduce",
                 th_f_bool(th_f_ints(th_f_str(th_fields(), "op", "sum"),
                                     "axes", 1, ax0),
                           "keep_dims", 1),
                 1, 2, lo, hi, val, 5, NULL, 1, w5);
    values_chain("Unary abs", "Unary", th_f_str(th_fields(), "op", "abs"), 1,
                 2, lo, hi, val, 6, NULL, 2, w23);
    {
        /* neg of [1, -6] is [-1, 6]: a -1 computed at run time */
        static const int32_t nlo[] = {1, -8}, nhi[] = {1, -1};
        static const int32_t nval[] = {1, -6};
        static const int64_t w26[] = {2, 6};
        values_chain("Unary neg gives a run-time -1", "Unary",
                     th_f_str(th_fields(), "op", "neg"), 1, 2, nlo, nhi,
                     nval, 12, NULL, 2, w26);
    }
    values_chain("Shuffle of s keeps its values", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 1, two), 1, 2, lo, hi,
                 val, 6, NULL, 2, w23);
    values_chain("Fill linspace int32 [2] from 2 by 1", "Fill",
                 th_f_ints(th_f_float(th_f_ints(th_f_str(th_f_str(
                                                    th_fields(), "op",
                                                    "linspace"),
                                                "dtype", "int32"),
                                      "shape", 1, two),
                           "alpha", 2),
                           "beta", 1, one),
                 0, 2, lo, hi, val, 6, "[2, 3]", 2, w23);
}

/*
 * vec in channels last (input and output in HWC or DHWC, no reorder)
 * and linear, one gather for the whole layer, against the reference:
 * a transpose of H and W, a reshape that keeps channels innermost, a 5-D
 * swap of C and D; linear only (the harness keeps ranks), both transposes
 * around a reshape and a channel shuffle's first half; float32 and
 * float16.  The channel shuffle between channels-last convolutions:
 * tests/test_cli_cnn.sh.
 */
static void gathers(void)
{
    static const int64_t d4[4] = {2, 6, 5, 7}, d5[5] = {2, 4, 3, 5, 7};
    static const int64_t big[4] = {1, 48, 40, 36};
    static const int64_t hw[4] = {0, 1, 3, 2}, r4[4] = {2, 6, 35, 1};
    static const int64_t p1[4] = {0, 2, 3, 1}, r5[5] = {2, 5, 7, 2, 3};
    static const int64_t p2[5] = {0, 3, 4, 1, 2}, cd[5] = {0, 2, 1, 3, 4};
    static const int64_t sh[5] = {1, 4, 12, 40, 36};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16};
    int t, cl;

    for (cl = 0; cl < 2; cl++) {
        th_channels_last_cpu(cl);
        for (t = 0; t < 2; t++) {
            th_tensor_t x = th_tensor(types[t], 4, d4, NULL);
            th_tensor_t y = th_tensor(types[t], 5, d5, NULL);
            th_tensor_t b = th_tensor(types[t], 4, big, NULL);
            const char *dt = mica_dtype_name(types[t]);
            char label[128];
            int64_t i;
            for (i = 0; i < th_volume(&x); i++)
                th_set(&x, i, (double)(i % 97));
            for (i = 0; i < th_volume(&y); i++)
                th_set(&y, i, (double)(i % 89));
            for (i = 0; i < th_volume(&b); i++)
                th_set(&b, i, (double)(i % 101));
#define GATHER(what, f, in)                                                 \
    do {                                                                    \
        snprintf(label, sizeof label, "vec %s %s: " what,                   \
                 cl ? "channels last" : "linear", dt);                      \
        th_check_impl(label, "Shuffle", f, 1, in, 1, MICA_DEVICE_CPU,       \
                      "vec", 0);                                            \
    } while (0)
            GATHER("first_transpose swaps H and W",
                   perm_f(th_fields(), "first_transpose", 4, hw), &x);
            GATHER("reshape [2,6,5,7] to [2,6,35,1]",
                   th_f_ints(th_fields(), "reshape", 4, r4), &x);
            GATHER("5-D, C and D swapped",
                   perm_f(th_fields(), "first_transpose", 5, cd), &y);
            if (cl) /* the harness asks 5-D outputs in HWC: linear only */
                goto done;
            GATHER("transpose to NHWC, reshape, transpose back",
                   perm_f(perm_f(th_f_ints(th_fields(), "reshape", 5, r5),
                                 "second_transpose", 5, p2),
                          "first_transpose", 4, p1), &x);
            GATHER("[1,48,40,36] split and swapped, as a channel shuffle",
                   perm_f(th_f_ints(th_fields(), "reshape", 5, sh),
                          "second_transpose", 5, cd), &b);
#undef GATHER
        done:
            th_free(&x);
            th_free(&y);
            th_free(&b);
        }
    }
    th_channels_last_cpu(0);
}

int main(void)
{
    int i;

    for (i = 0; i < LEN(seq); i++)
        seq[i] = i + 1;
    plan_lazy();
    th_context();

    {
        static const int64_t p[] = {1, 0};
        static const double want[] = {1, 4, 2, 5, 3, 6};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 2, 3, 2);
        th_check("first_transpose [1,0] of [2,3]", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {3, 2};
        th_tensor_t x = th_t(MICA_INT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_INT32, seq, 2, 3, 2);
        th_check("reshape int32 [2,3] to [3,2]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {0, -1};
        th_tensor_t x = th_t(MICA_FLOAT16, seq, 3, 2, 3, 4);
        th_tensor_t e = th_t(MICA_FLOAT16, seq, 2, 2, 12);
        th_check("reshape float16 [2,3,4] with [0,-1]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {-1, 0, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        th_tensor_t e = th_t(MICA_FLOAT32, seq, 3, 4, 3, 2);
        th_check("reshape [2,3,4] with [-1,0,2]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 3, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {0, 5};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 5);
        th_check("zero_is_placeholder false: [0,3] to [0,5]", "Shuffle",
                 th_f_bool(th_f_ints(th_fields(), "reshape", 2, r),
                           "zero_is_placeholder", 0),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {-1, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 3, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_check("-1 with an empty input: [2,0,3] to [-1,3]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        /* [2,3,4] -> first [2,0,1] -> [4,2,3] -> reshape [4,6]
         * -> second [1,0] -> [6,4] */
        static const int64_t p1[] = {2, 0, 1}, r[] = {4, 6}, p2[] = {1, 0};
        static const int64_t d[] = {2, 3, 4}, d2[] = {4, 6};
        double t1[24], t2[24];
        int64_t o1[3], o2[2];
        th_tensor_t x, e;
        transpose_ref(seq, 3, d, p1, t1, o1);
        transpose_ref(t1, 2, d2, p2, t2, o2);
        x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        e = th_t(MICA_FLOAT32, t2, 2, 6, 4);
        th_check("first_transpose, reshape, second_transpose", "Shuffle",
                 perm_f(perm_f(th_f_ints(th_fields(), "reshape", 2, r),
                               "first_transpose", 3, p1),
                        "second_transpose", 2, p2),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t p2[] = {1, 2, 0}, d[] = {2, 3, 4};
        double t[24];
        int64_t o[3];
        th_tensor_t x, e;
        transpose_ref(seq, 3, d, p2, t, o);
        x = th_t(MICA_INT8, seq, 3, 2, 3, 4);
        e = th_t(MICA_INT8, t, 3, 3, 4, 2);
        th_check("second_transpose only, int8", "Shuffle",
                 perm_f(th_fields(), "second_transpose", 3, p2), 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t p1[] = {3, 1, 0, 2}, d[] = {2, 3, 2, 4};
        double t[48];
        int64_t o[4];
        th_tensor_t x, e;
        transpose_ref(seq, 4, d, p1, t, o);
        x = th_t(MICA_FLOAT32, seq, 4, 2, 3, 2, 4);
        e = th_t(MICA_FLOAT32, t, 4, 4, 3, 2, 2);
        th_check("rank-4 transpose [3,1,0,2]", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 4, p1), 1, &x, 1,
                 &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double b[] = {1, 0, 0, 1, 1, 0};
        static const double bt[] = {1, 1, 0, 1, 0, 0};
        static const int64_t p[] = {1, 0};
        th_tensor_t x = th_t(MICA_BOOL, b, 2, 2, 3);
        th_tensor_t e = th_t(MICA_BOOL, bt, 2, 3, 2);
        th_check("bool transpose", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {1, 1};
        static const double v[] = {42};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 0);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 2, 1, 1);
        th_check("scalar to [1,1]", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double v[] = {42};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 2, 1, 1);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 0);
        th_check("[1,1] to a scalar (empty reshape)", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 0, NULL), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check("no params: a copy", "Shuffle", th_fields(), 1, &x, 1, &e,
                 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t r[] = {3, -1};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, seq, 2, 3, 2);
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_none();
        th_check("second input left out", "Shuffle",
                 th_f_ints(th_fields(), "reshape", 2, r), 2, x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&e);
    }

    /* errors */
    {
        static const int64_t p[] = {1, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 3, 2, 3, 4);
        th_check_error("first_transpose of the wrong length", "Shuffle",
                       perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1,
                       "has 2 entries but input 0 has rank 3");
        th_free(&x);
    }
    {
        static const int64_t p[] = {0, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("not a permutation", "Shuffle",
                       perm_f(th_fields(), "first_transpose", 2, p), 1, &x, 1,
                       "not a permutation");
        th_free(&x);
    }
    {
        static const int64_t p[] = {0, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("permutation out of range", "Shuffle",
                       perm_f(th_fields(), "second_transpose", 2, p), 1, &x,
                       1, "not a permutation");
        th_free(&x);
    }
    {
        static const int64_t p[] = {1, 0};
        static const int64_t r[] = {6};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("second_transpose longer than the reshape", "Shuffle",
                       perm_f(th_f_ints(th_fields(), "reshape", 1, r),
                              "second_transpose", 2, p),
                       1, &x, 1, "reshaped tensor has rank 1");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, -1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("two -1", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "more than one -1");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-2, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("reshape below -1", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "-2 is not a dimension");
        th_free(&x);
    }
    {
        static const int64_t r[] = {4, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("volumes differ", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "has volume 8 but input 0 has volume 6");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, 4};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_check_error("-1 not a whole number", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, r), 1, &x, 1,
                       "not a multiple of 4");
        th_free(&x);
    }
    {
        static const int64_t r[] = {-1, 0};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 2, 0);
        th_check_error("-1 with other dims of volume 0", "Shuffle",
                       th_f_bool(th_f_ints(th_fields(), "reshape", 2, r),
                                 "zero_is_placeholder", 0),
                       1, &x, 1, "cannot be inferred");
        th_free(&x);
    }
    {
        static const int64_t r[] = {2, 0, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 6);
        th_check_error("0 placeholder beyond the input's rank", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 3, r), 1, &x, 1,
                       "entry 1 is 0");
        th_free(&x);
    }

    /* the reshape dimensions as a shape-tensor input */
    {
        static const double r[] = {3, 2};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, seq, 2, 3, 2);
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check("input 1 [3,2]: [2,3] to [3,2]", "Shuffle", th_fields(), 2,
                 x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        static const double r[] = {0, -1};
        th_tensor_t x[2], e = th_t(MICA_INT32, seq, 2, 2, 12);
        x[0] = th_t(MICA_INT32, seq, 3, 2, 3, 4);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check("input 1 [0,-1]: [2,3,4] to [2,12]", "Shuffle", th_fields(),
                 2, x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        /* [2,3] -> first [1,0] -> [3,2] -> input 1 [-1] -> [6] */
        static const double r[] = {-1}, want[] = {1, 4, 2, 5, 3, 6};
        static const int64_t p[] = {1, 0};
        th_tensor_t x[2], e = th_t(MICA_FLOAT16, want, 1, 6);
        x[0] = th_t(MICA_FLOAT16, seq, 2, 2, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 1));
        th_check("first_transpose then input 1 [-1]", "Shuffle",
                 perm_f(th_fields(), "first_transpose", 2, p), 2, x, 1, &e,
                 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        static const double r[] = {0, 5};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, NULL, 2, 0, 5);
        x[0] = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check("input 1 [0,5], zero_is_placeholder false: empty", "Shuffle",
                 th_f_bool(th_fields(), "zero_is_placeholder", 0), 2, x, 1,
                 &e, 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        static const double r[] = {-1, 3};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        x[0] = th_t(MICA_FLOAT32, NULL, 3, 2, 0, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check("input 1 [-1,3] with an empty input", "Shuffle",
                 th_fields(), 2, x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        static const double r[] = {1, 1};
        static const double v[] = {42};
        th_tensor_t x[2], e = th_t(MICA_FLOAT32, v, 2, 1, 1);
        x[0] = th_t(MICA_FLOAT32, v, 0);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check("input 1 [1,1]: a scalar to [1,1]", "Shuffle", th_fields(),
                 2, x, 1, &e, 0);
        th_free(&x[0]);
        th_free(&x[1]);
        th_free(&e);
    }
    {
        static const double r[] = {4, 2};
        static const int64_t rp[] = {3, 2};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check_error("input 1: volumes differ", "Shuffle", th_fields(), 2,
                       x, 1, "[4, 2] have volume 8 but input 0 has volume 6");
        th_free(&x[1]);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check_error("reshape by param and by input 1", "Shuffle",
                       th_f_ints(th_fields(), "reshape", 2, rp),
                       2, x, 1, "given twice");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    {
        static const double r[] = {-1, -1};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check_error("input 1 with two -1 (at run time)", "Shuffle",
                       th_fields(), 2, x, 1, "but input 0 has volume 6");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    {
        static const double r[] = {-1, 0};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, NULL, 2, 2, 0);
        x[1] = th_shape(th_t(MICA_INT32, r, 1, 2));
        th_check_error("input 1 [-1,0] on an empty input", "Shuffle",
                       th_f_bool(th_fields(), "zero_is_placeholder", 0), 2, x,
                       1, "negative dimension");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    {
        static const double r[] = {3, 2};
        th_tensor_t x[2];
        x[0] = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        x[1] = th_t(MICA_FLOAT32, r, 1, 2);
        th_check_error("input 1 of type float32", "Shuffle", th_fields(), 2,
                       x, 1, "shape tensor");
        th_free(&x[0]);
        th_free(&x[1]);
    }
    values_tests();
    gathers();
    return exit_status();
}
