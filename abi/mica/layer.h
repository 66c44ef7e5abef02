/*
 * mica/layer.h - layer creators and layer instances.
 *
 * A module registers creators; a creator makes layer instances from fields
 * (or from serialized bytes); a layer instance answers the builder's
 * questions (outputs, types, shapes, formats, workspace) and runs.  The
 * semantics are those of TensorRT's IPluginCreator and
 * IPluginV2DynamicExt, written as C vtables.
 *
 * Growth: mica_layer_ops_t and mica_layer_creator_t start with their size.
 * The host never reads a member past struct_size, and treats an optional
 * callback that is NULL (or beyond struct_size) as absent.  New members are
 * only ever appended; initialize them by name (designated initializers) so
 * that members added later stay NULL.
 *
 * Lifecycle (TensorRT's plugin lifecycle), in the order the core calls:
 *
 *   create (or deserialize[_ex])  the builder's instance, from fields/state
 *   nb_outputs, output_dtypes, output_dims, output_values, supports_format,
 *   input_kind                    questions, any number of times
 *   configure, workspace_size     for each optimization profile
 *   tactics, set_tactic           after configure for the first profile,
 *                                 then configure again
 *   serialize                     when an engine is saved
 *   deserialize[_ex], set_tactic  when an engine is loaded, then output
 *                                 count, output_dtypes, input_kind and
 *                                 supports_format (checks against the
 *                                 file), configure and workspace_size
 *                                 for each profile
 *   clone, set_tactic             one per execution context (and one for
 *                                 its host phase when that differs)
 *   configure                     on the clone, each time the context
 *                                 switches profile
 *   initialize                    once, before the clone's first enqueue
 *   shape_change                  on the clone, when its shapes change
 *   enqueue                       any number of times
 *   terminate                     once, before destroy, if initialize ran
 *   destroy
 *
 * Threads: an instance is only ever used by one thread at a time; each
 * execution context owns its clones, and several contexts of one engine
 * may run on several threads at once.  create, deserialize and clone may
 * thus be called from several threads at the same time for different
 * instances: whatever a module shares between instances (a cache, a
 * library handle) it must protect itself.  Creators are read-only data.
 */
#ifndef MICA_LAYER_H
#define MICA_LAYER_H

#include "mica/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Dimension expressions (TensorRT's IDimensionExpr / IExprBuilder).
 *
 * An expression is an opaque, immutable node owned by the builder that
 * made it; it lives as long as that builder.  Build them with the host's
 * expr_constant and expr_operation services (see mica/module.h).
 * ------------------------------------------------------------------- */

typedef struct mica_expr mica_expr_t;
typedef struct mica_expr_builder mica_expr_builder_t;

typedef enum mica_expr_op {
    MICA_EXPR_SUM = 0,
    MICA_EXPR_PROD = 1,
    MICA_EXPR_MAX = 2,
    MICA_EXPR_MIN = 3,
    MICA_EXPR_SUB = 4,
    MICA_EXPR_EQUAL = 5,     /* 1 if a == b else 0 */
    MICA_EXPR_LESS = 6,      /* 1 if a < b else 0 */
    MICA_EXPR_FLOOR_DIV = 7,
    MICA_EXPR_CEIL_DIV = 8
} mica_expr_op_t;

/*
 * The shape of one tensor as expressions.  For an integer shape tensor,
 * `values` holds its nb_values elements (row-major) as expressions: of
 * the network's runtime dimensions where the builder can follow them
 * (Shape, Concatenation, Gather...), else symbols that phase 1 binds at
 * run time.  An input of kind MICA_INPUT_SHAPE always has values.  For
 * other tensors values is NULL and nb_values 0.  An optional input left
 * out has nb_dims -1.  Frozen.
 */
typedef struct mica_shape_expr {
    int32_t nb_dims;
    int32_t nb_values;
    const mica_expr_t *d[MICA_MAX_DIMS];
    const mica_expr_t *const *values;
    void *reserved_[2];
} mica_shape_expr_t;

