/*
 * tools/cmd_modules.h - what the three views of `mica modules` share: the
 * list (cmd_modules.c), one type's detail (modules_detail.c) and the whole
 * registry as JSON (modules_json.c).
 */
#ifndef MICA_CMD_MODULES_H
#define MICA_CMD_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"

/* A filter on the registry: one type name (NULL: all), optionally one
 * namespace (NULL: any) and one version (0: any). */
typedef struct cli_mod_filter {
    const char *type;
    const char *ns;
    int32_t version;
} cli_mod_filter_t;

/* "int", "float", ..., "weights" ("?" for a kind this mica does not know). */
const char *cli_field_kind(mica_field_type_t t);

/* "none", "trip_limit", ..., "assertion" ("?" for an unknown role). */
const char *cli_role_name(uint32_t role);

/*
 * The default of field `f` as text into buf: "-" when it has none, "[]"
 * for an empty list, a list in brackets when f->count is not 1, enum and
 * dtype values by name, strings quoted.
 */
void cli_field_default(const mica_field_schema_t *f, char *buf, size_t len);

/* Registry entries that pass `flt` (ns NULL stands for ""). */
int cli_mod_match(const cli_mod_filter_t *flt, const mica_creator_info_t *c);

/*
 * Check that `flt` names a registered type (and, if given, namespace and
 * version).  CLI_OK, or CLI_ERROR after one line naming the closest known
 * types, or the namespaces and versions the type has.
 */
int cli_mod_check(mica_context_t *ctx, const cli_mod_filter_t *flt);

/* `mica modules TYPE`: the detail of every (namespace, version) of the
 * type that passes flt (flt->type set and checked).  CLI_OK or CLI_ERROR. */
int cli_modules_detail(mica_context_t *ctx, const cli_mod_filter_t *flt,
                       FILE *f);

/* `mica modules --json`: the registry (the part passing flt) as one JSON
 * document.  CLI_OK or CLI_ERROR. */
int cli_modules_json(mica_context_t *ctx, const cli_mod_filter_t *flt,
                     FILE *f);

#endif /* MICA_CMD_MODULES_H */
