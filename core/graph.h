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
#include "device.h"
#include "expr.h"

/* Whether layer ops `ops` has the optional member m: set, and inside the
 * struct the module was built with. */
#define MICA__HAS_OP(ops, m)                                              \
    ((ops)->struct_size >= offsetof(mica_layer_ops_t, m) +                \
                               sizeof((ops)->m) &&                        \
     (ops)->m)

/* The same for a member appended to a creator (mica_layer_creator_t). */
#define MICA__HAS_CREATOR_OP(c, m)                                        \
    ((c)->struct_size >= offsetof(mica_layer_creator_t, m) +              \
                             sizeof((c)->m) &&                            \
     (c)->m)

/* ---- networks ------------------------------------------------------- */

typedef struct mica__net_input {
    char *name;
    char *origin;
    mica_dtype_t dtype;
    mica_dims_t dims;
    int32_t is_shape;         /* a shape-tensor input */
} mica__net_input_t;

/* One input's range in one profile. */
typedef struct mica__range {
    int32_t set;
    char *origin;
    mica_dims_t min, opt, max;   /* runtime dims */
    int32_t nb_values;           /* shape-tensor inputs */
    int32_t *vmin, *vopt, *vmax;
} mica__range_t;

void mica__range_free(mica__range_t *r);

typedef struct mica__profile {
    mica__range_t *ranges;       /* per network input */
    int32_t nb_ranges;
} mica__profile_t;

/* A layer's params checked against one creator's schema. */
typedef struct mica__fields_for {
    const mica_layer_creator_t *creator;
    mica__fields_t fields;
} mica__fields_for_t;

typedef struct mica__net_layer {
    char *name, *type, *ns, *implementation, *origin, *loop, *conditional;
    int32_t version;          /* as asked: 0 = highest */
    int32_t precision;        /* 1 + mica_dtype_t asked for, 0: any */
    char *note;               /* added to why its implementation was chosen */
    char *fused;              /* made by a fusion rule: "RULE: NAME (TYPE),
                                 ..." (core/fusion.c), else NULL */
    int32_t nb_inputs, nb_outputs;
    char **inputs;            /* NULL entries: omitted optional inputs */
    char **input_origins;     /* entries may be NULL */
    char **outputs;
    mica__fields_t fields;    /* checked against the creator found at add */
    const mica_layer_creator_t *checked_with;
    /* The given params checked against the other schemas the builder
     * met (another implementation's), once each: mica__net_layer_params. */
    struct mica__fields_for *others;
    int32_t nb_others;
    /* A layer read from an engine file: made by deserialize() from the
     * state its serialize() wrote (and its CPU twin's, if it had one). */
    int32_t from_state;
    uint32_t *formats;         /* per input then output, the format it
                                  runs with (core/formats.c), NULL: all
                                  linear */
    int32_t state_pinned;      /* the saved implementation was a pin */
    char *saved_why;           /* why it was chosen at build time */
    void *state;               /* borrowed from the loader's bytes */
    size_t state_size;
    uint32_t state_flags;      /* mica_state_flags_t for deserialize_ex */
    char *host_impl;
    void *host_state;
    size_t host_state_size;
} mica__net_layer_t;

/* ---- devices opened (core/device.c), a build's (core/device_pick.c) -- */

/*
 * The device of `d`, opened on first use (a shared object is loaded
 * then, once per process).  Fails on ctx (which may be NULL) when the
 * build lacks it or its object cannot be loaded.  Thread-safe.
 */
mica_status_t mica__device_open(mica_context_t *ctx,
                                const mica__device_desc_t *d,
                                const mica__device_t **out);

/* The entries of the devices linked into libmica (core/<device>/). */
const mica__device_t *mica__device_cpu_entry(const mica__device_host_t *h);

/*
 * The device a build runs on: `asked` (a bit, or 0 for auto) checked and
 * opened.  Auto takes the usable device of highest rank, probing a
 * device (opening it) only when a loaded module offers implementations
 * for it, and says at info level what it chose and why.  *dev is the
 * opened device.
 */
