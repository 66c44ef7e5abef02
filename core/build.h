/*
 * core/build.h - the state of one engine build, shared by the build steps
 * (build.c: graph structure and implementations; infer.c: tensor kinds,
 * types and symbolic shapes; profile.c: profiles and memory plans).
 */
#ifndef MICA_BUILD_H
#define MICA_BUILD_H

#include "graph.h"

typedef struct mica__build {
    mica_network_t *net;
    mica_context_t *ctx;
    mica_engine_t *e;
    const mica_build_config_t *cfg;
    int validate_only;
    int facts;               /* for the graph passes: mica__build_facts */
    int again;               /* a rewritten network's second build */
    int autotune;            /* time the candidate implementations */
    mica__index_t names;     /* tensor name -> tensor index */
    int32_t *def_layer;      /* per tensor: network layer index, -1 inputs */
    int32_t *def_slot;       /* per tensor: output position */
    int32_t *order;          /* network layer indices in execution order */
    int32_t *role;           /* per network layer: mica_layer_role_t of
                                its type, as the registry has it */
    int32_t *step_construct; /* per step: innermost construct, -1 */
    int32_t *step_branch;    /* per step: branch of its conditional, -1 */
} mica__build_t;

/* graph_order.c */
/* The tensor named `name`, -1 if none. */
int32_t mica__tensor_of(const mica__build_t *b, const char *name);
/* Collect tensors: inputs, then each layer's outputs; no name twice. */
mica_status_t mica__define_tensors(mica__build_t *b);
/* Resolve references and order the layers (b->order; Kahn, stable),
 * refusing a cycle with the layers on it. */
mica_status_t mica__order_layers(mica__build_t *b);

/* choose.c */
/* Choose the creator of network layer nl for the engine's device (into
 * l->info), recording why. */
mica_status_t mica__choose(mica__build_t *b, const mica__net_layer_t *nl,
                           mica__layer_t *l);
/*
 * The deploy-time choices (the context's, else $MICA_PREFER) well formed
 * and naming layer types the registry knows; an error naming the known
 * types otherwise.
 */
mica_status_t mica__deploy_check(mica_context_t *ctx);
/* Every layer that runs on the device has an implementation for it. */
mica_status_t mica__check_devices(mica__build_t *b);

/* control.c */
/* Every layer's role (b->role), from the registry. */
mica_status_t mica__control_roles(mica__build_t *b);
/*
 * Loops and conditionals: find them from the boundary layers and the
 * data flow, check their nesting, and put b->order in an order where
 * each one's layers are contiguous; write the engine's constructs and
 * program.  b->order holds a topological order (back edges left out) on
 * entry.
 */
mica_status_t mica__control_plan(mica__build_t *b);
/* After the kinds: what must hold of the layers in loops and
 * conditionals (back edges of the right type and shape, no shape tensor
 * computed inside); the constructs' liveness. */
mica_status_t mica__control_check(mica__build_t *b);

/* The network layer behind engine layer `step`. */
static inline const mica__net_layer_t *mica__net_layer(const mica__build_t *b,
                                                       int32_t step)
{
    return &b->net->layers[b->order[step]];
}

/* instance.c */
/* Create the instance of layer l (network layer nl) from its params or
 * saved state, and check that its output count matches. */
mica_status_t mica__instantiate(mica__build_t *b,
                                const mica__net_layer_t *nl,
                                mica__layer_t *l);
/* "ORIGIN: layer 'NAME' (TYPE): MESSAGE" from a module's error slot. */
mica_status_t mica__layer_fail(mica__build_t *b, int32_t step,
                               const mica_error_t *err, const char *fallback);

/* infer.c */
/* Add a symbol to the engine; returns its expression, NULL on failure. */
const mica_expr_t *mica__add_symbol(mica__build_t *b,
                                    mica__symbol_kind_t kind, int32_t input,
                                    int32_t tensor, int32_t axis,
                                    const char *name, const char *meaning);
/* "t" or "t[k]": value k of a shape tensor of rank `rank`. */
void mica__value_name(const char *tensor, int32_t k, int32_t rank,
                      char *buf, size_t len);
/* Shape text "[N, 6]" of t, and its constant dims (-1 where symbolic). */
mica_status_t mica__describe_shape(mica__build_t *b, mica__tensor_t *t);
mica_status_t mica__infer_inputs(mica__build_t *b);
mica_status_t mica__infer_kinds(mica__build_t *b);
mica_status_t mica__infer_host_instances(mica__build_t *b);
mica_status_t mica__infer_layer(mica__build_t *b, int32_t step);
mica_status_t mica__infer_check_inputs(mica__build_t *b);

/* The other implementations of layer l's (namespace, type, version) for
 * the engine's device, best priority first (infer.c); *n gets their
 * number.  Free the array. */
mica_creator_info_t *mica__alternatives(mica__build_t *b,
                                        const mica__layer_t *l, int32_t *n);
/*
 * An instance of network layer nl (read from an engine file of format 1
 * or 2) from its saved state (its CPU twin's when `host` and it has one)
 * through creator c: mica__instance_from_state, told nl->state_flags.
 */
mica_layer_t *mica__from_state(const mica_layer_creator_t *c,
                               const mica__net_layer_t *nl, int host,
                               mica_error_t *err);
/*
 * Check an instance c's create or deserialize (`how`) just made for
 * network layer nl (mica__check_instance): on a bad one, fails on ctx
 * with a line naming the layer and the module file; *inst is then NULL.
 */
mica_status_t mica__instance_check(mica_context_t *ctx,
                                   const mica_layer_creator_t *c,
                                   const mica__net_layer_t *nl,
                                   mica_layer_t **inst, const char *how);

/* An instance of layer `step` from creator c (its fields or state). */
mica_layer_t *mica__instance_of(mica__build_t *b, int32_t step,
                                const mica_layer_creator_t *c);

/* dds.c: data-dependent sizes are 0-D int32 or int64 outputs, of layers
 * outside loops and conditionals, and nothing phase 1 computes depends
 * on them (after the kinds and shapes). */
mica_status_t mica__dds_check(mica__build_t *b);

/* profile.c */
mica_status_t mica__build_profiles(mica__build_t *b);

/* autotune.c: keep the fastest implementation and tactic of each
 * tunable layer, timed at profile 0's opt shapes (measured, not yet
 * configured). */
mica_status_t mica__autotune(mica__build_t *b);

#endif
