/*
 * tools/triton/backend.h - what the parts of the mica Triton backend
 * (libtriton_mica.so) share: the states the server keeps for the backend,
 * a model and a model instance, and the helpers between them.
 *
 *   backend.c      TRITONBACKEND_Initialize/Finalize; the backend's options
 *   util.c         errors, logs, mica contexts, the clock
 *   model.c        TRITONBACKEND_ModelInitialize/Finalize; the parameters
 *   model_file.c   which file of the version folder, and its engine bytes
 *   config_io.c    the configuration's inputs, outputs and batch size
 *                  (auto-complete)
 *   dtype.c        element types: mica, Triton's configuration, Triton's API
 *   instance.c     TRITONBACKEND_ModelInstanceInitialize/Finalize
 *   request.c      one request's inputs checked and located
 *   execute.c      TRITONBACKEND_ModelInstanceExecute: batch, run, answer
 *   device_cpu.c, device_cuda.c   memory copies and the CUDA device
 *
 * Only mica's public API (mica/mica.h) is used.  Internal names are
 * mica__tb_*.
 */
#ifndef MICA_TRITON_BACKEND_H
#define MICA_TRITON_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"
#include "json.h"
#include "triton_api.h"

/* The backend: options from --backend-config=mica,KEY=VALUE. */
typedef struct mica__tb_backend {
    char *module_dir; /* module-dir: a folder of modules loaded after the
                         default ones, or NULL */
    int64_t max_batch_cap;     /* max-batch-size: the most that
                                  auto-complete sets max_batch_size to;
                                  0 (default): the largest batch the
                                  profiles admit */
    int64_t threads;           /* threads: CPU threads per layer of every
                                  instance, 0: mica's default */
} mica__tb_backend_t;

/* What a model's version folder holds. */
typedef enum mica__tb_format {
    MICA__TB_ENGINE = 0,
    MICA__TB_MANIFEST = 1,
    MICA__TB_ONNX = 2
} mica__tb_format_t;

/* One network input or output of the model. */
typedef struct mica__tb_io {
    char *name;
    mica_dtype_t dtype;
    mica_dims_t dims; /* the engine's: -1 where known only at run time */
} mica__tb_io_t;

/* Engine bytes for one device (a serialized engine, 64-byte aligned). */
typedef struct mica__tb_blob {
    void *data;
    size_t size;
} mica__tb_blob_t;

/* The state of one loaded model (one version). */
typedef struct mica__tb_model {
    TRITONBACKEND_Model *triton;
    const mica__tb_backend_t *backend;
    char *name;
    char *path;                /* the model file */
    mica__tb_format_t format;
    uint32_t device;           /* parameter device: 0 (auto), CPU, CUDA */
    uint32_t precisions;       /* parameter precision, as build bits */
    int32_t has_precisions;
    char *prefer;              /* parameter prefer, or NULL */
    char *shapes[4];           /* parameters shapes, min_, opt_, max_shapes
                                  (ONNX), or NULL */
    int32_t has_shapes;
    int32_t threads;           /* parameter threads, 0: the backend's */
    int32_t max_batch;         /* max_batch_size; 0: no batching */
    int32_t nb_inputs;
    int32_t nb_outputs;
    mica__tb_io_t *inputs;
    mica__tb_io_t *outputs;
    pthread_mutex_t lock;      /* guards ctx and blobs */
    mica_context_t *ctx;       /* builds the engines */
    mica__tb_blob_t blobs[2];  /* [0]: CPU, [1]: CUDA; built on demand */
} mica__tb_model_t;

/* The state of one model instance: one execution context. */
typedef struct mica__tb_instance {
    mica__tb_model_t *model;
    TRITONBACKEND_ModelInstance *triton;
    char *name;
    uint32_t device;           /* MICA_DEVICE_CPU or MICA_DEVICE_CUDA */
    int32_t device_id;         /* the CUDA device, -1 on the CPU */
    mica_context_t *ctx;
    mica_engine_t *engine;
    mica_exec_t *exec;
    /* Host staging per input: batched requests are gathered here. */
    void **stage;
    size_t *stage_cap;
    /* Which inputs, then outputs, are bound to a request's memory now. */
    uint8_t *bound;
} mica__tb_instance_t;

/* ---- util.c -------------------------------------------------------------- */

/* A new error with a formatted one-line message. */
TRITONSERVER_Error *mica__tb_error(TRITONSERVER_Error_Code code,
                                   const char *fmt, ...) MICA_PRINTF(2, 3);
/* An error for a failed mica call: "<what>: <ctx's message>", the code
 * from the status. */
TRITONSERVER_Error *mica__tb_mica_error(mica_context_t *ctx,
                                        mica_status_t status,
                                        const char *fmt, ...)
    MICA_PRINTF(3, 4);
/* Log a formatted line at `level` through the server's log. */
void mica__tb_log(TRITONSERVER_LogLevel level, const char *fmt, ...)
    MICA_PRINTF(2, 3);
