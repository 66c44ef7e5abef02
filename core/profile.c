/*
 * core/profile.c - optimization profiles at build time: how a build turns
 * the network's (core/network_profile.c) into per-profile ranges,
 * configurations and memory plans.
 *
 * At build time each profile's min, opt and max points are run through
 * phase 1 (core/shapes.c); the dimensions found there give every layer's
 * configure() its ranges and every tensor its largest size, for which the
 * profile's arena is planned.  A run whose shapes need more than planned
 * (possible only with data-dependent shapes) is refused, never overrun.
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dynamic_input(const mica__net_input_t *in)
{
    int32_t j;
    for (j = 0; j < in->dims.nb_dims; j++)
        if (in->dims.d[j] < 0)
            return 1;
    return in->is_shape;
}

/* Every dynamic input is in every profile, and there is one at least. */
static mica_status_t check_coverage(mica__build_t *b)
{
    const mica_network_t *net = b->net;
    char at[512], dims[256];
    int32_t i, k;

    for (i = 0; i < net->nb_inputs; i++) {
        const mica__net_input_t *in = &net->inputs[i];
        if (!dynamic_input(in))
            continue;
        mica__dims_text(&in->dims, dims, sizeof dims);
        if (net->nb_profiles == 0)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%sinput '%s' %s: the network needs an "
                              "optimization profile that gives its min/opt/"
                              "max %s", mica__at(in->origin, at, sizeof at),
                              in->name,
                              in->is_shape ? "is a shape tensor"
                                           : "has a runtime dimension",
                              in->is_shape ? "values" : "dims");
        for (k = 0; k < net->nb_profiles; k++)
            if (net->profiles[k].nb_ranges <= i ||
                !net->profiles[k].ranges[i].set)
                return mica__fail(b->ctx, MICA_ERR_INVALID,
                                  "%sprofile %d does not give input '%s' "
                                  "(shape %s%s)",
                                  mica__at(in->origin, at, sizeof at),
                                  (int)k, in->name, dims,
                                  in->is_shape ? ", a shape tensor" : "");
    }
    return MICA_OK;
}

static mica_status_t alloc_profile(mica__build_t *b, int32_t k)
{
    mica_engine_t *e = b->e;
    mica__eprofile_t *p = &e->profiles[k];
    size_t nt = (size_t)e->nb_tensors + 1, nl = (size_t)e->nb_layers + 1;
    int32_t i;

    p->ranges = calloc((size_t)e->nb_inputs + 1, sizeof *p->ranges);
    p->tmin = calloc(nt, sizeof *p->tmin);
    p->topt = calloc(nt, sizeof *p->topt);
    p->tmax = calloc(nt, sizeof *p->tmax);
    p->bytes = calloc(nt, sizeof *p->bytes);
    p->offset = calloc(nt, sizeof *p->offset);
    p->workspace = calloc(nl, sizeof *p->workspace);
    p->workspace_offset = calloc(nl, sizeof *p->workspace_offset);
    if (!p->ranges || !p->tmin || !p->topt || !p->tmax || !p->bytes ||
        !p->offset || !p->workspace || !p->workspace_offset)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; k < b->net->nb_profiles && i < b->net->profiles[k].nb_ranges; i++) {
        const mica__range_t *r = &b->net->profiles[k].ranges[i];
        mica__range_t *c = &p->ranges[i];
        size_t bytes = sizeof(int32_t) * (size_t)(r->nb_values + 1);
        if (!r->set)
            continue;
        *c = *r;
        c->origin = NULL;
        c->vmin = c->vopt = c->vmax = NULL;
        if (r->nb_values) {
            c->vmin = malloc(bytes);
            c->vopt = malloc(bytes);
            c->vmax = malloc(bytes);
            if (!c->vmin || !c->vopt || !c->vmax)
                return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
            memcpy(c->vmin, r->vmin, bytes - sizeof(int32_t));
            memcpy(c->vopt, r->vopt, bytes - sizeof(int32_t));
            memcpy(c->vmax, r->vmax, bytes - sizeof(int32_t));
        }
    }
    return MICA_OK;
}

