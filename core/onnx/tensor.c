/*
 * core/onnx/tensor.c - the values of a TensorProto: raw_data (used in
 * place), the typed repeated fields (packed into the element type's
 * width), or an external data file beside the model (mapped once, used in
 * place: a model whose data files hold more than 2 GB loads, the
 * protobuf itself staying small).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "onnx_int.h"
#include "mica/kit_minifloat.h"

size_t mica__ox_type_size(int32_t t)
{
    switch (t) {
    case OX_FLOAT: case OX_INT32: case OX_UINT32: return 4;
    case OX_UINT8: case OX_INT8: case OX_BOOL: return 1;
    case OX_UINT16: case OX_INT16: case OX_FLOAT16: case OX_BFLOAT16:
        return 2;
    case OX_INT64: case OX_DOUBLE: case OX_UINT64: return 8;
    case OX_FLOAT8E4M3FN: case OX_FLOAT8E4M3FNUZ: case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ: case OX_FLOAT8E8M0:
    case OX_UINT4: case OX_INT4: case OX_FLOAT4E2M1:
        return 1; /* the 4-bit types once unpacked */
    default: return 0;
    }
}

const char *mica__ox_type_name(int32_t t)
{
    static const char *const names[] = {
        "undefined", "float", "uint8", "int8", "uint16", "int16", "int32",
        "int64", "string", "bool", "float16", "double", "uint32", "uint64",
        "complex64", "complex128", "bfloat16", "float8e4m3fn",
        "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
        "float4e2m1", "float8e8m0",
    };
    return t >= 0 && t <= OX_FLOAT8E8M0 ? names[t] : "an unknown type";
}

int32_t mica__ox_weight_type(int32_t t)
{
    switch (t) {
    case OX_DOUBLE: return OX_FLOAT;
    case OX_INT16: case OX_UINT16: case OX_UINT32: case OX_UINT64:
        return OX_INT32;
    default: return t;
    }
}

int mica__ox_type_mica(int32_t t, mica_dtype_t *out)
{
    switch (t) {
    case OX_FLOAT: *out = MICA_FLOAT32; return 0;
    case OX_FLOAT16: *out = MICA_FLOAT16; return 0;
    case OX_BFLOAT16: *out = MICA_BFLOAT16; return 0;
    case OX_INT32: case OX_INT64: *out = MICA_INT32; return 0;
    case OX_INT8: *out = MICA_INT8; return 0;
    case OX_UINT8: *out = MICA_UINT8; return 0;
    case OX_BOOL: *out = MICA_BOOL; return 0;
    case OX_DOUBLE: *out = MICA_FLOAT64; return 0;
    case OX_UINT16: *out = MICA_UINT16; return 0;
    case OX_INT16: *out = MICA_INT16; return 0;
    case OX_UINT32: *out = MICA_UINT32; return 0;
    case OX_UINT64: *out = MICA_UINT64; return 0;
    case OX_FLOAT8E4M3FN: *out = MICA_FP8E4M3; return 0;
    case OX_FLOAT8E4M3FNUZ: *out = MICA_FP8E4M3FNUZ; return 0;
    case OX_FLOAT8E5M2: *out = MICA_FP8E5M2; return 0;
    case OX_FLOAT8E5M2FNUZ: *out = MICA_FP8E5M2FNUZ; return 0;
    case OX_UINT4: *out = MICA_UINT4; return 0;
    case OX_INT4: *out = MICA_INT4; return 0;
    case OX_FLOAT4E2M1: *out = MICA_FP4E2M1; return 0;
    case OX_FLOAT8E8M0: *out = MICA_FP8E8M0; return 0;
    default: return -1;
    }
}

static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f,
             f = h & 0x3ff, u;
    float out;
    if (e == 0x1f) {
        u = s | 0x7f800000u | (f << 13);
    } else if (e) {
        u = s | ((e + 112) << 23) | (f << 13);
    } else if (f) {
        /* subnormal: normalize */
        e = 113;
        while (!(f & 0x400)) {
            f <<= 1;
            e--;
        }
        u = s | (e << 23) | ((f & 0x3ff) << 13);
    } else {
        u = s;
    }
    memcpy(&out, &u, 4);
    return out;
}

