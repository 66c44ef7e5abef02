/*
 * tests/test_mod_einsum.c - the Einsum layer: every case on the CPU
 * reference against numpy.einsum (tests/gen/layers.py), then on CUDA
 * against the CPU (skipped without a GPU).
 *
 * Covered: implicit and explicit mode, spaces, scalars, one to four
 * inputs, transposes, sums, diagonals (ii->i, bii->bi, iij), ellipses
 * with broadcasting, size-1 labels broadcast, float16, runtime
 * dimensions, empty tensors (an empty output, an empty sum), larger
 * shapes for the CUDA plan (a GEMM in place, the output transposed, a
 * long sum), and the errors: each malformed equation with the position
 * of the problem, ranks, sizes and types that do not fit.
 */
#include <config.h>

#include <stdio.h>

#include "harness.h"
#include "gen/einsum_cases.h"
#include "gen/gen_th.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

static th_fields_t *eq_f(const char *eq)
{
    return th_f_str(th_fields(), "equation", eq);
}

static void fixtures(void)
{
    char label[160];
    int c, i;

    for (c = 0; c < GEN_COUNT(einsum_cases); c++) {
        const gen_case_t *g = &einsum_cases[c];
        th_tensor_t in[4], want = gen_th(&g->out[0]);
        double tol = g->in[0].dtype == F16 ? 1e-2 : 1e-5;
        gen_ths(g->in, g->nb_in, in);
        th_check(g->label, "Einsum", eq_f(g->text), g->nb_in, in, 1, &want,
                 tol);
        snprintf(label, sizeof label, "%s, runtime dimensions", g->label);
        for (i = 0; i < g->nb_in; i++)
            in[i] = th_runtime(in[i], TH_ALL_DIMS);
        th_check(label, "Einsum", eq_f(g->text), g->nb_in, in, 1, &want,
                 tol);
        gen_free(in, g->nb_in);
        th_free(&want);
    }
}

/* A tensor of values in [-1, 1) from a simple sequence. */
static th_tensor_t filled(mica_dtype_t dtype, int rank, const int64_t *dims,
                          int seed)
{
    th_tensor_t t = th_tensor(dtype, rank, dims, NULL);
    int64_t i, n = th_volume(&t);
    for (i = 0; i < n; i++)
        th_set(&t, i, (double)((i * 37 + seed * 101) % 200) / 100.0 - 1.0);
    return t;
}

/* Shapes too large for a fixture: the CPU runs (the reference is what
 * the fixtures test), CUDA is compared with it. */
static void larger(void)
{
    static const int64_t q[4] = {2, 3, 17, 8}, k[4] = {2, 3, 19, 8};
    static const int64_t sq[2] = {300, 300}, m[3] = {4, 33, 65};
    static const int64_t n3[3] = {4, 65, 20}, w[2] = {20, 7};
    th_tensor_t in[3];

    in[0] = filled(F32, 4, q, 1);
    in[1] = filled(F32, 4, k, 2);
    th_check("bhqd,bhkd->bhqk (cuda against cpu)", "Einsum",
             eq_f("bhqd,bhkd->bhqk"), 2, in, 1, NULL, 1e-5);
    th_check("bhqd,bhkd->bkhq (cuda against cpu)", "Einsum",
             eq_f("bhqd,bhkd->bkhq"), 2, in, 1, NULL, 1e-5);
    gen_free(in, 2);
    in[0] = filled(F16, 4, q, 3);
    in[1] = filled(F16, 4, k, 4);
    th_check("float16 bhqd,bhkd->bhqk (cuda against cpu)", "Einsum",
             eq_f("bhqd,bhkd->bhqk"), 2, in, 1, NULL, 2e-2);
    gen_free(in, 2);
    in[0] = filled(F32, 2, sq, 5);
    th_check("ij-> over 90000 (cuda against cpu)", "Einsum", eq_f("ij->"), 1,
             in, 1, NULL, 1e-4);
    th_check("ii-> (cuda against cpu)", "Einsum", eq_f("ii->"), 1, in, 1,
             NULL, 1e-5);
    th_check("ij->ji (cuda against cpu)", "Einsum", eq_f("ij->ji"), 1, in, 1,
             NULL, 0);
    th_free(&in[0]);
    in[0] = filled(F32, 3, m, 6);
    in[1] = filled(F32, 3, n3, 7);
    in[2] = filled(F32, 2, w, 8);
    th_check("bij,bjk,kl->bil (cuda against cpu)", "Einsum",
             eq_f("bij,bjk,kl->bil"), 3, in, 1, NULL, 1e-4);
    th_check("bij,bjk,kl->lb (cuda against cpu)", "Einsum",
             eq_f("bij,bjk,kl->lb"), 3, in, 1, NULL, 1e-4);
    gen_free(in, 3);
}

static void empty(void)
{
    static const int64_t a0[2] = {0, 3}, b0[2] = {3, 4}, a1[2] = {2, 0},
                         b1[2] = {0, 4}, c1[2] = {2, 4};
    th_tensor_t in[2], want;

    in[0] = th_tensor(F32, 2, a0, NULL);
    in[1] = th_tensor(F32, 2, b0, NULL);
    want = th_tensor(F32, 2, (const int64_t[]){0, 4}, NULL);
    th_check("empty output", "Einsum", eq_f("ij,jk->ik"), 2, in, 1, &want, 0);
    gen_free(in, 2);
    th_free(&want);
    in[0] = th_tensor(F32, 2, a1, NULL);
    in[1] = th_tensor(F32, 2, b1, NULL);
    want = th_tensor(F32, 2, c1, NULL); /* zeros */
    th_check("empty sum gives zeros", "Einsum", eq_f("ij,jk->ik"), 2, in, 1,
             &want, 0);
    gen_free(in, 2);
    th_free(&want);
}

