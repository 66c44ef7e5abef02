/*
 * core/passes/passes.h - graph passes: rewrites of a network that run
 * between its validation and the choice of implementations, each in a
 * file of its own in this folder, listed once in the table of passes.c
 * (docs/passes.md: what each does, their order, their limits).
 *
 * A pass reads p->net and, where it changes something, leaves a new
 * network in p->out (core/rewrite.c's frame and layers), says how many
 * things it changed in p->changed and what they were in p->summary
 * ("302 layers folded"); it leaves p->out NULL when nothing changes.  A
 * pass never changes what the network computes beyond the rounding of
 * its types: tests/test_passes.sh builds every test network with and
 * without passes and compares the results.  What the builder knows of a
 * network (types, shapes, values of shape tensors, kinds) comes from
 * mica__pass_facts.
 *
 * Adding a pass: its file here (core/local.mk), its function declared
 * below, one row in the table of passes.c at its place in the order,
 * its section in docs/passes.md.
 */
#ifndef MICA_PASSES_H
#define MICA_PASSES_H

#include "graph.h"

typedef struct mica__pass_run {
    /* what the pass reads */
    mica_network_t *net;           /* the network as the passes before
                                      left it: read only */
    mica_context_t *ctx;
    const mica_build_config_t *cfg; /* its preferences; may be NULL */
    uint32_t device;               /* the build's device (a bit) */
    const mica__device_t *dev;     /* that device, opened */
    /* what the pass writes */
    mica_network_t *out;           /* the rewritten network, or NULL */
    int64_t changed;               /* what it changed, counted */
    char summary[256];             /* "302 layers folded" */
    /* the driver's */
    mica_engine_t *facts;          /* mica__pass_facts' engine, or NULL */
    int32_t facts_failed;          /* the network does not build */
    int32_t facts_stale;           /* built from an earlier network: its
                                      tensors hold, its layers do not */
    mica__index_t facts_ix;        /* its tensors by name */
    mica_engine_t *facts_retired;  /* stale facts replaced during the
                                      pass: the tensors it returned stay
                                      valid until the pass ends */
    mica_status_t st;              /* a failure of what the passes share
                                      (memory): the pass returns it */
} mica__pass_run_t;

typedef mica_status_t (*mica__pass_fn)(mica__pass_run_t *p);

typedef struct mica__pass {
    const char *name;              /* --passes, engine records */
    const char *title;             /* the summary's: "constant folding" */
    mica__pass_fn run;
    /* Its rewrite keeps every tensor of the network it read that the
     * new one has as it was (type, shape, values) and makes new tensors
     * only of fresh names: the facts of the network before it still
     * say what those tensors are (mica__pass_tensor). */
    int32_t keeps_tensors;
} mica__pass_t;

/* The passes, in the order they run (passes.c). */
extern const mica__pass_t mica__passes[];
extern const int32_t mica__nb_passes;

/* The passes themselves, one file each. */
mica_status_t mica__pass_fold(mica__pass_run_t *p);       /* fold.c */
mica_status_t mica__pass_eliminate(mica__pass_run_t *p);  /* eliminate.c */
mica_status_t mica__pass_transpose(mica__pass_run_t *p);  /* transpose.c */
mica_status_t mica__pass_affine(mica__pass_run_t *p);     /* affine.c */
mica_status_t mica__pass_fusion(mica__pass_run_t *p);     /* fusion.c */
mica_status_t mica__pass_pointwise(mica__pass_run_t *p);  /* pointwise.c */

/*
 * The facts of p->net (mica__build_facts): its tensors and its layers
 * (instances, execution order), built on first use and kept until the
 * network changes.  MICA_ERR_UNSUPPORTED when the network does not build
 * (the build after the passes then says why); a pass that needs facts
 * changes nothing then.
 */
mica_status_t mica__pass_facts(mica__pass_run_t *p, const mica_engine_t **e);

/*
 * What the builder knows of tensor `name` of p->net (its type, symbolic
 * shape, values, kind): from the facts of p->net or of an earlier
 * network whose tensors the passes since kept (keeps_tensors), so that
 * passes in a row share one build.  NULL for a tensor those facts do
 * not have (a fresh one), and when the network does not build; a
 * failure that stops the pass (memory) goes to p->st.
 */
const mica__tensor_t *mica__pass_tensor(mica__pass_run_t *p,
                                        const char *name);