mica_status_t mica__device_pick(mica_context_t *ctx, uint32_t asked,
                                uint32_t *bit, const mica__device_t **dev);

/* Whether s names a tensor or a layer: given and not empty. */
static inline int mica__valid_name(const char *s)
{
    return s && *s;
}

/*
 * mica_network_add_layer for a layer whose weights outlive the network
 * (a rewrite's, borrowed from the network it rewrites): not copied.
 */
mica_status_t mica__network_add_borrowed(mica_network_t *net,
                                         const mica_layer_spec_t *spec);

/*
 * Add a layer whose params the caller checked (mica__fields_validate)
 * against `creator`: the network takes `fields` over (also on failure).
 * Used by the manifest loader, which checks them with their positions.
 */
mica_status_t mica__network_add_checked(mica_network_t *net,
                                        const mica_layer_spec_t *spec,
                                        const mica_layer_creator_t *creator,
                                        mica__fields_t *fields);

/*
 * The params of network layer nl checked for creator c: the network's
 * own when c's schema is the one they were checked against, else the
 * params given checked once for c's schema and kept with the layer.
 * Fails on net's context with the layer's origin and name.
 */
mica_status_t mica__net_layer_params(mica_network_t *net,
                                     mica__net_layer_t *nl,
                                     const mica_layer_creator_t *c,
                                     const mica_fields_t **out);

/*
 * The deploy-time implementation choice for `type`: the context's
 * (mica_context_set_prefer), else $MICA_PREFER's; NULL if none.
 */
const char *mica__deploy_choice(const mica_context_t *ctx, const char *type,
                                char *buf, size_t len);

/*
 * Rewriting a network for a second build (core/rewrite.c): into `out`,
 * the inputs, profiles, scales, formats and outputs of net; layer nl
 * with its tensors named `names` (inputs then outputs), its own fields
 * (their weights borrowed: nl's network must outlive out) or `fields`
 * where not NULL (copied), running with
 * `formats` (per input then output; NULL: all linear) and a note for
 * inspect (NULL: its own); an Identity `name` from `from` to `to`, a
 * cast to `dtype` if not NULL, with its two formats (NULL: linear).
 */
mica_status_t mica__rewrite_frame(const mica_network_t *net,
                                  mica_network_t *out);
mica_status_t mica__rewrite_layer(mica_network_t *out,
                                  const mica__net_layer_t *nl,
                                  const char *const *names,
                                  const mica_fields_t *fields,
                                  const uint32_t *formats, const char *note);
mica_status_t mica__rewrite_identity(mica_network_t *out, const char *name,
                                     const char *from, const char *to,
                                     const char *dtype,
                                     const uint32_t *formats,
                                     const char *note);

/*
 * The network rewritten so that layers run in channels-last formats
 * where their implementations take them and that avoids reorders or
 * suits float16 (core/formats.c), with Identity reorders where a tensor
 * made in one format is read in another and the network inputs and
 * outputs in the formats asked for; *out is NULL when every tensor stays
 * linear.
 */
mica_status_t mica__formats_rewrite(mica_network_t *net,
                                    const mica_engine_t *e,
                                    mica_network_t **out);

/*
 * An engine of net for the device `device` (bit; `dev` opened) that
 * says what the graph passes ask (core/passes/): every tensor's kind,
 * type, symbolic shape and values, each profile's corner shapes, the
 * layers' implementations and instances; nothing configured, no memory
 * planned, nothing logged but failures.  It is not for running: free it
 * with mica_engine_destroy.
 */
mica_status_t mica__build_facts(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                uint32_t device, const mica__device_t *dev,
                                mica_engine_t **out);

/* mica_engine_build of net as written (no graph pass), for the device
 * `device` (`dev` opened), saying nothing but failures: the engines the
 * passes build for themselves (core/passes/fold.c). */
mica_status_t mica__build_plain(mica_network_t *net,
                                const mica_build_config_t *cfg,
                                uint32_t device, const mica__device_t *dev,
                                mica_engine_t **out);

