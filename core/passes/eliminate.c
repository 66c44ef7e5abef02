/*
 * core/passes/eliminate.c - the pass "elimination": what computes
 * nothing new goes (docs/passes.md).
 *
 * In an order where producers come first, with the tensors renamed as
 * layers go (what the builder knows of a tensor: mica__pass_tensor; a
 * tensor it does not know is left as it is):
 *   - a no-op: an Identity whose output has its input's type (no cast), a
 *     Shuffle that moves nothing (its transposes and reshapes come to
 *     nothing, or its output has its input's shape and no transpose);
 *     its readers read its input instead;
 *   - a chain: a Shuffle reading a Shuffle becomes one Shuffle of the
 *     first one's input where the two come to one transpose, reshape,
 *     transpose (transposes compose; a reshape of a reshape is the last
 *     one, unless it copies dimensions of its input with 0); a cast
 *     (Identity) of a cast whose type holds every value of the first
 *     one's input becomes one cast (int8 -> int32 -> float32 is int8 ->
 *     float32; float32 -> float16 -> float32 stays);
 *   - a duplicate: a layer of a type that computes from its inputs alone
 *     (mica__pass_pure) with the type, version, params and inputs of an
 *     earlier one (a Constant: the same weights, byte for byte); its
 *     readers read the earlier one's outputs;
 * then every layer that nothing reads, directly or not, and that is no
 * boundary layer of a loop or conditional (nor inside one), nor an
 * Assertion, goes: the builder would never run it.
 *
 * A layer whose output is a network output stays (the name is the
 * caller's), as do layers inside loops and conditionals.
 */
#include <config.h>

#include "passes.h"
#include "fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct elim {
    mica__pass_run_t *p;
    const mica_network_t *net;
    mica__pass_graph_t g;
    int32_t *order;            /* network layers, producers first */
    int constructs;            /* the network has loops or conditionals */
    mica__pass_subst_t subst;
    uint8_t *drop;             /* per network layer */
    mica__shuffle_t **shuf;    /* per network layer: a Shuffle as it is
                                  now, NULL for other layers */
    int8_t *replaced;          /* per network layer: its inputs or params
                                  change (shuf, or cast_to) */
    int64_t *cast_to;          /* per network layer: an Identity's type
                                  when replaced */
    const char **cast_in;      /* its input then */
    mica__index_t dups;        /* CSE key -> network layer */
    char **keys;
    int32_t nb_keys;
    int64_t noops, chains, duplicates, dead;
} elim_t;

static mica_status_t nomem(elim_t *x)
{
    return mica__fail(x->p->ctx, MICA_ERR_NOMEM, "out of host memory");
}

/* Whether every output of network layer nl is something only layers
 * read (no network output, shape output). */
static int outputs_internal(const elim_t *x, const mica__net_layer_t *nl)
{
    int32_t i;
    for (i = 0; i < nl->nb_outputs; i++)
        if (mica__pass_is_output(&x->g, nl->outputs[i]))
            return 0;
    return 1;
}

/* ---- no-op Identities and casts ------------------------------------- */

/* Whether type b holds every value of type a exactly. */
static int holds(mica_dtype_t a, mica_dtype_t b)
{
    if (a == b)
        return 1;
    switch (a) {
    case MICA_BOOL:
        return b == MICA_UINT8 || b == MICA_INT8 || b == MICA_INT32 ||
               b == MICA_INT64 || b == MICA_FLOAT16 || b == MICA_BFLOAT16 ||
               b == MICA_FLOAT32;
    case MICA_INT8: case MICA_UINT8:
        return b == MICA_INT32 || b == MICA_INT64 || b == MICA_FLOAT16 ||
               b == MICA_FLOAT32 || (a == MICA_UINT8 && b == MICA_BFLOAT16)
               || (a == MICA_INT8 && b == MICA_BFLOAT16);
    case MICA_INT32:
        return b == MICA_INT64;
    case MICA_FLOAT16: case MICA_BFLOAT16:
        return b == MICA_FLOAT32;
    default:
        return 0;
    }
}

