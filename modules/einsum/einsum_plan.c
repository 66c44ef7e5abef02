/*
 * modules/einsum/einsum_plan.c - Einsum on CUDA: the order of pairwise
 * contractions, and the plan that runs each as a batched GEMM.
 *
 * Two operands X and Y (inputs or intermediates) contract into
 * C[batch][M][N] = X[batch][M][K] Y[batch][K][N], where (each a list of
 * labels, in X's order but N in Y's):
 *   batch  labels of both that are still needed (in the output or in an
 *          operand not contracted yet)
 *   M, N   labels of one of them, still needed
 *   K      labels of both, needed no more (summed by the GEMM)
 * Labels of one operand that are needed no more are summed before, and
 * diagonals and broadcast dimensions resolved, by a gather into a
 * contiguous copy.  An operand whose dimensions already are batch+M+K
 * (or batch+K+M: the GEMM reads it transposed) is used in place, without
 * a copy; so is the output when its labels are batch+M+N.  Both role
 * assignments (X, Y) and (Y, X) are tried and the one with fewer copies
 * kept: `bhqd,bhkd->bhqk` is one cublasGemmStridedBatchedEx call.
 *
 * Intermediates live in the layer's workspace, one after the other (no
 * reuse), cuBLAS's scratch after them.  The order of contractions is
 * chosen once for the profile's largest sizes, so that the workspace
 * computed for them holds every run's intermediates (each one's size
 * grows with the dimensions).
 */
#include <config.h>

#include <cuda_runtime_api.h>
#include <string.h>

#include "mica/kit_cuda.h"

#include "einsum.h"

/* An operand: an input (in place, maybe with diagonals and broadcast
 * dimensions) or an intermediate (contiguous, full sizes, distinct
 * labels). */
typedef struct opnd {
    int32_t nd;
    int8_t lab[MICA__EIN_MAX_LD];
    int64_t dim[MICA__EIN_MAX_LD];
    int32_t input;  /* >= 0: that input; -1: an intermediate */
    int32_t is_out; /* the layer's output */
    size_t offset;  /* an intermediate's place in the workspace */
} opnd_t;

/* One pass over the plan: sizing (run 0) or running it (run 1). */
typedef struct ctx {
    const mica__ein_bind_t *b;
    const int64_t *size;
    size_t esize;
    int force; /* sizing: assume every copy */
    int run;
    size_t used;
    mica_dtype_t dtype;
    const void *const *inputs;
    void *output;
    char *ws;
    size_t ws_size;
    void *handle, *stream;
    mica_error_t *err;
} ctx_t;

static size_t take(ctx_t *c, size_t bytes)
{
    size_t off = (c->used + 255) / 256 * 256;
    c->used = off + bytes;
    return off;
}

static int has(const int8_t *lab, int32_t n, int l)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (lab[i] == l)
            return 1;
    return 0;
}

static int64_t volume(const ctx_t *c, const int8_t *lab, int32_t n)
{
    int64_t v = 1;
    int32_t i;
    for (i = 0; i < n; i++)
        v *= c->size[lab[i]];
    return v;
}

static const void *pointer(const ctx_t *c, const opnd_t *o)
{
    if (o->is_out)
        return c->output;
    if (o->input >= 0)
        return c->inputs[o->input];
    return c->ws + o->offset;
}

/* dst (labels dl[0..nd)) = src with its other labels summed. */
static mica_status_t gather(ctx_t *c, const opnd_t *src, const int8_t *dl,
                            int32_t nd, void *dst)
{
    int64_t st[MICA__EIN_LABELS], s = 1;
    int8_t seen[MICA__EIN_LABELS];
    mica__ein_gather_t g;
    int32_t d;

    if (!c->run)
        return MICA_OK;
    memset(st, 0, sizeof st);
    memset(seen, 0, sizeof seen);
    memset(&g, 0, sizeof g);
    for (d = src->nd - 1; d >= 0; d--) {
        if (src->dim[d] != 1)
            st[src->lab[d]] += s;
        s *= src->dim[d];
    }
    g.nd = nd;
    g.n_out = g.n_red = 1;
    for (d = 0; d < nd; d++) {
        g.osize[d] = c->size[dl[d]];
        g.ostride[d] = st[dl[d]];
        g.n_out *= g.osize[d];
    }
    for (d = 0; d < src->nd; d++) {
        int l = src->lab[d];
        if (has(dl, nd, l) || seen[l])
            continue;
        seen[l] = 1;
        g.rsize[g.nr] = c->size[l];
        g.rstride[g.nr] = st[l];
        g.n_red *= c->size[l];
        g.nr++;
    }
    if (g.n_out == 0)
        return MICA_OK;
    return mica__ein_gather_cuda(c->dtype, &g, pointer(c, src), dst,
                                 c->stream, c->err);
}

