/*
 * tools/compare_ort.c - ONNX Runtime as a side of `mica compare`
 * (`--b onnxruntime[=PATH]`): the library loaded at run time (dlopen,
 * tools/ort_api.h declares what is called), the ONNX model run once on
 * the inputs mica runs on, every output of the model kept.
 */
#include <config.h>

#include <dlfcn.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compare.h"
#include "ort_api.h"

/* ONNX tensor element types and mica's, one row each. */
static const struct {
    int ort;
    mica_dtype_t mica;
} dtypes[] = {
    {MICA_ORT_FLOAT, MICA_FLOAT32},   {MICA_ORT_FLOAT16, MICA_FLOAT16},
    {MICA_ORT_BFLOAT16, MICA_BFLOAT16}, {MICA_ORT_INT8, MICA_INT8},
    {MICA_ORT_UINT8, MICA_UINT8},     {MICA_ORT_INT32, MICA_INT32},
    {MICA_ORT_INT64, MICA_INT64},     {MICA_ORT_BOOL, MICA_BOOL},
};

static int to_mica(int ort, mica_dtype_t *out)
{
    size_t i;
    for (i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].ort == ort) {
            *out = dtypes[i].mica;
            return 0;
        }
    return -1;
}

typedef struct ort {
    void *lib;
    char path[4096];            /* the library loaded */
    const OrtApiBase *base;
    void *const *api;           /* OrtApi, version 1, as a table */
    const char *which;
} ort_t;

#define ORT_FN(o, name) ((Ort##name##Fn)(o)->api[MICA_ORT_##name])

/* Free what ONNX Runtime's allocator gave (a name). */
static void ort_free(const ort_t *o, OrtAllocator *alloc, void *p)
{
    OrtStatus *st;
    if (p && (st = ORT_FN(o, AllocatorFree)(alloc, p)))
        ((OrtReleaseFn)o->api[MICA_ORT_ReleaseStatus])(st);
}

/* Release status st; CLI_ERROR after "WHICH: onnxruntime: WHAT: MSG". */
static int ort_fail(const ort_t *o, OrtStatus *st, const char *what)
{
    int rc = cli_error("%s: onnxruntime: %s: %s", o->which, what,
                       ((OrtGetErrorMessageFn)o->api[MICA_ORT_GetErrorMessage])(
                           st));
    ((OrtReleaseFn)o->api[MICA_ORT_ReleaseStatus])(st);
    return rc;
}

static void ort_release(const ort_t *o, int index, void *p)
{
    if (p)
        ((OrtReleaseFn)o->api[index])(p);
}

/* dlopen `file` into o: 0, or -1 with the loader's reason in why. */
static int try_open(ort_t *o, const char *file, char *why, size_t len)
{
    const char *e;
    dlerror();
    o->lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!o->lib) {
        e = dlerror();
        snprintf(why, len, "%s", e ? e : file);
        return -1;
    }
    snprintf(o->path, sizeof o->path, "%s", file);
    return 0;
}

/* A folder: its libonnxruntime.so, else its capi/libonnxruntime.so.* (a
 * wheel's onnxruntime folder); a file: itself. */
static int open_path(ort_t *o, const char *path, char *why, size_t len)
{
    static const char *const pats[] = {"%s/libonnxruntime.so",
                                       "%s/libonnxruntime.so.*",
                                       "%s/capi/libonnxruntime.so.*"};
    struct stat sb;
    char pat[4096];
    size_t i;

    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return try_open(o, path, why, len);
    for (i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        glob_t g;
        snprintf(pat, sizeof pat, pats[i], path);
        if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
            int r = try_open(o, g.gl_pathv[g.gl_pathc - 1], why, len);
            globfree(&g);
            return r;
        }
        globfree(&g);
    }
    snprintf(why, len, "%s: no libonnxruntime.so in it", path);
    return -1;
}

/* The onnxruntime wheel's folder, as ${MICA_PYTHON:-python3} finds it,
 * into dir; 0, or -1. */
