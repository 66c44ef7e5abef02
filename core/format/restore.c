/*
 * core/format/restore.c - an engine file of format 3 restored: the engine
 * as it was built (its tensors, symbols and shape expressions, its layers
 * with their chosen implementations, its loops and conditionals and
 * program, each profile's ranges, configurations and memory plan) read
 * back, instead of building the network again.
 *
 * Each item is checked as it is read (counts against the bytes that
 * remain, indices against what they index); once everything is read,
 * restore_check.c checks how it holds together and asks each layer's
 * instance what the file says of it, and configure() runs for every
 * profile, as a build would.  Nothing runs before all of it holds.
 */
#include <config.h>

#include "restore.h"
#include "build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Milliseconds of a monotonic clock. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Say at debug level how long a step of the load took. */
static void took(mica__restore_t *x, const char *step, double *t)
{
    double t1 = now_ms();
    mica__log(x->ctx, MICA_LOG_DEBUG, "%s: %s: %.2f ms", x->l->what, step,
              t1 - *t);
    *t = t1;
}

mica_status_t mica__restore_bad(mica__restore_t *x, const char *where,
                                const char *fmt, ...)
{
    char detail[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return mica__fail(x->ctx, MICA_ERR_INVALID, "%s is corrupt: bad %s%s%s",
                      x->l->what, where, detail[0] ? ", " : "", detail);
}

/* The counts at the start of the payload, and room for what they count. */
static mica_status_t read_counts(mica__restore_t *x, uint32_t *nb_exprs)
{
    mica_engine_t *e = x->e;
    mica__in_t *r = x->r;
    size_t nt, nl;

    /* Least bytes per item, so that a count cannot ask for more memory
     * than the file could describe. */
    e->nb_tensors = (int32_t)mica__in_count(r, 40);
    e->nb_layers = (int32_t)mica__in_count(r, 48);
    e->nb_symbols = (int32_t)mica__in_count(r, 24);
    *nb_exprs = mica__in_count(r, 24);
    e->nb_constructs = (int32_t)mica__in_count(r, 52);
    e->nb_prog = (int32_t)mica__in_count(r, 16);
    e->nb_inputs = (int32_t)mica__in_count(r, 4);
    e->nb_outputs = (int32_t)mica__in_count(r, 4);
    e->nb_shape_outputs = (int32_t)mica__in_count(r, 4);
    e->nb_user_profiles = (int32_t)mica__in_count(r, 8);
    e->nb_profiles = (int32_t)mica__in_count(r, 8);
    if (r->bad || e->nb_profiles != (e->nb_user_profiles > 0
                                         ? e->nb_user_profiles : 1) ||
        e->nb_inputs > e->nb_tensors || e->nb_outputs > e->nb_tensors ||
        e->nb_shape_outputs > e->nb_tensors) {
        e->nb_tensors = e->nb_layers = e->nb_symbols = 0;
        e->nb_constructs = e->nb_prog = e->nb_profiles = 0;
        return mica__load_corrupt(x->l, "counts");
    }
    nt = (size_t)e->nb_tensors + 1;
    nl = (size_t)e->nb_layers + 1;
    e->tensors = calloc(nt, sizeof *e->tensors);
    e->layers = calloc(nl, sizeof *e->layers);
    e->symbols = calloc((size_t)e->nb_symbols + 1, sizeof *e->symbols);
    x->nodes = calloc((size_t)*nb_exprs + 1, sizeof *x->nodes);
    e->constructs = calloc((size_t)e->nb_constructs + 1,
                           sizeof *e->constructs);
    e->prog = calloc((size_t)e->nb_prog + 1, sizeof *e->prog);
    e->input_index = calloc((size_t)e->nb_inputs + 1, sizeof(int32_t));
    e->output_index = calloc((size_t)e->nb_outputs + 1, sizeof(int32_t));
    e->shape_output_index = calloc((size_t)e->nb_shape_outputs + 1,
                                   sizeof(int32_t));
    e->profiles = calloc((size_t)e->nb_profiles, sizeof *e->profiles);
    if (!e->tensors || !e->layers || !e->symbols || !x->nodes ||
        !e->constructs || !e->prog || !e->input_index || !e->output_index ||
        !e->shape_output_index || !e->profiles)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    return MICA_OK;
}

static mica_status_t read_symbols(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t i;

    if (!(x->uppers = calloc((size_t)e->nb_symbols + 1, sizeof *x->uppers)))
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < e->nb_symbols; i++) {
        mica__symbol_t *s = &e->symbols[i];
        uint32_t kind = mica__in_u32(x->r);
        s->input = mica__in_index(x->r, e->nb_inputs, 1);
        s->tensor = mica__in_index(x->r, e->nb_tensors, 1);
        s->axis = mica__in_i32(x->r);
        s->name = mica__in_str(x->r);
        s->meaning = mica__in_str(x->r);
        s->kind = (mica__symbol_kind_t)kind;
        if (kind == MICA__SYM_SIZE)
            x->uppers[i] = mica__in_u32(x->r);
        if (x->r->bad || !s->name || !s->meaning ||
            kind > MICA__SYM_SIZE || s->axis < 0 || s->tensor < 0 ||
            (kind < MICA__SYM_COMPUTED && s->input < 0))
            return mica__restore_bad(x, "symbol", "number %d", (int)i);
    }
    return MICA_OK;
}

