/*
 * tools/triton/triton_api.h - the part of Triton Inference Server's C API
 * that the mica backend uses, declared here because Triton's own headers
 * (tritonserver.h, tritonbackend.h) are not packaged where we can install
 * them from.
 *
 * Written from Triton's published API documentation (the backend API,
 * version 1.19, Triton r24.10); only what libtriton_mica.so calls or
 * defines is declared.  Triton's API is a C ABI of opaque handles, plain
 * enums whose values are only ever appended, and functions that return a
 * TRITONSERVER_Error (NULL: success) which the caller owns.
 *
 * Checked against: the tritonserver 2.51.0 (r24.10, TRITONBACKEND API
 * 1.19) that nvidia-pytriton 0.7.0 ships: every TRITONSERVER_ and
 * TRITONBACKEND_ symbol that libtriton_mica.so leaves undefined is
 * exported by that server's libtritonserver.so (`nm -D`; the test
 * tests/test_triton.sh checks it again against the server it runs), and
 * the enum values below are those of that release.
 */
#ifndef MICA_TRITON_API_H
#define MICA_TRITON_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The backend API version this backend was written for: the server must
 * speak the same major version and at least this minor one. */
#define MICA_TRITON_API_MAJOR 1
#define MICA_TRITON_API_MINOR 19

/* What the backend exports (the server looks these names up). */
#if defined(__GNUC__)
#define MICA_TRITON_EXPORT __attribute__((visibility("default")))
#else
#define MICA_TRITON_EXPORT
#endif

/* ---- opaque handles ------------------------------------------------------ */

typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_BackendAttribute TRITONBACKEND_BackendAttribute;

/* ---- enums (values as documented; new ones are appended) ----------------- */

typedef enum TRITONSERVER_errorcode_enum {
    TRITONSERVER_ERROR_UNKNOWN,
    TRITONSERVER_ERROR_INTERNAL,
    TRITONSERVER_ERROR_NOT_FOUND,
    TRITONSERVER_ERROR_INVALID_ARG,
    TRITONSERVER_ERROR_UNAVAILABLE,
    TRITONSERVER_ERROR_UNSUPPORTED,
    TRITONSERVER_ERROR_ALREADY_EXISTS,
    TRITONSERVER_ERROR_CANCELLED
} TRITONSERVER_Error_Code;

typedef enum TRITONSERVER_datatype_enum {
    TRITONSERVER_TYPE_INVALID,
    TRITONSERVER_TYPE_BOOL,
    TRITONSERVER_TYPE_UINT8,
    TRITONSERVER_TYPE_UINT16,
    TRITONSERVER_TYPE_UINT32,
    TRITONSERVER_TYPE_UINT64,
    TRITONSERVER_TYPE_INT8,
    TRITONSERVER_TYPE_INT16,
    TRITONSERVER_TYPE_INT32,
    TRITONSERVER_TYPE_INT64,
    TRITONSERVER_TYPE_FP16,
    TRITONSERVER_TYPE_FP32,
    TRITONSERVER_TYPE_FP64,
    TRITONSERVER_TYPE_BYTES,
    TRITONSERVER_TYPE_BF16
} TRITONSERVER_DataType;

typedef enum TRITONSERVER_memorytype_enum {
    TRITONSERVER_MEMORY_CPU,
    TRITONSERVER_MEMORY_CPU_PINNED,
    TRITONSERVER_MEMORY_GPU
} TRITONSERVER_MemoryType;

typedef enum TRITONSERVER_instancegroupkind_enum {
    TRITONSERVER_INSTANCEGROUPKIND_AUTO,
    TRITONSERVER_INSTANCEGROUPKIND_CPU,
    TRITONSERVER_INSTANCEGROUPKIND_GPU,
    TRITONSERVER_INSTANCEGROUPKIND_MODEL
} TRITONSERVER_InstanceGroupKind;

typedef enum TRITONSERVER_loglevel_enum {
    TRITONSERVER_LOG_INFO,
    TRITONSERVER_LOG_WARN,
    TRITONSERVER_LOG_ERROR,
    TRITONSERVER_LOG_VERBOSE
} TRITONSERVER_LogLevel;

typedef enum TRITONBACKEND_artifacttype_enum {
    TRITONBACKEND_ARTIFACT_FILESYSTEM,
    TRITONBACKEND_ARTIFACT_REMOTE_FILESYSTEM
} TRITONBACKEND_ArtifactType;

/* TRITONBACKEND_RequestRelease: the backend is done with the request. */
#define TRITONSERVER_REQUEST_RELEASE_ALL 1u
/* TRITONBACKEND_ResponseSend: the last response of its request. */
#define TRITONSERVER_RESPONSE_COMPLETE_FINAL 1u

/* ---- errors, logging, messages (TRITONSERVER_) --------------------------- */

/* A new error the caller owns; the message is copied. */
TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code,
                                          const char *msg);
void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error);
TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error);
/* Valid as long as the error. */
const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error);

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level);
TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename,
                                            const int line, const char *msg);

/* A message is a JSON document (the model configuration, the backend's
 * command-line configuration).  The bytes are copied. */
TRITONSERVER_Error *TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message **message, const char *base, size_t byte_size);
TRITONSERVER_Error *TRITONSERVER_MessageDelete(TRITONSERVER_Message *message);
/* *base (not NUL-terminated) lives as long as the message. */
TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message *message, const char **base, size_t *byte_size);

/* ---- the backend -------------------------------------------------------- */

/* The API version the server implements. */
TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major, uint32_t *minor);
TRITONSERVER_Error *TRITONBACKEND_BackendName(TRITONBACKEND_Backend *backend,
                                              const char **name);