/*
 * The network rewritten so that layers run in float16 where `allowed`
 * (bits 1 << dtype) and their own precision let them and their
 * implementations in the float32 engine e take it, with casts inserted
 * (core/precision.c).  *out is NULL when no layer changes.
 */
mica_status_t mica__precision_rewrite(mica_network_t *net,
                                      const mica_engine_t *e,
                                      uint32_t allowed, mica_network_t **out);

/*
 * The bytes of engine file `path` read into memory mica owns: anonymous
 * pages (*unmap set) or a malloc'd buffer (core/format/file.c); never a
 * mapping of the file, which a `cp` over it would take away (SIGBUS).
 */
mica_status_t mica__engine_file_map(mica_context_t *ctx, const char *path,
                                    unsigned char **data, size_t *size,
                                    int *unmap);

/* Index the engine's tensor names (mica_engine_find_tensor in constant
 * time); done once an engine is built or loaded.  Without memory the
 * index stays empty and the lookup searches. */
void mica__engine_index(mica_engine_t *e);

/* Release an engine's bytes (mica_engine_t.bytes): munmap them if
 * `unmap`, else free them (core/format/file.c). */
void mica__bytes_release(void *p, size_t size, int32_t unmap);

/* The checksum engine files carry (core/format/checksum.c). */
uint64_t mica__checksum(const unsigned char *p, size_t n);

/*
 * Add a layer read from an engine file of format 1 or 2 (its names,
 * implementation and version pinned; core/format/legacy.c).  The state
 * bytes are borrowed, not copied: they must outlive the network (the
 * loader builds and destroys it while it holds the file's bytes).
 * `state_flags` (mica_state_flags_t) is what deserialize_ex is told
 * about them: MICA_STATE_PERSISTENT only when they also outlive the
 * engine built from the network.
 */
struct mica__saved_layer;
mica_status_t mica__network_add_saved(mica_network_t *net,
                                      const struct mica__saved_layer *s,
                                      uint32_t state_flags);

/*
 * An instance of creator c made from saved state (an engine file's),
 * whoever reads it: a state in the fields' byte form is first checked
 * against c's schema with the one validator (core/format/fields_form.c);
 * then deserialize_ex, told `flags`, where c has it, else deserialize.
 * NULL with err filled when the state is refused, c has neither, or the
 * module fails (core/instance.c).
 */
mica_layer_t *mica__instance_from_state(const mica_layer_creator_t *c,
                                        const char *name, const void *data,
                                        size_t size, uint32_t flags,
                                        mica_error_t *err);

struct mica_network {
    mica_context_t *ctx;
    mica__net_input_t *inputs;
    int32_t nb_inputs;
    mica__net_layer_t *layers;
    int32_t nb_layers, cap_layers;
    mica__index_t layer_names;  /* layer name -> index in layers */
    char **outputs;
    char **output_origins;
    int32_t nb_outputs;
    char **shape_outputs;
    char **shape_output_origins;
    int32_t nb_shape_outputs;
    mica__profile_t *profiles;
    int32_t nb_profiles;
    char **scale_names;       /* tensors given a quantization scale */
    char **scale_origins;
    float *scales;
    int32_t nb_scales;
    char **format_names;      /* network inputs and outputs given a format
                                 (mica_network_set_format) */
    char **format_origins;
    uint32_t *formats;
    int32_t nb_formats;
    int32_t formats_set;      /* rewritten by core/formats.c: every layer
                                 says the formats of its tensors */
    void **blobs;             /* weights a pass made, which its layers
                                 borrow (mica__network_keep) */
    int32_t nb_blobs;
};

/* Net takes over malloc'd `blob` (freed with it, also on failure). */
mica_status_t mica__network_keep(mica_network_t *net, void *blob);

/* The format asked for network input or output `name` (LINEAR if none),
 * and the arrays of net's formats freed (core/network_format.c). */
uint32_t mica__network_format(const mica_network_t *net, const char *name);
void mica__network_formats_free(mica_network_t *net);

/* ---- engines -------------------------------------------------------- */

