/*
 * core/passes/pointwise.c - the pass "pointwise": every connected group
 * of element-by-element layers (ElementWise, Unary, Activation, Select,
 * Scale, Identity with or without a cast) becomes one layer of type
 * Pointwise (modules/pointwise/), whose program is those layers' ops: one
 * pass over the elements instead of one per layer, and on CUDA one
 * kernel, generated for the group when the engine is built
 * (docs/passes.md).
 *
 * Which layers: those of the six types in the default namespace, not
 * pinned to an implementation, of no type the build prefers an
 * implementation for (--prefer), not read from an engine file, that make
 * no shape tensor (a tensor read on the host for shapes keeps its layer,
 * whose output_values the builder follows) and read every input as data.
 * A Constant of one element that a member reads becomes a `const` line
 * of the program (its value, exactly), and goes when only fused layers
 * read it (a transformer's 0.5, sqrt 2 and -10000).
 * Which groups: layers join the group of a layer whose output they read
 * when they are in the same loop or conditional (and branch) and of the
 * same precision, and the group stays convex: no path leaves it and
 * comes back (a layer outside that reads one member and feeds another
 * would otherwise wait for itself).  Where a layer reads several groups,
 * it merges them when that stays convex, else joins the first one that
 * does.  Tensors of a group that a layer outside reads, or that are
 * outputs of the network, are the Pointwise layer's outputs (they may
 * also be read inside); its inputs are the tensors its members read
 * from outside.  A group of one layer stays as it is; a group whose
 * program the Pointwise module refuses (more inputs or coefficients than
 * it takes, a type it lacks) too.
 *
 * The Pointwise layer takes the last member's name and place, the
 * members' origin and precision, and the record of what it replaced
 * ("pointwise: NAME (TYPE), ..."), which the engine keeps.
 */
#include <config.h>

#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"
#include "registry/registry.h"

/* The six types, in the order of kinds below. */
enum { K_EW, K_UN, K_ACT, K_SELECT, K_SCALE, K_ID, K_NONE };
static const char *const kinds[] = {"ElementWise", "Unary", "Activation",
                                    "Select", "Scale", "Identity"};

typedef struct pw {
    mica__pass_run_t *p;
    const mica_network_t *net;
    const mica_engine_t *e;
    mica__pass_graph_t g;
    int32_t *layer_of;   /* per step: network layer */
    int32_t *step_of;    /* per network layer: step, -1 when not built */
    int8_t *kind;        /* per step: K_*, K_NONE when not a candidate */
    int32_t *group;      /* per step: group id, -1 */
    int32_t *first_reader, *next_reader; /* per tensor / per read: steps */
    int32_t *reader_step;
    size_t words;        /* uint64_t per bitset */
    uint64_t *mask;      /* scratch bitsets */
    uint64_t *span;
    int32_t *members;    /* per group: its steps, in step order */
    int32_t *nb_members; /* per group */
    int32_t *start;      /* per group: where its steps are in members */
    int32_t nb_groups;
    int32_t *list;       /* scratch: a candidate group's steps */
    char **value;        /* per tensor: its name in the program being
                            written (prog_t), NULL between programs */
    /* the Pointwise creator for the build's device */
    const mica_layer_creator_t *creator;
} pw_t;

static mica_status_t nomem(pw_t *x)
{
    return mica__fail(x->p->ctx, MICA_ERR_NOMEM, "out of host memory");
}

static int same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* ---- candidates -------------------------------------------------------- */

static int kind_of(const char *type)
{
    int k;
    for (k = 0; k < K_NONE; k++)
        if (!strcmp(kinds[k], type))
            return k;
    return K_NONE;
}

/* Whether step s may be in a group. */
static int candidate(const pw_t *x, int32_t s)
{
    const mica__layer_t *l = &x->e->layers[s];
    const mica__net_layer_t *nl = &x->net->layers[x->layer_of[s]];
    int32_t i;

    if (kind_of(nl->type) == K_NONE || (nl->ns && nl->ns[0]) ||
        nl->implementation || nl->from_state || nl->formats ||
        l->info.role != MICA_ROLE_NONE || l->makes_sizes ||
        l->nb_outputs != 1 || mica__pass_preferred(x->p, nl->type))
        return 0;
    for (i = 0; i < l->nb_inputs; i++)
        if (l->inputs[i] < 0 || l->input_kinds[i] != MICA_INPUT_DATA)
            return 0;
    for (i = 0; i < l->nb_outputs; i++) {
        const mica__tensor_t *t = &x->e->tensors[l->outputs[i]];
        if (t->need_s || t->is_shape_output)
            return 0;
    }
    return 1;
}

