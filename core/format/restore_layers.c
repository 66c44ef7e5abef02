/*
 * core/format/restore_layers.c - one layer of an engine file of format 3
 * restored: its record read (layer.c), its creator found for the engine's
 * device, its instance made from its saved state, and its CPU twin when
 * it computes shape tensors on the host and its implementation does not
 * run on the CPU.
 *
 * The implementation is the saved one, unless the layer did not pin its
 * own and a deploy-time choice (mica_context_set_prefer, $MICA_PREFER)
 * names another that is registered for the device: that one then takes
 * the saved state, as it would in a build.
 */
#include <config.h>

#include "restore.h"
#include "registry/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The implementation the deploy-time choice names for s, if it is usable
 * for `device` (into *info); else NULL, saying why once. */
static const char *deploy_choice(mica__restore_t *x,
                                 const mica__saved_layer_t *s,
                                 uint32_t device, char *buf, size_t len,
                                 mica_creator_info_t *info)
{
    const char *pref = mica__deploy_choice(x->ctx, s->type, buf, len);
    const char *source = x->ctx->prefer ? "the deploy-time choice"
                                        : "MICA_PREFER";

    if (!pref || (s->flags & MICA__SAVED_LAYER_PINNED) ||
        strcmp(pref, s->implementation) == 0)
        return NULL;
    if (mica_registry_find(x->ctx, s->ns, s->type, s->version, pref, device,
                           info) == MICA_OK)
        return source;
    mica__log(x->ctx, MICA_LOG_WARNING, "layer '%s': implementation '%s' of "
              "%s (from %s) is not usable (%s); using the saved one", s->name,
              pref, s->type, source, mica_context_error(x->ctx));
    return NULL;
}

/* The creator of implementation `impl` of s for `device` (0: any). */
static mica_status_t find(mica__restore_t *x, const mica__saved_layer_t *s,
                          const char *impl, uint32_t device,
                          mica_creator_info_t *info)
{
    char msg[MICA_ERROR_MAX];

    if (mica_registry_find(x->ctx, s->ns, s->type, s->version, impl, device,
                           info) == MICA_OK)
        return MICA_OK;
    snprintf(msg, sizeof msg, "%s", mica_context_error(x->ctx));
    return mica__fail(x->ctx, MICA_ERR_NOT_FOUND, "%s: layer '%s' needs "
                      "%s%s%s v%d (implementation '%s'): %s", x->l->what,
                      s->name, s->ns, s->ns[0] ? "::" : "", s->type,
                      (int)s->version, impl, msg);
}

/* An instance of creator c from saved state. */
static mica_status_t make(mica__restore_t *x, const mica__saved_layer_t *s,
                          const mica_layer_creator_t *c, const void *state,
                          size_t size, mica_layer_t **out)
{
    mica_error_t err;

    mica__error_clear(&err);
    *out = mica__instance_from_state(c, s->name, state, size,
                                     x->l->state_flags, &err);
    if (*out) { /* checked as a built engine's are (registry/check.c) */
        char prefix[768];
        snprintf(prefix, sizeof prefix, "%s: layer '%s' (%s)", x->l->what,
                 s->name, s->type);
        return mica__check_instance(x->ctx, c, out, "deserialize", prefix);
    }
    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: layer '%s' (%s, "
                      "implementation '%s'): %s", x->l->what, s->name,
                      s->type, c->implementation,
                      mica__error_msg(&err, "deserialize failed"));
}

/* Tell instance `inst` of s its saved tactic (none: nothing to tell). */
static mica_status_t tell_tactic(mica__restore_t *x,
                                 const mica__saved_layer_t *s,
                                 mica_layer_t *inst, int32_t tactic)
{
    mica_error_t err;

    if (!tactic)
        return MICA_OK;
    mica__error_clear(&err);
    if (!MICA__HAS_OP(inst->ops, set_tactic))
        return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: layer '%s' (%s): "
                          "the file chose its tactic %d, but its "
                          "implementation has no tactics", x->l->what,
                          s->name, s->type, (int)tactic);
    if (inst->ops->set_tactic(inst, tactic, &err) != MICA_OK)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "%s: layer '%s' (%s): "
                          "tactic %d: %s", x->l->what, s->name, s->type,
                          (int)tactic,
                          mica__error_msg(&err, "set_tactic failed"));
    return MICA_OK;
}

