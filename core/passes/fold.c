/*
 * core/passes/fold.c - the pass "constant-folding": a layer whose inputs
 * are all known at build time runs once, at build time, on the CPU
 * reference implementation, and its outputs become Constant layers
 * (docs/passes.md).
 *
 * Known at build time: the output of a Constant layer; a tensor whose
 * values the builder knows as expressions that every shape of every
 * profile fixes (the values of shape tensors, Shape of a tensor whose
 * dimensions are fixed, and what Gather, Concatenation, ElementWise...
 * compute from them: mica/layer.h's output_values); the outputs of a
 * folded layer.  A layer is folded when it is of a type known to compute
 * its outputs from its inputs alone (FOLDABLE below: no side effect, no
 * random values, no data-dependent output shape), outside loops and
 * conditionals, not read from an engine file's state, with every input
 * known and every output of fixed dimensions and at most FOLD_LIMIT
 * bytes.
 *
 * The known tensors that something not folded reads (or that are network
 * outputs) become Constants, named as they were: those a folded layer
 * makes are computed by a network of their own (their folded producers,
 * the Constants and known values these read) built for the CPU with
 * every layer on its reference implementation and run once; known values
 * are written from their expressions.  Folded layers go; so does a layer
 * whose outputs all became Constants.
 */
#include <config.h>

#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest tensor folding makes, in bytes (ONNX Runtime and
 * TensorRT fold without a size limit; Polygraphy and OpenVINO cap it).
 * A weight matrix of VGG's first FullyConnected layer is 411 MB. */
#define FOLD_LIMIT ((int64_t)1 << 30)

typedef struct fold {
    mica__pass_run_t *p;
    const mica_network_t *net;
    const mica_engine_t *e;
    mica__pass_graph_t g;
    mica__index_t tensor_ix;   /* engine tensor name -> index */
    int32_t *layer_of;         /* per engine step: network layer */
    uint8_t *known;            /* per tensor: 1 known at build time */
    uint8_t *from_values;      /* per tensor: known from expressions */
    uint8_t *make;             /* per tensor: becomes a Constant */
    uint8_t *folded;           /* per network layer: computed now */
    uint8_t *drop;             /* per network layer: removed */
    const mica_expr_t ***vals; /* per tensor: value expressions, or NULL */
    int32_t *nb_vals;
    void **bytes;              /* per tensor made: its values */
    int64_t folded_layers, made, made_bytes;
} fold_t;

static mica_status_t nomem(fold_t *f)
{
    return mica__fail(f->p->ctx, MICA_ERR_NOMEM, "out of host memory");
}

static int is_constant(const mica__net_layer_t *nl)
{
    return !strcmp(nl->type, "Constant") && !(nl->ns && nl->ns[0]) &&
           nl->nb_inputs == 0 && nl->nb_outputs == 1 && !nl->from_state;
}

/* Bytes of tensor t at fixed dims, -1 if not fixed or beyond the limit. */
static int64_t fixed_bytes(const mica__tensor_t *t)
{
    mica_dims_t d;
    int64_t bytes;
    if (!mica__pass_fixed_dims(t, &d) ||
        mica_dims_bytes_checked(&d, t->dtype, &bytes) != 0 ||
        bytes > FOLD_LIMIT)
        return -1;
    return bytes;
}

static int int_type(mica_dtype_t dt)
{
    return dt == MICA_INT32 || dt == MICA_INT64 || dt == MICA_BOOL ||
           dt == MICA_INT8 || dt == MICA_UINT8;
}

/* Whether layer nl (engine step s) may be folded, its inputs aside. */
static int foldable(const fold_t *f, const mica__net_layer_t *nl, int32_t s)
{
    const mica__layer_t *l = &f->e->layers[s];
    int32_t i;

    if (!mica__pass_free(f->p, nl) || !strcmp(nl->type, "Constant") ||
        nl->loop || nl->conditional || l->construct >= 0 ||
        l->info.role != MICA_ROLE_NONE || l->makes_sizes)
        return 0;
    for (i = 0; i < l->nb_outputs; i++)
        if (fixed_bytes(&f->e->tensors[l->outputs[i]]) < 0)
            return 0;
    return 1;
}

