/*
 * core/base/npy.c - reading and writing NumPy .npy files.
 *
 * The format: the magic "\x93NUMPY", a major and a minor version byte, the
 * header length (2 bytes for 1.0, 4 for 2.0 and 3.0, little-endian), then
 * a Python dict literal with 'descr', 'fortran_order' and 'shape', padded
 * with spaces and a newline so that the data starts on a 64-byte boundary.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "npy.h"

/* "[2, 3]" into buf, for messages. */
static const char *shape_str(const mica_dims_t *d, char *buf, size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    int32_t i;
    for (i = 0; i < d->nb_dims && i < MICA_MAX_DIMS && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld",
                                i ? ", " : "", (long long)d->d[i]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static mica_status_t fail(char *err, size_t errlen, mica_status_t st,
                          const char *fmt, ...) MICA_PRINTF(4, 5);

static mica_status_t fail(char *err, size_t errlen, mica_status_t st,
                          const char *fmt, ...)
{
    va_list ap;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* descr kind letter and size -> dtype; the byte order is checked apart. */
static const struct {
    const char *code;
    mica_dtype_t dtype;
} codes[] = {
    {"f4", MICA_FLOAT32}, {"f2", MICA_FLOAT16}, {"i1", MICA_INT8},
    {"i4", MICA_INT32},   {"b1", MICA_BOOL},    {"i8", MICA_INT64},
    {"u1", MICA_UINT8},
};

const char *mica__npy_descr(mica_dtype_t dtype)
{
    switch (dtype) {
    case MICA_FLOAT32: return "<f4";
    case MICA_FLOAT16: return "<f2";
    case MICA_INT8: return "|i1";
    case MICA_INT32: return "<i4";
    case MICA_BOOL: return "|b1";
    case MICA_INT64: return "<i8";
    case MICA_UINT8: return "|u1";
    default: return NULL;
    }
}

/* ---- header parsing --------------------------------------------------- */

typedef struct hdr {
    const char *p, *end;
} hdr_t;

static void skip_ws(hdr_t *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n'
                             || *h->p == '\r'))
        h->p++;
}

/* A quoted string into buf; 0 on success. */
static int parse_str(hdr_t *h, char *buf, size_t len)
{
    char q;
    size_t n = 0;
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return -1;
    q = *h->p++;
    while (h->p < h->end && *h->p != q) {
        if (n + 1 >= len)
            return -1;
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return -1;
    h->p++;
    buf[n] = '\0';
    return 0;
}

static int parse_word(hdr_t *h, const char *w)
{
    size_t n = strlen(w);
    skip_ws(h);
    if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0)
        return -1;
    h->p += n;
    return 0;
}

static int parse_shape(hdr_t *h, mica_dims_t *dims)
{
    dims->nb_dims = 0;
    if (parse_word(h, "("))
        return -1;
    for (;;) {
        int64_t v = 0;
        int digits = 0;
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            return 0;
        }
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (*h->p++ - '0');
            digits++;
        }
        if (h->p < h->end && *h->p == 'L') /* Python 2 longs */
            h->p++;
        if (!digits || dims->nb_dims >= MICA_MAX_DIMS)
            return -1;
        dims->d[dims->nb_dims++] = v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',')
            h->p++;
        else if (h->p >= h->end || *h->p != ')')
            return -1;
    }
}

