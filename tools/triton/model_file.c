/*
 * tools/triton/model_file.c - the model file of a version folder, and the
 * engine bytes made from it for each device.
 *
 * A version folder holds an engine file (`mica build`), a manifest, or an
 * ONNX file.  An engine runs on the device it was built for; a manifest
 * (and an ONNX model) is built once per device that instances ask for,
 * with the model's `precision` and `prefer` parameters.  The bytes are
 * kept (aligned) so that every instance loads its own engine from them
 * without a copy of the weights (mica_engine_deserialize_borrow).
 *
 * An ONNX file is imported (mica_onnx_import) into a manifest in memory,
 * then built as a manifest is; the parameters shapes, min_shapes,
 * opt_shapes and max_shapes (trtexec's syntax, "x:8x16") give the
 * profile of its runtime dimensions.
 */
#include <config.h>

#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The files looked for when the `file` parameter is absent, in order. */
static const char *const default_files[] = {
    "model.mica", "model.engine", "model.yaml", "model.yml", "model.onnx"};
#define NB_DEFAULTS (sizeof default_files / sizeof default_files[0])

static const char *device_name(uint32_t device)
{
    return device == MICA_DEVICE_CPU ? "cpu"
           : device == MICA_DEVICE_CUDA ? "cuda" : "auto";
}

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

TRITONSERVER_Error *mica__tb_model_file(mica__tb_model_t *model,
                                        const char *version_dir,
                                        const char *file)
{
    char path[4096];
    size_t i;

    if (file) {
        if (!file[0] || strstr(file, "..") || file[0] == '/')
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                  "model '%s': parameter file '%s' must name "
                                  "a file inside the version folder",
                                  model->name, file);
        snprintf(path, sizeof path, "%s/%s", version_dir, file);
        if (!is_file(path))
            return mica__tb_error(TRITONSERVER_ERROR_NOT_FOUND,
                                  "model '%s': parameter file: no file '%s'",
                                  model->name, path);
    } else {
        for (i = 0; i < NB_DEFAULTS; i++) {
            snprintf(path, sizeof path, "%s/%s", version_dir,
                     default_files[i]);
            if (is_file(path))
                break;
        }
        if (i == NB_DEFAULTS)
            return mica__tb_error(TRITONSERVER_ERROR_NOT_FOUND,
                                  "model '%s': '%s' holds none of model.mica, "
                                  "model.engine, model.yaml, model.yml, "
                                  "model.onnx (or name the file with "
                                  "parameter 'file')", model->name,
                                  version_dir);
    }
    if (mica_engine_file_probe(path))
        model->format = MICA__TB_ENGINE;
    else if (has_suffix(path, ".onnx") || mica_onnx_file_probe(path))
        model->format = MICA__TB_ONNX;
    else
        model->format = MICA__TB_MANIFEST;
    if (model->format == MICA__TB_ONNX && !mica_onnx_available())
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                              "model '%s': '%s' is an ONNX file, and this "
                              "build of mica has no ONNX importer: build an "
                              "engine or write a manifest", model->name, path);
    if (model->format != MICA__TB_ONNX && model->has_shapes)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                              "model '%s': parameters shapes, min_shapes, "
                              "opt_shapes and max_shapes apply to ONNX files; "
                              "'%s' is not one", model->name, path);
    if (model->format == MICA__TB_ENGINE && model->has_precisions)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                              "model '%s': parameter precision applies to "
                              "manifests; the engine '%s' keeps the "
                              "precision it was built with", model->name,
                              path);
    return mica__tb_strdup(path, &model->path);
}

/* `size` bytes at a 64-byte aligned address (as a mapped engine file). */
static TRITONSERVER_Error *aligned(size_t size, void **out)
{
    size_t rounded = (size + 63) & ~(size_t)63;
    if (rounded < size || !(*out = aligned_alloc(64, rounded ? rounded : 64)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                              "out of memory for %zu bytes of engine", size);
    return NULL;
}

/* The whole engine file, aligned. */
static TRITONSERVER_Error *read_engine(const mica__tb_model_t *model,
                                       mica__tb_blob_t *blob)
{
    FILE *f = fopen(model->path, "rb");
    TRITONSERVER_Error *err = NULL;
    long size;

    if (!f)
        return mica__tb_error(TRITONSERVER_ERROR_NOT_FOUND, "model '%s': "
                              "cannot open '%s'", model->name, model->path);
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': "
                             "cannot read '%s'", model->name, model->path);
        goto done;
    }
    if ((err = aligned((size_t)size, &blob->data)))
        goto done;
    if (fread(blob->data, 1, (size_t)size, f) != (size_t)size) {
        free(blob->data);
        blob->data = NULL;
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': "
                             "short read of '%s'", model->name, model->path);
        goto done;
    }
    blob->size = (size_t)size;