/* ---- values the builder knows as expressions ------------------------- */

/* The value expressions of output o of step s, where the layer gives them
 * from what is known of its inputs (their shapes, the values of those it
 * reads): f->vals of that output, or nothing. */
static mica_status_t values_of(fold_t *f, int32_t s, int32_t o)
{
    const mica_engine_t *e = f->e;
    const mica__layer_t *l = &e->layers[s];
    int32_t t = l->outputs[o], i, n;
    const mica__tensor_t *tt = &e->tensors[t];
    mica_shape_expr_t in[128];
    const mica_expr_t **v;
    mica_dims_t d;
    mica_error_t err;

    if (tt->values && tt->shape.nb_values > 0) {
        f->vals[t] = (const mica_expr_t **)tt->values;
        f->nb_vals[t] = tt->shape.nb_values;
        return MICA_OK;
    }
    if (!int_type(tt->dtype) || !mica__pass_fixed_dims(tt, &d) ||
        d.nb_dims > 1 ||
        !MICA__HAS_OP(l->instance->ops, output_values) ||
        l->nb_inputs > 128)
        return MICA_OK;
    n = d.nb_dims ? (int32_t)d.d[0] : 1;
    if (n <= 0 || n > MICA__MAX_SHAPE_VALUES)
        return MICA_OK;
    for (i = 0; i < l->nb_inputs; i++) {
        int32_t ti = l->inputs[i];
        memset(&in[i], 0, sizeof in[i]);
        if (ti < 0) {
            in[i].nb_dims = -1;
            continue;
        }
        in[i] = e->tensors[ti].shape;
        in[i].values = f->vals[ti];
        in[i].nb_values = f->vals[ti] ? f->nb_vals[ti] : 0;
        /* a module reads the values of what it reads as data */
        if (!f->vals[ti] && l->input_kinds[i] != MICA_INPUT_DIMS)
            return MICA_OK;
    }
    if (!(v = calloc((size_t)n + 1, sizeof *v)))
        return nomem(f);
    mica__error_clear(&err);
    if (l->instance->ops->output_values(l->instance, o, in, l->nb_inputs,
                                        e->eb, v, n, &err) != MICA_OK) {
        free(v);
        return MICA_OK;
    }
    for (i = 0; i < n && v[i]; i++)
        ;
    if (i < n) {
        free(v);
        return MICA_OK;
    }
    f->vals[t] = v;
    f->nb_vals[t] = n;
    f->from_values[t] = 2; /* ours to free */
    return MICA_OK;
}

/* Whether every value of t is fixed. */
static int values_fixed(const fold_t *f, int32_t t)
{
    int64_t v;
    int32_t i;
    if (!f->vals[t])
        return 0;
    for (i = 0; i < f->nb_vals[t]; i++)
        if (!mica__pass_fixed(f->vals[t][i], &v))
            return 0;
    return 1;
}

/* The bytes of known tensor t from its value expressions. */
static void *bytes_of_values(const fold_t *f, int32_t t)
{
    mica_dtype_t dt = f->e->tensors[t].dtype;
    int32_t i, n = f->nb_vals[t];
    unsigned char *b = malloc((size_t)n * mica_dtype_size(dt) + 1);
    for (i = 0; b && i < n; i++) {
        int64_t v = 0;
        mica__pass_fixed(f->vals[t][i], &v);
        switch (dt) {
        case MICA_INT64: ((int64_t *)b)[i] = v; break;
        case MICA_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
        case MICA_INT8: ((int8_t *)b)[i] = (int8_t)v; break;
        default: b[i] = (unsigned char)(dt == MICA_BOOL ? v != 0 : v); break;
        }
    }
    return b;
}

/* ---- what is known, what is folded, what becomes a Constant ----------- */

