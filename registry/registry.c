/*
 * registry/registry.c - the creator table of a context.
 *
 * Entries are kept sorted by (namespace, type, version, implementation),
 * byte order for the strings and numeric order for the version, so that
 * every (namespace, type) is one run of entries with its versions
 * ascending and, within a version, its implementations in name order.
 * A key is registered at most once: the first module to claim it keeps
 * it, later claims are load problems (nothing is silently replaced).
 *
 * Lookup (mica_registry_find):
 *   1. the entries of (ns, type), ns NULL meaning "";
 *   2. version 0 picks the highest registered version, whatever the
 *      implementation or device asked for (a lower version is another
 *      layer definition, never a silent fallback);
 *   3. implementation NULL means any, else exactly that name;
 *   4. device 0 means any, else the creator's devices must include one
 *      of the bits asked for;
 *   5. among what is left the highest priority wins; equal priorities
 *      go to the first implementation name in byte order.
 * A failed lookup says which step found nothing and what there is.
 */
#include <config.h>

#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "device.h"

/* ---- keys ---------------------------------------------------------------- */

const char *mica__creator_ns(const mica_layer_creator_t *c)
{
    return c->ns ? c->ns : "";
}

/* "Type" or "ns::Type" into buf. */
static char *type_display(const char *ns, const char *type, char *buf,
                          size_t len)
{
    if (ns && ns[0])
        snprintf(buf, len, "%s::%s", ns, type);
    else
        snprintf(buf, len, "%s", type);
    return buf;
}

char *mica__creator_key(const mica_layer_creator_t *c, char *buf, size_t len)
{
    char name[256];

    snprintf(buf, len, "%s v%d (implementation '%s')",
             type_display(mica__creator_ns(c), c->type, name, sizeof(name)),
             (int)c->version, c->implementation);
    return buf;
}

static int key_cmp(const mica_layer_creator_t *a, const mica_layer_creator_t *b)
{
    int r = strcmp(mica__creator_ns(a), mica__creator_ns(b));
    if (r)
        return r;
    r = strcmp(a->type, b->type);
    if (r)
        return r;
    if (a->version != b->version)
        return a->version < b->version ? -1 : 1;
    return strcmp(a->implementation, b->implementation);
}

/* ---- modules ------------------------------------------------------------- */

mica_status_t mica__registry_add_module(mica__registry_t *reg,
                                        mica__module_t *module)
{
    mica__module_t **grown;

    grown = realloc(reg->modules,
                    ((size_t)reg->nb_modules + 1) * sizeof(*grown));
    if (!grown)
        return MICA_ERR_NOMEM;
    reg->modules = grown;
    reg->modules[reg->nb_modules++] = module;
    return MICA_OK;
}

mica__module_t *mica__registry_module_by_path(const mica__registry_t *reg,
                                              const char *path)
{
    int32_t i;

    for (i = 0; i < reg->nb_modules; i++)
        if (strcmp(reg->modules[i]->path, path) == 0)
            return reg->modules[i];
    return NULL;
}

const char *mica__creator_file(const mica_context_t *ctx,
                               const mica_layer_creator_t *c)
{
    const mica__registry_t *reg = mica__registry_peek(ctx);
    int32_t i;

    for (i = 0; i < reg->nb_entries; i++)
        if (reg->entries[i].creator == c)
            return reg->entries[i].module->path;
    return NULL;
}

mica_status_t mica__registry_add_creator(mica_context_t *ctx,
                                         mica__module_t *module,
                                         const mica_layer_creator_t *c)
{
    mica__registry_t *reg = mica__registry_of(ctx);
    mica__entry_t *grown;
    int32_t lo = 0, hi;

    if (!reg)
        return MICA_ERR_NOMEM;
    hi = reg->nb_entries;
    /* Binary search for the first entry not below c. */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (key_cmp(reg->entries[mid].creator, c) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < reg->nb_entries && key_cmp(reg->entries[lo].creator, c) == 0) {
        char key[512];
        mica__problem(ctx, "%s: %s is already registered by %s; skipped",
                      module->path, mica__creator_key(c, key, sizeof(key)),
                      reg->entries[lo].module->path);
        return MICA_ERR_INVALID;
    }
    grown = realloc(reg->entries,
                    ((size_t)reg->nb_entries + 1) * sizeof(*grown));
    if (!grown)
        return MICA_ERR_NOMEM;
    reg->entries = grown;
    memmove(&reg->entries[lo + 1], &reg->entries[lo],
            (size_t)(reg->nb_entries - lo) * sizeof(*grown));
    reg->entries[lo].creator = c;
    reg->entries[lo].module = module;
    reg->nb_entries++;
    return MICA_OK;
}

/*
 * Release each module (newest first; its fini runs when no other context
 * holds it), dlclose it, free everything.
 */
