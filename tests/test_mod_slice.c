/*
 * tests/test_mod_slice.c - the Slice layer: every mode (default, wrap,
 * clamp, fill with the param and with the fifth input, reflect), negative
 * and zero strides, ranks 0 to 4, every element type, empty tensors,
 * start/size/stride as shape-tensor inputs, and the errors; the vec
 * implementation against the reference, linear and channels last.
 *
 * Expected values come from ref_slice(), written from TensorRT's formulas
 * independently of the module (reflect by bouncing off the edges).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum { DEFAULT, WRAP, CLAMP, FILL, REFLECT };
static const char *const modes[] = {"default", "wrap", "clamp", "fill",
                                    "reflect"};

static double seq[256];

/* The input index coordinate x reads on an axis of length d; -1: fill. */
static int64_t ref_index(int64_t x, int64_t d, int mode)
{
    switch (mode) {
    case WRAP:
        while (x < 0)
            x += d;
        while (x >= d)
            x -= d;
        return x;
    case CLAMP:
        return x < 0 ? 0 : x > d - 1 ? d - 1 : x;
    case REFLECT:
        if (d == 1)
            return 0;
        while (x < 0 || x >= d) /* bounce off the edge elements */
            x = x < 0 ? -x : 2 * (d - 1) - x;
        return x;
    default:
        return x >= 0 && x < d ? x : -1;
    }
}

/* The expected output: x's values in `vals`, dims `xd` (rank r). */
static th_tensor_t ref_slice(mica_dtype_t t, const double *vals, int r,
                             const int64_t *xd, const int64_t *start,
                             const int64_t *size, const int64_t *stride,
                             int mode, double fill)
{
    static double buf[4096];
    int64_t n = 1, i, c[8];
    int a;

    for (a = 0; a < r; a++)
        n *= size[a];
    if (n > LEN(buf))
        bail("ref_slice: too large");
    for (i = 0; i < n; i++) {
        int64_t rest = i, off = 0, k;
        int bad = 0;
        for (a = r - 1; a >= 0; a--) {
            c[a] = rest % size[a];
            rest /= size[a];
        }
        for (a = 0; a < r; a++) {
            k = ref_index(start[a] + c[a] * stride[a], xd[a], mode);
            if (k < 0)
                bad = 1;
            off = off * xd[a] + (k < 0 ? 0 : k);
        }
        buf[i] = bad ? fill : vals[off];
    }
    return th_tensor(t, r, size, buf);
}

static th_fields_t *slice_f(int r, const int64_t *start, const int64_t *size,
                            const int64_t *stride, int mode)
{
    th_fields_t *f = th_fields();
    if (start)
        th_f_ints(f, "start", r, start);
    if (size)
        th_f_ints(f, "size", r, size);
    if (stride)
        th_f_ints(f, "stride", r, stride);
    return th_f_str(f, "mode", modes[mode]);
}

/* One case with params: x of type t and dims xd holding seq. */
static void check_params(const char *label, mica_dtype_t t, int r,
                         const int64_t *xd, const int64_t *start,
                         const int64_t *size, const int64_t *stride, int mode)
{
    th_tensor_t x = th_tensor(t, r, xd, seq);
    th_tensor_t e = ref_slice(t, seq, r, xd, start, size, stride, mode, 0);
    th_check(label, "Slice", slice_f(r, start, size, stride, mode), 1, &x, 1,
             &e, 0);
    th_free(&x);
    th_free(&e);
}

/* A 1-D int32 tensor of n values, marked as a shape tensor. */
static th_tensor_t shape_of(int n, const int64_t *v)
{
    double d[8];
    int i;
    for (i = 0; i < n; i++)
        d[i] = (double)v[i];
    return th_shape(th_t(MICA_INT32, d, 1, n));
}

/* ---- networks: shape-tensor values through Slice ---------------------- */

