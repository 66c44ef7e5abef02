/*
 * tools/cmd_build.c - `mica build`: load a manifest, build its engine (every
 * implementation chosen, every buffer planned) and save it as an engine
 * file that `mica run` and `mica inspect` take in place of the manifest.
 * The file is complete or absent: mica_engine_save writes it aside and
 * renames it into place, and nothing is written on any error.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica build MANIFEST -o ENGINE [--device auto|cpu|cuda] [--fp16]\n"
        "                  [--autotune|--no-autotune] [--timing-cache FILE]\n"
        "                  [--prefer T=I]... [--module-path DIR]...\n"
        "                  [--allow-manifest-modules] [--no-fusion]\n"
        "                  [--passes NAME,...] [--no-passes NAME,...]\n"
        "                  [--shapes NAME:AxB,...] (MANIFEST may be an ONNX model:\n"
        "                  its profile; also --min/--opt/--max-shapes)\n\n"
        "Build the engine of MANIFEST (choose an implementation for every\n"
        "layer, infer shapes, plan memory) and save it as the engine file\n"
        "ENGINE, which 'mica run' and 'mica inspect' take in place of the\n"
        "manifest.  An engine runs on the device it was built for, where the\n"
        "modules it was built with (same type, version and implementation)\n"
        "are installed.\n\n"
        "  -o, --output ENGINE    the engine file to write (replaced whole)\n"
        "  --device D             auto, cpu or cuda (default: the manifest's)\n"
        "  --fp16                 let layers run in float16 where their\n"
        "                         implementations take it (casts are added)\n"
        "  --no-fusion            fuse nothing (--no-passes fusion,pointwise)\n"
        "  --passes NAME,...      run only these graph passes (all, none;\n"
        "                         default all: docs/passes.md)\n"
        "  --no-passes NAME,...   run every pass but these (all: none runs;\n"
        "                         the network is built as written)\n"
        CLI_TUNE_USAGE
        "  --prefer TYPE=IMPL     use implementation IMPL for layers of TYPE\n"
        "                         that do not pin one (repeatable; replaces\n"
        "                         $MICA_PREFER)\n"
        "  --allow-folder DIR     the files the model names (weights, external\n"
        "                         data) may also lie in DIR (repeatable; by\n"
        "                         default only in the model's own folder)\n"
        "  --module-path DIR      another folder of modules (repeatable; also\n"
        "                         $MICA_MODULE_PATH, colon-separated)\n"
        "  --allow-manifest-modules  let the manifest load the modules its\n"
        "                         modules.paths and modules.load name\n"
        "                         (native code: only for trusted manifests)\n\n"
        "On any error nothing is written and the status is 1.\n");
}

/* Whether a and b name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
           && sa.st_ino == sb.st_ino;
}

int cmd_build(int argc, char **argv)
{
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    const char *manifest = NULL, *output = NULL, *v;
    uint32_t device = CLI_DEVICE_MANIFEST;
    int nb_paths = 0, i, rc = CLI_OK, taken;
    mica_context_t *ctx = NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *engine = NULL;
    mica_status_t st;
    struct stat sb;

    if (!paths)
        return cli_error("out of memory");
    for (i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            free(paths);
            return CLI_OK;
        } else if (cli_is_opt(a, "-o") || cli_is_opt(a, "--output")) {
            if (!(v = cli_opt_value("build", argc, argv, &i, "-o")))
                rc = CLI_USAGE;
            else if (output)
                rc = cli_usage_error("build", "-o is given twice");
            else if (!v[0])
                rc = cli_usage_error("build", "-o needs a file name");
            else
                output = v;
        } else if (cli_is_opt(a, "--prefer")) {
            if (!(v = cli_opt_value("build", argc, argv, &i, "--prefer")) ||
                cli_add_prefer("build", v) != CLI_OK)
                rc = CLI_USAGE;
        } else if (cli_is_opt(a, "--allow-manifest-modules")) {
            cli_set_allow_manifest_modules(1);
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("build", argc, argv, &i,
                                    "--module-path")))
                rc = CLI_USAGE;
            else
                paths[nb_paths++] = (char *)v;
        } else if ((rc = cli_tune_option("build", argc, argv, &i, &taken)) !=
                       CLI_OK ||
                   taken) {
            continue;
        } else if (cli_is_opt(a, "--no-fusion")) {
            cli_set_no_fusion(1);
        } else if (cli_is_opt(a, "--fp16")) {
            cli_set_fp16(1);
        } else if (cli_is_opt(a, "--device")) {
            if (!(v = cli_opt_value("build", argc, argv, &i, "--device")))
                rc = CLI_USAGE;
            else if (cli_parse_device(v, &device))
                rc = cli_usage_error("build", "--device '%s': expected "
                                     "%s", v, cli_device_choices());
        } else if ((rc = cli_onnx_option("build", argc, argv, &i, &taken))
                   != CLI_OK || taken) {
            continue;
        } else if ((rc = cli_passes_option("build", argc, argv, &i, &taken))
                   != CLI_OK || taken) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error("build", "unknown option '%s'", a);
        } else if (!manifest) {
            manifest = a;
        } else {
            rc = cli_usage_error("build", "unexpected argument '%s' (one "
                                 "manifest only)", a);
        }
    }
    if (rc == CLI_OK && !manifest)
        rc = cli_usage_error("build", "no manifest given");
    if (rc == CLI_OK && !output)
        rc = cli_usage_error("build", "no engine file given (-o ENGINE)");
    if (rc != CLI_OK) {
        free(paths);
        return rc;
    }
    /* Refusals that need no modules first. */
    if (mica_engine_file_probe(manifest)) {
        free(paths);
        return cli_error("%s is an engine file, not a manifest (it is built "
                         "already: give it to 'mica run' or 'mica inspect')",
                         manifest);
    }
    if (same_file(manifest, output)) {
        free(paths);
        return cli_error("-o %s: that is the manifest itself; the engine "
                         "needs another file", output);
    }
    if (stat(output, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        free(paths);
        return cli_error("-o %s: is a folder; the engine needs a file name",
                         output);
    }
    rc = cli_context(&ctx, paths, nb_paths, 0);
    free(paths);
    if (rc != CLI_OK)
        return rc;
    rc = cli_build(ctx, manifest, device, &m, &engine);
    if (rc == CLI_OK) {
        st = mica_engine_save(engine, output);
        if (st != MICA_OK) {
            rc = cli_error("%s", mica_context_error(ctx));
        } else {
            int32_t n = mica_engine_nb_layers(engine);
            if (stat(output, &sb) != 0)
                sb.st_size = 0;
            printf("built %s: %d layer%s, device %s, %lld bytes\n", output,
                   (int)n, n == 1 ? "" : "s",
                   cli_device_name(mica_engine_device(engine)),
                   (long long)sb.st_size);
        }
    }
    if (engine)
        mica_engine_destroy(engine);
    if (m)
        mica_manifest_destroy(m);
    mica_context_destroy(ctx);
    return rc;
}
