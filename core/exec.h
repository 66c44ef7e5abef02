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
    mica_tensor_desc_t *told;   /* same layout: the dims each clone's
                                   shape_change was last told */
    int32_t *told_ok;           /* per layer: told holds what it was told */
    int32_t *skip;              /* per layer: not run on the device now */
    int32_t threads;            /* mica_exec_set_threads, 0: default */
    int64_t *trips;             /* per construct: the loop's bound, -1 none */
    int64_t *iter;              /* per construct: the loop's trip now */
    int32_t *branch;            /* per construct: the branch taken */
    struct mica__timing *timing; /* NULL unless timed (exec_timing.c) */
    struct mica__graphs *graphs; /* NULL until CUDA graphs are turned on
                                    (exec_graph.c) */
    uint64_t shapes_gen;        /* counts the times phase 1 ran: what a
                                   graph's key holds changes only then */
    int32_t capturing;          /* the enqueue now is a graph's capture */
};

/* "ORIGIN: layer 'NAME' (TYPE): MESSAGE" for a failure of step s
 * (flow.c). */
mica_status_t mica__exec_layer_error(mica_exec_t *x, int32_t s,
                                     const mica_error_t *err,
                                     const char *what);

/* Tell every device clone of the layers [from, to) whose descriptors
 * changed since it was last told (or never told) through its
 * shape_change (exec_run.c). */
mica_status_t mica__exec_tell_shapes(mica_exec_t *x, int32_t from,
                                     int32_t to);

/* Descriptors, pointers and skips of the device layers for the dims now
 * (exec_run.c). */
void mica__exec_refresh(mica_exec_t *x);
/* Every tensor's dims now fit profile k's plan (exec_run.c). */
mica_status_t mica__exec_check_plan(mica_exec_t *x, int32_t k);

/* Data-dependent sizes (core/dds.c): at the start of a run, each back at
 * its bound, as phase 1 left it; after layer s has run, its sizes read
 * back and the shapes after it evaluated again. */
mica_status_t mica__dds_reset(mica_exec_t *x);
mica_status_t mica__dds_after(mica_exec_t *x, int32_t s);
/* The first layer after step `after` that makes a data-dependent size,
 * nb_layers if none. */
int32_t mica__dds_next(const mica_engine_t *e, int32_t after);

/* Run the engine's program on the context's stream (phase 2). */
mica_status_t mica__flow_run(mica_exec_t *x);

/* After phase 1: a Recurrence's next value and an IfConditionalOutput's
 * two values have the same shape as their counterpart. */
mica_status_t mica__flow_check_dims(mica_exec_t *x);

/* ---- timing (core/exec_timing.c): hooks called only when x->timing ---- */

typedef struct mica__timing mica__timing_t;
enum { MICA__STAGE_UPLOAD, MICA__STAGE_ENQUEUE, MICA__STAGE_DOWNLOAD };
/* A stage (MICA__STAGE_*) starts (end 0) or ends (end 1). */
mica_status_t mica__timing_stage(mica_exec_t *x, int32_t stage, int32_t end);
/* Layer s was enqueued (or took a boundary step). */
mica_status_t mica__timing_layer(mica_exec_t *x, int32_t s);
/* Room for `bytes` in output i's host copy (pinned while timed). */
mica_status_t mica__timing_output_room(mica_exec_t *x, int32_t i,
                                       size_t bytes);
/* Free the timing state and the pinned host copies of outputs. */
void mica__timing_free(mica_exec_t *x);

/* ---- CUDA graphs (core/exec_graph.c) ---- */

/* The program of one enqueue (phase 2): replayed as a CUDA graph when
 * graphs are on and the inputs' key has one, captured on the second
 * enqueue of a key, else run layer by layer (mica__flow_run). */
mica_status_t mica__graph_enqueue(mica_exec_t *x);
/* Forget every graph (a layer was told new shapes and may have moved
 * memory of its own that the graphs point to). */
void mica__graph_forget(mica_exec_t *x);
/* Free the graphs' state. */
void mica__graph_free(mica_exec_t *x);
/* During a capture, after layer s was enqueued: fails, naming s, when
 * the capture was invalidated (flow.c). */
mica_status_t mica__graph_check(mica_exec_t *x, int32_t s);
/* Whether timing records a marker after every layer (exec_timing.c). */
int mica__timing_layers(const mica_exec_t *x);

/* The arena at `offset`; NULL when the arena is empty (a plan of zero
 * bytes allocates none, and NULL + 0 is not a pointer). */
static inline void *mica__arena_at(const mica_exec_t *x, int64_t offset)
{
    return x->arena ? (char *)x->arena + offset : NULL;
}

#endif /* MICA_EXEC_H */
