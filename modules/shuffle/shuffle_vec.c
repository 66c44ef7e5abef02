/*
 * modules/shuffle/shuffle_vec.c - Shuffle's transposes on the CPU
 * (implementation "vec"): output dimensions that lie one after the other
 * in the input too are merged first, so that a channel shuffle
 * ([N, g, C/g, H, W] with g and C/g swapped) copies rows of H * W
 * elements with memcpy; otherwise elements of 1, 2, 4 or 8 bytes move
 * through typed loads, stepping offsets (no division per element); on
 * several threads for large tensors.  The same bytes as the reference.
 *
 * A whole Shuffle (transpose, reshape, transpose) is one gather wherever
 * the reshape is a view of the transposed input (mica__shuffle_as_gather):
 * one pass over the data instead of two, and input and output in any
 * format (channels last included), the format's strides folded in.
 */
#include <config.h>

#include <string.h>

#include "shuffle.h"
#include "kit_cpu.h"

typedef struct tjob {
    const unsigned char *src;
    unsigned char *dst;
    int32_t rank;
    int64_t d[MICA_MAX_DIMS], s[MICA_MAX_DIMS]; /* output dims, source
                                                  * strides (elements) */
    size_t es;
} tjob_t;

#define MOVE(T)                                                             \
    do {                                                                    \
        const T *s_ = (const T *)(const void *)j->src;                      \
        T *d_ = (T *)(void *)j->dst;                                        \
        for (i = 0; i < n; i++)                                             \
            d_[pos + i] = s_[off + i * si];                                 \
    } while (0)

/* Output elements [begin, end), runs along the innermost dimension. */
static void range(void *data, int64_t begin, int64_t end)
{
    const tjob_t *j = data;
    int32_t r = j->rank, k;
    int64_t c[MICA_MAX_DIMS], off = 0, rest = begin, pos = begin, i;
    int64_t inner = j->d[r - 1], si = j->s[r - 1];

    for (k = r - 1; k >= 0; k--) {
        c[k] = rest % j->d[k];
        rest /= j->d[k];
        off += c[k] * j->s[k];
    }
    while (pos < end) {
        int64_t n = inner - c[r - 1];
        if (n > end - pos)
            n = end - pos;
        if (si == 1)
            memcpy(j->dst + (size_t)pos * j->es,
                   j->src + (size_t)off * j->es, (size_t)n * j->es);
        else if (j->es == 4)
            MOVE(uint32_t);
        else if (j->es == 2)
            MOVE(uint16_t);
        else if (j->es == 8)
            MOVE(uint64_t);
        else
            MOVE(uint8_t);
        pos += n;
        off += n * si;
        c[r - 1] += n;
        for (k = r - 1; k > 0 && c[k] == j->d[k]; k--) {
            c[k] = 0;
            c[k - 1]++;
            off += j->s[k - 1] - j->d[k] * j->s[k];
        }
    }
}

void mica__shuffle_gather_vec(const void *src, int32_t rank,
                              const int64_t *dims, const int64_t *strides,
                              void *dst, size_t esize)
{
    int64_t n = 1;
    int32_t k;
    tjob_t j;

    for (k = 0; k < rank; k++)
        n *= dims[k];
    if (n == 0)
        return;
    j.src = src;
    j.dst = dst;
    j.es = esize;
    j.rank = 0;
    /* length-1 dims dropped, dims merged where the source steps alike */
    for (k = 0; k < rank; k++) {
        int64_t d = dims[k], s = strides[k];
        if (d == 1)
            continue;
        if (j.rank > 0 && j.s[j.rank - 1] == s * d) {
            j.d[j.rank - 1] *= d;
            j.s[j.rank - 1] = s;
            continue;
        }
        j.d[j.rank] = d;
        j.s[j.rank] = s;
        j.rank++;
    }
    if (j.rank == 0) {
        j.rank = 1;
        j.d[0] = 1;
        j.s[0] = 1;
    }
    mica__cpu_for(n, MICA__CPU_GRAIN, range, &j);
}

void mica__shuffle_transpose_vec(const void *src, int32_t rank,
                                 const int64_t *dims, const int64_t *perm,
                                 void *dst, size_t esize)
{
    int64_t stride[MICA_MAX_DIMS], od[MICA_MAX_DIMS], os[MICA_MAX_DIMS];
    int64_t n = 1;
    int32_t k;

    for (k = rank - 1; k >= 0; k--) {
        stride[k] = n;
        n *= dims[k];
    }
    for (k = 0; k < rank; k++) {
        od[k] = dims[perm[k]];
        os[k] = stride[perm[k]];
    }
    mica__shuffle_gather_vec(src, rank, od, os, dst, esize);
}

/*
 * The strides of `mid` (rank m) as a view of a tensor of dims a and
 * strides sa (rank r) reshaped, or 0 where no strides give it (a merge of
 * dimensions that do not lie one after the other): PyTorch's rule for
 * views, walking chunks of mergeable dimensions from the innermost.
 */
static int view_strides(int32_t r, const int64_t *a, const int64_t *sa,
                        int32_t m, const int64_t *mid, int64_t *sm)
{
    int64_t base, tn = 1, vn = 1;
    int32_t t, v = m - 1;

    if (r == 0 || m == 0)
        return 0;
    base = sa[r - 1];
    for (t = r - 1; t >= 0; t--) {
        tn *= a[t];
        if (t == 0 || (a[t - 1] != 1 && sa[t - 1] != tn * base)) {
            while (v >= 0 && (vn < tn || mid[v] == 1)) {
                sm[v] = vn * base;
                vn *= mid[v];
                v--;
            }
            if (vn != tn)
                return 0;
            if (t > 0) {
                base = sa[t - 1];
                tn = 1;
                vn = 1;
            }
        }
    }
    return v == -1;
}

int mica__shuffle_as_gather(int32_t r, const int64_t *in_dims,
                            const int64_t *in_str, const int64_t *p1,
                            int32_t m, const int64_t *mid,
                            const int64_t *p2, const int64_t *out_str,
                            int64_t *g_dims, int64_t *g_str)
{
    int64_t a[MICA_MAX_DIMS], sa[MICA_MAX_DIMS], sm[MICA_MAX_DIMS];
    int32_t order[MICA_MAX_DIMS], k, i;

    if (r < 1 || r > MICA_MAX_DIMS || m < 1 || m > MICA_MAX_DIMS)
        return 0;
    for (k = 0; k < r; k++) {
        a[k] = in_dims[p1 ? p1[k] : k];
        sa[k] = in_str[p1 ? p1[k] : k];
    }
    if (!view_strides(r, a, sa, m, mid, sm))
        return 0;
    /* the output's axes in its memory order: strides descending (an
     * insertion sort, stable: ties are length-1 axes) */
    for (k = 0; k < m; k++) {
        for (i = k; i > 0 && out_str[order[i - 1]] < out_str[k]; i--)
            order[i] = order[i - 1];
        order[i] = k;
    }
    for (k = 0; k < m; k++) {
        int32_t o = order[k], j = (int32_t)(p2 ? p2[o] : o);
        g_dims[k] = mid[j];
        g_str[k] = sm[j];
    }
    return 1;
}
