/*
 * core/base/fields.h - a layer's params checked against its creator's schema
 * (core/base/fields.c), the one validator of the project.
 *
 * Params reach it in two forms.  The C API gives typed fields
 * (mica_field_t); a manifest gives them loose, as written: scalars as
 * text, lists, maps, each with its "file:line:col".  Either way fields.c
 * alone converts them to the schema's types, applies the defaults and
 * says what is wrong: unknown names, values given twice, wrong counts,
 * wrong types, enum names and dtypes not known, missing required params.
 *
 * fields.c (with schema.c and text.c) depends on nothing of libmica but
 * the public dtype names, so that tests can compile them alone
 * ($(MICA_FIELDS_SOURCES)).
 */
#ifndef MICA_FIELDS_H
#define MICA_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"
#include "mica/module.h"

/* ---- loose values: params as a manifest writes them ------------------- */

typedef enum mica__loose_kind {
    MICA__LOOSE_SCALAR = 0,
    MICA__LOOSE_LIST = 1,
    MICA__LOOSE_MAP = 2
} mica__loose_kind_t;

typedef struct mica__loose {
    int32_t kind;                /* mica__loose_kind_t */
    const char *text;            /* a scalar's text */
    int32_t plain;               /* an unquoted scalar: may be null */
    const char *origin;          /* "file:line:col" of the value */
    const struct mica__loose *items; /* a list's items */
    int32_t nb_items;
    const void *handle;          /* the loader's own (its YAML node) */
} mica__loose_t;

/* One param given to a layer: typed (the C API) or loose (a manifest). */
typedef struct mica__given {
    const char *name;
    const char *origin;          /* where its name is written, or NULL */
    const mica_field_t *typed;   /* exactly one of typed and loose */
    const mica__loose_t *loose;
} mica__given_t;

/*
 * The loader's reading of a loose value for a WEIGHTS param (a weights
 * entry's name, or a blob): *out on success, else one full line (with
 * its position) into err and a status.  `what` is "layer 'x': param 'w'".
 */
typedef mica_status_t (*mica__weights_fn)(void *user, const mica__loose_t *v,
                                          const char *what,
                                          mica_weights_t *out, char *err,
                                          size_t errlen);

/* Whose params they are, for messages, and how to read them. */
typedef struct mica__fields_src {
    const char *layer;           /* its name; NULL: messages without it */
    const char *origin;          /* the layer's "file:line:col", or NULL */
    const char *params_origin;   /* where a missing param is reported
                                    (NULL: origin) */
    int32_t manifest;            /* given in a manifest: its words */
    mica__weights_fn weights;    /* reads loose WEIGHTS values */
    void *user;
    int32_t borrow_weights;      /* weights outlive the fields: no copy */
} mica__fields_src_t;

/*
 * An owned, checked copy of a layer's fields: every field of the schema
 * that is present or has a default, in schema order, with which of them
 * were given (the others are defaults).
 */
typedef struct mica__fields {
    mica_fields_t view;          /* what creators see */
    mica_field_t *items;
    uint8_t *given;              /* per item: given, not a default */
    void **owned;                /* allocations to free */
    int32_t nb_owned;
} mica__fields_t;

/*
 * Check nb_given params against creator c's schema into out (defaults
 * applied, values copied but borrowed weights).  On failure writes one
 * line into err, "ORIGIN: layer 'NAME': param 'p': ..." (the position
 * of the value at fault, else the layer's), and returns MICA_ERR_INVALID
 * or what the weights reader returned; out is then empty.
 */
mica_status_t mica__fields_validate(const mica__fields_src_t *src,
                                    const mica_layer_creator_t *c,
                                    const mica__given_t *given,
                                    int32_t nb_given, mica__fields_t *out,
                                    char *err, size_t errlen);

/*
 * The same for typed fields (given may be NULL), with messages that do
 * not name the layer: "param 'p': ...".
 */
mica_status_t mica__fields_check(const mica_layer_creator_t *c,
                                 const mica_fields_t *given,
                                 mica__fields_t *out, char *err,
                                 size_t errlen);

/*
 * The params of f that were given, as typed params for another schema;
 * *n gets their number.  Borrowed from f; free the array.  NULL when
 * memory runs out.
 */
mica__given_t *mica__fields_given(const mica__fields_t *f, int32_t *n);

void mica__fields_free(mica__fields_t *f);

/*
 * Whether creators a and b have the same schema (the same array, or the
 * same names, types, counts, requirements, enum values and defaults):
 * fields checked for one are checked for the other.
 */
int mica__schema_same(const mica_layer_creator_t *a,
                      const mica_layer_creator_t *b);

/* Bytes of one element of a field of type t in mica_field_t.data. */
size_t mica__field_slot_size(mica_field_type_t t);
/* The number of names of a NULL-terminated enum list. */
int32_t mica__enum_count(const char *const *values);
/* "x, y, z": an enum's names; "a, b": the params c takes; "float32,
 * float16, ...": every dtype.  Into buf. */
void mica__enum_names(const char *const *values, char *buf, size_t len);
void mica__field_names(const mica_layer_creator_t *c, char *buf, size_t len);
void mica__dtype_names(char *buf, size_t len);

/* The schema entry named `name`, or NULL. */
const mica_field_schema_t *mica__schema_find(const mica_layer_creator_t *c,
                                             const char *name);

/* "int", "float", "bool", "string", "enum", "dtype", "weights". */
const char *mica__field_type_name(mica_field_type_t type);

/* ---- scalars as text (a manifest's, and the loader's own keys) ------ */

/* A plain ~, null, Null, NULL or empty scalar. */
int mica__text_is_null(const char *s, int plain);
/* Decimal or 0x integers, decimals, .inf/.nan, true/false; 1 if it is. */
int mica__text_to_int(const char *s, int plain, int64_t *out);
int mica__text_to_float(const char *s, int plain, double *out);
int mica__text_to_bool(const char *s, int *out);

#endif /* MICA_FIELDS_H */
