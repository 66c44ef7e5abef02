/*
 * tools/cmd_run.c - `mica run`: build a manifest's engine or load an
 * engine file, run it once on .npy inputs and write every network output
 * (and every output for shapes) as DIR/NAME.npy, in the shape it has in
 * this run.  Inputs with runtime dimensions take theirs from the .npy
 * file; the profile is the one asked for or the first that admits the
 * inputs' shapes, and a shape no profile admits is refused before anything
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
#include "npy.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica run MANIFEST|ENGINE|MODEL.onnx --input NAME=FILE.npy ...\n"
        "                --output-dir DIR [--device auto|cpu|cuda]\n"
        "                [--profile K] [--prefer T=I]... [--module-path DIR]...\n"
        "                [--allow-manifest-modules]\n\n"
        "Run the network of MANIFEST (built here) or of ENGINE (an engine\n"
        "file that 'mica build' wrote) once and write every network output and\n"
        "every output for shapes as DIR/NAME.npy (DIR is created if missing),\n"
        "in the shape it has in this run.  Every network input must be given,\n"
        "as a .npy file of the input's dtype and rank; a runtime dimension\n"
        "(-1) takes its size from the file, and a shape-tensor input is an\n"
        "int32 file of its values.\n\n"
        "  --input NAME=FILE.npy  the data of input NAME (repeatable)\n"
        "  --output-dir DIR       where the outputs go\n"
        "  --device D             auto, cpu or cuda (default: the manifest's;\n"
        "                         an engine only on the device it was built for)\n"
        "  --profile K            the optimization profile to use (default: the\n"
        "                         first that admits the inputs' shapes)\n"
        "  --prefer TYPE=IMPL     use implementation IMPL for layers of TYPE\n"
        "                         that do not pin one (repeatable; replaces\n"
        "                         $MICA_PREFER)\n"
        "  --shapes NAME:AxB,...  an ONNX model's profile (also --min-shapes,\n"
        "                         --opt-shapes, --max-shapes; default: the\n"
        "                         inputs' shapes)\n"
        "  --module-path DIR      another folder of modules (repeatable; also\n"
        "                         $MICA_MODULE_PATH, colon-separated; an\n"
        "                         engine needs the modules it was built with)\n"
        "  --allow-manifest-modules  let the manifest load the modules its\n"
        "                         modules.paths and modules.load name\n"
        "                         (native code: only for trusted manifests)\n\n"
        "On any error nothing is written and the status is 1.\n");
}

typedef struct input {
    char *name;
    const char *file;
    mica__npy_t npy;
} input_t;

typedef struct run {
    const char *source; /* a manifest or an engine file */
    const char *out_dir;
    uint32_t device;
    long profile;
    char **paths;
    int nb_paths;
    input_t *inputs;
    int nb_inputs;
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
        } else if (cli_is_opt(a, "--input")) {
            const char *eq;
            int k;
            if (!(v = cli_opt_value("run", argc, argv, &i, "--input")))
                return CLI_USAGE;
            eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1])
                return cli_usage_error("run", "--input '%s': expected "
                                       "NAME=FILE.npy", v);
            r->inputs[r->nb_inputs].name = strndup(v, (size_t)(eq - v));
            r->inputs[r->nb_inputs].file = eq + 1;
            if (!r->inputs[r->nb_inputs].name)
                return cli_error("out of memory");
            for (k = 0; k < r->nb_inputs; k++)
                if (!strcmp(r->inputs[k].name, r->inputs[r->nb_inputs].name))
                    return cli_usage_error("run", "input '%s' is given "
                                           "twice", r->inputs[k].name);
            r->nb_inputs++;
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
        } else if (cli_is_opt(a, "--allow-manifest-modules")) {
            cli_set_allow_manifest_modules(1);
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("run", argc, argv, &i, "--module-path")))
                return CLI_USAGE;
            r->paths[r->nb_paths++] = (char *)v;
        } else if (cli_onnx_option("run", argc, argv, &i, &taken)
                   != CLI_OK) {
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

/* int64 data for an int32 input (an ONNX model's, narrowed as its int64
 * tensors are): converted, every value checked to fit. */
static int narrow(input_t *in)
{
    int64_t k, nb = mica_dims_volume(&in->npy.dims);
    const int64_t *src = in->npy.data;
    int32_t *dst = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *dst);
    if (!dst)
        return cli_error("out of memory");
    for (k = 0; k < nb; k++) {
        if (src[k] < INT32_MIN || src[k] > INT32_MAX) {
            free(dst);
            return cli_error("input '%s': %s holds %lld at index %lld, "
                             "beyond the int32 the network takes",
                             in->name, in->file, (long long)src[k],
                             (long long)k);
        }
        dst[k] = (int32_t)src[k];
    }
    free(in->npy.data);
    in->npy.data = dst;
    in->npy.dtype = MICA_INT32;
    in->npy.bytes = (size_t)nb * sizeof *dst;
    return CLI_OK;
}