/* Whether operand o is stored exactly as labels seq[0..n) at full size. */
static int stored_as(const ctx_t *c, const opnd_t *o, const int8_t *seq,
                     int32_t n)
{
    int32_t d;
    if (o->nd != n)
        return 0;
    for (d = 0; d < n; d++)
        if (o->lab[d] != seq[d] || o->dim[d] != c->size[seq[d]])
            return 0;
    return 1;
}

/* a then b then (optionally) e into out; the length. */
static int32_t cat3(int8_t *out, const int8_t *a, int32_t na,
                    const int8_t *b, int32_t nb, const int8_t *e, int32_t ne)
{
    memcpy(out, a, (size_t)na);
    memcpy(out + na, b, (size_t)nb);
    memcpy(out + na + nb, e, (size_t)ne);
    return na + nb + ne;
}

/* The groups of a contraction with X first; -1 if one is too long. */
typedef struct groups {
    int8_t bt[MICA__EIN_LABELS], m[MICA__EIN_LABELS], k[MICA__EIN_LABELS],
        n[MICA__EIN_LABELS];
    int32_t nbt, nm, nk, nn;
    int8_t xn[MICA__EIN_LABELS], xt[MICA__EIN_LABELS];
    int8_t yn[MICA__EIN_LABELS], yt[MICA__EIN_LABELS];
    int8_t cs[MICA__EIN_LABELS];
    int32_t ncs;
    int x_direct, x_trans, y_direct, y_trans, c_out, copies;
} groups_t;

static void make_groups(const ctx_t *c, const opnd_t *x, const opnd_t *y,
                        const uint8_t *kept, int final, groups_t *g)
{
    int8_t seen[MICA__EIN_LABELS];
    int32_t d;

    memset(g, 0, sizeof *g);
    memset(seen, 0, sizeof seen);
    for (d = 0; d < x->nd; d++) {
        int l = x->lab[d], in_y = has(y->lab, y->nd, l);
        if (seen[l])
            continue;
        seen[l] = 1;
        if (in_y && kept[l])
            g->bt[g->nbt++] = (int8_t)l;
        else if (kept[l])
            g->m[g->nm++] = (int8_t)l;
        else if (in_y)
            g->k[g->nk++] = (int8_t)l;
    }
    for (d = 0; d < y->nd; d++) {
        int l = y->lab[d];
        if (!has(x->lab, x->nd, l) && kept[l] && !has(g->n, g->nn, l))
            g->n[g->nn++] = (int8_t)l;
    }
    cat3(g->xn, g->bt, g->nbt, g->m, g->nm, g->k, g->nk);
    cat3(g->xt, g->bt, g->nbt, g->k, g->nk, g->m, g->nm);
    cat3(g->yn, g->bt, g->nbt, g->k, g->nk, g->n, g->nn);
    cat3(g->yt, g->bt, g->nbt, g->n, g->nn, g->k, g->nk);
    g->ncs = cat3(g->cs, g->bt, g->nbt, g->m, g->nm, g->n, g->nn);
    g->x_direct = !c->force &&
                  (stored_as(c, x, g->xn, g->nbt + g->nm + g->nk) ||
                   stored_as(c, x, g->xt, g->nbt + g->nm + g->nk));
    g->x_trans = g->x_direct &&
                 !stored_as(c, x, g->xn, g->nbt + g->nm + g->nk);
    g->y_direct = !c->force &&
                  (stored_as(c, y, g->yn, g->nbt + g->nk + g->nn) ||
                   stored_as(c, y, g->yt, g->nbt + g->nk + g->nn));
    g->y_trans = g->y_direct &&
                 !stored_as(c, y, g->yn, g->nbt + g->nk + g->nn);
    g->c_out = final && !c->force && g->ncs == c->b->out_rank &&
               memcmp(g->cs, c->b->out, (size_t)g->ncs) == 0;
    g->copies = !g->x_direct + !g->y_direct + (final && !g->c_out);
}