int64_t mica__ox_dims_count(const int64_t *dims, int32_t rank)
{
    mica_dims_t md;
    int64_t v;
    int32_t i;
    if (rank < 0 || rank > MICA_MAX_DIMS)
        return -1;
    md.nb_dims = rank;
    for (i = 0; i < rank; i++)
        md.d[i] = dims[i];
    return mica_dims_volume_checked(&md, &v) == 0 ? v : -1;
}

int mica__ox_data_dims(mica__ox_data_t *d, int32_t rank, const int64_t *dims)
{
    int64_t count = mica__ox_dims_count(dims, rank);
    int32_t i;
    if (count < 0)
        return -1;
    memset(&d->dims, 0, sizeof d->dims);
    d->dims.nb_dims = rank;
    for (i = 0; i < rank; i++)
        d->dims.d[i] = dims[i];
    d->count = count;
    return 0;
}

/* Element i's bytes; NULL outside [0, count) (no fold reads there: the
 * invariant of onnx_int.h; this keeps a slip from reading memory). */
static const uint8_t *element(const mica__ox_data_t *d, int64_t i)
{
    if (i < 0 || i >= d->count || !d->raw)
        return NULL;
    return (const uint8_t *)d->raw +
           (size_t)(d->splat ? 0 : i) * mica__ox_type_size(d->type);
}

int64_t mica__ox_data_int(const mica__ox_data_t *d, int64_t i)
{
    const uint8_t *p = element(d, i);
    if (!p)
        return 0;
    switch (d->type) {
    case OX_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    case OX_UINT64: { uint64_t v; memcpy(&v, p, 8);
                      return v > INT64_MAX ? INT64_MAX : (int64_t)v; }
    case OX_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case OX_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case OX_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case OX_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case OX_INT8: return (int8_t)*p;
    case OX_UINT8: return *p;
    case OX_BOOL: return *p != 0;
    default: {
        double f = mica__ox_data_f(d, i);
        if (!(f == f))
            return 0;
        if (f >= 9.2e18)
            return INT64_MAX;
        if (f <= -9.2e18)
            return INT64_MIN;
        return (int64_t)f;
    }
    }
}

double mica__ox_data_f(const mica__ox_data_t *d, int64_t i)
{
    const uint8_t *p = element(d, i);
    if (!p)
        return 0;
    switch (d->type) {
    case OX_FLOAT: { float v; memcpy(&v, p, 4); return v; }
    case OX_DOUBLE: { double v; memcpy(&v, p, 8); return v; }
    case OX_FLOAT16: { uint16_t h; memcpy(&h, p, 2);
                       return half_to_float(h); }
    case OX_BFLOAT16: { uint16_t h; uint32_t u; float v; memcpy(&h, p, 2);
                        u = (uint32_t)h << 16; memcpy(&v, &u, 4); return v; }
    case OX_FLOAT8E4M3FN: return mica_kit_mf_to_double(*p, 4, 3, 7,
                                                       MICA_KIT_MF_FN);
    case OX_FLOAT8E4M3FNUZ: return mica_kit_mf_to_double(*p, 4, 3, 8,
                                                         MICA_KIT_MF_FNUZ);
    case OX_FLOAT8E5M2: return mica_kit_mf_to_double(*p, 5, 2, 15,
                                                     MICA_KIT_MF_IEEE);
    case OX_FLOAT8E5M2FNUZ: return mica_kit_mf_to_double(*p, 5, 2, 16,
                                                         MICA_KIT_MF_FNUZ);
    case OX_FLOAT4E2M1: return mica_kit_mf_to_double(*p & 0xf, 2, 1, 1,
                                                     MICA_KIT_MF_NONE);
    case OX_FLOAT8E8M0: return mica_kit_e8m0_to_double(*p);
    case OX_INT4: return (int8_t)*p;
    case OX_UINT4: return *p;
    default:
        return (double)mica__ox_data_int(d, i);
    }
}

