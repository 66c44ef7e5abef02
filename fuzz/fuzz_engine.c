/*
 * fuzz/fuzz_engine.c - the engine loader (mica_engine_deserialize) on
 * bytes in memory, seeded with real engines (fuzz/corpus/engine/).  An
 * engine's header carries the payload's length and checksum, which
 * almost every mutation breaks: the custom mutator below lets libFuzzer
 * mutate and then writes them back (fuzz/engine_fix.c), so that the
 * fuzzer reaches the payload's reader and the layers' deserialize.
 */
#include <config.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mica_context_t *ctx = fuzz_context(1);
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;

    if (mica_engine_deserialize(ctx, data, size, &e) != MICA_OK)
        return 0;
    if (mica_exec_create(e, &x) == MICA_OK)
        mica_exec_destroy(x);
    mica_engine_destroy(e);
    return 0;
}