/* An Identity (step s, network layer li) with inputs renamed `in`. */
static mica_status_t identity(elim_t *x, int32_t li, const char *in)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    const mica__tensor_t *fi = mica__pass_tensor(x->p, in);
    const mica__tensor_t *fo = mica__pass_tensor(x->p, nl->outputs[0]);
    mica_dtype_t from, to;
    int32_t a;

    if (!fi || !fo)
        return x->p->st;
    from = fi->dtype;
    to = fo->dtype;
    if (from == to) {
        if (!outputs_internal(x, nl))
            return MICA_OK; /* the output's name is the caller's */
        x->drop[li] = 1;
        x->noops++;
        return mica__pass_subst_put(x->p->ctx, &x->subst, nl->outputs[0], in);
    }
    /* a cast of a cast that lost nothing */
    a = mica__pass_producer(&x->g, in, NULL);
    if (a >= 0 && !x->drop[a] && !strcmp(x->net->layers[a].type, "Identity")
        && x->net->layers[a].nb_inputs == 1 &&
        mica__pass_pure(&x->net->layers[a])
        && !x->net->layers[a].loop && !x->net->layers[a].conditional) {
        const char *first = x->replaced[a] ? x->cast_in[a]
                                           : mica__pass_subst_get(
                                                 &x->subst,
                                                 x->net->layers[a].inputs[0]);
        const mica__tensor_t *f0 = mica__pass_tensor(x->p, first);
        mica_dtype_t t0 = f0 ? f0->dtype : to;
        if (f0 && holds(t0, from)) {
            x->chains++;
            if (t0 == to && outputs_internal(x, nl)) {
                x->drop[li] = 1;
                return mica__pass_subst_put(x->p->ctx, &x->subst,
                                            nl->outputs[0], first);
            }
            x->replaced[li] = 1;
            x->cast_to[li] = to;
            x->cast_in[li] = first;
        }
    }
    return MICA_OK;
}

/* ---- Shuffles ----------------------------------------------------------- */

/* One step of a Shuffle's chain: a transpose or a reshape. */
typedef struct op {
    int kind;                  /* 'T' or 'R' */
    int32_t n;                 /* T: length; R: as mica__shuffle_t.nr */
    int64_t v[MICA_MAX_DIMS];
    int64_t zip;
    const char *dims;
    int independent;           /* R: what it makes does not depend on its
                                  input's dims (no 0 that copies one) */
} op_t;

static int identity_perm(const int64_t *p, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (p[i] != i)
            return 0;
    return 1;
}

/* Whether reshape dims `v` (n of them, or the values of tensor `dims`
 * where n is -2) with `zip` copy none of their input's dims. */
static int independent(elim_t *x, const int64_t *v, int32_t n,
                       int64_t zip, const char *dims)
{
    const mica__tensor_t *t;
    int32_t i;
    if (!zip)
        return 1;
    if (n >= 0) {
        for (i = 0; i < n; i++)
            if (v[i] == 0)
                return 0;
        return 1;
    }
    /* values of a shape tensor: known ones without a 0 */
    t = mica__pass_tensor(x->p, dims);
    if (!t || !t->values)
        return 0;
    for (i = 0; i < t->shape.nb_values; i++) {
        const mica_expr_t *e = t->values[i];
        mica__expr_node_t nd;
        if (!e)
            return 0;
        mica__expr_inspect(e, &nd);
        if (nd.lo <= 0 && nd.hi >= 0)
            return 0;
    }
    return 1;
}

/* Append shuffle s's steps to ops. */
static void steps_of(elim_t *x, const mica__shuffle_t *s, op_t *ops, int *n)
{
    if (s->n1) {
        ops[*n].kind = 'T';
        ops[*n].n = s->n1;
        memcpy(ops[*n].v, s->p1, sizeof s->p1);
        (*n)++;
    }
    if (s->nr != -1) {
        memset(&ops[*n], 0, sizeof ops[*n]);
        ops[*n].kind = 'R';
        ops[*n].n = s->nr;
        if (s->nr > 0)
            memcpy(ops[*n].v, s->r, sizeof s->r);
        ops[*n].zip = s->zip;
        ops[*n].dims = s->dims;
        ops[*n].independent = independent(x, s->r, s->nr, s->zip, s->dims);
        (*n)++;
    }
    if (s->n2) {
        ops[*n].kind = 'T';
        ops[*n].n = s->n2;
        memcpy(ops[*n].v, s->p2, sizeof s->p2);
        (*n)++;
    }
}