typedef struct mica__tensor {
    char *name;
    mica_dtype_t dtype;
    mica_shape_expr_t shape;   /* expressions, owned by the engine's builder */
    const mica_expr_t **values; /* shape.values, owned (int shape tensors) */
    mica_dims_t dims;          /* constant dims, -1 where symbolic */
    char *shape_text;          /* "[N, 6]" */
    int32_t producer;          /* layer (execution order) or -1 for inputs */
    int32_t is_input, is_output, is_shape_output, is_shape_input;
    int32_t need_e, need_s;    /* execution tensor, shape tensor */
    int32_t need_dims;         /* a running layer reads its dims (Shape) */
    int32_t last_use;          /* last step that reads it on the device */
    int32_t first_symbol;      /* computed values: its first symbol, or -1 */
    float scale;               /* quantization scale, 1 if none */
    uint32_t format;           /* mica_format_t of its memory */
    int32_t live_from, live_to; /* steps it occupies the arena (plan.c),
                                   set by mica__control_lifetimes */
    int32_t alias;             /* in place: the input of its producer whose
                                  memory it takes over (mica__inplace), -1 */
    /* A constant's values, bound instead of computed (core/constants.c):
     * its bytes on the host (the producer's constant_output), NULL if
     * computed; where every reader finds them on the device (the host
     * bytes on a device of host memory, else the engine's copy), NULL
     * until mica__constants_ready. */
    const void *const_host;
    size_t const_bytes;
    void *const_at;
} mica__tensor_t;

/* What a symbol stands for. */
typedef enum mica__symbol_kind {
    MICA__SYM_INPUT_DIM = 0,   /* dimension `axis` of network input `input` */
    MICA__SYM_INPUT_VALUE = 1, /* value `axis` of shape-tensor input `input` */
    MICA__SYM_COMPUTED = 2,    /* value `axis` of shape tensor `tensor` */
    MICA__SYM_SIZE = 3         /* a data-dependent size: the value of the
                                  0-D tensor `tensor`, read back once its
                                  producer has run, at most `upper` */
} mica__symbol_kind_t;

typedef struct mica__symbol {
    mica__symbol_kind_t kind;
    int32_t input;             /* position among network inputs */
    int32_t tensor;
    int32_t axis;
    const mica_expr_t *upper;  /* MICA__SYM_SIZE: the bound */
    char *name;                /* "N", "n[0]", "t[1]" */
    char *meaning;             /* "x[0]" ... */
} mica__symbol_t;

/* A profile as the engine keeps it: ranges, per-tensor plan. */
typedef struct mica__eprofile {
    mica__range_t *ranges;     /* per network input (copies) */
    mica_dims_t *tmin, *topt, *tmax; /* per tensor, from the corner runs */
    int64_t *bytes;            /* per tensor: planned bytes on the device */
    int64_t *offset;           /* per tensor: arena offset, -1 if none */
    int64_t *workspace;        /* per layer */
    int64_t *workspace_offset; /* per layer */
    int64_t arena_bytes;
} mica__eprofile_t;

typedef struct mica__layer {
    char *name;
    char *origin;
    mica_creator_info_t info;  /* the chosen creator */
    const mica_fields_t *params; /* the fields to create with (the network
                                    layer's): only valid while building */
    mica_layer_t *instance;
    /* Phase 1 runs the CPU implementation: `instance` itself when the
     * chosen one runs on the CPU, else one of the CPU creator. */
    mica_creator_info_t host_info;
    mica_layer_t *host_instance;
    int32_t nb_inputs, nb_outputs;
    int32_t *inputs;           /* tensor indices, -1 for omitted */
    int32_t *outputs;
    int32_t *input_kinds;      /* mica_input_kind_t per input */
    char *why;                 /* why this implementation was chosen */
    int32_t pinned;            /* chosen by name: no negotiation */
    int32_t layer_pinned;      /* by the layer's own `implementation` */
    char *device_error;        /* no implementation for the engine's
                                  device: fatal if it must run there */
    int32_t run_host;          /* phase 1: some output is a shape tensor */
    int32_t run_device;        /* phase 2: some output is an execution one */
    int32_t construct;         /* innermost loop or conditional, -1 */
    int32_t branch;            /* in a conditional's branch: 0 true,
                                  1 false; -1 otherwise */
    int32_t tactic;            /* told to its instances, 0: none */
    int32_t makes_sizes;       /* some output is a data-dependent size */
    char *fused;               /* what a fusion rule replaced, NULL */
    int32_t bound;             /* a constant: its outputs are bound to its
                                  values, it never runs on the device and
                                  execution contexts make no clone of it
                                  (core/constants.c) */
} mica__layer_t;

