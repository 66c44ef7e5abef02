/*
 * core/format/restore_plan.c - what a restored engine's layers and
 * profiles must be before it may run: each instance agrees with what the
 * file says of it (its output count and types, what it reads of its
 * inputs, the format combination, a boundary layer's callback); each
 * profile's ranges are well formed; every layer is configured for every
 * profile, as a build does, and the saved memory plan holds: every block
 * in the arena, aligned, no two blocks that live at once overlapping
 * (the tensors of an in-place chain share one), and no workspace larger
 * than planned.  A module whose workspace grew, or whose outputs take
 * over other inputs, since the file was written gets the profile
 * planned again.
 */
#include <config.h>

#include "restore.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 256

/* Output types, input kinds and the format combination of layer s. */
static mica_status_t check_layer(mica__restore_t *x, int32_t s,
                                 mica_layer_t *inst)
{
    mica_engine_t *e = x->e;
    const mica__layer_t *l = &e->layers[s];
    const mica_layer_ops_t *ops = inst->ops;
    const mica__tensor_t *t;
    mica_dtype_t in[64], out[64];
    mica_tensor_desc_t io[128];
    mica_error_t err;
    int32_t i, k, nin = l->nb_inputs, nout = l->nb_outputs;

    if (ops->nb_outputs(inst) != nout)
        return mica__restore_bad(x, "layer", "'%s': %d outputs saved, "
                                 "implementation '%s' makes %d", l->name,
                                 (int)nout, l->info.implementation,
                                 (int)ops->nb_outputs(inst));
    memset(io, 0, sizeof io);
    for (i = 0; i < nin + nout; i++) {
        int32_t ti = i < nin ? (i == 1 && l->info.role == MICA_ROLE_RECURRENCE
                                    ? l->inputs[0] : l->inputs[i])
                             : l->outputs[i - nin];
        io[i].format = MICA_FORMAT_LINEAR;
        io[i].scale = 1.0f;
        io[i].dtype = MICA_FLOAT32;
        if (ti >= 0) {
            io[i].format = (mica_format_t)e->tensors[ti].format;
            io[i].dtype = e->tensors[ti].dtype;
            io[i].dims = e->tensors[ti].dims;
            io[i].scale = e->tensors[ti].scale;
        }
        if (i < nin)
            in[i] = io[i].dtype;
    }
    mica__error_clear(&err);
    if (ops->output_dtypes(inst, in, nin, out, nout, &err) != MICA_OK)
        return mica__engine_layer_fail(e, s, &err, "output types rejected");
    for (i = 0; i < nout; i++)
        if (out[i] != e->tensors[l->outputs[i]].dtype)
            return mica__restore_bad(x, "layer", "'%s': output %d is %s in "
                                     "the file, implementation '%s' makes %s",
                                     l->name, (int)i,
                                     mica_dtype_name(e->tensors[l->outputs[i]]
                                                         .dtype),
                                     l->info.implementation,
                                     mica_dtype_name(out[i]));
    for (i = 0; i < nin; i++) {
        k = MICA__HAS_OP(ops, input_kind) ? ops->input_kind(inst, i, nin)
                                          : MICA_INPUT_DATA;
        if (k < MICA_INPUT_DATA || k > MICA_INPUT_DIMS)
            k = MICA_INPUT_DATA;
        if (k != l->input_kinds[i])
            return mica__restore_bad(x, "layer", "'%s': what it reads of "
                                     "input %d", l->name, (int)i);
    }
    for (i = 0; i < nin + nout; i++) {
        if (i < nin && l->inputs[i] < 0)
            continue;
        if (ops->supports_format(inst, i, io, nin, nout))
            continue;
        t = &e->tensors[i < nin ? l->inputs[i] : l->outputs[i - nin]];
        return mica__fail(x->ctx, MICA_ERR_UNSUPPORTED, "%s: layer '%s' (%s): "
                          "%s %d ('%s') of type %s is not supported by "
                          "implementation '%s'", x->l->what, l->name,
                          l->info.type, i < nin ? "input" : "output",
                          (int)(i < nin ? i : i - nin), t->name,
                          mica_dtype_name(t->dtype), l->info.implementation);
    }
    return MICA_OK;
}

mica_status_t mica__restore_check_layers(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    mica_status_t st;
    int32_t s;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        uint32_t role = l->info.role;
        if ((st = check_layer(x, s, l->instance)) != MICA_OK ||
            (l->host_instance && l->host_instance != l->instance &&
             (st = check_layer(x, s, l->host_instance)) != MICA_OK))
            return st;
        if (l->run_device && role != MICA_ROLE_NONE &&
            role != MICA_ROLE_IF_INPUT && role != MICA_ROLE_ASSERTION &&
            !MICA__HAS_OP(l->instance->ops, enqueue_boundary))
            return mica__restore_bad(x, "layer", "'%s': implementation '%s' "
                                     "has no enqueue_boundary", l->name,
                                     l->info.implementation);
    }
    return MICA_OK;
}

