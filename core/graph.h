/*
 * core/graph.h - the internal form of networks and engines.
 *
 * A network is what the user described (names, types, fields).  An
 * engine is a network resolved for one device: every tensor has an index,
 * a type, a shape (symbolic and concrete) and a place in the arena; every
 * layer has a creator and an instance.  An execution context clones the
 * instances and owns the arena.
 */
#ifndef MICA_GRAPH_H
#define MICA_GRAPH_H

#include "mica_int.h"
#include "expr.h"

/* ---- networks ------------------------------------------------------- */

typedef struct mica__net_input {
    char *name;
    char *origin;
    mica_dtype_t dtype;
    mica_dims_t dims;
} mica__net_input_t;

typedef struct mica__net_layer {
    char *name, *type, *ns, *implementation, *origin, *loop, *conditional;
    int32_t version;          /* as asked: 0 = highest */
    int32_t nb_inputs, nb_outputs;
    char **inputs;            /* NULL entries: omitted optional inputs */
    char **input_origins;     /* entries may be NULL */
    char **outputs;
    mica__fields_t fields;    /* checked against the creator found at add */
    const mica_layer_creator_t *checked_with;
} mica__net_layer_t;

struct mica_network {
    mica_context_t *ctx;
    mica__net_input_t *inputs;
    int32_t nb_inputs;
    mica__net_layer_t *layers;
    int32_t nb_layers;
    char **outputs;
    char **output_origins;
    int32_t nb_outputs;
};

/* "ORIGIN: " or "" for messages. */
const char *mica__at(const char *origin, char *buf, size_t len);

/* ---- engines -------------------------------------------------------- */

typedef struct mica__tensor {
    char *name;
    mica_dtype_t dtype;
    mica_shape_expr_t shape;   /* expressions, owned by the engine's builder */
    mica_dims_t dims;          /* concrete */
    char *shape_text;          /* "[N, 6]" */
    int32_t producer;          /* layer (execution order) or -1 for inputs */
    int32_t is_input, is_output;
    int32_t last_use;          /* last step that reads it */
    int64_t bytes;
    int64_t offset;            /* in the arena */
} mica__tensor_t;

typedef struct mica__layer {
    char *name;
    char *origin;
    mica_creator_info_t info;  /* the chosen creator */
    mica__fields_t fields;
    mica_layer_t *instance;
    int32_t nb_inputs, nb_outputs;
    int32_t *inputs;           /* tensor indices, -1 for omitted */
    int32_t *outputs;
    int64_t workspace;
    int64_t workspace_offset;
} mica__layer_t;

typedef struct mica__device mica__device_t;

struct mica_engine {
    mica_context_t *ctx;
    uint32_t device;
    const mica__device_t *dev;
    mica_expr_builder_t *eb;
    mica__tensor_t *tensors;
    int32_t nb_tensors;
    mica__layer_t *layers;     /* execution order */
    int32_t nb_layers;
    int32_t *input_index;      /* network inputs, declaration order */
    int32_t nb_inputs;
    int32_t *output_index;     /* network outputs, marking order */
    int32_t nb_outputs;
    int64_t arena_bytes;
};

/*
 * Fill the tensor descriptors (`io` holds inputs then outputs) of layer
 * `l` from the engine's concrete shapes.  Omitted inputs get nb_dims 0
 * and volume 0.
 */
void mica__layer_descs(const mica_engine_t *e, const mica__layer_t *l,
                       mica_tensor_desc_t *io);

/* Plan the arena: offsets for every tensor and workspace by liveness. */
mica_status_t mica__plan_memory(mica_engine_t *e);

/* ---- devices (core/cpu/device.c, core/cuda/device.c) ---------------- */

struct mica__device {
    uint32_t kind;
    const char *name;
    int32_t (*usable)(void);
    mica_status_t (*alloc)(mica_context_t *ctx, size_t bytes, void **out);
    void (*free)(void *p);
    mica_status_t (*stream_create)(mica_context_t *ctx, void **stream);
    void (*stream_destroy)(void *stream);
    /* Copies queued on the stream; host memory is the caller's. */
    mica_status_t (*upload)(mica_context_t *ctx, void *dst, const void *src,
                            size_t bytes, void *stream);
    mica_status_t (*download)(mica_context_t *ctx, void *dst, const void *src,
                              size_t bytes, void *stream);
    mica_status_t (*sync)(mica_context_t *ctx, void *stream);
};

/* The device of `kind`, NULL if this build has none. */
const mica__device_t *mica__device_get(uint32_t kind);
extern const mica__device_t mica__device_cpu;
#ifdef MICA_HAVE_CUDA
extern const mica__device_t mica__device_cuda;
#endif

#endif /* MICA_GRAPH_H */
