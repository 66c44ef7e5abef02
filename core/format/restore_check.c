/*
 * core/format/restore_check.c - what must hold of a restored engine's
 * structure before it may run: names unique, every tensor made by one
 * layer before it is read (a Recurrence's back edge apart), inputs and
 * outputs flagged as such, symbols bound to what exists, loops and
 * conditionals nested and made of boundary layers of their kind, and a
 * program whose every jump stays in place and whose only backward jump
 * is a loop's next trip (so that it runs only the trips its loop
 * allows).  Each refusal is one line naming the item.
 */
#include <config.h>

#include "restore.h"

#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name given twice among n, or NULL (names: scratch). */
static const char *twice(const char **names, int32_t n)
{
    int32_t i;
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return names[i];
    return NULL;
}

static mica_status_t unique_names(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t n = e->nb_tensors > e->nb_layers ? e->nb_tensors : e->nb_layers;
    const char **v = calloc((size_t)n + 1, sizeof *v), *dup;
    int32_t i;

    if (!v)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < e->nb_tensors; i++)
        v[i] = e->tensors[i].name;
    if ((dup = twice(v, e->nb_tensors)) != NULL) {
        free(v);
        return mica__restore_bad(x, "tensor", "'%s' twice", dup);
    }
    for (i = 0; i < e->nb_layers; i++)
        v[i] = e->layers[i].name;
    dup = twice(v, e->nb_layers);
    free(v);
    return dup ? mica__restore_bad(x, "layer", "'%s' twice", dup) : MICA_OK;
}

/* The n tensors of v distinct and each with `flag` set; as many as the
 * tensors with it. */
static mica_status_t listed(mica__restore_t *x, const int32_t *v, int32_t n,
                            size_t flag_at, const char *what)
{
    mica_engine_t *e = x->e;
    unsigned char *seen = calloc((size_t)e->nb_tensors + 1, 1);
    int32_t i, flagged = 0;

    if (!seen)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < e->nb_tensors; i++)
        flagged += *(const int32_t *)((const char *)&e->tensors[i] + flag_at);
    for (i = 0; i < n; i++) {
        const mica__tensor_t *t = &e->tensors[v[i]];
        if (seen[v[i]] || !*(const int32_t *)((const char *)t + flag_at)) {
            free(seen);
            return mica__restore_bad(x, what, "'%s'", t->name);
        }
        seen[v[i]] = 1;
    }
    free(seen);
    return flagged == n ? MICA_OK
                        : mica__restore_bad(x, what, "%d listed, %d flagged",
                                            (int)n, (int)flagged);
}

/*
 * Whether input i of layer l is where l reads it: its values on the host
 * (shape kind, or data of a layer that runs in phase 1) from a shape
 * tensor computed on the host or a shape-tensor input; its data on the
 * device (a layer that runs there) from a tensor with memory there.
 */
static int where_read(const mica_engine_t *e, const mica__layer_t *l,
                      int32_t i)
{
    const mica__tensor_t *t = &e->tensors[l->inputs[i]];
    int host = t->need_s &&
               (t->is_shape_input ||
                (t->producer >= 0 && e->layers[t->producer].run_host));
    int32_t kind = l->input_kinds[i];
    if (kind == MICA_INPUT_DIMS)
        return 1;
    if (kind == MICA_INPUT_SHAPE)
        return host;
    return (!l->run_host || host) && (!l->run_device || t->need_e);
}

/* Each layer's outputs are the tensors it makes, each tensor made once
 * or a network input; each input is made before it is read (a
 * Recurrence's back edge apart). */