done:
    fclose(f);
    return err;
}

/* Append "NAME:D0xD1..." (dims, the first replaced by `batch`) to the
 * derived shapes list *list.  NULL, or an error. */
static TRITONSERVER_Error *derive_add(char **list, const char *name,
                                      const char *dims, int64_t batch)
{
    const char *rest = strchr(dims, 'x');
    size_t n = (*list ? strlen(*list) : 0) + strlen(name) + strlen(dims) + 32;
    char *v = malloc(n);
    if (!v)
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    snprintf(v, n, "%s%s%s:%lld%s", *list ? *list : "", *list ? "," : "",
             name, (long long)batch, rest ? rest : "");
    free(*list);
    *list = v;
    return NULL;
}

/*
 * An ONNX import refused for want of a profile: the importer's message
 * "...: input 'NAME' has runtime dimensions (DIMS, -1 unknown): ..."
 * (core/onnx/profile.c) names the input.  Where only its first dimension
 * is a runtime one and the configuration says max_batch_size B > 0, that
 * dimension is the batch: add the profile 1 / B / B of it to
 * model->derived and return 1 (import again).  Otherwise 0, with the
 * error to give in *err, naming the configuration's keys.
 */
static int derive_profile(mica__tb_model_t *model, const char *msg,
                          TRITONSERVER_Error **err)
{
    const char *p = strstr(msg, "input '"), *q, *dims;
    char name[256], ds[160];
    size_t n;

    *err = NULL;
    if (!p || !(q = strstr(p + 7, "' has runtime dimensions (")))
        return 0;
    n = (size_t)(q - (p + 7));
    dims = q + strlen("' has runtime dimensions (");
    if (n >= sizeof name || !strchr(dims, ','))
        return 0;
    memcpy(name, p + 7, n);
    name[n] = '\0';
    n = (size_t)(strchr(dims, ',') - dims);
    if (n >= sizeof ds)
        return 0;
    memcpy(ds, dims, n);
    ds[n] = '\0';
    if (model->config_batch > 0 && strncmp(ds, "-1", 2) == 0 &&
        !strstr(ds + 2, "-1")) {
        if ((*err = derive_add(&model->derived[0], name, ds, 1)) ||
            (*err = derive_add(&model->derived[1], name, ds,
                               model->config_batch)) ||
            (*err = derive_add(&model->derived[2], name, ds,
                               model->config_batch)))
            return 0;
        return 1;
    }
    *err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                          "input '%s' has runtime dimensions (%s, -1 "
                          "unknown)%s: give its profile in config.pbtxt, "
                          "parameters min_shapes, opt_shapes and max_shapes "
                          "(or shapes), e.g. { key: \"max_shapes\" value: { "
                          "string_value: \"%s:...\" } }", model->name, name,
                          ds, strncmp(ds, "-1", 2) == 0 &&
                          model->config_batch <= 0
                              ? " and max_batch_size is 0 (a batch of 1 to "
                                "max_batch_size is derived from it)"
                              : " beyond the batch", name);
    return 0;
}

/* The network of a manifest or an ONNX file and its build configuration;
 * *keep and *onnx own what the network lives in.  An ONNX model without
 * the shapes parameters gets the batch profile derive_profile makes. */
static TRITONSERVER_Error *make_network(mica__tb_model_t *model,
                                        mica_manifest_t **keep,
                                        mica_onnx_model_t **onnx,
                                        mica_network_t **net,
                                        mica_build_config_t *cfg)
{
    mica_onnx_options_t opt;
    mica_status_t st;
    TRITONSERVER_Error *err;
    int tries;

    if (model->format == MICA__TB_ONNX) {
        for (tries = 0; tries < 256; tries++) {
            memset(&opt, 0, sizeof opt);
            opt.struct_size = sizeof opt;
            opt.shapes = model->shapes[0];
            opt.min_shapes = model->has_shapes ? model->shapes[1]
                                               : model->derived[0];
            opt.opt_shapes = model->has_shapes ? model->shapes[2]
                                               : model->derived[1];
            opt.max_shapes = model->has_shapes ? model->shapes[3]
                                               : model->derived[2];
            st = mica_onnx_import(model->ctx, model->path, &opt, onnx);
            if (st == MICA_OK || model->has_shapes)
                break;
            if (!derive_profile(model, mica_context_error(model->ctx),
                                &err)) {
                if (err)
                    return err;
                break;
            }
        }
        if (st == MICA_OK)
            st = mica_onnx_manifest(*onnx, keep);
    } else {
        st = mica_manifest_load(model->ctx, model->path, keep);
    }
    if (st != MICA_OK)
        return mica__tb_mica_error(model->ctx, st, "model '%s'", model->name);
    *net = mica_manifest_network(*keep);
    *cfg = *mica_manifest_config(*keep);
    return NULL;
}