/* Simplify ops: identity transposes go, adjacent transposes compose, a
 * reshape followed by an independent reshape is the latter.  0 if the
 * ops then do not fit one Shuffle (transpose, reshape, transpose), else
 * 1 with the Shuffle in *s (its inputs left as they are). */
static int combine(op_t *ops, int n, mica__shuffle_t *s)
{
    int i, j, changed = 1;

    while (changed) {
        changed = 0;
        for (i = 0; i < n; i++)
            if (ops[i].kind == 'T' && identity_perm(ops[i].v, ops[i].n)) {
                memmove(&ops[i], &ops[i + 1],
                        sizeof *ops * (size_t)(n - i - 1));
                n--;
                changed = 1;
                break;
            }
        for (i = 0; !changed && i + 1 < n; i++) {
            if (ops[i].kind == 'T' && ops[i + 1].kind == 'T' &&
                ops[i].n == ops[i + 1].n) {
                /* out[k] = mid[q[k]] = in[p[q[k]]] */
                int64_t c[MICA_MAX_DIMS];
                for (j = 0; j < ops[i].n; j++)
                    c[j] = ops[i].v[ops[i + 1].v[j]];
                memcpy(ops[i].v, c, sizeof c);
                memmove(&ops[i + 1], &ops[i + 2],
                        sizeof *ops * (size_t)(n - i - 2));
                n--;
                changed = 1;
            } else if (ops[i].kind == 'R' && ops[i + 1].kind == 'R' &&
                       ops[i + 1].independent) {
                memmove(&ops[i], &ops[i + 1],
                        sizeof *ops * (size_t)(n - i - 1));
                n--;
                changed = 1;
            }
        }
    }
    memset(s, 0, sizeof *s);
    s->nr = -1;
    s->zip = 1;
    i = 0;
    if (i < n && ops[i].kind == 'T' && (n == 1 || ops[i + 1].kind == 'R')) {
        s->n1 = ops[i].n;
        memcpy(s->p1, ops[i].v, sizeof s->p1);
        i++;
    }
    if (i < n && ops[i].kind == 'R') {
        s->nr = ops[i].n;
        memcpy(s->r, ops[i].v, sizeof s->r);
        s->zip = ops[i].zip;
        s->dims = ops[i].dims;
        i++;
    }
    if (i < n && ops[i].kind == 'T') {
        s->n2 = ops[i].n;
        memcpy(s->p2, ops[i].v, sizeof s->p2);
        i++;
    }
    return i == n;
}

/* Whether the dims of tensors a and b are the same expressions. */
static int same_shape(elim_t *x, const char *a, const char *b)
{
    const mica__tensor_t *ta = mica__pass_tensor(x->p, a);
    const mica__tensor_t *tb = mica__pass_tensor(x->p, b);
    const mica_shape_expr_t *sa, *sb;
    int32_t i;
    if (!ta || !tb)
        return 0;
    sa = &ta->shape;
    sb = &tb->shape;
    if (sa->nb_dims != sb->nb_dims || sa->nb_dims < 0)
        return 0;
    for (i = 0; i < sa->nb_dims; i++)
        if (sa->d[i] != sb->d[i])
            return 0;
    return 1;
}

static int fixed_dims_of(elim_t *x, const char *name, mica_dims_t *d)
{
    return mica__pass_fixed_dims(mica__pass_tensor(x->p, name), d);
}

/* Shuffle a (making `mid`) then b (making `end`) on fixed dims as one
 * Shuffle (shuffles.c) into *out: 1, or 0. */