/* The error slot of one call.  Fill it with the host's set_error. */
typedef struct mica_error mica_error_t;

/* ---------------------------------------------------------------------
 * Boundary roles.  Ordinary layers have MICA_ROLE_NONE.  Layers that
 * delimit loops and conditionals declare a role and the core schedules
 * them by it, not by their type name.
 * ------------------------------------------------------------------- */
typedef enum mica_layer_role {
    MICA_ROLE_NONE = 0,
    MICA_ROLE_TRIP_LIMIT = 1,
    MICA_ROLE_RECURRENCE = 2,
    MICA_ROLE_ITERATOR = 3,
    MICA_ROLE_LOOP_OUTPUT = 4,
    MICA_ROLE_CONDITION = 5,
    MICA_ROLE_IF_INPUT = 6,
    MICA_ROLE_IF_OUTPUT = 7,
    MICA_ROLE_ASSERTION = 8
} mica_layer_role_t;

/*
 * What a layer reads of an input (TensorRT's shape/execution tensor
 * rules).  MICA_INPUT_DATA: its values, in whichever phase the layer runs
 * (the tensor is an execution tensor, or a shape tensor where the layer
 * computes one).  MICA_INPUT_SHAPE: its values before execution, on the
 * host: the input must be a shape tensor (Shuffle's reshape dimensions,
 * Slice's start/size/stride, Fill's shape, Assertion's condition).
 * MICA_INPUT_DIMS: only its dimensions (Shape's input).
 */
typedef enum mica_input_kind {
    MICA_INPUT_DATA = 0,
    MICA_INPUT_SHAPE = 1,
    MICA_INPUT_DIMS = 2
} mica_input_kind_t;

/*
 * What the core asks of a boundary layer through enqueue_boundary
 * (mica_step_t.kind), by role.  A loop runs, for trips i = 0, 1, ...:
 *
 *   ENTER       once, before the first trip:
 *               RECURRENCE: output = input 0 (the initial value).
 *   READ        TRIP_LIMIT: before the first trip for a count loop, at the
 *               start of every trip (after the layers computing it) for a
 *               while loop.  CONDITION: once, before either branch.
 *               Store the 0-D input's value (int32 count, bool predicate
 *               as 0/1) in step->value, on the host, with any device work
 *               finished: the core reads it when the call returns.  This
 *               is the only read-back of a loop trip or a branch.
 *               ITERATOR: when the loop starts, store the length of
 *               input 0 along its axis (the trips it can feed), from
 *               the descriptor: no device work.  A TripLimit whose
 *               input comes from outside the loop is read once, when the
 *               loop starts, whatever its kind.
 *   ITER_BEGIN  at the start of trip i: ITERATOR: output = slice i of
 *               input 0 along its axis (slice len-1-i with `reverse`).
 *   ITER_END    after the body of trip i: first LOOP_OUTPUT (concatenate
 *               and reverse: store input 0 as element i of the output
 *               along its axis; an i beyond the output's length is the
 *               run-time error of a length smaller than the trip count),
 *               then RECURRENCE: output = input 1 (the next value).
 *   EXIT        once, after the last trip, step->trip_count trips run:
 *               LOOP_OUTPUT: last_value: output = input 0; reverse: put
 *               elements 0..trip_count-1 in reverse order; concatenate
 *               and reverse: elements trip_count..len-1 (no trip wrote
 *               them) become zeros.
 *   SELECT      IF_OUTPUT: output = input step->branch (0: the true
 *               value, 1: the false value) once the branch has run.
 *
 * IF_INPUT layers are plain layers (enqueue copies the input).  Pointers,
 * devices and streams are those of enqueue.  `iteration` is i (0 outside
 * ITER_BEGIN/ITER_END); `trip_count` is the number of trips when known
 * (a count loop from ENTER on, every loop at EXIT), else -1.
 */