mica_status_t mica__npy_parse(const void *buf, size_t len, const char *what,
                              mica__npy_t *out, char *err, size_t errlen)
{
    const unsigned char *b = buf;
    size_t hlen, start, i;
    int major, have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    char descr[32], key[32];
    hdr_t h;
    int64_t bytes;

    memset(out, 0, sizeof(*out));
    if (len < 10 || memcmp(b, magic, 6) != 0)
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: not a .npy file (bad magic)", what);
    major = b[6];
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return fail(err, errlen, MICA_ERR_INVALID,
                        "%s: truncated .npy header", what);
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16
               | (size_t)b[11] << 24;
        start = 12;
    } else {
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "%s: .npy format version %d.%d is not supported "
                    "(1.0, 2.0 and 3.0 are)", what, major, b[7]);
    }
    if (hlen > len - start)
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: truncated .npy header", what);

    h.p = (const char *)b + start;
    h.end = h.p + hlen;
    if (parse_word(&h, "{"))
        goto bad_header;
    for (;;) {
        skip_ws(&h);
        if (h.p < h.end && *h.p == '}')
            break;
        if (parse_str(&h, key, sizeof(key)) || parse_word(&h, ":"))
            goto bad_header;
        if (!strcmp(key, "descr")) {
            skip_ws(&h);
            if (h.p < h.end && *h.p == '[')
                return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                            "%s: structured arrays are not supported", what);
            if (parse_str(&h, descr, sizeof(descr)))
                goto bad_header;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (!parse_word(&h, "True"))
                fortran = 1;
            else if (parse_word(&h, "False"))
                goto bad_header;
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (parse_shape(&h, &out->dims))
                goto bad_header;
            have_shape = 1;
        } else {
            return fail(err, errlen, MICA_ERR_INVALID,
                        "%s: unexpected key '%s' in the .npy header", what,
                        key);
        }
        skip_ws(&h);
        if (h.p < h.end && *h.p == ',')
            h.p++;
        else if (h.p >= h.end || *h.p != '}')
            goto bad_header;
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: the .npy header lacks '%s'", what,
                    !have_descr ? "descr"
                    : !have_order ? "fortran_order" : "shape");

    if (descr[0] == '>' && strcmp(descr + 1, "i1") && strcmp(descr + 1, "u1")
        && strcmp(descr + 1, "b1"))
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "%s: big-endian data ('%s') is not supported; save it "
                    "little-endian", what, descr);
    if (descr[0] != '<' && descr[0] != '|' && descr[0] != '='
        && descr[0] != '>')
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "%s: element type '%s' is not supported", what, descr);
    for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (!strcmp(descr + 1, codes[i].code))
            break;
    if (i == sizeof(codes) / sizeof(codes[0]))
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "%s: element type '%s' is not supported (f4, f2, i1, "
                    "i4, b1, i8, u1 are)", what, descr);
    out->dtype = codes[i].dtype;
    if (fortran && out->dims.nb_dims > 1)
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "%s: Fortran-order data is not supported; save it in "
                    "C order", what);

    if (mica_dims_bytes_checked(&out->dims, out->dtype, &bytes) != 0) {
        char shape[256];
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: shape %s is larger than the largest tensor mica "
                    "accepts (2^48 bytes)", what,
                    shape_str(&out->dims, shape, sizeof shape));
    }
    out->bytes = (size_t)bytes;
    start += hlen;
    if (len - start < out->bytes)
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: truncated data: %zu bytes, %zu expected", what,
                    len - start, out->bytes);
    if (len - start > out->bytes)
        return fail(err, errlen, MICA_ERR_INVALID,
                    "%s: %zu bytes after the data", what,
                    len - start - out->bytes);
    out->data = malloc(out->bytes ? out->bytes : 1);
    if (!out->data)
        return fail(err, errlen, MICA_ERR_NOMEM, "%s: out of memory", what);
    memcpy(out->data, b + start, out->bytes);
    return MICA_OK;

bad_header:
    return fail(err, errlen, MICA_ERR_INVALID, "%s: malformed .npy header",
                what);
}

/* The array of open stream f (closed here); path names it in messages. */
static mica_status_t read_stream(FILE *f, const char *path, mica__npy_t *out,
                                 char *err, size_t errlen)
{
    struct stat sb;
    long n;
    void *buf = NULL;
    mica_status_t st;

    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        st = fail(err, errlen, MICA_ERR_IO, "cannot read '%s': is a directory",
                  path);
        goto out;
    }
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        st = fail(err, errlen, MICA_ERR_IO, "cannot read '%s': %s", path,
                  strerror(errno));
        goto out;
    }
    buf = malloc(n ? (size_t)n : 1);
    if (!buf) {
        st = fail(err, errlen, MICA_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        st = fail(err, errlen, MICA_ERR_IO, "cannot read '%s'", path);
        goto out;
    }
    st = mica__npy_parse(buf, (size_t)n, path, out, err, errlen);
out:
    free(buf);
    fclose(f);
    return st;
}

mica_status_t mica__npy_read(const char *path, mica__npy_t *out, char *err,
                             size_t errlen)
{
    FILE *f;

    memset(out, 0, sizeof(*out));
    f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen,
                    errno == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO,
                    "cannot open '%s': %s", path, strerror(errno));
    return read_stream(f, path, out, err, errlen);
}

mica_status_t mica__npy_read_fd(int fd, const char *path, mica__npy_t *out,
                                char *err, size_t errlen)
{
    FILE *f;

    memset(out, 0, sizeof(*out));
    f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return fail(err, errlen, MICA_ERR_IO, "cannot read '%s': %s", path,
                    strerror(errno));
    }
    return read_stream(f, path, out, err, errlen);
}