/* An expression of the table; bad past its end. */
static const mica_expr_t *expr(mica__restore_t *x)
{
    uint32_t id = mica__in_u32(x->r);
    if (id >= x->nb_nodes) {
        x->r->bad = 1;
        return NULL;
    }
    return x->nodes[id];
}

static mica_status_t read_tensor(mica__restore_t *x, int32_t i)
{
    mica_engine_t *e = x->e;
    mica__tensor_t *t = &e->tensors[i];
    uint32_t dtype, flags, rank, n;
    int32_t j;

    t->name = mica__in_str(x->r);
    dtype = mica__in_u32(x->r);
    flags = mica__in_u32(x->r);
    t->producer = mica__in_index(x->r, e->nb_layers, 1);
    t->first_symbol = mica__in_index(x->r, e->nb_symbols, 1);
    t->alias = mica__in_index(x->r, e->nb_tensors, 1);
    t->format = mica__in_u32(x->r);
    t->scale = mica__in_f32(x->r);
    t->shape_text = mica__in_str(x->r);
    rank = mica__in_u32(x->r);
    if (x->r->bad || !t->name || !t->name[0] || !t->shape_text ||
        dtype >= MICA_DTYPE_COUNT_ || (flags & ~MICA__T_FLAGS) ||
        rank > MICA_MAX_DIMS ||
        (t->format != MICA_FORMAT_LINEAR &&
         !(t->format == MICA_FORMAT_HWC && rank == 4) &&
         !(t->format == MICA_FORMAT_DHWC && rank == 5)))
        return mica__restore_bad(x, "tensor", "number %d", (int)i);
    t->dtype = (mica_dtype_t)dtype;
    t->is_input = (flags & MICA__T_INPUT) != 0;
    t->is_output = (flags & MICA__T_OUTPUT) != 0;
    t->is_shape_output = (flags & MICA__T_SHAPE_OUTPUT) != 0;
    t->is_shape_input = (flags & MICA__T_SHAPE_INPUT) != 0;
    t->need_e = (flags & MICA__T_NEED_E) != 0;
    t->need_s = (flags & MICA__T_NEED_S) != 0;
    t->need_dims = (flags & MICA__T_NEED_DIMS) != 0;
    t->shape.nb_dims = (int32_t)rank;
    t->dims.nb_dims = (int32_t)rank;
    for (j = 0; j < (int32_t)rank; j++) {
        t->shape.d[j] = expr(x);
        t->dims.d[j] = mica__expr_is_constant(t->shape.d[j])
                           ? mica__expr_constant_value(t->shape.d[j]) : -1;
    }
    if (flags & MICA__T_VALUES) {
        n = mica__in_count(x->r, 4);
        t->values = calloc((size_t)n + 1, sizeof *t->values);
        if (!t->values)
            return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        for (j = 0; j < (int32_t)n; j++)
            t->values[j] = expr(x);
        t->shape.values = t->values;
        t->shape.nb_values = (int32_t)n;
    }
    if (x->r->bad)
        return mica__restore_bad(x, "tensor", "'%s'", t->name);
    return MICA_OK;
}

