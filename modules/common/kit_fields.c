/*
 * modules/common/kit_fields.c - shared copies of fields and their flat
 * byte form (see <mica/kit.h>).
 *
 * The byte form, native little-endian:
 *   u32 magic "MFL2", u32 nb_fields, then per field:
 *   u32 name length, name bytes, u32 type, i32 count, and the values:
 *   int64 or double elements; strings as u32 length + bytes; weights as
 *   u32 dtype, i64 count, u32 nb_dims, nb_dims i64 dims, zero bytes up to
 *   a multiple of 64 from the start of the form, raw values.
 * "MFL1" (read, no longer written) is the same without the zero bytes.
 *
 * Read from bytes that outlive the fields (MICA_STATE_PERSISTENT),
 * weights aligned for their element type are borrowed in place;
 * everything else is copied.  A fields object is shared by a layer and
 * its clones, counted, and never changed after it is made.
 */
#include <config.h>

#include "mica/kit.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FIELDS_MAGIC_V1 0x314c464du /* "MFL1" */
#define FIELDS_MAGIC 0x324c464du    /* "MFL2" */
#define WEIGHTS_ALIGN 64

struct mica_kit_fields {
    mica_fields_t view;
    mica_field_t *items;
    void **owned;
    int32_t nb_owned;
    int32_t cap_owned;
    atomic_int refs;      /* the layers (a layer and its clones) sharing it */
};

/* ---- writing ---------------------------------------------------------- */

typedef struct writer {
    unsigned char *buf; /* NULL: count only */
    size_t cap, pos;
} writer_t;

static void put(writer_t *w, const void *p, size_t n)
{
    if (w->buf && w->pos + n <= w->cap)
        memcpy(w->buf + w->pos, p, n);
    w->pos += n;
}

static void put_u32(writer_t *w, uint32_t v) { put(w, &v, sizeof v); }
static void put_i64(writer_t *w, int64_t v) { put(w, &v, sizeof v); }

/* Zero bytes up to the next multiple of WEIGHTS_ALIGN. */
static void put_pad(writer_t *w)
{
    static const unsigned char zeros[WEIGHTS_ALIGN];
    put(w, zeros, (WEIGHTS_ALIGN - w->pos % WEIGHTS_ALIGN) % WEIGHTS_ALIGN);
}

static void put_field(writer_t *w, const mica_field_t *f)
{
    int32_t i;
    size_t nlen = strlen(f->name);

    put_u32(w, (uint32_t)nlen);
    put(w, f->name, nlen);
    put_u32(w, (uint32_t)f->type);
    put_u32(w, (uint32_t)f->count);
    switch (f->type) {
    case MICA_FIELD_FLOAT:
        put(w, f->data, sizeof(double) * (size_t)f->count);
        break;
    case MICA_FIELD_STRING:
        for (i = 0; i < f->count; i++) {
            const char *s = ((const char *const *)f->data)[i];
            size_t len = s ? strlen(s) : 0;
            put_u32(w, (uint32_t)len);
            put(w, s, len);
        }
        break;
    case MICA_FIELD_WEIGHTS:
        for (i = 0; i < f->count; i++) {
            const mica_weights_t *wt = &((const mica_weights_t *)f->data)[i];
            int32_t d;
            put_u32(w, (uint32_t)wt->dtype);
            put_i64(w, wt->count);
            put_u32(w, (uint32_t)wt->dims.nb_dims);
            for (d = 0; d < wt->dims.nb_dims; d++)
                put_i64(w, wt->dims.d[d]);
            put_pad(w);
            put(w, wt->values, (size_t)wt->count * mica_dtype_size(wt->dtype));
        }
        break;
    default:
        put(w, f->data, sizeof(int64_t) * (size_t)f->count);
        break;
    }
}

static size_t write_fields(const mica_fields_t *f, unsigned char *buf,
                           size_t cap)
{
    writer_t w = {buf, cap, 0};
    int32_t i, n = f ? f->nb_fields : 0;

    put_u32(&w, FIELDS_MAGIC);
    put_u32(&w, (uint32_t)n);
    for (i = 0; i < n; i++)
        put_field(&w, &f->fields[i]);
    return w.pos;
}

