/*
 * core/format/legacy.c - engine files of formats 1 and 2 (the layout is
 * in core/format/format.h), which hold the network rather than the
 * engine: the whole payload is read into a network whose layers are made
 * from their saved state, implementation and version pinned, and that
 * network is built again for the saved device.
 */
#include <config.h>

#include "format.h"
#include "graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- payload -> network -------------------------------------------------- */

typedef struct load {
    mica__load_t *in;
    mica_context_t *ctx;
    const char *what;
    mica__in_t r;
    mica_network_t *net;
    uint32_t device;
    int64_t *plan;
    uint32_t nb_plan;
} load_t;

static mica_status_t corrupt(load_t *l, const char *where)
{
    l->in->r = l->r;
    return mica__load_corrupt(l->in, where);
}

static mica_status_t read_inputs(load_t *l)
{
    uint32_t n = mica__in_count(&l->r, 16), i;
    mica_status_t st = MICA_OK;

    for (i = 0; i < n && st == MICA_OK; i++) {
        char *name = mica__in_str(&l->r);
        uint32_t dtype = mica__in_u32(&l->r), is_shape = mica__in_u32(&l->r);
        mica_dims_t d;
        mica__in_dims(&l->r, &d);
        if (l->r.bad || !name || dtype >= MICA_DTYPE_COUNT_ || is_shape > 1)
            st = corrupt(l, "network input");
        else if (is_shape)
            st = mica_network_add_shape_input(l->net, name, &d, NULL);
        else
            st = mica_network_add_input(l->net, name, (mica_dtype_t)dtype, &d,
                                        NULL);
        free(name);
    }
    return l->r.bad && st == MICA_OK ? corrupt(l, "network inputs") : st;
}

static mica_status_t read_profiles(load_t *l)
{
    uint32_t n = mica__in_count(&l->r, 4), k;
    int32_t i, index;
    mica_status_t st = MICA_OK;

    for (k = 0; k < n && st == MICA_OK; k++) {
        if ((st = mica_network_add_profile(l->net, &index)) != MICA_OK)
            return st;
        for (i = 0; i < l->net->nb_inputs && st == MICA_OK; i++) {
            const char *name = l->net->inputs[i].name;
            mica_dims_t mn, op, mx;
            uint32_t nv;
            const int32_t *a, *b, *c;
            if (!mica__in_u32(&l->r))
                continue;
            mica__in_dims(&l->r, &mn);
            mica__in_dims(&l->r, &op);
            mica__in_dims(&l->r, &mx);
            nv = mica__in_count(&l->r, 12);
            a = mica__in_take(&l->r, 4 * (size_t)nv);
            b = mica__in_take(&l->r, 4 * (size_t)nv);
            c = mica__in_take(&l->r, 4 * (size_t)nv);
            if (l->r.bad)
                return corrupt(l, "profile");
            if (nv) {
                /* Copies: the data need not be aligned for int32_t. */
                int32_t *v = malloc(12 * (size_t)nv);
                if (!v)
                    return mica__fail(l->ctx, MICA_ERR_NOMEM, "out of host memory");
                memcpy(v, a, 4 * (size_t)nv);
                memcpy(v + nv, b, 4 * (size_t)nv);
                memcpy(v + 2 * nv, c, 4 * (size_t)nv);
                st = mica_network_set_profile_values(l->net, index, name,
                                                     (int32_t)nv, v, v + nv,
                                                     v + 2 * nv, NULL);
                free(v);
            } else {
                st = mica_network_set_profile_dims(l->net, index, name, &mn,
                                                   &op, &mx, NULL);
            }
        }
    }
    return l->r.bad && st == MICA_OK ? corrupt(l, "profiles") : st;
}

