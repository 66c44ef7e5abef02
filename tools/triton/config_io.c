/*
 * tools/triton/config_io.c - a model configuration's inputs, outputs and
 * max_batch_size, checked against the engine and, where the server lets
 * the backend (auto-complete), filled in from it.
 *
 * Batching (max_batch_size > 0) needs every input's first dimension to be
 * a runtime one and every output's first dimension to be one of them (its
 * symbolic shape starts with the same symbol): that dimension is the
 * batch, which the configuration leaves out of `dims`.  The engine's
 * profiles must admit every batch from 1 to max_batch_size.  A
 * configuration that lists no inputs and says max_batch_size 0 gets, for
 * a batching engine, the largest batch its profiles cover (at most the
 * backend option max-batch-size) and dynamic_batching; one that lists inputs with the batch dimension in
 * `dims` keeps max_batch_size 0 (requests then carry whole tensors).
 */
#include <config.h>

#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "[-1, 16]" */
static const char *dims_text(const mica_dims_t *d, int32_t from, char *buf,
                             size_t len)
{
    size_t pos = 0;
    int32_t k;
    buf[0] = '\0';
    pos += (size_t)snprintf(buf, len, "[");
    for (k = from; k < d->nb_dims && pos < len; k++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld",
                                k > from ? ", " : "", (long long)d->d[k]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

/* "x, y" */
static const char *names_text(const mica__tb_io_t *io, int32_t n, char *buf,
                              size_t len)
{
    size_t pos = 0;
    int32_t i;
    buf[0] = '\0';
    for (i = 0; i < n && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
                                io[i].name);
    return buf;
}

/* The first token of a symbolic shape "[N, 4]": "N" into buf. */
static void first_symbol(const char *shape, char *buf, size_t len)
{
    size_t n = 0;
    if (shape && *shape == '[')
        shape++;
    while (shape && shape[n] && shape[n] != ',' && shape[n] != ']')
        n++;
    if (n >= len)
        n = len - 1;
    memcpy(buf, shape ? shape : "", n);
    buf[n] = '\0';
}

void mica__tb_io_free(mica__tb_io_t *io, int32_t n)
{
    int32_t i;
    for (i = 0; io && i < n; i++)
        free(io[i].name);
    free(io);
}

/* The engine's inputs and outputs into the model; whether it can batch. */
static TRITONSERVER_Error *read_io(mica__tb_model_t *m,
                                   const mica_engine_t *engine, int *batchable)
{
    int32_t ni = mica_engine_nb_inputs(engine);
    int32_t no = mica_engine_nb_outputs(engine);
    int32_t i;
    char syms[MICA_MAX_DIMS * 4][32];
    int32_t nb_syms = 0;

    if (!(m->inputs = calloc((size_t)ni + 1, sizeof *m->inputs)) ||
        !(m->outputs = calloc((size_t)no + 1, sizeof *m->outputs)))
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    *batchable = ni > 0 && no > 0;
    for (i = 0; i < ni + no; i++) {
        int is_in = i < ni;
        mica__tb_io_t *io = is_in ? &m->inputs[i] : &m->outputs[i - ni];
        mica_tensor_info_t info;
        char sym[32];
        int32_t s, found = 0;

        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        mica_engine_tensor(engine, is_in ? mica_engine_input(engine, i)
                                         : mica_engine_output(engine, i - ni),
                           &info);
        if (!(io->name = strdup(info.name)))
            return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        io->dtype = info.dtype;
        io->dims = info.dims;
        if (is_in)
            m->nb_inputs++;
        else
            m->nb_outputs++;
        if (is_in && mica_engine_nb_profiles(engine) > 0) {
            mica_dims_t lo, opt, hi;
            int32_t nv = 0;
            const int32_t *a, *b, *c;
            mica_engine_profile_input(engine, 0, i, &lo, &opt, &hi, &nv, &a,
                                      &b, &c);
            if (nv > 0)
                return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED,
                                      "model '%s': input '%s' is a shape "
                                      "tensor, which the Triton backend does "
                                      "not serve", m->name, io->name);
        }
        first_symbol(info.shape, sym, sizeof sym);
        if (info.dims.nb_dims < 1 || info.dims.d[0] >= 0) {
            *batchable = 0;
            continue;
        }
        for (s = 0; s < nb_syms; s++)
            found |= strcmp(syms[s], sym) == 0;
        if (is_in && !found && nb_syms < (int32_t)(sizeof syms / sizeof syms[0]))
            strcpy(syms[nb_syms++], sym);
        else if (!is_in && !found)
            *batchable = 0;
    }
    return NULL;
}

/* The largest B such that the profiles admit every batch 1..B. */
static int64_t batch_cover(const mica_engine_t *engine, int32_t nb_inputs)
{
    int32_t np = mica_engine_nb_profiles(engine), k, i;
    int64_t cover = 0;
    int grew = 1;

    while (grew) {
        grew = 0;
        for (k = 0; k < np; k++) {
            int64_t lo = 1, hi = INT64_MAX;
            for (i = 0; i < nb_inputs; i++) {
                mica_dims_t a, b, c;
                int32_t nv;
                const int32_t *x, *y, *z;
                mica_engine_profile_input(engine, k, i, &a, &b, &c, &nv, &x,
                                          &y, &z);
                if (a.d[0] > lo) lo = a.d[0];
                if (c.d[0] < hi) hi = c.d[0];
            }
            if (lo <= cover + 1 && hi > cover) {
                cover = hi;
                grew = 1;
            }
        }
    }
    return cover;
}

/* The dims an entry should list: the engine's, less the batch. */
static void wanted_dims(const mica__tb_model_t *m, const mica__tb_io_t *io,
                        mica_dims_t *out)
{
    int32_t k, skip = m->max_batch > 0;
    memset(out, 0, sizeof *out);
    out->nb_dims = io->dims.nb_dims - skip;
    for (k = 0; k < out->nb_dims; k++)
        out->d[k] = io->dims.d[k + skip];
}

/* A new configuration entry {name, data_type, dims} for io. */
static mica__json_t *new_entry(const mica__tb_model_t *m,
                               const mica__tb_io_t *io)
{
    mica__json_t *e = mica__json_new(MICA__JSON_OBJECT);
    mica__json_t *dims = mica__json_new(MICA__JSON_ARRAY);
    mica_dims_t want;
    int32_t k;
    int bad = !e || !dims;

    wanted_dims(m, io, &want);
    for (k = 0; !bad && k < want.nb_dims; k++) {
        mica__json_t *d = mica__json_new_int(want.d[k]);
        if (!d)
            bad = 1;
        else
            mica__json_append(dims, d);
    }
    if (bad || mica__json_set(e, "name", mica__json_new_string(io->name)) ||
        mica__json_set(e, "data_type",
                       mica__json_new_string(mica__tb_dtype_config(io->dtype))) ||
        mica__json_set(e, "dims", dims)) {
        mica__json_free(e);
        return NULL;
    }
    return e;
}

/* Check one configuration entry against io. */
static TRITONSERVER_Error *check_entry(const mica__tb_model_t *m,
                                       const char *what,
                                       const mica__tb_io_t *io,
                                       const mica__json_t *entry)
{
    const char *type = mica__json_string(mica__json_get(entry, "data_type"));
    const mica__json_t *dims = mica__json_get(entry, "dims");
    const mica__json_t *reshape = mica__json_get(entry, "reshape");
    const mica__json_t *d;
    mica_dtype_t dt;
    mica_dims_t want, got;
    char a[128], b[128];
    int32_t k, n, ok;

    if (mica__tb_dtype_from_config(type, &dt) != 0 || dt != io->dtype)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                              "model '%s': %s '%s' has data_type %s but the "
                              "model's is %s", m->name, what, io->name,
                              type ? type : "(none)",
                              mica__tb_dtype_config(io->dtype));
    if (reshape)
        dims = mica__json_get(reshape, "shape");
    wanted_dims(m, io, &want);
    memset(&got, 0, sizeof got);
    n = mica__json_count(dims);
    ok = n <= MICA_MAX_DIMS;
    for (d = dims ? dims->child : NULL, k = 0; ok && d; d = d->next, k++)
        ok = mica__json_int(d, &got.d[k]) == 0;
    got.nb_dims = ok ? n : 0;
    if (ok && n == want.nb_dims) {
        for (k = 0; k < want.nb_dims; k++)
            if (want.d[k] >= 0 ? got.d[k] != want.d[k] : got.d[k] < -1)
                break;
        if (k == want.nb_dims)
            return NULL;
    }
    return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                          "model '%s': %s '%s' has dims %s but the model's "
                          "are %s (-1: any)%s", m->name, what, io->name,
                          dims_text(&got, 0, a, sizeof a),
                          dims_text(&want, 0, b, sizeof b),
                          m->max_batch > 0 ? ", without the batch dimension"
                                           : "");
}