/* A malformed equation on inputs that would fit it otherwise. */
static void bad(const char *eq, int nb_in, const char *needle)
{
    static const double v[64];
    th_tensor_t in[3];
    char label[96];
    int i;

    for (i = 0; i < nb_in; i++)
        in[i] = th_t(F32, v, 2, 2, 2);
    snprintf(label, sizeof label, "equation \"%s\"", eq);
    th_check_error(label, "Einsum", eq_f(eq), nb_in, in, 1, needle);
    gen_free(in, nb_in);
}

static void errors(void)
{
    static const double v[64];
    th_tensor_t in[2];

    bad("ij,jk->iz", 2, "output label 'z' at position 9 appears in no input");
    bad("ij->ii", 1, "output label 'i' at position 6 appears twice");
    bad("i...j...", 1, "a second '...' in one term at position 6");
    bad("ij-k", 1, "a '-' at position 3 that is not part of '->'");
    bad("ij>k", 1, "a '>' at position 3 that is not part of '->'");
    bad("i1", 1, "the character '1' at position 2 is not a label");
    bad("ij,jk->ik->i", 2, "a second '->' at position 10");
    bad("...ij,jk->ik", 2, "the inputs have '...' but the output after '->' "
                           "at position 9 has none");
    bad("i.j", 1, "a '.' at position 2 that is not part of '...'");
    bad("ij->i,j", 1, "a ',' at position 6 in the output");
    bad("abcdefghi->a", 1, "more than 8 labels in one term at position 9");
    bad("ijk,jk", 2, "term 1 \"ijk\" (position 1) names 3 dimensions but "
                     "input 0 has rank 2");
    bad("ij, j...kl", 2, "term 2 \"j...kl\" (position 4) names at least 3 "
                         "dimensions");
    bad("ij,jk", 1, "the equation has 2 terms but the layer has 1 input");
    bad("ij", 2, "the equation has 1 term but the layer has 2 inputs");

    in[0] = th_t(F32, v, 2, 2, 3);
    in[1] = th_t(F32, v, 2, 4, 5);
    th_check_error("j of 3 and 4", "Einsum", eq_f("ij,jk->ik"), 2, in, 1,
                   "label 'j' is 3 in input 0 but 4 in input 1 (sizes must "
                   "be equal, or 1 to broadcast)");
    th_check_error("diagonal of [2, 3]", "Einsum", eq_f("ii->i"), 1, in, 1,
                   "input 0 repeats label 'i' (a diagonal) with sizes 2 and "
                   "3");
    in[0] = th_runtime(in[0], TH_ALL_DIMS);
    in[1] = th_runtime(in[1], TH_ALL_DIMS);
    th_check_error("j of 3 and 4 at run time", "Einsum", eq_f("ij,jk->ik"),
                   2, in, 1, "label 'j' is 3 in input 0 but 4 in input 1");
    gen_free(in, 2);
    in[0] = th_t(F32, v, 2, 2, 3);
    in[1] = th_t(F16, v, 2, 3, 2);
    th_check_error("float32 and float16", "Einsum", eq_f("ij,jk->ik"), 2, in,
                   1, "inputs must all be float32, all float16 or (on the "
                   "CPU) all float64, input 1 is float16");
    gen_free(in, 2);
    in[0] = th_t(MICA_INT32, v, 1, 4);
    th_check_error("int32", "Einsum", eq_f("i->"), 1, in, 1,
                   "inputs must all be float32, all float16 or (on the CPU) "
                   "all float64, input 0 is int32");
    th_free(&in[0]);
}

/* float64 on the CPU reference alone: a batched product and a trace of
 * values float32 would round, exactly; CUDA refuses it (its
 * supports_format, asked without a GPU). */
static void float64(void)
{
    /* numpy's einsum in float64: 1e300 and 1e-300 overflow and vanish
     * in float32, 2^-40 rounds away */
    static const double a[] = {1e300, 3, 1.0000000000009095, 2,
                               0.5, 4, 1, 1e-300};
    static const double b[] = {2, 1e-300, 1, 3};
    static const double want_mm[] = {2e300, 10, 4.000000000001819, 6,
                                     5, 12, 2, 4e-300};
    static const double want_tr[] = {1e300, 0.5};
    th_tensor_t in[2], want;

    /* [2,2,2] x [2,2] -> bij,jk->bik */
    in[0] = th_t(MICA_FLOAT64, a, 3, 2, 2, 2);
    in[1] = th_t(MICA_FLOAT64, b, 2, 2, 2);
    want = th_t(MICA_FLOAT64, want_mm, 3, 2, 2, 2);
    th_check_cpu("float64 bij,jk->bik", "Einsum", eq_f("bij,jk->bik"), 2, in,
                 &want, 1e-15, 0);
    th_free(&want);
    want = th_t(MICA_FLOAT64, want_tr, 1, 2);
    th_check_cpu("float64 bii->b (traces)", "Einsum", eq_f("bii->b"), 1, in,
                 &want, 1e-15, 0);
    th_free(&want);
    gen_free(in, 2);
    th_refused("float64 on cuda", "Einsum", MICA_DEVICE_CUDA, "cublas",
               eq_f("ij,jk->ik"), MICA_FLOAT64, 2);
}

int main(void)
{
    plan_lazy();
    th_context();
    fixtures();
    larger();
    empty();
    errors();
    float64();
    return exit_status();
}
