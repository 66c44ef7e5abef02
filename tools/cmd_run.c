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
        "                [--profile K] [--prefer T=I]... [--module-path DIR]...\n\n"
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
        "                         engine needs the modules it was built with)\n\n"
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
                return cli_usage_error("run", "--device '%s': expected auto, "
                                       "cpu or cuda", v);
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
    int32_t *dst = malloc((size_t)(nb ? nb : 1) * sizeof *dst);
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

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The first values of an output, on one line: "  [1.5, 0, 4.5, ...]". */
static void print_values(const mica_tensor_desc_t *d, const void *data)
{
    int64_t n = mica_dims_volume(&d->dims), i, shown = n < 16 ? n : 16;
    printf("  [");
    for (i = 0; i < shown; i++) {
        double v = 0;
        switch (d->dtype) {
        case MICA_FLOAT32: v = ((const float *)data)[i]; break;
        case MICA_FLOAT16:
            v = half_to_double(((const uint16_t *)data)[i]);
            break;
        case MICA_INT8: v = ((const int8_t *)data)[i]; break;
        case MICA_INT32: v = ((const int32_t *)data)[i]; break;
        case MICA_INT64: v = (double)((const int64_t *)data)[i]; break;
        case MICA_BOOL: case MICA_UINT8: v = ((const uint8_t *)data)[i]; break;
        default: break;
        }
        printf("%s%.7g", i ? ", " : "", v);
    }
    printf("%s]\n", n > shown ? ", ..." : "");
}

