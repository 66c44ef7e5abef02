/*
 * registry/scanner.c - mica-scan-module, the helper program that loads
 * module files in a process of its own for registry/scan.c:
 *
 *   mica-scan-module --fd N FILE...
 *
 * For each FILE in turn it writes "b K\n" to descriptor N, loads the file
 * as libmica loads a module (dlopen, init, every check), and writes
 * "d K\n".  A file that crashes, aborts, exits or hangs stops it between
 * the two lines, which is how the parent knows which file did it.  It
 * never scans (MICA_NO_SCAN=1), logs nothing, and exits without
 * unloading the modules (their fini is not part of a scan).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mica/mica.h"

static void quiet(void *user, mica_log_level_t level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
}

int main(int argc, char **argv)
{
    mica_context_t *ctx;
    char *end;
    long fd;
    int i;

    if (argc < 3 || strcmp(argv[1], "--fd") != 0) {
        fprintf(stderr, "usage: mica-scan-module --fd N FILE...\n"
                        "(a helper of libmica: it loads module files in a "
                        "process of their own)\n");
        return 2;
    }
    fd = strtol(argv[2], &end, 10);
    if (*end || fd < 0) {
        fprintf(stderr, "mica-scan-module: --fd '%s' is not a descriptor\n",
                argv[2]);
        return 2;
    }
    setenv("MICA_NO_SCAN", "1", 1);
    if (mica_context_create(&ctx) != MICA_OK)
        return 1;
    mica_context_set_logger(ctx, quiet, NULL, MICA_LOG_ERROR);
    for (i = 3; i < argc; i++) {
        dprintf((int)fd, "b %d\n", i - 3);
        (void)mica_context_load_file(ctx, argv[i]);
        dprintf((int)fd, "d %d\n", i - 3);
    }
    _exit(0);
}