static mica_status_t add_layer(mica_network_t *net, int nin, const char **ins,
                               const char *out, th_fields_t *f)
{
    mica_layer_spec_t s;
    mica_status_t st;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.name = out;
    s.type = "Slice";
    s.nb_inputs = nin;
    s.inputs = ins;
    s.nb_outputs = 1;
    s.outputs = &out;
    s.fields = th_fields_view(f);
    st = mica_network_add_layer(net, &s);
    th_fields_free(f);
    return st;
}

/*
 * Shape input s (int32 [4], values within [lo, hi]); Slice a takes s[1:3];
 * Slice b cuts y (float32 [6, 6]) to the size a, from the start that is
 * s[0], s[3] when `start_from_s` (through Slice c, stride 3), else 0.
 * Checks that b's shape is known symbolically as [s[1], s[2]] (a's values
 * come from output_values), then runs with `sv` and returns the status
 * (message in *msg) and b's dims.
 */
static mica_status_t chain(int start_from_s, const int32_t *sv,
                           mica_dims_t *bdims, char *msg, size_t len)
{
    static const int32_t lo[4] = {0, 1, 1, 0}, hi[4] = {4, 6, 6, 4};
    static const int64_t one[] = {1}, two[] = {2}, three[] = {3}, z2[] = {0, 0};
    static float yv[36];
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_dims_t d4 = {1, 0, {4}}, dy = {2, 0, {6, 6}};
    mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_tensor_desc_t desc;
    const void *data;
    const char *ia[1] = {"s"}, *ib[3] = {"y", "c", "a"};
    const char *ib0[3] = {"y", NULL, "a"};
    int32_t p;
    mica_status_t st;

    msg[0] = '\0';
    if ((st = mica_network_create(ctx, &net)) != MICA_OK ||
        (st = mica_network_add_shape_input(net, "s", &d4, NULL)) != MICA_OK ||
        (st = mica_network_add_input(net, "y", MICA_FLOAT32, &dy, NULL)) !=
            MICA_OK ||
        (st = mica_network_add_profile(net, &p)) != MICA_OK ||
        (st = mica_network_set_profile_values(net, p, "s", 4, lo, lo, hi,
                                              NULL)) != MICA_OK ||
        (st = add_layer(net, 1, ia, "a",
                        th_f_ints(th_f_ints(th_fields(), "start", 1, one),
                                  "size", 1, two))) != MICA_OK ||
        (start_from_s &&
         (st = add_layer(net, 1, ia, "c",
                         th_f_ints(th_f_ints(th_f_ints(th_fields(), "start",
                                                       1, z2),
                                             "size", 1, two),
                                   "stride", 1, three))) != MICA_OK) ||
        (st = add_layer(net, 3, start_from_s ? ib : ib0, "b",
                        th_f_ints(th_fields(), "start", 2, z2))) !=
            MICA_OK ||
        (st = mica_network_mark_output(net, "b", NULL)) != MICA_OK ||
        (st = mica_engine_build(net, NULL, &e)) != MICA_OK)
        goto done;
    info.struct_size = sizeof info;
    if ((st = mica_engine_tensor(e, mica_engine_find_tensor(e, "b"),
                                 &info)) != MICA_OK)
        goto done;
    is_string("[s[1], s[2]]", info.shape, "chain: b has shape [s[1], s[2]] "
              "(Slice's output_values)");
    if ((st = mica_exec_create(e, &x)) != MICA_OK ||
        (st = mica_exec_set_input(x, "s", &d4, sv)) != MICA_OK ||
        (st = mica_exec_set_input(x, "y", &dy, yv)) != MICA_OK ||
        (st = mica_exec_run(x)) != MICA_OK ||
        (st = mica_exec_get_output(x, "b", &desc, &data)) != MICA_OK)
        goto done;
    *bdims = desc.dims;
done:
    if (st != MICA_OK)
        snprintf(msg, len, "%s", mica_context_error(ctx));
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return st;
}

/*
 * vec against the reference, linear and channels last: a split of an
 * NHWC map along its channels (rows copied whole), a reversed window
 * with strides 2 and -1, and wrap mode inside the input (the gather) and
 * across its edge (the reference's loop); large enough for threads.
 */