static mica_status_t data_flow(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    unsigned char *made = calloc((size_t)e->nb_tensors + 1, 1);
    const char *what = NULL, *name = NULL;
    int32_t s, i, t;

    if (!made)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (s = 0; s < e->nb_layers && !what; s++) {
        const mica__layer_t *l = &e->layers[s];
        for (i = 0; i < l->nb_outputs && !what; i++) {
            t = l->outputs[i];
            if (e->tensors[t].producer != s || e->tensors[t].is_input ||
                made[t])
                what = "is not made by its layer alone", name = l->name;
            made[t] = 1;
        }
        for (i = 0; i < l->nb_inputs && !what; i++)
            if ((t = l->inputs[i]) >= 0 && e->tensors[t].producer >= s &&
                !(i == 1 && l->info.role == MICA_ROLE_RECURRENCE))
                what = "reads a tensor before it is made", name = l->name;
            else if (t >= 0 && !where_read(e, l, i))
                what = "reads a tensor where it is not", name = l->name;
        for (i = 0; i < l->nb_outputs && !what; i++)
            if (l->run_device && !e->tensors[l->outputs[i]].need_e)
                what = "writes a tensor that has no memory", name = l->name;
    }
    for (t = 0; t < e->nb_tensors && !what; t++)
        if (e->tensors[t].is_input ? e->tensors[t].producer != -1
                                   : !made[t])
            what = "is made by no layer", name = e->tensors[t].name;
    free(made);
    return what ? mica__restore_bad(x, "graph", "'%s' %s", name, what)
                : MICA_OK;
}

/* Whether expression v is a constant >= 0. */
static int fixed(const mica_expr_t *v)
{
    return mica__expr_is_constant(v) && mica__expr_constant_value(v) >= 0;
}

/* Symbols stand for what exists; computed values fit their tensor. */
static mica_status_t symbols(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t i, j;

    for (i = 0; i < e->nb_symbols; i++) {
        const mica__symbol_t *s = &e->symbols[i];
        const mica__tensor_t *t = &e->tensors[s->tensor];
        int ok = 1;
        if (s->kind < MICA__SYM_COMPUTED)
            ok = s->tensor == e->input_index[s->input];
        if (s->kind == MICA__SYM_INPUT_DIM)
            ok = ok && s->axis < t->shape.nb_dims && !t->is_shape_input;
        else if (s->kind == MICA__SYM_INPUT_VALUE)
            ok = ok && t->is_shape_input && s->axis < t->shape.nb_values;
        else if (s->kind == MICA__SYM_SIZE) /* its layer: mica__dds_index */
            ok = !t->is_input && t->shape.nb_dims == 0 && t->need_e &&
                 (t->dtype == MICA_INT32 || t->dtype == MICA_INT64) &&
                 e->layers[t->producer].run_device &&
                 !e->layers[t->producer].run_host &&
                 e->layers[t->producer].construct < 0;
        else
            ok = t->first_symbol >= 0 && i - t->first_symbol == s->axis;
        if (!ok)
            return mica__restore_bad(x, "symbol", "'%s'", s->name);
    }
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        int64_t n = 1;
        int ok = 1;
        for (j = 0; j < t->shape.nb_dims; j++)
            if (!fixed(t->shape.d[j]) ||
                __builtin_mul_overflow(n, t->dims.d[j], &n))
                ok = 0;
        if (t->is_shape_input)
            ok = ok && t->is_input && t->dtype == MICA_INT32 &&
                 t->shape.nb_dims <= 1 && t->shape.values &&
                 n == t->shape.nb_values;
        else if (t->first_symbol >= 0)
            ok = ok && t->shape.values && n == t->shape.nb_values &&
                 t->shape.nb_dims <= 1 &&
                 t->first_symbol + n <= e->nb_symbols &&
                 (t->dtype == MICA_INT32 || t->dtype == MICA_INT64 ||
                  t->dtype == MICA_INT8 || t->dtype == MICA_UINT8 ||
                  t->dtype == MICA_BOOL);
        else
            ok = 1;
        for (j = 0; ok && t->first_symbol >= 0 && j < n; j++)
            ok = e->symbols[t->first_symbol + j].kind == MICA__SYM_COMPUTED &&
                 e->symbols[t->first_symbol + j].tensor == i;
        if (!ok)
            return mica__restore_bad(x, "tensor", "'%s': its values",
                                     t->name);
    }
    return MICA_OK;
}

/* The family of constructs a boundary role belongs to: 0 none, else
 * 1 + mica_construct_kind_t. */