/*
 * A loop or a conditional (core/control.c).  Its layers are the steps
 * [begin, end) of the execution order, nested constructs included; its
 * boundary layers are listed by role, as steps.
 */
typedef struct mica__construct {
    char *name;
    int32_t kind;              /* MICA_CONSTRUCT_LOOP or _CONDITIONAL */
    int32_t parent;            /* enclosing construct, -1 at top level */
    int32_t branch;            /* its branch in the parent conditional */
    int32_t begin, end;
    int32_t live;              /* some layer of it runs on the device */
    int32_t trip_limit;        /* loop: TripLimit step, -1 if none */
    int32_t read_at_entry;     /* loop: the TripLimit's input comes from
                                  outside: read once, when it starts */
    int32_t condition;         /* conditional: Condition step */
    int32_t *heads;            /* loop: Recurrence steps (ITER_END order),
                                  conditional: IfConditionalInput steps */
    int32_t nb_heads;
    int32_t *iterators;        /* loop: Iterator steps */
    int32_t nb_iterators;
    int32_t *exits;            /* LoopOutput / IfConditionalOutput steps */
    int32_t nb_exits;
} mica__construct_t;

/* One instruction of an engine's program (core/control.c builds it,
 * core/flow.c runs it).  `target` is an instruction index. */
typedef enum mica__op_kind {
    MICA__OP_RUN = 0,          /* enqueue step `arg` */
    MICA__OP_LOOP_ENTER = 1,   /* loop `arg`: bound, ENTER; dead: target */
    MICA__OP_LOOP_TEST = 2,    /* trips done: target; else ITER_BEGIN */
    MICA__OP_LOOP_WHILE = 3,   /* READ the predicate; false: target */
    MICA__OP_LOOP_NEXT = 4,    /* ITER_END, next trip: target */
    MICA__OP_LOOP_EXIT = 5,    /* EXIT */
    MICA__OP_IF = 6,           /* conditional `arg`: READ; dead: target */
    MICA__OP_BRANCH = 7,       /* false: target */
    MICA__OP_SELECT = 8        /* SELECT `branch`, then on to target */
} mica__op_kind_t;

typedef struct mica__op {
    int32_t kind;
    int32_t arg;
    int32_t target;
    int32_t branch;
} mica__op_t;

struct mica_engine {
    mica_context_t *ctx;
    uint32_t device;
    const mica__device_t *dev;
    mica_expr_builder_t *eb;
    mica__tensor_t *tensors;
    int32_t nb_tensors;
    mica__index_t tensor_names; /* name -> tensor (mica__engine_index) */
    int32_t *input_pos;         /* per tensor: its place among the network
                                   inputs, -1 (mica__engine_index) */
    mica__layer_t *layers;     /* execution order */
    int32_t nb_layers;
    int32_t *input_index;      /* network inputs, declaration order */
    int32_t nb_inputs;
    int32_t *output_index;     /* network outputs, marking order */
    int32_t nb_outputs;
    int32_t *shape_output_index;
    int32_t nb_shape_outputs;
    mica__symbol_t *symbols;   /* a build's grows by doubling (infer.c) */
    int32_t nb_symbols;
    int32_t *size_syms;        /* the MICA__SYM_SIZE symbols (core/dds.c) */
    int32_t nb_size_syms;
    mica__eprofile_t *profiles;
    int32_t nb_profiles;
    int32_t nb_user_profiles;  /* 0 for a static network (one implicit) */
    mica__construct_t *constructs;
    int32_t nb_constructs;
    mica__op_t *prog;          /* what enqueue runs, in order */
    int32_t nb_prog;
    /* The bytes of the file a loaded engine's layers may point into
     * (deserialize_ex with MICA_STATE_PERSISTENT), NULL if the engine
     * owns none (built, or from the caller's bytes): released after
     * every layer instance is destroyed.  `bytes_unmap`: a mapping of
     * the file, else malloc'd. */
    void *bytes;
    size_t bytes_size;
    int32_t bytes_unmap;
    /* The graph passes that ran before the build (core/passes/), in
     * order, with what each changed; kept in engine files (format 4). */
    struct mica__pass_record *passes;
    int32_t nb_passes;
    /* The device copy of the bound constants (core/constants.c), made
     * once, by the first execution context, under const_lock. */
    void *const_block;
    int32_t const_ready;
    pthread_mutex_t const_lock;
};

