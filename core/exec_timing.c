/*
 * core/exec_timing.c - timing an execution context's runs, for `mica
 * bench`: markers (the device's, core/base/device.h) around upload,
 * enqueue and download, and after every layer's enqueue; and, while
 * timing is on, outputs copied back into memory the device copies to
 * directly (pinned on CUDA), so that a timed download is one copy and
 * does not make the host wait.
 *
 * Off by default: x->timing stays NULL until mica_exec_set_timing, and
 * the hooks in exec_run.c and flow.c test that pointer and nothing else.
 * Layer markers come from a pool that grows to the most one enqueue has
 * needed (a loop's trips each take theirs), so a steady run creates none.
 */
#include <config.h>

#include "exec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct mica__timing {
    uint32_t what;              /* MICA_TIMING_* bits now */
    void *origin;               /* recorded when timing was turned on */
    void *stage[6];             /* start and end of the three stages */
    int32_t stage_ran[3];       /* recorded since timing was turned on */
    void **marks;               /* layer markers of the last enqueue */
    int32_t *mark_layer;        /* the layer each one follows */
    int32_t nb_marks, cap_marks;
    unsigned char *pinned;      /* per network output: out_data from
                                   dev->host_alloc */
};

static mica_status_t nomem(mica_exec_t *x)
{
    return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
}

void mica__timing_free(mica_exec_t *x)
{
    mica__timing_t *t = x->timing;
    int32_t i;

    if (!t)
        return;
    for (i = 0; i < 6; i++)
        if (t->stage[i])
            x->dev->marker_destroy(t->stage[i]);
    if (t->origin)
        x->dev->marker_destroy(t->origin);
    for (i = 0; i < t->cap_marks; i++)
        if (t->marks[i])
            x->dev->marker_destroy(t->marks[i]);
    for (i = 0; x->out_data && t->pinned && i < x->e->nb_outputs; i++)
        if (t->pinned[i] && x->out_data[i]) {
            x->dev->host_free(x->out_data[i]);
            x->out_data[i] = NULL;
            x->out_cap[i] = 0;
        }
    free(t->marks);
    free(t->mark_layer);
    free(t->pinned);
    free(t);
    x->timing = NULL;
}

/* The state and the stage markers, made on first use. */
static mica_status_t make(mica_exec_t *x)
{
    mica__timing_t *t = calloc(1, sizeof *t);
    mica_status_t st;
    int32_t i;

    if (!t)
        return nomem(x);
    x->timing = t;
    t->pinned = calloc((size_t)x->e->nb_outputs + 1, sizeof *t->pinned);
    if (!t->pinned)
        return nomem(x);
    if ((st = x->dev->marker_create(x->ctx, &t->origin)) != MICA_OK)
        return st;
    for (i = 0; i < 6; i++)
        if ((st = x->dev->marker_create(x->ctx, &t->stage[i])) != MICA_OK)
            return st;
    return MICA_OK;
}

mica_status_t mica_exec_set_timing(mica_exec_t *x, uint32_t what)
{
    mica_status_t st;

    if (what & ~(MICA_TIMING_STAGES | MICA_TIMING_LAYERS))
        return mica__fail(x->ctx, MICA_ERR_INVALID, "timing: unknown bits "
                          "0x%x (MICA_TIMING_STAGES, MICA_TIMING_LAYERS)",
                          what);
    if (!what) {
        if (x->timing)
            x->timing->what = 0;
        return MICA_OK;
    }
    if (!x->timing && (st = make(x)) != MICA_OK) {
        mica__timing_free(x);
        return st;
    }
    memset(x->timing->stage_ran, 0, sizeof x->timing->stage_ran);
    x->timing->nb_marks = 0;
    x->timing->what = what;
    if ((st = x->dev->marker_record(x->ctx, x->timing->origin, x->stream))
        != MICA_OK)
        return st;
    return x->dev->sync(x->ctx, x->stream);
}

mica_status_t mica__timing_stage(mica_exec_t *x, int32_t stage, int32_t end)
{
    mica__timing_t *t = x->timing;

    if (!t->what)
        return MICA_OK;
    if (end)
        t->stage_ran[stage] = 1;
    else if (stage == MICA__STAGE_ENQUEUE)
        t->nb_marks = 0;
    return x->dev->marker_record(x->ctx, t->stage[2 * stage + end],
                                 x->stream);
}

int mica__timing_layers(const mica_exec_t *x)
{
    return x->timing && (x->timing->what & MICA_TIMING_LAYERS);
}

