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
 * in-place chain (core/inplace.c) are one block.  Blocks are placed
 * largest first at the lowest offset that does not overlap any placed
 * block whose lifetime overlaps (greedy by size, as in TensorRT's and
 * TFLite's planners).  Sizes are the profile's largest; offsets are
 * aligned to 256 bytes.
 *
 * The placed blocks whose lifetimes overlap the next one are found
 * through a tree over the blocks sorted by first step, each node holding
 * the latest last step of the placed blocks below it: a query costs
 * O((k + 1) log n) for k overlapping blocks, so a chain of 100,000 layers
 * is planned in linear-logarithmic time, not quadratic (issue 15).
 *
 * Where thousands of blocks live at once (a DAG whose skip connections
 * span the network), k is large for every block and the greedy search
 * is quadratic after all (100,000 layers: minutes).  So the greedy
 * placement gives up once it has looked at more than WORK_PER_BLOCK
 * overlapping blocks per block on average, and the plan is made again
 * by allocating in execution order instead: each block, at its first
 * step (the largest of a step first), takes the lowest free range that
 * holds it (first fit over the free ranges, a treap by offset that keeps
 * the longest range below each node), and gives it back after its last
 * step (merged with its free neighbours), in O(n log n) (issue 25).
 */
#include <config.h>

#include "graph.h"

#include <limits.h>
#include <stdlib.h>

#define ALIGN 256
/* The largest arena: sums of blocks of at most 2^48 bytes stay far from
 * overflowing below it. */
#define MICA__MAX_ARENA_BYTES ((int64_t)1 << 62)
/* The greedy placement's budget (see the top of the file). */
#define WORK_PER_BLOCK 64

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

static int by_start(const void *a, const void *b)
{
    const block_t *x = *(const block_t *const *)a, *y = *(const block_t *const *)b;
    return (x->start > y->start) - (x->start < y->start);
}

/* The placed blocks by first step (see the top of the file). */
typedef struct live_tree {
    block_t **by_start;   /* every block, by first step */
    int32_t n, size;      /* blocks; leaves (a power of two >= n) */
    int32_t *max_end;     /* per node: latest end of a placed block, or
                             INT32_MIN */
} live_tree_t;

static int tree_init(live_tree_t *t, block_t **sorted, int32_t n)
{
    int32_t i;
    t->n = n;
    t->size = 1;
    while (t->size < n)
        t->size *= 2;
    t->by_start = malloc(sizeof *t->by_start * (size_t)(n + 1));
    t->max_end = malloc(sizeof *t->max_end * (size_t)(2 * t->size));
    if (!t->by_start || !t->max_end)
        return -1;
    for (i = 0; i < n; i++)
        t->by_start[i] = sorted[i];
    qsort(t->by_start, (size_t)n, sizeof *t->by_start, by_start);
    for (i = 0; i < n; i++)
    for (i = 0; i < 2 * t->size; i++)
        t->max_end[i] = INT32_MIN;
    return 0;
}

/* Mark the block at leaf i placed. */
static void tree_place(live_tree_t *t, int32_t i, int32_t end)
{
    int32_t node = t->size + i;
    t->max_end[node] = end;
    for (node /= 2; node >= 1; node /= 2) {
        int32_t a = t->max_end[2 * node], b = t->max_end[2 * node + 1];
        t->max_end[node] = a > b ? a : b;
    }
}

/* Append to live[*nl] the placed blocks of leaves [lo, hi) under node
 * that start before `limit` (a leaf index) and end at or after `from`. */
static void tree_query(const live_tree_t *t, int32_t node, int32_t lo,
                       int32_t hi, int32_t limit, int32_t from,
                       block_t **live, int32_t *nl)
{
    if (lo >= limit || t->max_end[node] < from)
        return;
    if (hi - lo == 1) {
        live[(*nl)++] = t->by_start[lo];
        return;
    }
    tree_query(t, 2 * node, lo, (lo + hi) / 2, limit, from, live, nl);
    tree_query(t, 2 * node + 1, (lo + hi) / 2, hi, limit, from, live, nl);
}

/* The number of blocks (by first step) that start at or before `step`. */
static int32_t starting_by(const live_tree_t *t, int32_t step)
{
    int32_t lo = 0, hi = t->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t->by_start[mid]->start <= step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- allocation in execution order (the fallback) ------------------------ */

/* Free ranges [off, off + len), a treap by offset. */
typedef struct fnode {
    int64_t off, len, maxlen; /* maxlen: the longest range in the subtree */
    uint32_t pri;
    int32_t l, r;
} fnode_t;

typedef struct ftree {
    fnode_t *n;
    int32_t root, unused;     /* unused: a stack of recycled nodes, by l */
    int32_t next;             /* nodes handed out so far */
    uint32_t seed;
    int64_t end;              /* the allocated region's end */
} ftree_t;

static int64_t fmax_len(const ftree_t *t, int32_t i)
{
    return i < 0 ? 0 : t->n[i].maxlen;
}

static void fupdate(ftree_t *t, int32_t i)
{
    int64_t m = t->n[i].len, a = fmax_len(t, t->n[i].l),
            b = fmax_len(t, t->n[i].r);
    t->n[i].maxlen = m > a ? (m > b ? m : b) : (a > b ? a : b);
}

/* Nodes of i by offset: below `off` into *a, the others into *b. */
static void fsplit(ftree_t *t, int32_t i, int64_t off, int32_t *a, int32_t *b)
{
    if (i < 0) {
        *a = *b = -1;
    } else if (t->n[i].off < off) {
        fsplit(t, t->n[i].r, off, &t->n[i].r, b);
        fupdate(t, i);
        *a = i;
    } else {
        fsplit(t, t->n[i].l, off, a, &t->n[i].l);
        fupdate(t, i);
        *b = i;
    }
}

static int32_t fmerge(ftree_t *t, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return a < 0 ? b : a;
    if (t->n[a].pri > t->n[b].pri) {
        t->n[a].r = fmerge(t, t->n[a].r, b);
        fupdate(t, a);
        return a;
    }
    t->n[b].l = fmerge(t, a, t->n[b].l);
    fupdate(t, b);
    return b;
}

static int32_t fnew(ftree_t *t, int64_t off, int64_t len)
{
    int32_t i = t->unused;
    if (i >= 0)
        t->unused = t->n[i].l;
    else
        i = t->next++;
    t->seed = t->seed * 1103515245u + 12345u;
    t->n[i].off = off;
    t->n[i].len = t->n[i].maxlen = len;
    t->n[i].pri = t->seed;
    t->n[i].l = t->n[i].r = -1;
    return i;
}

static void fdrop(ftree_t *t, int32_t i)
{
    t->n[i].l = t->unused;
    t->unused = i;
}

/* Give [off, off + len) back: merged with the free ranges around it, or
 * the region's end lowered when it reaches it. */
static void ffree(ftree_t *t, int64_t off, int64_t len)
{
    int32_t a, b, p, s, rest;

    fsplit(t, t->root, off, &a, &b);
    for (p = a; p >= 0 && t->n[p].r >= 0; p = t->n[p].r)
        ;
    if (p >= 0 && t->n[p].off + t->n[p].len == off) {
        fsplit(t, a, t->n[p].off, &a, &rest);
        off = t->n[p].off;
        len += t->n[p].len;
        fdrop(t, p);
    }
    for (s = b; s >= 0 && t->n[s].l >= 0; s = t->n[s].l)
        ;
    if (s >= 0 && off + len == t->n[s].off) {
        fsplit(t, b, t->n[s].off + 1, &rest, &b);
        len += t->n[s].len;
        fdrop(t, s);
    }
    if (off + len == t->end) {
        t->end = off;
        t->root = fmerge(t, a, b);
    } else {
        t->root = fmerge(t, fmerge(t, a, fnew(t, off, len)), b);
    }
}

/* The lowest offset of a free range of `len` bytes, taken. */
static int64_t falloc(ftree_t *t, int64_t len)
{
    int32_t i = t->root, a, b, c;
    int64_t off, rest;

    if (fmax_len(t, i) < len) {
        off = t->end;
        t->end += len;
        return off;
    }
    for (;;) {
        if (fmax_len(t, t->n[i].l) >= len)
            i = t->n[i].l;
        else if (t->n[i].len >= len)
            break;
        else
            i = t->n[i].r;
    }
    off = t->n[i].off;
    rest = t->n[i].len - len;
    fsplit(t, t->root, off, &a, &b);
    fsplit(t, b, off + 1, &c, &b);
    fdrop(t, c);
    if (rest > 0)
        b = fmerge(t, fnew(t, off + len, rest), b);
    t->root = fmerge(t, a, b);
    return off;
}

static int by_start_size(const void *a, const void *b)
{
    const block_t *x = *(const block_t *const *)a, *y = *(const block_t *const *)b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

static int by_end(const void *a, const void *b)
{
    const block_t *x = *(const block_t *const *)a, *y = *(const block_t *const *)b;
    return (x->end > y->end) - (x->end < y->end);
}

/* The fallback: blocks[0..n-1] placed in execution order; the arena's
 * size in *top, or -1 without memory. */
static int plan_in_order(block_t *blocks, int32_t n, int64_t *top)
{
    block_t **starts = malloc(sizeof *starts * (size_t)(n + 1));
    block_t **ends = malloc(sizeof *ends * (size_t)(n + 1));
    ftree_t t = {0};
    int32_t i, j = 0;

    t.n = malloc(sizeof *t.n * (size_t)(n + 2));
    t.root = t.unused = -1;
    t.seed = 25;
    if (!starts || !ends || !t.n) {
        free(starts);
        free(ends);
        free(t.n);
        return -1;
    }
    for (i = 0; i < n; i++)
        starts[i] = ends[i] = &blocks[i];
    qsort(starts, (size_t)n, sizeof *starts, by_start_size);
    qsort(ends, (size_t)n, sizeof *ends, by_end);
    *top = 0;
    for (i = 0; i < n; i++) {
        block_t *b = starts[i];
        /* what died before this block's first step is free again */
        for (; j < n && ends[j]->end < b->start; j++)
            if (ends[j]->offset >= 0)
                ffree(&t, ends[j]->offset, ends[j]->bytes);
        if (b->bytes > MICA__MAX_ARENA_BYTES - t.end) {
            *top = MICA__MAX_ARENA_BYTES + 1; /* the caller says so */
            break;
        }
        b->offset = falloc(&t, b->bytes);
        *b->target = b->offset;
        if (t.end > *top)
            *top = t.end;
    }
    free(starts);
    free(ends);
    free(t.n);
    return 0;
}

mica_status_t mica__plan_memory(mica_engine_t *e, int32_t k)
{
    mica__eprofile_t *p = &e->profiles[k];
    int32_t i, j, n = 0, nb = e->nb_tensors + e->nb_layers;
    block_t *blocks = calloc((size_t)(nb + 1), sizeof *blocks);
    block_t **sorted = calloc((size_t)(nb + 1), sizeof *sorted);
    block_t **live = calloc((size_t)(nb + 1), sizeof *live);
    int32_t *leaf = calloc((size_t)(nb + 1), sizeof *leaf);
    int32_t *block_of = calloc((size_t)e->nb_tensors + 1, sizeof *block_of);
    live_tree_t tree = {0};
    mica_status_t st = MICA_OK;
    int64_t top = 0, work = 0, budget;

    if (!blocks || !sorted || !live || !leaf || !block_of) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    for (i = 0; i < e->nb_tensors; i++) {
        const mica__tensor_t *t = &e->tensors[i];
        block_t *b = &blocks[n];
        p->offset[i] = -1;
        block_of[i] = -1;
        if (!t->need_e || t->alias >= 0 || t->const_host)
            continue; /* a bound constant lives in the engine's weights */
        b->bytes = align_up(p->bytes[i]);
        b->start = t->live_from;
        b->end = t->live_to;
        b->target = &p->offset[i];
        if (b->bytes > 0)
            block_of[i] = n++;
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
        j = block_of[r];
        if (j < 0) { /* the root had no bytes: the chain's first block */
            blocks[n].start = e->tensors[r].live_from;
            blocks[n].end = e->tensors[r].live_to;
            blocks[n].target = &p->offset[r];
            block_of[r] = j = n++;
        }
        if (align_up(p->bytes[i]) > blocks[j].bytes)
            blocks[j].bytes = align_up(p->bytes[i]);
        if (e->tensors[i].live_to > blocks[j].end)
            blocks[j].end = e->tensors[i].live_to;
    }
    for (i = 0; i < n; i++)
        sorted[i] = &blocks[i];
    if (tree_init(&tree, sorted, n) != 0) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto done;
    }
    /* each block's leaf in the tree */
    for (i = 0; i < n; i++)
        leaf[tree.by_start[i] - blocks] = i;
    qsort(sorted, (size_t)n, sizeof *sorted, by_size_desc);
    budget = (int64_t)WORK_PER_BLOCK * n + 65536;
    for (i = 0; i < n; i++)
        blocks[i].offset = -1;
    for (i = 0; i < n; i++) {
        block_t *b = sorted[i];
        int32_t nl = 0;
        int64_t offset = 0, end;
        tree_query(&tree, 1, 0, tree.size, starting_by(&tree, b->end),
                   b->start, live, &nl);
        if ((work += nl) > budget) {
            /* thousands live at once: allocate in execution order */
            for (j = 0; j < n; j++)
                blocks[j].offset = -1;
            if (plan_in_order(blocks, n, &top) != 0) {
                st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host "
                                "memory");
                goto done;
            }
            if (top > MICA__MAX_ARENA_BYTES) {
                st = mica__fail(e->ctx, MICA_ERR_INVALID, "profile %d: the "
                                "memory plan needs more than 2^62 bytes",
                                (int)k);
                goto done;
            }
            mica__log(e->ctx, MICA_LOG_INFO, "profile %d: %d blocks "
                      "planned in execution order (too many live at once "
                      "for the greedy placement): arena %lld bytes",
                      (int)k, (int)n, (long long)top);
            break;
        }
        qsort(live, (size_t)nl, sizeof *live, by_offset);
        for (j = 0; j < nl; j++) {
            if (live[j]->offset >= offset + b->bytes)
                break; /* the gap before live[j] fits */
            if (live[j]->offset + live[j]->bytes > offset)
                offset = live[j]->offset + live[j]->bytes;
        }
        if (mica__size_add(offset, b->bytes, &end) != 0 ||
            end > MICA__MAX_ARENA_BYTES) {
            st = mica__fail(e->ctx, MICA_ERR_INVALID, "profile %d: the "
                            "memory plan needs more than 2^62 bytes",
                            (int)k);
            goto done;
        }
        b->offset = offset;
        *b->target = offset;
        tree_place(&tree, leaf[b - blocks], b->end);
        if (end > top)
            top = end;
    }
    p->arena_bytes = top;
    for (i = 0; i < e->nb_tensors; i++)
        if (e->tensors[i].alias >= 0)
            p->offset[i] = p->offset[mica__alias_root(e, i)];
done:
    free(blocks);
    free(sorted);
    free(live);
    free(leaf);
    free(block_of);
    free(tree.by_start);
    free(tree.max_end);
    return st;
}