/* ---- constants bound, not computed (core/constants.c) ---------------- */

/*
 * Which layers of e are constants whose outputs are bound to their
 * values (mica/layer.h's constant_output): each that runs on the
 * device, outside loops and conditionals, whose every output is an
 * execution tensor of linear format, no network output, of the bytes
 * its shape says.  Sets the layers' `bound` and the tensors' const_host
 * and const_bytes; call once the kinds are known, before in-place
 * outputs and memory plans (which leave bound tensors out).
 */
mica_status_t mica__constants_find(mica_engine_t *e);
/* Every bound tensor's const_at: the host bytes on a device of host
 * memory, else one copy on the device, uploaded once for the engine
 * (thread-safe); fails on ctx. */
mica_status_t mica__constants_ready(mica_engine_t *e, mica_context_t *ctx);
/* Free the device copy (mica__engine_free). */
void mica__constants_free(mica_engine_t *e);

/* What one graph pass did to the network an engine was built from. */
typedef struct mica__pass_record {
    char *name;                /* "constant-folding" */
    char *summary;             /* "302 layers folded" */
    int64_t changed;           /* the number the summary counts */
} mica__pass_record_t;

/* Free n records and the array. */
void mica__pass_records_free(mica__pass_record_t *r, int32_t n);

/* ---- loops and conditionals (core/control.c) ------------------------ */

/* Whether input `i` of layer l is a Recurrence's back edge. */
static inline int mica__back_edge(const mica__layer_t *l, int32_t i)
{
    return i == 1 && l->info.role == MICA_ROLE_RECURRENCE;
}

/*
 * The arena lifetime of every execution tensor (live_from, live_to),
 * from producers and last readers, stretched over the loops it crosses:
 * a value read in a loop but made before it, a Recurrence's state, a
 * LoopOutput's output and a Recurrence's next value live for the whole
 * loop.  Call after the kinds are known.
 */
void mica__control_lifetimes(mica_engine_t *e);

void mica__constructs_free(mica_engine_t *e);

/*
 * Fill the tensor descriptors (`io` holds inputs then outputs) of layer
 * `l` from per-tensor dims.  Omitted inputs get rank 1, dimension 0.
 */
void mica__layer_descs(const mica_engine_t *e, const mica__layer_t *l,
                       const mica_dims_t *dims, mica_tensor_desc_t *io);

/* configure() ranges of layer l's inputs and outputs in profile k. */
void mica__layer_dyn_descs(const mica_engine_t *e, const mica__layer_t *l,
                           int32_t k, mica_dyn_desc_t *dyn);

/*
 * Configure every device layer of e for profile k (configure() with the
 * profile's ranges) and store its workspace bytes in workspace[] (per
 * layer); configure every CPU twin of its own once for all profiles'
 * ranges (core/profile.c).
 */
mica_status_t mica__configure_profile(mica_engine_t *e, int32_t k,
                                      int64_t *workspace);
mica_status_t mica__configure_host(mica_engine_t *e);

/*
 * Every device layer of e whose tactic is not chosen yet (0) and whose
 * instance offers tactics once configured for profile 0 is told the
 * first it offers (core/autotune.c).
 */
