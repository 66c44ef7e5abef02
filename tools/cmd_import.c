/*
 * tools/cmd_import.c - `mica import MODEL.onnx -o OUT.yaml`: the manifest
 * of an ONNX model and its weights file beside it (both or neither), and
 * `mica import --list-ops`, the operators the importer maps.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica import MODEL.onnx -o OUT.yaml [--shapes NAME:AxB,...]\n"
        "                   [--min-shapes S] [--opt-shapes S] [--max-shapes S]\n"
        "                   [--module-path DIR]...\n"
        "       mica import --check MODEL.onnx [--shapes ...]\n"
        "       mica import --list-ops\n\n"
        "Write the manifest of an ONNX model as OUT.yaml and its weights as\n"
        "OUT.weights beside it (raw bytes the manifest names by file and\n"
        "offset); each layer is named after its ONNX node, with a comment\n"
        "naming the operator.  Dimensions given by name or unknown are\n"
        "runtime dimensions (-1): their profile comes from the shapes, as\n"
        "trtexec takes them (NAME:1x3x224x224,...; for a shape-tensor input,\n"
        "its values); --shapes sets min, opt and max at once.  An operator\n"
        "with no mapping maps onto a registered layer type of its name (and\n"
        "domain, as namespace) if there is one.\n\n"
        "  -o OUT.yaml          the manifest to write\n"
        "  --check              write nothing: list every node that cannot\n"
        "                       be imported, with why, in one pass (status 1\n"
        "                       if there is one)\n"
        "  --list-ops           print the ONNX operators the importer maps\n"
        "  --allow-folder DIR   external data may also lie in DIR (repeatable;\n"
        "                       by default only in the model's own folder)\n"
        "  --module-path DIR    another folder of modules (repeatable)\n\n"
        "On any error nothing is written and the status is 1.\n");
}

static int list_ops(void)
{
    const char *op, *layers;
    int32_t i;
    cli_table_t *t = cli_table_new(2);
    const char *head[2] = {"ONNX OPERATOR", "MICA LAYERS"};
    if (!t || cli_table_add(t, head))
        return cli_error("out of memory");
    for (i = 0; mica_onnx_op(i, &op, &layers) == MICA_OK; i++) {
        const char *row[2];
        row[0] = op;
        row[1] = layers;
        if (cli_table_add(t, row)) {
            cli_table_free(t);
            return cli_error("out of memory");
        }
    }
    if (!mica_onnx_available()) {
        /* The import says why (configure's reason). */
        mica_context_t *ctx = NULL;
        mica_onnx_model_t *m = NULL;
        cli_table_free(t);
        if (mica_context_create(&ctx) != MICA_OK)
            return cli_error("out of memory");
        mica_onnx_import(ctx, "-", NULL, &m);
        cli_error("%s", mica_context_error(ctx));
        mica_context_destroy(ctx);
        return CLI_ERROR;
    }
    cli_table_print(t, stdout, "");
    cli_table_free(t);
    printf("%d operators; any other maps onto a registered layer type of "
           "its name (and domain, as namespace)\n", (int)i);
    return CLI_OK;
}

int cmd_import(int argc, char **argv)
{
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    const char *model = NULL, *output = NULL, *v;
    int nb_paths = 0, i, rc = CLI_OK, taken, list = 0, check = 0;
    mica_context_t *ctx = NULL;
    mica_onnx_model_t *m = NULL;

    if (!paths)
        return cli_error("out of memory");
    for (i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            free(paths);
            return CLI_OK;
        } else if (cli_is_opt(a, "--list-ops")) {
            list = 1;
        } else if (cli_is_opt(a, "--check")) {
            check = 1;
        } else if (cli_is_opt(a, "-o") || cli_is_opt(a, "--output")) {
            if (!(v = cli_opt_value("import", argc, argv, &i, "-o")))
                rc = CLI_USAGE;
            else if (output)
                rc = cli_usage_error("import", "-o is given twice");
            else if (!v[0])
                rc = cli_usage_error("import", "-o needs a file name");
            else
                output = v;
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("import", argc, argv, &i,
                                    "--module-path")))
                rc = CLI_USAGE;
            else
                paths[nb_paths++] = (char *)v;
        } else if ((rc = cli_onnx_option("import", argc, argv, &i, &taken))
                   != CLI_OK || taken) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error("import", "unknown option '%s'", a);
        } else if (!model) {
            model = a;
        } else {
            rc = cli_usage_error("import", "unexpected argument '%s' (one "
                                 "model only)", a);
        }
    }
    if (rc == CLI_OK && list) {
        free(paths);
        return list_ops();
    }
    if (rc == CLI_OK && !model)
        rc = cli_usage_error("import", "no ONNX model given");
    if (rc == CLI_OK && check && output)
        rc = cli_usage_error("import", "--check writes nothing: no -o");
    if (rc == CLI_OK && !output && !check)
        rc = cli_usage_error("import", "no manifest given (-o OUT.yaml)");
    if (rc != CLI_OK) {
        free(paths);
        return rc;
    }
    rc = cli_context(&ctx, paths, nb_paths, 0);
    free(paths);
    if (rc != CLI_OK)
        return rc;
    if (check) {
        int32_t refused = 0;
        rc = cli_onnx_check(ctx, model, &refused);
        mica_context_destroy(ctx);
        return rc == CLI_OK && refused ? CLI_ERROR : rc;
    }
    rc = cli_onnx_import(ctx, model, &m);
    if (rc == CLI_OK) {
        if (mica_onnx_save(m, output) != MICA_OK) {
            rc = cli_error("%s", mica_context_error(ctx));
        } else {
            int64_t bytes = mica_onnx_weights_size(m);
            printf("imported %s: %s and its weights (%lld bytes)\n", model,
                   output, (long long)bytes);
        }
    }
    mica_onnx_destroy(m);
    mica_context_destroy(ctx);
    return rc;
}
