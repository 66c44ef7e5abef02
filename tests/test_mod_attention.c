/*
 * tests/test_mod_attention.c - the Attention layer against a float64
 * reference written here (the textbook formula: every score, the row's
 * softmax, the weighted sum), on seeded random inputs over many shapes:
 * the CPU reference and the vectorized implementation against it, then
 * CUDA against the CPU (the flash kernel for float16 and bfloat16 with
 * head sizes 64 and 128, the simple kernel otherwise; skipped without a
 * GPU).
 *
 * Covered: sequence lengths that are not multiples of the 64-query and
 * 64-key tiles (1, 7, 63, 65, 130, 200), Sq != Skv, causal upper-left
 * and lower-right, bool and additive masks broadcast over batch, heads
 * and queries, a mask shorter than the keys, grouped-query heads (8 on
 * 2), head sizes 8, 32, 64, 80, 128 and Dv != D, softcap, an explicit
 * scale, a fully masked row (zeros), runtime dimensions, float32,
 * float16 and bfloat16; the errors.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16
#define BF16 MICA_BFLOAT16

typedef struct acase {
    const char *label;
    int64_t b, hq, hkv, sq, skv, d, dv;
    int causal;     /* 0, 1 upper left, 2 lower right */
    int mask;       /* 0 none, 1 bool, 2 additive */
    int64_t md[4];  /* the mask's dims */
    double scale;   /* 0: the default */
    double softcap;
} acase_t;

static uint64_t rng = 88172645463325252ull;

