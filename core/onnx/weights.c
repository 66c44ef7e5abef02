/*
 * core/onnx/weights.c - weights entries: each at a 64-byte aligned offset
 * of the weights file, its bytes where the model has them (the decoded
 * protobuf, or an external data file's mapping) or, converted (int64 to
 * int32 with a range check, float to float16...), in the import's arena;
 * a splat (one value repeated) keeps one element; api.c writes the file
 * from them, or assembles it in memory.  Small
 * integer data is written inline in the YAML.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

/* The offset of `bytes` more at a 64-byte boundary of the weights file
 * (nothing is copied: each entry keeps a pointer to its bytes). */
static int64_t file_reserve(mica__ox_t *x, int64_t bytes)
{
    int64_t off = (x->blob_size + 63) & ~(int64_t)63;
    x->blob_size = off + bytes;
    return off;
}

/* float32 to float16 bits, rounding to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t u, s, e, m;
    memcpy(&u, &f, 4);
    s = (u >> 16) & 0x8000;
    e = (u >> 23) & 0xff;
    m = u & 0x7fffff;
    if (e == 0xff)
        return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
    if (e > 142)
        return (uint16_t)(s | 0x7c00);
    if (e < 113) {
        uint32_t shift;
        if (e < 102)
            return (uint16_t)s;
        m |= 0x800000;
        shift = 126 - e;
        {
            uint32_t half = m >> shift, rem = m & ((1u << shift) - 1),
                     mid = 1u << (shift - 1);
            if (rem > mid || (rem == mid && (half & 1)))
                half++;
            return (uint16_t)(s | half);
        }
    }
    {
        uint32_t h = ((e - 112) << 10) | (m >> 13), rem = m & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
            h++;
        return (uint16_t)(s | h);
    }
}

/* Convert element i of d into `dtype` at p; -1 if an integer overflows. */
static int convert(const mica__ox_data_t *d, int64_t i, mica_dtype_t dtype,
                   uint8_t *p)
{
    switch (dtype) {
    case MICA_FLOAT32: {
        float f = (float)mica__ox_data_f(d, i);
        memcpy(p, &f, 4);
        return 0;
    }
    case MICA_INT32: {
        int64_t v = mica__ox_data_int(d, i);
        int32_t w = (int32_t)v;
        memcpy(p, &w, 4);
        return v < INT32_MIN || v > INT32_MAX ? -1 : 0;
    }
    case MICA_INT8: {
        int64_t v = mica__ox_data_int(d, i);
        *p = (uint8_t)(int8_t)v;
        return v < -128 || v > 127 ? -1 : 0;
    }
    case MICA_UINT8: {
        int64_t v = mica__ox_data_int(d, i);
        *p = (uint8_t)v;
        return v < 0 || v > 255 ? -1 : 0;
    }
    case MICA_INT16: case MICA_UINT16: case MICA_UINT32: {
        int64_t v = mica__ox_data_int(d, i);
        int64_t lo = dtype == MICA_INT16 ? -32768 : 0;
        int64_t hi = dtype == MICA_INT16    ? 32767
                     : dtype == MICA_UINT16 ? 65535 : 4294967295LL;
        if (dtype == MICA_UINT32) {
            uint32_t w = (uint32_t)v;
            memcpy(p, &w, 4);
        } else {
            uint16_t w = (uint16_t)v;
            memcpy(p, &w, 2);
        }
        return v < lo || v > hi ? -1 : 0;
    }
    case MICA_INT64: case MICA_UINT64: {
        /* uint64 past 2^63 held as int64's bits */
        int64_t v = mica__ox_data_int(d, i);
        memcpy(p, &v, 8);
        return 0;
    }
    case MICA_FLOAT64: {
        double f = mica__ox_data_f(d, i);
        memcpy(p, &f, 8);
        return 0;
    }
    case MICA_BOOL:
        *p = mica__ox_data_f(d, i) != 0;
        return 0;
    case MICA_FLOAT16: {
        uint16_t h = float_to_half((float)mica__ox_data_f(d, i));
        memcpy(p, &h, 2);
        return 0;
    }
    case MICA_BFLOAT16: {
        float f = (float)mica__ox_data_f(d, i);
        uint32_t u;
        uint16_t h;
        memcpy(&u, &f, 4);
        h = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        memcpy(p, &h, 2);
        return 0;
    }
    default:
        return -1;
    }
}

