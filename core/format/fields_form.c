/*
 * core/format/fields_form.c - a saved state in the fields' byte form of
 * the module kit (<mica/kit.h>, modules/common/kit_fields.c), checked by
 * the host before any module reads it.
 *
 * The form, native little-endian: u32 magic "MFL2" (or "MFL1"), u32
 * nb_fields, then per field: u32 name length, name, u32 type, i32 count,
 * and the values: int64 or double elements; strings as u32 length +
 * bytes; weights as u32 dtype, i64 count, u32 nb_dims, i64 dims, zero
 * bytes up to a multiple of 64 from the start of the form (MFL2 only),
 * then the raw values.
 *
 * Every count is checked against the bytes that remain before anything
 * is allocated for it; the fields read are then checked against the
 * creator's schema by the one validator (core/base/fields.c), as a
 * manifest's params are.  Weights are not copied: the check reads their
 * descriptions only.
 */
#include <config.h>

#include "format.h"
#include "fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_V1 0x314c464du /* "MFL1" */
#define MAGIC_V2 0x324c464du /* "MFL2" */
#define WEIGHTS_ALIGN 64

int mica__fields_form_is(const void *state, size_t size)
{
    uint32_t magic;
    if (!state || size < 4)
        return 0;
    memcpy(&magic, state, 4);
    return magic == MAGIC_V1 || magic == MAGIC_V2;
}

/* What the reader owns: every allocation, freed together. */
typedef struct form {
    mica__in_t r;            /* format 0: no state padding of its own */
    int padded;
    void **owned;
    size_t nb_owned, cap_owned;
    const char *bad;         /* what is malformed, for the message */
} form_t;

/* n zeroed bytes owned by f; NULL when memory runs out. */
static void *own(form_t *f, size_t n)
{
    void *p;
    if (f->nb_owned == f->cap_owned) {
        size_t cap = f->cap_owned ? 2 * f->cap_owned : 16;
        void **grown = realloc(f->owned, sizeof *grown * cap);
        if (!grown)
            return NULL;
        f->owned = grown;
        f->cap_owned = cap;
    }
    if (!(p = calloc(1, n ? n : 1)))
        return NULL;
    f->owned[f->nb_owned++] = p;
    return p;
}

/* n bytes of the form copied into owned, aligned memory (plus a NUL). */
static void *copy(form_t *f, size_t n)
{
    const void *src = mica__in_take(&f->r, n);
    void *dst;
    if (!src)
        return NULL;
    if (!(dst = own(f, n + 1))) {
        f->bad = "out of host memory";
        f->r.bad = 1;
        return NULL;
    }
    memcpy(dst, src, n);
    return dst;
}

/* Whether `count` elements of at least `min` bytes fit in what is left. */
static int fits(form_t *f, int64_t count, size_t min)
{
    if (count < 0 || (uint64_t)count > (f->r.len - f->r.pos) / min) {
        f->r.bad = 1;
        return 0;
    }
    return 1;
}

static int read_weights(form_t *f, mica_weights_t *w)
{
    size_t esize, bytes, gap, k;
    const unsigned char *pad;
    int64_t n;
    uint32_t d;

    w->dtype = (mica_dtype_t)mica__in_u32(&f->r);
    w->count = mica__in_i64(&f->r);
    d = mica__in_u32(&f->r);
    esize = mica_dtype_size(w->dtype);
    if (f->r.bad || d > MICA_MAX_DIMS || !esize || w->count < 0) {
        f->bad = "malformed weights";
        return -1;
    }
    w->dims.nb_dims = (int32_t)d;
    for (k = 0; k < d; k++)
        w->dims.d[k] = mica__in_i64(&f->r);
    if (f->padded && !f->r.bad) {
        gap = (WEIGHTS_ALIGN - f->r.pos % WEIGHTS_ALIGN) % WEIGHTS_ALIGN;
        pad = mica__in_take(&f->r, gap);
        for (k = 0; pad && k < gap; k++)
            if (pad[k])
                f->r.bad = 1;
    }
    n = w->count;
    if (f->r.bad || !fits(f, n, esize)) {
        f->bad = "weights longer than the state";
        return -1;
    }
    bytes = (size_t)n * esize;
    w->values = mica__in_take(&f->r, bytes); /* not read: no copy */
    return 0;
}