static int composed(elim_t *x, const mica__shuffle_t *a, const char *mid,
                    const mica__shuffle_t *b, const char *end,
                    mica__shuffle_t *out)
{
    mica__shuffle_step_t steps[6];
    mica_dims_t din, dmid, dend;
    int32_t na, nb;

    if (!fixed_dims_of(x, a->in, &din) || !fixed_dims_of(x, mid, &dmid) ||
        !fixed_dims_of(x, end, &dend) ||
        (na = mica__shuffle_steps(a, &din, &dmid, steps)) < 0 ||
        (nb = mica__shuffle_steps(b, &dmid, &dend, steps + na)) < 0 ||
        !mica__shuffle_compose(&din, steps, na + nb, out))
        return 0;
    out->in = a->in;
    out->dims = NULL;
    return 1;
}

/* Whether Shuffle s (making `end`) on fixed dims moves nothing. */
static int nothing(elim_t *x, const mica__shuffle_t *s, const char *end)
{
    mica__shuffle_step_t steps[3];
    mica_dims_t din, dend;
    mica__shuffle_t one;
    int32_t n;
    return fixed_dims_of(x, s->in, &din) && fixed_dims_of(x, end, &dend) &&
           (n = mica__shuffle_steps(s, &din, &dend, steps)) >= 0 &&
           mica__shuffle_compose(&din, steps, n, &one) && !one.n1 &&
           !one.n2 && one.nr == -1;
}

/* A Shuffle (network layer li). */
static mica_status_t shuffle(elim_t *x, int32_t li)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    mica__shuffle_t s, merged;
    op_t ops[8];
    int n = 0;
    int32_t a;

    if (!mica__pass_read_shuffle(nl, &x->subst, &s))
        return MICA_OK;
    a = mica__pass_producer(&x->g, s.in, NULL);
    if (a >= 0 && x->shuf[a] && !x->drop[a]) {
        /* the first one's steps, then this one's */
        steps_of(x, x->shuf[a], ops, &n);
        steps_of(x, &s, ops, &n);
        if (combine(ops, n, &merged)) {
            merged.in = x->shuf[a]->in;
            if (merged.nr == -2 && !merged.dims)
                merged.dims = s.dims;
        } else if (!composed(x, x->shuf[a], x->net->layers[a].outputs[0], &s,
                             nl->outputs[0], &merged)) {
            merged.in = NULL;
        }
        if (merged.in) {
            x->chains++;
            s = merged;
            x->replaced[li] = 1;
        }
    }
    n = 0;
    steps_of(x, &s, ops, &n);
    if (combine(ops, n, &merged))
        merged.in = s.in, merged.dims = s.dims;
    else
        merged = s;
    /* nothing moves: no step left, or a reshape to the input's shape, or
     * steps that come to nothing on fixed dims */
    if ((merged.n1 == 0 && merged.n2 == 0 && merged.nr == -1) ||
        (merged.n1 == 0 && merged.n2 == 0 &&
         same_shape(x, merged.in, nl->outputs[0])) ||
        nothing(x, &s, nl->outputs[0])) {
        if (outputs_internal(x, nl)) {
            x->drop[li] = 1;
            x->replaced[li] = 0;
            x->noops++;
            return mica__pass_subst_put(x->p->ctx, &x->subst,
                                        nl->outputs[0], merged.in);
        }
    }
    if (!(x->shuf[li] = malloc(sizeof *x->shuf[li])))
        return nomem(x);
    *x->shuf[li] = s;
    return MICA_OK;
}

/* ---- duplicates -------------------------------------------------------- */

/* FNV-1a over n bytes, continuing h. */
static uint64_t hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* A hash of nl's params: their bytes, and of weights at most 4096 bytes
 * spread over them (equal keys are compared in full). */
