/*
 * core/plan.c - the memory plan: one arena per engine and profile, buffers
 * reused by liveness.
 *
 * Every execution tensor and every workspace is a block with a lifetime in
 * execution steps: a network input lives from before the first step to its
 * last reader on the device; a layer's output from its producer to its
 * last reader (a network output to the end), stretched over the loops it
 * crosses (mica__control_lifetimes); a workspace only during its layer's
 * step, or its whole construct for a boundary layer.  The tensors of an
 * in-place chain (core/inplace.c) are one block.  Blocks are placed largest first at the lowest offset that
 * does not overlap any placed block whose lifetime overlaps (greedy by
 * size, as in TensorRT's and TFLite's planners).  Sizes are the profile's
 * largest; offsets are aligned to 256 bytes.
 */
#include <config.h>

#include "graph.h"

#include <stdlib.h>

#define ALIGN 256

typedef struct block {
    int64_t bytes;
    int32_t start, end;   /* lifetime, inclusive steps */
    int64_t offset;
    int64_t *target;      /* where to store the offset */
} block_t;

static int by_size_desc(const void *a, const void *b)
{
    const block_t *x = *(const block_t *const *)a, *y = *(const block_t *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->start - y->start;
}

static int by_offset(const void *a, const void *b)
{
    const block_t *x = *(const block_t *const *)a, *y = *(const block_t *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static int64_t align_up(int64_t n)
{
    return (n + ALIGN - 1) / ALIGN * ALIGN;
}

mica_status_t mica__plan_memory(mica_engine_t *e, int32_t k)
{
    mica__eprofile_t *p = &e->profiles[k];
    int32_t i, j, n = 0, nb = e->nb_tensors + e->nb_layers;
    block_t *blocks = calloc((size_t)(nb + 1), sizeof *blocks);
    block_t **sorted = calloc((size_t)(nb + 1), sizeof *sorted);
    block_t **live = calloc((size_t)(nb + 1), sizeof *live);
    mica_status_t st = MICA_OK;
    int64_t top = 0;

    if (!blocks || !sorted || !live) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        block_t *b = &blocks[n];
        p->offset[i] = -1;
        if (!t->need_e || t->alias >= 0)
            continue;
        b->bytes = align_up(p->bytes[i]);
        b->start = t->live_from;
        b->end = t->live_to;
        b->target = &p->offset[i];
        if (b->bytes > 0)
            n++;
        else
            p->offset[i] = 0;
    }
    for (i = 0; i < e->nb_layers; i++) {
        block_t *b = &blocks[n];
        const mica__layer_t *l = &e->layers[i];
        b->bytes = align_up(p->workspace[i]);
        b->start = b->end = i;
        if (l->construct >= 0 && l->info.role != MICA_ROLE_NONE) {
            /* A boundary layer works at several points of its construct. */
            b->start = e->constructs[l->construct].begin;
            b->end = e->constructs[l->construct].end - 1;
        }
        b->target = &p->workspace_offset[i];
        if (b->bytes > 0)
            n++;
        else
            p->workspace_offset[i] = 0;
    }
    /* An in-place chain is one block, its root's: the largest of its
     * tensors, from the first's birth to the last's death. */
    for (i = 0; i < e->nb_tensors; i++) {
        int32_t r;
        if (e->tensors[i].alias < 0 || !e->tensors[i].need_e)
            continue;
        r = mica__alias_root(e, i);
        for (j = 0; j < n && blocks[j].target != &p->offset[r]; j++)
            ;
        if (j == n) { /* the root had no bytes: the chain's first block */
            blocks[n].start = e->tensors[r].live_from;
            blocks[n].end = e->tensors[r].live_to;
            blocks[n].target = &p->offset[r];
            n++;
        }
        if (align_up(p->bytes[i]) > blocks[j].bytes)
            blocks[j].bytes = align_up(p->bytes[i]);
        if (e->tensors[i].live_to > blocks[j].end)
            blocks[j].end = e->tensors[i].live_to;
    }
    for (i = 0; i < n; i++)
        sorted[i] = &blocks[i];
    qsort(sorted, (size_t)n, sizeof *sorted, by_size_desc);
    for (i = 0; i < n; i++) {
        block_t *b = sorted[i];
        int32_t nl = 0;
        int64_t offset = 0;
        for (j = 0; j < i; j++) {
            block_t *q = sorted[j];
            if (q->start <= b->end && b->start <= q->end)
                live[nl++] = q;
        }
        qsort(live, (size_t)nl, sizeof *live, by_offset);
        for (j = 0; j < nl; j++) {
            if (live[j]->offset >= offset + b->bytes)
                break; /* the gap before live[j] fits */
            if (live[j]->offset + live[j]->bytes > offset)
                offset = live[j]->offset + live[j]->bytes;
        }
        b->offset = offset;
        *b->target = offset;
        if (offset + b->bytes > top)
            top = offset + b->bytes;
    }
    p->arena_bytes = top;
    for (i = 0; i < e->nb_tensors; i++)
        if (e->tensors[i].alias >= 0)
            p->offset[i] = p->offset[mica__alias_root(e, i)];
done:
    free(blocks);
    free(sorted);
    free(live);
    return st;
}
