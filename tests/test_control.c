/*
 * tests/test_control.c - loops and conditionals end to end: the seed
 * examples of tests/manifests/control/ built from their manifests and run
 * on the CPU (and on CUDA where a GPU is usable, layer by layer and in
 * CUDA graphs, where they become conditional nodes), against values computed
 * here by hand; every build-time error of tests/manifests/control/bad/;
 * the structure an engine reports; a saved engine with loops.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;
static const char *dir;

typedef struct input {
    const char *name;
    mica_dtype_t dtype;
    int nb_dims;
    int64_t d[3];
    const void *data;
} input_t;

static const char *path(const char *file)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/manifests/control/%s", dir, file);
    return buf;
}

static int fp16; /* build with float16 allowed */

static mica_engine_t *build(const char *file, uint32_t device)
{
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;

    if (mica_manifest_load(ctx, path(file), &m) != MICA_OK) {
        diag("%s: %s", file, mica_context_error(ctx));
        return NULL;
    }
    cfg = *mica_manifest_config(m);
    cfg.device = device;
    if (fp16)
        cfg.precisions = 1u << MICA_FLOAT16;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK)
        diag("%s: %s", file, mica_context_error(ctx));
    mica_manifest_destroy(m);
    return e;
}

/* Runs with CUDA graphs: each run three times (a warm-up, the capture,
 * a replay; the outputs are the replay's), the loops and conditionals
 * recorded as conditional nodes; with graph_needed, a run that did not
 * replay a graph fails the test. */
static int graphs, graph_needed;

/* Run engine e with the inputs; NULL (and a diagnostic) on failure. */
static mica_exec_t *run(mica_engine_t *e, const input_t *in, int n)
{
    mica_exec_t *x = NULL;
    int i, r;
    if (!e || mica_exec_create(e, &x) != MICA_OK)
        return NULL;
    if (graphs && mica_exec_set_cuda_graph(x, 1) != MICA_OK) {
        diag("graphs: %s", mica_context_error(ctx));
        mica_exec_destroy(x);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        mica_dims_t d;
        memset(&d, 0, sizeof d);
        d.nb_dims = in[i].nb_dims;
        memcpy(d.d, in[i].d, sizeof in[i].d);
        if (mica_exec_set_input(x, in[i].name, &d, in[i].data) != MICA_OK)
            break;
    }
    for (r = 0; r < (graphs ? 3 : 1) && i == n; r++)
        if (mica_exec_run(x) != MICA_OK)
            i = -1;
    if (i < n) {
        diag("run: %s", mica_context_error(ctx));
        mica_exec_destroy(x);
        return NULL;
    }
    if (graphs) {
        mica_cuda_graph_counts_t c;
        const char *why = mica_exec_cuda_graph_why(x);
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        mica_exec_cuda_graph_counts(x, &c);
        if (graph_needed && (why || c.replays < 1))
            ok(0, "replayed as a CUDA graph: %s",
               why ? why : "no replay");
        else if (why)
            diag("not in a CUDA graph: %s", why);
    }
    return x;
}

/* Output `name` holds the n values of want (as doubles) within tol. */
static int check(mica_exec_t *x, const char *name, const double *want,
                 int64_t n, double tol, const char *label)
{
    mica_tensor_desc_t desc;
    const void *data;
    int64_t i, vol;

    if (!x || mica_exec_get_output(x, name, &desc, &data) != MICA_OK)
        return ok(0, "%s: output %s", label, name);
    vol = mica_dims_volume(&desc.dims);
    if (vol < n)
        return ok(0, "%s: %s has %lld elements, want %lld", label, name,
                  (long long)vol, (long long)n);
    for (i = 0; i < n; i++) {
        double got = desc.dtype == MICA_INT32 ? ((const int32_t *)data)[i]
                                              : ((const float *)data)[i];
        if (fabs(got - want[i]) > tol * (1.0 + fabs(want[i])))
            return ok(0, "%s: %s[%lld] = %g, want %g", label, name,
                      (long long)i, got, want[i]);
    }
    return ok(1, "%s: %s", label, name);
}

/* The devices to run on: the CPU, and CUDA where usable, layer by
 * layer and with CUDA graphs. */
static int nb_devices(void)
{
    return th_cuda() ? 3 : 1;
}

static uint32_t device_of(int i)
{
    return i == 0 ? MICA_DEVICE_CPU : MICA_DEVICE_CUDA;
}

