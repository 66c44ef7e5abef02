/*
 * tests/craft.h - engine files changed on purpose: crafted regression
 * inputs for the engine loader, and the fuzzers' way past the checksum
 * (tests/craft.c).  A program that uses it compiles tests/craft.c and
 * core/format/checksum.c in (the checksum is internal to libmica):
 *
 *   tests_foo_SOURCES = tests/foo.c tests/craft.c tests/craft.h \
 *       core/format/checksum.c
 *
 * craft_reseal makes any bytes after the header pass the header's size
 * and checksum checks, so that what follows reaches the parser itself.
 * craft_map walks a file of format 3 or 4 as the loader reads it
 * (core/format/format.h) and records where each field lies, so that a
 * test can change one field and nothing else.
 */
#ifndef MICA_TESTS_CRAFT_H
#define MICA_TESTS_CRAFT_H

#include <stddef.h>
#include <stdint.h>

#define CRAFT_HEADER 32
#define CRAFT_MAX 64   /* items of each kind whose places are recorded */

/* Set the header's payload size and checksum to match the payload. */
void craft_reseal(unsigned char *data, size_t size);

/* Overwrite a little-endian value at `at` (no reseal). */
void craft_put_u32(unsigned char *data, size_t at, uint32_t v);
void craft_put_i64(unsigned char *data, size_t at, int64_t v);
uint32_t craft_get_u32(const unsigned char *data, size_t at);
int64_t craft_get_i64(const unsigned char *data, size_t at);

/* The first offset >= from of needle in data, or SIZE_MAX. */
size_t craft_find(const unsigned char *data, size_t size, const void *needle,
                  size_t n, size_t from);

/* Where the fields of a format-3 file lie (offsets from the file's
 * start); only the first CRAFT_MAX items of each kind. */
typedef struct craft_map {
    size_t counts;                 /* u32 tensors, layers, ... (11) */
    uint32_t nb_tensors, nb_layers, nb_symbols, nb_exprs, nb_constructs;
    uint32_t nb_prog, nb_inputs, nb_profiles;
    size_t symbol_axis[CRAFT_MAX];
    size_t expr_kind[CRAFT_MAX];   /* then its value, symbol or operands */
    size_t tensor_dtype[CRAFT_MAX]; /* u32 dtype, u32 flags, i32 producer */
    size_t tensor_rank[CRAFT_MAX]; /* u32 rank, then expression ids */
    size_t layer_flags[CRAFT_MAX]; /* u32 flags */
    size_t layer_inputs[CRAFT_MAX]; /* u32 nb_in, then i32 tensor, u32 kind */
    size_t layer_state[CRAFT_MAX]; /* u32 length (state after padding) */
    size_t layer_state_data[CRAFT_MAX];
    size_t construct_begin[CRAFT_MAX]; /* i32 begin, i32 end */
    size_t prog[CRAFT_MAX];        /* u32 kind, i32 arg, target, branch */
    size_t profile_range[CRAFT_MAX]; /* profile 0, per input: u32 set */
    size_t plan_bytes[CRAFT_MAX];  /* profile 0, per tensor: i64 bytes,
                                      i64 offset */
    size_t arena;                  /* profile 0's i64 arena bytes */
    size_t fusion;                 /* the fusion records' u32 count, 0:
                                      none (format 3: an engine nothing
                                      fused) */
    size_t fusion_layer[CRAFT_MAX]; /* each record's i32 layer */
    size_t passes;                 /* format 4: the pass records' u32
                                      count */
    size_t pass_name[CRAFT_MAX];   /* each record's name (u32 length) */
    size_t end;                    /* where the walk stopped */
} craft_map_t;

/* 0 if data is a file of format 3 or 4 walked to its end, else -1. */
int craft_map(const unsigned char *data, size_t size, craft_map_t *m);

/*
 * Every byte after the header of the engine `data` changed in turn
 * (+0x81), resealed and loaded in ctx: 1 if each load gave an engine or
 * failed with one line of message, 0 at the first that did neither (a
 * crash ends the program).  *loaded counts the engines.
 */
struct mica_context;
int craft_sweep(struct mica_context *ctx, const unsigned char *data,
                size_t size, int *loaded);

#endif /* MICA_TESTS_CRAFT_H */