static int wheel_dir(char *dir, size_t len)
{
    const char *py = getenv("MICA_PYTHON");
    char cmd[4200];
    FILE *p;
    size_t n;

    if (!py || !*py)
        py = "python3";
    if (strchr(py, '\'') || strlen(py) > 4000)
        return -1;
    snprintf(cmd, sizeof cmd, "'%s' -c 'import os, onnxruntime; "
             "print(os.path.dirname(onnxruntime.__file__))' 2>/dev/null",
             py);
    if (!(p = popen(cmd, "r")))
        return -1;
    if (!fgets(dir, (int)len, p))
        dir[0] = '\0';
    if (pclose(p) != 0)
        return -1;
    n = strlen(dir);
    while (n && (dir[n - 1] == '\n' || dir[n - 1] == '\r'))
        dir[--n] = '\0';
    return n ? 0 : -1;
}

/* Load the library: lib, else $MICA_ONNXRUNTIME, else the loader's
 * libonnxruntime.so, else the Python wheel's. */
static int ort_open(ort_t *o, const char *lib)
{
    const char *env = getenv("MICA_ONNXRUNTIME");
    char why[1024], dir[4096];
    OrtGetApiBaseFn get;

    if (lib || (env && *env)) {
        const char *p = lib ? lib : env;
        if (open_path(o, p, why, sizeof why) != 0)
            return cli_error("%s: onnxruntime: cannot load %s%s: %s",
                             o->which, p, lib ? "" : " ($MICA_ONNXRUNTIME)",
                             why);
    } else if (try_open(o, "libonnxruntime.so", why, sizeof why) != 0 &&
               (wheel_dir(dir, sizeof dir) != 0 ||
                open_path(o, dir, why, sizeof why) != 0)) {
        return cli_error("%s: onnxruntime: no library found (not on the "
                         "loader's path, no onnxruntime wheel for %s): "
                         "pip install onnxruntime, or give the library "
                         "with onnxruntime=PATH or $MICA_ONNXRUNTIME",
                         o->which,
                         getenv("MICA_PYTHON") ? "$MICA_PYTHON" : "python3");
    }
    *(void **)&get = dlsym(o->lib, "OrtGetApiBase");
    if (!get || !(o->base = get()))
        return cli_error("%s: onnxruntime: %s has no OrtGetApiBase: not "
                         "ONNX Runtime", o->which, o->path);
    if (!(o->api = o->base->GetApi(MICA_ORT_API_VERSION)))
        return cli_error("%s: onnxruntime: %s serves no API version %d",
                         o->which, o->path, MICA_ORT_API_VERSION);
    return CLI_OK;
}

/* The values of model input `name` from `in`, as ONNX type `type`:
 * *data points into in, or to a malloc'd conversion (*owned). */
static int input_value(const ort_t *o, const cli_inputs_t *in,
                       const char *name, int type, const cli_input_t **out,
                       void **owned)
{
    int k;
    mica_dtype_t want;
    const cli_input_t *v = NULL;
    int64_t n, i;

    *owned = NULL;
    for (k = 0; k < in->nb && !v; k++)
        if (!strcmp(in->v[k].name, name))
            v = &in->v[k];
    if (!v)
        return cli_error("%s: onnxruntime: the model's input '%s' is none "
                         "of mica's network inputs", o->which, name);
    *out = v;
    if (to_mica(type, &want) != 0)
        return cli_error("%s: onnxruntime: input '%s' has ONNX type %d, "
                         "which mica has no values of", o->which, name, type);
    if (want == v->npy.dtype)
        return CLI_OK;
    n = mica_dims_volume(&v->npy.dims);
    if (v->npy.dtype == MICA_INT32 && want == MICA_INT64) {
        int64_t *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
        for (i = 0; w && i < n; i++)
            w[i] = ((const int32_t *)v->npy.data)[i];
        *owned = w;
    } else if (v->npy.dtype == MICA_INT64 && want == MICA_INT32) {
        int32_t *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
        for (i = 0; w && i < n; i++)
            w[i] = (int32_t)((const int64_t *)v->npy.data)[i];
        *owned = w;
    } else {
        return cli_error("%s: onnxruntime: input '%s' is %s in mica and %s "
                         "in the model", o->which, name,
                         mica_dtype_name(v->npy.dtype), mica_dtype_name(want));
    }
    return *owned ? CLI_OK : cli_error("out of memory");
}

