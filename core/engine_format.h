/*
 * core/engine_format.h - the engine file format: its layout, magic,
 * versions and alignment, and the bounds-checked reader of its payload
 * (core/engine_read.c).  Written by core/serialize.c, read by
 * core/deserialize.c.
 *
 * Layout (little-endian, as the machines mica runs on):
 *
 *   header, 32 bytes:
 *     8   magic "MICAENG\0"
 *     u32 format version (2)
 *     u32 ABI version the engine's modules were used through
 *     u64 payload bytes
 *     u64 checksum of the payload (mica__checksum)
 *   payload:
 *     u32 device
 *     inputs:   u32 n, then name, u32 dtype, u32 is_shape, dims
 *     profiles: u32 n, then per input u32 set [dims min/opt/max,
 *               u32 nb_values, i32 values min/opt/max]
 *     layers (execution order): u32 n, then name, origin, ns, type,
 *               i32 version, implementation, u32 flags (bit 0: the
 *               layer pinned its implementation), why it was chosen,
 *               the loop and the conditional a boundary layer names
 *               ("" if none; not in format 1), u32 nb_in, names ("" for an
 *               omitted input), u32 nb_out, names, state,
 *               host implementation ("" if none), host state
 *     outputs, shape outputs: u32 n, names
 *     plan:     u32 n, i64 arena bytes per profile
 *     scales:   u32 n, then name, f32 scale (tensors whose scale is not 1)
 *   strings and bytes are u32 length + data; dims are u32 rank + i64s.
 *   A state is a u32 length, then, if the length is not 0, zero bytes up
 *   to the next multiple of 64 from the start of the file, then the
 *   state's bytes: a loader that keeps the file (mapped at a page
 *   boundary) hands each layer 64-byte aligned state to use in place.
 *
 * Format 1 (read, no longer written) is format 2 without the padding
 * and without loops and conditionals.
 *
 * Loading reads the whole payload into a network (layers made from their
 * state, implementation and version pinned) before building anything, and
 * refuses with one line whatever does not fit.
 */
#ifndef MICA_ENGINE_FORMAT_H
#define MICA_ENGINE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/mica.h"

#define ENGINE_MAGIC "MICAENG"
#define ENGINE_FORMAT 2      /* the newest format read (and written) */
#define ENGINE_FORMAT_MIN 1  /* the oldest read: 2 without state padding */
#define HEADER_BYTES 32
#define STATE_ALIGN 64
#define MAX_ITEMS 1000000    /* the most of anything a reader takes */

/* A payload being read: every read past its end sets `bad` and yields
 * zeros, so a reader checks once, at the end of what it reads. */
typedef struct mica__in {
    const unsigned char *p;  /* the payload, HEADER_BYTES into the data */
    size_t len, pos;
    uint32_t format;
    int bad;
} mica__in_t;

/* n bytes, NULL (bad) past the end. */
const void *mica__in_take(mica__in_t *r, size_t n);
uint32_t mica__in_u32(mica__in_t *r);
int64_t mica__in_i64(mica__in_t *r);
/* A count of items of at least min_bytes each that the rest can hold. */
uint32_t mica__in_count(mica__in_t *r, size_t min_bytes);
/* u32 length + bytes, in place. */
const void *mica__in_bytes(mica__in_t *r, size_t *n);
/* A layer's state in place (format 2: after its padding). */
const void *mica__in_state(mica__in_t *r, size_t *n);
/* A string, malloc'd; NULL when bad or out of memory. */
char *mica__in_str(mica__in_t *r);
void mica__in_dims(mica__in_t *r, mica_dims_t *d);

#endif /* MICA_ENGINE_FORMAT_H */
