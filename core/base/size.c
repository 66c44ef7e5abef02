/*
 * core/base/size.c - checked size arithmetic, the one place where the
 * core turns a shape into a byte count (issue 15: a weights blob of shape
 * [2^32, 2^32, 4] wrapped to zero bytes, an input of shape [INT64_MAX, 2]
 * to a negative count).  Every volume, byte size, offset and product of
 * the core goes through mica_dims_bytes_checked (mica/types.h), through
 * mica__tensor_bytes below for a message naming the tensor, or through
 * mica__size_add / mica__size_mul.
 */
#include <config.h>

#include <stdio.h>

#include "mica_int.h"

const char *mica__dims_str(const mica_dims_t *d, char *buf, size_t len)
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

mica_status_t mica__declared_bytes(mica_context_t *ctx, const char *origin,
                                   const char *name, const mica_dims_t *dims,
                                   mica_dtype_t dtype)
{
    mica_dims_t fixed = *dims;
    char what[768], at[512];
    int64_t bytes;
    int32_t i;

    for (i = 0; i < fixed.nb_dims && i < MICA_MAX_DIMS; i++)
        if (fixed.d[i] == -1)
            fixed.d[i] = 1;
    snprintf(what, sizeof what, "%sinput '%s'", mica__at(origin, at, sizeof at),
             name);
    return mica__tensor_bytes(ctx, what, &fixed, dtype, &bytes);
}

mica_status_t mica__tensor_bytes(mica_context_t *ctx, const char *what,
                                 const mica_dims_t *dims, mica_dtype_t dtype,
                                 int64_t *bytes)
{
    char shape[256];
    int64_t v;
    int32_t i;

    if (mica_dims_bytes_checked(dims, dtype, bytes) == 0)
        return MICA_OK;
    if (dims->nb_dims < 0 || dims->nb_dims > MICA_MAX_DIMS)
        return mica__fail(ctx, MICA_ERR_INVALID, "%s: rank %d is not "
                          "0..%d", what, (int)dims->nb_dims, MICA_MAX_DIMS);
    mica__dims_str(dims, shape, sizeof shape);
    if (!mica_dtype_size(dtype))
        return mica__fail(ctx, MICA_ERR_INVALID, "%s: dtype %d is unknown",
                          what, (int)dtype);
    for (i = 0; i < dims->nb_dims; i++)
        if (dims->d[i] < 0)
            return mica__fail(ctx, MICA_ERR_INVALID, "%s: shape %s has a "
                              "negative dimension", what, shape);
    if (mica_dims_volume_checked(dims, &v) != 0) {
        for (i = 0; i < dims->nb_dims && dims->d[i]; i++)
            ;
        if (i < dims->nb_dims)
            return mica__fail(ctx, MICA_ERR_INVALID, "%s: shape %s: its "
                              "non-zero dimensions multiply past 2^63, "
                              "which not even an empty tensor may do",
                              what, shape);
        return mica__fail(ctx, MICA_ERR_INVALID, "%s: shape %s has more "
                          "than 2^63 elements", what, shape);
    }
    return mica__fail(ctx, MICA_ERR_INVALID, "%s: shape %s of %s holds %lld "
                      "elements of %zu bytes: more bytes than the largest "
                      "tensor mica accepts (2^48 bytes, 256 TiB)", what,
                      shape, mica_dtype_name(dtype), (long long)v,
                      mica_dtype_size(dtype));
}
