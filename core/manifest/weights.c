/*
 * core/manifest/weights.c - blobs of constant data in a manifest: inline
 * `data` (row-major values), a raw little-endian `file` from an `offset`,
 * or a NumPy `npy` file.  Paths are relative to the manifest.  The size
 * must match the shape.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest_int.h"
#include "files.h"
#include "npy.h"

static const char *const blob_keys[] = {"dtype", "shape", "data", "file",
                                        "offset", "npy", NULL};

/* float -> IEEE half, round to nearest even. */
static uint16_t to_half(float f)
{
    uint32_t x, sign, mant;
    int32_t exp;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    exp = (int32_t)((x >> 23) & 0xff);
    mant = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    exp = exp - 127 + 15;
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        uint32_t shift, half, r;
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        shift = (uint32_t)(14 - exp);
        r = mant >> shift;
        half = 1u << (shift - 1);
        if ((mant & ((half << 1) - 1)) > half
            || ((mant & ((half << 1) - 1)) == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t r = ((uint32_t)exp << 10) | (mant >> 13);
        uint32_t rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (r & 1)))
            r++; /* may carry into the exponent, up to infinity: right */
        return (uint16_t)(sign | r);
    }
}

/* float -> bfloat16, round to nearest even; NaN stays NaN. */
static uint16_t to_bfloat16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* Append the leaves of a (possibly nested) list to items. */
static mica_status_t flatten(mica__mf_t *mf, yaml_node_t *node,
                             yaml_node_t ***items, int64_t *n, int64_t *cap)
{
    int32_t i;
    if (node->type == YAML_SEQUENCE_NODE) {
        for (i = 0; i < mica__mf_seq_len(node); i++) {
            mica_status_t st = flatten(mf, mica__mf_seq_item(mf, node, i),
                                       items, n, cap);
            if (st != MICA_OK)
                return st;
        }
        return MICA_OK;
    }
    if (*n == *cap) {
        int64_t nc = *cap ? *cap * 2 : 64;
        yaml_node_t **p = realloc(*items, (size_t)nc * sizeof(*p));
        if (!p)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        *items = p;
        *cap = nc;
    }
    (*items)[(*n)++] = node;
    return MICA_OK;
}

/* One value of `data` into element i of buf. */
static mica_status_t put_value(mica__mf_t *mf, yaml_node_t *it,
                               const char *what, mica_dtype_t dtype,
                               void *buf, int64_t i)
{
    char d[64];
    double f;
    int64_t v;
    int b;

    switch (dtype) {
    case MICA_FLOAT32: case MICA_FLOAT16: case MICA_BFLOAT16:
    case MICA_FLOAT64:
        if (!mica__mf_to_float(it, &f))
            return mica__mf_fail(mf, it, "%s: value %lld is %s, expected a "
                                 "number", what, (long long)i,
                                 mica__mf_describe(it, d, sizeof(d)));
        if (dtype == MICA_FLOAT32)
            ((float *)buf)[i] = (float)f;
        else if (dtype == MICA_FLOAT64)
            ((double *)buf)[i] = f;
        else if (dtype == MICA_FLOAT16)
            ((uint16_t *)buf)[i] = to_half((float)f);
        else
            ((uint16_t *)buf)[i] = to_bfloat16((float)f);
        return MICA_OK;
    case MICA_BOOL:
        if (mica__mf_to_bool(it, &b)) {
            ((uint8_t *)buf)[i] = (uint8_t)b;
            return MICA_OK;
        }
        if (mica__mf_to_int(it, &v) && (v == 0 || v == 1)) {
            ((uint8_t *)buf)[i] = (uint8_t)v;
            return MICA_OK;
        }
        return mica__mf_fail(mf, it, "%s: value %lld is %s, expected true "
                             "or false", what, (long long)i,
                             mica__mf_describe(it, d, sizeof(d)));
    default:
        break;
    }
    if (!mica__mf_to_int(it, &v))
        return mica__mf_fail(mf, it, "%s: value %lld is %s, expected an "
                             "integer", what, (long long)i,
                             mica__mf_describe(it, d, sizeof(d)));
    switch (dtype) {
    case MICA_INT8:
        if (v < -128 || v > 127)
            goto range;
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case MICA_UINT8:
        if (v < 0 || v > 255)
            goto range;
        ((uint8_t *)buf)[i] = (uint8_t)v;
        break;
    case MICA_INT32:
        if (v < INT32_MIN || v > INT32_MAX)
            goto range;
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case MICA_INT16:
        if (v < INT16_MIN || v > INT16_MAX)
            goto range;
        ((int16_t *)buf)[i] = (int16_t)v;
        break;
    case MICA_UINT16:
        if (v < 0 || v > UINT16_MAX)
            goto range;
        ((uint16_t *)buf)[i] = (uint16_t)v;
        break;
    case MICA_UINT32:
        if (v < 0 || v > (int64_t)UINT32_MAX)
            goto range;
        ((uint32_t *)buf)[i] = (uint32_t)v;
        break;
    case MICA_UINT64:
        if (v < 0)
            goto range;
        ((uint64_t *)buf)[i] = (uint64_t)v;
        break;
    case MICA_INT64:
        ((int64_t *)buf)[i] = v;
        break;
    default:
        /* Every element written is one of the dtype's size: a type
         * without a case here (fp8, int4, ...) has no inline form
         * (issue 25: int16 values were written as int64, past the
         * buffer; found by make fuzz). */
        return mica__mf_fail(mf, it, "%s: %s values cannot be given "
                             "inline: give them as a file or an .npy", what,
                             mica_dtype_name(dtype));
    }
    return MICA_OK;
range:
    return mica__mf_fail(mf, it, "%s: value %lld (%lld) is out of range for "
                         "%s", what, (long long)i, (long long)v,
                         mica_dtype_name(dtype));
}

