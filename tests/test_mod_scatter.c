/*
 * tests/test_mod_scatter.c - the Scatter layer: every case on the CPU
 * reference against NumPy's values (tests/gen/layers.py), then on CUDA
 * against the CPU (skipped without a GPU).
 *
 * Covered: element mode on several axes (TensorRT's and ONNX's
 * examples), indices smaller than data, negative indices; nd mode with
 * slices, full coordinates, indices of rank 3; float32, float16, int32;
 * runtime dimensions; no updates at all; a large scatter for the CUDA
 * grid; the shape errors and an out-of-range index at run time on both
 * devices, which names the index.
 */
#include <config.h>

#include <stdio.h>

#include "harness.h"
#include "gen/gen_th.h"
#include "gen/scatter_cases.h"

#define F32 MICA_FLOAT32
#define I32 MICA_INT32

static th_fields_t *scatter_f(const char *mode, int64_t axis)
{
    th_fields_t *f = th_f_str(th_fields(), "mode", mode);
    return axis >= 0 ? th_f_int(f, "axis", axis) : f;
}

static void fixtures(void)
{
    char label[160];
    int c;

    for (c = 0; c < GEN_COUNT(scatter_cases); c++) {
        const gen_case_t *g = &scatter_cases[c];
        th_tensor_t in[3], want = gen_th(&g->out[0]);
        gen_ths(g->in, 3, in);
        th_check(g->label, "Scatter", scatter_f(g->text, g->p0), 3, in, 1,
                 &want, 1e-6);
        snprintf(label, sizeof label, "%s, runtime dimensions", g->label);
        in[0] = th_runtime(in[0], TH_ALL_DIMS);
        in[1] = th_runtime(in[1], TH_ALL_DIMS);
        in[2] = th_runtime(in[2], TH_ALL_DIMS);
        th_check(label, "Scatter", scatter_f(g->text, g->p0), 3, in, 1,
                 &want, 1e-6);
        gen_free(in, 3);
        th_free(&want);
    }
}

/* A permutation of the rows of a [rows, 8] tensor by nd mode, and the
 * reverse of each row by element mode: large enough for many blocks. */
static void large(void)
{
    enum { ROWS = 70000, COLS = 8 };
    int64_t d[2] = {ROWS, COLS}, di[2] = {ROWS, 1};
    th_tensor_t in[3], want;
    int64_t r, c;

    in[0] = th_tensor(F32, 2, d, NULL);
    in[1] = th_tensor(I32, 2, di, NULL);
    in[2] = th_tensor(F32, 2, d, NULL);
    want = th_tensor(F32, 2, d, NULL);
    for (r = 0; r < ROWS; r++) {
        int64_t to = (r * 11 + 3) % ROWS; /* 11 and 70000 are coprime */
        th_set(&in[1], r, (double)(r % 2 ? to : to - ROWS));
        for (c = 0; c < COLS; c++) {
            th_set(&in[2], r * COLS + c, (double)(r * COLS + c));
            th_set(&want, to * COLS + c, (double)(r * COLS + c));
        }
    }
    th_check("nd: 70000 rows permuted", "Scatter", scatter_f("nd", -1), 3, in,
             1, &want, 0);
    th_free(&in[1]);
    in[1] = th_tensor(I32, 2, d, NULL);
    for (r = 0; r < ROWS; r++)
        for (c = 0; c < COLS; c++) {
            th_set(&in[1], r * COLS + c, (double)(COLS - 1 - c));
            th_set(&want, r * COLS + COLS - 1 - c, (double)(r * COLS + c));
        }
    th_check("element: 70000 rows reversed", "Scatter",
             scatter_f("element", 1), 3, in, 1, &want, 0);
    gen_free(in, 3);
    th_free(&want);
}

