/*
 * registry/check.c - what a creator must be before it is registered: a
 * struct size its ABI version allows, a type name, version >= 1, an
 * implementation name, devices the device table knows, a known role, a
 * create function, and a sane field schema (unique names, valid types
 * and counts, enums with values, defaults of the declared length).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "registry.h"
#include "device.h"

/* Why a field schema entry is unusable, or NULL. */
static const char *check_field(const mica_field_schema_t *f, char *why,
                               size_t len)
{
    int32_t nb_enum = 0;

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
    if (f->type == MICA_FIELD_ENUM) {
        while (f->enum_values && f->enum_values[nb_enum])
            nb_enum++;
        if (nb_enum == 0) {
            snprintf(why, len, "field '%s': enum without values", f->name);
            return why;
        }
    }
    if (f->nb_default < 0 || (f->nb_default > 0 && !f->default_value)) {
        snprintf(why, len, "field '%s': default of %d values without data",
                 f->name, (int)f->nb_default);
        return why;
    }
    if (f->default_value && f->count >= 1 && f->nb_default != f->count) {
        snprintf(why, len, "field '%s': default has %d values, the field %d",
                 f->name, (int)f->nb_default, (int)f->count);
        return why;
    }
    if (f->default_value && f->type == MICA_FIELD_ENUM) {
        const int64_t *v = f->default_value;
        int32_t i;
        for (i = 0; i < f->nb_default; i++) {
            if (v[i] < 0 || v[i] >= nb_enum) {
                snprintf(why, len,
                         "field '%s': default index %lld is not one of its "
                         "%d enum values", f->name, (long long)v[i],
                         (int)nb_enum);
                return why;
            }
        }
    }
    return NULL;
}

const char *mica__check_creator(const mica_layer_creator_t *c, char *why,
                                 size_t len)
{
    int32_t i, j;

    if (!c)
        return "is NULL";
    if (c->struct_size < MICA__CREATOR_V1_SIZE) {
        snprintf(why, len, "struct_size %u is smaller than ABI version 1's (%u)",
                 (unsigned)c->struct_size, (unsigned)MICA__CREATOR_V1_SIZE);
        return why;
    }
    if (!c->type || !c->type[0])
        return "has no type name";
    if (c->version < 1) {
        snprintf(why, len, "version %d is not valid (must be >= 1)",
                 (int)c->version);
        return why;
    }
    if (!c->implementation || !c->implementation[0])
        return "has no implementation name";
    if (!(c->devices & mica__device_bits())) {
        int32_t i, n, pos;
        const mica__device_desc_t *d = mica__devices(&n);
        pos = snprintf(why, len, "devices 0x%x name no device this host "
                       "knows (", (unsigned)c->devices);
        for (i = 0; i < n && pos > 0 && (size_t)pos < len; i++)
            pos += snprintf(why + pos, len - (size_t)pos, "%s%s 0x%x",
                            i ? ", " : "", d[i].name, (unsigned)d[i].bit);
        if (pos > 0 && (size_t)pos < len)
            snprintf(why + pos, len - (size_t)pos, ")");
        return why;
    }
    if (c->role > MICA_ROLE_ASSERTION) {
        snprintf(why, len, "role %u is unknown", (unsigned)c->role);
        return why;
    }
    if (!c->create)
        return "has no create function";
    if (c->nb_fields < 0 || (c->nb_fields > 0 && !c->fields)) {
        snprintf(why, len, "field schema of %d fields without an array",
                 (int)c->nb_fields);
        return why;
    }
    for (i = 0; i < c->nb_fields; i++) {
        const mica_field_schema_t *f = &c->fields[i];
        if (!f->name || !f->name[0]) {
            snprintf(why, len, "field %d has no name", (int)i);
            return why;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(c->fields[j].name, f->name) == 0) {
                snprintf(why, len, "field '%s' is declared twice", f->name);
                return why;
            }
        }
        if (check_field(f, why, len))
            return why;
    }
    return NULL;
}
