/*
 * core/choose.c - the implementation of each layer for the engine's
 * device, by precedence: the layer's own pin, the manifest's
 * modules.prefer, the deploy-time choice (the context's or
 * $MICA_PREFER), a loaded engine's saved choice, then the highest
 * priority; a layer that only computes shape tensors may run on the host
 * alone.  Records why, for inspect.
 */
#include <config.h>

#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef mica__build_t build_t;

static const char *layer_at(const mica__net_layer_t *l, char *buf, size_t n)
{
    return mica__at(l->origin, buf, n);
}

/* The implementation `list` ("Type=impl,...") names for `type`, or NULL. */
static const char *named_in(const char *list, const char *type, char *buf,
                            size_t len)
{
    size_t tl = strlen(type);

    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > tl + 1 && strncmp(list, type, tl) == 0 && list[tl] == '=') {
            snprintf(buf, len, "%.*s", (int)(n - tl - 1), list + tl + 1);
            return buf;
        }
        list = end ? end + 1 : NULL;
    }
    return NULL;
}

/*
 * The implementation preferred for `type` and where the preference comes
 * from: the build configuration (the manifest's modules.prefer), then the
 * deploy-time choice (the context's, else $MICA_PREFER).  A loaded engine
 * has no build configuration.
 */
static const char *preferred(const build_t *b, const char *type, char *buf,
                             size_t len, const char **source)
{
    const char *impl;
    int32_t i;

    for (i = 0; b->cfg && i < b->cfg->nb_prefer; i++)
        if (strcmp(b->cfg->prefer_types[i], type) == 0) {
            *source = "modules.prefer";
            return b->cfg->prefer_impls[i];
        }
    *source = b->ctx->prefer ? "the deploy-time choice" : "MICA_PREFER";
    impl = mica__deploy_choice(b->ctx, type, buf, len);
    return impl;
}

const char *mica__deploy_choice(const mica_context_t *ctx, const char *type,
                                char *buf, size_t len)
{
    return named_in(ctx->prefer ? ctx->prefer : getenv("MICA_PREFER"), type,
                    buf, len);
}

/* "A, B, C": every type the registry knows, once each, into buf. */
static void known_types(mica_context_t *ctx, char *buf, size_t len)
{
    int32_t i, n = mica_registry_count(ctx);
    const char *last = "";
    size_t pos = 0;

    buf[0] = '\0';
    for (i = 0; i < n && pos < len; i++) {
        mica_creator_info_t info = {
            .struct_size = sizeof(mica_creator_info_t)};
        info.struct_size = sizeof info;
        if (mica_registry_get(ctx, i, &info) != MICA_OK ||
            strcmp(info.type, last) == 0)
            continue;
        last = info.type;
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "",
                                info.type);
    }
}

mica_status_t mica__deploy_check(mica_context_t *ctx)
{
    const char *list = ctx->prefer ? ctx->prefer : getenv("MICA_PREFER");
    const char *source = ctx->prefer ? "deploy-time choice" : "MICA_PREFER";
    char type[256], msg[MICA_ERROR_MAX], known[768];
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};

    while (list && *list) {
        const char *end = strchr(list, ','), *eq = strchr(list, '=');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (!eq || eq >= list + n || eq == list || eq == list + n - 1)
            return mica__fail(ctx, MICA_ERR_INVALID, "%s '%.*s' is not "
                              "Type=implementation", source, (int)n, list);
        snprintf(type, sizeof type, "%.*s", (int)(eq - list), list);
        info.struct_size = sizeof info;
        if (mica_registry_find(ctx, NULL, type, 0, NULL, 0, &info) ==
            MICA_ERR_NOT_FOUND) {
            snprintf(msg, sizeof msg, "%s", mica_context_error(ctx));
            known_types(ctx, known, sizeof known);
            return mica__fail(ctx, MICA_ERR_INVALID, "%s '%.*s': %s; the "
                              "known types are %s", source, (int)n, list, msg,
                              known[0] ? known : "none (no module loaded)");
        }
        list = end ? end + 1 : NULL;
    }
    return MICA_OK;
}

/*
 * Record why layer l got its implementation (a phrase for inspect), with
 * the network layer's note if it has one.
 */
static mica_status_t because_of(build_t *b, const mica__net_layer_t *nl,
                                mica__layer_t *l, int pinned, const char *fmt,
                                const char *arg)
{
    char *why = mica__asprintf(fmt, arg);
    free(l->why);
    l->why = why && nl->note ? mica__asprintf("%s; %s", why, nl->note) : why;
    if (l->why != why)
        free(why);
    l->pinned = pinned;
    return l->why ? MICA_OK
                  : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
}

#define because(b, l, pinned, fmt, arg) \
    because_of((b), nl, (l), (pinned), (fmt), (arg))

mica_status_t mica__choose(mica__build_t *b, const mica__net_layer_t *nl,
                           mica__layer_t *l)
{
    char pref_buf[128], at[512], msg[MICA_ERROR_MAX];
    const char *pref, *source = "", *name;
    mica_status_t st;
    uint32_t dev = b->validate_only ? 0 : b->e->device;
    int pinned = nl->implementation && (!nl->from_state || nl->state_pinned);

    if (!pinned &&
        (pref = preferred(b, nl->type, pref_buf, sizeof pref_buf, &source)) != NULL) {
        st = mica_registry_find(b->ctx, nl->ns, nl->type, nl->version, pref,
                                dev, &l->info);
        if (st == MICA_OK)
            return because(b, l, 1, "%s", source);
        /* Said once: not by a validation, not by a second build. */
        if (!b->validate_only && !b->again)
            mica__log(b->ctx, MICA_LOG_WARNING,
                      "layer '%s': implementation '%s' of %s (from %s) is "
                      "not usable (%s); using the %s", nl->name, pref,
                      nl->type, source, mica_context_error(b->ctx),
                      nl->from_state ? "saved one" : "default");
    }
    name = pinned || nl->from_state ? nl->implementation : NULL;
    st = mica_registry_find(b->ctx, nl->ns, nl->type, nl->version, name, dev,
                            &l->info);
    if (st == MICA_OK) {
        if (pinned) {
            l->layer_pinned = 1;
            return because(b, l, 1, "%s", "pinned by the layer");
        }
        if (nl->from_state)
            return because(b, l, 1, "%s", nl->saved_why && nl->saved_why[0]
                                              ? nl->saved_why
                                              : "chosen at build time");
        return because(b, l, 0, "the highest priority for %s",
                       dev ? mica__device_desc(dev)->name : "any device");
    }
    snprintf(msg, sizeof msg, "%slayer '%s': %s", layer_at(nl, at, sizeof at),
             nl->name, mica_context_error(b->ctx));
    /* A layer that only computes shape tensors (or checks them) runs on
     * the host: any implementation will do until the kinds are known. */
    if (dev != 0 && mica_registry_find(b->ctx, nl->ns, nl->type, nl->version,
                                       name, 0, &l->info) == MICA_OK) {
        l->device_error = mica__strdup(msg);
        return l->device_error
                   ? because(b, l, pinned, "%s", "runs on the host only")
                   : mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    return mica__fail(b->ctx, st, "%s", msg);
}

mica_status_t mica__check_devices(mica__build_t *b)
{
    int32_t s;
    for (s = 0; s < b->e->nb_layers; s++) {
        const mica__layer_t *l = &b->e->layers[s];
        if (l->run_device && l->device_error)
            return mica__fail(b->ctx, MICA_ERR_NOT_FOUND, "%s",
                              l->device_error);
    }
    return MICA_OK;
}