/* Whether steps a and b may share a group (both candidates). */
static int compatible(const pw_t *x, int32_t a, int32_t b)
{
    const mica__layer_t *la = &x->e->layers[a], *lb = &x->e->layers[b];
    const mica__net_layer_t *na = &x->net->layers[x->layer_of[a]];
    const mica__net_layer_t *nb = &x->net->layers[x->layer_of[b]];
    return la->construct == lb->construct && la->branch == lb->branch &&
           same(na->loop, nb->loop) &&
           same(na->conditional, nb->conditional) &&
           na->precision == nb->precision;
}

/* ---- convex groups ------------------------------------------------------ */

#define BIT(b, s) ((b)[(size_t)(s) >> 6] & ((uint64_t)1 << ((s) & 63)))
#define SET(b, s) ((b)[(size_t)(s) >> 6] |= (uint64_t)1 << ((s) & 63))
#define CLEAR(b, s) ((b)[(size_t)(s) >> 6] &= ~((uint64_t)1 << ((s) & 63)))

/* The most steps a group spans, first member to last: the convexity
 * test sweeps them, so the pass stays linear on any graph (a 100,000-layer
 * DAG whose skip connections span the whole network took minutes with a
 * bitset of ancestors per step, and n^2/8 bytes; issue 25). */
#define PW_SPAN 4096

/*
 * Whether the steps list[0..n-1] (in step order) form a convex set: no
 * step outside that is both a descendant of one and an ancestor of one.
 * Every such path runs between the first and the last member, so one
 * sweep over those steps decides: a step outside is reached when it reads
 * a member or a reached step (not through a Recurrence's back edge); a
 * member that reads a reached step closes a path that left the group.
 */
static int convex(pw_t *x, const int32_t *list, int32_t n)
{
    const mica_engine_t *e = x->e;
    int32_t lo = list[0], hi = list[n - 1], s, i;
    int ok = 1;

    if (hi - lo > PW_SPAN)
        return 0;
    for (i = 0; i < n; i++)
        SET(x->mask, list[i]);
    for (s = lo + 1; s <= hi && ok; s++) {
        const mica__layer_t *l = &e->layers[s];
        int member = BIT(x->mask, s) != 0;
        for (i = 0; i < l->nb_inputs && ok; i++) {
            int32_t t = l->inputs[i], ps;
            if (t < 0 || mica__back_edge(l, i) ||
                (ps = e->tensors[t].producer) < lo || ps >= s)
                continue;
            if (BIT(x->span, ps)) {
                if (member)
                    ok = 0;
                else
                    SET(x->span, s);
            } else if (!member && BIT(x->mask, ps)) {
                SET(x->span, s);
            }
        }
    }
    for (s = lo; s <= hi; s++)
        CLEAR(x->span, s);
    for (i = 0; i < n; i++)
        CLEAR(x->mask, list[i]);
    return ok;
}

/* Into x->list: the steps of groups g[0..ng-1] and step s, in step
 * order; their count. */
static int32_t gather(pw_t *x, const int32_t *g, int32_t ng, int32_t s)
{
    int32_t n = 0, i, j, k;

    for (i = 0; i < ng; i++)
        for (j = 0; j < x->nb_members[g[i]]; j++)
            x->list[n++] = x->members[x->start[g[i]] + j];
    x->list[n++] = s;
    for (i = 1; i < n; i++) /* insertion: groups are short */
        for (k = i; k > 0 && x->list[k - 1] > x->list[k]; k--) {
            int32_t t = x->list[k];
            x->list[k] = x->list[k - 1];
            x->list[k - 1] = t;
        }
    return n;
}

/* What one Pointwise layer takes (modules/pointwise/pointwise.h, its
 * documented limits): a group that would need more is not made. */
#define PW_INPUTS 24
#define PW_OUTPUTS 8
#define PW_LEAVES 24

/* Whether the steps list[0..n-1] stay within what one Pointwise layer
 * takes: its inputs, its outputs, its inputs and Scale coefficients. */
static int fits(pw_t *x, const int32_t *list, int32_t n)
{
    const mica_engine_t *e = x->e;
    int32_t i, j, k, r, ins = 0, outs = 0, coef = 0, seen[PW_INPUTS + 1];
    int ok = 1;

    for (i = 0; i < n; i++)
        SET(x->mask, list[i]);
    for (i = 0; i < n && ok; i++) {
        const mica__layer_t *l = &e->layers[list[i]];
        int32_t t = l->outputs[0];
        coef += x->kind[list[i]] == K_SCALE ? 3 : 0;
        for (j = 0; j < l->nb_inputs; j++) {
            int32_t u = l->inputs[j], ps = e->tensors[u].producer;
            if (ps >= 0 && BIT(x->mask, ps))
                continue;
            for (k = 0; k < ins && seen[k] != u; k++)
                ;
            if (k == ins && (seen[ins++] = u, ins > PW_INPUTS)) {
                ok = 0;
                break;
            }
        }
        k = mica__pass_is_output(&x->g, e->tensors[t].name);
        for (r = x->first_reader[t]; r >= 0 && !k; r = x->next_reader[r])
            k = !BIT(x->mask, x->reader_step[r]);
        outs += k;
    }
    for (i = 0; i < n; i++)
        CLEAR(x->mask, list[i]);
    return ok && outs <= PW_OUTPUTS && ins + coef <= PW_LEAVES;
}

