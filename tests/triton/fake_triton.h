/*
 * tests/triton/fake_triton.h - a test double of Triton's side of the
 * backend API, for running libtriton_mica's code in a test program: the
 * objects the server hands a backend, as plain structs the test fills in
 * and reads back, and the TRITONSERVER_/TRITONBACKEND_ functions over
 * them (tests/triton/fake_triton.c), with the ownership rules of Triton's
 * documentation (the backend config is the server's; a model config, an
 * error and a response are the caller's until handed over).
 */
#ifndef MICA_FAKE_TRITON_H
#define MICA_FAKE_TRITON_H

#include "triton_api.h"

#define FAKE_MAX 8

struct TRITONSERVER_Message {
    char *json;
    size_t len;
};

struct TRITONBACKEND_Backend {
    const char *config; /* the cmdline JSON */
    TRITONSERVER_Message msg;
    void *state;
    TRITONSERVER_InstanceGroupKind preferred; /* set by GetBackendAttribute */
    int parallel;
};

struct TRITONBACKEND_Model {
    TRITONBACKEND_Backend *backend;
    const char *name;
    uint64_t version;
    const char *repository;   /* the model's folder */
    const char *config;       /* its configuration, JSON */
    bool auto_complete;
    char *set_config;         /* what ModelSetConfig was given, or NULL */
    void *state;
};

typedef struct fake_stats {
    int requests, failed;     /* ReportStatistics calls, success false */
    int batches;              /* ReportBatchStatistics calls */
    uint64_t batch_rows;      /* their batch sizes summed */
    uint64_t largest;
} fake_stats_t;

struct TRITONBACKEND_ModelInstance {
    TRITONBACKEND_Model *model;
    const char *name;
    TRITONSERVER_InstanceGroupKind kind;
    int32_t device_id;
    void *state;
    fake_stats_t stats;
};

struct TRITONBACKEND_Input {
    const char *name;
    TRITONSERVER_DataType dtype;
    int64_t shape[FAKE_MAX];
    uint32_t rank;
    uint32_t nb_buffers;
    const void *buffer[FAKE_MAX];
    uint64_t size[FAKE_MAX];
    TRITONSERVER_MemoryType type; /* of every buffer */
    int64_t type_id;
};

struct TRITONBACKEND_Output {
    const char *name;
    TRITONSERVER_DataType dtype;
    int64_t shape[FAKE_MAX];
    uint32_t rank;
    void *buffer;
    uint64_t bytes;
    TRITONSERVER_MemoryType type;
    int64_t type_id;
};

struct TRITONBACKEND_Response {
    TRITONBACKEND_Request *request;
    uint32_t nb_outputs;
    TRITONBACKEND_Output outputs[FAKE_MAX];
    char param[128];          /* mica_instance */
    char *error;              /* the message sent, NULL: success */
    int code;                 /* its code */
    int sent;
};

struct TRITONBACKEND_Request {
    uint32_t nb_inputs;
    TRITONBACKEND_Input inputs[FAKE_MAX];
    uint32_t nb_outputs;      /* the outputs asked for */
    const char *outputs[FAKE_MAX];
    TRITONBACKEND_Response *response; /* the one sent */
    int released;
    int responses;            /* how many were sent */
    int cancelled;            /* TRITONBACKEND_RequestIsCancelled says so */
};

/*
 * Where TRITONBACKEND_OutputBuffer puts outputs: -1 (default) where the
 * backend prefers; otherwise that memory type (GPU memory needs CUDA).
 */
extern int fake_output_memory;

/* Free a sent response (its output buffers included). */
void fake_response_free(TRITONBACKEND_Response *r);

#endif /* MICA_FAKE_TRITON_H */
