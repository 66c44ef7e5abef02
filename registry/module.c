/*
 * registry/module.c - a module's life: its init (the version
 * negotiation of mica/module.h) and its fini, shared by the contexts of
 * a process.
 */
#include <config.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/*
 * Call a module's fini, if it has one that its declared layout covers:
 * for an accepted module, or one refused after its init succeeded.
 */
static void finalize(const mica_module_desc_t *desc)
{
    if (desc && desc->abi_version >= MICA_ABI_VERSION_MIN &&
        desc->struct_size >= MICA__DESC_V1_SIZE && desc->fini)
        desc->fini();
}

/*
 * Modules are shared by the contexts of a process.  Each context dlopens
 * a file itself (the dynamic loader counts the references), but a module
 * is initialized once, when no context holds it, and finalized when the
 * last context that holds it lets go; a module's static state therefore
 * serves every context.  The list is guarded by one mutex.
 */
typedef struct shared {
    void *handle;
    const mica_module_desc_t *desc;
    int users;
    struct shared *next;
} shared_t;

static shared_t *shared_list;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Find the entry point of a freshly dlopened file, call it, and check the
 * descriptor it returns.  On failure writes the reason (without the file
 * name) into why, finalizes the module if its init succeeded, and returns
 * the status; the caller still owns the handle.
 */
static mica_status_t init_module(void *handle, const mica_module_desc_t **out,
                                 char *why, size_t len)
{
    union {
        void *p;
        mica_module_init_fn fn;
    } entry;
    const mica_module_desc_t *desc = NULL;
    mica_error_t err;
    mica_status_t st;

    entry.p = dlsym(handle, MICA_MODULE_ENTRY_NAME);
    if (!entry.p) {
        snprintf(why, len, "not a mica module: no symbol %s",
                 MICA_MODULE_ENTRY_NAME);
        return MICA_ERR_NOT_FOUND;
    }
    mica__error_clear(&err);
    st = entry.fn(mica__host(), &desc, &err);
    if (st != MICA_OK) {
        if ((unsigned)st > MICA_ERR_INTERNAL)
            st = MICA_ERR_INVALID;
        snprintf(why, len, "init failed: %s",
                 mica__error_msg(&err, mica_status_name(st)));
        return st;
    }
    if (!desc) {
        snprintf(why, len, "init failed: no module descriptor returned");
        return MICA_ERR_INVALID;
    }
    /* abi_version sits at the same offset in every version: read it first */
    if (desc->abi_version > MICA_ABI_VERSION ||
        desc->abi_version < MICA_ABI_VERSION_MIN) {
        unsigned v = desc->abi_version;
        finalize(desc);
        snprintf(why, len,
                 "module ABI version %u is %s than this host's "
                 "(supports %d..%d)", v,
                 v > MICA_ABI_VERSION ? "newer" : "older",
                 MICA_ABI_VERSION_MIN, MICA_ABI_VERSION);
        return MICA_ERR_ABI;
    }
    if (desc->struct_size < MICA__DESC_V1_SIZE) {
        /* its fini lies beyond what it declared: not called */
        snprintf(why, len,
                 "module descriptor struct_size %u is smaller than "
                 "ABI version 1's (%u)", (unsigned)desc->struct_size,
                 (unsigned)MICA__DESC_V1_SIZE);
        return MICA_ERR_ABI;
    }
    if (desc->nb_creators < 0 || (desc->nb_creators > 0 && !desc->creators)) {
        int n = (int)desc->nb_creators;
        finalize(desc);
        snprintf(why, len,
                 "module descriptor lists %d creators without an array", n);
        return MICA_ERR_INVALID;
    }
    *out = desc;
    return MICA_OK;
}

mica_status_t mica__module_acquire(void *handle,
                                   const mica_module_desc_t **desc,
                                   char *why, size_t len)
{
    mica_status_t st = MICA_OK;
    shared_t *s;

    pthread_mutex_lock(&shared_lock);
    for (s = shared_list; s; s = s->next)
        if (s->handle == handle)
            break;
    if (s) {
        s->users++;
        *desc = s->desc;
    } else {
        st = init_module(handle, desc, why, len);
        if (st == MICA_OK) {
            s = calloc(1, sizeof(*s));
            if (!s) {
                finalize(*desc);
                snprintf(why, len, "out of memory");
                st = MICA_ERR_NOMEM;
            } else {
                s->handle = handle;
                s->desc = *desc;
                s->users = 1;
                s->next = shared_list;
                shared_list = s;
            }
        }
    }
    pthread_mutex_unlock(&shared_lock);
    return st;
}

void mica__module_release(mica__module_t *module)
{
    const mica_module_desc_t *last = NULL;
    shared_t **p, *s;

    pthread_mutex_lock(&shared_lock);
    for (p = &shared_list; (s = *p) != NULL; p = &s->next) {
        if (s->handle == module->handle) {
            if (--s->users == 0) {
                *p = s->next;
                last = s->desc;
                free(s);
            }
            break;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    if (last)
        finalize(last);
}
