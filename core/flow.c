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

/* Ask boundary layer s for one step; *value gets what a READ stored;
 * dev_iter and dev_trips: the trip and trip count in device memory (a
 * loop recorded into a graph), NULL otherwise. */
static mica_status_t step_at(mica_exec_t *x, int32_t s, uint32_t kind,
                             int64_t iteration, int64_t trips,
                             int32_t branch, int64_t *value,
                             const int64_t *dev_iter,
                             const int64_t *dev_trips)
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
    st.device_iteration = dev_iter;
    st.device_trip_count = dev_trips;
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
    if (x->capturing && mica__graph_check(x, s) != MICA_OK)
        return MICA_ERR_DEVICE;
    return x->timing ? mica__timing_layer(x, s) : MICA_OK;
}

static mica_status_t step(mica_exec_t *x, int32_t s, uint32_t kind,
                          int64_t iteration, int64_t trips, int32_t branch,
                          int64_t *value)
{
    return step_at(x, s, kind, iteration, trips, branch, value, NULL, NULL);
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

static mica_status_t graph_range(mica_exec_t *x, int32_t pc, int32_t end,
                                 int32_t depth);

mica_status_t mica__flow_run(mica_exec_t *x)
{
    const mica_engine_t *e = x->e;
    int32_t pc = 0;
    int64_t v;
    mica_status_t st = e->nb_size_syms ? mica__dds_reset(x) : MICA_OK;

    if (x->capturing && x->device_loops && st == MICA_OK)
        return graph_range(x, 0, e->nb_prog, 0);

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

/* ---- loops and conditionals recorded into a CUDA graph -----------------
 *
 * While capturing with x->device_loops (core/exec_graph.c checked that
 * every construct can), a loop becomes a while node and a conditional
 * two if nodes (CUDA's conditional nodes, mica__device_t's cond_*): the
 * tiny kernels of core/cuda/cond.cu read the trip count, the while
 * predicate or the condition in device memory and steer the nodes, so
 * that no trip waits for the host.  A loop k keeps its trip and bound
 * at x->loop_state + 2k; its boundary layers get them as mica_step_t's
 * device_iteration and device_trip_count.  Each body is captured on a
 * stream of its own, x->body_streams[depth]; x->stream is the stream of
 * the level being captured while its layers enqueue.
 *
 *   LOOP_START (bound: the count or predicate read at entry, the
 *   iterators' lengths), the Recurrences' ENTER
 *   while (trip < bound) {
 *       the Iterators' ITER_BEGIN; the body up to the while predicate;
 *       LOOP_WHILE (a false predicate stops the loop)
 *       if (predicate) {
 *           the rest of the body; ITER_END (LoopOutputs, Recurrences);
 *           LOOP_NEXT (trip + 1, the loop's handle again)
 *       }
 *   }
 *   EXIT (LoopOutputs, the trip count from the device)
 *
 * A loop without while predicate has no if node.  A conditional:
 * BRANCH sets the handle of one if node from the condition; its body is
 * the true branch's layers and SELECT 0, its else body the false one's
 * and SELECT 1.
 */

static mica_status_t each_at(mica_exec_t *x, const int32_t *steps,
                             int32_t n, uint32_t kind,
                             const int64_t *dev_iter,
                             const int64_t *dev_trips, int32_t branch)
{
    int32_t i;
    mica_status_t st;
    for (i = 0; i < n; i++)
        if ((st = step_at(x, steps[i], kind, dev_iter ? -1 : 0, -1, branch,
                          NULL, dev_iter, dev_trips)) != MICA_OK)
            return st;
    return MICA_OK;
}

/* Add a node of `kind` (`bodies` bodies) steered by h after what
 * x->stream captured; its body graphs into graphs[]. */
static mica_status_t node_add(mica_exec_t *x, int32_t kind, uint64_t h,
                              int32_t bodies, void **graphs)
{
    return x->dev->cond_node(x->ctx, x->stream, kind, h, bodies, graphs);
}

/* Capture body graph g on body stream `depth` from now on: x->stream is
 * that stream. */
static mica_status_t body_begin(mica_exec_t *x, void *g, int32_t depth)
{
    mica_status_t st;
    if (depth >= x->nb_body_streams)
        return mica__fail(x->ctx, MICA_ERR_INTERNAL, "conditional nodes "
                          "nested deeper (%d) than planned (%d)",
                          (int)depth + 1, (int)x->nb_body_streams);
    if ((st = x->dev->cond_body(x->ctx, x->body_streams[depth], g)) !=
        MICA_OK)
        return st;
    x->stream = x->body_streams[depth];
    return MICA_OK;
}

/* A node of `kind` with one body, steered by h, its body captured on
 * stream `depth` from now on. */
static mica_status_t node_begin(mica_exec_t *x, int32_t kind, uint64_t h,
                                int32_t depth)
{
    void *g[1];
    mica_status_t st = node_add(x, kind, h, 1, g);
    return st != MICA_OK ? st : body_begin(x, g[0], depth);
}

/* End the body on stream `depth`; x->stream back to `outer`.  Ended
 * also after a failure (its status kept), so that no stream stays
 * capturing. */
static mica_status_t node_end(mica_exec_t *x, int32_t depth, void *outer,
                              mica_status_t st)
{
    mica_status_t end = x->dev->cond_end(x->ctx, x->body_streams[depth]);
    x->stream = outer;
    return st != MICA_OK ? st : end;
}

/* A kernel of core/cuda/cond.cu on x->stream. */
static mica_status_t cond_set(mica_exec_t *x, int32_t op,
                              const void *value, mica_dtype_t dtype,
                              int64_t limit, int64_t *state, uint64_t h,
                              uint64_t h2)
{
    mica__cond_set_t w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.value = value;
    w.value_dtype = dtype;
    w.limit = limit;
    w.state = state;
    w.handle = h;
    w.handle2 = h2;
    return x->dev->cond_set(x->ctx, x->stream, &w);
}

/* The device pointer and type of input 0 of layer s. */
static const void *input0(const mica_exec_t *x, int32_t s,
                          mica_dtype_t *dtype)
{
    const mica__layer_t *l = &x->e->layers[s];
    *dtype = x->e->tensors[l->inputs[0]].dtype;
    return x->ptrs[x->first[s]];
}

/* The loop whose LOOP_ENTER is at pc; *next the instruction after it. */
static mica_status_t graph_loop(mica_exec_t *x, int32_t pc, int32_t depth,
                                int32_t *next)
{
    const mica_engine_t *e = x->e;
    int32_t k = e->prog[pc].arg, exitpc = e->prog[pc].target - 1;
    int32_t test = pc + 1, nextop = exitpc - 1, wpc = -1, i;
    const mica__construct_t *c = &e->constructs[k];
    int64_t *state = x->loop_state + 2 * (int64_t)k, limit = -1, v;
    const void *value = NULL;
    mica_dtype_t dtype = MICA_INT32;
    void *outer = x->stream, *body;
    uint64_t h = 0, h2 = 0;
    mica_status_t st;

    if (exitpc <= test || e->prog[exitpc].kind != MICA__OP_LOOP_EXIT ||
        e->prog[test].kind != MICA__OP_LOOP_TEST ||
        e->prog[nextop].kind != MICA__OP_LOOP_NEXT)
        return mica__fail(x->ctx, MICA_ERR_INTERNAL, "loop '%s': its "
                          "program is not where it should be", c->name);
    for (i = test + 1; i < nextop; i++)
        if (e->prog[i].kind == MICA__OP_LOOP_WHILE && e->prog[i].arg == k)
            wpc = i;
    if (c->trip_limit >= 0 && c->read_at_entry)
        value = input0(x, c->trip_limit, &dtype);
    /* The Iterators' lengths, from their descriptors (no device work). */
    for (i = 0; i < c->nb_iterators; i++) {
        if ((st = step(x, c->iterators[i], MICA_STEP_READ, 0, -1, 0, &v)) !=
            MICA_OK)
            return st;
        if (limit < 0 || v < limit)
            limit = v < 0 ? 0 : v;
    }
    if ((st = x->dev->cond_handle(x->ctx, x->stream, &h)) != MICA_OK ||
        (st = cond_set(x, MICA__COND_LOOP_START, value, dtype, limit, state,
                       h, 0)) != MICA_OK ||
        (st = each_at(x, c->heads, c->nb_heads, MICA_STEP_ENTER, NULL, NULL,
                      0)) != MICA_OK ||
        (st = node_begin(x, MICA__COND_NODE_WHILE, h, depth)) != MICA_OK)
        return st;
    body = x->stream;
    st = each_at(x, c->iterators, c->nb_iterators, MICA_STEP_ITER_BEGIN,
                 state, NULL, 0);
    if (st == MICA_OK && wpc >= 0) {
        const void *pred = input0(x, c->trip_limit, &dtype);
        if ((st = graph_range(x, test + 1, wpc, depth + 1)) == MICA_OK &&
            (st = x->dev->cond_handle(x->ctx, x->stream, &h2)) == MICA_OK &&
            (st = cond_set(x, MICA__COND_LOOP_WHILE, pred, dtype, -1, state,
                           h, h2)) == MICA_OK &&
            (st = node_begin(x, MICA__COND_NODE_IF, h2, depth + 1)) ==
                MICA_OK) {
            st = graph_range(x, wpc + 1, nextop, depth + 2);
            if (st == MICA_OK)
                st = each_at(x, c->exits, c->nb_exits, MICA_STEP_ITER_END,
                             state, NULL, 0);
            if (st == MICA_OK)
                st = each_at(x, c->heads, c->nb_heads, MICA_STEP_ITER_END,
                             state, NULL, 0);
            if (st == MICA_OK)
                st = cond_set(x, MICA__COND_LOOP_NEXT, NULL, MICA_INT32, -1,
                              state, h, 0);
            st = node_end(x, depth + 1, body, st);
        }
    } else if (st == MICA_OK) {
        if ((st = graph_range(x, test + 1, nextop, depth + 1)) == MICA_OK &&
            (st = each_at(x, c->exits, c->nb_exits, MICA_STEP_ITER_END,
                          state, NULL, 0)) == MICA_OK &&
            (st = each_at(x, c->heads, c->nb_heads, MICA_STEP_ITER_END,
                          state, NULL, 0)) == MICA_OK)
            st = cond_set(x, MICA__COND_LOOP_NEXT, NULL, MICA_INT32, -1,
                          state, h, 0);
    }
    if ((st = node_end(x, depth, outer, st)) != MICA_OK)
        return st;
    *next = exitpc + 1;
    return each_at(x, c->exits, c->nb_exits, MICA_STEP_EXIT, NULL, state, 0);
}

/* The conditional whose IF is at pc; *next the instruction after it. */
static mica_status_t graph_if(mica_exec_t *x, int32_t pc, int32_t depth,
                              int32_t *next)
{
    const mica_engine_t *e = x->e;
    int32_t k = e->prog[pc].arg, end = e->prog[pc].target, br = -1, i;
    int32_t sel[2] = {-1, -1}, b;
    const mica__construct_t *c = &e->constructs[k];
    mica_dtype_t dtype;
    const void *cond;
    void *outer = x->stream, *g[2];
    uint64_t h = 0;
    mica_status_t st;

    for (i = pc + 1; i < end; i++) {
        const mica__op_t *o = &e->prog[i];
        if (o->arg != k || o->kind == MICA__OP_RUN)
            continue;
        if (o->kind == MICA__OP_BRANCH && br < 0)
            br = i;
        else if (o->kind == MICA__OP_SELECT && o->branch >= 0 &&
                 o->branch < 2 && sel[o->branch] < 0)
            sel[o->branch] = i;
    }
    if (br < 0 || sel[0] < br || sel[1] < sel[0])
        return mica__fail(x->ctx, MICA_ERR_INTERNAL, "conditional '%s': "
                          "its program is not where it should be", c->name);
    cond = input0(x, c->condition, &dtype);
    /* One if node with an else body, steered by one handle, set where
     * the host reads the condition: before the IfConditionalInputs,
     * whose outputs may take the condition's memory once it is read. */
    if ((st = x->dev->cond_handle(x->ctx, x->stream, &h)) != MICA_OK ||
        (st = cond_set(x, MICA__COND_BRANCH, cond, dtype, -1, NULL, h, 0)) !=
            MICA_OK ||
        (st = graph_range(x, pc + 1, br, depth)) != MICA_OK ||
        (st = node_add(x, MICA__COND_NODE_IF, h, 2, g)) != MICA_OK)
        return st;
    for (b = 0; b < 2; b++) {
        int32_t from = b ? sel[0] + 1 : br + 1;
        if ((st = body_begin(x, g[b], depth)) != MICA_OK)
            return st;
        st = graph_range(x, from, sel[b], depth + 1);
        if (st == MICA_OK)
            st = each_at(x, c->exits, c->nb_exits, MICA_STEP_SELECT, NULL,
                         NULL, b);
        if ((st = node_end(x, depth, outer, st)) != MICA_OK)
            return st;
    }
    *next = end;
    return MICA_OK;
}

/* The program [pc, end) at nesting level `depth`. */
static mica_status_t graph_range(mica_exec_t *x, int32_t pc, int32_t end,
                                 int32_t depth)
{
    const mica_engine_t *e = x->e;
    mica_status_t st = MICA_OK;

    while (pc < end && st == MICA_OK) {
        const mica__op_t *o = &e->prog[pc];
        switch (o->kind) {
        case MICA__OP_RUN:
            st = run_layer(x, o->arg);
            pc++;
            break;
        case MICA__OP_LOOP_ENTER:
        case MICA__OP_IF:
            if (!e->constructs[o->arg].live)
                pc = o->target; /* nothing of it runs on the device */
            else if (o->kind == MICA__OP_IF)
                st = graph_if(x, pc, depth, &pc);
            else
                st = graph_loop(x, pc, depth, &pc);
            break;
        default:
            st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "instruction %d at "
                            "%d outside its construct", (int)o->kind,
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
