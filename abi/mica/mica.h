/*
 * mica/mica.h - the application API of libmica.
 *
 * Load modules into a context, describe a network (by hand or from a YAML
 * manifest), build an engine for a device, and run it through an execution
 * context:
 *
 *     mica_context_t *ctx;
 *     mica_manifest_t *m;
 *     mica_engine_t *engine;
 *     mica_exec_t *exec;
 *     mica_context_create(&ctx);
 *     mica_context_load_default_modules(ctx);
 *     mica_manifest_load(ctx, "net.yaml", &m);
 *     mica_engine_build(mica_manifest_network(m), mica_manifest_config(m),
 *                       &engine);
 *     mica_exec_create(engine, &exec);
 *     mica_exec_set_input(exec, "x", &dims, data);
 *     mica_exec_run(exec);
 *     mica_exec_get_output(exec, "y", &desc, &out);
 *
 * Every function that can fail returns a mica_status_t; the message that
 * goes with a failure is available from mica_context_error(), on the
 * thread that made the call, until that thread's next failing call on the
 * same context.  Objects made from a context (networks, engines,
 * execution contexts, manifests) must be destroyed before it.  A context
 * and its objects are used from one thread at a time, except that the
 * execution contexts of one engine may run on different threads, each
 * failing with its own message.
 */
#ifndef MICA_MICA_H
#define MICA_MICA_H

#include "mica/types.h"
#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica_context mica_context_t;
typedef struct mica_network mica_network_t;
typedef struct mica_engine mica_engine_t;
typedef struct mica_exec mica_exec_t;
typedef struct mica_manifest mica_manifest_t;

/* ---------------------------------------------------------------------
 * Context, logging, errors
 * ------------------------------------------------------------------- */

typedef void (*mica_log_fn)(void *user, mica_log_level_t level,
                            const char *message);

/*
 * A new context with no modules loaded.  Its logger starts at the level
 * $MICA_LOG_LEVEL names ("error", "warning", "info", "debug" or 0..3;
 * unset: warning); a value naming no level is refused with
 * MICA_ERR_INVALID, said in one line on stderr.
 */
MICA_EXPORT mica_status_t mica_context_create(mica_context_t **out);
MICA_EXPORT void mica_context_destroy(mica_context_t *ctx);

/* The message of the calling thread's last failure on ctx, "" if none.
 * One line. */
MICA_EXPORT const char *mica_context_error(const mica_context_t *ctx);

/*
 * Where log messages go.  The default writes errors and warnings to
 * stderr, prefixed "mica: "; `max_level` filters (MICA_LOG_WARNING shows
 * errors and warnings).  fn NULL restores the default.
 */
MICA_EXPORT void mica_context_set_logger(mica_context_t *ctx, mica_log_fn fn,
                                         void *user,
                                         mica_log_level_t max_level);

/* Names for enum values; "?" for values out of range. */
MICA_EXPORT const char *mica_status_name(mica_status_t status);
MICA_EXPORT const char *mica_dtype_name(mica_dtype_t dtype);
/* Parse a dtype name ("float32"); MICA_ERR_INVALID if unknown. */
MICA_EXPORT mica_status_t mica_dtype_parse(const char *name,
                                           mica_dtype_t *out);

/* The library's version, "major.minor.patch". */
MICA_EXPORT const char *mica_version(void);

/* ---------------------------------------------------------------------
 * Modules and the registry
 *
 * A module file that cannot be used (no entry symbol, ABI too old or too
 * new, init failing, a creator whose key is already registered) is
 * reported as one warning line naming the file and the reason, recorded
 * as a load problem, and skipped; everything else still loads.
 * ------------------------------------------------------------------- */

/*
 * Load the default module folders: $MICA_MODULE_DIR if set, otherwise
 * the installed folder (pkg-config's moduledir), then every folder of the
 * colon-separated $MICA_MODULE_PATH.  Missing folders are skipped.
 */
MICA_EXPORT mica_status_t mica_context_load_default_modules(mica_context_t *ctx);

/* Load every "*.so" file in `dir` (not recursive), in name order. */
MICA_EXPORT mica_status_t mica_context_load_dir(mica_context_t *ctx,
                                                const char *dir);

/*
 * Load one module file.  Returns an error (and records the problem) if
 * the file itself cannot be used; duplicate creators inside a usable file
 * are load problems but not an error.  Loading a file already loaded
 * (same real path) does nothing.
 */
MICA_EXPORT mica_status_t mica_context_load_file(mica_context_t *ctx,
                                                 const char *path);

/*
 * Whether a manifest loaded with ctx may load modules itself through its
 * `modules.paths` and `modules.load` (allow 1) or not (0, the default):
 * a module is native code, so opening a manifest that names one runs it.
 * Allow it only for manifests trusted as programs are; otherwise such a
 * manifest is refused with one line naming the key.  The modules the
 * caller loads (mica_context_load_*, $MICA_MODULE_PATH) are not affected.
 * `mica --allow-manifest-modules` sets it.
 */
MICA_EXPORT void mica_context_allow_manifest_modules(mica_context_t *ctx,
                                                     int32_t allow);

/*
 * Allow the files a model names (ONNX external data, a manifest's weights
 * `file` and `npy`) to lie in folder `dir` too (its real path; repeatable).
 * By default such a file must lie inside the model's own folder after
 * following every link, and be a regular file.  `mica --allow-folder DIR`
 * calls it.  MICA_ERR_NOT_FOUND when dir does not exist.
 */
MICA_EXPORT mica_status_t mica_context_allow_folder(mica_context_t *ctx,
                                                   const char *dir);

/* Problems met while loading modules, oldest first, one line each. */
MICA_EXPORT int32_t mica_context_nb_load_problems(const mica_context_t *ctx);
MICA_EXPORT const char *mica_context_load_problem(const mica_context_t *ctx,
                                                  int32_t index);