typedef enum mica_step_kind {
    MICA_STEP_ENTER = 0,
    MICA_STEP_READ = 1,
    MICA_STEP_ITER_BEGIN = 2,
    MICA_STEP_ITER_END = 3,
    MICA_STEP_EXIT = 4,
    MICA_STEP_SELECT = 5
} mica_step_kind_t;

typedef struct mica_step {
    uint32_t struct_size;      /* sizeof(mica_step_t) as the core saw it */
    uint32_t kind;             /* mica_step_kind_t */
    int64_t iteration;
    int64_t trip_count;
    int32_t branch;
    int32_t reserved_;
    int64_t value;             /* READ: written by the layer */
    void *reserved2_[4];
} mica_step_t;

typedef struct mica_layer mica_layer_t;
typedef struct mica_layer_ops mica_layer_ops_t;
typedef struct mica_layer_creator mica_layer_creator_t;

/*
 * A layer instance.  A module allocates its own struct whose first member
 * is a mica_layer_t, sets `ops`, and casts back in its callbacks.
 */
struct mica_layer {
    const mica_layer_ops_t *ops;
};

/*
 * The callbacks of a layer instance.  Arrays `in` and `out` are in the
 * order of the layer's inputs and outputs.  Unless noted, every callback
 * is required.  Callbacks that fail return a status and describe the
 * problem through the host's set_error(err, ...).
 */
struct mica_layer_ops {
    uint32_t struct_size; /* sizeof(mica_layer_ops_t) as the module saw it */
    uint32_t reserved_;

    /* Number of outputs.  Must not depend on anything but the fields. */
    int32_t (*nb_outputs)(const mica_layer_t *layer);

    /* Output element types from input element types. */
    mica_status_t (*output_dtypes)(const mica_layer_t *layer,
                                   const mica_dtype_t *in, int32_t nb_in,
                                   mica_dtype_t *out, int32_t nb_out,
                                   mica_error_t *err);

    /*
     * Dimensions of output `index` as expressions of the inputs' dimensions
     * (IPluginV2DynamicExt::getOutputDimensions).  Set out->nb_dims and
     * out->d[]; leave out->values alone.
     */
    mica_status_t (*output_dims)(const mica_layer_t *layer, int32_t index,
                                 const mica_shape_expr_t *in, int32_t nb_in,
                                 mica_expr_builder_t *eb,
                                 mica_shape_expr_t *out, mica_error_t *err);

    /*
     * Whether the type and format of io[pos] are supported, given the
     * types and formats of io[0..pos-1] (supportsFormatCombination).  io
     * holds nb_in inputs followed by nb_out outputs.  Returns 1 or 0.
     * Called during the build, any number of times, for any order of
     * candidates; the formats of io[pos+1..] are not set yet.
     *
     * Formats (mica/types.h): every implementation must accept
     * MICA_FORMAT_LINEAR.  The builder offers channels last
     * (MICA_FORMAT_HWC for 4-D, MICA_FORMAT_DHWC for 5-D tensors) only to
     * an implementation whose ops table reaches the members appended with
     * it (struct_size beyond set_tactic), and only for device tensors of
     * an ordinary layer outside loops and conditionals; one that accepts
     * gets it where its input already is channels last or where it has a
     * float16 4-D/5-D tensor, and the builder inserts reorders where
     * formats meet (core/formats.c).  Accept a non-linear format only
     * where enqueue handles it (mica_kit_strides gives its layout).
     */
    int32_t (*supports_format)(const mica_layer_t *layer, int32_t pos,
                               const mica_tensor_desc_t *io,
                               int32_t nb_in, int32_t nb_out);

