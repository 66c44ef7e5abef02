/*
 * core/flow.c - phase 2: the engine's program (core/control.c) run on an
 * execution context.
 *
 * Plain layers are enqueued; boundary layers are asked for the steps of
 * their role (mica_step_kind_t).  A loop reads its trip count once when
 * it starts (a count, or a predicate computed outside it) or its while
 * predicate once per trip; a conditional reads its condition once.
 * These reads are the only points where the host waits for the device.
 * A loop's trips are bounded by its count and by the length of every
 * Iterator; a while loop stops at the first trip whose predicate is
 * false (seed 000: the smallest n with X_n false).
 */
#include <config.h>

#include "exec.h"

#include <stdio.h>
#include <string.h>

mica_status_t mica__exec_layer_error(mica_exec_t *x, int32_t s,
                                     const mica_error_t *err, const char *what)
{
    const mica__layer_t *l = &x->e->layers[s];
    char at[512];
    return mica__fail(x->ctx, MICA_ERR_RUNTIME, "%slayer '%s' (%s): %s",
                      mica__at(l->origin, at, sizeof at), l->name,
                      l->info.type, mica__error_msg(err, what));
}

/* Enqueue plain layer s, unless it does not run or its outputs are empty. */
static mica_status_t run_layer(mica_exec_t *x, int32_t s)
{
    const mica_engine_t *e = x->e;
    const mica__layer_t *l = &e->layers[s];
    int32_t f = x->first[s];
    int64_t ws = e->profiles[x->profile].workspace[s];
    mica_error_t err;
    mica_status_t st;

    if (!l->run_device || x->skip[s])
        return MICA_OK;
    mica__error_clear(&err);
    if (x->instances[s]->ops->enqueue(
            x->instances[s], x->descs + f, l->nb_inputs,
            x->descs + f + l->nb_inputs, l->nb_outputs,
            (const void *const *)(x->ptrs + f), x->ptrs + f + l->nb_inputs,
            ws > 0 ? mica__arena_at(x, e->profiles[x->profile].workspace_offset[s])
                   : NULL,
            x->stream, &err) != MICA_OK)
        return mica__exec_layer_error(x, s, &err, "enqueue failed");
    if (x->capturing && (st = mica__graph_check(x, s)) != MICA_OK)
        return st;
    if (l->makes_sizes && (st = mica__dds_after(x, s)) != MICA_OK)
        return st;
    return x->timing ? mica__timing_layer(x, s) : MICA_OK;
}

/* Ask boundary layer s for one step; *value gets what a READ stored. */
static mica_status_t step(mica_exec_t *x, int32_t s, uint32_t kind,
                          int64_t iteration, int64_t trips, int32_t branch,
                          int64_t *value)
{
    const mica_engine_t *e = x->e;
    const mica__layer_t *l = &e->layers[s];
    int32_t f = x->first[s];
    int64_t ws = e->profiles[x->profile].workspace[s];
    mica_step_t st;
    mica_error_t err;

    if (!l->run_device)
        return MICA_OK;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    st.kind = kind;
    st.iteration = iteration;
    st.trip_count = trips;
    st.branch = branch;
    mica__error_clear(&err);
    if (x->instances[s]->ops->enqueue_boundary(
            x->instances[s], &st, x->descs + f, l->nb_inputs,
            x->descs + f + l->nb_inputs, l->nb_outputs,
            (const void *const *)(x->ptrs + f), x->ptrs + f + l->nb_inputs,
            ws > 0 ? mica__arena_at(x, e->profiles[x->profile].workspace_offset[s])
                   : NULL,
            x->stream, &err) != MICA_OK)
        return mica__exec_layer_error(x, s, &err, "boundary step failed");
    if (value)
        *value = st.value;
    return x->timing ? mica__timing_layer(x, s) : MICA_OK;
}

/* The same step for each of `n` steps. */
static mica_status_t each(mica_exec_t *x, const int32_t *steps, int32_t n,
                          uint32_t kind, int64_t iteration, int64_t trips,
                          int32_t branch)
{
    int32_t i;
    mica_status_t st;
    for (i = 0; i < n; i++)
        if ((st = step(x, steps[i], kind, iteration, trips, branch, NULL)) !=
            MICA_OK)
            return st;
    return MICA_OK;
}

/* A loop starts: its bound, then its Recurrences take their initial
 * values.  -1: no bound but the while predicate. */
static mica_status_t enter(mica_exec_t *x, int32_t k)
{
    const mica__construct_t *c = &x->e->constructs[k];
    int64_t bound = -1, v;
    int32_t i;
    mica_status_t st;

    if (c->trip_limit >= 0 && c->read_at_entry) {
        const mica__layer_t *l = &x->e->layers[c->trip_limit];
        if ((st = step(x, c->trip_limit, MICA_STEP_READ, 0, -1, 0, &v)) !=
            MICA_OK)
            return st;
        if (x->e->tensors[l->inputs[0]].dtype == MICA_BOOL)
            bound = v ? -1 : 0;     /* a predicate that cannot change */
        else
            bound = v < 0 ? 0 : v;  /* a count */
    }
    for (i = 0; i < c->nb_iterators; i++) {
        if ((st = step(x, c->iterators[i], MICA_STEP_READ, 0, -1, 0, &v)) !=
            MICA_OK)
            return st;
        if (bound < 0 || v < bound)
            bound = v < 0 ? 0 : v;
    }
    x->trips[k] = bound;
    x->iter[k] = 0;
    return each(x, c->heads, c->nb_heads, MICA_STEP_ENTER, 0, bound, 0);
}