mica_status_t mica__timing_layer(mica_exec_t *x, int32_t s)
{
    mica__timing_t *t = x->timing;
    mica_status_t st;

    if (!(t->what & MICA_TIMING_LAYERS))
        return MICA_OK;
    if (t->nb_marks == t->cap_marks) {
        int32_t cap = t->cap_marks ? 2 * t->cap_marks : 64;
        void **m = realloc(t->marks, (size_t)cap * sizeof *m);
        int32_t *l;
        if (!m)
            return nomem(x);
        t->marks = m;
        if (!(l = realloc(t->mark_layer, (size_t)cap * sizeof *l)))
            return nomem(x);
        t->mark_layer = l;
        memset(t->marks + t->cap_marks, 0,
               (size_t)(cap - t->cap_marks) * sizeof *m);
        t->cap_marks = cap;
    }
    if (!t->marks[t->nb_marks] &&
        (st = x->dev->marker_create(x->ctx, &t->marks[t->nb_marks])) !=
            MICA_OK)
        return st;
    t->mark_layer[t->nb_marks] = s;
    return x->dev->marker_record(x->ctx, t->marks[t->nb_marks++], x->stream);
}

mica_status_t mica_exec_times(mica_exec_t *x, mica_exec_times_t *out)
{
    mica__timing_t *t = x->timing;
    mica_exec_times_t r;
    double *v[6];
    int32_t i;
    mica_status_t st;

    if (!t || !t->what)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "timing is off: turn it "
                          "on with mica_exec_set_timing first");
    if (!out || out->struct_size < offsetof(mica_exec_times_t, upload_start))
        return mica__fail(x->ctx, MICA_ERR_INVALID, "mica_exec_times: "
                          "struct_size not set");
    memset(&r, 0, sizeof r);
    r.struct_size = out->struct_size;
    r.what = t->what;
    v[0] = &r.upload_start;
    v[1] = &r.upload_end;
    v[2] = &r.enqueue_start;
    v[3] = &r.enqueue_end;
    v[4] = &r.download_start;
    v[5] = &r.download_end;
    for (i = 0; i < 6; i++) {
        *v[i] = -1;
        if (t->stage_ran[i / 2] &&
            (st = x->dev->marker_elapsed(x->ctx, t->origin, t->stage[i],
                                         v[i])) != MICA_OK)
            return st;
    }
    memcpy(out, &r, out->struct_size < sizeof r ? out->struct_size
                                                : sizeof r);
    return MICA_OK;
}

mica_status_t mica_exec_layer_times(mica_exec_t *x, double *ms, int32_t *runs,
                                    int32_t nb)
{
    mica__timing_t *t = x->timing;
    void *prev;
    int32_t i;
    mica_status_t st;

    if (!t || !(t->what & MICA_TIMING_LAYERS))
        return mica__fail(x->ctx, MICA_ERR_INVALID, "layer timing is off: "
                          "turn it on with mica_exec_set_timing(exec, "
                          "MICA_TIMING_LAYERS)");
    if (nb != x->e->nb_layers)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "layer times: room for "
                          "%d layers, the engine has %d", (int)nb,
                          (int)x->e->nb_layers);
    for (i = 0; i < nb; i++) {
        ms[i] = 0;
        if (runs)
            runs[i] = 0;
    }
    if (!t->stage_ran[MICA__STAGE_ENQUEUE])
        return MICA_OK;
    /* Each marker closes its layer's span, opened by the one before (the
     * enqueue's start for the first). */
    prev = t->stage[2 * MICA__STAGE_ENQUEUE];
    for (i = 0; i < t->nb_marks; i++) {
        double d;
        if ((st = x->dev->marker_elapsed(x->ctx, prev, t->marks[i], &d)) !=
            MICA_OK)
            return st;
        ms[t->mark_layer[i]] += d > 0 ? d : 0;
        if (runs)
            runs[t->mark_layer[i]]++;
        prev = t->marks[i];
    }
    return MICA_OK;
}

mica_status_t mica__timing_output_room(mica_exec_t *x, int32_t i,
                                       size_t bytes)
{
    mica__timing_t *t = x->timing;
    int pin = t && t->what;
    void *p;
    mica_status_t st;

    if (x->out_data[i] && x->out_cap[i] >= bytes &&
        (!pin || (t && t->pinned[i])))
        return MICA_OK;
    if (!pin && !(t && t->pinned[i])) {
        if (!(p = realloc(x->out_data[i], bytes ? bytes : 1)))
            goto fail;
    } else {
        /* Contents need not survive: the download overwrites them. */
        if (pin) {
            if ((st = x->dev->host_alloc(x->ctx, bytes, &p)) != MICA_OK)
                return st;
        } else if (!(p = malloc(bytes ? bytes : 1))) {
            goto fail;
        }
        if (t->pinned[i])
            x->dev->host_free(x->out_data[i]);
        else
            free(x->out_data[i]);
        t->pinned[i] = (unsigned char)pin;
    }
    x->out_data[i] = p;
    x->out_cap[i] = bytes;
    return MICA_OK;
fail:
    return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory for "
                      "output '%s'", x->e->tensors[x->e->output_index[i]].name);
}

mica_status_t mica_engine_host_alloc(mica_engine_t *e, size_t bytes,
                                     void **out)
{
    *out = NULL;
    return e->dev->host_alloc(e->ctx, bytes, out);
}

void mica_engine_host_free(mica_engine_t *e, void *p)
{
    if (p)
        e->dev->host_free(p);
}
