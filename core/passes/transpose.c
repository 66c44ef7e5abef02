/*
 * core/passes/transpose.c - the pass "transpose-folding": a transpose of
 * the last two axes next to a MatrixMultiply becomes its operand option
 * (TensorRT's MatrixOperation kTRANSPOSE; docs/passes.md).
 *
 * An operand made by a Shuffle (read by the product alone, through at
 * most one ElementWise by a single value, which commutes with moving
 * axes) whose steps end in a swap of the last two axes, on fixed
 * dimensions: the Shuffle without that swap (nothing, where it was the
 * whole Shuffle), and the operand's option flipped between none and
 * transpose.  Taken where what is left is less than what was, or as
 * much but keeping the innermost axis innermost (a copy of rows).  A
 * product whose output only a Shuffle that swaps its last two axes
 * reads: the product of the swapped operands, each option flipped
 * ((A B)^T = B^T A^T), in place of both.  Transposes of weights are
 * constant folding's: a Shuffle of a Constant is a Constant.  Tensors
 * whose shape changes get fresh names.
 */
#include <config.h>

#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_NONE = 0, OP_TRANSPOSE = 1 };

/* What changes of one network layer. */
typedef struct change {
    int drop;
    const char *in[2];         /* inputs read now (NULL: as they were) */
    const char *out;           /* a new output name, or NULL */
    int64_t op[2];             /* MatrixMultiply: its options, -1 as was */
    mica__shuffle_t *shuf;     /* a Shuffle's new steps, or NULL */
} change_t;

typedef struct tf {
    mica__pass_run_t *p;
    const mica_network_t *net;
    mica__pass_graph_t g;
    int32_t *order;
    change_t *ch;              /* per network layer */
    mica__index_t given;       /* fresh names given out */
    char **names;
    int32_t nb_names;
    mica_status_t st;
    int64_t operands, outputs;
} tf_t;

static int fixed_dims(tf_t *t, const char *name, mica_dims_t *d)
{
    return mica__pass_fixed_dims(mica__pass_tensor(t->p, name), d);
}

/* Whether layer li is a pure, unchanged layer of `type` outside loops and
 * conditionals whose one output only one input reads (no network
 * output). */
static int single(const tf_t *t, int32_t li, const char *type)
{
    const mica__net_layer_t *nl;
    if (li < 0 || t->ch[li].drop || t->ch[li].shuf || t->ch[li].out)
        return 0;
    nl = &t->net->layers[li];
    return !strcmp(nl->type, type) && mica__pass_free(t->p, nl) && !nl->loop &&
           !nl->conditional && !nl->formats && nl->nb_outputs == 1 &&
           mica__pass_reads(&t->g, nl->outputs[0]) == 1 &&
           !mica__pass_is_output(&t->g, nl->outputs[0]);
}

/* The number of steps of s (transposes and a reshape). */
static int steps_in(const mica__shuffle_t *s)
{
    return (s->n1 > 0) + (s->n2 > 0) + (s->nr != -1);
}

/* The last axis of `n` dims `d` longer than 1 (-1: none). */
static int32_t last_long(const int64_t *d, int32_t n)
{
    while (n > 0 && d[n - 1] <= 1)
        n--;
    return n - 1;
}

/* Whether Shuffle s (of input dims `in`) keeps the innermost axis of
 * what it moves innermost: a copy in rows, not in columns. */
static int keeps_inner(const mica__shuffle_t *s, const mica_dims_t *in)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t i, n;

    if (s->n1) {
        for (i = 0; i < s->n1; i++)
            d[i] = in->d[s->p1[i]];
        n = last_long(d, s->n1);
        if (n >= 0 && s->p1[n] != last_long(in->d, in->nb_dims))
            return 0;
    }
    if (s->n2 && s->nr > 0) {
        for (i = 0; i < s->n2; i++)
            d[i] = s->r[s->p2[i]];
        n = last_long(d, s->n2);
        if (n >= 0 && s->p2[n] != last_long(s->r, s->nr))
            return 0;
    }
    return 1;
}

/* Whether ElementWise li applies one value (a Constant of volume 1) to
 * its other input, which it reads at *slot. */
