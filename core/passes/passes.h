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
} mica__pass_run_t;

typedef mica_status_t (*mica__pass_fn)(mica__pass_run_t *p);

typedef struct mica__pass {
    const char *name;              /* --passes, engine records */
    const char *title;             /* the summary's: "constant folding" */
    mica__pass_fn run;
} mica__pass_t;

/* The passes, in the order they run (passes.c). */
extern const mica__pass_t mica__passes[];
extern const int32_t mica__nb_passes;

/* The passes themselves, one file each. */
mica_status_t mica__pass_fold(mica__pass_run_t *p);       /* fold.c */
mica_status_t mica__pass_fusion(mica__pass_run_t *p);     /* fusion.c */
mica_status_t mica__pass_pointwise(mica__pass_run_t *p);  /* pointwise.c */

/*
 * The facts of p->net (mica__build_facts), built on first use and kept
 * until the network changes.  MICA_ERR_UNSUPPORTED when the network does
 * not build (the build after the passes then says why); a pass that
 * needs facts changes nothing then.
 */
mica_status_t mica__pass_facts(mica__pass_run_t *p, const mica_engine_t **e);

/* ---- what the passes share (passes.c) ---------------------------------- */

/* Whether the build prefers an implementation for layers of `type`
 * (p->cfg's prefer list, modules.prefer, --prefer, $MICA_PREFER): a pass
 * leaves its layers as they are. */
int mica__pass_preferred(const mica__pass_run_t *p, const char *type);

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

#endif /* MICA_PASSES_H */