static mica_status_t classify(fold_t *f)
{
    const mica_engine_t *e = f->e;
    int32_t s, i;
    mica_status_t st;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int32_t li = f->layer_of[s];
        const mica__net_layer_t *nl = &f->net->layers[li];
        int all = 1;
        if (is_constant(nl)) {
            f->known[l->outputs[0]] = 1;
            continue;
        }
        for (i = 0; i < l->nb_inputs; i++)
            if (l->inputs[i] >= 0 && !f->known[l->inputs[i]])
                all = 0;
        if (all && foldable(f, nl, s)) {
            f->folded[li] = 1;
            for (i = 0; i < l->nb_outputs; i++)
                f->known[l->outputs[i]] = 1;
            continue;
        }
        for (i = 0; i < l->nb_outputs; i++) {
            int32_t t = l->outputs[i];
            if (l->construct >= 0 || l->info.role != MICA_ROLE_NONE ||
                l->makes_sizes)
                continue;
            if ((st = values_of(f, s, i)) != MICA_OK)
                return st;
            if (values_fixed(f, t) && fixed_bytes(&e->tensors[t]) >= 0) {
                f->known[t] = 1;
                f->from_values[t] |= 1;
            }
        }
    }
    return MICA_OK;
}

/* A layer is dropped when folded, or when every output of it that is
 * read or an output became a Constant and its type has no side effect.
 * The known tensors that something kept reads, or that are outputs,
 * become Constants (those of a Constant layer already are). */
static void decide(fold_t *f)
{
    const mica_network_t *net = f->net;
    const mica_engine_t *e = f->e;
    int32_t s, i;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int32_t li = f->layer_of[s], all = 1, any = 0;
        const mica__net_layer_t *nl = &net->layers[li];
        if (f->folded[li] || is_constant(nl))
            continue;
        for (i = 0; i < l->nb_outputs; i++) {
            const mica__tensor_t *t = &e->tensors[l->outputs[i]];
            int used = mica__pass_reads(&f->g, t->name) > 0 ||
                       mica__pass_is_output(&f->g, t->name);
            if (!used)
                continue;
            any = 1;
            if (!(f->from_values[l->outputs[i]] & 1))
                all = 0;
        }
        /* Only a type without side effects goes when nothing needs it. */
        if (all && any && foldable(f, nl, s))
            f->drop[li] = 1;
    }
    for (s = 0; s < e->nb_layers; s++) {
        int32_t li = f->layer_of[s];
        if (f->folded[li]) {
            f->drop[li] = 1;
            f->folded_layers++;
        }
    }
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int32_t li = f->layer_of[s];
        if (f->drop[li])
            continue;
        for (i = 0; i < l->nb_inputs; i++) {
            int32_t t = l->inputs[i];
            if (t >= 0 && f->known[t] && e->tensors[t].producer >= 0 &&
                f->drop[f->layer_of[e->tensors[t].producer]])
                f->make[t] = 1;
        }
    }
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        if (f->known[i] && t->producer >= 0 &&
            f->drop[f->layer_of[t->producer]] &&
            mica__pass_is_output(&f->g, t->name))
            f->make[i] = 1;
    }
}

/* ---- computing what folded layers make ---------------------------------- */

/* A Constant named `name` making `tensor` of type dt and dims d from
 * `bytes` (borrowed: out keeps them alive, or they are copied). */
static mica_status_t add_constant(mica_network_t *out, const char *name,
                                  const char *tensor, mica_dtype_t dt,
                                  const mica_dims_t *d, const void *bytes,
                                  const char *origin, int borrow)
{
    mica_weights_t w;
    mica_field_t fld;
    mica_fields_t fields = {1, &fld};
    mica_layer_spec_t spec;
    const char *outs[1] = {tensor};

    memset(&w, 0, sizeof w);
    w.dtype = dt;
    w.count = mica_dims_volume(d);
    w.values = bytes;
    w.dims = *d;
    fld.name = "weights";
    fld.type = MICA_FIELD_WEIGHTS;
    fld.count = 1;
    fld.data = &w;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    spec.origin = origin;
    return borrow ? mica__network_add_borrowed(out, &spec)
                  : mica_network_add_layer(out, &spec);
}

/* Mark tensor t and what it is made of as needed by the network that
 * computes the folded values (need: per tensor). */
