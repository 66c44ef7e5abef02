/*
 * tools/inputs.c - the network inputs of `mica run`, `mica bench` and
 * `mica compare` (inputs.h): the options, the files read and checked
 * against the engine, and every input not given made of seeded random
 * values (tools/random_input.c) at the shapes --shapes or the profile
 * gives.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"

static cli_input_t *add(cli_inputs_t *in, const char *name, size_t n)
{
    cli_input_t *v;
    if (in->nb == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        v = realloc(in->v, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        in->v = v;
        in->cap = cap;
    }
    v = &in->v[in->nb];
    memset(v, 0, sizeof *v);
    if (!(v->name = strndup(name, n)))
        return NULL;
    /* the first of a name stays found (a second is refused by the caller) */
    if (mica__index_get(&in->by_name, v->name) < 0 &&
        mica__index_put(&in->by_name, v->name, in->nb) != 0) {
        free(v->name);
        return NULL;
    }
    in->nb++;
    return v;
}

/* The input named `name`, in constant time (10^5 inputs: issue 25). */
static cli_input_t *find(const cli_inputs_t *in, const char *name)
{
    int32_t k = mica__index_get(&in->by_name, name);
    return k >= 0 ? &in->v[k] : NULL;
}

int cli_inputs_option(const char *cmd, int argc, char **argv, int *i,
                      int *taken, cli_inputs_t *in)
{
    const char *v, *eq;
    cli_input_t *x;
    char *end;

    *taken = 0;
    if (cli_is_opt(argv[*i], "--seed")) {
        unsigned long long s;
        *taken = 1;
        if (!(v = cli_opt_value(cmd, argc, argv, i, "--seed")))
            return CLI_USAGE;
        errno = 0;
        s = strtoull(v, &end, 0);
        if (errno || *end || end == v || v[0] == '-')
            return cli_usage_error(cmd, "--seed '%s': expected a "
                                   "non-negative integer", v);
        in->seed = s;
        in->seed_given = 1;
        return CLI_OK;
    }
    if (!cli_is_opt(argv[*i], "--input"))
        return CLI_OK;
    *taken = 1;
    if (!(v = cli_opt_value(cmd, argc, argv, i, "--input")))
        return CLI_USAGE;
    eq = strrchr(v, '=');
    if (!eq || eq == v || !eq[1])
        return cli_usage_error(cmd, "--input '%s': expected NAME=FILE.npy "
                               "or NAME=random", v);
    /* A name may hold '=' only with a file: NAME=random ends the value. */
    if (strcmp(eq + 1, "random") != 0)
        eq = strchr(v, '=');
    if (!(x = add(in, v, (size_t)(eq - v))))
        return cli_error("out of memory");
    x->file = strcmp(eq + 1, "random") ? eq + 1 : NULL;
    if (find(in, x->name) != x)
        return cli_usage_error(cmd, "input '%s' is given twice", x->name);
    return CLI_OK;
}

int cli_inputs_read(cli_inputs_t *in)
{
    char err[1024];
    int k, n = 0;

    for (k = 0; k < in->nb; k++)
        if (in->v[k].file &&
            mica__npy_read(in->v[k].file, &in->v[k].npy, err, sizeof err) !=
                MICA_OK)
            return cli_error("input '%s': %s", in->v[k].name, err);
    in->onnx_names = calloc((size_t)in->nb + 1, sizeof *in->onnx_names);
    in->onnx_descs = calloc((size_t)in->nb + 1, sizeof *in->onnx_descs);
    in->onnx_data = calloc((size_t)in->nb + 1, sizeof *in->onnx_data);
    if (!in->onnx_names || !in->onnx_descs || !in->onnx_data)
        return cli_error("out of memory");
    for (k = 0; k < in->nb; k++) {
        if (!in->v[k].file)
            continue;
        in->onnx_names[n] = in->v[k].name;
        in->onnx_descs[n].dtype = in->v[k].npy.dtype;
        in->onnx_descs[n].dims = in->v[k].npy.dims;
        in->onnx_data[n++] = in->v[k].npy.data;
    }
    cli_onnx_set_inputs(n, in->onnx_names, in->onnx_descs, in->onnx_data);
    return CLI_OK;
}

/* int64 data for an int32 input (an ONNX model's, narrowed as its int64
 * tensors are): converted, every value checked to fit. */
static int narrow(cli_input_t *in)
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

/* "x, y": the engine's inputs, for messages. */
static const char *input_names(mica_engine_t *engine, char *buf, size_t len)
{
    int32_t i, nb = mica_engine_nb_inputs(engine);
    size_t n = 0;
    mica_tensor_info_t info;

    snprintf(buf, len, "none");
    for (i = 0; i < nb && n < len; i++) {
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_tensor(engine, mica_engine_input(engine, i), &info) ==
            MICA_OK)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
                                  info.name);
    }
    return buf;
}