/* n tensor indices into v (a fresh array). */
static int32_t *read_steps(mica__restore_t *x, int32_t *n)
{
    int32_t i, *v;
    *n = (int32_t)mica__in_count(x->r, 4);
    v = calloc((size_t)*n + 1, sizeof *v);
    if (!v) {
        x->r->bad = 1;
        return NULL;
    }
    for (i = 0; i < *n; i++)
        v[i] = mica__in_index(x->r, x->e->nb_layers, 0);
    return v;
}

static mica_status_t read_constructs(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    int32_t k;

    for (k = 0; k < e->nb_constructs; k++) {
        mica__construct_t *c = &e->constructs[k];
        uint32_t kind, live, entry;
        c->name = mica__in_str(x->r);
        kind = mica__in_u32(x->r);
        c->parent = mica__in_index(x->r, e->nb_constructs, 1);
        c->branch = mica__in_index(x->r, 2, 1);
        c->begin = mica__in_index(x->r, e->nb_layers + 1, 0);
        c->end = mica__in_index(x->r, e->nb_layers + 1, 0);
        live = mica__in_u32(x->r);
        c->trip_limit = mica__in_index(x->r, e->nb_layers, 1);
        entry = mica__in_u32(x->r);
        c->condition = mica__in_index(x->r, e->nb_layers, 1);
        c->heads = read_steps(x, &c->nb_heads);
        c->iterators = read_steps(x, &c->nb_iterators);
        c->exits = read_steps(x, &c->nb_exits);
        c->kind = (int32_t)kind;
        c->live = (int32_t)live;
        c->read_at_entry = (int32_t)entry;
        if (x->r->bad || !c->name || kind > MICA_CONSTRUCT_CONDITIONAL ||
            live > 1 || entry > 1 || c->begin > c->end)
            return mica__restore_bad(x, "loop or conditional", "number %d",
                                     (int)k);
    }
    for (k = 0; k < e->nb_prog; k++) {
        mica__op_t *o = &e->prog[k];
        o->kind = (int32_t)mica__in_u32(x->r);
        o->arg = mica__in_i32(x->r);
        o->target = mica__in_i32(x->r);
        o->branch = mica__in_i32(x->r);
    }
    return x->r->bad ? mica__load_corrupt(x->l, "program") : MICA_OK;
}

static void read_range(mica__restore_t *x, mica__range_t *g)
{
    uint32_t n;
    size_t bytes;
    const void *a, *b, *c;

    g->set = (int32_t)mica__in_u32(x->r);
    if (g->set != 1) {
        if (g->set != 0)
            x->r->bad = 1;
        g->set = 0;
        return;
    }
    mica__in_dims(x->r, &g->min);
    mica__in_dims(x->r, &g->opt);
    mica__in_dims(x->r, &g->max);
    n = mica__in_count(x->r, 12);
    bytes = sizeof(int32_t) * (size_t)n;
    a = mica__in_take(x->r, bytes);
    b = mica__in_take(x->r, bytes);
    c = mica__in_take(x->r, bytes);
    if (x->r->bad)
        return;
    g->nb_values = (int32_t)n;
    g->vmin = malloc(bytes + 4);
    g->vopt = malloc(bytes + 4);
    g->vmax = malloc(bytes + 4);
    if (!g->vmin || !g->vopt || !g->vmax) {
        x->r->bad = 1;
        return;
    }
    memcpy(g->vmin, a, bytes);
    memcpy(g->vopt, b, bytes);
    memcpy(g->vmax, c, bytes);
}

