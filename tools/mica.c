/*
 * tools/mica.c - the `mica` command: build engines, run and inspect
 * manifests and engines, and list what the runtime knows.  One file per
 * subcommand (cmd_*.c); see cli.h for the conventions (exit codes,
 * one-line errors).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"build", cmd_build, "build a manifest's engine and save it to a file"},
    {"run", cmd_run, "run a manifest or an engine once on .npy inputs"},
    {"inspect", cmd_inspect, "show the layers, tensors and memory of a "
                             "manifest or an engine"},
    {"modules", cmd_modules, "list every registered layer type"},
    {"import", cmd_import, "write the manifest and weights of an ONNX "
                           "model"},
    {"bench", cmd_bench, "time repeated runs as trtexec does (throughput, "
                         "latency percentiles)"},
    {"compare", cmd_compare, "run a model in two configurations and compare "
                             "the outputs"},
};

#define NB_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: mica [--allow-manifest-modules] COMMAND [ARGS...]\n\n"
               "A plugin-first inference runtime.  Commands:\n");
    for (i = 0; i < NB_COMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'mica COMMAND --help' describes a command.  "
               "'mica --version' prints the version.\n"
               "--allow-manifest-modules lets a manifest load the modules its\n"
               "modules.paths and modules.load name (native code: only for\n"
               "trusted manifests; --module-path needs no permission).\n"
               "Exit status: 0 success, 1 error, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    size_t i;

    /* Options before the command apply to it. */
    while (argc >= 2 && !strcmp(argv[1], "--allow-manifest-modules")) {
        cli_set_allow_manifest_modules(1);
        argc--;
        argv++;
    }
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mica %s\n", mica_version());
        return CLI_OK;
    }
    for (i = 0; i < NB_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "mica: unknown command '%s' (commands:", argv[1]);
    for (i = 0; i < NB_COMMANDS; i++)
        fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
    fprintf(stderr, "; see 'mica --help')\n");
    return CLI_USAGE;
}