void mica__npy_free(mica__npy_t *npy)
{
    if (npy) {
        free(npy->data);
        npy->data = NULL;
    }
}

/* ---- writing ---------------------------------------------------------- */

mica_status_t mica__npy_write_stream(FILE *f, mica_dtype_t dtype,
                                     const mica_dims_t *dims,
                                     const void *data, int major, char *err,
                                     size_t errlen)
{
    char hdr[512];
    unsigned char pre[12];
    size_t n, pre_len, total, bytes;
    int64_t checked;
    int32_t i;
    const char *descr = mica__npy_descr(dtype);

    if (!descr)
        return fail(err, errlen, MICA_ERR_UNSUPPORTED,
                    "element type %d has no .npy form", (int)dtype);
    if (dims->nb_dims < 0 || dims->nb_dims > MICA_MAX_DIMS)
        return fail(err, errlen, MICA_ERR_INVALID, "bad rank %d",
                    (int)dims->nb_dims);
    if (mica_dims_bytes_checked(dims, dtype, &checked) != 0)
        return fail(err, errlen, MICA_ERR_INVALID, "shape %s is larger "
                    "than the largest tensor mica accepts (2^48 bytes)",
                    shape_str(dims, hdr, sizeof hdr));
    n = (size_t)snprintf(hdr, sizeof(hdr),
                         "{'descr': '%s', 'fortran_order': False, 'shape': (",
                         descr);
    for (i = 0; i < dims->nb_dims; i++)
        n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, "%s%lld",
                              i ? ", " : "", (long long)dims->d[i]);
    n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, "%s), }",
                          dims->nb_dims == 1 ? "," : "");
    if (major == 0)
        major = 1;
    pre_len = major == 1 ? 10 : 12;
    /* Pad with spaces and end with '\n' so the data is 64-byte aligned. */
    total = pre_len + n + 1;
    total = (total + 63) / 64 * 64;
    while (pre_len + n + 1 < total)
        hdr[n++] = ' ';
    hdr[n++] = '\n';
    memcpy(pre, magic, 6);
    pre[6] = (unsigned char)major;
    pre[7] = 0;
    pre[8] = (unsigned char)(n & 0xff);
    pre[9] = (unsigned char)(n >> 8 & 0xff);
    if (major != 1) {
        pre[10] = (unsigned char)(n >> 16 & 0xff);
        pre[11] = (unsigned char)(n >> 24 & 0xff);
    }
    bytes = (size_t)checked;
    if (fwrite(pre, 1, pre_len, f) != pre_len || fwrite(hdr, 1, n, f) != n
        || (bytes && fwrite(data, 1, bytes, f) != bytes))
        return fail(err, errlen, MICA_ERR_IO, "write failed: %s",
                    strerror(errno));
    return MICA_OK;
}

mica_status_t mica__npy_write_tmp(const char *path, mica_dtype_t dtype,
                                  const mica_dims_t *dims, const void *data,
                                  int major, char **tmp, char *err,
                                  size_t errlen)
{
    FILE *f;
    mica_status_t st;
    char why[256];

    f = mica__fcreate_tmp(path, tmp);
    if (!f)
        return fail(err, errlen, MICA_ERR_IO, "cannot write next to '%s': %s",
                    path, strerror(errno));
    st = mica__npy_write_stream(f, dtype, dims, data, major, why,
                                sizeof(why));
    if (fclose(f) && st == MICA_OK)
        st = fail(why, sizeof(why), MICA_ERR_IO, "%s", strerror(errno));
    if (st != MICA_OK) {
        remove(*tmp);
        free(*tmp);
        *tmp = NULL;
        fail(err, errlen, st, "cannot write '%s': %s", path, why);
    }
    return st;
}

mica_status_t mica__npy_write(const char *path, mica_dtype_t dtype,
                              const mica_dims_t *dims, const void *data,
                              int major, char *err, size_t errlen)
{
    char *tmp;
    mica_status_t st;

    st = mica__npy_write_tmp(path, dtype, dims, data, major, &tmp, err,
                             errlen);
    if (st != MICA_OK)
        return st;
    if (rename(tmp, path)) {
        st = fail(err, errlen, MICA_ERR_IO, "cannot rename '%s' to '%s': %s",
                  tmp, path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return st;
}
