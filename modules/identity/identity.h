/*
 * modules/identity/identity.h - the Identity module's element
 * conversions, shared by the CPU reference and the CUDA kernel (so that
 * the two agree bit for bit), and the CUDA launcher.
 *
 * Every element goes through a double: floats convert exactly, float16
 * and bfloat16 round to nearest even from the float of the value;
 * integers from a float truncate toward zero and saturate, NaN gives 0;
 * bool is v != 0.  float8, float4 and the 4-bit integers convert as
 * mica/kit_minifloat.h says (float8 saturating, as ONNX's Cast by
 * default and TensorRT's casts; int4 and uint4 wrapping); 64-bit
 * integers beyond 2^53 lose their low bits.
 */
#ifndef MICA_MOD_IDENTITY_H
#define MICA_MOD_IDENTITY_H

#include <stdint.h>

#include "mica/kit.h"
#include "mica/kit_half.h"
#include "mica/kit_minifloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element i of p, of type t, as a double. */
MICA_KIT_HD double mica__identity_load(const void *p, int t, int64_t i)
{
    switch (t) {
    case MICA_FLOAT32: return ((const float *)p)[i];
    case MICA_FLOAT16:
        return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    case MICA_BFLOAT16:
        return mica_kit_bf16_to_float(((const uint16_t *)p)[i]);
    case MICA_INT8: return ((const int8_t *)p)[i];
    case MICA_UINT8: return ((const uint8_t *)p)[i];
    case MICA_BOOL: return ((const uint8_t *)p)[i] != 0;
    case MICA_INT32: return ((const int32_t *)p)[i];
    case MICA_INT64: return (double)((const int64_t *)p)[i];
    case MICA_FLOAT64: return ((const double *)p)[i];
    case MICA_UINT16: return ((const uint16_t *)p)[i];
    case MICA_INT16: return ((const int16_t *)p)[i];
    case MICA_UINT32: return ((const uint32_t *)p)[i];
    case MICA_UINT64: return (double)((const uint64_t *)p)[i];
    case MICA_INT4: return ((const int8_t *)p)[i];
    case MICA_UINT4: return ((const uint8_t *)p)[i];
    case MICA_FP8E4M3:
        return mica_kit_mf_to_double(((const uint8_t *)p)[i], 4, 3, 7,
                                     MICA_KIT_MF_FN);
    case MICA_FP8E4M3FNUZ:
        return mica_kit_mf_to_double(((const uint8_t *)p)[i], 4, 3, 8,
                                     MICA_KIT_MF_FNUZ);
    case MICA_FP8E5M2:
        return mica_kit_mf_to_double(((const uint8_t *)p)[i], 5, 2, 15,
                                     MICA_KIT_MF_IEEE);
    case MICA_FP8E5M2FNUZ:
        return mica_kit_mf_to_double(((const uint8_t *)p)[i], 5, 2, 16,
                                     MICA_KIT_MF_FNUZ);
    case MICA_FP4E2M1:
        return mica_kit_mf_to_double(((const uint8_t *)p)[i] & 0xf, 2, 1, 1,
                                     MICA_KIT_MF_NONE);
    case MICA_FP8E8M0:
        return mica_kit_e8m0_to_double(((const uint8_t *)p)[i]);
    default: return 0.0;
    }
}

/* v truncated toward zero into [ilo, ihi] (v <= lo: ilo, v >= hi: ihi);
 * NaN gives 0. */
MICA_KIT_HD int64_t mica__identity_int(double v, double lo, double hi,
                                      int64_t ilo, int64_t ihi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return ilo;
    if (v >= hi)
        return ihi;
    return (int64_t)v;
}

/* Store v as element i of p, of type t; saturate 0: a float8 value out
 * of range becomes infinity (e5m2) or NaN (ONNX's Cast saturate 0). */
