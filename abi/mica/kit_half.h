/*
 * mica/kit_half.h - float16 and bfloat16 as raw 16-bit values (how mica
 * stores them: MICA_FLOAT16, MICA_BFLOAT16), converted to and from float
 * the same way on the host and on the device.  Header only: every
 * function is MICA_KIT_HD (static inline; host and device under nvcc),
 * so a CPU reference and a CUDA kernel that include this header round
 * identically.
 *
 * Conversions to float are exact.  Conversions from float round to
 * nearest, ties to even (as __float2half_rn and __float2bfloat16_rn do);
 * a value too large becomes infinity; NaN stays NaN (quiet).  float16
 * keeps subnormals.
 *
 * Kernels that compute in __half or __nv_bfloat16 arithmetic keep using
 * CUDA's types; these are for loading, storing and reference code.
 */
#ifndef MICA_KIT_HALF_H
#define MICA_KIT_HALF_H

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bits of a float, and the float of bits. */
MICA_KIT_HD uint32_t mica_kit_float_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
#endif
}

MICA_KIT_HD float mica_kit_bits_float(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(x);
#else
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
#endif
}

MICA_KIT_HD float mica_kit_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;

    if (exp == 0x1f)
        return mica_kit_bits_float(sign | 0x7f800000u | (man << 13));
    if (exp != 0)
        return mica_kit_bits_float(sign | ((exp + 112) << 23) | (man << 13));
    if (man == 0)
        return mica_kit_bits_float(sign);
    exp = 113; /* subnormal: renormalize */
    while (!(man & 0x400)) {
        man <<= 1;
        exp--;
    }
    return mica_kit_bits_float(sign | (exp << 23) | ((man & 0x3ff) << 13));
}

MICA_KIT_HD uint16_t mica_kit_float_to_half(float f)
{
    uint32_t x = mica_kit_float_bits(f), sign, man, r, rem;
    int32_t exp;

    sign = (x >> 16) & 0x8000;
    exp = (int32_t)((x >> 23) & 0xff);
    man = x & 0x7fffff;
    if (exp == 0xff) /* infinity or NaN */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    exp = exp - 127 + 15;
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) { /* a subnormal half, or zero */
        uint32_t m, shift, half;
        if (exp < -10)
            return (uint16_t)sign;
        m = man | 0x800000;
        shift = (uint32_t)(14 - exp);
        r = m >> shift;
        rem = m & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    r = ((uint32_t)exp << 10) | (man >> 13);
    rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        r++; /* may carry into the exponent: still correct */
    return (uint16_t)(sign | r);
}

MICA_KIT_HD float mica_kit_bf16_to_float(uint16_t h)
{
    return mica_kit_bits_float((uint32_t)h << 16);
}

MICA_KIT_HD uint16_t mica_kit_float_to_bf16(float f)
{
    uint32_t x = mica_kit_float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_HALF_H */
