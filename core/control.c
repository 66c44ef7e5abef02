/*
 * core/control.c - loops and conditionals at build time: which layers are
 * inside which construct, how constructs nest, and the order and program
 * that run them (TensorRT's ILoop and IIfConditional).
 *
 * Constructs exist by reference: the boundary layers (those whose type
 * declares a loop or conditional role) name theirs.  What is inside
 * follows from the data flow, as in TensorRT:
 *
 *   - the body of construct K is every layer reachable from the outputs
 *     of K's Recurrence and Iterator layers (a loop) or of its
 *     IfConditionalInput layers (a conditional), without passing through
 *     K's own boundary layers;
 *   - K is inside J when one of K's boundary layers is in J's body; then
 *     all of K is, and what its outputs reach too;
 *   - every layer's constructs must form one chain of nesting, or the
 *     network is refused (a layer using values of two loops neither of
 *     which is inside the other);
 *   - in a conditional, a layer belongs to the branch whose outputs it
 *     reaches; reaching both is an edge between the branches, refused.
 *
 * Layers that depend on no value of a construct are not in it: they run
 * eagerly, before it.  The order puts each construct's layers together:
 * a loop's head (TripLimit read at entry, Recurrences, Iterators), the
 * layers its while predicate needs, the while TripLimit, the rest of the
 * body, its LoopOutputs; a conditional's Condition, IfConditionalInputs,
 * true branch, false branch, IfConditionalOutputs.
 */
#include <config.h>

#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int is_loop_role(int32_t r)
{
    return r == MICA_ROLE_TRIP_LIMIT || r == MICA_ROLE_RECURRENCE ||
           r == MICA_ROLE_ITERATOR || r == MICA_ROLE_LOOP_OUTPUT;
}

static int is_cond_role(int32_t r)
{
    return r == MICA_ROLE_CONDITION || r == MICA_ROLE_IF_INPUT ||
           r == MICA_ROLE_IF_OUTPUT;
}

const char *mica__ctl_kind_name(int32_t kind)
{
    return kind == MICA_CONSTRUCT_LOOP ? "loop" : "conditional";
}

const char *mica__ctl_at(const mica__ctl_t *c, int32_t l, char *buf,
                         size_t n)
{
    return mica__at(c->net->layers[l].origin, buf, n);
}

mica_status_t mica__control_roles(mica__build_t *b)
{
    int32_t i;
    b->role = calloc((size_t)(b->net->nb_layers + 1), sizeof *b->role);
    if (!b->role)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < b->net->nb_layers; i++) {
        const mica__net_layer_t *nl = &b->net->layers[i];
        mica_creator_info_t info = {
            .struct_size = sizeof(mica_creator_info_t)};
        /* A type no module provides is reported when it is chosen. */
        if (mica_registry_find(b->ctx, nl->ns, nl->type, nl->version,
                               nl->implementation, 0, &info) == MICA_OK)
            b->role[i] = (int32_t)info.role;
    }
    return MICA_OK;
}

/* ---- finding the constructs ------------------------------------------ */

static int32_t find_construct(mica__ctl_t *c, const char *name)
{
    int32_t k;
    for (k = 0; k < c->nc; k++)
        if (strcmp(c->cname[k], name) == 0)
            return k;
    return -1;
}

/* Each boundary layer names a construct of its kind; others name none. */
mica_status_t mica__ctl_collect(mica__ctl_t *c)
{
    int32_t i, k;
    char where[512];

    for (i = 0; i < c->nl; i++) {
        const mica__net_layer_t *nl = &c->net->layers[i];
        int32_t r = c->b->role[i];
        int loop = is_loop_role(r), cond = is_cond_role(r);
        const char *name = loop ? nl->loop : cond ? nl->conditional : NULL;
        c->cons[i] = -1;
        if ((nl->loop && !loop) || (nl->conditional && !cond))
            return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s) names %s '%s', but only %s "
                              "boundary layers do (%s)",
                              mica__ctl_at(c, i, where, sizeof where), nl->name,
                              nl->type, nl->loop ? "loop" : "conditional",
                              nl->loop ? nl->loop : nl->conditional,
                              nl->loop ? "loop" : "conditional",
                              nl->loop ? "TripLimit, Iterator, Recurrence, "
                                         "LoopOutput"
                                       : "Condition, IfConditionalInput, "
                                         "IfConditionalOutput");
        if (!loop && !cond)
            continue;
        if (!name || !*name)
            return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s) is a %s boundary layer: it "
                              "must name its %s (%s: NAME)",
                              mica__ctl_at(c, i, where, sizeof where), nl->name,
                              nl->type, loop ? "loop" : "conditional",
                              loop ? "loop" : "conditional",
                              loop ? "loop" : "conditional");
        k = find_construct(c, name);
        if (k < 0) {
            k = c->nc++;
            c->cname[k] = (char *)name;
            c->ckind[k] = loop ? MICA_CONSTRUCT_LOOP
                               : MICA_CONSTRUCT_CONDITIONAL;
        } else if (c->ckind[k] != (loop ? MICA_CONSTRUCT_LOOP
                                         : MICA_CONSTRUCT_CONDITIONAL)) {
            return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s) names %s '%s', but '%s' is "
                              "already a %s", mica__ctl_at(c, i, where, sizeof where),
                              nl->name, nl->type, loop ? "loop" : "conditional",
                              name, name, KIND(c, k));
        }
        c->cons[i] = k;
    }
    return MICA_OK;
}

