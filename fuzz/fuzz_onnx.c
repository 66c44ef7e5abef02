/*
 * fuzz/fuzz_onnx.c - the ONNX reader and importer (mica_onnx_import) on a
 * model in memory (an anonymous file, named through /proc/self/fd), and
 * the manifest it makes.  Seeded with small models of the ONNX test
 * data.
 */
#include <config.h>

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mica_context_t *ctx = fuzz_context(1);
    mica_onnx_model_t *model = NULL;
    mica_manifest_t *m = NULL;
    char path[64];
    int fd = memfd_create("fuzz.onnx", MFD_CLOEXEC);

    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
        perror("fuzz: memfd");
        abort();
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (mica_onnx_import(ctx, path, NULL, &model) == MICA_OK) {
        if (mica_onnx_manifest(model, &m) == MICA_OK)
            mica_manifest_destroy(m);
        mica_onnx_destroy(model);
    }
    close(fd);
    return 0;
}