/*
 * Output structs (mica_creator_info_t, mica_tensor_info_t,
 * mica_layer_info_t, mica_construct_info_t) grow at their end.  Set
 * struct_size to sizeof of yours before the call: the library writes only
 * that many bytes (0, or less than the struct's first layout: that
 * layout), never past it, and sets struct_size to what it wrote; members
 * appended after your header was written are left alone.
 */

/* What the registry knows of one creator. Pointers live as long as ctx. */
typedef struct mica_creator_info {
    uint32_t struct_size;
    uint32_t abi_version;        /* the module's ABI version */
    const char *type;
    int32_t version;
    int32_t priority;
    const char *ns;
    const char *implementation;
    uint32_t devices;
    uint32_t role;
    const char *module_name;
    const char *module_version;
    const char *module_file;     /* the path it was loaded from */
    const mica_layer_creator_t *creator;
    /* Appended: the module's license and one-line description, "" when
     * the module gives none. */
    const char *module_license;
    const char *module_description;
} mica_creator_info_t;

/* Number of registered creators; index them 0..n-1 (sorted by key). */
MICA_EXPORT int32_t mica_registry_count(const mica_context_t *ctx);
MICA_EXPORT mica_status_t mica_registry_get(const mica_context_t *ctx,
                                            int32_t index,
                                            mica_creator_info_t *info);

/*
 * The fusion rules of the loaded modules that passed the registry's
 * checks (mica/module.h), in load order: rule `index`'s name, the layer
 * type it makes, its pattern as text ("Convolution -> Activation[type=
 * relu]": each step's type and conditions, "!field" for a param that
 * must not be given) and the module file.  The strings live as long as
 * the context.  MICA_ERR_INVALID when index is out of range.
 */
typedef struct mica_fusion_rule_info {
    uint32_t struct_size;
    int32_t nb_steps;
    const char *name;
    const char *type;
    const char *pattern;
    const char *module_file;
} mica_fusion_rule_info_t;

MICA_EXPORT int32_t mica_registry_nb_fusion_rules(const mica_context_t *ctx);
MICA_EXPORT mica_status_t mica_registry_fusion_rule(
    const mica_context_t *ctx, int32_t index, mica_fusion_rule_info_t *info);

/*
 * Find a creator.  ns NULL means "".  version 0 means the highest
 * registered version of the type.  implementation NULL means any; among
 * several, the one whose devices include `device` with the highest
 * priority wins (device 0: any device).  MICA_ERR_NOT_FOUND with a message
 * that lists what is registered under that name otherwise.
 */
MICA_EXPORT mica_status_t mica_registry_find(mica_context_t *ctx,
                                             const char *ns, const char *type,
                                             int32_t version,
                                             const char *implementation,
                                             uint32_t device,
                                             mica_creator_info_t *info);

/*
 * Deploy-time implementation choices for builds and engine loads in this
 * context, "Type=impl,Type2=impl2" (as $MICA_PREFER, which they replace;
 * NULL or "" clears them).  They come after a layer's own pin and the
 * manifest's modules.prefer; for a loaded engine they replace the saved
 * choice of any layer that was not pinned.
 */
MICA_EXPORT mica_status_t mica_context_set_prefer(mica_context_t *ctx,
                                                  const char *spec);

/*
 * Whether a device kind can run work in this process (CPU always can).
 * The first call for a device that is not built into libmica (CUDA)
 * loads it and probes for hardware; nothing else does before a build or
 * an engine load asks for that device.
 */
MICA_EXPORT int32_t mica_device_usable(mica_device_kind_t device);

/* The name of one device bit ("cpu", "cuda"); NULL for an unknown bit. */
MICA_EXPORT const char *mica_device_name(uint32_t device);

/*
 * The device bit named `name` ("cpu", "cuda"), or 0 for "auto";
 * MICA_ERR_NOT_FOUND for a name no device has.  Every device the ABI
 * knows has a name, whether or not this build runs it.
 */
MICA_EXPORT mica_status_t mica_device_parse(const char *name,
                                            uint32_t *device);

/* ---------------------------------------------------------------------
 * Networks
 * ------------------------------------------------------------------- */

MICA_EXPORT mica_status_t mica_network_create(mica_context_t *ctx,
                                              mica_network_t **out);
MICA_EXPORT void mica_network_destroy(mica_network_t *net);

/*
 * Add a network input.  A dimension of -1 is a runtime dimension (it
 * then needs an optimization profile).  `origin` ("file:line:col") is
 * put in front of messages about this input; may be NULL.
 */
MICA_EXPORT mica_status_t mica_network_add_input(mica_network_t *net,
                                                 const char *name,
                                                 mica_dtype_t dtype,
                                                 const mica_dims_t *dims,
                                                 const char *origin);

/* One layer to add.  Zero it, set struct_size, then fill what you need. */
typedef struct mica_layer_spec {
    uint32_t struct_size;      /* sizeof(mica_layer_spec_t) */
    int32_t version;           /* 0: the highest registered version */
    const char *name;          /* unique within the network */
    const char *type;
    const char *ns;            /* NULL: "" */
    const char *implementation; /* NULL: chosen at build time */
    int32_t nb_inputs;
    int32_t nb_outputs;
    const char *const *inputs;  /* an entry may be NULL: optional input left out */
    const char *const *outputs;
    const mica_fields_t *fields; /* checked against the creator's schema */
    const char *origin;         /* "file:line:col" of the layer, may be NULL */
    const char *const *input_origins; /* per input, may be NULL */
    const char *loop;           /* loop boundary layers: the loop's name */
    const char *conditional;    /* conditional boundary layers: its name */
    /* The precision the layer must run in ("float32", "float16"), NULL:
     * the builder's choice.  Added after version 1's first layout: read
     * only when struct_size covers it. */
    const char *precision;
} mica_layer_spec_t;

/*
 * Add a layer.  The type must be registered; the fields are checked
 * against its schema (unknown names, wrong types or counts, enum values,
 * missing required fields), defaults are applied, and the values are
 * copied.  Graph-level checks (undefined tensors, cycles, types, shapes)
 * happen in mica_network_validate() and at build time.
 */
