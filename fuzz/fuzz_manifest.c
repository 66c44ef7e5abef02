/*
 * fuzz/fuzz_manifest.c - the manifest loader from memory
 * (mica_manifest_load_text) and, for a manifest that loads, the build of
 * its engine on the CPU.  Any crash, sanitizer report, leak or hang is a
 * finding.  The manifest is named fuzz/in.yaml, so the files it names
 * are looked for in a folder that does not exist.
 */
#include <config.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mica_context_t *ctx = fuzz_context(1);
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;

    if (mica_manifest_load_text(ctx, "fuzz-nowhere/in.yaml",
                                (const char *)data, size, &m) != MICA_OK)
        return 0;
    cfg = *mica_manifest_config(m);
    cfg.device = MICA_DEVICE_CPU;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) == MICA_OK)
        mica_engine_destroy(e);
    mica_manifest_destroy(m);
    return 0;
}
