/*
 * modules/scatter/scatter.h - the Scatter layer: the shape of one run and
 * the CUDA launcher.
 */
#ifndef MICA_MOD_SCATTER_H
#define MICA_MOD_SCATTER_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MICA__SCATTER_ELEMENT = 0, MICA__SCATTER_ND = 1 };

/*
 * One run.  element: indices and updates have shape idx[0..rank), data
 * data[0..rank); the element at coordinates c of updates goes to data
 * coordinates c with c[axis] replaced by the index.  nd: indices are
 * `tuples` tuples of `k` coordinates (data axes 0..k-1), each naming a
 * slice of `slice` elements (data axes k..rank-1); updates hold the
 * tuples' slices one after the other.  Every size fits int64.
 */
typedef struct mica__scatter {
    int32_t mode, rank, axis, k;
    size_t esize;                 /* bytes per element of data */
    int64_t data[MICA_MAX_DIMS];  /* data's dimensions */
    int64_t idx[MICA_MAX_DIMS];   /* element: indices' dimensions */
    int64_t tuples, slice;        /* nd */
    int64_t n_updates;            /* elements of updates */
    int64_t n_data;               /* elements of data */
} mica__scatter_t;

/* The run-time error a bad index gives: the index's position (the
 * element of indices, or the tuple in nd mode), its value, the axis. */
#define MICA__SCATTER_RANGE_FMT                                             \
    "index %lld at %s %lld is out of range for data axis %d of size %lld "  \
    "(valid: -%lld to %lld)"

/* Bytes of workspace the CUDA implementation needs: its error record. */
#define MICA__SCATTER_WORKSPACE 64

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Scatter on the device on `stream`: out = data, then the updates at
 * their indices.  `workspace` holds MICA__SCATTER_WORKSPACE bytes; an
 * out-of-range index is never written and fails the call with
 * MICA_ERR_RUNTIME and the message of MICA__SCATTER_RANGE_FMT, which
 * needs a read-back: one small copy to *pinned (pinned host memory,
 * allocated here on first use) and a stream synchronization
 * (skipped while the stream is being captured into a CUDA graph: then a
 * bad index is still not written, but not reported).
 */
mica_status_t mica__scatter_cuda(const mica__scatter_t *p, const void *data,
                                 const int32_t *indices, const void *updates,
                                 void *out, void *workspace, void **pinned,
                                 void *stream, mica_error_t *err);
/* Free a pinned buffer of mica__scatter_cuda (NULL: nothing). */
void mica__scatter_cuda_free(void *pinned);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_SCATTER_H */