/* Contract operands a and b into *r. */
static mica_status_t contract(ctx_t *c, const opnd_t *a, const opnd_t *b,
                              const uint8_t *kept, int final, opnd_t *r)
{
    groups_t g[2], *p;
    const opnd_t *x, *y;
    const void *xp, *yp;
    void *cp;
    int64_t bt, m, n, k;
    int32_t d;
    mica_status_t st;

    make_groups(c, a, b, kept, final, &g[0]);
    make_groups(c, b, a, kept, final, &g[1]);
    p = g[1].copies < g[0].copies ? &g[1] : &g[0];
    x = p == &g[0] ? a : b;
    y = p == &g[0] ? b : a;
    if (p->ncs > MICA__EIN_MAX_LD || p->nbt + p->nm + p->nk >
        MICA__EIN_MAX_LD || p->nbt + p->nk + p->nn > MICA__EIN_MAX_LD)
        return MICA_KIT_FAIL(c->err, "Einsum on CUDA: an intermediate of "
                             "more than %d dimensions", MICA__EIN_MAX_LD);
    bt = volume(c, p->bt, p->nbt);
    m = volume(c, p->m, p->nm);
    n = volume(c, p->n, p->nn);
    k = volume(c, p->k, p->nk);
    xp = c->run ? pointer(c, x) : NULL;
    yp = c->run ? pointer(c, y) : NULL;
    if (!p->x_direct) {
        size_t off = take(c, (size_t)(bt * m * k) * c->esize);
        xp = c->run ? c->ws + off : NULL;
        if ((st = gather(c, x, p->xn, p->nbt + p->nm + p->nk,
                         (void *)xp)) != MICA_OK)
            return st;
    }
    if (!p->y_direct) {
        size_t off = take(c, (size_t)(bt * k * n) * c->esize);
        yp = c->run ? c->ws + off : NULL;
        if ((st = gather(c, y, p->yn, p->nbt + p->nk + p->nn,
                         (void *)yp)) != MICA_OK)
            return st;
    }
    memset(r, 0, sizeof *r);
    r->input = -1;
    r->nd = p->ncs;
    for (d = 0; d < p->ncs; d++) {
        r->lab[d] = p->cs[d];
        r->dim[d] = c->size[p->cs[d]];
    }
    if (p->c_out) {
        r->is_out = 1;
        cp = c->output;
    } else {
        r->offset = take(c, (size_t)(bt * m * n) * c->esize);
        cp = c->run ? c->ws + r->offset : NULL;
    }
    if (!c->run)
        return MICA_OK;
    if (c->used > c->ws_size - MICA__EIN_CUBLAS_WORKSPACE)
        return MICA_KIT_FAIL(c->err, "Einsum on CUDA: the workspace of %zu "
                             "bytes is short (a bug)", c->ws_size);
    return mica__ein_gemm(c->handle, c->dtype, p->x_trans, p->y_trans, bt, m,
                          n, k, xp, yp, cp,
                          c->ws + c->ws_size - MICA__EIN_CUBLAS_WORKSPACE,
                          MICA__EIN_CUBLAS_WORKSPACE, c->stream, c->err);
}

/* The whole plan: contractions in `order`, then the output. */
static mica_status_t walk(ctx_t *c, const mica__ein_order_t *order,
                          const int64_t (*dims)[MICA_MAX_DIMS])
{
    opnd_t ops[2 * MICA__EIN_MAX_IN];
    uint8_t live[2 * MICA__EIN_MAX_IN], kept[MICA__EIN_LABELS];
    const mica__ein_bind_t *b = c->b;
    int32_t t, d, s, i, last = 0;
    mica_status_t st;

    memset(live, 0, sizeof live);
    for (t = 0; t < b->nb_in; t++) {
        memset(&ops[t], 0, sizeof ops[t]);
        ops[t].nd = b->rank[t];
        ops[t].input = t;
        for (d = 0; d < b->rank[t]; d++) {
            ops[t].lab[d] = b->lab[t][d];
            ops[t].dim[d] = dims ? dims[t][d] : c->size[b->lab[t][d]];
        }
        live[t] = 1;
    }
    for (s = 0; s < order->nb; s++) {
        int32_t ia = order->pair[s][0], ib = order->pair[s][1];
        int32_t r = b->nb_in + s;
        memset(kept, 0, sizeof kept);
        for (d = 0; d < b->out_rank; d++)
            kept[b->out[d]] = 1;
        for (i = 0; i < r; i++)
            if (live[i] && i != ia && i != ib)
                for (d = 0; d < ops[i].nd; d++)
                    kept[ops[i].lab[d]] = 1;
        st = contract(c, &ops[ia], &ops[ib], kept, s == order->nb - 1,
                      &ops[r]);
        if (st != MICA_OK)
            return st;
        live[ia] = live[ib] = 0;
        live[r] = 1;
        last = r;
    }
    if (ops[last].is_out)
        return MICA_OK;
    /* One input, or a last intermediate in another order: a gather. */
    return gather(c, &ops[last], b->out, b->out_rank, c->output);
}