/* `data`: values (nested lists flattened), as many as the shape holds. */
/* w->data for `bytes` bytes, allocated once the source is known to hold
 * them (a shape alone never makes mica allocate). */
static mica_status_t alloc_data(mica__mf_t *mf, const char *what,
                                mica__mf_weights_t *w, size_t bytes)
{
    w->data = calloc(1, bytes ? bytes : 1);
    if (!w->data)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory "
                          "(%zu bytes)", what, bytes);
    return MICA_OK;
}

static mica_status_t inline_data(mica__mf_t *mf, yaml_node_t *data,
                                 const char *what, mica__mf_weights_t *w)
{
    yaml_node_t **items = NULL;
    int64_t n = 0, cap = 0, i;
    int64_t want = w->w.count;
    char ds[128];
    mica_status_t st;

    if (data->type == YAML_MAPPING_NODE)
        return mica__mf_fail(mf, data, "%s: data must be a list of values, "
                             "got a map", what);
    st = flatten(mf, data, &items, &n, &cap);
    if (st != MICA_OK)
        goto out;
    if (n != want) {
        st = mica__mf_fail(mf, data, "%s: %lld values for shape %s "
                           "(%lld expected)", what, (long long)n,
                           mica__mf_dims_str(&w->w.dims, ds, sizeof(ds)),
                           (long long)want);
        goto out;
    }
    st = alloc_data(mf, what, w, (size_t)n * mica_dtype_size(w->w.dtype));
    for (i = 0; i < n && st == MICA_OK; i++)
        st = put_value(mf, items[i], what, w->w.dtype, w->data, i);
out:
    free(items);
    return st;
}

