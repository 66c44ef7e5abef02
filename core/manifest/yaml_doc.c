/*
 * core/manifest/yaml_doc.c - the YAML document of a manifest (read by
 * yaml_load.c, every node with its line and column): node helpers,
 * scalar conversions and errors that name file:line:column.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

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

/* Whether a node is a plain (unquoted) scalar. */
static int plain(const yaml_node_t *node)
{
    return node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

int mica__mf_is_null(const yaml_node_t *node)
{
    const char *s = mica__mf_scalar(node);
    return s && mica__text_is_null(s, plain(node));
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

/* The conversions are core/base/fields.c's, so that params and the loader's
 * own keys read scalars alike. */
int mica__mf_to_int(const yaml_node_t *node, int64_t *out)
{
    const char *s = mica__mf_scalar(node);
    return s && mica__text_to_int(s, plain(node), out);
}

int mica__mf_to_float(const yaml_node_t *node, double *out)
{
    const char *s = mica__mf_scalar(node);
    return s && mica__text_to_float(s, plain(node), out);
}

int mica__mf_to_bool(const yaml_node_t *node, int *out)
{
    return mica__text_to_bool(mica__mf_scalar(node), out);
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
    yaml_node_pair_t *p, *start;
    mica__index_t seen = {0};
    mica_status_t st = MICA_OK;
    char d[64], list[512], lc[48];
    int i;

    if (!node || node->type != YAML_MAPPING_NODE)
        return mica__mf_fail(mf, node, "%s must be a map, got %s", what,
                             mica__mf_describe(node, d, sizeof(d)));
    start = node->data.mapping.pairs.start;
    for (p = start; p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *k = mica__mf_node(mf, p->key);
        const char *ks = mica__mf_scalar(k);
        int32_t first;
        if (!ks || mica__mf_is_null(k)) {
            st = mica__mf_fail(mf, k, "%s: keys must be names, got %s",
                               what, mica__mf_describe(k, d, sizeof(d)));
            break;
        }
        /* keys seen so far by name: a map of 100,000 weights is checked
         * in linear time */
        first = mica__index_get(&seen, ks);
        if (first >= 0) {
            st = mica__mf_fail(mf, k, "%s: key '%s' given twice (first at "
                               "%s)", what, ks,
                               mica__mf_linecol(mica__mf_node(mf,
                                                start[first].key),
                                                lc, sizeof(lc)));
            break;
        }
        if (mica__index_put(&seen, ks, (int32_t)(p - start)) != 0) {
            st = mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
            break;
        }
        if (!allowed)
            continue;
        for (i = 0; allowed[i]; i++)
            if (!strcmp(allowed[i], ks))
                break;
        if (!allowed[i]) {
            join_names(allowed, list, sizeof(list));
            st = mica__mf_fail(mf, k, "%s: unknown key '%s' (expected one "
                               "of %s)", what, ks, list);
            break;
        }
    }
    mica__index_free(&seen);
    return st;
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

mica_status_t mica__mf_core_fail(mica__mf_t *mf, mica_status_t st,
                                 const yaml_node_t *node, const char *prefix)
{
    char msg[MICA_ERROR_MAX];
    size_t n = strlen(mf->path);
    snprintf(msg, sizeof(msg), "%s", mica_context_error(mf->ctx));
    if (!strncmp(msg, mf->path, n) && msg[n] == ':')
        return mica__fail(mf->ctx, st, "%s", msg);
    if (!msg[0])
        snprintf(msg, sizeof(msg), "%s", mica_status_name(st));
    return mica__mf_fail_st(mf, st, node, "%s: %s", prefix, msg);
}
