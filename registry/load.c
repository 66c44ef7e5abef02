/*
 * registry/load.c - finding module files, dlopen, ABI negotiation and the
 * checks a module's descriptor and creators must pass.
 *
 * Negotiation (see mica/module.h): the host passes its table, whose
 * abi_version is the highest version it speaks (MICA_ABI_VERSION); the
 * module answers with the version it speaks, which must lie within
 * MICA_ABI_VERSION_MIN..MICA_ABI_VERSION.  A module that cannot work with
 * the host's version returns MICA_ERR_ABI from its init with a message.
 *
 * Where modules come from (mica_context_load_default_modules):
 *   1. $MICA_MODULE_DIR if it is set; set but empty means no default
 *      folder at all (tests use it to load nothing but their own);
 *      otherwise MICA_MODULE_DIR_DEFAULT, the installed folder
 *      ($(pkglibdir)/modules, pkg-config's moduledir);
 *   2. each folder of the colon-separated $MICA_MODULE_PATH, in order
 *      (empty entries are ignored).
 * A missing default folder is skipped silently (an uninstalled build);
 * a folder named by a variable that cannot be opened is one warning and
 * load problem.  A folder contributes every "*.so" regular file directly
 * in it (not recursive), in byte order of the names.  Earlier files win:
 * a key registered by the installed folder is refused from
 * MICA_MODULE_PATH (a third party adds an implementation under its own
 * name and priority rather than replacing one).
 *
 * Loading one file (mica_context_load_file): the path is resolved with
 * realpath(), and a file this context already loaded is a no-op.  The
 * file is dlopened RTLD_NOW | RTLD_LOCAL (a module's symbols never clash
 * with another's), its entry symbol called with the host table, and the
 * returned descriptor and each creator checked (struct sizes, a type name,
 * version >= 1, an implementation name, a known device, a known role, a
 * create function, a sane field schema: unique names, valid types and
 * counts, enums with values, defaults of the declared length).
 *
 * Set MICA_NO_DLCLOSE=1 to keep modules mapped at context destroy, so
 * that leak checkers can name the functions of what a module leaked.
 *
 * Every reason a file or a creator is refused is one line that starts
 * with the file's path (its real path once resolved), recorded with
 * mica__problem() (a warning in the log and an entry of
 * mica_context_load_problem()).  A refused file is dlclosed; a refused
 * creator leaves the others of its file alone.
 */
#include <config.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "registry.h"
#include "device.h"

#ifndef MICA_MODULE_DIR_DEFAULT
#error "the build must define MICA_MODULE_DIR_DEFAULT (the installed module folder)"
#endif

/* Record a problem and make it the context's error too. */
static mica_status_t refuse(mica_context_t *ctx, mica_status_t status,
                            const char *fmt, ...) MICA_PRINTF(3, 4);
