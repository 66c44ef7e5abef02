/*
 * modules/common/modkit.c - the shared module kit (see modkit.h).
 */
#include "modkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const mica_host_t *mica__mod_host;

mica_status_t mica__mod_init(const mica_host_t *host, mica_error_t *err)
{
    if (!host || host->abi_version < 1 ||
        host->struct_size < offsetof(mica_host_t, status_name) +
                                sizeof(host->status_name)) {
        if (host && host->set_error)
            host->set_error(err, "host ABI version %u is older than 1",
                            (unsigned)host->abi_version);
        return MICA_ERR_ABI;
    }
    mica__mod_host = host;
    return MICA_OK;
}

/* ---- fields ----------------------------------------------------------- */

int64_t mica__mod_int(const mica_fields_t *f, const char *name, int64_t dflt)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->count < 1)
        return dflt;
    if (x->type == MICA_FIELD_FLOAT)
        return (int64_t)((const double *)x->data)[0];
    if (x->type == MICA_FIELD_STRING || x->type == MICA_FIELD_WEIGHTS)
        return dflt;
    return ((const int64_t *)x->data)[0];
}

double mica__mod_float(const mica_fields_t *f, const char *name, double dflt)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->count < 1)
        return dflt;
    if (x->type == MICA_FIELD_FLOAT)
        return ((const double *)x->data)[0];
    if (x->type == MICA_FIELD_STRING || x->type == MICA_FIELD_WEIGHTS)
        return dflt;
    return (double)((const int64_t *)x->data)[0];
}

int32_t mica__mod_count(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    return x ? x->count : -1;
}

const int64_t *mica__mod_ints(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type == MICA_FIELD_FLOAT || x->type == MICA_FIELD_STRING ||
        x->type == MICA_FIELD_WEIGHTS)
        return NULL;
    return (const int64_t *)x->data;
}

const mica_weights_t *mica__mod_weights(const mica_fields_t *f,
                                        const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type != MICA_FIELD_WEIGHTS || x->count < 1)
        return NULL;
    return (const mica_weights_t *)x->data;
}

const char *mica__mod_string(const mica_fields_t *f, const char *name)
{
    const mica_field_t *x = mica_fields_find(f, name);
    if (!x || x->type != MICA_FIELD_STRING || x->count < 1)
        return NULL;
    return ((const char *const *)x->data)[0];
}

/* ---- float16 ---------------------------------------------------------- */

float mica__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float out;

    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: renormalize */
        exp = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
    memcpy(&out, &bits, sizeof out);
    return out;
}

uint16_t mica__float_to_half(float f)
{
    uint32_t x, sign, man;
    int32_t exp;

    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000;
    exp = (int32_t)((x >> 23) & 0xff);
    man = x & 0x7fffff;
    if (exp == 0xff) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    exp = exp - 127 + 15;
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) { /* subnormal half or zero */
        uint32_t m, shift, half, rem, r;
        if (exp < -10)
            return (uint16_t)sign;
        m = man | 0x800000;
        shift = (uint32_t)(14 - exp);
        r = m >> shift;
        rem = m & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t r = ((uint32_t)exp << 10) | (man >> 13);
        uint32_t rem = man & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
            r++; /* may carry into the exponent: still correct */
        return (uint16_t)(sign | r);
    }
}

int32_t mica__mod_linear(const mica_tensor_desc_t *io, int32_t pos)
{
    return io[pos].format == MICA_FORMAT_LINEAR;
}

int mica__mod_any_type(mica_dtype_t t)
{
    switch (t) {
    case MICA_FLOAT32: case MICA_FLOAT16: case MICA_BFLOAT16: case MICA_INT8:
    case MICA_UINT8: case MICA_INT32: case MICA_INT64: case MICA_BOOL:
        return 1;
    default:
        return 0;
    }
}

int32_t mica__mod_one_output(const mica_layer_t *layer)
{
    (void)layer;
    return 1;
}

int32_t mica__mod_no_outputs(const mica_layer_t *layer)
{
    (void)layer;
    return 0;
}

mica_status_t mica__mod_boundary_enqueue(mica_layer_t *layer,
                                         const mica_tensor_desc_t *in,
                                         int32_t nb_in,
                                         const mica_tensor_desc_t *out,
                                         int32_t nb_out,
                                         const void *const *inputs,
                                         void *const *outputs,
                                         void *workspace, void *stream,
                                         mica_error_t *err)
{
    (void)layer; (void)in; (void)nb_in; (void)out; (void)nb_out;
    (void)inputs; (void)outputs; (void)workspace; (void)stream;
    return MOD_FAIL(err, "boundary layer: run by the core through "
                    "enqueue_boundary");
}
