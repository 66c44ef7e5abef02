/*
 * tests/test_rnn_loop.c - the same two-layer LSTM built from loops and as
 * one RNNv2 layer (tests/manifests/rnn/lstm_loop.yaml, written by
 * tests/gen/lstm_loop.py on shared weights) gives the same outputs: on
 * the CPU, through an engine file (the RNNv2 layer's lists of weights
 * saved and read back), and on CUDA in float32 and float16 (skipped
 * without a GPU).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mica/mica.h"

enum { N = 2, T = 5, E = 3, H = 4, L = 2 };

static float x[N * T * E];

static const char *path(void)
{
    static char buf[4096];
    const char *top = getenv("MICA_TOP_SRCDIR");
    snprintf(buf, sizeof buf, "%s/tests/manifests/rnn/lstm_loop.yaml",
             top ? top : ".");
    return buf;
}

/* The manifest built for `device` (float16 allowed with `half`). */
static mica_engine_t *build(uint32_t device, int half)
{
    mica_context_t *ctx = th_context();
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;

    if (mica_manifest_load(ctx, path(), &m) != MICA_OK) {
        diag("%s", mica_context_error(ctx));
        return NULL;
    }
    cfg = *mica_manifest_config(m);
    cfg.device = device;
    if (half)
        cfg.precisions = 1u << MICA_FLOAT16;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK)
        diag("build: %s", mica_context_error(ctx));
    mica_manifest_destroy(m);
    return e;
}

/* Output `name` of x as floats into out (n of them); 1 on success. */
static int output(mica_exec_t *ex, const char *name, float *out, int64_t n)
{
    mica_tensor_desc_t d;
    const void *data;
    if (mica_exec_get_output(ex, name, &d, &data) != MICA_OK ||
        d.dtype != MICA_FLOAT32 || mica_dims_volume(&d.dims) != n) {
        diag("output %s: %s", name, mica_context_error(th_context()));
        return 0;
    }
    memcpy(out, data, sizeof *out * (size_t)n);
    return 1;
}

/* Every output of a run: the RNNv2 layer's, then the loops'. */
typedef struct outs {
    float y_rnn[N * T * H], h_rnn[N * L * H], c_rnn[N * L * H];
    float y_loop[N * T * H], h_loop[L][N * H], c_loop[L][N * H];
} outs_t;

/* Run engine e on x into *o; 1 on success. */
static int run(mica_engine_t *e, outs_t *o)
{
    mica_exec_t *ex = NULL;
    mica_dims_t d;
    char name[32];
    int good, l;

    memset(&d, 0, sizeof d);
    d.nb_dims = 3;
    d.d[0] = N;
    d.d[1] = T;
    d.d[2] = E;
    good = e && mica_exec_create(e, &ex) == MICA_OK &&
           mica_exec_set_input(ex, "x", &d, x) == MICA_OK &&
           mica_exec_run(ex) == MICA_OK;
    if (!good)
        diag("run: %s", mica_context_error(th_context()));
    good = good && output(ex, "y_rnn", o->y_rnn, N * T * H) &&
           output(ex, "h_rnn", o->h_rnn, N * L * H) &&
           output(ex, "c_rnn", o->c_rnn, N * L * H) &&
           output(ex, "y_loop", o->y_loop, N * T * H);
    for (l = 0; good && l < L; l++) {
        snprintf(name, sizeof name, "h_loop_%d", l);
        good = output(ex, name, o->h_loop[l], N * H);
        snprintf(name, sizeof name, "c_loop_%d", l);
        good = good && output(ex, name, o->c_loop[l], N * H);
    }
    mica_exec_destroy(ex);
    return good;
}

/* Whether a and b (n floats) agree within tol; says where not. */
static int near(const char *what, const float *a, const float *b, int n,
                double tol)
{
    int i;
    for (i = 0; i < n; i++)
        if (!(fabs((double)a[i] - b[i]) <= tol * (1 + fabs((double)a[i])))) {
            diag("%s: element %d: %.9g against %.9g", what, i, a[i], b[i]);
            return 0;
        }
    return 1;
}

/* The loops against the RNNv2 layer: y, and each layer's final states
 * against that layer's rows of h_rnn and c_rnn. */
static int same_forms(const outs_t *o, double tol)
{
    int good = near("y", o->y_rnn, o->y_loop, N * T * H, tol), b, l;
    for (l = 0; l < L; l++)
        for (b = 0; b < N; b++) {
            good &= near("h", o->h_rnn + (b * L + l) * H, o->h_loop[l] + b * H,
                         H, tol);
            good &= near("c", o->c_rnn + (b * L + l) * H, o->c_loop[l] + b * H,
                         H, tol);
        }
    return good;
}

static void test_cpu(outs_t *cpu)
{
    mica_context_t *ctx = th_context();
    mica_engine_t *e = build(MICA_DEVICE_CPU, 0), *back = NULL;
    outs_t again;
    void *bytes = NULL;
    size_t size = 0;
    int good = e && run(e, cpu);

    ok(good && same_forms(cpu, 1e-5), "cpu: loops and RNNv2 agree");
    if (good && mica_engine_serialize(e, &bytes, &size) == MICA_OK &&
        mica_engine_deserialize(ctx, bytes, size, &back) == MICA_OK)
        ok(run(back, &again) && !memcmp(&again, cpu, sizeof again),
           "cpu: the same through an engine file");
    else
        ok(0, "cpu: through an engine file: %s", mica_context_error(ctx));
    mica_free(bytes);
    mica_engine_destroy(back);
    mica_engine_destroy(e);
}

static void test_cuda(const outs_t *cpu, int half)
{
    const char *what = half ? "cuda float16" : "cuda float32";
    double tol = half ? 2e-2 : 1e-4;
    mica_engine_t *e;
    outs_t gpu;

    if (!th_cuda()) {
        skip("%s: loops and RNNv2 agree: no usable GPU", what);
        skip("%s: RNNv2 as on the cpu: no usable GPU", what);
        return;
    }
    e = build(MICA_DEVICE_CUDA, half);
    if (!e || !run(e, &gpu)) {
        ok(0, "%s: loops and RNNv2 agree", what);
        ok(0, "%s: RNNv2 as on the cpu", what);
    } else {
        ok(same_forms(&gpu, tol), "%s: loops and RNNv2 agree", what);
        ok(near("y", cpu->y_rnn, gpu.y_rnn, N * T * H, tol) &&
           near("h", cpu->h_rnn, gpu.h_rnn, N * L * H, tol) &&
           near("c", cpu->c_rnn, gpu.c_rnn, N * L * H, tol),
           "%s: RNNv2 as on the cpu", what);
    }
    mica_engine_destroy(e);
}

int main(void)
{
    outs_t cpu;
    int i;

    plan_lazy();
    th_context();
    for (i = 0; i < N * T * E; i++)
        x[i] = (float)sin(0.7 * i + 0.3);
    test_cpu(&cpu);
    test_cuda(&cpu, 0);
    test_cuda(&cpu, 1);
    return exit_status();
}
