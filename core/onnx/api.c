/*
 * core/onnx/api.c - the ONNX importer's public functions (mica.h):
 * import, save (manifest and weights file, both or neither), the manifest
 * in memory, the operator list, and reading a TensorProto file.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "onnx_int.h"
#include "manifest/manifest_int.h"

struct mica_onnx_model {
    mica__ox_t x;
    char *source;            /* the model's path */
};

MICA_EXPORT int32_t mica_onnx_available(void)
{
    return 1;
}

MICA_EXPORT int32_t mica_onnx_file_probe(const char *path)
{
    uint8_t head[64];
    size_t n;
    FILE *f = path ? fopen(path, "rb") : NULL;
    int32_t yes;
    if (!f)
        return 0;
    n = fread(head, 1, sizeof head, f);
    fclose(f);
    /* A short file is probed whole; a longer one by its first field. */
    yes = (int32_t)mica__ox_probe_bytes(head, n);
    if (!yes && n == sizeof head && head[0] != 0x08) {
        mica__ox_file_t mf;
        /* The first field may be longer than what was read: map it. */
        if (mica__ox_file_map(NULL, path, "probe", &mf) == MICA_OK) {
            yes = (int32_t)mica__ox_probe_bytes(mf.base, mf.size);
            mica__ox_file_unmap(&mf);
        }
    }
    return yes;
}

static void model_free(mica_onnx_model_t *m)
{
    mica__ox_scope_t *s;
    if (!m)
        return;
    for (s = m->x.scope; s; s = s->parent)
        mica__ox_names_free(&s->values);
    mica__ox_names_free(&m->x.tensors);
    mica__ox_names_free(&m->x.lnames);
    mica__ox_names_free(&m->x.wnames);
    mica__ox_names_free(&m->x.reserved);
    for (int32_t i = 0; i < m->x.nb_cond_list; i++)
        mica__ox_names_free(&m->x.conds[i]->inputs);
    free(m->x.weights);
    free(m->x.blob);
    free(m->x.report);
    mica__ox_arena_free(&m->x.arena);
    mica__ox_model_close(m->x.model);
    free(m->source);
    free(m);
}

/* One import of `path`, taking the inputs `fixed` as constants. */
static mica_status_t import_once(mica_context_t *ctx, const char *path,
                                 const mica_onnx_options_t *opt,
                                 const char *const *fixed, int32_t nb_fixed,
                                 int check, mica_onnx_model_t **out)
{
    mica_onnx_model_t *m;
    mica__ox_t *x;
    mica_status_t st;

    *out = NULL;
    m = calloc(1, sizeof *m);
    if (!m || !(m->source = mica__strdup(path))) {
        free(m);
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
    }
    x = &m->x;
    x->ctx = ctx;
    x->check = check;
    st = mica__ox_model_open(ctx, path, &x->model);
    if (st == MICA_OK && opt && opt->struct_size >= sizeof *opt) {
        if (opt->shapes)
            st = mica__ox_parse_shapes(x, opt->shapes, 7, "--shapes");
        if (st == MICA_OK && opt->min_shapes)
            st = mica__ox_parse_shapes(x, opt->min_shapes, 1,
                                       "--min-shapes");
        if (st == MICA_OK && opt->opt_shapes)
            st = mica__ox_parse_shapes(x, opt->opt_shapes, 2,
                                       "--opt-shapes");
        if (st == MICA_OK && opt->max_shapes)
            st = mica__ox_parse_shapes(x, opt->max_shapes, 4,
                                       "--max-shapes");
    }
    if (st == MICA_OK) {
        x->opt = opt && opt->struct_size >= sizeof *opt ? opt : NULL;
        x->fixed = fixed;
        x->nb_fixed = nb_fixed;
        st = mica__ox_import(x);
        x->opt = NULL;
        x->fixed = NULL;
    }
    *out = m;
    return st;
}

/* The import (checking: in one pass over every node), tried again when
 * a mapping asks for inputs the profile fixes as constants. */
static mica_status_t import(mica_context_t *ctx, const char *path,
                            const mica_onnx_options_t *opt, int check,
                            mica_onnx_model_t **out)
{
    mica_onnx_model_t *m = NULL;
    char **names = NULL;
    int32_t nb = 0, i, tries;
    mica_status_t st;

    st = import_once(ctx, path, opt, NULL, 0, check, &m);
    /* A mapping that found it needs the values of inputs the profile
     * fixes (an If's condition, a TopK's K) asks for them: again, with
     * those and the ones before (each try fixes at least one more). */
    for (tries = 0; st != MICA_OK && m && m->x.nb_want_fixed > nb
                    && tries < 64; tries++) {
        char **more = calloc((size_t)m->x.nb_want_fixed, sizeof *more);
        int32_t k = m->x.nb_want_fixed;
        for (i = 0; more && i < k; i++)
            if (!(more[i] = mica__strdup(m->x.want_fixed[i])))
                break;
        model_free(m);
        m = NULL;
        if (!more || i < k) {
            while (more && i > 0)
                free(more[--i]);
            free(more);
            st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
            break;
        }
        for (i = 0; names && i < nb; i++)
            free(names[i]);
        free(names);
        names = more;
        nb = k;
        st = import_once(ctx, path, opt, (const char *const *)names, nb,
                         check, &m);
    }
    for (i = 0; names && i < nb; i++)
        free(names[i]);
    free(names);
    *out = m;
    return st;
}