/* Log and delete `err` (NULL: nothing) as a warning about `what`. */
void mica__tb_log_error(TRITONSERVER_Error *err, const char *what);
/* A context with the default modules, then the backend's module-dir;
 * mica's messages go to the server's log. */
TRITONSERVER_Error *mica__tb_context(const mica__tb_backend_t *backend,
                                     mica_context_t **out);
/* The server's monotonic clock, in ns. */
uint64_t mica__tb_now_ns(void);
/* strdup that reports running out of memory as an error. */
TRITONSERVER_Error *mica__tb_strdup(const char *s, char **out);

/* ---- model_file.c -------------------------------------------------------- */

/*
 * Choose the model file in `version_dir`: `file` if given (a name inside
 * the folder), else the first of model.mica, model.engine, model.yaml,
 * model.yml, model.onnx that exists.  Sets model->path and model->format;
 * refuses parameters that do not apply to that kind of file.
 */
TRITONSERVER_Error *mica__tb_model_file(mica__tb_model_t *model,
                                        const char *version_dir,
                                        const char *file);
/*
 * The engine bytes of the model for `device` (MICA_DEVICE_CPU or
 * MICA_DEVICE_CUDA; 0 at model load: the device the file or the parameter
 * names, else mica's choice), read or built once and kept in
 * model->blobs.  *used is the device they are for.  Takes model->lock.
 */
TRITONSERVER_Error *mica__tb_model_blob(mica__tb_model_t *model,
                                        uint32_t device,
                                        const mica__tb_blob_t **out,
                                        uint32_t *used);

/* ---- config_io.c --------------------------------------------------------- */

/* Configuration features the backend does not implement (an input's
 * allow_ragged_batch, a decoupled transaction policy, sequence batching's
 * implicit state): an UNSUPPORTED error naming the key, or NULL. */
TRITONSERVER_Error *mica__tb_config_refuse(const mica__tb_model_t *m,
                                           const mica__json_t *config);

/*
 * Learn the model's inputs and outputs from `engine` (model->inputs,
 * outputs, max_batch) and check the configuration `config` against them,
 * completing it when `complete` is non-zero (*changed then tells whether
 * it was changed).
 */
TRITONSERVER_Error *mica__tb_config_io(mica__tb_model_t *model,
                                       const mica_engine_t *engine,
                                       mica__json_t *config,
                                       int complete, int *changed);
void mica__tb_io_free(mica__tb_io_t *io, int32_t n);

/* ---- dtype.c ------------------------------------------------------------- */

/* "TYPE_FP32" for MICA_FLOAT32, NULL for a type Triton lacks. */
const char *mica__tb_dtype_config(mica_dtype_t dtype);
/* The mica type of a configuration name; -1 if none. */
int mica__tb_dtype_from_config(const char *name, mica_dtype_t *out);
/* TRITONSERVER_TYPE_FP32 for MICA_FLOAT32. */
TRITONSERVER_DataType mica__tb_dtype_triton(mica_dtype_t dtype);
/* Triton's name of a TRITONSERVER_DataType ("FP32"), for messages. */
const char *mica__tb_dtype_triton_name(TRITONSERVER_DataType dtype);

/* ---- request.c ----------------------------------------------------------- */

/* One input of one request: its dims and where its data lies. */
typedef struct mica__tb_input {
    TRITONBACKEND_Input *input;
    mica_dims_t dims;          /* as the request gives them */
    uint64_t bytes;
    uint32_t nb_buffers;
} mica__tb_input_t;

/*
 * Check request r against the model: every model input present once with
 * its element type, rank and fixed dimensions, no other input, every
 * requested output known.  Fills in[model->nb_inputs] and *batch (the
 * leading dimension when batching, else 1).  The error names the request
 * and what is wrong.
 */
TRITONSERVER_Error *mica__tb_request_check(const mica__tb_model_t *model,
                                           TRITONBACKEND_Request *r,
                                           mica__tb_input_t *in,
                                           int64_t *batch);
/*
 * Copy an input's buffers, in order, to `dst` in memory of type
 * `dst_type`; dst holds in->bytes.
 */
TRITONSERVER_Error *mica__tb_input_copy(const mica__tb_input_t *in, void *dst,
                                        TRITONSERVER_MemoryType dst_type);

/* ---- device_cpu.c / device_cuda.c ---------------------------------------- */

/* Whether this backend was built with CUDA. */
int mica__tb_have_cuda(void);
/* Make `device_id` the calling thread's CUDA device (nothing on the CPU). */
TRITONSERVER_Error *mica__tb_set_device(int32_t device_id);
/* Copy n bytes between memories of the given Triton types. */
TRITONSERVER_Error *mica__tb_copy(void *dst, TRITONSERVER_MemoryType dst_type,
                                  const void *src,
                                  TRITONSERVER_MemoryType src_type, size_t n);

#endif /* MICA_TRITON_BACKEND_H */
