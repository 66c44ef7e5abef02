/*
 * modules/common/kit_handles.h - library handles (cuBLAS, cuDNN) kept per
 * thread and CUDA device, for the module kit's GPU helpers
 * (libmicamodkit_gpu.la, not installed).
 *
 * A handle of such a library may be used by one thread at a time and is
 * bound to the device that was current when it was made; making one costs
 * milliseconds and device memory.  So a module keeps one per (thread,
 * device) that uses it, made on first use and kept for the process's
 * life, as the library itself is: every layer of the module that runs on
 * that thread shares it, setting its stream (and scratch) at each call.
 */
#ifndef MICA_KIT_HANDLES_H
#define MICA_KIT_HANDLES_H

#include <pthread.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__handle_entry mica__handle_entry_t;

/* One library's handles: static data, MICA__HANDLES_INIT. */
typedef struct mica__handles {
    pthread_mutex_t lock;
    mica__handle_entry_t *head;
} mica__handles_t;

#define MICA__HANDLES_INIT {PTHREAD_MUTEX_INITIALIZER, NULL}

/*
 * The handle of the calling thread for the current CUDA device in *out:
 * the one kept, or a new one from make(&h) (0 on success; on failure its
 * message is in err, and the status returned is MICA_ERR_DEVICE).
 */
mica_status_t mica__handle_get(mica__handles_t *hs, void **out,
                               int (*make)(void **h, mica_error_t *err),
                               mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_HANDLES_H */