static int by_one_value(tf_t *t, int32_t li, int32_t *slot)
{
    const mica__net_layer_t *nl = &t->net->layers[li];
    int32_t i;
    if (nl->nb_inputs != 2 || !nl->inputs[0] || !nl->inputs[1])
        return 0;
    for (i = 0; i < 2; i++) {
        int32_t c = mica__pass_producer(&t->g, nl->inputs[i], NULL);
        const mica__tensor_t *f = mica__pass_tensor(t->p, nl->inputs[i]);
        mica_dims_t d;
        if (c >= 0 && !strcmp(t->net->layers[c].type, "Constant") && f &&
            fixed_dims(t, nl->inputs[i], &d) && mica_dims_volume(&d) == 1) {
            *slot = 1 - i;
            return 1;
        }
    }
    return 0;
}

/* A fresh name for a tensor that was `base` ("base/t", "base/t_1"...),
 * owned by t. */
static const char *fresh(tf_t *t, const char *base)
{
    char *n = mica__asprintf("%s/t", base), **grown;
    int32_t k;

    for (k = 1; n && (mica__pass_producer(&t->g, n, NULL) >= 0 ||
                      mica__index_get(&t->g.inputs, n) >= 0 ||
                      mica__index_get(&t->given, n) >= 0); k++) {
        free(n);
        n = mica__asprintf("%s/t_%d", base, (int)k);
    }
    grown = n ? realloc(t->names, sizeof *grown * ((size_t)t->nb_names + 1))
              : NULL;
    if (!grown) {
        free(n);
        t->st = mica__fail(t->p->ctx, MICA_ERR_NOMEM, "out of host memory");
        return NULL;
    }
    t->names = grown;
    t->names[t->nb_names++] = n;
    if (mica__index_put(&t->given, n, 0) != 0) {
        t->st = mica__fail(t->p->ctx, MICA_ERR_NOMEM, "out of host memory");
        return NULL;
    }
    return n;
}

static int64_t op_of(const mica__net_layer_t *nl, const char *name)
{
    const mica_field_t *f = mica_fields_find(&nl->fields.view, name);
    return f && f->data && f->type == MICA_FIELD_ENUM
               ? *(const int64_t *)f->data : OP_NONE;
}

/* Operand k of MatrixMultiply m. */
static void operand(tf_t *t, int32_t m, int32_t k)
{
    const mica__net_layer_t *mm = &t->net->layers[m];
    int64_t op = t->ch[m].op[k] >= 0 ? t->ch[m].op[k]
                                     : op_of(mm, k ? "op_b" : "op_a");
    int32_t e = -1, s, slot = 0, n, i;
    const char *x = mm->inputs[k];
    mica__shuffle_t sh, out;
    mica__shuffle_step_t steps[4];
    mica_dims_t din, dout;

    if (op != OP_NONE && op != OP_TRANSPOSE)
        return;
    s = mica__pass_producer(&t->g, x, NULL);
    if (single(t, s, "ElementWise") && by_one_value(t, s, &slot)) {
        e = s;
        x = t->net->layers[e].inputs[slot];
        s = mica__pass_producer(&t->g, x, NULL);
    }
    if (!single(t, s, "Shuffle") ||
        !mica__pass_read_shuffle(&t->net->layers[s], NULL, &sh) ||
        !fixed_dims(t, sh.in, &din) || !fixed_dims(t, x, &dout) ||
        dout.nb_dims < 2 || (n = mica__shuffle_steps(&sh, &din, &dout,
                                                     steps)) < 0)
        return;
    /* the Shuffle, then a swap of the last two axes */
    steps[n].kind = 'T';
    steps[n].n = dout.nb_dims;
    for (i = 0; i < dout.nb_dims; i++)
        steps[n].v[i] = i;
    steps[n].v[dout.nb_dims - 2] = dout.nb_dims - 1;
    steps[n].v[dout.nb_dims - 1] = dout.nb_dims - 2;
    /* taken where less is left, or as much but copied in rows */
    if (!mica__shuffle_compose(&din, steps, n + 1, &out) ||
        steps_in(&out) > steps_in(&sh) ||
        (steps_in(&out) == steps_in(&sh) &&
         (!keeps_inner(&out, &din) || keeps_inner(&sh, &din))))
        return;
    /* what reads the swap reads fresh tensors */
    if (!steps_in(&out)) {
        t->ch[s].drop = 1;
        x = sh.in;
    } else {
        out.in = sh.in;
        if (!(t->ch[s].shuf = malloc(sizeof out))) {
            t->st = mica__fail(t->p->ctx, MICA_ERR_NOMEM,
                               "out of host memory");
            return;
        }
        *t->ch[s].shuf = out;
        if (!(t->ch[s].out = fresh(t, t->net->layers[s].outputs[0])))
            return;
        x = t->ch[s].out;
    }
    if (e >= 0) {
        t->ch[e].in[slot] = x;
        if (!(t->ch[e].out = fresh(t, t->net->layers[e].outputs[0])))
            return;
        x = t->ch[e].out;
    }
    t->ch[m].in[k] = x;
    t->ch[m].op[k] = op == OP_NONE ? OP_TRANSPOSE : OP_NONE;
    t->operands++;
}