/* Phase 1 at profile k's min (0), opt (1) or max (2) point. */
static mica_status_t corner(mica__build_t *b, int32_t k, int which,
                            mica__shapes_t *s, mica_dims_t *input_dims)
{
    static const char *const names[] = {"min", "opt", "max"};
    mica_engine_t *e = b->e;
    char msg[MICA_ERROR_MAX];
    int32_t i;
    mica_status_t st;

    for (i = 0; i < e->nb_inputs; i++) {
        const mica__range_t *r = &e->profiles[k].ranges[i];
        int32_t t = e->input_index[i];
        input_dims[i] = b->net->inputs[i].dims;
        if (!r->set)
            continue;
        input_dims[i] = which == 0 ? r->min : which == 1 ? r->opt : r->max;
        if (r->nb_values) {
            const int32_t *v = which == 0 ? r->vmin : which == 1 ? r->vopt : r->vmax;
            size_t bytes = sizeof(int32_t) * (size_t)r->nb_values;
            if (s->host_cap[t] < bytes) {
                void *grown = realloc(s->host[t], bytes);
                if (!grown)
                    return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
                s->host[t] = grown;
                s->host_cap[t] = bytes;
            }
            memcpy(s->host[t], v, bytes);
        }
    }
    st = mica__shapes_run(e, s, input_dims, 0, NULL);
    if (st != MICA_OK && e->nb_user_profiles > 0) {
        snprintf(msg, sizeof msg, "%s", mica_context_error(b->ctx));
        return mica__fail(b->ctx, st, "profile %d, at its %s point: %s",
                          (int)k, names[which], msg);
    }
    return st;
}

/* The corners ran with every data-dependent size at its bound: a
 * dimension that depends on one may be as small as 0. */
static mica_status_t smallest_sizes(mica_engine_t *e, int32_t k)
{
    uint8_t *mask = calloc((size_t)e->nb_symbols + 1, 1);
    int32_t t, j;

    if (!mask)
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (t = 0; t < e->nb_tensors; t++)
        for (j = 0; j < e->tensors[t].shape.nb_dims; j++)
            if (mica__dds_depends(e, e->tensors[t].shape.d[j], mask))
                e->profiles[k].tmin[t].d[j] = 0;
    free(mask);
    return MICA_OK;
}

/* Ranges and sizes of profile k from its three points. */
static mica_status_t measure(mica__build_t *b, int32_t k, mica__shapes_t *s,
                             mica_dims_t *input_dims)
{
    mica_engine_t *e = b->e;
    mica__eprofile_t *p = &e->profiles[k];
    int which, t, j;
    mica_status_t st;

    for (which = 0; which < 3; which++) {
        if ((st = corner(b, k, which, s, input_dims)) != MICA_OK)
            return st;
        for (t = 0; t < e->nb_tensors; t++) {
            const mica_dims_t *d = &s->dims[t];
            int64_t bytes = mica_dims_volume(d) *
                            (int64_t)mica_dtype_size(e->tensors[t].dtype);
            if (which == 1)
                p->topt[t] = *d;
            if (which == 0) {
                p->tmin[t] = p->tmax[t] = *d;
            } else {
                for (j = 0; j < d->nb_dims; j++) {
                    if (d->d[j] < p->tmin[t].d[j])
                        p->tmin[t].d[j] = d->d[j];
                    if (d->d[j] > p->tmax[t].d[j])
                        p->tmax[t].d[j] = d->d[j];
                }
            }
            if (e->tensors[t].need_e && bytes > p->bytes[t])
                p->bytes[t] = bytes;
        }
    }
    return e->nb_size_syms ? smallest_sizes(e, k) : MICA_OK;
}

