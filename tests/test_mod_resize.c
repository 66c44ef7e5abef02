/*
 * tests/test_mod_resize.c - the Resize module against the fixtures of
 * tests/gen/gen_resize.py (onnxruntime's results, and an independent
 * NumPy transcription of ONNX Resize where ONNX has no equivalent
 * setting): every coordinate transformation, rounding and selector, both
 * modes, output shapes from the param, from a shape-tensor input and from
 * scales; each case in float32 and float16, nearest also in int8 and
 * int32, some with runtime dimensions.  Then the defaults, empty tensors
 * and the errors.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct resize_case {
    const char *name, *mode, *coord, *round, *selector;
    int by_scales, rank;
    int64_t in[MICA_MAX_DIMS], out[MICA_MAX_DIMS];
    float scales[MICA_MAX_DIMS];
    int xo, yo;
} resize_case_t;

#include "resize_fixtures.h"

enum { BY_PARAM, BY_INPUT, BY_SCALES };

static th_fields_t *settings(const resize_case_t *c)
{
    th_fields_t *f = th_f_str(th_fields(), "mode", c->mode);
    th_f_str(f, "coordinate_transformation", c->coord);
    th_f_str(f, "nearest_rounding", c->round);
    return th_f_str(f, "selector_for_single_pixel", c->selector);
}

static void run_case(const resize_case_t *c, mica_dtype_t t, int by,
                     unsigned runtime)
{
    th_tensor_t in[2], y;
    th_fields_t *f = settings(c);
    int linear = !strcmp(c->mode, "linear"), k;
    int64_t i, n;
    double tol = !linear ? 0 : t == MICA_FLOAT16 ? 2e-3 : 1e-5;
    char label[300];

    in[0] = th_tensor(t, c->rank, c->in, NULL);
    for (i = 0; i < th_volume(&in[0]); i++)
        th_set(&in[0], i, resize_x[c->xo + i]);
    y = th_tensor(t, c->rank, c->out, NULL);
    n = th_volume(&y);
    for (i = 0; i < n; i++)
        th_set(&y, i, resize_y[c->yo + i]);
    in[1] = th_none();
    if (by == BY_SCALES) {
        double v[MICA_MAX_DIMS];
        for (k = 0; k < c->rank; k++)
            v[k] = c->scales[k];
        th_f_floats(f, "scales", c->rank, v);
    } else if (by == BY_PARAM) {
        th_f_ints(f, "output_shape", c->rank, c->out);
    } else {
        double v[MICA_MAX_DIMS];
        for (k = 0; k < c->rank; k++)
            v[k] = (double)c->out[k];
        in[1] = th_shape(th_t(MICA_INT32, v, 1, c->rank));
    }
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    snprintf(label, sizeof label, "%s: %s %s %s %s, %s, %s%s", c->name,
             c->mode, c->coord, c->round, c->selector,
             by == BY_SCALES ? "scales" : by == BY_PARAM ? "output_shape"
                                                          : "shape input",
             mica_dtype_name(t), runtime ? ", runtime dims" : "");
    th_check(label, "Resize", f, by == BY_INPUT ? 2 : 1, in, 1, &y, tol);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&y);
}

/* x of type t and dims d (n of them) resized with fields f (freed) and
 * optionally a shape input of values sv (ns of them), fails. */
static void fail(const char *what, mica_dtype_t t, int n, const int64_t *d,
                 th_fields_t *f, int ns, const double *sv, unsigned runtime,
                 const char *needle)
{
    th_tensor_t in[2];
    in[0] = th_tensor(t, n, d, NULL);
    in[1] = ns > 0 ? th_shape(th_t(MICA_INT32, sv, 1, ns)) : th_none();
    if (runtime)
        in[0] = th_runtime(in[0], runtime);
    th_check_error(what, "Resize", f, ns > 0 ? 2 : 1, in, 1, needle);
    th_free(&in[0]);
    th_free(&in[1]);
}

static th_fields_t *shape_f(const char *mode, int n, const int64_t *v)
{
    return th_f_ints(th_f_str(th_fields(), "mode", mode), "output_shape", n,
                     v);
}

static th_fields_t *scales_f(const char *mode, int n, const double *v)
{
    return th_f_floats(th_f_str(th_fields(), "mode", mode), "scales", n, v);
}