/* MatrixMultiply m's output, if a Shuffle that only swaps its last two
 * axes reads it alone. */
static void output(tf_t *t, int32_t m)
{
    const mica__net_layer_t *mm = &t->net->layers[m];
    int64_t a = t->ch[m].op[0] >= 0 ? t->ch[m].op[0] : op_of(mm, "op_a");
    int64_t b = t->ch[m].op[1] >= 0 ? t->ch[m].op[1] : op_of(mm, "op_b");
    const char *ins[2];
    mica__shuffle_t sh, out;
    mica__shuffle_step_t steps[3];
    mica_dims_t din, dout;
    int32_t r, n, i;

    if (a > OP_TRANSPOSE || b > OP_TRANSPOSE || t->ch[m].out ||
        mica__pass_reads(&t->g, mm->outputs[0]) != 1 ||
        mica__pass_is_output(&t->g, mm->outputs[0]))
        return;
    for (r = 0; r < t->net->nb_layers; r++) {
        const mica__net_layer_t *nl = &t->net->layers[r];
        if (nl->nb_inputs >= 1 && nl->inputs[0] &&
            !strcmp(nl->inputs[0], mm->outputs[0]))
            break;
    }
    /* the Shuffle's output may be a network output: the product makes
     * it, by its name */
    if (r == t->net->nb_layers || t->ch[r].drop || t->ch[r].shuf ||
        t->ch[r].out || !mica__pass_free(t->p, &t->net->layers[r]) ||
        t->net->layers[r].loop || t->net->layers[r].conditional ||
        t->net->layers[r].formats || t->net->layers[r].nb_inputs != 1 ||
        !mica__pass_read_shuffle(&t->net->layers[r], NULL, &sh) ||
        !fixed_dims(t, mm->outputs[0], &din) ||
        !fixed_dims(t, t->net->layers[r].outputs[0], &dout) ||
        din.nb_dims < 2 ||
        (n = mica__shuffle_steps(&sh, &din, &dout, steps)) < 0 ||
        !mica__shuffle_compose(&din, steps, n, &out) || out.nr != -1 ||
        out.n2 || out.n1 != din.nb_dims)
        return;
    for (i = 0; i < din.nb_dims - 2; i++)
        if (out.p1[i] != i)
            return;
    if (out.p1[din.nb_dims - 2] != din.nb_dims - 1)
        return;
    /* (A B)^T = B^T A^T */
    ins[0] = t->ch[m].in[1] ? t->ch[m].in[1] : mm->inputs[1];
    ins[1] = t->ch[m].in[0] ? t->ch[m].in[0] : mm->inputs[0];
    t->ch[m].in[0] = ins[0];
    t->ch[m].in[1] = ins[1];
    t->ch[m].op[0] = b == OP_NONE ? OP_TRANSPOSE : OP_NONE;
    t->ch[m].op[1] = a == OP_NONE ? OP_TRANSPOSE : OP_NONE;
    t->ch[m].out = t->net->layers[r].outputs[0];
    t->ch[r].drop = 1;
    t->outputs++;
}

