/*
 * tests/triton/fake_triton.c - the test double of fake_triton.h: Triton's
 * functions over plain structs.  No threads, no scheduler: the test calls
 * the backend's entry points itself.  Allocation failures abort (a test
 * double, not a case under test).  Output buffers in GPU memory use the
 * CUDA runtime (CUDA builds only).
 */
#include <config.h>

#include "fake_triton.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int fake_output_memory = -1;

static void *must(void *p)
{
    if (!p)
        abort();
    return p;
}

/* ---- errors, log, messages ----------------------------------------------- */

struct TRITONSERVER_Error {
    TRITONSERVER_Error_Code code;
    char *msg;
};

TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code,
                                          const char *msg)
{
    TRITONSERVER_Error *e = must(malloc(sizeof *e));
    e->msg = must(strdup(msg));
    e->code = code;
    return e;
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error)
{
    if (error) {
        free(error->msg);
        free(error);
    }
}

TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error)
{
    return error->code;
}

const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error)
{
    return error->msg;
}

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level)
{
    return level == TRITONSERVER_LOG_ERROR;
}

TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename,
                                            const int line, const char *msg)
{
    (void)filename;
    (void)line;
    if (level == TRITONSERVER_LOG_ERROR)
        printf("# server log: %s\n", msg);
    return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message **message, const char *base, size_t byte_size)
{
    TRITONSERVER_Message *m = must(malloc(sizeof *m));
    m->json = must(malloc(byte_size + 1));
    memcpy(m->json, base, byte_size);
    m->json[byte_size] = '\0';
    m->len = byte_size;
    *message = m;
    return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageDelete(TRITONSERVER_Message *message)
{
    free(message->json);
    free(message);
    return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message *message, const char **base, size_t *byte_size)
{
    *base = message->json;
    *byte_size = message->len;
    return NULL;
}

/* ---- backend ------------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major, uint32_t *minor)
{
    *major = 1;
    *minor = 19;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendConfig(TRITONBACKEND_Backend *b,
                                                TRITONSERVER_Message **config)
{
    b->msg.json = (char *)b->config;
    b->msg.len = strlen(b->config);
    *config = &b->msg; /* the server's: never deleted by the backend */
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend *b,
                                                  void *state)
{
    b->state = state;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendState(TRITONBACKEND_Backend *b,
                                               void **state)
{
    *state = b->state;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute *attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t *device_ids, const uint64_t id_count)
{
    TRITONBACKEND_Backend *b = (TRITONBACKEND_Backend *)attributes;
    (void)count;
    (void)device_ids;
    (void)id_count;
    b->preferred = kind;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute *attributes, bool enabled)
{
    ((TRITONBACKEND_Backend *)attributes)->parallel = enabled;
    return NULL;
}

/* ---- model --------------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ModelName(TRITONBACKEND_Model *m,
                                            const char **name)
{
    *name = m->name;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelVersion(TRITONBACKEND_Model *m,
                                               uint64_t *version)
{
    *version = m->version;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model *m, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location)
{
    *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
    *location = m->repository;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelConfig(TRITONBACKEND_Model *m,
                                              const uint32_t config_version,
                                              TRITONSERVER_Message **config)
{
    if (config_version != 1)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED,
                                     "config version 1 only");
    return TRITONSERVER_MessageNewFromSerializedJson(config, m->config,
                                                     strlen(m->config));
}

TRITONSERVER_Error *TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model *m, bool *auto_complete_config)
{
    *auto_complete_config = m->auto_complete;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelSetConfig(TRITONBACKEND_Model *m,
                                                 const uint32_t config_version,
                                                 TRITONSERVER_Message *config)
{
    if (config_version != 1)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNSUPPORTED,
                                     "config version 1 only");
    free(m->set_config);
    m->set_config = must(strdup(config->json));
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelBackend(TRITONBACKEND_Model *m,
                                               TRITONBACKEND_Backend **b)
{
    *b = m->backend;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelSetState(TRITONBACKEND_Model *m,
                                                void *state)
{
    m->state = state;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelState(TRITONBACKEND_Model *m,
                                             void **state)
{
    *state = m->state;
    return NULL;
}

/* ---- instance ------------------------------------------------------------ */

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance *i, const char **name)
{
    *name = i->name;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance *i, TRITONSERVER_InstanceGroupKind *kind)
{
    *kind = i->kind;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance *i, int32_t *device_id)
{
    *device_id = i->device_id;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance *i, TRITONBACKEND_Model **model)
{
    *model = i->model;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance *i, void *state)
{
    i->state = state;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance *i, void **state)
{
    *state = i->state;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *i, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns,
    const uint64_t compute_start_ns, const uint64_t compute_end_ns,
    const uint64_t exec_end_ns)
{
    if (request->released || !(exec_start_ns <= compute_start_ns &&
                               compute_start_ns <= compute_end_ns &&
                               compute_end_ns <= exec_end_ns))
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                     "statistics out of order or late");
    i->stats.requests++;
    i->stats.failed += !success;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *i, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns)
{
    if (!(exec_start_ns <= compute_start_ns && compute_start_ns <= compute_end_ns &&
          compute_end_ns <= exec_end_ns))
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                     "batch statistics out of order");
    i->stats.batches++;
    i->stats.batch_rows += batch_size;
    if (batch_size > i->stats.largest)
        i->stats.largest = batch_size;
    return NULL;
}