static int role_family(uint32_t role)
{
    switch (role) {
    case MICA_ROLE_TRIP_LIMIT: case MICA_ROLE_RECURRENCE:
    case MICA_ROLE_ITERATOR: case MICA_ROLE_LOOP_OUTPUT:
        return 1 + MICA_CONSTRUCT_LOOP;
    case MICA_ROLE_CONDITION: case MICA_ROLE_IF_INPUT:
    case MICA_ROLE_IF_OUTPUT:
        return 1 + MICA_CONSTRUCT_CONDITIONAL;
    default:
        return 0;
    }
}

/* The inputs a boundary role reads: 2 (inputs 0 and 1), 1, or 0. */
static int role_inputs(uint32_t role)
{
    if (role == MICA_ROLE_RECURRENCE || role == MICA_ROLE_IF_OUTPUT)
        return 2;
    return role_family(role) && role != MICA_ROLE_IF_INPUT ? 1 : 0;
}

/* Steps v[0..n) of construct k are layers of k with `role`. */
static int steps_of(const mica_engine_t *e, int32_t k, const int32_t *v,
                    int32_t n, uint32_t role)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (e->layers[v[i]].construct != k ||
            e->layers[v[i]].info.role != role)
            return 0;
    return 1;
}

static mica_status_t constructs(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t k, s, i, p, depth;

    for (k = 0; k < e->nb_constructs; k++) {
        const mica__construct_t *c = &e->constructs[k];
        int loop = c->kind == MICA_CONSTRUCT_LOOP, ok;
        for (p = c->parent, depth = 0; p >= 0 && depth <= e->nb_constructs;
             p = e->constructs[p].parent)
            depth++;
        ok = depth <= e->nb_constructs && c->parent != k;
        if (ok && c->parent >= 0) {
            const mica__construct_t *q = &e->constructs[c->parent];
            ok = q->begin <= c->begin && c->end <= q->end &&
                 (q->kind == MICA_CONSTRUCT_CONDITIONAL) ==
                     (c->branch >= 0);
        } else if (ok) {
            ok = c->branch < 0;
        }
        if (ok && loop)
            ok = steps_of(e, k, c->heads, c->nb_heads,
                          MICA_ROLE_RECURRENCE) &&
                 steps_of(e, k, c->iterators, c->nb_iterators,
                          MICA_ROLE_ITERATOR) &&
                 steps_of(e, k, c->exits, c->nb_exits,
                          MICA_ROLE_LOOP_OUTPUT) &&
                 (c->trip_limit < 0 || steps_of(e, k, &c->trip_limit, 1,
                                                MICA_ROLE_TRIP_LIMIT));
        else if (ok)
            ok = c->trip_limit < 0 && c->nb_iterators == 0 &&
                 !c->read_at_entry && c->condition >= 0 &&
                 steps_of(e, k, &c->condition, 1, MICA_ROLE_CONDITION) &&
                 steps_of(e, k, c->heads, c->nb_heads, MICA_ROLE_IF_INPUT) &&
                 steps_of(e, k, c->exits, c->nb_exits, MICA_ROLE_IF_OUTPUT);
        if (!ok)
            return mica__restore_bad(x, "loop or conditional", "'%s'",
                                     c->name);
    }
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica__construct_t *c =
            l->construct >= 0 ? &e->constructs[l->construct] : NULL;
        int family = role_family(l->info.role), ok;
        ok = c ? c->begin <= s && s < c->end &&
                     (!family || family == 1 + c->kind) &&
                     (l->branch >= 0) ==
                         (c->kind == MICA_CONSTRUCT_CONDITIONAL &&
                          l->info.role == MICA_ROLE_NONE)
               : !family && l->branch < 0;
        for (i = 0; ok && i < role_inputs(l->info.role); i++)
            ok = i < l->nb_inputs && l->inputs[i] >= 0;
        if (!ok)
            return mica__restore_bad(x, "layer", "'%s': its place in loops "
                                     "and conditionals", l->name);
    }
    return MICA_OK;
}

