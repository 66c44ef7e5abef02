/*
 * core/manifest/params.c - a layer's `params` map as written, for the
 * validator: every param's name and value (scalars as text, lists, maps)
 * with the "file:line:col" of each, and the reading of a WEIGHTS param
 * (a weights entry's name or an inline blob) when the validator asks for
 * one.  Nothing here knows a schema: core/base/fields.c converts and checks.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

/* An allocation kept by p, zeroed; NULL when memory runs out. */
static void *keep(mica__mf_params_t *p, void *mem)
{
    void **grown;
    if (!mem)
        return NULL;
    grown = realloc(p->owned, sizeof *grown * (size_t)(p->nb_owned + 1));
    if (!grown) {
        free(mem);
        return NULL;
    }
    p->owned = grown;
    p->owned[p->nb_owned++] = mem;
    return mem;
}

/* The loose form of YAML node `node` into *v. */
static mica_status_t loose(mica__mf_t *mf, mica__mf_params_t *p,
                           yaml_node_t *node, mica__loose_t *v)
{
    mica__loose_t *items;
    int32_t i, n;
    mica_status_t st;

    memset(v, 0, sizeof *v);
    v->handle = node;
    if (!(v->origin = keep(p, mica__mf_origin(mf, node))))
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    switch (node->type) {
    case YAML_SEQUENCE_NODE:
        v->kind = MICA__LOOSE_LIST;
        n = mica__mf_seq_len(node);
        items = keep(p, calloc((size_t)(n ? n : 1), sizeof *items));
        if (!items)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        for (i = 0; i < n; i++)
            if ((st = loose(mf, p, mica__mf_seq_item(mf, node, i),
                            &items[i])) != MICA_OK)
                return st;
        v->items = items;
        v->nb_items = n;
        return MICA_OK;
    case YAML_MAPPING_NODE:
        v->kind = MICA__LOOSE_MAP; /* a weights blob, read on demand */
        return MICA_OK;
    default:
        v->kind = MICA__LOOSE_SCALAR;
        v->text = mica__mf_scalar(node);
        v->plain = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return MICA_OK;
    }
}

mica_status_t mica__mf_params(mica__mf_t *mf, yaml_node_t *node,
                              yaml_node_t *layer_node, const char *layer,
                              mica__mf_params_t *out)
{
    yaml_node_pair_t *pr;
    mica__loose_t *values;
    char what[256];
    mica_status_t st;
    int32_t n;

    memset(out, 0, sizeof *out);
    if (node && mica__mf_is_null(node))
        node = NULL;
    out->origin = keep(out, mica__mf_origin(mf, node ? node : layer_node));
    if (!out->origin)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    if (!node)
        return MICA_OK;
    snprintf(what, sizeof what, "layer '%s': params", layer);
    if ((st = mica__mf_check_map(mf, node, NULL, what)) != MICA_OK)
        return st;
    n = (int32_t)(node->data.mapping.pairs.top -
                  node->data.mapping.pairs.start);
    out->given = keep(out, calloc((size_t)(n ? n : 1), sizeof *out->given));
    values = keep(out, calloc((size_t)(n ? n : 1), sizeof *values));
    if (!out->given || !values)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (pr = node->data.mapping.pairs.start;
         pr < node->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = mica__mf_node(mf, pr->key);
        mica__given_t *g = &out->given[out->nb_given];
        g->name = mica__mf_scalar(k);
        if (!(g->origin = keep(out, mica__mf_origin(mf, k))))
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        if ((st = loose(mf, out, mica__mf_node(mf, pr->value),
                        &values[out->nb_given])) != MICA_OK)
            return st;
        g->loose = &values[out->nb_given++];
    }
    return MICA_OK;
}

mica_status_t mica__mf_params_weights(void *user, const mica__loose_t *v,
                                      const char *what, mica_weights_t *out,
                                      char *err, size_t errlen)
{
    mica__mf_t *mf = user;
    yaml_node_t *node = (yaml_node_t *)v->handle;
    const mica__mf_weights_t *w = NULL;
    mica_status_t st = MICA_OK;
    char d[64];

    if (node->type == YAML_MAPPING_NODE)
        st = mica__mf_weights_blob(mf, node, NULL, what, &w);
    else if (node->type == YAML_SCALAR_NODE && !mica__mf_is_null(node)) {
        w = mica__mf_weights_find(mf->m, mica__mf_scalar(node));
        if (!w)
            st = mica__mf_fail(mf, node, "%s: no weights named '%s'", what,
                               mica__mf_scalar(node));
    } else {
        st = mica__mf_fail(mf, node, "%s: expected the name of a weights "
                           "entry or a blob {dtype, shape, data}, got %s",
                           what, mica__mf_describe(node, d, sizeof(d)));
    }
    if (st != MICA_OK) {
        snprintf(err, errlen, "%s", mica_context_error(mf->ctx));
        return st;
    }
    *out = w->w;
    return MICA_OK;
}

void mica__mf_params_free(mica__mf_params_t *p)
{
    int32_t i;
    for (i = 0; i < p->nb_owned; i++)
        free(p->owned[i]);
    free(p->owned);
    memset(p, 0, sizeof *p);
}