MICA_EXPORT mica_status_t mica_onnx_import(mica_context_t *ctx,
                                           const char *path,
                                           const mica_onnx_options_t *opt,
                                           mica_onnx_model_t **out)
{
    mica_onnx_model_t *m = NULL;
    mica_status_t st;
    if (!ctx)
        return MICA_ERR_INVALID;
    if (!path || !out)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_onnx_import: path or out is NULL");
    st = import(ctx, path, opt, 0, &m);
    if (st != MICA_OK) {
        model_free(m);
        m = NULL;
    }
    *out = m;
    return st;
}

MICA_EXPORT mica_status_t mica_onnx_check(mica_context_t *ctx,
                                          const char *path,
                                          const mica_onnx_options_t *opt,
                                          char **report, int32_t *nb_nodes,
                                          int32_t *nb_refused)
{
    mica_onnx_model_t *m = NULL;
    mica_status_t st;
    const char *msg;
    size_t len, plen;
    if (!ctx)
        return MICA_ERR_INVALID;
    if (!path || !report || !nb_nodes || !nb_refused)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_onnx_check: a NULL argument");
    *report = NULL;
    *nb_nodes = *nb_refused = 0;
    st = import(ctx, path, opt, 1, &m);
    if (!m || !m->x.model || st == MICA_ERR_NOMEM) {
        /* Not a model (or no memory): the import's own failure. */
        model_free(m);
        return st != MICA_OK ? st : MICA_ERR_INTERNAL;
    }
    if (st != MICA_OK) {
        /* A problem of the whole (an input without its profile): one more
         * line, without the model's path. */
        msg = mica_context_error(ctx);
        plen = strlen(m->x.model->path);
        if (!strncmp(msg, m->x.model->path, plen)
            && !strncmp(msg + plen, ": ", 2))
            msg += plen + 2;
        len = strlen(msg);
        {
            char *g = realloc(m->x.report, m->x.report_len + len + 2);
            if (!g) {
                model_free(m);
                return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
            }
            m->x.report = g;
            memcpy(g + m->x.report_len, msg, len);
            m->x.report_len += len;
            g[m->x.report_len++] = '\n';
            g[m->x.report_len] = '\0';
            m->x.nb_refused++;
        }
    }
    *nb_nodes = m->x.model->proto->graph
                ? (int32_t)m->x.model->proto->graph->n_node : 0;
    *nb_refused = m->x.nb_refused;
    *report = m->x.report ? m->x.report : mica__strdup("");
    m->x.report = NULL;
    model_free(m);
    return *report ? MICA_OK
                   : mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
}

MICA_EXPORT void mica_onnx_destroy(mica_onnx_model_t *model)
{
    model_free(model);
}

MICA_EXPORT char *mica_onnx_manifest_text(mica_onnx_model_t *model,
                                          const char *weights_file,
                                          size_t *len)
{
    size_t n = 0;
    char *text;
    if (!model)
        return NULL;
    text = mica__ox_emit(&model->x, model->source,
                         weights_file ? weights_file : "model.weights", &n);
    if (len)
        *len = n;
    return text;
}

int mica__ox_write_weights(const mica__ox_t *x, FILE *f)
{
    static const uint8_t zeros[64];
    int64_t at = 0;
    int32_t i;
    for (i = 0; i < x->nb_weights; i++) {
        const mica__ox_weights_t *w = &x->weights[i];
        if (w->inline_)
            continue;
        if (w->offset - at > 0
            && fwrite(zeros, 1, (size_t)(w->offset - at), f)
               != (size_t)(w->offset - at))
            return errno ? errno : EIO;
        if (w->splat) {
            uint8_t chunk[4096];
            int64_t left = w->bytes;
            size_t es = mica_dtype_size(w->dtype), k;
            for (k = 0; k + es <= sizeof chunk; k += es)
                memcpy(chunk + k, w->data, es);
            while (left > 0) {
                size_t part = left < (int64_t)k ? (size_t)left : k;
                if (fwrite(chunk, 1, part, f) != part)
                    return errno ? errno : EIO;
                left -= (int64_t)part;
            }
        } else if (w->bytes && fwrite(w->data, 1, (size_t)w->bytes, f)
                               != (size_t)w->bytes) {
            return errno ? errno : EIO;
        }
        at = w->offset + w->bytes;
    }
    return 0;
}

