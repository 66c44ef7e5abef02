/*
 * core/format/write.c - writing engine files, in format 4 (the layout is
 * in core/format/format.h): the engine as built, so that a load restores
 * it instead of building it again.
 */
#include <config.h>

#include "files.h"
#include "format.h"
#include "graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mica_free(void *p)
{
    free(p);
}

/* ---- primitives --------------------------------------------------------- */

void mica__out_put(mica__out_t *o, const void *data, size_t n)
{
    if (o->failed)
        return;
    if (n > o->cap - o->len) {
        size_t cap = o->cap ? o->cap : 4096;
        unsigned char *grown;
        while (cap - o->len < n) {
            if (cap > SIZE_MAX / 2) {
                o->failed = 1;
                return;
            }
            cap *= 2;
        }
        grown = realloc(o->p, cap);
        if (!grown) {
            o->failed = 1;
            return;
        }
        o->p = grown;
        o->cap = cap;
    }
    if (n && data)
        memcpy(o->p + o->len, data, n);
    else if (n)
        memset(o->p + o->len, 0, n);
    o->len += n;
}

void mica__out_u32(mica__out_t *o, uint32_t v) { mica__out_put(o, &v, 4); }
void mica__out_i32(mica__out_t *o, int32_t v) { mica__out_put(o, &v, 4); }
void mica__out_i64(mica__out_t *o, int64_t v) { mica__out_put(o, &v, 8); }
void mica__out_f32(mica__out_t *o, float v) { mica__out_put(o, &v, 4); }

void mica__out_str(mica__out_t *o, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    mica__out_u32(o, (uint32_t)n);
    mica__out_put(o, s, n);
}

void mica__out_dims(mica__out_t *o, const mica_dims_t *d)
{
    int32_t i;
    mica__out_u32(o, (uint32_t)d->nb_dims);
    for (i = 0; i < d->nb_dims; i++)
        mica__out_i64(o, d->d[i]);
}

void mica__out_pad(mica__out_t *o)
{
    static const unsigned char zeros[STATE_ALIGN];
    mica__out_put(o, zeros,
                  (STATE_ALIGN - o->len % STATE_ALIGN) % STATE_ALIGN);
}

/* ---- the engine --------------------------------------------------------- */

static void put_symbols(const mica_engine_t *e, const mica__expr_table_t *x,
                        mica__out_t *o)
{
    int32_t i;
    for (i = 0; i < e->nb_symbols; i++) {
        const mica__symbol_t *s = &e->symbols[i];
        mica__out_u32(o, (uint32_t)s->kind);
        mica__out_i32(o, s->input);
        mica__out_i32(o, s->tensor);
        mica__out_i32(o, s->axis);
        mica__out_str(o, s->name);
        mica__out_str(o, s->meaning);
        if (s->kind == MICA__SYM_SIZE)
            mica__out_u32(o, mica__expr_table_id(x, s->upper));
    }
}

static uint32_t tensor_flags(const mica__tensor_t *t)
{
    return (t->is_input ? MICA__T_INPUT : 0) |
           (t->is_output ? MICA__T_OUTPUT : 0) |
           (t->is_shape_output ? MICA__T_SHAPE_OUTPUT : 0) |
           (t->is_shape_input ? MICA__T_SHAPE_INPUT : 0) |
           (t->need_e ? MICA__T_NEED_E : 0) |
           (t->need_s ? MICA__T_NEED_S : 0) |
           (t->need_dims ? MICA__T_NEED_DIMS : 0) |
           (t->shape.values ? MICA__T_VALUES : 0);
}

static void put_tensors(const mica_engine_t *e, const mica__expr_table_t *x,
                        mica__out_t *o)
{
    int32_t i, j;
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        mica__out_str(o, t->name);
        mica__out_u32(o, (uint32_t)t->dtype);
        mica__out_u32(o, tensor_flags(t));
        mica__out_i32(o, t->producer);
        mica__out_i32(o, t->first_symbol);
        mica__out_i32(o, t->alias);
        mica__out_u32(o, t->format);
        mica__out_f32(o, t->scale);
        mica__out_str(o, t->shape_text);
        mica__out_u32(o, (uint32_t)t->shape.nb_dims);
        for (j = 0; j < t->shape.nb_dims; j++)
            mica__out_u32(o, mica__expr_table_id(x, t->shape.d[j]));
        if (!t->shape.values)
            continue;
        mica__out_u32(o, (uint32_t)t->shape.nb_values);
        for (j = 0; j < t->shape.nb_values; j++)
            mica__out_u32(o, mica__expr_table_id(x, t->shape.values[j]));
    }
}