static void need_of(const fold_t *f, int32_t t, uint8_t *need)
{
    const mica_engine_t *e = f->e;
    int32_t *stack = NULL, n = 0, cap = 0;

    if (need[t])
        return;
    need[t] = 1;
    /* depth-first over folded producers, iteratively */
    for (;;) {
        int32_t s = e->tensors[t].producer, i;
        const mica__layer_t *l = s >= 0 ? &e->layers[s] : NULL;
        if (l && f->folded[f->layer_of[s]] && !(f->from_values[t] & 1))
            for (i = 0; i < l->nb_inputs; i++) {
                int32_t u = l->inputs[i];
                if (u < 0 || need[u])
                    continue;
                need[u] = 1;
                if (n == cap) {
                    int32_t *g = realloc(stack, sizeof *g *
                                         (size_t)(cap = cap ? 2 * cap : 64));
                    if (!g)
                        break;
                    stack = g;
                }
                stack[n++] = u;
            }
        if (!n)
            break;
        t = stack[--n];
    }
    free(stack);
}

/* The network that computes the folded tensors made: every needed layer
 * on the CPU's reference implementation, its outputs those tensors. */
static mica_status_t compute(fold_t *f)
{
    const mica_engine_t *e = f->e;
    mica_context_t *ctx = f->p->ctx;
    mica_network_t *mini = NULL;
    mica_engine_t *me = NULL;
    mica_exec_t *x = NULL;
    const mica__device_t *cpu;
    mica_build_config_t cfg;
    uint8_t *need = calloc((size_t)e->nb_tensors + 1, 1);
    const char **types = calloc((size_t)e->nb_layers + 1, sizeof *types);
    const char **impls = calloc((size_t)e->nb_layers + 1, sizeof *impls);
    int32_t s, i, t, nb_types = 0, outputs = 0;
    mica_status_t st;

    if (!need || !types || !impls) {
        st = nomem(f);
        goto done;
    }
    for (t = 0; t < e->nb_tensors; t++)
        if (f->make[t] && !(f->from_values[t] & 1)) {
            need_of(f, t, need);
            outputs++;
        }
    if (!outputs) {
        st = MICA_OK;
        goto done;
    }
    if ((st = mica_network_create(ctx, &mini)) != MICA_OK)
        goto done;
    for (s = 0; s < e->nb_layers && st == MICA_OK; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica__net_layer_t *nl = &f->net->layers[f->layer_of[s]];
        int any = 0;
        for (i = 0; i < l->nb_outputs; i++)
            any |= need[l->outputs[i]];
        if (!any)
            continue;
        if (!f->folded[f->layer_of[s]] && !is_constant(nl)) {
            /* known values: a Constant of them, whatever made them */
            for (i = 0; i < l->nb_outputs && st == MICA_OK; i++) {
                int32_t u = l->outputs[i];
                mica_dims_t d;
                void *b;
                char *name;
                if (!need[u])
                    continue;
                mica__pass_fixed_dims(&e->tensors[u], &d);
                b = bytes_of_values(f, u);
                name = mica__asprintf("%s/values", e->tensors[u].name);
                st = b && name ? add_constant(mini, name, e->tensors[u].name,
                                              e->tensors[u].dtype, &d, b,
                                              NULL, 0)
                               : nomem(f);
                free(b);
                free(name);
            }
            continue;
        }
        st = mica__pass_copy_layer(mini, nl, NULL, NULL);
        if (st == MICA_OK) {
            mini->layers[mini->nb_layers - 1].precision = 0;
            for (i = 0; i < nb_types && strcmp(types[i], nl->type); i++)
                ;
            if (i == nb_types) {
                types[nb_types] = nl->type;
                impls[nb_types++] = "reference";
            }
        }
    }
    for (t = 0; t < e->nb_tensors && st == MICA_OK; t++)
        if (f->make[t] && !(f->from_values[t] & 1))
            st = mica_network_mark_output(mini, e->tensors[t].name, NULL);
    if (st != MICA_OK)
        goto done;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.nb_prefer = nb_types;
    cfg.prefer_types = types;
    cfg.prefer_impls = impls;
    cfg.passes = "none";
    if ((st = mica__device_open(ctx, mica__device_desc(MICA_DEVICE_CPU),
                                &cpu)) != MICA_OK ||
        (st = mica__build_plain(mini, &cfg, MICA_DEVICE_CPU, cpu, &me)) !=
            MICA_OK ||
        (st = mica_exec_create(me, &x)) != MICA_OK ||
        (st = mica_exec_run(x)) != MICA_OK)
        goto done;
    for (t = 0; t < e->nb_tensors && st == MICA_OK; t++) {
        mica_tensor_desc_t desc;
        const void *data;
        size_t bytes;
        if (!f->make[t] || (f->from_values[t] & 1))
            continue;
        if ((st = mica_exec_get_output(x, e->tensors[t].name, &desc,
                                       &data)) != MICA_OK)
            break;
        if (desc.dtype != e->tensors[t].dtype ||
            fixed_bytes(&e->tensors[t]) !=
                mica_dims_volume(&desc.dims) *
                    (int64_t)mica_dtype_size(desc.dtype)) {
            st = mica__fail(ctx, MICA_ERR_INTERNAL, "'%s' was computed as "
                            "%s of %lld elements, not as the build has it "
                            "(%s %s)", e->tensors[t].name,
                            mica_dtype_name(desc.dtype),
                            (long long)mica_dims_volume(&desc.dims),
                            mica_dtype_name(e->tensors[t].dtype),
                            e->tensors[t].shape_text);
            break;
        }
        bytes = (size_t)mica_dims_volume(&desc.dims) *
                mica_dtype_size(desc.dtype);
        if (!(f->bytes[t] = malloc(bytes + 1))) {
            st = nomem(f);
            break;
        }
        if (bytes)
            memcpy(f->bytes[t], data, bytes);
    }
done:
    mica_exec_destroy(x);
    mica_engine_destroy(me);
    mica_network_destroy(mini);
    free(need);
    free(types);
    free(impls);
    return st;
}

