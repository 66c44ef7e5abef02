/*
 * core/control_order.c - the execution order and program of a network
 * with loops and conditionals (see control.c for what is inside what).
 *
 * Each scope (the top level, each construct) orders its items, its own
 * layers and the constructs right inside it, by the data flow; ties go
 * to the earlier layer of the network's topological order.  Groups come
 * first to last: in a while loop, what the predicate needs, then the
 * TripLimit, then the rest; in a conditional, the true branch, then the
 * false one.  Boundary layers are placed around them by role, and the
 * program gets the instructions core/flow.c runs.
 */
#include <config.h>

#include "control.h"

#include <stdlib.h>
#include <string.h>

/* The ordering key of item it of scope s: its group, then its place in
 * the topological order. */
static void item_key(const mica__ctl_t *c, int32_t s, int32_t it,
                     const unsigned char *pred, int32_t *group, int32_t *pos)
{
    int32_t i;
    *pos = INT32_MAX;
    if (it == PSEUDO_TRIP(c)) {
        *group = 0;
        return;
    }
    if (it < c->nl) {
        *pos = c->topo[it];
        *group = s >= 0 && c->ckind[s] == MICA_CONSTRUCT_CONDITIONAL
                     ? (c->branch[it] < 0 ? 2 : c->branch[it])
                     : !pred || !pred[it];
        return;
    }
    for (i = 0; i < c->nl; i++)
        if (IN(c, it - c->nl, i) && c->topo[i] < *pos)
            *pos = c->topo[i];
    *group = s >= 0 && c->ckind[s] == MICA_CONSTRUCT_CONDITIONAL
                 ? (c->cbranch[it - c->nl] < 0 ? 2 : c->cbranch[it - c->nl])
                 : !pred || !pred[it];
}

/*
 * The items of scope s (its own layers and the constructs nested right in
 * it; `trip`, if >= 0, the while TripLimit of loop s as one more item) in
 * an order that respects the data flow, lowest group first.  *out gets
 * the items, *n their number.
 */