/* Whether the steps list[0..n-1] may be one group. */
static int joinable(pw_t *x, const int32_t *list, int32_t n)
{
    return convex(x, list, n) && fits(x, list, n);
}

/* The groups: each candidate joins (or merges) the groups it reads. */
static mica_status_t group(pw_t *x)
{
    const mica_engine_t *e = x->e;
    int32_t s, i, j, g[64], ng, n;
    size_t used = 0, cap = 0;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int joined = 0;
        if (x->kind[s] == K_NONE)
            continue;
        ng = 0;
        for (i = 0; i < l->nb_inputs && ng < 64; i++) {
            int32_t ps = e->tensors[l->inputs[i]].producer, gi, dup = 0;
            if (ps < 0 || x->kind[ps] == K_NONE || (gi = x->group[ps]) < 0 ||
                !compatible(x, ps, s))
                continue;
            for (j = 0; j < ng; j++)
                dup |= g[j] == gi;
            if (!dup)
                g[ng++] = gi;
        }
        /* all the groups it reads, else the first it may join */
        if (ng > 0 && joinable(x, x->list, n = gather(x, g, ng, s))) {
            joined = 1;
        } else {
            for (i = 0; i < ng && !joined; i++)
                if (joinable(x, x->list, n = gather(x, &g[i], 1, s))) {
                    g[0] = g[i];
                    ng = 1;
                    joined = 1;
                }
        }
        if (!joined) {
            ng = 0;
            n = gather(x, g, 0, s);
        }
        /* the new group: its steps at the end of members */
        if (used + (size_t)n > cap) {
            size_t c = 2 * cap + (size_t)n + 64;
            int32_t *m = realloc(x->members, sizeof *m * c);
            if (!m)
                return nomem(x);
            x->members = m;
            cap = c;
        }
        x->start[x->nb_groups] = (int32_t)used;
        x->nb_members[x->nb_groups] = n;
        memcpy(x->members + used, x->list, sizeof *x->list * (size_t)n);
        used += (size_t)n;
        for (i = 0; i < ng; i++)
            x->nb_members[g[i]] = 0; /* merged away */
        for (i = 0; i < n; i++)
            x->group[x->list[i]] = x->nb_groups;
        x->nb_groups++;
    }
    return MICA_OK;
}

/* ---- a group's Pointwise layer ------------------------------------------ */

/* Lines, results and weights of one group, for its fields. */
typedef struct prog {
    char **lines;
    int32_t nb_lines;
    char **results;
    int32_t nb_results;
    const char **outs;       /* the outputs' tensor names */
    int32_t *out_t;          /* and their tensors in the engine */
    const char **ins;        /* the inputs' tensor names */
    int32_t *in_t;
    int32_t nb_ins;
    int32_t *consts;         /* tensors of Constants written as const */
    int32_t nb_consts;
    mica_weights_t *w;
    int32_t nb_w;
    char **value;            /* pw_t's, while the program is written */
    int32_t *named;          /* the tensors named in value, to forget */
    int32_t nb_named;
} prog_t;

static void prog_free(prog_t *q)
{
    int32_t i;
    for (i = 0; i < q->nb_lines; i++)
        free(q->lines[i]);
    for (i = 0; i < q->nb_results; i++)
        free(q->results[i]);
    free(q->lines);
    free(q->results);
    free(q->outs);
    free(q->out_t);
    free(q->ins);
    free(q->in_t);
    free(q->consts);
    free(q->w);
    free(q->named);
    memset(q, 0, sizeof *q);
}

/* The name of enum field `name` of nl (its schema's), or NULL. */
static const char *enum_name(const mica__net_layer_t *nl, const char *name)
{
    const mica_field_t *f = mica_fields_find(&nl->fields.view, name);
    const mica_layer_creator_t *c = nl->checked_with;
    int64_t v;
    int32_t i, k;

    if (!f || f->type != MICA_FIELD_ENUM || f->count != 1 || !c)
        return NULL;
    v = *(const int64_t *)f->data;
    for (i = 0; i < c->nb_fields; i++) {
        const char *const *names = c->fields[i].enum_values;
        if (strcmp(c->fields[i].name, name) || !names)
            continue;
        for (k = 0; names[k] && k < v; k++)
            ;
        return k == v ? names[k] : NULL;
    }
    return NULL;
}