int main(void)
{
    static const int64_t d4[] = {2, 3, 4, 5}, d3[] = {2, 3, 4};
    int i;

    plan_lazy();
    th_context();

    for (i = 0; i < LEN(resize_cases); i++) {
        const resize_case_t *c = &resize_cases[i];
        int by = c->by_scales ? BY_SCALES : i % 2 ? BY_INPUT : BY_PARAM;
        run_case(c, MICA_FLOAT32, by, 0);
        run_case(c, MICA_FLOAT16, by, 0);
        if (!strcmp(c->mode, "nearest")) {
            run_case(c, MICA_INT8, by, 0);
            run_case(c, MICA_INT32, by, 0);
        }
        if (i % 5 == 0)
            run_case(c, MICA_FLOAT32, by, (1u << c->rank) - 1);
    }

    /* The defaults: nearest, asymmetric, floor, formula; [1, 4] -> [1, 6]
     * reads 0, 0, 1, 2, 2, 3 (x * 4 / 6, floored). */
    {
        static const double xv[] = {10, 20, 30, 40};
        static const double yv[] = {10, 10, 20, 30, 30, 40};
        static const int64_t o[] = {1, 6};
        th_tensor_t x = th_t(MICA_FLOAT32, xv, 2, 1, 4);
        th_tensor_t y = th_t(MICA_FLOAT32, yv, 2, 1, 6);
        th_check("defaults", "Resize",
                 th_f_ints(th_fields(), "output_shape", 2, o), 1, &x, 1, &y,
                 0);
        th_free(&x);
        th_free(&y);
    }
    /* Empty tensors: an empty input stays empty; a length resized to 0. */
    {
        static const int64_t e[] = {0, 3, 4}, eo[] = {0, 5, 6},
                             to0[] = {2, 0, 4};
        th_tensor_t x = th_tensor(MICA_FLOAT32, 3, e, NULL);
        th_tensor_t y = th_tensor(MICA_FLOAT32, 3, eo, NULL);
        th_check("empty input", "Resize", shape_f("linear", 3, eo), 1, &x, 1,
                 &y, 0);
        th_free(&x);
        th_free(&y);
        x = th_tensor(MICA_FLOAT32, 3, d3, NULL);
        y = th_tensor(MICA_FLOAT32, 3, to0, NULL);
        th_check("resized to nothing", "Resize", shape_f("nearest", 3, to0),
                 1, &x, 1, &y, 0);
        th_free(&x);
        th_free(&y);
    }

    /* Errors. */
    {
        static const int64_t o4[] = {2, 3, 8, 10}, o3[] = {3, 8, 10},
                             neg[] = {2, 3, -1, 5}, lin0[] = {4, 3, 4, 5},
                             z[] = {2, 0, 4}, zo[] = {2, 4, 4}, none[1] = {0};
        static const double s4[] = {1, 1, 2, 2}, s3[] = {1, 2, 2},
                            zero[] = {1, 0, 2, 2}, huge[] = {1, 1, 1e6, 1},
                            lin_s[] = {2, 1, 1, 1}, v3[] = {3, 8, 10},
                            v4[] = {2, 3, 8, 10};
        fail("rank 0", MICA_FLOAT32, 0, none, shape_f("nearest", 0, none), 0,
             NULL, 0, "Resize takes input 0 of rank 1 or more, got rank 0");
        fail("no output shape", MICA_FLOAT32, 4, d4,
             th_f_str(th_fields(), "mode", "nearest"), 0, NULL, 0,
             "the output shape must come from exactly one of 'output_shape', "
             "input 1 and 'scales', got 0");
        fail("two output shapes", MICA_FLOAT32, 4, d4,
             th_f_floats(shape_f("nearest", 4, o4), "scales", 4, s4), 0,
             NULL, 0, "exactly one of 'output_shape', input 1 and 'scales', "
             "got 2");
        fail("param and input", MICA_FLOAT32, 4, d4,
             shape_f("nearest", 4, o4), 4, v4, 0,
             "exactly one of 'output_shape', input 1 and 'scales', got 2");
        fail("output_shape of the wrong rank", MICA_FLOAT32, 4, d4,
             shape_f("nearest", 3, o3), 0, NULL, 0,
             "'output_shape' has 3 values but input 0 has rank 4");
        fail("scales of the wrong rank", MICA_FLOAT32, 4, d4,
             scales_f("nearest", 3, s3), 0, NULL, 0,
             "'scales' has 3 values but input 0 has rank 4");
        fail("shape input of the wrong rank", MICA_FLOAT32, 4, d4,
             th_f_str(th_fields(), "mode", "linear"), 3, v3, 0,
             "input 1 (output shape) has 3 values but input 0 has rank 4");
        fail("negative output length", MICA_FLOAT32, 4, d4,
             shape_f("nearest", 4, neg), 0, NULL, 0,
             "'output_shape' value 2 is -1: lengths cannot be negative");
        fail("zero scale", MICA_FLOAT32, 4, d4, scales_f("nearest", 4, zero),
             0, NULL, 0,
             "'scales' value 1 is 0: scales must lie in [2^-16, 2^16]");
        fail("huge scale", MICA_FLOAT32, 4, d4, scales_f("nearest", 4, huge),
             0, NULL, 0,
             "'scales' value 2 is 1e+06: scales must lie in [2^-16, 2^16]");
        fail("linear on a 4th dimension", MICA_FLOAT32, 4, d4,
             shape_f("linear", 4, lin0), 0, NULL, 0,
             "mode 'linear' resizes at most the 3 innermost dimensions, but "
             "dimension 0 changes from 2 to 4");
        fail("linear scales on a 4th dimension", MICA_FLOAT32, 4, d4,
             scales_f("linear", 4, lin_s), 0, NULL, 0,
             "mode 'linear' resizes at most the 3 innermost dimensions, but "
             "'scales' value 0 is 2");
        fail("linear on a 4th runtime dimension", MICA_FLOAT32, 4, d4,
             shape_f("linear", 4, lin0), 0, NULL, 1u,
             "dimension 0 changes from 2 to 4");
        fail("linear int8", MICA_INT8, 4, d4, shape_f("linear", 4, o4), 0,
             NULL, 0, "mode 'linear' takes float32 or float16 input, got "
             "int8");
        fail("nearest bool", MICA_BOOL, 4, d4, shape_f("nearest", 4, o4), 0,
             NULL, 0, "mode 'nearest' takes float32, float16, int8 or int32 "
             "input, got bool");
        fail("length 0 grown", MICA_FLOAT32, 3, z, shape_f("nearest", 3, zo),
             0, NULL, 0, "dimension 1 has length 0 and cannot be resized to 4");
        fail("unknown mode", MICA_FLOAT32, 4, d4, shape_f("cubic", 4, o4), 0,
             NULL, 0, "cubic");
    }
    return exit_status();
}