MICA_EXPORT mica_status_t mica_network_add_layer(mica_network_t *net,
                                                 const mica_layer_spec_t *spec);

/*
 * Add a shape-tensor network input (TensorRT's shape input): int32, rank
 * 0 or 1 with a fixed length; its values are given at run time and must
 * lie within the values of the optimization profile.
 */
MICA_EXPORT mica_status_t mica_network_add_shape_input(mica_network_t *net,
                                                       const char *name,
                                                       const mica_dims_t *dims,
                                                       const char *origin);

/*
 * Optimization profiles (TensorRT's IOptimizationProfile).  A network with
 * a runtime dimension or a shape-tensor input needs at least one; each
 * profile gives, for every such input, min/opt/max dimensions (or min/opt/
 * max values for shape-tensor inputs).  add_profile stores its index.
 */
MICA_EXPORT mica_status_t mica_network_add_profile(mica_network_t *net,
                                                   int32_t *index);
MICA_EXPORT int32_t mica_network_nb_profiles(const mica_network_t *net);
MICA_EXPORT mica_status_t mica_network_set_profile_dims(
    mica_network_t *net, int32_t profile, const char *input,
    const mica_dims_t *min, const mica_dims_t *opt, const mica_dims_t *max,
    const char *origin);
MICA_EXPORT mica_status_t mica_network_set_profile_values(
    mica_network_t *net, int32_t profile, const char *input, int32_t nb,
    const int32_t *min, const int32_t *opt, const int32_t *max,
    const char *origin);

/*
 * The quantization scale of tensor `name` (TensorRT's int8 I/O scale: a
 * real value is the stored integer times scale).  Layers see it in their
 * tensor descriptors (mica_tensor_desc_t.scale); a tensor without one has
 * scale 1.  The tensor need not exist yet; the build checks that it does.
 */
MICA_EXPORT mica_status_t mica_network_set_scale(mica_network_t *net,
                                                 const char *name, float scale,
                                                 const char *origin);

/*
 * The memory format of network input or output `name` (mica_format_t;
 * TensorRT's setAllowedFormats of a network I/O tensor): the data given
 * with mica_exec_set_input or bound, and read back, lies in that order
 * (MICA_FORMAT_HWC: NHWC for a 4-D [N, C, H, W] tensor).  Without it,
 * network inputs and outputs are MICA_FORMAT_LINEAR; inside the network
 * the builder chooses each tensor's format (see mica_engine_build).  The
 * tensor need not be marked yet; the build checks that it is a network
 * input or output whose rank the format fits (4 for HWC, 5 for DHWC).
 */
MICA_EXPORT mica_status_t mica_network_set_format(mica_network_t *net,
                                                  const char *name,
                                                  uint32_t format,
                                                  const char *origin);

/* Mark a tensor as a network output. */
MICA_EXPORT mica_status_t mica_network_mark_output(mica_network_t *net,
                                                   const char *name,
                                                   const char *origin);

/*
 * Mark a tensor as an output for shapes (markOutputForShapes): a shape
 * tensor whose values are read on the host after phase 1.
 */
MICA_EXPORT mica_status_t mica_network_mark_shape_output(mica_network_t *net,
                                                         const char *name,
                                                         const char *origin);

/*
 * Check the whole graph: every tensor defined exactly once, no cycles,
 * element types and ranks that the layers accept, shapes that infer.
 * The first problem is reported with the layer's name (and origin).
 */
MICA_EXPORT mica_status_t mica_network_validate(mica_network_t *net);

/* ---------------------------------------------------------------------
 * Engines
 * ------------------------------------------------------------------- */

typedef struct mica_build_config {
    uint32_t struct_size;   /* sizeof(mica_build_config_t) */
    uint32_t device;        /* MICA_DEVICE_CPU, MICA_DEVICE_CUDA, 0: auto */
    /* Implementation choice per layer type (the manifest's
     * modules.prefer).  A layer's own pin comes first; after these,
     * $MICA_PREFER ("Type=impl,..."); then the highest priority. */
    int32_t nb_prefer;
    int32_t reserved_;
    const char *const *prefer_types;
    const char *const *prefer_impls;
    /* Positive: among the implementations a layer may take (it pinned
     * none and no preference names one) and the tactics each offers
     * (mica/layer.h), time each on the device at the first profile's opt
     * shapes and keep the fastest (mica build --autotune); negative: the
     * highest priority and the first tactic offered (--no-autotune); 0:
     * the device's default, which times on CUDA (as TensorRT does) and
     * not on the CPU.  Added after version 1's first layout: read only
     * when struct_size covers it (an older struct: the default). */
    int32_t autotune;
    /* Precisions the builder may run layers in, as bits (1u << dtype):
     * with MICA_FLOAT16's bit, a layer whose implementation takes float16
     * runs in float16 and casts are inserted where float32 and float16
     * tensors meet (manifest `precision`, mica build --fp16).  0: float32
     * only.  Read only when struct_size covers it. */
    uint32_t precisions;
    /* Non-zero: fuse nothing: no fusion rule (mica/module.h), no
     * pointwise fusion (the passes "fusion" and "pointwise"; mica build
     * --no-fusion).  Read only when struct_size covers it. */
    int32_t no_fusion;
    int32_t reserved2_;
    /* Appended: the graph passes run on the network before the build
     * (docs/passes.md), each a comma-separated list of pass names
     * (mica_pass_name).  `passes`: the passes that may run, "all" (or
     * NULL, "": every pass) or "none"; `no_passes`: passes taken out of
     * that set ("all": every one), as ONNX Runtime's disabled
     * optimizers (mica build --passes, --no-passes).  `no_fusion` takes
     * out the passes "fusion" and "pointwise".  A name no pass has fails the build, naming
     * the passes there are.  Read only when struct_size covers them. */
    const char *passes;
    const char *no_passes;
    /* A timing cache file (TensorRT's timing cache, trtexec
     * --timingCacheFile; mica build --timing-cache FILE), or NULL: where
     * the build times tactics, layers whose signature and device the
     * file holds take its result without timing, and the build adds what
     * it measured to the file (written anew, then renamed over it).
     * Read only when struct_size covers it. */
    const char *timing_cache;
} mica_build_config_t;

