/*
 * core/dds.c - data-dependent sizes (mica_host_t's expr_size): what must
 * hold of them once an engine's kinds and shapes are known, and, as an
 * execution context runs, each size read back once its layer has run and
 * the shapes that follow from it.
 *
 * A size is a symbol (MICA__SYM_SIZE) standing for the value of a 0-D
 * output of its layer, bounded by an expression of what precedes it.
 * Phase 1 binds it to its bound, so that plans and every descriptor up to
 * that layer's run are the largest; the run then reads the value back
 * (a copy to the host and a wait on CUDA), checks it against the bound,
 * binds it, and evaluates the shapes of the layers after it again: their
 * descriptors, pointers and skips, the plan's check, and shape_change.
 */
#include <config.h>

#include "build.h"
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mica_status_t mica__dds_index(mica_engine_t *e)
{
    int32_t k, n = 0;

    free(e->size_syms);
    e->size_syms = NULL;
    e->nb_size_syms = 0;
    for (k = 0; k < e->nb_symbols; k++)
        n += e->symbols[k].kind == MICA__SYM_SIZE;
    if (n == 0)
        return MICA_OK;
    if (!(e->size_syms = calloc((size_t)n, sizeof *e->size_syms)))
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (k = 0; k < e->nb_symbols; k++)
        if (e->symbols[k].kind == MICA__SYM_SIZE) {
            e->size_syms[e->nb_size_syms++] = k;
            e->layers[e->tensors[e->symbols[k].tensor].producer].makes_sizes =
                1;
        }
    return MICA_OK;
}

int mica__dds_depends(const mica_engine_t *e, const mica_expr_t *x,
                      uint8_t *mask)
{
    int32_t i;
    if (!e->nb_size_syms)
        return 0;
    memset(mask, 0, (size_t)e->nb_symbols);
    for (i = 0; i < e->nb_size_syms; i++)
        mask[e->size_syms[i]] = 1;
    return mica__expr_uses(x, mask, e->nb_symbols);
}

/* The first layer with a size that tensor t's shape depends on, or -1
 * (mask: scratch, one byte per symbol). */
static int32_t depends_on(const mica_engine_t *e, const mica__tensor_t *t,
                          uint8_t *mask)
{
    int32_t i, j;
    for (i = 0; i < e->nb_size_syms; i++) {
        memset(mask, 0, (size_t)e->nb_symbols);
        mask[e->size_syms[i]] = 1;
        for (j = 0; j < t->shape.nb_dims; j++)
            if (mica__expr_uses(t->shape.d[j], mask, e->nb_symbols))
                return e->tensors[e->symbols[e->size_syms[i]].tensor]
                    .producer;
    }
    return -1;
}

mica_status_t mica__dds_check(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    uint8_t *mask;
    char at[512];
    int32_t i, s, j, p;
    mica_status_t st = MICA_OK;

    if ((st = mica__dds_index(e)) != MICA_OK || !e->nb_size_syms)
        return st;
    for (i = 0; i < e->nb_size_syms; i++) {
        const mica__tensor_t *t = &e->tensors[e->symbols[e->size_syms[i]]
                                                  .tensor];
        const mica__layer_t *l = &e->layers[t->producer];
        mica__at(l->origin, at, sizeof at);
        if (t->shape.nb_dims != 0 ||
            (t->dtype != MICA_INT32 && t->dtype != MICA_INT64))
            return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): "
                              "'%s' is a data-dependent size, so it must be "
                              "a 0-D int32 or int64 output, not %s %s", at,
                              l->name, l->info.type, t->name,
                              mica_dtype_name(t->dtype), t->shape_text);
        if (l->construct >= 0)
            return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED, "%slayer '%s' "
                              "(%s) has a data-dependent size ('%s'): it "
                              "cannot be inside loop or conditional '%s'",
                              at, l->name, l->info.type, t->name,
                              e->constructs[l->construct].name);
    }
    if (!(mask = calloc((size_t)e->nb_symbols + 1, 1)))
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    /* Phase 1 runs before any of them: nothing it computes can use one. */
    for (s = 0; s < e->nb_layers && st == MICA_OK; s++) {
        const mica__layer_t *l = &e->layers[s];
        if (!l->run_host)
            continue;
        for (j = 0; j < l->nb_inputs + l->nb_outputs && st == MICA_OK; j++) {
            int32_t t = j < l->nb_inputs ? l->inputs[j]
                                         : l->outputs[j - l->nb_inputs];
            if (t < 0 || (p = depends_on(e, &e->tensors[t], mask)) < 0)
                continue;
            st = mica__fail(b->ctx, MICA_ERR_UNSUPPORTED, "%slayer '%s' (%s) "
                            "computes shape tensors before execution, but "
                            "'%s' %s has a data-dependent shape, known only "
                            "once layer '%s' has run on the device",
                            mica__at(l->origin, at, sizeof at), l->name,
                            l->info.type, e->tensors[t].name,
                            e->tensors[t].shape_text, e->layers[p].name);
        }
    }
    free(mask);
    return st;
}