static uint64_t params_hash(const mica__net_layer_t *nl)
{
    const mica_fields_t *v = &nl->fields.view;
    uint64_t h = 1469598103934665603ull;
    int32_t i, j;

    for (i = 0; i < v->nb_fields; i++) {
        const mica_field_t *f = &v->fields[i];
        h = hash(h, f->name, strlen(f->name));
        h = hash(h, &f->count, sizeof f->count);
        if (!f->data || f->count <= 0)
            continue;
        if (f->type == MICA_FIELD_STRING) {
            for (j = 0; j < f->count; j++) {
                const char *s = ((const char *const *)f->data)[j];
                h = hash(h, s ? s : "", s ? strlen(s) : 0);
            }
        } else if (f->type == MICA_FIELD_WEIGHTS) {
            for (j = 0; j < f->count; j++) {
                const mica_weights_t *w =
                    &((const mica_weights_t *)f->data)[j];
                size_t bytes = (size_t)w->count * mica_dtype_size(w->dtype);
                size_t chunk = bytes < 64 ? bytes : 64, k;
                h = hash(h, &w->count, sizeof w->count);
                h = hash(h, &w->dtype, sizeof w->dtype);
                /* 64 chunks of 64 bytes, from the first to the last */
                for (k = 0; w->values && chunk && k < 64; k++)
                    h = hash(h, (const char *)w->values +
                                    (bytes - chunk) / 63 * k, chunk);
            }
        } else {
            h = hash(h, f->data,
                     mica__field_slot_size(f->type) * (size_t)f->count);
        }
    }
    return h;
}

/* A layer that may be merged with an earlier duplicate: the key of what
 * it computes, or NULL (none, or out of memory: *failed). */
static char *dup_key(const elim_t *x, const mica__net_layer_t *nl,
                     const char *const *in, int *failed)
{
    size_t len = strlen(nl->type) + 64;
    char *k, *p;
    int32_t i;

    for (i = 0; i < nl->nb_inputs; i++)
        len += (in[i] ? strlen(in[i]) : 0) + 1;
    if (!(k = malloc(len))) {
        *failed = 1;
        return NULL;
    }
    p = k + sprintf(k, "%s\x1f%d\x1f%d\x1f%s\x1f%016llx", nl->type,
                    (int)nl->version, (int)nl->precision,
                    nl->implementation ? nl->implementation : "",
                    (unsigned long long)params_hash(nl));
    for (i = 0; i < nl->nb_inputs; i++)
        p += sprintf(p, "\x1f%s", in[i] ? in[i] : "");
    (void)x;
    return k;
}

/* A layer (network layer li, inputs renamed `in`): merged with the
 * earlier one of the same key, else remembered. */
static mica_status_t duplicate(elim_t *x, int32_t li, const char *const *in)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    int failed = 0;
    char *k = dup_key(x, nl, in, &failed);
    int32_t first, i;
    mica_status_t st = MICA_OK;
    char **grown;

    if (!k)
        return failed ? nomem(x) : MICA_OK;
    first = mica__index_get(&x->dups, k);
    if (first >= 0 && mica__pass_same_fields(&x->net->layers[first], nl) &&
        x->net->layers[first].nb_outputs == nl->nb_outputs) {
        free(k);
        x->drop[li] = 1;
        x->duplicates++;
        for (i = 0; i < nl->nb_outputs && st == MICA_OK; i++)
            st = mica__pass_subst_put(x->p->ctx, &x->subst, nl->outputs[i],
                                      x->net->layers[first].outputs[i]);
        return st;
    }
    if (first >= 0) {
        free(k);
        return MICA_OK;
    }
    grown = realloc(x->keys, sizeof *grown * ((size_t)x->nb_keys + 1));
    if (!grown) {
        free(k);
        return nomem(x);
    }
    x->keys = grown;
    x->keys[x->nb_keys++] = k;
    return mica__index_put(&x->dups, k, li) != 0 ? nomem(x) : MICA_OK;
}

/* ---- the decisions, in execution order -------------------------------- */