/* Call each module's fini, dlclose it, and free the registry. */
static void registry_free(mica__registry_t *reg)
{
    /* MICA_NO_DLCLOSE keeps modules mapped: leak checkers then still
     * find the symbols of what a module leaked. */
    const char *keep = getenv("MICA_NO_DLCLOSE");
    int close_them = !(keep && keep[0] && strcmp(keep, "0") != 0);
    int32_t i;

    for (i = reg->nb_modules - 1; i >= 0; i--) {
        mica__module_t *m = reg->modules[i];
        mica__module_release(m);
        if (m->handle && close_them)
            dlclose(m->handle);
        free(m->path);
        while (m->nb_rules > 0)
            free(m->patterns[--m->nb_rules]);
        free(m->patterns);
        free(m->rules);
        free(m);
    }
    free(reg->modules);
    free(reg->entries);
    free(reg);
}

mica__registry_t *mica__registry_of(mica_context_t *ctx)
{
    if (!ctx->registry && (ctx->registry = calloc(1, sizeof(mica__registry_t))))
        ctx->registry_free = registry_free;
    return ctx->registry;
}

const mica__registry_t *mica__registry_peek(const mica_context_t *ctx)
{
    static const mica__registry_t empty;
    return ctx->registry ? ctx->registry : &empty;
}

/* ---- queries ------------------------------------------------------------- */

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/*
 * What the registry knows of entry e, into the caller's `out`: only as
 * many bytes as its struct_size declares (0: the struct's first layout,
 * up to `creator`), so that an application built against an older
 * header never gets bytes written past its struct.
 */
static void fill_info(const mica__entry_t *e, mica_creator_info_t *out)
{
    const mica_layer_creator_t *c = e->creator;
    const mica_module_desc_t *d = e->module->desc;
    mica_creator_info_t info;

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_version = d->abi_version;
    info.type = c->type;
    info.version = c->version;
    info.priority = c->priority;
    info.ns = mica__creator_ns(c);
    info.implementation = c->implementation;
    info.devices = c->devices;
    info.role = c->role;
    info.module_name = d->name && d->name[0] ? d->name
                                             : basename_of(e->module->path);
    info.module_version = d->version ? d->version : "";
    info.module_file = e->module->path;
    info.creator = c;
    info.module_license = d->license ? d->license : "";
    info.module_description = d->description ? d->description : "";
    mica__fill_out(out, &info, sizeof info,
                   offsetof(mica_creator_info_t, module_license));
}

/* Number of registered creators. */
int32_t mica_registry_count(const mica_context_t *ctx)
{
    return ctx ? mica__registry_peek(ctx)->nb_entries : 0;
}

/* Creator `index` in key order; MICA_ERR_INVALID when out of range. */
mica_status_t mica_registry_get(const mica_context_t *ctx, int32_t index,
                                mica_creator_info_t *info)
{
    if (!ctx || !info || index < 0 ||
        index >= mica__registry_peek(ctx)->nb_entries)
        return MICA_ERR_INVALID;
    fill_info(&mica__registry_peek(ctx)->entries[index], info);
    return MICA_OK;
}

/* A growing message: appends never overflow, they truncate. */
typedef struct msg {
    char buf[MICA_ERROR_MAX];
    size_t len;
} msg_t;