/* Output value v (named `name`) into s, copied. */
static int keep_output(const ort_t *o, OrtValue *v, const char *name,
                       compare_side_t *s)
{
    OrtTensorTypeAndShapeInfo *info = NULL;
    OrtStatus *st;
    int type = 0;
    size_t rank = 0, bytes;
    int64_t dims[MICA_MAX_DIMS];
    mica_tensor_desc_t d;
    void *src = NULL, *copy;
    size_t k;

    if ((st = ORT_FN(o, GetTensorTypeAndShape)(v, &info)) ||
        (st = ORT_FN(o, GetTensorElementType)(info, &type)) ||
        (st = ORT_FN(o, GetDimensionsCount)(info, &rank)) ||
        (rank <= MICA_MAX_DIMS &&
         (st = ORT_FN(o, GetDimensions)(info, dims, rank))) ||
        (st = ORT_FN(o, GetTensorMutableData)(v, &src))) {
        ort_release(o, MICA_ORT_ReleaseTensorTypeAndShapeInfo, info);
        return ort_fail(o, st, name);
    }
    ort_release(o, MICA_ORT_ReleaseTensorTypeAndShapeInfo, info);
    memset(&d, 0, sizeof d);
    if (rank > MICA_MAX_DIMS)
        return cli_error("%s: onnxruntime: output '%s' has rank %zu, more "
                         "than mica's %d", o->which, name, rank,
                         MICA_MAX_DIMS);
    if (to_mica(type, &d.dtype) != 0 && type != MICA_ORT_DOUBLE)
        return cli_error("%s: onnxruntime: output '%s' has ONNX type %d, "
                         "which mica compares no values of", o->which, name,
                         type);
    d.dims.nb_dims = (int32_t)rank;
    for (k = 0; k < rank; k++)
        d.dims.d[k] = dims[k];
    if (type == MICA_ORT_DOUBLE) /* compared as float32 */
        d.dtype = MICA_FLOAT32;
    bytes = (size_t)mica_dims_volume(&d.dims) * mica_dtype_size(d.dtype);
    if (!(copy = malloc(bytes ? bytes : 1)))
        return cli_error("out of memory");
    if (type == MICA_ORT_DOUBLE)
        for (k = 0; k < bytes / sizeof(float); k++)
            ((float *)copy)[k] = (float)((const double *)src)[k];
    else
        memcpy(copy, src, bytes);
    return compare_side_add(s, name, &d, copy);
}