/* Every network input given, of the right dtype, rank and static dims. */
static int check_inputs(run_t *r, mica_engine_t *engine)
{
    char missing[1024], a[128], b[128];
    size_t n = 0;
    int32_t i, j, nb = mica_engine_nb_inputs(engine);
    int k, nb_missing = 0;
    mica_tensor_info_t info;

    for (k = 0; k < r->nb_inputs; k++) {
        int32_t t = mica_engine_find_tensor(engine, r->inputs[k].name);
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (t < 0 || mica_engine_tensor(engine, t, &info) != MICA_OK
            || !info.is_input) {
            n = 0;
            missing[0] = '\0';
            for (i = 0; i < nb; i++) {
                memset(&info, 0, sizeof(info));
                info.struct_size = sizeof(info);
                if (mica_engine_tensor(engine, mica_engine_input(engine, i),
                                       &info) == MICA_OK && n < sizeof(missing))
                    n += (size_t)snprintf(missing + n, sizeof(missing) - n,
                                          "%s%s", i ? ", " : "", info.name);
            }
            return cli_error("--input %s: the network has no input named "
                             "'%s' (its inputs: %s)", r->inputs[k].name,
                             r->inputs[k].name, nb ? missing : "none");
        }
    }
    missing[0] = '\0';
    n = 0;
    for (i = 0; i < nb; i++) {
        input_t *in = NULL;
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_engine_tensor(engine, mica_engine_input(engine, i), &info)
            != MICA_OK)
            return cli_error("cannot query input %d of the engine", (int)i);
        for (k = 0; k < r->nb_inputs; k++)
            if (!strcmp(r->inputs[k].name, info.name))
                in = &r->inputs[k];
        if (!in) {
            if (n < sizeof(missing))
                n += (size_t)snprintf(missing + n, sizeof(missing) - n,
                                      "%s'%s'", nb_missing ? ", " : "",
                                      info.name);
            nb_missing++;
            continue;
        }
        if (in->npy.dtype == MICA_INT64 && info.dtype == MICA_INT32
            && narrow(in) != CLI_OK)
            return CLI_ERROR;
        if (in->npy.dtype != info.dtype)
            return cli_error("input '%s': %s holds %s data, the network "
                             "takes %s", info.name, in->file,
                             mica_dtype_name(in->npy.dtype),
                             mica_dtype_name(info.dtype));
        for (j = 0; j < info.dims.nb_dims; j++)
            if (info.dims.d[j] >= 0 && info.dims.d[j] != in->npy.dims.d[j])
                break;
        if (in->npy.dims.nb_dims != info.dims.nb_dims || j < info.dims.nb_dims)
            return cli_error("input '%s': %s has shape %s, the network takes "
                             "%s", info.name, in->file,
                             cli_dims_str(&in->npy.dims, a, sizeof(a)),
                             info.shape ? info.shape
                                        : cli_dims_str(&info.dims, b,
                                                       sizeof(b)));
    }
    if (nb_missing)
        return cli_error("missing input%s %s (give --input NAME=FILE.npy)",
                         nb_missing > 1 ? "s" : "", missing);
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
    int rc, help, k;
    mica_context_t *ctx = NULL;
    cli_source_t src;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_status_t st;
    char err[1024];
    const char **names = NULL;
    mica_tensor_desc_t *descs = NULL;
    const void **data = NULL;

    memset(&r, 0, sizeof(r));
    memset(&src, 0, sizeof(src));
    r.inputs = calloc((size_t)argc + 1, sizeof(*r.inputs));
    r.paths = calloc((size_t)argc + 1, sizeof(char *));
    if (!r.inputs || !r.paths) {
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
    for (k = 0; k < r.nb_inputs; k++) {
        if (mica__npy_read(r.inputs[k].file, &r.inputs[k].npy, err,
                           sizeof(err)) != MICA_OK) {
            rc = cli_error("input '%s': %s", r.inputs[k].name, err);
            goto out;
        }
    }
    if ((rc = cli_context(&ctx, r.paths, r.nb_paths, 0)) != CLI_OK)
        goto out;
    /* An ONNX model takes its profile from these inputs where no option
     * gives one. */
    names = calloc((size_t)r.nb_inputs + 1, sizeof *names);
    descs = calloc((size_t)r.nb_inputs + 1, sizeof *descs);
    data = calloc((size_t)r.nb_inputs + 1, sizeof *data);
    if (!names || !descs || !data) {
        rc = cli_error("out of memory");
        goto out;
    }
    for (k = 0; k < r.nb_inputs; k++) {
        names[k] = r.inputs[k].name;
        descs[k].dtype = r.inputs[k].npy.dtype;
        descs[k].dims = r.inputs[k].npy.dims;
        data[k] = r.inputs[k].npy.data;
    }
    cli_onnx_set_inputs(r.nb_inputs, names, descs, data);
    if ((rc = cli_open(ctx, r.source, r.device, &src)) != CLI_OK)
        goto out;
    engine = src.engine;
    if ((rc = check_inputs(&r, engine)) != CLI_OK
        || (rc = check_profile(&r, engine)) != CLI_OK)
        goto out;
    st = mica_exec_create(engine, &exec);
    if (st == MICA_OK && r.profile >= 0 && mica_engine_nb_profiles(engine))
        st = mica_exec_set_profile(exec, (int32_t)r.profile);
    for (k = 0; st == MICA_OK && k < r.nb_inputs; k++)
        st = mica_exec_set_input(exec, r.inputs[k].name, &r.inputs[k].npy.dims,
                                 r.inputs[k].npy.data);
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
    for (k = 0; r.inputs && k < r.nb_inputs; k++) {
        free(r.inputs[k].name);
        mica__npy_free(&r.inputs[k].npy);
    }
    free(r.inputs);
    free(r.paths);
    free(names);
    free(descs);
    free(data);
    return rc;
}
