/*
 * core/passes/shuffles.c - what several Shuffles (transposes and
 * reshapes) do, as one, for the passes that collapse them (elimination)
 * and move them into matrix products (transpose-folding).
 *
 * A chain of steps on a tensor of fixed dimensions is followed as
 * "atoms": each axis of the input is cut into the parts the reshapes
 * split it into (a reshape only merges consecutive atoms or splits one
 * into an outer and an inner part; anything else is not followed), and
 * transposes reorder the groups of atoms.  At the end the chain is: the
 * input reshaped into its atoms, the atoms reordered, and reshaped into
 * the output's dimensions.  Atoms next to each other in both orders are
 * one.  That is one Shuffle where no input axis is cut (a transpose of
 * the input's axes, then a reshape) or no output axis holds more than
 * one atom (a reshape, then a transpose); nothing at all where the atoms
 * keep their order and the output has the input's dimensions.  Axes of
 * length 1 carry no atom.
 */
#include <config.h>

#include "passes.h"

#include <string.h>

#define MAX_ATOMS 64

typedef struct atom {
    int64_t size;
    int32_t axis;              /* the input axis it is a part of */
    int32_t inner;             /* the part of its axis just inside it, -1 */
} atom_t;

typedef struct chain {
    atom_t atoms[MAX_ATOMS];
    int32_t nb_atoms;
    int32_t order[MAX_ATOMS];  /* atoms in memory order, outer first */
    int32_t n;
    int32_t rank;              /* the current dimensions: */
    int32_t start[MICA_MAX_DIMS], count[MICA_MAX_DIMS]; /* runs of order */
    int64_t dim[MICA_MAX_DIMS];
} chain_t;

static int transpose(chain_t *c, const int64_t *p, int32_t n)
{
    int32_t start[MICA_MAX_DIMS], count[MICA_MAX_DIMS], order[MAX_ATOMS];
    int64_t dim[MICA_MAX_DIMS];
    int32_t j, k, at = 0;

    if (n != c->rank)
        return 0;
    for (j = 0; j < n; j++) {
        int32_t from = (int32_t)p[j];
        if (from < 0 || from >= n)
            return 0;
        start[j] = at;
        count[j] = c->count[from];
        dim[j] = c->dim[from];
        for (k = 0; k < c->count[from]; k++)
            order[at++] = c->order[c->start[from] + k];
    }
    memcpy(c->order, order, sizeof order[0] * (size_t)at);
    memcpy(c->start, start, sizeof start);
    memcpy(c->count, count, sizeof count);
    memcpy(c->dim, dim, sizeof dim);
    return 1;
}

/* Cut atom a (at position pos of the order) into an outer part of size f
 * and an inner part after it. */
static int cut(chain_t *c, int32_t pos, int64_t f)
{
    int32_t a = c->order[pos], b = c->nb_atoms;
    if (b >= MAX_ATOMS || c->n >= MAX_ATOMS)
        return 0;
    c->atoms[b].size = c->atoms[a].size / f;
    c->atoms[b].axis = c->atoms[a].axis;
    c->atoms[b].inner = c->atoms[a].inner;
    c->atoms[a].size = f;
    c->atoms[a].inner = b;
    c->nb_atoms++;
    memmove(&c->order[pos + 2], &c->order[pos + 1],
            sizeof c->order[0] * (size_t)(c->n - pos - 1));
    c->order[pos + 1] = b;
    c->n++;
    return 1;
}

static int reshape(chain_t *c, const int64_t *t, int32_t m)
{
    int32_t j, pos = 0;

    if (m > MICA_MAX_DIMS)
        return 0;
    for (j = 0; j < m; j++) {
        int64_t prod = 1;
        if (t[j] < 1)
            return 0;
        c->start[j] = pos;
        while (prod < t[j]) {
            int64_t s;
            if (pos >= c->n)
                return 0;
            s = c->atoms[c->order[pos]].size;
            if (t[j] % prod)
                return 0;
            if (s <= t[j] / prod && (t[j] / prod) % s == 0) {
                prod *= s;
                pos++;
            } else if (s % (t[j] / prod) == 0) {
                if (!cut(c, pos, t[j] / prod))
                    return 0;
                prod = t[j];
                pos++;
            } else {
                return 0;
            }
        }
        c->count[j] = pos - c->start[j];
        c->dim[j] = t[j];
    }
    if (pos != c->n)
        return 0;
    c->rank = m;
    return 1;
}

/* Atoms next to each other in the memory order that are consecutive
 * parts of one axis: one atom. */