/* Whether d's bytes are already dtype's (a plain copy does). */
static int same_bytes(int32_t type, mica_dtype_t dtype)
{
    mica_dtype_t m;
    return mica__ox_type_mica(type, &m) == 0 && m == dtype &&
           type != OX_INT64;
}

const char *mica__ox_weights_add(mica__ox_t *x, const mica__ox_node_t *n,
                                 const char *base, const mica__ox_data_t *d,
                                 mica_dtype_t dtype, const mica_dims_t *dims,
                                 const char *what)
{
    mica__ox_weights_t *w;
    size_t es = mica_dtype_size(dtype);
    int64_t i, off, bytes = d->count * (int64_t)es;
    uint8_t *dst;

    if (x->st != MICA_OK)
        return NULL;
    if (mica_dims_volume(dims) != d->count || d->count < 0) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "%s: %lld values for "
                           "weights of other dimensions", what,
                           (long long)d->count);
        return NULL;
    }
    if (x->nb_weights == x->cap_weights) {
        int32_t cap = x->cap_weights ? 2 * x->cap_weights : 64;
        mica__ox_weights_t *g = realloc(x->weights, sizeof *g * (size_t)cap);
        if (!g) {
            x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
            return NULL;
        }
        x->weights = g;
        x->cap_weights = cap;
    }
    w = &x->weights[x->nb_weights];
    memset(w, 0, sizeof *w);
    w->dtype = dtype;
    w->dims = *dims;
    w->bytes = bytes;
    w->inline_ = (dtype == MICA_INT32 || dtype == MICA_BOOL) &&
                 d->count <= 16;
    off = w->inline_ ? 0 : file_reserve(x, bytes);
    w->splat = d->splat && !w->inline_ && d->count > 0;
    if (w->splat) {
        /* One element, repeated where the bytes are written. */
        if (!(dst = mica__ox_alloc(x, es)))
            return NULL;
        w->data = dst;
        if (convert(d, 0, dtype, dst) != 0) {
            mica__ox_fail(x, n, MICA_ERR_UNSUPPORTED, "%s: value %lld does "
                          "not fit %s (mica narrows int64 to int32)", what,
                          (long long)mica__ox_data_int(d, 0),
                          mica_dtype_name(dtype));
            return NULL;
        }
    } else if (same_bytes(d->type, dtype) && !d->splat) {
        /* The model's own bytes (in the decoded protobuf or a mapped
         * external data file), used in place until they are written. */
        w->data = d->raw;
    } else {
        dst = mica__ox_alloc(x, (size_t)(bytes ? bytes : 1));
        if (!dst)
            return NULL;
        w->data = dst;
        for (i = 0; i < d->count; i++)
            if (convert(d, i, dtype, dst + i * (int64_t)es) != 0) {
                mica__ox_fail(x, n, MICA_ERR_UNSUPPORTED, "%s: value %lld "
                              "at index %lld does not fit %s (mica narrows "
                              "int64 to int32)", what,
                              (long long)mica__ox_data_int(d, i),
                              (long long)i, mica_dtype_name(dtype));
                return NULL;
            }
    }
    if (w->inline_)
        w->inline_data = w->data;
    w->offset = off;
    w->name = mica__ox_unique(x, &x->wnames, base);
    if (!w->name)
        return NULL;
    x->nb_weights++;
    return w->name;
}

const char *mica__ox_value_weights(mica__ox_t *x, const mica__ox_node_t *n,
                                   mica__ox_value_t *v)
{
    char what[256];
    if (x->st != MICA_OK)
        return NULL;
    if (v->weights)
        return v->weights;
    snprintf(what, sizeof what, "constant '%s'", v->name);
    v->weights = mica__ox_weights_add(x, n, v->name, v->cst, v->dtype,
                                      &v->cst->dims, what);
    return v->weights;
}

