/*
 * tools/cli.h - what the subcommands of the `mica` command share: error
 * and usage reporting, option parsing, and setting up a context with its
 * modules.
 *
 * Exit codes: 0 success, 1 a runtime or manifest error, 2 a usage error.
 * Every error is one line on stderr starting with "mica: ".
 */
#ifndef MICA_CLI_H
#define MICA_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"

#define CLI_OK 0
#define CLI_ERROR 1
#define CLI_USAGE 2

/* Print "mica: <message>" to stderr; returns CLI_ERROR. */
int cli_error(const char *fmt, ...) MICA_PRINTF(1, 2);

/* Print "mica CMD: <message> (see 'mica CMD --help')"; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) MICA_PRINTF(2, 3);

/* Whether argv[i] is option `name` ("--name" or "--name=VALUE"). */
int cli_is_opt(const char *arg, const char *name);

/*
 * The value of option `name` at argv[*i]: "--name=VALUE" or "--name
 * VALUE" (advancing *i).  NULL (after a usage message) if missing.
 */
const char *cli_opt_value(const char *cmd, int argc, char **argv, int *i,
                          const char *name);

/* Whether argv[i] asks for help (-h, --help). */
int cli_is_help(const char *arg);

/* "auto", "cpu", "cuda" -> 0, MICA_DEVICE_CPU, MICA_DEVICE_CUDA; -1 else. */
int cli_parse_device(const char *s, uint32_t *out);
/* "auto, cpu or cuda": what --device takes, for messages. */
const char *cli_device_choices(void);
/*
 * "cpu", "cuda", "cpu,cuda" for device bits ("-" for none).  A single
 * device's name lives as long as the program; several share one buffer,
 * valid until the next call.
 */
const char *cli_device_name(uint32_t devices);

/* "[2, 3]" (a scalar: "[]") into buf; returns buf. */
const char *cli_dims_str(const mica_dims_t *d, char *buf, size_t len);

/*
 * A context with the default modules loaded, then every folder of
 * `paths` (nb_paths of them).  `quiet` keeps load problems off stderr
 * (they stay listed in the context).  Returns CLI_OK or CLI_ERROR after a
 * message.
 */
int cli_context(mica_context_t **ctx, char **paths, int nb_paths, int quiet);

/*
 * Record a --prefer Type=impl choice of command `cmd`; cli_context gives
 * them to the context (the deploy-time choice, in place of MICA_PREFER).
 * CLI_OK, or CLI_USAGE after a message.
 */
int cli_add_prefer(const char *cmd, const char *v);

/* Builds from manifests time the candidate implementations (--autotune). */
/* --allow-folder DIR: the files a model names (weights, external data)
 * may also lie in DIR (mica_context_allow_folder, by cli_context). */
int cli_add_folder(const char *cmd, const char *dir);

/* --allow-manifest-modules: manifests may load modules (cli_context). */
void cli_set_allow_manifest_modules(int on);
void cli_set_autotune(int on);
/* Builds from manifests may run layers in float16 (--fp16). */
void cli_set_fp16(int on);
/* Builds from manifests apply no fusion rule (--no-fusion). */
void cli_set_no_fusion(int on);
/*
 * Take argv[*i] if it is --passes or --no-passes (*taken 1, *i advanced
 * past its value; several of one option add up); CLI_USAGE after a
 * message if it has no value.  cli_passes_config puts what they said in
 * a build configuration (the library checks the names).
 */
int cli_passes_option(const char *cmd, int argc, char **argv, int *i,
                      int *taken);
void cli_passes_config(mica_build_config_t *cfg);
/* What cli_set_fp16 and cli_set_autotune set. */
int cli_fp16(void);
int cli_autotune(void);

/*
 * Take argv[*i] if it is --threads N (*taken 1, *i advanced past its
 * value): the CPU threads of every execution context the command makes
 * (cli_exec_threads).  CLI_USAGE after a message if N is not a count.
 */
int cli_threads_option(const char *cmd, int argc, char **argv, int *i,
                       int *taken);
/* The --threads count, -1 if not given. */
long cli_threads(void);
/* Give `exec` the --threads count, if one was given. */
mica_status_t cli_exec_threads(mica_exec_t *exec);
/* The usage lines of --threads, for --help texts. */
#define CLI_THREADS_HELP                                                    \
    "  --threads N             at most N CPU threads per layer (ONNX\n"    \
    "                          Runtime's intra-op threads; default:\n"     \
    "                          OMP_NUM_THREADS, else every CPU)\n"

/*
 * The tactic-timing options of the commands that build (build, run,
 * bench): --autotune, --no-autotune (mica_build_config_t.autotune 1 or
 * -1; default 0, the device's default) and --timing-cache FILE.  *taken
 * 1 when argv[*i] was one of them (its value consumed); CLI_OK, or
 * CLI_USAGE after a message.
 */
int cli_tune_option(const char *cmd, int argc, char **argv, int *i,
                    int *taken);
/* The usage lines of those options. */
#define CLI_TUNE_USAGE                                                      \
    "  --autotune             time every implementation and tactic a layer\n" \
    "                         may take and keep the fastest (the default on\n"\
    "                         CUDA; on the CPU: by priority)\n"              \
    "  --no-autotune          never time: the highest priority and the first\n"\
    "                         tactic (heuristics' choice)\n"                 \
    "  --timing-cache FILE    reuse the tactic timings FILE holds (same layer\n"\
    "                         and device) and add the new ones to it\n"