/* A file given for input `info`: its dtype, rank and fixed dims. */
static int check_file(cli_input_t *in, const mica_tensor_info_t *info)
{
    char a[128], b[128];
    int32_t j;

    if (in->npy.dtype == MICA_INT64 && info->dtype == MICA_INT32 &&
        narrow(in) != CLI_OK)
        return CLI_ERROR;
    if (in->npy.dtype != info->dtype)
        return cli_error("input '%s': %s holds %s data, the network takes %s",
                         info->name, in->file, mica_dtype_name(in->npy.dtype),
                         mica_dtype_name(info->dtype));
    for (j = 0; j < info->dims.nb_dims; j++)
        if (info->dims.d[j] >= 0 && info->dims.d[j] != in->npy.dims.d[j])
            break;
    if (in->npy.dims.nb_dims != info->dims.nb_dims || j < info->dims.nb_dims)
        return cli_error("input '%s': %s has shape %s, the network takes %s",
                         info->name, in->file,
                         cli_dims_str(&in->npy.dims, a, sizeof a),
                         info->shape ? info->shape
                                     : cli_dims_str(&info->dims, b, sizeof b));
    return CLI_OK;
}

/* Random values for network input i (info), at the shapes of --shapes or
 * of the profile. */
static int generate(cli_inputs_t *in, cli_input_t *x, mica_engine_t *engine,
                    int32_t i, const mica_tensor_info_t *info, long profile,
                    const char *shapes)
{
    mica_dims_t given, min, opt, max, dims = info->dims;
    const int32_t *vmin = NULL, *vopt = NULL, *vmax = NULL;
    int32_t nb_values = 0, j, p = profile >= 0 ? (int32_t)profile : 0;
    int found;
    char a[128];
    size_t size = mica_dtype_size(info->dtype);
    int64_t vol;

    if (cli_shapes_lookup(shapes, info->name, &found, &given) != CLI_OK)
        return CLI_ERROR;
    if (mica_engine_nb_profiles(engine) > 0 &&
        mica_engine_profile_input(engine, p, i, &min, &opt, &max, &nb_values,
                                  &vmin, &vopt, &vmax) != MICA_OK)
        return cli_error("input '%s': profile %d has no range for it (the "
                         "network has %d profiles)", info->name, (int)p,
                         (int)mica_engine_nb_profiles(engine));
    if (nb_values > 0 && info->dtype == MICA_INT32) {
        /* A shape-tensor input: its values, not its dims. */
        if (found && given.nb_dims != nb_values)
            return cli_error("--shapes: shape-tensor input '%s' holds %d "
                             "values, %d given", info->name, (int)nb_values,
                             (int)given.nb_dims);
        x->npy.data = calloc((size_t)nb_values + 1, sizeof(int32_t));
        if (!x->npy.data)
            return cli_error("out of memory");
        for (j = 0; j < nb_values; j++) {
            int64_t v = found ? given.d[j] : vopt[j];
            if (v < INT32_MIN || v > INT32_MAX)
                return cli_error("--shapes: value %lld of '%s' is beyond "
                                 "int32", (long long)v, info->name);
            ((int32_t *)x->npy.data)[j] = (int32_t)v;
        }
        x->values = found ? "--shapes" : "the profile's opt";
        x->npy.dtype = MICA_INT32;
        x->npy.dims = dims;
        x->npy.bytes = (size_t)nb_values * sizeof(int32_t);
        return CLI_OK;
    }
    if (found) {
        if (given.nb_dims != dims.nb_dims)
            return cli_error("--shapes: input '%s' has rank %d, %s has %d "
                             "sizes", info->name, (int)dims.nb_dims,
                             cli_dims_str(&given, a, sizeof a),
                             (int)given.nb_dims);
        for (j = 0; j < dims.nb_dims; j++)
            if (given.d[j] < 0 || (dims.d[j] >= 0 && dims.d[j] != given.d[j]))
                return cli_error("--shapes: input '%s' takes %s, not %s",
                                 info->name, info->shape ? info->shape : "?",
                                 cli_dims_str(&given, a, sizeof a));
        dims = given;
    } else {
        for (j = 0; j < dims.nb_dims; j++)
            if (dims.d[j] < 0) {
                if (mica_engine_nb_profiles(engine) == 0)
                    return cli_error("input '%s': runtime dimension %d has "
                                     "no profile to size it (give --shapes "
                                     "%s:AxB or --input)", info->name,
                                     (int)j, info->name);
                dims.d[j] = opt.d[j];
            }
    }
    vol = mica_dims_volume(&dims);
    if (vol < 0 || (uint64_t)vol > SIZE_MAX / (size ? size : 1))
        return cli_error("input '%s': shape %s is too large", info->name,
                         cli_dims_str(&dims, a, sizeof a));
    x->npy.data = malloc(vol ? (size_t)vol * size : 1);
    if (!x->npy.data)
        return cli_error("out of memory for input '%s' (%s)", info->name,
                         cli_dims_str(&dims, a, sizeof a));
    if (cli_random_fill(info->dtype, x->npy.data, vol, info->name,
                        in->seed) != 0)
        return cli_error("input '%s': no random values for %s (give --input "
                         "%s=FILE.npy)", info->name,
                         mica_dtype_name(info->dtype), info->name);
    x->npy.dtype = info->dtype;
    x->npy.dims = dims;
    x->npy.bytes = (size_t)vol * size;
    return CLI_OK;
}

