/*
 * modules/rnn/rnn_params.c - the RNNv2 layer's params checked against
 * each other when a layer is created (lists of weights: entries, types,
 * sizes), and a run's shapes and lengths checked against the params.
 */
#include <config.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mica/kit.h"

#include "rnn.h"

/* "layer 1, backward" for entry k of a list whose first layer is `first`. */
static const char *entry_text(const mica__rnn_t *p, int32_t k, int32_t first,
                              char *buf, size_t len)
{
    snprintf(buf, len, "layer %d, %s", (int)(first + k / p->dirs),
             p->dirs == 2 && k % 2 ? "backward" : "forward");
    return buf;
}

/* List `name` (field f, NULL when absent) has `want` entries. */
static int check_count(const char *name, const mica_field_t *f, int64_t want,
                       int skip, mica_error_t *err)
{
    int32_t n = f ? f->count : 0;
    if (n == want)
        return 1;
    mica_kit_host->set_error(err, "'%s' has %d entr%s, expected %" PRId64
                             " (one per layer%s and direction)", name, (int)n,
                             n == 1 ? "y" : "ies", want,
                             skip ? " after layer 0, in skip mode," : "");
    return 0;
}

/* Entry k of list `name` is float32 or float16 and holds `each` values
 * (`what` says of what). */
static int check_entry(const mica__rnn_t *p, const char *name, int32_t k,
                       int32_t first, const mica_weights_t *w, int64_t each,
                       const char *what, mica_error_t *err)
{
    char at[64];

    if (w->dtype != MICA_FLOAT32 && w->dtype != MICA_FLOAT16) {
        mica_kit_host->set_error(err, "%s[%d] (%s) is %s; RNNv2 weights are "
                                 "float32 or float16", name, (int)k,
                                 entry_text(p, k, first, at, sizeof at),
                                 mica_kit_host->dtype_name(w->dtype));
        return 0;
    }
    if (w->count != each) {
        mica_kit_host->set_error(err, "%s[%d] (%s) has %" PRId64 " values, "
                                 "expected %" PRId64 " (%s)", name, (int)k,
                                 entry_text(p, k, first, at, sizeof at),
                                 w->count, each, what);
        return 0;
    }
    return 1;
}

/* "4 gates x hidden_size 8" and, when in > 0, " x input size 3" (" x
 * hidden_size 8" for a recurrent matrix). */
static const char *gates_text(const mica__rnn_t *p, int64_t in, int recurrent,
                              char *buf, size_t len)
{
    int n = snprintf(buf, len, "%d gate%s x hidden_size %d", (int)p->gates,
                     p->gates > 1 ? "s" : "", (int)p->hidden);
    if (in > 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " x %s %" PRId64,
                 recurrent ? "hidden_size" : "input size", in);
    return buf;
}

int mica__rnn_read_params(const mica_fields_t *fields, mica__rnn_t *p,
                       mica_error_t *err)
{
    const mica_field_t *w = mica_fields_find(fields, "weights");
    const mica_field_t *r = mica_fields_find(fields, "recurrent_weights");
    const mica_field_t *wb = mica_fields_find(fields, "biases");
    const mica_field_t *rb = mica_fields_find(fields, "recurrent_biases");
    int64_t L = mica_kit_int(fields, "layers", 0);
    int64_t H = mica_kit_int(fields, "hidden_size", 0);
    int64_t S = mica_kit_int(fields, "max_seq_length", 0);
    int64_t GH, nw, LD, in;
    int32_t first, k;
    char what[128];

    memset(p, 0, sizeof *p);
    p->op = (int)mica_kit_int(fields, "op", 0);
    p->dirs = mica_kit_int(fields, "direction", 0) == 1 ? 2 : 1;
    p->skip = mica_kit_int(fields, "input_mode", 0) == 1;
    p->gates = mica__rnn_gates(p->op);
    if (L < 1 || L > 1024 || H < 1 || H > (1 << 20) || S < 1 ||
        S > INT32_MAX) {
        mica_kit_host->set_error(err, "layers (%" PRId64 "), hidden_size (%"
                                 PRId64 ") and max_seq_length (%" PRId64 ") "
                                 "must be positive (at most 1024, 2^20 and "
                                 "2^31-1)", L, H, S);
        return 0;
    }
    p->layers = (int32_t)L;
    p->hidden = (int32_t)H;
    p->max_seq = (int32_t)S;
    GH = p->gates * H;
    LD = L * p->dirs;
    first = p->skip ? 1 : 0;
    nw = (L - first) * p->dirs;
    if (!check_count("weights", w, nw, p->skip, err))
        return 0;
    /* E: H in skip mode, else from the first input matrix. */
    p->input_size = H;
    if (!p->skip) {
        const mica_weights_t *w0 = w->data;
        if (w0->count <= 0 || w0->count % GH) {
            mica_kit_host->set_error(err, "weights[0] (layer 0, forward) has "
                                     "%" PRId64 " values, not a positive "
                                     "multiple of %s", w0->count,
                                     gates_text(p, 0, 0, what, sizeof what));
            return 0;
        }
        p->input_size = w0->count / GH;
    }
    for (k = 0; k < (int32_t)nw; k++) {
        in = mica__rnn_in_size(p, first + k / p->dirs);
        if (!check_entry(p, "weights", k, first,
                         &((const mica_weights_t *)w->data)[k], GH * in,
                         gates_text(p, in, 0, what, sizeof what), err))
            return 0;
    }
    if (!check_count("recurrent_weights", r, LD, 0, err))
        return 0;
    for (k = 0; k < (int32_t)LD; k++)
        if (!check_entry(p, "recurrent_weights", k, 0,
                         &((const mica_weights_t *)r->data)[k], GH * H,
                         gates_text(p, H, 1, what, sizeof what), err))
            return 0;
    gates_text(p, 0, 0, what, sizeof what);
    if (wb && !check_count("biases", wb, LD, 0, err))
        return 0;
    if (rb && !check_count("recurrent_biases", rb, LD, 0, err))
        return 0;
    for (k = 0; k < (int32_t)LD; k++)
        if ((wb && !check_entry(p, "biases", k, 0,
                                &((const mica_weights_t *)wb->data)[k], GH,
                                what, err)) ||
            (rb && !check_entry(p, "recurrent_biases", k, 0,
                                &((const mica_weights_t *)rb->data)[k], GH,
                                what, err)))
            return 0;
    p->w = w && w->count > 0 ? w->data : NULL;
    p->r = r->data;
    p->wb = wb ? wb->data : NULL;
    p->rb = rb ? rb->data : NULL;
    return 1;
}

