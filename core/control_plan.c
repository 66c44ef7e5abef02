/*
 * core/control_plan.c - loops and conditionals at build time, second
 * half: which branch of its conditional each layer belongs to, and the
 * plan as a whole (mica__control_plan: find the constructs, their bodies
 * and nesting (control.c), the branches, then the order and program
 * (control_order.c)); the engine's constructs freed.
 */
#include <config.h>

#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- branches -------------------------------------------------------- */

/* Each layer of a conditional's inside belongs to the branch whose
 * outputs it reaches; nested constructs go whole. */
static mica_status_t branches(mica__ctl_t *c)
{
    unsigned char *mark = calloc((size_t)c->nl + (size_t)c->nc + 1, 1);
    int32_t k, i, j, m;
    mica_status_t st = MICA_OK;
    char where[512];

    if (!mark)
        return mica__fail(c->b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < c->nl; i++)
        c->branch[i] = -1;
    for (k = 0; k < c->nc && st == MICA_OK; k++) {
        if (c->ckind[k] != MICA_CONSTRUCT_CONDITIONAL)
            continue;
        memset(mark, 0, (size_t)c->nl + (size_t)c->nc + 1);
        for (i = 0; i < c->nl; i++) {
            if (c->cons[i] != k || c->b->role[i] != MICA_ROLE_IF_OUTPUT)
                continue;
            for (j = 0; j < 2 && j < c->net->layers[i].nb_inputs; j++) {
                int32_t t = c->tin[c->tin_first[i] + j];
                if (t >= 0 && c->b->def_layer[t] >= 0)
                    mica__ctl_mark_back(c, k, c->b->def_layer[t], 1 << j, mark);
            }
        }
        /* A nested construct takes the union of its layers' marks. */
        for (i = 0; i < c->nl; i++) {
            int32_t it = mica__ctl_item_of(c, k, i);
            if (it >= c->nl)
                mark[it] |= mark[i];
        }
        for (i = 0; i < c->nl && st == MICA_OK; i++) {
            int32_t it = mica__ctl_item_of(c, k, i);
            if (it < 0)
                continue;
            m = mark[it];
            if (m == 3)
                st = it < c->nl
                    ? mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                 "%slayer '%s' of conditional '%s' feeds both "
                                 "its true and its false branch: an edge "
                                 "between the branches (compute it before "
                                 "the conditional, or once in each branch)",
                                 mica__ctl_at(c, i, where, sizeof where),
                                 c->net->layers[i].name, c->cname[k])
                    : mica__fail(c->b->ctx, MICA_ERR_INVALID,
                                 "%s '%s' inside conditional '%s' feeds "
                                 "both its true and its false branch: an "
                                 "edge between the branches",
                                 KIND(c, it - c->nl),
                                 c->cname[it - c->nl], c->cname[k]);
            else if (it >= c->nl)
                c->cbranch[it - c->nl] = m == 1 ? 0 : m == 2 ? 1 : -1;
            else
                c->branch[i] = m == 1 ? 0 : m == 2 ? 1 : -1;
        }
    }
    free(mark);
    return st;
}

/* The whole network as one program of RUN steps, in b->order. */
static mica_status_t straight(mica__build_t *b)
{
    mica_engine_t *e = b->e;
    int32_t s, n = b->net->nb_layers;
    e->prog = calloc((size_t)n + 1, sizeof *e->prog);
    if (!e->prog)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (s = 0; s < n; s++) {
        e->prog[s].kind = MICA__OP_RUN;
        e->prog[s].arg = s;
        b->step_construct[s] = b->step_branch[s] = -1;
    }
    e->nb_prog = n;
    return MICA_OK;
}

static void ctl_free(mica__ctl_t *c)
{
    free(c->tin);
    free(c->tin_first);
    free(c->cons);
    free(c->cname);
    free(c->ckind);
    free(c->in);
    free(c->contains);
    free(c->parent);
    free(c->depth);
    free(c->scope);
    free(c->branch);
    free(c->cbranch);
    free(c->topo);
    free(c->work);
    free(c->order);
}