static const char *dev_name(int i)
{
    return i == 0 ? "cpu" : i == 1 ? "cuda" : "cuda graph";
}

/* ---- seed 000: loops ---------------------------------------------------- */

static void test_for_loop(int dev)
{
    float j[2] = {1.5f, -2.0f}, k[2] = {0.5f, 3.0f};
    int32_t counts[3] = {4, 0, 16}, c;
    mica_engine_t *e = build("for_loop.yaml", device_of(dev));
    char label[64];

    for (c = 0; c < 3; c++) {
        int32_t n = counts[c], t;
        input_t in[3] = {{"j", MICA_FLOAT32, 1, {2}, j},
                         {"k", MICA_FLOAT32, 1, {2}, k},
                         {"n", MICA_INT32, 0, {0}, &n}};
        double last[2], seq[32];
        mica_exec_t *x = run(e, in, 3);
        snprintf(label, sizeof label, "%s: for loop, %d trips", dev_name(dev),
                 (int)n);
        for (t = 0; t < n; t++) {
            seq[2 * t] = j[0] + t * k[0];
            seq[2 * t + 1] = j[1] + t * k[1];
        }
        last[0] = j[0] + n * k[0];
        last[1] = j[1] + n * k[1];
        check(x, "i_last", last, 2, 1e-6, label);
        check(x, "i_seq", seq, 2 * (int64_t)n, 1e-6, label);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
}

static void test_iterate(int dev)
{
    float xv[12];
    double doubled[12], transposed[12], flipped[12], mirrored[12];
    input_t in[1] = {{"x", MICA_FLOAT32, 2, {3, 4}, xv}};
    mica_engine_t *e = build("iterate.yaml", device_of(dev));
    mica_exec_t *x;
    char label[64];
    int r, c;

    for (r = 0; r < 3; r++)
        for (c = 0; c < 4; c++) {
            xv[r * 4 + c] = (float)(10 * r + c);
            doubled[r * 4 + c] = 2.0 * (10 * r + c);
            transposed[c * 3 + r] = 10 * r + c;
            flipped[(2 - r) * 4 + c] = 10 * r + c;
            mirrored[r * 4 + (3 - c)] = 10 * r + c;
        }
    x = run(e, in, 1);
    snprintf(label, sizeof label, "%s: iterators", dev_name(dev));
    check(x, "doubled", doubled, 12, 0, label);
    check(x, "transposed", transposed, 12, 0, label);
    check(x, "flipped", flipped, 12, 0, label);
    check(x, "flipped2", flipped, 12, 0, label);
    check(x, "mirrored", mirrored, 12, 0, label);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

static void test_while(int dev)
{
    float xv[2] = {1.0f, -0.5f};
    float limits[3] = {3.0f, 0.0f, 7.5f};
    mica_engine_t *e = build("while_loop.yaml", device_of(dev));
    int c, t;

    for (c = 0; c < 3; c++) {
        input_t in[2] = {{"x", MICA_FLOAT32, 1, {2}, xv},
                         {"limit", MICA_FLOAT32, 0, {0}, &limits[c]}};
        /* Trips: the smallest n with i_n = n >= limit. */
        int n = (int)ceil(limits[c]);
        double v[2], trips = n, all[16];
        mica_exec_t *x = run(e, in, 2);
        char label[64];
        snprintf(label, sizeof label, "%s: while loop, limit %g",
                 dev_name(dev), (double)limits[c]);
        v[0] = xv[0] * pow(2, n);
        v[1] = xv[1] * pow(2, n);
        /* v_all has 8 slices: those past the last trip are zeros. */
        for (t = 0; t < 8; t++) {
            all[2 * t] = t < n ? xv[0] * pow(2, t) : 0;
            all[2 * t + 1] = t < n ? xv[1] * pow(2, t) : 0;
        }
        check(x, "v_out", v, 2, 0, label);
        check(x, "i_out", &trips, 1, 0, label);
        check(x, "v_all", all, 16, 0, label);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
}

static void test_nested_loop(int dev)
{
    float xv[12];
    double sums[3] = {0, 0, 0}, all = 0;
    input_t in[1] = {{"x", MICA_FLOAT32, 2, {3, 4}, xv}};
    mica_engine_t *e = build("nested_loop.yaml", device_of(dev));
    mica_exec_t *x;
    char label[64];
    int i;

    for (i = 0; i < 12; i++) {
        xv[i] = (float)(i * i % 7) - 2.5f;
        sums[i / 4] += xv[i];
        all += xv[i];
    }
    x = run(e, in, 1);
    snprintf(label, sizeof label, "%s: nested loop", dev_name(dev));
    check(x, "row_sums", sums, 3, 1e-6, label);
    check(x, "sum_all", &all, 1, 1e-6, label);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* Runtime dimensions: the rows of x [N, 3] for several N of one profile. */
static void test_dynamic_rows(int dev)
{
    mica_engine_t *e = build("dynamic_rows.yaml", device_of(dev));
    int64_t rows[3] = {4, 1, 8};
    int c, i;

    for (c = 0; c < 3; c++) {
        float xv[24];
        double sums[3] = {0, 0, 0}, running[24];
        input_t in[1] = {{"x", MICA_FLOAT32, 2, {rows[c], 3}, xv}};
        mica_exec_t *x;
        char label[64];
        for (i = 0; i < rows[c] * 3; i++) {
            xv[i] = (float)(i % 5) - 1.5f;
            sums[i % 3] += xv[i];
            running[i] = sums[i % 3];
        }
        x = run(e, in, 1);
        snprintf(label, sizeof label, "%s: loop over %d rows", dev_name(dev),
                 (int)rows[c]);
        check(x, "sums", sums, 3, 1e-6, label);
        check(x, "running", running, rows[c] * 3, 1e-6, label);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
}

/* ---- seed 001: conditionals -------------------------------------------- */

static void test_simple_if(int dev)
{
    float xv[4] = {1, 2, 3, 4}, yv[4] = {0.5f, -1, 8, 2};
    mica_engine_t *e = build("simple_if.yaml", device_of(dev));
    mica_engine_t *sel = build("select_like.yaml", device_of(dev));
    uint8_t c;

    for (c = 0; c < 2; c++) {
        input_t in[3] = {{"cond", MICA_BOOL, 0, {0}, &c},
                         {"x", MICA_FLOAT32, 1, {4}, xv},
                         {"y", MICA_FLOAT32, 1, {4}, yv}};
        double want[4], want3[3];
        mica_exec_t *x = run(e, in, 3);
        char label[64];
        int i;
        for (i = 0; i < 4; i++)
            want[i] = c ? xv[i] + yv[i] : xv[i] - yv[i];
        snprintf(label, sizeof label, "%s: simple if, cond %d",
                 dev_name(dev), c);
        check(x, "z", want, 4, 0, label);
        mica_exec_destroy(x);
        in[1].d[0] = in[2].d[0] = 3;
        for (i = 0; i < 3; i++)
            want3[i] = c ? xv[i] * yv[i] : yv[i];
        x = run(sel, in, 3);
        snprintf(label, sizeof label, "%s: conditional as select, cond %d",
                 dev_name(dev), c);
        check(x, "z", want3, 3, 0, label);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
    mica_engine_destroy(sel);
}

static void test_sum_even(int dev)
{
    int32_t sets[2][6] = {{1, 2, 3, 4, 5, 6}, {-4, 7, 0, 9, 12, -3}};
    mica_engine_t *e = build("sum_even.yaml", device_of(dev));
    int s, i;

    for (s = 0; s < 2; s++) {
        input_t in[1] = {{"items", MICA_INT32, 1, {6}, sets[s]}};
        double want = 0;
        mica_exec_t *x = run(e, in, 1);
        char label[64];
        for (i = 0; i < 6; i++)
            if (sets[s][i] % 2 == 0)
                want += sets[s][i];
        snprintf(label, sizeof label, "%s: sum_even, set %d", dev_name(dev),
                 s);
        check(x, "total", &want, 1, 0, label);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
}

static void test_cond_in_cond(int dev)
{
    float xv[3] = {1, 2, 3}, yv[3] = {4, -5, 0.5f};
    mica_engine_t *e = build("cond_in_cond.yaml", device_of(dev));
    uint8_t a, b;

    for (a = 0; a < 2; a++)
        for (b = 0; b < 2; b++) {
            input_t in[4] = {{"a", MICA_BOOL, 0, {0}, &a},
                             {"b", MICA_BOOL, 0, {0}, &b},
                             {"x", MICA_FLOAT32, 1, {3}, xv},
                             {"y", MICA_FLOAT32, 1, {3}, yv}};
            double want[3];
            mica_exec_t *x = run(e, in, 4);
            char label[64];
            int i;
            for (i = 0; i < 3; i++)
                want[i] = !a ? xv[i] * yv[i]
                        : b ? xv[i] + yv[i] : xv[i] - yv[i];
            snprintf(label, sizeof label, "%s: if in if, a %d b %d",
                     dev_name(dev), a, b);
            check(x, "z", want, 3, 0, label);
            mica_exec_destroy(x);
        }
    mica_engine_destroy(e);
}

/* ---- the LSTM cell ------------------------------------------------------ */

enum { LI = 3, LH = 4, LT = 5 };

static double sigm(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

static void test_lstm(int dev, int half)
{
    float xv[LT * LI], h0[LH], c0[LH], w[LI * 4 * LH], r[LH * 4 * LH];
    float bias[4 * LH];
    double h[LH], c[LH], hs[LT * LH];
    input_t in[3] = {{"x", MICA_FLOAT32, 2, {LT, LI}, xv},
                     {"h0", MICA_FLOAT32, 2, {1, LH}, h0},
                     {"c0", MICA_FLOAT32, 2, {1, LH}, c0}};
    mica_engine_t *e;
    mica_exec_t *x;
    char label[64];
    double tol = half ? 1e-2 : 1e-5;
    int t, k, j;

    fp16 = half;
    e = build("lstm.yaml", device_of(dev));
    fp16 = 0;

    for (k = 0; k < LI * 4 * LH; k++)
        w[k] = (float)(0.5 * sin(0.37 * k + 0.1));
    for (k = 0; k < LH * 4 * LH; k++)
        r[k] = (float)(0.4 * cos(0.23 * k));
    for (k = 0; k < 4 * LH; k++)
        bias[k] = (float)(0.1 * sin(k));
    for (k = 0; k < LT * LI; k++)
        xv[k] = (float)(0.3 * k - 1.0);
    for (k = 0; k < LH; k++) {
        h0[k] = (float)(0.1 * k - 0.15);
        c0[k] = (float)(0.2 - 0.05 * k);
        h[k] = h0[k];
        c[k] = c0[k];
    }
    for (t = 0; t < LT; t++) {
        double g[4 * LH];
        for (j = 0; j < 4 * LH; j++) {
            g[j] = bias[j];
            for (k = 0; k < LI; k++)
                g[j] += xv[t * LI + k] * w[k * 4 * LH + j];
            for (k = 0; k < LH; k++)
                g[j] += h[k] * r[k * 4 * LH + j];
        }
        for (j = 0; j < LH; j++) {
            c[j] = sigm(g[LH + j]) * c[j] + sigm(g[j]) * tanh(g[2 * LH + j]);
            h[j] = sigm(g[3 * LH + j]) * tanh(c[j]);
            hs[t * LH + j] = h[j];
        }
    }
    x = run(e, in, 3);
    snprintf(label, sizeof label, "%s: LSTM cell, %d steps%s", dev_name(dev),
             LT, half ? ", float16 allowed" : "");
    check(x, "h_all", hs, LT * LH, tol, label);
    check(x, "h_n", h, LH, tol, label);
    check(x, "c_n", c, LH, tol, label);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* float16 inside a loop: the LSTM and the for loop built with float16
 * allowed run their layers in float16 where the implementations take it
 * (casts at the loop's edges), within float16's precision. */
static void test_float16(int dev)
{
    float j[2] = {1.5f, -2.0f}, k[2] = {0.5f, 3.0f};
    int32_t n = 6, t;
    input_t in[3] = {{"j", MICA_FLOAT32, 1, {2}, j},
                     {"k", MICA_FLOAT32, 1, {2}, k},
                     {"n", MICA_INT32, 0, {0}, &n}};
    double last[2], seq[12];
    mica_engine_t *e;
    mica_exec_t *x;
    int32_t i, halves = 0;
    char label[64];

    fp16 = 1;
    e = build("for_loop.yaml", device_of(dev));
    fp16 = 0;
    for (i = 0; e && i < mica_engine_nb_tensors(e); i++) {
        mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (mica_engine_tensor(e, i, &ti) == MICA_OK &&
            ti.dtype == MICA_FLOAT16)
            halves++;
    }
    diag("%s: for loop with float16 allowed: %d float16 tensors",
         dev_name(dev), (int)halves);
    for (t = 0; t < n; t++) {
        seq[2 * t] = j[0] + t * k[0];
        seq[2 * t + 1] = j[1] + t * k[1];
    }
    last[0] = j[0] + n * k[0];
    last[1] = j[1] + n * k[1];
    x = run(e, in, 3);
    snprintf(label, sizeof label, "%s: float16 for loop", dev_name(dev));
    check(x, "i_last", last, 2, 2e-3, label);
    check(x, "i_seq", seq, 2 * (int64_t)n, 2e-3, label);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_build_errors(void)
{
    static const struct {
        const char *file, *needle;
    } bad[] = {
        {"unclean.yaml", "are not nested cleanly: each uses values defined "
                         "inside the other"},
        {"cross_branch.yaml", "layer 'twice' of conditional 'C' feeds both "
                              "its true and its false branch"},
        {"nested_output.yaml", "output 'o' is the output of conditional 'C', "
                               "which is nested inside loop 'L'"},
        {"inner_output.yaml", "output 'nr' is defined inside loop 'L'"},
        {"two_trip.yaml", "loop 'L' has 2 TripLimit layers ('t1', 't2')"},
        {"no_bound.yaml", "loop 'L' has no TripLimit and no Iterator"},
        {"no_condition.yaml", "conditional 'C' has no Condition layer"},
        {"two_conditions.yaml", "conditional 'C' has 2 Condition layers"},
        {"no_output.yaml", "conditional 'C' has no IfConditionalOutput"},
        {"stray_loop.yaml", "layer 'neg' (Unary) names loop 'L', but only "
                            "loop boundary layers do"},
        {"unnamed.yaml", "layer 'row' (Iterator) is a loop boundary layer: "
                         "it must name its loop"},
        {"kind_clash.yaml", "names conditional 'L', but 'L' is already a "
                            "loop"},
        {"next_shape.yaml", "the next value 'grown' is float32 [4] but the "
                            "initial value 'x' is float32 [2]"},
        {"count_inside.yaml", "the trip count 'cx' is computed inside loop "
                              "'L'"},
        {"iterate_inside.yaml", "loop 'L': the tensor iterated by Iterator "
                                "'row' is computed inside the loop (by layer "
                                "'neg'); it must come from outside"},
        {"last_value.yaml", "layer 'last' (LoopOutput): a last_value output "
                            "reads the output of a Recurrence of loop 'L', "
                            "but 'nr' is made by layer 'neg'"},
    };
    size_t i;
    char file[256];

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mica_engine_t *e;
        snprintf(file, sizeof file, "bad/%s", bad[i].file);
        e = build(file, MICA_DEVICE_CPU);
        if (e) {
            ok(0, "%s is refused", bad[i].file);
            mica_engine_destroy(e);
            continue;
        }
        contains(mica_context_error(ctx), bad[i].needle, "%s is refused",
                 bad[i].file);
    }
}

static void test_run_errors(int dev)
{
    float xv[2] = {1, 2};
    int32_t n = 3, two = 2;
    mica_engine_t *e = build("bad/short_length.yaml", device_of(dev));
    mica_exec_t *x = NULL;

    ok(e != NULL, "%s: short length builds", dev_name(dev));
    if (e && mica_exec_create(e, &x) == MICA_OK) {
        mica_dims_t d0, d1;
        memset(&d0, 0, sizeof d0);
        memset(&d1, 0, sizeof d1);
        d1.nb_dims = 1;
        d1.d[0] = 2;
        mica_exec_set_input(x, "n", &d0, &n);
        mica_exec_set_input(x, "x", &d1, xv);
        ok(mica_exec_run(x) != MICA_OK &&
               strstr(mica_context_error(ctx), "layer 'seq'") &&
               strstr(mica_context_error(ctx), "length"),
           "%s: a length smaller than the trip count is a run-time error",
           dev_name(dev));
        diag("%s", mica_context_error(ctx));
        mica_exec_set_input(x, "n", &d0, &two);
        ok(mica_exec_run(x) == MICA_OK,
           "%s: the same loop with 2 trips runs", dev_name(dev));
        mica_exec_destroy(x);
    } else {
        ok(0, "%s: short length runs", dev_name(dev));
        ok(0, "%s: short length runs twice", dev_name(dev));
    }
    mica_engine_destroy(e);
}

/* ---- structure ---------------------------------------------------------- */

static void test_structure(void)
{
    mica_engine_t *e = build("sum_even.yaml", MICA_DEVICE_CPU);
    mica_construct_info_t loop = {
        .struct_size = sizeof(mica_construct_info_t)};
    mica_construct_info_t cond = {
        .struct_size = sizeof(mica_construct_info_t)};
    int32_t i, add = -1, pick = -1;

    if (!e) {
        ok(0, "sum_even builds");
        return;
    }
    is_int(2, mica_engine_nb_constructs(e), "sum_even: two constructs");
    memset(&loop, 0, sizeof loop);
    memset(&cond, 0, sizeof cond);
    loop.struct_size = cond.struct_size = sizeof loop;
    mica_engine_construct(e, 0, &loop);
    mica_engine_construct(e, 1, &cond);
    ok(loop.kind == MICA_CONSTRUCT_LOOP && strcmp(loop.name, "L") == 0 &&
           loop.parent == -1,
       "sum_even: loop L at the top level");
    ok(cond.kind == MICA_CONSTRUCT_CONDITIONAL &&
           strcmp(cond.name, "E") == 0 && cond.parent == 0 &&
           cond.first_layer >= loop.first_layer &&
           cond.end_layer <= loop.end_layer,
       "sum_even: conditional E inside loop L");
    for (i = 0; i < mica_engine_nb_layers(e); i++) {
        mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        mica_engine_layer(e, i, &li);
        if (strcmp(li.name, "add") == 0 && li.construct == 1 && li.branch == 0)
            add = i;
        if (strcmp(li.name, "pick") == 0 && li.construct == 1 &&
            li.role == MICA_ROLE_IF_OUTPUT)
            pick = i;
        /* The eager layers stay in the loop, before the conditional. */
        if (strcmp(li.name, "is_even") == 0)
            ok(li.construct == 0 && i < cond.first_layer,
               "sum_even: is_even is in the loop, outside the conditional");
        if (strcmp(li.name, "zero_c") == 0)
            ok(li.construct == -1, "sum_even: the constant is outside");
    }
    ok(add >= 0 && pick > add, "sum_even: add is in the true branch of E, "
       "before its output");
    mica_engine_destroy(e);
}

/* A saved engine with loops runs as the built one. */
static void test_saved(void)
{
    mica_engine_t *e = build("sum_even.yaml", MICA_DEVICE_CPU), *back = NULL;
    int32_t items[6] = {2, 3, 4, 5, 6, 7};
    input_t in[1] = {{"items", MICA_INT32, 1, {6}, items}};
    double want = 12;
    void *bytes = NULL;
    size_t size = 0;
    mica_exec_t *x;

    ok(e && mica_engine_serialize(e, &bytes, &size) == MICA_OK &&
           mica_engine_deserialize(ctx, bytes, size, &back) == MICA_OK,
       "sum_even: serialized and read back");
    x = run(back, in, 1);
    check(x, "total", &want, 1, 0, "sum_even from its engine file");
    is_int(back ? 2 : -1, back ? mica_engine_nb_constructs(back) : -2,
           "the loaded engine has the loop and the conditional");
    mica_exec_destroy(x);
    free(bytes);
    mica_engine_destroy(back);
    mica_engine_destroy(e);
}

int main(void)
{
    int dev;

    dir = getenv("MICA_TOP_SRCDIR");
    if (!dir)
        skip_all("MICA_TOP_SRCDIR is not set (run through make check)");
    plan_lazy();
    ctx = th_context();
    for (dev = 0; dev < 3; dev++) {
        if (dev >= nb_devices()) {
            skip("cuda%s: no usable GPU: the loops and conditionals ran on "
                 "the CPU only", dev == 2 ? " graphs" : "");
            continue;
        }
        /* In CUDA graphs (core/exec_graph.c): every loop and conditional
         * as conditional nodes, but where a size is data-dependent. */
        graphs = graph_needed = dev == 2;
        test_for_loop(dev);
        test_iterate(dev);
        test_while(dev);
        test_nested_loop(dev);
        graph_needed = 0;
        test_dynamic_rows(dev);
        graph_needed = graphs;
        test_simple_if(dev);
        test_sum_even(dev);
        test_cond_in_cond(dev);
        test_lstm(dev, 0);
        test_lstm(dev, 1);
        test_float16(dev);
        graph_needed = 0;
        test_run_errors(dev);
        graphs = 0;
    }
    test_build_errors();
    test_structure();
    test_saved();
    return exit_status();
}