static void msg_add(msg_t *m, const char *fmt, ...) MICA_PRINTF(2, 3);
static void msg_add(msg_t *m, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (m->len >= sizeof(m->buf) - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(m->buf + m->len, sizeof(m->buf) - m->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        m->len += (size_t)n;
    if (m->len > sizeof(m->buf) - 1)
        m->len = sizeof(m->buf) - 1;
}

/* "cpu", "cuda", "cpu,cuda". */
static void msg_devices(msg_t *m, uint32_t devices)
{
    char buf[128];
    msg_add(m, "%s", mica__device_names(devices, ",", buf, sizeof buf));
}

/* Levenshtein distance of a and b, case-insensitive; capped inputs. */
static size_t distance(const char *a, const char *b)
{
    size_t row[65], la = strlen(a), lb = strlen(b), i, j;

    if (la > 64 || lb > 64)
        return (size_t)-1;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) !=
                          tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Whether `needle` occurs in `hay`, case-insensitive. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) ==
                   tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/*
 * The registered type name closest to `want` (ns::type in its "ns::Type"
 * form): a few edits away, or one containing the other (at least 3
 * characters).  The same type name in another namespace counts as one
 * edit.
 */
static void suggest(const mica__registry_t *reg, const char *ns,
                    const char *type, const char *want, char *out, size_t len)
{
    size_t best = (size_t)-1;
    int32_t i;

    out[0] = '\0';
    for (i = 0; i < reg->nb_entries; i++) {
        const mica_layer_creator_t *c = reg->entries[i].creator;
        char name[256];
        size_t d, lw = strlen(want), ln;

        if (i > 0 && strcmp(c->type, reg->entries[i - 1].creator->type) == 0 &&
            strcmp(mica__creator_ns(c),
                   mica__creator_ns(reg->entries[i - 1].creator)) == 0)
            continue;
        type_display(mica__creator_ns(c), c->type, name, sizeof(name));
        ln = strlen(name);
        d = distance(want, name);
        if (strcmp(mica__creator_ns(c), ns) != 0) {
            size_t dt = distance(type, c->type);
            if (dt != (size_t)-1 && dt + 1 < d)
                d = dt + 1;
        }
        if (!(d <= 2 && d < lw && d < ln) &&
            !((lw >= 3 && ln >= 3) &&
              (contains_ci(name, want) || contains_ci(want, name))))
            continue;
        if (d < best) {
            best = d;
            snprintf(out, len, "%s", name);
        }
    }
}

mica_status_t mica_registry_find(mica_context_t *ctx, const char *ns,
                                 const char *type, int32_t version,
                                 const char *implementation, uint32_t device,
                                 mica_creator_info_t *info)
{
    const mica__registry_t *reg;
    const mica__entry_t *best = NULL;
    int32_t first, end, vfirst, vend, i;
    char name[256];
    msg_t m;

    if (!ctx)
        return MICA_ERR_INVALID;
    if (!type || !info)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_registry_find: type and info are required");
    reg = mica__registry_peek(ctx);
    ns = ns ? ns : "";
    type_display(ns, type, name, sizeof(name));
    if (version < 0)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "%s: version %d is not valid (0 means the highest)",
                          name, (int)version);

    /* 1. the run of entries of (ns, type) */
    for (first = 0; first < reg->nb_entries; first++) {
        const mica_layer_creator_t *c = reg->entries[first].creator;
        if (strcmp(mica__creator_ns(c), ns) == 0 && strcmp(c->type, type) == 0)
            break;
    }
    for (end = first; end < reg->nb_entries; end++) {
        const mica_layer_creator_t *c = reg->entries[end].creator;
        if (strcmp(mica__creator_ns(c), ns) != 0 || strcmp(c->type, type) != 0)
            break;
    }
    if (first == end) {
        char near[256];
        suggest(reg, ns, type, name, near, sizeof(near));
        if (near[0])
            return mica__fail(ctx, MICA_ERR_NOT_FOUND,
                              "no layer type '%s' is registered "
                              "(did you mean '%s'?)", name, near);
        return mica__fail(ctx, MICA_ERR_NOT_FOUND,
                          "no layer type '%s' is registered", name);
    }

    /* 2. the version */
    if (version == 0)
        version = reg->entries[end - 1].creator->version;
    for (vfirst = first; vfirst < end; vfirst++)
        if (reg->entries[vfirst].creator->version == version)
            break;
    for (vend = vfirst; vend < end; vend++)
        if (reg->entries[vend].creator->version != version)
            break;
    if (vfirst == vend) {
        m.len = 0;
        m.buf[0] = '\0';
        msg_add(&m, "%s v%d is not registered (registered versions:", name,
                (int)version);
        for (i = first; i < end; i++) {
            int32_t v = reg->entries[i].creator->version;
            if (i == first || v != reg->entries[i - 1].creator->version)
                msg_add(&m, "%s %d", i == first ? "" : ",", (int)v);
        }
        msg_add(&m, ")");
        return mica__fail(ctx, MICA_ERR_NOT_FOUND, "%s", m.buf);
    }

    /* 3-5. implementation, device, priority */
    for (i = vfirst; i < vend; i++) {
        const mica_layer_creator_t *c = reg->entries[i].creator;
        if (implementation && strcmp(implementation, c->implementation) != 0)
            continue;
        if (device && !(c->devices & device))
            continue;
        if (!best || c->priority > best->creator->priority)
            best = &reg->entries[i];
    }
    if (best) {
        fill_info(best, info);
        return MICA_OK;
    }

    m.len = 0;
    m.buf[0] = '\0';
    if (implementation) {
        for (i = vfirst; i < vend; i++)
            if (strcmp(implementation,
                       reg->entries[i].creator->implementation) == 0)
                break;
        if (i < vend) {
            /* it exists, so the device ruled it out */
            msg_add(&m, "%s v%d implementation '%s' does not run on ", name,
                    (int)version, implementation);
            msg_devices(&m, device);
            msg_add(&m, " (devices: ");
            msg_devices(&m, reg->entries[i].creator->devices);
            msg_add(&m, ")");
            return mica__fail(ctx, MICA_ERR_NOT_FOUND, "%s", m.buf);
        }
        msg_add(&m, "%s v%d has no implementation '%s' (available:", name,
                (int)version, implementation);
        for (i = vfirst; i < vend; i++)
            msg_add(&m, "%s %s", i == vfirst ? "" : ",",
                    reg->entries[i].creator->implementation);
        msg_add(&m, ")");
        return mica__fail(ctx, MICA_ERR_NOT_FOUND, "%s", m.buf);
    }
    msg_add(&m, "%s v%d has no implementation for device ", name,
            (int)version);
    msg_devices(&m, device);
    msg_add(&m, " (available:");
    for (i = vfirst; i < vend; i++) {
        msg_add(&m, "%s %s[", i == vfirst ? "" : ",",
                reg->entries[i].creator->implementation);
        msg_devices(&m, reg->entries[i].creator->devices);
        msg_add(&m, "]");
    }
    msg_add(&m, ")");
    return mica__fail(ctx, MICA_ERR_NOT_FOUND, "%s", m.buf);
}