    /*
     * Called once per optimization profile before the first enqueue, with
     * the range of every dimension.  Optional (NULL: nothing to do).
     */
    mica_status_t (*configure)(mica_layer_t *layer,
                               const mica_dyn_desc_t *in, int32_t nb_in,
                               const mica_dyn_desc_t *out, int32_t nb_out,
                               mica_error_t *err);

    /*
     * Scratch bytes enqueue needs for any shapes within the ranges given.
     * Optional (NULL: none).
     */
    size_t (*workspace_size)(const mica_layer_t *layer,
                             const mica_dyn_desc_t *in, int32_t nb_in,
                             const mica_dyn_desc_t *out, int32_t nb_out);

    /*
     * Run the layer.  Pointers are on the implementation's device (host
     * memory for a CPU implementation, CUDA device memory for a CUDA one),
     * except inputs of kind MICA_INPUT_SHAPE, which are always host memory
     * holding the shape tensor's values, and inputs of kind MICA_INPUT_DIMS,
     * whose pointer may be NULL (read only their descriptor).
     * `stream` is the cudaStream_t to launch on for CUDA, NULL for the CPU.
     * A CPU implementation finishes before returning; a CUDA one may return
     * as soon as its work is queued.  Called only when at least one output
     * has a non-zero volume, or when the layer has no outputs at all
     * (Assertion); inputs may be empty.  Shape tensors are computed before
     * execution on the host by the layer's CPU implementation: a layer that
     * can produce one must have a CPU implementation.
     */
    mica_status_t (*enqueue)(mica_layer_t *layer,
                             const mica_tensor_desc_t *in, int32_t nb_in,
                             const mica_tensor_desc_t *out, int32_t nb_out,
                             const void *const *inputs, void *const *outputs,
                             void *workspace, void *stream,
                             mica_error_t *err);

    /*
     * Write the state that deserialize() needs into buf.  With buf NULL,
     * only store the size in *size.  Otherwise *size holds the capacity on
     * entry and the bytes written on return.
     */
    mica_status_t (*serialize)(const mica_layer_t *layer, void *buf,
                               size_t *size);

    /* An independent copy (one per execution context). NULL on failure. */
    mica_layer_t *(*clone)(const mica_layer_t *layer, mica_error_t *err);

    /* Release the instance and everything it owns. */
    void (*destroy)(mica_layer_t *layer);

    /*
     * Optional: the values of shape-tensor output `index` as expressions of
     * the inputs' dimensions and values (for layers that can be shape
     * tensors: Shape, Concatenation, Gather, ElementWise...).  Write
     * nb_values expressions into values.  Return MICA_ERR_UNSUPPORTED when
     * the values cannot be expressed; the core then computes them on the
     * host at run time with enqueue on the CPU implementation.
     */
    mica_status_t (*output_values)(const mica_layer_t *layer, int32_t index,
                                   const mica_shape_expr_t *in, int32_t nb_in,
                                   mica_expr_builder_t *eb,
                                   const mica_expr_t **values,
                                   int32_t nb_values, mica_error_t *err);

    /*
     * Optional: what the layer reads of input `index` (mica_input_kind_t).
     * NULL: every input is MICA_INPUT_DATA.  Must depend only on the
     * fields and the number of inputs.
     */
    int32_t (*input_kind)(const mica_layer_t *layer, int32_t index,
                          int32_t nb_inputs);

    /*
     * Optional: acquire what enqueue needs for the life of an execution
     * context (library handles, device buffers), on the context's clone,
     * after configure and before the first enqueue.  `stream` is the
     * context's (NULL on the CPU).
     */
    mica_status_t (*initialize)(mica_layer_t *layer, void *stream,
                                mica_error_t *err);

    /* Optional: release what initialize acquired (before destroy). */
    void (*terminate)(mica_layer_t *layer);