MICA_KIT_HD void mica__identity_store_sat(void *p, int t, int64_t i,
                                          double v, int saturate)
{
    switch (t) {
    case MICA_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MICA_FLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_half((float)v);
        break;
    case MICA_BFLOAT16:
        ((uint16_t *)p)[i] = mica_kit_float_to_bf16((float)v);
        break;
    case MICA_INT8:
        ((int8_t *)p)[i] =
            (int8_t)mica__identity_int(v, -128.0, 127.0, -128, 127);
        break;
    case MICA_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)mica__identity_int(v, 0.0, 255.0, 0, 255);
        break;
    case MICA_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    case MICA_INT32:
        ((int32_t *)p)[i] = (int32_t)mica__identity_int(
            v, -2147483648.0, 2147483647.0, INT32_MIN, INT32_MAX);
        break;
    case MICA_INT64:
        ((int64_t *)p)[i] = mica__identity_int(v, -9223372036854775808.0,
                                               9223372036854775808.0,
                                               INT64_MIN, INT64_MAX);
        break;
    case MICA_FLOAT64: ((double *)p)[i] = v; break;
    case MICA_UINT16:
        ((uint16_t *)p)[i] =
            (uint16_t)mica__identity_int(v, 0.0, 65535.0, 0, 65535);
        break;
    case MICA_INT16:
        ((int16_t *)p)[i] = (int16_t)mica__identity_int(v, -32768.0, 32767.0,
                                                        -32768, 32767);
        break;
    case MICA_UINT32:
        ((uint32_t *)p)[i] = (uint32_t)mica__identity_int(
            v, 0.0, 4294967295.0, 0, 4294967295LL);
        break;
    case MICA_UINT64:
        ((uint64_t *)p)[i] = v != v || v <= 0.0 ? 0
                             : v >= 18446744073709551616.0 ? UINT64_MAX
                             : (uint64_t)v;
        break;
    case MICA_INT4:
        ((int8_t *)p)[i] = (int8_t)mica_kit_int4_from_double(v, 1);
        break;
    case MICA_UINT4:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_int4_from_double(v, 0);
        break;
    case MICA_FP8E4M3:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_mf_from_double(
            v, 4, 3, 7, MICA_KIT_MF_FN, saturate);
        break;
    case MICA_FP8E4M3FNUZ:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_mf_from_double(
            v, 4, 3, 8, MICA_KIT_MF_FNUZ, saturate);
        break;
    case MICA_FP8E5M2:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_mf_from_double(
            v, 5, 2, 15, MICA_KIT_MF_IEEE, saturate);
        break;
    case MICA_FP8E5M2FNUZ:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_mf_from_double(
            v, 5, 2, 16, MICA_KIT_MF_FNUZ, saturate);
        break;
    case MICA_FP4E2M1:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_mf_from_double(
            v, 2, 1, 1, MICA_KIT_MF_NONE, 1);
        break;
    case MICA_FP8E8M0:
        ((uint8_t *)p)[i] = (uint8_t)mica_kit_e8m0_from_double(v, saturate);
        break;
    default: break;
    }
}

/* Store v as element i of p, of type t, saturating. */
MICA_KIT_HD void mica__identity_store(void *p, int t, int64_t i, double v)
{
    mica__identity_store_sat(p, t, i, v, 1);
}

/* A reorder's logical dims and the strides of its input and output in
 * their formats (mica_kit_strides), by value for the kernel. */
typedef struct mica__identity_reorder {
    int32_t rank;
    int32_t reserved_;
    int64_t d[MICA_MAX_DIMS];
    int64_t in[MICA_MAX_DIMS];
    int64_t out[MICA_MAX_DIMS];
} mica__identity_reorder_t;

#ifndef __CUDACC__
/* The CPU's fast paths (identity_vec.c): a reorder between linear and
 * channels last (same type), or a float32 <-> float16 cast, of x into y;
 * 0 (nothing done) for anything else. */
int mica__identity_vec(const mica_tensor_desc_t *in,
                       const mica_tensor_desc_t *out, const void *x, void *y);
#endif

/* Where logical element i (row-major over the dims) lies in the input
 * and in the output. */
MICA_KIT_HD void mica__identity_offsets(const mica__identity_reorder_t *r,
                                        int64_t i, int64_t *src,
                                        int64_t *dst)
{
    int32_t k;
    *src = *dst = 0;
    for (k = r->rank - 1; k >= 0; k--) {
        int64_t c = i % r->d[k];
        i /= r->d[k];
        *src += c * r->in[k];
        *dst += c * r->out[k];
    }
}

/* Reorder n elements from `src` (type sdt) to `dst` (type ddt) as r
 * says, converting them (saturate as mica__identity_store_sat), on
 * `stream`. */
mica_status_t mica__identity_cuda_reorder(const void *src, mica_dtype_t sdt,
                                          void *dst, mica_dtype_t ddt,
                                          int saturate,
                                          const mica__identity_reorder_t *r,
                                          int64_t n, void *stream,
                                          mica_error_t *err);

/* Convert n elements from `src` (type sdt) to `dst` (type ddt) on
 * `stream`, with the conversions above. */
mica_status_t mica__identity_cuda_cast(const void *src, mica_dtype_t sdt,
                                       void *dst, mica_dtype_t ddt,
                                       int saturate, int64_t n,
                                       void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