/* The record's strings and arrays, moved into engine layer l. */
static void take(mica__saved_layer_t *s, mica__layer_t *l)
{
    l->name = s->name;
    l->origin = s->origin;
    l->why = s->why;
    l->inputs = s->inputs;
    l->input_kinds = s->input_kinds;
    l->outputs = s->outputs;
    l->nb_inputs = s->nb_inputs;
    l->nb_outputs = s->nb_outputs;
    l->construct = s->construct;
    l->branch = s->branch;
    l->tactic = s->tactic;
    l->layer_pinned = (s->flags & MICA__SAVED_LAYER_PINNED) != 0;
    l->pinned = (s->flags & MICA__SAVED_PINNED) != 0;
    l->run_host = (s->flags & MICA__SAVED_RUN_HOST) != 0;
    l->run_device = (s->flags & MICA__SAVED_RUN_DEVICE) != 0;
    s->name = s->origin = s->why = NULL;
    s->inputs = s->input_kinds = s->outputs = NULL;
}

mica_status_t mica__restore_layer(mica__restore_t *x, int32_t step)
{
    mica_engine_t *e = x->e;
    mica__layer_t *l = &e->layers[step];
    mica__saved_layer_t s;
    const char *impl, *source;
    uint32_t device;
    int run_host;
    char buf[128];
    mica_status_t st;

    l->info.struct_size = sizeof l->info;
    l->host_info.struct_size = sizeof l->host_info;
    if (mica__saved_layer_read(x->r, e->nb_tensors, e->nb_constructs, &s) !=
        MICA_OK) {
        mica__saved_layer_free(&s);
        return mica__restore_bad(x, "layer", "number %d", (int)step);
    }
    device = (s.flags & MICA__SAVED_RUN_DEVICE) ? e->device : 0;
    run_host = (s.flags & MICA__SAVED_RUN_HOST) != 0;
    impl = s.implementation;
    if ((source = deploy_choice(x, &s, device, buf, sizeof buf,
                                &l->info))) {
        impl = buf;
        s.tactic = 0; /* the saved one was another implementation's */
        free(s.why);
        s.why = mica__strdup(source);
        s.flags |= MICA__SAVED_PINNED;
        if (!s.why) {
            st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
            goto done;
        }
    }
    if ((st = find(x, &s, impl, device, &l->info)) != MICA_OK ||
        (st = make(x, &s, l->info.creator, s.state, s.state_size,
                   &l->instance)) != MICA_OK ||
        (st = tell_tactic(x, &s, l->instance, s.tactic)) != MICA_OK)
        goto done;
    if (!run_host) {
        if (s.host_impl[0])
            st = mica__restore_bad(x, "layer", "'%s' has a CPU twin but "
                                   "computes nothing on the host", s.name);
        goto done;
    }
    if (l->info.devices & MICA_DEVICE_CPU) {
        l->host_info = l->info;
        l->host_instance = l->instance;
        goto done;
    }
    if (!s.host_impl[0]) {
        st = mica__restore_bad(x, "layer", "'%s' computes shape tensors on "
                               "the host but has no CPU implementation",
                               s.name);
        goto done;
    }
    if ((st = find(x, &s, s.host_impl, MICA_DEVICE_CPU, &l->host_info)) ==
        MICA_OK)
        st = make(x, &s, l->host_info.creator, s.host_state,
                  s.host_state_size, &l->host_instance);
done:
    take(&s, l); /* the engine frees them, whatever happened */
    mica__saved_layer_free(&s);
    return st;
}