/* ---- profiles ----------------------------------------------------------- */

/* min <= opt <= max, each of rank n, dimensions >= 0. */
static int ordered(const mica_dims_t *a, const mica_dims_t *b,
                   const mica_dims_t *c, int32_t n)
{
    int32_t j;
    if (a->nb_dims != n || b->nb_dims != n || c->nb_dims != n)
        return 0;
    for (j = 0; j < n; j++)
        if (a->d[j] < 0 || a->d[j] > b->d[j] || b->d[j] > c->d[j])
            return 0;
    return 1;
}

/* Whether input tensor t has a runtime dimension or is a shape input. */
static int dynamic(const mica__tensor_t *t)
{
    int32_t j;
    for (j = 0; j < t->dims.nb_dims; j++)
        if (t->dims.d[j] < 0)
            return 1;
    return t->is_shape_input;
}

/* Input t's range in a profile (of the user's, or the implicit one):
 * what mica_network_set_profile_* allow, and one wherever t needs it. */
static int range_ok(const mica__tensor_t *t, const mica__range_t *r,
                    int user)
{
    int32_t j;
    if (!r->set)
        return !dynamic(t);
    if (!user || !ordered(&r->min, &r->opt, &r->max, t->dims.nb_dims))
        return 0;
    if (t->is_shape_input) {
        if (r->nb_values != t->shape.nb_values)
            return 0;
        for (j = 0; j < r->nb_values; j++)
            if (r->vmin[j] > r->vopt[j] || r->vopt[j] > r->vmax[j])
                return 0;
        return 1;
    }
    for (j = 0; j < t->dims.nb_dims; j++)
        if (t->dims.d[j] >= 0 && (r->min.d[j] != t->dims.d[j] ||
                                  r->max.d[j] != t->dims.d[j]))
            return 0;
    return r->nb_values == 0;
}

mica_status_t mica__restore_check_profiles(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t k, i;

    for (k = 0; k < e->nb_profiles; k++) {
        const mica__eprofile_t *p = &e->profiles[k];
        for (i = 0; i < e->nb_inputs; i++) {
            const mica__tensor_t *t = &e->tensors[e->input_index[i]];
            const mica__range_t *r = &p->ranges[i];
            if (!range_ok(t, r, e->nb_user_profiles > 0))
                return mica__restore_bad(x, "profile", "%d, input '%s'",
                                         (int)k, t->name);
        }
        for (i = 0; i < e->nb_tensors; i++)
            if (!ordered(&p->tmin[i], &p->topt[i], &p->tmax[i],
                         e->tensors[i].shape.nb_dims) ||
                p->bytes[i] < 0 || p->offset[i] < -1)
                return mica__restore_bad(x, "profile", "%d, tensor '%s'",
                                         (int)k, e->tensors[i].name);
    }
    return MICA_OK;
}

/* ---- memory plans ------------------------------------------------------- */

typedef struct block {
    int64_t offset, end;   /* [offset, end) in the arena */
    int32_t from, to;      /* lifetime, inclusive steps */
} block_t;