static double urand(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static double *rand_vals(int64_t n, double amp)
{
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    int64_t i;
    for (i = 0; i < n; i++)
        v[i] = urand() * amp;
    return v;
}

static int64_t moff(const acase_t *c, int64_t n, int64_t h, int64_t i,
                    int64_t j)
{
    const int64_t *m = c->md;
    return (((m[0] == 1 ? 0 : n) * m[1] + (m[1] == 1 ? 0 : h)) * m[2] +
            (m[2] == 1 ? 0 : i)) * m[3] + (m[3] == 1 ? 0 : j);
}

/* The float64 reference of case c on the inputs as the layer reads them. */
static double *reference(const acase_t *c, const th_tensor_t *in)
{
    int64_t n, h, i, j, e, ny = c->b * c->hq * c->sq * c->dv;
    double *y = calloc((size_t)ny + 1, sizeof *y);
    double *s = malloc(sizeof *s * (size_t)(c->skv + 1));
    double scale = c->scale ? c->scale : 1.0 / sqrt((double)c->d);
    int64_t off = c->causal == 2 ? c->skv - c->sq : 0;

    for (n = 0; n < c->b; n++)
        for (h = 0; h < c->hq; h++)
            for (i = 0; i < c->sq; i++) {
                int64_t kh = n * c->hkv + h / (c->hq / c->hkv);
                double mx = -INFINITY, sum = 0.0;
                for (j = 0; j < c->skv; j++) {
                    double dot = 0.0, bias = 0.0;
                    for (e = 0; e < c->d; e++)
                        dot += th_get(&in[0], ((n * c->hq + h) * c->sq + i) *
                                                  c->d + e) *
                               th_get(&in[1], (kh * c->skv + j) * c->d + e);
                    if (c->mask && j >= c->md[3])
                        bias = -INFINITY;
                    else if (c->mask == 1)
                        bias = th_get(&in[3], moff(c, n, h, i, j)) != 0
                                   ? 0.0 : -INFINITY;
                    else if (c->mask == 2)
                        bias = th_get(&in[3], moff(c, n, h, i, j));
                    if (c->causal && j > i + off)
                        bias = -INFINITY;
                    s[j] = dot * scale + bias;
                    if (c->softcap > 0)
                        s[j] = c->softcap * tanh(s[j] / c->softcap);
                    if (s[j] > mx)
                        mx = s[j];
                }
                if (mx == -INFINITY)
                    continue; /* every key masked: zeros */
                for (j = 0; j < c->skv; j++)
                    sum += (s[j] = exp(s[j] - mx));
                for (j = 0; j < c->skv; j++)
                    for (e = 0; e < c->dv; e++)
                        y[((n * c->hq + h) * c->sq + i) * c->dv + e] +=
                            s[j] / sum *
                            th_get(&in[2], (kh * c->skv + j) * c->dv + e);
            }
    free(s);
    return y;
}

static th_fields_t *fields_of(const acase_t *c)
{
    th_fields_t *f = th_fields();
    if (c->causal)
        th_f_bool(f, "causal", 1);
    if (c->causal == 2)
        th_f_str(f, "causal_align", "lower_right");
    if (c->scale)
        th_f_float(f, "scale", c->scale);
    if (c->softcap)
        th_f_float(f, "softcap", c->softcap);
    return f;
}

static void run_case(const acase_t *c, mica_dtype_t dt, int runtime)
{
    int64_t qd[4] = {c->b, c->hq, c->sq, c->d},
            kd[4] = {c->b, c->hkv, c->skv, c->d},
            vd[4] = {c->b, c->hkv, c->skv, c->dv},
            yd[4] = {c->b, c->hq, c->sq, c->dv};
    int64_t nm = c->md[0] * c->md[1] * c->md[2] * c->md[3], i;
    double *qv = rand_vals(c->b * c->hq * c->sq * c->d, 1.0),
           *kv = rand_vals(c->b * c->hkv * c->skv * c->d, 1.0),
           *vv = rand_vals(c->b * c->hkv * c->skv * c->dv, 1.0), *mv = NULL,
           *yv;
    th_tensor_t in[4], y;
    int nin = c->mask ? 4 : 3, impl;
    double tol = dt == F32 ? 2e-5 : dt == F16 ? 4e-3 : 3e-2;
    char label[240];

    /* q spread so that the softmax is not flat: scores of a few units */
    for (i = 0; i < c->b * c->hq * c->sq * c->d; i++)
        qv[i] *= 3.0;
    in[0] = th_tensor(dt, 4, qd, qv);
    in[1] = th_tensor(dt, 4, kd, kv);
    in[2] = th_tensor(dt, 4, vd, vv);
    if (c->mask) {
        mv = rand_vals(nm, 1.0);
        for (i = 0; i < nm; i++)
            mv[i] = c->mask == 1 ? (mv[i] > -0.6) : mv[i] * 2.0 -
                                                       (mv[i] < -0.8 ? 1e4 : 0);
        in[3] = th_tensor(c->mask == 1 ? MICA_BOOL : dt, 4, c->md, mv);
    }
    yv = reference(c, in);
    y = th_tensor(dt, 4, yd, yv);
    if (runtime) {
        in[0] = th_runtime(in[0], 1u << 2);
        in[1] = th_runtime(in[1], 1u << 2);
        in[2] = th_runtime(in[2], 1u << 2);
    }
    for (impl = 0; impl < 2; impl++) {
        th_pin(impl ? "vectorized" : "reference", NULL);
        snprintf(label, sizeof label, "%s [%lld, %lld/%lld, %lld x %lld, "
                 "%lld/%lld], %s, %s%s", c->label, (long long)c->b,
                 (long long)c->hq, (long long)c->hkv, (long long)c->sq,
                 (long long)c->skv, (long long)c->d, (long long)c->dv,
                 mica_dtype_name(dt), impl ? "vectorized" : "reference",
                 runtime ? ", runtime sequence" : "");
        th_check(label, "Attention", fields_of(c), nin, in, 1, &y, tol);
    }
    th_pin(NULL, NULL);
    for (i = 0; i < nin; i++)
        th_free(&in[i]);
    th_free(&y);
    free(qv);
    free(kv);
    free(vv);
    free(mv);
    free(yv);
}

static const acase_t cases[] = {
    {"plain", 2, 3, 3, 7, 7, 8, 8, 0, 0, {0}, 0, 0},
    {"one query", 1, 2, 2, 1, 9, 16, 16, 0, 0, {0}, 0, 0},
    {"head 64, tiles", 1, 2, 2, 65, 130, 64, 64, 0, 0, {0}, 0, 0},
    {"head 128, short tiles", 2, 2, 2, 63, 63, 128, 128, 0, 0, {0}, 0, 0},
    {"head 64, causal", 1, 2, 2, 130, 130, 64, 64, 1, 0, {0}, 0, 0},
    {"head 128, causal lower right", 1, 2, 2, 7, 200, 128, 128, 2, 0, {0},
     0, 0},
    {"head 64, padding bool mask", 2, 2, 2, 70, 70, 64, 64, 0, 1,
     {2, 1, 1, 70}, 0, 0},
    {"head 64, additive mask per query", 1, 2, 2, 33, 77, 64, 64, 0, 2,
     {1, 2, 33, 77}, 0, 0},
    {"head 128, causal and additive mask", 2, 1, 1, 66, 66, 128, 128, 1, 2,
     {2, 1, 1, 66}, 0, 0},
    {"mask shorter than the keys", 1, 2, 2, 5, 12, 32, 32, 0, 2,
     {1, 1, 5, 9}, 0, 0},
    {"grouped-query heads 8 on 2", 1, 8, 2, 17, 17, 64, 64, 1, 0, {0}, 0, 0},
    {"head 80, Dv 48", 1, 2, 1, 9, 40, 80, 48, 0, 0, {0}, 0, 0},
    {"scale and softcap", 1, 2, 2, 12, 12, 64, 64, 1, 0, {0}, 0.3, 2.0},
    {"lower right with more queries than keys", 1, 1, 1, 6, 4, 8, 8, 2, 0,
     {0}, 0, 0},
};

static void errors(void)
{
    int64_t q[4] = {1, 3, 4, 8}, k[4] = {1, 2, 4, 8}, v[4] = {1, 3, 5, 8};
    int64_t k2[4] = {1, 3, 4, 8}, m[4] = {1, 1, 4, 9}, r3[3] = {3, 4, 8};
    th_tensor_t in[4];

    in[0] = th_tensor(F32, 4, q, NULL);
    in[1] = th_tensor(F32, 4, k, NULL);
    in[2] = th_tensor(F32, 4, k, NULL);
    th_check_error("q heads not a multiple of k heads", "Attention",
                   th_fields(), 3, in, 1, "not a multiple of k's");
    th_free(&in[1]);
    th_free(&in[2]);
    in[1] = th_tensor(F32, 4, k2, NULL);
    in[2] = th_tensor(F32, 4, v, NULL);
    th_check_error("v with other keys than k", "Attention", th_fields(), 3,
                   in, 1, "v has 5 keys but k has 4");
    th_free(&in[2]);
    in[2] = th_tensor(F32, 4, k2, NULL);
    in[3] = th_tensor(MICA_BOOL, 4, m, NULL);
    th_check_error("mask past the keys", "Attention", th_fields(), 4, in, 1,
                   "past the 4 keys");
    th_free(&in[3]);
    th_free(&in[0]);
    in[0] = th_tensor(F32, 3, r3, NULL);
    th_check_error("q of rank 3", "Attention", th_fields(), 3, in, 1,
                   "q must have rank 4");
    th_check_error("a negative softcap", "Attention",
                   th_f_float(th_fields(), "softcap", -1), 3, in, 1,
                   "softcap must be a finite float32 of 0 or more");
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&in[2]);
}