    /*
     * Boundary layers (every role but NONE, IF_INPUT and ASSERTION):
     * required there, unused elsewhere.  Do what `step` asks (see
     * mica_step_kind_t); the arguments are those of enqueue.  Called
     * even when the tensors are empty.
     */
    mica_status_t (*enqueue_boundary)(mica_layer_t *layer,
                                      mica_step_t *step,
                                      const mica_tensor_desc_t *in,
                                      int32_t nb_in,
                                      const mica_tensor_desc_t *out,
                                      int32_t nb_out,
                                      const void *const *inputs,
                                      void *const *outputs, void *workspace,
                                      void *stream, mica_error_t *err);

    /* ---- appended after ABI version 1's first members: the host reads
     * each only where struct_size covers it (a module built against
     * older headers simply does not have it) ---- */

    /*
     * Optional: tactics (TensorRT's IPluginV3OneBuild::getValidTactics),
     * the ways this layer can compute its outputs (cuDNN algorithms, tile
     * sizes), each a positive id of the module's choosing.  Write up to
     * `max` ids into `tactics` and return how many the layer offers (at
     * most MICA_MAX_TACTICS; 0 or NULL: one way only).  The builder calls
     * it on its instance after configure for the first profile, with the
     * types and shapes of that configuration.  Without autotuning the
     * first id is used; with it (mica_build_config_t.autotune), each is
     * timed and the fastest kept.
     */
    int32_t (*tactics)(const mica_layer_t *layer, int32_t *tactics,
                       int32_t max);

    /*
     * Required with tactics: use tactic `tactic` (one that tactics()
     * offered) from now on (IPluginV3OneRuntime::setTactic).  The core
     * calls it on the builder's instance for each candidate it times and
     * for the one it keeps; on every instance made from saved state and
     * on every clone, before configure, initialize and enqueue.  The
     * engine file stores the tactic, so the layer need not serialize it;
     * a clone must not rely on inheriting it either: it is told.  A
     * tactic the layer does not have fails (the engine is refused).
     */
    mica_status_t (*set_tactic)(mica_layer_t *layer, int32_t tactic,
                                mica_error_t *err);

    /*
     * Optional: in-place (TensorRT's IPluginV3OneBuildV2::getAliasedInput):
     * the input whose memory output `index` may take over, or -1 (NULL:
     * none).  Where that input is read by no later step, is not a network
     * input, an output or a shape-tensor input, and is not given to the
     * layer twice, the memory plan gives both one buffer: enqueue then
     * gets the same pointer for the input and the output and must
     * compute correctly when they are equal (element by element in
     * place, say).  Where it cannot, they get separate buffers, so
     * enqueue must work both ways.  Must depend only on the fields and
     * the number of inputs; the input must have the output's type.
     */
    int32_t (*aliased_input)(const mica_layer_t *layer, int32_t index);

    /*
     * Optional: the shapes this layer runs with changed (TensorRT's
     * IPluginV3OneRuntime::onShapeChange), with the new descriptors
     * (concrete dims, as enqueue will see them).  Called on an execution
     * context's device instance (its clone) after phase 1 found new dims
     * for any of its inputs or outputs (new input shapes, another
     * profile, a data-dependent size read back), once per change, before
     * the next enqueue; the first run is a change.  Not called on a CPU
     * twin that computes shape tensors in phase 1.  The place to make
     * per-shape state (descriptors, plans) instead of in every enqueue.
     */
    mica_status_t (*shape_change)(mica_layer_t *layer,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const mica_tensor_desc_t *out,
                                  int32_t nb_out, mica_error_t *err);

    /*
     * Optional (appended after shape_change): the values of output
     * `index` when they never change while the instance lives (a
     * Constant's weights, TensorRT's IConstantLayer): their bytes on
     * the host, row-major in the output's type and linear format, and
     * their number in *bytes; NULL when the layer computes the output.
     * Must depend only on the fields.  The core then never enqueues the
     * layer: every reader of the output reads these bytes, in place on
     * the CPU, from one copy per engine on a device (uploaded when the
     * first execution context of the engine is made).  The bytes must
     * stay valid and unchanged as long as the instance lives (a loaded
     * engine's instance may point into the engine's file: see
     * MICA_STATE_PERSISTENT).
     */
    const void *(*constant_output)(const mica_layer_t *layer, int32_t index,
                                   size_t *bytes);
};