/* The boundary layers of k with role r: count, and the first two. */
int32_t mica__ctl_with_role(const mica__ctl_t *c, int32_t k, int32_t r,
                            int32_t *first,
                         int32_t *second)
{
    int32_t i, n = 0;
    *first = *second = -1;
    for (i = 0; i < c->nl; i++)
        if (c->cons[i] == k && c->b->role[i] == r) {
            if (n == 0)
                *first = i;
            else if (n == 1)
                *second = i;
            n++;
        }
    return n;
}

/* What each construct must have (TensorRT's rules). */
static mica_status_t check_boundaries(mica__ctl_t *c)
{
    int32_t k, a, z, i;
    char where[512];
    for (k = 0; k < c->nc; k++) {
        const char *name = c->cname[k];
        const char *w;
        for (i = 0; i < c->nl && c->cons[i] != k; i++)
            ;
        w = mica__ctl_at(c, i, where, sizeof where); /* its first boundary layer */
        if (c->ckind[k] == MICA_CONSTRUCT_LOOP) {
            int32_t nt = mica__ctl_with_role(c, k, MICA_ROLE_TRIP_LIMIT, &a,
                                             &z);
            if (nt > 1)
                return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                  "%sloop '%s' has %d TripLimit layers ('%s', "
                                  "'%s'): a loop has at most one",
                                  mica__ctl_at(c, z, where, sizeof where), name,
                                  (int)nt, c->net->layers[a].name,
                                  c->net->layers[z].name);
            if (nt == 0 &&
                mica__ctl_with_role(c, k, MICA_ROLE_ITERATOR, &a, &z) == 0)
                return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                  "%sloop '%s' has no TripLimit and no "
                                  "Iterator: nothing bounds its trips", w,
                                  name);
        } else {
            int32_t n = mica__ctl_with_role(c, k, MICA_ROLE_CONDITION, &a, &z);
            if (n != 1)
                return n == 0
                    ? mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                 "%sconditional '%s' has no Condition layer: "
                                 "it needs exactly one", w, name)
                    : mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                 "%sconditional '%s' has %d Condition layers "
                                 "('%s', '%s'): it needs exactly one",
                                 mica__ctl_at(c, z, where, sizeof where), name,
                                 (int)n, c->net->layers[a].name,
                                 c->net->layers[z].name);
            if (mica__ctl_with_role(c, k, MICA_ROLE_IF_OUTPUT, &a, &z) == 0)
                return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                  "%sconditional '%s' has no "
                                  "IfConditionalOutput: it needs at least "
                                  "one", w, name);
        }
    }
    return MICA_OK;
}

/* ---- bodies and nesting ---------------------------------------------- */

/*
 * Layer y reads, at input `slot`, a value of construct k's inside (made
 * by layer `from`).  Fine for the layers of its body and for the inputs a
 * boundary layer takes from inside; an error for the inputs that must
 * come from outside.
 */
static mica_status_t inside_input(mica__ctl_t *c, int32_t k, int32_t y,
                                  int32_t slot, int32_t from)
{
    const mica__net_layer_t *nl = &c->net->layers[y];
    int32_t r = c->b->role[y];
    const char *what = NULL;
    char where[512];

    if (r == MICA_ROLE_RECURRENCE && slot == 0)
        what = "the initial value of Recurrence";
    else if (r == MICA_ROLE_ITERATOR)
        what = "the tensor iterated by Iterator";
    else if (r == MICA_ROLE_LOOP_OUTPUT && slot == 1)
        what = "the length of LoopOutput";
    else if (r == MICA_ROLE_CONDITION)
        what = "the condition of Condition";
    else if (r == MICA_ROLE_IF_INPUT)
        what = "the input of IfConditionalInput";
    if (!what)
        return MICA_OK;
    return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                      "%s%s '%s': %s '%s' is computed inside the %s (by "
                      "layer '%s'); it must come from outside",
                      mica__ctl_at(c, y, where, sizeof where), KIND(c, k),
                      c->cname[k], what, nl->name, KIND(c, k),
                      c->net->layers[from].name);
}