/* The value tensor t is in the program: an input's "inK" (a new one), a
 * member's name. */
/*
 * The value of a Constant of one element (its only weights), as the
 * program's const writes it ("0x1.8p+0", "-3"); NULL for another layer
 * or type.  Floats in hexadecimal: exact.
 */
static char *one_value(const pw_t *x, int32_t t)
{
    int32_t ps = x->e->tensors[t].producer;
    const mica__net_layer_t *nl;
    const mica_field_t *f;
    const mica_weights_t *w;
    double v;

    if (ps < 0)
        return NULL;
    nl = &x->net->layers[x->layer_of[ps]];
    if (strcmp(nl->type, "Constant") || (nl->ns && nl->ns[0]) ||
        nl->from_state ||
        !(f = mica_fields_find(&nl->fields.view, "weights")) ||
        f->type != MICA_FIELD_WEIGHTS || f->count != 1 ||
        (w = f->data)->count != 1 || w->dtype != x->e->tensors[t].dtype)
        return NULL;
    switch (w->dtype) {
    case MICA_FLOAT32: v = *(const float *)w->values; break;
    case MICA_FLOAT16:
        v = mica_kit_half_to_float(*(const uint16_t *)w->values);
        break;
    case MICA_BFLOAT16:
        v = mica_kit_bf16_to_float(*(const uint16_t *)w->values);
        break;
    case MICA_INT8: return mica__asprintf("%d", *(const int8_t *)w->values);
    case MICA_UINT8:
        return mica__asprintf("%u", *(const uint8_t *)w->values);
    case MICA_INT32:
        return mica__asprintf("%d", (int)*(const int32_t *)w->values);
    case MICA_INT64:
        return mica__asprintf("%lld",
                              (long long)*(const int64_t *)w->values);
    case MICA_BOOL:
        return mica__asprintf("%d", *(const uint8_t *)w->values != 0);
    default: return NULL;
    }
    return mica__asprintf("%a", v);
}

/* Name tensor t `v` in q's program (v malloc'd, may be NULL: out of
 * memory); v. */
static char *name_value(prog_t *q, int32_t t, char *v)
{
    if (v) {
        q->value[t] = v;
        q->named[q->nb_named++] = t;
    }
    return v;
}

/* Forget the names of q's program (the shared array is NULL again):
 * each program costs what it names, not the network's tensor count. */
static void forget_values(prog_t *q)
{
    int32_t i;
    for (i = 0; q->value && i < q->nb_named; i++) {
        free(q->value[q->named[i]]);
        q->value[q->named[i]] = NULL;
    }
    q->nb_named = 0;
    q->value = NULL;
}

/* The value tensor t is in the program: a Constant of one element as a
 * const line, an input's "inK" (a new one), a member's name. */
static const char *operand(pw_t *x, prog_t *q, int32_t t)
{
    char *v;

    if (q->value[t])
        return q->value[t];
    if ((v = one_value(x, t)) != NULL) {
        q->lines[q->nb_lines] = mica__asprintf(
            "k%d = const(value=%s, dtype=%s)", (int)t, v,
            mica_dtype_name(x->e->tensors[t].dtype));
        free(v);
        if (!q->lines[q->nb_lines])
            return NULL;
        q->nb_lines++;
        q->consts[q->nb_consts++] = t;
        return name_value(q, t, mica__asprintf("k%d", (int)t));
    }
    q->ins[q->nb_ins] = x->e->tensors[t].name;
    q->in_t[q->nb_ins] = t;
    return name_value(q, t, mica__asprintf("in%d", (int)q->nb_ins++));
}

/* Append weights field `name` of nl (if given and not empty) to q's
 * weights: ", KEY=wN" into buf (len bytes), or nothing. */
static void coefficient(prog_t *q, const mica__net_layer_t *nl,
                        const char *name, char *buf, size_t len)
{
    const mica_field_t *f = mica_fields_find(&nl->fields.view, name);
    const mica_weights_t *w;

    buf[0] = '\0';
    if (!f || f->type != MICA_FIELD_WEIGHTS || f->count != 1)
        return;
    w = f->data;
    if (w->count == 0)
        return;
    q->w[q->nb_w] = *w;
    snprintf(buf, len, ", %s=w%d", name, (int)q->nb_w++);
}

static double float_field(const mica__net_layer_t *nl, const char *name)
{
    const mica_field_t *f = mica_fields_find(&nl->fields.view, name);
    return f && f->type == MICA_FIELD_FLOAT && f->count == 1
               ? *(const double *)f->data : 0.0;
}