static mica_status_t decide(elim_t *x)
{
    const char *in[128];
    int32_t s, i;
    mica_status_t st = MICA_OK;

    for (s = 0; s < x->net->nb_layers && st == MICA_OK; s++) {
        int32_t li = x->order[s];
        const mica__net_layer_t *nl = &x->net->layers[li];
        if (nl->loop || nl->conditional ||
            mica__pass_role(nl) != MICA_ROLE_NONE ||
            !mica__pass_free(x->p, nl) ||
            nl->nb_inputs > 128 || nl->formats)
            continue;
        for (i = 0; i < nl->nb_inputs; i++)
            in[i] = mica__pass_subst_get(&x->subst, nl->inputs[i]);
        if (!strcmp(nl->type, "Identity") && nl->nb_inputs == 1 && in[0] &&
            nl->nb_outputs == 1 && (st = identity(x, li, in[0])) != MICA_OK)
            break;
        if (!x->drop[li] && !strcmp(nl->type, "Shuffle") &&
            nl->nb_outputs == 1 && (st = shuffle(x, li)) != MICA_OK)
            break;
        /* Where loops or conditionals are, which layers are inside them
         * is the builder's to find: only Constants (outside them all)
         * are merged there. */
        if (x->drop[li] || x->replaced[li] || !outputs_internal(x, nl) ||
            (x->constructs && strcmp(nl->type, "Constant")))
            continue;
        st = duplicate(x, li, in);
    }
    return st != MICA_OK ? st : x->p->st;
}

/* The inputs network layer li has in the rewritten network. */
static int32_t inputs_now(const elim_t *x, int32_t li, const char **in)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    int32_t i;

    if (x->replaced[li] && x->shuf[li]) {
        in[0] = x->shuf[li]->in;
        if (x->shuf[li]->nr == -2) {
            in[1] = x->shuf[li]->dims;
            return 2;
        }
        return 1;
    }
    if (x->replaced[li]) {
        in[0] = x->cast_in[li];
        return 1;
    }
    for (i = 0; i < nl->nb_inputs && i < 128; i++)
        in[i] = mica__pass_subst_get(&x->subst, nl->inputs[i]);
    return nl->nb_inputs;
}

/* Layers that nothing reads go (in reverse execution order, so that
 * what only they read goes too). */
static mica_status_t remove_dead(elim_t *x)
{
    mica__index_t needed = {0};
    const char *in[128];
    int32_t s, i, n;

    for (i = 0; i < x->net->nb_outputs; i++)
        if (mica__index_put(&needed, x->net->outputs[i], 1) != 0)
            goto nomem;
    for (i = 0; i < x->net->nb_shape_outputs; i++)
        if (mica__index_put(&needed, x->net->shape_outputs[i], 1) != 0)
            goto nomem;
    /* What boundary layers read (a Recurrence's next value comes later
     * in the order than the Recurrence) is needed. */
    for (s = 0; s < x->net->nb_layers; s++) {
        const mica__net_layer_t *nl = &x->net->layers[s];
        if (x->drop[s] || (mica__pass_role(nl) == MICA_ROLE_NONE &&
                           !nl->loop && !nl->conditional))
            continue;
        n = inputs_now(x, s, in);
        for (i = 0; i < n; i++)
            if (in[i] && mica__index_put(&needed, in[i], 1) != 0)
                goto nomem;
    }
    for (s = x->net->nb_layers - 1; s >= 0; s--) {
        int32_t li = x->order[s];
        const mica__net_layer_t *nl = &x->net->layers[li];
        int live = nl->loop || nl->conditional ||
                   mica__pass_role(nl) != MICA_ROLE_NONE;
        if (x->drop[li])
            continue;
        for (i = 0; i < nl->nb_outputs && !live; i++)
            live = mica__index_get(&needed, nl->outputs[i]) >= 0;
        if (!live) {
            x->drop[li] = 1;
            x->dead++;
            continue;
        }
        n = inputs_now(x, li, in);
        for (i = 0; i < n; i++)
            if (in[i] && mica__index_put(&needed, in[i], 1) != 0)
                goto nomem;
    }
    mica__index_free(&needed);
    return MICA_OK;
nomem:
    mica__index_free(&needed);
    return nomem(x);
}

/* ---- the rewritten network ---------------------------------------------- */