static void empty(void)
{
    static const double dv[6] = {1, 2, 3, 4, 5, 6};
    int64_t di[2] = {0, 2}, du[1] = {0}, de[2] = {0, 3};
    th_tensor_t in[3];

    in[0] = th_t(F32, dv, 2, 2, 3);
    in[1] = th_tensor(I32, 2, di, NULL);
    in[2] = th_tensor(F32, 1, du, NULL);
    th_check("nd: no updates", "Scatter", scatter_f("nd", -1), 3, in, 1,
             &in[0], 0);
    th_free(&in[1]);
    th_free(&in[2]);
    in[1] = th_tensor(I32, 2, de, NULL);
    in[2] = th_tensor(F32, 2, de, NULL);
    th_check("element: no updates", "Scatter", scatter_f("element", 0), 3, in,
             1, &in[0], 0);
    gen_free(in, 3);
}

static void errors(void)
{
    static const double dv[6] = {1, 2, 3, 4, 5, 6};
    static const double bad_el[3] = {0, 3, 1}, bad_nd[2] = {1, -3};
    static const double uv[3] = {7, 8, 9};
    th_tensor_t in[3];
    uint32_t dev[2] = {MICA_DEVICE_CPU, MICA_DEVICE_CUDA};
    const char *dn[2] = {"cpu", "cuda"};
    char label[96];
    int i;

    in[0] = th_t(F32, dv, 2, 2, 3);
    in[1] = th_t(I32, bad_el, 2, 1, 3);
    in[2] = th_t(F32, uv, 2, 1, 3);
    for (i = 0; i < 2; i++) {
        snprintf(label, sizeof label, "element: index 3 of 3 on %s", dn[i]);
        th_check_error_on(dev[i], label, "Scatter", scatter_f("element", 1),
                          3, in, 1,
                          "index 3 at indices element 1 is out of range for "
                          "data axis 1 of size 3 (valid: -3 to 2)");
    }
    th_check_error("element: axis 2 of rank 2", "Scatter",
                   scatter_f("element", 2), 3, in, 1,
                   "axis 2 is out of range for rank 2 (0 to 1)");
    th_free(&in[2]);
    in[2] = th_t(F32, uv, 2, 3, 1);
    th_check_error("element: updates of another shape", "Scatter",
                   scatter_f("element", 1), 3, in, 1,
                   "updates dimension 0 is 3 but indices' is 1");
    th_free(&in[2]);
    th_free(&in[1]);
    in[1] = th_t(I32, bad_el, 2, 3, 1);
    in[2] = th_t(F32, uv, 2, 3, 1);
    th_check_error("element: indices taller than data", "Scatter",
                   scatter_f("element", 1), 3, in, 1,
                   "indices dimension 0 is 3, more than data's 2");
    th_free(&in[1]);
    th_free(&in[2]);

    in[1] = th_t(I32, bad_nd, 2, 2, 1);
    in[2] = th_t(F32, dv, 2, 2, 3);
    for (i = 0; i < 2; i++) {
        snprintf(label, sizeof label, "nd: index -3 of 2 on %s", dn[i]);
        th_check_error_on(dev[i], label, "Scatter", scatter_f("nd", -1), 3,
                          in, 1,
                          "index -3 at indices tuple 1 is out of range for "
                          "data axis 0 of size 2 (valid: -2 to 1)");
    }
    th_free(&in[2]);
    in[2] = th_t(F32, dv, 1, 2);
    th_check_error("nd: updates of the wrong shape", "Scatter",
                   scatter_f("nd", -1), 3, in, 1,
                   "mode nd: indices' last dimension is 1, so updates must "
                   "have rank 2, got 1");
    th_free(&in[2]);
    in[2] = th_t(F32, dv, 2, 2, 2);
    th_check_error("nd: slices of the wrong size", "Scatter",
                   scatter_f("nd", -1), 3, in, 1,
                   "mode nd: updates dimension 1 is 2 but must be 3");
    th_free(&in[1]);
    in[1] = th_t(F32, bad_nd, 2, 2, 1);
    th_check_error("float indices", "Scatter", scatter_f("nd", -1), 3, in, 1,
                   "indices must be int32, got float32");
    gen_free(in, 3);
}

int main(void)
{
    plan_lazy();
    th_context();
    fixtures();
    large();
    empty();
    errors();
    return exit_status();
}