static mica_status_t refuse(mica_context_t *ctx, mica_status_t status,
                            const char *fmt, ...)
{
    char buf[MICA_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    mica__problem(ctx, "%s", buf);
    return mica__fail(ctx, status, "%s", buf);
}

/* dlerror() without the "PATH: " it often starts with. */
static const char *dl_reason(const char *path)
{
    const char *e = dlerror();
    size_t n = strlen(path);

    if (!e)
        return "unknown dlopen error";
    if (strncmp(e, path, n) == 0 && e[n] == ':' && e[n + 1] == ' ')
        return e + n + 2;
    return e;
}

/* Register the creators of a module whose descriptor passed its checks. */
static mica_status_t register_creators(mica_context_t *ctx,
                                       mica__module_t *module)
{
    const mica_module_desc_t *desc = module->desc;
    int32_t i, n = 0;

    for (i = 0; i < desc->nb_creators; i++) {
        const mica_layer_creator_t *c = module->creators[i];
        char why[512];
        const char *bad = mica__check_creator(c, why, sizeof(why));
        mica_status_t st;

        if (bad) {
            char type[256];
            mica_layer_creator_t head;
            /* its type name for the message, where it can be read */
            if (mica__peek(&head, c, MICA__CREATOR_V1_SIZE) == 0 &&
                head.struct_size >= MICA__CREATOR_V1_SIZE &&
                mica__peek_str(head.type, type, sizeof type) == 0 && type[0])
                mica__problem(ctx, "%s: creators[%d] ('%s'): %s; skipped",
                              module->path, (int)i, type, bad);
            else
                mica__problem(ctx, "%s: creators[%d]: %s; skipped",
                              module->path, (int)i, bad);
            continue;
        }
        st = mica__registry_add_creator(ctx, module, c);
        if (st == MICA_ERR_NOMEM)
            return mica__fail(ctx, st, "%s: out of memory", module->path);
        if (st == MICA_OK) {
            char key[512], devs[64];
            n++;
            mica__log(ctx, MICA_LOG_DEBUG, "%s: %s for %s, priority %d",
                      module->path, mica__creator_key(c, key, sizeof key),
                      mica__device_names(c->devices, ",", devs, sizeof devs),
                      (int)c->priority);
        }
    }
    mica__log(ctx, MICA_LOG_INFO, "module %s %s loaded from %s: %d of %d "
              "creators registered", desc->name ? desc->name : "?",
              desc->version ? desc->version : "?", module->path, (int)n,
              (int)desc->nb_creators);
    return mica__rules_collect(ctx, module);
}

mica_status_t mica_context_load_file(mica_context_t *ctx, const char *path)
{
    const mica_module_desc_t *desc = NULL;
    const mica_layer_creator_t *const *creators = NULL;
    mica__module_t *module;
    mica_status_t st;
    char why[MICA_ERROR_MAX];
    void *handle;
    char *real;
    int bad;

    if (!ctx)
        return MICA_ERR_INVALID;
    if (!path || !path[0])
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_context_load_file: no path given");
    real = realpath(path, NULL);
    if (!real) {
        int e = errno;
        return refuse(ctx, e == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO,
                      "%s: cannot load: %s", path, strerror(e));
    }
    if (mica__registry_module_by_path(mica__registry_peek(ctx), real)) {
        free(real);
        return MICA_OK;
    }
    /* first in a process of its own when new or changed (scan.c) */
    mica__scan(ctx, &real, 1);
    if ((bad = mica__scan_bad(real, why, sizeof why)) != 0) {
        st = refuse(ctx, MICA_ERR_INVALID, "%s: %s%s", real, why,
                    bad == 1 ? "; skipped until the file changes" : "");
        free(real);
        return st;
    }

    dlerror();
    handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        st = refuse(ctx, MICA_ERR_IO, "%s: cannot load: %s", real,
                    dl_reason(real));
        free(real);
        return st;
    }
    st = mica__module_acquire(handle, &desc, &creators, why, sizeof(why));
    if (st != MICA_OK) {
        dlclose(handle);
        st = refuse(ctx, st, "%s: %s", real, why);
        free(real);
        return st;
    }

    module = calloc(1, sizeof(*module));
    if (module) {
        module->path = real;
        module->handle = handle;
        module->desc = desc;
        module->creators = creators;
    }
    if (!module || !mica__registry_of(ctx) ||
        mica__registry_add_module(ctx->registry, module)) {
        if (module)
            mica__module_release(module);
        free(module);
        dlclose(handle);
        st = mica__fail(ctx, MICA_ERR_NOMEM, "%s: out of memory", real);
        free(real);
        return st;
    }
    return register_creators(ctx, module);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

mica_status_t mica_context_load_dir(mica_context_t *ctx, const char *dir)
{
    mica_status_t st = MICA_OK;
    char **names = NULL;
    size_t nb = 0, cap = 0, i;
    struct dirent *de;
    DIR *d;

    if (!ctx)
        return MICA_ERR_INVALID;
    if (!dir || !dir[0])
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_context_load_dir: no folder given");
    d = opendir(dir);
    if (!d) {
        int e = errno;
        return mica__fail(ctx, e == ENOENT ? MICA_ERR_NOT_FOUND : MICA_ERR_IO,
                          "%s: cannot open module folder: %s", dir,
                          strerror(e));
    }
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n <= 3 || strcmp(de->d_name + n - 3, ".so") != 0)
            continue;
        if (nb == cap) {
            char **grown = realloc(names, (cap ? cap * 2 : 16) * sizeof(*grown));
            if (!grown) {
                st = MICA_ERR_NOMEM;
                break;
            }
            names = grown;
            cap = cap ? cap * 2 : 16;
        }
        names[nb] = mica__asprintf("%s%s%s", dir,
                                   dir[strlen(dir) - 1] == '/' ? "" : "/",
                                   de->d_name);
        if (!names[nb]) {
            st = MICA_ERR_NOMEM;
            break;
        }
        nb++;
    }
    closedir(d);
    if (st == MICA_OK && nb > 1)
        qsort(names, nb, sizeof(*names), cmp_names);
    /* the new or changed files of the folder in one scanner process */
    if (st == MICA_OK)
        mica__scan(ctx, names, nb);
    for (i = 0; i < nb && st == MICA_OK; i++) {
        struct stat sb;
        /* a folder or a device named x.so is not a module file */
        if (stat(names[i], &sb) == 0 && !S_ISREG(sb.st_mode))
            continue;
        if (mica_context_load_file(ctx, names[i]) == MICA_ERR_NOMEM)
            st = MICA_ERR_NOMEM;
    }
    for (i = 0; i < nb; i++)
        free(names[i]);
    free(names);
    if (st == MICA_ERR_NOMEM)
        return mica__fail(ctx, st, "%s: out of memory listing modules", dir);
    return st;
}

/*
 * Load one folder of the default search.  A missing default folder is
 * normal (an uninstalled build); a folder the user named through a
 * variable gets one warning line.
 */
static mica_status_t load_folder(mica_context_t *ctx, const char *dir,
                                 const char *var)
{
    struct stat sb;
    mica_status_t st;

    if (!var && stat(dir, &sb) != 0 && errno == ENOENT)
        return MICA_OK;
    st = mica_context_load_dir(ctx, dir);
    if (st == MICA_ERR_NOMEM)
        return st;
    if (st != MICA_OK)
        mica__problem(ctx, "%s (in %s)", mica_context_error(ctx),
                      var ? var : "the default module folder");
    return MICA_OK;
}

mica_status_t mica_context_load_default_modules(mica_context_t *ctx)
{
    const char *dir, *path;
    mica_status_t st;

    if (!ctx)
        return MICA_ERR_INVALID;
    dir = getenv("MICA_MODULE_DIR");
    if (!dir)
        st = load_folder(ctx, MICA_MODULE_DIR_DEFAULT, NULL);
    else if (dir[0])
        st = load_folder(ctx, dir, "MICA_MODULE_DIR");
    else
        st = MICA_OK; /* set but empty: no default folder at all */
    if (st != MICA_OK)
        return st;

    path = getenv("MICA_MODULE_PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n > 0) {
            char *one = malloc(n + 1);
            if (!one)
                return mica__fail(ctx, MICA_ERR_NOMEM,
                                  "out of memory reading MICA_MODULE_PATH");
            memcpy(one, path, n);
            one[n] = '\0';
            st = load_folder(ctx, one, "MICA_MODULE_PATH");
            free(one);
            if (st != MICA_OK)
                return st;
        }
        path = colon ? colon + 1 : NULL;
    }
    return MICA_OK;
}