mica_status_t mica__flow_run(mica_exec_t *x)
{
    const mica_engine_t *e = x->e;
    int32_t pc = 0;
    int64_t v;
    mica_status_t st = e->nb_size_syms ? mica__dds_reset(x) : MICA_OK;

    while (pc < e->nb_prog && st == MICA_OK) {
        const mica__op_t *o = &e->prog[pc];
        const mica__construct_t *c = o->kind == MICA__OP_RUN
                                         ? NULL : &e->constructs[o->arg];
        int32_t k = o->arg;
        switch (o->kind) {
        case MICA__OP_RUN:
            st = run_layer(x, o->arg);
            pc++;
            break;
        case MICA__OP_LOOP_ENTER:
            if (!c->live) {
                pc = o->target;
                break;
            }
            st = enter(x, k);
            pc++;
            break;
        case MICA__OP_LOOP_TEST:
            if (x->trips[k] >= 0 && x->iter[k] >= x->trips[k]) {
                pc = o->target;
                break;
            }
            st = each(x, c->iterators, c->nb_iterators,
                      MICA_STEP_ITER_BEGIN, x->iter[k], x->trips[k], 0);
            pc++;
            break;
        case MICA__OP_LOOP_WHILE:
            st = step(x, c->trip_limit, MICA_STEP_READ, x->iter[k],
                      x->trips[k], 0, &v);
            pc = st == MICA_OK && !v ? o->target : pc + 1;
            break;
        case MICA__OP_LOOP_NEXT:
            /* LoopOutputs record trip i before the Recurrences move on. */
            if ((st = each(x, c->exits, c->nb_exits, MICA_STEP_ITER_END,
                           x->iter[k], x->trips[k], 0)) == MICA_OK)
                st = each(x, c->heads, c->nb_heads, MICA_STEP_ITER_END,
                          x->iter[k], x->trips[k], 0);
            x->iter[k]++;
            pc = o->target;
            break;
        case MICA__OP_LOOP_EXIT:
            st = each(x, c->exits, c->nb_exits, MICA_STEP_EXIT, 0,
                      x->iter[k], 0);
            pc++;
            break;
        case MICA__OP_IF:
            if (!c->live) {
                pc = o->target;
                break;
            }
            st = step(x, c->condition, MICA_STEP_READ, 0, -1, 0, &v);
            x->branch[k] = v ? 0 : 1;
            pc++;
            break;
        case MICA__OP_BRANCH:
            pc = x->branch[k] ? o->target : pc + 1;
            break;
        case MICA__OP_SELECT:
            st = each(x, c->exits, c->nb_exits, MICA_STEP_SELECT, 0, -1,
                      o->branch);
            pc = o->target;
            break;
        default:
            st = mica__fail(x->ctx, MICA_ERR_INTERNAL,
                            "unknown instruction %d at %d", (int)o->kind,
                            (int)pc);
        }
    }
    return st;
}

mica_status_t mica__flow_check_dims(mica_exec_t *x)
{
    const mica_engine_t *e = x->e;
    int32_t s;
    char a[256], b[256], at[512];

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica_dims_t *d0, *d1;
        if ((l->info.role != MICA_ROLE_RECURRENCE &&
             l->info.role != MICA_ROLE_IF_OUTPUT) ||
            !l->run_device || l->nb_inputs < 2 || l->inputs[0] < 0 ||
            l->inputs[1] < 0)
            continue;
        d0 = &x->shapes.dims[l->inputs[0]];
        d1 = &x->shapes.dims[l->inputs[1]];
        if (d0->nb_dims == d1->nb_dims &&
            memcmp(d0->d, d1->d, sizeof d0->d[0] * (size_t)d0->nb_dims) == 0)
            continue;
        mica__dims_text(d0, a, sizeof a);
        mica__dims_text(d1, b, sizeof b);
        return mica__fail(x->ctx, MICA_ERR_INVALID,
                          "%slayer '%s' (%s): %s '%s' has shape %s here, but "
                          "%s '%s' has %s", mica__at(l->origin, at, sizeof at),
                          l->name, l->info.type,
                          l->info.role == MICA_ROLE_RECURRENCE
                              ? "the initial value" : "the true value",
                          e->tensors[l->inputs[0]].name, a,
                          l->info.role == MICA_ROLE_RECURRENCE
                              ? "the next value" : "the false value",
                          e->tensors[l->inputs[1]].name, b);
    }
    return MICA_OK;
}
