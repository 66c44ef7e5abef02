/*
 * core/deserialize.c - reading engine files (the layout is in
 * core/engine_format.h).
 *
 * Every read is bounds-checked; the header, the checksum and the whole
 * payload are checked before anything is built, then the payload becomes
 * a network whose layers are made from their saved state with their
 * implementation and version pinned, and that network is built for the
 * saved device.  Whatever the bytes, the result is an engine or one line
 * saying what is wrong.
 *
 * Nothing here copies a layer's state: layers get pointers into the
 * bytes.  mica_engine_load maps the file (core/engine_file.c) (or, where it cannot, reads it
 * into one buffer) and gives the mapping to the engine, which releases it
 * after its layers; so do the caller's bytes given to
 * mica_engine_deserialize_borrow.  In both cases layers are told
 * MICA_STATE_PERSISTENT and may use their weights in place; after
 * mica_engine_deserialize they copy what they keep.
 */
#include <config.h>

#include "engine_format.h"
#include "graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- payload -> network -------------------------------------------------- */

typedef struct load {
    mica_context_t *ctx;
    const char *what;       /* "engine file 'x.engine'" or "engine" */
    uint32_t state_flags;   /* for the layers' deserialize_ex */
    mica__in_t r;
    mica_network_t *net;
    uint32_t device;
    int64_t *plan;
    uint32_t nb_plan;
} load_t;

static mica_status_t corrupt(load_t *l, const char *where)
{
    return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is corrupt: bad %s",
                      l->what, where);
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
    mica_layer_spec_t spec;
    char *name = mica__in_str(&l->r), *origin = mica__in_str(&l->r);
    char *ns = mica__in_str(&l->r), *type = mica__in_str(&l->r);
    uint32_t version = mica__in_u32(&l->r), nb_in, nb_out, i;
    char *impl = mica__in_str(&l->r);
    uint32_t flags = mica__in_u32(&l->r);
    char *why = mica__in_str(&l->r);
    char *loop = l->r.format >= 2 ? mica__in_str(&l->r) : mica__strdup("");
    char *cond = l->r.format >= 2 ? mica__in_str(&l->r) : mica__strdup("");
    char **ins = read_names(&l->r, &nb_in);
    char **outs = read_names(&l->r, &nb_out), *host_impl;
    const void *state, *host_state;
    const char *missing, *choice;
    char buf[128];
    size_t state_size, host_size;
    mica_creator_info_t info;
    mica_status_t st;

    state = mica__in_state(&l->r, &state_size);
    host_impl = mica__in_str(&l->r);
    host_state = mica__in_state(&l->r, &host_size);
    if (l->r.bad || !name || !ns || !type || !impl || !host_impl || !why ||
        !loop || !cond ||
        version < 1 || version > INT32_MAX || flags > 1) {
        st = corrupt(l, "layer");
        goto done;
    }
    for (i = 0; i < nb_in; i++)
        if (!ins[i][0]) { /* "" stands for an omitted input */
            free(ins[i]);
            ins[i] = NULL;
        }
    /* Say what is missing before anything is built.  A layer that did not
     * pin its implementation takes the deploy-time choice, if any. */
    missing = impl;
    if (!(flags & 1) && (choice = mica__deploy_choice(l->ctx, type, buf,
                                                       sizeof buf)) != NULL &&
        mica_registry_find(l->ctx, ns, type, (int32_t)version, choice, 0,
                           &info) == MICA_OK)
        missing = choice;
    st = mica_registry_find(l->ctx, ns, type, (int32_t)version, missing, 0,
                            &info);
    if (st == MICA_OK && host_impl[0]) {
        missing = host_impl;
        st = mica_registry_find(l->ctx, ns, type, (int32_t)version, host_impl,
                                MICA_DEVICE_CPU, &info);
    }
    if (st != MICA_OK) {
        char msg[MICA_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", mica_context_error(l->ctx));
        st = mica__fail(l->ctx, st, "%s: layer '%s' needs %s%s%s v%u "
                        "(implementation '%s'): %s", l->what, name, ns,
                        ns[0] ? "::" : "", type, (unsigned)version, missing,
                        msg);
        goto done;
    }
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.ns = ns;
    spec.version = (int32_t)version;
    spec.implementation = impl;
    spec.loop = loop[0] ? loop : NULL;
    spec.conditional = cond[0] ? cond : NULL;
    spec.nb_inputs = (int32_t)nb_in;
    spec.inputs = (const char *const *)ins;
    spec.nb_outputs = (int32_t)nb_out;
    spec.outputs = (const char *const *)outs;
    spec.origin = origin[0] ? origin : NULL;
    st = mica__network_add_state_layer(l->net, &spec, (int32_t)flags, why,
                                       state, state_size,
                                       host_impl[0] ? host_impl : NULL,
                                       host_state, host_size,
                                       l->state_flags);
done:
    free(name);
    free(origin);
    free(ns);
    free(type);
    free(impl);
    free(why);
    free(host_impl);
    free(loop);
    free(cond);
    free_names(ins, nb_in);
    free_names(outs, nb_out);
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

/* Header checks; on success r covers the payload. */
static mica_status_t check_header(load_t *l, const unsigned char *data,
                                  size_t size)
{
    uint32_t format, abi;
    uint64_t payload, sum;

    if (size < 8 || memcmp(data, ENGINE_MAGIC, 8) != 0)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is not a mica engine "
                          "(no MICAENG header)", l->what);
    if (size < HEADER_BYTES)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is truncated: %zu "
                          "bytes, shorter than its %d-byte header", l->what,
                          size, HEADER_BYTES);
    memcpy(&format, data + 8, 4);
    memcpy(&abi, data + 12, 4);
    memcpy(&payload, data + 16, 8);
    memcpy(&sum, data + 24, 8);
    if (format > ENGINE_FORMAT || format < ENGINE_FORMAT_MIN)
        return mica__fail(l->ctx, MICA_ERR_UNSUPPORTED, "%s has format "
                          "version %u; this mica reads versions %d to %d",
                          l->what, (unsigned)format, ENGINE_FORMAT_MIN,
                          ENGINE_FORMAT);
    if (abi > MICA_ABI_VERSION || abi < MICA_ABI_VERSION_MIN)
        return mica__fail(l->ctx, MICA_ERR_ABI, "%s was built with ABI "
                          "version %u; this mica supports %d..%d", l->what,
                          (unsigned)abi, MICA_ABI_VERSION_MIN,
                          MICA_ABI_VERSION);
    if (payload != size - HEADER_BYTES)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is truncated or has "
                          "trailing bytes: %llu bytes of contents, the header "
                          "says %llu", l->what,
                          (unsigned long long)(size - HEADER_BYTES),
                          (unsigned long long)payload);
    if (mica__checksum(data + HEADER_BYTES, size - HEADER_BYTES) != sum)
        return mica__fail(l->ctx, MICA_ERR_INVALID, "%s is corrupt: its "
                          "checksum does not match its contents", l->what);
    l->r.p = data + HEADER_BYTES;
    l->r.len = size - HEADER_BYTES;
    l->r.format = format;
    return MICA_OK;
}