static void put_indices(mica__out_t *o, const int32_t *v, int32_t n)
{
    int32_t i;
    mica__out_u32(o, (uint32_t)n);
    for (i = 0; i < n; i++)
        mica__out_i32(o, v[i]);
}

static void put_constructs(const mica_engine_t *e, mica__out_t *o)
{
    int32_t k;
    for (k = 0; k < e->nb_constructs; k++) {
        const mica__construct_t *c = &e->constructs[k];
        mica__out_str(o, c->name);
        mica__out_u32(o, (uint32_t)c->kind);
        mica__out_i32(o, c->parent);
        mica__out_i32(o, c->branch);
        mica__out_i32(o, c->begin);
        mica__out_i32(o, c->end);
        mica__out_u32(o, (uint32_t)c->live);
        mica__out_i32(o, c->trip_limit);
        mica__out_u32(o, (uint32_t)c->read_at_entry);
        mica__out_i32(o, c->condition);
        put_indices(o, c->heads, c->nb_heads);
        put_indices(o, c->iterators, c->nb_iterators);
        put_indices(o, c->exits, c->nb_exits);
    }
    for (k = 0; k < e->nb_prog; k++) {
        mica__out_u32(o, (uint32_t)e->prog[k].kind);
        mica__out_i32(o, e->prog[k].arg);
        mica__out_i32(o, e->prog[k].target);
        mica__out_i32(o, e->prog[k].branch);
    }
}

static void put_range(mica__out_t *o, const mica__range_t *r)
{
    size_t bytes = sizeof(int32_t) * (size_t)r->nb_values;
    mica__out_u32(o, (uint32_t)r->set);
    if (!r->set)
        return;
    mica__out_dims(o, &r->min);
    mica__out_dims(o, &r->opt);
    mica__out_dims(o, &r->max);
    mica__out_u32(o, (uint32_t)r->nb_values);
    mica__out_put(o, r->vmin, bytes);
    mica__out_put(o, r->vopt, bytes);
    mica__out_put(o, r->vmax, bytes);
}

static void put_profiles(const mica_engine_t *e, mica__out_t *o)
{
    int32_t k, i;
    for (k = 0; k < e->nb_profiles; k++) {
        const mica__eprofile_t *p = &e->profiles[k];
        for (i = 0; i < e->nb_inputs; i++)
            put_range(o, &p->ranges[i]);
        for (i = 0; i < e->nb_tensors; i++) {
            mica__out_dims(o, &p->tmin[i]);
            mica__out_dims(o, &p->topt[i]);
            mica__out_dims(o, &p->tmax[i]);
            mica__out_i64(o, p->bytes[i]);
            mica__out_i64(o, p->offset[i]);
        }
        for (i = 0; i < e->nb_layers; i++) {
            mica__out_i64(o, p->workspace[i]);
            mica__out_i64(o, p->workspace_offset[i]);
        }
        mica__out_i64(o, p->arena_bytes);
    }
}

/* The fusion records (format.h). */
static void put_fusions(const mica_engine_t *e, mica__out_t *o)
{
    int32_t s, n = 0;
    for (s = 0; s < e->nb_layers; s++)
        n += e->layers[s].fused != NULL;
    mica__out_u32(o, (uint32_t)n);
    for (s = 0; s < e->nb_layers; s++)
        if (e->layers[s].fused) {
            mica__out_i32(o, s);
            mica__out_str(o, e->layers[s].fused);
        }
}