const uint8_t *mica__ox_blob(mica__ox_t *x)
{
    int32_t i;
    if (x->blob || !x->blob_size)
        return x->blob;
    x->blob = calloc(1, (size_t)x->blob_size);
    if (!x->blob) {
        mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory for %lld bytes "
                   "of weights", (long long)x->blob_size);
        return NULL;
    }
    for (i = 0; i < x->nb_weights; i++) {
        const mica__ox_weights_t *w = &x->weights[i];
        uint8_t *p = x->blob + w->offset;
        size_t es = mica_dtype_size(w->dtype), k;
        if (w->inline_ || !w->bytes)
            continue;
        if (!w->splat) {
            memcpy(p, w->data, (size_t)w->bytes);
            continue;
        }
        /* Doubling copies: log2(count) memcpy calls. */
        memcpy(p, w->data, es);
        for (k = es; k < (size_t)w->bytes; k *= 2)
            memcpy(p + k, p, k <= (size_t)w->bytes - k
                              ? k : (size_t)w->bytes - k);
    }
    return x->blob;
}

MICA_EXPORT const void *mica_onnx_weights(mica_onnx_model_t *model,
                                          int64_t *bytes)
{
    if (bytes)
        *bytes = model ? model->x.blob_size : 0;
    return model ? mica__ox_blob(&model->x) : NULL;
}

MICA_EXPORT int64_t mica_onnx_weights_size(const mica_onnx_model_t *model)
{
    return model ? model->x.blob_size : 0;
}

/* Write a new file next to `path` under an unpredictable name (*tmp,
 * core/base/files.h): the text, or the weights; 0 or an errno. */
static int write_file(const char *path, char **tmp, const void *p, size_t n,
                      const mica__ox_t *weights)
{
    FILE *f = mica__fcreate_tmp(path, tmp);
    int err = 0;
    if (!f)
        return errno ? errno : EIO;
    if (weights)
        err = mica__ox_write_weights(weights, f);
    else if (n && fwrite(p, 1, n, f) != n)
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (err) {
        remove(*tmp);
        free(*tmp);
        *tmp = NULL;
    }
    return err;
}

