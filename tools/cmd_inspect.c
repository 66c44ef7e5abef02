/*
 * tools/cmd_inspect.c - `mica inspect`: build a manifest's engine and show
 * what was built: the device, the arena, every layer in execution order
 * (type, version, the implementation chosen, inputs -> outputs) and every
 * tensor (dtype, shape, execution or shape tensor, arena placement).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica inspect MANIFEST [--device auto|cpu|cuda]\n"
        "                    [--module-path DIR]...\n\n"
        "Build the engine of MANIFEST and print its device, arena size,\n"
        "layers in execution order with the implementation chosen for each,\n"
        "and tensors with their dtype, shape and kind (E: execution tensor,\n"
        "S: shape tensor).\n");
}

static const char *role_name(uint32_t role)
{
    static const char *const names[] = {
        "", "trip limit", "recurrence", "iterator", "loop output",
        "condition", "if input", "if output", "assertion"};
    return role < sizeof(names) / sizeof(names[0]) ? names[role] : "?";
}

static const char *tensor_name(mica_engine_t *engine, int32_t index,
                               mica_tensor_info_t *info)
{
    if (index < 0)
        return "~";
    memset(info, 0, sizeof(*info));
    info->struct_size = sizeof(*info);
    if (mica_engine_tensor(engine, index, info) != MICA_OK)
        return "?";
    return info->name;
}

static int print_layers(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_layers(engine), i, k;
    cli_table_t *t = cli_table_new(6);
    const char *head[6] = {"#", "LAYER", "TYPE", "VERSION", "IMPLEMENTATION",
                           "INPUTS -> OUTPUTS"};
    if (!t || cli_table_add(t, head))
        return cli_error("out of memory");
    for (i = 0; i < n; i++) {
        mica_layer_info_t li;
        mica_tensor_info_t ti;
        char idx[16], ver[16], io[2048], impl[256], type[256];
        size_t len = 0;
        const char *row[6];
        memset(&li, 0, sizeof(li));
        li.struct_size = sizeof(li);
        if (mica_engine_layer(engine, i, &li) != MICA_OK)
            continue;
        snprintf(idx, sizeof(idx), "%d", (int)i);
        snprintf(ver, sizeof(ver), "%d", (int)li.version);
        if (li.role)
            snprintf(impl, sizeof(impl), "%s (%s)", li.implementation,
                     role_name(li.role));
        else
            snprintf(impl, sizeof(impl), "%s", li.implementation);
        io[0] = '\0';
        for (k = 0; k < li.nb_inputs && len < sizeof(io); k++)
            len += (size_t)snprintf(io + len, sizeof(io) - len, "%s%s",
                                    k ? ", " : "",
                                    tensor_name(engine, li.inputs[k], &ti));
        if (len < sizeof(io))
            len += (size_t)snprintf(io + len, sizeof(io) - len, "%s->",
                                    li.nb_inputs ? " " : "");
        for (k = 0; k < li.nb_outputs && len < sizeof(io); k++)
            len += (size_t)snprintf(io + len, sizeof(io) - len, "%s%s",
                                    k ? ", " : " ",
                                    tensor_name(engine, li.outputs[k], &ti));
        row[0] = idx;
        row[1] = li.name;
        if (li.ns && li.ns[0])
            snprintf(type, sizeof(type), "%s::%s", li.ns, li.type);
        else
            snprintf(type, sizeof(type), "%s", li.type);
        row[2] = type;
        row[3] = ver;
        row[4] = impl;
        row[5] = io;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    printf("layers (%d, in execution order):\n", (int)n);
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    return CLI_OK;
}

static int print_tensors(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_tensors(engine), i;
    cli_table_t *t = cli_table_new(6);
    const char *head[6] = {"TENSOR", "DTYPE", "SHAPE", "KIND", "ROLE",
                           "ARENA"};
    if (!t || cli_table_add(t, head))
        return cli_error("out of memory");
    for (i = 0; i < n; i++) {
        mica_tensor_info_t ti;
        char shape[256], arena[64], role[32];
        const char *row[6];
        int32_t k;
        size_t len;
        memset(&ti, 0, sizeof(ti));
        ti.struct_size = sizeof(ti);
        if (mica_engine_tensor(engine, i, &ti) != MICA_OK)
            continue;
        if (ti.shape) {
            snprintf(shape, sizeof(shape), "%s", ti.shape);
        } else {
            len = (size_t)snprintf(shape, sizeof(shape), "[");
            for (k = 0; k < ti.dims.nb_dims && len < sizeof(shape); k++)
                len += (size_t)snprintf(shape + len, sizeof(shape) - len,
                                        "%s%lld", k ? ", " : "",
                                        (long long)ti.dims.d[k]);
            if (len < sizeof(shape))
                snprintf(shape + len, sizeof(shape) - len, "]");
        }
        snprintf(role, sizeof(role), "%s",
                 ti.is_input && ti.is_output ? "input, output"
                 : ti.is_input               ? "input"
                 : ti.is_output              ? "output"
                                             : "-");
        if (ti.offset >= 0)
            snprintf(arena, sizeof(arena), "%lld+%lld", (long long)ti.offset,
                     (long long)ti.bytes);
        else
            snprintf(arena, sizeof(arena), "-");
        row[0] = ti.name;
        row[1] = mica_dtype_name(ti.dtype);
        row[2] = shape;
        row[3] = ti.kind == MICA_TENSOR_SHAPE ? "S" : "E";
        row[4] = role;
        row[5] = arena;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    printf("tensors (%d):\n", (int)n);
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    return CLI_OK;
}

int cmd_inspect(int argc, char **argv)
{
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    const char *manifest = NULL, *v;
    uint32_t device = CLI_DEVICE_MANIFEST;
    int nb_paths = 0, i, rc = CLI_OK;
    mica_context_t *ctx = NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *engine = NULL;

    if (!paths)
        return cli_error("out of memory");
    for (i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            free(paths);
            return CLI_OK;
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("inspect", argc, argv, &i,
                                    "--module-path")))
                rc = CLI_USAGE;
            else
                paths[nb_paths++] = (char *)v;
        } else if (cli_is_opt(a, "--device")) {
            if (!(v = cli_opt_value("inspect", argc, argv, &i, "--device")))
                rc = CLI_USAGE;
            else if (cli_parse_device(v, &device))
                rc = cli_usage_error("inspect", "--device '%s': expected "
                                     "auto, cpu or cuda", v);
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error("inspect", "unknown option '%s'", a);
        } else if (!manifest) {
            manifest = a;
        } else {
            rc = cli_usage_error("inspect", "unexpected argument '%s' (one "
                                 "manifest only)", a);
        }
    }
    if (rc == CLI_OK && !manifest)
        rc = cli_usage_error("inspect", "no manifest given");
    if (rc == CLI_OK)
        rc = cli_context(&ctx, paths, nb_paths, 0);
    free(paths);
    if (rc != CLI_OK)
        return rc;
    rc = cli_build(ctx, manifest, device, &m, &engine);
    if (rc == CLI_OK) {
        const char *name = mica_manifest_name(m);
        printf("manifest: %s\n", manifest);
        printf("name:     %s\n", name[0] ? name : "-");
        printf("device:   %s\n", cli_device_name(mica_engine_device(engine)));
        printf("arena:    %lld bytes\n",
               (long long)mica_engine_arena_bytes(engine));
        printf("inputs:   %d, outputs: %d\n\n",
               (int)mica_engine_nb_inputs(engine),
               (int)mica_engine_nb_outputs(engine));
        rc = print_layers(engine);
        if (rc == CLI_OK) {
            printf("\n");
            rc = print_tensors(engine);
        }
    }
    if (engine)
        mica_engine_destroy(engine);
    if (m)
        mica_manifest_destroy(m);
    mica_context_destroy(ctx);
    return rc;
}