static int read_field(form_t *f, mica_field_t *out)
{
    uint32_t nlen = mica__in_u32(&f->r), type;
    int32_t count, i;
    char *name = copy(f, nlen);

    type = mica__in_u32(&f->r);
    count = mica__in_i32(&f->r);
    if (f->r.bad || !name || !name[0] || strlen(name) != nlen ||
        type > MICA_FIELD_WEIGHTS || count < 0) {
        f->bad = f->bad ? f->bad : "malformed field";
        return -1;
    }
    out->name = name;
    out->type = (mica_field_type_t)type;
    out->count = count;
    switch (out->type) {
    case MICA_FIELD_STRING: {
        const char **v;
        if (!fits(f, count, 4) || !(v = own(f, sizeof *v * (size_t)count)))
            break;
        for (i = 0; i < count && !f->r.bad; i++) {
            uint32_t len = mica__in_u32(&f->r);
            v[i] = copy(f, len);
        }
        out->data = v;
        break;
    }
    case MICA_FIELD_WEIGHTS: {
        mica_weights_t *v;
        if (!fits(f, count, 16) || !(v = own(f, sizeof *v * (size_t)count)))
            break;
        for (i = 0; i < count; i++)
            if (read_weights(f, &v[i]) != 0)
                return -1;
        out->data = v;
        break;
    }
    default: /* int64_t or double elements */
        if (fits(f, count, 8))
            out->data = copy(f, 8 * (size_t)count);
        break;
    }
    if (f->r.bad || !out->data) {
        f->bad = f->bad ? f->bad : "field values longer than the state";
        return -1;
    }
    return 0;
}

mica_status_t mica__fields_form_check(const mica_layer_creator_t *c,
                                      const void *state, size_t size,
                                      char *err, size_t errlen)
{
    form_t f;
    mica_field_t *items = NULL;
    mica__fields_src_t src;
    mica__fields_t checked;
    uint32_t magic, n, i;
    mica_status_t st = MICA_ERR_INVALID;
    size_t k;

    memset(&f, 0, sizeof f);
    f.r.p = state;
    f.r.len = size;
    magic = mica__in_u32(&f.r);
    f.padded = magic == MAGIC_V2;
    n = mica__in_u32(&f.r);
    /* a field takes 12 bytes at least: name length, type, count */
    if (f.r.bad || (magic != MAGIC_V1 && magic != MAGIC_V2) ||
        !fits(&f, n, 12) || !(items = own(&f, sizeof *items * n))) {
        snprintf(err, errlen, "%s",
                 f.r.bad ? "malformed fields (a count past the end)"
                         : "out of host memory");
        st = f.r.bad ? MICA_ERR_INVALID : MICA_ERR_NOMEM;
        goto done;
    }
    for (i = 0; i < n; i++)
        if (read_field(&f, &items[i]) != 0) {
            snprintf(err, errlen, "%s (field %u)", f.bad, (unsigned)i);
            goto done;
        }
    if (f.r.pos != f.r.len) {
        snprintf(err, errlen, "%zu bytes after its fields",
                 f.r.len - f.r.pos);
        goto done;
    }
    memset(&src, 0, sizeof src);
    src.borrow_weights = 1;
    {
        mica__given_t *g = calloc((size_t)n + 1, sizeof *g);
        if (!g) {
            snprintf(err, errlen, "out of host memory");
            st = MICA_ERR_NOMEM;
            goto done;
        }
        for (i = 0; i < n; i++) {
            g[i].name = items[i].name;
            g[i].typed = &items[i];
        }
        st = mica__fields_validate(&src, c, g, (int32_t)n, &checked, err,
                                   errlen);
        free(g);
    }
    if (st == MICA_OK)
        mica__fields_free(&checked);
done:
    for (k = 0; k < f.nb_owned; k++)
        free(f.owned[k]);
    free(f.owned);
    return st;
}
