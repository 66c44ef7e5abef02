/*
 * registry/module.c - a module's life: its init (the version
 * negotiation of mica/module.h) and its fini, shared by the contexts of
 * a process.
 */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
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
    const mica_layer_creator_t **creators; /* the host's copy */
    int users;
    struct shared *next;
} shared_t;

static shared_t *shared_list;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* The most creators the host takes from one module. */
#define MAX_CREATORS 65536

/*
 * Why the entry symbol at p is not a function, or NULL (also when the
 * loader cannot say): a module whose mica_module_init is data would be
 * called as code (issue 15).
 */
static const char *entry_not_code(void *p, char *why, size_t len)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    unsigned type;

    if (!dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return NULL;
    type = sym->st_info & 0xf;
    if (type == STT_FUNC || type == STT_GNU_IFUNC)
        return NULL;
    snprintf(why, len, "not a mica module: its symbol %s is %s, not a "
             "function", MICA_MODULE_ENTRY_NAME,
             type == STT_OBJECT ? "data" : "not code");
    return why;
}

/* Why string s of the descriptor (member `what`) is unusable, or NULL. */
static const char *bad_string(const char *s, const char *what, int optional,
                              char *why, size_t len)
{
    char buf[1024];
    if (!s && optional)
        return NULL;
    if (s && mica__peek_str(s, buf, sizeof buf) == 0)
        return NULL;
    snprintf(why, len, "module descriptor: %s is %s", what,
             s ? "not a readable string of at most 1023 bytes" : "NULL");
    return why;
}

/*
 * Find the entry point of a freshly dlopened file, call it, and check the
 * descriptor it returns, copying what the host reads of it through
 * registry/peek.c: the descriptor itself, its strings, and its array of
 * creators (into *creators, which the caller frees), so that a
 * descriptor claiming more creators than it holds is refused or its
 * extra entries read as garbage the creator checks refuse, never read
 * out of bounds.  On failure writes the reason (without the file name)
 * into why, finalizes the module if its init succeeded, and returns the
 * status; the caller still owns the handle.
 */
static mica_status_t init_module(void *handle, const mica_module_desc_t **out,
                                 const mica_layer_creator_t ***creators,
                                 char *why, size_t len)
{
    union {
        void *p;
        mica_module_init_fn fn;
    } entry;
    const mica_module_desc_t *desc = NULL;
    mica_module_desc_t copy;
    const mica_layer_creator_t **list = NULL;
    mica_error_t err;
    mica_status_t st;

    entry.p = dlsym(handle, MICA_MODULE_ENTRY_NAME);
    if (!entry.p) {
        snprintf(why, len, "not a mica module: no symbol %s",
                 MICA_MODULE_ENTRY_NAME);
        return MICA_ERR_NOT_FOUND;
    }
    if (entry_not_code(entry.p, why, len))
        return MICA_ERR_INVALID;
    mica__error_clear(&err);
    st = entry.fn(mica__host(), &desc, &err);
    if (st != MICA_OK) {
        if ((unsigned)st > MICA_ERR_INTERNAL)
            st = MICA_ERR_INVALID;
        err.msg[sizeof err.msg - 1] = '\0';
        snprintf(why, len, "init failed: %s",
                 mica__error_msg(&err, mica_status_name(st)));
        return st;
    }
    if (!desc) {
        snprintf(why, len, "init failed: no module descriptor returned");
        return MICA_ERR_INVALID;
    }
    memset(&copy, 0, sizeof copy);
    if (mica__peek(&copy, desc, offsetof(mica_module_desc_t, name)) != 0) {
        snprintf(why, len, "init returned a descriptor that is not readable");
        return MICA_ERR_INVALID;
    }
    /* abi_version sits at the same offset in every version: read it first */
    if (copy.abi_version > MICA_ABI_VERSION ||
        copy.abi_version < MICA_ABI_VERSION_MIN) {
        unsigned v = copy.abi_version;
        snprintf(why, len,
                 "module ABI version %u is %s than this host's "
                 "(supports %d..%d)", v,
                 v > MICA_ABI_VERSION ? "newer" : "older",
                 MICA_ABI_VERSION_MIN, MICA_ABI_VERSION);
        if (mica__peek(&copy, desc, MICA__DESC_V1_SIZE) == 0)
            finalize(&copy);
        return MICA_ERR_ABI;
    }
    if (copy.struct_size < MICA__DESC_V1_SIZE) {
        /* its fini lies beyond what it declared: not called */
        snprintf(why, len,
                 "module descriptor struct_size %u is smaller than "
                 "ABI version 1's (%u)", (unsigned)copy.struct_size,
                 (unsigned)MICA__DESC_V1_SIZE);
        return MICA_ERR_ABI;
    }
    if (mica__peek(&copy, desc, MICA__DESC_V1_SIZE) != 0) {
        snprintf(why, len, "module descriptor of %u bytes is not readable",
                 (unsigned)copy.struct_size);
        return MICA_ERR_INVALID;
    }
    st = MICA_ERR_INVALID;
    if (bad_string(copy.name, "its name", 1, why, len) ||
        bad_string(copy.version, "its version", 1, why, len) ||
        bad_string(copy.license, "its license", 1, why, len) ||
        bad_string(copy.description, "its description", 1, why, len))
        goto fail;
    if (copy.nb_creators < 0 || copy.nb_creators > MAX_CREATORS ||
        (copy.nb_creators > 0 && !copy.creators)) {
        snprintf(why, len, "module descriptor lists %d creators without an "
                 "array (at most %d)", (int)copy.nb_creators, MAX_CREATORS);
        goto fail;
    }
    list = calloc((size_t)copy.nb_creators + 1, sizeof *list);
    if (!list) {
        snprintf(why, len, "out of memory");
        st = MICA_ERR_NOMEM;
        goto fail;
    }
    if (mica__peek(list, copy.creators,
                   sizeof *list * (size_t)copy.nb_creators) != 0) {
        snprintf(why, len, "module descriptor lists %d creators, but its "
                 "array is not readable that far", (int)copy.nb_creators);
        goto fail;
    }
    *out = desc;
    *creators = list;
    return MICA_OK;
fail:
    free(list);
    finalize(&copy);
    return st;
}

mica_status_t mica__module_acquire(void *handle,
                                   const mica_module_desc_t **desc,
                                   const mica_layer_creator_t *const **creators,
                                   char *why, size_t len)
{
    const mica_layer_creator_t **list = NULL;
    mica_status_t st = MICA_OK;
    shared_t *s;

    pthread_mutex_lock(&shared_lock);
    for (s = shared_list; s; s = s->next)
        if (s->handle == handle)
            break;
    if (s) {
        s->users++;
        *desc = s->desc;
        *creators = s->creators;
    } else {
        st = init_module(handle, desc, &list, why, len);
        if (st == MICA_OK) {
            s = calloc(1, sizeof(*s));
            if (!s) {
                finalize(*desc);
                free(list);
                snprintf(why, len, "out of memory");
                st = MICA_ERR_NOMEM;
            } else {
                s->handle = handle;
                s->desc = *desc;
                s->creators = list;
                *creators = list;
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
                free(s->creators);
                free(s);
            }
            break;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    if (last)
        finalize(last);
}
