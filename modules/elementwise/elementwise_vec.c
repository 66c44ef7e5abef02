/*
 * modules/elementwise/elementwise_vec.c - ElementWise's vector kernels on
 * the CPU (implementation "vec"): every op on float32 and float16
 * tensors, broadcast and in any memory format through the kit's walk
 * (kit_vec.h), on several threads for large tensors.  Each op computes
 * what mica__ew_f computes (elementwise.h): the IEEE operation itself,
 * fmaxf and fminf as glibc defines them, floorf exactly; pow calls powf
 * per element (x * x for an exponent of 2, which powf rounds alike).
 * Integer and bool inputs are the reference's (the caller's fallback).
 */
#include <config.h>

#include <math.h>

#include "elementwise.h"
#include "kit_vec.h"

#define V_SUM(a, b) ((a) + (b))
#define V_PROD(a, b) ((a) * (b))
#define V_SUB(a, b) ((a) - (b))
#define V_DIV(a, b) ((a) / (b))
#define V_MAX(a, b) mica__v_max((a), (b))
#define V_MIN(a, b) mica__v_min((a), (b))
#define V_FDIV(a, b) mica__v_floor((a) / (b))
#define V_ONE(m) mica__v_sel((m), mica__v_set1(1.0f), mica__v_set1(0.0f))
#define V_EQ(a, b) V_ONE((a) == (b))
#define V_GT(a, b) V_ONE((a) > (b))
#define V_LT(a, b) V_ONE((a) < (b))

MICA__VEC_BIN_KERNEL(k_sum, V_SUM)
MICA__VEC_BIN_KERNEL(k_prod, V_PROD)
MICA__VEC_BIN_KERNEL(k_sub, V_SUB)
MICA__VEC_BIN_KERNEL(k_div, V_DIV)
MICA__VEC_BIN_KERNEL(k_max, V_MAX)
MICA__VEC_BIN_KERNEL(k_min, V_MIN)
MICA__VEC_BIN_KERNEL(k_fdiv, V_FDIV)
MICA__VEC_BIN_KERNEL(k_eq, V_EQ)
MICA__VEC_BIN_KERNEL(k_gt, V_GT)
MICA__VEC_BIN_KERNEL(k_lt, V_LT)

static void k_pow(const void *ctx, const float *a, int64_t sa,
                  const float *b, int64_t sb, float *y, int64_t n)
{
    int64_t i;
    (void)ctx;
    if (sb == 0 && b[0] == 2.0f && sa) {
        for (i = 0; i + MICA__VL <= n; i += MICA__VL) {
            mica__vf x = mica__v_load(a + i);
            mica__v_store(y + i, x * x);
        }
        for (; i < n; i++)
            y[i] = a[i] * a[i];
        return;
    }
    for (i = 0; i < n; i++)
        y[i] = powf(a[i * sa], b[i * sb]);
}

static mica__vec_bin_fn *const kernels[MICA__EW_COUNT] = {
    [MICA__EW_SUM] = k_sum,     [MICA__EW_PROD] = k_prod,
    [MICA__EW_MAX] = k_max,     [MICA__EW_MIN] = k_min,
    [MICA__EW_SUB] = k_sub,     [MICA__EW_DIV] = k_div,
    [MICA__EW_POW] = k_pow,     [MICA__EW_FLOOR_DIV] = k_fdiv,
    [MICA__EW_EQUAL] = k_eq,    [MICA__EW_GREATER] = k_gt,
    [MICA__EW_LESS] = k_lt,
};

int mica__ew_vec_takes(int op, mica_dtype_t t)
{
    return op >= 0 && op < MICA__EW_COUNT && kernels[op] &&
           mica__vec_float(t);
}

mica_status_t mica__ew_vec_run(int op, const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out,
                               const void *const *inputs, void *y,
                               mica_error_t *err)
{
    return mica__vec_binary(kernels[op], NULL, &in[0], inputs[0], &in[1],
                            inputs[1], &out[0], y, err);
}
