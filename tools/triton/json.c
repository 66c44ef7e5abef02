/*
 * tools/triton/json.c - the JSON tree of json.h: a recursive-descent
 * parser (RFC 8259; nesting limited to 64 levels) and a compact writer.
 */
#include <config.h>

#include "json.h"
#include "mica/types.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
    int failed;
} parser_t;

static int fail(parser_t *p, const char *fmt, ...) MICA_PRINTF(2, 3);

static int fail(parser_t *p, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (p->failed)
        return -1;
    p->failed = 1;
    k = snprintf(p->err, p->errlen, "offset %zu: ", p->i);
    if (k >= 0 && (size_t)k < p->errlen) {
        va_start(ap, fmt);
        vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void skip_space(parser_t *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                           p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int literal(parser_t *p, const char *word)
{
    size_t len = strlen(word);
    if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0)
        return fail(p, "unexpected '%c'", p->s[p->i]);
    p->i += len;
    return 0;
}

static int hex4(parser_t *p, uint32_t *out)
{
    uint32_t v = 0;
    int k;
    if (p->n - p->i < 4)
        return fail(p, "short \\u escape");
    for (k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return fail(p, "bad \\u escape");
    }
    *out = v;
    return 0;
}

/* A string at p->i (the opening quote), decoded into a malloc'd copy. */
static int parse_string(parser_t *p, char **out)
{
    size_t cap = 16, len = 0;
    char *buf = malloc(cap);

    if (!buf)
        return fail(p, "out of memory");
    p->i++; /* the quote */
    for (;;) {
        char enc[4];
        size_t nenc = 1;
        unsigned char c;

        if (p->i >= p->n) {
            free(buf);
            return fail(p, "unterminated string");
        }
        c = (unsigned char)p->s[p->i++];
        if (c == '"')
            break;
        if (c < 0x20) {
            free(buf);
            return fail(p, "control character in a string");
        }
        enc[0] = (char)c;
        if (c == '\\') {
            uint32_t u;
            char e = p->i < p->n ? p->s[p->i++] : '\0';
            switch (e) {
            case '"': case '\\': case '/': enc[0] = e; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'n': enc[0] = '\n'; break;
            case 'r': enc[0] = '\r'; break;
            case 't': enc[0] = '\t'; break;
            case 'u':
                if (hex4(p, &u) != 0)
                    goto bad;
                if (u >= 0xD800 && u < 0xDC00) { /* a surrogate pair */
                    uint32_t lo;
                    if (p->n - p->i < 2 || p->s[p->i] != '\\' ||
                        p->s[p->i + 1] != 'u') {
                        fail(p, "lone surrogate");
                        goto bad;
                    }
                    p->i += 2;
                    if (hex4(p, &lo) != 0)
                        goto bad;
                    if (lo < 0xDC00 || lo >= 0xE000) {
                        fail(p, "bad surrogate pair");
                        goto bad;
                    }
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                }
                if (u < 0x80) {
                    enc[0] = (char)u;
                } else if (u < 0x800) {
                    enc[0] = (char)(0xC0 | (u >> 6));
                    enc[1] = (char)(0x80 | (u & 0x3F));
                    nenc = 2;
                } else if (u < 0x10000) {
                    enc[0] = (char)(0xE0 | (u >> 12));
                    enc[1] = (char)(0x80 | ((u >> 6) & 0x3F));
                    enc[2] = (char)(0x80 | (u & 0x3F));
                    nenc = 3;
                } else {
                    enc[0] = (char)(0xF0 | (u >> 18));
                    enc[1] = (char)(0x80 | ((u >> 12) & 0x3F));
                    enc[2] = (char)(0x80 | ((u >> 6) & 0x3F));
                    enc[3] = (char)(0x80 | (u & 0x3F));
                    nenc = 4;
                }
                break;
            default:
                fail(p, "bad escape");
                goto bad;
            }
        }
        if (len + nenc + 1 > cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                fail(p, "out of memory");
                goto bad;
            }
            buf = grown;
            cap *= 2;
        }
        memcpy(buf + len, enc, nenc);
        len += nenc;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
bad:
    free(buf);
    return -1;
}

static int parse_number(parser_t *p, char **out)
{
    size_t start = p->i;
    while (p->i < p->n && strchr("+-0123456789.eE", p->s[p->i]))
        p->i++;
    if (p->i == start)
        return fail(p, "unexpected '%c'", p->s[start]);
    if (!(*out = strndup(p->s + start, p->i - start)))
        return fail(p, "out of memory");
    return 0;
}

static int parse_value(parser_t *p, mica__json_t **out, int depth);

/* The elements of an array or the members of an object. */
static int parse_items(parser_t *p, mica__json_t *v, int depth)
{
    char close = v->kind == MICA__JSON_ARRAY ? ']' : '}';

    p->i++; /* the opening bracket */
    skip_space(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        mica__json_t *item;
        char *key = NULL;

        skip_space(p);
        if (v->kind == MICA__JSON_OBJECT) {
            if (p->i >= p->n || p->s[p->i] != '"')
                return fail(p, "expected a member name");
            if (parse_string(p, &key) != 0)
                return -1;
            skip_space(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                free(key);
                return fail(p, "expected ':'");
            }
            p->i++;
        }
        if (parse_value(p, &item, depth + 1) != 0) {
            free(key);
            return -1;
        }
        item->key = key;
        mica__json_append(v, item);
        skip_space(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return fail(p, "expected ',' or '%c'", close);
    }
}

static int parse_value(parser_t *p, mica__json_t **out, int depth)
{
    mica__json_t *v;
    char c;
    int rc = 0;

    skip_space(p);
    if (p->i >= p->n)
        return fail(p, "unexpected end");
    if (depth > MAX_DEPTH)
        return fail(p, "nested deeper than %d levels", MAX_DEPTH);
    c = p->s[p->i];
    v = mica__json_new(c == '{' ? MICA__JSON_OBJECT
                       : c == '[' ? MICA__JSON_ARRAY
                       : c == '"' ? MICA__JSON_STRING
                       : c == 't' || c == 'f' ? MICA__JSON_BOOL
                       : c == 'n' ? MICA__JSON_NULL : MICA__JSON_NUMBER);
    if (!v)
        return fail(p, "out of memory");
    switch (v->kind) {
    case MICA__JSON_OBJECT: case MICA__JSON_ARRAY:
        rc = parse_items(p, v, depth); break;
    case MICA__JSON_STRING: rc = parse_string(p, &v->text); break;
    case MICA__JSON_NUMBER: rc = parse_number(p, &v->text); break;
    case MICA__JSON_NULL: rc = literal(p, "null"); break;
    case MICA__JSON_BOOL:
        v->boolean = c == 't';
        rc = literal(p, c == 't' ? "true" : "false");
        break;
    }
    if (rc != 0) {
        mica__json_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

int mica__json_parse(const char *s, size_t n, mica__json_t **out, char *err,
                     size_t errlen)
{
    parser_t p = {s, n, 0, err, errlen, 0};
    mica__json_t *v;

    if (errlen)
        err[0] = '\0';
    if (parse_value(&p, &v, 0) != 0)
        return -1;
    skip_space(&p);
    if (p.i != n) {
        mica__json_free(v);
        return fail(&p, "text after the value");
    }
    *out = v;
    return 0;
}

void mica__json_free(mica__json_t *v)
{
    while (v) {
        mica__json_t *next = v->next;
        mica__json_free(v->child);
        free(v->key);
        free(v->text);
        free(v);
        v = next;
    }
}

mica__json_t *mica__json_get(const mica__json_t *v, const char *key)
{
    mica__json_t *m;
    if (!v || v->kind != MICA__JSON_OBJECT)
        return NULL;
    for (m = v->child; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            return m;
    return NULL;
}

const char *mica__json_string(const mica__json_t *v)
{
    return v && v->kind == MICA__JSON_STRING ? v->text : NULL;
}

int mica__json_int(const mica__json_t *v, int64_t *out)
{
    char *end;
    long long x;

    if (!v || (v->kind != MICA__JSON_NUMBER && v->kind != MICA__JSON_STRING))
        return -1;
    errno = 0;
    x = strtoll(v->text, &end, 10);
    if (errno || end == v->text || *end)
        return -1;
    *out = (int64_t)x;
    return 0;
}

int32_t mica__json_count(const mica__json_t *v)
{
    int32_t n = 0;
    const mica__json_t *e;
    if (!v || v->kind != MICA__JSON_ARRAY)
        return 0;
    for (e = v->child; e; e = e->next)
        n++;
    return n;
}

mica__json_t *mica__json_new(mica__json_kind_t kind)
{
    mica__json_t *v = calloc(1, sizeof *v);
    if (v)
        v->kind = kind;
    return v;
}

mica__json_t *mica__json_new_string(const char *s)
{
    mica__json_t *v = mica__json_new(MICA__JSON_STRING);
    if (v && !(v->text = strdup(s))) {
        free(v);
        return NULL;
    }
    return v;
}

mica__json_t *mica__json_new_int(int64_t value)
{
    char buf[32];
    mica__json_t *v = mica__json_new(MICA__JSON_NUMBER);
    snprintf(buf, sizeof buf, "%" PRId64, value);
    if (v && !(v->text = strdup(buf))) {
        free(v);
        return NULL;
    }
    return v;
}

void mica__json_append(mica__json_t *array, mica__json_t *item)
{
    item->next = NULL;
    if (array->last)
        array->last->next = item;
    else
        array->child = item;
    array->last = item;
}

int mica__json_set(mica__json_t *object, const char *key, mica__json_t *value)
{
    mica__json_t **at;

    free(value->key);
    if (!(value->key = strdup(key))) {
        mica__json_free(value);
        return -1;
    }
    object->last = NULL;
    for (at = &object->child; *at; at = &(*at)->next) {
        if (strcmp((*at)->key, key) == 0) {
            value->next = (*at)->next;
            (*at)->next = NULL;
            mica__json_free(*at);
            *at = value;
            break;
        }
    }
    if (!*at)
        *at = value;
    for (object->last = object->child; object->last->next;)
        object->last = object->last->next;
    return 0;
}

/* ---- writing --------------------------------------------------------------- */

typedef struct writer {
    char *buf;
    size_t len, cap;
    int failed;
} writer_t;

static void put(writer_t *w, const char *s, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        char *grown;
        while (w->len + n + 1 > cap)
            cap *= 2;
        if (!(grown = realloc(w->buf, cap))) {
            w->failed = 1;
            return;
        }
        w->buf = grown;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void put_string(writer_t *w, const char *s)
{
    put(w, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(w, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(w, esc, 6);
        } else {
            put(w, (const char *)&c, 1);
        }
    }
    put(w, "\"", 1);
}

static void write_value(writer_t *w, const mica__json_t *v)
{
    const mica__json_t *e;

    switch (v->kind) {
    case MICA__JSON_NULL: put(w, "null", 4); break;
    case MICA__JSON_BOOL:
        put(w, v->boolean ? "true" : "false", v->boolean ? 4 : 5);
        break;
    case MICA__JSON_NUMBER: put(w, v->text, strlen(v->text)); break;
    case MICA__JSON_STRING: put_string(w, v->text); break;
    case MICA__JSON_ARRAY: case MICA__JSON_OBJECT:
        put(w, v->kind == MICA__JSON_ARRAY ? "[" : "{", 1);
        for (e = v->child; e; e = e->next) {
            if (e != v->child)
                put(w, ",", 1);
            if (v->kind == MICA__JSON_OBJECT) {
                put_string(w, e->key);
                put(w, ":", 1);
            }
            write_value(w, e);
        }
        put(w, v->kind == MICA__JSON_ARRAY ? "]" : "}", 1);
        break;
    }
}

char *mica__json_write(const mica__json_t *v, size_t *len)
{
    writer_t w = {NULL, 0, 0, 0};
    write_value(&w, v);
    if (w.failed) {
        free(w.buf);
        return NULL;
    }
    *len = w.len;
    return w.buf;
}