static mica_status_t read_profiles(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    size_t nt = (size_t)e->nb_tensors + 1, nl = (size_t)e->nb_layers + 1;
    int32_t k, i;

    for (k = 0; k < e->nb_profiles; k++) {
        mica__eprofile_t *p = &e->profiles[k];
        p->ranges = calloc((size_t)e->nb_inputs + 1, sizeof *p->ranges);
        p->tmin = calloc(nt, sizeof *p->tmin);
        p->topt = calloc(nt, sizeof *p->topt);
        p->tmax = calloc(nt, sizeof *p->tmax);
        p->bytes = calloc(nt, sizeof *p->bytes);
        p->offset = calloc(nt, sizeof *p->offset);
        p->workspace = calloc(nl, sizeof *p->workspace);
        p->workspace_offset = calloc(nl, sizeof *p->workspace_offset);
        if (!p->ranges || !p->tmin || !p->topt || !p->tmax || !p->bytes ||
            !p->offset || !p->workspace || !p->workspace_offset)
            return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        for (i = 0; i < e->nb_inputs && !x->r->bad; i++)
            read_range(x, &p->ranges[i]);
        for (i = 0; i < e->nb_tensors && !x->r->bad; i++) {
            mica__in_dims(x->r, &p->tmin[i]);
            mica__in_dims(x->r, &p->topt[i]);
            mica__in_dims(x->r, &p->tmax[i]);
            p->bytes[i] = mica__in_i64(x->r);
            p->offset[i] = mica__in_i64(x->r);
        }
        for (i = 0; i < e->nb_layers && !x->r->bad; i++) {
            p->workspace[i] = mica__in_i64(x->r);
            p->workspace_offset[i] = mica__in_i64(x->r);
        }
        p->arena_bytes = mica__in_i64(x->r);
        if (x->r->bad)
            return mica__restore_bad(x, "profile", "number %d", (int)k);
    }
    return MICA_OK;
}

/* The fusion records, if the file has them (format.h): each layer's at
 * most once. */
static mica_status_t read_fusions(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    mica__in_t *r = x->r;
    uint32_t n, i;

    if (r->format < 4 && r->pos == r->len)
        return MICA_OK; /* none, or written before fusion */
    n = mica__in_count(r, 8);
    if (r->bad || n > (uint32_t)e->nb_layers)
        return mica__load_corrupt(x->l, "fusion records");
    for (i = 0; i < n; i++) {
        int32_t s = mica__in_index(r, e->nb_layers, 0);
        char *text = mica__in_str(r);
        if (r->bad || !text || !text[0] || e->layers[s].fused) {
            free(text);
            return mica__load_corrupt(x->l, "fusion records");
        }
        e->layers[s].fused = text;
    }
    return MICA_OK;
}

/* The records of the graph passes (format 4; format.h): each a name
 * (of this library's passes or a newer one's: a record only says what
 * ran), a summary and a count. */
static mica_status_t read_passes(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    mica__in_t *r = x->r;
    uint32_t n, i;

    if (r->format < 4)
        return MICA_OK;
    n = mica__in_count(r, 16);
    if (r->bad)
        return mica__load_corrupt(x->l, "pass records");
    if (n && !(e->passes = calloc(n, sizeof *e->passes)))
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < n; i++) {
        mica__pass_record_t *p = &e->passes[e->nb_passes++];
        p->name = mica__in_str(r);
        p->summary = mica__in_str(r);
        p->changed = mica__in_i64(r);
        if (r->bad || !p->name || !p->summary || !p->name[0] ||
            p->changed < 0)
            return mica__load_corrupt(x->l, "pass records");
    }
    return MICA_OK;
}