/* ---- a run's shapes ------------------------------------------------------ */

mica_status_t mica__rnn_check_run(const mica__rnn_t *p,
                                  const mica_tensor_desc_t *in, int32_t nb_in,
                                  const void *const *inputs,
                                  mica__rnn_run_t *run, mica_error_t *err)
{
    const mica_dims_t *x = &in[0].dims;
    int32_t r = x->nb_dims, i, k;

    memset(run, 0, sizeof *run);
    if (r < 2)
        return MICA_KIT_FAIL(err, "input 0 (x) has rank %d, not 2 or more",
                             (int)r);
    run->batch = 1;
    for (k = 0; k < r - 2; k++)
        run->batch *= x->d[k];
    run->steps = x->d[r - 2];
    run->in_size = x->d[r - 1];
    run->dtype = in[0].dtype;
    if (run->in_size != p->input_size)
        return MICA_KIT_FAIL(err, "input 0 (x) has %" PRId64 " values per "
                             "step, expected %" PRId64, run->in_size,
                             p->input_size);
    if (run->steps > p->max_seq)
        return MICA_KIT_FAIL(err, "input 0 (x) has %" PRId64 " steps, more "
                             "than max_seq_length (%d)", run->steps,
                             (int)p->max_seq);
    /* An input left out has a NULL pointer. */
    for (i = MICA__RNN_IN_H; i < nb_in && i <= MICA__RNN_IN_LENS; i++) {
        const mica_dims_t *d = &in[i].dims;
        int want = i == MICA__RNN_IN_LENS ? r - 2 : r, same = d->nb_dims == want;
        if (!inputs[i])
            continue;
        for (k = 0; same && k < r - 2; k++)
            same = d->d[k] == x->d[k];
        if (same && i != MICA__RNN_IN_LENS)
            same = d->d[r - 2] == (int64_t)p->layers * p->dirs &&
                   d->d[r - 1] == p->hidden;
        if (!same)
            return MICA_KIT_FAIL(err, "input %d (%s) does not have the "
                                 "shape %s", (int)i,
                                 i == MICA__RNN_IN_H   ? "hidden"
                                 : i == MICA__RNN_IN_C ? "cell"
                                                       : "seq_lengths",
                                 i == MICA__RNN_IN_LENS
                                     ? "[N...] of input 0"
                                     : "[N..., layers x directions, "
                                       "hidden_size]");
        if (i == MICA__RNN_IN_H)
            run->has_h = 1;
        else if (i == MICA__RNN_IN_C)
            run->has_c = p->op == MICA__RNN_LSTM;
        else
            run->has_lens = 1;
    }
    return MICA_OK;
}

mica_status_t mica__rnn_check_lens(const int32_t *lens, int64_t batch,
                                   int64_t steps, mica_error_t *err)
{
    int64_t b;
    for (b = 0; b < batch; b++)
        if (lens[b] < 1 || lens[b] > steps)
            return MICA_KIT_FAIL(err, "seq_lengths[%" PRId64 "] is %d; every "
                                 "length must be within 1..%" PRId64
                                 " (the steps of input 0)", b, (int)lens[b],
                                 steps);
    return MICA_OK;
}