int cli_inputs_complete(cli_inputs_t *in, mica_engine_t *engine,
                        long profile, const char *shapes)
{
    int32_t i, nb = mica_engine_nb_inputs(engine);
    mica_tensor_info_t info;
    char names[1024];
    int k;

    if (!in->seed_given)
        in->seed = CLI_DEFAULT_SEED;
    for (k = 0; k < in->nb; k++) {
        int32_t t = mica_engine_find_tensor(engine, in->v[k].name);
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (t < 0 || mica_engine_tensor(engine, t, &info) != MICA_OK ||
            !info.is_input)
            return cli_error("--input %s: the network has no input named "
                             "'%s' (its inputs: %s)", in->v[k].name,
                             in->v[k].name,
                             input_names(engine, names, sizeof names));
    }
    if (cli_shapes_check(shapes, engine) != CLI_OK)
        return CLI_ERROR;
    for (i = 0; i < nb; i++) {
        cli_input_t *x;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_tensor(engine, mica_engine_input(engine, i), &info) !=
            MICA_OK)
            return cli_error("cannot query input %d of the engine", (int)i);
        x = find(in, info.name);
        if (x && x->file) {
            if (check_file(x, &info) != CLI_OK)
                return CLI_ERROR;
            continue;
        }
        if (!x && !(x = add(in, info.name, strlen(info.name))))
            return cli_error("out of memory");
        if (generate(in, x, engine, i, &info, profile, shapes) != CLI_OK)
            return CLI_ERROR;
    }
    /* The network's order, for what is printed and set. */
    for (i = 0; i < nb && i < in->nb; i++) {
        cli_input_t tmp;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_tensor(engine, mica_engine_input(engine, i), &info) !=
            MICA_OK)
            continue;
        k = mica__index_get(&in->by_name, info.name);
        if (k <= i)
            continue;
        tmp = in->v[i];
        in->v[i] = in->v[k];
        in->v[k] = tmp;
        if (mica__index_put(&in->by_name, in->v[i].name, i) != 0 ||
            mica__index_put(&in->by_name, in->v[k].name, k) != 0)
            return cli_error("out of memory");
    }
    return CLI_OK;
}

void cli_inputs_print(const cli_inputs_t *in, FILE *f, int all)
{
    char d[128];
    int k;

    for (k = 0; k < in->nb; k++) {
        const cli_input_t *x = &in->v[k];
        if (x->file && !all)
            continue;
        fprintf(f, "input '%s': ", x->name);
        if (x->file) {
            fprintf(f, "%s %s from %s\n", mica_dtype_name(x->npy.dtype),
                    cli_dims_str(&x->npy.dims, d, sizeof d), x->file);
        } else if (x->values) {
            mica_dims_t v;
            int32_t j, n = (int32_t)mica_dims_volume(&x->npy.dims);
            memset(&v, 0, sizeof v);
            for (j = 0; j < n && j < MICA_MAX_DIMS; j++)
                v.d[v.nb_dims++] = ((const int32_t *)x->npy.data)[j];
            fprintf(f, "shape values %s (%s)\n",
                    cli_dims_str(&v, d, sizeof d), x->values);
        } else
            fprintf(f, "random %s %s, seed %" PRIu64 "\n",
                    mica_dtype_name(x->npy.dtype),
                    cli_dims_str(&x->npy.dims, d, sizeof d), in->seed);
    }
}

mica_status_t cli_inputs_set(const cli_inputs_t *in, mica_exec_t *exec)
{
    mica_status_t st = MICA_OK;
    int k;
    for (k = 0; st == MICA_OK && k < in->nb; k++)
        st = mica_exec_set_input(exec, in->v[k].name, &in->v[k].npy.dims,
                                 in->v[k].npy.data);
    return st;
}

void cli_inputs_free(cli_inputs_t *in)
{
    int k;
    for (k = 0; k < in->nb; k++) {
        free(in->v[k].name);
        mica__npy_free(&in->v[k].npy);
    }
    free(in->v);
    mica__index_free(&in->by_name);
    free(in->onnx_names);
    free(in->onnx_descs);
    free(in->onnx_data);
    memset(in, 0, sizeof *in);
}
