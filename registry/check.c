/*
 * registry/check.c - what a creator must be before it is registered, and
 * what an instance must be before the core uses it.
 *
 * A creator: readable memory (registry/peek.c: every pointer followed
 * is copied first, so that a descriptor or schema claiming more than it
 * holds is refused instead of read out of bounds), a struct size its ABI
 * version allows, a type name, version >= 1, an implementation name,
 * devices the device table knows, a known role, a create function, and a
 * sane field schema (readable, unique names, valid types and counts,
 * enums with values, defaults of the declared length).
 *
 * An instance (what create, deserialize or clone returned): ops set,
 * their struct size at least version 1's, every required callback set
 * (mica/layer.h), enqueue_boundary for a boundary layer.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "device.h"

/* The most fields and enum values the host reads of one creator. */
#define MAX_FIELDS 1024
#define MAX_ENUM 4096
#define MAX_NAME 256

/* Why a string of the module is unusable, or NULL; "what" names it. */
static const char *check_str(const char *s, size_t max, const char *what,
                             char *why, size_t len)
{
    char *buf = malloc(max);
    int bad = !buf || mica__peek_str(s, buf, max) != 0;
    free(buf);
    if (!bad)
        return NULL;
    snprintf(why, len, "%s is not a readable string of at most %zu bytes",
             what, max - 1);
    return why;
}

/* Bytes of one default value of a field of `type`. */
static size_t value_size(mica_field_type_t type)
{
    switch (type) {
    case MICA_FIELD_FLOAT: return sizeof(double);
    case MICA_FIELD_STRING: return sizeof(const char *);
    case MICA_FIELD_WEIGHTS: return sizeof(mica_weights_t);
    default: return sizeof(int64_t);
    }
}

/* 0 and their count in *count, or -1 with why set: the enum values of
 * f (a copy). */
static int check_enum(const mica_field_schema_t *f, int32_t *count,
                      char *why, size_t len)
{
    const char *v;
    char what[MAX_NAME + 64];
    int32_t n;

    for (n = 0; f->enum_values; n++) {
        if (n == MAX_ENUM) {
            snprintf(why, len, "field '%s': more than %d enum values "
                     "(or no NULL after them)", f->name, MAX_ENUM);
            return -1;
        }
        if (mica__peek(&v, &f->enum_values[n], sizeof v) != 0) {
            snprintf(why, len, "field '%s': enum value %d is not readable "
                     "(the list must end with NULL)", f->name, (int)n);
            return -1;
        }
        if (!v)
            break;
        snprintf(what, sizeof what, "field '%s': enum value %d", f->name,
                 (int)n);
        if (check_str(v, MAX_NAME, what, why, len))
            return -1;
    }
    *count = n;
    return 0;
}

/* Why field schema entry f (a copy) is unusable, or NULL. */
static const char *check_field(const mica_field_schema_t *f, char *why,
                               size_t len)
{
    int32_t nb_enum = 0, i;
    char what[MAX_NAME + 64];

    if (f->type < MICA_FIELD_INT || f->type > MICA_FIELD_WEIGHTS) {
        snprintf(why, len, "field '%s': unknown field type %d", f->name,
                 (int)f->type);
        return why;
    }
    if (f->count != MICA_COUNT_ANY && f->count < 1) {
        snprintf(why, len,
                 "field '%s': count %d is not valid "
                 "(1, a list length > 1, or MICA_COUNT_ANY)",
                 f->name, (int)f->count);
        return why;
    }
    snprintf(what, sizeof what, "field '%s': doc", f->name);
    if (f->doc && check_str(f->doc, 4096, what, why, len))
        return why;
    if (f->type == MICA_FIELD_ENUM) {
        if (check_enum(f, &nb_enum, why, len))
            return why;
        if (nb_enum == 0) {
            snprintf(why, len, "field '%s': enum without values", f->name);
            return why;
        }
    }
    if (f->nb_default < 0 || f->nb_default > (1 << 20) ||
        (f->nb_default > 0 && !f->default_value)) {
        snprintf(why, len, "field '%s': default of %d values without data",
                 f->name, (int)f->nb_default);
        return why;
    }
    if (f->default_value && f->count >= 1 && f->nb_default != f->count) {
        snprintf(why, len, "field '%s': default has %d values, the field %d",
                 f->name, (int)f->nb_default, (int)f->count);
        return why;
    }
    for (i = 0; f->default_value && i < f->nb_default; i++) {
        union {
            int64_t i;
            double d;
            const char *s;
            mica_weights_t w;
        } v;
        size_t size = value_size(f->type);
        if (mica__peek(&v, (const char *)f->default_value + (size_t)i * size,
                       size) != 0) {
            snprintf(why, len, "field '%s': its default of %d values is "
                     "not readable", f->name, (int)f->nb_default);
            return why;
        }
        if (f->type == MICA_FIELD_ENUM && (v.i < 0 || v.i >= nb_enum)) {
            snprintf(why, len,
                     "field '%s': default index %lld is not one of its "
                     "%d enum values", f->name, (long long)v.i,
                     (int)nb_enum);
            return why;
        }
        snprintf(what, sizeof what, "field '%s': default %d", f->name,
                 (int)i);
        if (f->type == MICA_FIELD_STRING && v.s &&
            check_str(v.s, 4096, what, why, len))
            return why;
    }
    return NULL;
}