/* The external data of t: "location", "offset", "length" entries. */
static mica_status_t external(mica__ox_model_t *m, const Onnx__TensorProto *t,
                              const char *what, size_t bytes,
                              mica__ox_data_t *out)
{
    const char *loc = NULL;
    int64_t off = 0, len = -1;
    size_t i;
    char *path;
    int32_t k;
    mica__ox_file_t *f = NULL;
    mica_status_t st;
    char err[MICA_ERROR_MAX];
    int fd;

    for (i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        const char *key = e->key ? e->key : "", *val = e->value ? e->value
                                                                 : "";
        char *end;
        if (!strcmp(key, "location")) {
            loc = val;
        } else if (!strcmp(key, "offset") || !strcmp(key, "length")) {
            long long v = strtoll(val, &end, 10);
            if (!*val || *end || v < 0)
                return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: "
                                  "external data %s '%s' is not a number "
                                  ">= 0", m->path, what, key, val);
            if (key[0] == 'o')
                off = v;
            else
                len = v;
        }
    }
    if (!loc || !*loc)
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: external data "
                          "without a location", m->path, what);
    if (loc[0] == '/' || !strncmp(loc, "../", 3) || strstr(loc, "/../")
        || !strcmp(loc, ".."))
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: external data "
                          "location '%s' leaves the model's folder", m->path,
                          what, loc);
    if (len >= 0 && (uint64_t)len != bytes)
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: external data "
                          "length %lld, but its shape and type need %zu "
                          "bytes", m->path, what, (long long)len, bytes);
    /* The model's folder rule (core/base/files.h): inside it after
     * following links, a regular file; one map per real path. */
    fd = mica__open_inside(m->ctx, m->dir, loc, &path, &st, err, sizeof err);
    if (fd < 0)
        return mica__fail(m->ctx, st, "%s: %s: external data: %s", m->path,
                          what, err);
    for (k = 0; k < m->nb_ext && !f; k++)
        if (!strcmp(m->ext[k].path, path))
            f = &m->ext[k];
    if (f) {
        close(fd);
    } else {
        mica__ox_file_t *grown = realloc(m->ext, sizeof *grown *
                                         (size_t)(m->nb_ext + 1));
        char w[512];
        if (!grown) {
            close(fd);
            free(path);
            return mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
        }
        m->ext = grown;
        snprintf(w, sizeof w, "%s: %s: external data", m->path, what);
        st = mica__ox_file_map_fd(m->ctx, fd, path, w, &m->ext[m->nb_ext]);
        if (st != MICA_OK) {
            free(path);
            return st;
        }
        f = &m->ext[m->nb_ext++];
    }
    free(path);
    if ((uint64_t)off > f->size || f->size - (size_t)off < bytes)
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: external data "
                          "file '%s' has %zu bytes, the tensor needs %zu "
                          "from offset %lld", m->path, what, loc, f->size,
                          bytes, (long long)off);
    out->raw = f->base + off;
    return MICA_OK;
}

/* Pack the typed field values of t into the element type's width. */
static mica_status_t typed(mica__ox_model_t *m, mica__ox_arena_t *arena,
                           const Onnx__TensorProto *t, const char *what,
                           mica__ox_data_t *out)
{
    size_t es = mica__ox_type_size(out->type), i, have,
           n = MICA__OX_PACKED4(out->type) ? ((size_t)out->count + 1) / 2
                                           : (size_t)out->count;
    uint8_t *buf;

    switch (out->type) {
    case OX_FLOAT:
        have = t->n_float_data;
        if (have == n)
            out->raw = t->float_data;
        break;
    case OX_INT64:
        have = t->n_int64_data;
        if (have == n)
            out->raw = t->int64_data;
        break;
    case OX_DOUBLE:
        have = t->n_double_data;
        if (have == n)
            out->raw = t->double_data;
        break;
    case OX_UINT64:
        have = t->n_uint64_data;
        if (have == n)
            out->raw = t->uint64_data;
        break;
    case OX_UINT32:
        have = t->n_uint64_data;
        break;
    default:
        have = t->n_int32_data;
        break;
    }
    if (have != n)
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: %zu values "
                          "for a %s tensor of %zu elements", m->path, what,
                          have, mica__ox_type_name(out->type), n);
    if (out->raw || !n)
        return MICA_OK;
    buf = mica__ox_arena_alloc(arena, n * es);
    if (!buf)
        return mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        if (out->type == OX_UINT32) {
            uint32_t v = (uint32_t)t->uint64_data[i];
            memcpy(buf + 4 * i, &v, 4);
        } else {
            int32_t v = t->int32_data[i];
            if (es == 1)
                buf[i] = (uint8_t)v;
            else if (es == 2) {
                uint16_t h = (uint16_t)v;
                memcpy(buf + 2 * i, &h, 2);
            } else
                memcpy(buf + 4 * i, &v, 4);
        }
    }
    out->raw = buf;
    return MICA_OK;
}

