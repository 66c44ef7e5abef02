/*
 * core/onnx/names.c - name sets (open addressing, names not copied) and
 * unique names: mica tensor names keep the ONNX ones and avoid every ONNX
 * name of the model for those made here.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static size_t find(const mica__ox_names_t *s, const char *name)
{
    size_t i = hash(name) & (s->cap - 1);
    while (s->slot[i] && strcmp(s->slot[i], name))
        i = (i + 1) & (s->cap - 1);
    return i;
}

int mica__ox_names_put(mica__ox_names_t *s, const char *name, void *val)
{
    size_t i;
    if (2 * (s->nb + 1) > s->cap) {
        mica__ox_names_t g;
        g.cap = s->cap ? 2 * s->cap : 64;
        g.nb = 0;
        g.slot = calloc(g.cap, sizeof *g.slot);
        g.val = calloc(g.cap, sizeof *g.val);
        if (!g.slot || !g.val) {
            free(g.slot);
            free(g.val);
            return -1;
        }
        for (i = 0; i < s->cap; i++)
            if (s->slot[i]) {
                size_t j = find(&g, s->slot[i]);
                g.slot[j] = s->slot[i];
                g.val[j] = s->val[i];
                g.nb++;
            }
        free(s->slot);
        free(s->val);
        *s = g;
    }
    i = find(s, name);
    if (!s->slot[i])
        s->nb++;
    s->slot[i] = name;
    s->val[i] = val;
    return 0;
}

void *mica__ox_names_get(const mica__ox_names_t *s, const char *name)
{
    size_t i;
    if (!s->cap)
        return NULL;
    i = find(s, name);
    return s->slot[i] ? s->val[i] : NULL;
}

int mica__ox_names_has(const mica__ox_names_t *s, const char *name)
{
    return s->cap && s->slot[find(s, name)] != NULL;
}

void mica__ox_names_free(mica__ox_names_t *s)
{
    free(s->slot);
    free(s->val);
    memset(s, 0, sizeof *s);
}

const char *mica__ox_unique(mica__ox_t *x, mica__ox_names_t *set,
                            const char *base)
{
    const char *name = NULL;
    long k;
    if (x->st != MICA_OK)
        return NULL;
    if (!base || !*base)
        base = "t";
    if (!mica__ox_names_has(set, base))
        name = mica__ox_strdup(x, base);
    for (k = 1; !name && x->st == MICA_OK; k++) {
        char *c = mica__ox_printf(x, "%s_%ld", base, k);
        if (c && !mica__ox_names_has(set, c))
            name = c;
    }
    if (name && mica__ox_names_put(set, name, (void *)name) != 0) {
        x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return name;
}

const char *mica__ox_tensor_name(mica__ox_t *x, const char *name,
                                 const char *layer, int32_t k)
{
    const char *base;
    long i;
    if (x->st != MICA_OK)
        return NULL;
    /* An ONNX name is its own, unless a sibling branch took it already. */
    if (name && !mica__ox_names_has(&x->tensors, name)) {
        base = mica__ox_strdup(x, name);
        if (base && mica__ox_names_put(&x->tensors, base, (void *)base))
            x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
        return x->st == MICA_OK ? base : NULL;
    }
    base = name ? name : k ? mica__ox_printf(x, "%s:%d", layer, (int)k)
                           : layer;
    for (i = 0; base && x->st == MICA_OK; i++) {
        const char *c = i ? mica__ox_printf(x, "%s_%ld", base, i) : base;
        if (c && !mica__ox_names_has(&x->tensors, c)
            && !mica__ox_names_has(&x->reserved, c)) {
            c = i ? c : mica__ox_strdup(x, c);
            if (c && mica__ox_names_put(&x->tensors, c, (void *)c))
                x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
            return x->st == MICA_OK ? c : NULL;
        }
    }
    return NULL;
}

