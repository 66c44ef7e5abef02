/*
 * core/base/threads.c - the CPU thread count of the run in progress on
 * this thread: what mica_exec_set_threads asked for, seen by the modules
 * through the host table's cpu_threads (their parallel kernels and
 * oneDNN use at most that many threads; 0: not set, OpenMP's default).
 *
 * A thread-local value rather than an argument of enqueue: the layer ABI
 * is frozen, and a context runs its layers on the thread that called it,
 * so the value set around a run is the one every layer of that run reads.
 */
#include <config.h>

#include "mica_int.h"

static _Thread_local int32_t current;

int32_t mica__threads_current(void)
{
    return current;
}

int32_t mica__threads_enter(int32_t threads)
{
    int32_t old = current;
    current = threads;
    return old;
}
