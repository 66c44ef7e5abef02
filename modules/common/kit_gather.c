/*
 * modules/common/kit_gather.c - a strided gather on the CPU
 * (mica__vec_gather, kit_vec.h): the data movement of Shuffle's and
 * Slice's vec implementations.  Output dimensions that lie one after the
 * other in the source too are merged first, so that rows copy with
 * memcpy (a channel shuffle's rows of H * W, a channel slice's rows of
 * channels); otherwise elements of 1, 2, 4 or 8 bytes move through typed
 * loads, stepping offsets (no division per element); on several threads
 * for large tensors.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "kit_vec.h"

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
                   j->src + off * (ptrdiff_t)j->es, (size_t)n * j->es);
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

void mica__vec_gather(const void *src, int32_t rank, const int64_t *dims,
                      const int64_t *strides, void *dst, size_t esize)
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