/* ---- at run time --------------------------------------------------------- */

int32_t mica__dds_next(const mica_engine_t *e, int32_t after)
{
    int32_t next = e->nb_layers, i;
    for (i = 0; i < e->nb_size_syms; i++) {
        int32_t p = e->tensors[e->symbols[e->size_syms[i]].tensor].producer;
        if (p > after && p < next)
            next = p;
    }
    return next;
}

mica_status_t mica__dds_reset(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t first = mica__dds_next(e, -1);
    mica_status_t st;

    if (first == e->nb_layers)
        return MICA_OK;
    if ((st = mica__shapes_eval_from(e, &x->shapes, first, first)) != MICA_OK)
        return st;
    mica__exec_refresh(x);
    return mica__exec_tell_shapes(x, 0, first + 1);
}

/* The value of 0-D tensor t (int32 or int64) on the device, on the host. */
static mica_status_t read_back(mica_exec_t *x, int32_t s, int32_t t,
                               int64_t *v)
{
    const mica__layer_t *l = &x->e->layers[s];
    const void *src = NULL;
    int32_t i;
    int32_t v32 = 0;
    mica_status_t st;

    for (i = 0; i < l->nb_outputs; i++)
        if (l->outputs[i] == t)
            src = x->ptrs[x->first[s] + l->nb_inputs + i];
    if (!src)
        return mica__fail(x->ctx, MICA_ERR_INTERNAL, "size '%s' has no "
                          "memory", x->e->tensors[t].name);
    *v = 0;
    st = x->e->tensors[t].dtype == MICA_INT64
             ? x->dev->download(x->ctx, v, src, 8, x->stream)
             : x->dev->download(x->ctx, &v32, src, 4, x->stream);
    if (st == MICA_OK)
        st = x->dev->sync(x->ctx, x->stream);
    if (x->e->tensors[t].dtype != MICA_INT64)
        *v = v32;
    return st;
}

mica_status_t mica__dds_after(mica_exec_t *x, int32_t s)
{
    mica_engine_t *e = x->e;
    const mica__layer_t *l = &e->layers[s];
    char at[512];
    int32_t i;
    int64_t v;
    mica_status_t st;

    for (i = 0; i < e->nb_size_syms; i++) {
        int32_t k = e->size_syms[i], t = e->symbols[k].tensor;
        if (e->tensors[t].producer != s)
            continue;
        if ((st = read_back(x, s, t, &v)) != MICA_OK)
            return st;
        if (v < 0 || v > x->shapes.symbols[k])
            return mica__fail(x->ctx, MICA_ERR_RUNTIME, "%slayer '%s' (%s): "
                              "its data-dependent size '%s' is %lld, outside "
                              "0..%lld", mica__at(l->origin, at, sizeof at),
                              l->name, l->info.type, e->tensors[t].name,
                              (long long)v,
                              (long long)x->shapes.symbols[k]);
        x->shapes.symbols[k] = v;
    }
    if ((st = mica__shapes_eval_from(e, &x->shapes, s, s + 1)) != MICA_OK ||
        (st = mica__exec_check_plan(x, x->profile)) != MICA_OK)
        return st;
    mica__exec_refresh(x);
    return mica__exec_tell_shapes(x, s + 1, mica__dds_next(e, s) + 1);
}