/* Add to k's members what the worklist's layers reach (n entries). */
static mica_status_t spread(mica__ctl_t *c, int32_t k, int32_t n)
{
    mica_network_t *net = c->net;
    int32_t y, i, j;

    while (n > 0) {
        int32_t l = c->work[--n];
        const mica__net_layer_t *p = &net->layers[l];
        /* Consumers of l's outputs: every layer reading one of them. */
        for (y = 0; y < c->nl; y++) {
            const mica__net_layer_t *q = &net->layers[y];
            for (i = 0; i < q->nb_inputs; i++) {
                int32_t t = c->tin[c->tin_first[y] + i], reads = 0;
                if (t < 0 || c->b->def_layer[t] != l)
                    continue;
                for (j = 0; j < p->nb_outputs && !reads; j++)
                    reads = c->b->def_slot[t] == j;
                if (!reads)
                    continue;
                if (c->cons[y] == k) {
                    mica_status_t st = inside_input(c, k, y, i, l);
                    if (st != MICA_OK)
                        return st;
                    continue; /* k's own boundary: the flow stops there */
                }
                if (!IN(c, k, y)) {
                    IN(c, k, y) = 1;
                    c->work[n++] = y;
                }
            }
        }
    }
    return MICA_OK;
}

/* Each construct's body, from its sources. */
static mica_status_t bodies(mica__ctl_t *c)
{
    int32_t k, i, n;
    mica_status_t st;
    for (k = 0; k < c->nc; k++) {
        n = 0;
        for (i = 0; i < c->nl; i++) {
            int32_t r = c->b->role[i];
            if (c->cons[i] != k)
                continue;
            IN(c, k, i) = 1;
            if (r == MICA_ROLE_RECURRENCE || r == MICA_ROLE_ITERATOR ||
                r == MICA_ROLE_IF_INPUT)
                c->work[n++] = i;
        }
        if ((st = spread(c, k, n)) != MICA_OK)
            return st;
    }
    return MICA_OK;
}

/* A layer of both j and k: the name of one, for messages. */
static const char *shared_layer(const mica__ctl_t *c, int32_t j, int32_t k)
{
    int32_t i;
    for (i = 0; i < c->nl; i++) /* a layer of neither's boundary first */
        if (IN(c, j, i) && IN(c, k, i) && c->cons[i] != j && c->cons[i] != k)
            return c->net->layers[i].name;
    for (i = 0; i < c->nl; i++)
        if (IN(c, j, i) && IN(c, k, i))
            return c->net->layers[i].name;
    return "?";
}

/* K is inside J when one of K's boundary layers is in J: then all of K
 * is, and what it reaches.  Until nothing changes. */
static mica_status_t nest(mica__ctl_t *c)
{
    int changed = 1;
    int32_t j, k, i, n;
    mica_status_t st;

    while (changed) {
        changed = 0;
        for (j = 0; j < c->nc; j++)
            for (k = 0; k < c->nc; k++) {
                int hit = 0;
                if (j == k || CONTAINS(c, j, k))
                    continue;
                for (i = 0; i < c->nl && !hit; i++)
                    hit = c->cons[i] == k && IN(c, j, i);
                if (!hit)
                    continue;
                if (CONTAINS(c, k, j))
                    return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                      "%s '%s' and %s '%s' are not nested "
                                      "cleanly: each uses values defined "
                                      "inside the other (layer '%s' is in "
                                      "both)", KIND(c, j),
                                      c->cname[j], KIND(c, k),
                                      c->cname[k], shared_layer(c, j, k));
                CONTAINS(c, j, k) = 1;
                changed = 1;
                n = 0;
                for (i = 0; i < c->nl; i++)
                    if (IN(c, k, i) && !IN(c, j, i)) {
                        IN(c, j, i) = 1;
                        c->work[n++] = i;
                    }
                if ((st = spread(c, j, n)) != MICA_OK)
                    return st;
            }
    }
    return MICA_OK;
}

/* Scopes: every layer's constructs form one chain; the deepest wins. */
static mica_status_t scopes(mica__ctl_t *c)
{
    int32_t i, j, k;
    char where[512];

    for (k = 0; k < c->nc; k++) {
        c->depth[k] = 0;
        c->parent[k] = -1;
        for (j = 0; j < c->nc; j++)
            if (CONTAINS(c, j, k))
                c->depth[k]++;
    }
    for (k = 0; k < c->nc; k++)
        for (j = 0; j < c->nc; j++)
            if (CONTAINS(c, j, k) && c->depth[j] == c->depth[k] - 1)
                c->parent[k] = j;
    for (i = 0; i < c->nl; i++) {
        int32_t best = -1;
        for (k = 0; k < c->nc; k++) {
            if (!IN(c, k, i))
                continue;
            if (best >= 0 && !CONTAINS(c, best, k) && !CONTAINS(c, k, best))
                return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                  "%slayer '%s' uses values of %s '%s' and "
                                  "of %s '%s', and neither is inside the "
                                  "other: a value leaves a loop only "
                                  "through a LoopOutput, a conditional only "
                                  "through an IfConditionalOutput",
                                  mica__ctl_at(c, i, where, sizeof where),
                                  c->net->layers[i].name,
                                  KIND(c, best), c->cname[best],
                                  KIND(c, k), c->cname[k]);
            if (best < 0 || c->depth[k] > c->depth[best])
                best = k;
        }
        c->scope[i] = best;
    }
    return MICA_OK;
}

