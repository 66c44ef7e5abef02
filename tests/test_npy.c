/*
 * tests/test_npy.c - the .npy reader and writer of core/base/npy.c: files
 * built byte by byte as NumPy writes them (formats 1.0, 2.0, 3.0), a
 * round trip of every dtype in both written formats, the exact bytes
 * written, atomic writing, and each error.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mica/mica.h"
#include "npy.h"
#include "tap.h"

static char dir[512];

static const char *path_of(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf), "%s/%s", dir, name);
    return buf;
}

/* A .npy image: magic, version, header padded to 64 bytes, data. */
static size_t image(unsigned char *out, int major, const char *dict,
                    const void *data, size_t bytes)
{
    size_t pre = major == 1 ? 10 : 12, n = strlen(dict), total, hl;
    total = (pre + n + 1 + 63) / 64 * 64;
    hl = total - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hl & 0xff);
    out[9] = (unsigned char)(hl >> 8);
    if (major != 1) {
        out[10] = 0;
        out[11] = 0;
    }
    memcpy(out + pre, dict, n);
    memset(out + pre + n, ' ', hl - n - 1);
    out[total - 1] = '\n';
    memcpy(out + total, data, bytes);
    return total + bytes;
}

static void parse_built(void)
{
    unsigned char buf[1024];
    float f[6] = {1, 2, 3, 4, 5, 6.5f};
    int32_t i3[3] = {-1, 0, 7};
    uint8_t b[2] = {1, 0};
    mica__npy_t a;
    char err[256];
    size_t n;
    int major;

    for (major = 1; major <= 3; major++) {
        n = image(buf, major, "{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2, 3), }", f, sizeof(f));
        ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK
               && a.dtype == MICA_FLOAT32 && a.dims.nb_dims == 2
               && a.dims.d[0] == 2 && a.dims.d[1] == 3
               && !memcmp(a.data, f, sizeof(f)),
           "format %d.0: float32 [2, 3]", major);
        mica__npy_free(&a);
    }
    n = image(buf, 1, "{'descr': '<i4', 'fortran_order': False, "
                      "'shape': (3,), }", i3, sizeof(i3));
    ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK
           && a.dtype == MICA_INT32 && a.dims.nb_dims == 1
           && a.dims.d[0] == 3 && !memcmp(a.data, i3, sizeof(i3)),
       "int32 [3]");
    mica__npy_free(&a);
    n = image(buf, 1, "{\"descr\": \"|b1\", \"shape\": (2,), "
                      "\"fortran_order\": False}", b, sizeof(b));
    ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK
           && a.dtype == MICA_BOOL && a.dims.d[0] == 2,
       "bool, keys in another order, double quotes");
    mica__npy_free(&a);
    n = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (), }", f, 4);
    ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK
           && a.dims.nb_dims == 0 && ((float *)a.data)[0] == 1.0f,
       "a 0-D scalar");
    mica__npy_free(&a);
    n = image(buf, 1, "{'descr': '<f4', 'fortran_order': True, "
                      "'shape': (3,), }", f, 12);
    ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK,
       "fortran_order True is fine for rank 1");
    mica__npy_free(&a);
    n = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (0, 3), }", f, 0);
    ok(mica__npy_parse(buf, n, "x", &a, err, sizeof(err)) == MICA_OK
           && a.bytes == 0,
       "an empty array");
    mica__npy_free(&a);
}

static void parse_errors(void)
{
    unsigned char buf[1024];
    float f[8] = {0}; /* as many bytes as the longest case's data */
    mica__npy_t a;
    char err[256];
    size_t n;
    static const struct {
        const char *dict;
        size_t bytes;
        mica_status_t st;
        const char *needle;
    } cases[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8,
         MICA_ERR_UNSUPPORTED, "f: big-endian data ('>f4') is not supported; save it little-endian"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
         MICA_ERR_UNSUPPORTED, "f: Fortran-order data is not supported; save it in C order"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16,
         MICA_ERR_UNSUPPORTED,
         "f: element type '<f8' is not supported (f4, f2, i1, i4, b1, i8, u1 are)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
         MICA_ERR_INVALID, "f: truncated data: 20 bytes, 24 expected"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
         MICA_ERR_INVALID, "f: 4 bytes after the data"},
        {"{'descr': '<f4', 'fortran_order': False}", 0, MICA_ERR_INVALID,
         "f: the .npy header lacks 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}", 24,
         MICA_ERR_INVALID, "f: malformed .npy header"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
         4, MICA_ERR_UNSUPPORTED, "f: structured arrays are not supported"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = image(buf, 1, cases[i].dict, f, cases[i].bytes);
        err[0] = '\0';
        ok(mica__npy_parse(buf, n, "f", &a, err, sizeof(err)) == cases[i].st,
           "error %d: status", (int)i);
        is_string(cases[i].needle, err, "error %d: message", (int)i);
        mica__npy_free(&a);
    }
    ok(mica__npy_parse("\x93NUMPX\x01\x00\x00\x00", 10, "f", &a, err,
                       sizeof(err)) == MICA_ERR_INVALID,
       "bad magic: refused");
    is_string("f: not a .npy file (bad magic)", err, "bad magic: message");
    n = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (2,), }", f, 8);
    buf[6] = 4;
    ok(mica__npy_parse(buf, n, "f", &a, err, sizeof(err))
           == MICA_ERR_UNSUPPORTED,
       "format 4.0: refused");
    contains(err, "version 4.0 is not supported", "format 4.0: message");
    n = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (2,), }", f, 8);
    ok(mica__npy_parse(buf, 40, "f", &a, err, sizeof(err))
           == MICA_ERR_INVALID,
       "truncated header: refused");
    is_string("f: truncated .npy header", err, "truncated header: message");
    ok(mica__npy_read(path_of("missing.npy"), &a, err, sizeof(err))
           == MICA_ERR_NOT_FOUND,
       "missing file: not found");
    contains(err, "cannot open", "missing file: message");
}