/* The 4-bit elements of out (two to a byte, the first in the low bits)
 * one to a byte (int4 sign-extended), in the arena. */
static mica_status_t unpack4(mica__ox_model_t *m, mica__ox_arena_t *arena,
                             mica__ox_data_t *out)
{
    const uint8_t *src = out->raw;
    uint8_t *buf = mica__ox_arena_alloc(arena, (size_t)out->count);
    int64_t i;
    if (!buf)
        return mica__fail(m->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < out->count; i++) {
        uint8_t b = (uint8_t)((src[i / 2] >> (4 * (i & 1))) & 0xf);
        buf[i] = out->type == OX_INT4 ? (uint8_t)((b ^ 8) - 8) : b;
    }
    out->raw = buf;
    return MICA_OK;
}

mica_status_t mica__ox_tensor_data(mica__ox_model_t *m,
                                   mica__ox_arena_t *arena,
                                   const Onnx__TensorProto *t,
                                   const char *what, mica__ox_data_t *out)
{
    size_t i, es, bytes;
    int64_t count = 1;
    mica_status_t st;

    memset(out, 0, sizeof *out);
    out->type = t->has_data_type ? t->data_type : OX_UNDEFINED;
    es = mica__ox_type_size(out->type);
    if (!es)
        return mica__fail(m->ctx, MICA_ERR_UNSUPPORTED, "%s: %s: tensors of"
                          " type %s are not supported", m->path, what,
                          mica__ox_type_name(out->type));
    if (t->segment)
        return mica__fail(m->ctx, MICA_ERR_UNSUPPORTED, "%s: %s: segmented "
                          "tensors are not supported", m->path, what);
    if (t->n_dims > MICA_MAX_DIMS)
        return mica__fail(m->ctx, MICA_ERR_UNSUPPORTED, "%s: %s has %zu "
                          "dimensions; mica takes at most %d", m->path, what,
                          t->n_dims, MICA_MAX_DIMS);
    for (i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && count > INT64_MAX / 16 /
                               t->dims[i]))
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: dimension "
                              "%zu is %lld", m->path, what, i,
                              (long long)t->dims[i]);
        count *= t->dims[i];
    }
    if (mica__ox_data_dims(out, (int32_t)t->n_dims, t->dims) != 0)
        return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: its dimensions "
                          "multiply past 2^63", m->path, what);
    bytes = MICA__OX_PACKED4(out->type) ? ((size_t)out->count + 1) / 2
                                        : (size_t)out->count * es;
    if (t->has_data_location
        && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        st = out->count ? external(m, t, what, bytes, out) : MICA_OK;
    else if (t->has_raw_data) {
        if (t->raw_data.len != bytes)
            return mica__fail(m->ctx, MICA_ERR_INVALID, "%s: %s: raw_data "
                              "has %zu bytes, its shape and type need %zu",
                              m->path, what, t->raw_data.len, bytes);
        out->raw = t->raw_data.data;
        st = MICA_OK;
    } else
        st = typed(m, arena, t, what, out);
    if (st == MICA_OK && MICA__OX_PACKED4(out->type) && out->count)
        st = unpack4(m, arena, out);
    return st;
}