static void coalesce(chain_t *c)
{
    int32_t i = 0;
    while (i + 1 < c->n) {
        atom_t *a = &c->atoms[c->order[i]];
        if (a->inner == c->order[i + 1]) {
            const atom_t *b = &c->atoms[c->order[i + 1]];
            a->size *= b->size;
            a->inner = b->inner;
            memmove(&c->order[i + 1], &c->order[i + 2],
                    sizeof c->order[0] * (size_t)(c->n - i - 2));
            c->n--;
            continue;
        }
        i++;
    }
}

int mica__shuffle_compose(const mica_dims_t *in,
                          const mica__shuffle_step_t *steps, int32_t nb,
                          mica__shuffle_t *out)
{
    chain_t c;
    int32_t i, j, k, cut_axis = 0, multi = 0;
    int32_t first[MICA_MAX_DIMS], nb_atoms[MICA_MAX_DIMS];
    int64_t perm[MICA_MAX_DIMS], pdims[MICA_MAX_DIMS];

    memset(&c, 0, sizeof c);
    if (in->nb_dims > MICA_MAX_DIMS)
        return 0;
    c.rank = in->nb_dims;
    for (i = 0; i < in->nb_dims; i++) {
        if (in->d[i] < 1)
            return 0;
        c.start[i] = c.n;
        c.count[i] = in->d[i] > 1;
        c.dim[i] = in->d[i];
        if (in->d[i] > 1) {
            c.atoms[c.nb_atoms].size = in->d[i];
            c.atoms[c.nb_atoms].axis = i;
            c.atoms[c.nb_atoms].inner = -1;
            c.order[c.n++] = c.nb_atoms++;
        }
    }
    for (k = 0; k < nb; k++)
        if (!(steps[k].kind == 'T' ? transpose(&c, steps[k].v, steps[k].n)
                                   : reshape(&c, steps[k].v, steps[k].n)))
            return 0;
    /* the output groups as atom counts, before coalescing */
    coalesce(&c);
    /* which output dimension each atom is in now: recount the runs */
    {
        int32_t pos = 0;
        for (j = 0; j < c.rank; j++) {
            int64_t prod = 1;
            c.start[j] = pos;
            while (prod < c.dim[j] && pos < c.n)
                prod *= c.atoms[c.order[pos++]].size;
            /* an atom across two dimensions: reshaped after */
            if (prod != c.dim[j])
                multi = 2;
            c.count[j] = pos - c.start[j];
            if (c.count[j] > 1)
                multi |= 1;
        }
    }
    /* the input's axes, each as its atoms (outer first) */
    for (i = 0; i < in->nb_dims; i++) {
        first[i] = -1;
        nb_atoms[i] = 0;
    }
    for (j = 0; j < c.n; j++) {
        int32_t a = c.order[j], outer = 1;
        for (k = 0; k < c.n; k++)
            if (c.atoms[c.order[k]].inner == a)
                outer = 0;
        nb_atoms[c.atoms[a].axis]++;
        if (outer)
            first[c.atoms[a].axis] = a;
    }
    for (i = 0; i < in->nb_dims; i++)
        cut_axis |= nb_atoms[i] > 1;
    memset(out, 0, sizeof *out);
    out->nr = -1;
    out->zip = 0;
    if (!cut_axis) {
        /* transpose the input's axes (length 1 first), then reshape */
        int32_t n = 0, ident = 1;
        for (i = 0; i < in->nb_dims; i++)
            if (in->d[i] == 1)
                perm[n++] = i;
        for (j = 0; j < c.n; j++)
            perm[n++] = c.atoms[c.order[j]].axis;
        for (i = 0; i < n; i++) {
            pdims[i] = in->d[perm[i]];
            ident &= perm[i] == i;
        }
        if (!ident) {
            out->n1 = n;
            memcpy(out->p1, perm, sizeof perm[0] * (size_t)n);
        }
        if (c.rank != n || memcmp(pdims, c.dim, sizeof pdims[0] * (size_t)n)) {
            out->nr = c.rank;
            memcpy(out->r, c.dim, sizeof c.dim[0] * (size_t)c.rank);
        }
        return 1;
    }
    if (!multi) {
        /* reshape into the atoms in the input's order (then as many 1s
         * as the output has), then transpose them into place */
        int32_t pos[MAX_ATOMS], n = 0, units = 0, ident = 1;
        for (i = 0; i < in->nb_dims; i++)
            for (k = first[i]; k >= 0; k = c.atoms[k].inner) {
                pos[k] = n;
                out->r[n++] = c.atoms[k].size;
            }
        if (n + (c.rank - c.n) > MICA_MAX_DIMS || n != c.n)
            return 0;
        for (j = 0; j < c.rank; j++)
            if (c.count[j] == 0)
                out->r[n + units++] = 1;
        out->nr = n + units;
        units = 0;
        for (j = 0; j < c.rank; j++) {
            out->p2[j] = c.count[j] ? pos[c.order[c.start[j]]]
                                    : n + units++;
            ident &= out->p2[j] == j;
        }
        if (!ident)
            out->n2 = c.rank;
        return 1;
    }
    return 0;
}