/* ---- the rewritten network ---------------------------------------------- */

/* A layer name for a Constant of tensor `base` that no layer of out or
 * of the network has. */
static char *constant_name(const fold_t *f, const mica_network_t *out,
                           const char *base)
{
    char *name = mica__asprintf("%s", base);
    int32_t k;
    for (k = 1; name && k < 1000000; k++) {
        if (mica__index_get(&out->layer_names, name) < 0 &&
            mica__index_get(&f->net->layer_names, name) < 0)
            return name;
        free(name);
        name = mica__asprintf("%s/folded_%d", base, (int)k);
    }
    free(name);
    return NULL;
}

/* The Constants of the tensors made in place of network layer li. */
static mica_status_t constants_of(fold_t *f, mica_network_t *out, int32_t li)
{
    const mica__net_layer_t *nl = &f->net->layers[li];
    int32_t i, first = 1;
    mica_status_t st = MICA_OK;

    for (i = 0; i < nl->nb_outputs && st == MICA_OK; i++) {
        int32_t t = (int32_t)mica__index_get(&f->tensor_ix, nl->outputs[i]);
        const mica__tensor_t *tt;
        mica_dims_t d;
        char *name;
        void *b;
        if (t < 0 || !f->make[t])
            continue;
        tt = &f->e->tensors[t];
        mica__pass_fixed_dims(tt, &d);
        b = (f->from_values[t] & 1) ? bytes_of_values(f, t) : f->bytes[t];
        f->bytes[t] = NULL;
        name = first ? mica__strdup(nl->name) : constant_name(f, out,
                                                              tt->name);
        first = 0;
        if (!b || !name) {
            free(b);
            free(name);
            return nomem(f);
        }
        if ((st = mica__network_keep(out, b)) == MICA_OK &&
            (st = add_constant(out, name, tt->name, tt->dtype, &d, b,
                               nl->origin, 1)) == MICA_OK) {
            f->made++;
            f->made_bytes += mica_dims_volume(&d) *
                             (int64_t)mica_dtype_size(tt->dtype);
        }
        free(name);
    }
    return st;
}

