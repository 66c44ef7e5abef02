/*
 * modules/common/kit_handles.c - library handles per thread and CUDA
 * device (see kit_handles.h).
 */
#include <config.h>

#include "kit_handles.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "mica/kit_cuda.h"

struct mica__handle_entry {
    pthread_t thread;
    int device;
    void *handle;
    mica__handle_entry_t *next;
};

mica_status_t mica__handle_get(mica__handles_t *hs, void **out,
                               int (*make)(void **h, mica_error_t *err),
                               mica_error_t *err)
{
    pthread_t self = pthread_self();
    mica__handle_entry_t *e;
    int device = 0;
    void *h = NULL;

    MICA_KIT_CUDA_CHECK(cudaGetDevice(&device));
    pthread_mutex_lock(&hs->lock);
    for (e = hs->head; e; e = e->next)
        if (e->device == device && pthread_equal(e->thread, self))
            break;
    pthread_mutex_unlock(&hs->lock);
    if (e) {
        *out = e->handle;
        return MICA_OK;
    }
    /* Made outside the lock: only this thread adds its own entry. */
    if (make(&h, err) != 0)
        return MICA_ERR_DEVICE;
    if (!(e = malloc(sizeof *e))) {
        mica_kit_host->set_error(err, "out of host memory");
        return MICA_ERR_NOMEM;
    }
    e->thread = self;
    e->device = device;
    e->handle = h;
    pthread_mutex_lock(&hs->lock);
    e->next = hs->head;
    hs->head = e;
    pthread_mutex_unlock(&hs->lock);
    *out = h;
    return MICA_OK;
}