/* 8-byte elements (float64, int64, uint64) on the CPU alone: every mode
 * that reads outside x, with a fill param beyond float32's precision,
 * against the model; the run through th_run (CUDA refuses them: its supports_format,
 * asked without a GPU). */
static void wide_elements(void)
{
    static const int64_t xd[] = {2, 3}, st[] = {-1, 4}, sz[] = {4, 5};
    static const int64_t sd[] = {1, -1};
    static const mica_dtype_t types[] = {MICA_FLOAT64, MICA_INT64,
                                         MICA_UINT64};
    double big[6];
    char label[96];
    size_t i;
    int m;

    for (i = 0; i < 6; i++)
        big[i] = 4503599627370497.0 + (double)i; /* 2^52 + 1 + i */
    for (i = 0; i < LEN(types); i++)
        for (m = WRAP; m < (int)LEN(modes); m++) { /* default: no window
                                                     * outside x */
            th_tensor_t x = th_tensor(types[i], 2, xd, big);
            th_tensor_t e = ref_slice(types[i], big, 2, xd, st, sz, sd, m,
                                      m == FILL ? 9007199254740993.0 : 0);
            th_fields_t *f = slice_f(2, st, sz, sd, m);
            if (m == FILL)
                th_f_float(f, "fill_value", 9007199254740993.0);
            snprintf(label, sizeof label, "%s, mode %s",
                     mica_dtype_name(types[i]), modes[m]);
            th_check_cpu(label, "Slice", f, 1, &x, &e, 0, 0);
            th_free(&x);
            th_free(&e);
        }
    th_refused("float64 on cuda", "Slice", MICA_DEVICE_CUDA, "cuda",
               slice_f(2, st, sz, sd, 0), MICA_FLOAT64, 1);
}

static void vec_gather(void)
{
    static const int64_t xd[4] = {1, 48, 40, 36};
    static const int64_t s1[4] = {0, 16, 0, 0}, z1[4] = {1, 32, 40, 36};
    static const int64_t s2[4] = {0, 47, 1, 35}, z2[4] = {1, 24, 19, 36};
    static const int64_t t2[4] = {1, -2, 2, -1};
    static const int64_t s3[4] = {0, 40, 0, 0}, z3[4] = {1, 16, 40, 36};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16};
    int t, cl;

    for (cl = 0; cl < 2; cl++) {
        th_channels_last_cpu(cl);
        for (t = 0; t < 2; t++) {
            th_tensor_t x = th_tensor(types[t], 4, xd, NULL);
            char label[128];
            int64_t i;
            for (i = 0; i < th_volume(&x); i++)
                th_set(&x, i, (double)(i % 251));
#define VEC(what, f)                                                        \
    do {                                                                    \
        snprintf(label, sizeof label, "vec %s %s: " what,                   \
                 cl ? "channels last" : "linear",                           \
                 mica_dtype_name(types[t]));                                \
        th_check_impl(label, "Slice", f, 1, &x, 1, MICA_DEVICE_CPU, "vec",  \
                      0);                                                   \
    } while (0)
            VEC("channels 16 to 47", slice_f(4, s1, z1, NULL, DEFAULT));
            VEC("strides -2, 2 and -1", slice_f(4, s2, z2, t2, DEFAULT));
            VEC("wrap inside", slice_f(4, s1, z1, NULL, WRAP));
            VEC("wrap across the edge", slice_f(4, s3, z3, NULL, WRAP));
#undef VEC
            th_free(&x);
        }
    }
    th_channels_last_cpu(0);
}