static mica_status_t rewrite(fold_t *f)
{
    const mica_network_t *net = f->net;
    mica_network_t *out = NULL;
    mica_status_t st;
    int32_t li;

    if ((st = mica_network_create(f->p->ctx, &out)) != MICA_OK)
        return st;
    st = mica__rewrite_frame(net, out);
    for (li = 0; li < net->nb_layers && st == MICA_OK; li++)
        st = f->drop[li] ? constants_of(f, out, li)
                         : mica__pass_copy_layer(out, &net->layers[li], NULL,
                                                 NULL);
    if (st != MICA_OK) {
        mica_network_destroy(out);
        return st;
    }
    f->p->out = out;
    return MICA_OK;
}

/* ---- the pass ----------------------------------------------------------- */

static mica_status_t setup(fold_t *f)
{
    const mica_engine_t *e = f->e;
    size_t nt = (size_t)e->nb_tensors + 1, nl = (size_t)f->net->nb_layers + 1;
    mica__index_t layers = {0};
    int32_t s, t;

    f->layer_of = calloc((size_t)e->nb_layers + 1, sizeof *f->layer_of);
    f->known = calloc(nt, 1);
    f->from_values = calloc(nt, 1);
    f->make = calloc(nt, 1);
    f->folded = calloc(nl, 1);
    f->drop = calloc(nl, 1);
    f->vals = calloc(nt, sizeof *f->vals);
    f->nb_vals = calloc(nt, sizeof *f->nb_vals);
    f->bytes = calloc(nt, sizeof *f->bytes);
    if (!f->layer_of || !f->known || !f->from_values || !f->make ||
        !f->folded || !f->drop || !f->vals || !f->nb_vals || !f->bytes)
        return nomem(f);
    for (t = 0; t < e->nb_tensors; t++)
        if (mica__index_put(&f->tensor_ix, e->tensors[t].name, t) != 0)
            return nomem(f);
    for (s = 0; s < f->net->nb_layers; s++)
        if (mica__index_put(&layers, f->net->layers[s].name, s) != 0) {
            mica__index_free(&layers);
            return nomem(f);
        }
    for (s = 0; s < e->nb_layers; s++) {
        f->layer_of[s] = mica__index_get(&layers, e->layers[s].name);
        if (f->layer_of[s] < 0) {
            mica__index_free(&layers);
            return mica__fail(f->p->ctx, MICA_ERR_INTERNAL, "constant "
                              "folding: layer '%s' of the engine is not in "
                              "the network", e->layers[s].name);
        }
    }
    mica__index_free(&layers);
    return mica__pass_graph_make(f->net, &f->g);
}

static void cleanup(fold_t *f)
{
    int32_t t;
    for (t = 0; f->e && t < f->e->nb_tensors; t++) {
        if (f->vals && (f->from_values[t] & 2))
            free(f->vals[t]);
        if (f->bytes)
            free(f->bytes[t]);
    }
    free(f->layer_of);
    free(f->known);
    free(f->from_values);
    free(f->make);
    free(f->folded);
    free(f->drop);
    free(f->vals);
    free(f->nb_vals);
    free(f->bytes);
    mica__index_free(&f->tensor_ix);
    mica__pass_graph_free(&f->g);
}

mica_status_t mica__pass_fold(mica__pass_run_t *p)
{
    fold_t f;
    mica_status_t st;
    int32_t li, dropped = 0;

    memset(&f, 0, sizeof f);
    f.p = p;
    f.net = p->net;
    if ((st = mica__pass_facts(p, &f.e)) != MICA_OK)
        return st == MICA_ERR_UNSUPPORTED ? MICA_OK : st;
    if ((st = setup(&f)) == MICA_OK && (st = classify(&f)) == MICA_OK) {
        decide(&f);
        for (li = 0; li < f.net->nb_layers; li++)
            dropped += f.drop[li];
        if (dropped && (st = compute(&f)) == MICA_OK)
            st = rewrite(&f);
    }
    if (st == MICA_OK && p->out) {
        p->changed = dropped;
        snprintf(p->summary, sizeof p->summary, "%d layers folded into %lld "
                 "constants (%lld bytes)", (int)dropped, (long long)f.made,
                 (long long)f.made_bytes);
    }
    cleanup(&f);
    return st;
}
