/*
 * modules/shuffle/shuffle_vec.c - Shuffle's transposes on the CPU
 * (implementation "vec"), through the kit's gather (kit_gather.c:
 * dimensions merged, rows copied whole, several threads for large
 * tensors).  The same bytes as the reference.
 *
 * A whole Shuffle (transpose, reshape, transpose) is one gather wherever
 * the reshape is a view of the transposed input (mica__shuffle_as_gather):
 * one pass over the data instead of two, and input and output in any
 * format (channels last included), the format's strides folded in.
 */
#include <config.h>

#include <string.h>

#include "shuffle.h"
#include "kit_vec.h"

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
    mica__vec_gather(src, rank, od, os, dst, esize);
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
