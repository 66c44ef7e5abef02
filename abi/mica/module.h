/*
 * mica/module.h - what a module exports and what the host offers it.
 *
 * A module is a shared object with one exported entry symbol,
 * `mica_module_init` (MICA_MODULE_ENTRY).  The host calls it with its host
 * service table and its ABI version; the module answers with a descriptor
 * naming the ABI version it was built against and its layer creators.
 *
 * Version negotiation (as Vulkan's loader does it): the host offers the
 * highest ABI version it speaks in host->abi_version and accepts modules
 * built against any version from MICA_ABI_VERSION_MIN to that one.  A
 * module that needs newer host services than host->abi_version provides
 * returns MICA_ERR_ABI.  Both sides read the other's structs only up to
 * their struct_size, so either side may be newer within one major line.
 *
 * A module never links against libmica: everything it needs from the host
 * comes through mica_host_t (as Redis modules and SQLite extensions do).
 *
 *     #include <mica/module.h>
 *     static const mica_host_t *host;
 *     MICA_EXPORT mica_status_t
 *     mica_module_init(const mica_host_t *h, const mica_module_desc_t **out,
 *                      mica_error_t *err)
 *     {
 *         host = h;
 *         *out = &my_descriptor;
 *         return MICA_OK;
 *     }
 */
#ifndef MICA_MODULE_H
#define MICA_MODULE_H

#include "mica/types.h"
#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version these headers describe, and the oldest the host loads. */
#define MICA_ABI_VERSION 1
#define MICA_ABI_VERSION_MIN 1

/* The entry symbol, as a string for dlsym and as a name. */
#define MICA_MODULE_ENTRY mica_module_init
#define MICA_MODULE_ENTRY_NAME "mica_module_init"

/*
 * The services the host offers every module.  Valid from init until the
 * module is unloaded; keep the pointer.  New services are appended; check
 * MICA_HOST_HAS(host, member) before calling one added after version 1.
 */
typedef struct mica_host {
    uint32_t struct_size;  /* sizeof(mica_host_t) as the host built it */
    uint32_t abi_version;  /* the host's MICA_ABI_VERSION */

    /* Log a message; `origin` names the module or layer, may be NULL. */
    void (*log)(mica_log_level_t level, const char *origin,
                const char *fmt, ...) MICA_PRINTF(3, 4);

    /* Fill a call's error slot (one line, no trailing newline). */
    void (*set_error)(mica_error_t *err, const char *fmt, ...)
        MICA_PRINTF(2, 3);

    /* Dimension expressions (TensorRT's IExprBuilder). */
    const mica_expr_t *(*expr_constant)(mica_expr_builder_t *eb,
                                        int64_t value);
    const mica_expr_t *(*expr_operation)(mica_expr_builder_t *eb,
                                         mica_expr_op_t op,
                                         const mica_expr_t *a,
                                         const mica_expr_t *b);
    /* Non-zero if `e` is a build-time constant; its value then. */
    int32_t (*expr_is_constant)(const mica_expr_t *e);
    int64_t (*expr_constant_value)(const mica_expr_t *e);

    /* Name of a dtype ("float32") and of a status ("invalid argument"). */
    const char *(*dtype_name)(mica_dtype_t dtype);
    const char *(*status_name)(mica_status_t status);

    /* ---- appended after version 1's first members: check
     * MICA_HOST_HAS(host, member) before calling one ---- */

    /*
     * A data-dependent size (TensorRT's IExprBuilder::declareSizeTensor),
     * for a layer whose output's size is known only once it has run
     * (NonZero): the expression of that dimension, to put in the
     * output's dims from output_dims.  The layer writes the actual size,
     * at most `upper` (an expression of its inputs' dimensions and
     * values, >= 0), into its output `size_output`: a 0-D int32 or int64
     * output of its own.  Call it only from output_dims (elsewhere, or
     * for an output that is not 0-D, it returns NULL); calling it again
     * for the same size_output gives the same expression.
     *
     * The core plans memory for the upper bound, and enqueue sees the
     * data-dependent output at its upper bound (the memory it may fill).
     * Once the layer has run, the core reads the size output back (on
     * CUDA a copy to the host and a wait for the stream: the one place
     * such a layer makes the host wait), refuses a size over the bound,
     * and every shape that depends on it follows: the layers after it
     * run with the actual shapes (shape_change is told them), and the
     * network's outputs have them.  Such a layer runs on the device only:
     * its data-dependent outputs cannot be shape tensors nor feed one,
     * and it cannot be inside a loop or a conditional.
     */
    const mica_expr_t *(*expr_size)(mica_expr_builder_t *eb,
                                    int32_t size_output,
                                    const mica_expr_t *upper);

    /*
     * The number of CPU threads the layer being enqueued may use: what
     * the application asked of the execution context running it
     * (mica_exec_set_threads), 0 where it asked nothing (then OpenMP's
     * default: OMP_NUM_THREADS, else every CPU).  A CPU implementation
     * that runs threads of its own (OpenMP, oneDNN) uses at most that
     * many for this call.
     */
    int32_t (*cpu_threads)(void);
} mica_host_t;