/* The most tactics one layer may offer. */
#define MICA_MAX_TACTICS 64

/*
 * A registered layer type, one per (namespace, type, version,
 * implementation).  Static data of the module, normally.
 */
struct mica_layer_creator {
    uint32_t struct_size; /* sizeof(mica_layer_creator_t) as the module saw it */
    uint32_t reserved_;

    const char *type;           /* "ElementWise", "BarPlugin" */
    int32_t version;            /* >= 1; lookups take the highest by default */
    int32_t priority;           /* among implementations of one device, higher wins */
    const char *ns;             /* namespace, "" for the default */
    const char *implementation; /* "reference", "cuda", "cublas", ... */
    uint32_t devices;           /* mica_device_kind_t bits */
    uint32_t role;              /* mica_layer_role_t */

    const mica_field_schema_t *fields;
    int32_t nb_fields;
    int32_t reserved2_;

    /*
     * Make an instance named `name` from validated fields (defaults
     * applied).  Fields the layer finds inconsistent (a list of the wrong
     * length for another field, say) are reported through err.
     */
    mica_layer_t *(*create)(const mica_layer_creator_t *creator,
                            const char *name, const mica_fields_t *fields,
                            mica_error_t *err);

    /*
     * Make an instance from the bytes its serialize() wrote.  The bytes
     * are valid only during the call: copy whatever the instance keeps.
     */
    mica_layer_t *(*deserialize)(const mica_layer_creator_t *creator,
                                 const char *name, const void *data,
                                 size_t size, mica_error_t *err);

    /* For the module's own use. */
    void *user_data;

    /* ---- appended after ABI version 1's members (read only when
     * struct_size covers them) ---- */

    /*
     * Optional: deserialize, told how long `data` lives (flags, bits of
     * mica_state_flags_t).  When set, the host calls it instead of
     * deserialize; otherwise (NULL, or a creator built before it
     * existed) it calls deserialize.  Set both to load engines in hosts
     * older than this member too.  With
     * MICA_STATE_PERSISTENT the instance, and every clone made from it,
     * may keep pointers into `data` (weights used in place) instead of
     * copying; without it, as deserialize.
     */
    mica_layer_t *(*deserialize_ex)(const mica_layer_creator_t *creator,
                                    const char *name, const void *data,
                                    size_t size, uint32_t flags,
                                    mica_error_t *err);
};

/*
 * What deserialize_ex is told about the state bytes.
 *
 * MICA_STATE_PERSISTENT: the bytes stay valid and unchanged (read-only:
 * they may be a read-only mapping of the engine file) until the engine
 * being loaded is destroyed, which happens after every instance made
 * from them during the load, and every clone of those, is destroyed.
 * The host sets it when it keeps the engine's bytes for the engine's
 * lifetime (mica_engine_load, mica_engine_deserialize_borrow); a
 * mica_engine_deserialize of the caller's bytes does not.
 *
 * Alignment: an engine file (format 2) places every layer state at a
 * multiple of 64 bytes from the start of the file, and mica_engine_load
 * maps the file at a page boundary, so `data` is then 64-byte aligned; a
 * module that lays out its own state with the same rule (offsets within
 * the state that are multiples of 64) gets aligned weights in place.
 * Otherwise `data` has the alignment of wherever the caller's bytes are,
 * plus a multiple of 64: check before using a pointer in place.
 */
typedef enum mica_state_flags {
    MICA_STATE_PERSISTENT = 1u << 0
} mica_state_flags_t;

#ifdef __cplusplus
}
#endif

#endif /* MICA_LAYER_H */
