/*
 * tools/inputs.h - the network inputs of `mica run`, `mica bench` and
 * `mica compare`: given as .npy files (--input NAME=FILE.npy), or seeded
 * random values (--input NAME=random, or any input not given; --seed N).
 *
 * Random values, the same for the same seed, input name, dtype and shape
 * whatever the other inputs (tools/random_input.c): floats (float32,
 * float16, bfloat16) uniform in [-1, 1], integers 0 to 3, bool 0 or 1.
 * A runtime dimension takes its size from --shapes NAME:AxB, else from
 * the profile's opt dims; a shape-tensor input takes its values from
 * --shapes NAME:V1xV2, else from the profile's opt values.
 */
#ifndef MICA_CLI_INPUTS_H
#define MICA_CLI_INPUTS_H

#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"
#include "mica_int.h"
#include "npy.h"

/* The seed when --seed is not given. */
#define CLI_DEFAULT_SEED 1

typedef struct cli_input {
    char *name;
    const char *file;          /* the .npy file; NULL: generated */
    const char *values;        /* a shape-tensor input generated: where
                                  its values come from, else NULL */
    mica__npy_t npy;           /* the values, read or generated */
} cli_input_t;

typedef struct cli_inputs {
    cli_input_t *v;            /* given first, then generated */
    mica__index_t by_name;     /* name -> index in v (core/base/index.c) */
    int nb;
    int cap;
    uint64_t seed;
    int seed_given;
    /* What an ONNX import is told (cli_onnx_set_inputs): the files. */
    const char **onnx_names;
    mica_tensor_desc_t *onnx_descs;
    const void **onnx_data;
} cli_inputs_t;

/*
 * Take argv[*i] if it is --input NAME=FILE.npy, --input NAME=random or
 * --seed N (*taken 1, *i advanced past its value).  CLI_OK, or CLI_USAGE
 * after a message; `in` starts zeroed.
 */
int cli_inputs_option(const char *cmd, int argc, char **argv, int *i,
                      int *taken, cli_inputs_t *in);

/* Read the files given, and tell an ONNX import about them.  CLI_OK or
 * CLI_ERROR after a message. */
int cli_inputs_read(cli_inputs_t *in);

/*
 * Check the inputs given against the engine (names, dtype, rank, fixed
 * dims; int64 files narrowed to an int32 input) and generate every
 * network input not given, or given as random, at the shapes of `shapes`
 * (--shapes's "NAME:AxB,..." or NULL) or of profile `profile` (-1: the
 * first).  CLI_OK or CLI_ERROR after a message.
 */
int cli_inputs_complete(cli_inputs_t *in, mica_engine_t *engine,
                        long profile, const char *shapes);

/* One line per generated input on f: "input 'x': random float32 [2, 3],
 * seed 1"; with `all`, the given ones too ("... from FILE"). */
void cli_inputs_print(const cli_inputs_t *in, FILE *f, int all);

/* Give every input to exec (mica_exec_set_input): MICA_OK or the status
 * (the context has the message). */
mica_status_t cli_inputs_set(const cli_inputs_t *in, mica_exec_t *exec);

void cli_inputs_free(cli_inputs_t *in);

/* ---- tools/random_input.c ---- */

/*
 * Fill `data` (volume elements of dtype) with the random values of input
 * `name` under `seed`.  0, or -1 for a dtype without random values.
 */
int cli_random_fill(mica_dtype_t dtype, void *data, int64_t volume,
                    const char *name, uint64_t seed);

/*
 * The dims (or, for a shape-tensor input, the values) --shapes gives
 * `name`: *found 0 if it names none.  CLI_OK, or CLI_ERROR after a
 * message for a malformed list.
 */
int cli_shapes_lookup(const char *shapes, const char *name, int *found,
                      mica_dims_t *dims);

/* Every name of `shapes` is one of the engine's inputs: CLI_OK or
 * CLI_ERROR after a message. */
int cli_shapes_check(const char *shapes, mica_engine_t *engine);

#endif /* MICA_CLI_INPUTS_H */