int main(void)
{
    int i, m;

    for (i = 0; i < LEN(seq); i++)
        seq[i] = i + 1;
    plan_lazy();
    th_context();

    /* TensorRT's example: {{0,2,4},{1,3,5}}, start {1,0}, size {1,2},
     * stride {1,2} gives {{1,5}}. */
    {
        static const double xv[] = {0, 2, 4, 1, 3, 5}, want[] = {1, 5};
        static const int64_t st[] = {1, 0}, sz[] = {1, 2}, sd[] = {1, 2};
        th_tensor_t x = th_t(MICA_FLOAT32, xv, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 2, 1, 2);
        th_check("TensorRT's example", "Slice",
                 slice_f(2, st, sz, sd, DEFAULT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    /* Hand-written expectations for the modes on one axis of 4. */
    {
        static const double xv[] = {10, 20, 30, 40};
        static const double w_wrap[] = {30, 40, 10, 20, 30, 40, 10};
        static const double w_clamp[] = {10, 10, 10, 20, 30, 40, 40};
        static const double w_fill[] = {0, 0, 10, 20, 30, 40, 0};
        static const double w_reflect[] = {30, 20, 10, 20, 30, 40, 30};
        static const double *const want[] = {NULL, w_wrap, w_clamp, w_fill,
                                             w_reflect};
        static const int64_t st[] = {-2}, sz[] = {7}, sd[] = {1};
        for (m = WRAP; m <= REFLECT; m++) {
            char label[64];
            th_tensor_t x = th_t(MICA_FLOAT32, xv, 1, 4);
            th_tensor_t e = th_t(MICA_FLOAT32, want[m], 1, 7);
            snprintf(label, sizeof label, "mode %s, by hand", modes[m]);
            th_check(label, "Slice", slice_f(1, st, sz, sd, m), 1, &x, 1, &e,
                     0);
            th_free(&x);
            th_free(&e);
        }
    }
    {
        static const int64_t xd[] = {5}, st[] = {4}, sz[] = {5}, sd[] = {-1};
        check_params("negative stride reverses", MICA_FLOAT32, 1, xd, st, sz,
                     sd, DEFAULT);
    }
    {
        static const int64_t xd[] = {3, 4}, st[] = {1, 2}, sz[] = {4, 3};
        static const int64_t sd[] = {0, 0};
        check_params("stride 0 repeats one element", MICA_INT32, 2, xd, st,
                     sz, sd, DEFAULT);
    }
    {
        static const int64_t xd[] = {3, 4, 5}, st[] = {0, 1, 4};
        static const int64_t sz[] = {2, 2, 3}, sd[] = {2, 2, -2};
        check_params("rank 3, mixed strides", MICA_FLOAT32, 3, xd, st, sz,
                     sd, DEFAULT);
    }
    {
        static const int64_t xd[] = {2, 3, 2, 4}, st[] = {1, 0, 0, 1};
        static const int64_t sz[] = {1, 3, 2, 2}, sd[] = {1, 1, 1, 2};
        check_params("rank 4", MICA_FLOAT16, 4, xd, st, sz, sd, DEFAULT);
    }
    {
        static const int64_t xd[] = {3, 4}, st[] = {-4, 5};
        static const int64_t sz[] = {6, 5}, sd[] = {2, -3};
        mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16, MICA_INT8,
                                MICA_INT32};
        const char *tn[] = {"float32", "float16", "int8", "int32"};
        for (m = WRAP; m <= REFLECT; m++)
            for (i = 0; i < LEN(types); i++) {
                char label[96];
                snprintf(label, sizeof label, "mode %s, [3,4], %s",
                         modes[m], tn[i]);
                check_params(label, types[i], 2, xd, st, sz, sd, m);
            }
    }
    {
        static const double b[] = {1, 0, 0, 1, 1, 0};
        static const int64_t xd[] = {2, 3}, st[] = {-1, 2}, sz[] = {4, 5};
        static const int64_t sd[] = {1, -1};
        th_tensor_t x = th_tensor(MICA_BOOL, 2, xd, b);
        th_tensor_t e = ref_slice(MICA_BOOL, b, 2, xd, st, sz, sd, REFLECT, 0);
        th_check("bool, mode reflect", "Slice",
                 slice_f(2, st, sz, sd, REFLECT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t xd[] = {1, 3}, st[] = {-3, -1}, sz[] = {4, 5};
        static const int64_t sd[] = {2, 1};
        check_params("reflect on a length-1 axis repeats it", MICA_FLOAT32, 2,
                     xd, st, sz, sd, REFLECT);
    }
    /* Fill: the param, the fifth input, and the types. */
    {
        static const int64_t xd[] = {2, 3}, st[] = {-1, 1}, sz[] = {4, 3};
        static const int64_t sd[] = {1, 1};
        th_tensor_t x = th_tensor(MICA_FLOAT32, 2, xd, seq);
        th_tensor_t e = ref_slice(MICA_FLOAT32, seq, 2, xd, st, sz, sd, FILL,
                                  -7.5);
        th_check("fill_value param", "Slice",
                 th_f_float(slice_f(2, st, sz, sd, FILL), "fill_value", -7.5),
                 1, &x, 1, &e, 0);
        th_free(&e);
        th_free(&x);
    }
    {
        static const int64_t xd[] = {2, 3}, st[] = {-1, 1}, sz[] = {4, 3};
        static const int64_t sd[] = {1, 1};
        static const double fv[] = {42};
        mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16, MICA_INT8,
                                MICA_INT32, MICA_BOOL};
        const char *tn[] = {"float32", "float16", "int8", "int32", "bool"};
        for (i = 0; i < LEN(types); i++) {
            char label[96];
            double want_fill = types[i] == MICA_BOOL ? 1 : 42;
            th_tensor_t in[5];
            th_tensor_t e = ref_slice(types[i], seq, 2, xd, st, sz, sd, FILL,
                                      want_fill);
            in[0] = th_tensor(types[i], 2, xd, seq);
            in[1] = in[2] = in[3] = th_none();
            in[4] = th_t(types[i], fv, 0);
            snprintf(label, sizeof label, "fill value as input 4, %s", tn[i]);
            th_check(label, "Slice", slice_f(2, st, sz, sd, FILL), 5, in, 1,
                     &e, 0);
            th_free(&in[0]);
            th_free(&in[4]);
            th_free(&e);
        }
    }
    {
        static const int64_t xd[] = {3}, st[] = {1}, sz[] = {4}, sd[] = {1};
        static const double want[] = {2, 3, 0, 0};
        th_tensor_t x = th_tensor(MICA_INT32, 1, xd, seq);
        th_tensor_t e = th_t(MICA_INT32, want, 1, 4);
        th_check("fill default value 0", "Slice", slice_f(1, st, sz, sd, FILL),
                 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t st[] = {2}, sz[] = {3};
        static const double want[] = {3, 4, 5};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 6);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 1, 3);
        th_check("stride defaults to 1", "Slice",
                 slice_f(1, st, sz, NULL, DEFAULT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t sz[] = {2, 2};
        static const double want[] = {1, 2, 4, 5};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 2, 2, 2);
        th_check("start defaults to 0", "Slice",
                 slice_f(2, NULL, sz, NULL, DEFAULT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const double v[] = {5};
        th_tensor_t x = th_t(MICA_FLOAT32, v, 0);
        th_tensor_t e = th_t(MICA_FLOAT32, v, 0);
        th_check("rank 0: a copy", "Slice",
                 slice_f(0, NULL, NULL, NULL, DEFAULT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    /* Empty tensors. */
    {
        static const int64_t st[] = {9, 0}, sz[] = {0, 2}, sd[] = {1, 1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 2);
        th_check("size 0 needs no bounds check", "Slice",
                 slice_f(2, st, sz, sd, DEFAULT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t st[] = {0, 1}, sz[] = {0, 2}, sd[] = {1, 1};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, NULL, 2, 0, 2);
        th_check("empty input, size 0 on its empty axis", "Slice",
                 slice_f(2, st, sz, sd, WRAP), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t st[] = {0, 1}, sz[] = {2, 2}, sd[] = {1, 1};
        static const double want[] = {3, 3, 3, 3};
        th_tensor_t x = th_t(MICA_FLOAT32, NULL, 2, 0, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 2, 2, 2);
        th_check("fill on a zero-length axis gives the fill value", "Slice",
                 th_f_float(slice_f(2, st, sz, sd, FILL), "fill_value", 3), 1,
                 &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    /* start, size, stride as shape-tensor inputs. */
    {
        static const int64_t xd[] = {3, 4}, st[] = {2, 3}, sz[] = {2, 3};
        static const int64_t sd[] = {-1, -1};
        th_tensor_t in[4];
        th_tensor_t e = ref_slice(MICA_FLOAT32, seq, 2, xd, st, sz, sd,
                                  DEFAULT, 0);
        in[0] = th_tensor(MICA_FLOAT32, 2, xd, seq);
        in[1] = shape_of(2, st);
        in[2] = shape_of(2, sz);
        in[3] = shape_of(2, sd);
        th_check("start, size, stride as shape tensors", "Slice",
                 th_f_str(th_fields(), "mode", "default"), 4, in, 1, &e, 0);
        for (i = 0; i < 4; i++)
            th_free(&in[i]);
        th_free(&e);
    }
    {
        static const int64_t xd[] = {3, 4}, st[] = {-2, 5}, sz[] = {5, 2};
        static const int64_t sd[] = {1, 3};
        th_tensor_t in[3];
        th_tensor_t e = ref_slice(MICA_INT32, seq, 2, xd, st, sz, sd, WRAP, 0);
        in[0] = th_tensor(MICA_INT32, 2, xd, seq);
        in[1] = th_none();
        in[2] = shape_of(2, sz);
        th_check("size as a shape tensor, start and stride params", "Slice",
                 th_f_ints(th_f_ints(th_f_str(th_fields(), "mode", "wrap"),
                                     "start", 2, st),
                           "stride", 2, sd),
                 3, in, 1, &e, 0);
        th_free(&in[0]);
        th_free(&in[2]);
        th_free(&e);
    }
    {
        static const int64_t st[] = {1}, sz[] = {3};
        th_tensor_t in[2];
        in[0] = th_t(MICA_FLOAT32, seq, 1, 3);
        in[1] = shape_of(1, st);
        th_check_error("out of bounds with a shape-tensor start", "Slice",
                       th_f_ints(th_fields(), "size", 1, sz), 2, in, 1,
                       "outside [0, 3)");
        th_free(&in[0]);
        th_free(&in[1]);
    }
    /* Errors. */
    {
        static const int64_t st[] = {1}, sz[] = {3}, sd[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 3);
        th_check_error("default mode, out of bounds", "Slice",
                       slice_f(1, st, sz, sd, DEFAULT), 1, &x, 1,
                       "reads index 3, outside [0, 3)");
        th_free(&x);
    }
    {
        static const int64_t st[] = {-1}, sz[] = {2}, sd[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 3);
        th_check_error("default mode, negative start", "Slice",
                       slice_f(1, st, sz, sd, DEFAULT), 1, &x, 1,
                       "reads index -1");
        th_free(&x);
    }
    for (m = DEFAULT; m <= REFLECT; m++) {
        static const int64_t st[] = {0, 0}, sz[] = {1, 2}, sd[] = {1, 1};
        char label[96];
        th_tensor_t x;
        if (m == FILL)
            continue;
        x = th_t(MICA_FLOAT32, NULL, 2, 2, 0);
        snprintf(label, sizeof label, "mode %s: size 2 on a zero-length axis",
                 modes[m]);
        th_check_error(label, "Slice", slice_f(2, st, sz, sd, m), 1, &x, 1,
                       "on an input axis of length 0");
        th_free(&x);
    }
    for (m = DEFAULT; m <= REFLECT; m++) {
        /* the fuzzer's engine: start + 2 * stride past INT64_MAX */
        static const int64_t st[] = {INT64_MAX - 5}, sz[] = {3};
        static const int64_t sd[] = {INT64_MAX / 2};
        char label[96];
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 3);
        snprintf(label, sizeof label, "mode %s: start + (size - 1) * stride "
                 "beyond 64 bits", modes[m]);
        th_check_error(label, "Slice", slice_f(1, st, sz, sd, m), 1, &x, 1,
                       "is beyond 64 bits");
        th_free(&x);
    }
    {
        /* reflect of INT64_MIN (its magnitude has no int64) */
        static const double want[] = {1, 2};
        static const int64_t st[] = {INT64_MIN}, sz[] = {2}, sd[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 3);
        th_tensor_t e = th_t(MICA_FLOAT32, want, 1, 2);
        th_check("mode reflect from INT64_MIN", "Slice",
                 slice_f(1, st, sz, sd, REFLECT), 1, &x, 1, &e, 0);
        th_free(&x);
        th_free(&e);
    }
    {
        static const int64_t st[] = {0}, sz[] = {2};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 2, 2, 2);
        th_check_error("param of the wrong length", "Slice",
                       slice_f(1, st, sz, NULL, DEFAULT), 1, &x, 1,
                       "'start' has 1 entries but x has rank 2");
        th_free(&x);
    }
    {
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 2);
        th_check_error("no size", "Slice", th_fields(), 1, &x, 1, "no size");
        th_free(&x);
    }
    {
        static const int64_t sz[] = {-1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 2);
        th_check_error("negative size", "Slice",
                       th_f_ints(th_fields(), "size", 1, sz), 1, &x, 1,
                       "sizes are >= 0");
        th_free(&x);
    }
    {
        static const int64_t sz[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 2);
        th_check_error("fill_value outside mode fill", "Slice",
                       th_f_float(th_f_ints(th_fields(), "size", 1, sz),
                                  "fill_value", 1),
                       1, &x, 1, "only used in mode fill");
        th_free(&x);
    }
    {
        static const int64_t sz[] = {1};
        static const double fv[] = {1};
        th_tensor_t in[5];
        in[0] = th_t(MICA_FLOAT32, seq, 1, 2);
        in[1] = in[2] = in[3] = th_none();
        in[4] = th_t(MICA_FLOAT32, fv, 0);
        th_check_error("fill input outside mode fill", "Slice",
                       th_f_ints(th_fields(), "size", 1, sz), 5, in, 1,
                       "not supported");
        th_free(&in[0]);
        th_free(&in[4]);
    }
    {
        static const int64_t sz[] = {2, 2};
        th_tensor_t in[3];
        in[0] = th_t(MICA_FLOAT32, seq, 2, 2, 2);
        in[1] = th_none();
        in[2] = shape_of(1, sz);
        th_check_error("size input of the wrong length", "Slice", th_fields(),
                       3, in, 1, "1-D tensor of length 2");
        th_free(&in[0]);
        th_free(&in[2]);
    }
    {
        static const int64_t sz[] = {1};
        th_tensor_t x = th_t(MICA_FLOAT32, seq, 1, 2);
        th_check_error("bad mode", "Slice",
                       th_f_str(th_f_ints(th_fields(), "size", 1, sz), "mode",
                                "mirror"),
                       1, &x, 1, "mirror");
        th_free(&x);
    }
    {
        static const int32_t sv[4] = {0, 3, 5, 0};
        mica_dims_t d;
        char msg[1024];
        mica_status_t st;
        memset(&d, 0, sizeof d);
        st = chain(0, sv, &d, msg, sizeof msg);
        ok(st == MICA_OK && d.nb_dims == 2 && d.d[0] == 3 && d.d[1] == 5,
           "chain: runs with sizes from a shape tensor, [3, 5]");
        if (st != MICA_OK)
            diag("%s", msg);
        st = chain(1, sv, &d, msg, sizeof msg);
        ok(st == MICA_OK && d.nb_dims == 2 && d.d[0] == 3 && d.d[1] == 5,
           "chain: start from a shape tensor in bounds");
        if (st != MICA_OK)
            diag("%s", msg);
    }
    {
        static const int32_t sv[4] = {3, 4, 2, 2};
        mica_dims_t d;
        char msg[1024];
        mica_status_t st = chain(1, sv, &d, msg, sizeof msg);
        ok(st != MICA_OK && strstr(msg, "reads index 6, outside [0, 6)"),
           "chain: out of bounds at run time is an error");
        diag("%s", msg);
    }
    vec_gather();
    wide_elements();
    return exit_status();
}
