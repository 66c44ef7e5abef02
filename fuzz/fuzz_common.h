/*
 * fuzz/fuzz_common.h - what the libFuzzer harnesses share: one context
 * with the build's modules (from $MICA_MODULE_DIR, as the tests load
 * them), made once, silent.  Modules load without the scanner (the
 * harness is the crash detector here).
 */
#ifndef MICA_FUZZ_COMMON_H
#define MICA_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mica/mica.h"

static void fuzz_quiet(void *user, mica_log_level_t level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
}

/* The harness's context, made on first use; NULL only if it cannot be. */
static mica_context_t *fuzz_context(int modules)
{
    static mica_context_t *ctx;
    if (!ctx) {
        setenv("MICA_NO_SCAN", "1", 1);
        if (mica_context_create(&ctx) != MICA_OK) {
            fprintf(stderr, "fuzz: cannot create a context\n");
            abort();
        }
        mica_context_set_logger(ctx, fuzz_quiet, NULL, MICA_LOG_ERROR);
        if (modules)
            mica_context_load_default_modules(ctx);
    }
    return ctx;
}

#endif
