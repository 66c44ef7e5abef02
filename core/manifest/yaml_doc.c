/*
 * core/manifest/yaml_doc.c - the YAML document of a manifest: parsing with
 * libyaml's document API (so every node keeps its line and column), node
 * helpers, scalar conversions and errors that name file:line:column.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

/* The parser's error as a status and a message naming file:line:col. */
static mica_status_t parse_error(mica__mf_t *mf, const yaml_parser_t *parser)
{
    const yaml_mark_t *mk = &parser->problem_mark;
    if (parser->error == YAML_MEMORY_ERROR)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    if (parser->error == YAML_READER_ERROR)
        return mica__fail(mf->ctx, MICA_ERR_INVALID, "%s: cannot read: %s",
                          mf->path,
                          parser->problem ? parser->problem : "error");
    return mica__fail(mf->ctx, MICA_ERR_INVALID,
                      "%s:%lu:%lu: YAML syntax error: %s%s%s", mf->path,
                      (unsigned long)mk->line + 1,
                      (unsigned long)mk->column + 1,
                      parser->problem ? parser->problem : "error",
                      parser->context ? " " : "",
                      parser->context ? parser->context : "");
}

mica_status_t mica__mf_parse(mica__mf_t *mf)
{
    FILE *f;
    yaml_parser_t parser;
    yaml_document_t next;
    mica_status_t st = MICA_OK;

    f = mf->text ? NULL : fopen(mf->path, "rb");
    if (!f && !mf->text)
        return mica__fail(mf->ctx,
                          errno == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO,
                          "cannot open manifest '%s': %s", mf->path,
                          strerror(errno));
    if (!yaml_parser_initialize(&parser)) {
        if (f)
            fclose(f);
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "%s: out of memory",
                          mf->path);
    }
    if (f)
        yaml_parser_set_input_file(&parser, f);
    else
        yaml_parser_set_input_string(&parser,
                                     (const unsigned char *)mf->text,
                                     mf->text_len);
    if (!yaml_parser_load(&parser, &mf->doc)) {
        st = parse_error(mf, &parser);
    } else {
        mf->have_doc = 1;
        /* One document per manifest: a second one is a mistake. */
        if (!yaml_parser_load(&parser, &next)) {
            st = parse_error(mf, &parser);
        } else {
            yaml_node_t *root = yaml_document_get_root_node(&next);
            if (root)
                st = mica__mf_fail(mf, root, "a manifest is one YAML "
                                   "document; this is a second one");
            yaml_document_delete(&next);
        }
    }
    yaml_parser_delete(&parser);
    if (f)
        fclose(f);
    return st;
}

yaml_node_t *mica__mf_node(mica__mf_t *mf, int id)
{
    return yaml_document_get_node(&mf->doc, id);
}

const char *mica__mf_linecol(const yaml_node_t *node, char *buf, size_t len)
{
    snprintf(buf, len, "%lu:%lu",
             node ? (unsigned long)node->start_mark.line + 1 : 1ul,
             node ? (unsigned long)node->start_mark.column + 1 : 1ul);
    return buf;
}

char *mica__mf_origin(mica__mf_t *mf, const yaml_node_t *node)
{
    char lc[48];
    return mica__asprintf("%s:%s", mf->path,
                          mica__mf_linecol(node, lc, sizeof(lc)));
}

/* Record "file:line:col: message" at node on the context. */
static mica_status_t vfail(mica__mf_t *mf, mica_status_t st,
                           const yaml_node_t *node, const char *fmt,
                           va_list ap)
{
    char msg[MICA_ERROR_MAX], lc[48];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return mica__fail(mf->ctx, st, "%s:%s: %s", mf->path,
                      mica__mf_linecol(node, lc, sizeof(lc)), msg);
}

mica_status_t mica__mf_fail(mica__mf_t *mf, const yaml_node_t *node,
                            const char *fmt, ...)
{
    va_list ap;
    mica_status_t st;
    va_start(ap, fmt);
    st = vfail(mf, MICA_ERR_INVALID, node, fmt, ap);
    va_end(ap);
    return st;
}