/* Why the field schema of c (a copy) is unusable, or NULL. */
static const char *check_fields(const mica_layer_creator_t *c, char *why,
                                size_t len)
{
    mica_field_schema_t *f;
    char what[64];
    int32_t i, j;

    if (c->nb_fields < 0 || c->nb_fields > MAX_FIELDS ||
        (c->nb_fields > 0 && !c->fields)) {
        snprintf(why, len, "field schema of %d fields without an array "
                 "(at most %d fields)", (int)c->nb_fields, MAX_FIELDS);
        return why;
    }
    if (c->nb_fields == 0)
        return NULL;
    f = malloc(sizeof *f * (size_t)c->nb_fields);
    if (!f) {
        snprintf(why, len, "out of memory");
        return why;
    }
    if (mica__peek(f, c->fields, sizeof *f * (size_t)c->nb_fields) != 0) {
        snprintf(why, len, "declares %d fields, but its field array is not "
                 "readable that far", (int)c->nb_fields);
        goto bad;
    }
    for (i = 0; i < c->nb_fields; i++) {
        snprintf(what, sizeof what, "field %d's name", (int)i);
        if (!f[i].name || check_str(f[i].name, MAX_NAME, what, why, len)) {
            if (!f[i].name)
                snprintf(why, len, "field %d has no name", (int)i);
            goto bad;
        }
        if (!f[i].name[0]) {
            snprintf(why, len, "field %d has no name", (int)i);
            goto bad;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(f[j].name, f[i].name) == 0) {
                snprintf(why, len, "field '%s' is declared twice",
                         f[i].name);
                goto bad;
            }
        }
        if (check_field(&f[i], why, len))
            goto bad;
    }
    free(f);
    return NULL;
bad:
    free(f);
    return why;
}

