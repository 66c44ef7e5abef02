/*
 * tests/npytool.c - a helper of test_cli.sh for .npy files:
 *
 *   npytool make FILE DTYPE DIMS VALUES   write FILE (DIMS "2x3", "" for a
 *                                         scalar; VALUES "1,2.5,-3")
 *   npytool dump FILE                     print "DTYPE [D0, D1] v0 v1 ..."
 *   npytool cmp FILE1 FILE2 [TOL]         exit 0 if both hold the same
 *                                         dtype, shape and values, each
 *                                         within TOL * (1 + |v|) (default
 *                                         0: equal; NaN equals NaN), else
 *                                         say where they differ, exit 1
 *
 * Values print with %.9g (float16 converted to float first).
 */
#include <config.h>

#include <math.h>
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

/* Element i of an array as a double. */
static double value(const mica__npy_t *a, int64_t i)
{
    switch (a->dtype) {
    case MICA_FLOAT32: return ((const float *)a->data)[i];
    case MICA_FLOAT16: return half_to_float(((const uint16_t *)a->data)[i]);
    case MICA_INT8: return ((const int8_t *)a->data)[i];
    case MICA_UINT8: case MICA_BOOL: return ((const uint8_t *)a->data)[i];
    case MICA_INT32: return ((const int32_t *)a->data)[i];
    case MICA_INT64: return (double)((const int64_t *)a->data)[i];
    default: return 0;
    }
}

static int read_file(const char *file, mica__npy_t *a)
{
    char err[512];
    if (mica__npy_read(file, a, err, sizeof(err)) == MICA_OK)
        return 0;
    fprintf(stderr, "npytool: %s\n", err);
    return 1;
}

static void print_dims(const mica_dims_t *d)
{
    int32_t k;
    printf("[");
    for (k = 0; k < d->nb_dims; k++)
        printf("%s%lld", k ? ", " : "", (long long)d->d[k]);
    printf("]");
}

static int dump(const char *file)
{
    mica__npy_t a;
    int64_t n, i;
    if (read_file(file, &a))
        return 1;
    printf("%s ", mica_dtype_name(a.dtype));
    print_dims(&a.dims);
    n = mica_dims_volume(&a.dims);
    for (i = 0; i < n; i++)
        printf(" %.9g", value(&a, i));
    printf("\n");
    mica__npy_free(&a);
    return 0;
}

static int cmp(const char *f1, const char *f2, const char *tol_s)
{
    mica__npy_t a, b;
    double tol = tol_s ? strtod(tol_s, NULL) : 0;
    int64_t n, i;
    int32_t k;
    int rc = 0;
    if (read_file(f1, &a))
        return 2;
    if (read_file(f2, &b)) {
        mica__npy_free(&a);
        return 2;
    }
    for (k = 0; k < a.dims.nb_dims && a.dims.d[k] == b.dims.d[k]; k++)
        ;
    if (a.dtype != b.dtype || a.dims.nb_dims != b.dims.nb_dims
        || k < a.dims.nb_dims) {
        printf("%s ", mica_dtype_name(a.dtype));
        print_dims(&a.dims);
        printf(" vs %s ", mica_dtype_name(b.dtype));
        print_dims(&b.dims);
        printf("\n");
        rc = 1;
    }
    n = mica_dims_volume(&a.dims);
    for (i = 0; !rc && i < n; i++) {
        double x = value(&a, i), y = value(&b, i);
        if ((isnan(x) && isnan(y)) || x == y
            || fabs(x - y) <= tol * (1 + fabs(y)))
            continue;
        printf("element %lld: %.9g vs %.9g\n", (long long)i, x, y);
        rc = 1;
    }
    mica__npy_free(&a);
    mica__npy_free(&b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "make"))
        return make(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 3 && !strcmp(argv[1], "dump"))
        return dump(argv[2]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "cmp"))
        return cmp(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    fprintf(stderr, "usage: npytool make FILE DTYPE DIMS VALUES | "
                    "npytool dump FILE | npytool cmp FILE1 FILE2 [TOL]\n");
    return 2;
}