/* Network layer li as changed, into out. */
static mica_status_t put_layer(tf_t *t, mica_network_t *out, int32_t li)
{
    const mica__net_layer_t *nl = &t->net->layers[li];
    const change_t *c = &t->ch[li];
    const char *names[130];
    mica_field_t f[2];
    mica_fields_t fields = {0, f};
    static const char *const opn[] = {"none", "transpose"};
    const char *ops[2];
    int32_t i;

    if (c->shuf)
        return mica__pass_add_shuffle(out, nl, c->shuf, c->out);
    if (!c->in[0] && !c->in[1] && !c->out && c->op[0] < 0 && c->op[1] < 0)
        return mica__pass_copy_layer(out, nl, NULL, NULL);
    if (nl->nb_inputs + nl->nb_outputs > 128)
        return MICA_ERR_INVALID;
    for (i = 0; i < nl->nb_inputs; i++)
        names[i] = i < 2 && c->in[i] ? c->in[i] : nl->inputs[i];
    for (i = 0; i < nl->nb_outputs; i++)
        names[nl->nb_inputs + i] = i == 0 && c->out ? c->out : nl->outputs[i];
    if (c->op[0] < 0 && c->op[1] < 0)
        return mica__rewrite_layer(out, nl, names, NULL, NULL, NULL);
    /* a MatrixMultiply with its options (its only params) */
    for (i = 0; i < 2; i++) {
        int64_t op = c->op[i] >= 0 ? c->op[i]
                                   : op_of(nl, i ? "op_b" : "op_a");
        ops[i] = opn[op];
        f[fields.nb_fields++] = (mica_field_t){i ? "op_b" : "op_a",
                                               MICA_FIELD_STRING, 1,
                                               &ops[i]};
    }
    return mica__rewrite_layer(out, nl, names, &fields, NULL, NULL);
}

mica_status_t mica__pass_transpose(mica__pass_run_t *p)
{
    tf_t t;
    mica_network_t *out = NULL;
    mica_status_t st;
    int32_t li, s;

    memset(&t, 0, sizeof t);
    t.p = p;
    t.net = p->net;
    t.ch = calloc((size_t)t.net->nb_layers + 1, sizeof *t.ch);
    if (!t.ch) {
        st = mica__fail(p->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (li = 0; li < t.net->nb_layers; li++)
        t.ch[li].op[0] = t.ch[li].op[1] = -1;
    if ((st = mica__pass_graph_make(t.net, &t.g)) != MICA_OK ||
        (st = mica__pass_order(t.net, &t.g, &t.order)) != MICA_OK)
        goto done;
    for (s = 0; s < t.net->nb_layers && t.st == MICA_OK; s++) {
        const mica__net_layer_t *nl = &t.net->layers[t.order[s]];
        if (strcmp(nl->type, "MatrixMultiply") || !mica__pass_free(p, nl) ||
            nl->loop || nl->conditional || nl->formats ||
            nl->nb_inputs != 2 || nl->nb_outputs != 1 || !nl->inputs[0] ||
            !nl->inputs[1])
            continue;
        operand(&t, t.order[s], 0);
        if (t.st == MICA_OK)
            operand(&t, t.order[s], 1);
        if (t.st == MICA_OK)
            output(&t, t.order[s]);
    }
    if ((st = t.st) != MICA_OK || (st = p->st) != MICA_OK ||
        (!t.operands && !t.outputs))
        goto done;
    if ((st = mica_network_create(p->ctx, &out)) != MICA_OK)
        goto done;
    st = mica__rewrite_frame(t.net, out);
    for (li = 0; li < t.net->nb_layers && st == MICA_OK; li++)
        if (!t.ch[li].drop)
            st = put_layer(&t, out, li);
    if (st == MICA_OK) {
        p->out = out;
        out = NULL;
        p->changed = t.operands + t.outputs;
        snprintf(p->summary, sizeof p->summary, "%lld transposes folded into "
                 "MatrixMultiply options (%lld of operands, %lld of "
                 "outputs)", (long long)p->changed, (long long)t.operands,
                 (long long)t.outputs);
    }
done:
    for (li = 0; t.ch && li < t.net->nb_layers; li++)
        free(t.ch[li].shuf);
    for (li = 0; li < t.nb_names; li++)
        free(t.names[li]);
    free(t.names);
    free(t.ch);
    free(t.order);
    mica__index_free(&t.given);
    mica__pass_graph_free(&t.g);
    mica_network_destroy(out);
    return st;
}