/*
 * Build an engine: choose an implementation for every layer, infer and
 * check types and shapes, create and configure the layer instances, plan
 * memory.  cfg may be NULL (auto device, no preferences).  The network
 * may be destroyed afterwards.
 *
 * Then, as TensorRT does, the precision (float16 where cfg allows it)
 * and the memory format of every tensor: a layer whose implementation
 * takes channels last (mica/types.h) gets it where its input already is
 * so or where it runs on float16 4-D/5-D tensors, and an Identity
 * "reorder:T@FORMAT" is inserted where a tensor made in one format is
 * read in another.  Network inputs and outputs keep the formats asked for
 * (mica_network_set_format; linear by default).
 */
MICA_EXPORT mica_status_t mica_engine_build(mica_network_t *net,
                                            const mica_build_config_t *cfg,
                                            mica_engine_t **out);
MICA_EXPORT void mica_engine_destroy(mica_engine_t *engine);

/* The device the engine runs on (one mica_device_kind_t bit). */
MICA_EXPORT uint32_t mica_engine_device(const mica_engine_t *engine);

/* Tensors of the engine: inputs first, in declaration order. */
typedef enum mica_tensor_kind {
    MICA_TENSOR_EXECUTION = 0, /* "E": computed on the device */
    MICA_TENSOR_SHAPE = 1,     /* "S": computed on the host, in phase 1 */
    MICA_TENSOR_BOTH = 2,      /* "E+S": both */
    MICA_TENSOR_UNUSED = 3     /* nothing reads it: never computed */
} mica_tensor_kind_t;

typedef struct mica_tensor_info {
    uint32_t struct_size;
    mica_dtype_t dtype;
    const char *name;
    mica_dims_t dims;          /* concrete, -1 where known only at run time */
    const char *shape;         /* symbolic, "[N, 6]" */
    mica_tensor_kind_t kind;
    int32_t is_input;
    int32_t is_output;
    int32_t producer;          /* layer index, -1 for inputs */
    int64_t offset;            /* byte offset in the arena, -1 if none */
    int64_t bytes;             /* bytes reserved for it (profile 0) */
    int32_t is_shape_output;
    int32_t reserved_;
    /* Appended: the tensor whose memory this one takes over (an in-place
     * layer's input, mica/layer.h's aliased_input), -1 if none; and its
     * memory layout (mica_format_t). */
    int32_t alias;
    uint32_t format;
    /* Appended: 1 when the tensor is a constant's values, bound where
     * the engine keeps its weights (no arena memory; the layer that
     * makes it never runs: mica/layer.h's constant_output), else 0. */
    int32_t constant;
    int32_t reserved2_;
} mica_tensor_info_t;

typedef struct mica_layer_info {
    uint32_t struct_size;
    int32_t version;
    const char *name;
    const char *type;
    const char *ns;
    const char *implementation;
    const char *module_file;
    uint32_t role;
    int32_t nb_inputs;
    int32_t nb_outputs;
    const int32_t *inputs;      /* tensor indices, -1 for an omitted input */
    const int32_t *outputs;
    int64_t workspace;          /* bytes */
    const char *choice;         /* why this implementation, one phrase */
    int32_t construct;          /* innermost loop or conditional, -1 */
    int32_t branch;             /* in a conditional's branch: 0 true,
                                   1 false; -1 otherwise */
    /* Appended: the tactic the layer was told to use (mica/layer.h's
     * tactics), 0 if it offers none. */
    int32_t tactic;
    int32_t reserved_;
    /* Appended: for a layer a fusion rule made, the rule and the layers
     * it replaced, "RULE: NAME (TYPE), NAME (TYPE), ..."; NULL otherwise. */
    const char *fused;
} mica_layer_info_t;

/*
 * Loops and conditionals of an engine.  Each covers the layers
 * [first_layer, end_layer) in execution order: its boundary layers (those
 * whose construct is this one and whose role is not MICA_ROLE_NONE), the
 * layers inside it, and the constructs nested in it.
 */
typedef enum mica_construct_kind {
    MICA_CONSTRUCT_LOOP = 0,
    MICA_CONSTRUCT_CONDITIONAL = 1
} mica_construct_kind_t;

typedef struct mica_construct_info {
    uint32_t struct_size;
    uint32_t kind;              /* mica_construct_kind_t */
    const char *name;
    int32_t parent;             /* enclosing construct, -1 at top level */
    int32_t first_layer;
    int32_t end_layer;
    int32_t branch;             /* inside a conditional: the branch it is
                                   in, 0 true, 1 false; -1 otherwise */
} mica_construct_info_t;

MICA_EXPORT int32_t mica_engine_nb_tensors(const mica_engine_t *engine);
MICA_EXPORT mica_status_t mica_engine_tensor(const mica_engine_t *engine,
                                             int32_t index,
                                             mica_tensor_info_t *info);
/* Index of the tensor named `name`, -1 if none. */
MICA_EXPORT int32_t mica_engine_find_tensor(const mica_engine_t *engine,
                                            const char *name);
/* Layers in execution order. */
MICA_EXPORT int32_t mica_engine_nb_layers(const mica_engine_t *engine);
MICA_EXPORT mica_status_t mica_engine_layer(const mica_engine_t *engine,
                                            int32_t index,
                                            mica_layer_info_t *info);
MICA_EXPORT int32_t mica_engine_nb_constructs(const mica_engine_t *engine);
MICA_EXPORT mica_status_t mica_engine_construct(const mica_engine_t *engine,
                                                int32_t index,
                                                mica_construct_info_t *info);