/* Whether the host table `h` has member `m` (a service added later). */
#define MICA_HOST_HAS(h, m) \
    ((h)->struct_size >= offsetof(mica_host_t, m) + sizeof((h)->m) && (h)->m)

/* ---- fusion rules ------------------------------------------------------
 *
 * A module may declare rules that replace a chain of layers by one layer
 * of a type it implements (TensorRT's fusions, as modules).  The builder
 * (core/fusion.c) matches every rule on the network before it chooses
 * implementations, unless fusion is off (mica_build_config_t's no_fusion,
 * `mica build --no-fusion`).  A chain is steps[0] -> steps[1] -> ...: each
 * step after the first reads the output of the step before it; every
 * step but the last has one output, read by the next step alone and not
 * a network output; all steps are in the same loop and conditional (or
 * none).  The rule fires only where its type has an implementation for
 * the build's device; its layer then takes the name of the last step and
 * its outputs, and `mica inspect` shows what it replaced.  The longest
 * rules are tried first, then in the order modules were loaded.
 */

/* A test on a param of a matched layer: the param's value, as text (an
 * int, float, bool 0/1, string or enum name, a param of one value), is
 * one of values[0..nb_values); nb_values 0: the param is not given; an
 * empty string among the values: not given, or one of the others (a
 * default written out or left out: {"", "none"}). */
typedef struct mica_fusion_cond {
    const char *field;
    const char *const *values;
    int32_t nb_values;
    int32_t reserved_;
} mica_fusion_cond_t;

/* Which input of the step before feeds this one: any input, or one. */
#define MICA_FUSION_ANY_INPUT (-1)

/* One layer of a pattern. */
typedef struct mica_fusion_step {
    const char *type;             /* the layer type (default namespace) */
    int32_t input;                /* steps after the first: the input the
                                     step before feeds, or
                                     MICA_FUSION_ANY_INPUT */
    int32_t nb_inputs;            /* the inputs it must have (given or
                                     omitted), 0: any number */
    const mica_fusion_cond_t *conds;
    int32_t nb_conds;
    int32_t reserved_;
} mica_fusion_step_t;

/* An input of a step, as the fused layer's input: `input` of steps[step];
 * MICA_FUSION_OTHER_INPUT: the one input of a two-input step that the
 * step before does not feed. */
#define MICA_FUSION_OTHER_INPUT (-2)
typedef struct mica_fusion_ref {
    int32_t step;
    int32_t input;
} mica_fusion_ref_t;

/* A param of the fused layer: `from`, a param of steps[step], copied as
 * `field` when that layer has it. */
typedef struct mica_fusion_param {
    const char *field;
    int32_t step;
    int32_t reserved_;
    const char *from;
} mica_fusion_param_t;

typedef struct mica_fusion_rule {
    uint32_t struct_size;         /* sizeof(mica_fusion_rule_t) */
    int32_t reserved_;
    const char *name;             /* "conv_bias_relu", unique in the module */
    const char *type;             /* the fused layer's type: the module's */
    const mica_fusion_step_t *steps;
    int32_t nb_steps;             /* 1 or more */
    int32_t nb_inputs;            /* the fused layer's inputs ... */
    const mica_fusion_ref_t *inputs;  /* ... each a step's input */
    const mica_fusion_param_t *params; /* its params, from the steps' */
    int32_t nb_params;
    int32_t nb_constants;
    const mica_field_t *constants;    /* and these, as they are */
    void *reserved2_[2];

    /* ---- appended after version 1's first layout (struct_size tells
     * whether a rule has them): patterns that are not chains, tests on
     * the tensors, params read from constants ---- */

    /* Links: with nb_links > 0 the pattern is a DAG.  Step 0 is where a
     * match starts; every later step has at least one link from an
     * earlier step, or makes what an earlier step reads (a link from it
     * into an earlier step: the two scaled operands of an attention's
     * product, found from the product), and each step's `input` member
     * is then not read.  An
     * inner tensor (an output of a step but the last) may have several
     * readers, all steps of the match, and is no network output. */
    const struct mica_fusion_link *links;
    int32_t nb_links;
    int32_t nb_tensor_conds;
    const struct mica_fusion_tensor_cond *tensor_conds; /* all must hold */
    const struct mica_fusion_const_param *const_params; /* float params */
    int32_t nb_const_params;
    int32_t reserved3_;

    /* ---- appended next: weights params read from Constants ---- */
    const struct mica_fusion_weight_param *weight_params;
    int32_t nb_weight_params;
    int32_t reserved4_;
} mica_fusion_rule_t;

