/*
 * core/control.h - the state of the loop and conditional analysis, shared
 * by control.c (constructs, nesting, branches) and control_order.c (the
 * order and the program).
 */
#ifndef MICA_CONTROL_H
#define MICA_CONTROL_H

#include "build.h"

typedef struct mica__ctl {
    mica__build_t *b;
    mica_network_t *net;
    int32_t nl, nt, nc;
    int32_t *tin;             /* per layer input: tensor, -1 */
    int32_t *tin_first;       /* per layer: index into tin */
    int32_t *cons;            /* per layer: construct it bounds, -1 */
    char **cname;             /* per construct */
    int32_t *ckind;
    unsigned char *in;        /* nc x nl: members (boundary and inside) */
    unsigned char *contains;  /* nc x nc */
    int32_t *parent, *depth;
    int32_t *scope;           /* per layer: innermost construct, -1 */
    int32_t *branch;          /* per layer: 0, 1, -1 */
    int32_t *cbranch;         /* per construct: its branch in the
                                 conditional around it, 0, 1, -1 */
    int32_t *topo;            /* per layer: position in b->order on entry */
    int32_t *work;            /* worklist */
    int32_t *order;           /* the new order, being written */
    int32_t nsteps;
} mica__ctl_t;

#define IN(c, k, l) ((c)->in[(size_t)(k) * (size_t)(c)->nl + (size_t)(l)])
#define CONTAINS(c, j, k) \
    ((c)->contains[(size_t)(j) * (size_t)(c)->nc + (size_t)(k)])

#define PSEUDO_TRIP(c) ((c)->nl + (c)->nc) /* a while TripLimit, as an item */

const char *mica__ctl_kind_name(int32_t kind);
/* "loop" or "conditional" for construct k of c. */
#define KIND(c, k) mica__ctl_kind_name((c)->ckind[k])

/* "ORIGIN: " of network layer l, into buf. */
const char *mica__ctl_at(const mica__ctl_t *c, int32_t l, char *buf,
                         size_t n);

/* control.c: find the constructs from the boundary layers (c->nc of them;
 * the per-construct arrays are sized after it: grow them). */
mica_status_t mica__ctl_collect(mica__ctl_t *c);
/* control.c: check the boundary layers, find each construct's body, its
 * nesting and every layer's scope, and what may leave a construct. */
mica_status_t mica__ctl_structure(mica__ctl_t *c);

/* The boundary layers of k with role r: count, and the first two. */
int32_t mica__ctl_with_role(const mica__ctl_t *c, int32_t k, int32_t r,
                            int32_t *first, int32_t *second);

/* The construct a tensor's value belongs to: its producer's, except for
 * the outputs of LoopOutput and IfConditionalOutput, seen in the
 * enclosing one; -1 at the top level. */
int32_t mica__ctl_tensor_scope(const mica__ctl_t *c, int32_t t);

/* Whether construct a is s or encloses it (-1 encloses everything). */
int mica__ctl_encloses(const mica__ctl_t *c, int32_t a, int32_t s);

/* The item of scope s that layer l belongs to: l itself if its scope is
 * s, else the child construct of s holding it (as nl + k); -1 if l is
 * not below s or is one of s's own boundary layers. */
int32_t mica__ctl_item_of(const mica__ctl_t *c, int32_t s, int32_t l);

/* Mark with `bit` layer l and what it needs inside construct k. */
void mica__ctl_mark_back(mica__ctl_t *c, int32_t k, int32_t l, int bit,
                         unsigned char *mark);

/* Order the items of the top level and, recursively, of every construct
 * into c->order; write the engine's program and constructs' steps. */
mica_status_t mica__ctl_emit(mica__ctl_t *c);

#endif /* MICA_CONTROL_H */
