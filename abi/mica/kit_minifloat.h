/*
 * mica/kit_minifloat.h - the types narrower than a byte's worth of float
 * (float8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0; float4 e2m1) and the
 * 4-bit integers, as mica stores them (one byte per element), converted
 * to and from double the same way on the host and on the device (every
 * function MICA_KIT_HD, as mica/kit_half.h's).
 *
 * Conversions to double are exact.  From double, as ONNX's Cast (and the
 * ml_dtypes it is defined by) does:
 *   - float8 and float4 round to nearest, ties to even; with `saturate`
 *     a value beyond the largest finite one, or an infinity, becomes that
 *     largest value (with its sign); without, it becomes infinity (e5m2)
 *     or NaN (the others).  float4 e2m1 has neither: it always
 *     saturates, NaN gives 0.  The fnuz types have no -0 (it gives 0);
 *   - e8m0 (a power of two, no sign) takes the exponent of the float32
 *     of the value, rounded up when any fraction bit is set (ONNX's
 *     round_mode "up"; its mask tested as ONNX's reference does), not
 *     past the largest with `saturate`; NaN and infinity give 0xff;
 *   - int4 and uint4 truncate toward zero and keep the low 4 bits (they
 *     wrap, as a C cast to a narrower integer); NaN gives 0.
 */
#ifndef MICA_KIT_MINIFLOAT_H
#define MICA_KIT_MINIFLOAT_H

#include <math.h>
#include <stdint.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NaN and infinity as doubles, and the sign bit of a double, without
 * <math.h>'s macros (NVRTC's Pointwise kernels include this header). */
MICA_KIT_HD double mica_kit_mf_nan(void)
{
    return (double)mica_kit_bits_float(0x7fc00000u);
}

MICA_KIT_HD double mica_kit_mf_inf(int negative)
{
    return (double)mica_kit_bits_float(negative ? 0xff800000u : 0x7f800000u);
}

MICA_KIT_HD int mica_kit_mf_signbit(double v)
{
    return (int)(mica_kit_float_bits((float)v) >> 31);
}

/* How a format spells its specials. */
enum {
    MICA_KIT_MF_FN = 0,   /* NaN: all bits but the sign set; no infinity */
    MICA_KIT_MF_IEEE = 1, /* the top exponent: infinity and NaNs */
    MICA_KIT_MF_FNUZ = 2, /* NaN: the sign bit alone; no -0, no infinity */
    MICA_KIT_MF_NONE = 3  /* no specials at all (float4 e2m1) */
};

/* The bits of the largest finite value of a format (no sign). */
MICA_KIT_HD uint32_t mica_kit_mf_max_bits(int e, int m, int kind)
{
    uint32_t top = (1u << e) - 1, man = (1u << m) - 1;
    if (kind == MICA_KIT_MF_FN)
        return (top << m) | (man - 1);
    if (kind == MICA_KIT_MF_IEEE)
        return ((top - 1) << m) | man;
    return (top << m) | man;
}

/* The value of the bits `b` of a format with e exponent and m mantissa
 * bits, the given bias and specials. */
MICA_KIT_HD double mica_kit_mf_to_double(uint32_t b, int e, int m, int bias,
                                         int kind)
{
    uint32_t sign = (b >> (e + m)) & 1, top = (1u << e) - 1,
             ex = (b >> m) & top, man = b & ((1u << m) - 1);
    double v;
    if (kind == MICA_KIT_MF_FNUZ && sign && ex == 0 && man == 0)
        return mica_kit_mf_nan();
    if (kind == MICA_KIT_MF_FN && ex == top && man == (1u << m) - 1)
        return mica_kit_mf_nan();
    if (kind == MICA_KIT_MF_IEEE && ex == top)
        return man ? mica_kit_mf_nan() : mica_kit_mf_inf((int)sign);
    v = ex == 0 ? ldexp((double)man, 1 - bias - m)
                : ldexp((double)(man | (1u << m)), (int)ex - bias - m);
    return sign ? -v : v;
}

/* The bits of v in a format as above (round to nearest even). */
MICA_KIT_HD uint32_t mica_kit_mf_from_double(double v, int e, int m,
                                             int bias, int kind,
                                             int saturate)
{
    uint32_t sign = mica_kit_mf_signbit(v) ? 1u << (e + m) : 0, maxb, bits;
    double a = fabs(v), maxv, r;
    int ex;
    if (kind == MICA_KIT_MF_NONE)
        saturate = 1;
    maxb = mica_kit_mf_max_bits(e, m, kind);
    maxv = mica_kit_mf_to_double(maxb, e, m, bias, kind);
    if (v != v) /* NaN */
        return kind == MICA_KIT_MF_NONE ? 0
               : kind == MICA_KIT_MF_FNUZ ? 1u << (e + m)
               : ((1u << (e + m)) - 1);
    if (kind == MICA_KIT_MF_FNUZ)
        sign = v < 0 ? sign : 0; /* no -0 */
    if (a == 0.0)
        return sign;
    if (a - a == 0.0) { /* finite */
        (void)frexp(a, &ex); /* a = f 2^ex, f in [0.5, 1) */
        ex -= 1;
        if (ex < 1 - bias)
            ex = 1 - bias; /* a subnormal */
        r = rint(ldexp(a, m - ex)); /* the mantissa, hidden bit included */
        if (r >= (double)(1u << (m + 1))) {
            r /= 2;
            ex++;
        }
        if (ldexp(r, ex - m) <= maxv) {
            if (r < (double)(1u << m)) /* subnormal (or rounded to 0) */
                bits = (uint32_t)r;
            else
                bits = ((uint32_t)(ex + bias) << m) |
                       ((uint32_t)r - (1u << m));
            if (kind == MICA_KIT_MF_FNUZ && bits == 0)
                return 0;
            return sign | bits;
        }
    }
    /* beyond the largest finite value, or infinite */
    if (saturate)
        return sign | maxb;
    if (kind == MICA_KIT_MF_IEEE)
        return sign | (((1u << e) - 1) << m);
    return kind == MICA_KIT_MF_FNUZ ? 1u << (e + m) : sign | ((1u << (e + m)) - 1);
}

/* float8 e8m0: 2^(b-127), 0xff NaN. */
MICA_KIT_HD double mica_kit_e8m0_to_double(uint32_t b)
{
    return b == 0xff ? mica_kit_mf_nan() : ldexp(1.0, (int)b - 127);
}

MICA_KIT_HD uint32_t mica_kit_e8m0_from_double(double v, int saturate)
{
    uint32_t x = mica_kit_float_bits((float)v), ex = (x >> 23) & 0xff;
    if (ex == 0xff)
        return 0xff;
    if ((x & 0x4fffffu) && !(saturate && ex == 0xfe))
        ex++;
    return ex;
}

/* int4 and uint4: the low 4 bits of v truncated (int4 sign-extended). */
MICA_KIT_HD int32_t mica_kit_int4_from_double(double v, int is_signed)
{
    int64_t t;
    if (v != v)
        return 0;
    t = v <= -9.2e18 ? INT64_MIN : v >= 9.2e18 ? INT64_MAX : (int64_t)v;
    t &= 0xf;
    return is_signed ? (int32_t)((t ^ 8) - 8) : (int32_t)t;
}

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_MINIFLOAT_H */
