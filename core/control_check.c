/*
 * core/control_check.c - loops and conditionals once types, shapes and
 * kinds are known: what must hold of their layers, and the arena
 * lifetimes that stretch over loops.
 */
#include <config.h>

#include "control.h"

#include <stdio.h>
#include <stdlib.h>

static int needs_boundary_op(uint32_t role)
{
    return role != MICA_ROLE_NONE && role != MICA_ROLE_IF_INPUT &&
           role != MICA_ROLE_ASSERTION;
}

/* Layer s's next value (a Recurrence's back edge) has its initial value's
 * type and, where both are known, its shape. */
static mica_status_t check_recurrence(mica__build_t *b, int32_t s)
{
    const mica_engine_t *e = b->e;
    const mica__layer_t *l = &e->layers[s];
    const mica__tensor_t *init, *next;
    char at[512];
    int32_t i, differ;

    if (l->nb_inputs < 2 || l->inputs[0] < 0 || l->inputs[1] < 0)
        return mica__fail(b->ctx, MICA_ERR_INVALID,
                          "%slayer '%s' (%s): a Recurrence takes two inputs, "
                          "the initial and the next value",
                          mica__at(l->origin, at, sizeof at), l->name,
                          l->info.type);
    init = &e->tensors[l->inputs[0]];
    next = &e->tensors[l->inputs[1]];
    differ = init->dtype != next->dtype ||
             init->shape.nb_dims != next->shape.nb_dims;
    for (i = 0; !differ && i < init->shape.nb_dims; i++)
        differ = init->dims.d[i] >= 0 && next->dims.d[i] >= 0 &&
                 init->dims.d[i] != next->dims.d[i];
    if (differ)
        return mica__fail(b->ctx, MICA_ERR_INVALID,
                          "%slayer '%s' (Recurrence): the next value '%s' is "
                          "%s %s but the initial value '%s' is %s %s",
                          mica__at(l->origin, at, sizeof at), l->name,
                          next->name, mica_dtype_name(next->dtype),
                          next->shape_text, init->name,
                          mica_dtype_name(init->dtype), init->shape_text);
    return MICA_OK;
}

/* A LoopOutput without a length (last_value) reads a Recurrence's output
 * of its own loop: the value after the last trip (seed 000's X_n). */
static mica_status_t check_last_value(mica__build_t *b, int32_t s)
{
    const mica_engine_t *e = b->e;
    const mica__layer_t *l = &e->layers[s];
    int32_t t = l->nb_inputs > 0 ? l->inputs[0] : -1, p;
    char at[512];

    if (l->nb_inputs > 1 && l->inputs[1] >= 0)
        return MICA_OK; /* concatenate or reverse */
    p = t >= 0 ? e->tensors[t].producer : -1;
    if (p >= 0 && e->layers[p].info.role == MICA_ROLE_RECURRENCE &&
        e->layers[p].construct == l->construct)
        return MICA_OK;
    return mica__fail(b->ctx, MICA_ERR_INVALID,
                      "%slayer '%s' (LoopOutput): a last_value output reads "
                      "the output of a Recurrence of loop '%s', but '%s' "
                      "is %s%s%s", mica__at(l->origin, at, sizeof at),
                      l->name, e->constructs[l->construct].name,
                      t >= 0 ? e->tensors[t].name : "~",
                      p >= 0 ? "made by layer '" : "not",
                      p >= 0 ? e->layers[p].name : " a layer's output",
                      p >= 0 ? "'" : "");
}

/* Whether construct k is a loop or inside one. */
static int in_loop(const mica_engine_t *e, int32_t k)
{
    for (; k >= 0; k = e->constructs[k].parent)
        if (e->constructs[k].kind == MICA_CONSTRUCT_LOOP)
            return 1;
    return 0;
}