static mica_status_t ctl_init(mica__ctl_t *c, mica__build_t *b)
{
    int32_t nl = b->net->nb_layers, nt = 0, i, j;
    size_t n = (size_t)nl + 1;

    memset(c, 0, sizeof *c);
    c->b = b;
    c->net = b->net;
    c->nl = nl;
    for (i = 0; i < nl; i++)
        nt += b->net->layers[i].nb_inputs;
    c->tin = calloc((size_t)nt + 1, sizeof *c->tin);
    c->tin_first = calloc(n, sizeof *c->tin_first);
    c->cons = calloc(n, sizeof *c->cons);
    c->cname = calloc(n, sizeof *c->cname);
    c->ckind = calloc(n, sizeof *c->ckind);
    c->scope = calloc(n, sizeof *c->scope);
    c->branch = calloc(n, sizeof *c->branch);
    c->topo = calloc(n, sizeof *c->topo);
    /* The worklist may hold a layer once per input edge. */
    c->work = calloc(n + (size_t)nt, sizeof *c->work);
    c->order = calloc(n, sizeof *c->order);
    if (!c->tin || !c->tin_first || !c->cons || !c->cname || !c->ckind ||
        !c->scope || !c->branch || !c->topo || !c->work || !c->order)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0, nt = 0; i < nl; i++) {
        const mica__net_layer_t *q = &b->net->layers[i];
        c->tin_first[i] = nt;
        for (j = 0; j < q->nb_inputs; j++)
            c->tin[nt++] = q->inputs[j] ? mica__tensor_of(b, q->inputs[j]) : -1;
        c->topo[b->order[i]] = i;
    }
    return MICA_OK;
}

/* Room for what collect() found: nc constructs. */
static mica_status_t ctl_grow(mica__ctl_t *c)
{
    size_t nc = (size_t)c->nc;
    mica_engine_t *e = c->b->e;
    int32_t k;

    c->in = calloc(nc * (size_t)c->nl + 1, 1);
    c->contains = calloc(nc * nc + 1, 1);
    c->parent = calloc(nc + 1, sizeof *c->parent);
    c->depth = calloc(nc + 1, sizeof *c->depth);
    c->cbranch = calloc(nc + 1, sizeof *c->cbranch);
    e->constructs = calloc(nc + 1, sizeof *e->constructs);
    e->prog = calloc((size_t)c->nl + 6 * nc + 1, sizeof *e->prog);
    if (!c->in || !c->contains || !c->parent || !c->depth || !c->cbranch ||
        !e->constructs || !e->prog)
        return mica__fail(c->b->ctx, MICA_ERR_NOMEM, "out of host memory");
    e->nb_constructs = c->nc;
    for (k = 0; k < c->nc; k++) {
        c->cbranch[k] = -1;
        e->constructs[k].kind = c->ckind[k];
        if (!(e->constructs[k].name = mica__strdup(c->cname[k])))
            return mica__fail(c->b->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    return MICA_OK;
}

mica_status_t mica__control_plan(mica__build_t *b)
{
    mica__ctl_t c;
    int32_t n = b->net->nb_layers, k;
    mica_status_t st;

    b->step_construct = calloc((size_t)n + 1, sizeof *b->step_construct);
    b->step_branch = calloc((size_t)n + 1, sizeof *b->step_branch);
    if (!b->step_construct || !b->step_branch)
        return mica__fail(b->ctx, MICA_ERR_NOMEM, "out of host memory");
    if ((st = ctl_init(&c, b)) != MICA_OK || (st = mica__ctl_collect(&c)) != MICA_OK)
        goto done;
    if (c.nc == 0) {
        st = straight(b);
        goto done;
    }
    if ((st = ctl_grow(&c)) != MICA_OK ||
        (st = mica__ctl_structure(&c)) != MICA_OK ||
        (st = branches(&c)) != MICA_OK ||
        (st = mica__ctl_emit(&c)) != MICA_OK)
        goto done;
    for (k = 0; k < c.nc; k++) {
        b->e->constructs[k].parent = c.parent[k];
        b->e->constructs[k].branch = c.cbranch[k];
    }
    if (c.nsteps != n) {
        st = mica__fail(b->ctx, MICA_ERR_INTERNAL, "control: %d of %d layers "
                        "placed", (int)c.nsteps, (int)n);
        goto done;
    }
    memcpy(b->order, c.order, sizeof *b->order * (size_t)n);
done:
    ctl_free(&c);
    return st;
}

void mica__constructs_free(mica_engine_t *e)
{
    int32_t k;
    for (k = 0; e->constructs && k < e->nb_constructs; k++) {
        free(e->constructs[k].name);
        free(e->constructs[k].heads);
        free(e->constructs[k].iterators);
        free(e->constructs[k].exits);
    }
    free(e->constructs);
    free(e->prog);
}