/* ---- reading ---------------------------------------------------------- */

typedef struct reader {
    const unsigned char *buf;
    size_t size, pos;
    int padded;  /* MFL2: weights values after zero padding */
    int borrow;  /* the bytes outlive the fields: weights may stay there */
    int bad;
} reader_t;

static const void *take(reader_t *r, size_t n)
{
    const void *p;
    if (r->bad || n > r->size - r->pos) {
        r->bad = 1;
        return NULL;
    }
    p = r->buf + r->pos;
    r->pos += n;
    return p;
}

static uint32_t get_u32(reader_t *r)
{
    uint32_t v = 0;
    const void *p = take(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

static int64_t get_i64(reader_t *r)
{
    int64_t v = 0;
    const void *p = take(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

/* Allocate n bytes owned by f (zeroed; at least one byte). */
static void *own(mica_kit_fields_t *f, size_t n)
{
    void *p;
    if (f->nb_owned == f->cap_owned) {
        int32_t cap = f->cap_owned ? 2 * f->cap_owned : 16;
        void **grown = realloc(f->owned, sizeof *grown * (size_t)cap);
        if (!grown)
            return NULL;
        f->owned = grown;
        f->cap_owned = cap;
    }
    p = calloc(1, n ? n : 1);
    if (p)
        f->owned[f->nb_owned++] = p;
    return p;
}

/* Copy n bytes from the reader into owned memory. */
static void *own_copy(mica_kit_fields_t *f, reader_t *r, size_t n)
{
    const void *src = take(r, n);
    void *dst = src ? own(f, n + 1) : NULL; /* +1: strings get their NUL */
    if (dst)
        memcpy(dst, src, n);
    return dst;
}

/*
 * `bytes` of weight values of element size `esize`: borrowed in place
 * when the reader may and they are aligned for their type, else copied.
 */
static const void *weight_values(mica_kit_fields_t *f, reader_t *r,
                                 size_t bytes, size_t esize)
{
    const unsigned char *pad;
    size_t k, gap;

    if (r->padded) {
        gap = (WEIGHTS_ALIGN - r->pos % WEIGHTS_ALIGN) % WEIGHTS_ALIGN;
        pad = take(r, gap);
        for (k = 0; pad && k < gap; k++)
            if (pad[k])
                r->bad = 1;
    }
    if (r->bad)
        return NULL;
    if (!r->borrow || bytes == 0 ||
        (uintptr_t)(r->buf + r->pos) % esize != 0)
        return own_copy(f, r, bytes);
    return take(r, bytes);
}

/* Whether `count` elements of at least `min` bytes each fit in what is
 * left: checked before anything is allocated for them. */
static int fits(const reader_t *r, int32_t count, size_t min)
{
    return count >= 0 && (size_t)count <= (r->size - r->pos) / min;
}

static int read_field(mica_kit_fields_t *f, reader_t *r, mica_field_t *out)
{
    uint32_t nlen = get_u32(r);
    int32_t i, count;
    /* the least bytes an element takes: a string's length, a weights'
     * dtype, count and rank, a number */
    static const size_t least[] = {8, 8, 8, 4, 8, 8, 16};

    out->name = own_copy(f, r, nlen);
    out->type = (mica_field_type_t)get_u32(r);
    count = (int32_t)get_u32(r);
    if (!out->name || r->bad || (uint32_t)out->type > MICA_FIELD_WEIGHTS ||
        !fits(r, count, least[out->type]))
        return -1;
    /* every element takes at least 4 bytes of what is left (a string its
     * length, weights their dtype, count and rank): a count beyond that
     * is refused before anything is allocated for it (issue 15: a
     * 1.4 KB engine asked for 206 GB) */
    if ((size_t)count > (r->size - r->pos) / 4)
        return -1;
    out->count = count;
    switch (out->type) {
    case MICA_FIELD_FLOAT:
        out->data = own_copy(f, r, sizeof(double) * (size_t)count);
        break;
    case MICA_FIELD_STRING: {
        const char **strs = own(f, sizeof *strs * (size_t)count);
        for (i = 0; strs && i < count; i++) {
            uint32_t len = get_u32(r);
            strs[i] = own_copy(f, r, len);
            if (!strs[i])
                return -1;
        }
        out->data = strs;
        break;
    }
    case MICA_FIELD_WEIGHTS: {
        mica_weights_t *ws = own(f, sizeof *ws * (size_t)count);
        for (i = 0; ws && i < count; i++) {
            int32_t d;
            size_t esize;
            ws[i].dtype = (mica_dtype_t)get_u32(r);
            ws[i].count = get_i64(r);
            ws[i].dims.nb_dims = (int32_t)get_u32(r);
            if (r->bad || ws[i].count < 0 || ws[i].dims.nb_dims < 0 ||
                ws[i].dims.nb_dims > MICA_MAX_DIMS)
                return -1;
            for (d = 0; d < ws[i].dims.nb_dims; d++)
                ws[i].dims.d[d] = get_i64(r);
            esize = mica_dtype_size(ws[i].dtype);
            if (!esize || (uint64_t)ws[i].count > SIZE_MAX / esize)
                return -1;
            ws[i].values = weight_values(f, r, (size_t)ws[i].count * esize,
                                         esize);
            if (!ws[i].values)
                return -1;
        }
        out->data = ws;
        break;
    }
    case MICA_FIELD_INT: case MICA_FIELD_BOOL: case MICA_FIELD_ENUM:
    case MICA_FIELD_DTYPE:
        out->data = own_copy(f, r, sizeof(int64_t) * (size_t)count);
        break;
    default:
        return -1;
    }
    return out->data && !r->bad ? 0 : -1;
}

mica_kit_fields_t *mica_kit_fields_load(const void *buf, size_t size,
                                        int borrow)
{
    reader_t r = {buf, size, 0, 0, borrow, 0};
    mica_kit_fields_t *f = calloc(1, sizeof *f);
    uint32_t n, i, magic;

    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    magic = get_u32(&r);
    if (magic != FIELDS_MAGIC && magic != FIELDS_MAGIC_V1)
        goto fail;
    r.padded = magic == FIELDS_MAGIC;
    n = get_u32(&r);
    if (r.bad || n > (size - r.pos) / 12) /* name length, type, count */
        goto fail;
    f->items = own(f, sizeof *f->items * n);
    if (!f->items)
        goto fail;
    for (i = 0; i < n; i++)
        if (read_field(f, &r, &f->items[i]) != 0)
            goto fail;
    f->view.nb_fields = (int32_t)n;
    f->view.fields = f->items;
    return f;
fail:
    mica_kit_fields_free(f);
    return NULL;
}

/* Deep copy of one field's values into f's allocations; 0 or -1. */
static int copy_field(mica_kit_fields_t *f, const mica_field_t *src,
                      mica_field_t *dst)
{
    int32_t i, n = src->count;
    size_t len = strlen(src->name);

    *dst = *src;
    if (!(dst->name = own(f, len + 1)))
        return -1;
    memcpy((char *)dst->name, src->name, len);
    switch (src->type) {
    case MICA_FIELD_STRING: {
        const char **strs = own(f, sizeof *strs * (size_t)n);
        for (i = 0; strs && i < n; i++) {
            const char *s = ((const char *const *)src->data)[i];
            size_t sl = s ? strlen(s) : 0;
            char *c = own(f, sl + 1);
            if (!c)
                return -1;
            if (sl)
                memcpy(c, s, sl);
            strs[i] = c;
        }
        dst->data = strs;
        return strs ? 0 : -1;
    }
    case MICA_FIELD_WEIGHTS: {
        mica_weights_t *ws = own(f, sizeof *ws * (size_t)n);
        for (i = 0; ws && i < n; i++) {
            const mica_weights_t *w = &((const mica_weights_t *)src->data)[i];
            size_t bytes = (size_t)w->count * mica_dtype_size(w->dtype);
            void *v = own(f, bytes);
            if (!v)
                return -1;
            if (bytes)
                memcpy(v, w->values, bytes);
            ws[i] = *w;
            ws[i].values = v;
        }
        dst->data = ws;
        return ws ? 0 : -1;
    }
    default: {
        size_t bytes = (src->type == MICA_FIELD_FLOAT ? sizeof(double)
                                                      : sizeof(int64_t)) *
                       (size_t)n;
        void *v = own(f, bytes);
        if (!v)
            return -1;
        if (bytes)
            memcpy(v, src->data, bytes);
        dst->data = v;
        return 0;
    }
    }
}

mica_kit_fields_t *mica_kit_fields_copy(const mica_fields_t *fields)
{
    mica_kit_fields_t *f;
    int32_t i, n = fields ? fields->nb_fields : 0;

    if (!(f = calloc(1, sizeof *f)))
        return NULL;
    atomic_init(&f->refs, 1);
    f->items = own(f, sizeof *f->items * (size_t)n);
    if (!f->items)
        goto fail;
    for (i = 0; i < n; i++)
        if (copy_field(f, &fields->fields[i], &f->items[i]) != 0)
            goto fail;
    f->view.nb_fields = n;
    f->view.fields = f->items;
    return f;
fail:
    mica_kit_fields_free(f);
    return NULL;
}

const mica_fields_t *mica_kit_fields_view(const mica_kit_fields_t *f)
{
    return &f->view;
}

mica_kit_fields_t *mica_kit_fields_share(mica_kit_fields_t *f)
{
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    return f;
}

void mica_kit_fields_free(mica_kit_fields_t *f)
{
    int32_t i;
    if (!f || atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) > 1)
        return;
    for (i = 0; i < f->nb_owned; i++)
        free(f->owned[i]);
    free(f->owned);
    free(f);
}

mica_status_t mica_kit_fields_save(const mica_kit_fields_t *f, void *buf,
                                   size_t *size)
{
    size_t need = write_fields(&f->view, NULL, 0);
    if (!buf) {
        *size = need;
        return MICA_OK;
    }
    if (*size < need)
        return MICA_ERR_INVALID;
    *size = write_fields(&f->view, buf, need);
    return MICA_OK;
}


/* ---- what the validator guarantees ------------------------------------ */

/* Whether one present field fits its schema entry: 1 or 0. */
static int field_fits(const mica_field_t *f, const mica_field_schema_t *s)
{
    const int64_t *v = f->data;
    int32_t i, m = 0;

    if (f->type != s->type || f->count < 0 ||
        (s->count > 0 && f->count != s->count))
        return 0;
    if (f->type == MICA_FIELD_ENUM)
        while (s->enum_values && s->enum_values[m])
            m++;
    for (i = 0; i < f->count; i++) {
        if (f->type == MICA_FIELD_ENUM && (v[i] < 0 || v[i] >= m))
            return 0;
        if (f->type == MICA_FIELD_DTYPE &&
            (v[i] < 0 || v[i] >= MICA_DTYPE_COUNT_))
            return 0;
        if (f->type == MICA_FIELD_BOOL && v[i] != 0 && v[i] != 1)
            return 0;
    }
    return 1;
}

int mica_kit_fields_fit(const mica_fields_t *f,
                        const mica_layer_creator_t *creator)
{
    int32_t i, j, nb = f ? f->nb_fields : 0, found = 0;

    for (i = 0; i < creator->nb_fields; i++) {
        const mica_field_schema_t *s = &creator->fields[i];
        const mica_field_t *x = mica_fields_find(f, s->name);
        if (!x) {
            if (s->required)
                return 0;
            continue;
        }
        for (j = 0; j < nb; j++) /* given once */
            if (&f->fields[j] != x && strcmp(f->fields[j].name, s->name) == 0)
                return 0;
        if (!field_fits(x, s))
            return 0;
        found++;
    }
    return found == nb; /* no field outside the schema */
}
