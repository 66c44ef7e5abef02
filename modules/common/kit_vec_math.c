/*
 * modules/common/kit_vec_math.c - exp, sigmoid and tanh over arrays of
 * float32 (kit_vec.h's mica__vec_exp_n and its kin): eight lanes with
 * AVX2 and FMA where the processor has them (chosen once, at the first
 * call), else kit_vec.h's four-lane functions.  The same algorithms as
 * those (Cephes' polynomials), so the same accuracy (exp within 2 ulp,
 * tanh 3, sigmoid as 1 / (1 + exp(-x))) and the same special values;
 * the fused multiply-adds round otherwise than the four-lane code, so
 * results may differ from it by an ulp.
 */
#include <config.h>

#include "kit_vec.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define VEC_AVX2 1
#define AVX2_FN static inline __attribute__((target("avx2,fma"), always_inline))
#define AVX2_LOOP static __attribute__((target("avx2,fma")))
#else
#define VEC_AVX2 0
#endif

/* The four-lane loops, their tails through a padded vector. */
#define LOOP4(name, VOP)                                                   \
    static void name(const float *x, float *y, int64_t n)                  \
    {                                                                      \
        int64_t i = 0;                                                     \
        for (; i + MICA__VL <= n; i += MICA__VL)                           \
            mica__v_store(y + i, VOP(mica__v_load(x + i)));                \
        if (i < n) {                                                       \
            float t[MICA__VL] = {0};                                       \
            memcpy(t, x + i, (size_t)(n - i) * sizeof *x);                 \
            mica__v_store(t, VOP(mica__v_load(t)));                        \
            memcpy(y + i, t, (size_t)(n - i) * sizeof *y);                 \
        }                                                                  \
    }

LOOP4(exp4, mica__v_exp)
LOOP4(sigmoid4, mica__v_sigmoid)
LOOP4(tanh4, mica__v_tanh)

#if VEC_AVX2
/* mica__v_exp on eight lanes. */
AVX2_FN __m256 exp8(__m256 x)
{
    __m256 c, fx, r, z, y;
    __m256i n, n1, n2, bias = _mm256_set1_epi32(127);

    c = _mm256_min_ps(x, _mm256_set1_ps(89.0f));
    c = _mm256_max_ps(c, _mm256_set1_ps(-104.0f));
    n = _mm256_cvtps_epi32(_mm256_mul_ps(c, _mm256_set1_ps(1.44269504088896341f)));
    fx = _mm256_cvtepi32_ps(n);
    r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), c);
    r = _mm256_fmadd_ps(fx, _mm256_set1_ps(2.12194440e-4f), r);
    z = _mm256_mul_ps(r, r);
    y = _mm256_set1_ps(1.9875691500E-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507E-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073E-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894E-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459E-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201E-1f));
    y = _mm256_add_ps(_mm256_fmadd_ps(y, z, r), _mm256_set1_ps(1.0f));
    /* times 2^n in two steps (denormal and infinite results) */
    n1 = _mm256_srai_epi32(n, 1);
    n2 = _mm256_sub_epi32(n, n1);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(
                             _mm256_add_epi32(n1, bias), 23)));
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(
                             _mm256_add_epi32(n2, bias), 23)));
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

AVX2_FN __m256 sigmoid8(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_xor_ps(
                                  x, _mm256_set1_ps(-0.0f)))));
}

/* mica__v_tanh on eight lanes. */
AVX2_FN __m256 tanh8(__m256 x)
{
    __m256 sign = _mm256_set1_ps(-0.0f), a = _mm256_andnot_ps(sign, x);
    __m256 z = _mm256_mul_ps(x, x), p, e, big, one = _mm256_set1_ps(1.0f);

    p = _mm256_set1_ps(-5.70498872745E-3f);
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
    e = exp8(_mm256_mul_ps(_mm256_min_ps(a, _mm256_set1_ps(20.0f)),
                           _mm256_set1_ps(2.0f)));
    big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f),
                                           _mm256_add_ps(e, one)));
    big = _mm256_or_ps(big, _mm256_and_ps(x, sign));
    /* below 2^-12 tanh(x) rounds to x (-0 stays -0) */
    p = _mm256_blendv_ps(p, x, _mm256_cmp_ps(a, _mm256_set1_ps(2.44140625e-4f),
                                             _CMP_LT_OQ));
    p = _mm256_blendv_ps(big, p, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f),
                                               _CMP_LT_OQ));
    return _mm256_blendv_ps(p, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* The eight-lane loops, their tails through masked loads and stores. */
#define LOOP8(name, VOP)                                                   \
    AVX2_LOOP void name(const float *x, float *y, int64_t n)               \
    {                                                                      \
        int64_t i = 0;                                                     \
        for (; i + 8 <= n; i += 8)                                         \
            _mm256_storeu_ps(y + i, VOP(_mm256_loadu_ps(x + i)));          \
        if (i < n) {                                                       \
            __m256i m = _mm256_cmpgt_epi32(                                \
                _mm256_set1_epi32((int)(n - i)),                           \
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));                \
            _mm256_maskstore_ps(y + i, m,                                  \
                                VOP(_mm256_maskload_ps(x + i, m)));        \
        }                                                                  \
    }

LOOP8(exp8_n, exp8)
LOOP8(sigmoid8_n, sigmoid8)
LOOP8(tanh8_n, tanh8)
#endif

typedef void array_fn(const float *x, float *y, int64_t n);

/* The eight-lane loop where the CPU has AVX2 and FMA, else four. */
static array_fn *pick(array_fn *four, array_fn *eight)
{
#if VEC_AVX2
    if (mica__cpu_has_avx2_fma())
        return eight;
#endif
    (void)eight;
    return four;
}

#if VEC_AVX2
#define EIGHT(f) f
#else
#define EIGHT(f) NULL
#endif

void mica__vec_exp_n(const float *x, float *y, int64_t n)
{
    pick(exp4, EIGHT(exp8_n))(x, y, n);
}

void mica__vec_sigmoid_n(const float *x, float *y, int64_t n)
{
    pick(sigmoid4, EIGHT(sigmoid8_n))(x, y, n);
}

void mica__vec_tanh_n(const float *x, float *y, int64_t n)
{
    pick(tanh4, EIGHT(tanh8_n))(x, y, n);
}