/* The line of member step s (its value named "tS"), or NULL where it is
 * a copy (its value is its input's) or when memory runs out (*bad). */
static char *line_of(pw_t *x, prog_t *q, int32_t s, int *bad)
{
    const mica__layer_t *l = &x->e->layers[s];
    const mica__net_layer_t *nl = &x->net->layers[x->layer_of[s]];
    const char *a[3] = {"", "", ""}, *op;
    char *line = NULL, c[3][32];
    const mica_field_t *f;
    int32_t i, out = l->outputs[0];

    for (i = 0; i < l->nb_inputs && i < 3; i++)
        if (!(a[i] = operand(x, q, l->inputs[i]))) {
            *bad = 1;
            return NULL;
        }
    switch (x->kind[s]) {
    case K_EW:
    case K_UN:
        op = enum_name(nl, "op");
        line = op ? mica__asprintf("t%d = %s(%s%s%s)", (int)s, op, a[0],
                                   l->nb_inputs > 1 ? ", " : "",
                                   l->nb_inputs > 1 ? a[1] : "")
                  : NULL;
        break;
    case K_ACT:
        op = enum_name(nl, "type");
        line = op ? mica__asprintf("t%d = %s(%s, alpha=%.17g, beta=%.17g)",
                                   (int)s, op, a[0],
                                   float_field(nl, "alpha"),
                                   float_field(nl, "beta"))
                  : NULL;
        break;
    case K_SELECT:
        line = mica__asprintf("t%d = select(%s, %s, %s)", (int)s, a[0], a[1],
                              a[2]);
        break;
    case K_SCALE:
        op = enum_name(nl, "mode");
        f = mica_fields_find(&nl->fields.view, "channel_axis");
        coefficient(q, nl, "shift", c[0], sizeof c[0]);
        coefficient(q, nl, "scale", c[1], sizeof c[1]);
        coefficient(q, nl, "power", c[2], sizeof c[2]);
        line = op ? mica__asprintf(
                        "t%d = scale(%s, mode=%s, axis=%lld%s%s%s)", (int)s,
                        a[0], op,
                        f && f->type == MICA_FIELD_INT && f->count == 1
                            ? (long long)*(const int64_t *)f->data : 1LL,
                        c[0], c[1], c[2])
                  : NULL;
        break;
    default: /* Identity: a cast, or a copy */
        f = mica_fields_find(&nl->fields.view, "dtype");
        if (!f || f->type != MICA_FIELD_DTYPE || f->count != 1) {
            if (!name_value(q, out, mica__strdup(a[0])))
                *bad = 1;
            return NULL;
        }
        line = mica__asprintf("t%d = cast(%s, dtype=%s)", (int)s, a[0],
                              mica_dtype_name((mica_dtype_t)
                                                  *(const int64_t *)f->data));
        break;
    }
    if (!line || !name_value(q, out, mica__asprintf("t%d", (int)s))) {
        free(line);
        *bad = 1;
        return NULL;
    }
    return line;
}

/* Whether tensor t (made by a member of group gi) is read outside it or
 * is a network output. */
static int leaves_group(const pw_t *x, int32_t gi, int32_t t)
{
    int32_t r;
    if (mica__pass_is_output(&x->g, x->e->tensors[t].name) ||
        x->e->tensors[t].is_output)
        return 1;
    for (r = x->first_reader[t]; r >= 0; r = x->next_reader[r])
        if (x->group[x->reader_step[r]] != gi)
            return 1;
    return 0;
}

/* The program of group gi into q; MICA_ERR_UNSUPPORTED where a member
 * has no line (an enum without its schema's names). */
static mica_status_t write_program(pw_t *x, int32_t gi, prog_t *q);

static mica_status_t program(pw_t *x, int32_t gi, prog_t *q)
{
    mica_status_t st = write_program(x, gi, q);
    forget_values(q);
    return st;
}

