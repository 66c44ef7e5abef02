/*
 * core/base/device.h - the devices: what one device does (mica__device_t,
 * implemented by core/<device>/device.c) and the one table that says
 * which devices exist (core/base/device.c).
 *
 * Every place that names, parses, checks or opens a device reads the
 * table: the manifest's `device`, the command's --device, the registry's
 * check of a creator's device bits, the engine loader's check of the
 * saved device, and the builder's choice.  Adding a device is one folder
 * core/<device>/ (its mica__device_t, built as a shared object of its
 * own or linked into libmica) and one entry in the table (a linked one
 * also names its entry function in core/device.c).
 *
 * A device built as a shared object (CUDA) is opened on first use only,
 * so that a program that never uses it never maps its libraries (the CUDA
 * runtime, cuBLAS...).  It exports one symbol, mica__device_entry
 * (mica__device_entry_fn), and uses libmica only through the host table
 * it is given.
 */
#ifndef MICA_DEVICE_H
#define MICA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"

/* What a device does.  Every call is made with a context for errors. */
typedef struct mica__device {
    uint32_t struct_size;    /* sizeof(mica__device_t) it was built with */
    const char *build;       /* PACKAGE_VERSION it was built with */
    /* Whether the device can run work in this process (probes once). */
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
    /* Timing of runs (core/exec_timing.c, mica bench).  A marker is
     * recorded on a stream and completes when the work queued before it
     * has; marker_elapsed waits for `to` and gives the milliseconds
     * between two recorded markers (CUDA events; the host clock on the
     * CPU, whose work is done when enqueue returns). */
    mica_status_t (*marker_create)(mica_context_t *ctx, void **marker);
    void (*marker_destroy)(void *marker);
    mica_status_t (*marker_record)(mica_context_t *ctx, void *marker,
                                   void *stream);
    mica_status_t (*marker_elapsed)(mica_context_t *ctx, void *from,
                                    void *to, double *ms);
    /* Host memory the device copies to and from fastest, without a
     * staging copy (pinned on CUDA, plain on the CPU). */
    mica_status_t (*host_alloc)(mica_context_t *ctx, size_t bytes,
                                void **out);
    void (*host_free)(void *p);
    /* CUDA graphs of an execution context's enqueue (core/exec_graph.c);
     * NULL on a device without them (the CPU).  capture_begin starts
     * capturing the work queued on `stream` by this thread (other
     * threads are not affected); capture_end always ends it and, when
     * everything queued was captured, gives an instantiated graph in
     * *graph (else fails with the reason and leaves no error pending on
     * the device).  capture_ok: 1 while the capture on `stream` is still
     * valid, 0 once something queued (a host wait, an allocation)
     * invalidated it.  graph_launch queues a graph on a stream;
     * graph_destroy frees one (one still running is freed when done). */
    mica_status_t (*capture_begin)(mica_context_t *ctx, void *stream);
    mica_status_t (*capture_end)(mica_context_t *ctx, void *stream,
                                 void **graph);
    int32_t (*capture_ok)(void *stream);
    mica_status_t (*graph_launch)(mica_context_t *ctx, void *graph,
                                  void *stream);
    void (*graph_destroy)(void *graph);
} mica__device_t;

/* What libmica lends a device built as a shared object. */
typedef struct mica__device_host {
    /* mica__fail: record one line as ctx's error, return `st`. */
    mica_status_t (*fail)(mica_context_t *ctx, mica_status_t st,
                          const char *fmt, ...) MICA_PRINTF(3, 4);
} mica__device_host_t;

/* The entry point of a device's shared object. */
typedef const mica__device_t *(*mica__device_entry_fn)(
    const mica__device_host_t *host);
#define MICA__DEVICE_ENTRY "mica__device_entry"

/* One device as the table describes it. */
typedef struct mica__device_desc {
    const char *name;        /* "cpu": manifests, --device, messages */
    const char *title;       /* "CPU": in sentences */
    const char *unit;        /* "GPU": what a process may lack of it */
    uint32_t bit;            /* its mica_device_kind_t */
    int32_t rank;            /* `device: auto` tries higher ranks first */
    int32_t streams;         /* takes a caller's stream (exec_set_stream) */
    /* How it is opened (core/device.c): linked into libmica (its entry
     * listed there), or a shared object of $MICA_DEVICE_DIR (default
     * $(pkglibdir)), or neither: not in this build (`missing` then says
     * how to get it). */
    int32_t linked;
    const char *object;
    const char *missing;
    /* The implementation (by name; NULL: none) whose layers prefer
     * channels last for float32 as for float16 (core/formats.c): the
     * CPU's "onednn", whose convolutions and pooling run NHWC as it is
     * and their blocked layouts only through reorders. */
    const char *cl_float32;
    /* Its memory is the host's: a tensor may be bound to bytes of the
     * host as they are (core/constants.c: a constant's values). */
    int32_t host_memory;
} mica__device_desc_t;

/* The table, `*n` entries, in bit order. */
const mica__device_desc_t *mica__devices(int32_t *n);

/* The entry of one device bit, or NULL. */
const mica__device_desc_t *mica__device_desc(uint32_t bit);

/* The entry named `name`, or NULL. */
const mica__device_desc_t *mica__device_by_name(const char *name);

/* Every bit of the table. */
uint32_t mica__device_bits(void);

/*
 * "cpu,cuda": the names of `bits` joined by `sep` into buf (bits the
 * table does not know are left out); "" for none.  Returns buf.
 */
const char *mica__device_names(uint32_t bits, const char *sep, char *buf,
                               size_t len);

/*
 * The names of the table with "auto" first, for messages: "auto, cpu,
 * cuda" (last_sep ", ") or "auto, cpu or cuda" (last_sep " or ").
 */
const char *mica__device_choices(const char *last_sep, char *buf,
                                 size_t len);

#endif /* MICA_DEVICE_H */
