/*
 * tools/cmd_modules.c - `mica modules`: every registered layer creator,
 * one per line in aligned columns, then the problems met while loading
 * modules (files skipped and why); with --fields each type's params.
 * `mica modules TYPE` (modules_detail.c) and `--json` (modules_json.c)
 * are the other two views; this file parses the options and holds what
 * the views share about fields and roles.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_modules.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica modules [--fields] [--module-path DIR]...\n"
        "       mica modules TYPE [--namespace NS] [--version N] "
        "[--module-path DIR]...\n"
        "       mica modules --json [TYPE [--namespace NS] [--version N]]\n"
        "                    [--module-path DIR]...\n\n"
        "List every registered layer type: type, version, namespace,\n"
        "implementation, priority, devices, module file and the module's ABI\n"
        "version; then every module file that could not be used, and why.\n"
        "With --fields, also the params each type takes (its field schema).\n\n"
        "With TYPE, describe that layer type: its versions and namespaces,\n"
        "role, implementations (devices, priority, module and file) and every\n"
        "param (kind, count, whether required, default, allowed values).\n"
        "An unknown TYPE is an error naming the closest known types.\n\n"
        "With --json, print the registry (modules and creators with their\n"
        "params; only TYPE's with TYPE) and the load problems as JSON.\n\n"
        "Modules come from $MICA_MODULE_DIR (or the installed folder),\n"
        "$MICA_MODULE_PATH and each --module-path.\n");
}

const char *cli_field_kind(mica_field_type_t t)
{
    static const char *const names[] = {"int", "float", "bool", "string",
                                        "enum", "dtype", "weights"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

const char *cli_role_name(uint32_t role)
{
    static const char *const names[] = {
        "none", "trip_limit", "recurrence", "iterator", "loop_output",
        "condition", "if_input", "if_output", "assertion"};
    return role < sizeof(names) / sizeof(names[0]) ? names[role] : "?";
}

int cli_mod_match(const cli_mod_filter_t *flt, const mica_creator_info_t *c)
{
    const char *ns = c->ns ? c->ns : "";
    if (flt->type && strcmp(flt->type, c->type))
        return 0;
    if (flt->ns && strcmp(flt->ns, ns))
        return 0;
    return !flt->version || flt->version == c->version;
}

void cli_field_default(const mica_field_schema_t *f, char *buf, size_t len)
{
    size_t n = 0;
    int32_t i;
    if (!f->default_value || f->nb_default <= 0
        || f->type == MICA_FIELD_WEIGHTS) {
        snprintf(buf, len, "%s", f->nb_default == 0 && f->default_value
                                     ? "[]" : "-");
        return;
    }
    if (f->count != 1)
        n += (size_t)snprintf(buf + n, len - n, "[");
    for (i = 0; i < f->nb_default && n < len; i++) {
        const char *sep = i ? ", " : "";
        int64_t v = 0;
        switch (f->type) {
        case MICA_FIELD_FLOAT:
            n += (size_t)snprintf(buf + n, len - n, "%s%g", sep,
                                  ((const double *)f->default_value)[i]);
            continue;
        case MICA_FIELD_STRING:
            n += (size_t)snprintf(buf + n, len - n, "%s'%s'", sep,
                                  ((const char *const *)f->default_value)[i]);
            continue;
        default:
            v = ((const int64_t *)f->default_value)[i];
            break;
        }
        if (f->type == MICA_FIELD_BOOL)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", sep,
                                  v ? "true" : "false");
        else if (f->type == MICA_FIELD_ENUM && f->enum_values)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", sep,
                                  f->enum_values[v]);
        else if (f->type == MICA_FIELD_DTYPE)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", sep,
                                  mica_dtype_name((mica_dtype_t)v));
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%lld", sep,
                                  (long long)v);
    }
    if (f->count != 1 && n < len)
        snprintf(buf + n, len - n, "]");
}

/* The params of one creator as an indented table. */
static int print_fields(const mica_creator_info_t *info)
{
    const mica_layer_creator_t *c = info->creator;
    cli_table_t *t;
    int32_t i;
    const char *head[5] = {"PARAM", "TYPE", "REQUIRED", "DEFAULT", "NOTES"};

    printf("\n%s v%d (%s%s%s):%s\n", info->type, (int)info->version,
           info->ns && info->ns[0] ? info->ns : "",
           info->ns && info->ns[0] ? ", " : "", info->implementation,
           c->nb_fields ? "" : " no params");
    if (!c->nb_fields)
        return CLI_OK;
    t = cli_table_new(5);
    if (!t || cli_table_add(t, head))
        return cli_error("out of memory");
    for (i = 0; i < c->nb_fields; i++) {
        const mica_field_schema_t *f = &c->fields[i];
        char type[64], dflt[256], values[512];
        const char *row[5];
        size_t n = 0;
        int k;
        if (f->count == 1)
            snprintf(type, sizeof(type), "%s", cli_field_kind(f->type));
        else if (f->count == MICA_COUNT_ANY)
            snprintf(type, sizeof(type), "list of %s",
                     cli_field_kind(f->type));
        else
            snprintf(type, sizeof(type), "%d %s", (int)f->count,
                     cli_field_kind(f->type));
        cli_field_default(f, dflt, sizeof(dflt));
        values[0] = '\0';
        for (k = 0; f->type == MICA_FIELD_ENUM && f->enum_values
                    && f->enum_values[k] && n < sizeof(values); k++)
            n += (size_t)snprintf(values + n, sizeof(values) - n, "%s%s",
                                  k ? ", " : "", f->enum_values[k]);
        if (f->doc && n < sizeof(values))
            snprintf(values + n, sizeof(values) - n, "%s%s", n ? "; " : "",
                     f->doc);
        row[0] = f->name;
        row[1] = type;
        row[2] = f->required ? "yes" : "no";
        row[3] = dflt;
        row[4] = values;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    return CLI_OK;
}

/* The fusion rules of the modules loaded, one line each. */
static int print_rules(mica_context_t *ctx)
{
    const char *head[4] = {"RULE", "TYPE", "PATTERN", "MODULE"};
    int32_t n = mica_registry_nb_fusion_rules(ctx), k;
    cli_table_t *t;

    if (n == 0)
        return CLI_OK;
    t = cli_table_new(4);
    if (!t || cli_table_add(t, head)) {
        cli_table_free(t);
        return cli_error("out of memory");
    }
    for (k = 0; k < n; k++) {
        mica_fusion_rule_info_t r;
        const char *row[4];
        memset(&r, 0, sizeof r);
        r.struct_size = sizeof r;
        if (mica_registry_fusion_rule(ctx, k, &r) != MICA_OK)
            continue;
        row[0] = r.name;
        row[1] = r.type;
        row[2] = r.pattern;
        row[3] = r.module_file;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    printf("\nfusion rules (%d; the builder tries the longest first):\n",
           (int)n);
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    return CLI_OK;
}

/* The list view: one line per creator, with `fields` each type's params,
 * then the fusion rules and the load problems. */
static int list_view(mica_context_t *ctx, int fields)
{
    const char *head[8] = {"TYPE", "VERSION", "NAMESPACE", "IMPLEMENTATION",
                           "PRIORITY", "DEVICES", "ABI", "MODULE"};
    cli_table_t *t;
    int32_t n, k;

    t = cli_table_new(8);
    if (!t || cli_table_add(t, head)) {
        cli_table_free(t);
        return cli_error("out of memory");
    }
    n = mica_registry_count(ctx);
    for (k = 0; k < n; k++) {
        mica_creator_info_t info = {
            .struct_size = sizeof(mica_creator_info_t)};
        char ver[16], prio[16], abi[16];
        const char *row[8];
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_registry_get(ctx, k, &info) != MICA_OK)
            continue;
        snprintf(ver, sizeof(ver), "%d", (int)info.version);
        snprintf(prio, sizeof(prio), "%d", (int)info.priority);
        snprintf(abi, sizeof(abi), "%u", (unsigned)info.abi_version);
        row[0] = info.type;
        row[1] = ver;
        row[2] = info.ns && info.ns[0] ? info.ns : "-";
        row[3] = info.implementation;
        row[4] = prio;
        row[5] = cli_device_name(info.devices);
        row[6] = abi;
        row[7] = info.module_file;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    cli_table_print(t, stdout, "");
    cli_table_free(t);
    printf("%d layer creator%s\n", (int)n, n == 1 ? "" : "s");
    for (k = 0; fields && k < n; k++) {
        mica_creator_info_t info = {
            .struct_size = sizeof(mica_creator_info_t)};
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_registry_get(ctx, k, &info) == MICA_OK && info.creator
            && print_fields(&info) != CLI_OK)
            return CLI_ERROR;
    }
    if (print_rules(ctx) != CLI_OK)
        return CLI_ERROR;
    n = mica_context_nb_load_problems(ctx);
    if (n) {
        printf("\nload problems:\n");
        for (k = 0; k < n; k++)
            printf("  %s\n", mica_context_load_problem(ctx, k));
    }
    return CLI_OK;
}

/* What the command line asks for. */
typedef struct opts {
    int fields, json;
    cli_mod_filter_t flt;
    char **paths;
    int nb_paths;
} opts_t;

/* Parse argv into o (o->paths has room for argc entries).  CLI_OK,
 * CLI_USAGE after a message, or -1 when help was printed. */
static int parse(int argc, char **argv, opts_t *o)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_is_help(a)) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--fields")) {
            o->fields = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("modules", argc, argv, &i,
                                    "--module-path")))
                return CLI_USAGE;
            o->paths[o->nb_paths++] = (char *)v;
        } else if (cli_is_opt(a, "--namespace")) {
            if (!(v = cli_opt_value("modules", argc, argv, &i,
                                    "--namespace")))
                return CLI_USAGE;
            o->flt.ns = v;
        } else if (cli_is_opt(a, "--version")) {
            char *end;
            long n;
            if (!(v = cli_opt_value("modules", argc, argv, &i, "--version")))
                return CLI_USAGE;
            n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > INT32_MAX)
                return cli_usage_error("modules", "--version takes an "
                                       "integer >= 1, not '%s'", v);
            o->flt.version = (int32_t)n;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("modules", "unexpected argument '%s'", a);
        } else if (o->flt.type) {
            return cli_usage_error("modules", "one TYPE at most, got '%s' "
                                   "and '%s'", o->flt.type, a);
        } else {
            o->flt.type = a;
        }
    }
    if (!o->flt.type && (o->flt.ns || o->flt.version))
        return cli_usage_error("modules", "--namespace and --version go "
                               "with a TYPE");
    return CLI_OK;
}

int cmd_modules(int argc, char **argv)
{
    mica_context_t *ctx = NULL;
    opts_t o;
    int rc;

    memset(&o, 0, sizeof(o));
    o.paths = calloc((size_t)argc + 1, sizeof(char *));
    if (!o.paths)
        return cli_error("out of memory");
    rc = parse(argc, argv, &o);
    if (rc == CLI_OK)
        rc = cli_context(&ctx, o.paths, o.nb_paths, 1);
    free(o.paths);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    if (o.flt.type)
        rc = cli_mod_check(ctx, &o.flt);
    if (rc == CLI_OK && o.json)
        rc = cli_modules_json(ctx, &o.flt, stdout);
    else if (rc == CLI_OK && o.flt.type)
        rc = cli_modules_detail(ctx, &o.flt, stdout);
    else if (rc == CLI_OK)
        rc = list_view(ctx, o.fields);
    mica_context_destroy(ctx);
    return rc;
}