/* program()'s work; the names it leaves in x->value, program forgets. */
static mica_status_t write_program(pw_t *x, int32_t gi, prog_t *q)
{
    const int32_t *m = x->members + x->start[gi];
    int32_t n = x->nb_members[gi], i, k;
    int bad = 0;

    memset(q, 0, sizeof *q);
    q->lines = calloc(4 * (size_t)n + 1, sizeof *q->lines);
    q->consts = calloc(3 * (size_t)n + 1, sizeof *q->consts);
    q->results = calloc((size_t)n + 1, sizeof *q->results);
    q->outs = calloc((size_t)n + 1, sizeof *q->outs);
    q->out_t = calloc((size_t)n + 1, sizeof *q->out_t);
    q->ins = calloc(3 * (size_t)n + 1, sizeof *q->ins);
    q->in_t = calloc(3 * (size_t)n + 1, sizeof *q->in_t);
    q->w = calloc(3 * (size_t)n + 1, sizeof *q->w);
    /* each member names its output, each input or coefficient one */
    q->named = calloc(4 * (size_t)n + 1, sizeof *q->named);
    q->value = x->value;
    if (!q->lines || !q->results || !q->outs || !q->out_t || !q->ins ||
        !q->in_t || !q->w || !q->named || !q->consts)
        return nomem(x);
    for (i = 0; i < n; i++) {
        char *line = line_of(x, q, m[i], &bad);
        if (bad)
            return mica__fail(x->p->ctx, MICA_ERR_UNSUPPORTED, "pointwise: "
                              "layer '%s' has no line of a program",
                              x->net->layers[x->layer_of[m[i]]].name);
        if (line)
            q->lines[q->nb_lines++] = line;
    }
    for (i = 0; i < n; i++) {
        int32_t t = x->e->layers[m[i]].outputs[0];
        if (!leaves_group(x, gi, t))
            continue;
        q->outs[q->nb_results] = x->e->tensors[t].name;
        q->out_t[q->nb_results] = t;
        if (!(q->results[q->nb_results++] = mica__strdup(q->value[t])))
            return nomem(x);
    }
    for (k = 0; k < q->nb_results; k++)
        if (!q->results[k])
            return nomem(x);
    return q->nb_lines > 0 && q->nb_results > 0 ? MICA_OK
                                                : MICA_ERR_UNSUPPORTED;
}

/* q as a Pointwise layer's fields (views into q). */
static void fields_of(const prog_t *q, mica_field_t *f, mica_fields_t *fs)
{
    f[0].name = "program";
    f[0].type = MICA_FIELD_STRING;
    f[0].count = q->nb_lines;
    f[0].data = q->lines;
    f[1].name = "results";
    f[1].type = MICA_FIELD_STRING;
    f[1].count = q->nb_results;
    f[1].data = q->results;
    f[2].name = "weights";
    f[2].type = MICA_FIELD_WEIGHTS;
    f[2].count = q->nb_w;
    f[2].data = q->w;
    fs->nb_fields = q->nb_w ? 3 : 2;
    fs->fields = f;
}

/* Whether the Pointwise module takes the program of q for the types its
 * inputs have, and makes the outputs' types. */
static int accepted(pw_t *x, const prog_t *q, const char *name)
{
    mica_field_t f[3];
    mica_fields_t fs;
    mica_dtype_t in[64], out[64];
    mica_layer_t *l;
    mica_error_t err;
    int32_t i;
    int good = 0;

    if (q->nb_ins > 64 || q->nb_results > 64)
        return 0;
    fields_of(q, f, &fs);
    mica__error_clear(&err);
    if (!(l = x->creator->create(x->creator, name, &fs, &err)))
        goto done;
    for (i = 0; i < q->nb_ins; i++)
        in[i] = x->e->tensors[q->in_t[i]].dtype;
    if (l->ops->nb_outputs(l) == q->nb_results &&
        l->ops->output_dtypes(l, in, q->nb_ins, out, q->nb_results, &err) ==
            MICA_OK) {
        good = 1;
        for (i = 0; i < q->nb_results; i++)
            good &= out[i] == x->e->tensors[q->out_t[i]].dtype;
    }
    l->ops->destroy(l);
done:
    if (!good)
        mica__log(x->p->ctx, MICA_LOG_DEBUG, "pointwise: the group ending "
                  "at layer '%s' stays as it is: %s", name,
                  mica__error_msg(&err, "the types differ"));
    return good;
}

/* ---- the pass ---------------------------------------------------------- */

/* The record of group gi: "pointwise: NAME (TYPE), ...". */
static char *record(const pw_t *x, int32_t gi)
{
    const int32_t *m = x->members + x->start[gi];
    size_t len = 16;
    int32_t i;
    char *s;

    for (i = 0; i < x->nb_members[gi]; i++) {
        const mica__net_layer_t *nl = &x->net->layers[x->layer_of[m[i]]];
        len += strlen(nl->name) + strlen(nl->type) + 6;
    }
    if (!(s = malloc(len)))
        return NULL;
    strcpy(s, "pointwise:");
    for (i = 0; i < x->nb_members[gi]; i++) {
        const mica__net_layer_t *nl = &x->net->layers[x->layer_of[m[i]]];
        strcat(s, i ? ", " : " ");
        strcat(s, nl->name);
        strcat(s, " (");
        strcat(s, nl->type);
        strcat(s, ")");
    }
    return s;
}