MICA_EXPORT mica_status_t mica_onnx_save(mica_onnx_model_t *model,
                                         const char *yaml_path)
{
    mica_context_t *ctx;
    const char *slash, *base;
    size_t blen, len = 0;
    char *wpath = NULL, *wname = NULL, *text = NULL, *ytmp = NULL,
         *wtmp = NULL;
    mica_status_t st = MICA_OK;
    int err;

    if (!model)
        return MICA_ERR_INVALID;
    ctx = model->x.ctx;
    if (!yaml_path || !*yaml_path)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_onnx_save: no manifest path");
    slash = strrchr(yaml_path, '/');
    base = slash ? slash + 1 : yaml_path;
    blen = strlen(base);
    if (blen > 5 && !strcmp(base + blen - 5, ".yaml"))
        blen -= 5;
    else if (blen > 4 && !strcmp(base + blen - 4, ".yml"))
        blen -= 4;
    wname = mica__asprintf("%.*s.weights", (int)blen, base);
    wpath = mica__asprintf("%.*s%s", (int)(base - yaml_path), yaml_path,
                           wname ? wname : "");
    if (!wname || !wpath
        || !(text = mica__ox_emit(&model->x, model->source, wname, &len))) {
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* Never write a manifest mica itself refuses to read (issue 25: a
     * 10^6-node chain made 117 MiB). */
    if (len > MICA__MF_MAX_BYTES) {
        st = mica__fail(ctx, MICA_ERR_UNSUPPORTED, "%s: the manifest would "
                        "be %zu MiB, more than the %s mica reads; nothing "
                        "written (run or build the .onnx file directly)",
                        yaml_path, (len + (1u << 20) - 1) >> 20,
                        MICA__MF_MAX_BYTES_TEXT);
        goto out;
    }
    if ((err = write_file(wpath, &wtmp, NULL, 0, &model->x))) {
        st = mica__fail(ctx, MICA_ERR_IO, "cannot write '%s': %s", wpath,
                        strerror(err));
        goto out;
    }
    if ((err = write_file(yaml_path, &ytmp, text, len, NULL))) {
        remove(wtmp);
        st = mica__fail(ctx, MICA_ERR_IO, "cannot write '%s': %s",
                        yaml_path, strerror(err));
        goto out;
    }
    if (rename(wtmp, wpath) != 0) {
        err = errno;
        remove(wtmp);
        remove(ytmp);
        st = mica__fail(ctx, MICA_ERR_IO, "cannot write '%s': %s", wpath,
                        strerror(err));
        goto out;
    }
    if (rename(ytmp, yaml_path) != 0) {
        err = errno;
        remove(ytmp);
        remove(wpath);
        st = mica__fail(ctx, MICA_ERR_IO, "cannot write '%s': %s",
                        yaml_path, strerror(err));
    }
out:
    free(text);
    free(wname);
    free(wpath);
    free(ytmp);
    free(wtmp);
    return st;
}

MICA_EXPORT mica_status_t mica_onnx_manifest(mica_onnx_model_t *model,
                                             mica_manifest_t **out)
{
    size_t len = 0;
    char *text, *path;
    mica_status_t st;
    static const char wname[] = "(imported weights)";

    if (!model || !out)
        return MICA_ERR_INVALID;
    *out = NULL;
    if (model->x.blob_size && !mica__ox_blob(&model->x))
        return MICA_ERR_NOMEM;
    text = mica__ox_emit(&model->x, model->source, wname, &len);
    path = mica__asprintf("%s (imported)", model->source);
    if (!text || !path) {
        free(text);
        free(path);
        return mica__fail(model->x.ctx, MICA_ERR_NOMEM, "out of memory");
    }
    st = mica__manifest_load_mem(model->x.ctx, path, text, len, wname,
                                 model->x.blob, (size_t)model->x.blob_size,
                                 out);
    free(text);
    free(path);
    return st;
}

MICA_EXPORT mica_status_t mica_onnx_op(int32_t i, const char **op,
                                       const char **layers)
{
    size_t t;
    int32_t k;
    if (i < 0)
        return MICA_ERR_NOT_FOUND;
    for (t = 0; mica__ox_op_tables[t]; t++)
        for (k = 0; mica__ox_op_tables[t][k].name; k++)
            if (mica__ox_op_tables[t][k].layers && i-- == 0) {
                if (op)
                    *op = mica__ox_op_tables[t][k].name;
                if (layers)
                    *layers = mica__ox_op_tables[t][k].layers;
                return MICA_OK;
            }
    return MICA_ERR_NOT_FOUND;
}

MICA_EXPORT mica_status_t mica_onnx_read_tensor(mica_context_t *ctx,
                                                const char *path,
                                                mica_tensor_desc_t *desc,
                                                void **data)
{
    mica__ox_model_t m;
    mica__ox_arena_t arena = {NULL};
    Onnx__TensorProto *t = NULL;
    mica__ox_data_t d;
    mica_dtype_t dtype;
    mica_status_t st;
    size_t bytes;
    const char *slash;

    if (!ctx)
        return MICA_ERR_INVALID;
    if (!path || !desc || !data)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_onnx_read_tensor: NULL argument");
    *data = NULL;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.path = (char *)path;
    slash = strrchr(path, '/');
    m.dir = slash ? mica__asprintf("%.*s", (int)(slash - path), path)
                  : mica__strdup("");
    if (!m.dir)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
    st = mica__ox_file_map(ctx, path, "TensorProto", &m.file);
    if (st != MICA_OK)
        goto out;
    st = mica__ox_nest_check(ctx, path, &onnx__tensor_proto__descriptor,
                             m.file.base, m.file.size);
    if (st != MICA_OK)
        goto out;
    t = onnx__tensor_proto__unpack(NULL, m.file.size, m.file.base);
    if (!t) {
        st = mica__fail(ctx, MICA_ERR_INVALID, "%s: not a TensorProto "
                        "(damaged or truncated file?)", path);
        goto out;
    }
    st = mica__ox_tensor_data(&m, &arena, t, "the tensor", &d);
    if (st != MICA_OK)
        goto out;
    if (d.type == OX_INT64)
        dtype = MICA_INT64;
    else if (mica__ox_type_mica(d.type, &dtype) != 0) {
        st = mica__fail(ctx, MICA_ERR_UNSUPPORTED, "%s: %s tensors have no "
                        "mica type", path, mica__ox_type_name(d.type));
        goto out;
    }
    memset(desc, 0, sizeof *desc);
    desc->dtype = dtype;
    desc->dims = d.dims;
    desc->scale = 1;
    bytes = (size_t)d.count * mica_dtype_size(dtype);
    *data = malloc(bytes ? bytes : 1);
    if (!*data) {
        st = mica__fail(ctx, MICA_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (bytes)
        memcpy(*data, d.raw, bytes);
out:
    if (t)
        onnx__tensor_proto__free_unpacked(t, NULL);
    mica__ox_arena_free(&arena);
    mica__ox_file_unmap(&m.file);
    for (int32_t i = 0; i < m.nb_ext; i++)
        mica__ox_file_unmap(&m.ext[i]);
    free(m.ext);
    free(m.dir);
    return st;
}