/* Network layer li as the decisions made it, into out. */
static mica_status_t put_layer(elim_t *x, mica_network_t *out, int32_t li)
{
    const mica__net_layer_t *nl = &x->net->layers[li];
    const char *in[128];
    mica_field_t f[1];
    mica_fields_t fields = {0, f};
    mica_layer_spec_t spec;
    const mica__shuffle_t *s = x->shuf[li];

    if (!x->replaced[li])
        return mica__pass_copy_layer(out, nl, &x->subst, NULL);
    if (s)
        return mica__pass_add_shuffle(out, nl, s, NULL);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = nl->name;
    spec.type = nl->type;
    spec.version = nl->version;
    spec.implementation = nl->implementation;
    spec.nb_inputs = inputs_now(x, li, in);
    spec.inputs = in;
    spec.nb_outputs = nl->nb_outputs;
    spec.outputs = (const char *const *)nl->outputs;
    spec.origin = nl->origin;
    spec.fields = &fields;
    f[fields.nb_fields++] = (mica_field_t){"dtype", MICA_FIELD_DTYPE, 1,
                                           &x->cast_to[li]};
    if (mica_network_add_layer(out, &spec) != MICA_OK)
        return MICA_ERR_INVALID;
    out->layers[out->nb_layers - 1].precision = nl->precision;
    return MICA_OK;
}

static mica_status_t rewrite(elim_t *x)
{
    mica_network_t *out = NULL;
    mica_status_t st;
    int32_t li;

    if ((st = mica_network_create(x->p->ctx, &out)) != MICA_OK)
        return st;
    st = mica__rewrite_frame(x->net, out);
    for (li = 0; li < x->net->nb_layers && st == MICA_OK; li++)
        if (!x->drop[li])
            st = put_layer(x, out, li);
    if (st != MICA_OK) {
        mica_network_destroy(out);
        return st;
    }
    x->p->out = out;
    return MICA_OK;
}

/* ---- the pass ----------------------------------------------------------- */

static mica_status_t setup(elim_t *x)
{
    size_t nl = (size_t)x->net->nb_layers + 1;
    mica_status_t st;
    int32_t s;

    x->drop = calloc(nl, 1);
    x->shuf = calloc(nl, sizeof *x->shuf);
    x->replaced = calloc(nl, 1);
    x->cast_to = calloc(nl, sizeof *x->cast_to);
    x->cast_in = calloc(nl, sizeof *x->cast_in);
    if (!x->drop || !x->shuf || !x->replaced || !x->cast_to || !x->cast_in)
        return nomem(x);
    for (s = 0; s < x->net->nb_layers; s++) {
        uint32_t role = mica__pass_role(&x->net->layers[s]);
        x->constructs |= (role != MICA_ROLE_NONE &&
                          role != MICA_ROLE_ASSERTION) ||
                         x->net->layers[s].loop ||
                         x->net->layers[s].conditional;
    }
    if ((st = mica__pass_graph_make(x->net, &x->g)) != MICA_OK)
        return st;
    return mica__pass_order(x->net, &x->g, &x->order);
}

static void cleanup(elim_t *x)
{
    int32_t i;
    for (i = 0; x->shuf && i < x->net->nb_layers; i++)
        free(x->shuf[i]);
    for (i = 0; i < x->nb_keys; i++)
        free(x->keys[i]);
    free(x->keys);
    free(x->order);
    free(x->drop);
    free(x->shuf);
    free(x->replaced);
    free(x->cast_to);
    free(x->cast_in);
    mica__index_free(&x->dups);
    mica__pass_subst_free(&x->subst);
    mica__pass_graph_free(&x->g);
}

mica_status_t mica__pass_eliminate(mica__pass_run_t *p)
{
    elim_t x;
    mica_status_t st;
    int32_t li, changed = 0;

    memset(&x, 0, sizeof x);
    x.p = p;
    x.net = p->net;
    if ((st = setup(&x)) == MICA_OK && (st = decide(&x)) == MICA_OK &&
        (st = remove_dead(&x)) == MICA_OK) {
        for (li = 0; li < x.net->nb_layers; li++)
            changed += x.drop[li] || x.replaced[li];
        if (changed)
            st = rewrite(&x);
    }
    if (st == MICA_OK && p->out) {
        p->changed = x.noops + x.duplicates + x.dead;
        snprintf(p->summary, sizeof p->summary, "%lld layers removed (%lld "
                 "no-ops, %lld duplicates, %lld dead), %lld chains collapsed",
                 (long long)p->changed, (long long)x.noops,
                 (long long)x.duplicates, (long long)x.dead,
                 (long long)x.chains);
    }
    cleanup(&x);
    return st;
}