/* Network inputs and outputs, by position. Return tensor indices. */
MICA_EXPORT int32_t mica_engine_nb_inputs(const mica_engine_t *engine);
MICA_EXPORT int32_t mica_engine_input(const mica_engine_t *engine, int32_t i);
MICA_EXPORT int32_t mica_engine_nb_outputs(const mica_engine_t *engine);
MICA_EXPORT int32_t mica_engine_output(const mica_engine_t *engine, int32_t i);
/*
 * The graph passes that ran when the engine was built (docs/passes.md),
 * in the order they ran, each with what it changed: "constant-folding",
 * "302 layers folded".  An engine built without passes, or loaded from a
 * file written before passes existed, has none.  Pointers live as long
 * as the engine.
 */
typedef struct mica_pass_info {
    uint32_t struct_size;
    int32_t reserved_;
    const char *name;           /* the pass's name, as --passes takes it */
    const char *summary;        /* what it changed, one phrase */
    int64_t changed;            /* the number the summary counts */
} mica_pass_info_t;

MICA_EXPORT int32_t mica_engine_nb_passes(const mica_engine_t *engine);
MICA_EXPORT mica_status_t mica_engine_pass(const mica_engine_t *engine,
                                           int32_t index,
                                           mica_pass_info_t *info);
/* The name of graph pass `index` of this library, in the order the
 * builder runs them ("constant-folding", ...); NULL past the last. */
MICA_EXPORT const char *mica_pass_name(int32_t index);

/* Bytes of the activation arena on the engine's device (profile 0). */
MICA_EXPORT int64_t mica_engine_arena_bytes(const mica_engine_t *engine);

/* Optimization profiles of the engine (0 for a static network). */
MICA_EXPORT int32_t mica_engine_nb_profiles(const mica_engine_t *engine);
/* Bytes of the arena that profile k plans for its largest shapes. */
MICA_EXPORT int64_t mica_engine_profile_arena_bytes(const mica_engine_t *engine,
                                                    int32_t profile);
/*
 * Profile k's range for network input i (by position).  For a shape-tensor
 * input, *nb_values is its length and the values pointers are set (the
 * dims ones are then the input's fixed dims); otherwise *nb_values is 0.
 */
MICA_EXPORT mica_status_t mica_engine_profile_input(
    const mica_engine_t *engine, int32_t profile, int32_t input,
    mica_dims_t *min, mica_dims_t *opt, mica_dims_t *max, int32_t *nb_values,
    const int32_t **min_values, const int32_t **opt_values,
    const int32_t **max_values);

/*
 * The symbols that appear in symbolic shapes: a runtime dimension of an
 * input ("N" means "x[0]"), or a value computed at run time ("s[1]" of a
 * shape tensor).  Pointers live as long as the engine.
 */
MICA_EXPORT int32_t mica_engine_nb_symbols(const mica_engine_t *engine);
MICA_EXPORT mica_status_t mica_engine_symbol(const mica_engine_t *engine,
                                             int32_t index, const char **name,
                                             const char **meaning);

/* ---------------------------------------------------------------------
 * Engine files (build once, load where the modules are)
 *
 * An engine file holds the engine as built: each layer's (namespace,
 * type, version, implementation) with the state its serialize() wrote
 * (weights included), every tensor's type and symbolic shape, the loops
 * and conditionals, the device, and each profile's ranges and memory
 * plan.  It starts with a magic number, a format version and the ABI
 * version, and carries a checksum of its contents.  Loading restores the
 * engine without building it again, and checks all of it before anything
 * runs: a truncated or corrupted file, a format or ABI version this
 * library does not read, a layer whose module or implementation is not
 * registered, saved fields that do not fit their type's schema, or
 * anything that does not hold together is refused with one line naming
 * it.  Files of the older formats 1 and 2 still load (built again).
 *
 * The checksum finds damage, not forgery: whoever can write an engine
 * file can make its checksum match.  A file that passes every check may
 * still name any registered implementation, whose code then runs: load
 * engine files from sources you trust.
 * ------------------------------------------------------------------- */

/* The engine as bytes: *data is malloc'd (free it with mica_free). */
MICA_EXPORT mica_status_t mica_engine_serialize(const mica_engine_t *engine,
                                                void **data, size_t *size);
/*
 * An engine from bytes that mica_engine_serialize wrote.  The bytes are
 * only read during the call: the caller may free them as soon as it
 * returns, and the layers copy what they keep (their weights included).
 */
MICA_EXPORT mica_status_t mica_engine_deserialize(mica_context_t *ctx,
                                                  const void *data,
                                                  size_t size,
                                                  mica_engine_t **out);
/*
 * As mica_engine_deserialize, without copying: the engine's layers (and
 * their clones in execution contexts) may keep pointers into the bytes,
 * weights used in place, so they must stay valid and unchanged until
 * mica_engine_destroy(*out) returns.  The caller keeps them and frees
 * them after that (after a failed call, at once).  Give them an address
 * aligned at 64 bytes (aligned_alloc, a mapping) for weights aligned as
 * in a loaded file; a module copies what is not aligned enough for it.
 */
MICA_EXPORT mica_status_t mica_engine_deserialize_borrow(mica_context_t *ctx,
                                                         const void *data,
                                                         size_t size,
                                                         mica_engine_t **out);
/* Write an engine file (complete or absent: written aside, then renamed). */
MICA_EXPORT mica_status_t mica_engine_save(const mica_engine_t *engine,
                                           const char *path);
/*
 * Read an engine file: the file is mapped read-only (or, where it cannot
 * be, read into one buffer) and the engine keeps the mapping until it is
 * destroyed, its layers using their weights in place in it, as with
 * mica_engine_deserialize_borrow.  The file must not be changed in place
 * while the engine lives (replacing it, as mica_engine_save and
 * `mica build` do, is fine).
 */
MICA_EXPORT mica_status_t mica_engine_load(mica_context_t *ctx,
                                           const char *path,
                                           mica_engine_t **out);
/* Whether the file at path starts like an engine file (1) or not (0). */
MICA_EXPORT int32_t mica_engine_file_probe(const char *path);
/* Free memory that mica allocated for the caller. */
MICA_EXPORT void mica_free(void *p);