/* {"cmdline": {"key": "value", ...}} from --backend-config=mica,key=value;
 * the message is the server's: the caller must not delete it. */
TRITONSERVER_Error *TRITONBACKEND_BackendConfig(TRITONBACKEND_Backend *backend,
                                                TRITONSERVER_Message **config);
TRITONSERVER_Error *TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend *backend,
                                                  void *state);
TRITONSERVER_Error *TRITONBACKEND_BackendState(TRITONBACKEND_Backend *backend,
                                               void **state);

/* Within TRITONBACKEND_GetBackendAttribute: the instance kind the server
 * gives a model whose configuration names none (count 0 and no device
 * ids: the server's defaults). */
TRITONSERVER_Error *TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute *attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t *device_ids, const uint64_t id_count);
/* Whether the server may initialize several instances at once. */
TRITONSERVER_Error *TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute *attributes, bool enabled);

/* ---- models ------------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ModelName(TRITONBACKEND_Model *model,
                                            const char **name);
TRITONSERVER_Error *TRITONBACKEND_ModelVersion(TRITONBACKEND_Model *model,
                                               uint64_t *version);
/* The model's folder in the repository (the version folders are in it). */
TRITONSERVER_Error *TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model *model, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location);
/* The configuration as JSON (config_version 1); the caller owns it. */
TRITONSERVER_Error *TRITONBACKEND_ModelConfig(TRITONBACKEND_Model *model,
                                              const uint32_t config_version,
                                              TRITONSERVER_Message **config);
/* Whether the backend may complete the configuration (and then set it
 * with TRITONBACKEND_ModelSetConfig, during ModelInitialize only). */
TRITONSERVER_Error *TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model *model, bool *auto_complete_config);
/* The message is read during the call; the caller still owns it. */
TRITONSERVER_Error *TRITONBACKEND_ModelSetConfig(TRITONBACKEND_Model *model,
                                                 const uint32_t config_version,
                                                 TRITONSERVER_Message *config);
TRITONSERVER_Error *TRITONBACKEND_ModelBackend(TRITONBACKEND_Model *model,
                                               TRITONBACKEND_Backend **backend);
TRITONSERVER_Error *TRITONBACKEND_ModelSetState(TRITONBACKEND_Model *model,
                                                void *state);
TRITONSERVER_Error *TRITONBACKEND_ModelState(TRITONBACKEND_Model *model,
                                             void **state);

/* ---- model instances ---------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance *instance, const char **name);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance *instance,
    TRITONSERVER_InstanceGroupKind *kind);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance *instance, int32_t *device_id);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Model **model);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance *instance, void *state);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance *instance, void **state);
/* One request's times (ns, the server's monotonic clock); before the
 * request is released. */
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns,
    const uint64_t compute_start_ns, const uint64_t compute_end_ns,
    const uint64_t exec_end_ns);
/* One execution of `batch_size` batched samples. */
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns);

/* ---- requests, inputs --------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(
    TRITONBACKEND_Request *request, uint32_t *count);
TRITONSERVER_Error *TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request *request, const uint32_t index,
    const char **input_name);
/* NOT_FOUND if the request has no input of that name. */
TRITONSERVER_Error *TRITONBACKEND_RequestInput(TRITONBACKEND_Request *request,
                                               const char *name,
                                               TRITONBACKEND_Input **input);
/* The outputs the request asks for (all of the model's when it names
 * none). */
TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(
    TRITONBACKEND_Request *request, uint32_t *count);
TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request *request, const uint32_t index,
    const char **output_name);
TRITONSERVER_Error *TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request *request, uint32_t release_flags);
/* Whether the client cancelled the request (backend API 1.16 and later). */
TRITONSERVER_Error *TRITONBACKEND_RequestIsCancelled(
    TRITONBACKEND_Request *request, bool *is_cancelled);

/* Any pointer argument may be NULL when the value is not wanted. */
TRITONSERVER_Error *TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input *input, const char **name,
    TRITONSERVER_DataType *datatype, const int64_t **shape,
    uint32_t *dims_count, uint64_t *byte_size, uint32_t *buffer_count);
/* Buffer `index` of the input's data; *memory_type and *memory_type_id
 * give the preferred memory on entry and the actual one on return. */
TRITONSERVER_Error *TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input *input, const uint32_t index, const void **buffer,
    uint64_t *buffer_byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id);

/* ---- responses, outputs ------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_ResponseNew(TRITONBACKEND_Response **response,
                                              TRITONBACKEND_Request *request);
TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(
    TRITONBACKEND_Response *response);
TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response *response, TRITONBACKEND_Output **output,
    const char *name, const TRITONSERVER_DataType datatype,
    const int64_t *shape, const uint32_t dims_count);
/* As TRITONBACKEND_InputBuffer: preferred memory in, actual memory out. */
TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output *output, void **buffer,
    const uint64_t buffer_byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id);
TRITONSERVER_Error *TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response *response, const char *name, const char *value);
/* Sends and takes the response; `error` (may be NULL) stays the caller's. */
TRITONSERVER_Error *TRITONBACKEND_ResponseSend(TRITONBACKEND_Response *response,
                                               const uint32_t send_flags,
                                               TRITONSERVER_Error *error);

/* ---- what the backend implements ---------------------------------------- */

MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend);
MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend);
/* Optional: asked once, after TRITONBACKEND_Initialize. */
MICA_TRITON_EXPORT TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *attributes);
MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model);
MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model);
MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance);
MICA_TRITON_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance);
/* Owns the requests when it returns NULL (it answers and releases each);
 * on an error return, the server answers and releases them all. */
MICA_TRITON_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count);

#endif /* MICA_TRITON_API_H */
