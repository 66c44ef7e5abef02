/*
 * tools/cmd_modules.c - `mica modules`: every registered layer creator,
 * one per line in aligned columns, then the problems met while loading
 * modules (files skipped and why).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica modules [--fields] [--module-path DIR]...\n\n"
        "List every registered layer type: type, version, namespace,\n"
        "implementation, priority, devices, module file and the module's ABI\n"
        "version; then every module file that could not be used, and why.\n"
        "With --fields, also the params each type takes (its field schema).\n"
        "Modules come from $MICA_MODULE_DIR (or the installed folder),\n"
        "$MICA_MODULE_PATH and each --module-path.\n");
}

static const char *field_type(mica_field_type_t t)
{
    static const char *const names[] = {"int", "float", "bool", "string",
                                        "enum", "dtype", "weights"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* The default of a field as text ("-" if none). */
static void field_default(const mica_field_schema_t *f, char *buf,
                          size_t len)
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
            snprintf(type, sizeof(type), "%s", field_type(f->type));
        else if (f->count == MICA_COUNT_ANY)
            snprintf(type, sizeof(type), "list of %s", field_type(f->type));
        else
            snprintf(type, sizeof(type), "%d %s", (int)f->count,
                     field_type(f->type));
        field_default(f, dflt, sizeof(dflt));
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

int cmd_modules(int argc, char **argv)
{
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    int nb_paths = 0, i, rc, fields = 0;
    mica_context_t *ctx = NULL;
    cli_table_t *t = NULL;
    int32_t n, k;

    if (!paths)
        return cli_error("out of memory");
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(paths);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--fields")) {
            fields = 1;
        } else if (cli_is_opt(argv[i], "--module-path")) {
            const char *v = cli_opt_value("modules", argc, argv, &i,
                                          "--module-path");
            if (!v) {
                free(paths);
                return CLI_USAGE;
            }
            paths[nb_paths++] = (char *)v;
        } else {
            rc = cli_usage_error("modules", "unexpected argument '%s'",
                                 argv[i]);
            free(paths);
            return rc;
        }
    }
    rc = cli_context(&ctx, paths, nb_paths, 1);
    free(paths);
    if (rc != CLI_OK)
        return rc;
    t = cli_table_new(8);
    if (!t) {
        mica_context_destroy(ctx);
        return cli_error("out of memory");
    }
    {
        const char *head[8] = {"TYPE", "VERSION", "NAMESPACE",
                               "IMPLEMENTATION", "PRIORITY", "DEVICES",
                               "ABI", "MODULE"};
        cli_table_add(t, head);
    }
    n = mica_registry_count(ctx);
    for (k = 0; k < n; k++) {
        mica_creator_info_t info;
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
            mica_context_destroy(ctx);
            return cli_error("out of memory");
        }
    }
    cli_table_print(t, stdout, "");
    cli_table_free(t);
    printf("%d layer creator%s\n", (int)n, n == 1 ? "" : "s");
    for (k = 0; fields && k < n; k++) {
        mica_creator_info_t info;
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_registry_get(ctx, k, &info) == MICA_OK && info.creator
            && print_fields(&info) != CLI_OK) {
            mica_context_destroy(ctx);
            return CLI_ERROR;
        }
    }
    n = mica_context_nb_load_problems(ctx);
    if (n) {
        printf("\nload problems:\n");
        for (k = 0; k < n; k++)
            printf("  %s\n", mica_context_load_problem(ctx, k));
    }
    mica_context_destroy(ctx);
    return CLI_OK;
}
