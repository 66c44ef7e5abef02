/*
 * tools/cmd_inspect.c - `mica inspect`: build a manifest's engine, or load
 * an engine file, and show what it holds: the device, the arena, every
 * layer in execution order (type, version, the implementation chosen,
 * inputs -> outputs), every tensor (dtype, symbolic shape, execution or
 * shape tensor, arena placement), the memory formats (channels-last
 * tensors, the reorders: inspect_formats.c), what the symbols of the
 * shapes stand for, and the optimization profiles (each input's range,
 * each profile's arena).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica inspect MANIFEST|ENGINE|MODEL.onnx [--device auto|cpu|cuda]\n"
        "                    [--prefer T=I]... [--module-path DIR]...\n"
        "                    [--allow-manifest-modules] [--no-fusion]\n"
        "                    [--passes NAME,...] [--no-passes NAME,...]\n"
        "                    [--shapes NAME:AxB,...] (an ONNX model's profile;\n"
        "                    also --min-shapes, --opt-shapes, --max-shapes)\n\n"
        "Build the engine of MANIFEST, or load ENGINE (an engine file that\n"
        "'mica build' wrote; it runs on the device it was built for, and\n"
        "another --device is refused), and print its device, arena size,\n"
        "layers in execution order with the implementation chosen for each,\n"
        "tensors with their dtype, shape and kind (E: execution tensor, S:\n"
        "shape tensor, E+S: both, unused: read by nothing), the symbols of\n"
        "the shapes (N = x[0]: N is dimension 0 of input x), each loop and\n"
        "conditional with its boundary layers and the layers inside it (by\n"
        "branch for a conditional), and the\n"
        "optimization profiles with the min/opt/max dimensions (or values,\n"
        "for a shape-tensor input) of every input and the arena each needs.\n"
        "The graph passes that ran before the build are listed with what\n"
        "each changed; --passes NAME,... runs only those, --no-passes\n"
        "NAME,... all but those (--no-passes all: the network as written;\n"
        "docs/passes.md).  A layer a fusion rule made says which layers it\n"
        "replaced; --no-fusion builds a manifest without fusion.\n"
        "--allow-manifest-modules lets the manifest load the modules its\n"
        "modules.paths and modules.load name (native code: only for trusted\n"
        "manifests).  --allow-folder DIR lets the files the model names\n"
        "(weights, external data) lie in DIR too, not only in its folder.\n");
}

/* The graph passes that ran before the build, each with what it
 * changed. */
static void print_passes(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_passes(engine), i;
    cli_table_t *t;

    if (!n) {
        printf("passes:   none\n\n");
        return;
    }
    if (!(t = cli_table_new(2)))
        return;
    for (i = 0; i < n; i++) {
        mica_pass_info_t pi;
        const char *row[2];
        memset(&pi, 0, sizeof(pi));
        pi.struct_size = sizeof(pi);
        if (mica_engine_pass(engine, i, &pi) != MICA_OK)
            continue;
        row[0] = pi.name;
        row[1] = pi.summary;
        if (cli_table_add(t, row))
            break;
    }
    printf("passes (%d, in the order they ran):\n", (int)n);
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    printf("\n");
}

/* The layers fusion rules made, each with what it replaced. */
static void print_fused(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_layers(engine), i, nb = 0;

    for (i = 0; i < n; i++) {
        mica_layer_info_t li;
        memset(&li, 0, sizeof(li));
        li.struct_size = sizeof(li);
        if (mica_engine_layer(engine, i, &li) != MICA_OK || !li.fused)
            continue;
        if (nb++ == 0)
            printf("\nfused layers:\n");
        printf("  %s (%s) replaces, by rule %s\n", li.name, li.type,
               li.fused);
    }
}

static const char *role_name(uint32_t role)
{
    static const char *const names[] = {
        "", "trip limit", "recurrence", "iterator", "loop output",
        "condition", "if input", "if output", "assertion"};
    return role < sizeof(names) / sizeof(names[0]) ? names[role] : "?";
}

static const char *kind_name(mica_tensor_kind_t kind)
{
    switch (kind) {
    case MICA_TENSOR_EXECUTION: return "E";
    case MICA_TENSOR_SHAPE: return "S";
    case MICA_TENSOR_BOTH: return "E+S";
    case MICA_TENSOR_UNUSED: return "unused";
    default: return "?";
    }
}