/* A row whose every key is masked gives zeros. */
static void masked_row(void)
{
    acase_t c = {"a fully masked query", 1, 1, 1, 3, 4, 8, 8, 0, 1,
                 {1, 1, 3, 4}, 0, 0};
    int64_t qd[4] = {1, 1, 3, 8}, md[4] = {1, 1, 3, 4};
    double *qv = rand_vals(24, 1.0), *kv = rand_vals(32, 1.0),
           *vv = rand_vals(32, 1.0), *yv;
    double mv[12] = {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1};
    th_tensor_t in[4], y;
    int64_t kd[4] = {1, 1, 4, 8};

    in[0] = th_tensor(F32, 4, qd, qv);
    in[1] = th_tensor(F32, 4, kd, kv);
    in[2] = th_tensor(F32, 4, kd, vv);
    in[3] = th_tensor(MICA_BOOL, 4, md, mv);
    yv = reference(&c, in);
    y = th_tensor(F32, 4, qd, yv);
    th_check(c.label, "Attention", th_fields(), 4, in, 1, &y, 1e-5);
    th_free(&in[0]);
    th_free(&in[1]);
    th_free(&in[2]);
    th_free(&in[3]);
    th_free(&y);
    free(qv);
    free(kv);
    free(vv);
    free(yv);
}

int main(void)
{
    size_t c;

    plan_lazy();
    th_context();
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        run_case(&cases[c], F32, 0);
        run_case(&cases[c], F16, 0);
        run_case(&cases[c], BF16, 0);
    }
    run_case(&cases[4], F16, 1);
    run_case(&cases[6], F32, 1);
    masked_row();
    errors();
    return exit_status();
}
