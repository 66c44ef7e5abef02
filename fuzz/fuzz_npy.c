/*
 * fuzz/fuzz_npy.c - the .npy reader (core/base/npy.c, compiled in) on
 * bytes in memory: header, dtype, shape, sizes.
 */
#include <config.h>

#include <stdint.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mica__npy_t npy;
    char err[512];

    if (mica__npy_parse(data, size, "fuzz.npy", &npy, err, sizeof err) ==
        MICA_OK)
        mica__npy_free(&npy);
    return 0;
}