int32_t mica__shuffle_steps(const mica__shuffle_t *s, const mica_dims_t *in,
                            const mica_dims_t *out,
                            mica__shuffle_step_t *steps)
{
    int32_t n = 0, i;

    if (s->n1) {
        if (s->n1 != in->nb_dims)
            return -1;
        steps[n].kind = 'T';
        steps[n].n = s->n1;
        memcpy(steps[n].v, s->p1, sizeof s->p1);
        n++;
    }
    if (s->nr != -1) {
        steps[n].kind = 'R';
        steps[n].n = out->nb_dims;
        for (i = 0; i < out->nb_dims; i++) {
            int32_t at = s->n2 ? (int32_t)s->p2[i] : i;
            if (at < 0 || at >= out->nb_dims)
                return -1;
            steps[n].v[at] = out->d[i];
        }
        n++;
    }
    if (s->n2) {
        if (s->n2 != out->nb_dims)
            return -1;
        steps[n].kind = 'T';
        steps[n].n = s->n2;
        memcpy(steps[n].v, s->p2, sizeof s->p2);
        n++;
    }
    return n;
}

int mica__pass_read_shuffle(const mica__net_layer_t *nl,
                            const mica__pass_subst_t *subst,
                            mica__shuffle_t *s)
{
    const mica_field_t *f;
    const char *const names[2] = {"first_transpose", "second_transpose"};
    int32_t k;

    memset(s, 0, sizeof *s);
    if (strcmp(nl->type, "Shuffle") || nl->nb_inputs < 1 ||
        nl->nb_inputs > 2 || !nl->inputs[0] || nl->nb_outputs != 1)
        return 0;
    s->in = mica__pass_subst_get(subst, nl->inputs[0]);
    f = mica_fields_find(&nl->fields.view, "zero_is_placeholder");
    s->zip = f && f->data ? *(const int64_t *)f->data : 1;
    for (k = 0; k < 2; k++) {
        f = mica_fields_find(&nl->fields.view, names[k]);
        if (!f || !f->data || f->type != MICA_FIELD_INT || f->count <= 0)
            continue;
        if (f->count > MICA_MAX_DIMS)
            return 0;
        memcpy(k ? s->p2 : s->p1, f->data, sizeof(int64_t) * (size_t)f->count);
        *(k ? &s->n2 : &s->n1) = f->count;
    }
    s->nr = -1;
    if (nl->nb_inputs == 2 && nl->inputs[1]) {
        s->nr = -2;
        s->dims = mica__pass_subst_get(subst, nl->inputs[1]);
    } else if ((f = mica_fields_find(&nl->fields.view, "reshape")) != NULL) {
        if (f->count > MICA_MAX_DIMS || (f->count > 0 && !f->data))
            return 0;
        s->nr = f->count;
        if (f->count > 0)
            memcpy(s->r, f->data, sizeof(int64_t) * (size_t)f->count);
    }
    return 1;
}

mica_status_t mica__pass_add_shuffle(mica_network_t *out,
                                     const mica__net_layer_t *nl,
                                     const mica__shuffle_t *s,
                                     const char *output)
{
    const char *in[2] = {s->in, s->dims};
    const char *outs[1] = {output ? output : nl->outputs[0]};
    mica_field_t f[4];
    mica_fields_t fields = {0, f};
    mica_layer_spec_t spec;
    int64_t zip = s->zip ? 1 : 0;

    if (s->n1)
        f[fields.nb_fields++] = (mica_field_t){"first_transpose",
                                               MICA_FIELD_INT, s->n1, s->p1};
    if (s->nr >= 0)
        f[fields.nb_fields++] = (mica_field_t){"reshape", MICA_FIELD_INT,
                                               s->nr, s->r};
    if (s->n2)
        f[fields.nb_fields++] = (mica_field_t){"second_transpose",
                                               MICA_FIELD_INT, s->n2, s->p2};
    f[fields.nb_fields++] = (mica_field_t){"zero_is_placeholder",
                                           MICA_FIELD_BOOL, 1, &zip};
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = nl->name;
    spec.type = "Shuffle";
    spec.version = nl->version;
    spec.implementation = nl->implementation;
    spec.nb_inputs = s->nr == -2 ? 2 : 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.origin = nl->origin;
    spec.fields = &fields;
    if (mica_network_add_layer(out, &spec) != MICA_OK)
        return MICA_ERR_INVALID;
    out->layers[out->nb_layers - 1].precision = nl->precision;
    return MICA_OK;
}