static int by_offset(const void *a, const void *b)
{
    const block_t *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* A block of `bytes` at `offset`, aligned and inside the arena, into v. */
static int place(block_t *v, int32_t *n, int64_t offset, int64_t bytes,
                 int32_t from, int32_t to, int64_t arena)
{
    int64_t size;
    if (bytes == 0)
        return offset == 0 || offset == -1;
    if (offset < 0 || offset % ARENA_ALIGN ||
        __builtin_add_overflow(bytes, ARENA_ALIGN - 1, &size))
        return 0;
    size -= size % ARENA_ALIGN;
    if (__builtin_add_overflow(offset, size, &v[*n].end) ||
        v[*n].end > arena)
        return 0;
    v[*n].offset = offset;
    v[*n].from = from;
    v[*n].to = to;
    (*n)++;
    return 1;
}

/* Profile k's saved plan: every block in place, none overlapping another
 * that lives at the same time, the arena as large as its last block.  A
 * tensor that takes over its input's memory is in its chain's block:
 * same offset, the block as large as the largest of the chain and as long
 * as the chain lives (gbytes, gto: per tensor, scratch). */
static int plan_holds(const mica_engine_t *e, int32_t k, block_t *v,
                      int64_t *gbytes, int32_t *gto)
{
    const mica__eprofile_t *p = &e->profiles[k];
    int64_t top = 0;
    int32_t i, j, r, n = 0;

    for (i = 0; i < e->nb_tensors; i++) {
        gbytes[i] = p->bytes[i];
        gto[i] = e->tensors[i].live_to;
    }
    for (i = 0; i < e->nb_tensors; i++) {
        if (e->tensors[i].alias < 0 || !e->tensors[i].need_e)
            continue;
        r = mica__alias_root(e, i);
        if (p->offset[i] != p->offset[r])
            return 0;
        if (p->bytes[i] > gbytes[r])
            gbytes[r] = p->bytes[i];
        if (gto[i] > gto[r])
            gto[r] = gto[i];
    }
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        /* a bound constant has no place in the arena (format 4; one of
         * format 3 has one, unused) */
        if (!t->need_e || t->alias >= 0 ||
            (t->const_host && p->offset[i] == -1))
            continue;
        if (!place(v, &n, p->offset[i], gbytes[i], t->live_from, gto[i],
                   p->arena_bytes))
            return 0;
    }
    for (i = 0; i < e->nb_layers; i++) {
        const mica__layer_t *l = &e->layers[i];
        int32_t from = i, to = i;
        if (l->construct >= 0 && l->info.role != MICA_ROLE_NONE) {
            from = e->constructs[l->construct].begin;
            to = e->constructs[l->construct].end - 1;
        }
        if (!place(v, &n, p->workspace_offset[i], p->workspace[i], from, to,
                   p->arena_bytes))
            return 0;
    }
    qsort(v, (size_t)n, sizeof *v, by_offset);
    for (i = 0; i < n; i++) {
        top = v[i].end > top ? v[i].end : top;
        for (j = i + 1; j < n && v[j].offset < v[i].end; j++)
            if (v[j].from <= v[i].to && v[i].from <= v[j].to)
                return 0;
    }
    return top == p->arena_bytes;
}

mica_status_t mica__restore_check_plans(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    size_t nb = (size_t)e->nb_tensors + (size_t)e->nb_layers + 1;
    int64_t *ws = calloc((size_t)e->nb_layers + 1, sizeof *ws);
    int64_t *gbytes = calloc((size_t)e->nb_tensors + 1, sizeof *gbytes);
    int32_t *gto = calloc((size_t)e->nb_tensors + 1, sizeof *gto);
    int32_t *saved = calloc((size_t)e->nb_tensors + 1, sizeof *saved);
    block_t *v = calloc(nb, sizeof *v);
    mica_status_t st = MICA_OK;
    int32_t k, s, t;
    int grew, moved = 0, rebound = 0;

    if (!ws || !gbytes || !gto || !saved || !v) {
        st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    /* In place: what the instances ask for now, against what the file
     * says; a module that changed its mind gets every plan made again. */
    for (t = 0; t < e->nb_tensors; t++)
        saved[t] = e->tensors[t].alias;
    if ((st = mica__inplace(e)) != MICA_OK)
        goto done;
    for (t = 0; t < e->nb_tensors; t++)
        moved |= saved[t] != e->tensors[t].alias;
    /* A file of format 3 gave its constants arena memory: bound now
     * (core/constants.c), they need none, and the plans are made again. */
    for (t = 0; t < e->nb_tensors; t++)
        for (k = 0; k < e->nb_profiles; k++)
            rebound |= e->tensors[t].const_host &&
                       e->profiles[k].offset[t] >= 0;
    /* A layer whose implementation a deploy-time choice swapped has no
     * tactic yet: the first its instance offers, as in a build. */
    if ((st = mica__default_tactics(e)) != MICA_OK)
        goto done;
    for (k = 0; k < e->nb_profiles && st == MICA_OK; k++) {
        mica__eprofile_t *p = &e->profiles[k];
        int64_t before = p->arena_bytes;
        if ((st = mica__configure_profile(e, k, ws)) != MICA_OK)
            break;
        if (!moved && !plan_holds(e, k, v, gbytes, gto)) {
            st = mica__restore_bad(x, "memory plan", "profile %d", (int)k);
            break;
        }
        for (s = 0, grew = moved || rebound; s < e->nb_layers; s++)
            if (ws[s] > p->workspace[s]) {
                p->workspace[s] = ws[s];
                grew = 1;
            }
        if (grew && (st = mica__plan_memory(e, k)) == MICA_OK)
            mica__log(x->ctx, MICA_LOG_INFO, "%s: profile %d now plans %lld "
                      "bytes (%lld when saved): %s", x->l->what, (int)k,
                      (long long)p->arena_bytes, (long long)before,
                      moved     ? "a module's in-place outputs changed"
                      : rebound ? "its constants are bound, not copied"
                                : "a module's workspace changed");
    }
    if (st == MICA_OK)
        st = mica__configure_host(e);
done:
    free(ws);
    free(gbytes);
    free(gto);
    free(saved);
    free(v);
    return st;
}