/* ---------------------------------------------------------------------
 * Execution contexts
 * ------------------------------------------------------------------- */

/*
 * An execution context of an engine: a clone of every layer, an arena, a
 * stream.  Destroy it before the engine (the clones may share the
 * engine's weights).
 */
MICA_EXPORT mica_status_t mica_exec_create(mica_engine_t *engine,
                                           mica_exec_t **out);
MICA_EXPORT void mica_exec_destroy(mica_exec_t *exec);

/*
 * Give input `name` its dimensions and host data (dims->nb_dims and the
 * element type must match the input; runtime dimensions take the values
 * given).  The data is read by the next run or upload, so it must stay
 * valid until then; the values of a shape-tensor input are read at once.
 */
MICA_EXPORT mica_status_t mica_exec_set_input(mica_exec_t *exec,
                                              const char *name,
                                              const mica_dims_t *dims,
                                              const void *data);

/*
 * Choose the optimization profile for the next runs (-1: automatic, the
 * first profile that admits the inputs' shapes, the default).  Switching
 * between runs is allowed; configure is called again for the new one.
 */
MICA_EXPORT mica_status_t mica_exec_set_profile(mica_exec_t *exec,
                                                int32_t profile);
/* The profile of the last run (or the one set), -1 before any. */
MICA_EXPORT int32_t mica_exec_profile(const mica_exec_t *exec);

/*
 * Phase 1 alone: check the inputs' shapes against the profiles, compute
 * shape tensors on the host and every tensor's dimensions.  upload and
 * run do it when the inputs changed; call it to learn output shapes first.
 */
MICA_EXPORT mica_status_t mica_exec_infer_shapes(mica_exec_t *exec);

/*
 * Bind input or output `name` to memory the caller owns on the engine's
 * device (CUDA device memory, or host memory for a CPU engine): layers
 * read or write it there directly, and upload or download skip it.  For an
 * input, dims are its dimensions now (as with set_input); for an output,
 * dims is NULL and the memory must hold the output at the current shapes
 * (see mica_exec_tensor_dims).  ptr NULL unbinds.  Shape-tensor inputs
 * cannot be bound: their values are needed on the host.
 */
MICA_EXPORT mica_status_t mica_exec_bind(mica_exec_t *exec, const char *name,
                                         const mica_dims_t *dims, void *ptr);

/*
 * Enqueue on `stream` (a cudaStream_t for a CUDA engine) instead of the
 * context's own stream; NULL returns to its own.  The caller keeps it
 * alive while the context uses it and synchronizes it (mica_exec_sync
 * does).
 */
MICA_EXPORT mica_status_t mica_exec_set_stream(mica_exec_t *exec,
                                               void *stream);

/* The dimensions of tensor `name` for the inputs as set (runs phase 1). */
MICA_EXPORT mica_status_t mica_exec_tensor_dims(mica_exec_t *exec,
                                                const char *name,
                                                mica_dims_t *dims);

/* Run once: upload inputs, enqueue every layer, download outputs, wait. */
MICA_EXPORT mica_status_t mica_exec_run(mica_exec_t *exec);

/*
 * The same in parts, for timing the device work alone: upload copies the
 * inputs given by set_input to the device; enqueue queues every layer on
 * the context's stream; download queues the output copies to host; sync
 * waits for all of it.  run() is upload + enqueue + download + sync.
 */
MICA_EXPORT mica_status_t mica_exec_upload(mica_exec_t *exec);
MICA_EXPORT mica_status_t mica_exec_enqueue(mica_exec_t *exec);
MICA_EXPORT mica_status_t mica_exec_download(mica_exec_t *exec);
MICA_EXPORT mica_status_t mica_exec_sync(mica_exec_t *exec);

/*
 * Output `name` after the last run: descriptor and host data, valid until
 * the next run or destroy.  Outputs for shapes (mica_network_mark_shape_
 * output) are read the same way, after phase 1.
 */
MICA_EXPORT mica_status_t mica_exec_get_output(mica_exec_t *exec,
                                               const char *name,
                                               mica_tensor_desc_t *desc,
                                               const void **data);

/* ---------------------------------------------------------------------
 * Timing of runs (mica bench).  Off by default; a context that never
 * turns it on pays one test of a pointer per layer.
 * ------------------------------------------------------------------- */

/* What to time (bits of mica_exec_set_timing). */
#define MICA_TIMING_STAGES 1u /* upload, enqueue and download */
#define MICA_TIMING_LAYERS 2u /* every layer's enqueue (and boundary step) */

/*
 * Time the next runs of exec (`what`: MICA_TIMING_* bits) or stop (0).
 * Turning it on records the context's time origin on its stream and
 * waits for it.  Markers go on the stream in order with the work: CUDA
 * events on CUDA, the host clock on the CPU (whose layers have finished
 * when enqueue returns).  MICA_TIMING_LAYERS records one more marker
 * after every layer, which adds host time to each enqueue.  While timing
 * is on, the context keeps its outputs' host copies in memory the device
 * copies to directly (pinned on CUDA), as its copies are then timed.
 */
MICA_EXPORT mica_status_t mica_exec_set_timing(mica_exec_t *exec,
                                               uint32_t what);

typedef struct mica_exec_times {
    uint32_t struct_size;      /* sizeof(mica_exec_times_t) */
    uint32_t what;             /* what was timed (MICA_TIMING_* bits) */
    /* Milliseconds on the device's clock since the time origin: when the
     * last upload, enqueue and download started and ended (start == end
     * == -1 for a part that has not run since timing was turned on). */
    double upload_start, upload_end;
    double enqueue_start, enqueue_end;
    double download_start, download_end;
} mica_exec_times_t;

/*
 * The times of the last upload, enqueue and download, waiting for them
 * to complete.  MICA_ERR_INVALID when timing is off.
 */
MICA_EXPORT mica_status_t mica_exec_times(mica_exec_t *exec,
                                          mica_exec_times_t *times);