/* "values [1, 4]" into buf. */
static const char *values_str(const int32_t *v, int32_t nb, char *buf,
                              size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "values [");
    int32_t i;
    for (i = 0; i < nb && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? ", " : "",
                              (int)v[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
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
    cli_table_t *t = cli_table_new(7);
    const char *head[7] = {"#", "LAYER", "TYPE", "VERSION", "IMPLEMENTATION",
                           "INPUTS -> OUTPUTS", "CHOSEN BECAUSE"};
    if (!t || cli_table_add(t, head))
        return cli_error("out of memory");
    for (i = 0; i < n; i++) {
        mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
        mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
        char idx[16], ver[16], io[2048], impl[256], type[256];
        size_t len = 0;
        const char *row[7];
        memset(&li, 0, sizeof(li));
        li.struct_size = sizeof(li);
        if (mica_engine_layer(engine, i, &li) != MICA_OK)
            continue;
        snprintf(idx, sizeof(idx), "%d", (int)i);
        snprintf(ver, sizeof(ver), "%d", (int)li.version);
        len = (size_t)snprintf(impl, sizeof(impl), "%s",
                               li.implementation);
        if (li.tactic && len < sizeof(impl))
            len += (size_t)snprintf(impl + len, sizeof(impl) - len,
                                    " tactic %d", (int)li.tactic);
        if (li.role && len < sizeof(impl))
            snprintf(impl + len, sizeof(impl) - len, " (%s)",
                     role_name(li.role));
        len = 0;
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
        row[6] = li.choice && li.choice[0] ? li.choice : "-";
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    printf("layers (%d, in execution order):\n", (int)n);
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
    print_fused(engine);
    return CLI_OK;
}

/* Append ", WHAT" (or WHAT first) to buf of capacity len. */
static void add_item(char *buf, size_t len, const char *what)
{
    size_t n = strlen(buf);
    if (n < len)
        snprintf(buf + n, len - n, "%s%s", n ? ", " : "", what);
}

/* Each loop and conditional: where it is, its boundary layers, and what
 * runs inside it (by branch for a conditional). */
static int print_constructs(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_constructs(engine), k, i, j;

    if (n == 0)
        return CLI_OK;
    printf("\nloops and conditionals (%d):\n", (int)n);
    for (k = 0; k < n; k++) {
        mica_construct_info_t ci = {
            .struct_size = sizeof(mica_construct_info_t)};
        mica_construct_info_t pi = {
            .struct_size = sizeof(mica_construct_info_t)};
        char where[256], boundary[2048] = "", part[3][2048] = {"", "", ""};
        memset(&ci, 0, sizeof(ci));
        ci.struct_size = sizeof(ci);
        if (mica_engine_construct(engine, k, &ci) != MICA_OK)
            continue;
        snprintf(where, sizeof(where), "top level");
        if (ci.parent >= 0 &&
            mica_engine_construct(engine, ci.parent, &pi) == MICA_OK)
            snprintf(where, sizeof(where), "in %s %s",
                     pi.kind == MICA_CONSTRUCT_LOOP ? "loop" : "conditional",
                     pi.name);
        for (i = ci.first_layer; i < ci.end_layer; i++) {
            mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
            char item[512];
            memset(&li, 0, sizeof(li));
            li.struct_size = sizeof(li);
            if (mica_engine_layer(engine, i, &li) != MICA_OK)
                continue;
            if (li.construct == k) {
                snprintf(item, sizeof(item), "%s (%s)", li.name, li.type);
                if (li.role)
                    add_item(boundary, sizeof(boundary), item);
                else
                    add_item(part[li.branch >= 0 ? li.branch : 2],
                             sizeof(part[0]), li.name);
            }
        }
        /* Constructs right inside this one, in their branch. */
        for (j = 0; j < n; j++) {
            mica_construct_info_t ni = {
                .struct_size = sizeof(mica_construct_info_t)};
            char item[512];
            memset(&ni, 0, sizeof(ni));
            ni.struct_size = sizeof(ni);
            if (mica_engine_construct(engine, j, &ni) != MICA_OK ||
                ni.parent != k)
                continue;
            snprintf(item, sizeof(item), "%s %s",
                     ni.kind == MICA_CONSTRUCT_LOOP ? "loop" : "conditional",
                     ni.name);
            add_item(part[ni.branch >= 0 ? ni.branch : 2], sizeof(part[0]),
                     item);
        }
        printf("  %s %s (%s): layers %d-%d\n",
               ci.kind == MICA_CONSTRUCT_LOOP ? "loop" : "conditional",
               ci.name, where, (int)ci.first_layer, (int)ci.end_layer - 1);
        printf("    boundary: %s\n", boundary[0] ? boundary : "-");
        if (ci.kind == MICA_CONSTRUCT_CONDITIONAL) {
            printf("    true:     %s\n", part[0][0] ? part[0] : "-");
            printf("    false:    %s\n", part[1][0] ? part[1] : "-");
            if (part[2][0])
                printf("    unused:   %s\n", part[2]);
        } else {
            printf("    inside:   %s\n", part[2][0] ? part[2] : "-");
        }
    }
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
        mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
        mica_tensor_info_t ai;
        char shape[256], arena[320], role[64], dtype[64];
        const char *row[7];
        size_t len = 0;
        memset(&ti, 0, sizeof(ti));
        ti.struct_size = sizeof(ti);
        if (mica_engine_tensor(engine, i, &ti) != MICA_OK)
            continue;

        role[0] = '\0';
        if (ti.is_input)
            len += (size_t)snprintf(role + len, sizeof(role) - len, "input");
        if (ti.is_output)
            len += (size_t)snprintf(role + len, sizeof(role) - len, "%soutput",
                                    len ? ", " : "");
        if (ti.is_shape_output)
            snprintf(role + len, sizeof(role) - len, "%sshape output",
                     len ? ", " : "");
        if (!role[0])
            snprintf(role, sizeof(role), "-");
        if (ti.offset >= 0 && ti.alias >= 0)
            snprintf(arena, sizeof(arena), "%lld+%lld, in place of %s",
                     (long long)ti.offset, (long long)ti.bytes,
                     tensor_name(engine, ti.alias, &ai));
        else if (ti.offset >= 0)
            snprintf(arena, sizeof(arena), "%lld+%lld", (long long)ti.offset,
                     (long long)ti.bytes);
        else if (ti.constant)
            snprintf(arena, sizeof(arena), "weights");
        else
            snprintf(arena, sizeof(arena), "-");
        row[0] = ti.name;
        row[1] = mica_dtype_name(ti.dtype);
        if (ti.format == MICA_FORMAT_HWC || ti.format == MICA_FORMAT_DHWC) {
            snprintf(dtype, sizeof(dtype), "%s, %s", row[1],
                     ti.format == MICA_FORMAT_HWC ? "hwc" : "dhwc");
            row[1] = dtype;
        }
        row[2] = ti.shape ? ti.shape
                          : cli_dims_str(&ti.dims, shape, sizeof(shape));
        row[3] = kind_name(ti.kind);
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

/* What each symbol of the shapes stands for: "N = x[0]". */
static int print_symbols(mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_symbols(engine), i;
    if (!n)
        return CLI_OK;
    printf("\nsymbols (%d):\n", (int)n);
    for (i = 0; i < n; i++) {
        const char *name, *meaning;
        if (mica_engine_symbol(engine, i, &name, &meaning) != MICA_OK)
            return cli_error("cannot query symbol %d of the engine", (int)i);
        printf("  %s = %s\n", name, meaning);
    }
    return CLI_OK;
}

/* Each profile's arena, then every input's min/opt/max in it. */
static int print_profiles(mica_context_t *ctx, mica_engine_t *engine)
{
    int32_t n = mica_engine_nb_profiles(engine);
    int32_t nb_in = mica_engine_nb_inputs(engine), p, i;
    const char *head[4] = {"INPUT", "MIN", "OPT", "MAX"};

    if (!n)
        return CLI_OK;
    printf("\nprofiles (%d):\n", (int)n);
    for (p = 0; p < n; p++) {
        cli_table_t *t = cli_table_new(4);
        if (!t || cli_table_add(t, head)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
        for (i = 0; i < nb_in; i++) {
            mica_tensor_info_t ti = {
                .struct_size = sizeof(mica_tensor_info_t)};
            mica_dims_t mn, op, mx;
            const int32_t *vmin = NULL, *vopt = NULL, *vmax = NULL;
            int32_t nb_values = 0;
            char c[3][512];
            const char *row[4];
            if (mica_engine_profile_input(engine, p, i, &mn, &op, &mx,
                                          &nb_values, &vmin, &vopt, &vmax)
                != MICA_OK) {
                cli_table_free(t);
                return cli_error("profile %d, input %d: %s", (int)p, (int)i,
                                 mica_context_error(ctx));
            }
            row[0] = tensor_name(engine, mica_engine_input(engine, i), &ti);
            if (nb_values || (vmin && vopt && vmax)) {
                row[1] = values_str(vmin, nb_values, c[0], sizeof(c[0]));
                row[2] = values_str(vopt, nb_values, c[1], sizeof(c[1]));
                row[3] = values_str(vmax, nb_values, c[2], sizeof(c[2]));
            } else {
                row[1] = cli_dims_str(&mn, c[0], sizeof(c[0]));
                row[2] = cli_dims_str(&op, c[1], sizeof(c[1]));
                row[3] = cli_dims_str(&mx, c[2], sizeof(c[2]));
            }
            if (cli_table_add(t, row)) {
                cli_table_free(t);
                return cli_error("out of memory");
            }
        }
        printf("  profile %d: arena %lld bytes\n", (int)p,
               (long long)mica_engine_profile_arena_bytes(engine, p));
        cli_table_print(t, stdout, "    ");
        cli_table_free(t);
    }
    return CLI_OK;
}

int cmd_inspect(int argc, char **argv)
{
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    const char *source = NULL, *v;
    uint32_t device = CLI_DEVICE_MANIFEST;
    int nb_paths = 0, i, rc = CLI_OK, taken;
    mica_context_t *ctx = NULL;
    cli_source_t src;
    mica_engine_t *engine;

    if (!paths)
        return cli_error("out of memory");
    for (i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            free(paths);
            return CLI_OK;
        } else if (cli_is_opt(a, "--prefer")) {
            if (!(v = cli_opt_value("inspect", argc, argv, &i, "--prefer")) ||
                cli_add_prefer("inspect", v) != CLI_OK)
                rc = CLI_USAGE;
        } else if (cli_is_opt(a, "--no-fusion")) {
            cli_set_no_fusion(1);
        } else if (cli_is_opt(a, "--allow-manifest-modules")) {
            cli_set_allow_manifest_modules(1);
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
                                     "%s", v, cli_device_choices());
        } else if ((rc = cli_onnx_option("inspect", argc, argv, &i, &taken))
                   != CLI_OK || taken) {
            continue;
        } else if ((rc = cli_passes_option("inspect", argc, argv, &i,
                                           &taken)) != CLI_OK || taken) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error("inspect", "unknown option '%s'", a);
        } else if (!source) {
            source = a;
        } else {
            rc = cli_usage_error("inspect", "unexpected argument '%s' (one "
                                 "manifest or engine only)", a);
        }
    }
    if (rc == CLI_OK && !source)
        rc = cli_usage_error("inspect", "no manifest or engine given");
    if (rc == CLI_OK)
        rc = cli_context(&ctx, paths, nb_paths, 0);
    free(paths);
    if (rc != CLI_OK)
        return rc;
    if (cli_onnx_probe(source)) {
        /* A model the importer maps only in part: what it cannot map,
         * node by node, instead of the engine. */
        int32_t refused = 0;
        rc = cli_onnx_check(ctx, source, &refused);
        if (rc != CLI_OK || refused) {
            mica_context_destroy(ctx);
            return rc != CLI_OK ? rc : CLI_ERROR;
        }
        printf("\n");
    }
    rc = cli_open(ctx, source, device, &src);
    if (rc == CLI_OK) {
        const char *name = cli_source_name(&src);
        engine = src.engine;
        if (src.is_engine) {
            printf("engine:   %s\n", source);
        } else {
            printf("manifest: %s\n", source);
            printf("name:     %s\n", name[0] ? name : "-");
        }
        printf("device:   %s\n", cli_device_name(mica_engine_device(engine)));
        printf("arena:    %lld bytes%s\n",
               (long long)mica_engine_arena_bytes(engine),
               mica_engine_nb_profiles(engine) > 1 ? " (profile 0)" : "");
        printf("inputs:   %d, outputs: %d\n\n",
               (int)mica_engine_nb_inputs(engine),
               (int)mica_engine_nb_outputs(engine));
        print_passes(engine);
        rc = print_layers(engine);
        if (rc == CLI_OK)
            rc = print_constructs(engine);
        if (rc == CLI_OK) {
            printf("\n");
            rc = print_tensors(engine);
        }
        if (rc == CLI_OK)
            rc = cli_print_formats(engine);
        if (rc == CLI_OK)
            rc = print_symbols(engine);
        if (rc == CLI_OK)
            rc = print_profiles(ctx, engine);
    }
    cli_close(&src);
    mica_context_destroy(ctx);
    return rc;
}