mica_status_t mica__default_tactics(mica_engine_t *e);

/* "ORIGIN: layer 'NAME' (TYPE): MESSAGE" for a failure of engine layer
 * `step`, from a module's error slot (may be NULL: fallback). */
mica_status_t mica__engine_layer_fail(const mica_engine_t *e, int32_t step,
                                      const mica_error_t *err,
                                      const char *fallback);

/*
 * Which outputs take over an input's memory (in-place layers): every
 * tensor's alias, once lifetimes are known (core/inplace.c).
 * mica__alias_root follows a tensor's aliases to the tensor whose buffer
 * they all share.
 */
mica_status_t mica__inplace(mica_engine_t *e);
int32_t mica__alias_root(const mica_engine_t *e, int32_t t);

/* Plan profile k's arena: offsets for tensors and workspaces by liveness;
 * the tensors of one in-place chain share one buffer. */
mica_status_t mica__plan_memory(mica_engine_t *e, int32_t k);

/* ---- phase 1 (core/shapes.c) ---------------------------------------- */

/*
 * What phase 1 computes: the value of every symbol, the dims of every
 * tensor, and host copies of the shape tensors.  Sized for one engine.
 */
typedef struct mica__shapes {
    int64_t *symbols;          /* per engine symbol */
    mica_dims_t *dims;         /* per tensor */
    void **host;               /* per tensor: values on the host, or NULL */
    size_t *host_cap;
    void *scratch;             /* host workspace of phase-1 layers */
    size_t scratch_cap;
} mica__shapes_t;

mica_status_t mica__shapes_init(mica_engine_t *e, mica__shapes_t *s);
void mica__shapes_free(mica_engine_t *e, mica__shapes_t *s);

/*
 * Run phase 1 for the given input dims (per network input; only runtime
 * dims are read) and the values of shape-tensor inputs, already stored in
 * s->host of those inputs: bind the symbols, compute shape tensors on the
 * host in execution order, and evaluate every tensor's dims.  Assertion
 * layers run only if `assertions` (the build's measuring runs at a
 * profile's corners skip them: a corner is not an input anyone gave).
 * `host` gives each layer's host instance (an execution context's clones);
 * NULL means the engine's own.
 */
mica_status_t mica__shapes_run(mica_engine_t *e, mica__shapes_t *s,
                               const mica_dims_t *input_dims, int assertions,
                               mica_layer_t *const *host);

/*
 * Evaluate the output dims of the layers from step `from` on into s,
 * first binding the data-dependent sizes of those from `bind_from` on to
 * their bounds (phase 1 does it for all; an execution context after
 * reading a size back, for the layers after it).
 */
mica_status_t mica__shapes_eval_from(mica_engine_t *e, mica__shapes_t *s,
                                     int32_t from, int32_t bind_from);

/* ---- data-dependent sizes (core/dds.c) ------------------------------- */

/* e's list of sizes (size_syms) and which layers make them, from its
 * symbols. */
mica_status_t mica__dds_index(mica_engine_t *e);
/* Whether expression x depends on one of e's sizes (mask: scratch, one
 * byte per symbol). */
int mica__dds_depends(const mica_engine_t *e, const mica_expr_t *x,
                      uint8_t *mask);

/* configure() ranges of layer l for its host phase: all profiles' union. */
void mica__host_ranges(const mica_engine_t *e, const mica__layer_t *l,
                       mica_dyn_desc_t *all);

/* Whether profile k admits the inputs; if not, why (one line). */
int mica__profile_admits(const mica_engine_t *e, int32_t k,
                         const mica_dims_t *input_dims,
                         const mica__shapes_t *s, char *why, size_t len);

/* "[1..64, 5]" for input i of profile k (values for shape inputs). */
void mica__range_text(const mica_engine_t *e, int32_t k, int32_t i,
                      char *buf, size_t len);

/* "[2, 3]" */
void mica__dims_text(const mica_dims_t *d, char *buf, size_t len);

#endif /* MICA_GRAPH_H */