/* Free the n strings of v and v. */
static void free_names(char **v, uint32_t n)
{
    uint32_t i;
    for (i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static char **read_names(mica__in_t *r, uint32_t *n)
{
    char **v;
    uint32_t i;
    *n = mica__in_count(r, 4);
    v = calloc((size_t)*n + 1, sizeof *v);
    for (i = 0; v && i < *n; i++)
        if (!(v[i] = mica__in_str(r)))
            r->bad = 1;
    if (!v)
        r->bad = 1;
    return v;
}

static mica_status_t read_layer(load_t *l)
{
    mica__saved_layer_t s;
    const char *missing, *choice;
    char buf[128];
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica_status_t st = mica__saved_layer_read(&l->r, 0, 0, &s);

    if (st != MICA_OK) {
        st = corrupt(l, "layer");
        goto done;
    }
    /* Say what is missing before anything is built.  A layer that did not
     * pin its implementation takes the deploy-time choice, if any. */
    missing = s.implementation;
    if (!(s.flags & MICA__SAVED_LAYER_PINNED) &&
        (choice = mica__deploy_choice(l->ctx, s.type, buf, sizeof buf)) !=
            NULL &&
        mica_registry_find(l->ctx, s.ns, s.type, s.version, choice, 0,
                           &info) == MICA_OK)
        missing = choice;
    st = mica_registry_find(l->ctx, s.ns, s.type, s.version, missing, 0,
                            &info);
    if (st == MICA_OK && s.host_impl[0]) {
        missing = s.host_impl;
        st = mica_registry_find(l->ctx, s.ns, s.type, s.version, s.host_impl,
                                MICA_DEVICE_CPU, &info);
    }
    if (st != MICA_OK) {
        char msg[MICA_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", mica_context_error(l->ctx));
        st = mica__fail(l->ctx, st, "%s: layer '%s' needs %s%s%s v%d "
                        "(implementation '%s'): %s", l->what, s.name, s.ns,
                        s.ns[0] ? "::" : "", s.type, (int)s.version, missing,
                        msg);
        goto done;
    }
    st = mica__network_add_saved(l->net, &s, l->in->state_flags);
done:
    mica__saved_layer_free(&s);
    return st;
}

static mica_status_t read_outputs(load_t *l, int shapes)
{
    uint32_t n, i;
    char **names = read_names(&l->r, &n);
    mica_status_t st = l->r.bad ? corrupt(l, "outputs") : MICA_OK;

    for (i = 0; i < n && st == MICA_OK; i++)
        st = shapes ? mica_network_mark_shape_output(l->net, names[i], NULL)
                    : mica_network_mark_output(l->net, names[i], NULL);
    free_names(names, n);
    return st;
}

static mica_status_t read_payload(load_t *l)
{
    uint32_t n, i;
    mica_status_t st;

    l->device = mica__in_u32(&l->r);
    if (!mica__device_desc(l->device))
        return corrupt(l, "device");
    if ((st = read_inputs(l)) != MICA_OK || (st = read_profiles(l)) != MICA_OK)
        return st;
    n = mica__in_count(&l->r, 32);
    for (i = 0; i < n; i++)
        if ((st = read_layer(l)) != MICA_OK)
            return st;
    if (l->r.bad)
        return corrupt(l, "layers");
    if ((st = read_outputs(l, 0)) != MICA_OK ||
        (st = read_outputs(l, 1)) != MICA_OK)
        return st;
    l->nb_plan = mica__in_count(&l->r, 8);
    l->plan = calloc((size_t)l->nb_plan + 1, sizeof *l->plan);
    if (!l->plan)
        return mica__fail(l->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < l->nb_plan; i++)
        l->plan[i] = mica__in_i64(&l->r);
    n = mica__in_count(&l->r, 8);
    for (i = 0; i < n && !l->r.bad; i++) {
        char *name = mica__in_str(&l->r);
        const void *p = mica__in_take(&l->r, sizeof(float));
        float scale = 0;
        if (p)
            memcpy(&scale, p, sizeof scale);
        st = name && p ? mica_network_set_scale(l->net, name, scale, NULL)
                       : corrupt(l, "scale");
        free(name);
        if (st != MICA_OK)
            return st;
    }
    if (l->r.bad || l->r.pos != l->r.len)
        return corrupt(l, "memory plan or scales");
    return MICA_OK;
}

mica_status_t mica__load_legacy(mica__load_t *in, mica_engine_t **out)
{
    load_t l;
    mica_build_config_t cfg;
    mica_status_t st;
    uint32_t k;

    *out = NULL;
    memset(&l, 0, sizeof l);
    l.in = in;
    l.ctx = in->ctx;
    l.what = in->what;
    l.r = in->r;
    if ((st = mica_network_create(l.ctx, &l.net)) != MICA_OK ||
        (st = read_payload(&l)) != MICA_OK)
        goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = l.device;
    cfg.passes = "none"; /* the network as it was saved, from state */
    if ((st = mica_engine_build(l.net, &cfg, out)) != MICA_OK) {
        char msg[MICA_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", mica_context_error(l.ctx));
        st = mica__fail(l.ctx, st, "%s: %s", l.what, msg);
        goto done;
    }
    for (k = 0; k < l.nb_plan && (int32_t)k < (*out)->nb_profiles; k++)
        if (l.plan[k] != (*out)->profiles[k].arena_bytes)
            mica__log(l.ctx, MICA_LOG_INFO, "%s: profile %u now plans %lld "
                      "bytes (%lld when saved): a module's workspace changed",
                      l.what, (unsigned)k,
                      (long long)(*out)->profiles[k].arena_bytes,
                      (long long)l.plan[k]);
done:
    mica_network_destroy(l.net);
    free(l.plan);
    return st;
}
