/*
 * core/instance.c - one layer's instance at build time: created from its
 * params (checked for its creator's schema) or from its saved state, its
 * output count checked; and the message of a layer's failure.
 */
#include <config.h>

#include "build.h"
#include "registry/host.h"
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *layer_at(const mica__net_layer_t *l, char *buf, size_t n)
{
    return mica__at(l->origin, buf, n);
}

mica_status_t mica__layer_fail(mica__build_t *b, int32_t step,
                               const mica_error_t *err, const char *fallback)
{
    const mica__net_layer_t *nl = mica__net_layer(b, step);
    char at[512];
    return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                      layer_at(nl, at, sizeof at), nl->name, nl->type,
                      mica__error_msg(err, fallback));
}

mica_status_t mica__instance_check(mica_context_t *ctx,
                                   const mica_layer_creator_t *c,
                                   const mica__net_layer_t *nl,
                                   mica_layer_t **inst, const char *how)
{
    char prefix[768], at[512];
    snprintf(prefix, sizeof prefix, "%slayer '%s' (%s)",
             layer_at(nl, at, sizeof at), nl->name, nl->type);
    return mica__check_instance(ctx, c, inst, how, prefix);
}

mica_layer_t *mica__instance_from_state(const mica_layer_creator_t *c,
                                        const char *name, const void *data,
                                        size_t size, uint32_t flags,
                                        mica_error_t *err)
{
    char why[MICA_ERROR_MAX];

    /* Fields from a file have not met the validator: they do now, before
     * the module sees them, whatever the module checks itself. */
    if (mica__fields_form_is(data, size) &&
        mica__fields_form_check(c, data, size, why, sizeof why) != MICA_OK) {
        mica__host()->set_error(err, "saved state: %s", why);
        return NULL;
    }
    if (MICA__HAS_CREATOR_OP(c, deserialize_ex))
        return c->deserialize_ex(c, name, data, size, flags, err);
    if (c->deserialize)
        return c->deserialize(c, name, data, size, err);
    mica__host()->set_error(err, "%s v%d (implementation '%s') cannot be "
                         "deserialized (no deserialize)", c->type,
                         (int)c->version, c->implementation);
    return NULL;
}

mica_layer_t *mica__from_state(const mica_layer_creator_t *c,
                               const mica__net_layer_t *nl, int host,
                               mica_error_t *err)
{
    if (host && nl->host_state)
        return mica__instance_from_state(c, nl->name, nl->host_state,
                                         nl->host_state_size,
                                         nl->state_flags, err);
    return mica__instance_from_state(c, nl->name, nl->state, nl->state_size,
                                     nl->state_flags, err);
}

mica_status_t mica__instantiate(mica__build_t *b,
                                const mica__net_layer_t *nl,
                                mica__layer_t *l)
{
    const mica_layer_creator_t *c = l->info.creator;
    mica_error_t err;
    char at[512];
    int32_t n;

    if (nl->from_state) {
        if (!c->deserialize && !MICA__HAS_CREATOR_OP(c, deserialize_ex))
            return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                              "%slayer '%s': %s v%d (implementation '%s') "
                              "cannot be deserialized (no deserialize)",
                              layer_at(nl, at, sizeof at), nl->name, c->type,
                              (int)c->version, c->implementation);
        mica__error_clear(&err);
        l->instance = mica__from_state(c, nl, 0, &err);
        if (!l->instance)
            return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                              layer_at(nl, at, sizeof at), nl->name, nl->type,
                              mica__error_msg(&err, "deserialize failed"));
        if (mica__instance_check(b->ctx, c, nl, &l->instance,
                                 "deserialize") != MICA_OK)
            return MICA_ERR_INVALID;
        goto created;
    }
    if (mica__net_layer_params(b->net, (mica__net_layer_t *)nl, c,
                               &l->params) != MICA_OK)
        return MICA_ERR_INVALID;
    mica__error_clear(&err);
    l->instance = c->create(c, nl->name, l->params, &err);
    if (!l->instance)
        return mica__fail(b->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                          layer_at(nl, at, sizeof at), nl->name, nl->type,
                          mica__error_msg(&err, "create failed"));
    if (mica__instance_check(b->ctx, c, nl, &l->instance, "create") !=
        MICA_OK)
        return MICA_ERR_INVALID;
created:
    n = l->instance->ops->nb_outputs(l->instance);
    if (n != nl->nb_outputs)
        return mica__fail(b->ctx, MICA_ERR_INVALID,
                          "%slayer '%s' (%s): it has %d output%s but the "
                          "layer lists %d", layer_at(nl, at, sizeof at),
                          nl->name, nl->type, (int)n, n == 1 ? "" : "s",
                          (int)nl->nb_outputs);
    return MICA_OK;
}