/* The value of expression x where every shape of every profile fixes it
 * (a constant, or an interval of one value): 1 and *v, else 0. */
int mica__pass_fixed(const mica_expr_t *x, int64_t *v);
/* The dims of tensor t (may be NULL) where every profile fixes them,
 * each >= 0: 1 and *d, else 0. */
int mica__pass_fixed_dims(const mica__tensor_t *t, mica_dims_t *d);

/* The role of network layer nl (mica_layer_role_t, of the creator its
 * params were checked with). */
static inline uint32_t mica__pass_role(const mica__net_layer_t *nl)
{
    return nl->checked_with ? nl->checked_with->role : MICA_ROLE_NONE;
}

/* ---- what the passes share (passes.c) ---------------------------------- */

/* Whether the build prefers an implementation for layers of `type`
 * (p->cfg's prefer list, modules.prefer, --prefer, $MICA_PREFER): a pass
 * leaves its layers as they are. */
int mica__pass_preferred(const mica__pass_run_t *p, const char *type);

/*
 * Whether network layer nl computes its outputs from its inputs and
 * params alone: of one of mica's own types (the default namespace, a
 * table in passes.c) without side effects, random values or
 * data-dependent output shapes, with its params (not read from an
 * engine's state).  Such a layer may be computed at build time, merged
 * with a duplicate, or removed when nothing reads it.  A third party's
 * type never is: nothing says it has no side effect.
 */
int mica__pass_pure(const mica__net_layer_t *nl);

/*
 * Whether a pass may remove, replace or rewrite network layer nl: pure,
 * not pinned to an implementation, and of no type the build prefers an
 * implementation for (modules.prefer, --prefer, $MICA_PREFER): such
 * layers are built as written, as the fusion rules leave them.
 */
int mica__pass_free(const mica__pass_run_t *p, const mica__net_layer_t *nl);

/* Whether the params of a and b are the same (same schema, values,
 * weights byte for byte). */
int mica__pass_same_fields(const mica__net_layer_t *a,
                           const mica__net_layer_t *b);

/*
 * A network's tensors by name: the layer that makes each (and at which
 * output), how many layer inputs read it, whether it is a network
 * output (or output for shapes) or input.
 */
typedef struct mica__pass_graph {
    const mica_network_t *net;
    mica__index_t producer;        /* name -> layer * MICA__PASS_IO + slot */
    mica__index_t reads;           /* name -> inputs that read it */
    mica__index_t outputs;         /* network outputs and shape outputs */
    mica__index_t inputs;          /* network inputs */
} mica__pass_graph_t;

#define MICA__PASS_IO 1024         /* the most outputs a layer has here */

mica_status_t mica__pass_graph_make(const mica_network_t *net,
                                    mica__pass_graph_t *g);
void mica__pass_graph_free(mica__pass_graph_t *g);
/* The layer that makes `name` (its output slot into *slot if not NULL),
 * -1 for a network input or an unknown name. */
int32_t mica__pass_producer(const mica__pass_graph_t *g, const char *name,
                            int32_t *slot);
/* How many layer inputs read `name` (0 if none). */
int32_t mica__pass_reads(const mica__pass_graph_t *g, const char *name);
/* Whether `name` is a network output or output for shapes. */
int mica__pass_is_output(const mica__pass_graph_t *g, const char *name);

/*
 * The layers of net in an order where each comes after the producers of
 * what it reads (a Recurrence's back edge aside), earliest in the
 * network's own order first; malloc'd into *order (net->nb_layers).
 */
mica_status_t mica__pass_order(const mica_network_t *net,
                               const mica__pass_graph_t *g, int32_t **order);

/*
 * Renamed tensors: readers of `from` read `to` instead.  Chains are
 * followed (a -> b, b -> c: a reads c).
 */
typedef struct mica__pass_subst {
    mica__index_t ix;              /* from -> index into to */
    char **from, **to;
    int32_t n, cap;
} mica__pass_subst_t;

mica_status_t mica__pass_subst_put(mica_context_t *ctx,
                                   mica__pass_subst_t *s, const char *from,
                                   const char *to);
/* What `name` is read as: itself when not renamed. */
const char *mica__pass_subst_get(const mica__pass_subst_t *s,
                                 const char *name);
void mica__pass_subst_free(mica__pass_subst_t *s);