static mica_status_t sort_items(mica__ctl_t *c, int32_t s, int32_t trip,
                                int32_t **out, int32_t *n)
{
    int32_t ni = c->nl + c->nc + 1, y, i, k, cnt = 0;
    int32_t *indeg = calloc((size_t)ni, sizeof *indeg);
    int32_t *items = calloc((size_t)ni, sizeof *items);
    unsigned char *present = calloc((size_t)ni, 1);
    unsigned char *pred = calloc((size_t)ni, 1);
    unsigned char *done = calloc((size_t)ni, 1);
    mica_status_t st = MICA_OK;

    *out = NULL;
    *n = 0;
    if (!indeg || !items || !present || !pred || !done) {
        st = mica__fail(c->b->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto fail;
    }
    for (y = 0; y < c->nl; y++) {
        int32_t it = mica__ctl_item_of(c, s, y);
        if (it >= 0)
            present[it] = 1;
    }
    if (trip >= 0) {
        present[PSEUDO_TRIP(c)] = 1;
        /* What the predicate needs comes first. */
        for (i = 0; i < c->net->layers[trip].nb_inputs; i++) {
            int32_t t = c->tin[c->tin_first[trip] + i];
            if (t >= 0 && c->b->def_layer[t] >= 0)
                mica__ctl_mark_back(c, s, c->b->def_layer[t], 1, pred);
        }
        for (y = 0; y < c->nl; y++) {
            int32_t it = mica__ctl_item_of(c, s, y);
            if (it >= c->nl && pred[y])
                pred[it] = 1;
        }
    }
    for (y = 0; y < c->nl; y++) {
        const mica__net_layer_t *q = &c->net->layers[y];
        int32_t z = y == trip ? PSEUDO_TRIP(c) : mica__ctl_item_of(c, s, y);
        if (z < 0)
            continue;
        for (i = 0; i < q->nb_inputs; i++) {
            int32_t t = c->tin[c->tin_first[y] + i], a;
            if (t < 0 || c->b->def_layer[t] < 0 ||
                (c->b->role[y] == MICA_ROLE_RECURRENCE && i == 1))
                continue;
            a = mica__ctl_item_of(c, s, c->b->def_layer[t]);
            if (a >= 0 && a != z)
                indeg[z]++;
        }
    }
    for (;;) {
        int32_t best = -1, bg = 0, bp = 0;
        for (k = 0; k < ni; k++) {
            int32_t g, p;
            if (!present[k] || done[k] || indeg[k] > 0)
                continue;
            item_key(c, s, k, trip >= 0 ? pred : NULL, &g, &p);
            if (best < 0 || g < bg || (g == bg && p < bp)) {
                best = k;
                bg = g;
                bp = p;
            }
        }
        if (best < 0)
            break;
        done[best] = 1;
        items[cnt++] = best;
        /* Release the items reading what `best` makes. */
        for (y = 0; y < c->nl; y++) {
            const mica__net_layer_t *q = &c->net->layers[y];
            int32_t z = y == trip ? PSEUDO_TRIP(c) : mica__ctl_item_of(c, s, y);
            if (z < 0 || z == best)
                continue;
            for (i = 0; i < q->nb_inputs; i++) {
                int32_t t = c->tin[c->tin_first[y] + i], p;
                if (t < 0 || (p = c->b->def_layer[t]) < 0 ||
                    (c->b->role[y] == MICA_ROLE_RECURRENCE && i == 1))
                    continue;
                if (mica__ctl_item_of(c, s, p) == best)
                    indeg[z]--;
            }
        }
    }
    for (k = 0; k < ni; k++)
        if (present[k] && !done[k])
            st = mica__fail(c->b->ctx, MICA_ERR_INVALID,
                            "%s '%s': its layers depend on each other in a "
                            "cycle", s >= 0 ? KIND(c, s) : "network",
                            s >= 0 ? c->cname[s] : "");
    if (st == MICA_OK) {
        *out = items;
        *n = cnt;
        items = NULL;
    }
fail:
    free(indeg);
    free(items);
    free(present);
    free(pred);
    free(done);
    return st;
}

static int32_t place(mica__ctl_t *c, int32_t l)
{
    int32_t step = c->nsteps++;
    c->order[step] = l;
    c->b->step_construct[step] = c->scope[l];
    c->b->step_branch[step] = c->branch[l];
    return step;
}

static int32_t emit_op(mica__ctl_t *c, int32_t kind, int32_t arg,
                       int32_t branch)
{
    mica_engine_t *e = c->b->e;
    mica__op_t *o = &e->prog[e->nb_prog];
    o->kind = kind;
    o->arg = arg;
    o->target = -1;
    o->branch = branch;
    return e->nb_prog++;
}

/* The steps of k's boundary layers with role r, placed now, into a new
 * array (*list, *n). */
static mica_status_t place_role(mica__ctl_t *c, int32_t k, int32_t r, int run,
                                int32_t **list, int32_t *n)
{
    int32_t i;
    *n = 0;
    *list = calloc((size_t)c->nl + 1, sizeof **list);
    if (!*list)
        return mica__fail(c->b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < c->nl; i++)
        if (c->cons[i] == k && c->b->role[i] == r) {
            int32_t step = place(c, i);
            (*list)[(*n)++] = step;
            if (run)
                emit_op(c, MICA__OP_RUN, step, 0);
        }
    return MICA_OK;
}

/*
 * A Recurrence whose next value is another Recurrence's output must take
 * it before that one is updated: order the updates so, or refuse a
 * cycle of them (a swap needs a copy in between).
 */
static mica_status_t order_updates(mica__ctl_t *c, int32_t k, int32_t *steps,
                                   int32_t n)
{
    int32_t i, j, moved = 1, rounds = 0;
    while (moved) {
        moved = 0;
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) {
                int32_t a = c->order[steps[i]], z = c->order[steps[j]];
                int32_t t = c->tin[c->tin_first[z] + 1];
                if (t >= 0 && c->b->def_layer[t] == a) {
                    int32_t tmp = steps[i]; /* z reads a's state: z first */
                    steps[i] = steps[j];
                    steps[j] = tmp;
                    moved = 1;
                }
            }
        if (moved && ++rounds > n)
            return mica__fail(c->b->ctx, MICA_ERR_INVALID,
                              "loop '%s': its Recurrences take each other's "
                              "outputs directly as next values in a cycle; "
                              "put an Identity layer on one of those edges",
                              c->cname[k]);
    }
    return MICA_OK;
}

static mica_status_t emit_items(mica__ctl_t *c, int32_t s, int32_t trip);