/* ---- requests ------------------------------------------------------------ */

TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request *r,
                                                    uint32_t *count)
{
    *count = r->nb_inputs;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInputName(TRITONBACKEND_Request *r,
                                                   const uint32_t index,
                                                   const char **input_name)
{
    if (index >= r->nb_inputs)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "index");
    *input_name = r->inputs[index].name;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestInput(TRITONBACKEND_Request *r,
                                               const char *name,
                                               TRITONBACKEND_Input **input)
{
    uint32_t k;
    for (k = 0; k < r->nb_inputs; k++)
        if (strcmp(r->inputs[k].name, name) == 0) {
            *input = &r->inputs[k];
            return NULL;
        }
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_NOT_FOUND, "no input");
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request *r,
                                                     uint32_t *count)
{
    *count = r->nb_outputs;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(TRITONBACKEND_Request *r,
                                                    const uint32_t index,
                                                    const char **output_name)
{
    if (index >= r->nb_outputs)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "index");
    *output_name = r->outputs[index];
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestIsCancelled(TRITONBACKEND_Request *r,
                                                     bool *is_cancelled)
{
    *is_cancelled = r->cancelled != 0;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_RequestRelease(TRITONBACKEND_Request *r,
                                                 uint32_t release_flags)
{
    if (release_flags != TRITONSERVER_REQUEST_RELEASE_ALL || r->released)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                     "released twice");
    r->released = 1;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input *in, const char **name, TRITONSERVER_DataType *datatype,
    const int64_t **shape, uint32_t *dims_count, uint64_t *byte_size,
    uint32_t *buffer_count)
{
    uint64_t total = 0;
    uint32_t b;
    for (b = 0; b < in->nb_buffers; b++)
        total += in->size[b];
    if (name) *name = in->name;
    if (datatype) *datatype = in->dtype;
    if (shape) *shape = in->shape;
    if (dims_count) *dims_count = in->rank;
    if (byte_size) *byte_size = total;
    if (buffer_count) *buffer_count = in->nb_buffers;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input *in, const uint32_t index, const void **buffer,
    uint64_t *buffer_byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id)
{
    if (index >= in->nb_buffers)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "index");
    *buffer = in->buffer[index];
    *buffer_byte_size = in->size[index];
    *memory_type = in->type;
    *memory_type_id = in->type_id;
    return NULL;
}

/* ---- responses ----------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ResponseNew(TRITONBACKEND_Response **response,
                                              TRITONBACKEND_Request *request)
{
    TRITONBACKEND_Response *r = must(calloc(1, sizeof *r));
    r->request = request;
    *response = r;
    return NULL;
}

void fake_response_free(TRITONBACKEND_Response *r)
{
    uint32_t k;
    if (!r)
        return;
    for (k = 0; k < r->nb_outputs; k++) {
#ifdef MICA_HAVE_CUDA
        if (r->outputs[k].type == TRITONSERVER_MEMORY_GPU) {
            cudaFree(r->outputs[k].buffer);
            continue;
        }
#endif
        free(r->outputs[k].buffer);
    }
    free(r->error);
    free(r);
}

TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response *r)
{
    fake_response_free(r);
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response *r, TRITONBACKEND_Output **output, const char *name,
    const TRITONSERVER_DataType datatype, const int64_t *shape,
    const uint32_t dims_count)
{
    TRITONBACKEND_Output *o;
    if (r->nb_outputs == FAKE_MAX || dims_count > FAKE_MAX)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG, "full");
    o = &r->outputs[r->nb_outputs++];
    memset(o, 0, sizeof *o);
    o->name = name;
    o->dtype = datatype;
    memcpy(o->shape, shape, dims_count * sizeof *shape);
    o->rank = dims_count;
    *output = o;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output *o, void **buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id)
{
    TRITONSERVER_MemoryType type = fake_output_memory < 0
        ? *memory_type : (TRITONSERVER_MemoryType)fake_output_memory;
    size_t n = buffer_byte_size ? buffer_byte_size : 1;

    if (type == TRITONSERVER_MEMORY_GPU) {
#ifdef MICA_HAVE_CUDA
        if (cudaMalloc(&o->buffer, n) != cudaSuccess)
            return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                         "cudaMalloc failed");
#else
        type = TRITONSERVER_MEMORY_CPU;
#endif
    }
    if (type != TRITONSERVER_MEMORY_GPU)
        o->buffer = must(malloc(n));
    o->bytes = buffer_byte_size;
    o->type = type;
    o->type_id = type == TRITONSERVER_MEMORY_GPU ? *memory_type_id : 0;
    *buffer = o->buffer;
    *memory_type = type;
    *memory_type_id = o->type_id;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response *r, const char *name, const char *value)
{
    snprintf(r->param, sizeof r->param, "%s=%s", name, value);
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSend(TRITONBACKEND_Response *r,
                                               const uint32_t send_flags,
                                               TRITONSERVER_Error *error)
{
    TRITONBACKEND_Request *q = r->request;
    if (send_flags != TRITONSERVER_RESPONSE_COMPLETE_FINAL || q->released)
        return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                     "a response after the release");
    if (error) {
        r->error = must(strdup(TRITONSERVER_ErrorMessage(error)));
        r->code = (int)TRITONSERVER_ErrorCode(error);
    }
    r->sent = 1;
    fake_response_free(q->response);
    q->response = r;
    q->responses++;
    return NULL;
}
