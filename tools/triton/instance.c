/*
 * tools/triton/instance.c - TRITONBACKEND_ModelInstanceInitialize/
 * Finalize: one mica context, engine and execution context per instance.
 *
 * Instances run in threads of their own and mica's contexts are used from
 * one thread at a time, so each instance has its own context; its engine
 * is loaded from the model's engine bytes for its device without copying
 * the weights (mica_engine_deserialize_borrow).  KIND_CPU instances run
 * on the CPU, KIND_GPU ones on CUDA device `device_id` (the backend then
 * needs CUDA); KIND_MODEL and KIND_AUTO ones on the device of the model's
 * `device` parameter, or the one chosen when the model was loaded.
 */
#include <config.h>

#include "backend.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(TRITONSERVER_InstanceGroupKind kind)
{
    switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_CPU: return "KIND_CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU: return "KIND_GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL: return "KIND_MODEL";
    default: return "KIND_AUTO";
    }
}

static void instance_free(mica__tb_instance_t *in)
{
    int32_t i;
    if (!in)
        return;
    if (in->device == MICA_DEVICE_CUDA)
        mica__tb_log_error(mica__tb_set_device(in->device_id),
                           "instance finalize");
    mica_exec_destroy(in->exec);
    mica_engine_destroy(in->engine);
    mica_context_destroy(in->ctx);
    for (i = 0; in->stage && i < in->model->nb_inputs; i++)
        free(in->stage[i]);
    free(in->stage);
    free(in->stage_cap);
    free(in->bound);
    free(in->name);
    free(in);
}

/* The device of an instance of `kind`, checked against the model. */
static TRITONSERVER_Error *choose_device(mica__tb_instance_t *in,
                                         TRITONSERVER_InstanceGroupKind kind)
{
    const mica__tb_model_t *m = in->model;

    if (kind == TRITONSERVER_INSTANCEGROUPKIND_CPU)
        in->device = MICA_DEVICE_CPU;
    else if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU)
        in->device = MICA_DEVICE_CUDA;
    else
        in->device = m->device; /* 0: what the model was loaded for */
    if (m->device && in->device && in->device != m->device)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "instance '%s' is %s but parameter device is "
                              "%s", m->name, in->name, kind_name(kind),
                              m->device == MICA_DEVICE_CPU ? "cpu" : "cuda");
    if (in->device == MICA_DEVICE_CUDA && !mica__tb_have_cuda())
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': "
                              "instance '%s' is %s but this mica backend was "
                              "built without CUDA", m->name, in->name,
                              kind_name(kind));
    return NULL;
}

/* The model's threads parameter, else the backend's threads option. */
static mica_status_t instance_threads(const mica__tb_instance_t *in)
{
    int64_t t = in->model->threads > 0 ? in->model->threads
                                       : in->model->backend->threads;
    return t > 0 ? mica_exec_set_threads(in->exec, (int32_t)t) : MICA_OK;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *triton)
{
    mica__tb_instance_t *in;
    TRITONBACKEND_Model *model;
    TRITONSERVER_InstanceGroupKind kind;
    TRITONSERVER_Error *err;
    const mica__tb_blob_t *blob;
    const char *name;
    void *mstate;
    uint32_t used;
    int32_t n;
    mica_status_t st;

    if (!(in = calloc(1, sizeof *in)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    in->triton = triton;
    in->device_id = -1;
    if ((err = TRITONBACKEND_ModelInstanceName(triton, &name)) ||
        (err = mica__tb_strdup(name, &in->name)) ||
        (err = TRITONBACKEND_ModelInstanceKind(triton, &kind)) ||
        (err = TRITONBACKEND_ModelInstanceModel(triton, &model)) ||
        (err = TRITONBACKEND_ModelState(model, &mstate)))
        goto fail;
    in->model = mstate;
    n = in->model->nb_inputs + in->model->nb_outputs;
    if (!(in->stage = calloc((size_t)n, sizeof *in->stage)) ||
        !(in->stage_cap = calloc((size_t)n, sizeof *in->stage_cap)) ||
        !(in->bound = calloc((size_t)n, 1))) {
        err = mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        goto fail;
    }
    if ((err = choose_device(in, kind)))
        goto fail;
    if (in->device == MICA_DEVICE_CUDA &&
        ((err = TRITONBACKEND_ModelInstanceDeviceId(triton, &in->device_id)) ||
         (err = mica__tb_set_device(in->device_id))))
        goto fail;
    if ((err = mica__tb_model_blob(in->model, in->device, &blob, &used)) ||
        (err = mica__tb_context(in->model->backend, &in->ctx)))
        goto fail;
    in->device = used;
    if (in->device == MICA_DEVICE_CUDA && in->device_id < 0 &&
        ((err = TRITONBACKEND_ModelInstanceDeviceId(triton, &in->device_id)) ||
         (err = mica__tb_set_device(in->device_id))))
        goto fail;
    if ((in->model->prefer &&
         (st = mica_context_set_prefer(in->ctx, in->model->prefer))) ||
        (st = mica_engine_deserialize_borrow(in->ctx, blob->data, blob->size,
                                             &in->engine)) ||
        (st = mica_exec_create(in->engine, &in->exec)) ||
        (st = instance_threads(in))) {
        err = mica__tb_mica_error(in->ctx, st, "model '%s': instance '%s'",
                                  in->model->name, in->name);
        goto fail;
    }
    if ((err = TRITONBACKEND_ModelInstanceSetState(triton, in)))
        goto fail;
    if (in->device == MICA_DEVICE_CUDA)
        mica__tb_log(TRITONSERVER_LOG_INFO, "mica: instance '%s' of model "
                     "'%s' (%s) runs on CUDA device %d", in->name,
                     in->model->name, kind_name(kind), (int)in->device_id);
    else
        mica__tb_log(TRITONSERVER_LOG_INFO, "mica: instance '%s' of model "
                     "'%s' (%s) runs on the CPU", in->name, in->model->name,
                     kind_name(kind));
    return NULL;
fail:
    instance_free(in);
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *triton)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceState(triton, &state);
    if (err)
        return err;
    instance_free(state);
    return NULL;
}