static void round_trip(void)
{
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16,
                                         MICA_INT8,    MICA_INT32,
                                         MICA_BOOL,    MICA_INT64,
                                         MICA_UINT8};
    unsigned char data[6 * 8];
    mica_dims_t dims;
    mica__npy_t a;
    char err[256];
    size_t i, k;
    int major;

    for (k = 0; k < sizeof(data); k++)
        data[k] = (unsigned char)(k * 37 + 1);
    memset(&dims, 0, sizeof(dims));
    dims.nb_dims = 2;
    dims.d[0] = 2;
    dims.d[1] = 3;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        mica_dtype_t t = types[i];
        size_t bytes = 6 * mica_dtype_size(t);
        if (t == MICA_BOOL)
            for (k = 0; k < 6; k++)
                data[k] = (unsigned char)(k & 1);
        for (major = 1; major <= 2; major++) {
            mica_status_t st = mica__npy_write(path_of("rt.npy"), t, &dims,
                                               data, major, err, sizeof(err));
            if (st == MICA_OK)
                st = mica__npy_read(path_of("rt.npy"), &a, err, sizeof(err));
            ok(st == MICA_OK && a.dtype == t && a.dims.nb_dims == 2
                   && a.dims.d[0] == 2 && a.dims.d[1] == 3 && a.bytes == bytes
                   && !memcmp(a.data, data, bytes),
               "round trip %s, format %d.0", mica_dtype_name(t), major);
            if (st != MICA_OK)
                diag("    %s", err);
            else
                mica__npy_free(&a);
        }
    }
}

static void writing(void)
{
    static const char want[] =
        "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
        "'shape': (3,), }";
    float f[3] = {1, 2, 3};
    unsigned char buf[256];
    mica_dims_t dims;
    char err[256];
    FILE *fp;
    size_t n;

    memset(&dims, 0, sizeof(dims));
    dims.nb_dims = 1;
    dims.d[0] = 3;
    ok(mica__npy_write(path_of("w.npy"), MICA_FLOAT32, &dims, f, 0, err,
                       sizeof(err)) == MICA_OK,
       "write float32 [3]");
    fp = fopen(path_of("w.npy"), "rb");
    n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;
    if (fp)
        fclose(fp);
    is_int(128 + 12, (int64_t)n, "128 bytes of header, 12 of data");
    ok(n == 140 && !memcmp(buf, want, sizeof(want) - 1) && buf[127] == '\n'
           && buf[126] == ' ' && !memcmp(buf + 128, f, 12),
       "the bytes NumPy writes");
    ok(access(path_of(".w.npy.tmp"), F_OK) != 0, "no temporary file left");
    ok(mica__npy_write(path_of("nowhere/w.npy"), MICA_FLOAT32, &dims, f, 0,
                       err, sizeof(err)) == MICA_ERR_IO,
       "writing into a missing folder fails");
    contains(err, "cannot write", "with a message");
    ok(mica__npy_write(path_of("bf.npy"), MICA_BFLOAT16, &dims, f, 0, err,
                       sizeof(err)) == MICA_ERR_UNSUPPORTED
           && access(path_of("bf.npy"), F_OK) != 0
           && access(path_of(".bf.npy.tmp"), F_OK) != 0,
       "bfloat16 has no .npy form: nothing written");
    remove(path_of("w.npy"));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/mica-test-npy-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bail("cannot make a scratch folder");
    plan_lazy();
    parse_built();
    parse_errors();
    round_trip();
    writing();
    remove(path_of("rt.npy"));
    rmdir(dir);
    return exit_status();
}
