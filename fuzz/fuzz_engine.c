/*
 * fuzz/fuzz_engine.c - the engine loader (mica_engine_deserialize) on
 * bytes in memory, seeded with real engines (fuzz/corpus/engine/).  An
 * engine's header carries the payload's length and checksum, which
 * almost every mutation breaks: the custom mutator below lets libFuzzer
 * mutate and then writes them back (fuzz/engine_fix.c), so that the
 * fuzzer reaches the payload's reader and the layers' deserialize.
 *
 * An engine that loads is also run once (issue 25: a saved field that
 * only the run trusted wrote past a buffer): every input at its smallest
 * (a runtime dimension 1), zeros, at most 1 MiB each; libFuzzer's
 * -timeout and -rss_limit_mb (fuzz/run.sh) cap the time and memory.
 */
#include <config.h>

#include <string.h>

#include "fuzz_common.h"

#ifdef MICA_FUZZING
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
void mica__fuzz_engine_fix(uint8_t *data, size_t size);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
    (void)seed;
    size = LLVMFuzzerMutate(data, size, max_size);
    mica__fuzz_engine_fix(data, size);
    return size;
}
#endif

#define RUN_INPUT_MAX ((size_t)1 << 20)

/* Run e once on small zero inputs; any refusal ends it quietly. */
static void run_once(mica_engine_t *e, mica_exec_t *x)
{
    static unsigned char zeros[RUN_INPUT_MAX];
    int32_t i, j;

    for (i = 0; i < mica_engine_nb_inputs(e); i++) {
        mica_tensor_info_t info;
        mica_dims_t d;
        int64_t bytes;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_tensor(e, mica_engine_input(e, i), &info) != MICA_OK)
            return;
        d = info.dims;
        for (j = 0; j < d.nb_dims; j++)
            if (d.d[j] < 0)
                d.d[j] = 1;
        if (mica_dims_bytes_checked(&d, info.dtype, &bytes) != 0 ||
            bytes > (int64_t)RUN_INPUT_MAX ||
            mica_exec_set_input(x, info.name, &d, zeros) != MICA_OK)
            return;
    }
    /* one thread: LeakSanitizer (clang 14) crashes at exit on OpenMP's
     * worker threads (.ci/run says why) */
    if (mica_exec_set_threads(x, 1) == MICA_OK)
        mica_exec_run(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mica_context_t *ctx = fuzz_context(1);
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;

    if (mica_engine_deserialize(ctx, data, size, &e) != MICA_OK)
        return 0;
    if (mica_exec_create(e, &x) == MICA_OK) {
        run_once(e, x);
        mica_exec_destroy(x);
    }
    mica_engine_destroy(e);
    return 0;
}