/* A tensor from outside the pattern (mica_fusion_link_t's `from`). */
#define MICA_FUSION_OUTER (-1)

/* Input `input` of steps[step] (or either input of a two-input step:
 * MICA_FUSION_ANY_INPUT) reads output `output` of steps[from], an
 * earlier step; or, with from MICA_FUSION_OUTER, the outside tensor
 * numbered `output`: every link of the same number reads one tensor
 * (x read by both a ReduceMean and a Sub).  Only an outer link may name
 * step 0. */
typedef struct mica_fusion_link {
    int32_t step;
    int32_t input;
    int32_t from;
    int32_t output;
} mica_fusion_link_t;

/* Which tensor of a step a test or a param names: an input (>= 0), the
 * input of a two-input step that no step of the match feeds
 * (MICA_FUSION_OTHER_INPUT), or output k (MICA_FUSION_OUTPUT(k)). */
#define MICA_FUSION_OUTPUT(k) (-16 - (k))

/* What a constant must be (mica_fusion_tensor_cond_t's `constant`). */
enum {
    MICA_FUSION_ANY_TENSOR = 0,  /* no test of its values */
    MICA_FUSION_CONSTANT = 1,    /* made by a Constant layer */
    MICA_FUSION_SPLAT = 2        /* a Constant whose every element is
                                    `value` within `rtol` */
};

/* A test on a tensor of a matched step: its type among `dtypes` (bits
 * 1u << mica_dtype_t; 0: any), its rank in [min_rank, max_rank] (-1:
 * no bound), and what it holds.  Types and ranks are those the builder
 * infers for the network as written (float32 before --fp16 rewrites
 * it). */
typedef struct mica_fusion_tensor_cond {
    int32_t step;
    int32_t tensor;               /* an input, OTHER_INPUT or OUTPUT(k) */
    uint32_t dtypes;
    int32_t min_rank, max_rank;
    int32_t constant;             /* MICA_FUSION_ANY_TENSOR, ... */
    double value, rtol;
} mica_fusion_tensor_cond_t;

/* How a const param turns the constant's value v into the param:
 * MICA_FUSION_PRODUCT multiplies v into the param of the same field that
 * an earlier const param of the rule set (an attention that scales q and
 * k each by the root of its scale). */
enum {
    MICA_FUSION_VALUE = 0,
    MICA_FUSION_RECIPROCAL = 1,
    MICA_FUSION_PRODUCT = 2
};

/* A float param `field` of the fused layer: the value of the constant
 * (every element equal; a Constant layer's) that tensor `tensor` of
 * steps[step] reads, as it is or its reciprocal (`op`): epsilon from
 * an Add, an attention scale from a Div. */
typedef struct mica_fusion_const_param {
    const char *field;
    int32_t step;
    int32_t tensor;
    int32_t op;
    int32_t reserved_;
} mica_fusion_const_param_t;

/* A weights param `field` of the fused layer: the values of the Constant
 * layer that makes tensor `tensor` of steps[step] (the weights of a
 * product, its bias), as they are (type, count, dims).  The rule matches
 * only where that tensor is a Constant's; the fused layer does not read
 * it as an input, and a Constant that no layer reads afterwards goes. */
typedef struct mica_fusion_weight_param {
    const char *field;
    int32_t step;
    int32_t tensor;
} mica_fusion_weight_param_t;

/* What the module tells the host about itself. Static data, normally. */
typedef struct mica_module_desc {
    uint32_t struct_size;  /* sizeof(mica_module_desc_t) as the module saw it */
    uint32_t abi_version;  /* MICA_ABI_VERSION the module was built against */

    const char *name;        /* "elementwise", "bar" */
    const char *version;     /* the module's own version, "1.0.0" */
    const char *license;     /* "MIT", may be NULL */
    const char *description; /* one line, may be NULL */

    const mica_layer_creator_t *const *creators;
    int32_t nb_creators;
    int32_t reserved_;

    /* Optional: called before the host unloads the module. */
    void (*fini)(void);

    void *reserved2_[4];

    /* ---- appended after version 1's first layout: the host reads them
     * only when struct_size covers them ---- */

    /* Fusion rules (above); NULL and 0: none. */
    const mica_fusion_rule_t *const *fusion_rules;
    int32_t nb_fusion_rules;
    int32_t reserved3_;
} mica_module_desc_t;

/* The type of the entry symbol. */
typedef mica_status_t (*mica_module_init_fn)(const mica_host_t *host,
                                             const mica_module_desc_t **desc,
                                             mica_error_t *err);

/* Declaration of the entry symbol, for modules to define. */
MICA_EXPORT mica_status_t mica_module_init(const mica_host_t *host,
                                           const mica_module_desc_t **desc,
                                           mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MODULE_H */
