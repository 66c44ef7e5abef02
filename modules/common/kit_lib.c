/*
 * modules/common/kit_lib.c - libraries opened on first use (see
 * mica_kit_lib_open in <mica/kit.h>): cuBLAS, cuBLASLt, cuDNN and the
 * like, reached through a table of function pointers instead of being
 * linked, so that loading a module maps none of them.
 *
 * One lock for every library of the module (each module has its own copy
 * of the kit): opening is rare (a layer's configure or initialize) and
 * must happen once even when contexts on several threads ask at once.
 */
#include <config.h>

#include "mica/kit.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

/* The name of the first symbol of lib that `handle` lacks, or NULL. */
static const char *first_missing(const mica_kit_lib_t *lib, void *handle)
{
    int32_t i;
    for (i = 0; i < lib->nb_syms; i++)
        if (!dlsym(handle, lib->syms[i].name))
            return lib->syms[i].name;
    return NULL;
}

/* Fill lib's table from `handle`, which has every symbol. */
static void fill(mica_kit_lib_t *lib, void *handle)
{
    unsigned char *table = lib->table;
    int32_t i;

    for (i = 0; i < lib->nb_syms; i++) {
        void *p = dlsym(handle, lib->syms[i].name);
        /* A function pointer has the size and representation of a
         * void * wherever dlsym exists (POSIX). */
        memcpy(table + lib->syms[i].offset, &p, sizeof p);
    }
}

mica_status_t mica_kit_lib_open(mica_kit_lib_t *lib, mica_error_t *err)
{
    mica_status_t st = MICA_OK;
    const char *missing;
    void *handle;

    pthread_mutex_lock(&lib_lock);
    if (lib->opened_)
        goto done;
    /* RTLD_LOCAL: the library's symbols serve this table only. */
    handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        mica_kit_host->set_error(err, "%s is needed but cannot be loaded: "
                                 "%s", lib->what, why ? why : lib->soname);
        st = MICA_ERR_NOT_FOUND;
        goto done;
    }
    /* Fill the table only when every symbol is there: a failed open
     * leaves it as it was. */
    missing = first_missing(lib, handle);
    if (missing) {
        mica_kit_host->set_error(err, "%s is needed but %s has no symbol "
                                 "'%s'", lib->what, lib->soname, missing);
        dlclose(handle);
        st = MICA_ERR_NOT_FOUND;
        goto done;
    }
    fill(lib, handle);
    lib->handle_ = handle;
    lib->opened_ = 1;
done:
    pthread_mutex_unlock(&lib_lock);
    return st;
}
