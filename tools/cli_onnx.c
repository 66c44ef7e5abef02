/*
 * tools/cli_onnx.c - ONNX models where the commands take a manifest:
 * the profile options (--shapes, --min-shapes, --opt-shapes,
 * --max-shapes, as trtexec takes them), the inputs `mica run` was given
 * (their shapes make the profile when no option does), and the import in
 * memory.  A file is an ONNX model by its first bytes, not its name.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"

static mica_onnx_options_t options = {
    .struct_size = sizeof(mica_onnx_options_t),
};

int cli_onnx_option(const char *cmd, int argc, char **argv, int *i,
                    int *taken)
{
    static const char *const names[] = {"--shapes", "--min-shapes",
                                        "--opt-shapes", "--max-shapes"};
    const char **slots[] = {&options.shapes, &options.min_shapes,
                            &options.opt_shapes, &options.max_shapes};
    size_t k;
    *taken = 0;
    if (cli_is_opt(argv[*i], "--allow-folder")) {
        const char *v = cli_opt_value(cmd, argc, argv, i, "--allow-folder");
        *taken = 1;
        return v ? cli_add_folder(cmd, v) : CLI_USAGE;
    }
    for (k = 0; k < 4; k++)
        if (cli_is_opt(argv[*i], names[k])) {
            const char *v = cli_opt_value(cmd, argc, argv, i, names[k]);
            *taken = 1;
            if (!v)
                return CLI_USAGE;
            if (*slots[k])
                return cli_usage_error(cmd, "%s is given twice", names[k]);
            *slots[k] = v;
            return CLI_OK;
        }
    return CLI_OK;
}

void cli_onnx_set_inputs(int32_t nb, const char *const *names,
                         const mica_tensor_desc_t *descs,
                         const void *const *data)
{
    options.nb_inputs = nb;
    options.input_names = names;
    options.input_descs = descs;
    options.input_data = data;
}

const char *cli_onnx_shapes(void)
{
    return options.shapes;
}

int cli_onnx_probe(const char *path)
{
    size_t n = strlen(path);
    if (mica_onnx_file_probe(path))
        return 1;
    /* Without the importer, a .onnx file is refused by it, with why. */
    return !mica_onnx_available() && n > 5 && !strcmp(path + n - 5, ".onnx");
}

int cli_onnx_import(mica_context_t *ctx, const char *path,
                    mica_onnx_model_t **model)
{
    if (mica_onnx_import(ctx, path, &options, model) != MICA_OK)
        return cli_error("%s", mica_context_error(ctx));
    return CLI_OK;
}

int cli_onnx_manifest(mica_context_t *ctx, const char *path,
                      mica_manifest_t **m)
{
    mica_onnx_model_t *model = NULL;
    int rc = cli_onnx_import(ctx, path, &model);
    if (rc == CLI_OK && mica_onnx_manifest(model, m) != MICA_OK)
        rc = cli_error("%s", mica_context_error(ctx));
    mica_onnx_destroy(model);
    return rc;
}

int cli_onnx_check(mica_context_t *ctx, const char *path, int32_t *refused)
{
    char *report = NULL, *line, *next;
    int32_t nodes = 0;
    *refused = 0;
    if (mica_onnx_check(ctx, path, &options, &report, &nodes, refused)
        != MICA_OK)
        return cli_error("%s", mica_context_error(ctx));
    for (line = report; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        else
            next = line + strlen(line);
        printf("%s: %s\n", path, line);
    }
    mica_free(report);
    if (*refused)
        printf("%s: %d problem%s (the model has %d node%s): it cannot be "
               "imported as it is\n", path, (int)*refused,
               *refused > 1 ? "s" : "", (int)nodes, nodes != 1 ? "s" : "");
    else
        printf("%s: all %d node%s import\n", path, (int)nodes,
               nodes != 1 ? "s" : "");
    return CLI_OK;
}