/* The payload, read and checked, into x->e. */
static mica_status_t read_engine(mica__restore_t *x)
{
    mica_engine_t *e = x->e;
    mica__in_t *r = x->r;
    mica_status_t st;
    int32_t i;

    if ((st = read_counts(x, &x->nb_nodes)) != MICA_OK ||
        (st = read_symbols(x)) != MICA_OK)
        return st;
    if (mica__expr_table_read(r, e, x->nb_nodes, x->nodes) != 0)
        return mica__load_corrupt(x->l, "shape expressions");
    for (i = 0; i < e->nb_symbols; i++)
        if (e->symbols[i].kind == MICA__SYM_SIZE) {
            if (x->uppers[i] >= x->nb_nodes)
                return mica__restore_bad(x, "symbol", "'%s': its bound",
                                         e->symbols[i].name);
            e->symbols[i].upper = x->nodes[x->uppers[i]];
        }
    for (i = 0; i < e->nb_tensors; i++)
        if ((st = read_tensor(x, i)) != MICA_OK)
            return st;
    for (i = 0; i < e->nb_inputs; i++)
        e->input_index[i] = mica__in_index(r, e->nb_tensors, 0);
    for (i = 0; i < e->nb_outputs; i++)
        e->output_index[i] = mica__in_index(r, e->nb_tensors, 0);
    for (i = 0; i < e->nb_shape_outputs; i++)
        e->shape_output_index[i] = mica__in_index(r, e->nb_tensors, 0);
    if (r->bad)
        return mica__load_corrupt(x->l, "network inputs or outputs");
    for (i = 0; i < e->nb_layers; i++)
        if ((st = mica__restore_layer(x, i)) != MICA_OK)
            return st;
    if ((st = read_constructs(x)) != MICA_OK ||
        (st = read_profiles(x)) != MICA_OK ||
        (st = read_fusions(x)) != MICA_OK ||
        (st = read_passes(x)) != MICA_OK)
        return st;
    if (r->pos != r->len)
        return mica__restore_bad(x, "end", "%zu bytes after the memory plan",
                                 r->len - r->pos);
    return MICA_OK;
}

void mica__engine_free(mica_engine_t *e);

mica_status_t mica__load_restore(mica__load_t *l, mica_engine_t **out)
{
    mica__restore_t x;
    mica_status_t st;
    uint32_t device = mica__in_u32(&l->r);
    double t;

    *out = NULL;
    memset(&x, 0, sizeof x);
    x.l = l;
    x.ctx = l->ctx;
    x.r = &l->r;
    if (!mica__device_desc(device))
        return mica__load_corrupt(l, "device");
    if (!(x.e = calloc(1, sizeof *x.e)))
        return mica__fail(l->ctx, MICA_ERR_NOMEM, "out of host memory");
    pthread_mutex_init(&x.e->const_lock, NULL);
    x.e->ctx = l->ctx;
    if ((st = mica__deploy_check(l->ctx)) != MICA_OK ||
        (st = mica__device_pick(l->ctx, device, &x.e->device,
                                &x.e->dev)) != MICA_OK ||
        (st = mica__expr_builder_create(&x.e->eb)) != MICA_OK) {
        if (st == MICA_ERR_NOMEM)
            mica__fail(l->ctx, st, "out of host memory");
        goto done;
    }
    t = now_ms();
    if ((st = read_engine(&x)) != MICA_OK)
        goto done;
    took(&x, "read, layers made from their state", &t);
    if ((st = mica__restore_check_graph(&x)) != MICA_OK ||
        (st = mica__restore_check_program(&x)) != MICA_OK ||
        (st = mica__restore_check_layers(&x)) != MICA_OK ||
        (st = mica__restore_check_shapes(&x)) != MICA_OK ||
        (st = mica__restore_check_profiles(&x)) != MICA_OK)
        goto done;
    took(&x, "graph, program, layers and profiles checked", &t);
    if ((st = mica__constants_find(x.e)) != MICA_OK ||
        (st = mica__restore_check_plans(&x)) != MICA_OK)
        goto done;
    took(&x, "configured, memory plans checked", &t);
done:
    free(x.nodes);
    free(x.uppers);
    if (st != MICA_OK) {
        char msg[MICA_ERROR_MAX];
        if (st == MICA_ERR_NOMEM && !x.e)
            return st;
        snprintf(msg, sizeof msg, "%s", mica_context_error(l->ctx));
        mica__engine_free(x.e);
        if (strncmp(msg, l->what, strlen(l->what)) != 0)
            return mica__fail(l->ctx, st, "%s: %s", l->what, msg);
        return mica__fail(l->ctx, st, "%s", msg);
    }
    mica__engine_index(x.e);
    *out = x.e;
    return MICA_OK;
}