/*
 * Copy network layer nl into out with its inputs renamed through s (may
 * be NULL), its fields or `fields` where not NULL; weights are borrowed
 * from the network they come from, which must outlive out.
 */
mica_status_t mica__pass_copy_layer(mica_network_t *out,
                                    const mica__net_layer_t *nl,
                                    const mica__pass_subst_t *s,
                                    const mica_fields_t *fields);

/*
 * A fresh name for a layer or tensor of out made from `base` and
 * `suffix` ("x/folded", then "x/folded_1", ...) that names neither a
 * layer of out or `net` nor a tensor of g; malloc'd, NULL when memory
 * runs out.
 */
char *mica__pass_fresh_name(const mica_network_t *out,
                            const mica__pass_graph_t *g, const char *base,
                            const char *suffix);

/*
 * Run the passes cfg selects on net, in the table's order (passes.c):
 * *out is the network to build (NULL: net as it is), and every network a
 * pass made is kept in *chain (free with mica__passes_chain_free after
 * the build: later networks borrow weights from earlier ones); the
 * records of the passes that ran go to *records.  A pass that fails
 * (but for memory) is skipped with a warning.  An unknown pass name in
 * cfg fails, naming the passes there are.
 */
typedef struct mica__passes_chain {
    mica_network_t **nets;
    int32_t n;
} mica__passes_chain_t;

mica_status_t mica__passes_run(mica_network_t *net,
                               const mica_build_config_t *cfg,
                               uint32_t device, const mica__device_t *dev,
                               mica_network_t **out,
                               mica__passes_chain_t *chain,
                               mica__pass_record_t **records,
                               int32_t *nb_records);
void mica__passes_chain_free(mica__passes_chain_t *chain);

/*
 * Whether cfg selects pass `name`; MICA_ERR_INVALID (on ctx) for a name
 * in cfg that no pass has.
 */
mica_status_t mica__passes_selected(mica_context_t *ctx,
                                    const mica_build_config_t *cfg,
                                    uint8_t *on);

/* ---- Shuffles as one (shuffles.c) ------------------------------------- */

/* A Shuffle as its three steps: first_transpose (n1 values, 0: none),
 * reshape (nr values; -1 none; -2 the values of input `dims`),
 * second_transpose (n2), zero_is_placeholder; its inputs by name. */
typedef struct mica__shuffle {
    int32_t n1, n2, nr;
    int64_t p1[MICA_MAX_DIMS], p2[MICA_MAX_DIMS], r[MICA_MAX_DIMS];
    int64_t zip;
    const char *in, *dims;
} mica__shuffle_t;

/* One step of a chain: a transpose ('T', a permutation) or a reshape
 * ('R', to fixed dimensions), n values. */
typedef struct mica__shuffle_step {
    int32_t kind;
    int32_t n;
    int64_t v[MICA_MAX_DIMS];
} mica__shuffle_step_t;

/* Network layer nl, a Shuffle, with its inputs renamed through subst
 * (may be NULL): 1, or 0 when it is not one this follows. */
int mica__pass_read_shuffle(const mica__net_layer_t *nl,
                            const mica__pass_subst_t *subst,
                            mica__shuffle_t *s);
/* The steps of Shuffle s from dims `in` to dims `out` (both fixed):
 * their number (at most 3), -1 if they do not fit. */
int32_t mica__shuffle_steps(const mica__shuffle_t *s, const mica_dims_t *in,
                            const mica_dims_t *out,
                            mica__shuffle_step_t *steps);
/*
 * The nb steps, applied to a tensor of fixed dims `in`, as one Shuffle
 * into *out (a reshape to fixed dims, zero_is_placeholder false; no
 * step at all where they come to nothing): 1, or 0 when they are not
 * one Shuffle (shuffles.c says when).  Its inputs are left NULL.
 */
int mica__shuffle_compose(const mica_dims_t *in,
                          const mica__shuffle_step_t *steps, int32_t nb,
                          mica__shuffle_t *out);
/* Add Shuffle s to out as network layer nl (its name, origin, precision)
 * making `output` (NULL: nl's output). */
mica_status_t mica__pass_add_shuffle(mica_network_t *out,
                                     const mica__net_layer_t *nl,
                                     const mica__shuffle_t *s,
                                     const char *output);

#endif /* MICA_PASSES_H */