/* Build the model for `device` (0: auto) and serialize it, aligned. */
static TRITONSERVER_Error *build(mica__tb_model_t *model, uint32_t device,
                                 mica__tb_blob_t *blob, uint32_t *used)
{
    mica_manifest_t *m = NULL;
    mica_onnx_model_t *onnx = NULL;
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *engine = NULL;
    void *bytes = NULL;
    size_t size = 0;
    mica_status_t st;
    TRITONSERVER_Error *err;

    if ((err = make_network(model, &m, &onnx, &net, &cfg)))
        goto done;
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (model->has_precisions)
        cfg.precisions = model->precisions;
    if ((st = mica_engine_build(net, &cfg, &engine)) != MICA_OK ||
        (st = mica_engine_serialize(engine, &bytes, &size)) != MICA_OK) {
        err = mica__tb_mica_error(model->ctx, st, "model '%s': building "
                                  "'%s' for device %s", model->name,
                                  model->path, device_name(device));
        goto done;
    }
    *used = mica_engine_device(engine);
    if ((err = aligned(size, &blob->data)))
        goto done;
    memcpy(blob->data, bytes, size);
    blob->size = size;
done:
    mica_free(bytes);
    mica_engine_destroy(engine);
    mica_manifest_destroy(m);
    mica_onnx_destroy(onnx);
    return err;
}

/* The device an engine file was built for. */
static TRITONSERVER_Error *engine_device(mica__tb_model_t *model,
                                         const mica__tb_blob_t *blob,
                                         uint32_t *used)
{
    mica_engine_t *engine;
    mica_status_t st;

    st = mica_engine_deserialize_borrow(model->ctx, blob->data, blob->size,
                                        &engine);
    if (st != MICA_OK)
        return mica__tb_mica_error(model->ctx, st, "model '%s': loading "
                                   "'%s'", model->name, model->path);
    *used = mica_engine_device(engine);
    mica_engine_destroy(engine);
    return NULL;
}

static int slot(uint32_t device)
{
    return device == MICA_DEVICE_CUDA ? 1 : 0;
}

TRITONSERVER_Error *mica__tb_model_blob(mica__tb_model_t *model,
                                        uint32_t device,
                                        const mica__tb_blob_t **out,
                                        uint32_t *used)
{
    TRITONSERVER_Error *err = NULL;
    mica__tb_blob_t blob = {NULL, 0};
    uint32_t got = 0;
    int s;

    if (!device)
        device = model->device;
    pthread_mutex_lock(&model->lock);
    for (s = 0; s < 2; s++) {
        uint32_t d = s ? MICA_DEVICE_CUDA : MICA_DEVICE_CPU;
        if (model->blobs[s].data && (!device || device == d)) {
            *out = &model->blobs[s];
            *used = d;
            goto done;
        }
    }
    if (model->format == MICA__TB_ENGINE) {
        for (s = 0; s < 2; s++)
            if (model->blobs[s].data) {
                /* Loaded already, for the other device. */
                err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                     "model '%s': the engine '%s' runs on "
                                     "%s, not on %s: build one for %s",
                                     model->name, model->path,
                                     device_name(s ? MICA_DEVICE_CUDA
                                                   : MICA_DEVICE_CPU),
                                     device_name(device), device_name(device));
                goto done;
            }
        if ((err = read_engine(model, &blob)) ||
            (err = engine_device(model, &blob, &got)))
            goto done;
        if (device && got != device) {
            err = mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                 "model '%s': the engine '%s' runs on %s, "
                                 "not on %s: build one for %s", model->name,
                                 model->path, device_name(got),
                                 device_name(device), device_name(device));
            goto done;
        }
    } else if ((err = build(model, device, &blob, &got))) {
        goto done;
    }
    if (model->blobs[slot(got)].data) {
        /* Auto chose a device built before: keep the first bytes. */
        free(blob.data);
        blob.data = NULL;
    } else {
        model->blobs[slot(got)] = blob;
        blob.data = NULL;
    }
    *out = &model->blobs[slot(got)];
    *used = got;
done:
    free(blob.data);
    pthread_mutex_unlock(&model->lock);
    return err;
}
