/*
 * modules/common/kit_layer.c - the layer whose state is its fields (see
 * <mica/kit.h>): serialize is the fields' byte form, deserialize reads it
 * back and calls the creator's create(), clone shares the fields.
 */
#include <config.h>

#include "mica/kit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * Fields that the create() being called takes over instead of copying
 * them: offered by mica_kit_layer_deserialize_ex, which has just read
 * them, and by mica_kit_layer_clone, which shares its layer's, and found
 * by mica_kit_layer_new through their view (a pointer no other fields
 * share).  A short list under a mutex rather than a thread-local
 * variable: a module with thread-local storage gets dynamic TLS when it
 * is dlopened, which the leak checker of the sanitizer legs cannot walk
 * with glibc 2.36 once many modules are loaded (its tracer crashes).
 */
static pthread_mutex_t offer_lock = PTHREAD_MUTEX_INITIALIZER;
/* One offer per create() in progress: one per thread making layers at
 * that moment.  Beyond these, fields are copied instead (no allocation
 * here, so nothing is left behind when the module is unloaded). */
#define MAX_OFFERS 64
static mica_kit_fields_t *offered[MAX_OFFERS];
static size_t nb_offered;

/* Offer f; 0, or -1 (not offered) when MAX_OFFERS are pending. */
static int offer(mica_kit_fields_t *f)
{
    int st = -1;
    pthread_mutex_lock(&offer_lock);
    if (nb_offered < MAX_OFFERS) {
        offered[nb_offered++] = f;
        st = 0;
    }
    pthread_mutex_unlock(&offer_lock);
    return st;
}

/* Take back the offered fields whose view is v (or which are f, with v
 * NULL): the fields, or NULL when none (taken already). */
static mica_kit_fields_t *take(const mica_fields_t *v, mica_kit_fields_t *f)
{
    mica_kit_fields_t *got = NULL;
    size_t i;
    pthread_mutex_lock(&offer_lock);
    for (i = 0; i < nb_offered; i++) {
        if (v ? mica_kit_fields_view(offered[i]) == v : offered[i] == f) {
            got = offered[i];
            offered[i] = offered[--nb_offered];
            break;
        }
    }
    pthread_mutex_unlock(&offer_lock);
    return got;
}

/* The fields for a new layer: the offered ones if they are these
 * (made for this layer: taken, no copy), else a copy. */
static mica_kit_fields_t *adopt_or_copy(const mica_fields_t *fields)
{
    mica_kit_fields_t *f = take(fields, NULL);
    return f ? f : mica_kit_fields_copy(fields);
}

/* ---- the layer base --------------------------------------------------- */

void *mica_kit_layer_new(size_t size, const mica_layer_ops_t *ops,
                         const mica_layer_creator_t *creator,
                         const char *name, const mica_fields_t *fields,
                         mica_error_t *err)
{
    mica_kit_layer_t *l = calloc(1, size);
    size_t nlen = strlen(name ? name : "");

    if (!l)
        goto nomem;
    l->layer.ops = ops;
    l->creator = creator;
    l->name = malloc(nlen + 1);
    l->fields = adopt_or_copy(fields);
    if (!l->name || !l->fields)
        goto nomem;
    memcpy(l->name, name ? name : "", nlen + 1);
    return l;
nomem:
    if (l) {
        free(l->name);
        mica_kit_fields_free(l->fields);
        free(l);
    }
    mica_kit_host->set_error(err, "out of host memory creating layer '%s'",
                             name ? name : "");
    return NULL;
}

mica_layer_t *mica_kit_layer_create(const mica_layer_creator_t *creator,
                                    const char *name,
                                    const mica_fields_t *fields,
                                    mica_error_t *err)
{
    mica_kit_layer_t *l = mica_kit_layer_new(
        sizeof *l, (const mica_layer_ops_t *)creator->user_data, creator,
        name, fields, err);
    return l ? &l->layer : NULL;
}

mica_status_t mica_kit_layer_serialize(const mica_layer_t *layer, void *buf,
                                       size_t *size)
{
    const mica_kit_layer_t *l = (const mica_kit_layer_t *)layer;
    return mica_kit_fields_save(l->fields, buf, size);
}

mica_layer_t *mica_kit_layer_clone(const mica_layer_t *layer,
                                   mica_error_t *err)
{
    const mica_kit_layer_t *l = (const mica_kit_layer_t *)layer;
    mica_kit_fields_t *f = mica_kit_fields_share(l->fields);
    mica_layer_t *copy;

    /* The clone shares the fields (weights included) instead of copying
     * them: its create() takes this reference through
     * mica_kit_layer_new; if it never gets there, it is dropped here. */
    if (offer(f) != 0) {
        copy = l->creator->create(l->creator, l->name,
                                  mica_kit_fields_view(f), err);
        mica_kit_fields_free(f);
        return copy;
    }
    copy = l->creator->create(l->creator, l->name, mica_kit_fields_view(f),
                              err);
    if (take(NULL, f))
        mica_kit_fields_free(f);
    return copy;
}

void mica_kit_layer_destroy(mica_layer_t *layer)
{
    mica_kit_layer_t *l = (mica_kit_layer_t *)layer;
    if (!l)
        return;
    if (l->fini)
        l->fini(l);
    free(l->name);
    mica_kit_fields_free(l->fields);
    free(l);
}

mica_layer_t *mica_kit_layer_deserialize(const mica_layer_creator_t *c,
                                         const char *name, const void *data,
                                         size_t size, mica_error_t *err)
{
    return mica_kit_layer_deserialize_ex(c, name, data, size, 0, err);
}

mica_layer_t *mica_kit_layer_deserialize_ex(const mica_layer_creator_t *c,
                                            const char *name,
                                            const void *data, size_t size,
                                            uint32_t flags, mica_error_t *err)
{
    mica_kit_fields_t *f = mica_kit_fields_load(
        data, size, (flags & MICA_STATE_PERSISTENT) != 0);
    mica_layer_t *layer;

    /* Fields from a file have not met the core's validator: the kit
     * checks that they fit the schema, so that create() may rely on it
     * whichever way it is called. */
    if (!f || !mica_kit_fields_fit(mica_kit_fields_view(f), c)) {
        mica_kit_fields_free(f);
        mica_kit_host->set_error(err, "layer '%s': serialized %s state is "
                                 "corrupt (%zu bytes)", name, c->type, size);
        return NULL;
    }
    /* The layer's create() keeps these fields through
     * mica_kit_layer_new instead of copying them again; if it never
     * gets there (an error), they are freed here. */
    if (offer(f) != 0) {
        layer = c->create(c, name, mica_kit_fields_view(f), err);
        mica_kit_fields_free(f);
        return layer;
    }
    layer = c->create(c, name, mica_kit_fields_view(f), err);
    if (take(NULL, f))
        mica_kit_fields_free(f);
    return layer;
}