/*
 * The engine of `size` bytes at `data`, built for its saved device.
 * `keep` says what the engine takes over on success: 0 nothing (the
 * caller's bytes: mica_engine_deserialize, whose layers must copy what
 * they keep, or mica_engine_deserialize_borrow, which tells them they need
 * not), 1 a malloc'd buffer, 2 a mapping.  With keep, or `persistent`, the
 * layers are told MICA_STATE_PERSISTENT.  On failure the bytes stay the
 * caller's.
 */
static mica_status_t load_bytes(mica_context_t *ctx, const char *what,
                                const void *data, size_t size, int keep,
                                int persistent, mica_engine_t **out)
{
    load_t l;
    mica_build_config_t cfg;
    mica_status_t st;
    uint32_t k;

    *out = NULL;
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.what = what;
    l.state_flags = keep || persistent ? MICA_STATE_PERSISTENT : 0;
    if ((st = check_header(&l, data, size)) != MICA_OK ||
        (st = mica_network_create(ctx, &l.net)) != MICA_OK ||
        (st = read_payload(&l)) != MICA_OK)
        goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = l.device;
    if ((st = mica_engine_build(l.net, &cfg, out)) != MICA_OK) {
        char msg[MICA_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", mica_context_error(ctx));
        st = mica__fail(ctx, st, "%s: %s", what, msg);
        goto done;
    }
    if (keep) {
        (*out)->bytes = (void *)data;
        (*out)->bytes_size = size;
        (*out)->bytes_unmap = keep == 2;
    }
    for (k = 0; k < l.nb_plan && (int32_t)k < (*out)->nb_profiles; k++)
        if (l.plan[k] != (*out)->profiles[k].arena_bytes)
            mica__log(ctx, MICA_LOG_INFO, "%s: profile %u now plans %lld "
                      "bytes (%lld when saved): a module's workspace changed",
                      what, (unsigned)k,
                      (long long)(*out)->profiles[k].arena_bytes,
                      (long long)l.plan[k]);
done:
    mica_network_destroy(l.net);
    free(l.plan);
    return st;
}

mica_status_t mica_engine_deserialize(mica_context_t *ctx, const void *data,
                                      size_t size, mica_engine_t **out)
{
    return load_bytes(ctx, "engine", data, size, 0, 0, out);
}

mica_status_t mica_engine_deserialize_borrow(mica_context_t *ctx,
                                             const void *data, size_t size,
                                             mica_engine_t **out)
{
    return load_bytes(ctx, "engine", data, size, 0, 1, out);
}

mica_status_t mica_engine_load(mica_context_t *ctx, const char *path,
                               mica_engine_t **out)
{
    unsigned char *data = NULL;
    size_t size = 0;
    char *what = NULL;
    int unmap = 0;
    mica_status_t st;

    *out = NULL;
    if ((st = mica__engine_file_map(ctx, path, &data, &size, &unmap)) != MICA_OK)
        return st;
    what = mica__asprintf("engine file '%s'", path);
    st = what ? load_bytes(ctx, what, data, size, unmap ? 2 : 1, 1, out)
              : mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    if (st != MICA_OK)
        mica__bytes_release(data, size, unmap);
    free(what);
    return st;
}

int32_t mica_engine_file_probe(const char *path)
{
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    int32_t yes;

    if (!f)
        return 0;
    yes = fread(head, 1, 8, f) == 8 && memcmp(head, ENGINE_MAGIC, 8) == 0;
    fclose(f);
    return yes;
}
