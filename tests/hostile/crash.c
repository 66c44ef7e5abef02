/*
 * tests/hostile/crash.c - modules whose init segfaults, aborts, calls
 * exit or never returns, built from this one file with HOSTILE_KIND set
 * (1 segfault, 2 abort, 3 exit, 4 hang).  test_hostile checks that each
 * is reported in one line naming the file and what happened, remembered,
 * and skipped, and that the process that loaded the folder lives on.
 */
#include <config.h>

#include <stdlib.h>
#include <unistd.h>

#include "mica/module.h"

#if HOSTILE_KIND == 1
static int *volatile nowhere;
#endif

mica_status_t mica_module_init(const mica_host_t *host,
                               const mica_module_desc_t **out,
                               mica_error_t *err)
{
    (void)host;
    (void)out;
    (void)err;
#if HOSTILE_KIND == 1
    *nowhere = 1; /* a write to page zero */
#elif HOSTILE_KIND == 2
    abort();
#elif HOSTILE_KIND == 3
    exit(3);
#else
    for (;;)
        pause();
#endif
    return MICA_ERR_INTERNAL;
}