mica_status_t mica__restore_check_graph(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    mica_status_t st;
    int32_t s, j, i;

    if ((st = unique_names(x)) != MICA_OK ||
        (st = listed(x, e->input_index, e->nb_inputs,
                     offsetof(mica__tensor_t, is_input),
                     "network input")) != MICA_OK ||
        (st = listed(x, e->output_index, e->nb_outputs,
                     offsetof(mica__tensor_t, is_output),
                     "network output")) != MICA_OK ||
        (st = listed(x, e->shape_output_index, e->nb_shape_outputs,
                     offsetof(mica__tensor_t, is_shape_output),
                     "output for shapes")) != MICA_OK ||
        (st = data_flow(x)) != MICA_OK || (st = symbols(x)) != MICA_OK ||
        (st = constructs(x)) != MICA_OK || (st = mica__dds_index(e)) != MICA_OK)
        return st;
    /* Lifetimes in the arena, as a build finds them: from the last step
     * that reads each tensor on the device, stretched over loops. */
    for (i = 0; i < e->nb_tensors; i++)
        e->tensors[i].last_use = -1;
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        for (j = 0; l->run_device && j < l->nb_inputs; j++)
            if (l->inputs[j] >= 0 && l->input_kinds[j] == MICA_INPUT_DATA)
                e->tensors[l->inputs[j]].last_use = s;
    }
    mica__control_lifetimes(e);
    return MICA_OK;
}

/* ---- the program -------------------------------------------------------- */

/* Whether op kind `kind` works on a loop (1), a conditional (2), or runs
 * a layer (0); -1 for an unknown kind. */
static int op_family(int32_t kind)
{
    switch (kind) {
    case MICA__OP_RUN: return 0;
    case MICA__OP_LOOP_ENTER: case MICA__OP_LOOP_TEST:
    case MICA__OP_LOOP_WHILE: case MICA__OP_LOOP_NEXT:
    case MICA__OP_LOOP_EXIT: return 1;
    case MICA__OP_IF: case MICA__OP_BRANCH: case MICA__OP_SELECT: return 2;
    default: return -1;
    }
}

mica_status_t mica__restore_check_program(mica__restore_t *x)
{
    const mica_engine_t *e = x->e;
    int32_t pc, n = e->nb_prog;

    for (pc = 0; pc < n; pc++) {
        const mica__op_t *o = &e->prog[pc];
        const mica__construct_t *c = NULL;
        int family = op_family(o->kind), ok;
        if (family == 0) {
            ok = o->arg >= 0 && o->arg < e->nb_layers;
        } else {
            ok = family > 0 && o->arg >= 0 && o->arg < e->nb_constructs;
            c = ok ? &e->constructs[o->arg] : NULL;
            ok = ok && family == 1 + c->kind;
        }
        /* Forward jumps only, but a loop's next trip back to its test,
         * which the loop's bound stops. */
        if (ok && family > 0 && o->kind != MICA__OP_LOOP_NEXT &&
            o->kind != MICA__OP_LOOP_EXIT)
            ok = o->target > pc && o->target <= n;
        if (ok && o->kind == MICA__OP_LOOP_NEXT)
            ok = o->target >= 0 && o->target < pc &&
                 e->prog[o->target].kind == MICA__OP_LOOP_TEST &&
                 e->prog[o->target].arg == o->arg;
        if (ok && o->kind == MICA__OP_LOOP_TEST)
            ok = pc > 0 && e->prog[pc - 1].kind == MICA__OP_LOOP_ENTER &&
                 e->prog[pc - 1].arg == o->arg &&
                 e->prog[pc - 1].target == o->target + 1 &&
                 e->prog[o->target].kind == MICA__OP_LOOP_EXIT &&
                 e->prog[o->target].arg == o->arg &&
                 (c->nb_iterators > 0 || c->trip_limit >= 0);
        if (ok && o->kind == MICA__OP_LOOP_WHILE)
            ok = c->trip_limit >= 0 && !c->read_at_entry;
        if (ok && o->kind == MICA__OP_SELECT)
            ok = o->branch == 0 || o->branch == 1;
        if (!ok)
            return mica__restore_bad(x, "program", "instruction %d",
                                     (int)pc);
    }
    return MICA_OK;
}