/* Check (and complete) the entries of `list` ("input" or "output"). */
static TRITONSERVER_Error *check_list(mica__tb_model_t *m,
                                      mica__json_t *config, const char *list,
                                      const mica__tb_io_t *io, int32_t n,
                                      int complete, int *changed)
{
    const char *what = strcmp(list, "input") == 0 ? "input" : "output";
    mica__json_t *arr = mica__json_get(config, list);
    mica__json_t *e;
    TRITONSERVER_Error *err;
    char all[512];
    int32_t i;

    for (e = arr ? arr->child : NULL; e; e = e->next) {
        const char *name = mica__json_string(mica__json_get(e, "name"));
        for (i = 0; i < n; i++)
            if (name && strcmp(name, io[i].name) == 0)
                break;
        if (i == n)
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                  "model '%s': config.pbtxt names %s '%s', "
                                  "which the model does not have (its %ss: "
                                  "%s)", m->name, what,
                                  name ? name : "(none)", what,
                                  names_text(io, n, all, sizeof all));
        if ((err = check_entry(m, what, &io[i], e)))
            return err;
    }
    for (i = 0; i < n; i++) {
        const char *name = NULL;
        for (e = arr ? arr->child : NULL; e; e = e->next)
            if ((name = mica__json_string(mica__json_get(e, "name"))) &&
                strcmp(name, io[i].name) == 0)
                break;
        if (e)
            continue;
        if (!complete) {
            if (what[0] == 'o')
                continue; /* serving a subset of the outputs is fine */
            return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG,
                                  "model '%s': config.pbtxt lacks input '%s' "
                                  "(auto-complete is off)", m->name,
                                  io[i].name);
        }
        if (!arr) {
            if (!(arr = mica__json_new(MICA__JSON_ARRAY)) ||
                mica__json_set(config, list, arr))
                return mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                                      "out of memory");
        }
        if (!(e = new_entry(m, &io[i])))
            return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        mica__json_append(arr, e);
        *changed = 1;
    }
    return NULL;
}