static mica_status_t emit_loop(mica__ctl_t *c, int32_t k)
{
    mica__construct_t *ec = &c->b->e->constructs[k];
    int32_t trip, other, enter, test, exitpc, i, t;
    mica_status_t st;

    ec->begin = c->nsteps;
    ec->trip_limit = -1;
    mica__ctl_with_role(c, k, MICA_ROLE_TRIP_LIMIT, &trip, &other);
    if (trip >= 0) {
        t = c->tin[c->tin_first[trip]];
        if (t < 0 || !mica__ctl_encloses(c, k, mica__ctl_tensor_scope(c, t))) {
            ec->trip_limit = place(c, trip);
            ec->read_at_entry = 1;
        }
    }
    if ((st = place_role(c, k, MICA_ROLE_RECURRENCE, 0, &ec->heads,
                         &ec->nb_heads)) != MICA_OK ||
        (st = order_updates(c, k, ec->heads, ec->nb_heads)) != MICA_OK ||
        (st = place_role(c, k, MICA_ROLE_ITERATOR, 0, &ec->iterators,
                         &ec->nb_iterators)) != MICA_OK)
        return st;
    enter = emit_op(c, MICA__OP_LOOP_ENTER, k, 0);
    test = emit_op(c, MICA__OP_LOOP_TEST, k, 0);
    if ((st = emit_items(c, k, ec->read_at_entry ? -1 : trip)) != MICA_OK ||
        (st = place_role(c, k, MICA_ROLE_LOOP_OUTPUT, 0, &ec->exits,
                         &ec->nb_exits)) != MICA_OK)
        return st;
    c->b->e->prog[emit_op(c, MICA__OP_LOOP_NEXT, k, 0)].target = test;
    exitpc = emit_op(c, MICA__OP_LOOP_EXIT, k, 0);
    c->b->e->prog[test].target = exitpc;
    c->b->e->prog[enter].target = exitpc + 1;
    for (i = enter; i < exitpc; i++)
        if (c->b->e->prog[i].kind == MICA__OP_LOOP_WHILE &&
            c->b->e->prog[i].arg == k)
            c->b->e->prog[i].target = exitpc;
    ec->end = c->nsteps;
    return MICA_OK;
}

static mica_status_t emit_conditional(mica__ctl_t *c, int32_t k)
{
    mica_engine_t *e = c->b->e;
    mica__construct_t *ec = &e->constructs[k];
    int32_t cond, other, ifop, br, i;
    mica_status_t st;

    ec->begin = c->nsteps;
    mica__ctl_with_role(c, k, MICA_ROLE_CONDITION, &cond, &other);
    ec->condition = place(c, cond);
    ec->trip_limit = -1;
    ifop = emit_op(c, MICA__OP_IF, k, 0);
    if ((st = place_role(c, k, MICA_ROLE_IF_INPUT, 1, &ec->heads,
                         &ec->nb_heads)) != MICA_OK)
        return st;
    br = emit_op(c, MICA__OP_BRANCH, k, 0);
    /* emit_items puts the SELECT of the true branch between the two. */
    if ((st = emit_items(c, k, -1)) != MICA_OK)
        return st;
    for (i = br; i < e->nb_prog; i++)
        if (e->prog[i].kind == MICA__OP_SELECT && e->prog[i].arg == k &&
            e->prog[i].branch == 0)
            e->prog[br].target = i + 1;
    for (i = br; i < e->nb_prog; i++)
        if (e->prog[i].kind == MICA__OP_SELECT && e->prog[i].arg == k)
            e->prog[i].target = e->nb_prog;
    e->prog[ifop].target = e->nb_prog;
    if ((st = place_role(c, k, MICA_ROLE_IF_OUTPUT, 0, &ec->exits,
                         &ec->nb_exits)) != MICA_OK)
        return st;
    ec->end = c->nsteps;
    return MICA_OK;
}

/* The items of scope s, in order; in a conditional, SELECT ops after each
 * branch. */
static mica_status_t emit_items(mica__ctl_t *c, int32_t s, int32_t trip)
{
    int32_t *items, n, i, sel = 0;
    int cond = s >= 0 && c->ckind[s] == MICA_CONSTRUCT_CONDITIONAL;
    mica_status_t st = sort_items(c, s, trip, &items, &n);

    for (i = 0; i < n && st == MICA_OK; i++) {
        int32_t it = items[i];
        if (cond && sel == 0) {
            int32_t g, p;
            item_key(c, s, it, NULL, &g, &p);
            if (g > 0) {
                emit_op(c, MICA__OP_SELECT, s, 0);
                sel = 1;
            }
        }
        if (it == PSEUDO_TRIP(c)) {
            c->b->e->constructs[s].trip_limit = place(c, trip);
            emit_op(c, MICA__OP_LOOP_WHILE, s, 0);
        } else if (it < c->nl) {
            emit_op(c, MICA__OP_RUN, place(c, it), 0);
        } else {
            int32_t k = it - c->nl;
            st = c->ckind[k] == MICA_CONSTRUCT_LOOP ? emit_loop(c, k)
                                                    : emit_conditional(c, k);
        }
    }
    if (cond && st == MICA_OK) {
        if (!sel)
            emit_op(c, MICA__OP_SELECT, s, 0);
        emit_op(c, MICA__OP_SELECT, s, 1);
    }
    free(items);
    return st;
}


mica_status_t mica__ctl_emit(mica__ctl_t *c)
{
    return emit_items(c, -1, -1);
}