/* Add group gi's Pointwise layer to out. */
static mica_status_t add_group(pw_t *x, const prog_t *q, int32_t gi,
                               mica_network_t *out)
{
    const int32_t *m = x->members + x->start[gi];
    const mica__net_layer_t *last =
        &x->net->layers[x->layer_of[m[x->nb_members[gi] - 1]]];
    mica__net_layer_t *made;
    mica_field_t f[3];
    mica_fields_t fs;
    mica_layer_spec_t spec;
    mica_status_t st;

    fields_of(q, f, &fs);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = last->name;
    spec.type = "Pointwise";
    spec.nb_inputs = q->nb_ins;
    spec.inputs = q->ins;
    spec.nb_outputs = q->nb_results;
    spec.outputs = q->outs;
    spec.fields = &fs;
    spec.origin = last->origin;
    spec.loop = last->loop;
    spec.conditional = last->conditional;
    if ((st = mica_network_add_layer(out, &spec)) != MICA_OK)
        return st;
    made = &out->layers[out->nb_layers - 1];
    made->precision = last->precision;
    if (!(made->fused = record(x, gi)))
        return nomem(x);
    return MICA_OK;
}

static mica_status_t setup(pw_t *x)
{
    const mica_engine_t *e = x->e;
    size_t ns = (size_t)e->nb_layers + 1, nt = (size_t)e->nb_tensors + 1;
    int32_t s, i, nr = 0;
    mica__index_t layers = {0};

    x->words = ((size_t)e->nb_layers + 63) / 64 + 1;
    x->layer_of = calloc(ns, sizeof *x->layer_of);
    x->step_of = malloc(sizeof *x->step_of * ((size_t)x->net->nb_layers + 1));
    x->kind = calloc(ns, 1);
    x->group = malloc(sizeof *x->group * ns);
    x->first_reader = malloc(sizeof *x->first_reader * nt);
    x->nb_members = calloc(ns, sizeof *x->nb_members);
    x->start = calloc(ns, sizeof *x->start);
    x->list = malloc(sizeof *x->list * ns);
    x->mask = calloc(x->words, sizeof *x->mask);
    x->span = calloc(x->words, sizeof *x->span);
    x->value = calloc(nt, sizeof *x->value);
    if (!x->layer_of || !x->step_of || !x->kind || !x->group ||
        !x->first_reader || !x->nb_members || !x->start ||
        !x->list || !x->mask || !x->span || !x->value)
        return nomem(x);
    for (s = 0; s < x->net->nb_layers; s++) {
        x->step_of[s] = -1;
        if (mica__index_put(&layers, x->net->layers[s].name, s) != 0)
            goto nomem;
    }
    for (s = 0; s < e->nb_layers; s++) {
        x->layer_of[s] = mica__index_get(&layers, e->layers[s].name);
        if (x->layer_of[s] < 0) {
            mica__index_free(&layers);
            return mica__fail(x->p->ctx, MICA_ERR_INTERNAL, "pointwise: "
                              "layer '%s' of the engine is not in the "
                              "network", e->layers[s].name);
        }
        x->step_of[x->layer_of[s]] = s;
        x->group[s] = -1;
        nr += e->layers[s].nb_inputs;
    }
    mica__index_free(&layers);
    /* the readers of each tensor, as lists */
    x->next_reader = malloc(sizeof *x->next_reader * ((size_t)nr + 1));
    x->reader_step = malloc(sizeof *x->reader_step * ((size_t)nr + 1));
    if (!x->next_reader || !x->reader_step)
        return nomem(x);
    for (i = 0; i < e->nb_tensors; i++)
        x->first_reader[i] = -1;
    nr = 0;
    for (s = 0; s < e->nb_layers; s++)
        for (i = 0; i < e->layers[s].nb_inputs; i++) {
            int32_t t = e->layers[s].inputs[i];
            if (t < 0)
                continue;
            x->reader_step[nr] = s;
            x->next_reader[nr] = x->first_reader[t];
            x->first_reader[t] = nr++;
        }
    for (s = 0; s < e->nb_layers; s++)
        x->kind[s] = candidate(x, s)
                         ? (int8_t)kind_of(x->net->layers[x->layer_of[s]].type)
                         : K_NONE;
    return mica__pass_graph_make(x->net, &x->g);
nomem:
    mica__index_free(&layers);
    return nomem(x);
}

static void cleanup(pw_t *x)
{
    free(x->layer_of);
    free(x->step_of);
    free(x->kind);
    free(x->group);
    free(x->first_reader);
    free(x->next_reader);
    free(x->reader_step);
    free(x->mask);
    free(x->span);
    free(x->members);
    free(x->nb_members);
    free(x->start);
    free(x->list);
    free(x->value);
    mica__pass_graph_free(&x->g);
}

/* The rewritten network: each fused group's layer in place of its last
 * member, every other layer as it is. */
/* Whether every reader of tensor t is in a group fused and t is no
 * output of the network: a Constant making it then goes. */