/* Make `dir` and its missing parents; *made gets the top one made. */
static int make_dir(const char *dir, char **made)
{
    char *p = strdup(dir), *s;
    struct stat sb;
    int rc = 0;

    *made = NULL;
    if (!p)
        return -1;
    for (s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (stat(p, &sb) != 0) {
            if (mkdir(p, 0777) != 0) {
                rc = -1;
                break;
            }
            if (!*made && !(*made = strdup(p))) {
                rc = -1;
                break;
            }
        } else if (!S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            rc = -1;
            break;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

/* Remove `top` and the empty folders below it down to `dir`. */
static void unmake_dir(const char *dir, const char *top)
{
    char *p = strdup(dir), *s;
    if (!p)
        return;
    while (strlen(p) >= strlen(top)) {
        if (rmdir(p) != 0)
            break;
        s = strrchr(p, '/');
        if (!s)
            break;
        *s = '\0';
    }
    free(p);
}

/*
 * The tensors to write: the network outputs in order, then the outputs for
 * shapes that are not network outputs too.  *nb gets their number.
 */
static int32_t *output_tensors(mica_engine_t *engine, int32_t *nb)
{
    int32_t nb_out = mica_engine_nb_outputs(engine);
    int32_t nb_t = mica_engine_nb_tensors(engine), i, k;
    int32_t *list = calloc((size_t)(nb_out + nb_t) + 1, sizeof(int32_t));

    *nb = 0;
    if (!list)
        return NULL;
    for (i = 0; i < nb_out; i++)
        list[(*nb)++] = mica_engine_output(engine, i);
    for (i = 0; i < nb_t; i++) {
        mica_tensor_info_t info;
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_engine_tensor(engine, i, &info) != MICA_OK
            || !info.is_shape_output)
            continue;
        for (k = 0; k < nb_out && list[k] != i; k++)
            ;
        if (k == nb_out)
            list[(*nb)++] = i;
    }
    return list;
}

/*
 * DIR/NAME.npy, every byte of NAME outside [A-Za-z0-9._-] written as %XX
 * (so '/' is %2F and a name is always one file name).  malloc'd.
 */
static char *npy_path(const char *dir, const char *name)
{
    size_t n = strlen(dir), k = 0;
    const unsigned char *p;
    char *path = malloc(n + 3 * strlen(name) + 6);
    if (!path)
        return NULL;
    memcpy(path, dir, n);
    path[n++] = '/';
    for (p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')
            || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'
            || *p == '-')
            path[n + k++] = (char)*p;
        else
            k += (size_t)sprintf(path + n + k, "%%%02X", *p);
    }
    /* "." and ".." are no file names of their own. */
    if ((k == 1 && path[n] == '.') || (k == 2 && path[n] == '.'
                                       && path[n + 1] == '.')) {
        size_t j, m = k;
        for (j = 0; j < m; j++)
            sprintf(path + n + 3 * j, "%%2E");
        k = 3 * m;
    }
    strcpy(path + n + k, ".npy");
    return path;
}

static int write_outputs(run_t *r, mica_context_t *ctx, mica_engine_t *engine,
                         mica_exec_t *exec)
{
    int32_t nb, i, k;
    int32_t *tensors = output_tensors(engine, &nb);
    char **paths = calloc((size_t)nb + 1, sizeof(char *));
    char *made = NULL, err[1024], ds[128];
    int rc = CLI_ERROR, written = 0;
    mica_tensor_desc_t *desc = calloc((size_t)nb + 1, sizeof(*desc));
    const void **data = calloc((size_t)nb + 1, sizeof(void *));
    const char **names = calloc((size_t)nb + 1, sizeof(char *));

    if (!tensors || !paths || !desc || !data || !names) {
        cli_error("out of memory");
        goto out;
    }
    /* Everything in hand before anything is written. */
    for (i = 0; i < nb; i++) {
        mica_tensor_info_t info;
        memset(&info, 0, sizeof(info));
        info.struct_size = sizeof(info);
        if (mica_engine_tensor(engine, tensors[i], &info) != MICA_OK) {
            cli_error("cannot query output tensor %d of the engine",
                      (int)tensors[i]);
            goto out;
        }
        names[i] = info.name;
        if (mica_exec_get_output(exec, info.name, &desc[i], &data[i])
            != MICA_OK) {
            cli_error("output '%s': %s", info.name, mica_context_error(ctx));
            goto out;
        }
        if (!mica__npy_descr(desc[i].dtype)) {
            cli_error("output '%s': %s has no .npy form", info.name,
                      mica_dtype_name(desc[i].dtype));
            goto out;
        }
        paths[i] = npy_path(r->out_dir, info.name);
        if (!paths[i]) {
            cli_error("out of memory");
            goto out;
        }
    }
    if (make_dir(r->out_dir, &made) != 0) {
        cli_error("cannot create the output folder '%s': %s", r->out_dir,
                  strerror(errno));
        goto out;
    }
    for (i = 0; i < nb; i++, written++) {
        if (mica__npy_write_tmp(paths[i], desc[i].dtype, &desc[i].dims,
                                data[i], 0, err, sizeof(err)) != MICA_OK) {
            cli_error("output '%s': %s", names[i], err);
            goto out;
        }
    }
    for (i = 0; i < nb; i++) {
        char *tmp = mica__npy_tmp_path(paths[i]);
        if (!tmp || rename(tmp, paths[i]) != 0) {
            cli_error("cannot rename '%s' to '%s': %s", tmp ? tmp : "?",
                      paths[i], strerror(errno));
            free(tmp);
            for (k = 0; k < i; k++)
                remove(paths[k]);
            goto out;
        }
        free(tmp);
    }
    written = 0;
    if (mica_engine_nb_profiles(engine))
        printf("profile: %d\n", (int)mica_exec_profile(exec));
    for (i = 0; i < nb; i++) {
        printf("%s: %s %s -> %s\n", names[i], mica_dtype_name(desc[i].dtype),
               cli_dims_str(&desc[i].dims, ds, sizeof(ds)), paths[i]);
        print_values(&desc[i], data[i]);
    }
    rc = CLI_OK;
out:
    for (k = 0; k < written; k++) {
        char *tmp = mica__npy_tmp_path(paths[k]);
        if (tmp)
            remove(tmp);
        free(tmp);
    }
    if (rc != CLI_OK && made)
        unmake_dir(r->out_dir, made);
    free(made);
    for (i = 0; paths && i < nb; i++)
        free(paths[i]);
    free(paths);
    free(desc);
    free(data);
    free(names);
    free(tensors);
    return rc;
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
    rc = write_outputs(&r, ctx, engine, exec);
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
