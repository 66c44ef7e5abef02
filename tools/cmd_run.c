/*
 * tools/cmd_run.c - `mica run`: build a manifest's engine or load an
 * engine file, run it once on .npy inputs (or seeded random values for
 * those not given, tools/inputs.c) and write every network output (and
 * every output for shapes) as DIR/NAME.npy, in the shape it has in this
 * run.  Inputs with runtime dimensions take theirs from the .npy file;
 * the profile is the one asked for or the first that admits the inputs'
 * shapes, and a shape no profile admits is refused before anything
 * runs.  Nothing is written unless everything succeeded: outputs go to
 * temporary files first and are renamed into place at the end.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica run MANIFEST|ENGINE|MODEL.onnx --output-dir DIR\n"
        "                [--input NAME=FILE.npy|NAME=random]... [--seed N]\n"
        "                [--device auto|cpu|cuda] [--profile K] [--prefer T=I]...\n"
        "                [--shapes NAME:AxB,...] [--module-path DIR]...\n"
        "                [--allow-manifest-modules] [--no-fusion]\n"
        "                [--passes NAME,...] [--no-passes NAME,...] [--threads N]\n"
        "                [--autotune|--no-autotune] [--timing-cache FILE]\n\n"
        "Run the network of MANIFEST (built here), of ENGINE (an engine\n"
        "file that 'mica build' wrote) or of an ONNX model once and write every\n"
        "network output and every output for shapes as DIR/NAME.npy (DIR is\n"
        "created if missing), in the shape it has in this run.  An input given\n"
        "as a .npy file must have the input's dtype and rank; a runtime\n"
        "dimension (-1) takes its size from the file, and a shape-tensor input\n"
        "is an int32 file of its values.  Every input not given (or given as\n"
        "NAME=random) gets seeded random values, and the command says so:\n"
        "floats uniform in [-1, 1], integers 0 to 3, bool 0 or 1, at the\n"
        "shapes of --shapes or of the profile's opt dims (a shape-tensor\n"
        "input: its opt values).\n\n"
        "  --input NAME=FILE.npy  the data of input NAME (repeatable);\n"
        "                         NAME=random: seeded random values\n"
        "  --seed N               the seed of random inputs (default %d)\n"
        "  --output-dir DIR       where the outputs go\n"
        "  --device D             auto, cpu or cuda (default: the manifest's;\n"
        "                         an engine only on the device it was built for)\n"
        "  --profile K            the optimization profile to use (default: the\n"
        "                         first that admits the inputs' shapes)\n"
        "  --no-fusion            fuse nothing (a manifest or model)\n"
        "  --passes NAME,...      run only these graph passes (all, none)\n"
        "  --no-passes NAME,...   run every graph pass but these (all: none)\n"
        "  --threads N            at most N CPU threads per layer (ONNX\n"
        "                         Runtime's intra-op threads; default:\n"
        "                         OMP_NUM_THREADS, else every CPU)\n"
        CLI_TUNE_USAGE
        "  --prefer TYPE=IMPL     use implementation IMPL for layers of TYPE\n"
        "                         that do not pin one (repeatable; replaces\n"
        "                         $MICA_PREFER)\n"
        "  --shapes NAME:AxB,...  the shapes of random inputs (a shape-tensor\n"
        "                         input: its values); for an ONNX model, its\n"
        "                         profile too (also --min-shapes, --opt-shapes,\n"
        "                         --max-shapes; default: the inputs' shapes)\n"
        "  --allow-folder DIR     the files the model names (weights, external\n"
        "                         data) may also lie in DIR (repeatable; by\n"
        "                         default only in the model's own folder)\n"
        "  --module-path DIR      another folder of modules (repeatable; also\n"
        "                         $MICA_MODULE_PATH, colon-separated; an\n"
        "                         engine needs the modules it was built with)\n"
        "  --allow-manifest-modules  let the manifest load the modules its\n"
        "                         modules.paths and modules.load name\n"
        "                         (native code: only for trusted manifests)\n\n"
        "On any error nothing is written and the status is 1.\n",
        CLI_DEFAULT_SEED);
}

typedef struct run {
    const char *source; /* a manifest or an engine file */
    const char *out_dir;
    uint32_t device;
    long profile;
    char **paths;
    int nb_paths;
    cli_inputs_t inputs;
} run_t;