void mica__ein_choose_order(const mica__ein_bind_t *b, const int64_t *size,
                            mica__ein_order_t *order)
{
    uint64_t set[2 * MICA__EIN_MAX_IN], out = 0;
    int32_t n = b->nb_in, t, d, i, j, l, s;

    order->nb = 0;
    for (d = 0; d < b->out_rank; d++)
        out |= (uint64_t)1 << b->out[d];
    for (t = 0; t < n; t++) {
        set[t] = 0;
        for (d = 0; d < b->rank[t]; d++)
            set[t] |= (uint64_t)1 << b->lab[t][d];
    }
    for (s = 0; s < n - 1; s++) {
        double best = -1, best_res = -1;
        int32_t bi = -1, bj = -1;
        uint64_t best_set = 0;
        for (i = 0; i < n + s; i++) {
            if (set[i] == (uint64_t)-1)
                continue;
            for (j = i + 1; j < n + s; j++) {
                uint64_t all, others = out, res;
                double cost = 1, rsize = 1;
                int32_t q;
                if (set[i] == (uint64_t)-1 || set[j] == (uint64_t)-1)
                    continue;
                for (q = 0; q < n + s; q++)
                    if (q != i && q != j && set[q] != (uint64_t)-1)
                        others |= set[q];
                all = set[i] | set[j];
                res = all & others;
                for (l = 0; l < MICA__EIN_LABELS; l++) {
                    double z = size[l] > 0 ? (double)size[l] : 1.0;
                    if (all >> l & 1)
                        cost *= z;
                    if (res >> l & 1)
                        rsize *= z;
                }
                if (bi < 0 || cost < best ||
                    (cost == best && rsize < best_res)) {
                    best = cost;
                    best_res = rsize;
                    bi = i;
                    bj = j;
                    best_set = res;
                }
            }
        }
        order->pair[s][0] = bi;
        order->pair[s][1] = bj;
        set[bi] = set[bj] = (uint64_t)-1; /* contracted */
        set[n + s] = best_set;
        order->nb++;
    }
}

size_t mica__ein_workspace(const mica__ein_bind_t *b,
                           const mica__ein_order_t *order,
                           const int64_t *size, mica_dtype_t dtype)
{
    ctx_t c;

    memset(&c, 0, sizeof c);
    c.b = b;
    c.size = size;
    c.esize = mica_dtype_size(dtype);
    c.force = 1;
    walk(&c, order, NULL);
    return (c.used + 255) / 256 * 256 + MICA__EIN_CUBLAS_WORKSPACE;
}

mica_status_t mica__ein_run(const mica__ein_bind_t *b,
                            const mica__ein_order_t *order,
                            const int64_t *size,
                            const int64_t (*dims)[MICA_MAX_DIMS],
                            mica_dtype_t dtype, const void *const *inputs,
                            void *output, void *workspace, size_t ws_size,
                            void *handle, void *stream, mica_error_t *err)
{
    ctx_t c;
    int32_t d;

    for (d = 0; d < b->out_rank; d++)
        if (size[b->out[d]] == 0)
            return MICA_OK; /* an empty output */
    for (d = 0; d < MICA__EIN_LABELS; d++)
        if (size[d] == 0) { /* an empty sum: zeros */
            int64_t n = 1;
            int32_t i;
            for (i = 0; i < b->out_rank; i++)
                n *= size[b->out[i]];
            MICA_KIT_CUDA_CHECK(cudaMemsetAsync(
                output, 0, (size_t)n * mica_dtype_size(dtype),
                (cudaStream_t)stream));
            return MICA_OK;
        }
    if (!workspace || ws_size < MICA__EIN_CUBLAS_WORKSPACE)
        return MICA_KIT_FAIL(err, "Einsum on CUDA needs a workspace of %zu "
                             "bytes, got %s", ws_size,
                             workspace ? "less" : "none");
    memset(&c, 0, sizeof c);
    c.b = b;
    c.size = size;
    c.esize = mica_dtype_size(dtype);
    c.run = 1;
    c.dtype = dtype;
    c.inputs = inputs;
    c.output = output;
    c.ws = (char *)workspace;
    c.ws_size = ws_size;
    c.handle = handle;
    c.stream = stream;
    c.err = err;
    return walk(&c, order, dims);
}
