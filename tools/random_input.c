/*
 * tools/random_input.c - seeded random values for network inputs, and
 * the --shapes list ("NAME:AxB,NAME2:C") that sizes them.
 *
 * Each input has a stream of its own: splitmix64 seeded from the seed
 * and the input's name (FNV-1a), so that an input's values depend on the
 * seed, its name, dtype and shape only, never on the other inputs or
 * their order.  The same seed gives the same values on every machine.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
    return h;
}

/* float32 to float16, rounding to nearest even (values here are in
 * [-1, 1]: no overflow; subnormals handled). */
static uint16_t to_half(float f)
{
    uint32_t x, sign, mant;
    int32_t exp;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    mant = x & 0x7fffffu;
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        uint32_t shift, half_mant, rest, halfway;
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        shift = (uint32_t)(14 - exp);
        half_mant = mant >> shift;
        rest = mant & ((1u << shift) - 1);
        halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half_mant & 1)))
            half_mant++;
        return (uint16_t)(sign | half_mant);
    }
    {
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
        uint32_t rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
            h++; /* may carry into the exponent, as it should */
        return (uint16_t)h;
    }
}

static uint16_t to_bfloat(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

int cli_random_fill(mica_dtype_t dtype, void *data, int64_t volume,
                    const char *name, uint64_t seed)
{
    uint64_t s = seed ^ name_hash(name);
    int64_t k;

    for (k = 0; k < volume; k++) {
        uint64_t r = splitmix64(&s);
        /* 24 random bits: a float32 in [-1, 1] exactly. */
        float f = (float)((double)(r >> 40) / 8388607.5 - 1.0);
        int v = (int)(r >> 62); /* 0 to 3 */
        switch (dtype) {
        case MICA_FLOAT32: ((float *)data)[k] = f; break;
        case MICA_FLOAT16: ((uint16_t *)data)[k] = to_half(f); break;
        case MICA_BFLOAT16: ((uint16_t *)data)[k] = to_bfloat(f); break;
        case MICA_INT8: ((int8_t *)data)[k] = (int8_t)v; break;
        case MICA_UINT8: ((uint8_t *)data)[k] = (uint8_t)v; break;
        case MICA_INT32: ((int32_t *)data)[k] = v; break;
        case MICA_INT64: ((int64_t *)data)[k] = v; break;
        case MICA_BOOL: ((uint8_t *)data)[k] = (uint8_t)(v & 1); break;
        default: return -1;
        }
    }
    return 0;
}

/* The item of `shapes` for `name`: [*item, *end), the name ending at the
 * last ':' of the item (names may hold ':', as "input:0" does). */
static int find_item(const char *shapes, const char *name, const char **item,
                     const char **colon, const char **end)
{
    const char *p = shapes;
    size_t n = strlen(name);

    while (p && *p) {
        const char *e = strchr(p, ','), *c = NULL, *q;
        if (!e)
            e = p + strlen(p);
        for (q = p; q < e; q++)
            if (*q == ':')
                c = q;
        if (c && (size_t)(c - p) == n && !strncmp(p, name, n)) {
            *item = p;
            *colon = c;
            *end = e;
            return 1;
        }
        p = *e ? e + 1 : NULL;
    }
    return 0;
}

int cli_shapes_lookup(const char *shapes, const char *name, int *found,
                      mica_dims_t *dims)
{
    const char *item, *colon, *end, *p;

    *found = 0;
    memset(dims, 0, sizeof *dims);
    if (!shapes || !find_item(shapes, name, &item, &colon, &end))
        return CLI_OK;
    for (p = colon + 1; p < end;) {
        char *stop;
        long long v;
        errno = 0;
        v = strtoll(p, &stop, 10);
        if (stop == p || errno || (stop < end && *stop != 'x') ||
            dims->nb_dims == MICA_MAX_DIMS)
            return cli_error("--shapes '%.*s': expected NAME:AxBxC (at most "
                             "%d sizes)", (int)(end - item), item,
                             MICA_MAX_DIMS);
        dims->d[dims->nb_dims++] = v;
        p = stop < end ? stop + 1 : end;
    }
    *found = 1;
    return CLI_OK;
}

int cli_shapes_check(const char *shapes, mica_engine_t *engine)
{
    const char *p = shapes;

    while (p && *p) {
        const char *e = strchr(p, ','), *c = NULL, *q;
        char name[256];
        if (!e)
            e = p + strlen(p);
        for (q = p; q < e; q++)
            if (*q == ':')
                c = q;
        if (!c || c == p || (size_t)(c - p) >= sizeof name)
            return cli_error("--shapes '%.*s': expected NAME:AxBxC",
                             (int)(e - p), p);
        memcpy(name, p, (size_t)(c - p));
        name[c - p] = '\0';
        {
            int32_t t = mica_engine_find_tensor(engine, name);
            mica_tensor_info_t info;
            memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            if (t < 0 || mica_engine_tensor(engine, t, &info) != MICA_OK ||
                !info.is_input)
                return cli_error("--shapes: the network has no input named "
                                 "'%s'", name);
        }
        p = *e ? e + 1 : NULL;
    }
    return CLI_OK;
}
