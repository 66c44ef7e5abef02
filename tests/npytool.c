/*
 * tests/npytool.c - a helper of test_cli.sh for .npy files:
 *
 *   npytool make FILE DTYPE DIMS VALUES   write FILE (DIMS "2x3", "" for a
 *                                         scalar; VALUES "1,2.5,-3")
 *   npytool dump FILE                     print "DTYPE [D0, D1] v0 v1 ..."
 *
 * Values print with %.9g (float16 converted to float first).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/mica.h"
#include "npy.h"

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f,
             mant = h & 0x3ffu, x;
    float f;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (!mant) {
            x = sign;
        } else {
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                exp--;
            }
            x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x, sign, mant;
    int32_t exp;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    mant = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0)
        return (uint16_t)sign; /* the tests need no subnormals */
    return (uint16_t)(sign | ((uint32_t)exp << 10) | (mant >> 13));
}

static int make(const char *file, const char *dt, const char *dims_s,
                const char *vals)
{
    mica_dtype_t dtype;
    mica_dims_t dims;
    int64_t n, i;
    void *buf;
    char err[512];
    const char *p;
    char *end;

    memset(&dims, 0, sizeof(dims));
    if (mica_dtype_parse(dt, &dtype) != MICA_OK) {
        fprintf(stderr, "npytool: bad dtype '%s'\n", dt);
        return 2;
    }
    for (p = dims_s; *p;) {
        dims.d[dims.nb_dims++] = strtoll(p, &end, 10);
        p = *end == 'x' ? end + 1 : end;
        if (end == p && *p)
            break;
    }
    n = mica_dims_volume(&dims);
    buf = calloc((size_t)(n ? n : 1), 8);
    if (!buf)
        return 1;
    p = vals;
    for (i = 0; i < n; i++) {
        double v = strtod(p, &end);
        if (end == p) {
            fprintf(stderr, "npytool: %lld values needed\n", (long long)n);
            return 2;
        }
        p = *end == ',' ? end + 1 : end;
        switch (dtype) {
        case MICA_FLOAT32: ((float *)buf)[i] = (float)v; break;
        case MICA_FLOAT16: ((uint16_t *)buf)[i] = float_to_half((float)v); break;
        case MICA_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
        case MICA_UINT8: case MICA_BOOL: ((uint8_t *)buf)[i] = (uint8_t)v; break;
        case MICA_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
        case MICA_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
        default: fprintf(stderr, "npytool: unsupported dtype\n"); return 2;
        }
    }
    if (mica__npy_write(file, dtype, &dims, buf, 0, err, sizeof(err))) {
        fprintf(stderr, "npytool: %s\n", err);
        return 1;
    }
    free(buf);
    return 0;
}

static int dump(const char *file)
{
    mica__npy_t a;
    char err[512];
    int64_t n, i;
    int32_t k;
    if (mica__npy_read(file, &a, err, sizeof(err)) != MICA_OK) {
        fprintf(stderr, "npytool: %s\n", err);
        return 1;
    }
    printf("%s [", mica_dtype_name(a.dtype));
    for (k = 0; k < a.dims.nb_dims; k++)
        printf("%s%lld", k ? ", " : "", (long long)a.dims.d[k]);
    printf("]");
    n = mica_dims_volume(&a.dims);
    for (i = 0; i < n; i++) {
        double v = 0;
        switch (a.dtype) {
        case MICA_FLOAT32: v = ((float *)a.data)[i]; break;
        case MICA_FLOAT16: v = half_to_float(((uint16_t *)a.data)[i]); break;
        case MICA_INT8: v = ((int8_t *)a.data)[i]; break;
        case MICA_UINT8: case MICA_BOOL: v = ((uint8_t *)a.data)[i]; break;
        case MICA_INT32: v = ((int32_t *)a.data)[i]; break;
        case MICA_INT64: v = (double)((int64_t *)a.data)[i]; break;
        default: break;
        }
        printf(" %.9g", v);
    }
    printf("\n");
    mica__npy_free(&a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "make"))
        return make(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 3 && !strcmp(argv[1], "dump"))
        return dump(argv[2]);
    fprintf(stderr, "usage: npytool make FILE DTYPE DIMS VALUES | "
                    "npytool dump FILE\n");
    return 2;
}
