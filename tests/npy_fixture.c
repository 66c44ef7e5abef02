/*
 * tests/npy_fixture.c - write and print small .npy files for shell tests,
 * independently of the mica tool's own .npy code (so that a test of the
 * tool does not check its reader with its writer).
 *
 *   npy_fixture write FILE DTYPE SHAPE VALUE...
 *       DTYPE float32, int32 or float64; SHAPE "2x3", or "-" for a scalar.
 *       Writes format 1.0, little-endian, C order.
 *   npy_fixture print FILE
 *       Prints "DTYPE [D0,D1,...] V0 V1 ..." on one line (%.9g values),
 *       for format 1.0, 2.0 and 3.0 files of float32, float64, float16
 *       (as bits), int32, int64, int8, uint8 and bool.
 *
 * Exits 1 with a message on stderr when something is wrong.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *file)
{
    fprintf(stderr, "npy_fixture: %s: %s\n", file, what);
    return 1;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    int i;
    for (i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static int do_write(int argc, char **argv)
{
    const char *file = argv[2], *dtype = argv[3], *shape = argv[4];
    char header[256], dims[128] = "";
    const char *descr;
    long count = 1, n;
    int size, len, pad;
    unsigned char head[10], el[8];
    FILE *f;

    if (strcmp(dtype, "float32") == 0) {
        descr = "<f4";
        size = 4;
    } else if (strcmp(dtype, "int32") == 0) {
        descr = "<i4";
        size = 4;
    } else if (strcmp(dtype, "float64") == 0) {
        descr = "<f8";
        size = 8;
    } else {
        return fail("unknown dtype", dtype);
    }
    if (strcmp(shape, "-") != 0) {
        const char *p = shape;
        int nb = 0;
        while (*p) {
            char *end;
            long d = strtol(p, &end, 10);
            if (end == p || d < 0)
                return fail("bad shape", shape);
            count *= d;
            nb++;
            snprintf(dims + strlen(dims), sizeof(dims) - strlen(dims),
                     "%ld,", d);
            p = *end == 'x' ? end + 1 : end;
            if (*end && *end != 'x')
                return fail("bad shape", shape);
        }
        if (nb > 1) /* "(2,3)" rather than "(2,3,)" */
            dims[strlen(dims) - 1] = '\0';
    }
    if (argc - 5 != count)
        return fail("the number of values does not match the shape", file);
    len = snprintf(header, sizeof(header),
                   "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                   descr, dims);
    pad = 64 - (10 + len + 1) % 64;
    if (pad == 64)
        pad = 0;
    memset(header + len, ' ', (size_t)pad);
    header[len + pad] = '\n';
    len += pad + 1;
    f = fopen(file, "wb");
    if (!f)
        return fail("cannot write", file);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    put_le(head + 8, (uint64_t)len, 2);
    fwrite(head, 1, 10, f);
    fwrite(header, 1, (size_t)len, f);
    for (n = 0; n < count; n++) {
        double v = strtod(argv[5 + n], NULL);
        if (strcmp(dtype, "float32") == 0) {
            float x = (float)v;
            uint32_t bits;
            memcpy(&bits, &x, 4);
            put_le(el, bits, 4);
        } else if (strcmp(dtype, "float64") == 0) {
            uint64_t bits;
            memcpy(&bits, &v, 8);
            put_le(el, bits, 8);
        } else {
            put_le(el, (uint64_t)(uint32_t)(int32_t)v, 4);
        }
        fwrite(el, 1, (size_t)size, f);
    }
    return fclose(f) == 0 ? 0 : fail("cannot write", file);
}

static int do_print(const char *file)
{
    static const struct {
        const char *descr, *name;
        int size;
    } types[] = {
        {"<f4", "float32", 4}, {"<f8", "float64", 8}, {"<f2", "float16", 2},
        {"<i4", "int32", 4},   {"<i8", "int64", 8},   {"|i1", "int8", 1},
        {"|u1", "uint8", 1},   {"|b1", "bool", 1},
    };
    unsigned char magic[12], el[8];
    char *header, *p;
    long hlen, count = 1;
    int t, nt = (int)(sizeof(types) / sizeof(types[0]));
    FILE *f = fopen(file, "rb");

    if (!f)
        return fail("cannot open", file);
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0)
        return fail("not a .npy file", file);
    if (magic[6] == 1) {
        if (fread(magic + 8, 1, 2, f) != 2)
            return fail("truncated", file);
        hlen = (long)get_le(magic + 8, 2);
    } else {
        if (fread(magic + 8, 1, 4, f) != 4)
            return fail("truncated", file);
        hlen = (long)get_le(magic + 8, 4);
    }
    header = calloc(1, (size_t)hlen + 1);
    if (!header || fread(header, 1, (size_t)hlen, f) != (size_t)hlen)
        return fail("truncated header", file);
    for (t = 0; t < nt; t++) {
        char want[32];
        snprintf(want, sizeof(want), "'descr': '%s'", types[t].descr);
        if (strstr(header, want))
            break;
    }
    if (t == nt)
        return fail("unknown descr", file);
    if (!strstr(header, "'fortran_order': False"))
        return fail("not C order", file);
    p = strstr(header, "'shape': (");
    if (!p)
        return fail("no shape", file);
    p += strlen("'shape': (");
    printf("%s [", types[t].name);
    while (*p && *p != ')') {
        char *end;
        long d = strtol(p, &end, 10);
        if (end == p)
            break;
        printf("%s%ld", count == 1 && p[-1] == '(' ? "" : ",", d);
        count *= d;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    printf("]");
    for (; count > 0; count--) {
        uint64_t v;
        if (fread(el, 1, (size_t)types[t].size, f) != (size_t)types[t].size)
            return fail("truncated data", file);
        v = get_le(el, types[t].size);
        if (strcmp(types[t].name, "float32") == 0) {
            uint32_t bits = (uint32_t)v;
            float x;
            memcpy(&x, &bits, 4);
            printf(" %.9g", x);
        } else if (strcmp(types[t].name, "float64") == 0) {
            double x;
            memcpy(&x, &v, 8);
            printf(" %.17g", x);
        } else if (strcmp(types[t].name, "int32") == 0) {
            printf(" %ld", (long)(int32_t)(uint32_t)v);
        } else if (strcmp(types[t].name, "int64") == 0) {
            printf(" %lld", (long long)(int64_t)v);
        } else if (strcmp(types[t].name, "int8") == 0) {
            printf(" %d", (int)(int8_t)(uint8_t)v);
        } else {
            printf(" %u", (unsigned)v);
        }
    }
    printf("\n");
    free(header);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "write") == 0)
        return do_write(argc, argv);
    if (argc == 3 && strcmp(argv[1], "print") == 0)
        return do_print(argv[2]);
    fprintf(stderr, "usage: npy_fixture write FILE DTYPE SHAPE VALUE...\n"
                    "       npy_fixture print FILE\n");
    return 2;
}
