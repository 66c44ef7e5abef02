/*
 * tools/triton/model.c - TRITONBACKEND_ModelInitialize/Finalize: a model
 * of the repository whose config.pbtxt says `backend: "mica"`.
 *
 * Parameters (config.pbtxt `parameters`, string values):
 *   file       the model file in the version folder (default: the first
 *              of model.mica, model.engine, model.yaml, model.yml,
 *              model.onnx)
 *   device     auto (default: each instance's kind decides), cpu, cuda
 *   precision  float32 or float16 (a manifest's `precision`; with
 *              float16, layers that take it run in float16)
 *   prefer     "Type=impl,..." implementation choices (as $MICA_PREFER)
 *   threads    CPU threads per layer of each instance (the backend
 *              option threads otherwise)
 *   shapes, min_shapes, opt_shapes, max_shapes
 *              for an ONNX file: the profile of its runtime dimensions,
 *              "x:8x16,y:8" (as mica import --shapes...)
 *
 * At load the model is read (an engine) or built (a manifest) once, for
 * the device the parameter names or mica's choice, to learn its inputs
 * and outputs; the configuration is checked against them and, when the
 * server allows it, completed (config_io.c).
 */
#include <config.h>

#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void model_free(mica__tb_model_t *m)
{
    int s;
    if (!m)
        return;
    for (s = 0; s < 2; s++)
        free(m->blobs[s].data);
    mica_context_destroy(m->ctx);
    mica__tb_io_free(m->inputs, m->nb_inputs);
    mica__tb_io_free(m->outputs, m->nb_outputs);
    pthread_mutex_destroy(&m->lock);
    free(m->name);
    free(m->path);
    free(m->prefer);
    for (s = 0; s < 4; s++)
        free(m->shapes[s]);
    free(m);
}

/* The `parameters` of the configuration; *file is the file parameter. */
static TRITONSERVER_Error *read_params(mica__tb_model_t *m,
                                       const mica__json_t *config,
                                       const char **file)
{
    static const char *const shape_keys[4] = {"shapes", "min_shapes",
                                              "opt_shapes", "max_shapes"};
    const mica__json_t *p;
    TRITONSERVER_Error *err;
    int k;

    *file = NULL;
    p = mica__json_get(config, "parameters");
    for (p = p ? p->child : NULL; p; p = p->next) {
        const char *v = mica__json_string(mica__json_get(p, "string_value"));
        if (!v)
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                  "'%s': parameter '%s' has no string_value",
                                  m->name, p->key);
        if (strcmp(p->key, "file") == 0) {
            *file = v;
        } else if (strcmp(p->key, "device") == 0) {
            if (strcmp(v, "auto") == 0) m->device = 0;
            else if (strcmp(v, "cpu") == 0) m->device = MICA_DEVICE_CPU;
            else if (strcmp(v, "cuda") == 0) m->device = MICA_DEVICE_CUDA;
            else
                return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                      "'%s': parameter device is '%s'; it "
                                      "takes auto, cpu or cuda", m->name, v);
        } else if (strcmp(p->key, "precision") == 0) {
            m->has_precisions = 1;
            if (strcmp(v, "float32") == 0)
                m->precisions = 1u << MICA_FLOAT32;
            else if (strcmp(v, "float16") == 0)
                m->precisions = 1u << MICA_FLOAT32 | 1u << MICA_FLOAT16;
            else
                return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                      "'%s': parameter precision is '%s'; it "
                                      "takes float32 or float16", m->name, v);
        } else if (strcmp(p->key, "threads") == 0) {
            char *end;
            long t = strtol(v, &end, 10);
            if (end == v || *end || t < 1 || t > 4096)
                return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                      "'%s': parameter threads is '%s'; it "
                                      "takes a count of threads from 1 to "
                                      "4096", m->name, v);
            m->threads = (int32_t)t;
        } else if (strcmp(p->key, "prefer") == 0) {
            if ((err = mica__tb_strdup(v, &m->prefer)))
                return err;
        } else {
            for (k = 0; k < 4; k++)
                if (strcmp(p->key, shape_keys[k]) == 0)
                    break;
            if (k == 4)
                return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model "
                                      "'%s': unknown parameter '%s' (the mica "
                                      "backend takes file, device, precision, "
                                      "prefer, threads, and shapes, min_shapes, "
                                      "opt_shapes, max_shapes for ONNX)",
                                      m->name, p->key);
            if ((err = mica__tb_strdup(v, &m->shapes[k])))
                return err;
            m->has_shapes = 1;
        }
    }
    return NULL;
}

/* Check the configuration against the engine, and hand back the
 * completed one when auto-complete is on and something was added. */