/* `file` + `offset`: `bytes` raw little-endian bytes into w->data. */
static mica_status_t raw_file(mica__mf_t *mf, yaml_node_t *file,
                              yaml_node_t *offset, const char *what,
                              mica__mf_weights_t *w, size_t bytes)
{
    const char *rel;
    char *path = NULL;
    FILE *f = NULL;
    int64_t off = 0;
    long size;
    char d[64], ds[128], err[MICA_ERROR_MAX];
    mica_status_t st;
    int fd;

    st = mica__mf_string(mf, file, what, &rel);
    if (st != MICA_OK)
        return st;
    if (offset && (!mica__mf_to_int(offset, &off) || off < 0))
        return mica__mf_fail(mf, offset, "%s: offset must be an integer "
                             ">= 0, got %s", what,
                             mica__mf_describe(offset, d, sizeof(d)));
    if (mf->mem_file && !strcmp(rel, mf->mem_file)) {
        /* The bytes are in memory (an imported model's weights). */
        if ((uint64_t)off > mf->mem_size || mf->mem_size - (size_t)off < bytes)
            return mica__mf_fail(mf, file, "%s: '%s' has %zu bytes, %zu "
                                 "needed from offset %lld", what, rel,
                                 mf->mem_size, bytes, (long long)off);
        if ((st = alloc_data(mf, what, w, bytes)) != MICA_OK)
            return st;
        if (bytes)
            memcpy(w->data, (const char *)mf->mem_data + off, bytes);
        return MICA_OK;
    }
    /* The model's folder rule (core/base/files.h). */
    fd = mica__open_inside(mf->ctx, mf->dir, rel, &path, &st, err,
                           sizeof err);
    if (fd < 0)
        return mica__mf_fail_st(mf, st, file, "%s: %s", what, err);
    if (!(f = fdopen(fd, "rb"))) {
        close(fd);
        st = mica__mf_fail_st(mf, MICA_ERR_IO, file, "%s: cannot read "
                              "'%s': %s", what, path, strerror(errno));
        goto out;
    }
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0) {
        st = mica__mf_fail_st(mf, MICA_ERR_IO, file, "%s: cannot read "
                              "'%s': %s", what, path, strerror(errno));
        goto out;
    }
    if (off > size || (uint64_t)(size - off) < bytes) {
        st = mica__mf_fail(mf, file, "%s: '%s' has %lld bytes after offset "
                           "%lld, shape %s of %s needs %zu", what, path,
                           (long long)(off > size ? 0 : size - off),
                           (long long)off,
                           mica__mf_dims_str(&w->w.dims, ds, sizeof(ds)),
                           mica_dtype_name(w->w.dtype), bytes);
        goto out;
    }
    if ((st = alloc_data(mf, what, w, bytes)) != MICA_OK)
        goto out;
    if (fseek(f, (long)off, SEEK_SET)
        || (bytes && fread(w->data, 1, bytes, f) != bytes)) {
        st = mica__mf_fail_st(mf, MICA_ERR_IO, file, "%s: cannot read "
                              "'%s'", what, path);
        goto out;
    }
out:
    if (f)
        fclose(f);
    free(path);
    return st;
}

/* `npy`: a .npy file; dtype and shape, if given, must match it. */
static mica_status_t npy_file(mica__mf_t *mf, yaml_node_t *file,
                              yaml_node_t *dtype_node, yaml_node_t *shape_node,
                              const char *what, mica__mf_weights_t *w)
{
    const char *rel;
    char *path;
    char err[MICA_ERROR_MAX], a[128], b[128];
    mica__npy_t npy;
    int fd;
    mica_status_t st;
    mica_dtype_t dt;
    mica_dims_t dims;

    st = mica__mf_string(mf, file, what, &rel);
    if (st != MICA_OK)
        return st;
    fd = mica__open_inside(mf->ctx, mf->dir, rel, &path, &st, err,
                           sizeof err);
    if (fd < 0)
        return mica__mf_fail_st(mf, st, file, "%s: %s", what, err);
    st = mica__npy_read_fd(fd, path, &npy, err, sizeof(err));
    free(path);
    if (st != MICA_OK)
        return mica__mf_fail_st(mf, st, file, "%s: %s", what, err);
    if (dtype_node) {
        st = mica__mf_dtype(mf, dtype_node, what, &dt);
        if (st == MICA_OK && dt != npy.dtype)
            st = mica__mf_fail(mf, dtype_node, "%s: '%s' holds %s, the "
                               "manifest says %s", what, rel,
                               mica_dtype_name(npy.dtype),
                               mica_dtype_name(dt));
    }
    if (st == MICA_OK && shape_node) {
        st = mica__mf_dims(mf, shape_node, what, 0, &dims);
        if (st == MICA_OK
            && (dims.nb_dims != npy.dims.nb_dims
                || memcmp(dims.d, npy.dims.d,
                          sizeof(int64_t) * (size_t)dims.nb_dims)))
            st = mica__mf_fail(mf, shape_node, "%s: '%s' has shape %s, the "
                               "manifest says %s", what, rel,
                               mica__mf_dims_str(&npy.dims, a, sizeof(a)),
                               mica__mf_dims_str(&dims, b, sizeof(b)));
    }
    if (st != MICA_OK) {
        mica__npy_free(&npy);
        return st;
    }
    w->data = npy.data;
    w->w.dtype = npy.dtype;
    w->w.dims = npy.dims;
    w->w.count = mica_dims_volume(&npy.dims);
    return MICA_OK;
}

