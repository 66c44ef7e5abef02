/*
 * registry/registry.h - private interface between the parts of the
 * registry (registry.c: the creator table; load.c: discovery, dlopen and
 * ABI negotiation; host.c: the host service table).  The context
 * (core/base/) holds the registry without knowing what is in it.
 * Not installed.
 */
#ifndef MICA_REGISTRY_H
#define MICA_REGISTRY_H

#include "mica_int.h"

/* ---- registry (registry/registry.c) --------------------------------- */

typedef struct mica__module {
    char *path;              /* as loaded (real path) */
    void *handle;            /* dlopen handle */
    const mica_module_desc_t *desc;
    /* desc->creators as the host copied them (registry/module.c): read
     * these, never the module's array, which may hold fewer */
    const mica_layer_creator_t *const *creators;
    /* its fusion rules that passed the checks (registry/rules.c) */
    const mica_fusion_rule_t **rules;
    char **patterns;         /* each rule's pattern as text */
    int32_t nb_rules;
} mica__module_t;

typedef struct mica__entry {
    const mica_layer_creator_t *creator;
    mica__module_t *module;
} mica__entry_t;

typedef struct mica__registry {
    mica__module_t **modules;
    int32_t nb_modules;
    mica__entry_t *entries;  /* sorted by (ns, type, version, implementation) */
    int32_t nb_entries;
} mica__registry_t;

/*
 * The registry of ctx, made (and handed to the context to free) on first
 * use; NULL when memory runs out.
 */
mica__registry_t *mica__registry_of(mica_context_t *ctx);

/* The registry of ctx for reading: an empty one before any module. */
const mica__registry_t *mica__registry_peek(const mica_context_t *ctx);

#include "host.h"


/*
 * Sizes of the version-1 layouts of the structs a module hands over.  A
 * module built against any ABI version from 1 on fills at least these
 * bytes (members are only ever appended), so a struct_size below them
 * means the module is broken, not older.
 */
#define MICA__DESC_V1_SIZE \
    (offsetof(mica_module_desc_t, reserved2_) + 4 * sizeof(void *))
#define MICA__CREATOR_V1_SIZE \
    (offsetof(mica_layer_creator_t, user_data) + sizeof(void *))

/*
 * Add a loaded module to the registry (which then owns it: fini and
 * dlclose happen in mica__registry_fini).  MICA_ERR_NOMEM only.
 */
mica_status_t mica__registry_add_module(mica__registry_t *reg,
                                        mica__module_t *module);

/*
 * The descriptor of the module behind `handle`, initializing it if no
 * context holds it yet (negotiating the ABI version, checking that the
 * entry symbol is code and that the descriptor is readable), and counting
 * this use; *creators is the host's copy of its array of creators.  On
 * failure why says what is wrong (registry/module.c).
 */
mica_status_t mica__module_acquire(void *handle,
                                   const mica_module_desc_t **desc,
                                   const mica_layer_creator_t *const **creators,
                                   char *why, size_t len);

/*
 * Let go of a module of a context: the last context holding a module
 * calls its fini.  Does not dlclose (the caller does).
 */
void mica__module_release(mica__module_t *module);

/* The module already loaded from real path `path`, or NULL. */
mica__module_t *mica__registry_module_by_path(const mica__registry_t *reg,
                                              const char *path);

/*
 * Register one creator of `module` (which must already be added).  If
 * its key (ns, type, version, implementation) is taken, records the load
 * problem "FILE: KEY is already registered by OTHER; skipped" and returns
 * MICA_ERR_INVALID; MICA_ERR_NOMEM if memory runs out.
 */
mica_status_t mica__registry_add_creator(mica_context_t *ctx,
                                         mica__module_t *module,
                                         const mica_layer_creator_t *c);

/*
 * "Type v1 (implementation 'reference')", with "ns::" before the type
 * when the namespace is not empty; written into buf, which is returned.
 */
char *mica__creator_key(const mica_layer_creator_t *c, char *buf,
                        size_t len);

/* Why creator c is unusable (into why), or NULL when it is fine
 * (registry/check.c). */
const char *mica__check_creator(const mica_layer_creator_t *c, char *why,
                                size_t len);

/*
 * Copy n bytes of a module's memory at src into dst without faulting
 * (registry/peek.c): 0, or -1 when they are not all readable.
 */
int mica__peek(void *dst, const void *src, size_t n);

/*
 * Copy the NUL-terminated string at s into buf (len bytes): 0, or -1
 * when it is not readable or has no NUL within len bytes.
 */
int mica__peek_str(const char *s, char *buf, size_t len);

/*
 * Give every file of paths[0..n-1] a verdict, loading in the scanner
 * process those that are new or changed since their last scan
 * (registry/scan.c).  Never fails: without a scanner they load as
 * before.
 */
void mica__scan(mica_context_t *ctx, char *const *paths, size_t n);

/* 1 (and why) when real path `real` crashed, exited or hung when it was
 * scanned and has not changed since; 2 (and why) when no scanner could
 * scan it in this process (it must not be loaded either); else 0. */
int mica__scan_bad(const char *real, char *why, size_t len);

/* The real path of the module file that registered c in ctx, or NULL. */
const char *mica__creator_file(const mica_context_t *ctx,
                               const mica_layer_creator_t *c);

/* ---- fusion rules (registry/rules.c) ---------------------------------- */

/*
 * Check the fusion rules of `module` (its creators registered): a rule
 * that is malformed (no name, no steps, a step without a type, an input,
 * step or param out of range) or whose type is not one of the module's
 * own registered types is skipped with the load problem "FILE: fusion
 * rule 'NAME': WHY; skipped"; the others are kept in module->rules.  A
 * descriptor too small to hold rules has none.  MICA_ERR_NOMEM only.
 */
mica_status_t mica__rules_collect(mica_context_t *ctx, mica__module_t *module);

/* The namespace of a creator: "" when the module left it NULL. */
const char *mica__creator_ns(const mica_layer_creator_t *c);

#endif