/*
 * The device time of each layer during the last enqueue, in execution
 * order (mica_engine_layer's index): ms[i] milliseconds over runs[i]
 * enqueues (a layer inside a loop runs once per trip; 0 for a layer that
 * did not run: its outputs empty, a branch not taken, only shape
 * tensors).  nb must be mica_engine_nb_layers; runs may be NULL.  Waits
 * for the enqueue to complete; needs MICA_TIMING_LAYERS.
 */
MICA_EXPORT mica_status_t mica_exec_layer_times(mica_exec_t *exec,
                                                double *ms, int32_t *runs,
                                                int32_t nb);

/* ---------------------------------------------------------------------
 * CUDA graphs of a context's enqueue.  Off by default; `mica bench`
 * turns them on where they are valid.
 * ------------------------------------------------------------------- */

/*
 * Replay each enqueue as a CUDA graph (on != 0) or run it layer by layer
 * (0, the default).  With graphs on, the first enqueue for a key runs
 * layer by layer (modules load libraries and allocate then), the second
 * is captured into a graph and launched, and later ones launch the graph:
 * one launch instead of one per layer.  The key is everything the layers'
 * launches depend on: the profile, the inputs' dims and shape-tensor
 * values, the bound pointers and the arena, so a new shape or binding
 * captures a graph of its own; the context keeps the 8 used last.  A
 * layer configured for another profile, or told new shapes through its
 * shape_change hook, may move memory of its own, so all graphs are
 * captured again after either.  A layer must not move memory its
 * launches use otherwise (as TensorRT requires of plugins in graphs).
 *
 * What cannot run as a graph runs layer by layer, with the reason given
 * by mica_exec_cuda_graph_why: loops and conditionals (their trip counts,
 * predicates and conditions are read on the host), data-dependent output
 * sizes (read back on the host), per-layer timing (MICA_TIMING_LAYERS),
 * and a layer whose enqueue cannot be captured (it waits for the host or
 * allocates memory): that key then keeps running layer by layer.  A
 * capture never gives a wrong result: it fails, and that enqueue runs as
 * without graphs.  Work a layer's enqueue does on the host (reading
 * values, checks) happens at the capture only: replays repeat the device
 * work alone (as TensorRT requires of plugins in graphs).
 *
 * MICA_ERR_INVALID, and nothing changes, when on != 0 for an engine on a
 * device without graphs (the CPU); 0 is accepted on any device.  Turning
 * graphs off frees every graph.
 */
MICA_EXPORT mica_status_t mica_exec_set_cuda_graph(mica_exec_t *exec,
                                                   int32_t on);

/*
 * NULL while the context's enqueues use CUDA graphs; otherwise one line
 * saying why not: "CUDA graphs are off" (not turned on), "the engine
 * runs on the CPU", "the network has a while loop (layer 'w'): its
 * predicate is read on the host every trip", "per-layer timing is on",
 * "layer 'y' (Scatter) could not be captured: ...", and so on.  A reason
 * of the last enqueue's key (its capture failed) appears after that
 * enqueue.  Valid until the next call on the context.
 */
MICA_EXPORT const char *mica_exec_cuda_graph_why(const mica_exec_t *exec);

/* What the context's graphs did since they were turned on. */
typedef struct mica_cuda_graph_counts {
    uint32_t struct_size;   /* sizeof(mica_cuda_graph_counts_t) */
    int32_t cached;         /* graphs held now (at most 8) */
    int64_t captures;       /* graphs captured */
    int64_t replays;        /* enqueues that launched a graph */
    int64_t warmups;        /* first enqueues of a key, layer by layer */
    int64_t fallbacks;      /* other enqueues layer by layer, graphs on */
    int64_t failures;       /* captures or launches that failed (that key
                               falls back) */
    int64_t evictions;      /* graphs dropped for a newer key */
} mica_cuda_graph_counts_t;

/*
 * The counts, written as far as counts->struct_size says (set it first);
 * all zero while graphs were never turned on.
 */
MICA_EXPORT mica_status_t mica_exec_cuda_graph_counts(
    const mica_exec_t *exec, mica_cuda_graph_counts_t *counts);

/*
 * CPU threads (ONNX Runtime's intra_op_num_threads): at most `threads`
 * threads for each CPU layer this context runs, mica's own parallel
 * kernels and oneDNN's alike; 0 (the default) leaves OpenMP's default
 * (OMP_NUM_THREADS, else every CPU).  Small layers run on the calling
 * thread whatever the setting.  Threads wait passively between layers
 * (OMP_WAIT_POLICY=passive) unless the environment asked otherwise
 * before the first CPU layer ran (OMP_WAIT_POLICY=active spins: faster
 * on an idle machine, costly on a shared one).  MICA_ERR_INVALID, and
 * nothing changes, for a negative count; any device accepts it (on CUDA
 * it serves the layers that run on the host).
 */
MICA_EXPORT mica_status_t mica_exec_set_threads(mica_exec_t *exec,
                                                int32_t threads);
/* The count set by mica_exec_set_threads (0: the default). */
MICA_EXPORT int32_t mica_exec_threads(const mica_exec_t *exec);

/*
 * Host memory for an engine's inputs that its device copies from
 * directly (pinned on CUDA, plain on the CPU); free it with
 * mica_engine_host_free, before the engine is destroyed.
 */
MICA_EXPORT mica_status_t mica_engine_host_alloc(mica_engine_t *engine,
                                                 size_t bytes, void **out);
MICA_EXPORT void mica_engine_host_free(mica_engine_t *engine, void *p);

/* ---------------------------------------------------------------------
 * Manifests (see the manifest format in the project's documentation)
 * ------------------------------------------------------------------- */

/*
 * Parse and check a manifest, load the modules it names into ctx, and
 * describe its network.  Errors name file:line:column and the layer or
 * field.
 */
MICA_EXPORT mica_status_t mica_manifest_load(mica_context_t *ctx,
                                             const char *path,
                                             mica_manifest_t **out);
