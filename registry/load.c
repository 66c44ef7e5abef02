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

/* Why a field schema entry is unusable, or NULL. */
static const char *check_field(const mica_field_schema_t *f, char *why,
                               size_t len)
{
    int32_t nb_enum = 0;

    if (f->type < MICA_FIELD_INT || f->type > MICA_FIELD_WEIGHTS) {
        snprintf(why, len, "field '%s': unknown field type %d", f->name,
                 (int)f->type);
        return why;
    }
    if (f->count != MICA_COUNT_ANY && f->count < 1) {
        snprintf(why, len,
                 "field '%s': count %d is not valid "
                 "(1, a list length > 1, or MICA_COUNT_ANY)",
                 f->name, (int)f->count);
        return why;
    }
    if (f->type == MICA_FIELD_ENUM) {
        while (f->enum_values && f->enum_values[nb_enum])
            nb_enum++;
        if (nb_enum == 0) {
            snprintf(why, len, "field '%s': enum without values", f->name);
            return why;
        }
    }
    if (f->nb_default < 0 || (f->nb_default > 0 && !f->default_value)) {
        snprintf(why, len, "field '%s': default of %d values without data",
                 f->name, (int)f->nb_default);
        return why;
    }
    if (f->default_value && f->count >= 1 && f->nb_default != f->count) {
        snprintf(why, len, "field '%s': default has %d values, the field %d",
                 f->name, (int)f->nb_default, (int)f->count);
        return why;
    }
    if (f->default_value && f->type == MICA_FIELD_ENUM) {
        const int64_t *v = f->default_value;
        int32_t i;
        for (i = 0; i < f->nb_default; i++) {
            if (v[i] < 0 || v[i] >= nb_enum) {
                snprintf(why, len,
                         "field '%s': default index %lld is not one of its "
                         "%d enum values", f->name, (long long)v[i],
                         (int)nb_enum);
                return why;
            }
        }
    }
    return NULL;
}

/* Why creator c is unusable, or NULL when it is fine. */
static const char *check_creator(const mica_layer_creator_t *c, char *why,
                                 size_t len)
{
    int32_t i, j;

    if (!c)
        return "is NULL";
    if (c->struct_size < MICA__CREATOR_V1_SIZE) {
        snprintf(why, len, "struct_size %u is smaller than ABI version 1's (%u)",
                 (unsigned)c->struct_size, (unsigned)MICA__CREATOR_V1_SIZE);
        return why;
    }
    if (!c->type || !c->type[0])
        return "has no type name";
    if (c->version < 1) {
        snprintf(why, len, "version %d is not valid (must be >= 1)",
                 (int)c->version);
        return why;
    }
    if (!c->implementation || !c->implementation[0])
        return "has no implementation name";
    if (!(c->devices & mica__device_bits())) {
        int32_t i, n, pos;
        const mica__device_desc_t *d = mica__devices(&n);
        pos = snprintf(why, len, "devices 0x%x name no device this host "
                       "knows (", (unsigned)c->devices);
        for (i = 0; i < n && pos > 0 && (size_t)pos < len; i++)
            pos += snprintf(why + pos, len - (size_t)pos, "%s%s 0x%x",
                            i ? ", " : "", d[i].name, (unsigned)d[i].bit);
        if (pos > 0 && (size_t)pos < len)
            snprintf(why + pos, len - (size_t)pos, ")");
        return why;
    }
    if (c->role > MICA_ROLE_ASSERTION) {
        snprintf(why, len, "role %u is unknown", (unsigned)c->role);
        return why;
    }
    if (!c->create)
        return "has no create function";
    if (c->nb_fields < 0 || (c->nb_fields > 0 && !c->fields)) {
        snprintf(why, len, "field schema of %d fields without an array",
                 (int)c->nb_fields);
        return why;
    }
    for (i = 0; i < c->nb_fields; i++) {
        const mica_field_schema_t *f = &c->fields[i];
        if (!f->name || !f->name[0]) {
            snprintf(why, len, "field %d has no name", (int)i);
            return why;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(c->fields[j].name, f->name) == 0) {
                snprintf(why, len, "field '%s' is declared twice", f->name);
                return why;
            }
        }
        if (check_field(f, why, len))
            return why;
    }
    return NULL;
}

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

/* Register the creators of a module whose descriptor passed its checks. */
static mica_status_t register_creators(mica_context_t *ctx,
                                       mica__module_t *module)
{
    const mica_module_desc_t *desc = module->desc;
    int32_t i;

    for (i = 0; i < desc->nb_creators; i++) {
        const mica_layer_creator_t *c = desc->creators[i];
        char why[512];
        const char *bad = check_creator(c, why, sizeof(why));
        mica_status_t st;

        if (bad) {
            if (c && c->struct_size >= MICA__CREATOR_V1_SIZE && c->type &&
                c->type[0])
                mica__problem(ctx, "%s: creators[%d] ('%s'): %s; skipped",
                              module->path, (int)i, c->type, bad);
            else
                mica__problem(ctx, "%s: creators[%d]: %s; skipped",
                              module->path, (int)i, bad);
            continue;
        }
        st = mica__registry_add_creator(ctx, module, c);
        if (st == MICA_ERR_NOMEM)
            return mica__fail(ctx, st, "%s: out of memory", module->path);
    }
    return MICA_OK;
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

/*
 * The descriptor of the module behind `handle`, initializing it if no
 * context holds it yet, and counting this use.
 */
static mica_status_t acquire(void *handle, const mica_module_desc_t **desc,
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

mica_status_t mica_context_load_file(mica_context_t *ctx, const char *path)
{
    const mica_module_desc_t *desc = NULL;
    mica__module_t *module;
    mica_status_t st;
    char why[MICA_ERROR_MAX];
    void *handle;
    char *real;

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
    if (mica__registry_module_by_path(&ctx->registry, real)) {
        free(real);
        return MICA_OK;
    }

    dlerror();
    handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        st = refuse(ctx, MICA_ERR_IO, "%s: cannot load: %s", real,
                    dl_reason(real));
        free(real);
        return st;
    }
    st = acquire(handle, &desc, why, sizeof(why));
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
    }
    if (!module || mica__registry_add_module(&ctx->registry, module)) {
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
