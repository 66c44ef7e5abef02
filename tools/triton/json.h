/*
 * tools/triton/json.h - a small JSON tree: Triton hands the backend its
 * model configuration as JSON, and the backend completes it
 * (auto-complete) and hands it back.
 *
 * Values keep their order; a number keeps its source text (Triton writes
 * 64-bit integers, some as strings).  Every function that allocates
 * returns NULL (or -1) when memory runs out.
 */
#ifndef MICA_TRITON_JSON_H
#define MICA_TRITON_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum mica__json_kind {
    MICA__JSON_NULL,
    MICA__JSON_BOOL,
    MICA__JSON_NUMBER,
    MICA__JSON_STRING,
    MICA__JSON_ARRAY,
    MICA__JSON_OBJECT
} mica__json_kind_t;

typedef struct mica__json mica__json_t;
struct mica__json {
    mica__json_kind_t kind;
    char *key;          /* the member's name inside an object, else NULL */
    char *text;         /* a number's text, a string's (decoded) value */
    int boolean;        /* MICA__JSON_BOOL */
    mica__json_t *child; /* first element or member */
    mica__json_t *last;
    mica__json_t *next;  /* the next sibling */
};

/*
 * Parse `n` bytes of JSON (one value, surrounding whitespace allowed).
 * Returns 0 and *out, or -1 with "offset N: what" in err.
 */
int mica__json_parse(const char *s, size_t n, mica__json_t **out, char *err,
                     size_t errlen);
void mica__json_free(mica__json_t *v);

/* Member `key` of an object; NULL if v is not an object or has none. */
mica__json_t *mica__json_get(const mica__json_t *v, const char *key);
/* A string's value, NULL for another kind (v may be NULL). */
const char *mica__json_string(const mica__json_t *v);
/* An integer, from a number or a string of digits: 0, or -1 if v is
 * neither (or is out of int64 range). */
int mica__json_int(const mica__json_t *v, int64_t *out);
/* Elements of an array (0 for anything else). */
int32_t mica__json_count(const mica__json_t *v);

/* New values, not yet in a tree. */
mica__json_t *mica__json_new(mica__json_kind_t kind);
mica__json_t *mica__json_new_string(const char *s);
mica__json_t *mica__json_new_int(int64_t value);

/* Append `item` to an array (v takes it). */
void mica__json_append(mica__json_t *array, mica__json_t *item);
/* Set member `key` of an object, replacing (and freeing) an older one;
 * the object takes `value`.  -1 if out of memory (value is then freed). */
int mica__json_set(mica__json_t *object, const char *key, mica__json_t *value);

/* The value as compact JSON, malloc'd and NUL-terminated; *len its length. */
char *mica__json_write(const mica__json_t *v, size_t *len);

#endif /* MICA_TRITON_JSON_H */