static int only_fused_read(const pw_t *x, const uint8_t *fuse, int32_t t)
{
    int32_t r, gi;
    if (mica__pass_is_output(&x->g, x->e->tensors[t].name) ||
        x->e->tensors[t].is_output)
        return 0;
    for (r = x->first_reader[t]; r >= 0; r = x->next_reader[r])
        if ((gi = x->group[x->reader_step[r]]) < 0 || !fuse[gi])
            return 0;
    return 1;
}

static mica_status_t rewrite(pw_t *x, prog_t *progs, const uint8_t *fuse,
                             const uint8_t *drop, mica_network_t **out)
{
    mica_network_t *o = NULL;
    mica_status_t st;
    int32_t li;

    if ((st = mica_network_create(x->p->ctx, &o)) != MICA_OK ||
        (st = mica__rewrite_frame(x->net, o)) != MICA_OK)
        goto done;
    for (li = 0; li < x->net->nb_layers && st == MICA_OK; li++) {
        int32_t s = x->step_of[li], gi = s >= 0 ? x->group[s] : -1;
        if (gi >= 0 && fuse[gi]) {
            const int32_t *m = x->members + x->start[gi];
            if (m[x->nb_members[gi] - 1] == s)
                st = add_group(x, &progs[gi], gi, o);
            continue;
        }
        if (!drop[li])
            st = mica__pass_copy_layer(o, &x->net->layers[li], NULL, NULL);
    }
done:
    if (st != MICA_OK) {
        mica_network_destroy(o);
        o = NULL;
    }
    *out = o;
    return st;
}

mica_status_t mica__pass_pointwise(mica__pass_run_t *p)
{
    mica_creator_info_t info;
    prog_t *progs = NULL;
    uint8_t *fuse = NULL, *drop = NULL;
    int32_t gi, k, layers = 0, made = 0, gone = 0;
    mica_status_t st;
    pw_t x;

    memset(&x, 0, sizeof x);
    x.p = p;
    x.net = p->net;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (mica_registry_find(p->ctx, NULL, "Pointwise", 0, NULL, p->device,
                           &info) != MICA_OK) {
        snprintf(p->summary, sizeof p->summary, "nothing changed (no "
                 "Pointwise implementation for the device)");
        return MICA_OK; /* not an error: the module is not loaded */
    }
    x.creator = info.creator;
    if ((st = mica__pass_facts(p, &x.e)) != MICA_OK)
        return st == MICA_ERR_UNSUPPORTED ? MICA_OK : st;
    if ((st = setup(&x)) != MICA_OK || (st = group(&x)) != MICA_OK)
        goto done;
    progs = calloc((size_t)x.nb_groups + 1, sizeof *progs);
    fuse = calloc((size_t)x.nb_groups + 1, 1);
    drop = calloc((size_t)x.net->nb_layers + 1, 1);
    if (!progs || !fuse || !drop) {
        st = nomem(&x);
        goto done;
    }
    for (gi = 0; gi < x.nb_groups; gi++) {
        const int32_t *m = x.members + x.start[gi];
        if (x.nb_members[gi] < 2)
            continue;
        st = program(&x, gi, &progs[gi]);
        if (st == MICA_ERR_NOMEM)
            goto done;
        if (st == MICA_OK &&
            accepted(&x, &progs[gi],
                     x.net->layers[x.layer_of[m[x.nb_members[gi] - 1]]]
                         .name)) {
            fuse[gi] = 1;
            layers += x.nb_members[gi];
            made++;
        }
        st = MICA_OK;
    }
    /* Constants of one value that only fused layers read: in their
     * programs now */
    for (gi = 0; gi < x.nb_groups; gi++)
        for (k = 0; fuse[gi] && k < progs[gi].nb_consts; k++) {
            int32_t t = progs[gi].consts[k];
            int32_t li = x.layer_of[x.e->tensors[t].producer];
            if (!drop[li] && only_fused_read(&x, fuse, t)) {
                drop[li] = 1;
                gone++;
            }
        }
    if (made && (st = rewrite(&x, progs, fuse, drop, &p->out)) == MICA_OK) {
        p->changed = layers + gone;
        int n = snprintf(p->summary, sizeof p->summary, "%d layers fused "
                         "into %d Pointwise layer%s", (int)layers,
                         (int)made, made == 1 ? "" : "s");
        if (gone && n > 0 && (size_t)n < sizeof p->summary)
            snprintf(p->summary + n, sizeof p->summary - (size_t)n,
                     ", %d Constants of one value written in their "
                     "programs", (int)gone);
    }
done:
    for (gi = 0; progs && gi < x.nb_groups; gi++)
        prog_free(&progs[gi]);
    free(progs);
    free(fuse);
    free(drop);
    cleanup(&x);
    return st;
}