static int parse(run_t *r, int argc, char **argv, int *help)
{
    int i, taken;
    const char *v;
    char *end;

    *help = 0;
    r->device = CLI_DEVICE_MANIFEST;
    r->profile = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            *help = 1;
            return CLI_OK;
        } else if (cli_inputs_option("run", argc, argv, &i, &taken,
                                     &r->inputs) != CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_is_opt(a, "--output-dir")) {
            if (!(r->out_dir = cli_opt_value("run", argc, argv, &i,
                                             "--output-dir")))
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--device")) {
            if (!(v = cli_opt_value("run", argc, argv, &i, "--device")))
                return CLI_USAGE;
            if (cli_parse_device(v, &r->device))
                return cli_usage_error("run", "--device '%s': expected %s",
                                       v, cli_device_choices());
        } else if (cli_is_opt(a, "--profile")) {
            if (!(v = cli_opt_value("run", argc, argv, &i, "--profile")))
                return CLI_USAGE;
            errno = 0;
            r->profile = strtol(v, &end, 10);
            if (errno || *end || end == v || r->profile < 0)
                return cli_usage_error("run", "--profile '%s': expected a "
                                       "profile number (0, 1, ...)", v);
        } else if (cli_is_opt(a, "--prefer")) {
            if (!(v = cli_opt_value("run", argc, argv, &i, "--prefer")) ||
                cli_add_prefer("run", v) != CLI_OK)
                return CLI_USAGE;
        } else if (cli_tune_option("run", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_is_opt(a, "--no-fusion")) {
            cli_set_no_fusion(1);
        } else if (cli_is_opt(a, "--allow-manifest-modules")) {
            cli_set_allow_manifest_modules(1);
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("run", argc, argv, &i, "--module-path")))
                return CLI_USAGE;
            r->paths[r->nb_paths++] = (char *)v;
        } else if (cli_threads_option("run", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_onnx_option("run", argc, argv, &i, &taken)
                   != CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_passes_option("run", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("run", "unknown option '%s'", a);
        } else if (!r->source) {
            r->source = a;
        } else {
            return cli_usage_error("run", "unexpected argument '%s' (one "
                                   "manifest or engine only)", a);
        }
    }
    if (!r->source)
        return cli_usage_error("run", "no manifest or engine given");
    if (!r->out_dir)
        return cli_usage_error("run", "no --output-dir given");
    return CLI_OK;
}

/*
 * --profile K names one of the engine's profiles; a network without
 * runtime dimensions has none, and K 0 stands for its one implicit
 * profile.
 */
static int check_profile(const run_t *r, mica_engine_t *engine)
{
    int32_t nb = mica_engine_nb_profiles(engine);
    if (r->profile < 0 || r->profile < (nb ? nb : 1))
        return CLI_OK;
    if (!nb)
        return cli_error("--profile %ld: the network has no runtime "
                         "dimensions and no profiles (only 0 is accepted)",
                         r->profile);
    return cli_error("--profile %ld: the network has %d profile%s (0 to %d)",
                     r->profile, (int)nb, nb > 1 ? "s" : "", (int)nb - 1);
}

int cmd_run(int argc, char **argv)
{
    run_t r;
    int rc, help;
    mica_context_t *ctx = NULL;
    cli_source_t src;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_status_t st;

    memset(&r, 0, sizeof(r));
    memset(&src, 0, sizeof(src));
    r.paths = calloc((size_t)argc + 1, sizeof(char *));
    if (!r.paths) {
        rc = cli_error("out of memory");
        goto out;
    }
    rc = parse(&r, argc, argv, &help);
    if (rc != CLI_OK)
        goto out;
    if (help) {
        usage(stdout);
        goto out;
    }
    /* The files first: an ONNX model takes its profile from them where
     * no option gives one. */
    if ((rc = cli_inputs_read(&r.inputs)) != CLI_OK ||
        (rc = cli_context(&ctx, r.paths, r.nb_paths, 0)) != CLI_OK ||
        (rc = cli_open(ctx, r.source, r.device, &src)) != CLI_OK)
        goto out;
    engine = src.engine;
    if ((rc = check_profile(&r, engine)) != CLI_OK ||
        (rc = cli_inputs_complete(&r.inputs, engine, r.profile,
                                  cli_onnx_shapes())) != CLI_OK)
        goto out;
    cli_inputs_print(&r.inputs, stdout, 0);
    st = mica_exec_create(engine, &exec);
    if (st == MICA_OK)
        st = cli_exec_threads(exec);
    if (st == MICA_OK && r.profile >= 0 && mica_engine_nb_profiles(engine))
        st = mica_exec_set_profile(exec, (int32_t)r.profile);
    if (st == MICA_OK)
        st = cli_inputs_set(&r.inputs, exec);
    /* Shapes against the profiles and phase 1 first: a shape no profile
     * admits is refused before anything runs. */
    if (st == MICA_OK)
        st = mica_exec_infer_shapes(exec);
    if (st == MICA_OK)
        st = mica_exec_run(exec);
    if (st != MICA_OK) {
        rc = cli_error("%s", mica_context_error(ctx));
        goto out;
    }
    rc = cli_write_outputs(r.out_dir, ctx, engine, exec);
out:
    if (exec)
        mica_exec_destroy(exec);
    cli_close(&src);
    if (ctx)
        mica_context_destroy(ctx);
    cli_inputs_free(&r.inputs);
    free(r.paths);
    return rc;
}