TRITONSERVER_Error *mica__tb_config_io(mica__tb_model_t *m,
                                       const mica_engine_t *engine,
                                       mica__json_t *config, int complete,
                                       int *changed)
{
    TRITONSERVER_Error *err;
    int batchable;
    int64_t max_batch = 0, cover;
    char a[128];

    *changed = 0;
    if ((err = read_io(m, engine, &batchable)))
        return err;
    if (m->nb_inputs == 0)
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': "
                              "the network has no input", m->name);
    cover = batchable ? batch_cover(engine, m->nb_inputs) : 0;
    if (mica__json_get(config, "max_batch_size") &&
        mica__json_int(mica__json_get(config, "max_batch_size"), &max_batch))
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "max_batch_size is not an integer", m->name);
    if (max_batch == 0 && complete && cover > 0 &&
        mica__json_count(mica__json_get(config, "input")) == 0) {
        mica__json_t *v;
        int64_t cap = m->backend->max_batch_cap;
        /* The profiles' largest batch, or max-batch-size where given. */
        max_batch = cap > 0 && cap < cover ? cap : cover;
        if (max_batch > INT32_MAX)
            max_batch = INT32_MAX;
        v = mica__json_new_int(max_batch);
        if (!v || mica__json_set(config, "max_batch_size", v))
            return mica__tb_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        if (!mica__json_get(config, "dynamic_batching") &&
            !mica__json_get(config, "sequence_batching")) {
            if (!(v = mica__json_new(MICA__JSON_OBJECT)) ||
                mica__json_set(config, "dynamic_batching", v))
                return mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                                      "out of memory");
        }
        *changed = 1;
    }
    if (max_batch < 0 || max_batch > INT32_MAX)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "max_batch_size %lld is out of range", m->name,
                              (long long)max_batch);
    if (max_batch > 0 && !batchable)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "max_batch_size %lld needs a runtime first "
                              "dimension (the batch) on every input and "
                              "output; input '%s' is %s", m->name,
                              (long long)max_batch, m->inputs[0].name,
                              dims_text(&m->inputs[0].dims, 0, a, sizeof a));
    if (max_batch > cover && max_batch > 0)
        return mica__tb_error(TRITONSERVER_ERROR_INVALID_ARG, "model '%s': "
                              "max_batch_size is %lld but the engine's "
                              "profiles admit batches 1 to %lld only",
                              m->name, (long long)max_batch, (long long)cover);
    m->max_batch = (int32_t)max_batch;
    if ((err = check_list(m, config, "input", m->inputs, m->nb_inputs,
                          complete, changed)))
        return err;
    return check_list(m, config, "output", m->outputs, m->nb_outputs,
                      complete, changed);
}

/* Whether JSON value v is true (a bool, or the string "true"). */
static int is_true(const mica__json_t *v)
{
    const char *t = v ? mica__json_string(v) : NULL;
    return v && ((v->kind == MICA__JSON_BOOL && v->boolean) ||
                 (t && strcmp(t, "true") == 0));
}

TRITONSERVER_Error *mica__tb_config_refuse(const mica__tb_model_t *m,
                                           const mica__json_t *config)
{
    const mica__json_t *p, *seq;

    for (p = mica__json_get(config, "input"), p = p ? p->child : NULL; p;
         p = p->next) {
        const char *name = mica__json_string(mica__json_get(p, "name"));
        if (is_true(mica__json_get(p, "allow_ragged_batch")))
            return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model "
                                  "'%s': input '%s': allow_ragged_batch is "
                                  "not supported by the mica backend (batches "
                                  "run along a dimension of equal rows)",
                                  m->name, name ? name : "?");
    }
    if (is_true(mica__json_get(mica__json_get(config,
                                              "model_transaction_policy"),
                               "decoupled")))
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': "
                              "model_transaction_policy { decoupled: true } "
                              "is not supported by the mica backend (one "
                              "response per request)", m->name);
    seq = mica__json_get(config, "sequence_batching");
    if (seq && mica__json_count(mica__json_get(seq, "state")) > 0)
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': "
                              "sequence_batching { state } (implicit state) is "
                              "not supported by the mica backend", m->name);
    return NULL;
}