mica_status_t mica__control_check(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t s, i;
    char at[512];

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica__construct_t *k = l->construct >= 0
                                         ? &e->constructs[l->construct] : NULL;
        mica_status_t st;
        mica__at(l->origin, at, sizeof at);
        if ((int32_t)l->info.role != b->role[b->order[s]])
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): implementation '%s' "
                              "declares another role than the type's other "
                              "implementations", at, l->name, l->info.type,
                              l->info.implementation);
        if (needs_boundary_op(l->info.role) &&
            !MICA__HAS_OP(l->instance->ops, enqueue_boundary))
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (%s): implementation '%s' "
                              "declares a boundary role but has no "
                              "enqueue_boundary", at, l->name, l->info.type,
                              l->info.implementation);
        if (!k)
            continue;
        /* Shape arithmetic inside a conditional (a Shape of a value of a
         * branch, what is computed from it) is computed before the
         * layers run, as everywhere: its values depend on dimensions
         * alone, the same whichever branch runs.  Not inside a loop
         * (dimensions may change with each iteration), nor by the
         * conditional's own boundary layers. */
        if (l->run_host && (in_loop(e, l->construct) ||
                            l->info.role != MICA_ROLE_NONE))
            for (i = 0; i < l->nb_outputs; i++)
                if (e->tensors[l->outputs[i]].need_s)
                    return mica__fail(b->ctx, MICA_ERR_UNSUPPORTED,
                                      "%slayer '%s' (%s) is inside %s '%s' "
                                      "and computes '%s' as a shape tensor: "
                                      "shape tensors are computed before "
                                      "execution, outside loops and "
                                      "conditionals", at, l->name,
                                      l->info.type,
                                      mica__ctl_kind_name(k->kind),
                                      k->name, e->tensors[l->outputs[i]].name);
        if (l->info.role == MICA_ROLE_RECURRENCE &&
            (st = check_recurrence(b, s)) != MICA_OK)
            return st;
        if (l->info.role == MICA_ROLE_LOOP_OUTPUT &&
            (st = check_last_value(b, s)) != MICA_OK)
            return st;
        if (l->info.role == MICA_ROLE_TRIP_LIMIT && !k->read_at_entry &&
            l->nb_inputs > 0 && l->inputs[0] >= 0 &&
            e->tensors[l->inputs[0]].dtype != MICA_BOOL)
            return mica__fail(b->ctx, MICA_ERR_INVALID,
                              "%slayer '%s' (TripLimit): the trip count '%s' "
                              "is computed inside loop '%s'; a count is "
                              "fixed when the loop starts (compute it "
                              "outside, or use kind: while)", at, l->name,
                              e->tensors[l->inputs[0]].name, k->name);
    }
    return MICA_OK;
}

/* Stretch [*from, *to] over loop k if it crosses k's steps. */
static void stretch(const mica__construct_t *k, int32_t *from, int32_t *to)
{
    int32_t lo = k->begin, hi = k->end - 1;
    if (*to < lo || *from > hi || (*from >= lo && *to <= hi))
        return;
    if (*from > lo)
        *from = lo;
    if (*to < hi)
        *to = hi;
}

static int32_t depth_of(const mica_engine_t *e, int32_t k)
{
    int32_t d = 0;
    while ((k = e->constructs[k].parent) >= 0)
        d++;
    return d;
}

void mica__control_lifetimes(mica_engine_t *e)
{
    int32_t t, s, k, d, maxd = 0;

    for (t = 0; t < e->nb_tensors; t++) {
        mica__tensor_t *x = &e->tensors[t];
        x->live_from = x->is_input ? -1 : x->producer;
        x->live_to = x->is_output ? e->nb_layers
                                  : (x->last_use > x->live_from ? x->last_use
                                                                : x->live_from);
    }
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica__construct_t *c;
        if (l->construct < 0 || e->constructs[l->construct].kind !=
                                    MICA_CONSTRUCT_LOOP)
            continue;
        c = &e->constructs[l->construct];
        if (l->info.role == MICA_ROLE_RECURRENCE) {
            mica__tensor_t *out = &e->tensors[l->outputs[0]];
            out->live_from = c->begin;
            if (out->live_to < c->end - 1)
                out->live_to = c->end - 1;
            if (l->nb_inputs > 1 && l->inputs[1] >= 0 &&
                e->tensors[l->inputs[1]].live_to < c->end - 1)
                e->tensors[l->inputs[1]].live_to = c->end - 1;
        } else if (l->info.role == MICA_ROLE_LOOP_OUTPUT) {
            e->tensors[l->outputs[0]].live_from = c->begin;
        }
    }
    for (k = 0; k < e->nb_constructs; k++)
        if ((d = depth_of(e, k)) > maxd)
            maxd = d;
    /* Innermost loops first: a stretch over one stays inside its parent
     * or crosses it too. */
    for (d = maxd; d >= 0; d--)
        for (k = 0; k < e->nb_constructs; k++)
            if (e->constructs[k].kind == MICA_CONSTRUCT_LOOP &&
                depth_of(e, k) == d)
                for (t = 0; t < e->nb_tensors; t++)
                    stretch(&e->constructs[k], &e->tensors[t].live_from,
                            &e->tensors[t].live_to);
}