int compare_ort_run(const char *which, const char *lib, const char *model,
                    const cli_inputs_t *in, int threads, compare_side_t *s)
{
    ort_t o;
    OrtStatus *st = NULL;
    OrtEnv *env = NULL;
    OrtSessionOptions *opts = NULL;
    OrtSession *sess = NULL;
    OrtMemoryInfo *mem = NULL;
    OrtAllocator *alloc = NULL;
    size_t nb_in = 0, nb_out = 0, k;
    char **in_names = NULL, **out_names = NULL;
    OrtValue **in_vals = NULL, **out_vals = NULL;
    void **owned = NULL;
    int rc = CLI_ERROR;

    memset(&o, 0, sizeof o);
    o.which = which;
    if (ort_open(&o, lib) != CLI_OK)
        return CLI_ERROR;
    printf("%s: onnxruntime %s (%s)\n", which, o.base->GetVersionString(),
           o.path);
    if ((st = ORT_FN(&o, CreateEnv)(MICA_ORT_LOGGING_LEVEL_ERROR, "mica",
                                    &env)) ||
        (st = ORT_FN(&o, CreateSessionOptions)(&opts)) ||
        (threads > 0 &&
         (st = ORT_FN(&o, SetIntraOpNumThreads)(opts, threads))) ||
        (st = ORT_FN(&o, CreateSession)(env, model, opts, &sess)) ||
        (st = ORT_FN(&o, GetAllocatorWithDefaultOptions)(&alloc)) ||
        (st = ORT_FN(&o, CreateCpuMemoryInfo)(MICA_ORT_ARENA_ALLOCATOR,
                                              MICA_ORT_MEM_TYPE_DEFAULT,
                                              &mem)) ||
        (st = ORT_FN(&o, SessionGetInputCount)(sess, &nb_in)) ||
        (st = ORT_FN(&o, SessionGetOutputCount)(sess, &nb_out))) {
        ort_fail(&o, st, model);
        goto out;
    }
    in_names = calloc(nb_in + 1, sizeof *in_names);
    in_vals = calloc(nb_in + 1, sizeof *in_vals);
    owned = calloc(nb_in + 1, sizeof *owned);
    out_names = calloc(nb_out + 1, sizeof *out_names);
    out_vals = calloc(nb_out + 1, sizeof *out_vals);
    if (!in_names || !in_vals || !owned || !out_names || !out_vals) {
        cli_error("out of memory");
        goto out;
    }
    for (k = 0; k < nb_in; k++) {
        OrtTypeInfo *ti = NULL;
        const OrtTensorTypeAndShapeInfo *tsi;
        const cli_input_t *v = NULL;
        int type = 0;
        mica_dtype_t td = MICA_FLOAT32;
        int64_t shape[MICA_MAX_DIMS];
        int32_t j;
        if ((st = ORT_FN(&o, SessionGetInputName)(sess, k, alloc,
                                                  &in_names[k])) ||
            (st = ORT_FN(&o, SessionGetInputTypeInfo)(sess, k, &ti)) ||
            (st = ORT_FN(&o, CastTypeInfoToTensorInfo)(ti, &tsi)) ||
            (st = tsi ? ORT_FN(&o, GetTensorElementType)(tsi, &type) : NULL)) {
            ort_release(&o, MICA_ORT_ReleaseTypeInfo, ti);
            ort_fail(&o, st, "the model's inputs");
            goto out;
        }
        ort_release(&o, MICA_ORT_ReleaseTypeInfo, ti);
        if (input_value(&o, in, in_names[k], type, &v, &owned[k]) != CLI_OK)
            goto out;
        for (j = 0; j < v->npy.dims.nb_dims; j++)
            shape[j] = v->npy.dims.d[j];
        to_mica(type, &td); /* input_value checked it */
        if ((st = ORT_FN(&o, CreateTensorWithDataAsOrtValue)(
                 mem, owned[k] ? owned[k] : v->npy.data,
                 (size_t)mica_dims_volume(&v->npy.dims) * mica_dtype_size(td),
                 shape, (size_t)v->npy.dims.nb_dims, type, &in_vals[k]))) {
            ort_fail(&o, st, in_names[k]);
            goto out;
        }
    }
    for (k = 0; k < nb_out; k++)
        if ((st = ORT_FN(&o, SessionGetOutputName)(sess, k, alloc,
                                                   &out_names[k]))) {
            ort_fail(&o, st, "the model's outputs");
            goto out;
        }
    if ((st = ORT_FN(&o, Run)(sess, NULL, (const char *const *)in_names,
                              (const OrtValue *const *)in_vals, nb_in,
                              (const char *const *)out_names, nb_out,
                              out_vals))) {
        ort_fail(&o, st, "run");
        goto out;
    }
    for (k = 0; k < nb_out; k++)
        if (keep_output(&o, out_vals[k], out_names[k], s) != CLI_OK)
            goto out;
    rc = CLI_OK;
out:
    for (k = 0; k < nb_in && in_vals; k++)
        ort_release(&o, MICA_ORT_ReleaseValue, in_vals[k]);
    for (k = 0; k < nb_out && out_vals; k++)
        ort_release(&o, MICA_ORT_ReleaseValue, out_vals[k]);
    for (k = 0; k < nb_in && in_names; k++)
        ort_free(&o, alloc, in_names[k]);
    for (k = 0; k < nb_out && out_names; k++)
        ort_free(&o, alloc, out_names[k]);
    for (k = 0; k < nb_in && owned; k++)
        free(owned[k]);
    free(owned);
    free(in_names);
    free(out_names);
    free(in_vals);
    free(out_vals);
    if (o.api) {
        ort_release(&o, MICA_ORT_ReleaseMemoryInfo, mem);
        ort_release(&o, MICA_ORT_ReleaseSession, sess);
        ort_release(&o, MICA_ORT_ReleaseSessionOptions, opts);
        ort_release(&o, MICA_ORT_ReleaseEnv, env);
    }
    /* The library stays loaded: ONNX Runtime's own exit handlers run
     * from it. */
    return rc;
}