static TRITONSERVER_Error *complete_config(mica__tb_model_t *m,
                                           mica__json_t *config)
{
    const mica__tb_blob_t *blob;
    mica_engine_t *engine = NULL;
    TRITONSERVER_Message *msg = NULL;
    TRITONSERVER_Error *err;
    bool complete = false;
    uint32_t used;
    mica_status_t st;
    int changed = 0;
    char *text = NULL;
    size_t len;

    if ((err = TRITONBACKEND_ModelAutoCompleteConfig(m->triton, &complete)) ||
        (err = mica__tb_model_blob(m, 0, &blob, &used)))
        return err;
    st = mica_engine_deserialize_borrow(m->ctx, blob->data, blob->size,
                                        &engine);
    if (st != MICA_OK)
        return mica__tb_mica_error(m->ctx, st, "model '%s'", m->name);
    if ((err = mica__tb_config_io(m, engine, config, complete, &changed)) ||
        !changed)
        goto done;
    if (!(text = mica__json_write(config, &len))) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        goto done;
    }
    if ((err = TRITONSERVER_MessageNewFromSerializedJson(&msg, text, len)) ||
        (err = TRITONBACKEND_ModelSetConfig(m->triton, 1, msg)))
        goto done;
    mica__tb_log(TRITONSERVER_LOG_INFO, "mica: model '%s': configuration "
                 "completed from the model: %s", m->name, text);
done:
    if (msg)
        mica__tb_log_error(TRITONSERVER_MessageDelete(msg), "config message");
    free(text);
    mica_engine_destroy(engine);
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *triton)
{
    mica__tb_model_t *m;
    TRITONBACKEND_Backend *backend;
    TRITONBACKEND_ArtifactType artifact;
    TRITONSERVER_Message *msg = NULL;
    TRITONSERVER_Error *err;
    mica__json_t *config = NULL;
    const char *name, *location, *text, *file;
    void *bstate;
    uint64_t version;
    size_t len;
    char why[256], dir[4096];
    mica_status_t st;

    if (!(m = calloc(1, sizeof *m)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    m->triton = triton;
    if ((err = TRITONBACKEND_ModelName(triton, &name)) ||
        (err = mica__tb_strdup(name, &m->name)) ||
        (err = TRITONBACKEND_ModelVersion(triton, &version)) ||
        (err = TRITONBACKEND_ModelRepository(triton, &artifact, &location)) ||
        (err = TRITONBACKEND_ModelBackend(triton, &backend)) ||
        (err = TRITONBACKEND_BackendState(backend, &bstate)))
        goto fail;
    m->backend = bstate;
    if (artifact != TRITONBACKEND_ARTIFACT_FILESYSTEM) {
        err = mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': "
                             "the mica backend reads models from a local "
                             "folder only", m->name);
        goto fail;
    }
    if ((err = TRITONBACKEND_ModelConfig(triton, 1, &msg)) ||
        (err = TRITONSERVER_MessageSerializeToJson(msg, &text, &len)))
        goto fail;
    if (mica__json_parse(text, len, &config, why, sizeof why) != 0) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "model '%s': the "
                             "configuration is not JSON: %s", m->name, why);
        goto fail;
    }
    snprintf(dir, sizeof dir, "%s/%llu", location,
             (unsigned long long)version);
    if ((err = mica__tb_config_refuse(m, config)) ||
        (err = read_params(m, config, &file)) ||
        (err = mica__tb_context(m->backend, &m->ctx)))
        goto fail;
    if (m->prefer && (st = mica_context_set_prefer(m->ctx, m->prefer))) {
        err = mica__tb_mica_error(m->ctx, st, "model '%s': parameter prefer",
                                  m->name);
        goto fail;
    }
    if ((err = mica__tb_model_file(m, dir, file)) ||
        (err = complete_config(m, config)) ||
        (err = TRITONBACKEND_ModelSetState(triton, m)))
        goto fail;
    mica__tb_log(TRITONSERVER_LOG_INFO, "mica: model '%s' version %llu: "
                 "'%s', %d input(s), %d output(s), max_batch_size %d",
                 m->name, (unsigned long long)version, m->path,
                 (int)m->nb_inputs, (int)m->nb_outputs, (int)m->max_batch);
    mica__json_free(config);
    mica__tb_log_error(TRITONSERVER_MessageDelete(msg), "config message");
    return NULL;
fail:
    mica__json_free(config);
    if (msg)
        mica__tb_log_error(TRITONSERVER_MessageDelete(msg), "config message");
    model_free(m);
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *triton)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelState(triton, &state);
    if (err)
        return err;
    model_free(state);
    return NULL;
}