mica_status_t mica__mf_fail_st(mica__mf_t *mf, mica_status_t st,
                               const yaml_node_t *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = vfail(mf, st, node, fmt, ap);
    va_end(ap);
    return st;
}

const char *mica__mf_scalar(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)node->data.scalar.value;
}

int mica__mf_is_null(const yaml_node_t *node)
{
    const char *s = mica__mf_scalar(node);
    if (!s || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null")
           || !strcmp(s, "NULL");
}

const char *mica__mf_describe(const yaml_node_t *node, char *buf, size_t len)
{
    const char *s;
    if (!node)
        return "nothing";
    if (node->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (node->type == YAML_MAPPING_NODE)
        return "a map";
    if (mica__mf_is_null(node))
        return "null";
    s = mica__mf_scalar(node);
    if (strlen(s) > 40)
        snprintf(buf, len, "'%.37s...'", s);
    else
        snprintf(buf, len, "'%s'", s);
    return buf;
}

int mica__mf_to_int(const yaml_node_t *node, int64_t *out)
{
    const char *s = mica__mf_scalar(node);
    char *end;
    long long v;
    int neg = 0;
    const char *p;
    if (!s || !*s || mica__mf_is_null(node))
        return 0;
    p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        errno = 0;
        v = (long long)strtoull(p + 2, &end, 16);
        if (neg)
            v = -v;
    } else {
        errno = 0;
        v = strtoll(s, &end, 10);
    }
    if (errno || *end || end == s || !(*p >= '0' && *p <= '9'))
        return 0;
    *out = (int64_t)v;
    return 1;
}

int mica__mf_to_float(const yaml_node_t *node, double *out)
{
    const char *s = mica__mf_scalar(node);
    char *end;
    const char *p;
    int neg = 0;
    if (!s || !*s || mica__mf_is_null(node))
        return 0;
    p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")
        || !strcmp(p, "inf")) {
        *out = neg ? -HUGE_VAL : HUGE_VAL;
        return 1;
    }
    if (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN")
        || !strcmp(p, "nan")) {
        *out = NAN;
        return 1;
    }
    if (!((*p >= '0' && *p <= '9') || *p == '.'))
        return 0;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && end != s;
}

int mica__mf_to_bool(const yaml_node_t *node, int *out)
{
    const char *s = mica__mf_scalar(node);
    if (!s)
        return 0;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
        *out = 1;
        return 1;
    }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
        *out = 0;
        return 1;
    }
    return 0;
}

/* "a, b, c" from a NULL-terminated list. */
static void join_names(const char *const *names, char *buf, size_t len)
{
    size_t n = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; names && names[i] && n + 1 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                              names[i]);
}

mica_status_t mica__mf_check_map(mica__mf_t *mf, yaml_node_t *node,
                                 const char *const *allowed,
                                 const char *what)
{
    yaml_node_pair_t *p, *q;
    char d[64], list[512], lc[48];
    int i;

    if (!node || node->type != YAML_MAPPING_NODE)
        return mica__mf_fail(mf, node, "%s must be a map, got %s", what,
                             mica__mf_describe(node, d, sizeof(d)));
    for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = mica__mf_node(mf, p->key);
        const char *ks = mica__mf_scalar(k);
        if (!ks || mica__mf_is_null(k))
            return mica__mf_fail(mf, k, "%s: keys must be names, got %s",
                                 what, mica__mf_describe(k, d, sizeof(d)));
        for (q = node->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = mica__mf_node(mf, q->key);
            const char *s2 = mica__mf_scalar(k2);
            if (s2 && !strcmp(s2, ks))
                return mica__mf_fail(mf, k, "%s: key '%s' given twice "
                                     "(first at %s)", what, ks,
                                     mica__mf_linecol(k2, lc, sizeof(lc)));
        }
        if (!allowed)
            continue;
        for (i = 0; allowed[i]; i++)
            if (!strcmp(allowed[i], ks))
                break;
        if (!allowed[i]) {
            join_names(allowed, list, sizeof(list));
            return mica__mf_fail(mf, k, "%s: unknown key '%s' (expected "
                                 "one of %s)", what, ks, list);
        }
    }
    return MICA_OK;
}