/*
 * mica_manifest_load of a manifest held in memory: `text` (len bytes; a
 * final NUL is not needed) is read as the file `name` would be.  name
 * appears in messages, and the files the manifest names (weights) are
 * relative to its folder.
 */
MICA_EXPORT mica_status_t mica_manifest_load_text(mica_context_t *ctx,
                                                  const char *name,
                                                  const char *text,
                                                  size_t len,
                                                  mica_manifest_t **out);
MICA_EXPORT void mica_manifest_destroy(mica_manifest_t *m);
MICA_EXPORT mica_network_t *mica_manifest_network(mica_manifest_t *m);
/* The manifest's device and modules.prefer as a build configuration. */
MICA_EXPORT const mica_build_config_t *mica_manifest_config(const mica_manifest_t *m);
/* The manifest's `name`, or "" if it has none. */
MICA_EXPORT const char *mica_manifest_name(const mica_manifest_t *m);

/* ---------------------------------------------------------------------
 * ONNX import (docs/onnx.md).  A build configured without the importer
 * answers MICA_ERR_UNSUPPORTED, saying why, and mica_onnx_available() 0.
 * ------------------------------------------------------------------- */

typedef struct mica_onnx_model mica_onnx_model_t;

/* What an import is told.  Zero it, set struct_size, fill what you need. */
typedef struct mica_onnx_options {
    uint32_t struct_size;     /* sizeof(mica_onnx_options_t) */
    int32_t reserved_;
    /* The profile of the inputs with runtime dimensions (ONNX dimensions
     * given by name or unknown), as trtexec takes them:
     * "NAME:1x3x224x224,NAME2:8x128"; for a shape-tensor input, its values
     * ("k:3"; negative values allowed).  `shapes` sets min, opt and max at
     * once; the others override it.  NULL: none. */
    const char *shapes;
    const char *min_shapes;
    const char *opt_shapes;
    const char *max_shapes;
    /* The inputs it will run with (mica run MODEL.onnx --input ...): an
     * input the shapes above leave out takes its profile from the one
     * given here, its dimensions (min = opt = max), or its values for a
     * shape-tensor input (int32 or int64 data).  nb_inputs 0: none; a
     * NULL name (or input_names NULL) stands for the input at that
     * position among the model's inputs. */
    int32_t nb_inputs;
    int32_t reserved2_;
    const char *const *input_names;
    const mica_tensor_desc_t *input_descs;
    const void *const *input_data;
} mica_onnx_options_t;

/* 1 where this build has the importer, else 0. */
MICA_EXPORT int32_t mica_onnx_available(void);

/* 1 if the file's first bytes are those of an ONNX model, else 0. */
MICA_EXPORT int32_t mica_onnx_file_probe(const char *path);

/*
 * Import the ONNX model at `path` (external data files are read from its
 * folder): every node becomes mica layers, initializers weights.  A third
 * party's operator maps onto the layer type of its name (and domain, as
 * namespace) registered in ctx.  Refusals are one line naming the node,
 * its op type, the opset and what is not supported.  opt may be NULL.
 */
MICA_EXPORT mica_status_t mica_onnx_import(mica_context_t *ctx,
                                           const char *path,
                                           const mica_onnx_options_t *opt,
                                           mica_onnx_model_t **out);
MICA_EXPORT void mica_onnx_destroy(mica_onnx_model_t *model);

/*
 * Check the ONNX model at `path` in one pass, as polygraphy inspect does:
 * every node the import cannot map is one line of *report (malloc'd,
 * free with mica_free; "node 'NAME' (OP, opset N): why"), the nodes that
 * only read their outputs are skipped (their own refusals would repeat
 * it), and a problem of the whole (an input without its profile) is a
 * line too.  *nb_nodes is the
 * model's nodes (its graph's, not counting subgraphs), *nb_refused the
 * lines.  MICA_OK when the file was read (whatever it found); a file
 * that is not a model fails as mica_onnx_import does.
 */
MICA_EXPORT mica_status_t mica_onnx_check(mica_context_t *ctx,
                                          const char *path,
                                          const mica_onnx_options_t *opt,
                                          char **report, int32_t *nb_nodes,
                                          int32_t *nb_refused);

/*
 * Write the manifest to `yaml_path` and its weights beside it (the same
 * name with ".weights" in place of a ".yaml"/".yml" ending, referenced by
 * `file:` and `offset:`).  Both are complete or neither is there.
 */
MICA_EXPORT mica_status_t mica_onnx_save(mica_onnx_model_t *model,
                                         const char *yaml_path);

/* The manifest in memory, as mica_manifest_load gives one. */
MICA_EXPORT mica_status_t mica_onnx_manifest(mica_onnx_model_t *model,
                                             mica_manifest_t **out);

/*
 * The manifest's text naming `weights_file` for its weights (malloc'd,
 * free with mica_free; *len its length), and the weights' bytes (owned by
 * the model, assembled in memory on the first call).
 */
MICA_EXPORT char *mica_onnx_manifest_text(mica_onnx_model_t *model,
                                          const char *weights_file,
                                          size_t *len);
MICA_EXPORT const void *mica_onnx_weights(mica_onnx_model_t *model,
                                          int64_t *bytes);
/* The size of the weights file, without assembling it. */
MICA_EXPORT int64_t mica_onnx_weights_size(const mica_onnx_model_t *model);

/*
 * The operators the importer maps: i from 0 while it answers MICA_OK;
 * *op the ONNX op type, *layers the mica layer types it becomes.
 */
MICA_EXPORT mica_status_t mica_onnx_op(int32_t i, const char **op,
                                       const char **layers);

/*
 * Read a serialized TensorProto file (an ONNX test's input_0.pb): its
 * element type in mica's terms (int64 stays MICA_INT64 here), dims, and
 * the values in *data (free with mica_free).
 */
MICA_EXPORT mica_status_t mica_onnx_read_tensor(mica_context_t *ctx,
                                                const char *path,
                                                mica_tensor_desc_t *desc,
                                                void **data);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MICA_H */