/* The records of the graph passes (format.h). */
static void put_passes(const mica_engine_t *e, mica__out_t *o)
{
    int32_t i;
    mica__out_u32(o, (uint32_t)e->nb_passes);
    for (i = 0; i < e->nb_passes; i++) {
        mica__out_str(o, e->passes[i].name);
        mica__out_str(o, e->passes[i].summary);
        mica__out_i64(o, e->passes[i].changed);
    }
}

/* The payload of format 4 after the header. */
static mica_status_t put_engine(const mica_engine_t *e, mica__out_t *o)
{
    mica__expr_table_t *x = NULL;
    mica_status_t st;
    int32_t s;

    if ((st = mica__expr_table_make(e, &x)) != MICA_OK)
        return st;
    mica__out_u32(o, e->device);
    mica__out_u32(o, (uint32_t)e->nb_tensors);
    mica__out_u32(o, (uint32_t)e->nb_layers);
    mica__out_u32(o, (uint32_t)e->nb_symbols);
    mica__out_u32(o, mica__expr_table_count(x));
    mica__out_u32(o, (uint32_t)e->nb_constructs);
    mica__out_u32(o, (uint32_t)e->nb_prog);
    mica__out_u32(o, (uint32_t)e->nb_inputs);
    mica__out_u32(o, (uint32_t)e->nb_outputs);
    mica__out_u32(o, (uint32_t)e->nb_shape_outputs);
    mica__out_u32(o, (uint32_t)e->nb_user_profiles);
    mica__out_u32(o, (uint32_t)e->nb_profiles);
    put_symbols(e, x, o);
    mica__expr_table_write(x, o);
    put_tensors(e, x, o);
    mica__expr_table_free(x);
    for (s = 0; s < e->nb_inputs; s++)
        mica__out_i32(o, e->input_index[s]);
    for (s = 0; s < e->nb_outputs; s++)
        mica__out_i32(o, e->output_index[s]);
    for (s = 0; s < e->nb_shape_outputs; s++)
        mica__out_i32(o, e->shape_output_index[s]);
    for (s = 0; s < e->nb_layers; s++)
        if ((st = mica__saved_layer_write(e, &e->layers[s], o)) != MICA_OK)
            return st;
    put_constructs(e, o);
    put_profiles(e, o);
    put_fusions(e, o);
    put_passes(e, o);
    return MICA_OK;
}

mica_status_t mica_engine_serialize(const mica_engine_t *engine, void **data,
                                    size_t *size)
{
    mica__out_t o = {NULL, 0, 0, 0};
    uint64_t payload, sum;
    mica_status_t st;

    *data = NULL;
    *size = 0;
    mica__out_put(&o, ENGINE_MAGIC, 8);
    mica__out_u32(&o, ENGINE_FORMAT);
    mica__out_u32(&o, MICA_ABI_VERSION);
    mica__out_put(&o, NULL, 16); /* sizes, below */
    if ((st = put_engine(engine, &o)) != MICA_OK)
        goto fail;
    if (o.failed) {
        st = mica__fail(engine->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto fail;
    }
    payload = o.len - HEADER_BYTES;
    sum = mica__checksum(o.p + HEADER_BYTES, (size_t)payload);
    memcpy(o.p + 16, &payload, 8);
    memcpy(o.p + 24, &sum, 8);
    *data = o.p;
    *size = o.len;
    return MICA_OK;
fail:
    free(o.p);
    return st;
}

mica_status_t mica_engine_save(const mica_engine_t *engine, const char *path)
{
    void *data;
    size_t size;
    char *tmp;
    FILE *f;
    mica_status_t st;
    int good;

    if ((st = mica_engine_serialize(engine, &data, &size)) != MICA_OK)
        return st;
    /* A new file under an unpredictable name, renamed into place: never
     * written through a link planted next to path (core/base/files.h). */
    f = mica__fcreate_tmp(path, &tmp);
    good = f && fwrite(data, 1, size, f) == size;
    good = (f && fclose(f) == 0) && good;
    if (good && rename(tmp, path) != 0)
        good = 0;
    if (!good) {
        st = mica__fail(engine->ctx, MICA_ERR_IO, "cannot write engine file "
                        "'%s': %s", path, strerror(errno));
        if (tmp)
            remove(tmp);
    }
    free(tmp);
    free(data);
    return st;
}