/* Subcommands: argv[0] is the subcommand's name. */
int cmd_run(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_modules(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);

/* ---- ONNX models (cli_onnx.c) ---- */

/*
 * Take argv[*i] if it is --shapes, --min-shapes, --opt-shapes or
 * --max-shapes (*taken 1, *i advanced past its value); CLI_USAGE after a
 * message if it is malformed.
 */
int cli_onnx_option(const char *cmd, int argc, char **argv, int *i,
                    int *taken);
/* The inputs `mica run` will give: their shapes (or a shape tensor's
 * values) are the profile of inputs no option names. */
void cli_onnx_set_inputs(int32_t nb, const char *const *names,
                         const mica_tensor_desc_t *descs,
                         const void *const *data);
/* The value of --shapes, NULL if not given: the shapes of random inputs
 * (tools/inputs.h) as well as an ONNX model's profile. */
const char *cli_onnx_shapes(void);
/* Whether `path` is an ONNX model (its first bytes). */
int cli_onnx_probe(const char *path);
/* Import the model with the options above; CLI_ERROR after a message. */
int cli_onnx_import(mica_context_t *ctx, const char *path,
                    mica_onnx_model_t **model);
/* Import it into a manifest in memory; CLI_ERROR after a message. */
/* Check an ONNX model in one pass (mica_onnx_check): each node that
 * cannot be imported as a line "PATH: node ...: why" on stdout, then a
 * summary.  *refused the number of lines; CLI_OK, or an error printed
 * (the file is not a model). */
int cli_onnx_check(mica_context_t *ctx, const char *path, int32_t *refused);
int cli_onnx_manifest(mica_context_t *ctx, const char *path,
                      mica_manifest_t **m);

/*
 * Load a manifest and build its engine on `device` (CLI_DEVICE_MANIFEST:
 * the manifest's own choice; else 0 for auto or a mica_device_kind_t
 * bit).  On failure prints the error and returns CLI_ERROR.
 */
#define CLI_DEVICE_MANIFEST 0xffffffffu
int cli_build(mica_context_t *ctx, const char *manifest, uint32_t device,
              mica_manifest_t **m, mica_engine_t **engine);

/*
 * What `mica run` and `mica inspect` work on: a manifest (built here) or
 * an engine file (loaded), told apart by the file's first bytes
 * (mica_engine_file_probe), not by its name.
 */
typedef struct cli_source {
    const char *path;
    int is_engine;          /* 1: an engine file, 0: a manifest */
    mica_manifest_t *m;     /* the manifest, NULL for an engine file */
    mica_engine_t *engine;
} cli_source_t;

/*
 * Open `path` into *src: build a manifest's engine on `device` (as
 * cli_build), or load an engine file.  An engine is built for one device:
 * `device` CLI_DEVICE_MANIFEST or 0 (auto) takes the engine's, a device
 * other than the engine's is refused.  On failure prints the error, leaves
 * *src empty and returns CLI_ERROR.
 */
int cli_open(mica_context_t *ctx, const char *path, uint32_t device,
             cli_source_t *src);
/* The manifest's name, "" for an engine file or a manifest without one. */
const char *cli_source_name(const cli_source_t *src);
/* Destroy the engine and the manifest (before their context). */
void cli_close(cli_source_t *src);

/*
 * `mica run`'s outputs after a run of exec (tools/run_output.c): every
 * network output and output for shapes as OUT_DIR/NAME.npy, printed, all
 * or none written.  CLI_OK or CLI_ERROR (said).
 */
int cli_write_outputs(const char *out_dir, mica_context_t *ctx,
                      mica_engine_t *engine, mica_exec_t *exec);

/*
 * Write tensors names[i] (desc[i], data[i]) as OUT_DIR/NAME.npy
 * (cli_npy_path), the folder made if missing; all or none written (a
 * folder made is removed again on failure).  With `print` (NULL: quiet),
 * that line first (unless ""), then one per file with its first values.
 * CLI_OK or CLI_ERROR (said).
 */
int cli_write_npys(const char *out_dir, int32_t nb, const char *const *names,
                   const mica_tensor_desc_t *desc, const void *const *data,
                   const char *print);

/* OUT_DIR/NAME.npy, every byte of NAME outside [A-Za-z0-9._-] written as
 * %XX ('/' is %2F, so a name is one file name).  malloc'd, NULL when out
 * of memory. */
char *cli_npy_path(const char *dir, const char *name);

/*
 * A table printed with aligned columns: add rows of `nb_cols` strings
 * (copied), then print; every column is as wide as its widest cell, the
 * last one is not padded.
 */
typedef struct cli_table cli_table_t;
cli_table_t *cli_table_new(int nb_cols);
int cli_table_add(cli_table_t *t, const char *const *cells);
void cli_table_print(const cli_table_t *t, FILE *f, const char *indent);
void cli_table_free(cli_table_t *t);

/*
 * `mica inspect`'s memory formats (tools/inspect_formats.c): how many
 * tensors are channels last and each layer that changes a tensor's
 * format (the reorders), what it reads and who reads what it makes;
 * nothing where every tensor is linear.  CLI_OK or an error.
 */
int cli_print_formats(mica_engine_t *engine);

#endif /* MICA_CLI_H */