mica_status_t mica__mf_check_seq(mica__mf_t *mf, yaml_node_t *node,
                                 const char *what)
{
    char d[64];
    if (!node || node->type != YAML_SEQUENCE_NODE)
        return mica__mf_fail(mf, node, "%s must be a list, got %s", what,
                             mica__mf_describe(node, d, sizeof(d)));
    return MICA_OK;
}

yaml_node_t *mica__mf_get(mica__mf_t *mf, yaml_node_t *node, const char *key,
                          yaml_node_t **key_node)
{
    yaml_node_pair_t *p;
    if (!node || node->type != YAML_MAPPING_NODE)
        return NULL;
    for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = mica__mf_node(mf, p->key);
        const char *ks = mica__mf_scalar(k);
        if (ks && !strcmp(ks, key)) {
            if (key_node)
                *key_node = k;
            return mica__mf_node(mf, p->value);
        }
    }
    return NULL;
}

int32_t mica__mf_seq_len(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SEQUENCE_NODE)
        return 0;
    return (int32_t)(node->data.sequence.items.top
                     - node->data.sequence.items.start);
}

yaml_node_t *mica__mf_seq_item(mica__mf_t *mf, yaml_node_t *node, int32_t i)
{
    return mica__mf_node(mf, node->data.sequence.items.start[i]);
}

mica_status_t mica__mf_string(mica__mf_t *mf, yaml_node_t *node,
                              const char *what, const char **out)
{
    char d[64];
    const char *s = mica__mf_scalar(node);
    if (!s || mica__mf_is_null(node))
        return mica__mf_fail(mf, node, "%s must be a name, got %s", what,
                             mica__mf_describe(node, d, sizeof(d)));
    *out = s;
    return MICA_OK;
}

mica_status_t mica__mf_dtype(mica__mf_t *mf, yaml_node_t *node,
                             const char *what, mica_dtype_t *out)
{
    char d[64], list[256];
    size_t n = 0;
    int i;
    const char *s = mica__mf_scalar(node);
    if (s && !mica__mf_is_null(node) && mica_dtype_parse(s, out) == MICA_OK)
        return MICA_OK;
    list[0] = '\0';
    for (i = 0; i < MICA_DTYPE_COUNT_ && n + 1 < sizeof(list); i++)
        n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
                              i ? ", " : "", mica_dtype_name(i));
    return mica__mf_fail(mf, node, "%s: %s is not a dtype (one of %s)", what,
                         mica__mf_describe(node, d, sizeof(d)), list);
}

mica_status_t mica__mf_dims(mica__mf_t *mf, yaml_node_t *node,
                            const char *what, int64_t min_dim,
                            mica_dims_t *out)
{
    int32_t i, n;
    char d[64];
    memset(out, 0, sizeof(*out));
    if (!node || node->type != YAML_SEQUENCE_NODE)
        return mica__mf_fail(mf, node, "%s must be a list of integers, "
                             "got %s", what,
                             mica__mf_describe(node, d, sizeof(d)));
    n = mica__mf_seq_len(node);
    if (n > MICA_MAX_DIMS)
        return mica__mf_fail(mf, node, "%s has %d dimensions (at most %d)",
                             what, (int)n, MICA_MAX_DIMS);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, node, i);
        int64_t v;
        if (!mica__mf_to_int(it, &v))
            return mica__mf_fail(mf, it, "%s: expected an integer, got %s",
                                 what, mica__mf_describe(it, d, sizeof(d)));
        if (v < min_dim)
            return mica__mf_fail(mf, it, "%s: dimension %d is %lld "
                                 "(must be >= %lld)", what, (int)i,
                                 (long long)v, (long long)min_dim);
        out->d[i] = v;
    }
    out->nb_dims = n;
    return MICA_OK;
}

const char *mica__mf_dims_str(const mica_dims_t *dims, char *buf, size_t len)
{
    size_t n = 0;
    int32_t i;
    n += (size_t)snprintf(buf, len, "[");
    for (i = 0; i < dims->nb_dims && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "",
                              (long long)dims->d[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

char *mica__mf_path(mica__mf_t *mf, const char *rel)
{
    if (rel[0] == '/' || !mf->dir[0])
        return mica__strdup(rel);
    return mica__asprintf("%s/%s", mf->dir, rel);
}