/* The construct a tensor's value belongs to: its producer's, except for
 * the outputs of LoopOutput and IfConditionalOutput, which are seen in
 * the enclosing one. */
int32_t mica__ctl_tensor_scope(const mica__ctl_t *c, int32_t t)
{
    int32_t p = t >= 0 ? c->b->def_layer[t] : -1, r;
    if (p < 0)
        return -1;
    r = c->b->role[p];
    if (r == MICA_ROLE_LOOP_OUTPUT || r == MICA_ROLE_IF_OUTPUT)
        return c->parent[c->cons[p]];
    return c->scope[p];
}

/* Whether construct a is s or encloses it (-1 encloses everything). */
int mica__ctl_encloses(const mica__ctl_t *c, int32_t a, int32_t s)
{
    return a < 0 || a == s || (s >= 0 && CONTAINS(c, a, s));
}

/* Network outputs are seen at the top level; a nested conditional's
 * output is not. */
static mica_status_t check_outputs(mica__ctl_t *c)
{
    int32_t i;
    char where[512];
    for (i = 0; i < c->net->nb_outputs; i++) {
        int32_t t = mica__tensor_of(c->b, c->net->outputs[i]);
        int32_t s = mica__ctl_tensor_scope(c, t), p = c->b->def_layer[t];
        if (s < 0)
            continue;
        if (c->b->role[p] == MICA_ROLE_IF_OUTPUT ||
            c->b->role[p] == MICA_ROLE_LOOP_OUTPUT)
            return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                              "%soutput '%s' is the output of %s '%s', which "
                              "is nested inside %s '%s': only a top-level "
                              "construct's outputs can be network outputs",
                              mica__at(c->net->output_origins[i], where,
                                       sizeof where), c->net->outputs[i],
                              mica__ctl_kind_name(c->ckind[c->cons[p]]),
                              c->cname[c->cons[p]], KIND(c, s),
                              c->cname[s]);
        return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                          "%soutput '%s' is defined inside %s '%s' (by layer "
                          "'%s'): mark the output of a %s instead",
                          mica__at(c->net->output_origins[i], where,
                                   sizeof where), c->net->outputs[i],
                          KIND(c, s), c->cname[s],
                          c->net->layers[p].name,
                          c->ckind[s] == MICA_CONSTRUCT_LOOP
                              ? "LoopOutput" : "IfConditionalOutput");
    }
    return MICA_OK;
}

/* The item of scope s that layer l belongs to: l itself if its scope is
 * s, else the child construct of s holding it (as nl + k); -1 if l is
 * not below s or is one of s's own boundary layers. */
int32_t mica__ctl_item_of(const mica__ctl_t *c, int32_t s, int32_t l)
{
    int32_t k = c->scope[l];
    if (s >= 0 && !IN(c, s, l))
        return -1;
    if (k == s)
        return s >= 0 && c->cons[l] == s ? -1 : l;
    while (k >= 0 && c->parent[k] != s)
        k = c->parent[k];
    return k < 0 ? -1 : c->nl + k;
}

/* Mark with `bit` layer l and what it needs inside conditional k. */
void mica__ctl_mark_back(mica__ctl_t *c, int32_t k, int32_t l, int bit,
                      unsigned char *mark)
{
    int32_t n = 0, i;
    c->work[n++] = l;
    while (n > 0) {
        int32_t y = c->work[--n];
        const mica__net_layer_t *q = &c->net->layers[y];
        if (!IN(c, k, y) || c->cons[y] == k || (mark[y] & bit))
            continue;
        mark[y] |= (unsigned char)bit;
        for (i = 0; i < q->nb_inputs; i++) {
            int32_t t = c->tin[c->tin_first[y] + i];
            if (t >= 0 && c->b->def_layer[t] >= 0)
                c->work[n++] = c->b->def_layer[t];
        }
    }
}

mica_status_t mica__ctl_structure(mica__ctl_t *c)
{
    mica_status_t st;
    if ((st = check_boundaries(c)) != MICA_OK || (st = bodies(c)) != MICA_OK ||
        (st = nest(c)) != MICA_OK || (st = scopes(c)) != MICA_OK)
        return st;
    return check_outputs(c);
}