mica_status_t mica__configure_profile(mica_engine_t *e, int32_t k,
                                     int64_t *workspace)
{
    int32_t s;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica_layer_ops_t *ops = l->instance->ops;
        mica_dyn_desc_t dyn[128];
        mica_error_t err;
        size_t ws;
        workspace[s] = 0;
        if (!l->run_device)
            continue;
        mica__layer_dyn_descs(e, l, k, dyn);
        mica__error_clear(&err);
        if (ops->configure &&
            ops->configure(l->instance, dyn, l->nb_inputs, dyn + l->nb_inputs,
                           l->nb_outputs, &err) != MICA_OK)
            return mica__engine_layer_fail(e, s, &err, "configure failed");
        ws = ops->workspace_size
                 ? ops->workspace_size(l->instance, dyn, l->nb_inputs,
                                       dyn + l->nb_inputs, l->nb_outputs)
                 : 0;
        if (ws > (size_t)MICA_MAX_TENSOR_BYTES) {
            char at[512];
            return mica__fail(e->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): profile %d: a workspace of "
                              "%zu bytes, more than the 2^48 a layer may "
                              "ask for", mica__at(l->origin, at, sizeof at),
                              l->name, l->info.type, (int)k, ws);
        }
        workspace[s] = (int64_t)ws;
    }
    return MICA_OK;
}

void mica__host_ranges(const mica_engine_t *e, const mica__layer_t *l,
                       mica_dyn_desc_t *all)
{
    mica_dyn_desc_t dyn[128];
    int32_t k, i, j, n = l->nb_inputs + l->nb_outputs;

    for (k = 0; k < e->nb_profiles; k++) {
        mica__layer_dyn_descs(e, l, k, dyn);
        for (i = 0; i < n; i++) {
            if (k == 0) {
                all[i] = dyn[i];
                continue;
            }
            for (j = 0; j < dyn[i].min.nb_dims; j++) {
                if (dyn[i].min.d[j] < all[i].min.d[j])
                    all[i].min.d[j] = dyn[i].min.d[j];
                if (dyn[i].max.d[j] > all[i].max.d[j])
                    all[i].max.d[j] = dyn[i].max.d[j];
            }
        }
    }
}

mica_status_t mica__configure_host(mica_engine_t *e)
{
    int32_t s;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        mica_dyn_desc_t all[128];
        mica_error_t err;
        if (!l->run_host || !l->host_instance ||
            (l->host_instance == l->instance && l->run_device) ||
            !l->host_instance->ops->configure)
            continue;
        mica__host_ranges(e, l, all);
        mica__error_clear(&err);
        if (l->host_instance->ops->configure(l->host_instance, all,
                                             l->nb_inputs, all + l->nb_inputs,
                                             l->nb_outputs, &err) != MICA_OK)
            return mica__engine_layer_fail(e, s, &err, "configure failed");
    }
    return MICA_OK;
}

mica_status_t mica__build_profiles(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    mica__shapes_t s;
    mica_dims_t *input_dims;
    mica_status_t st;
    int32_t k;

    if ((st = check_coverage(b)) != MICA_OK)
        return st;
    e->nb_user_profiles = b->net->nb_profiles;
    e->nb_profiles = e->nb_user_profiles > 0 ? e->nb_user_profiles : 1;
    e->profiles = calloc((size_t)e->nb_profiles, sizeof *e->profiles);
    input_dims = calloc((size_t)e->nb_inputs + 1, sizeof *input_dims);
    if (!e->profiles || !input_dims) {
        free(input_dims);
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if ((st = mica__shapes_init(e, &s)) != MICA_OK) {
        free(input_dims);
        return st;
    }
    for (k = 0; k < e->nb_profiles && st == MICA_OK; k++) {
        if ((st = alloc_profile(b, k)) != MICA_OK ||
            (st = measure(b, k, &s, input_dims)) != MICA_OK)
            break;
        if (k == 0 && b->autotune && !b->validate_only && !b->facts &&
            (st = mica__autotune(b)) != MICA_OK)
            break;
        if (k == 0 && !b->validate_only && !b->facts &&
            (st = mica__default_tactics(e)) != MICA_OK)
            break;
        if (!b->validate_only && !b->facts &&
            ((st = mica__configure_profile(e, k, e->profiles[k].workspace)) !=
                 MICA_OK ||
             (st = mica__plan_memory(e, k)) != MICA_OK))
            break;
    }
    if (st == MICA_OK && !b->validate_only && !b->facts)
        st = mica__configure_host(e);
    mica__shapes_free(e, &s);
    free(input_dims);
    return st;
}
