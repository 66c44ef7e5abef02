/*
 * core/exec.h - an execution context's state, shared by exec.c (contexts,
 * inputs), exec_run.c (profiles, phase 1, runs) and flow.c (running the
 * engine's program).
 */
#ifndef MICA_EXEC_H
#define MICA_EXEC_H

#include "graph.h"

struct mica_exec {
    mica_engine_t *e;
    mica_context_t *ctx;
    const mica__device_t *dev;
    void *stream;               /* the one enqueue uses */
    void *own_stream;           /* the context's */
    void **bound;               /* per tensor: caller memory, or NULL */
    unsigned char *arena;
    int64_t arena_cap;
    mica_layer_t **instances;   /* device clones, NULL for host-only layers */
    mica_layer_t **host;        /* phase-1 instances, NULL where none */
    int32_t *host_owned;        /* host[s] is a clone of its own */
    int initialized;            /* initialize() ran on the clones */
    int32_t fixed_profile;      /* -1: automatic */
    int32_t profile;            /* the one configured, -1 before any */
    int dirty;                  /* input shapes or shape values changed */
    mica__shapes_t shapes;
    mica_dims_t *in_dims;       /* per network input */
    const void **in_data;
    int32_t *in_set;
    void **out_data;            /* per network output: host copies */
    size_t *out_cap;
    int32_t *out_ready;
    mica_tensor_desc_t *descs;  /* per layer: inputs then outputs */
    void **ptrs;                /* same layout */
    int32_t *first;             /* per layer: index into descs and ptrs */
    int32_t *skip;              /* per layer: not run on the device now */
    int64_t *trips;             /* per construct: the loop's bound, -1 none */
    int64_t *iter;              /* per construct: the loop's trip now */
    int32_t *branch;            /* per construct: the branch taken */
};

/* "ORIGIN: layer 'NAME' (TYPE): MESSAGE" for a failure of step s
 * (flow.c). */
mica_status_t mica__exec_layer_error(mica_exec_t *x, int32_t s,
                                     const mica_error_t *err,
                                     const char *what);

/* Run the engine's program on the context's stream (phase 2). */
mica_status_t mica__flow_run(mica_exec_t *x);

/* After phase 1: a Recurrence's next value and an IfConditionalOutput's
 * two values have the same shape as their counterpart. */
mica_status_t mica__flow_check_dims(mica_exec_t *x);

/* The arena at `offset`; NULL when the arena is empty (a plan of zero
 * bytes allocates none, and NULL + 0 is not a pointer). */
static inline void *mica__arena_at(const mica_exec_t *x, int64_t offset)
{
    return x->arena ? (char *)x->arena + offset : NULL;
}

#endif /* MICA_EXEC_H */