/* A new, zeroed weights entry of the manifest; NULL without memory. */
static mica__mf_weights_t *append(mica__mf_t *mf)
{
    mica_manifest_t *m = mf->m;
    mica__mf_weights_t *p = realloc(m->weights, (size_t)(m->nb_weights + 1)
                                                    * sizeof(*p));
    if (!p)
        return NULL;
    m->weights = p;
    p = &m->weights[m->nb_weights++];
    memset(p, 0, sizeof(*p));
    return p;
}

mica_status_t mica__mf_weights_blob(mica__mf_t *mf, yaml_node_t *node,
                                    const char *name, const char *what,
                                    const mica__mf_weights_t **out)
{
    yaml_node_t *dtype, *shape, *data, *file, *offset, *npy;
    mica__mf_weights_t *w;
    mica_status_t st;
    int64_t size;
    size_t bytes;
    int nsrc;

    st = mica__mf_check_map(mf, node, blob_keys, what);
    if (st != MICA_OK)
        return st;
    dtype = mica__mf_get(mf, node, "dtype", NULL);
    shape = mica__mf_get(mf, node, "shape", NULL);
    data = mica__mf_get(mf, node, "data", NULL);
    file = mica__mf_get(mf, node, "file", NULL);
    offset = mica__mf_get(mf, node, "offset", NULL);
    npy = mica__mf_get(mf, node, "npy", NULL);
    nsrc = !!data + !!file + !!npy;
    if (nsrc != 1)
        return mica__mf_fail(mf, node, "%s: give exactly one of data, file "
                             "or npy", what);
    if (offset && !file)
        return mica__mf_fail(mf, offset, "%s: offset goes with file", what);

    w = append(mf);
    if (!w)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    w->name = mica__strdup(name);
    w->origin = mica__mf_origin(mf, node);
    if ((name && !w->name) || !w->origin ||
        (w->name && mica__index_put(&mf->m->weight_index, w->name,
                                    mf->m->nb_weights - 1) != 0))
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");

    if (npy) {
        st = npy_file(mf, npy, dtype, shape, what, w);
    } else {
        if (!dtype)
            return mica__mf_fail(mf, node, "%s: missing key 'dtype'", what);
        if (!shape)
            return mica__mf_fail(mf, node, "%s: missing key 'shape'", what);
        st = mica__mf_dtype(mf, dtype, what, &w->w.dtype);
        if (st == MICA_OK)
            st = mica__mf_dims(mf, shape, what, 0, &w->w.dims);
        if (st != MICA_OK)
            return st;
        if (mica__tensor_bytes(mf->ctx, what, &w->w.dims, w->w.dtype,
                               &size) != MICA_OK)
            return mica__mf_fail(mf, shape, "%s",
                                 mica_context_error(mf->ctx));
        w->w.count = mica_dims_volume(&w->w.dims);
        bytes = (size_t)size;
        if (data)
            st = inline_data(mf, data, what, w);
        else
            st = raw_file(mf, file, offset, what, w, bytes);
    }
    if (st != MICA_OK)
        return st;
    w->w.values = w->data;
    if (out)
        *out = w;
    return MICA_OK;
}

mica_status_t mica__mf_weights(mica__mf_t *mf, yaml_node_t *node)
{
    yaml_node_pair_t *p;
    mica_status_t st;

    st = mica__mf_check_map(mf, node, NULL, "weights");
    if (st != MICA_OK)
        return st;
    for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        const char *name = mica__mf_scalar(mica__mf_node(mf, p->key));
        char *what = mica__asprintf("weights '%s'", name);
        if (!what)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        st = mica__mf_weights_blob(mf, mica__mf_node(mf, p->value), name,
                                   what, NULL);
        free(what);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

const mica__mf_weights_t *mica__mf_weights_find(const mica_manifest_t *m,
                                                const char *name)
{
    int32_t i = mica__index_get(&m->weight_index, name);
    return i >= 0 ? &m->weights[i] : NULL;
}