const char *mica__check_creator(const mica_layer_creator_t *c, char *why,
                                 size_t len)
{
    mica_layer_creator_t copy;
    size_t size;

    if (!c)
        return "is NULL";
    memset(&copy, 0, sizeof copy);
    if (mica__peek(&copy, c, MICA__CREATOR_V1_SIZE) != 0)
        return "is not readable memory";
    if (copy.struct_size < MICA__CREATOR_V1_SIZE) {
        snprintf(why, len, "struct_size %u is smaller than ABI version 1's (%u)",
                 (unsigned)copy.struct_size, (unsigned)MICA__CREATOR_V1_SIZE);
        return why;
    }
    size = copy.struct_size < sizeof copy ? copy.struct_size : sizeof copy;
    if (mica__peek(&copy, c, size) != 0) {
        snprintf(why, len, "struct_size %u reaches memory that is not "
                 "readable", (unsigned)copy.struct_size);
        return why;
    }
    if (!copy.type)
        return "has no type name";
    if (check_str(copy.type, MAX_NAME, "its type name", why, len))
        return why;
    if (!copy.type[0])
        return "has no type name";
    if (copy.version < 1) {
        snprintf(why, len, "version %d is not valid (must be >= 1)",
                 (int)copy.version);
        return why;
    }
    if (!copy.implementation)
        return "has no implementation name";
    if (check_str(copy.implementation, MAX_NAME, "its implementation name",
                  why, len))
        return why;
    if (!copy.implementation[0])
        return "has no implementation name";
    if (copy.ns && check_str(copy.ns, MAX_NAME, "its namespace", why, len))
        return why;
    if (!(copy.devices & mica__device_bits())) {
        int32_t i, n, pos;
        const mica__device_desc_t *d = mica__devices(&n);
        pos = snprintf(why, len, "devices 0x%x name no device this host "
                       "knows (", (unsigned)copy.devices);
        for (i = 0; i < n && pos > 0 && (size_t)pos < len; i++)
            pos += snprintf(why + pos, len - (size_t)pos, "%s%s 0x%x",
                            i ? ", " : "", d[i].name, (unsigned)d[i].bit);
        if (pos > 0 && (size_t)pos < len)
            snprintf(why + pos, len - (size_t)pos, ")");
        return why;
    }
    if (copy.role > MICA_ROLE_ASSERTION) {
        snprintf(why, len, "role %u is unknown", (unsigned)copy.role);
        return why;
    }
    if (!copy.create)
        return "has no create function";
    return check_fields(&copy, why, len);
}

/* ---- instances ------------------------------------------------------------ */

/* The size of version 1's layer ops: up to destroy. */
#define OPS_V1_SIZE \
    (offsetof(mica_layer_ops_t, destroy) + sizeof(void (*)(void)))

/* Why inst is unusable, or NULL. */
static const char *check_ops(const mica_layer_creator_t *c,
                             const mica_layer_t *inst, char *why, size_t len)
{
    const mica_layer_ops_t *ops = inst->ops;
    static const struct {
        size_t offset;
        const char *name;
    } required[] = {
#define REQ(m) {offsetof(mica_layer_ops_t, m), #m}
        REQ(nb_outputs), REQ(output_dtypes), REQ(output_dims),
        REQ(supports_format), REQ(enqueue), REQ(serialize), REQ(clone),
        REQ(destroy),
#undef REQ
    };
    size_t i;

    if (!ops)
        return "an instance without ops";
    if (ops->struct_size < OPS_V1_SIZE) {
        snprintf(why, len, "an instance whose ops' struct_size %u is "
                 "smaller than ABI version 1's (%u)",
                 (unsigned)ops->struct_size, (unsigned)OPS_V1_SIZE);
        return why;
    }
    for (i = 0; i < sizeof required / sizeof required[0]; i++) {
        void (*const *fn)(void) = (void (*const *)(void))(
            (const char *)ops + required[i].offset);
        if (!*fn) {
            snprintf(why, len, "an instance without %s (a required "
                     "callback)", required[i].name);
            return why;
        }
    }
    if (c->role != MICA_ROLE_NONE && c->role != MICA_ROLE_IF_INPUT &&
        c->role != MICA_ROLE_ASSERTION &&
        !(ops->struct_size >= offsetof(mica_layer_ops_t, enqueue_boundary) +
                                  sizeof ops->enqueue_boundary &&
          ops->enqueue_boundary))
        return "an instance of a boundary layer without enqueue_boundary";
    return NULL;
}

mica_status_t mica__check_instance(mica_context_t *ctx,
                                   const mica_layer_creator_t *c,
                                   mica_layer_t **inst, const char *how,
                                   const char *prefix)
{
    char why[256];
    const char *bad = check_ops(c, *inst, why, sizeof why);
    const char *file = mica__creator_file(ctx, c);
    mica_status_t st;

    if (!bad)
        return MICA_OK;
    st = mica__fail(ctx, MICA_ERR_INVALID, "%s: module %s: %s returned %s",
                    prefix, file ? file : "(unknown file)", how, bad);
    /* release what can be released; without ops or destroy it leaks */
    if ((*inst)->ops && (*inst)->ops->struct_size >= OPS_V1_SIZE &&
        (*inst)->ops->destroy)
        (*inst)->ops->destroy(*inst);
    *inst = NULL;
    return st;
}
